//! The `gate` job: bytes in, a verdict and the call (or a rejection) out.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use metagate_checks::path::{Fs, RealFs};
use metagate_core::correct::{self, Report};
use metagate_core::enforce::grants::GrantCheck;
use metagate_core::enforce::{CallToCheck, Checker, Facts, Inquiry, NoFacts, Scope};
use metagate_core::error::{Category, ToolError};
use metagate_core::policy::Policy;
use metagate_wire::call::{Call, NotACall, Shape, split_method};
use metagate_wire::correction::{Correction, Kind};
use metagate_wire::repair::{self, Dialect};

mod message;
mod sink;
mod stream;

pub(crate) use message::{Answer, tool_result_in};
pub use metagate_core::enforce::Context;
pub use sink::{TelemetrySink, decision_row};
pub use stream::{NoSink, Sink, SinkError, StreamStats, answer_one, read_document, stream};
pub(crate) use stream::{decide_settled, unrecorded_error};

/// The largest document `gate` reads; anything longer is rejected, not buffered without end.
pub const MAX_DOCUMENT: usize = metagate_wire::lines::MAX_LINE;

/// What the gate did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The call goes through as sent.
    Pass,
    /// The call goes through corrected.
    Corrected,
    /// The call is refused.
    Rejected,
}

impl Verdict {
    /// The name written in reports and telemetry.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Corrected => "corrected",
            Verdict::Rejected => "rejected",
        }
    }
}

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

/// Everything a run of the gate decides with.
pub struct Run<'a> {
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

impl<'a> Run<'a> {
    /// A run with the correction rules only, no policy checks.
    pub(crate) fn corrections_only(policy: &'a Policy, options: Options) -> Run<'a> {
        static NO_CONTEXT: Context = Context {
            session: None,
            caller: None,
            intent: None,
        };
        Run {
            policy,
            options,
            checker: None,
            context: &NO_CONTEXT,
            fs: &RealFs,
            scope: Scope { runtime: false },
        }
    }
}

/// Everything the gate decided about one call. It borrows the input it was decided on.
#[derive(Debug, Clone)]
pub struct Decision<'a> {
    /// What happened to the call.
    pub verdict: Verdict,
    /// The envelope the call came in, when it could be read.
    pub(crate) shape: Option<Shape>,
    dialect: Option<Dialect>,
    /// The call as decided (its arguments corrected where they were); on a rejection, the
    /// call as far as it could be read.
    pub(crate) call: Option<Call<'a>>,
    /// The shape the call goes out in.
    target: Option<Shape>,
    pub(crate) corrections: Vec<Correction>,
    pub(crate) warnings: Vec<String>,
    /// The rejection, when it was rejected.
    pub error: Option<ToolError>,
    /// Nothing changed, no conversion was asked for, and the input is one line: it goes out
    /// byte for byte as it came.
    unchanged: bool,
    /// Every stage's decision, when `--explain` asked for them.
    explain: Vec<String>,
    /// What the grant check decided, for the audit trail.
    grant_check: Option<GrantCheck>,
    /// The id of a call that could not be read, as its place in a message gave it; a call
    /// that was read carries its own (see [`Decision::call_id`]).
    unread_id: Option<Value>,
    /// Refused because the document nests deeper than metagate reads: nothing is known of
    /// what it holds, not even whether it is a call.
    pub(crate) too_deep: bool,
    input: &'a [u8],
}

impl<'a> Decision<'a> {
    pub(crate) fn rejected(input: &'a [u8], error: ToolError, report: Report) -> Decision<'a> {
        Decision {
            verdict: Verdict::Rejected,
            shape: None,
            dialect: None,
            call: None,
            target: None,
            corrections: report.corrections,
            warnings: report.warnings,
            error: Some(error),
            unchanged: false,
            explain: Vec::new(),
            grant_check: None,
            unread_id: None,
            too_deep: false,
            input,
        }
    }

    /// How long the input this was decided on is, in bytes.
    fn input_len(&self) -> usize {
        self.input.len()
    }

    /// The tool part of the call's name (or the tool a rejection names).
    pub(crate) fn tool(&self) -> Option<&str> {
        match &self.call {
            Some(call) => Some(call.tool()),
            None => self.error.as_ref().and_then(|e| e.tool.as_deref()),
        }
    }

    /// The call's id as its document gave it (an OpenAI or Anthropic id, a Responses
    /// `call_id`, an MCP request id), read only when asked: most runs never need it.
    fn call_id(&self) -> Option<Value> {
        match &self.call {
            Some(call) => call.id(),
            None => self.unread_id.clone(),
        }
    }

    /// The `:method` suffix of the call's name.
    pub(crate) fn method(&self) -> Option<&str> {
        self.call.as_ref().and_then(|c| c.method())
    }

    /// Writes the outgoing call's JSON (nothing when rejected).
    pub(crate) fn write_call(&self, out: &mut Vec<u8>) {
        if self.error.is_some() {
            return;
        }
        if self.unchanged {
            out.extend_from_slice(self.input.trim_ascii());
        } else if let (Some(call), Some(target)) = (&self.call, self.target) {
            call.write_as(target, out);
        }
    }
}

/// Decides one document with the correction rules only (no policy checks).
pub fn decide<'a>(policy: &Policy, input: &'a [u8], options: &Options) -> Decision<'a> {
    decide_with(
        &Run::corrections_only(policy, *options),
        input,
        &mut NoFacts,
        0,
    )
}

