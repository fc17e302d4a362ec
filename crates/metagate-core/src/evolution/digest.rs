//! What changed since the previous stored run: recommendations new, worse, better and
//! resolved, and per tool the change in calls, failure rate and utility. The report opens with
//! it, and `--fail-on` turns it into an exit status for cron to alert on.

use std::collections::BTreeMap;

use super::recommend::{Change, Recommendation};
use super::{Tallies, tool_total};

/// A confidence must move at least this much for a recommendation to be worse or better.
const CHANGE_STEP: f64 = 0.1;

/// A recommendation as the previous run saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct PastRecommendation {
    /// The recommendation's stable id.
    pub id: String,
    /// The tool it is about.
    pub tool: String,
    /// The method, if it is about one.
    pub method: Option<String>,
    /// The recommendation kind.
    pub kind: String,
    /// One line saying what it recommends.
    pub summary: String,
    /// `None` for a run stored before runs kept their confidences.
    pub confidence: Option<f64>,
    /// Whether the operator muted it.
    pub muted: bool,
}

/// The figures a tool's change is told by.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ToolFigures {
    /// How many calls the window holds.
    pub calls: u64,
    /// The share of calls that failed, when there were calls.
    pub failure_rate: Option<f64>,
    /// The tool's utility score, when it can be computed.
    pub utility: Option<f64>,
}

/// Each tool's figures, summed over its methods.
pub fn figures(tallies: &Tallies) -> BTreeMap<String, ToolFigures> {
    tallies
        .iter()
        .map(|(tool, methods)| {
            let total = tool_total(methods);
            let figures = ToolFigures {
                calls: total.calls_seen(),
                failure_rate: total.failure_rate(),
                utility: total.utility(),
            };
            (tool.clone(), figures)
        })
        .collect()
}

/// One tool's figures then and now.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolChange {
    /// The tool.
    pub tool: String,
    /// Its figures in the previous run, if it was seen then.
    pub before: Option<ToolFigures>,
    /// Its figures now, if it is still seen.
    pub now: Option<ToolFigures>,
}

impl ToolChange {
    /// How much worse the tool got: the rise of its failure rate plus the fall of its utility
    /// (negative when it got better).
    fn worsening(&self) -> f64 {
        let (before, now) = (
            self.before.unwrap_or_default(),
            self.now.unwrap_or_default(),
        );
        let delta = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => b - a,
            _ => 0.0,
        };
        delta(before.failure_rate, now.failure_rate) - delta(before.utility, now.utility)
    }

    /// Whether anything but the number of calls changed, or the tool came or went.
    pub fn changed(&self) -> bool {
        match (self.before, self.now) {
            (Some(b), Some(n)) => {
                differs(b.failure_rate, n.failure_rate) || differs(b.utility, n.utility)
            }
            _ => true,
        }
    }
}

fn differs(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() >= 0.005,
        (None, None) => false,
        _ => true,
    }
}

/// The digest.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Digest {
    /// Ids, most severe first, of findings at or above the confidence floor: new, or under
    /// the floor (or muted) in the previous run. Reopened ones are among the worse ones.
    pub new: Vec<String>,
    /// Rejected ones whose rate worsened past the margin (also among `worse`).
    pub reopened: Vec<String>,
    /// Findings shown under the confidence floor: listed apart, never paging.
    pub below_floor: Vec<String>,
    /// Tools whose figures got worse since the last run.
    pub worse: Vec<String>,
    /// Tools whose figures got better since the last run.
    pub better: Vec<String>,
    /// In the previous run (and shown there), gone now.
    pub resolved: Vec<PastRecommendation>,
    /// Every tool in either run, the one that got most worse first.
    pub tools: Vec<ToolChange>,
}

impl Digest {
    /// Whether `--fail-on` with this condition fails the run.
    pub fn fails(&self, on: FailOn) -> bool {
        match on {
            FailOn::New => !self.new.is_empty() || !self.reopened.is_empty(),
            FailOn::Worse => !self.new.is_empty() || !self.worse.is_empty(),
            FailOn::Any => {
                !self.new.is_empty()
                    || !self.worse.is_empty()
                    || !self.better.is_empty()
                    || !self.resolved.is_empty()
            }
        }
    }
}

/// What `--fail-on` alerts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// A new (or reopened) recommendation.
    New,
    /// A new one, or one whose confidence rose.
    Worse,
    /// Any change: new, worse, better or resolved.
    Any,
}

