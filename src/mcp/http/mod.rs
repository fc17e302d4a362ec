//! `metagate mcp --listen`: the Streamable HTTP transport (MCP 2025-03-26 and later) in front
//! of a stdio server. One endpoint (`/mcp`, or `/`): a POST carries one JSON-RPC message, a
//! request answered by a stream of server-sent events that ends with its response, a
//! notification or response with 202; GET opens the stream of the server's own messages;
//! DELETE ends the session. `initialize` starts a session, named by `Mcp-Session-Id` in every
//! request after it: each is a metagate session of its own (its relay, its server, its
//! decisions recorded under its id), its caller the identity the request authenticated as.
//!
//! - [`auth`]: bearer tokens to callers, and the `Origin` check;
//! - `legacy`: the 2024-11-05 HTTP+SSE transport (`GET /sse`, `POST /messages`);
//! - [`session`]: one session's relay and server, and the routing of its messages;
//! - [`upstream`]: an MCP server over Streamable HTTP as the server side of a relay.

pub mod auth;
mod legacy;
pub mod session;
pub mod upstream;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use metagate_core::enforce::Context;
use metagate_core::policy::mcp::McpRules;

use super::framing::{self, Kind, MAX_MESSAGE};
use super::{Config, Diag};
use auth::Refusal;
use session::{Events, Session};

/// The header naming a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Makes the relay configuration of a new session, from its context (the session's id and
/// caller).
pub type MakeConfig = Arc<dyn Fn(Context) -> Config + Send + Sync>;

/// What the HTTP front serves with.
pub struct Front {
    /// Where it listens.
    pub listen: SocketAddr,
    /// `[mcp]` of the policy: tokens, loopback, origins.
    pub rules: McpRules,
    /// The caller of an unauthenticated loopback request, and the intent of every session.
    pub defaults: Context,
    /// What each session is in front of.
    pub backend: session::Backend,
    /// The relay configuration of each session.
    pub config: MakeConfig,
    /// Where diagnostics go.
    pub diag: Diag,
}

