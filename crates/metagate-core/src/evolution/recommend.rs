//! Recommendations (seed 001 phase 5): proposals to the people who build the tools, never
//! changes. Each rests on evidence a person can check (sessions, short examples, counts), has
//! a confidence that grows with that evidence and with the tool's volume ([`confidence`]), and
//! keeps its id from run to run.

use serde_json::{Map, Value, json};

use super::causes::Cause;
use super::confidence::{confidence, severity};
use super::errors;
use super::tally::{Tally, shorten, signal};
use super::{ProposedAlias, Tallies, round2};
use crate::policy::thresholds::Thresholds;

/// The kinds of recommendation (docs/evaluate.md lists them), most severe first.
pub const KINDS: [&str; 9] = [
    "change_point",
    "fix_caller",
    "demote",
    "sharpen_descriptions",
    "split_boundary",
    "tighten_acceptance",
    "review_schema",
    "deprecate_alias",
    "learn_alias",
];

/// At most this many sessions and examples back one recommendation.
pub(crate) const MAX_SESSIONS: usize = 5;
const MAX_EXAMPLES: usize = 6;

/// What a recommendation rests on, bounded: sessions to look at, short texts from the store
/// (already redacted when recorded), and the counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    pub(crate) sessions: Vec<String>,
    pub(crate) examples: Vec<String>,
    pub(crate) counts: Map<String, Value>,
    /// The sessions shown, each with its caller, time and error (latest and most typical
    /// first).
    pub(crate) samples: Vec<Value>,
}

impl Evidence {
    /// The evidence as the JSON report writes it.
    pub fn to_json(&self) -> Value {
        json!({"sessions": self.sessions, "examples": self.examples, "counts": self.counts, "samples": self.samples})
    }

    /// Keeps a short text: cut, and redacted again (texts were redacted when recorded, but a
    /// store from elsewhere may hold what this metagate would redact).
    pub(crate) fn example(&mut self, text: String) {
        let text = shorten(&text, 200);
        let text = metagate_checks::redact::redact_text(&text).unwrap_or(text);
        if self.examples.len() < MAX_EXAMPLES && !self.examples.contains(&text) {
            self.examples.push(text);
        }
    }

    pub(crate) fn count(&mut self, key: &str, value: impl Into<Value>) {
        self.counts.insert(key.to_string(), value.into());
    }
}

/// How a recommendation changed since the previous stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Not in the previous run.
    New,
    /// Rejected, and its evidence has since grown past what it was then.
    Reopened,
    /// Its confidence rose by at least [`super::digest::CHANGE_STEP`].
    Worse,
    /// Unchanged since the last run.
    Same,
    /// Its confidence fell by at least that.
    Better,
}

impl Change {
    /// The name the report writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Reopened => "reopened",
            Change::Worse => "worse",
            Change::Same => "same",
            Change::Better => "better",
        }
    }
}

/// One recommendation of evaluate, about one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    /// Its stable id, the same from run to run for the same advice.
    pub id: String,
    /// The tool it is about.
    pub tool: String,
    /// The method, if it is about one.
    pub method: Option<String>,
    /// The recommendation kind (see docs/evaluate.md).
    pub kind: &'static str,
    /// What the recommendation is about within its tool and kind (an argument, an alias pair).
    pub subject: String,
    /// How sure evaluate is, from 0 to 1.
    pub confidence: f64,
    /// How much evidence it rests on (the `n` of its confidence): a rejection is measured
    /// against it.
    pub count: f64,
    /// One line saying what to do.
    pub summary: String,
    /// One line for a prompt's `<known_tools>`.
    pub brief: String,
    /// The axes a boundary referral named.
    pub axes: Vec<String>,
    /// What it rests on.
    pub evidence: Evidence,
    /// `proposed`, `accepted` or `rejected`, as a person set it.
    pub status: String,
    /// The evidence it rested on when it was rejected.
    pub rejected_count: Option<f64>,
    /// When a run first found it (none before it is stored).
    pub first_seen_ms: Option<i64>,
    /// Since the previous stored run (none until compared).
    pub change: Option<Change>,
    /// The rate it rests on (`n / of`): a rejection is measured against it.
    pub rate: f64,
    /// The rate it rested on when it was rejected (none for one rejected before rates were
    /// kept: its count is measured instead).
    pub rejected_rate: Option<f64>,
    /// How much its rate must rise past the rejected one to reopen it (`mute_margin`).
    pub mute_margin: f64,
    /// For a change point: when the rate changed (the first hour after it).
    pub changed_at_ms: Option<i64>,
}

