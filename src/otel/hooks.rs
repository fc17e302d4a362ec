//! What the jobs call: one process-wide exporter, started by the binary and finished at its
//! exit, and the spans of decisions, `run` commands, MCP requests and evaluations. Without
//! the `otlp` feature each of these does nothing and costs nothing.

#[cfg(feature = "otlp")]
use std::cell::Cell;
#[cfg(feature = "otlp")]
use std::sync::OnceLock;
#[cfg(feature = "otlp")]
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "otlp")]
use std::time::SystemTime;

#[cfg(feature = "otlp")]
use opentelemetry::KeyValue;
#[cfg(feature = "otlp")]
use opentelemetry::trace::{Event, SpanKind};
#[cfg(feature = "otlp")]
use opentelemetry_sdk::trace::SpanData;

use super::Settings;
use super::context::Ids;
#[cfg(feature = "otlp")]
use super::spans::{self, Span};
use metagate_store::telemetry::DecisionRow;

#[cfg(feature = "otlp")]
struct State {
    export: super::export::Export,
    root: Ids,
    root_parent: Option<Ids>,
    command: &'static str,
    started: SystemTime,
    rng: AtomicU64,
    /// Spans sent besides the root: a process that made none (`--no-telemetry`) sends none.
    sent: AtomicU64,
}

#[cfg(feature = "otlp")]
static STATE: OnceLock<State> = OnceLock::new();

#[cfg(feature = "otlp")]
thread_local! {
    /// The span a decision made on this thread is a child of (an MCP request's), when not the
    /// process's root.
    static PARENT: Cell<Option<(Ids, bool)>> = const { Cell::new(None) };
    /// The last decision's span on this thread, which a `run` command's span is a child of.
    static LAST: Cell<Option<Ids>> = const { Cell::new(None) };
}

#[cfg(feature = "otlp")]
impl State {
    /// A fresh span id in `trace` (splitmix64 over a random seed: ids need to be unique, not
    /// secret, and reading the OS's randomness per span would cost a system call each).
    fn child(&self, trace: &Ids) -> Ids {
        let span = loop {
            let mut z = self
                .rng
                .fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
                .wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            if z != 0 {
                break z.to_le_bytes();
            }
        };
        Ids {
            trace: trace.trace,
            span,
            sampled: trace.sampled,
        }
    }

    /// A new trace, for an MCP request that came without one.
    fn new_trace(&self) -> Ids {
        let a = self.child(&self.root);
        let b = self.child(&self.root);
        let mut trace = [0u8; 16];
        trace[..8].copy_from_slice(&a.span);
        trace[8..].copy_from_slice(&b.span);
        Ids {
            trace,
            span: self.child(&self.root).span,
            sampled: true,
        }
    }
}

#[cfg(feature = "otlp")]
fn state() -> Option<&'static State> {
    STATE.get()
}

#[cfg(feature = "otlp")]
impl State {
    fn send(&self, span: SpanData) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.export.send(span);
    }
}

/// Whether spans are being exported.
pub fn on() -> bool {
    #[cfg(feature = "otlp")]
    {
        STATE.get().is_some()
    }
    #[cfg(not(feature = "otlp"))]
    {
        false
    }
}

pub(super) fn start(
    settings: Settings,
    command: &'static str,
    parent: Option<Ids>,
) -> Option<String> {
    #[cfg(feature = "otlp")]
    {
        let export = match super::export::Export::start(&settings) {
            Ok(export) => export,
            Err(why) => {
                return Some(format!(
                    "metagate: warning: otlp: export to {} (asked for by {}) cannot start: {why}; nothing is exported",
                    settings.endpoint_shown(),
                    settings.asked_by
                ));
            }
        };
        let mut seed = [0u8; 8];
        let seed = match getrandom::fill(&mut seed) {
            Ok(()) => u64::from_le_bytes(seed),
            // Ids need only differ: the time and the process id still make them do.
            Err(_) => {
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64)
                    ^ u64::from(std::process::id())
            }
        };
        let mut state = State {
            export,
            root: Ids {
                trace: [1; 16],
                span: [1; 8],
                sampled: true,
            },
            root_parent: parent,
            command,
            started: SystemTime::now(),
            rng: AtomicU64::new(seed),
            sent: AtomicU64::new(0),
        };
        state.root = match parent {
            Some(p) => state.child(&p),
            None => state.new_trace(),
        };
        let _ = STATE.set(state);
        None
    }
    #[cfg(not(feature = "otlp"))]
    {
        let _ = (command, parent);
        Some(format!(
            "metagate: warning: otlp: export is asked for ({}) but this metagate was built without the `otlp` feature; nothing is exported",
            settings.asked_by
        ))
    }
}

