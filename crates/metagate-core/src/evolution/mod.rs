//! The out-of-band evolution pass (seed 001, phases 2–6): per tool and method, counts of
//! calls, corrections, rejections and outcomes; user corrections (explicit, and re-asks
//! detected deterministically); a recency-weighted utility score; cohesion of boundary
//! referrals; and recommendations, which are proposals, never changes.
//!
//! This module is pure: rows and thresholds in, results out. `store::aggregate` streams the
//! rows out of SQLite, `store::runs` stores runs and reads them back, [`health`] renders what
//! `tools health` shows, [`digest`] says what changed since the previous run.

mod args;
pub mod blame;
pub mod causes;
pub mod changes;
pub mod confidence;
pub mod digest;
pub mod errors;
pub mod findings;
pub mod fold;
pub mod health;
pub mod output;
pub mod overlap;
mod reask;
pub mod recommend;
pub mod series;
pub mod tally;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::error::Category;
use crate::policy::thresholds::Thresholds;

pub use args::{
    PairSessions, PatchBase, ProposedAlias, alias_pairs, attach_sessions, missing_required,
    policy_patch, propose_aliases, unknown_args,
};
pub use findings::assess;
pub use output::{alias_json, health_json, recommendation_json, tool_total, tools_json};
pub use reask::{AskRow, Followup, ReaskDetector, capability_overlap};
pub use recommend::{Change, Evidence, KINDS, Recommendation, recommend, recommendation_id};
pub use tally::{OutcomeRow, Tally};

/// The window a run covers: `[from_ms, until_ms)`, and where its recent part starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The window's start, inclusive, in milliseconds since the epoch.
    pub from_ms: i64,
    /// The window's end, exclusive.
    pub until_ms: i64,
    /// Where "recent" starts, for the trends evaluate reports.
    pub recent_from_ms: i64,
    /// What recency weights count from.
    now_ms: i64,
}

impl Window {
    /// The window from `from_ms` to `until_ms`, its recent part as the thresholds say.
    pub fn new(from_ms: i64, until_ms: i64, now_ms: i64, t: &Thresholds) -> Window {
        Window {
            from_ms,
            until_ms,
            recent_from_ms: until_ms.saturating_sub(t.recent_ms).max(from_ms),
            now_ms,
        }
    }

    fn is_recent(&self, ts_ms: i64) -> bool {
        ts_ms >= self.recent_from_ms
    }
}

/// Reads a `--since`/`--until` value: a duration back from `now` (`7d`, `24h`, `30m`, `90s`,
/// `2w`), an RFC 3339 time, or a date (`2026-11-25`: its midnight, UTC).
pub fn parse_moment(text: &str, now_ms: i64) -> Result<i64, MomentError> {
    moment_ms(text, now_ms).map_err(MomentError)
}

/// Why a `--since`/`--until` value is refused: a sentence naming the forms it may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MomentError(String);

impl std::fmt::Display for MomentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MomentError {}

/// [`parse_moment`], its refusal a sentence still to be wrapped.
fn moment_ms(text: &str, now_ms: i64) -> Result<i64, String> {
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
        return crate::events::parse_time(&format!("{t}T00:00:00Z"))
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
    crate::events::parse_time(t).map_err(|e| {
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
pub fn is_not_the_tools(error_type: &str) -> bool {
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
fn recency_weight(age_ms: i64, half_life_ms: i64) -> f64 {
    if half_life_ms <= 0 {
        return 1.0;
    }
    0.5f64.powf(age_ms.max(0) as f64 / half_life_ms as f64)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Tool → method (`""` for none) → tally.
pub type Tallies = BTreeMap<String, BTreeMap<String, Tally>>;

/// Everything a run found, before recommendations.
#[derive(Debug, Clone, Default)]
pub struct Aggregate {
    /// How many events were read.
    pub events: u64,
    /// Complete once [`Aggregate::finish`] ran (a scan calls it at its end).
    pub tallies: Tallies,
    /// The tallies a scan is filling, looked up by hash: most rows then cost a short hash
    /// and one comparison, where the sorted map paid a comparison per key it passed.
    filling: FxHashMap<String, FxHashMap<String, Tally>>,
    /// (tool, unknown name, declared name) → times seen.
    pub alias_pairs: BTreeMap<(String, String, String), u64>,
    /// (tool, unknown name, declared name) → a few sessions the pair was seen in.
    pub alias_sessions: PairSessions,
    /// Re-asks with no tool call between the two asks to link them to.
    pub unlinked_corrections: u64,
    /// Re-asks after several tools none of which they point at ([`blame`]).
    pub unattributed_reasks: u64,
    /// Stores that held no telemetry (empty files).
    pub empty_stores: Vec<String>,
    /// Referrals followed by another tool's success ([`overlap`]).
    pub overlaps: overlap::OverlapWatch,
}

impl Aggregate {
    /// The tally of a tool and method (`None`: `""`), made when missing.
    pub fn tally(&mut self, tool: &str, method: Option<&str>) -> &mut Tally {
        if !self.filling.contains_key(tool) {
            self.filling.insert(tool.to_string(), FxHashMap::default());
        }
        let methods = self.filling.get_mut(tool).expect("just inserted");
        let method = method.unwrap_or("");
        if !methods.contains_key(method) {
            methods.insert(method.to_string(), Tally::default());
        }
        methods.get_mut(method).expect("just inserted")
    }

    /// Moves what [`Aggregate::tally`] filled into [`Aggregate::tallies`], sorted.
    pub fn finish(&mut self) {
        for (tool, methods) in self.filling.drain() {
            let into = self.tallies.entry(tool).or_default();
            for (method, tally) in methods {
                match into.get_mut(&method) {
                    Some(t) => t.merge(&tally),
                    None => {
                        into.insert(method, tally);
                    }
                }
            }
        }
    }

    /// Counts one outcome of `tool` in its tally, and follows it for overlapping tools.
    pub fn add_outcome(
        &mut self,
        tool: &str,
        method: Option<&str>,
        o: &OutcomeRow<'_>,
        w: &Window,
        t: &Thresholds,
    ) {
        self.tally(tool, method).add_outcome(o, w, t);
        self.overlaps.see(
            o.session,
            tool,
            o.ok,
            o.error_type,
            o.ts_ms,
            t.reask_window_ms,
        );
    }

    /// Keeps `session` among the first few an alias pair was seen in.
    pub fn note_pair_session(&mut self, pair: &(String, String, String), session: &str) {
        let set = match self.alias_sessions.get_mut(pair) {
            Some(set) => set,
            None => self.alias_sessions.entry(pair.clone()).or_default(),
        };
        if set.len() < tally::SESSIONS && !set.contains(session) {
            set.insert(session.to_string());
        }
    }

    /// Adds another shard's counts to these.
    pub fn merge(&mut self, mut other: Aggregate) {
        other.finish();
        self.events += other.events;
        for (tool, methods) in other.tallies {
            for (method, tally) in methods {
                self.tally(&tool, Some(&method)).merge(&tally);
            }
        }
        self.finish();
        for (k, v) in other.alias_pairs {
            *self.alias_pairs.entry(k).or_default() += v;
        }
        for (k, sessions) in other.alias_sessions {
            for s in sessions {
                self.note_pair_session(&k, &s);
            }
        }
        self.unlinked_corrections += other.unlinked_corrections;
        self.unattributed_reasks += other.unattributed_reasks;
        self.empty_stores.extend(other.empty_stores);
        self.overlaps.merge(other.overlaps);
    }
}

#[cfg(test)]
mod tests;
