//! `evaluate`'s report for people: what changed since the previous run first, then health,
//! errors, recommendations (most severe first) and proposed aliases; and `evaluate show`.

use std::io::Write;

use metagate::evaluate::{Evaluation, Shards};
use metagate_core::events::format_time;
use metagate_core::evolution::digest::ToolChange;
use metagate_core::evolution::errors;
use metagate_core::evolution::health;
use metagate_core::evolution::output::TOP_ERRORS;
use metagate_core::evolution::{Recommendation, Tallies};
use metagate_core::policy::Policy;
use metagate_store::runs::{StoredReask, StoredRecommendation};
use metagate_wire::display::{one_line, plural};
use serde_json::{Value, json};

/// A line of prose, broken to fit a terminal narrower than it (whole when piped).
macro_rules! prose {
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, "{}", crate::output::fit_line(&format!($($arg)*)))
    };
}

pub fn write_table(
    out: &mut dyn Write,
    e: &Evaluation,
    shards: &Shards,
    run_id: Option<i64>,
    policy: &Policy,
    all: bool,
    now_ms: i64,
) -> std::io::Result<()> {
    let t = policy.thresholds();
    let stored = match run_id {
        Some(id) => format!("run {id} stored in {}", shards.first()),
        None => "dry run: nothing stored".to_string(),
    };
    let summary = format!(
        "window {} → {} · {} events from {} · {stored}",
        format_time(e.window.from_ms),
        format_time(e.window.until_ms),
        e.aggregate.events,
        plural(shards.locations().len(), "store", "stores"),
    );
    writeln!(out, "{}", crate::output::fit_line(&summary))?;
    let file = e.policy.file.as_deref().map_or_else(
        || "the built-in policy".to_string(),
        |f| one_line(f).into_owned(),
    );
    let changed = if e.policy_changed().is_some() {
        " (changed since the previous run)"
    } else {
        ""
    };
    prose!(out, "policy {file} · {}{changed}", e.policy.hash)?;
    write_digest(out, e)?;
    if e.aggregate.events == 0 {
        return prose!(out, "no events in the window: nothing to evaluate");
    }
    let rows = health::rows(&e.aggregate.tallies, health::Sort::Name, now_ms, &t);
    writeln!(
        out,
        "{}",
        crate::output::fit(crate::tools_cmd::health_table(&rows, &t))
    )?;
    write_errors(out, &e.aggregate.tallies)?;
    let shown: Vec<&Recommendation> = e.shown(all).collect();
    writeln!(out, "{}", recommendations_table(&shown))?;
    let muted = e.recommendations.iter().filter(|r| r.muted()).count();
    if muted > 0 && !all {
        prose!(
            out,
            "{} hidden (rejected, and no more evidence since): --all shows them",
            plural(muted, "muted recommendation", "muted recommendations")
        )?;
    }
    if e.aggregate.unattributed_reasks > 0 {
        prose!(
            out,
            "{} followed several tools and pointed at none of them: not counted against any",
            plural(
                e.aggregate.unattributed_reasks as usize,
                "re-ask",
                "re-asks"
            )
        )?;
    }
    let aliases = e.patch_aliases();
    if !aliases.is_empty() {
        let mut table = crate::output::table();
        table.set_header(vec!["tool", "alias", "declared", "seen", "share"]);
        for a in &aliases {
            table.add_row(vec![
                one_line(&a.tool).into_owned(),
                one_line(&a.from).into_owned(),
                one_line(&a.to).into_owned(),
                a.count.to_string(),
                format!("{:.0}%", a.share * 100.0),
            ]);
        }
        writeln!(
            out,
            "proposed aliases (--emit-policy-patch FILE writes them as a policy fragment):\n{}",
            crate::output::fit(table)
        )?;
    }
    Ok(())
}