impl Recommendation {
    /// Confidence × the kind's weight: what orders a report.
    pub(crate) fn severity(&self) -> f64 {
        severity(self.kind, self.confidence)
    }

    /// Rejected, and its evidence has not grown past what it was then: not shown by default,
    /// not in `<known_tools>`, not in a policy patch.
    pub fn muted(&self) -> bool {
        if self.status != "rejected" {
            return false;
        }
        match self.rejected_rate {
            // Worse by the margin, and by at least a percentage point: a rate of 0 rejected
            // does not reopen at 0.1%.
            Some(r) => {
                let reopen_above = (r * (1.0 + self.mute_margin)).max(r + 0.01);
                self.rate <= reopen_above + 1e-9
            }
            None => self.rejected_count.is_none_or(|r| self.count <= r + 1e-9),
        }
    }

    /// Rejected once, with more evidence now than then: shown again.
    pub fn reopened(&self) -> bool {
        self.status == "rejected" && !self.muted()
    }
}

/// A recommendation's id: stable across runs for the same tool, method, kind and subject.
pub fn recommendation_id(tool: &str, method: Option<&str>, kind: &str, subject: &str) -> String {
    // FNV-1a, 64 bits: stable across builds and platforms (std's hasher is not).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [tool, method.unwrap_or(""), kind, subject] {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("rec_{h:016x}")
}

/// What each kind needs to make one recommendation.
pub(crate) struct Draft<'a> {
    pub(crate) tool: &'a str,
    pub(crate) method: Option<&'a str>,
    pub(crate) kind: &'static str,
    pub(crate) subject: String,
    /// Evidence among chances for it, for the confidence.
    pub(crate) n: f64,
    pub(crate) of: f64,
    pub(crate) summary: String,
    pub(crate) brief: String,
    pub(crate) axes: Vec<String>,
    pub(crate) evidence: Evidence,
}

impl Draft<'_> {
    pub(crate) fn build(self) -> Recommendation {
        let of = self.of.max(self.n);
        Recommendation {
            id: recommendation_id(self.tool, self.method, self.kind, &self.subject),
            tool: self.tool.to_string(),
            method: self.method.map(str::to_string),
            kind: self.kind,
            subject: self.subject,
            confidence: confidence(self.kind, self.n, of),
            count: round2(self.n),
            summary: self.summary,
            brief: self.brief,
            axes: self.axes,
            evidence: self.evidence,
            status: "proposed".to_string(),
            rejected_count: None,
            first_seen_ms: None,
            change: None,
            rate: if of > 0.0 { round4(self.n / of) } else { 0.0 },
            rejected_rate: None,
            mute_margin: 0.0,
            changed_at_ms: None,
        }
    }
}

/// `x` to four decimals: rates are compared with a margin, never to the last bit.
fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

pub(crate) fn method_opt(m: &str) -> Option<&str> {
    (!m.is_empty()).then_some(m)
}

pub(crate) fn named(tool: &str, method: Option<&str>) -> String {
    match method {
        Some(m) => format!("{tool}.{m}"),
        None => tool.to_string(),
    }
}