pub(crate) struct State {
    front: Front,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

impl State {
    pub(crate) fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Serves until the process ends; `ready` is called with the bound address once it listens.
pub fn serve(front: Front, ready: impl FnOnce(SocketAddr)) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("metagate-http")
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(front.listen).await?;
        ready(listener.local_addr()?);
        let state = Arc::new(State {
            front,
            sessions: Mutex::default(),
        });
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                // Out of descriptors and the like: the next accept may work.
                Err(_) => continue,
            };
            let _ = stream.set_nodelay(true);
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let state = Arc::clone(&state);
                    async move { Ok::<_, Infallible>(handle(&state, request, peer).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// A response body: all at once, or a stream of events.
pub enum Reply {
    /// A whole body.
    Full(Full<Bytes>),
    /// Server-sent events until the sender is gone.
    Events(Events),
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Reply::Full(full) => Pin::new(full).poll_frame(cx),
            Reply::Events(events) => events.poll_recv(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
        }
    }
}

pub(crate) fn plain(status: StatusCode, text: &str) -> Response<Reply> {
    let mut response = Response::new(Reply::Full(Full::new(Bytes::from(format!("{text}\n")))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// A JSON-RPC error as the whole answer to a POST.
pub(crate) fn rpc_error(
    status: StatusCode,
    id: Option<&framing::RequestId>,
    code: i64,
    text: &str,
) -> Response<Reply> {
    let line = framing::error_line(id, code, &format!("metagate: {text}"));
    let mut response = Response::new(Reply::Full(Full::new(Bytes::from(line))));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(crate) fn events(events: Events, session: &str) -> Response<Reply> {
    let mut response = Response::new(Reply::Events(events));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    if let Ok(id) = HeaderValue::from_str(session) {
        headers.insert(SESSION_HEADER, id);
    }
    response
}

async fn handle(
    state: &Arc<State>,
    request: Request<Incoming>,
    peer: SocketAddr,
) -> Response<Reply> {
    let rules = &state.front.rules;
    let header = |name: &str| request.headers().get(name).map(HeaderValue::as_bytes);
    if let Err(Refusal::Origin(why)) = auth::origin_allowed(rules, header("origin")) {
        return plain(StatusCode::FORBIDDEN, &format!("metagate: {why}"));
    }
    let legacy = match request.uri().path() {
        "/mcp" | "/" => false,
        "/sse" | "/messages" => true,
        _ => {
            return plain(
                StatusCode::NOT_FOUND,
                "metagate: the MCP endpoint is /mcp (/sse for the 2024-11-05 HTTP+SSE transport)",
            );
        }
    };
    let caller = match auth::caller(
        rules,
        header("authorization"),
        peer.ip(),
        state.front.defaults.caller.as_deref(),
    ) {
        Ok(caller) => caller,
        Err(refusal) => {
            let why = match refusal {
                Refusal::Unauthenticated(why) => why.to_string(),
                Refusal::Origin(why) => why,
            };
            let mut response = plain(StatusCode::UNAUTHORIZED, &format!("metagate: {why}"));
            response.headers_mut().insert(
                "www-authenticate",
                HeaderValue::from_static("Bearer realm=\"metagate\""),
            );
            return response;
        }
    };
    if legacy {
        return legacy::handle(state, request, caller).await;
    }
    let named = header(SESSION_HEADER).map(|v| String::from_utf8_lossy(v).into_owned());
    let session = match &named {
        None => None,
        Some(id) => match state.sessions().get(id).cloned() {
            Some(session) if session.caller == caller && !session.is_over() => Some(session),
            // Another caller's session is not named to this one.
            _ => return plain(StatusCode::NOT_FOUND, "metagate: no such session"),
        },
    };
    match *request.method() {
        Method::POST => post(state, request, caller, session).await,
        Method::GET => match session {
            None => plain(
                StatusCode::BAD_REQUEST,
                "metagate: GET needs an Mcp-Session-Id",
            ),
            Some(session) => match session.outbox.stream() {
                Some(stream) => events(stream, &session.id),
                None => plain(
                    StatusCode::CONFLICT,
                    "metagate: this session's stream is open already",
                ),
            },
        },
        Method::DELETE => match session {
            None => plain(
                StatusCode::BAD_REQUEST,
                "metagate: DELETE needs an Mcp-Session-Id",
            ),
            Some(session) => {
                session.close();
                state.sessions().remove(&session.id);
                plain(StatusCode::OK, "metagate: session ended")
            }
        },
        _ => plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "metagate: POST, GET or DELETE",
        ),
    }
}

async fn post(
    state: &Arc<State>,
    request: Request<Incoming>,
    caller: Option<String>,
    session: Option<Arc<Session>>,
) -> Response<Reply> {
    let body = match one_message(request).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let message = match framing::read(&body) {
        Ok(message) => message,
        Err(invalid) => {
            let (code, id, why) = invalid.answer();
            return rpc_error(StatusCode::BAD_REQUEST, id, code, why);
        }
    };
    let session = match (session, &message.kind) {
        (Some(session), _) => session,
        (None, Kind::Request { method, .. }) if method == "initialize" => {
            match start_session(state, caller) {
                Ok(session) => session,
                Err(why) => {
                    (state.front.diag)(&format!("metagate: error: cannot start a session: {why}"));
                    return rpc_error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        None,
                        -32603,
                        "the MCP server could not be started",
                    );
                }
            }
        }
        (None, _) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                framing::INVALID_REQUEST,
                "no Mcp-Session-Id: a session starts with initialize",
            );
        }
    };
    match &message.kind {
        Kind::Batch(_) => rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            framing::INVALID_REQUEST,
            "batches (dropped from MCP in its 2025-06-18 revision) are refused",
        ),
        Kind::Request { id, .. } => {
            let Some(answer) = session.outbox.wait_for(id.clone()) else {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Some(id),
                    framing::INVALID_REQUEST,
                    "a request with this id is still waiting for its answer",
                );
            };
            if !session.send(&body) {
                return plain(StatusCode::NOT_FOUND, "metagate: the session is over");
            }
            events(answer, &session.id)
        }
        Kind::Notification { .. } | Kind::Response { .. } => {
            if !session.send(&body) {
                return plain(StatusCode::NOT_FOUND, "metagate: the session is over");
            }
            let mut response = plain(StatusCode::ACCEPTED, "");
            *response.body_mut() = Reply::Full(Full::new(Bytes::new()));
            response
        }
    }
}

pub(crate) fn start_session(
    state: &Arc<State>,
    caller: Option<String>,
) -> std::io::Result<Arc<Session>> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let context = Context {
        session: Some(id.clone()),
        caller: caller.clone(),
        intent: state.front.defaults.intent.clone(),
    };
    let config = (state.front.config)(context);
    let gone = Arc::downgrade(state);
    let key = id.clone();
    let session = Session::start(id, caller, config, &state.front.backend, move || {
        if let Some(state) = gone.upgrade() {
            state.sessions().remove(&key);
        }
    })?;
    state
        .sessions()
        .insert(session.id.clone(), Arc::clone(&session));
    Ok(session)
}

/// The body of a POST as one line, the way the relay reads messages.
pub(crate) async fn one_message(request: Request<Incoming>) -> Result<Vec<u8>, Response<Reply>> {
    let body = match Limited::new(request.into_body(), MAX_MESSAGE)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(_) => {
            return Err(rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                None,
                framing::INVALID_REQUEST,
                &format!("a message is at most {MAX_MESSAGE} bytes"),
            ));
        }
    };
    // A body written over several lines is made one.
    if body.contains(&b'\n') || body.contains(&b'\r') {
        return match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(value) => Ok(serde_json::to_vec(&value).expect("JSON serializes")),
            Err(e) => Err(rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                -32700,
                &format!("the message is not JSON: {e}"),
            )),
        };
    }
    Ok(body.to_vec())
}
