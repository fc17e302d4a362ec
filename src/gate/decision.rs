//! What the gate decided about one call, and the rejection of a document that is no call.

use serde_json::Value;

use super::MAX_DOCUMENT;
use metagate_core::correct::Report;
use metagate_core::enforce::grants::GrantCheck;
use metagate_core::error::{Category, ToolError};
use metagate_wire::call::{Call, Shape};
use metagate_wire::correction::Correction;
use metagate_wire::dialects::{self, Found};
use metagate_wire::repair::Dialect;

/// A call read in a text dialect, answered in kind: the text goes out as it came, the call
/// written again in its dialect where it changed.
#[derive(Debug, Clone)]
pub(crate) struct InKind {
    pub(crate) dialect: &'static dialects::Dialect,
    /// Where the call stands in the decision's input, its id and form (its name and arguments
    /// are the call's).
    pub(crate) found: Found,
    /// `--emit` converts the call to JSON instead.
    pub(crate) emit: bool,
}

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

/// Everything the gate decided about one call. It borrows the input it was decided on.
#[derive(Debug, Clone)]
pub struct Decision<'a> {
    /// What happened to the call.
    pub verdict: Verdict,
    /// The envelope the call came in, when it could be read.
    pub(crate) shape: Option<Shape>,
    pub(super) dialect: Option<Dialect>,
    /// The call as decided (its arguments corrected where they were); on a rejection, the
    /// call as far as it could be read.
    pub(crate) call: Option<Call<'a>>,
    /// The shape the call goes out in.
    pub(super) target: Option<Shape>,
    pub(crate) corrections: Vec<Correction>,
    pub(crate) warnings: Vec<String>,
    /// The rejection, when it was rejected.
    pub error: Option<ToolError>,
    /// Nothing changed, no conversion was asked for, and the input is one line: it goes out
    /// byte for byte as it came.
    pub(super) unchanged: bool,
    /// Every stage's decision, when `--explain` asked for them.
    pub(super) explain: Vec<String>,
    /// What the grant check decided, for the audit trail.
    pub(super) grant_check: Option<GrantCheck>,
    /// The id of a call that could not be read, as its place in a message gave it; a call
    /// that was read carries its own (see [`Decision::call_id`]).
    pub(super) unread_id: Option<Value>,
    /// Refused because the document nests deeper than metagate reads: nothing is known of
    /// what it holds, not even whether it is a call.
    pub(crate) too_deep: bool,
    /// Read in a text dialect and answered in it.
    pub(crate) in_kind: Option<Box<InKind>>,
    pub(super) input: &'a [u8],
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
            in_kind: None,
            input,
        }
    }

    /// How long the input this was decided on is, in bytes.
    pub(super) fn input_len(&self) -> usize {
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
    pub(crate) fn call_id(&self) -> Option<Value> {
        match &self.call {
            Some(call) => call.id(),
            None => self.unread_id.clone(),
        }
    }

    /// The `:method` suffix of the call's name.
    pub(crate) fn method(&self) -> Option<&str> {
        self.call.as_ref().and_then(|c| c.method())
    }

    /// Writes the outgoing call (nothing when rejected): its JSON, or for a call read in a
    /// text dialect, the text it came in with the call written again in that dialect where it
    /// changed (byte for byte as it came where nothing did).
    pub(crate) fn write_call(&self, out: &mut Vec<u8>) {
        if self.error.is_some() {
            return;
        }
        match (&self.in_kind, &self.call) {
            (Some(k), Some(call)) if !k.emit => {
                let span = k.found.span.clone();
                out.extend_from_slice(&self.input[..span.start]);
                if self.verdict == Verdict::Pass {
                    out.extend_from_slice(&self.input[span.clone()]);
                } else {
                    let written = k.dialect.write(&k.found, &call.name, &call.args.to_map());
                    out.extend_from_slice(written.as_bytes());
                }
                out.extend_from_slice(&self.input[span.end..]);
            }
            _ => self.write_json(out),
        }
    }

    /// Writes the outgoing call's JSON (nothing when rejected), in the shape it goes out in.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
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

pub(crate) fn malformed(message: impl Into<String>) -> ToolError {
    malformed_in(message, None)
}

/// A document longer than [`MAX_DOCUMENT`]: `what` ("input is more than", "line is longer
/// than") and the bound, with a suggestion that names the bound, since what is wrong is the
/// size, not the form.
pub(crate) fn too_large(what: &str) -> ToolError {
    ToolError::new(
        Category::MalformedCall,
        format!(
            "{what} the {MAX_DOCUMENT} bytes ({} MiB) metagate reads as one call",
            MAX_DOCUMENT >> 20
        ),
    )
    .suggest(format!(
        "send one tool call of at most {} MiB: pass large contents by reference (a file path \
         or a URL the tool reads) rather than inline",
        MAX_DOCUMENT >> 20
    ))
}

/// A document nested deeper than the reader goes: `message` says where, the suggestion the
/// limit.
pub(crate) fn too_deep(message: impl Into<String>) -> ToolError {
    malformed(message).suggest(format!(
        "send the call with its objects and arrays nested at most {} levels deep",
        metagate_wire::repair::MAX_DEPTH
    ))
}

/// A document that cannot be read as a call; the suggestion shows a call in `shape`, the
/// envelope the model was writing when the gate could tell, else Agent Zero's.
pub(crate) fn malformed_in(message: impl Into<String>, shape: Option<Shape>) -> ToolError {
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
        Shape::LangChain => r#"{"name": "…", "args": {…}, "id": "…", "type": "tool_call"}"#,
    };
    ToolError::new(Category::MalformedCall, message).suggest(format!(
        "send exactly one tool call as a single JSON object, e.g. {example}"
    ))
}
