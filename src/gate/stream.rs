//! Running the gate over input: one document, or a JSON Lines stream committed in groups.

use std::io::{self, BufReader, Read, Write};
use std::time::Instant;

use super::answer::{Answer, decide_document};
use super::commit::{Committed, Committer, unrecorded};
use super::decision::{malformed, too_large};
use super::render::{answer_notes, render, render_answer};
use super::{Decision, Gate, MAX_DOCUMENT, Options, Sink, Verdict};
use metagate_core::correct::Report;
use metagate_core::enforce::Context;
use metagate_core::policy::Policy;
use metagate_wire::lines::{read_line_capped, strip_newline};

/// Reads one whole document, refusing to buffer more than [`MAX_DOCUMENT`] bytes (and a
/// line end after them, which is not part of the call).
pub fn read_document(reader: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut input = Vec::new();
    reader
        .take(MAX_DOCUMENT as u64 + 3)
        .read_to_end(&mut input)?;
    Ok(input)
}

/// Counts of what a stream saw.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StreamStats {
    /// Lines read.
    pub lines: u64,
    passed: u64,
    corrected: u64,
    rejected: u64,
}

/// Output lines waiting for their decisions to be committed.
struct Group {
    out: Vec<u8>,
    lines: usize,
    notes: Vec<u8>,
    committer: Committer,
}

impl Group {
    fn new() -> Group {
        Group {
            out: Vec::with_capacity(64 * 1024),
            lines: 0,
            notes: Vec::new(),
            committer: Committer::default(),
        }
    }

    /// Commits the group's decisions, then writes its lines (see [`Group::settle`]).
    fn flush<W: Write, E: Write>(
        &mut self,
        policy: &Policy,
        options: &Options,
        sink: &mut dyn Sink,
        out: &mut W,
        err: &mut E,
    ) -> io::Result<()> {
        if self.lines == 0 {
            return Ok(());
        }
        self.settle(policy, options, sink, err);
        out.write_all(&self.out)
            .and_then(|()| out.flush())
            .map_err(|e| in_words(e, "cannot write the answers"))?;
        self.out.clear();
        self.lines = 0;
        Ok(())
    }

    /// Commits the group's decisions and writes its notes, leaving its lines as they are to
    /// go out, or, when the commit failed and the policy fails closed, each one a rejection.
    fn settle<E: Write>(
        &mut self,
        policy: &Policy,
        options: &Options,
        sink: &mut dyn Sink,
        err: &mut E,
    ) -> Committed {
        let committed = self.committer.commit(policy, sink, &mut |line| {
            let _ = writeln!(err, "{line}");
        });
        if committed == Committed::Refused {
            let rejected = Decision::rejected(b"", unrecorded(), Report::default());
            let mut line = Vec::new();
            render(&rejected, options, &mut line);
            line.push(b'\n');
            self.out.clear();
            for _ in 0..self.lines {
                self.out.extend_from_slice(&line);
            }
        }
        if !self.notes.is_empty() {
            // Diagnostics are best effort: a closed stderr must not stop the gate.
            let _ = err.write_all(&self.notes).and_then(|()| err.flush());
            self.notes.clear();
        }
        committed
    }
}

/// Microseconds since the last call (the first: since this was made), for each decision's
/// latency.
fn latency(clock: &dyn Fn() -> Instant) -> impl FnMut() -> u64 + '_ {
    let mut started = clock();
    move || {
        let now = clock();
        let took = now.saturating_duration_since(started).as_micros();
        started = now;
        u64::try_from(took).unwrap_or(u64::MAX)
    }
}

/// Decides one document, records it, and returns its output line (with the newline) and
/// verdict. A failed commit is handled as in a stream.
pub fn answer_one<E: Write>(
    gate: &Gate<'_>,
    input: &[u8],
    sink: &mut dyn Sink,
    err: &mut E,
    clock: &dyn Fn() -> Instant,
) -> io::Result<(Vec<u8>, Verdict)> {
    let (policy, options) = (gate.policy, &gate.options);
    let answer = decide_document(gate, input, sink, &mut latency(clock));
    let mut group = Group::new();
    reserve_for(&answer, &mut group.out);
    render_answer(&answer, options, &mut group.out);
    group.out.push(b'\n');
    group.lines = 1;
    answer_notes(&answer, None, options.quiet, &mut group.notes);
    let mut verdict = answer.verdict();
    // The answer borrows the input; the line is all that is kept from here on.
    drop(answer);
    if group.settle(policy, options, sink, err) == Committed::Refused {
        verdict = Verdict::Rejected;
    }
    // Taken, not copied: a call may be tens of megabytes.
    Ok((std::mem::take(&mut group.out), verdict))
}

