//! Recording gate decisions in the telemetry store: one row per call, redacted, committed in
//! groups before the calls' lines are written.

use std::collections::HashMap;

use serde_json::Value;

use super::Decision;
use super::stream::{Sink, SinkError};
use crate::checks::redact;
use crate::domain::enforce::{Context, Count, CountKey, Facts, fingerprint};
use crate::domain::policy::file::Evidence;
use crate::store::telemetry::{self, DecisionRow, Recorder};
use crate::store::{Store, StoreError};
use crate::wire::correction::Correction;
use crate::wire::scan;

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
/// from it. A store that could not be opened fails every commit with the reason, and the gate
/// answers as the policy's `on_internal_error` says.
pub struct TelemetrySink {
    recorder: Result<Recorder, String>,
    context: Context,
    now_ms: Box<dyn Fn() -> i64>,
    /// Whether limits are counted (then calls recorded but not yet committed count too).
    counting: bool,
    /// Calls let through since the last commit, by what they count toward.
    pending: HashMap<CountKey, Count>,
    /// Counts read from the store since the last commit, by key and window length: a group of
    /// lines asks the store once per key, not once per line.
    read: HashMap<(CountKey, Option<i64>), Count>,
    /// What the grant check decided about the call being decided, audited with its row.
    grant_check: Option<crate::domain::enforce::grants::GrantCheck>,
    /// Grants read from the store since the last commit, by capability: a group of lines asks
    /// once per capability. A grant made or revoked by another process counts from the next
    /// group on; expiry is judged per call.
    grants_read: HashMap<String, Vec<crate::domain::grants::Grant>>,
    /// The store's path made absolute, for [`Facts::grant_store`].
    store_path: Option<std::path::PathBuf>,
}

impl TelemetrySink {
    /// `counting`: the policy sets limits; `loop_breaker`: one of them is the loop breaker,
    /// which needs its index.
    pub fn new(
        store: Result<Store, StoreError>,
        context: Context,
        now_ms: Box<dyn Fn() -> i64>,
        counting: bool,
        loop_breaker: bool,
    ) -> TelemetrySink {
        let store = store.and_then(|mut s| {
            if counting {
                s.ensure_limit_indexes(loop_breaker)?;
            }
            Ok(s)
        });
        let store_path = store
            .as_ref()
            .ok()
            .map(|s| std::path::absolute(s.path()).unwrap_or_else(|_| s.path().to_path_buf()));
        TelemetrySink {
            store_path,
            recorder: store.map(Recorder::new).map_err(|e| e.to_string()),
            context,
            now_ms,
            counting,
            pending: HashMap::new(),
            read: HashMap::new(),
            grant_check: None,
            grants_read: HashMap::new(),
        }
    }

    /// The store, when it opened.
    pub fn store(&mut self) -> Option<&mut Store> {
        self.recorder.as_mut().ok().map(Recorder::store_mut)
    }

    fn count_pending(&mut self, row: &DecisionRow) {
        if row.verdict == "rejected" {
            return;
        }
        let mut keys = Vec::with_capacity(4);
        if let Some(c) = &row.caller {
            keys.push(CountKey::Caller(c.clone()));
        }
        if let Some(t) = &row.tool {
            keys.push(CountKey::Tool(t.clone()));
        }
        if let Some(s) = &row.session {
            keys.push(CountKey::Session(s.clone()));
        }
        if let Some(f) = row.fingerprint {
            keys.push(CountKey::Fingerprint {
                fingerprint: f,
                session: row.session.clone(),
                caller: row.caller.clone(),
            });
        }
        for key in keys {
            let c = self.pending.entry(key).or_default();
            c.n += 1;
            c.oldest_ms = Some(c.oldest_ms.map_or(row.ts_ms, |o| o.min(row.ts_ms)));
        }
    }
}

impl Facts for TelemetrySink {
    fn now_ms(&self) -> i64 {
        (self.now_ms)()
    }

