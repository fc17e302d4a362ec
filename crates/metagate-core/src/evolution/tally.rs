//! Everything counted for one tool and method, with bounded samples of the evidence behind the
//! counts (sessions, short texts), so a recommendation can be checked without SQL and memory
//! never grows with the number of events.

use std::collections::{BTreeMap, BTreeSet};

use super::causes::ArgFault;
use super::series::{self, Callers, Hours, Sample, at};
use super::{Window, errors, is_extrinsic, is_not_the_tools, recency_weight, round2};
use crate::policy::thresholds::Thresholds;

/// At most this many task shapes, suggested splits and evidence texts are kept per method.
const SAMPLES: usize = 5;

/// At most this many sessions are kept per signal.
pub(crate) const SESSIONS: usize = 5;

/// At most this many examples are kept per signal, each at most [`EXAMPLE_CHARS`] long.
const EXAMPLES: usize = 3;
const EXAMPLE_CHARS: usize = 160;

/// At most this many unknown names are kept per argument for [`Tally::explained`].
const EXPLAINERS: usize = 16;

/// An axis named in at least this share of a tool's referrals tells none of them apart.
const UBIQUITOUS_AXIS: f64 = 0.95;

/// The signals samples are kept for.
pub mod signal {
    pub(crate) const BOUNDARY: &str = "wrong_tool_boundary";
    pub(crate) const LOW_UTILITY: &str = "low_utility";
    pub(crate) const FAILURE: &str = "failure";
    pub(crate) const REASK: &str = "reask";
    pub(crate) const CORRECTION: &str = "correction";
    /// The verdict stored for a rejected call.
    pub const REJECTED: &str = "rejected";

    /// Rejections naming one argument.
    pub(crate) fn arg(name: &str) -> String {
        format!("arg:{name}")
    }

    /// Examples of one argument's cause of rejection.
    pub(crate) fn arg_cause(name: &str, cause: &str) -> String {
        format!("arg:{name}:{cause}")
    }
}

/// Everything counted for one tool and method.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Tally {
    /// Calls decided by the gate.
    pub calls: u64,
    /// Calls that passed unchanged.
    pub passed: u64,
    /// Calls that passed corrected.
    pub corrected: u64,
    /// Calls rejected.
    pub rejected: u64,
    pub(crate) rejections: BTreeMap<String, u64>,
    /// Corrections made, by kind.
    pub corrections: BTreeMap<String, u64>,
    pub(crate) outcomes_ok: u64,
    pub(crate) outcomes_error: u64,
    pub(crate) errors: BTreeMap<String, u64>,
    /// Errors that count against the tool (not extrinsic, not the model's or the policy's).
    pub(crate) failures: u64,
    pub(crate) extrinsic_failures: u64,
    /// Referrals saying the tool was the wrong one for the task.
    pub boundary: u64,
    /// The same, in the recent part of the window.
    pub boundary_recent: u64,
    /// Referrals saying the tool's result was of little use.
    pub low_utility: u64,
    /// The same, in the recent part of the window.
    pub low_utility_recent: u64,
    /// Referrals weighted: with evidence 1, without ½.
    pub(crate) referral_weight: f64,
    /// Normalized axis → weighted referrals naming it.
    pub(crate) axes: BTreeMap<String, f64>,
    pub(crate) shapes: BTreeSet<String>,
    pub(crate) splits: BTreeSet<String>,
    pub(crate) evidence: BTreeSet<String>,
    pub(crate) explicit_corrections: u64,
    pub(crate) reask_corrections: u64,
    /// Re-asks whose wording hints at the tool.
    pub phrase_hints: u64,
    /// Recency-weighted evidence for and against utility.
    pub(crate) good_w: f64,
    pub(crate) bad_w: f64,
    /// Argument → cause of rejection (`missing`, `wrong_type`, …) → rejected calls.
    pub(crate) arg_faults: BTreeMap<String, BTreeMap<String, u64>>,
    /// Argument → unknown name → rejected calls missing the argument while holding the name:
    /// the rejections a learned alias from that name would explain.
    pub(crate) explained: BTreeMap<String, BTreeMap<String, u64>>,
    /// Outcome errors clustered by category and normalized message ([`errors`]).
    pub error_clusters: BTreeMap<String, u64>,
    /// Signal → a few sessions it was seen in (the first ones).
    pub(crate) sessions: BTreeMap<String, BTreeSet<String>>,
    /// Signal → a few short texts showing it.
    pub(crate) examples: BTreeMap<String, BTreeSet<String>>,
    /// The recent referrals by the hour they fell in (its start, in ms): boundary, low
    /// utility. `tools health` takes from them the hours that are still recent when it runs,
    /// without reading the rows again. `None` in tallies stored before it was kept.
    pub recent_by_hour: Option<BTreeMap<i64, [u64; 2]>>,
    pub(crate) last_ms: Option<i64>,
    /// By the hour: decisions, outcomes, successes, failures and low-utility signals, what
    /// change points are found in and the report's nightly charts are drawn from.
    pub hours: Hours,
    /// By caller (the decision's, or the outcome's when `record` joined it to one).
    pub callers: Callers,
    /// The latest failures, as a finding's evidence.
    pub(crate) samples: Vec<Sample>,
    /// Re-asks blamed on it that followed a failure of its own: a cause for fixing the tool,
    /// not for tightening what it accepts.
    pub(crate) reasks_after_failure: u64,
}