/// Decides one call: read it, correct it, check it against the policy.
/// `facts` answers what the checks ask of the world as of `now_ms`.
pub fn decide_with<'a>(
    run: &Run<'_>,
    input: &'a [u8],
    facts: &mut dyn Facts,
    now_ms: i64,
) -> Decision<'a> {
    decide_inner(run, input, facts, now_ms, None)
}

/// Decides a document: one call, or every call of a whole assistant message, API response
/// or array of calls, each on its own. Each decision is handed to `sink` as soon as it is made
/// (so the calls of one message count toward the limits of the next), with the time
/// `latency` says it took.
fn decide_document<'a>(
    run: &Run<'_>,
    input: &'a [u8],
    sink: &mut dyn Sink,
    latency: &mut dyn FnMut() -> u64,
) -> Answer<'a> {
    let now = sink.now_ms();
    let mut not_a_call = None;
    // Built straight into the answer, with why it is no call beside it rather than a
    // `Result` around it: each move of a decision is a copy of a few hundred bytes, on every
    // call.
    let answer = Answer::One(decide_inner(
        run,
        input,
        sink.facts(),
        now,
        Some(&mut not_a_call),
    ));
    if let Some(not_a_call) = not_a_call {
        return message::decide(run, input, not_a_call, sink, latency);
    }
    if let Answer::One(d) = &answer {
        sink.record(run.policy, d, latency());
    }
    answer
}

fn decide_inner<'a>(
    run: &Run<'_>,
    input: &'a [u8],
    facts: &mut dyn Facts,
    now_ms: i64,
    not_a_call: Option<&mut Option<NotACall>>,
) -> Decision<'a> {
    let mut explain = run.options.explain.then(Vec::new);
    let mut d = decide_call(run, input, facts, now_ms, &mut explain, not_a_call);
    if let Some(mut lines) = explain {
        lines.push(format!("verdict: {}", d.verdict.as_str()));
        d.explain = lines;
    }
    d
}

