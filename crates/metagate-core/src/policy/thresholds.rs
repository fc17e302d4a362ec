//! The policy's `[evaluate]` section: every threshold the out-of-band pass (`metagate
//! evaluate`, `metagate tools health`) uses, with documented defaults, and the checks
//! `policy check` runs on them.

use serde::{Deserialize, Serialize};

/// `[evaluate]` as written; every key optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvaluateFile {
    /// A later ask counts as a re-ask only within this many seconds of the earlier one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reask_window_secs: Option<u64>,
    /// Share of the earlier ask's capabilities the later ask must also name (0–1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reask_overlap: Option<f64>,
    /// Phrases in a later ask recorded as weaker evidence (never a correction by themselves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phrases: Option<Vec<String>>,
    /// The "recent" part of the window: its last this many hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recent_hours: Option<u64>,
    /// Utility evidence loses half its weight every this many hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    half_life_hours: Option<u64>,
    /// How much a user correction weighs against utility (a successful outcome weighs 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_correction_weight: Option<f64>,
    /// How much the tool's own `low_utility` referral weighs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    low_utility_weight: Option<f64>,
    /// How much a `wrong_tool_boundary` referral weighs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    boundary_weight: Option<f64>,
    /// Cohesion warning (and `split_boundary`): at least this many referrals (one without
    /// evidence counts half) …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cohesion_min_referrals: Option<u64>,
    /// … across at least this many distinct normalized axes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cohesion_min_axes: Option<u64>,
    /// `tighten_acceptance`: at least this many low-utility referrals plus user corrections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tighten_min_signals: Option<u64>,
    /// `demote`: at least this many failures …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    degraded_min_failures: Option<u64>,
    /// … a failure rate above this (and more failures than successes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    degraded_failure_rate: Option<f64>,
    /// Degraded by low utility too (seed 001 phase 6): at least this many low-utility signals
    /// (the tool's `low_utility` referrals and user corrections) …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    degraded_min_low_utility: Option<u64>,
    /// … and a utility below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    degraded_utility: Option<f64>,
    /// `deprecate_alias`: a method with at most this share of its tool's calls …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alias_max_share: Option<f64>,
    /// … and at least this many calls …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alias_min_calls: Option<u64>,
    /// … of which at least this share were rejected or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alias_problem_rate: Option<f64>,
    /// `review_schema`: an argument behind at least this many rejected calls (missing, of the
    /// wrong type, of the wrong nested shape, outside its enum; a missing argument a learned
    /// alias explains does not count). The key's name is from when only missing ones counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    review_schema_min_missing: Option<u64>,
    /// `learn_alias`: an unknown → declared argument pair seen at least this many times …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    learn_alias_min_pairs: Option<u64>,
    /// … and holding at least this share of the pairs its unknown name was seen in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    learn_alias_min_share: Option<f64>,
    /// Change points: the chance, per night, that a run raises one where nothing changed
    /// (split over every test it makes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    false_alarm_rate: Option<f64>,
    /// `--fail-on` pages only for findings at or above this confidence (`--confidence-floor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confidence_floor: Option<f64>,
    /// A rejected finding stays muted until its rate exceeds the rate it was rejected at by
    /// this share of it (and by at least one percentage point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mute_margin: Option<f64>,
    /// One caller holding at least this share of a tool's failures is blamed instead of the
    /// tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    caller_share: Option<f64>,
}

/// The thresholds in force, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub(crate) reask_window_ms: i64,
    pub(crate) reask_overlap: f64,
    pub(crate) phrases: Vec<String>,
    pub(crate) recent_ms: i64,
    pub(crate) half_life_ms: i64,
    pub(crate) user_correction_weight: f64,
    pub(crate) low_utility_weight: f64,
    pub(crate) boundary_weight: f64,
    pub(crate) cohesion_min_referrals: f64,
    pub(crate) cohesion_min_axes: usize,
    pub(crate) tighten_min_signals: u64,
    pub(crate) degraded_min_failures: u64,
    pub(crate) degraded_failure_rate: f64,
    pub(crate) degraded_min_low_utility: u64,
    pub(crate) degraded_utility: f64,
    pub(crate) alias_max_share: f64,
    pub(crate) alias_min_calls: u64,
    pub(crate) alias_problem_rate: f64,
    pub(crate) review_schema_min_missing: u64,
    pub(crate) learn_alias_min_pairs: u64,
    pub(crate) learn_alias_min_share: f64,
    pub(crate) false_alarm_rate: f64,
    pub(crate) confidence_floor: f64,
    pub(crate) mute_margin: f64,
    pub(crate) caller_share: f64,
}