/// Ends the process's root span and flushes what waits, at most the export timeout; returns
/// the operator's one line when spans were lost.
pub fn finish() -> Option<String> {
    #[cfg(feature = "otlp")]
    {
        let s = state()?;
        if s.sent.load(Ordering::Relaxed) == 0 {
            return s.export.finish();
        }
        let mut root = Span::new(
            s.root,
            s.root_parent.map(|p| (p, true)),
            SpanKind::Internal,
            format!("metagate {}", s.command),
            s.started,
        );
        root.end = SystemTime::now();
        root.attr("metagate.command", s.command);
        root.attr("process.pid", i64::from(std::process::id()));
        s.export.send(root.into_data());
        s.export.finish()
    }
    #[cfg(not(feature = "otlp"))]
    {
        None
    }
}

/// The last decision's span made on this thread, for the spans under it.
pub fn last_decision() -> Option<Ids> {
    #[cfg(feature = "otlp")]
    {
        LAST.get()
    }
    #[cfg(not(feature = "otlp"))]
    {
        None
    }
}

/// Decision spans waiting for their rows' commit: a decision the store could not keep is not
/// exported either, so the export never tells of a call the audit record lacks.
#[derive(Default)]
pub struct Pending {
    #[cfg(feature = "otlp")]
    spans: Vec<SpanData>,
}

impl Pending {
    /// Adds the span of the decision `row` (redacted as stored), under the MCP request being
    /// decided on this thread or else the process's root.
    pub fn decision(&mut self, row: &DecisionRow) {
        #[cfg(feature = "otlp")]
        if let Some(s) = state() {
            let parent = PARENT.get().unwrap_or((s.root, false));
            let ids = s.child(&parent.0);
            LAST.set(Some(ids));
            self.spans
                .push(spans::decision(row, ids, Some(parent), SystemTime::now()));
        }
        #[cfg(not(feature = "otlp"))]
        let _ = row;
    }

    /// The rows were committed: their spans go on the queue.
    pub fn committed(&mut self) {
        #[cfg(feature = "otlp")]
        if let Some(s) = state() {
            for span in self.spans.drain(..) {
                s.send(span);
            }
        }
    }

    /// The rows were not committed: their spans are dropped.
    pub fn discard(&mut self) {
        #[cfg(feature = "otlp")]
        self.spans.clear();
    }
}

/// A `run` command's execution, a child of the decision that let it run.
pub struct RunSpan {
    #[cfg(feature = "otlp")]
    span: Option<Span>,
}

/// Starts the span of running `program` (its name only: the arguments are in the decision's
/// span, redacted).
pub fn start_run(program: &str) -> RunSpan {
    #[cfg(feature = "otlp")]
    {
        let span = state().zip(LAST.get()).map(|(s, decision)| {
            let mut span = Span::new(
                s.child(&decision),
                Some((decision, false)),
                SpanKind::Internal,
                "execute_tool.process",
                SystemTime::now(),
            );
            span.attr("gen_ai.operation.name", "execute_tool");
            let name = std::path::Path::new(program)
                .file_name()
                .map_or_else(|| program.to_string(), |n| n.to_string_lossy().into_owned());
            span.attr("process.executable.name", name);
            span
        });
        RunSpan { span }
    }
    #[cfg(not(feature = "otlp"))]
    {
        let _ = program;
        RunSpan {}
    }
}

/// Ends a `run` command's span with its outcome: its exit code, or the signal that ended it,
/// and `error_type` when it failed.
pub fn end_run(
    run: RunSpan,
    exit_code: Option<i32>,
    signal: Option<i32>,
    error_type: Option<&str>,
) {
    #[cfg(feature = "otlp")]
    if let (Some(s), Some(mut span)) = (state(), run.span) {
        span.end = SystemTime::now();
        if let Some(code) = exit_code {
            span.attr("process.exit.code", i64::from(code));
        }
        if let Some(signal) = signal {
            span.attr("metagate.signal", i64::from(signal));
        }
        if let Some(e) = error_type {
            span.fail(e, None);
        }
        s.send(span.into_data());
    }
    #[cfg(not(feature = "otlp"))]
    let _ = (run, exit_code, signal, error_type);
}

/// The spans of one MCP `tools/call`: the server span of the client's request (a child of
/// the trace its `params._meta.traceparent` names), the gate's decision under it, and the
/// client span of the request passed on to the server, whose context the server receives.
#[derive(Clone)]
pub struct McpCall {
    /// Shared and behind a lock: the call is ended once, by whichever relay thread sees its
    /// end, through any copy of it.
    #[cfg(feature = "otlp")]
    inner: std::sync::Arc<std::sync::Mutex<Option<McpSpans>>>,
}

impl std::fmt::Debug for McpCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpCall")
    }
}

