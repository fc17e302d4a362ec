//! The threads between the two sides: one reads the client (and has its `tools/call`s
//! decided), one reads the server, one per side writes to it from a bounded queue, and one
//! records outcomes. A side that stops reading holds back only what is sent to it: the other
//! direction goes on, and what waits for it is bounded (see [`super::queue`]).

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read, Write};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use super::calls::{Action, CallGate};
use super::framing::{self, INVALID_REQUEST, Kind, MAX_MESSAGE, Message, RequestId};
use super::guard::{self, Waiting};
use super::outcomes::{self, Ending, InFlight, OutcomeRecorder, Outcomes};
use super::queue::{Closed, Queue};
use super::registry::{OWN_ID_PREFIX, Registry};
use super::{Clock, Config, Diag};
use metagate_wire::lines::{read_line_capped, strip_newline};

/// Calls, tasks and lists waiting for answers are forgotten past this many (a client that
/// never hears back from its server must not grow metagate without end).
const MAX_PENDING: usize = 100_000;

/// The client's and the server's pipes.
pub struct Streams {
    /// What the client writes (metagate's stdin).
    pub client_in: Box<dyn Read + Send>,
    /// What the client reads (metagate's stdout).
    pub client_out: Box<dyn Write + Send>,
    /// The server's stdin.
    pub server_in: Box<dyn Write + Send>,
    /// The server's stdout.
    pub server_out: Box<dyn Read + Send>,
}

/// Which side ended the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The client closed its output (or stopped taking metagate's for good): the server's
    /// input is closed after what was queued for it.
    Client,
    /// The server closed its output: the client's is closed after what was queued for it.
    Server,
}

/// A relay under way.
pub struct Relay {
    ends: Receiver<End>,
    to_server: Arc<Queue>,
    to_client: Arc<Queue>,
    server_reader: JoinHandle<()>,
    client_writer: Receiver<()>,
    recorder: Option<OutcomeRecorder>,
}

/// Requests waiting for answers that metagate reads.
#[derive(Default)]
struct Pending {
    calls: HashMap<RequestId, InFlight>,
    /// Calls the server made tasks of, by task id: their outcome is the answer to
    /// `tasks/result`.
    tasks: HashMap<String, InFlight>,
    /// The client's `tools/list` requests, whose answers are shown filtered.
    lists: HashSet<RequestId>,
    initialize: Option<RequestId>,
    /// The client's requests the server has not answered.
    waiting: Waiting,
}

/// What both readers share.
struct Shared {
    registry: Registry,
    pending: Mutex<Pending>,
    to_client: Arc<Queue>,
    to_server: Arc<Queue>,
    outcomes: Outcomes,
    clock: Clock,
    diag: Diag,
    /// Whether a client's tool list is shown filtered (an intent or a caller is set).
    filters: bool,
    /// Whether the server may ask the client to sample (`[mcp] sampling`).
    sampling: bool,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn to_server(&self, body: &[u8]) -> Result<(), Closed> {
        self.to_server.push(line_of(body))
    }

    fn to_client(&self, body: &[u8]) -> Result<(), Closed> {
        self.to_client.push(line_of(body))
    }

    /// Sends one of metagate's own requests, which never waits (there are few).
    fn own_request(&self, line: Option<Vec<u8>>) {
        if let Some(line) = line {
            let _ = self.to_server.push_now(line);
        }
    }

    fn end_call(&self, call: &InFlight, ending: &Ending<'_, '_>) {
        if crate::otel::on() {
            call.trace.end(outcomes::error_type(ending));
        }
        self.outcomes.send(call, ending, &self.clock);
    }
}

fn line_of(body: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(body.len() + 1);
    line.extend_from_slice(body);
    line.push(b'\n');
    line
}