/// An hour in milliseconds.
pub const HOUR_MS: i64 = 3_600_000;

impl Tally {
    /// Calls seen: the gate's decisions, or the outcomes recorded when the gate saw fewer
    /// (tools called without going through the gate).
    pub fn calls_seen(&self) -> u64 {
        self.calls.max(self.outcomes())
    }

    /// Outcomes recorded (successes and errors).
    pub(crate) fn outcomes(&self) -> u64 {
        self.outcomes_ok + self.outcomes_error
    }

    /// How many times users corrected the tool.
    pub fn user_corrections(&self) -> u64 {
        self.explicit_corrections + self.reask_corrections
    }

    /// How many times users asked again after the tool's result (re-asks).
    pub fn reasks(&self) -> u64 {
        self.reask_corrections
    }

    /// Utility in [0, 1]; `None` without any outcome or correction to judge by.
    pub fn utility(&self) -> Option<f64> {
        let total = self.good_w + self.bad_w;
        (total > 0.0).then(|| round2(self.good_w / total))
    }

    /// The tool's own failures among the outcomes that judge it (failures and successes).
    pub(crate) fn failure_rate(&self) -> Option<f64> {
        let judged = self.failures + self.outcomes_ok;
        (judged > 0).then(|| round2(self.failures as f64 / judged as f64))
    }