    fn count(&mut self, key: &CountKey, since_ms: Option<i64>, cap: u64) -> Result<Count, String> {
        let now = (self.now_ms)();
        let window = since_ms.map(|s| now - s);
        let stored = match self.read.get(&(key.clone(), window)) {
            Some(c) => *c,
            None => {
                let recorder = match &mut self.recorder {
                    Ok(r) => r,
                    Err(reason) => return Err(reason.clone()),
                };
                // Counted under the write lock, held until this group's rows are committed:
                // a process counting at the same moment waits, then sees these calls.
                recorder.lock().map_err(|e| e.to_string())?;
                let c = telemetry::count(recorder.store(), key, since_ms, cap)
                    .map_err(|e| e.to_string())?;
                self.read.insert((key.clone(), window), c);
                c
            }
        };
        let pending = self.pending.get(key).copied().unwrap_or_default();
        let in_window = pending
            .oldest_ms
            .is_some_and(|o| since_ms.is_none_or(|s| o >= s));
        let pending_n = if in_window { pending.n } else { 0 };
        let oldest = match (stored.oldest_ms, pending.oldest_ms.filter(|_| in_window)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Ok(Count {
            n: stored.n + pending_n,
            oldest_ms: oldest,
        })
    }

    fn completed(&mut self, session: &str, tool: &str, evidence: Evidence) -> Result<bool, String> {
        let store = match &self.recorder {
            Ok(r) => r.store(),
            Err(reason) => return Err(reason.clone()),
        };
        telemetry::completed(store, session, tool, evidence).map_err(|e| e.to_string())
    }

    fn grant_store(&self) -> Option<&std::path::Path> {
        self.store_path.as_deref()
    }

    fn grants(
        &mut self,
        capability: &str,
    ) -> Result<Vec<crate::domain::grants::Grant>, crate::domain::enforce::grants::Unavailable>
    {
        use crate::domain::enforce::grants::Unavailable;
        if let Some(g) = self.grants_read.get(capability) {
            return Ok(g.clone());
        }
        let now = (self.now_ms)();
        let grants = match &self.recorder {
            Ok(r) => crate::store::grants::candidates(r.store().conn_ref(), capability, now)
                .map_err(|e| Unavailable::Store(r.store().err(e).to_string()))?,
            Err(reason) => return Err(Unavailable::Store(reason.clone())),
        };
        self.grants_read
            .insert(capability.to_string(), grants.clone());
        Ok(grants)
    }

    fn grant_checked(&mut self, check: crate::domain::enforce::grants::GrantCheck) {
        self.grant_check = Some(check);
    }
}

impl Sink for TelemetrySink {
    fn facts(&mut self) -> &mut dyn Facts {
        self
    }

    fn record(&mut self, decision: &Decision<'_>, latency_us: u64) {
        let grant_check = self.grant_check.take();
        if self.recorder.is_err() {
            return;
        }
        let row = decision_row(decision, &self.context, (self.now_ms)(), latency_us);
        if self.counting {
            self.count_pending(&row);
        }
        let event = grant_check.and_then(|c| grant_event(c, decision, &row));
        if let Ok(recorder) = &mut self.recorder {
            recorder.push(row);
            if let Some(e) = event {
                recorder.push_grant_event(e);
            }
        }
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        self.pending.clear();
        self.read.clear();
        self.grants_read.clear();
        match &mut self.recorder {
            Ok(recorder) => recorder
                .commit()
                .map(|_| ())
                .map_err(|e| SinkError(e.to_string())),
            Err(reason) => Err(SinkError(reason.clone())),
        }
    }
}

/// The audit event for a decision's grant check: `used` when the call went through (a later
/// check may still have refused it: then the grant was not used), `denied` when the grant
/// check refused it.
fn grant_event(
    check: crate::domain::enforce::grants::GrantCheck,
    decision: &Decision<'_>,
    row: &DecisionRow,
) -> Option<crate::store::grants::GrantEvent> {
    use crate::domain::enforce::grants::GrantCheck;
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
    Some(crate::store::grants::GrantEvent {
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
    use crate::domain::policy::Policy;
    use crate::jobs::gate::{Options, Verdict, decide};

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
}
