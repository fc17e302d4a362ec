//! The one step between deciding and answering, shared by `gate` and `mcp`: the decisions
//! made so far are made durable before any of them goes out, and when that fails the policy's
//! `on_internal_error` says whether the calls go out unrecorded (`pass`) or are refused
//! (`reject`, the default: fail closed).

use super::Sink;
use metagate_core::error::{Category, ToolError};
use metagate_core::policy::{FailMode, Policy};

/// What became of the decisions at their commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Committed {
    /// They are durable: the calls go out as decided.
    Kept,
    /// They could not be recorded and the policy says pass: the calls go out as decided.
    Unrecorded,
    /// They could not be recorded and the policy fails closed: each call is refused with
    /// [`unrecorded`].
    Refused,
}

/// Commits a sink's decisions and tells the operator what failed, once per failure rather
/// than once per call while the store stays broken.
#[derive(Debug, Default)]
pub(crate) struct Committer {
    last_failure: Option<String>,
}

impl Committer {
    /// Commits what `sink` recorded since the last commit, writing each line for the operator
    /// to `say`: a failed commit (when it is not the one said last), and why the checks that
    /// read the store could not answer.
    pub(crate) fn commit(
        &mut self,
        policy: &Policy,
        sink: &mut dyn Sink,
        say: &mut dyn FnMut(&str),
    ) -> Committed {
        let committed = match sink.commit() {
            Ok(()) => {
                self.last_failure = None;
                Committed::Kept
            }
            Err(failure) => {
                let fail_closed = policy.gate.on_internal_error == FailMode::Reject;
                if self.last_failure.as_deref() != Some(&failure.0) {
                    let what = if fail_closed {
                        "calls are refused until it works (on_internal_error = \"reject\")"
                    } else {
                        "calls pass unrecorded (on_internal_error = \"pass\")"
                    };
                    say(&format!("metagate: error: telemetry: {failure}; {what}"));
                    self.last_failure = Some(failure.0);
                }
                if fail_closed {
                    Committed::Refused
                } else {
                    Committed::Unrecorded
                }
            }
        };
        for failure in sink.take_failures() {
            say(&format!(
                "metagate: error: telemetry: {failure}; the checks that read the store could not run"
            ));
        }
        committed
    }
}

/// The rejection a call gets when its decision could not be recorded and the policy fails
/// closed. Why is the operator's to read, on stderr: the model is never shown the store's
/// path or its state.
pub(crate) fn unrecorded() -> ToolError {
    ToolError::new(
        Category::ServerError,
        "metagate could not record this decision, and its policy fails closed",
    )
    .suggest("Try again later; if it keeps failing, the operator must look at metagate's telemetry store")
}
