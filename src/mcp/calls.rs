//! Deciding one `tools/call`: the gate's decision on the request as one document, made
//! durable before the call goes on; a refused call is answered to the client as a tool error
//! (`isError`, with the gate's feedback as its text) and never reaches the server.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::framing::RequestId;
use super::outcomes::InFlight;
use super::registry::Ready;
use super::{Clock, Diag, OpenStore};
use crate::gate::{
    Committed, Committer, Decision, Gate, NoSink, Options, Sink, SinkError, TelemetrySink, Verdict,
    explain_lines, malformed, notes, unrecorded,
};
use metagate_checks::path::CachedFs;
use metagate_core::correct::Report;
use metagate_core::enforce::{
    Checker, Context, Count, CountKey, Counts, Facts, GrantLookup, Scope, Setup, Unanswerable,
};
use metagate_core::error::{Category, ToolError};
use metagate_core::grants::Grant;
use metagate_core::policy::file::PrereqEvidence;
use metagate_core::policy::{FailMode, Policy};
use metagate_wire::call::Shape;

/// What the policy checks need from the run: where the working folder is, metagate's own
/// files (which no call may touch), and the home folder.
#[derive(Debug, Clone, Default)]
pub struct CheckerSetup {
    /// The folder the server runs in, for relative paths.
    pub cwd: PathBuf,
    /// metagate's own files, which no path argument may name.
    pub protected: Vec<PathBuf>,
    /// The home folder the shell check reads `~` as.
    pub home: Option<PathBuf>,
    /// The running binary, which shell commands may not run under any name.
    pub own_binary: Option<metagate_checks::own_binary::OwnBinary>,
    /// Where shell commands' programs are found and resolved.
    pub programs: Option<metagate_checks::program_files::ProgramFiles>,
    /// The key grant rows are sealed with.
    pub grant_key: Option<metagate_core::grants::seal::GrantKey>,
}

/// What happens to a call.
pub enum Action {
    /// Send this line (the call, corrected where it was) to the server.
    Forward {
        /// The request to send.
        line: Vec<u8>,
        /// What to record when its answer comes.
        call: InFlight,
    },
    /// Answer the client with this line; the server never sees the call.
    Answer(Vec<u8>),
}

/// Decides calls; lives in the thread that reads the client.
pub struct CallGate {
    setup: CheckerSetup,
    options: Options,
    context: Context,
    fs: CachedFs<fn() -> Instant>,
    sink: Recording,
    committer: Committer,
    /// The checker, built for the policy it holds (a new registry gets a new one).
    checker: Option<(Arc<Policy>, Checker)>,
    diag: Diag,
}

enum Recording {
    Store(Box<TelemetrySink>),
    /// Telemetry off: nothing kept, nothing counted, but the clock goes on (grants expire).
    Off(NoSink),
    /// The store opened when metagate started, and not for this session: each call is
    /// answered as `on_internal_error` says, as when a store fails mid-run.
    Failed(FailedStore),
}

impl Recording {
    fn sink(&mut self) -> &mut dyn Sink {
        match self {
            Recording::Store(s) => s.as_mut(),
            Recording::Off(s) => s,
            Recording::Failed(s) => s,
        }
    }
}

/// A store that could not be opened: every question and every commit fails with why.
struct FailedStore {
    why: String,
    clock: Clock,
}

impl Counts for FailedStore {
    fn count(
        &mut self,
        _: &CountKey,
        _: Option<i64>,
        _: i64,
        _: u64,
    ) -> Result<Count, Unanswerable> {
        Err(Unanswerable::Store(self.why.clone()))
    }
    fn completed(&mut self, _: &str, _: &str, _: PrereqEvidence) -> Result<bool, Unanswerable> {
        Err(Unanswerable::Store(self.why.clone()))
    }
}

impl GrantLookup for FailedStore {
    fn grants(&mut self, _: &str, _: i64) -> Result<Vec<Grant>, Unanswerable> {
        Err(Unanswerable::Store(self.why.clone()))
    }
    fn grant_store(&self) -> Option<&std::path::Path> {
        None
    }
}

