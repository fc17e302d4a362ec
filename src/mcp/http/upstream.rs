//! `--upstream URL`: the server side of a relay is an MCP server over Streamable HTTP. Each
//! message the relay sends is a POST (the first, `initialize`, answered before the next is
//! sent, for the session id it brings); each answer, a JSON body or a stream of server-sent
//! events, comes back as lines, as a stdio server's would; the server's own stream (GET) is
//! read beside. Closing the relay's side ends the upstream session (DELETE).

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, mpsc};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::super::framing::{self, Kind};
use super::session::Inbound;

type Body = http_body_util::combinators::BoxBody<Bytes, hyper::Error>;
type Http = Client<HttpConnector, Body>;

/// The server's two pipes, for a relay's [`super::super::Streams`].
pub struct Pipes {
    /// What the relay writes to the server.
    pub input: Box<dyn Write + Send>,
    /// What the relay reads from the server.
    pub output: Box<dyn Read + Send>,
}

/// Connects to `url` (`http://`) on `runtime`.
pub fn connect(url: &str, runtime: &tokio::runtime::Handle) -> io::Result<Pipes> {
    let uri: Uri = url
        .parse()
        .map_err(|e| io::Error::other(format!("{url} is not a URL: {e}")))?;
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        return Err(io::Error::other(format!(
            "{url}: --upstream takes an http:// URL (put a TLS-terminating proxy before an https:// one)"
        )));
    }
    let (lines, received) = unbounded_channel();
    let (out, output) = mpsc::channel();
    runtime.spawn(run(uri, received, out));
    Ok(Pipes {
        input: Box::new(ServerIn {
            lines,
            partial: Vec::new(),
        }),
        output: Box::new(Inbound::new(output)),
    })
}

struct ServerIn {
    lines: UnboundedSender<Vec<u8>>,
    partial: Vec<u8>,
}

impl Write for ServerIn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(buf);
        while let Some(end) = memchr::memchr(b'\n', &self.partial) {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.lines
                .send(line)
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

type SessionId = Arc<Mutex<Option<HeaderValue>>>;

async fn run(url: Uri, mut lines: UnboundedReceiver<Vec<u8>>, out: mpsc::Sender<Vec<u8>>) {
    let client: Http = Client::builder(TokioExecutor::new()).build_http();
    let session: SessionId = Arc::default();
    while let Some(line) = lines.recv().await {
        let initialize = matches!(
            framing::read(metagate_wire::lines::strip_newline(&line)).map(|m| m.kind),
            Ok(Kind::Request { method, .. }) if method == "initialize"
        );
        let sent = post(
            client.clone(),
            url.clone(),
            Arc::clone(&session),
            line,
            out.clone(),
        );
        if initialize {
            sent.await;
            tokio::spawn(listen(
                client.clone(),
                url.clone(),
                Arc::clone(&session),
                out.clone(),
            ));
        } else {
            tokio::spawn(sent);
        }
    }
    let id = session.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(id) = id {
        let mut request = Request::new(empty());
        *request.method_mut() = Method::DELETE;
        *request.uri_mut() = url;
        request.headers_mut().insert("mcp-session-id", id);
        let _ = client.request(request).await;
    }
}

fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed()
}

fn with_session(request: &mut Request<Body>, session: &SessionId) {
    let headers = request.headers_mut();
    headers.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    if let Some(id) = session.lock().unwrap_or_else(|e| e.into_inner()).clone() {
        headers.insert("mcp-session-id", id);
    }
}