impl Relay {
    /// Starts relaying between `streams` with `config`.
    pub fn start(config: Config, streams: Streams) -> Relay {
        let Config {
            policy,
            base,
            context,
            options,
            checker,
            telemetry,
            clock,
            diag,
            bounds,
            list_timeout,
        } = config;
        let to_client = Arc::new(Queue::new(bounds));
        let to_server = Arc::new(Queue::new(bounds));
        let recorder = telemetry
            .as_ref()
            .map(|open| OutcomeRecorder::start(Arc::clone(open), Arc::clone(&diag)));
        let filters = context.intent.is_some() || context.caller.is_some();
        let sampling = base.mcp_rules().sampling;
        let shared = Arc::new(Shared {
            registry: Registry::new(policy, base, context.clone(), Arc::clone(&diag)),
            pending: Mutex::default(),
            to_client: Arc::clone(&to_client),
            to_server: Arc::clone(&to_server),
            outcomes: recorder
                .as_ref()
                .map(OutcomeRecorder::sender)
                .unwrap_or_default(),
            clock: Arc::clone(&clock),
            diag: Arc::clone(&diag),
            filters,
            sampling,
        });
        let (end_sender, ends) = channel();
        let (written, client_writer) = channel();
        let Streams {
            client_in,
            mut client_out,
            mut server_in,
            server_out,
        } = streams;
        {
            let (to_client, to_server, ended) = (
                Arc::clone(&to_client),
                Arc::clone(&to_server),
                end_sender.clone(),
            );
            spawn("metagate-to-client", move || {
                if to_client.write_to(&mut client_out).is_err() {
                    // The client is gone: shut the server down as the client would have.
                    to_server.close();
                    let _ = ended.send(End::Client);
                }
                let _ = written.send(());
            });
        }
        {
            let to_server = Arc::clone(&to_server);
            spawn("metagate-to-server", move || {
                let _ = to_server.write_to(&mut server_in);
                // Dropping the pipe closes the server's stdin: its signal to end.
                drop(server_in);
            });
        }
        {
            let (shared, ended) = (Arc::clone(&shared), end_sender.clone());
            spawn("metagate-client", move || {
                let policy = shared.registry.policy();
                let mut gate = CallGate::new(
                    &policy,
                    checker,
                    options,
                    context,
                    telemetry.as_ref(),
                    clock,
                    Arc::clone(&shared.diag),
                );
                read_client(&shared, client_in, &mut gate, list_timeout);
                shared.to_server.close();
                let _ = ended.send(End::Client);
            });
        }
        let server_reader = {
            let shared = Arc::clone(&shared);
            spawn("metagate-server", move || {
                read_server(&shared, server_out);
                let _ = end_sender.send(End::Server);
            })
        };
        Relay {
            ends,
            to_server,
            to_client,
            server_reader,
            client_writer,
            recorder,
        }
    }

    /// The next side to end, waiting up to `timeout`.
    pub fn next_end(&self, timeout: Duration) -> Option<End> {
        self.ends.recv_timeout(timeout).ok()
    }

    /// Closes the server's input once what is queued for it is written (the server is to end).
    pub fn close_server_input(&self) {
        self.to_server.close();
    }

    /// The most bytes each queue held at once: `(to the client, to the server)`.
    #[cfg(test)]
    fn most_queued(&self) -> (usize, usize) {
        (self.to_client.most_bytes(), self.to_server.most_bytes())
    }

    /// Ends the relay once the server is gone: lets the server's last messages through to the
    /// client (waiting up to `drain` for each side), and writes the outcomes still queued.
    pub fn finish(self, drain: Duration) {
        let deadline = Instant::now() + drain;
        while !self.server_reader.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.to_client.close();
        let _ = self
            .client_writer
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        if let Some(recorder) = self.recorder {
            recorder.finish();
        }
    }
}

fn spawn(name: &str, work: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(work)
        .expect("a thread starts")
}

