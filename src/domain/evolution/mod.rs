//! The out-of-band evolution pass (seed 001, phases 2–6): per tool and method, counts of
//! calls, corrections, rejections and outcomes; user corrections (explicit, and re-asks
//! detected deterministically); a recency-weighted utility score; cohesion of boundary
//! referrals; and recommendations, which are proposals, never changes.
//!
//! This module is pure: rows and thresholds in, results out. [`scan`] streams the rows out of
//! SQLite, [`results`] stores runs and reads them back, [`health`] renders what `tools health`
//! shows, [`synth`] generates stores for demos and benchmarks.

pub mod health;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::domain::error::Category;
use crate::domain::policy::thresholds::Thresholds;
use crate::domain::policy::{Policy, Tool, fold_name, toml_key, toml_string};

/// At most this many task shapes, suggested splits and evidence texts are kept per method.
const SAMPLES: usize = 5;

/// The window a run covers: `[from_ms, until_ms)`, and where its recent part starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from_ms: i64,
    pub until_ms: i64,
    pub recent_from_ms: i64,
    /// What recency weights count from.
    pub now_ms: i64,
}

impl Window {
    pub fn new(from_ms: i64, until_ms: i64, now_ms: i64, t: &Thresholds) -> Window {
        Window {
            from_ms,
            until_ms,
            recent_from_ms: until_ms.saturating_sub(t.recent_ms).max(from_ms),
            now_ms,
        }
    }

    pub fn contains(&self, ts_ms: i64) -> bool {
        ts_ms >= self.from_ms && ts_ms < self.until_ms
    }

    pub fn is_recent(&self, ts_ms: i64) -> bool {
        ts_ms >= self.recent_from_ms
    }
}

/// Reads a `--since`/`--until` value: a duration back from `now` (`7d`, `24h`, `30m`, `90s`,
/// `2w`), an RFC 3339 time, or a date (`2026-11-25`: its midnight, UTC).
pub fn parse_moment(text: &str, now_ms: i64) -> Result<i64, String> {
    let t = text.trim();
    let is_date = t.len() == 10
        && t.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if is_date {
        return crate::domain::events::parse_time(&format!("{t}T00:00:00Z"))
            .map_err(|e| format!("{t:?} is not a date: {e}"));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    if !digits.is_empty() {
        let unit_ms: Option<i64> = match unit {
            "s" => Some(1000),
            "m" => Some(60_000),
            "h" => Some(3_600_000),
            "d" => Some(86_400_000),
            "w" => Some(7 * 86_400_000),
            _ => None,
        };
        if let Some(unit_ms) = unit_ms {
            let n: i64 = digits
                .parse()
                .map_err(|_| format!("{t:?}: the number is too large"))?;
            // Nothing is recorded before the earliest time metagate reads (events may well
            // predate 1970): a longer look back means all of it, still a time that can be shown.
            let earliest = jiff::Timestamp::MIN.as_millisecond();
            return Ok(now_ms
                .saturating_sub(n.saturating_mul(unit_ms))
                .max(earliest));
        }
    }
    crate::domain::events::parse_time(t).map_err(|e| {
        format!(
            "{t:?} is neither a duration (7d, 24h, 30m, 90s, 2w), a date (2026-11-25) nor an RFC 3339 time: {e}"
        )
    })
}

/// Whether an outcome's error type is the world's fault rather than the tool's: these never
/// count against utility or towards demotion.
pub fn is_extrinsic(error_type: &str) -> bool {
    matches!(
        error_type.parse::<Category>(),
        Ok(Category::Timeout
            | Category::NetworkError
            | Category::RateLimited
            | Category::ServerError
            | Category::Cancelled)
    )
}

/// Whether an outcome's error type says nothing about the tool: the model's own mistakes and
/// the operator's policy.
fn is_not_the_tools(error_type: &str) -> bool {
    matches!(
        error_type.parse::<Category>(),
        Ok(Category::InvalidParameters
            | Category::TypeMismatch
            | Category::MalformedCall
            | Category::PolicyBlocked
            | Category::ConfirmationRequired
            | Category::ToolNotFound)
    )
}

/// How much one piece of evidence `age_ms` old still weighs.
pub fn recency_weight(age_ms: i64, half_life_ms: i64) -> f64 {
    if half_life_ms <= 0 {
        return 1.0;
    }
    0.5f64.powf(age_ms.max(0) as f64 / half_life_ms as f64)
}

/// Everything counted for one tool and method.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Tally {
    pub calls: u64,
    pub passed: u64,
    pub corrected: u64,
    pub rejected: u64,
    pub rejections: BTreeMap<String, u64>,
    pub corrections: BTreeMap<String, u64>,
    pub outcomes_ok: u64,
    pub outcomes_error: u64,
    pub errors: BTreeMap<String, u64>,
    /// Errors that count against the tool (not extrinsic, not the model's or the policy's).
    pub failures: u64,
    pub extrinsic_failures: u64,
    pub boundary: u64,
    pub boundary_recent: u64,
    pub low_utility: u64,
    pub low_utility_recent: u64,
    /// Referrals weighted: with evidence 1, without ½.
    pub referral_weight: f64,
    /// Normalized axis → weighted referrals naming it.
    pub axes: BTreeMap<String, f64>,
    pub shapes: BTreeSet<String>,
    pub splits: BTreeSet<String>,
    pub evidence: BTreeSet<String>,
    pub explicit_corrections: u64,
    pub reask_corrections: u64,
    pub phrase_hints: u64,
    /// Recency-weighted evidence for and against utility.
    pub good_w: f64,
    pub bad_w: f64,
    /// Required argument → calls rejected without it.
    pub missing: BTreeMap<String, u64>,
    pub last_ms: Option<i64>,
}