/// The phrase hints when the policy names none.
const DEFAULT_PHRASES: [&str; 6] = [
    "this is wrong",
    "that's wrong",
    "try again",
    "looks like a menu",
    "not what i asked",
    "that is not right",
];

impl Thresholds {
    /// The confidence `--fail-on` pages at or above, unless `--confidence-floor` says another.
    pub fn confidence_floor(&self) -> f64 {
        self.confidence_floor
    }

    /// How much a user correction weighs against utility (a success weighs 1).
    pub fn user_correction_weight(&self) -> f64 {
        self.user_correction_weight
    }

    /// The policy's thresholds with another confidence floor.
    pub fn with_confidence_floor(mut self, floor: f64) -> Thresholds {
        self.confidence_floor = floor;
        self
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        EvaluateFile::default().thresholds()
    }
}

const HOUR_MS: i64 = 3_600_000;

/// The heaviest a piece of evidence may weigh (a success weighs 1). Bounded so that weighted
/// sums over any store stay finite: a weight near f64's limit made them infinite, which JSON
/// cannot hold, and a stored run's tallies unreadable.
const MAX_WEIGHT: f64 = 1000.0;

fn ms(n: u64, unit: i64) -> i64 {
    i64::try_from(n)
        .unwrap_or(i64::MAX / unit)
        .saturating_mul(unit)
}

impl EvaluateFile {
    /// The thresholds, each absent key at its default.
    pub(crate) fn thresholds(&self) -> Thresholds {
        Thresholds {
            reask_window_ms: ms(self.reask_window_secs.unwrap_or(180), 1000),
            reask_overlap: self.reask_overlap.unwrap_or(0.67),
            phrases: self
                .phrases
                .clone()
                .unwrap_or_else(|| DEFAULT_PHRASES.iter().map(|s| s.to_string()).collect()),
            recent_ms: ms(self.recent_hours.unwrap_or(24), HOUR_MS),
            half_life_ms: ms(self.half_life_hours.unwrap_or(72), HOUR_MS),
            user_correction_weight: self.user_correction_weight.unwrap_or(3.0),
            low_utility_weight: self.low_utility_weight.unwrap_or(1.0),
            boundary_weight: self.boundary_weight.unwrap_or(0.5),
            cohesion_min_referrals: self.cohesion_min_referrals.unwrap_or(3) as f64,
            cohesion_min_axes: self.cohesion_min_axes.unwrap_or(2) as usize,
            tighten_min_signals: self.tighten_min_signals.unwrap_or(2),
            degraded_min_failures: self.degraded_min_failures.unwrap_or(3),
            degraded_failure_rate: self.degraded_failure_rate.unwrap_or(0.6),
            degraded_min_low_utility: self.degraded_min_low_utility.unwrap_or(5),
            degraded_utility: self.degraded_utility.unwrap_or(0.5),
            alias_max_share: self.alias_max_share.unwrap_or(0.2),
            alias_min_calls: self.alias_min_calls.unwrap_or(5),
            alias_problem_rate: self.alias_problem_rate.unwrap_or(0.5),
            review_schema_min_missing: self.review_schema_min_missing.unwrap_or(3),
            learn_alias_min_pairs: self.learn_alias_min_pairs.unwrap_or(3),
            learn_alias_min_share: self.learn_alias_min_share.unwrap_or(0.8),
            false_alarm_rate: self.false_alarm_rate.unwrap_or(0.01),
            confidence_floor: self.confidence_floor.unwrap_or(0.5),
            mute_margin: self.mute_margin.unwrap_or(0.25),
            caller_share: self.caller_share.unwrap_or(0.8),
        }
    }