/// Decides one document, records it and commits it (notes written on `err`), and returns the
/// answer itself, for a job that acts on the call (`run`). The verdict is `Rejected` when
/// the decision could not be recorded and the policy fails closed; the flag says that
/// happened.
pub(crate) fn decide_settled<'a, E: Write>(
    gate: &Gate<'_>,
    input: &'a [u8],
    sink: &mut dyn Sink,
    err: &mut E,
    clock: &dyn Fn() -> Instant,
) -> (Answer<'a>, Verdict, bool) {
    let (policy, options) = (gate.policy, &gate.options);
    let answer = decide_document(gate, input, sink, &mut latency(clock));
    let mut group = Group::new();
    group.lines = 1;
    answer_notes(&answer, None, options.quiet, &mut group.notes);
    let refused = group.settle(policy, options, sink, err) == Committed::Refused;
    let verdict = if refused {
        Verdict::Rejected
    } else {
        answer.verdict()
    };
    (answer, verdict, refused)
}

/// The `--jsonl` loop: one output line per input line, in order. Lines read in one go are
/// decided as a group; before metagate waits for more input the group's decisions are
/// committed to the sink and its lines written and flushed, so a coprocess waiting on its one
/// answer is never left waiting, and a fast producer pays neither a commit nor a flush per
/// line.
pub fn stream<R: Read, W: Write, E: Write>(
    gate: &Gate<'_>,
    reader: &mut BufReader<R>,
    out: &mut W,
    err: &mut E,
    sink: &mut dyn Sink,
    clock: &dyn Fn() -> Instant,
) -> io::Result<StreamStats> {
    stream_lines(gate, reader, out, err, sink, clock, false)
}

/// [`stream`] over recorded lines (`gate --jsonl --replay`): each line is
/// `{"call": …, "ts": …, "session": …, "caller": …}`, the call decided as if made then, in
/// that session, by that caller (each field but `call` optional: the flags' and the clock's
/// values stand in), so a recorded day replays through one process.
pub fn replay<R: Read, W: Write, E: Write>(
    gate: &Gate<'_>,
    reader: &mut BufReader<R>,
    out: &mut W,
    err: &mut E,
    sink: &mut dyn Sink,
    clock: &dyn Fn() -> Instant,
) -> io::Result<StreamStats> {
    stream_lines(gate, reader, out, err, sink, clock, true)
}

/// A replayed line: the call, and when, where and by whom it was made.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Replayed<'a> {
    #[serde(borrow)]
    call: &'a serde_json::value::RawValue,
    #[serde(default)]
    ts: Option<String>,
    #[serde(default)]
    session: Option<String>,
    #[serde(default)]
    caller: Option<String>,
}

/// The call of a replayed line and its context, or why the line is refused.
fn read_replayed<'a>(
    body: &'a [u8],
    context: &Context,
) -> Result<(&'a [u8], Option<i64>, Context), String> {
    let line: Replayed<'a> = serde_json::from_slice(body).map_err(|e| {
        format!("--replay reads {{\"call\": …, \"ts\", \"session\", \"caller\"}} per line: {e}")
    })?;
    let at_ms = match &line.ts {
        Some(ts) => Some(
            metagate_core::events::parse_time(ts)
                .map_err(|e| format!("--replay: \"ts\" {ts:?}: {e}"))?,
        ),
        None => None,
    };
    let context = Context {
        session: line.session.or_else(|| context.session.clone()),
        caller: line.caller.or_else(|| context.caller.clone()),
        intent: context.intent.clone(),
    };
    Ok((line.call.get().as_bytes(), at_ms, context))
}

#[allow(clippy::too_many_arguments)]
fn stream_lines<R: Read, W: Write, E: Write>(
    gate: &Gate<'_>,
    reader: &mut BufReader<R>,
    out: &mut W,
    err: &mut E,
    sink: &mut dyn Sink,
    clock: &dyn Fn() -> Instant,
    replayed: bool,
) -> io::Result<StreamStats> {
    let (policy, options) = (gate.policy, &gate.options);
    let mut stats = StreamStats::default();
    let mut line = Vec::with_capacity(4096);
    let mut group = Group::new();
    let timed = sink.timed();
    let mut started = clock();
    loop {
        if group.lines > 0 && memchr::memchr(b'\n', reader.buffer()).is_none() {
            group.flush(policy, options, sink, out, err)?;
        }
        line.clear();
        let n = read_line_capped(reader, &mut line, MAX_DOCUMENT)
            .map_err(|e| in_words(e, "cannot read the calls"))?;
        if timed && reader.buffer().is_empty() {
            // The wait for input is not the gate's latency.
            started = clock();
        }
        if n == 0 {
            break;
        }
        stats.lines += 1;
        let body = strip_newline(&line);
        // One clock reading per decision: a call's latency runs from the end of the one before.
        let mut latency = || {
            if !timed {
                return 0;
            }
            let now = clock();
            let took = now.saturating_duration_since(started).as_micros();
            started = now;
            u64::try_from(took).unwrap_or(u64::MAX)
        };
        let mut body = body;
        let mut line_context = None;
        let mut refusal = None;
        if replayed && body.len() <= MAX_DOCUMENT && !body.trim_ascii().is_empty() {
            match read_replayed(body, gate.context) {
                Ok((call, at_ms, context)) => {
                    sink.replay(at_ms, &context);
                    body = call;
                    line_context = Some(context);
                }
                Err(why) => refusal = Some(malformed(why)),
            }
        }
        let line_gate;
        let gate: &Gate<'_> = match &line_context {
            Some(context) => {
                line_gate = Gate { context, ..*gate };
                &line_gate
            }
            None => gate,
        };
        let refusal = if refusal.is_some() {
            refusal
        } else if body.len() > MAX_DOCUMENT {
            Some(too_large("line is longer than"))
        } else if body.trim_ascii().is_empty() {
            Some(malformed("empty line: expected one tool call"))
        } else {
            None
        };
        let answer = match refusal {
            Some(error) => {
                let d = Decision::rejected(body, error, Report::default());
                sink.record(policy, &d, latency());
                Answer::One(d)
            }
            None => decide_document(gate, body, sink, &mut latency),
        };
        match answer.verdict() {
            Verdict::Pass => stats.passed += 1,
            Verdict::Corrected => stats.corrected += 1,
            Verdict::Rejected => stats.rejected += 1,
        }
        reserve_for(&answer, &mut group.out);
        render_answer(&answer, options, &mut group.out);
        group.out.push(b'\n');
        group.lines += 1;
        answer_notes(&answer, Some(stats.lines), options.quiet, &mut group.notes);
        if group.out.len() >= 4 << 20 {
            group.flush(policy, options, sink, out, err)?;
        }
    }
    group.flush(policy, options, sink, out, err)?;
    Ok(stats)
}