#[cfg(feature = "otlp")]
struct McpSpans {
    server: Span,
    client: Option<Span>,
}

/// Restores the thread's decision parent when dropped.
pub struct McpScope {
    #[cfg(feature = "otlp")]
    before: Option<(Ids, bool)>,
}

impl Drop for McpScope {
    fn drop(&mut self) {
        #[cfg(feature = "otlp")]
        PARENT.set(self.before);
    }
}

impl McpCall {
    /// Starts the spans of a `tools/call` with `params` (its `_meta`, its tool's name) and
    /// JSON-RPC id `id`.
    pub fn start(params: Option<&serde_json::value::RawValue>, id: &str) -> McpCall {
        #[cfg(feature = "otlp")]
        {
            let Some(s) = state() else {
                return McpCall::none();
            };
            #[derive(serde::Deserialize)]
            struct Meta {
                traceparent: Option<String>,
            }
            #[derive(serde::Deserialize)]
            struct Params {
                name: Option<String>,
                #[serde(rename = "_meta")]
                meta: Option<Meta>,
            }
            let params: Option<Params> = params.and_then(|p| serde_json::from_str(p.get()).ok());
            let remote = params
                .as_ref()
                .and_then(|p| p.meta.as_ref()?.traceparent.as_deref())
                .and_then(Ids::parse);
            let tool = params.and_then(|p| p.name);
            let (ids, parent) = match remote {
                Some(parent) => (s.child(&parent), Some((parent, true))),
                None => (s.new_trace(), None),
            };
            let name = match &tool {
                Some(t) => format!("tools/call {t}"),
                None => "tools/call".to_string(),
            };
            let mut server = Span::new(ids, parent, SpanKind::Server, name, SystemTime::now());
            mcp_attributes(&mut server, tool.as_deref(), id);
            McpCall {
                inner: std::sync::Arc::new(std::sync::Mutex::new(Some(McpSpans {
                    server,
                    client: None,
                }))),
            }
        }
        #[cfg(not(feature = "otlp"))]
        {
            let _ = (params, id);
            McpCall::none()
        }
    }

    /// Spans of nothing: export is off.
    pub fn none() -> McpCall {
        McpCall {
            #[cfg(feature = "otlp")]
            inner: std::sync::Arc::new(std::sync::Mutex::new(None)),
        }
    }

    #[cfg(feature = "otlp")]
    fn take(&self) -> Option<McpSpans> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Makes the decisions made on this thread until the scope is dropped children of the
    /// server span.
    pub fn scope(&self) -> McpScope {
        #[cfg(feature = "otlp")]
        {
            let before = PARENT.get();
            let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(inner) = inner.as_ref() {
                PARENT.set(Some((inner.server.ids, false)));
            }
            McpScope { before }
        }
        #[cfg(not(feature = "otlp"))]
        McpScope {}
    }

    /// The call was refused by the gate with `error_type`: the server span ends now.
    pub fn refused(self, error_type: &str) {
        #[cfg(feature = "otlp")]
        if let (Some(s), Some(mut inner)) = (state(), self.take()) {
            inner.server.end = SystemTime::now();
            inner.server.fail(error_type, None);
            s.send(inner.server.into_data());
        }
        #[cfg(not(feature = "otlp"))]
        let _ = error_type;
    }

    /// The call goes on as `line` (one JSON-RPC request and its newline): its client span
    /// starts, and its `params._meta.traceparent` is set to it, so the server continues it.
    pub fn forward(&self, line: &mut Vec<u8>) {
        #[cfg(feature = "otlp")]
        if let (Some(s), Some(inner)) = (
            state(),
            self.inner
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut(),
        ) {
            let ids = s.child(&inner.server.ids);
            let name = inner.server.name.clone();
            let mut client = Span::new(
                ids,
                Some((inner.server.ids, false)),
                SpanKind::Client,
                name,
                SystemTime::now(),
            );
            client.attributes = inner.server.attributes.clone();
            inner.client = Some(client);
            if let Some(with) = with_traceparent(line, &ids.traceparent()) {
                *line = with;
            }
        }
        #[cfg(not(feature = "otlp"))]
        let _ = line;
    }

    /// The call ended: with `error_type` when it failed (a JSON-RPC error, a tool error, a
    /// cancel, a server gone). Both spans end now.
    pub fn end(&self, error_type: Option<&str>) {
        #[cfg(feature = "otlp")]
        if let (Some(s), Some(inner)) = (state(), self.take()) {
            let now = SystemTime::now();
            for mut span in inner.client.into_iter().chain([inner.server]) {
                span.end = now;
                if let Some(e) = error_type {
                    span.fail(e, None);
                }
                s.send(span.into_data());
            }
        }
        #[cfg(not(feature = "otlp"))]
        let _ = error_type;
    }
}

