//! A document's answer: one call's decision, or a message's, each decision handed to the sink
//! as it is made.

use super::message::{self, MessageAnswer};
use super::stages::{Redirect, decide_explained};
use super::{Decision, Gate, Sink, Verdict};

/// What the gate answers a document with. One per document, made and dropped in turn: the
/// size of a decision held in place costs nothing a box would save.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Answer<'a> {
    /// One call, or a document refused as a whole.
    One(Decision<'a>),
    /// Every call of a message, response or array.
    Message(MessageAnswer<'a>),
}

impl<'a> Answer<'a> {
    /// The worst verdict of the answer's calls.
    pub(crate) fn verdict(&self) -> Verdict {
        match self {
            Answer::One(d) => d.verdict,
            Answer::Message(m) => m.verdict(),
        }
    }

    /// The decisions, one per call, in document order.
    pub(crate) fn decisions(&self) -> impl Iterator<Item = &Decision<'a>> {
        let (one, placed) = match self {
            Answer::One(d) => (Some(d), &[][..]),
            Answer::Message(m) => (None, &m.calls[..]),
        };
        one.into_iter().chain(placed.iter().map(|c| &c.decision))
    }
}

/// Decides a document: one call, or every call of a whole assistant message, API response
/// or array of calls, each on its own. Each decision is handed to `sink` as soon as it is made
/// (so the calls of one message count toward the limits of the next), with the time
/// `latency` says it took.
pub(super) fn decide_document<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    sink: &mut dyn Sink,
    latency: &mut dyn FnMut() -> u64,
) -> Answer<'a> {
    let now = sink.now_ms();
    let mut redirect = Redirect::default();
    // Built straight into the answer, with why it is no call beside it rather than a
    // `Result` around it: each move of a decision is a copy of a few hundred bytes, on every
    // call.
    let answer = Answer::One(decide_explained(
        gate,
        input,
        sink.facts(),
        now,
        Some(&mut redirect),
    ));
    if let Some(not_a_call) = redirect.not_a_call {
        return message::decide_calls(gate, input, not_a_call, sink, latency);
    }
    if let Some(reading) = redirect.calls {
        return message::decide_text_calls(gate, input, reading, sink, latency);
    }
    if let Answer::One(d) = &answer {
        sink.record(gate.policy, d, latency());
    }
    answer
}