    /// Writes every default in, for `policy show`.
    pub(crate) fn fill_defaults(&mut self) {
        let t = self.thresholds();
        let secs = |v: i64, unit: i64| u64::try_from(v / unit).unwrap_or(0);
        self.reask_window_secs
            .get_or_insert(secs(t.reask_window_ms, 1000));
        self.reask_overlap.get_or_insert(t.reask_overlap);
        self.phrases.get_or_insert(t.phrases);
        self.recent_hours.get_or_insert(secs(t.recent_ms, HOUR_MS));
        self.half_life_hours
            .get_or_insert(secs(t.half_life_ms, HOUR_MS));
        self.user_correction_weight
            .get_or_insert(t.user_correction_weight);
        self.low_utility_weight.get_or_insert(t.low_utility_weight);
        self.boundary_weight.get_or_insert(t.boundary_weight);
        self.cohesion_min_referrals
            .get_or_insert(t.cohesion_min_referrals as u64);
        self.cohesion_min_axes
            .get_or_insert(t.cohesion_min_axes as u64);
        self.tighten_min_signals
            .get_or_insert(t.tighten_min_signals);
        self.degraded_min_failures
            .get_or_insert(t.degraded_min_failures);
        self.degraded_failure_rate
            .get_or_insert(t.degraded_failure_rate);
        self.degraded_min_low_utility
            .get_or_insert(t.degraded_min_low_utility);
        self.degraded_utility.get_or_insert(t.degraded_utility);
        self.alias_max_share.get_or_insert(t.alias_max_share);
        self.alias_min_calls.get_or_insert(t.alias_min_calls);
        self.alias_problem_rate.get_or_insert(t.alias_problem_rate);
        self.review_schema_min_missing
            .get_or_insert(t.review_schema_min_missing);
        self.learn_alias_min_pairs
            .get_or_insert(t.learn_alias_min_pairs);
        self.learn_alias_min_share
            .get_or_insert(t.learn_alias_min_share);
        self.false_alarm_rate.get_or_insert(t.false_alarm_rate);
        self.confidence_floor.get_or_insert(t.confidence_floor);
        self.mute_margin.get_or_insert(t.mute_margin);
        self.caller_share.get_or_insert(t.caller_share);
    }

    /// Layers `over` on `self`, key by key.
    pub(crate) fn layer(&mut self, over: EvaluateFile) {
        macro_rules! take {
            ($($f:ident),*) => { $( if over.$f.is_some() { self.$f = over.$f; } )* };
        }
        take!(
            reask_window_secs,
            reask_overlap,
            phrases,
            recent_hours,
            half_life_hours,
            user_correction_weight,
            low_utility_weight,
            boundary_weight,
            cohesion_min_referrals,
            cohesion_min_axes,
            tighten_min_signals,
            degraded_min_failures,
            degraded_failure_rate,
            degraded_min_low_utility,
            degraded_utility,
            alias_max_share,
            alias_min_calls,
            alias_problem_rate,
            review_schema_min_missing,
            learn_alias_min_pairs,
            learn_alias_min_share,
            false_alarm_rate,
            confidence_floor,
            mute_margin,
            caller_share
        );
    }