    /// Signals that a result was of little use: the tool's own `low_utility` referrals and
    /// users' corrections.
    pub(crate) fn low_utility_signals(&self) -> u64 {
        self.low_utility + self.user_corrections()
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
        series::bump(
            &mut self.hours,
            ts_ms,
            at::DECISIONS,
            n.min(u64::from(u32::MAX)) as u32,
        );
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

    /// Counts `n` gate decisions of `caller` at `ts_ms`.
    pub fn add_caller_calls(&mut self, caller: Option<&str>, ts_ms: i64, n: u64) {
        let n = n.min(u64::from(u32::MAX)) as u32;
        series::add_for_caller(&mut self.callers, caller, ts_ms, at::DECISIONS, n);
    }

    /// Adds a recorded outcome.
    pub fn add_outcome(&mut self, o: &OutcomeRow<'_>, w: &Window, t: &Thresholds) {
        let weight = recency_weight(w.now_ms - o.ts_ms, t.half_life_ms);
        let recent = w.is_recent(o.ts_ms);
        self.seen(o.ts_ms);
        series::bump(&mut self.hours, o.ts_ms, at::OUTCOMES, 1);
        series::add_for_caller(&mut self.callers, o.caller, o.ts_ms, at::OUTCOMES, 1);
        if o.ok {
            self.outcomes_ok += 1;
            self.good_w += weight;
            series::bump(&mut self.hours, o.ts_ms, at::OK, 1);
            series::add_for_caller(&mut self.callers, o.caller, o.ts_ms, at::OK, 1);
            return;
        }
        self.outcomes_error += 1;
        let kind = o.error_type.unwrap_or("unknown");
        match self.errors.get_mut(kind) {
            Some(n) => *n += 1,
            None => {
                self.errors.insert(kind.to_string(), 1);
            }
        }
        let cluster = o
            .message
            .filter(|m| !m.trim().is_empty())
            .map(|message| errors::add(&mut self.error_clusters, kind, message));
        match kind {
            "wrong_tool_boundary" => {
                self.boundary += 1;
                self.boundary_recent += u64::from(recent);
                if recent {
                    self.count_recent(o.ts_ms, 0);
                }
                self.bad_w += weight * t.boundary_weight;
                let referral = if o.evidence.is_some_and(|e| !e.trim().is_empty()) {
                    1.0
                } else {
                    0.5
                };
                self.referral_weight += referral;
                for axis in o.axes.iter().filter(|a| !a.is_empty()) {
                    match self.axes.get_mut(axis.as_str()) {
                        Some(w) => *w += referral,
                        None => {
                            self.axes.insert(axis.clone(), referral);
                        }
                    }
                }
                sample(&mut self.shapes, o.shape);
                sample(&mut self.splits, o.split);
                sample(&mut self.evidence, o.evidence);
                self.note_session(signal::BOUNDARY, o.session);
            }
            "low_utility" => {
                self.low_utility += 1;
                series::bump(&mut self.hours, o.ts_ms, at::SIGNALS, 1);
                series::add_for_caller(&mut self.callers, o.caller, o.ts_ms, at::SIGNALS, 1);
                self.low_utility_recent += u64::from(recent);
                if recent {
                    self.count_recent(o.ts_ms, 1);
                }
                self.bad_w += weight * t.low_utility_weight;
                sample(&mut self.evidence, o.evidence);
                self.note_session(signal::LOW_UTILITY, o.session);
                self.note_example(signal::LOW_UTILITY, o.evidence.or(o.message));
            }
            k if is_extrinsic(k) => self.extrinsic_failures += 1,
            k if is_not_the_tools(k) => {}
            _ => {
                // permanent_failure, and types this metagate does not know: the tool failed.
                self.failures += 1;
                self.bad_w += weight;
                self.note_session(signal::FAILURE, o.session);
                series::bump(&mut self.hours, o.ts_ms, at::FAILURES, 1);
                series::add_for_caller(&mut self.callers, o.caller, o.ts_ms, at::FAILURES, 1);
                let cluster = cluster.unwrap_or_else(|| format!("{kind}\u{1f}"));
                series::add_caller_error(&mut self.callers, o.caller, &cluster);
                if let Some(session) = o.session.filter(|s| !s.is_empty()) {
                    series::keep_latest(
                        &mut self.samples,
                        Sample {
                            ts_ms: o.ts_ms,
                            session: session.to_string(),
                            caller: o.caller.filter(|c| !c.is_empty()).map(str::to_string),
                            cluster,
                        },
                    );
                }
            }
        }
    }

    fn count_recent(&mut self, ts_ms: i64, which: usize) {
        let hour = ts_ms.div_euclid(HOUR_MS) * HOUR_MS;
        self.recent_by_hour
            .get_or_insert_with(BTreeMap::new)
            .entry(hour)
            .or_default()[which] += 1;
    }

    /// The recent referrals (boundary, low utility) of the hours starting at `from_hour` or
    /// later, as [`Tally::recent_by_hour`] keeps them.
    pub fn recent_since(&self, from_hour: i64) -> Option<[u64; 2]> {
        let hours = self.recent_by_hour.as_ref()?;
        Some(
            hours
                .range(from_hour..)
                .fold([0, 0], |acc, (_, n)| [acc[0] + n[0], acc[1] + n[1]]),
        )
    }

    /// Adds a user correction (explicit or a detected re-ask).
    pub fn add_user_correction(&mut self, ts_ms: i64, reask: bool, w: &Window, t: &Thresholds) {
        series::bump(&mut self.hours, ts_ms, at::SIGNALS, 1);
        if reask {
            self.reask_corrections += 1;
        } else {
            self.explicit_corrections += 1;
        }
        self.bad_w += recency_weight(w.now_ms - ts_ms, t.half_life_ms) * t.user_correction_weight;
    }

    /// Keeps the session and the text of a user correction (a re-ask's later ask, or an
    /// explicit correction's note) as samples.
    pub fn note_user_correction(&mut self, reask: bool, session: Option<&str>, text: Option<&str>) {
        let signal = if reask {
            signal::REASK
        } else {
            signal::CORRECTION
        };
        self.note_session(signal, session);
        self.note_example(signal, text);
    }

    /// Counts one rejected call's faults, argument by argument, with the unknown names it
    /// held (what a learned alias could explain) and its session.
    pub fn add_rejection(&mut self, faults: &[ArgFault], unknown: &[&str], session: Option<&str>) {
        self.note_session(signal::REJECTED, session);
        for f in faults {
            let cause = f.cause.as_str();
            // The first rejections of an argument fill its samples; later ones only count
            // (no text is built for them).
            let first = match self.arg_faults.get_mut(f.arg.as_str()) {
                Some(by_cause) => match by_cause.get_mut(cause) {
                    Some(n) => {
                        *n += 1;
                        *n <= SESSIONS as u64
                    }
                    None => {
                        by_cause.insert(cause.to_string(), 1);
                        true
                    }
                },
                None => {
                    let by_cause = [(cause.to_string(), 1)].into_iter().collect();
                    self.arg_faults.insert(f.arg.clone(), by_cause);
                    true
                }
            };
            if first {
                self.note_session(&signal::arg(&f.arg), session);
                if let Some(example) = &f.example {
                    self.note_example(&signal::arg_cause(&f.arg, cause), Some(example));
                }
            }
            if f.cause == super::causes::Cause::Missing && !unknown.is_empty() {
                let names = match self.explained.get_mut(f.arg.as_str()) {
                    Some(names) => names,
                    None => self.explained.entry(f.arg.clone()).or_default(),
                };
                for name in unknown {
                    if let Some(n) = names.get_mut(*name) {
                        *n += 1;
                    } else if names.len() < EXPLAINERS {
                        names.insert(name.to_string(), 1);
                    }
                }
            }
        }
    }

    /// Keeps `session` among the first few seen for `signal`.
    pub fn note_session(&mut self, signal: &str, session: Option<&str>) {
        let Some(session) = session.filter(|s| !s.is_empty()) else {
            return;
        };
        let set = match self.sessions.get_mut(signal) {
            Some(set) => set,
            None => self.sessions.entry(signal.to_string()).or_default(),
        };
        if set.len() < SESSIONS && !set.contains(session) {
            set.insert(session.to_string());
        }
    }

    /// Keeps `text`, cut short, among the first few examples of `signal`.
    fn note_example(&mut self, signal: &str, text: Option<&str>) {
        let Some(text) = text.map(str::trim).filter(|s| !s.is_empty()) else {
            return;
        };
        let full = self
            .examples
            .get(signal)
            .is_some_and(|set| set.len() >= EXAMPLES);
        // A text already kept (most are repeats) costs no allocation.
        let long = text.chars().nth(EXAMPLE_CHARS).is_some();
        if full
            || (!long
                && self
                    .examples
                    .get(signal)
                    .is_some_and(|set| set.contains(text)))
        {
            return;
        }
        let text = if long {
            shorten(text, EXAMPLE_CHARS)
        } else {
            text.to_string()
        };
        self.examples
            .entry(signal.to_string())
            .or_default()
            .insert(text);
    }

    /// Adds another tally (the same tool and method from another shard, or another method
    /// when a tool's methods are summed).
    pub(crate) fn merge(&mut self, o: &Tally) {
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
        for (arg, causes) in &o.arg_faults {
            add_counts(self.arg_faults.entry(arg.clone()).or_default(), causes);
        }
        for (arg, names) in &o.explained {
            add_counts(self.explained.entry(arg.clone()).or_default(), names);
        }
        errors::merge(&mut self.error_clusters, &o.error_clusters);
        if let Some(theirs) = &o.recent_by_hour {
            let mine = self.recent_by_hour.get_or_insert_with(BTreeMap::new);
            for (hour, n) in theirs {
                let into = mine.entry(*hour).or_default();
                into[0] += n[0];
                into[1] += n[1];
            }
        }
        for (signal, sessions) in &o.sessions {
            for s in sessions {
                self.note_session(signal, Some(s));
            }
        }
        for (signal, texts) in &o.examples {
            for text in texts {
                self.note_example(signal, Some(text));
            }
        }
        self.last_ms = match (self.last_ms, o.last_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        series::merge_hours(&mut self.hours, &o.hours);
        series::merge_callers(&mut self.callers, &o.callers);
        for s in &o.samples {
            series::keep_latest(&mut self.samples, s.clone());
        }
        self.reasks_after_failure += o.reasks_after_failure;
    }

    /// Counts a re-ask blamed on it as one that followed a failure of its own.
    pub fn note_reask_after_failure(&mut self) {
        self.reasks_after_failure += 1;
    }

    /// Axes ranked by what they tell apart: an axis named in (nearly) every referral of the
    /// tool ([`UBIQUITOUS_AXIS`] of their weight or more) is the tool's own ground and says
    /// nothing about where its boundary breaks, so it ranks after every axis that does; the
    /// rest by weight, heaviest first (ties by name).
    pub fn axes_ranked(&self) -> Vec<(String, f64)> {
        let ubiquitous = |w: f64| {
            self.axes.len() > 1
                && self.referral_weight > 0.0
                && w >= UBIQUITOUS_AXIS * self.referral_weight
        };
        let mut axes: Vec<(String, f64)> = self.axes.iter().map(|(k, v)| (k.clone(), *v)).collect();
        axes.sort_by(|a, b| {
            ubiquitous(a.1)
                .cmp(&ubiquitous(b.1))
                .then_with(|| b.1.total_cmp(&a.1))
                .then_with(|| a.0.cmp(&b.0))
        });
        axes
    }

    /// The `n` most telling axes.
    pub(crate) fn axes_top(&self, n: usize) -> Vec<String> {
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

    /// Degraded (seed 001 phase 6): by recurgent's failure rule, or by repeated low utility.
    pub fn degraded(&self, t: &Thresholds) -> bool {
        self.degraded_by_failures(t) || self.degraded_by_low_utility(t)
    }

    /// recurgent's rule: ≥ N failures, failure rate above R, more failures than successes.
    pub(crate) fn degraded_by_failures(&self, t: &Thresholds) -> bool {
        let total = self.failures + self.outcomes_ok;
        self.failures >= t.degraded_min_failures
            && total > 0
            && self.failures as f64 / total as f64 > t.degraded_failure_rate
            && self.failures > self.outcomes_ok
    }

    /// Repeated low utility as an adaptive failure: at least `degraded_min_low_utility`
    /// low-utility signals (referrals and user corrections) and a utility below
    /// `degraded_utility`.
    fn degraded_by_low_utility(&self, t: &Thresholds) -> bool {
        self.low_utility_signals() >= t.degraded_min_low_utility
            && self.utility().is_some_and(|u| u < t.degraded_utility)
    }

    /// The sessions kept for any of `signals`, in order, at most `n`.
    pub(crate) fn sessions_of(&self, signals: &[&str], n: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in signals {
            for session in self.sessions.get(*s).into_iter().flatten() {
                if out.len() < n && !out.contains(session) {
                    out.push(session.clone());
                }
            }
        }
        out
    }

    /// The examples kept for `signal`.
    pub(crate) fn examples_of(&self, signal: &str) -> impl Iterator<Item = &String> {
        self.examples.get(signal).into_iter().flatten()
    }
}

/// `text` cut to `max` characters, with `…` when cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

fn sample(set: &mut BTreeSet<String>, text: Option<&str>) {
    if let Some(s) = text.map(str::trim).filter(|s| !s.is_empty())
        && set.len() < SAMPLES
        && !set.contains(s)
    {
        set.insert(s.to_string());
    }
}

fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

/// One outcome row, borrowed from the scan.
#[derive(Debug, Clone, Default)]
pub struct OutcomeRow<'a> {
    /// When the outcome was recorded, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// Whether the tool succeeded.
    pub ok: bool,
    /// The error type, when it failed.
    pub error_type: Option<&'a str>,
    /// The boundary axes named, normalized.
    pub axes: Vec<String>,
    /// The task shape a referral observed.
    pub shape: Option<&'a str>,
    /// The split a referral suggested.
    pub split: Option<&'a str>,
    /// The evidence a referral gave.
    pub evidence: Option<&'a str>,
    /// Read for errors only.
    pub session: Option<&'a str>,
    /// The error message, for clustering.
    pub message: Option<&'a str>,
    /// The caller of the call it answered, when known.
    pub caller: Option<&'a str>,
}
