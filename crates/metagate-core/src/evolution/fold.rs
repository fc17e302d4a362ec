//! Folding the rows of a store into an [`Aggregate`]: what each decision, outcome and user
//! correction counts for, and which tool a re-ask blames. The store's readers (SQLite and
//! PostgreSQL alike) fetch the rows and call these, so the rules live once, here, with no
//! database in sight.

use serde_json::Value;

use crate::events::AxisTable;
use crate::evolution::blame::{self, CallRef, Candidate};
use crate::evolution::causes::rejection_causes;
use crate::evolution::tally::signal;
use crate::evolution::{
    Aggregate, Followup, OutcomeRow, Window, alias_pairs, is_extrinsic, is_not_the_tools,
    unknown_args,
};
use crate::policy::Policy;
use crate::policy::thresholds::Thresholds;

/// A decision that can teach more than its count: rejected, or with warnings (an unknown
/// argument kept) and arguments.
pub struct CallRow<'r> {
    /// The decision's row id.
    pub id: i64,
    /// When it was made, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// Its session, if it named one.
    pub session: Option<&'r str>,
    /// The tool called.
    pub tool: &'r str,
    /// The method, for a tool that has them.
    pub method: Option<&'r str>,
    /// Whether the gate rejected it.
    pub rejected: bool,
    /// Its arguments as stored (JSON text), if they were kept.
    pub args: Option<&'r str>,
}

/// The call after one (same session and tool): its verdict and arguments.
pub type NextCall<'a, E> =
    &'a mut dyn FnMut(&str, &str, i64, i64) -> Result<Option<(String, Option<String>)>, E>;

/// Reads a call's arguments (only of a tool the policy declares): why it was rejected, and
/// the argument names the call after it used instead of unknown ones.
pub fn learn_from_call<E>(
    call: CallRow<'_>,
    policy: &Policy,
    agg: &mut Aggregate,
    next_call: NextCall<'_, E>,
) -> Result<(), E> {
    let CallRow {
        id,
        ts_ms,
        tool,
        method,
        rejected,
        ..
    } = call;
    let declared = call.args.and_then(|_| policy.tool(tool));
    let args = match (call.args, declared) {
        (Some(text), Some(_)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(args)) => Some(args),
            _ => None,
        },
        _ => None,
    };
    // The session only matters for the calls read further (most calls are not).
    let session = if rejected || args.is_some() {
        call.session
    } else {
        None
    };
    let tally = agg.tally(tool, method);
    let (Some(declared), Some(args)) = (declared, args) else {
        if rejected {
            tally.note_session(signal::REJECTED, session);
        }
        return Ok(());
    };
    let unknown = unknown_args(declared, policy, &args);
    if rejected {
        let faults = rejection_causes(declared, method, &args);
        tally.add_rejection(&faults, &unknown, session);
    }
    let Some(session) = session else {
        return Ok(());
    };
    if unknown.is_empty() {
        return Ok(());
    }
    let Some((next_verdict, Some(next_args))) = next_call(session, tool, ts_ms, id)? else {
        return Ok(());
    };
    let Ok(Value::Object(next_args)) = serde_json::from_str::<Value>(&next_args) else {
        return Ok(());
    };
    for (from, to) in alias_pairs(&unknown, &args, &next_verdict, &next_args, declared) {
        let key = (tool.to_string(), from, to);
        agg.note_pair_session(&key, session);
        *agg.alias_pairs.entry(key).or_default() += 1;
    }
    Ok(())
}

/// What reading rows into tallies needs besides the rows.
pub struct Reading<'a> {
    /// The window evaluated.
    pub window: &'a Window,
    /// The policy's thresholds.
    pub t: &'a Thresholds,
    /// Stored axes are folded again through the policy's synonyms.
    pub axes: &'a AxisTable,
}

/// One row of the outcome columns, as either backend reads it.
pub struct OutcomeFields<'r> {
    /// When it was recorded, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The tool that answered.
    pub tool: &'r str,
    /// The method, for a tool that has them.
    pub method: Option<&'r str>,
    /// `ok` or `error`.
    pub status: &'r str,
    /// The error's type in the taxonomy, if it failed.
    pub error_type: Option<&'r str>,
    /// The boundary axes as stored (a JSON array), of referrals only.
    pub axes: Option<&'r str>,
    /// The task shape a referral observed.
    pub shape: Option<&'r str>,
    /// The split a referral suggested.
    pub split: Option<&'r str>,
    /// What the tool said its answer rested on.
    pub evidence: Option<&'r str>,
    /// Its session, if it named one.
    pub session: Option<&'r str>,
    /// The error's message (kept of errors only).
    pub message: Option<&'r str>,
    /// The caller whose call it answers.
    pub caller: Option<&'r str>,
}