impl Sink for FailedStore {
    fn facts(&mut self) -> &mut dyn Facts {
        self
    }
    fn now_ms(&self) -> i64 {
        (self.clock)()
    }
    fn timed(&self) -> bool {
        false
    }
    fn record(&mut self, _: &Policy, _: &Decision<'_>, _: u64) {}
    fn commit(&mut self) -> Result<(), SinkError> {
        Err(SinkError(self.why.clone()))
    }
}

impl CallGate {
    /// `base` sets what is counted (the limits come from the policy file, whatever the server
    /// lists); `telemetry` opens the store, `None` with telemetry off.
    pub fn new(
        base: &Policy,
        setup: CheckerSetup,
        options: Options,
        context: Context,
        telemetry: Option<&OpenStore>,
        clock: Clock,
        diag: Diag,
    ) -> CallGate {
        let sink = match telemetry {
            Some(open) => {
                let now = Arc::clone(&clock);
                let sink = open().and_then(|store| {
                    TelemetrySink::new(
                        store,
                        context.clone(),
                        Box::new(move || now()),
                        base.rules.counts(),
                        base.rules.limits.loop_breaker.is_some(),
                    )
                });
                match sink {
                    Ok(sink) => Recording::Store(Box::new(sink)),
                    Err(e) => Recording::Failed(FailedStore {
                        why: e.to_string(),
                        clock,
                    }),
                }
            }
            None => Recording::Off(NoSink::with_clock(clock)),
        };
        CallGate {
            setup,
            options,
            context,
            // One second of memory: a session checking the same folders pays for them once a second.
            fs: CachedFs::new(Instant::now as fn() -> Instant, Duration::from_secs(1)),
            sink,
            committer: Committer::default(),
            checker: None,
            diag,
        }
    }