/// The digest: the previous run, what changed, most severe first, and the tools that moved.
fn write_digest(out: &mut dyn Write, e: &Evaluation) -> std::io::Result<()> {
    let d = &e.digest;
    let Some(previous) = &e.previous else {
        let open = e.shown(false).count();
        return prose!(
            out,
            "since the last run: no earlier run in this store, so {} new",
            plural(open, "recommendation is", "recommendations are")
        );
    };
    prose!(
        out,
        "since run {} (made {}): {} new, {} worse, {} better, {} resolved",
        previous.id,
        format_time(previous.ran_at_ms),
        d.new.len(),
        d.worse.len(),
        d.better.len(),
        d.resolved.len()
    )?;
    let by_id = |id: &String| e.recommendations.iter().find(|r| &r.id == id);
    let lines = [("new", &d.new), ("worse", &d.worse), ("better", &d.better)];
    for (label, ids) in lines {
        for r in ids.iter().filter_map(by_id) {
            let label = if r.reopened() { "reopened" } else { label };
            prose!(
                out,
                "  {label:<9} {} {:<18} {:<28} {:.2}  {}",
                r.id,
                r.kind,
                one_line(&who(&r.tool, r.method.as_deref())),
                r.confidence,
                one_line(&r.summary)
            )?;
        }
    }
    for r in &d.resolved {
        prose!(
            out,
            "  {:<9} {} {:<18} {:<28}  -    {}",
            "resolved",
            r.id,
            r.kind,
            one_line(&who(&r.tool, r.method.as_deref())),
            one_line(&r.summary)
        )?;
    }
    let moved: Vec<&ToolChange> = d.tools.iter().filter(|c| c.changed()).collect();
    for c in moved {
        prose!(out, "  tool      {}", tool_change(c))?;
    }
    Ok(())
}

/// `web_fetcher: calls 120 → 140, failure rate 0.70 → 0.75, utility 0.30 → 0.21`.
fn tool_change(c: &ToolChange) -> String {
    let num = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
    match (c.before, c.now) {
        (Some(b), Some(n)) => format!(
            "{}: calls {} → {}, failure rate {} → {}, utility {} → {}",
            one_line(&c.tool),
            b.calls,
            n.calls,
            num(b.failure_rate),
            num(n.failure_rate),
            num(b.utility),
            num(n.utility)
        ),
        (None, Some(n)) => format!(
            "{}: new, {} calls, failure rate {}, utility {}",
            one_line(&c.tool),
            n.calls,
            num(n.failure_rate),
            num(n.utility)
        ),
        (Some(_), None) => format!("{}: no calls in this window", one_line(&c.tool)),
        (None, None) => one_line(&c.tool).into_owned(),
    }
}

/// One line per tool and method with outcome errors: its largest clusters.
fn write_errors(out: &mut dyn Write, tallies: &Tallies) -> std::io::Result<()> {
    for (tool, methods) in tallies {
        for (method, tally) in methods {
            let top = errors::top(&tally.error_clusters, TOP_ERRORS);
            if top.is_empty() {
                continue;
            }
            let clusters: Vec<String> = top
                .iter()
                .map(|c| format!("{} {:?} ×{}", c.category, c.message, c.count))
                .collect();
            prose!(
                out,
                "errors {}: {}",
                one_line(&who(tool, Some(method.as_str()).filter(|m| !m.is_empty()))),
                one_line(&clusters.join("; "))
            )?;
        }
    }
    Ok(())
}

fn who(tool: &str, method: Option<&str>) -> String {
    match method {
        Some(m) => format!("{tool}.{m}"),
        None => tool.to_string(),
    }
}

fn recommendations_table(recs: &[&Recommendation]) -> String {
    if recs.is_empty() {
        return "no recommendations".to_string();
    }
    let mut table = crate::output::table();
    table.set_header(vec![
        "id",
        "change",
        "kind",
        "tool",
        "confidence",
        "status",
        "first seen",
        "summary",
    ]);
    for r in recs {
        let change = match r.change {
            Some(c) if r.reopened() => c.as_str().to_string(),
            Some(c) => c.as_str().to_string(),
            None => "-".to_string(),
        };
        table.add_row(vec![
            one_line(&r.id).into_owned(),
            change,
            r.kind.to_string(),
            one_line(&who(&r.tool, r.method.as_deref())).into_owned(),
            format!("{:.2}", r.confidence),
            one_line(&r.status).into_owned(),
            // The day is enough to tell an old problem from a new one; `show` gives the time.
            r.first_seen_ms.map_or_else(
                || "-".to_string(),
                |ms| format_time(ms).chars().take(10).collect(),
            ),
            // Whole: the table wraps it (`output::fit`) rather than cut it short.
            one_line(&r.summary).into_owned(),
        ]);
    }
    crate::output::fit(table).to_string()
}