/// Counts one outcome.
pub fn add_outcome(f: OutcomeFields<'_>, read: &Reading<'_>, agg: &mut Aggregate) {
    agg.events += 1;
    let axes = match f.axes {
        Some(text) => fold_axes(
            serde_json::from_str::<Vec<String>>(text).unwrap_or_default(),
            read.axes,
        ),
        None => Vec::new(),
    };
    let row = OutcomeRow {
        ts_ms: f.ts_ms,
        ok: f.status == "ok",
        error_type: f.error_type,
        axes,
        shape: f.shape,
        split: f.split,
        evidence: f.evidence,
        session: f.session,
        message: f.message,
        caller: f.caller,
    };
    agg.add_outcome(f.tool, f.method, &row, read.window, read.t);
}

/// Axes as stored, folded through the policy's synonyms (which may have grown since they
/// were recorded), each once.
fn fold_axes(mut axes: Vec<String>, table: &AxisTable) -> Vec<String> {
    let mut folded = false;
    for axis in axes.iter_mut() {
        if let Some(to) = table.fold(axis) {
            *axis = to.to_string();
            folded = true;
        }
    }
    if folded {
        let mut seen = std::collections::BTreeSet::new();
        axes.retain(|a| seen.insert(a.clone()));
    }
    axes
}

/// One explicit user correction (`ts_ms, tool, method, session, note`), as either backend
/// reads it.
pub struct CorrectionFields<'r> {
    /// When it was recorded, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The tool corrected.
    pub tool: &'r str,
    /// The method, for a tool that has them.
    pub method: Option<&'r str>,
    /// Its session, if it named one.
    pub session: Option<&'r str>,
    /// What the user said.
    pub note: Option<&'r str>,
}

/// Counts one explicit user correction.
pub fn add_correction(f: CorrectionFields<'_>, read: &Reading<'_>, agg: &mut Aggregate) {
    agg.events += 1;
    let tally = agg.tally(f.tool, f.method);
    tally.add_user_correction(f.ts_ms, false, read.window, read.t);
    tally.note_user_correction(false, f.session, f.note);
}

/// The blamed call as the columns `blamed_outcome_id` and `blamed_decision_id` keep it.
pub fn blamed_ids(call: &CallRef) -> (Option<i64>, Option<i64>) {
    match *call {
        CallRef::Outcome(id) => (Some(id), None),
        CallRef::Decision(id) => (None, Some(id)),
    }
}

/// Whether an outcome between two asks is the tool saying something was wrong with its own
/// answer: a failure of its own or a referral (not the world's fault, the model's or the
/// policy's).
pub fn own_fault(status: &str, error_type: Option<&str>) -> bool {
    status == "error" && error_type.is_none_or(|e| !is_extrinsic(e) && !is_not_the_tools(e))
}

/// Whether an outcome between two asks is a failure of the tool's own (a fault, not a
/// referral).
pub fn own_failure(status: &str, error_type: Option<&str>) -> bool {
    own_fault(status, error_type)
        && !matches!(error_type, Some("wrong_tool_boundary" | "low_utility"))
}

/// Adds one call to the candidates of a re-ask: a tool seen again keeps its last call.
pub fn add_candidate(candidates: &mut Vec<Candidate>, call: Candidate) {
    match candidates
        .iter_mut()
        .find(|c| c.tool == call.tool && c.method == call.method)
    {
        Some(c) => {
            if (call.last_ms, call.call_id()) >= (c.last_ms, c.call_id()) {
                c.call = call.call;
                c.last_ms = call.last_ms;
            }
            c.flagged |= call.flagged;
            c.failed |= call.failed;
        }
        None => candidates.push(call),
    }
}

/// A re-ask found, and the call it blames, waiting to be stored with the run.
pub struct Reask<'a> {
    /// The row id of the ask that re-asks.
    pub later_id: i64,
    /// The row id of the ask it re-asks.
    pub earlier_id: i64,
    /// When it was re-asked, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The session both asks are in.
    pub session: &'a str,
    /// The call blamed.
    pub blamed: &'a Candidate,
    /// The complaint, if the re-ask made one.
    pub note: Option<&'a str>,
}

/// The tools that answered between two asks: from the outcomes (`false`), else from the
/// calls the gate let through (`true`).
pub type Between<'a, E> = &'a mut dyn FnMut(bool) -> Result<Vec<Candidate>, E>;