impl Tally {
    /// Calls seen: the gate's decisions, or the outcomes recorded when the gate saw fewer
    /// (tools called without going through the gate).
    pub fn calls_seen(&self) -> u64 {
        self.calls.max(self.outcomes())
    }

    pub fn user_corrections(&self) -> u64 {
        self.explicit_corrections + self.reask_corrections
    }

    /// Utility in [0, 1]; `None` without any outcome or correction to judge by.
    pub fn utility(&self) -> Option<f64> {
        let total = self.good_w + self.bad_w;
        (total > 0.0).then(|| round2(self.good_w / total))
    }

    fn seen(&mut self, ts_ms: i64) {
        self.last_ms = Some(self.last_ms.map_or(ts_ms, |l| l.max(ts_ms)));
    }

    /// Adds `n` gate decisions with one verdict, the last made at `ts_ms`.
    pub fn add_decisions(&mut self, n: u64, ts_ms: i64, verdict: &str, category: Option<&str>) {
        if n == 0 {
            return;
        }
        self.calls += n;
        match verdict {
            "pass" => self.passed += n,
            "corrected" => self.corrected += n,
            _ => {
                self.rejected += n;
                let category = category.unwrap_or("unknown");
                match self.rejections.get_mut(category) {
                    Some(c) => *c += n,
                    None => {
                        self.rejections.insert(category.to_string(), n);
                    }
                }
            }
        }
        self.seen(ts_ms);
    }

    /// Adds a recorded outcome.
    pub fn add_outcome(&mut self, o: &OutcomeRow<'_>, w: &Window, t: &Thresholds) {
        let weight = recency_weight(w.now_ms - o.ts_ms, t.half_life_ms);
        let recent = w.is_recent(o.ts_ms);
        self.seen(o.ts_ms);
        if o.ok {
            self.outcomes_ok += 1;
            self.good_w += weight;
            return;
        }
        self.outcomes_error += 1;
        let kind = o.error_type.unwrap_or("unknown");
        *self.errors.entry(kind.to_string()).or_default() += 1;
        match kind {
            "wrong_tool_boundary" => {
                self.boundary += 1;
                self.boundary_recent += u64::from(recent);
                self.bad_w += weight * t.boundary_weight;
                let referral = if o.evidence.is_some_and(|e| !e.trim().is_empty()) {
                    1.0
                } else {
                    0.5
                };
                self.referral_weight += referral;
                for axis in o.axes.iter().filter(|a| !a.is_empty()) {
                    *self.axes.entry(axis.clone()).or_default() += referral;
                }
                sample(&mut self.shapes, o.shape);
                sample(&mut self.splits, o.split);
                sample(&mut self.evidence, o.evidence);
            }
            "low_utility" => {
                self.low_utility += 1;
                self.low_utility_recent += u64::from(recent);
                self.bad_w += weight * t.low_utility_weight;
                sample(&mut self.evidence, o.evidence);
            }
            k if is_extrinsic(k) => self.extrinsic_failures += 1,
            k if is_not_the_tools(k) => {}
            _ => {
                // permanent_failure, and types this metagate does not know: the tool failed.
                self.failures += 1;
                self.bad_w += weight;
            }
        }
    }