#[cfg(feature = "otlp")]
fn mcp_attributes(span: &mut Span, tool: Option<&str>, id: &str) {
    span.attr("mcp.method.name", "tools/call");
    span.attr("gen_ai.operation.name", "execute_tool");
    span.attr_opt("gen_ai.tool.name", tool);
    span.attr("jsonrpc.request.id", id.to_string());
    span.attr("network.transport", "pipe");
}

/// `line` with `params._meta.traceparent` set to `traceparent`, the rest as it was; `None`
/// when it is not a JSON object with an object `params` (it then goes on unchanged).
#[cfg(feature = "otlp")]
fn with_traceparent(line: &[u8], traceparent: &str) -> Option<Vec<u8>> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let mut message: serde_json::Value = serde_json::from_slice(body).ok()?;
    let params = message.get_mut("params")?.as_object_mut()?;
    let meta = params
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
        .as_object_mut()?;
    meta.insert(
        "traceparent".into(),
        serde_json::Value::String(traceparent.to_string()),
    );
    let mut out = serde_json::to_vec(&message).ok()?;
    out.push(b'\n');
    Some(out)
}

/// An `evaluate` run as a span: each finding a `gen_ai.evaluation.result` event, each tool's
/// figures for the window a `metagate.tool.figures` event.
pub struct Evaluation {
    #[cfg(feature = "otlp")]
    span: Option<Span>,
}

impl Evaluation {
    /// Starts the span of evaluating the window `[from_ms, until_ms)`.
    pub fn start(from_ms: i64, until_ms: i64) -> Evaluation {
        #[cfg(feature = "otlp")]
        {
            let span = state().map(|s| {
                let mut span = Span::new(
                    s.child(&s.root),
                    Some((s.root, false)),
                    SpanKind::Internal,
                    "evaluate",
                    SystemTime::now(),
                );
                span.attr("metagate.window.from_ms", from_ms);
                span.attr("metagate.window.until_ms", until_ms);
                span
            });
            Evaluation { span }
        }
        #[cfg(not(feature = "otlp"))]
        {
            let _ = (from_ms, until_ms);
            Evaluation {}
        }
    }

    /// A finding: `kind` names the evaluation, `confidence` is its score.
    pub fn finding(&mut self, kind: &str, tool: &str, id: &str, confidence: f64, summary: &str) {
        #[cfg(feature = "otlp")]
        if let Some(span) = self.span.as_mut() {
            span.events.push(Event::new(
                "gen_ai.evaluation.result",
                SystemTime::now(),
                vec![
                    KeyValue::new("gen_ai.evaluation.name", kind.to_string()),
                    KeyValue::new("gen_ai.evaluation.score.value", confidence),
                    KeyValue::new("gen_ai.evaluation.score.label", kind.to_string()),
                    KeyValue::new("gen_ai.evaluation.explanation", summary.to_string()),
                    KeyValue::new("gen_ai.tool.name", tool.to_string()),
                    KeyValue::new("metagate.recommendation.id", id.to_string()),
                ],
                0,
            ));
        }
        #[cfg(not(feature = "otlp"))]
        let _ = (kind, tool, id, confidence, summary);
    }

    /// A tool's figures for the window.
    pub fn tool(
        &mut self,
        tool: &str,
        calls: u64,
        failure_rate: Option<f64>,
        utility: Option<f64>,
        reasks: u64,
    ) {
        #[cfg(feature = "otlp")]
        if let Some(span) = self.span.as_mut() {
            let mut attrs = vec![
                KeyValue::new("gen_ai.tool.name", tool.to_string()),
                KeyValue::new(
                    "metagate.tool.calls",
                    i64::try_from(calls).unwrap_or(i64::MAX),
                ),
                KeyValue::new(
                    "metagate.tool.reasks",
                    i64::try_from(reasks).unwrap_or(i64::MAX),
                ),
            ];
            if let Some(rate) = failure_rate {
                attrs.push(KeyValue::new("metagate.tool.failure_rate", rate));
            }
            if let Some(utility) = utility {
                attrs.push(KeyValue::new("metagate.tool.utility", utility));
            }
            span.events.push(Event::new(
                "metagate.tool.figures",
                SystemTime::now(),
                attrs,
                0,
            ));
        }
        #[cfg(not(feature = "otlp"))]
        let _ = (tool, calls, failure_rate, utility, reasks);
    }

    /// Ends the span.
    pub fn end(self) {
        #[cfg(feature = "otlp")]
        if let (Some(s), Some(mut span)) = (state(), self.span) {
            span.end = SystemTime::now();
            s.send(span.into_data());
        }
    }
}
