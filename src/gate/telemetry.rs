//! Recording gate decisions in the telemetry store: one row per call, redacted, committed in
//! groups before the calls' lines are written.

use serde_json::{Map, Value};

use super::Decision;
use super::{Sink, SinkError};
use metagate_checks::redact;
use metagate_core::enforce::grants::GrantCheck;
use metagate_core::enforce::{Context, Facts, fingerprint};
use metagate_core::policy::Policy;
use metagate_store::StoreError;
use metagate_store::any::AnyStore;
use metagate_store::decisions::DecisionLog;
use metagate_store::grants::GrantEvent;
use metagate_store::telemetry::DecisionRow;
use metagate_wire::args::{ArgValue, Args};
use metagate_wire::correction::Correction;
use metagate_wire::scan;

/// The row a decision becomes: arguments, corrections and warnings redacted. `policy` is
/// the one the call was decided under: its fingerprint counts the arguments the tool declares.
pub fn decision_row(
    policy: &Policy,
    decision: &Decision<'_>,
    context: &Context,
    ts_ms: i64,
    latency_us: u64,
) -> DecisionRow {
    let fingerprint = match (decision.tool(), &decision.call) {
        (Some(tool), Some(call)) => Some(fingerprint(tool, policy.tool(tool), &call.args)),
        _ => None,
    };
    let args = decision.call.as_ref().map(|c| stored_args(&c.args));
    let mut corrections = Vec::with_capacity(32 + 64 * decision.corrections.len());
    corrections.push(b'[');
    for (i, c) in decision.corrections.iter().enumerate() {
        if i > 0 {
            corrections.push(b',');
        }
        write_correction(c, &mut corrections);
    }
    corrections.push(b']');
    let warnings = if decision.warnings.is_empty() {
        "[]".to_string()
    } else {
        let redacted: Vec<String> = decision
            .warnings
            .iter()
            .map(|w| redact::redact_text(w).unwrap_or_else(|| w.clone()))
            .collect();
        serde_json::to_string(&redacted).expect("strings serialize")
    };
    DecisionRow {
        ts_ms,
        session: context.session.clone(),
        caller: context.caller.clone(),
        intent: context.intent.clone(),
        tool: decision.tool().map(str::to_string),
        method: decision.method().map(str::to_string),
        shape: decision.shape.map(|s| s.as_str()),
        verdict: decision.verdict.as_str(),
        category: decision.error.as_ref().map(|e| e.category.as_str()),
        corrections: String::from_utf8(corrections).expect("JSON is UTF-8"),
        warnings,
        args,
        fingerprint,
        latency_us: i64::try_from(latency_us).unwrap_or(i64::MAX),
        call_id: decision.call_id().map(|id| match id {
            Value::String(s) => s,
            other => other.to_string(),
        }),
    }
}

/// An argument value longer than this (as JSON text) is stored as a note of its length, not
/// as its text: a file's content sent whole would make the row, and each copy SQLite makes
/// of it on the way in, as large as the call; nothing reads such a value back (evaluate
/// learns from names and short values), and a secret in it need not be found to be kept out.
const STORED_VALUE_UP_TO: usize = 64 * 1024;

/// Arguments kept in all (their values cut as [`STORED_VALUE_UP_TO`] says) longer than this,
/// or more of them than [`STORED_ARGS_COUNT_UP_TO`], are stored as a note of their size: a
/// call of a million made-up arguments is not built into a million values to be stored.
const STORED_ARGS_UP_TO: usize = 1 << 20;

/// See [`STORED_ARGS_UP_TO`].
const STORED_ARGS_COUNT_UP_TO: usize = 1000;

/// The arguments as the `args` column holds them: values redacted, long ones left out; the
/// whole of them left out (a JSON string saying how large they were) when there is too much.
fn stored_args(args: &Args<'_>) -> String {
    let lengths: Vec<usize> = args
        .iter()
        .map(|(_, value)| match value {
            ArgValue::Raw(text) => text.len(),
            ArgValue::Value(v) => json_len(v),
        })
        .collect();
    let kept: usize = args
        .keys()
        .zip(&lengths)
        .map(|(key, &len)| key.len() + len.min(STORED_VALUE_UP_TO))
        .sum();
    if args.len() > STORED_ARGS_COUNT_UP_TO || kept > STORED_ARGS_UP_TO {
        let total: usize = args.keys().zip(&lengths).map(|(k, &l)| k.len() + l).sum();
        let note = format!(
            "[{} in {total} bytes, not kept]",
            metagate_wire::display::plural(args.len(), "argument", "arguments")
        );
        return json_text(&Value::String(note));
    }
    let mut map = Map::with_capacity(args.len());
    for ((key, value), &len) in args.iter().zip(&lengths) {
        let kept = if len > STORED_VALUE_UP_TO {
            Value::String(format!("[{len} bytes, not kept]"))
        } else {
            value.to_value()
        };
        map.insert(key.to_string(), kept);
    }
    let mut v = Value::Object(map);
    redact::redact_value(&mut v);
    json_text(&v)
}