    /// Adds a user correction (explicit or a detected re-ask).
    pub fn add_user_correction(&mut self, ts_ms: i64, reask: bool, w: &Window, t: &Thresholds) {
        if reask {
            self.reask_corrections += 1;
        } else {
            self.explicit_corrections += 1;
        }
        self.bad_w += recency_weight(w.now_ms - ts_ms, t.half_life_ms) * t.user_correction_weight;
    }

    /// Adds another tally (the same tool and method from another shard, or another method
    /// when a tool's methods are summed).
    pub fn merge(&mut self, o: &Tally) {
        self.calls += o.calls;
        self.passed += o.passed;
        self.corrected += o.corrected;
        self.rejected += o.rejected;
        add_counts(&mut self.rejections, &o.rejections);
        add_counts(&mut self.corrections, &o.corrections);
        self.outcomes_ok += o.outcomes_ok;
        self.outcomes_error += o.outcomes_error;
        add_counts(&mut self.errors, &o.errors);
        self.failures += o.failures;
        self.extrinsic_failures += o.extrinsic_failures;
        self.boundary += o.boundary;
        self.boundary_recent += o.boundary_recent;
        self.low_utility += o.low_utility;
        self.low_utility_recent += o.low_utility_recent;
        self.referral_weight += o.referral_weight;
        for (k, v) in &o.axes {
            *self.axes.entry(k.clone()).or_default() += v;
        }
        for (mine, theirs) in [
            (&mut self.shapes, &o.shapes),
            (&mut self.splits, &o.splits),
            (&mut self.evidence, &o.evidence),
        ] {
            for s in theirs {
                sample(mine, Some(s));
            }
        }
        self.explicit_corrections += o.explicit_corrections;
        self.reask_corrections += o.reask_corrections;
        self.phrase_hints += o.phrase_hints;
        self.good_w += o.good_w;
        self.bad_w += o.bad_w;
        add_counts(&mut self.missing, &o.missing);
        self.last_ms = match (self.last_ms, o.last_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Axes by weight, heaviest first (ties by name).
    pub fn axes_ranked(&self) -> Vec<(String, f64)> {
        let mut axes: Vec<(String, f64)> = self.axes.iter().map(|(k, v)| (k.clone(), *v)).collect();
        axes.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        axes
    }

    /// The `n` heaviest axes.
    pub fn axes_top(&self, n: usize) -> Vec<String> {
        self.axes_ranked()
            .into_iter()
            .take(n)
            .map(|(a, _)| a)
            .collect()
    }

    /// Repeated referrals across distinct axes (seed 001 phase 2).
    pub fn cohesion_warning(&self, t: &Thresholds) -> bool {
        self.referral_weight >= t.cohesion_min_referrals && self.axes.len() >= t.cohesion_min_axes
    }

    /// recurgent's degraded rule: ≥ N failures, failure rate above R, more failures than
    /// successes.
    pub fn degraded(&self, t: &Thresholds) -> bool {
        let total = self.failures + self.outcomes_ok;
        self.failures >= t.degraded_min_failures
            && total > 0
            && self.failures as f64 / total as f64 > t.degraded_failure_rate
            && self.failures > self.outcomes_ok
    }
}

fn sample(set: &mut BTreeSet<String>, text: Option<&str>) {
    if let Some(s) = text.map(str::trim).filter(|s| !s.is_empty())
        && set.len() < SAMPLES
    {
        set.insert(s.to_string());
    }
}

fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One outcome row, borrowed from the scan.
#[derive(Debug, Clone)]
pub struct OutcomeRow<'a> {
    pub ts_ms: i64,
    pub ok: bool,
    pub error_type: Option<&'a str>,
    pub axes: Vec<String>,
    pub shape: Option<&'a str>,
    pub split: Option<&'a str>,
    pub evidence: Option<&'a str>,
}

/// Tool → method (`""` for none) → tally.
pub type Tallies = BTreeMap<String, BTreeMap<String, Tally>>;

/// Everything a run found, before recommendations.
#[derive(Debug, Clone, Default)]
pub struct Aggregate {
    pub events: u64,
    pub tallies: Tallies,
    /// (tool, unknown name, declared name) → times seen.
    pub alias_pairs: BTreeMap<(String, String, String), u64>,
    /// Re-asks with no tool call between the two asks to link them to.
    pub unlinked_corrections: u64,
    /// Stores that held no telemetry (empty files).
    pub empty_stores: Vec<String>,
}

impl Aggregate {
    pub fn tally(&mut self, tool: &str, method: Option<&str>) -> &mut Tally {
        if !self.tallies.contains_key(tool) {
            self.tallies.insert(tool.to_string(), BTreeMap::new());
        }
        let methods = self.tallies.get_mut(tool).expect("just inserted");
        let method = method.unwrap_or("");
        if !methods.contains_key(method) {
            methods.insert(method.to_string(), Tally::default());
        }
        methods.get_mut(method).expect("just inserted")
    }