/// The decision on one call; when `containers` asks for them, the reason strict JSON that
/// names no envelope is not a call, for the caller to read it as a message.
// Inlined into its one caller so that the decision is built where it is returned, not
// copied there.
#[inline(always)]
fn decide_call<'a>(
    run: &Run<'_>,
    input: &'a [u8],
    facts: &mut dyn Facts,
    now_ms: i64,
    explain: &mut Option<Vec<String>>,
    not_a_call: Option<&mut Option<NotACall>>,
) -> Decision<'a> {
    let policy = run.policy;
    let options = &run.options;
    let mut report = Report::default();
    if input.trim_ascii_end().len() > MAX_DOCUMENT {
        // The reader stops one byte past the limit: the true size is not known, only that.
        let e = malformed(format!(
            "input is more than the {MAX_DOCUMENT} bytes metagate reads as one call"
        ));
        return Decision::rejected(input, e, report);
    }
    // Fast path: strict JSON, read without building values for fields the gate does not own.
    let strict = Call::from_json(input, &mut report.corrections);
    let fast = matches!(strict, Ok(Some(_)));
    let (mut call, dialect, texts) = match strict {
        Ok(Some(call)) => (call, None, Vec::new()),
        // Strict JSON naming no envelope may hold calls some other way (a message, a
        // response, an array): when asked, the caller reads it so, or refuses it as this.
        Err(e) if e.holds_no_envelope && not_a_call.is_some() => {
            let error = malformed_in(e.message.clone(), e.shape);
            if let Some(slot) = not_a_call {
                *slot = Some(e);
            }
            return Decision::rejected(input, error, report);
        }
        Err(e) => {
            let error = malformed_in(e.message, e.shape);
            return Decision::rejected(input, error, report);
        }
        Ok(None) => {
            let parsed = match repair::parse(input) {
                Ok(p) => p,
                Err(e) => {
                    let mut d = Decision::rejected(input, malformed(e.to_string()), report);
                    d.too_deep = e.too_deep;
                    return d;
                }
            };
            if parsed.more_calls > 0 {
                // One reading of one call would drop the rest, which the agent then never
                // runs while the model believes it did.
                let n = parsed.more_calls + 1;
                let e = malformed(format!(
                    "{n} calls came back to back, and one document is read as one call: send \
                     them one at a time, or together in a JSON array (each one is checked)"
                ));
                return Decision::rejected(input, e, report);
            }
            if parsed.repairs.is_empty() && parsed.dialect.is_none() && !parsed.warnings.is_empty()
            {
                // Text after the call was dropped: that changed the input too.
                report.corrections.push(Correction::noted(
                    Kind::Repair,
                    "kept the first JSON object and dropped what followed it",
                ));
            }
            for note in parsed.repairs {
                report
                    .corrections
                    .push(Correction::noted(Kind::Repair, note));
            }
            report.warnings.extend(parsed.warnings);
            if let Some(d) = parsed.dialect {
                report.corrections.push(Correction::noted(
                    Kind::Envelope,
                    format!("read the {} text dialect", dialect_label(d)),
                ));
            }
            match Call::from_value(parsed.value, &mut report.corrections) {
                Ok(c) => (c, parsed.dialect, parsed.texts),
                Err(e) => {
                    let error = malformed_in(e.message, e.shape);
                    return Decision::rejected(input, error, report);
                }
            }
        }
    };
    let shape = call.shape;
    // Spaces, line breaks and controls around a name are no part of it, and agents that trim
    // names (Python's `.strip()`) would run the tool it names: read it as that name.
    let edge = |c: char| c.is_whitespace() || c.is_control();
    let plain_ends = |b: &[u8]| {
        b.first().is_some_and(u8::is_ascii_graphic) && b.last().is_some_and(u8::is_ascii_graphic)
    };
    if !plain_ends(call.name.as_bytes())
        && (call.name.starts_with(edge) || call.name.ends_with(edge))
    {
        let trimmed = call.name.trim_matches(edge).to_string();
        let mut fix = Correction::noted(
            Kind::Envelope,
            "removed the spaces and control characters around the tool name",
        );
        fix.from = Value::String(call.name.to_string());
        fix.to = Value::String(trimmed.clone());
        report.corrections.push(fix);
        call.rename(trimmed);
    }
    // A name the policy does not know but that means one tool it does, spaces, case and
    // separators aside: that tool, or it would pass unchecked (and run, for an agent that
    // trims names or finds its tools on a case-insensitive file system).
    let (mut tool, mut method) = split_method(&call.name);
    let mut found = policy.tool(tool);
    if found.is_none()
        && let Some(known) = policy.tool_named_like(tool)
    {
        found = policy.tool(known);
        let renamed = match method {
            Some(m) => format!("{known}:{m}"),
            None => known.to_string(),
        };
        let mut fix = Correction::noted(
            Kind::Envelope,
            format!("read the tool name {tool:?} as {known:?}"),
        );
        fix.from = Value::String(tool.to_string());
        fix.to = Value::String(known.to_string());
        report.corrections.push(fix);
        call.rename(renamed);
        (tool, method) = split_method(&call.name);
    }
    if let Some(lines) = explain.as_mut() {
        let how = dialect.map_or_else(String::new, |d| {
            format!(" from the {} text dialect", dialect_label(d))
        });
        lines.push(format!("envelope: {}{how}, tool {tool}", shape.as_str()));
    }
    if !texts.is_empty() {
        let kept = correct::keep_param_texts(policy, tool, &mut call.args, texts);
        if let Some(lines) = explain.as_mut() {
            lines.extend(kept.iter().map(|name| {
                format!("envelope: <parameter> {name:?} kept as text (a string argument)")
            }));
        }
    }
    let mut outcome = correct::run_for(policy, tool, found, method, &mut call.args, &mut report);
    if let Some(lines) = explain.as_mut() {
        lines.extend(
            report
                .corrections
                .iter()
                .map(|c| format!("correction: {c}")),
        );
        lines.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
        if let Err(e) = &outcome {
            lines.push(format!(
                "corrections: rejected ({}): {}",
                e.category, e.message
            ));
        }
    }
    let mut grant_check = None;
    if outcome.is_ok()
        && let Some(checker) = run.checker
    {
        let mut inquiry = Inquiry {
            facts,
            fs: run.fs,
            now_ms,
            scope: run.scope,
            explain,
            grant_check: None,
        };
        let to_check = CallToCheck {
            tool,
            args: &call.args,
            context: run.context,
        };
        outcome = checker.check(policy, &to_check, &mut inquiry);
        grant_check = inquiry.grant_check;
    }
    if let Err(error) = outcome {
        let mut d = Decision::rejected(input, *error, report);
        d.shape = Some(shape);
        d.dialect = dialect;
        d.call = Some(call);
        d.grant_check = grant_check;
        return d;
    }
    let target = options
        .emit
        .or(dialect.map(|_| Shape::AgentZero))
        .unwrap_or(shape);
    let verdict = if report.corrections.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Corrected
    };
    // Only a call read strictly can go out as it came: anything read leniently is rewritten.
    let unchanged = fast
        && verdict == Verdict::Pass
        && target == shape
        // A raw CR inside is a line break to universal-newline readers: rewritten compactly.
        && memchr::memchr2(b'\n', b'\r', input.trim_ascii()).is_none();
    Decision {
        verdict,
        shape: Some(shape),
        dialect,
        call: Some(call),
        target: Some(target),
        corrections: report.corrections,
        warnings: report.warnings,
        error: None,
        unchanged,
        explain: Vec::new(),
        grant_check,
        unread_id: None,
        too_deep: false,
        input,
    }
}