/// How long `v` is as compact JSON, near enough (escapes are not counted).
fn json_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => n.as_str().len(),
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 1 + items.iter().map(|i| json_len(i) + 1).sum::<usize>(),
        Value::Object(map) => {
            1 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + json_len(v))
                .sum::<usize>()
        }
    }
}

fn json_text(v: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    scan::write_value(v, &mut out);
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// A correction as the `corrections` column holds it (the same fields as `--report`), its
/// values redacted as they would be in place: `{"password": "73519468"}` coerced to a number
/// stores neither number.
fn write_correction(c: &Correction, out: &mut Vec<u8>) {
    fn redacted<'a>(c: &Correction, v: &'a Value) -> std::borrow::Cow<'a, Value> {
        if matches!(v, Value::Null | Value::Bool(_)) {
            return std::borrow::Cow::Borrowed(v);
        }
        let mut v = v.clone();
        if c.kind.renames() {
            // `from` and `to` are argument names.
            redact::redact_value(&mut v);
        } else {
            redact::redact_at_path(&c.path, &mut v);
        }
        std::borrow::Cow::Owned(v)
    }
    out.extend_from_slice(b"{\"kind\":\"");
    out.extend_from_slice(c.kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"path\":");
    scan::write_string(&c.path, out);
    out.extend_from_slice(b",\"from\":");
    scan::write_value(&redacted(c, &c.from), out);
    out.extend_from_slice(b",\"to\":");
    scan::write_value(&redacted(c, &c.to), out);
    if let Some(note) = &c.note {
        out.extend_from_slice(b",\"note\":");
        scan::write_string(
            &redact::redact_text(note).unwrap_or_else(|| note.clone()),
            out,
        );
    }
    out.push(b'}');
}

/// A sink that records every decision in the telemetry store, and answers the policy checks
/// from it. It starts on a store that opened for writing (one that did not is a set-up fault,
/// never an answer to a call); a store that fails later fails the commit with the reason, and
/// the gate answers as the policy's `on_internal_error` says.
pub struct TelemetrySink {
    log: DecisionLog,
    context: Context,
    now_ms: Box<dyn Fn() -> i64>,
    /// The time of the replayed call being decided (`gate --replay`).
    replayed_at: Option<i64>,
    /// The decisions' spans, exported once their rows are committed.
    spans: crate::otel::Pending,
}

impl TelemetrySink {
    /// `counting`: the policy sets limits; `loop_breaker`: one of them is the loop breaker,
    /// which needs its index.
    pub fn new(
        store: impl Into<AnyStore>,
        context: Context,
        now_ms: Box<dyn Fn() -> i64>,
        counting: bool,
        loop_breaker: bool,
    ) -> Result<TelemetrySink, StoreError> {
        Ok(TelemetrySink {
            log: DecisionLog::new(store, counting, loop_breaker)?,
            context,
            now_ms,
            replayed_at: None,
            spans: crate::otel::Pending::default(),
        })
    }

    /// The row id of the last decision committed: what a tool's outcome recorded later names.
    pub(crate) fn last_decision_id(&self) -> Option<i64> {
        self.log.last_decision_id()
    }

    /// The store the decisions go to, for the events a job records beside them.
    pub(crate) fn store(&mut self) -> &mut AnyStore {
        self.log.store()
    }
}

impl Sink for TelemetrySink {
    fn facts(&mut self) -> &mut dyn Facts {
        &mut self.log
    }

    fn now_ms(&self) -> i64 {
        self.replayed_at.unwrap_or_else(|| (self.now_ms)())
    }

    fn replay(&mut self, at_ms: Option<i64>, context: &Context) {
        self.replayed_at = at_ms;
        self.context = context.clone();
    }

    fn record(&mut self, policy: &Policy, decision: &Decision<'_>, latency_us: u64) {
        let now = self.now_ms();
        let row = decision_row(policy, decision, &self.context, now, latency_us);
        let event = decision
            .grant_check
            .clone()
            .and_then(|c| grant_event(c, decision, &row));
        self.spans.decision(&row);
        self.log.push(row, event);
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        match self.log.commit() {
            Ok(_) => {
                self.spans.committed();
                Ok(())
            }
            Err(e) => {
                self.spans.discard();
                Err(SinkError(e.to_string()))
            }
        }
    }

