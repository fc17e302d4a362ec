//! One HTTP session: a relay of its own, in front of a server process of its own (a stdio
//! server holds one session), whose client side is the session's HTTP requests. What a POST
//! sends is the relay's input; what the relay writes to the client is routed to the response
//! stream of the request it answers, or, when it answers none (the server's own requests and
//! notifications), to the newest open response stream, else the GET stream, else a bounded
//! backlog the next GET stream starts with.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::super::framing::{self, Kind, RequestId};
use super::super::{Config, Relay, Streams};

/// Messages kept for a GET stream that is not open yet; older ones are dropped past this.
const BACKLOG: usize = 1024;

/// How long the server has to end once its input is closed, and again after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

/// A stream of server-sent events to one HTTP response.
pub type Events = UnboundedReceiver<Bytes>;

/// Where the relay's messages to the client go.
#[derive(Default)]
struct Routes {
    /// Response streams by the request they wait for, with the order they were opened in.
    waiting: HashMap<RequestId, (u64, UnboundedSender<Bytes>)>,
    opened: u64,
    stream: Option<UnboundedSender<Bytes>>,
    backlog: VecDeque<Bytes>,
    closed: bool,
}

/// The relay's client output, routed to the session's HTTP responses.
#[derive(Default)]
pub struct Outbox(Mutex<Routes>);

impl Outbox {
    fn routes(&self) -> MutexGuard<'_, Routes> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A response stream for the request `id`; `None` when one already waits for it.
    pub fn wait_for(&self, id: RequestId) -> Option<Events> {
        let mut routes = self.routes();
        if routes.waiting.contains_key(&id) {
            return None;
        }
        let (sender, events) = unbounded_channel();
        if !routes.closed {
            routes.opened += 1;
            let order = routes.opened;
            routes.waiting.insert(id, (order, sender));
        }
        Some(events)
    }

    /// The GET stream; `None` when one is open already.
    pub fn stream(&self) -> Option<Events> {
        self.stream_from(None)
    }

    /// The GET stream, `first` its first event (the legacy transport's `endpoint`).
    pub fn stream_from(&self, first: Option<Bytes>) -> Option<Events> {
        let mut routes = self.routes();
        if routes.stream.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let (sender, events) = unbounded_channel();
        if let Some(first) = first {
            let _ = sender.send(first);
        }
        if !routes.closed {
            for event in routes.backlog.drain(..) {
                let _ = sender.send(event);
            }
            routes.stream = Some(sender);
        }
        Some(events)
    }

    fn route(&self, line: &[u8]) {
        let event = event(line);
        let mut routes = self.routes();
        if let Ok(message) = framing::read(line)
            && let Kind::Response { id: Some(id), .. } = &message.kind
            && let Some((_, sender)) = routes.waiting.remove(id)
        {
            // The answer ends its response's stream (the sender is dropped here).
            let _ = sender.send(event);
            return;
        }
        routes.waiting.retain(|_, (_, sender)| !sender.is_closed());
        let newest = routes
            .waiting
            .values()
            .max_by_key(|(order, _)| *order)
            .map(|(_, sender)| sender.clone());
        let sent = newest
            .or_else(|| routes.stream.clone())
            .is_some_and(|sender| sender.send(event.clone()).is_ok());
        if !sent {
            if routes.backlog.len() == BACKLOG {
                routes.backlog.pop_front();
            }
            routes.backlog.push_back(event);
        }
    }

    /// Ends every stream: the session is over.
    fn close(&self) {
        let mut routes = self.routes();
        routes.closed = true;
        routes.waiting.clear();
        routes.stream = None;
        routes.backlog.clear();
    }
}