/// Room for the line a decision goes out as, so that a call of tens of megabytes is not
/// copied into a buffer twice its size when its line end is added. A call goes out about as
/// long as it came (a rejection is short).
fn reserve_for(answer: &Answer<'_>, out: &mut Vec<u8>) {
    let len = match answer {
        Answer::One(d) if d.error.is_none() => d.input_len(),
        Answer::One(_) => return,
        Answer::Message(m) => m.document.len(),
    };
    out.reserve(len + 4096);
}

/// `e` saying which side of the stream failed; its kind is kept, so a closed stdout is still
/// told apart (and ends the program quietly).
fn in_words(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{NoSink, SinkError};
    use metagate_core::enforce::{Facts, NoFacts};
    use serde_json::Value;

    fn run(input: &str, policy: &Policy, sink: &mut dyn Sink) -> (StreamStats, Vec<Value>, String) {
        let mut reader = BufReader::new(input.as_bytes());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let gate = Gate::corrections_only(policy, Options::default());
        let stats = stream(&gate, &mut reader, &mut out, &mut err, sink, &Instant::now).unwrap();
        let lines = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (stats, lines, String::from_utf8(err).unwrap())
    }

    #[test]
    fn stream_answers_every_line_in_order() {
        let policy = Policy::builtin();
        let input = "{\"tool_name\":\"response\",\"tool_args\":{\"message\":\"a\"}}\nnot json\n\n{\"tool_name\":\"x\"}\r\n";
        let (stats, lines, err) = run(input, &policy, &mut NoSink::at(0));
        assert_eq!(lines.len(), 4);
        assert_eq!(
            stats,
            StreamStats {
                lines: 4,
                passed: 1,
                corrected: 1,
                rejected: 2
            }
        );
        assert_eq!(lines[0]["tool_args"]["text"], "a");
        assert_eq!(lines[1]["error"]["category"], "malformed_call");
        assert_eq!(lines[2]["error"]["category"], "malformed_call");
        assert_eq!(lines[3], serde_json::json!({"tool_name":"x"}));
        assert!(
            err.contains("line 1: response: argument \"message\" → \"text\" (arg_alias)"),
            "{err}"
        );
    }

    struct Broken(NoFacts);
    impl Sink for Broken {
        fn facts(&mut self) -> &mut dyn Facts {
            &mut self.0
        }
        fn now_ms(&self) -> i64 {
            0
        }
        fn record(&mut self, _: &Policy, _: &Decision<'_>, _: u64) {}
        fn commit(&mut self) -> Result<(), SinkError> {
            Err(SinkError("disk full".into()))
        }
    }

    #[test]
    fn a_failing_sink_fails_closed_or_open_as_the_policy_says() {
        let input = "{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"a\"}}\n".repeat(3);
        let closed = Policy::builtin();
        let (_, lines, err) = run(&input, &closed, &mut Broken(NoFacts));
        assert_eq!(lines.len(), 3);
        assert!(
            lines
                .iter()
                .all(|l| l["error"]["category"] == "server_error")
        );
        assert_eq!(err.matches("disk full").count(), 1, "reported once: {err}");
        // The operator reads why on stderr; the model is not told.
        assert!(lines.iter().all(|l| !l.to_string().contains("disk full")));
        let open = Policy::from_source(
            metagate_core::policy::Source {
                name: "p",
                text: "[gate]\non_internal_error = \"pass\"\n",
            },
            None,
        )
        .unwrap();
        let (_, lines, err) = run(&input, &open, &mut Broken(NoFacts));
        assert!(lines.iter().all(|l| l["tool_args"]["text"] == "a"));
        assert!(err.contains("pass unrecorded"));
    }
}