    pub fn merge(&mut self, other: Aggregate) {
        self.events += other.events;
        for (tool, methods) in other.tallies {
            for (method, tally) in methods {
                self.tally(&tool, Some(&method)).merge(&tally);
            }
        }
        for (k, v) in other.alias_pairs {
            *self.alias_pairs.entry(k).or_default() += v;
        }
        self.unlinked_corrections += other.unlinked_corrections;
        self.empty_stores.extend(other.empty_stores);
    }
}

// ---------------------------------------------------------------------------------------------
// Re-asks

/// One ask, as the re-ask detector sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct AskRow {
    pub ts_ms: i64,
    pub session: String,
    pub text: Option<String>,
    pub capabilities: Vec<String>,
}

/// What an ask says about the one before it in the same session.
#[derive(Debug, Clone, PartialEq)]
pub struct Followup {
    /// The earlier ask's time: tool calls in `[earlier_ms, later_ms)` are linked.
    pub earlier_ms: i64,
    pub later_ms: i64,
    /// A same-topic re-ask within the window: a user correction.
    pub reask: bool,
    /// A phrase hint in the later ask (weaker evidence only).
    pub phrase: Option<String>,
}

/// `|earlier ∩ later| / |earlier|`, rounded to two decimals (so the default 0.67 means two of
/// three). Zero when the earlier ask named no capabilities.
pub fn capability_overlap(earlier: &[String], later: &[String]) -> f64 {
    let a: BTreeSet<&str> = earlier.iter().map(String::as_str).collect();
    if a.is_empty() {
        return 0.0;
    }
    let b: BTreeSet<&str> = later.iter().map(String::as_str).collect();
    round2(a.intersection(&b).count() as f64 / a.len() as f64)
}

/// Detects re-asks in a stream of asks ordered by session, then time. Only consecutive asks of
/// one session are compared, so an intervening ask of a different shape breaks the chain.
#[derive(Debug, Default)]
pub struct ReaskDetector {
    prev: Option<AskRow>,
}

