//! `run`'s answer: the tool result as the agent expects it, in the call's own envelope (a
//! tool message for OpenAI, a `tool_result` block for Anthropic, a `CallToolResult` for MCP,
//! Agent Zero's `tool_result`), holding what the command wrote, its exit status and what was
//! cut; a refused call gets the gate's feedback the same way, as an error.

use serde_json::{Value, json};

use super::process::{Captured, Ended};
use crate::gate::{Decision, tool_result_in};
use metagate_core::error::ToolError;
use metagate_wire::call::Shape;

/// A command that ran, and what `run` did around it.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// How it ended.
    pub ended: Ended,
    /// metagate's own files the command made, removed afterwards.
    pub swept: Vec<std::path::PathBuf>,
    /// What the operator is told on stderr.
    pub notes: Vec<String>,
    /// The time bound it ran under.
    pub timeout_secs: u64,
}

/// What a call's answer says, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// The command ran; its exit code (none when a signal or the time bound ended it).
    Ran(Option<i32>),
    /// The call was refused and nothing ran.
    Refused,
}

/// How the command ended, in words (also the outcome's error message).
pub fn ending(done: &Outcome) -> String {
    let e = &done.ended;
    if e.timed_out {
        format!(
            "killed after {} s, the time it may run ([run] timeout_secs)",
            done.timeout_secs
        )
    } else if let Some(code) = e.code {
        format!("exit status {code}")
    } else if let Some(signal) = e.signal {
        format!("ended by signal {signal}")
    } else {
        "ended".to_string()
    }
}

fn text_of(c: &Captured) -> String {
    String::from_utf8_lossy(&c.kept).into_owned()
}

/// The result's text: stdout, then stderr under a line of its own, then how it ended and what
/// was cut.
fn result_text(done: &Outcome) -> String {
    let e = &done.ended;
    let mut text = text_of(&e.stdout);
    if !e.stderr.kept.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&text_of(&e.stderr));
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("[{}]", ending(done)));
    for (name, c) in [("stdout", &e.stdout), ("stderr", &e.stderr)] {
        if c.cut() {
            text.push_str(&format!(
                "\n[{name} cut: the first {} of {} bytes kept]",
                c.kept.len(),
                c.total
            ));
        }
    }
    for name in &done.swept {
        text.push_str(&format!(
            "\n[{} is metagate's own file: the command may not make it, and it was removed]",
            name.display()
        ));
    }
    text
}

/// The structured form of the result, where an envelope has room for it (and `--report`).
fn details(done: &Outcome) -> Value {
    let e = &done.ended;
    json!({
        "exit_code": e.code,
        "signal": e.signal,
        "timed_out": e.timed_out,
        "duration_ms": e.took.as_millis() as u64,
        "stdout": text_of(&e.stdout),
        "stderr": text_of(&e.stderr),
        "stdout_bytes": e.stdout.total,
        "stderr_bytes": e.stderr.total,
        "stdout_cut": e.stdout.cut(),
        "stderr_cut": e.stderr.cut(),
        "removed": done.swept.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}

/// `text` as the result of the call `d` answers, an error when `is_error`.
fn in_envelope(d: Option<&Decision<'_>>, text: &str, is_error: bool, extra: Value) -> Value {
    let shape = d.and_then(|d| d.shape);
    let id = d
        .and_then(|d| d.call.as_ref())
        .and_then(|c| c.id())
        .unwrap_or(Value::Null);
    let tool = d.and_then(Decision::tool).unwrap_or_default();
    if let Some(mut v) = tool_result_in(shape, id, tool, text, is_error) {
        if shape == Some(Shape::Mcp) && !extra.is_null() {
            v["result"]["structuredContent"] = extra;
        }
        return v;
    }
    // Agent Zero (and the plain shapes): the tool's response as Agent Zero records it.
    let mut v = json!({ "tool_name": tool, "tool_result": text });
    if is_error {
        v["error"] = Value::Bool(true);
    }
    if !extra.is_null() {
        v["run"] = extra;
    }
    v
}

/// The answer to a call whose command ran.
pub fn ran(d: &Decision<'_>, done: &Outcome) -> (Vec<u8>, Answered) {
    let e = &done.ended;
    let failed = e.code != Some(0) || e.timed_out;
    let v = in_envelope(Some(d), &result_text(done), failed, details(done));
    let code = if e.timed_out { None } else { e.code };
    (to_line(&v), Answered::Ran(code))
}

/// The answer to a refused call: the gate's feedback as an error result.
pub fn refused(d: Option<&Decision<'_>>, error: &ToolError) -> (Vec<u8>, Answered) {
    let v = in_envelope(
        d,
        &error.feedback(),
        true,
        json!({ "error": error.to_json() }),
    );
    (to_line(&v), Answered::Refused)
}

fn to_line(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    metagate_wire::scan::write_value(v, &mut out);
    out
}