/// Sets each recommendation's [`Change`] against the previous run (all of them new without
/// one) and builds the digest. Muted recommendations are in none of its lists; those under
/// `floor` only in `below_floor`, and one that crosses the floor is new.
pub fn compare(
    recs: &mut [Recommendation],
    previous: Option<&[PastRecommendation]>,
    now: &BTreeMap<String, ToolFigures>,
    before: Option<&BTreeMap<String, ToolFigures>>,
    floor: f64,
) -> Digest {
    let mut digest = Digest::default();
    let past: BTreeMap<&str, &PastRecommendation> = previous
        .unwrap_or_default()
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();
    for r in recs.iter_mut() {
        let was_rejected = r.rejected_rate.is_some() || r.rejected_count.is_some();
        let change = if r.reopened() {
            Change::Reopened
        } else {
            match past.get(r.id.as_str()) {
                None => Change::New,
                // Muted then and shown now: its rate worsened past the rejection.
                Some(p) if p.muted && was_rejected && !r.muted() && r.status != "accepted" => {
                    Change::Reopened
                }
                Some(p) if p.muted => Change::New,
                Some(p) if p.confidence.is_some_and(|c| c < floor - 1e-9) => Change::New,
                Some(p) => match p.confidence {
                    Some(c) if r.confidence >= c + CHANGE_STEP - 1e-9 => Change::Worse,
                    Some(c) if r.confidence <= c - CHANGE_STEP + 1e-9 => Change::Better,
                    _ => Change::Same,
                },
            }
        };
        r.change = Some(change);
        if r.muted() {
            continue;
        }
        if r.confidence < floor - 1e-9 {
            digest.below_floor.push(r.id.clone());
            continue;
        }
        match change {
            Change::New => digest.new.push(r.id.clone()),
            Change::Reopened => {
                digest.reopened.push(r.id.clone());
                digest.worse.push(r.id.clone());
            }
            Change::Worse => digest.worse.push(r.id.clone()),
            Change::Better => digest.better.push(r.id.clone()),
            Change::Same => {}
        }
    }
    let current: std::collections::BTreeSet<&str> = recs.iter().map(|r| r.id.as_str()).collect();
    digest.resolved = previous
        .unwrap_or_default()
        .iter()
        .filter(|p| !p.muted && !current.contains(p.id.as_str()))
        .cloned()
        .collect();
    digest.resolved.sort_by(|a, b| {
        b.confidence
            .unwrap_or(0.0)
            .total_cmp(&a.confidence.unwrap_or(0.0))
    });
    let empty = BTreeMap::new();
    let before = before.unwrap_or(&empty);
    let mut tools: Vec<ToolChange> = before
        .keys()
        .chain(now.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|tool| ToolChange {
            tool: tool.clone(),
            before: before.get(tool).copied(),
            now: now.get(tool).copied(),
        })
        .collect();
    tools.sort_by(|a, b| {
        b.worsening()
            .total_cmp(&a.worsening())
            .then_with(|| a.tool.cmp(&b.tool))
    });
    digest.tools = tools;
    digest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evolution::recommend::{Evidence, recommendation_id};

    fn rec(
        id_kind: &str,
        confidence: f64,
        status: &str,
        count: f64,
        rejected: Option<f64>,
    ) -> Recommendation {
        Recommendation {
            id: recommendation_id("t", None, id_kind, ""),
            tool: "t".to_string(),
            method: None,
            kind: "demote",
            subject: String::new(),
            confidence,
            count,
            summary: String::new(),
            brief: String::new(),
            axes: Vec::new(),
            evidence: Evidence::default(),
            status: status.to_string(),
            rejected_count: rejected,
            first_seen_ms: None,
            change: None,
            rate: count / 100.0,
            rejected_rate: None,
            mute_margin: 0.25,
            changed_at_ms: None,
        }
    }

    fn past(r: &Recommendation, confidence: f64, muted: bool) -> PastRecommendation {
        PastRecommendation {
            id: r.id.clone(),
            tool: r.tool.clone(),
            method: None,
            kind: r.kind.to_string(),
            summary: String::new(),
            confidence: Some(confidence),
            muted,
        }
    }

    #[test]
    fn changes_are_new_worse_better_same_reopened_or_resolved() {
        let mut recs = vec![
            rec("a", 0.5, "proposed", 5.0, None),
            rec("b", 0.7, "proposed", 5.0, None),
            rec("c", 0.3, "proposed", 5.0, None),
            rec("d", 0.5, "proposed", 5.0, None),
            rec("e", 0.5, "rejected", 9.0, Some(5.0)),
            rec("f", 0.5, "rejected", 5.0, Some(5.0)),
        ];
        let gone = rec("g", 0.9, "proposed", 5.0, None);
        let previous = vec![
            past(&recs[1], 0.55, false),
            past(&recs[2], 0.45, false),
            past(&recs[3], 0.45, false),
            past(&recs[4], 0.5, true),
            past(&recs[5], 0.5, true),
            past(&gone, 0.9, false),
        ];
        let figures = BTreeMap::new();
        let d = compare(&mut recs, Some(&previous), &figures, Some(&figures), 0.0);
        let change: Vec<Option<Change>> = recs.iter().map(|r| r.change).collect();
        assert_eq!(
            change,
            [
                Some(Change::New),
                Some(Change::Worse),
                Some(Change::Better),
                Some(Change::Same),
                Some(Change::Reopened),
                Some(Change::New),
            ]
        );
        assert_eq!(d.new, [recs[0].id.clone()]);
        assert_eq!(d.worse, [recs[1].id.clone(), recs[4].id.clone()]);
        assert_eq!(d.better, [recs[2].id.clone()]);
        assert_eq!(d.resolved.len(), 1);
        assert_eq!(d.resolved[0].id, gone.id);
        assert!(d.fails(FailOn::New) && d.fails(FailOn::Worse) && d.fails(FailOn::Any));
        // Without a previous run, everything is new.
        let mut again = vec![rec("a", 0.5, "proposed", 5.0, None)];
        let d = compare(&mut again, None, &figures, None, 0.0);
        assert_eq!(d.new.len(), 1);
        // A quiet night fails nothing.
        let mut same = vec![rec("d", 0.5, "proposed", 5.0, None)];
        let d = compare(&mut same, Some(&previous[2..3]), &figures, None, 0.0);
        assert!(!d.fails(FailOn::Any), "{d:?}");
        // Under the floor: listed apart, never new; crossing it later is new.
        let mut low = vec![rec("d", 0.4, "proposed", 5.0, None)];
        let d = compare(&mut low, None, &figures, None, 0.5);
        assert_eq!(d.below_floor, [low[0].id.clone()]);
        assert!(d.new.is_empty() && !d.fails(FailOn::Any));
        let was_low = vec![past(&low[0], 0.4, false)];
        let mut high = vec![rec("d", 0.6, "proposed", 5.0, None)];
        let d = compare(&mut high, Some(&was_low), &figures, None, 0.5);
        assert_eq!(d.new, [high[0].id.clone()]);
        assert!(d.fails(FailOn::New));
    }
}