    fn take_failures(&mut self) -> Vec<String> {
        self.log.take_failures()
    }
}

/// The audit event for a decision's grant check: `used` when the call went through (a later
/// check may still have refused it: then the grant was not used), `denied` when the grant
/// check refused it.
fn grant_event(
    check: GrantCheck,
    decision: &Decision<'_>,
    row: &DecisionRow,
) -> Option<GrantEvent> {
    let rejected = decision.error.is_some();
    let (event, grant, capability, tool, detail) = match check {
        GrantCheck::Used {
            grant,
            capability,
            tool,
        } if !rejected => ("used", Some(grant), capability, tool, None),
        GrantCheck::Denied {
            capability,
            tool,
            reason,
            grant,
        } if rejected => ("denied", grant, capability, tool, Some(reason)),
        _ => return None,
    };
    Some(GrantEvent {
        ts_ms: row.ts_ms,
        event,
        grant_id: grant.map(|g| g.to_string()),
        capability,
        tool: Some(tool),
        session: row.session.clone(),
        decision_id: None,
        actor: None,
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Gate, Options, Verdict};
    use metagate_core::enforce::NoFacts;

    fn decide<'a>(policy: &Policy, input: &'a [u8], options: &Options) -> Decision<'a> {
        Gate::corrections_only(policy, *options).decide_call(input, &mut NoFacts, 0)
    }

    #[test]
    fn rows_hold_the_decision_redacted() {
        let policy = Policy::builtin();
        let input = br#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"curl -H 'Authorization: Bearer sk-live-abcdefghijklmnop1234567890' x"}}"#;
        let d = decide(&policy, input, &Options::default());
        assert_eq!(d.verdict, Verdict::Corrected);
        let ctx = Context {
            session: Some("s1".into()),
            caller: Some("agent".into()),
            intent: None,
        };
        let row = decision_row(&policy, &d, &ctx, 42, 7);
        assert_eq!(
            (row.tool.as_deref(), row.verdict, row.shape),
            (Some("code_execution_tool"), "corrected", Some("agent-zero"))
        );
        assert_eq!(
            (row.ts_ms, row.latency_us, row.session.as_deref()),
            (42, 7, Some("s1"))
        );
        let args = row.args.unwrap();
        assert!(!args.contains("abcdefghijklmnop1234567890"), "{args}");
        assert!(args.contains("[REDACTED]"));
        assert!(row.corrections.contains("value_alias"));
    }

    /// A long value is stored as a note of its length, the rest as sent; too many arguments,
    /// or too much in all, as a note of their size (a JSON string, which nothing reads as
    /// arguments). The fingerprint still tells the calls apart.
    #[test]
    fn long_arguments_are_stored_as_their_size() {
        let policy = Policy::builtin();
        let ctx = Context {
            session: None,
            caller: None,
            intent: None,
        };
        let row = |input: &str| {
            let d = decide(&policy, input.as_bytes(), &Options::default());
            decision_row(&policy, &d, &ctx, 0, 0)
        };
        let long = "x".repeat(STORED_VALUE_UP_TO + 1);
        let one = row(&format!(
            r#"{{"tool_name":"response","tool_args":{{"text":"{long}","n":1}}}}"#
        ));
        let args: Value = serde_json::from_str(one.args.as_deref().unwrap()).unwrap();
        assert_eq!(
            args,
            serde_json::json!({"text": format!("[{} bytes, not kept]", long.len() + 2), "n": 1})
        );
        let other = row(&format!(
            r#"{{"tool_name":"response","tool_args":{{"text":"{long}y","n":1}}}}"#
        ));
        assert_ne!(one.fingerprint, other.fingerprint);
        let many: String = (0..=STORED_ARGS_COUNT_UP_TO)
            .map(|i| format!(r#","k{i}":1"#))
            .collect();
        let many = row(&format!(
            r#"{{"tool_name":"response","tool_args":{{"text":"a"{many}}}}}"#
        ));
        let args: Value = serde_json::from_str(many.args.as_deref().unwrap()).unwrap();
        let note = args.as_str().unwrap();
        assert!(note.starts_with("[1002 arguments in "), "{note}");
        // A call with many unknown arguments names the first ones and counts the rest.
        assert_eq!(many.warnings.matches("unknown argument \\\"").count(), 20);
        assert!(
            many.warnings.contains("981 more unknown arguments kept"),
            "{}",
            many.warnings
        );
    }
}