/// Posts one message; what comes back goes to `out`, a line a message. A request the server
/// does not answer is answered with an error, so that its caller does not wait forever.
async fn post(
    client: Http,
    url: Uri,
    session: SessionId,
    line: Vec<u8>,
    out: mpsc::Sender<Vec<u8>>,
) {
    let body = metagate_wire::lines::strip_newline(&line).to_vec();
    let id = match framing::read(&body).map(|m| m.kind) {
        Ok(Kind::Request { id, .. }) => Some(id),
        _ => None,
    };
    let mut request = Request::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *request.method_mut() = Method::POST;
    *request.uri_mut() = url;
    request
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    with_session(&mut request, &session);
    let failed = |why: String| {
        if let Some(id) = &id {
            let _ = out.send(framing::error_line(
                Some(id),
                -32603,
                &format!("metagate: the upstream MCP server did not answer: {why}"),
            ));
        }
    };
    let response = match client.request(request).await {
        Ok(response) => response,
        Err(e) => return failed(e.to_string()),
    };
    if let Some(id) = response.headers().get("mcp-session-id") {
        *session.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
    }
    let status = response.status();
    if status.as_u16() == 202 {
        return;
    }
    let streamed = is_event_stream(response.headers().get(CONTENT_TYPE));
    if !status.is_success() && !streamed {
        let text = response.into_body().collect().await.map(|b| b.to_bytes());
        // A JSON-RPC error body is the server's answer; anything else is said as one.
        if let Ok(text) = &text
            && framing::read(text.trim_ascii()).is_ok()
        {
            let _ = out.send(one_line(text.trim_ascii()));
            return;
        }
        return failed(format!("HTTP {status}"));
    }
    if streamed {
        relay_events(response.into_body(), &out).await;
    } else if let Ok(body) = response.into_body().collect().await {
        let body = body.to_bytes();
        if !body.trim_ascii().is_empty() {
            let _ = out.send(one_line(body.trim_ascii()));
        }
    }
}

/// The server's own stream (GET), while it lasts; a server without one answers 405.
async fn listen(client: Http, url: Uri, session: SessionId, out: mpsc::Sender<Vec<u8>>) {
    let mut request = Request::new(empty());
    *request.uri_mut() = url;
    with_session(&mut request, &session);
    request
        .headers_mut()
        .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    if let Ok(response) = client.request(request).await
        && response.status().is_success()
        && is_event_stream(response.headers().get(CONTENT_TYPE))
    {
        relay_events(response.into_body(), &out).await;
    }
}

fn is_event_stream(value: Option<&HeaderValue>) -> bool {
    value.is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
}

/// Each event's data, as one line, until the stream ends.
async fn relay_events(mut body: hyper::body::Incoming, out: &mpsc::Sender<Vec<u8>>) {
    let mut pending = Vec::new();
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        pending.extend_from_slice(&data);
        for data in take_events(&mut pending) {
            if out.send(one_line(&data)).is_err() {
                return;
            }
        }
    }
}

/// The data of each complete event in `pending` (which keeps what is not complete yet).
pub(crate) fn take_events(pending: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    loop {
        let text = &pending[..];
        let end = [&b"\n\n"[..], b"\r\n\r\n", b"\r\r"]
            .iter()
            .filter_map(|sep| memchr::memmem::find(text, sep).map(|at| (at, sep.len())))
            .min();
        let Some((at, len)) = end else { return events };
        let event: Vec<u8> = pending.drain(..at + len).collect();
        let mut data = Vec::new();
        for line in event.split(|b| *b == b'\n' || *b == b'\r') {
            if let Some(value) = line.strip_prefix(b"data:") {
                if !data.is_empty() {
                    data.push(b'\n');
                }
                data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
            }
        }
        if !data.is_empty() {
            events.push(data);
        }
    }
}

/// A message as one line (with its newline): JSON written over several lines is made one.
fn one_line(message: &[u8]) -> Vec<u8> {
    let mut line = if message.contains(&b'\n') || message.contains(&b'\r') {
        serde_json::from_slice::<serde_json::Value>(message)
            .map(|v| serde_json::to_vec(&v).expect("JSON serializes"))
            .unwrap_or_else(|_| {
                message
                    .iter()
                    .map(|b| if *b == b'\n' || *b == b'\r' { b' ' } else { *b })
                    .collect()
            })
    } else {
        message.to_vec()
    };
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_at_blank_lines_and_their_data_joined() {
        let mut pending = b"event: message\ndata: {\"a\":1}\n\nid: 2\r\ndata: {\"b\":\r\ndata: 2}\r\n\r\ndata: {\"c\"".to_vec();
        let events = take_events(&mut pending);
        assert_eq!(events, [b"{\"a\":1}".to_vec(), b"{\"b\":\n2}".to_vec()]);
        assert_eq!(pending, b"data: {\"c\"");
        assert_eq!(one_line(b"{\"b\":\n2}"), b"{\"b\":2}\n");
    }
}