    /// Decides the `tools/call` request `line` (id `id`, params `params`) with what the
    /// registry gave (`ready`); `current` is the registry's policy, for a failed listing.
    pub fn decide_request(
        &mut self,
        ready: Ready,
        current: &Arc<Policy>,
        line: &[u8],
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Action {
        let trace = match id {
            _ if !crate::otel::on() => crate::otel::McpCall::none(),
            RequestId::Number(text) | RequestId::Text(text) => {
                crate::otel::McpCall::start(params, text)
            }
        };
        let _decisions_under = trace.scope();
        let stateless = super::registry::session_meta(params).is_some();
        let policy = match ready {
            Ready::Policy(p) => p,
            Ready::Failed(why) if current.gate.on_internal_error == FailMode::Reject => {
                // Why names the policy file, its lines and the server's failure: the
                // operator's, on stderr. The model is told only that it cannot be checked.
                super::say(
                    &self.diag,
                    &format!("metagate: error: a tools/call was refused: {why}"),
                );
                let mut error = ToolError::new(
                    Category::ServerError,
                    "metagate cannot check this call: it has no usable list of the server's tools"
                        .to_string(),
                )
                .suggest("Try again later; if it keeps failing, the operator must look at the MCP server and metagate's log");
                if let Some(name) = tool_name(params) {
                    error = error.tool(name);
                }
                let decision = Decision::rejected(line, error.clone(), Report::default());
                let sink = self.sink.sink();
                sink.record(current, &decision, 0);
                let diag = &self.diag;
                // Refused whatever the commit says: the call cannot be checked.
                self.committer.commit(current, sink, &mut |line| diag(line));
                self.say(&decision);
                trace.refused(error.category.as_str());
                return Action::Answer(refusal(id, &error, stateless));
            }
            Ready::Failed(why) => {
                super::say(
                    &self.diag,
                    &format!(
                        "metagate: warning: {why}; the call is checked with the policy alone (on_internal_error = \"pass\")"
                    ),
                );
                Arc::clone(current)
            }
        };
        if self
            .checker
            .as_ref()
            .is_none_or(|(p, _)| !Arc::ptr_eq(p, &policy))
        {
            let checker = Checker::new(
                &policy,
                &Setup {
                    cwd: &self.setup.cwd,
                    protected: self.setup.protected.clone(),
                    home: self.setup.home.clone(),
                    own_binary: self.setup.own_binary.clone(),
                    programs: self.setup.programs.clone(),
                    grant_key: self.setup.grant_key.clone(),
                },
            );
            self.checker = Some((Arc::clone(&policy), checker));
        }
        let (_, checker) = self.checker.as_ref().expect("set above");
        let gate = Gate {
            policy: &policy,
            options: self.options,
            checker: Some(checker),
            context: &self.context,
            fs: &self.fs,
            scope: Scope { runtime: true },
        };
        let started = Instant::now();
        let sink = self.sink.sink();
        let now = sink.now_ms();
        let mut decision = gate.decide_call(line, sink.facts(), now);
        if decision.error.is_none() && decision.shape != Some(Shape::Mcp) {
            // The server reads `params`; a call the gate read from any other field is not
            // the call the server would run.
            decision.verdict = Verdict::Rejected;
            decision.error = Some(malformed(
                "the request was not read as an MCP tools/call (its params.name and params.arguments)",
            ));
        }
        let latency = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        sink.record(&policy, &decision, latency);
        let diag = &self.diag;
        let committed = self.committer.commit(&policy, sink, &mut |line| diag(line));
        self.say(&decision);
        if committed == Committed::Refused {
            let error = unrecorded();
            trace.refused(error.category.as_str());
            return Action::Answer(refusal(id, &error, stateless));
        }
        if let Some(error) = &decision.error {
            trace.refused(error.category.as_str());
            return Action::Answer(refusal(id, error, stateless));
        }
        let mut out = Vec::with_capacity(line.len() + 1);
        decision.write_call(&mut out);
        out.push(b'\n');
        trace.forward(&mut out);
        let call = InFlight {
            decision_id: match &self.sink {
                Recording::Store(s) => s.last_decision_id(),
                Recording::Off(_) | Recording::Failed(_) => None,
            },
            tool: decision.tool().unwrap_or_default().to_string(),
            method: decision.method().map(str::to_string),
            session: self.context.session.clone(),
            sent: Instant::now(),
            trace,
        };
        Action::Forward { line: out, call }
    }

    /// The stderr lines of a decision: one per correction, warning and rejection (unless
    /// quiet), and every stage with `--explain`.
    fn say(&self, decision: &Decision<'_>) {
        let mut text = Vec::new();
        if !self.options.quiet {
            notes(decision, None, &mut text);
        }
        explain_lines(decision, None, &mut text);
        for line in String::from_utf8_lossy(&text).lines() {
            (self.diag)(line);
        }
    }
}

/// The tool a `tools/call` names, for a refusal made before the gate read it.
fn tool_name(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Params {
        name: Option<String>,
    }
    serde_json::from_str::<Params>(params?.get()).ok()?.name
}

/// The answer to a refused call: a `CallToolResult` with `isError`, the gate's feedback as its
/// text (what the model reads, and can act on), and the structured error in `_meta`.
fn refusal(id: &RequestId, error: &ToolError, stateless: bool) -> Vec<u8> {
    let mut meta = Map::new();
    meta.insert("metagate/error".into(), error.to_json());
    let mut result = Map::new();
    result.insert(
        "content".into(),
        json!([{ "type": "text", "text": error.feedback() }]),
    );
    result.insert("isError".into(), Value::Bool(true));
    result.insert("_meta".into(), Value::Object(meta));
    if stateless {
        // 2026-07-28 results say what they are.
        result.insert("resultType".into(), "complete".into());
    }
    let mut answer = Map::new();
    answer.insert("jsonrpc".into(), "2.0".into());
    answer.insert(
        "id".into(),
        serde_json::from_str(&id.to_json()).expect("an id is JSON"),
    );
    answer.insert("result".into(), Value::Object(result));
    let mut line = serde_json::to_vec(&Value::Object(answer)).expect("JSON serializes");
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use metagate_core::policy::Source;

    /// A listing that failed is the operator's to read: the refusal the model gets names
    /// no policy file, line or server message; stderr does.
    #[test]
    fn a_failed_listing_tells_the_model_nothing_of_the_operators() {
        let policy = Policy::from_source(
            Source {
                name: "p.toml",
                text: "[gate]\non_internal_error = \"reject\"\n",
            },
            None,
        )
        .unwrap();
        let said: Arc<Mutex<Vec<String>>> = Arc::default();
        let diag: Diag = {
            let said = Arc::clone(&said);
            Arc::new(move |line: &str| said.lock().unwrap().push(line.to_string()))
        };
        let mut gate = CallGate::new(
            &policy,
            CheckerSetup {
                cwd: std::env::temp_dir(),
                protected: Vec::new(),
                home: None,
                own_binary: None,
                programs: None,
                grant_key: None,
            },
            Options::default(),
            Context::default(),
            None,
            Arc::new(|| 0),
            diag,
        );
        let why = "the server's tools cannot be read with the policy:\n/etc/agents/policy.toml:12: `secret_tool` is not a tool";
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{}}}"#;
        let params =
            serde_json::value::RawValue::from_string(r#"{"name":"x","arguments":{}}"#.to_string())
                .unwrap();
        let action = gate.decide_request(
            Ready::Failed(why.to_string()),
            &Arc::new(policy),
            line,
            &RequestId::Number("7".into()),
            Some(&params),
        );
        let Action::Answer(answer) = action else {
            panic!("a failed listing is answered by metagate");
        };
        let answer = String::from_utf8(answer).unwrap();
        assert!(answer.contains("cannot check this call"), "{answer}");
        for detail in [
            "policy.toml",
            ":12",
            "secret_tool",
            "cannot be read with the policy",
        ] {
            assert!(
                !answer.contains(detail),
                "{detail} reached the model: {answer}"
            );
        }
        let said = said.lock().unwrap().join("\n");
        assert!(said.contains("/etc/agents/policy.toml:12"), "{said}");
    }
}