/// Weighs one follow-up ask: which tool it blames, counted as a user correction (a re-ask,
/// staged to be stored) or a phrase hint.
#[allow(clippy::too_many_arguments)]
pub fn weigh_followup<E>(
    followup: &Followup,
    session: &str,
    capability_of: &dyn Fn(&str) -> Option<String>,
    window: &Window,
    t: &Thresholds,
    agg: &mut Aggregate,
    between: Between<'_, E>,
    stage: &mut dyn FnMut(&Reask<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut candidates = between(false)?;
    if candidates.is_empty() {
        candidates = between(true)?;
    }
    if candidates.is_empty() {
        agg.unlinked_corrections += u64::from(followup.reask);
        return Ok(());
    }
    let complaint = followup.complaint.as_deref();
    // One tool alone is blamed whatever it scores: only several need telling apart.
    let blamed = if candidates.len() == 1 {
        Some(0)
    } else {
        blame::blame(
            &candidates,
            &followup.capabilities,
            complaint,
            capability_of,
        )
    };
    let Some(i) = blamed else {
        agg.unattributed_reasks += u64::from(followup.reask);
        return Ok(());
    };
    let blamed = &candidates[i];
    let tally = agg.tally(&blamed.tool, blamed.method.as_deref());
    if followup.reask && blamed.failed {
        tally.note_reask_after_failure();
    }
    if followup.reask {
        tally.add_user_correction(followup.later_ms, true, window, t);
        tally.note_user_correction(true, Some(session), complaint);
        stage(&Reask {
            later_id: followup.later_id,
            earlier_id: followup.earlier_id,
            ts_ms: followup.later_ms,
            session,
            blamed,
            note: complaint,
        })?;
    }
    if followup.phrase.is_some() {
        tally.phrase_hints += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    const H: i64 = 3_600_000;

    /// Which outcomes between two asks speak against the tool itself, by error type.
    #[test]
    fn own_faults_and_failures_by_error_type() {
        let table: [(&str, Option<&str>, bool, bool); 7] = [
            ("ok", None, false, false),
            ("error", None, true, true),
            ("error", Some("tool_error"), true, true),
            ("error", Some("low_utility"), true, false),
            ("error", Some("wrong_tool_boundary"), true, false),
            ("error", Some("timeout"), false, false),
            ("error", Some("invalid_parameters"), false, false),
        ];
        for (status, error_type, fault, failure) in table {
            assert_eq!(
                own_fault(status, error_type),
                fault,
                "{status} {error_type:?}"
            );
            assert_eq!(
                own_failure(status, error_type),
                failure,
                "{status} {error_type:?}"
            );
        }
    }

    fn followup() -> Followup {
        Followup {
            earlier_ms: H,
            later_ms: 2 * H,
            earlier_id: 1,
            later_id: 2,
            capabilities: vec!["search".into()],
            complaint: Some("that is wrong".into()),
            reask: true,
            phrase: None,
        }
    }

    fn candidate(tool: &str, failed: bool) -> Candidate {
        Candidate {
            tool: tool.into(),
            method: None,
            call: CallRef::Outcome(7),
            last_ms: H + 5,
            flagged: failed,
            failed,
        }
    }

    /// A re-ask with no tool between the asks is unlinked; with one tool, that tool is blamed
    /// and the re-ask staged naming its call, whatever the candidates of the other source.
    #[test]
    fn a_reask_blames_the_one_tool_between_the_asks_or_none() {
        let t = Thresholds::default();
        let window = Window::new(0, 48 * H, 48 * H, &t);
        let mut agg = Aggregate::default();
        let none = |_: &str| None;
        let mut staged = Vec::new();
        weigh_followup::<Infallible>(
            &followup(),
            "s",
            &none,
            &window,
            &t,
            &mut agg,
            &mut |_| Ok(Vec::new()),
            &mut |r| {
                staged.push(r.blamed.tool.clone());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((agg.unlinked_corrections, staged.len()), (1, 0));
        // The outcomes find nothing; the gate's calls find the tool.
        weigh_followup::<Infallible>(
            &followup(),
            "s",
            &none,
            &window,
            &t,
            &mut agg,
            &mut |calls| {
                Ok(if calls {
                    vec![candidate("search_docs", true)]
                } else {
                    Vec::new()
                })
            },
            &mut |r| {
                assert_eq!(blamed_ids(&r.blamed.call), (Some(7), None));
                staged.push(r.blamed.tool.clone());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(staged, ["search_docs"]);
        agg.finish();
        let tally = &agg.tallies["search_docs"][""];
        assert_eq!(tally.reasks_after_failure, 1, "{tally:?}");
    }
}
