//! Running the gate over input: one document, or a JSON Lines stream committed in groups.

use std::io::{self, BufReader, Read, Write};
use std::time::Instant;

use super::{
    Answer, Decision, MAX_DOCUMENT, Options, Run, Verdict, answer_notes, decide_document,
    malformed, render, render_answer,
};
use metagate_core::correct::Report;
use metagate_core::enforce::{Facts, NoFacts};
use metagate_core::error::{Category, ToolError};
use metagate_core::policy::{FailMode, Policy};
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

/// Why a sink could not make its decisions durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkError(pub(crate) String);

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Receives every decision before its output line is written, and tells the policy checks
/// what it knows (counts, prerequisites).
pub trait Sink {
    /// What the policy checks may ask.
    fn facts(&mut self) -> &mut dyn Facts;
    /// Milliseconds since the epoch, for the policy checks of the next call.
    fn now_ms(&self) -> i64;
    /// Whether [`Sink::record`] wants each line's latency (reading the clock costs a little).
    fn timed(&self) -> bool {
        true
    }
    /// Called once per decided line, in order, with the policy it was decided under.
    fn record(&mut self, policy: &Policy, decision: &Decision<'_>, latency_us: u64);
    /// Makes everything recorded so far durable; called before the lines are written.
    fn commit(&mut self) -> Result<(), SinkError>;
    /// Why the checks' questions failed since the last call (the checks' rejections only say
    /// that they did), for the operator's stderr.
    fn take_failures(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A sink that keeps nothing (`--no-telemetry`); limits and prerequisites cannot be counted.
pub struct NoSink {
    facts: NoFacts,
    now_ms: i64,
}

impl NoSink {
    /// A sink for a run that started at `now_ms`.
    pub fn at(now_ms: i64) -> NoSink {
        NoSink {
            facts: NoFacts,
            now_ms,
        }
    }
}

impl Sink for NoSink {
    fn facts(&mut self) -> &mut dyn Facts {
        &mut self.facts
    }
    fn now_ms(&self) -> i64 {
        self.now_ms
    }
    fn timed(&self) -> bool {
        false
    }
    fn record(&mut self, _: &Policy, _: &Decision<'_>, _: u64) {}
    fn commit(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}

/// Output lines waiting for their decisions to be committed.
struct Group {
    out: Vec<u8>,
    lines: usize,
    notes: Vec<u8>,
    /// The last sink failure reported, so a failing store is reported once, not per group.
    last_failure: Option<String>,
}

impl Group {
    fn new() -> Group {
        Group {
            out: Vec::with_capacity(64 * 1024),
            lines: 0,
            notes: Vec::new(),
            last_failure: None,
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
    /// go out. When the commit fails, the policy's `on_internal_error` says whether the lines
    /// go out as decided (`pass`) or each becomes a rejection (`reject`, the default: fail
    /// closed).
    fn settle<E: Write>(
        &mut self,
        policy: &Policy,
        options: &Options,
        sink: &mut dyn Sink,
        err: &mut E,
    ) {
        if let Err(failure) = sink.commit() {
            let fail_closed = policy.gate.on_internal_error == FailMode::Reject;
            if self.last_failure.as_deref() != Some(&failure.0) {
                let what = if fail_closed {
                    "calls are rejected until it works (on_internal_error = \"reject\")"
                } else {
                    "calls pass unrecorded (on_internal_error = \"pass\")"
                };
                let _ = writeln!(err, "metagate: error: telemetry: {failure}; {what}");
                self.last_failure = Some(failure.0.clone());
            }
            if fail_closed {
                let error = unrecorded();
                let rejected = Decision::rejected(b"", error, Report::default());
                let mut line = Vec::new();
                render(&rejected, options, &mut line);
                line.push(b'\n');
                self.out.clear();
                for _ in 0..self.lines {
                    self.out.extend_from_slice(&line);
                }
            }
        } else {
            self.last_failure = None;
        }
        for failure in sink.take_failures() {
            let _ = writeln!(
                err,
                "metagate: error: telemetry: {failure}; the checks that read the store could not run"
            );
        }
        if !self.notes.is_empty() {
            // Diagnostics are best effort: a closed stderr must not stop the gate.
            let _ = err.write_all(&self.notes).and_then(|()| err.flush());
            self.notes.clear();
        }
    }
}

/// The rejection a call gets when its decision could not be recorded and the policy fails
/// closed. Why is the operator's to read, on stderr: the model is never shown the store's
/// path or its state.
fn unrecorded() -> ToolError {
    ToolError::new(
        Category::ServerError,
        "metagate could not record this decision, and its policy fails closed",
    )
    .suggest("Try again later; if it keeps failing, the operator must look at metagate's telemetry store")
}

/// Decides one document, records it, and returns its output line (with the newline) and
/// verdict. A failed commit is handled as in a stream.
pub fn answer_one<E: Write>(
    run: &Run<'_>,
    input: &[u8],
    sink: &mut dyn Sink,
    err: &mut E,
    clock: &dyn Fn() -> Instant,
) -> io::Result<(Vec<u8>, Verdict)> {
    let (policy, options) = (run.policy, &run.options);
    let mut started = clock();
    let mut latency = || {
        let now = clock();
        let took = now.saturating_duration_since(started).as_micros();
        started = now;
        u64::try_from(took).unwrap_or(u64::MAX)
    };
    let answer = decide_document(run, input, sink, &mut latency);
    let mut group = Group::new();
    reserve_for(&answer, &mut group.out);
    render_answer(&answer, options, &mut group.out);
    group.out.push(b'\n');
    group.lines = 1;
    answer_notes(&answer, None, options.quiet, &mut group.notes);
    let mut verdict = answer.verdict();
    // The answer borrows the input; the line is all that is kept from here on.
    drop(answer);
    // Taken, not copied: a call may be tens of megabytes.
    group.settle(policy, options, sink, err);
    if group.last_failure.is_some() && policy.gate.on_internal_error == FailMode::Reject {
        verdict = Verdict::Rejected;
    }
    Ok((std::mem::take(&mut group.out), verdict))
}

/// Decides one document, records it and commits it (notes written on `err`), and returns the
/// answer itself, for a job that acts on the call (`run`). The verdict is `Rejected` when
/// the decision could not be recorded and the policy fails closed; the flag says that
/// happened.
pub(crate) fn decide_settled<'a, E: Write>(
    run: &Run<'_>,
    input: &'a [u8],
    sink: &mut dyn Sink,
    err: &mut E,
    clock: &dyn Fn() -> Instant,
) -> (Answer<'a>, Verdict, bool) {
    let (policy, options) = (run.policy, &run.options);
    let mut started = clock();
    let mut latency = || {
        let now = clock();
        let took = now.saturating_duration_since(started).as_micros();
        started = now;
        u64::try_from(took).unwrap_or(u64::MAX)
    };
    let answer = decide_document(run, input, sink, &mut latency);
    let mut group = Group::new();
    group.lines = 1;
    answer_notes(&answer, None, options.quiet, &mut group.notes);
    group.settle(policy, options, sink, err);
    let unrecorded =
        group.last_failure.is_some() && policy.gate.on_internal_error == FailMode::Reject;
    let verdict = if unrecorded {
        Verdict::Rejected
    } else {
        answer.verdict()
    };
    (answer, verdict, unrecorded)
}

/// The rejection of a call whose decision could not be recorded (see [`decide_settled`]).
pub(crate) fn unrecorded_error() -> ToolError {
    unrecorded()
}

/// The `--jsonl` loop: one output line per input line, in order. Lines read in one go are
/// decided as a group; before metagate waits for more input the group's decisions are
/// committed to the sink and its lines written and flushed, so a coprocess waiting on its one
/// answer is never left waiting, and a fast producer pays neither a commit nor a flush per
/// line.
pub fn stream<R: Read, W: Write, E: Write>(
    run: &Run<'_>,
    reader: &mut BufReader<R>,
    out: &mut W,
    err: &mut E,
    sink: &mut dyn Sink,
    clock: &dyn Fn() -> Instant,
) -> io::Result<StreamStats> {
    let (policy, options) = (run.policy, &run.options);
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
        let refusal = if body.len() > MAX_DOCUMENT {
            Some(format!(
                "line is longer than the {MAX_DOCUMENT} bytes metagate reads as one call"
            ))
        } else if body.trim_ascii().is_empty() {
            Some("empty line: expected one tool call".to_string())
        } else {
            None
        };
        let answer = match refusal {
            Some(message) => {
                let d = Decision::rejected(body, malformed(message), Report::default());
                sink.record(policy, &d, latency());
                Answer::One(d)
            }
            None => decide_document(run, body, sink, &mut latency),
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
    use serde_json::Value;

    fn run(input: &str, policy: &Policy, sink: &mut dyn Sink) -> (StreamStats, Vec<Value>, String) {
        let mut reader = BufReader::new(input.as_bytes());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let run = Run::corrections_only(policy, Options::default());
        let stats = stream(&run, &mut reader, &mut out, &mut err, sink, &Instant::now).unwrap();
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
