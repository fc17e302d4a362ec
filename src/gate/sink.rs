//! Recording gate decisions in the telemetry store: one row per call, redacted, committed in
//! groups before the calls' lines are written.

use serde_json::Value;

use super::Decision;
use super::stream::{Sink, SinkError};
use crate::correction::Correction;
use crate::redact;
use crate::scan;
use crate::store::{Store, StoreError};
use crate::telemetry::{DecisionRow, Recorder};

/// Who is calling and why, for every decision of a run (`--session`, `--caller`, `--intent`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    pub session: Option<String>,
    pub caller: Option<String>,
    pub intent: Option<String>,
}

/// The row a decision becomes: arguments, corrections and warnings redacted.
pub fn decision_row(
    decision: &Decision<'_>,
    context: &Context,
    ts_ms: i64,
    latency_us: u64,
) -> DecisionRow {
    let args = decision.call.as_ref().map(|c| c.args.to_map());
    let fingerprint = match (decision.tool(), &args) {
        (Some(tool), Some(args)) => Some(fingerprint(tool, args)),
        _ => None,
    };
    let args = args.map(|map| {
        let mut v = Value::Object(map);
        redact::redact_value(&mut v);
        json_text(&v)
    });
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
    }
}

fn json_text(v: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    scan::write_value(v, &mut out);
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// A correction as the `corrections` column holds it (the same fields as `--report`), its
/// values redacted.
fn write_correction(c: &Correction, out: &mut Vec<u8>) {
    fn redacted(v: &Value) -> std::borrow::Cow<'_, Value> {
        if matches!(v, Value::Null | Value::Bool(_) | Value::Number(_)) {
            return std::borrow::Cow::Borrowed(v);
        }
        let mut v = v.clone();
        redact::redact_value(&mut v);
        std::borrow::Cow::Owned(v)
    }
    out.extend_from_slice(b"{\"kind\":\"");
    out.extend_from_slice(c.kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"path\":");
    scan::write_string(&c.path, out);
    out.extend_from_slice(b",\"from\":");
    scan::write_value(&redacted(&c.from), out);
    out.extend_from_slice(b",\"to\":");
    scan::write_value(&redacted(&c.to), out);
    if let Some(note) = &c.note {
        out.extend_from_slice(b",\"note\":");
        scan::write_string(
            &redact::redact_text(note).unwrap_or_else(|| note.clone()),
            out,
        );
    }
    out.push(b'}');
}

/// Identifies a tool called with the same arguments, in any order: FNV-1a over the tool and
/// each argument, the arguments taken in key order (stored as SQLite's signed integer).
pub fn fingerprint(tool: &str, args: &serde_json::Map<String, Value>) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(tool.as_bytes());
    feed(&[0]);
    let mut keys: Vec<&String> = args.keys().collect();
    keys.sort_unstable();
    let mut value = Vec::with_capacity(64);
    for k in keys {
        feed(k.as_bytes());
        feed(b"=");
        value.clear();
        write_canonical(&args[k.as_str()], &mut value);
        feed(&value);
        feed(&[0]);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// Compact JSON with every object's keys in order, so key order never changes a fingerprint.
fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                scan::write_string(k, out);
                out.push(b':');
                write_canonical(&map[k.as_str()], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        other => scan::write_value(other, out),
    }
}

/// A sink that records every decision in the telemetry store. A store that could not be
/// opened fails every commit with the reason, and the gate answers as the policy's
/// `on_internal_error` says.
pub struct TelemetrySink {
    recorder: Result<Recorder, String>,
    context: Context,
    now_ms: Box<dyn Fn() -> i64>,
}

impl TelemetrySink {
    pub fn new(
        store: Result<Store, StoreError>,
        context: Context,
        now_ms: Box<dyn Fn() -> i64>,
    ) -> TelemetrySink {
        TelemetrySink {
            recorder: store.map(Recorder::new).map_err(|e| e.to_string()),
            context,
            now_ms,
        }
    }

    /// The store, when it opened.
    pub fn store(&mut self) -> Option<&mut Store> {
        self.recorder.as_mut().ok().map(Recorder::store_mut)
    }
}

impl Sink for TelemetrySink {
    fn record(&mut self, decision: &Decision<'_>, latency_us: u64) {
        if let Ok(recorder) = &mut self.recorder {
            let row = decision_row(decision, &self.context, (self.now_ms)(), latency_us);
            recorder.push(row);
        }
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        match &mut self.recorder {
            Ok(recorder) => recorder
                .commit()
                .map(|_| ())
                .map_err(|e| SinkError(e.to_string())),
            Err(reason) => Err(SinkError(reason.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Options, Verdict, decide};
    use crate::schema::Policy;

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
        let row = decision_row(&d, &ctx, 42, 7);
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

    #[test]
    fn fingerprints_ignore_key_order_only() {
        let a: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"x":1,"y":{"b":2,"a":1}}"#).unwrap();
        let b: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"y":{"a":1,"b":2},"x":1}"#).unwrap();
        let c: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"x":2,"y":{"a":1,"b":2}}"#).unwrap();
        assert_eq!(fingerprint("t", &a), fingerprint("t", &b));
        assert_ne!(fingerprint("t", &a), fingerprint("t", &c));
        assert_ne!(fingerprint("t", &a), fingerprint("u", &a));
    }
}