fn reask_json(r: &StoredReask) -> Value {
    json!({
        "at": format_time(r.ts_ms),
        "session": r.session,
        "complaint": r.complaint,
        "corrects_ask": r.corrects_ask_id.map(|id| json!({"id": id, "text": r.corrected_text})),
        "blamed_outcome": r.blamed_outcome_id,
        "blamed_decision": r.blamed_decision_id,
    })
}

/// `evaluate show ID --format json`.
pub fn show_json(rec: &StoredRecommendation, reasks: &[StoredReask]) -> Value {
    json!({
        "id": rec.id,
        "tool": rec.tool,
        "method": rec.method,
        "kind": rec.kind,
        "subject": rec.subject,
        "confidence": rec.confidence,
        "summary": rec.summary,
        "brief": rec.brief,
        "axes": rec.axes,
        "evidence": rec.evidence,
        "status": rec.status,
        "first_seen": format_time(rec.first_seen_ms),
        "last_seen": format_time(rec.last_seen_ms),
        "evidence_count": rec.evidence_count,
        "rejected_at_count": rec.rejected_count,
        "last_run": rec.last_run,
        "reasks": reasks.iter().map(reask_json).collect::<Vec<_>>(),
    })
}

/// `evaluate show ID`.
pub fn write_show(
    out: &mut dyn Write,
    rec: &StoredRecommendation,
    reasks: &[StoredReask],
) -> std::io::Result<()> {
    prose!(
        out,
        "{} · {} · {} · {} · confidence {:.2}",
        rec.id,
        rec.kind,
        one_line(&who(&rec.tool, rec.method.as_deref())),
        one_line(&rec.status),
        rec.confidence
    )?;
    let run = rec
        .last_run
        .map_or_else(String::new, |id| format!(" (run {id})"));
    prose!(
        out,
        "first seen {} · last seen {}{run}",
        format_time(rec.first_seen_ms),
        format_time(rec.last_seen_ms)
    )?;
    if let Some(n) = rec.rejected_count.filter(|_| rec.status == "rejected") {
        prose!(out, "muted while its evidence stays at {n} or less")?;
    }
    prose!(out, "\n{}", one_line(&rec.summary))?;
    if !rec.axes.is_empty() {
        prose!(out, "axes: {}", one_line(&rec.axes.join(", ")))?;
    }
    let evidence = &rec.evidence;
    if let Some(counts) = evidence.get("counts").and_then(Value::as_object) {
        let counts: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        prose!(out, "counts: {}", one_line(&counts.join(", ")))?;
    }
    let texts = |key: &str| -> Vec<String> {
        evidence
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|s| one_line(s).into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let sessions = texts("sessions");
    if !sessions.is_empty() {
        prose!(out, "sessions: {}", sessions.join(", "))?;
    }
    // A recommendation stored before evidence was an object holds a list of texts.
    let examples = if evidence.is_array() {
        evidence
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|s| one_line(s).into_owned())
            .collect()
    } else {
        texts("examples")
    };
    if !examples.is_empty() {
        prose!(out, "examples:")?;
        for e in examples {
            prose!(out, "  - {e}")?;
        }
    }
    if !reasks.is_empty() && matches!(rec.kind.as_str(), "tighten_acceptance" | "demote") {
        prose!(out, "re-asks stored against it (latest first):")?;
        for r in reasks {
            let blamed = match (r.blamed_outcome_id, r.blamed_decision_id) {
                (Some(id), _) => format!("outcome {id}"),
                (None, Some(id)) => format!("decision {id}"),
                (None, None) => "-".to_string(),
            };
            prose!(
                out,
                "  - {} session {}: {:?} (corrects ask {}: {:?}; blames {blamed})",
                format_time(r.ts_ms),
                one_line(r.session.as_deref().unwrap_or("-")),
                one_line(r.complaint.as_deref().unwrap_or("")),
                r.corrects_ask_id
                    .map_or_else(|| "-".to_string(), |i| i.to_string()),
                one_line(r.corrected_text.as_deref().unwrap_or("")),
            )?;
        }
    }
    Ok(())
}
