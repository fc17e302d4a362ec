//! The findings of a run: change points of each tool's (and caller's) rates, blame by caller,
//! overlapping tools, and the rule-based recommendations judged over each tool's current
//! regime (what happened since its last change), so a fix resolves its findings the night it
//! shows. Every finding's evidence shows the latest, most typical sessions with their caller
//! and time.

use serde_json::json;

use super::changes::{Family, Shift, fisher, last_shift};
use super::confidence::confidence;
use super::errors;
use super::overlap::Overlaps;
use super::recommend::{
    Draft, Evidence, MAX_SESSIONS, Recommendation, method_opt, named, recommend, sort,
};
use super::series::{self, Hours, at, calls_of};
use super::tally::Tally;
use super::{Aggregate, ProposedAlias, Tallies, Window, round2};
use crate::events::format_time;
use crate::policy::thresholds::Thresholds;

/// The rates change points are looked for in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// The tool's own failures among its judged outcomes (failures and successes).
    Failure,
    /// Low-utility signals (referrals, re-asks, corrections) among its calls.
    Reask,
}

impl Metric {
    const ALL: [Metric; 2] = [Metric::Failure, Metric::Reask];

    /// The name a finding's subject and the report use.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Failure => "failure_rate",
            Metric::Reask => "reask_rate",
        }
    }

    /// (hour, events, trials) of `hours`, in time order, hours without trials left out.
    pub fn points(self, hours: &Hours) -> Vec<(i64, u64, u64)> {
        hours
            .iter()
            .filter_map(|(h, b)| {
                let (k, n) = match self {
                    Metric::Failure => (
                        u64::from(b[at::FAILURES]),
                        u64::from(b[at::FAILURES]) + u64::from(b[at::OK]),
                    ),
                    Metric::Reask => (u64::from(b[at::SIGNALS]), calls_of(b)),
                };
                (n > 0).then_some((*h, k.min(n), n))
            })
            .collect()
    }
}

/// The caller a tool's failures come from, when one explains them.
struct Culprit {
    caller: String,
    failures: u64,
    judged: u64,
    others: [u64; 2],
}

/// Everything a run recommends, most severe first.
pub fn assess(
    agg: &Aggregate,
    aliases: &[ProposedAlias],
    window: &Window,
    t: &Thresholds,
) -> Vec<Recommendation> {
    let series = agg
        .tallies
        .values()
        .flat_map(|methods| methods.values())
        .map(|m| Metric::ALL.len() + m.callers.len())
        .sum();
    let hours = (window.until_ms - window.from_ms).div_euclid(super::tally::HOUR_MS) + 1;
    let family = Family::new(t.false_alarm_rate, series, hours);
    let mut regimes: Tallies = Tallies::new();
    let mut out: Vec<Recommendation> = Vec::new();
    let mut blamed: Vec<(String, String)> = Vec::new();
    for (tool, methods) in &agg.tallies {
        for (method, m) in methods {
            let mo = method_opt(method);
            let mut regime_from = None;
            for metric in Metric::ALL {
                let Some(shift) = last_shift(&metric.points(&m.hours), &family) else {
                    continue;
                };
                regime_from = regime_from.max(Some(shift.at_ms));
                if !shift.worse {
                    continue;
                }
                let culprit = (metric == Metric::Failure)
                    .then(|| culprit(m, Some(shift.at_ms), &family, t))
                    .flatten();
                match culprit {
                    Some(c) => {
                        blamed.push((tool.clone(), method.clone()));
                        out.push(fix_caller(tool, mo, m, &c, Some(&shift), &family));
                    }
                    None => out.push(change_point(tool, mo, m, metric, &shift, &family)),
                }
            }
            let regime = match regime_from {
                Some(from) => since(m, from),
                None => m.clone(),
            };
            // A caller failing on its own, whatever the tool's rate: the change that brought
            // it may have left the window, the caller is still to blame.
            if !blamed.contains(&(tool.clone(), method.clone()))
                && let Some(c) = culprit(&regime, None, &family, t)
                && c.failures >= t.degraded_min_failures
                && c.failures as f64 > t.degraded_failure_rate * c.judged as f64
            {
                blamed.push((tool.clone(), method.clone()));
                out.push(fix_caller(tool, mo, &regime, &c, None, &family));
            }
            regimes
                .entry(tool.clone())
                .or_default()
                .insert(method.clone(), regime);
        }
    }
    let overlaps = &agg.overlaps.found;
    let rule_based = recommend(&regimes, aliases, t);
    let tightened: Vec<(String, Option<String>)> = rule_based
        .iter()
        .filter(|r| r.kind == "tighten_acceptance")
        .map(|r| (r.tool.clone(), r.method.clone()))
        .collect();
    for rec in rule_based {
        let key = (rec.tool.clone(), rec.method.clone().unwrap_or_default());
        let m = &regimes[&rec.tool][&key.1];
        let keep = match rec.kind {
            // The caller is to blame, not the tool.
            "demote" if m.degraded_by_failures(t) => !blamed.contains(&key),
            // Results that pass and users re-ask: tightening what the tool accepts is the
            // remedy, said once; demoting it for the same re-asks would page twice.
            "demote" => !tightened.contains(&(rec.tool.clone(), rec.method.clone())),
            // The model picked the wrong one of two tools: not this tool's boundary to split.
            "split_boundary" => overlap_share(overlaps, &rec.tool, m) < 0.5,
            _ => true,
        };
        if keep {
            out.push(with_samples(rec, m));
        }
    }
    out.extend(sharpen(overlaps, &agg.tallies));
    for r in &mut out {
        r.mute_margin = t.mute_margin;
    }
    sort(&mut out);
    out
}