/// Every recommendation the tallies and learned aliases call for, most severe first.
pub fn recommend(
    tallies: &Tallies,
    aliases: &[ProposedAlias],
    t: &Thresholds,
) -> Vec<Recommendation> {
    let mut out = Vec::new();
    for (tool, methods) in tallies {
        let tool_calls: u64 = methods.values().map(Tally::calls_seen).sum();
        for (method, m) in methods {
            let mo = method_opt(method);
            if m.cohesion_warning(t) {
                out.push(split_boundary(tool, mo, m).build());
            }
            if passing_signals(m) >= t.tighten_min_signals {
                out.push(tighten_acceptance(tool, mo, m).build());
            }
            if m.degraded(t) {
                out.push(demote(tool, mo, m, t).build());
            }
            if methods.len() > 1
                && let Some(d) = deprecate_alias(tool, mo, m, tool_calls, t)
            {
                out.push(d.build());
            }
            for arg in m.arg_faults.keys() {
                if let Some(d) = review_schema(tool, mo, m, arg, aliases, t) {
                    out.push(d.build());
                }
            }
        }
    }
    for a in aliases {
        out.push(learn_alias(a).build());
    }
    sort(&mut out);
    out
}

/// Most severe first; then by kind, tool, method and subject, so the order is stable.
pub(crate) fn sort(recs: &mut [Recommendation]) {
    let rank = |k: &str| KINDS.iter().position(|x| *x == k).unwrap_or(KINDS.len());
    recs.sort_by(|a, b| {
        b.severity()
            .total_cmp(&a.severity())
            .then_with(|| rank(a.kind).cmp(&rank(b.kind)))
            .then_with(|| (&a.tool, &a.method, &a.subject).cmp(&(&b.tool, &b.method, &b.subject)))
    });
}

fn split_boundary<'a>(tool: &'a str, method: Option<&'a str>, m: &Tally) -> Draft<'a> {
    let who = named(tool, method);
    let axes: Vec<String> = m.axes_ranked().into_iter().map(|(a, _)| a).collect();
    let mut evidence = Evidence {
        sessions: m.sessions_of(&[signal::BOUNDARY], MAX_SESSIONS),
        ..Evidence::default()
    };
    for s in &m.shapes {
        evidence.example(format!("observed task shape: {s}"));
    }
    for s in &m.splits {
        evidence.example(format!("suggested split: {s}"));
    }
    for s in &m.evidence {
        evidence.example(format!("evidence: {s}"));
    }
    evidence.count("wrong_tool_boundary", m.boundary);
    evidence.count("weighted_referrals", round2(m.referral_weight));
    evidence.count("calls", m.calls_seen());
    let weights: Map<String, Value> = m
        .axes_ranked()
        .into_iter()
        .map(|(a, w)| (a, json!(round2(w))))
        .collect();
    evidence.count("axes", Value::Object(weights));
    let top: Vec<&str> = axes.iter().take(2).map(String::as_str).collect();
    Draft {
        tool,
        method,
        kind: "split_boundary",
        subject: String::new(),
        n: m.referral_weight,
        of: m.calls_seen() as f64,
        summary: format!(
            "{who} keeps being asked to cross its boundary along {}: consider splitting it{}",
            axes.join(", "),
            m.splits
                .iter()
                .next()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        ),
        brief: format!("split it along {}", top.join(", ")),
        axes,
        evidence,
    }
}

/// Low-utility signals that followed a result the tool passed: re-asks after a failure of its
/// own call for fixing the tool, not for tightening what it accepts.
fn passing_signals(m: &Tally) -> u64 {
    m.low_utility_signals()
        .saturating_sub(m.reasks_after_failure)
}

fn tighten_acceptance<'a>(tool: &'a str, method: Option<&'a str>, m: &Tally) -> Draft<'a> {
    let who = named(tool, method);
    let signals = passing_signals(m);
    let mut evidence = Evidence {
        sessions: m.sessions_of(
            &[signal::REASK, signal::CORRECTION, signal::LOW_UTILITY],
            MAX_SESSIONS,
        ),
        ..Evidence::default()
    };
    for (signal, label) in [
        (signal::REASK, "re-ask"),
        (signal::CORRECTION, "correction"),
        (signal::LOW_UTILITY, "low_utility"),
    ] {
        for text in m.examples_of(signal) {
            evidence.example(format!("{label}: {text}"));
        }
    }
    evidence.count("low_utility", m.low_utility);
    evidence.count("reasks", m.reask_corrections);
    evidence.count("reasks_after_failure", m.reasks_after_failure);
    evidence.count("explicit_corrections", m.explicit_corrections);
    evidence.count("phrase_hints", m.phrase_hints);
    evidence.count("calls", m.calls_seen());
    evidence.count("utility", json!(m.utility()));
    Draft {
        tool,
        method,
        kind: "tighten_acceptance",
        subject: String::new(),
        n: signals as f64,
        of: m.calls_seen() as f64,
        summary: format!(
            "{who} returns results users do not accept ({signals} low-utility signals over {} calls): tighten its acceptance criteria so a low-value result fails instead of passing",
            m.calls_seen()
        ),
        brief: "tighten its acceptance criteria: users keep rejecting its results".to_string(),
        axes: Vec::new(),
        evidence,
    }
}