impl ReaskDetector {
    pub fn next(&mut self, ask: AskRow, t: &Thresholds) -> Option<Followup> {
        let prev = self.prev.replace(ask);
        let (prev, ask) = (prev?, self.prev.as_ref().expect("just set"));
        if prev.session != ask.session {
            return None;
        }
        let reask = ask.ts_ms - prev.ts_ms <= t.reask_window_ms
            && capability_overlap(&prev.capabilities, &ask.capabilities) >= t.reask_overlap;
        let phrase = ask.text.as_deref().and_then(|text| {
            let lower = text.to_lowercase();
            t.phrases
                .iter()
                .find(|p| lower.contains(&p.to_lowercase()))
                .cloned()
        });
        (reask || phrase.is_some()).then_some(Followup {
            earlier_ms: prev.ts_ms,
            later_ms: ask.ts_ms,
            reask,
            phrase,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments: unknown names, missing requirements, learned aliases

/// The argument names of `args` the tool does not declare and the gate would not correct.
pub fn unknown_args<'a>(
    tool: &Tool,
    policy: &Policy,
    args: &'a Map<String, Value>,
) -> Vec<&'a str> {
    args.keys()
        .map(String::as_str)
        .filter(|k| {
            !tool.args.contains_key(*k)
                && !tool.aliases.contains_key(*k)
                && !tool.folded.contains_key(&fold_name(k))
                && !policy.gate.strip.iter().any(|p| p.matches(k))
        })
        .collect()
}

/// The required arguments a call went without (blank strings and null count as missing;
/// `unless` conditions are honoured).
pub fn missing_required(tool: &Tool, args: &Map<String, Value>) -> Vec<String> {
    tool.args
        .iter()
        .filter(|(name, arg)| {
            arg.required
                && match args.get(name.as_str()) {
                    None | Some(Value::Null) => true,
                    Some(Value::String(s)) => s.trim().is_empty(),
                    _ => false,
                }
                && !arg.unless.iter().any(|(other, wanted)| {
                    args.get(other).is_some_and(|v| {
                        wanted.iter().any(|w| match (v, w) {
                            (Value::String(a), Value::String(b)) => {
                                a.trim().eq_ignore_ascii_case(b.trim())
                            }
                            _ => v == w,
                        })
                    })
                })
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// The pairs a flagged call and the same session's next call to the tool show: an unknown
/// name in the first whose value the second passes under a declared name it did not use.
/// Trivial values (booleans, null, empty or redacted strings) prove nothing and are skipped.
pub fn alias_pairs(
    unknown: &[&str],
    flagged: &Map<String, Value>,
    next_verdict: &str,
    next: &Map<String, Value>,
    tool: &Tool,
) -> Vec<(String, String)> {
    if next_verdict == "rejected" {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    for from in unknown {
        let Some(v) = flagged.get(*from) else {
            continue;
        };
        let meaningful = match v {
            Value::String(s) => !s.trim().is_empty() && !s.contains("[REDACTED]"),
            Value::Number(_) | Value::Array(_) | Value::Object(_) => true,
            _ => false,
        };
        if !meaningful {
            continue;
        }
        for (to, value) in next {
            if tool.args.contains_key(to) && !flagged.contains_key(to) && value == v {
                pairs.push((from.to_string(), to.clone()));
            }
        }
    }
    pairs
}

/// An alias the pairs propose.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedAlias {
    pub tool: String,
    pub from: String,
    pub to: String,
    pub count: u64,
    /// The share of `from`'s pairs that went to `to`.
    pub share: f64,
}

/// Pairs seen often enough, whose unknown name goes to one declared name clearly enough.
pub fn propose_aliases(
    pairs: &BTreeMap<(String, String, String), u64>,
    t: &Thresholds,
) -> Vec<ProposedAlias> {
    let mut by_from: BTreeMap<(&str, &str), Vec<(&str, u64)>> = BTreeMap::new();
    for ((tool, from, to), n) in pairs {
        by_from
            .entry((tool.as_str(), from.as_str()))
            .or_default()
            .push((to.as_str(), *n));
    }
    let mut out = Vec::new();
    for ((tool, from), targets) in by_from {
        // A blank name is no argument a model means: nothing to alias.
        if from.trim().is_empty() {
            continue;
        }
        let total: u64 = targets.iter().map(|(_, n)| n).sum();
        let (to, n) = targets
            .iter()
            .copied()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
            .expect("at least one target");
        let share = n as f64 / total as f64;
        if n >= t.learn_alias_min_pairs && share >= t.learn_alias_min_share {
            out.push(ProposedAlias {
                tool: tool.to_string(),
                from: from.to_string(),
                to: to.to_string(),
                count: n,
                share: round2(share),
            });
        }
    }
    out
}

/// The proposed aliases as a TOML fragment to merge into a policy file.
pub fn policy_patch(aliases: &[ProposedAlias]) -> String {
    let mut by_tool: BTreeMap<&str, Vec<&ProposedAlias>> = BTreeMap::new();
    for a in aliases {
        by_tool.entry(&a.tool).or_default().push(a);
    }
    let mut out = String::from(
        "# Argument aliases learned by `metagate evaluate` (learn_alias).\n\
         # Review each one, then merge this file into your policy.\n",
    );
    for (tool, list) in by_tool {
        out.push_str(&format!("\n[tools.{}.aliases]\n", toml_key(tool)));
        for a in list {
            out.push_str(&format!(
                "{} = {}  # seen {} times ({}% of its pairs)\n",
                toml_key(&a.from),
                toml_string(&a.to),
                a.count,
                (a.share * 100.0).round()
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Recommendations

/// The kinds of recommendation (DESIGN.md §2.7).
pub const KINDS: [&str; 6] = [
    "split_boundary",
    "tighten_acceptance",
    "demote",
    "deprecate_alias",
    "learn_alias",
    "review_schema",
];

#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    pub id: String,
    pub tool: String,
    pub method: Option<String>,
    pub kind: &'static str,
    /// What the recommendation is about within its tool and kind (an argument, an alias pair).
    pub subject: String,
    pub confidence: f64,
    pub summary: String,
    pub axes: Vec<String>,
    pub evidence: Vec<String>,
    pub status: String,
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

#[allow(clippy::too_many_arguments)]
fn rec(
    tool: &str,
    method: Option<&str>,
    kind: &'static str,
    subject: &str,
    confidence: f64,
    summary: String,
    axes: Vec<String>,
    evidence: Vec<String>,
) -> Recommendation {
    Recommendation {
        id: recommendation_id(tool, method, kind, subject),
        tool: tool.to_string(),
        method: method.map(str::to_string),
        kind,
        subject: subject.to_string(),
        confidence: round2(confidence.clamp(0.0, 1.0)),
        summary,
        axes,
        evidence,
        status: "proposed".to_string(),
    }
}

fn method_opt(m: &str) -> Option<&str> {
    (!m.is_empty()).then_some(m)
}

fn named(tool: &str, method: Option<&str>) -> String {
    match method {
        Some(m) => format!("{tool}.{m}"),
        None => tool.to_string(),
    }
}

/// Every recommendation the tallies and learned aliases call for, in a stable order.
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
            let who = named(tool, mo);
            if m.cohesion_warning(t) {
                let axes: Vec<String> = m.axes_ranked().into_iter().map(|(a, _)| a).collect();
                let mut evidence = vec![format!(
                    "wrong_tool_boundary referrals: {} ({:.1} weighted) across {} axes",
                    m.boundary,
                    m.referral_weight,
                    axes.len()
                )];
                evidence.extend(m.shapes.iter().map(|s| format!("observed task shape: {s}")));
                evidence.extend(m.splits.iter().map(|s| format!("suggested split: {s}")));
                evidence.extend(m.evidence.iter().map(|s| format!("evidence: {s}")));
                out.push(rec(
                    tool,
                    mo,
                    "split_boundary",
                    "",
                    m.referral_weight / (2.0 * t.cohesion_min_referrals),
                    format!(
                        "{who} keeps being asked to cross its boundary along {}: consider splitting it{}",
                        axes.join(", "),
                        m.splits
                            .iter()
                            .next()
                            .map(|s| format!(" ({s})"))
                            .unwrap_or_default()
                    ),
                    axes,
                    evidence,
                ));
            }
            let signals = m.low_utility + m.user_corrections();
            if signals >= t.tighten_min_signals {
                let mut evidence = Vec::new();
                if m.low_utility > 0 {
                    evidence.push(format!("low_utility referrals: {}", m.low_utility));
                }
                if m.explicit_corrections > 0 {
                    evidence.push(format!(
                        "explicit user corrections: {}",
                        m.explicit_corrections
                    ));
                }
                if m.reask_corrections > 0 {
                    evidence.push(format!("same-topic re-asks: {}", m.reask_corrections));
                }
                if m.phrase_hints > 0 {
                    evidence.push(format!(
                        "phrase hints (weaker evidence): {}",
                        m.phrase_hints
                    ));
                }
                if let Some(u) = m.utility() {
                    evidence.push(format!("utility {u:.2}"));
                }
                out.push(rec(
                    tool,
                    mo,
                    "tighten_acceptance",
                    "",
                    signals as f64 / (2.0 * t.tighten_min_signals as f64),
                    format!(
                        "{who} returns results users do not accept: tighten its acceptance criteria so a low-value result fails instead of passing"
                    ),
                    Vec::new(),
                    evidence,
                ));
            }
            if m.degraded(t) {
                let rate = m.failures as f64 / (m.failures + m.outcomes_ok) as f64;
                let errors = m
                    .errors
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                out.push(rec(
                    tool,
                    mo,
                    "demote",
                    "",
                    rate,
                    format!(
                        "{who} is degraded: {} failures against {} successes; rank it last or regenerate it",
                        m.failures, m.outcomes_ok
                    ),
                    Vec::new(),
                    vec![
                        format!("failure rate {:.2}", rate),
                        format!("errors by type: {errors}"),
                    ],
                ));
            }
            if methods.len() > 1 && mo.is_some() {
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
                if used >= t.alias_min_calls
                    && share <= t.alias_max_share
                    && rate >= t.alias_problem_rate
                {
                    out.push(rec(
                        tool,
                        mo,
                        "deprecate_alias",
                        "",
                        rate,
                        format!(
                            "{who} is a rarely used method name that mostly fails: deprecate it in favour of the tool's main method"
                        ),
                        Vec::new(),
                        vec![
                            format!("{used} of {tool_calls} calls to {tool} ({:.0}%)", share * 100.0),
                            format!("{problems} rejected or failed ({:.0}%)", rate * 100.0),
                        ],
                    ));
                }
            }
            for (arg, n) in &m.missing {
                if *n >= t.review_schema_min_missing {
                    out.push(rec(
                        tool,
                        mo,
                        "review_schema",
                        arg,
                        *n as f64 / m.calls.max(1) as f64,
                        format!(
                            "the gate keeps finding {who}'s required argument {arg:?} missing: describe it better, give it a default, or make it optional"
                        ),
                        Vec::new(),
                        vec![format!("{n} of {} calls rejected without {arg:?}", m.calls)],
                    ));
                }
            }
        }
    }
    for a in aliases {
        out.push(rec(
            &a.tool,
            None,
            "learn_alias",
            &format!("{}={}", a.from, a.to),
            a.share * (a.count as f64 / (2.0 * t.learn_alias_min_pairs as f64)).min(1.0),
            format!(
                "calls to {} that used {:?} were retried with {:?} holding the same value: add the alias {} = {:?}",
                a.tool, a.from, a.to, a.from, a.to
            ),
            Vec::new(),
            vec![format!(
                "{} times the same session's next call passed with {:?} = the value given as {:?} ({:.0}% of the pairs for {:?})",
                a.count,
                a.to,
                a.from,
                a.share * 100.0,
                a.from
            )],
        ));
    }
    out
}

impl Tally {
    /// Outcomes recorded (successes and errors).
    pub fn outcomes(&self) -> u64 {
        self.outcomes_ok + self.outcomes_error
    }
}

// ---------------------------------------------------------------------------------------------
// Output

/// A tool's tally summed over its methods.
pub fn tool_total(methods: &BTreeMap<String, Tally>) -> Tally {
    let mut total = Tally::default();
    for m in methods.values() {
        total.merge(m);
    }
    total
}

/// The `health` object of DESIGN.md §2.7, with the counts behind it.
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
        "boundary_axes": m.axes_ranked().into_iter().map(|(a, w)| (a, json!(w))).collect::<Map<_, _>>(),
        "degraded": m.degraded(t),
        "last_seen": m.last_ms.map(crate::domain::events::format_time),
    })
}

/// The per-tool object of DESIGN.md §2.7: `{"tool": {"methods": [...], "health": {...}}}`,
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

pub fn recommendation_json(r: &Recommendation) -> Value {
    json!({
        "id": r.id,
        "tool": r.tool,
        "method": r.method,
        "kind": r.kind,
        "confidence": r.confidence,
        "summary": r.summary,
        "axes": r.axes,
        "evidence": r.evidence,
        "status": r.status,
    })
}

pub fn alias_json(a: &ProposedAlias) -> Value {
    json!({"tool": a.tool, "from": a.from, "to": a.to, "count": a.count, "share": a.share})
}

#[cfg(test)]
mod tests;