/// `m` counted from `from_ms` on: what its rule-based recommendations judge.
fn since(m: &Tally, from_ms: i64) -> Tally {
    let mut r = m.clone();
    let sum = |which: usize| -> u64 {
        m.hours
            .range(from_ms..)
            .map(|(_, b)| u64::from(b[which]))
            .sum()
    };
    let (ok, failures, outcomes) = (sum(at::OK), sum(at::FAILURES), sum(at::OUTCOMES));
    let signals = sum(at::SIGNALS);
    r.calls = sum(at::DECISIONS);
    r.outcomes_ok = ok;
    r.outcomes_error = outcomes.saturating_sub(ok);
    r.failures = failures;
    // The signals since then, split as the window's were.
    let all = m.low_utility_signals().max(1) as f64;
    let share = |n: u64| ((n as f64 / all) * signals as f64).round() as u64;
    r.low_utility = share(m.low_utility);
    r.explicit_corrections = share(m.explicit_corrections);
    r.reask_corrections = signals.saturating_sub(r.low_utility + r.explicit_corrections);
    r.reasks_after_failure = share(m.reasks_after_failure).min(r.reask_corrections);
    for c in r.callers.values_mut() {
        c.totals = [0; 5];
        for (_, b) in c.hours.range(from_ms..) {
            for (t, v) in c.totals.iter_mut().zip(b) {
                *t += u64::from(*v);
            }
        }
    }
    r.samples.retain(|s| s.ts_ms >= from_ms);
    r
}

/// The caller that explains `m`'s failures (since `from_ms`, else over the window), if one
/// does: it holds at least `caller_share` of them, fails significantly more often than the
/// other callers, and the others' rate alone shows no change.
fn culprit(m: &Tally, from_ms: Option<i64>, family: &Family, t: &Thresholds) -> Option<Culprit> {
    let counts = |c: &series::CallerTally| -> [u64; 2] {
        match from_ms {
            Some(from) => c.hours.range(from..).fold([0, 0], |acc, (_, b)| {
                [
                    acc[0] + u64::from(b[at::FAILURES]),
                    acc[1] + u64::from(b[at::FAILURES]) + u64::from(b[at::OK]),
                ]
            }),
            None => [
                c.totals[at::FAILURES],
                c.totals[at::FAILURES] + c.totals[at::OK],
            ],
        }
    };
    let all: Vec<(&String, [u64; 2])> = m
        .callers
        .iter()
        .filter(|(name, _)| !name.is_empty() && name.as_str() != series::OTHER_CALLERS)
        .map(|(name, c)| (name, counts(c)))
        .collect();
    let total: u64 = m.callers.values().map(|c| counts(c)[0]).sum();
    let judged: u64 = m.callers.values().map(|c| counts(c)[1]).sum();
    let (name, top) = all
        .iter()
        .max_by(|a, b| a.1[0].cmp(&b.1[0]).then_with(|| b.0.cmp(a.0)))?;
    if total == 0 || (top[0] as f64) < t.caller_share * total as f64 {
        return None;
    }
    let others = [total - top[0], judged - top[1]];
    // Its rate against everyone else's, over the same period.
    if !family.significant(fisher(top[0], top[1], others[0], others[1], true)) {
        return None;
    }
    // Without it, the tool shows no change of its own.
    if from_ms.is_some() {
        let mut rest: Hours = Hours::new();
        for (n, c) in &m.callers {
            if n != *name {
                series::merge_hours(&mut rest, &c.hours);
            }
        }
        if last_shift(&Metric::Failure.points(&rest), family).is_some_and(|s| s.worse) {
            return None;
        }
    }
    Some(Culprit {
        caller: (*name).clone(),
        failures: top[0],
        judged: top[1],
        others,
    })
}

