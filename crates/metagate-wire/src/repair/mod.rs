//! Lenient recovery of exactly one JSON object from the text a (small, local)
//! LLM emitted as a tool call.
//!
//! [`parse`] first tries strict JSON. Only when that fails does it run a
//! hand-written recursive-descent reader that tolerates the usual damage
//! (code fences, prose, comments, single quotes, unquoted keys, trailing
//! commas, Python literals, doubled braces, raw control characters, several
//! objects back to back, output cut off between complete values) and reports
//! every repair it made. It also reads three text dialects of tool calls
//! (`<function_calls>`/`<invoke>`/`<parameter>`, `<invoke>`/`<tool_args>`,
//! and `<tool_call>`).
//!
//! Depends on `std` and `serde_json` (with `preserve_order` and
//! `arbitrary_precision`) only.
//!
//! Repair sentences (`N` is a count; singular forms for 1):
//! "replaced invalid UTF-8", "removed a byte-order mark",
//! "removed a markdown code fence", "ignored text before the object",
//! "ignored text after the object", "unwrapped a doubled root `{{ … }}`",
//! "removed N comments", "converted N single-quoted strings to double quotes",
//! "converted N backtick strings to double quotes", "quoted N unquoted keys",
//! "removed N trailing commas", "replaced Python literal True with true"
//! (also False/false, None/null; " (N times)" appended when N > 1),
//! "replaced JavaScript literal undefined with null",
//! "escaped N raw control characters inside strings",
//! "dropped the backslash of N invalid escape sequences",
//! "replaced N lone surrogate escapes with U+FFFD",
//! "completed output that was cut off with `…`" (the closers appended, or
//! `</invoke>` in the `<invoke>` dialect).
//!
//! Warnings: "N more objects followed the first one and were ignored",
//! "N more `<invoke>` blocks …", "N more `<tool_call>` blocks …".
//!
//! The files, by concern: this one holds [`parse`] and the choice between a JSON object and
//! a text dialect; `messages.rs` every sentence and failure the reader can produce; `bytes.rs`
//! the byte-level searches and classes; `json_reader.rs` the recursive-descent reader of one
//! object; `object_search.rs` the search for that object in the text around it (fences,
//! prose, several candidates); `dialects.rs` the three text dialects.

mod bytes;
mod dialects;
mod json_reader;
mod messages;
mod object_search;
#[cfg(test)]
mod tests;

pub use json_reader::MAX_DEPTH;

use bytes::{find_byte, has_non_whitespace, skip_whitespace};
use dialects::find_dialect_tag;
use messages::{MSG_EMPTY, ReadFailure};
use object_search::ObjectSearch;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// What was read, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Always a JSON object (`Value::Object`).
    pub value: Value,
    /// One short human sentence per repair applied, in order; empty when the
    /// input was strict JSON.
    pub repairs: Vec<String>,
    /// Things that were not repairs but that the caller should know, e.g.
    /// "2 more objects followed the first one and were ignored".
    pub warnings: Vec<String>,
    /// Set when the call came in a text dialect.
    pub dialect: Option<Dialect>,
    /// `<parameter>` values read as JSON other than a string or `null` (`5`, `true`,
    /// `{"a":1}`), each with its text: the dialect writes text, and only the tool's schema
    /// says which reading was meant (a string argument takes the text).
    pub texts: Vec<(String, String)>,
    /// How many more objects (or dialect blocks) followed the first, back to back: more
    /// calls, which one reading of one call would drop.
    pub more_calls: usize,
}

/// The text dialects of tool calls that [`parse`] understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `<function_calls><invoke name="x"><parameter name="k">v</parameter></invoke></function_calls>`
    FunctionCalls,
    /// `<invoke name="x"><tool_args>{…}</tool_args></invoke>`
    InvokeToolArgs,
    /// `<tool_call>{…}</tool_call>`
    ToolCallTag,
}

impl Dialect {
    /// A stable, short name for the dialect.
    #[cfg(test)]
    fn as_str(self) -> &'static str {
        match self {
            Dialect::FunctionCalls => "function_calls",
            Dialect::InvokeToolArgs => "invoke_tool_args",
            Dialect::ToolCallTag => "tool_call",
        }
    }
}

/// Why no object could be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What was wrong.
    message: String,
    /// 1-based line of the offending byte.
    line: usize,
    /// 1-based column (in characters) of the offending byte.
    column: usize,
    /// The text nests deeper than the reader goes, so nothing is known of what it holds.
    pub too_deep: bool,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for ParseError {}

/// Reads exactly one JSON object from `input`, leniently.
pub fn parse(input: &[u8]) -> Result<Parsed, ParseError> {
    if let Ok(value) = serde_json::from_slice::<Value>(input) {
        if value.is_object() {
            return Ok(Parsed {
                value,
                repairs: Vec::new(),
                warnings: Vec::new(),
                dialect: None,
                texts: Vec::new(),
                more_calls: 0,
            });
        }
        let first = skip_whitespace(input, 0, input.len());
        let (line, column) = line_and_column(&String::from_utf8_lossy(&input[..first]), first);
        return Err(ParseError {
            message: format!(
                "top-level JSON value is {}, not an object",
                json_type_phrase(&value)
            ),
            line,
            column,
            too_deep: false,
        });
    }
    let mut repairs = Vec::new();
    let text = match std::str::from_utf8(input) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            repairs.push("replaced invalid UTF-8".to_owned());
            String::from_utf8_lossy(input)
        }
    };
    read_call(&text, repairs).map_err(|fail| {
        let (line, column) = line_and_column(&text, fail.offset);
        ParseError {
            message: fail.message.into_owned(),
            line,
            column,
            too_deep: fail.too_deep,
        }
    })
}

/// Reads the one call in the text: a text dialect when its tag comes before any `{` (or
/// before the object found), else the JSON object. `repairs` holds the repairs made
/// before reading (invalid UTF-8 replaced).
fn read_call(text: &str, mut repairs: Vec<String>) -> Result<Parsed, ReadFailure> {
    let mut search = ObjectSearch::new(text);
    let b = text.as_bytes();
    let len = b.len();
    let mut from = 0;
    if text.starts_with('\u{feff}') {
        from = '\u{feff}'.len_utf8();
        repairs.push("removed a byte-order mark".to_owned());
    }
    if !has_non_whitespace(b, from, len) {
        return Err(ReadFailure::new(MSG_EMPTY, 0));
    }
    let tag = find_dialect_tag(b, from, len);
    if let Some((tp, t)) = tag
        && find_byte(b, b'{', from, tp).is_none()
    {
        return search.read_dialect(tp, t, repairs);
    }
    let json = search.find_json_object(from, len);
    // A tag after some `{`: the object wins only when it starts before
    // the tag; otherwise the dialect is read, if it can be.
    if let Some((tp, t)) = tag
        && json.as_ref().map_or(true, |out| out.start > tp)
        && let Ok(parsed) = search.read_dialect(tp, t, repairs.clone())
    {
        return Ok(parsed);
    }
    let out = json?;
    repairs.extend(out.repairs);
    Ok(Parsed {
        value: Value::Object(out.map),
        repairs,
        warnings: out.warnings,
        dialect: None,
        texts: Vec::new(),
        more_calls: out.more,
    })
}

/// The JSON type of `value` as messages name it: "null", "a boolean", "a number",
/// "a string", "an array", "an object".
pub(crate) fn json_type_phrase(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// 1-based line and column (in characters) of byte offset `pos` in `text`.
fn line_and_column(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &text.as_bytes()[..pos];
    let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let column = 1 + text[line_start..pos].chars().count();
    (line, column)
}
