//! The `gate` job: bytes in, a verdict and the call (or a rejection) out.
//!
//! One path for every call, whoever asks (`gate`, `gate --jsonl`, `lint`, `mcp`):
//! [`stages`] decides one call (read → settle the name → correct → check), [`message`] each
//! call of a whole message, [`answer`] a document of either kind with every decision handed to
//! a [`Sink`], [`commit`] makes a group of decisions durable (or fails closed) before any of
//! them goes out, and [`render`] writes what goes out. [`stream`] runs that over one document
//! or a JSON Lines stream.

mod answer;
mod commit;
mod decision;
mod message;
mod render;
mod sink;
mod stages;
mod stream;
mod telemetry;

use metagate_checks::path::{Fs, RealFs};
use metagate_core::enforce::{Checker, Scope};
use metagate_core::policy::Policy;
use metagate_wire::call::Shape;

pub(crate) use answer::Answer;
pub(crate) use commit::{Committed, Committer, unrecorded};
pub(crate) use decision::malformed;
pub use decision::{Decision, Verdict};
pub(crate) use message::tool_result_in;
pub use metagate_core::enforce::Context;
pub use render::render;
pub(crate) use render::{explain_lines, notes};
pub use sink::{NoSink, Sink, SinkError};
pub(crate) use stream::decide_settled;
pub use stream::{StreamStats, answer_one, read_document, replay, stream};
pub use telemetry::{TelemetrySink, decision_row};

/// The largest document `gate` reads; anything longer is rejected, not buffered without end.
pub const MAX_DOCUMENT: usize = metagate_wire::lines::MAX_LINE;

/// How calls go out.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Convert every call to this shape (`--emit`).
    pub emit: Option<Shape>,
    /// Write `--report` envelopes instead of the plain output.
    pub report: bool,
    /// No stderr line per correction, warning or rejection.
    pub quiet: bool,
    /// Write every stage's decision on stderr (`--explain`).
    pub explain: bool,
}

/// Everything the gate decides with: one per run of `gate`, `lint` or an `mcp` session.
#[derive(Clone, Copy)]
pub struct Gate<'a> {
    /// The policy the calls are checked against.
    pub policy: &'a Policy,
    /// The output and repair flags.
    pub options: Options,
    /// The policy checks; `None` runs the correction rules only.
    pub checker: Option<&'a Checker>,
    /// Who calls and why.
    pub context: &'a Context,
    /// The file system path arguments are resolved against.
    pub fs: &'a dyn Fs,
    /// Which checks run.
    pub scope: Scope,
}

impl<'a> Gate<'a> {
    /// A gate with the correction rules only, no policy checks.
    pub fn corrections_only(policy: &'a Policy, options: Options) -> Gate<'a> {
        static NO_CONTEXT: Context = Context {
            session: None,
            caller: None,
            intent: None,
        };
        Gate {
            policy,
            options,
            checker: None,
            context: &NO_CONTEXT,
            fs: &RealFs,
            scope: Scope { runtime: false },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagate_core::enforce::NoFacts;
    use serde_json::Value;

    fn gate(input: &str) -> (Verdict, String) {
        let policy = Policy::builtin();
        let options = Options::default();
        let d =
            Gate::corrections_only(&policy, options).decide_call(input.as_bytes(), &mut NoFacts, 0);
        let mut out = Vec::new();
        render(&d, &options, &mut out);
        (d.verdict, String::from_utf8(out).unwrap())
    }

    #[test]
    fn pass_echoes_the_input_bytes() {
        let input = r#"{"tool_name":"response",  "tool_args":{"text":"hi"}}"#;
        let (d, out) = gate(input);
        assert_eq!(d, Verdict::Pass);
        assert_eq!(out, input);
    }

    #[test]
    fn corrected_keeps_other_fields() {
        let (d, out) =
            gate(r#"{"thoughts":["x"],"tool_name":"response","tool_args":{"message":"hi"},"z":1}"#);
        assert_eq!(d, Verdict::Corrected);
        assert_eq!(
            out,
            r#"{"thoughts":["x"],"tool_name":"response","tool_args":{"text":"hi"},"z":1}"#
        );
    }

    #[test]
    fn text_read_leniently_is_never_echoed() {
        let first = r#"{"tool_name":"response","tool_args":{"text":"a"}}"#;
        let (verdict, out) = gate(&format!("Here it is: {first} (done)"));
        assert_eq!(verdict, Verdict::Corrected);
        assert_eq!(out, first);
        // A second call after the first is not dropped in silence: refused.
        let (verdict, _) = gate(&format!("{first}{first}"));
        assert_eq!(verdict, Verdict::Rejected);
    }

    #[test]
    fn rejection_has_error_and_feedback() {
        let (d, out) = gate("[1,2]");
        assert_eq!(d, Verdict::Rejected);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["category"], "malformed_call");
        assert!(v["feedback"].as_str().unwrap().starts_with("[tool_error]"));
    }
}
