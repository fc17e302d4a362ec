//! The JSON `evaluate --format json` and `tools health --format json` share (docs/evaluate.md, "evaluate --format json, key by key"),
//! documented key by key in `docs/evaluate.md`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::errors;
use super::recommend::Recommendation;
use super::tally::Tally;
use super::{ProposedAlias, Tallies, round2};
use crate::policy::thresholds::Thresholds;

/// At most this many error clusters are shown per tool.
pub const TOP_ERRORS: usize = 5;

/// A tool's tally summed over its methods.
pub fn tool_total(methods: &BTreeMap<String, Tally>) -> Tally {
    let mut total = Tally::default();
    for m in methods.values() {
        total.merge(m);
    }
    total
}

/// The `health` object of docs/evaluate.md ("evaluate --format json, key by key"), with the
/// counts behind it.
pub fn health_json(m: &Tally, t: &Thresholds) -> Value {
    let share = |n: u64| {
        if m.calls == 0 {
            Value::Null
        } else {
            json!(round2(n as f64 / m.calls as f64))
        }
    };
    json!({
        "calls": m.calls_seen(),
        "calls_from": if m.calls >= m.outcomes() { "gate" } else { "outcomes" },
        "gate_calls": m.calls,
        "wrong_tool_boundary_recent": m.boundary_recent,
        "low_utility_recent": m.low_utility_recent,
        "user_corrections": m.user_corrections(),
        "utility": m.utility(),
        "cohesion_warning": m.cohesion_warning(t),
        "boundary_axes_top": m.axes_top(3),
        "pass_share": share(m.passed),
        "corrected_share": share(m.corrected),
        "rejected_share": share(m.rejected),
        "wrong_tool_boundary": m.boundary,
        "low_utility": m.low_utility,
        "explicit_corrections": m.explicit_corrections,
        "reasks": m.reask_corrections,
        "phrase_hints": m.phrase_hints,
        "outcomes": {"ok": m.outcomes_ok, "error": m.outcomes_error, "by_type": m.errors},
        "failures": m.failures,
        "extrinsic_failures": m.extrinsic_failures,
        "rejections": m.rejections,
        "corrections": m.corrections,
        "boundary_axes": m.axes_ranked().into_iter().map(|(a, w)| (a, json!(round2(w)))).collect::<Map<_, _>>(),
        "rejected_arguments": m.arg_faults,
        "failure_rate": m.failure_rate(),
        "top_errors": top_errors_json(m),
        "degraded": m.degraded(t),
        "last_seen": m.last_ms.map(crate::events::format_time),
    })
}

/// The per-tool object of docs/evaluate.md's JSON report: `{"tool": {"methods": [...], "health": {...}}}`,
/// with each method's own health under `by_method`.
pub fn tools_json(tallies: &Tallies, t: &Thresholds) -> Value {
    let mut tools = Map::new();
    for (tool, methods) in tallies {
        let names: Vec<&str> = methods
            .keys()
            .filter(|m| !m.is_empty())
            .map(String::as_str)
            .collect();
        let by_method: Map<String, Value> = methods
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .map(|(m, tally)| (m.clone(), health_json(tally, t)))
            .collect();
        tools.insert(
            tool.clone(),
            json!({
                "methods": names,
                "health": health_json(&tool_total(methods), t),
                "by_method": by_method,
            }),
        );
    }
    Value::Object(tools)
}

/// `[{"category","message","count"}]`: the largest clusters of the tool's outcome errors.
fn top_errors_json(m: &Tally) -> Value {
    errors::top(&m.error_clusters, TOP_ERRORS)
        .into_iter()
        .map(|c| json!({"category": c.category, "message": c.message, "count": c.count}))
        .collect()
}

/// A recommendation as `evaluate --format json` writes it.
pub fn recommendation_json(r: &Recommendation) -> Value {
    json!({
        "id": r.id,
        "tool": r.tool,
        "method": r.method,
        "kind": r.kind,
        "confidence": r.confidence,
        "subject": r.subject,
        "severity": r.severity(),
        "summary": r.summary,
        "brief": r.brief,
        "axes": r.axes,
        "evidence": r.evidence.to_json(),
        "status": r.status,
        "muted": r.muted(),
        "first_seen": r.first_seen_ms.map(crate::events::format_time),
        "change": r.change.map(|c| c.as_str()),
    })
}

/// A proposed alias as `evaluate --format json` writes it.
pub fn alias_json(a: &ProposedAlias) -> Value {
    json!({"tool": a.tool, "from": a.from, "to": a.to, "count": a.count, "share": a.share, "sessions": a.sessions})
}
