//! What the checks ask about the world, as narrow questions: how many calls were let through
//! (limits and the loop breaker), whether a prerequisite completed, and which grants exist for
//! a capability. The store answers them, or nothing does when telemetry is off; either way the
//! checks stay functions of what they are told.

use std::path::Path;

use super::limits::{Count, CountKey};
use crate::grants::Grant;
use crate::policy::file::PrereqEvidence;

/// Why a question could not be answered. The checks fail closed or open on it as the policy's
/// `on_internal_error` says; the grant check refuses and says which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswerable {
    /// `--no-telemetry`: there is no store to count in or look grants up in.
    TelemetryOff,
    /// The store could not be read: why, for the operator (the store's sink reports it on
    /// stderr; it names the store's path, which the model is never shown).
    Store(String),
}

impl Unanswerable {
    /// Why a check that counts in the store could not run, in words fit for the model:
    /// `what` is the subject of the sentence ("limits are counted", "prerequisites are looked
    /// up").
    pub(crate) fn reason(&self, what: &str) -> String {
        match self {
            Unanswerable::TelemetryOff => {
                format!("{what} in the telemetry store, and telemetry is off")
            }
            Unanswerable::Store(_) => {
                format!("{what} in the telemetry store, which could not be read")
            }
        }
    }
}

/// The counts limits and prerequisites are decided on.
pub trait Counts {
    /// Calls the gate let through (passed or corrected; rejections never count) that match
    /// `key` at or after `since_ms` (all of them when `None`), as of `now_ms`. The count may
    /// stop at `cap`: a limit of `cap` needs to know no more, and `oldest_ms` is then the
    /// oldest of the `cap` most recent calls, when the window frees a slot.
    fn count(
        &mut self,
        key: &CountKey,
        since_ms: Option<i64>,
        now_ms: i64,
        cap: u64,
    ) -> Result<Count, Unanswerable>;
    /// Whether `tool` completed in `session`, as `evidence` says.
    fn completed(
        &mut self,
        session: &str,
        tool: &str,
        evidence: PrereqEvidence,
    ) -> Result<bool, Unanswerable>;
}

/// The grants the grant check chooses from.
pub trait GrantLookup {
    /// The grants for `capability` that may cover a call now (unrevoked and unexpired, and a
    /// few recent others so a refusal can say why); the check decides which one covers it.
    fn grants(&mut self, capability: &str, now_ms: i64) -> Result<Vec<Grant>, Unanswerable>;
    /// The store grants are looked up in, absolute: the command a refusal suggests names it,
    /// so that the grant it makes is the one the gate will find.
    fn grant_store(&self) -> Option<&Path>;
}

/// Everything the checks may ask.
pub trait Facts: Counts + GrantLookup {}

impl<T: Counts + GrantLookup + ?Sized> Facts for T {}

/// The world when there is no telemetry store: nothing can be counted or looked up.
pub struct NoFacts;

impl Counts for NoFacts {
    fn count(
        &mut self,
        _: &CountKey,
        _: Option<i64>,
        _: i64,
        _: u64,
    ) -> Result<Count, Unanswerable> {
        Err(Unanswerable::TelemetryOff)
    }

    fn completed(&mut self, _: &str, _: &str, _: PrereqEvidence) -> Result<bool, Unanswerable> {
        Err(Unanswerable::TelemetryOff)
    }
}

impl GrantLookup for NoFacts {
    fn grants(&mut self, _: &str, _: i64) -> Result<Vec<Grant>, Unanswerable> {
        Err(Unanswerable::TelemetryOff)
    }

    fn grant_store(&self) -> Option<&Path> {
        None
    }
}