/// Reads the client until it closes its output, or until the server's input is closed.
fn read_client(shared: &Shared, input: Box<dyn Read + Send>, gate: &mut CallGate, wait: Duration) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match read_line_capped(&mut reader, &mut line, MAX_MESSAGE) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let body = strip_newline(&line);
        let sent = if body.len() > MAX_MESSAGE {
            refuse(
                shared,
                None,
                INVALID_REQUEST,
                &format!("the message is longer than the {MAX_MESSAGE} bytes metagate reads"),
            )
        } else if framing::is_blank(body) {
            Ok(())
        } else {
            match framing::read(body) {
                Ok(message) => from_client(shared, body, &message, gate, wait),
                Err(invalid) => {
                    let (code, id, why) = invalid.answer();
                    refuse(shared, id, code, why)
                }
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

/// Answers the client with a JSON-RPC error instead of forwarding what it sent.
fn refuse(shared: &Shared, id: Option<&RequestId>, code: i64, why: &str) -> Result<(), Closed> {
    (shared.diag)(&format!(
        "metagate: refused a message from the client: {}",
        metagate_wire::display::one_line(why)
    ));
    shared
        .to_client
        .push(framing::error_line(id, code, &format!("metagate: {why}")))
}

fn from_client(
    shared: &Shared,
    body: &[u8],
    message: &Message<'_>,
    gate: &mut CallGate,
    wait: Duration,
) -> Result<(), Closed> {
    let registry = &shared.registry;
    if let Some(why) = guard::refused(&message.kind) {
        return match &message.kind {
            Kind::Request { id, .. } => refuse(shared, Some(id), INVALID_REQUEST, &why),
            // A notification gets no answer: the operator is told, the server is not sent it.
            _ => {
                (shared.diag)(&format!(
                    "metagate: refused a message from the client: {why}"
                ));
                Ok(())
            }
        };
    }
    if let Kind::Request { id, .. } = &message.kind
        && !Registry::is_own(id)
        && !shared.pending().waiting.sent(id)
    {
        return refuse(
            shared,
            Some(id),
            INVALID_REQUEST,
            &format!(
                "{} requests wait for the server's answer already",
                guard::MAX_WAITING
            ),
        );
    }
    match &message.kind {
        Kind::Batch(items) => refuse_batch(shared, items),
        Kind::Request { id, .. } if Registry::is_own(id) => refuse(
            shared,
            Some(id),
            INVALID_REQUEST,
            &format!("request ids starting with {OWN_ID_PREFIX:?} are metagate's own"),
        ),
        Kind::Request { id, method } => match &**method {
            "tools/call" => {
                shared.own_request(registry.before_call(message.params));
                let ready = registry.wait(Instant::now() + wait);
                let current = registry.policy();
                match gate.decide_request(ready, &current, body, id, message.params) {
                    Action::Forward { line, call } => {
                        remember(&mut shared.pending().calls, id.clone(), call);
                        shared.to_server.push(line)
                    }
                    Action::Answer(line) => {
                        // Answered here: the server never hears of it.
                        shared.pending().waiting.answered(id);
                        shared.to_client.push(line)
                    }
                }
            }
            "tools/list" if shared.filters => {
                let mut pending = shared.pending();
                if pending.lists.len() < MAX_PENDING {
                    pending.lists.insert(id.clone());
                }
                drop(pending);
                shared.to_server(body)
            }
            "initialize" => {
                shared.pending().initialize = Some(id.clone());
                shared.to_server(body)
            }
            "tasks/result" => {
                let mut pending = shared.pending();
                if let Some(call) =
                    outcomes::task_of(message.params).and_then(|t| pending.tasks.remove(&t))
                {
                    remember(&mut pending.calls, id.clone(), call);
                }
                drop(pending);
                shared.to_server(body)
            }
            "tasks/cancel" => {
                let call = outcomes::task_of(message.params)
                    .and_then(|t| shared.pending().tasks.remove(&t));
                if let Some(call) = call {
                    shared.end_call(&call, &Ending::Cancelled(None));
                }
                shared.to_server(body)
            }
            _ => shared.to_server(body),
        },
        Kind::Notification { method } => match &**method {
            "notifications/initialized" => {
                shared.to_server(body)?;
                shared.own_request(registry.session_ready());
                Ok(())
            }
            "notifications/cancelled" => {
                let call = RequestId::cancelled_by(message.params)
                    .and_then(|id| shared.pending().calls.remove(&id));
                if let Some(call) = call {
                    shared.end_call(&call, &Ending::Cancelled(reason(message.params)));
                }
                shared.to_server(body)
            }
            _ => shared.to_server(body),
        },
        Kind::Response { .. } => shared.to_server(body),
    }
}

fn remember<K: std::hash::Hash + Eq>(map: &mut HashMap<K, InFlight>, key: K, call: InFlight) {
    if map.len() < MAX_PENDING {
        map.insert(key, call);
    }
}

/// The reason a `notifications/cancelled` gives.
fn reason(params: Option<&RawValue>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Cancel {
        reason: Option<String>,
    }
    serde_json::from_str::<Cancel>(params?.get()).ok()?.reason
}

/// A batch is refused whole: MCP dropped batches in its 2025-06-18 revision, and a
/// `tools/call` inside one would need answering in kind. Each request in it gets its error.
fn refuse_batch(shared: &Shared, items: &[&RawValue]) -> Result<(), Closed> {
    let why = "metagate relays one JSON-RPC message per line; batches (dropped from MCP in its 2025-06-18 revision) are refused";
    let ids: Vec<RequestId> = items
        .iter()
        .filter_map(|item| framing::read(item.get().as_bytes()).ok())
        .filter_map(|m| match m.kind {
            Kind::Request { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    if ids.is_empty() {
        return refuse(shared, None, INVALID_REQUEST, why);
    }
    (shared.diag)(&format!(
        "metagate: refused a message from the client: {why}"
    ));
    let mut line = vec![b'['];
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        let one = framing::error_line(Some(id), INVALID_REQUEST, &format!("metagate: {why}"));
        line.extend_from_slice(strip_newline(&one));
    }
    line.extend_from_slice(b"]\n");
    shared.to_client.push(line)
}

/// Reads the server until it closes its output; then ends what waited on it.
fn read_server(shared: &Shared, output: Box<dyn Read + Send>) {
    let mut reader = BufReader::with_capacity(64 * 1024, output);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match read_line_capped(&mut reader, &mut line, MAX_MESSAGE) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let body = strip_newline(&line);
        if body.len() > MAX_MESSAGE {
            (shared.diag)(&format!(
                "metagate: warning: the server sent a message longer than the {MAX_MESSAGE} bytes metagate reads; it was dropped"
            ));
            continue;
        }
        if framing::is_blank(body) {
            continue;
        }
        let sent = match framing::read(body) {
            Ok(message) => from_server(shared, body, &message),
            Err(invalid) => {
                // The server's message is the server's: passed on as it came.
                (shared.diag)(&format!(
                    "metagate: warning: the server sent a message metagate cannot read ({}); passed on as it came",
                    metagate_wire::display::one_line(&invalid.to_string())
                ));
                shared.to_client(body)
            }
        };
        // A client that is gone is not written to, but reading goes on, so that the server
        // is never stuck writing.
        let _ = sent;
    }
    shared.registry.server_gone();
    let abandoned: Vec<InFlight> = {
        let mut pending = shared.pending();
        let calls: Vec<InFlight> = pending.calls.drain().map(|(_, c)| c).collect();
        calls
            .into_iter()
            .chain(pending.tasks.drain().map(|(_, c)| c))
            .collect()
    };
    for call in &abandoned {
        shared.end_call(call, &Ending::ServerGone);
    }
    shared.to_client.close();
}

fn from_server(shared: &Shared, body: &[u8], message: &Message<'_>) -> Result<(), Closed> {
    match &message.kind {
        Kind::Response { id: Some(id), .. } if Registry::is_own(id) => {
            shared.own_request(shared.registry.answer(message));
            Ok(())
        }
        Kind::Response { id: Some(id), .. } => {
            let mut pending = shared.pending();
            if !pending.waiting.answered(id) {
                drop(pending);
                (shared.diag)(&format!(
                    "metagate: warning: the server answered the id {} that no request of the client's waits on; the answer was dropped",
                    metagate_wire::display::one_line(&id.to_string())
                ));
                return Ok(());
            }
            if let Some(call) = pending.calls.remove(id) {
                match outcomes::started_task(message) {
                    Some(task) => remember(&mut pending.tasks, task, call),
                    None => {
                        drop(pending);
                        shared.end_call(&call, &Ending::Answered(message));
                    }
                }
                shared.to_client(body)
            } else if pending.lists.remove(id) {
                drop(pending);
                match shared.registry.shown(body) {
                    Some(filtered) => shared.to_client.push(filtered),
                    None => shared.to_client(body),
                }
            } else if pending.initialize.as_ref() == Some(id) {
                pending.initialize = None;
                drop(pending);
                shared.registry.initialized(message.result);
                shared.to_client(body)
            } else {
                drop(pending);
                shared.to_client(body)
            }
        }
        Kind::Request { id, method } if method == "sampling/createMessage" && !shared.sampling => {
            // The server would have the client's model write for it: refused to the server,
            // and the client never sees the request.
            (shared.diag)(
                "metagate: refused a sampling request from the server ([mcp] sampling = false)",
            );
            shared.to_server.push(framing::error_line(
                Some(id),
                INVALID_REQUEST,
                "metagate: the policy does not let this server ask the client to sample",
            ))
        }
        Kind::Notification { method } if method == "notifications/tools/list_changed" => {
            let sent = shared.to_client(body);
            shared.own_request(shared.registry.list_changed());
            sent
        }
        Kind::Batch(items) => {
            // Clients send no batches (they are refused), so no batch answers one of theirs.
            let answers = items.iter().any(|item| {
                framing::read(item.get().as_bytes())
                    .is_ok_and(|m| matches!(m.kind, Kind::Response { id: Some(_), .. }))
            });
            if answers {
                (shared.diag)(
                    "metagate: warning: the server sent a batch of answers to requests the client never sent as one; it was dropped",
                );
                return Ok(());
            }
            for item in items {
                if let Ok(m) = framing::read(item.get().as_bytes())
                    && let Kind::Response { id: Some(id), .. } = &m.kind
                {
                    let call = shared.pending().calls.remove(id);
                    if let Some(call) = call {
                        shared.end_call(&call, &Ending::Answered(&m));
                    }
                }
            }
            shared.to_client(body)
        }
        _ => shared.to_client(body),
    }
}

#[cfg(test)]
mod tests;