fn dialect_label(d: Dialect) -> &'static str {
    match d {
        Dialect::FunctionCalls => "<function_calls>",
        Dialect::InvokeToolArgs => "<invoke><tool_args>",
        Dialect::ToolCallTag => "<tool_call>",
    }
}

pub(crate) fn malformed(message: impl Into<String>) -> ToolError {
    malformed_in(message, None)
}

/// A document that cannot be read as a call; the suggestion shows a call in `shape`, the
/// envelope the model was writing when the gate could tell, else Agent Zero's.
fn malformed_in(message: impl Into<String>, shape: Option<Shape>) -> ToolError {
    let example = match shape.unwrap_or(Shape::AgentZero) {
        Shape::AgentZero => r#"{"tool_name": "…", "tool_args": {…}}"#,
        Shape::OpenAiChat => {
            r#"{"id": "…", "type": "function", "function": {"name": "…", "arguments": "{…}"}} with `arguments` one complete JSON object encoded as a string"#
        }
        Shape::OpenAiResponses => {
            r#"{"type": "function_call", "call_id": "…", "name": "…", "arguments": "{…}"} with `arguments` one complete JSON object encoded as a string"#
        }
        Shape::Anthropic => r#"{"type": "tool_use", "id": "…", "name": "…", "input": {…}}"#,
        Shape::Mcp => {
            r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "…", "arguments": {…}}}"#
        }
        Shape::Gemini => r#"{"functionCall": {"name": "…", "args": {…}}}"#,
        Shape::Plain => r#"{"name": "…", "arguments": {…}}"#,
        Shape::Llama => r#"{"name": "…", "parameters": {…}}"#,
    };
    ToolError::new(Category::MalformedCall, message).suggest(format!(
        "send exactly one tool call as a single JSON object, e.g. {example}"
    ))
}

/// Writes the output line for a decision (without the newline).
pub fn render(decision: &Decision<'_>, options: &Options, out: &mut Vec<u8>) {
    if options.report {
        let mut call_json = Vec::new();
        decision.write_call(&mut call_json);
        let call_text = std::str::from_utf8(&call_json).expect("the gate writes UTF-8");
        let call = (!call_json.is_empty()).then_some(call_text);
        let doc = report_doc(decision, call);
        serde_json::to_writer(&mut *out, &doc).expect("writing to a Vec cannot fail");
        return;
    }
    match &decision.error {
        Some(error) => error.write_rejection(out),
        None => decision.write_call(out),
    }
}

/// Writes a document's answer: a call's, or a message's (without the newline).
fn render_answer(answer: &Answer<'_>, options: &Options, out: &mut Vec<u8>) {
    match answer {
        Answer::One(d) => render(d, options, out),
        Answer::Message(m) => m.render(options, out),
    }
}

