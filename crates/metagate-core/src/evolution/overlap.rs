//! Two tools whose descriptions overlap: the model picks one, the tool refers the task away
//! (`wrong_tool_boundary`), and the same session's next call, to another tool, succeeds. The
//! boundary is not the first tool's to split: the model chose the wrong tool, and sharpening
//! the two descriptions (or merging the tools) is the remedy.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

/// At most this many sessions wait with a referral at once (a bound on memory: past it, new
/// referrals are not followed).
const MAX_PENDING: usize = 65_536;

/// At most this many sessions are kept per pair.
const PAIR_SESSIONS: usize = 5;

/// (the tool referred away from, the tool that then succeeded) → what was seen.
pub type Overlaps = BTreeMap<(String, String), OverlapCount>;

/// How often one tool's referral was followed by another's success, and a few sessions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OverlapCount {
    /// Referrals followed so.
    pub pairs: u64,
    /// The first few sessions.
    pub sessions: BTreeSet<String>,
    /// When the latest was seen.
    pub last_ms: i64,
}

/// Follows referrals to the next successful call of another tool in their session.
#[derive(Debug, Clone, Default)]
pub struct OverlapWatch {
    /// Session → (tool that referred, when).
    pending: FxHashMap<String, (String, i64)>,
    /// What was found.
    pub found: Overlaps,
}

impl OverlapWatch {
    /// Sees one outcome (in time order within a session): a referral waits, another tool's
    /// success within `window_ms` of it completes a pair.
    pub fn see(
        &mut self,
        session: Option<&str>,
        tool: &str,
        ok: bool,
        error_type: Option<&str>,
        ts_ms: i64,
        window_ms: i64,
    ) {
        let Some(session) = session.filter(|s| !s.is_empty()) else {
            return;
        };
        if !ok && error_type == Some("wrong_tool_boundary") {
            if self.pending.len() < MAX_PENDING || self.pending.contains_key(session) {
                self.pending
                    .insert(session.to_string(), (tool.to_string(), ts_ms));
            }
            return;
        }
        if self.pending.is_empty() {
            return;
        }
        let Some((from, at)) = self.pending.get(session) else {
            return;
        };
        if from == tool {
            return;
        }
        let (from, at) = (from.clone(), *at);
        self.pending.remove(session);
        if !ok || ts_ms < at || ts_ms - at > window_ms {
            return;
        }
        let entry = self.found.entry((from, tool.to_string())).or_default();
        entry.pairs += 1;
        entry.last_ms = entry.last_ms.max(ts_ms);
        if entry.sessions.len() < PAIR_SESSIONS {
            entry.sessions.insert(session.to_string());
        }
    }

    /// Adds what another shard found.
    pub fn merge(&mut self, other: OverlapWatch) {
        for (k, v) in other.found {
            let e = self.found.entry(k).or_default();
            e.pairs += v.pairs;
            e.last_ms = e.last_ms.max(v.last_ms);
            for s in v.sessions {
                if e.sessions.len() < PAIR_SESSIONS {
                    e.sessions.insert(s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_referral_then_another_tools_success_is_a_pair() {
        let mut w = OverlapWatch::default();
        let ref_ = Some("wrong_tool_boundary");
        w.see(Some("s1"), "docs", false, ref_, 0, 180_000);
        w.see(Some("s1"), "wiki", true, None, 10_000, 180_000);
        // Too late, or the same tool, or a failure: no pair.
        w.see(Some("s2"), "docs", false, ref_, 0, 180_000);
        w.see(Some("s2"), "wiki", true, None, 500_000, 180_000);
        w.see(Some("s3"), "docs", false, ref_, 0, 180_000);
        w.see(Some("s3"), "docs", true, None, 1_000, 180_000);
        w.see(Some("s4"), "docs", false, ref_, 0, 180_000);
        w.see(
            Some("s4"),
            "wiki",
            false,
            Some("permanent_failure"),
            1_000,
            180_000,
        );
        w.see(None, "docs", false, ref_, 0, 180_000);
        let pair = &w.found[&("docs".to_string(), "wiki".to_string())];
        assert_eq!(pair.pairs, 1);
        assert_eq!(pair.sessions.iter().next().unwrap(), "s1");
        assert_eq!(w.found.len(), 1);
    }
}