fn demote<'a>(tool: &'a str, method: Option<&'a str>, m: &Tally, t: &Thresholds) -> Draft<'a> {
    let who = named(tool, method);
    let top = errors::top(&m.error_clusters, 3);
    let mut evidence = Evidence::default();
    for c in &top {
        evidence.example(format!("{} ×{}: {}", c.category, c.count, c.message));
    }
    evidence.count("failures", m.failures);
    evidence.count("successes", m.outcomes_ok);
    evidence.count("failure_rate", json!(m.failure_rate()));
    evidence.count("errors_by_type", json!(m.errors));
    evidence.count("utility", json!(m.utility()));
    let utility = m.utility().unwrap_or(0.0);
    let (n, of, summary, brief);
    if m.degraded_by_failures(t) {
        evidence.sessions = m.sessions_of(&[signal::FAILURE], MAX_SESSIONS);
        n = m.failures as f64;
        of = (m.failures + m.outcomes_ok) as f64;
        let worst = top
            .first()
            .map(|c| format!(", mostly {} \"{}\"", c.category, c.message))
            .unwrap_or_default();
        summary = format!(
            "{who} is degraded: {} failures against {} successes{worst}; rank it last, fix or regenerate it",
            m.failures, m.outcomes_ok
        );
        brief = format!("degraded: {} of {} calls failed", m.failures, of as u64);
    } else {
        evidence.sessions = m.sessions_of(
            &[signal::LOW_UTILITY, signal::REASK, signal::CORRECTION],
            MAX_SESSIONS,
        );
        evidence.count("low_utility_signals", m.low_utility_signals());
        n = m.low_utility_signals() as f64;
        of = m.calls_seen() as f64;
        summary = format!(
            "{who} is degraded: its results keep being of little use (utility {utility:.2}, {} low-utility signals); rank it last or regenerate it",
            m.low_utility_signals()
        );
        brief = format!("degraded: utility {utility:.2}");
    }
    Draft {
        tool,
        method,
        kind: "demote",
        subject: String::new(),
        n,
        of,
        summary,
        brief,
        axes: Vec::new(),
        evidence,
    }
}

fn deprecate_alias<'a>(
    tool: &'a str,
    method: Option<&'a str>,
    m: &Tally,
    tool_calls: u64,
    t: &Thresholds,
) -> Option<Draft<'a>> {
    let method_name = method?;
    let used = m.calls_seen();
    let problems = m.rejected + m.failures;
    let share = if tool_calls == 0 {
        0.0
    } else {
        used as f64 / tool_calls as f64
    };
    let rate = if used == 0 {
        0.0
    } else {
        problems as f64 / used as f64
    };
    if used < t.alias_min_calls || share > t.alias_max_share || rate < t.alias_problem_rate {
        return None;
    }
    let who = named(tool, method);
    let mut evidence = Evidence {
        sessions: m.sessions_of(&[signal::REJECTED, signal::FAILURE], MAX_SESSIONS),
        ..Evidence::default()
    };
    evidence.example(format!(
        "{used} of {tool_calls} calls to {tool} ({:.0}%) used {method_name}",
        share * 100.0
    ));
    evidence.example(format!(
        "{problems} of them rejected or failed ({:.0}%)",
        rate * 100.0
    ));
    evidence.count("calls", used);
    evidence.count("tool_calls", tool_calls);
    evidence.count("rejected", m.rejected);
    evidence.count("failures", m.failures);
    Some(Draft {
        tool,
        method,
        kind: "deprecate_alias",
        subject: String::new(),
        n: problems as f64,
        of: used as f64,
        summary: format!(
            "{who} is a rarely used method name that mostly fails: deprecate it in favour of the tool's main method"
        ),
        brief: format!("deprecate the method name {method_name}"),
        axes: Vec::new(),
        evidence,
    })
}