/// The `--report` envelope of a decision; `call` is the call as written (none when refused).
fn report_doc<'d>(decision: &'d Decision<'_>, call: Option<&'d str>) -> ReportDoc<'d> {
    ReportDoc {
        verdict: decision.verdict.as_str(),
        tool: decision.tool(),
        method: decision.method(),
        shape: decision.shape.map(Shape::as_str),
        call: call.map(|text| {
            serde_json::from_str::<&RawValue>(text).expect("the gate writes valid JSON")
        }),
        corrections: decision
            .corrections
            .iter()
            .map(Correction::to_json)
            .collect(),
        warnings: &decision.warnings,
        error: decision.error.as_ref().map(ToolError::to_json),
        feedback: decision.error.as_ref().map(ToolError::feedback),
    }
}

/// The `--report` envelope (DESIGN.md §2.2).
#[derive(Serialize)]
struct ReportDoc<'a> {
    verdict: &'a str,
    tool: Option<&'a str>,
    method: Option<&'a str>,
    shape: Option<&'a str>,
    call: Option<&'a RawValue>,
    corrections: Vec<Value>,
    warnings: &'a [String],
    error: Option<Value>,
    feedback: Option<String>,
}

/// The stderr lines a decision produces: one per correction and warning, and one for a
/// rejection. `line` is the input line number in a stream.
pub(crate) fn notes(decision: &Decision<'_>, line: Option<u64>, out: &mut Vec<u8>) {
    let place = line.map(|n| format!("line {n}: ")).unwrap_or_default();
    notes_at(decision, &place, out);
}

/// The `--explain` lines of a decision.
pub(crate) fn explain_lines(decision: &Decision<'_>, line: Option<u64>, out: &mut Vec<u8>) {
    let place = line.map(|n| format!("line {n}: ")).unwrap_or_default();
    explain_at(decision, &place, out);
}

/// The stderr lines of a document's answer: each call's notes (unless `quiet`) and
/// `--explain` lines, the calls of a message each named by their place in it.
fn answer_notes(answer: &Answer<'_>, line: Option<u64>, quiet: bool, out: &mut Vec<u8>) {
    let says_nothing = |d: &Decision<'_>| {
        d.explain.is_empty()
            && (quiet || (d.corrections.is_empty() && d.warnings.is_empty() && d.error.is_none()))
    };
    if answer.decisions().all(says_nothing) {
        return;
    }
    let place = line.map(|n| format!("line {n}: ")).unwrap_or_default();
    match answer {
        Answer::One(d) => {
            if !quiet {
                notes_at(d, &place, out);
            }
            explain_at(d, &place, out);
        }
        Answer::Message(m) => {
            for (i, c) in m.calls.iter().enumerate() {
                let place = format!("{place}call {}: ", i + 1);
                if !quiet {
                    notes_at(&c.decision, &place, out);
                }
                explain_at(&c.decision, &place, out);
            }
        }
    }
}

fn explain_at(decision: &Decision<'_>, place: &str, out: &mut Vec<u8>) {
    for l in &decision.explain {
        let _ = writeln!(
            out,
            "metagate: explain: {place}{}",
            metagate_wire::display::one_line(l)
        );
    }
}

fn notes_at(decision: &Decision<'_>, place: &str, out: &mut Vec<u8>) {
    let tool = decision
        .tool()
        .map(|t| format!("{t}: "))
        .unwrap_or_default();
    // Names and values are the model's: a line break in one would forge a line of its own,
    // an escape sequence would reach the terminal. Each note goes out as one safe line.
    let mut say = |text: std::fmt::Arguments<'_>| {
        let text = text.to_string();
        let _ = writeln!(out, "{}", metagate_wire::display::one_line(&text));
    };
    // A rejected call's corrections never take effect: only the rejection is news.
    if decision.error.is_none() {
        for c in &decision.corrections {
            say(format_args!("metagate: {place}{tool}{c}"));
        }
    }
    for w in &decision.warnings {
        say(format_args!("metagate: warning: {place}{tool}{w}"));
    }
    if let Some(e) = &decision.error {
        say(format_args!(
            "metagate: {place}{tool}rejected ({}): {}",
            e.category, e.message
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(input: &str) -> (Verdict, String) {
        let policy = Policy::builtin();
        let options = Options::default();
        let d = decide(&policy, input.as_bytes(), &options);
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
