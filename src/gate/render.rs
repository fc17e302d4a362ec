//! What a decision becomes: the output line (the call in its envelope, the rejection, or the
//! `--report` envelope) and the stderr notes.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::answer::Answer;
use super::{Decision, Options};
use metagate_core::error::ToolError;
use metagate_wire::call::Shape;
use metagate_wire::correction::Correction;

/// Writes the output line for a decision (without the newline).
pub fn render(decision: &Decision<'_>, options: &Options, out: &mut Vec<u8>) {
    if options.report {
        let mut call_json = Vec::new();
        decision.write_json(&mut call_json);
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
pub(super) fn render_answer(answer: &Answer<'_>, options: &Options, out: &mut Vec<u8>) {
    match answer {
        Answer::One(d) => render(d, options, out),
        Answer::Message(m) => m.render(options, out),
    }
}

/// The `--report` envelope of a decision; `call` is the call as written (none when refused).
pub(super) fn report_doc<'d>(decision: &'d Decision<'_>, call: Option<&'d str>) -> ReportDoc<'d> {
    ReportDoc {
        verdict: decision.verdict.as_str(),
        tool: decision.tool(),
        method: decision.method(),
        shape: match &decision.in_kind {
            Some(k) => Some(k.dialect.name),
            None => decision.shape.map(Shape::as_str),
        },
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

/// The `--report` envelope: `verdict`, `tool`, `method`, `shape`, `call`, `corrections`,
/// `warnings`, `error`, `feedback` (docs/gate.md, "Output").
#[derive(Serialize)]
pub(super) struct ReportDoc<'a> {
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
pub(super) fn answer_notes(answer: &Answer<'_>, line: Option<u64>, quiet: bool, out: &mut Vec<u8>) {
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
        if let Some(text) = &e.operator {
            say(format_args!(
                "metagate: {place}{tool}an operator can allow it with: {text}"
            ));
        }
    }
}