fn review_schema<'a>(
    tool: &'a str,
    method: Option<&'a str>,
    m: &Tally,
    arg: &'a str,
    aliases: &[ProposedAlias],
    t: &Thresholds,
) -> Option<Draft<'a>> {
    let by_cause = m.arg_faults.get(arg)?;
    // Rejections for a missing argument that held a name a learned alias maps to it: the
    // alias explains them, and the schema is not to blame.
    let explained: u64 = aliases
        .iter()
        .filter(|a| a.tool == tool && a.to == arg)
        .filter_map(|a| m.explained.get(arg).and_then(|names| names.get(&a.from)))
        .sum();
    let mut counts: Vec<(Cause, u64)> = Cause::ALL
        .iter()
        .filter_map(|c| {
            let n = by_cause.get(c.as_str()).copied().unwrap_or(0);
            let n = if *c == Cause::Missing {
                n.saturating_sub(explained)
            } else {
                n
            };
            (n > 0).then_some((*c, n))
        })
        .collect();
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    if total < t.review_schema_min_missing {
        return None;
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let who = named(tool, method);
    let causes: Vec<String> = counts
        .iter()
        .map(|(c, n)| format!("{n} {}", c.as_str().replace('_', " ")))
        .collect();
    let suggestions: Vec<&str> = counts.iter().map(|(c, _)| c.suggestion()).collect();
    let mut evidence = Evidence {
        sessions: m.sessions_of(&[&signal::arg(arg)], MAX_SESSIONS),
        ..Evidence::default()
    };
    for (cause, _) in &counts {
        for text in m.examples_of(&signal::arg_cause(arg, cause.as_str())) {
            evidence.example(format!("{}: {text}", cause.as_str()));
        }
    }
    for (cause, n) in &counts {
        evidence.count(cause.as_str(), *n);
    }
    if explained > 0 {
        evidence.count("explained_by_learned_alias", explained);
    }
    evidence.count("gate_calls", m.calls);
    evidence.count("rejected", m.rejected);
    Some(Draft {
        tool,
        method,
        kind: "review_schema",
        subject: arg.to_string(),
        n: total as f64,
        of: m.calls as f64,
        summary: format!(
            "the gate keeps rejecting {who}'s argument {arg:?} ({} of {} calls: {}): {}",
            total,
            m.calls,
            causes.join(", "),
            suggestions.join("; ")
        ),
        brief: format!(
            "review the schema of {arg:?} ({})",
            counts[0].0.as_str().replace('_', " ")
        ),
        axes: Vec::new(),
        evidence,
    })
}

fn learn_alias(a: &ProposedAlias) -> Draft<'_> {
    let total = if a.share > 0.0 {
        (a.count as f64 / a.share).round()
    } else {
        a.count as f64
    };
    let mut evidence = Evidence {
        sessions: a.sessions.iter().take(MAX_SESSIONS).cloned().collect(),
        ..Evidence::default()
    };
    evidence.example(format!(
        "{} times the same session's next call passed with {:?} = the value given as {:?} ({:.0}% of the pairs for {:?})",
        a.count,
        a.to,
        a.from,
        a.share * 100.0,
        a.from
    ));
    evidence.count("pairs", a.count);
    evidence.count("share", a.share);
    Draft {
        tool: &a.tool,
        method: None,
        kind: "learn_alias",
        subject: alias_subject(a),
        n: a.count as f64,
        of: total,
        summary: format!(
            "calls to {} that used {:?} were retried with {:?} holding the same value: add the alias {} = {:?}",
            a.tool, a.from, a.to, a.from, a.to
        ),
        brief: format!("alias {} → {}", a.from, a.to),
        axes: Vec::new(),
        evidence,
    }
}

/// The subject of a `learn_alias` recommendation: `from=to`.
pub fn alias_subject(a: &ProposedAlias) -> String {
    format!("{}={}", a.from, a.to)
}