/// One message as a server-sent event.
fn event(line: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(line.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(line);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The relay's client output: whole lines go to the outbox.
struct ClientOut {
    outbox: Arc<Outbox>,
    partial: Vec<u8>,
}

impl Write for ClientOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(buf);
        while let Some(end) = memchr::memchr(b'\n', &self.partial) {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let body = metagate_wire::lines::strip_newline(&line);
            if !framing::is_blank(body) {
                self.outbox.route(body);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A relay's input from a channel: the messages the session's requests carried (or an
/// upstream server's answers), in order, as one stream.
pub(crate) struct Inbound {
    messages: mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Inbound {
    pub(crate) fn new(messages: mpsc::Receiver<Vec<u8>>) -> Inbound {
        Inbound {
            messages,
            current: Vec::new(),
            at: 0,
        }
    }
}

impl Read for Inbound {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.current.len() {
            match self.messages.recv() {
                Ok(next) => {
                    self.current = next;
                    self.at = 0;
                }
                // The session was closed: the client's end of input.
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A session under way.
pub struct Session {
    /// Its `Mcp-Session-Id`, which is also the metagate session its calls are recorded under.
    pub id: String,
    /// The authenticated caller it belongs to.
    pub caller: Option<String>,
    input: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    /// Where the relay's messages to the client go.
    pub outbox: Arc<Outbox>,
    ended: AtomicBool,
}

impl Session {
    /// Starts a relay made with `config` in front of `backend`; `ended` is called once the
    /// session is over (its server gone).
    pub fn start(
        id: String,
        caller: Option<String>,
        config: Config,
        backend: &Backend,
        ended: impl FnOnce() + Send + 'static,
    ) -> io::Result<Arc<Session>> {
        let (server_in, server_out, mut child): (Box<dyn Write + Send>, Box<dyn Read + Send>, _) =
            match backend {
                Backend::Command(server) => {
                    let mut child = spawn(server)?;
                    (
                        Box::new(io::BufWriter::new(child.stdin.take().expect("piped"))),
                        Box::new(child.stdout.take().expect("piped")),
                        Some(child),
                    )
                }
                Backend::Upstream(url) => {
                    let pipes = super::upstream::connect(url, &tokio::runtime::Handle::current())?;
                    (pipes.input, pipes.output, None)
                }
            };
        let (sender, messages) = mpsc::channel();
        let outbox = Arc::new(Outbox::default());
        let streams = Streams {
            client_in: Box::new(Inbound::new(messages)),
            client_out: Box::new(ClientOut {
                outbox: Arc::clone(&outbox),
                partial: Vec::new(),
            }),
            server_in,
            server_out,
        };
        let session = Arc::new(Session {
            id,
            caller,
            input: Mutex::new(Some(sender)),
            outbox,
            ended: AtomicBool::new(false),
        });
        let relay = Relay::start(config, streams);
        let watched = Arc::clone(&session);
        std::thread::Builder::new()
            .name("metagate-session".into())
            .spawn(move || {
                match child.as_mut() {
                    Some(child) => supervise(child, &relay),
                    None => {
                        // An upstream session ends when either side does.
                        while relay.next_end(Duration::from_secs(1)).is_none() {}
                        relay.close_server_input();
                    }
                }
                relay.finish(GRACE);
                watched.ended.store(true, Ordering::SeqCst);
                watched.close();
                watched.outbox.close();
                ended();
            })?;
        Ok(session)
    }

    /// Passes one message (without a line end) on to the relay; false once the session is
    /// over.
    pub fn send(&self, message: &[u8]) -> bool {
        let input = self.input.lock().unwrap_or_else(|e| e.into_inner());
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message);
        line.push(b'\n');
        input.as_ref().is_some_and(|s| s.send(line).is_ok()) && !self.is_over()
    }

    /// Ends the session as a client closing stdio would: the server's input is closed.
    pub fn close(&self) {
        self.input.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Whether the server is gone.
    pub fn is_over(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }
}

/// What a session's relay is in front of.
#[derive(Debug, Clone)]
pub enum Backend {
    /// A stdio server, started for each session.
    Command(Vec<OsString>),
    /// An MCP server over Streamable HTTP, a session of its own for each session.
    Upstream(String),
}

fn spawn(server: &[OsString]) -> io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let (program, args) = server
        .split_first()
        .ok_or_else(|| io::Error::other("no server command"))?;
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
}

/// Waits for the server to exit or a side to close, then ends the server the stdio way:
/// input closed, SIGTERM, SIGKILL, [`GRACE`] apart.
fn supervise(child: &mut Child, relay: &Relay) {
    loop {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        if relay.next_end(Duration::from_millis(200)).is_some() {
            break;
        }
    }
    relay.close_server_input();
    if exited_within(child, GRACE) {
        return;
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    if exited_within(child, GRACE) {
        return;
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn exited_within(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}