fn pct(x: f64) -> String {
    let p = x * 100.0;
    if p > 0.0 && p < 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

/// `14:00 on 2026-11-10`.
fn when(ms: i64) -> String {
    let t = format_time(ms);
    format!("{} on {}", &t[11..16], &t[..10])
}

/// The sessions of `m`'s latest failures, most typical first, into `e`.
fn add_samples(e: &mut Evidence, m: &Tally, caller: Option<&str>) {
    let error = series::dominant(&cluster_counts(m, caller)).map(str::to_string);
    let picked = series::typical(&m.samples, error.as_deref(), caller, MAX_SESSIONS);
    if picked.is_empty() {
        return;
    }
    e.sessions = picked.iter().map(|s| s.session.clone()).collect();
    e.samples = picked
        .iter()
        .map(|s| {
            json!({
                "session": s.session,
                "caller": s.caller,
                "at": format_time(s.ts_ms),
                "error": errors::describe(&s.cluster),
            })
        })
        .collect();
}

/// The error clusters of the failures kept since `from_ms` (all of the window's when none
/// were kept).
fn clusters_since(m: &Tally, from_ms: i64) -> std::collections::BTreeMap<String, u64> {
    let mut counts = std::collections::BTreeMap::new();
    for s in m.samples.iter().filter(|s| s.ts_ms >= from_ms) {
        *counts.entry(s.cluster.clone()).or_default() += 1;
    }
    if counts.is_empty() {
        m.error_clusters.clone()
    } else {
        counts
    }
}

/// Error clusters of one caller's failures, or of all of them.
fn cluster_counts(m: &Tally, caller: Option<&str>) -> std::collections::BTreeMap<String, u64> {
    match caller.and_then(|c| m.callers.get(c)) {
        Some(c) => c.errors.clone(),
        None => m.error_clusters.clone(),
    }
}

/// A rule-based recommendation about failures, its sessions the latest and most typical.
fn with_samples(mut rec: Recommendation, m: &Tally) -> Recommendation {
    if matches!(rec.kind, "demote" | "deprecate_alias") && !m.samples.is_empty() {
        add_samples(&mut rec.evidence, m, dominant_caller(m));
    }
    rec
}

/// The caller with the most failures, when there is one.
fn dominant_caller(m: &Tally) -> Option<&str> {
    m.callers
        .iter()
        .filter(|(n, c)| !n.is_empty() && c.totals[at::FAILURES] > 0)
        .max_by(|a, b| {
            a.1.totals[at::FAILURES]
                .cmp(&b.1.totals[at::FAILURES])
                .then_with(|| b.0.cmp(a.0))
        })
        .map(|(n, _)| n.as_str())
}

fn change_point(
    tool: &str,
    method: Option<&str>,
    m: &Tally,
    metric: Metric,
    s: &Shift,
    family: &Family,
) -> Recommendation {
    let who = named(tool, method);
    let (before, after) = (s.rate_before(), s.rate_after());
    let mut evidence = Evidence::default();
    let top = errors::top(&clusters_since(m, s.at_ms), 1);
    let remedy = match metric {
        Metric::Failure => {
            let worst = top
                .first()
                .map(|c| format!(", mostly {} \"{}\"", c.category, c.message))
                .unwrap_or_default();
            add_samples(&mut evidence, m, None);
            format!(
                "{worst}: fix the tool (or roll back what was deployed then); retry it only if the errors pass"
            )
        }
        Metric::Reask => {
            if m.reasks_after_failure * 2 > m.reask_corrections {
                ": its results fail before users re-ask: fix the tool".to_string()
            } else {
                ": its results pass but users re-ask: tighten what it accepts as a result"
                    .to_string()
            }
        }
    };
    evidence.example(format!(
        "{} {} → {} from {}",
        metric.as_str(),
        pct(before),
        pct(after),
        when(s.at_ms)
    ));
    for c in &top {
        evidence.example(format!("{} ×{}: {}", c.category, c.count, c.message));
    }
    evidence.count("metric", metric.as_str());
    evidence.count("changed_at", format_time(s.at_ms));
    evidence.count(
        "before",
        json!({"events": s.before[0], "trials": s.before[1], "rate": round2(before)}),
    );
    evidence.count(
        "after",
        json!({"events": s.after[0], "trials": s.after[1], "rate": round2(after)}),
    );
    evidence.count("p_value", json!(s.p));
    evidence.count("tests", json!(family.tests));
    let mut rec = Draft {
        tool,
        method,
        kind: "change_point",
        subject: metric.as_str().to_string(),
        n: s.after[0] as f64,
        of: s.after[1] as f64,
        summary: format!(
            "{who}: {} {} → {} from {}{remedy}",
            metric.as_str().replace('_', " "),
            pct(before),
            pct(after),
            when(s.at_ms)
        ),
        brief: format!(
            "{} {} → {} since {}",
            metric.as_str().replace('_', " "),
            pct(before),
            pct(after),
            &format_time(s.at_ms)[..10]
        ),
        axes: Vec::new(),
        evidence,
    }
    .build();
    rec.confidence = round2(family.confidence(s.p));
    rec.changed_at_ms = Some(s.at_ms);
    rec
}

fn fix_caller(
    tool: &str,
    method: Option<&str>,
    m: &Tally,
    c: &Culprit,
    s: Option<&Shift>,
    family: &Family,
) -> Recommendation {
    let who = named(tool, method);
    let rate = c.failures as f64 / c.judged.max(1) as f64;
    let others = c.others[0] as f64 / c.others[1].max(1) as f64;
    let mut evidence = Evidence::default();
    add_samples(&mut evidence, m, Some(&c.caller));
    let error = m
        .callers
        .get(&c.caller)
        .and_then(|t| t.dominant_error())
        .map(errors::describe);
    if let Some(e) = &error {
        evidence.example(format!("{}'s errors: mostly {e}", c.caller));
    }
    evidence.example(format!(
        "{} of {} calls from {} failed ({}); the other callers: {} of {} ({})",
        c.failures,
        c.judged,
        c.caller,
        pct(rate),
        c.others[0],
        c.others[1],
        pct(others)
    ));
    evidence.count("caller", c.caller.as_str());
    evidence.count("failures", c.failures);
    evidence.count("judged", c.judged);
    evidence.count("others_failures", c.others[0]);
    evidence.count("others_judged", c.others[1]);
    let since = s
        .map(|s| {
            evidence.count("changed_at", format_time(s.at_ms));
            format!(" from {}", when(s.at_ms))
        })
        .unwrap_or_default();
    let mut rec = Draft {
        tool,
        method,
        kind: "fix_caller",
        subject: c.caller.clone(),
        n: c.failures as f64,
        of: c.judged as f64,
        summary: format!(
            "{who}'s failures come from one caller, {}{since}: {} of its calls fail against {} of the others'{}; fix the caller, not the tool",
            c.caller,
            pct(rate),
            pct(others),
            error.map(|e| format!(" (mostly {e})")).unwrap_or_default()
        ),
        brief: format!("caller {} fails ({}); the tool is fine", c.caller, pct(rate)),
        axes: Vec::new(),
        evidence,
    }
    .build();
    if let Some(s) = s {
        rec.confidence = round2(family.confidence(s.p));
        rec.changed_at_ms = Some(s.at_ms);
    } else {
        rec.confidence = confidence("fix_caller", c.failures as f64, c.judged as f64);
    }
    rec
}

/// The share of `tool`'s referrals another tool's success followed.
fn overlap_share(overlaps: &Overlaps, tool: &str, m: &Tally) -> f64 {
    let pairs: u64 = overlaps
        .iter()
        .filter(|((from, _), _)| from == tool)
        .map(|(_, c)| c.pairs)
        .sum();
    if m.boundary == 0 {
        0.0
    } else {
        pairs as f64 / m.boundary as f64
    }
}

/// `sharpen_descriptions` for each pair of tools the model confuses.
fn sharpen(overlaps: &Overlaps, tallies: &Tallies) -> Vec<Recommendation> {
    let mut out = Vec::new();
    for ((from, to), c) in overlaps {
        let Some(methods) = tallies.get(from) else {
            continue;
        };
        let calls: u64 = methods.values().map(Tally::calls_seen).sum();
        let referrals: u64 = methods.values().map(|m| m.boundary).sum();
        if c.pairs < 3 || (c.pairs as f64) < 0.5 * referrals as f64 {
            continue;
        }
        let mut evidence = Evidence {
            sessions: c.sessions.iter().cloned().collect(),
            ..Evidence::default()
        };
        evidence.example(format!(
            "{} times {from} referred the task away and the same session's next call, to {to}, succeeded",
            c.pairs
        ));
        evidence.count("pairs", c.pairs);
        evidence.count("referrals", referrals);
        evidence.count("calls", calls);
        evidence.count("other_tool", to.as_str());
        out.push(
            Draft {
                tool: from,
                method: None,
                kind: "sharpen_descriptions",
                subject: to.clone(),
                n: c.pairs as f64,
                of: calls as f64,
                summary: format!(
                    "the model keeps calling {from} for tasks {to} does ({} of {calls} calls): sharpen both descriptions so each says what it is not for, or merge the two tools",
                    c.pairs
                ),
                brief: format!("overlaps {to}: sharpen both descriptions"),
                axes: Vec::new(),
                evidence,
            }
            .build(),
        );
    }
    out
}