    /// What is wrong with the section: (key, message) pairs.
    pub(crate) fn check(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        let shares = [
            ("reask_overlap", self.reask_overlap),
            ("degraded_failure_rate", self.degraded_failure_rate),
            ("degraded_utility", self.degraded_utility),
            ("alias_max_share", self.alias_max_share),
            ("alias_problem_rate", self.alias_problem_rate),
            ("learn_alias_min_share", self.learn_alias_min_share),
            ("confidence_floor", self.confidence_floor),
            ("caller_share", self.caller_share),
        ];
        for (key, v) in shares {
            if let Some(v) = v
                && !(0.0..=1.0).contains(&v)
            {
                problems.push((
                    key,
                    format!("must be a share between 0 and 1, not {}", number(v)),
                ));
            }
        }
        let weights = [
            ("user_correction_weight", self.user_correction_weight),
            ("low_utility_weight", self.low_utility_weight),
            ("boundary_weight", self.boundary_weight),
        ];
        for (key, v) in weights {
            if let Some(v) = v
                && !(0.0..=MAX_WEIGHT).contains(&v)
            {
                problems.push((
                    key,
                    format!(
                        "must be a weight between 0 and {MAX_WEIGHT}, not {}",
                        number(v)
                    ),
                ));
            }
        }
        if let Some(v) = self.false_alarm_rate
            && !(v > 0.0 && v < 1.0)
        {
            problems.push((
                "false_alarm_rate",
                format!("must be a chance above 0 and below 1, not {}", number(v)),
            ));
        }
        if let Some(v) = self.mute_margin
            && !(0.0..=MAX_WEIGHT).contains(&v)
        {
            problems.push((
                "mute_margin",
                format!(
                    "must be a share of at least 0 (and at most {MAX_WEIGHT}), not {}",
                    number(v)
                ),
            ));
        }
        let counts = [
            ("reask_window_secs", self.reask_window_secs),
            ("recent_hours", self.recent_hours),
            ("half_life_hours", self.half_life_hours),
            ("cohesion_min_referrals", self.cohesion_min_referrals),
            ("cohesion_min_axes", self.cohesion_min_axes),
            ("tighten_min_signals", self.tighten_min_signals),
            ("degraded_min_failures", self.degraded_min_failures),
            ("degraded_min_low_utility", self.degraded_min_low_utility),
            ("alias_min_calls", self.alias_min_calls),
            ("review_schema_min_missing", self.review_schema_min_missing),
            ("learn_alias_min_pairs", self.learn_alias_min_pairs),
        ];
        for (key, v) in counts {
            if v == Some(0) {
                problems.push((key, "must be at least 1".to_string()));
            }
        }
        if let Some(phrases) = &self.phrases
            && let Some(i) = phrases.iter().position(|p| p.trim().is_empty())
        {
            problems.push((
                "phrases",
                format!("entry {} is empty: it would match every ask", i + 1),
            ));
        }
        problems
    }
}

/// A number as a person wrote it: 1e308 rather than its 309 digits.
fn number(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-4..1e16).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let t = Thresholds::default();
        assert_eq!(t.reask_window_ms, 180_000);
        assert_eq!(t.reask_overlap, 0.67);
        assert_eq!(t.cohesion_min_referrals, 3.0);
        assert_eq!(t.cohesion_min_axes, 2);
        assert_eq!(t.degraded_min_failures, 3);
        assert_eq!(t.degraded_failure_rate, 0.6);
        let mut filled = EvaluateFile::default();
        filled.fill_defaults();
        assert_eq!(filled.thresholds(), t);
        assert!(filled.check().is_empty());
    }

    #[test]
    fn bad_values_are_named() {
        let cases: &[(&str, &str)] = &[
            ("reask_overlap = 1.5", "reask_overlap"),
            ("boundary_weight = -1.0", "boundary_weight"),
            ("cohesion_min_axes = 0", "cohesion_min_axes"),
            ("phrases = [\"ok\", \" \"]", "phrases"),
            ("learn_alias_min_share = -0.1", "learn_alias_min_share"),
            ("user_correction_weight = 1e308", "user_correction_weight"),
            ("low_utility_weight = 1000.5", "low_utility_weight"),
            ("boundary_weight = nan", "boundary_weight"),
            ("boundary_weight = inf", "boundary_weight"),
            ("false_alarm_rate = 0.0", "false_alarm_rate"),
            ("false_alarm_rate = 1.0", "false_alarm_rate"),
            ("confidence_floor = 1.5", "confidence_floor"),
            ("mute_margin = -0.5", "mute_margin"),
            ("caller_share = 2.0", "caller_share"),
        ];
        for (text, key) in cases {
            let f: EvaluateFile = toml::from_str(text).unwrap();
            let problems = f.check();
            assert_eq!(problems.len(), 1, "{text}");
            assert_eq!(problems[0].0, *key, "{text}");
        }
        let f: EvaluateFile = toml::from_str("user_correction_weight = 1000.0").unwrap();
        assert!(f.check().is_empty());
        let f: EvaluateFile = toml::from_str("user_correction_weight = 1e308").unwrap();
        assert_eq!(
            f.check()[0].1,
            "must be a weight between 0 and 1000, not 1e308"
        );
        let f: EvaluateFile = toml::from_str("reask_overlap = 1.5").unwrap();
        assert_eq!(f.check()[0].1, "must be a share between 0 and 1, not 1.5");
    }
}
