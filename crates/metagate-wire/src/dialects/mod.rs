//! The text dialects local models write tool calls in, as servers (llama.cpp, vLLM, Ollama)
//! hand them back as plain content: one module per family of markers. Each reader finds the
//! calls written in its own markers and says where each one stands in the text, so that the
//! bytes around the calls (prose, reasoning blocks) are kept exactly, and a corrected call is
//! written back in the dialect it came in.
//!
//! Every reader module has the same three functions:
//!
//! - `detect(text) -> bool`: its own markers appear in `text` (cheap; no allocation).
//! - `read(text) -> Result<Vec<Found>, Refusal>`: every call in `text`, in order. A text that
//!   holds the markers but cannot be read whole is a [`Refusal`], never a partial reading:
//!   every non-whitespace byte of `text` is inside a [`Found::span`], or kept text the reader
//!   leaves alone (prose, reasoning), or the reason for the refusal.
//! - `write(found, name, arguments) -> String`: the call `found` written again in the same
//!   dialect with `name` and `arguments` (its id and markers kept), to replace
//!   `text[found.span]` in the answer.

use serde_json::{Map, Value};
use std::ops::Range;

/// One call a reader found in the text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Found {
    /// The bytes of the whole call, its markers included: what an answer in kind replaces.
    pub span: Range<usize>,
    /// The tool name as written (trimmed of the dialect's own syntax, nothing else).
    pub name: String,
    /// The arguments, always an object.
    pub arguments: Map<String, Value>,
    /// The call id the dialect carries, if any (Mistral's `[CALL_ID]`, Command R's
    /// `tool_call_id`).
    pub id: Option<String>,
    /// Arguments written as text whose JSON type only the tool's schema decides
    /// (`<parameter=n>5</parameter>`: the number 5 or the string "5"), with that text.
    pub texts: Vec<(String, String)>,
    /// One sentence per repair the call's JSON needed (the lenient reader's
    /// [`crate::repair::Parsed::repairs`]): a repaired call is written again, never passed
    /// as it came.
    pub repairs: Vec<String>,
    /// The key a call object held its arguments under (`"arguments"`, `"parameters"`), for
    /// `write` to write the same one back; `None` where the dialect has no such key.
    pub arguments_key: Option<&'static str>,
}

/// Why a text holding a dialect's markers cannot be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Byte offset of the offending place in the text.
    pub offset: usize,
    /// What is wrong, as a sentence the model can act on.
    pub message: String,
}
pub(crate) mod command_r;
pub(crate) mod functionary;
pub(crate) mod generic;
pub(crate) mod json_list;
pub(crate) mod llama3_json;
pub(crate) mod python_literal;
pub(crate) mod python_tag;
pub(crate) mod pythonic;
#[cfg(test)]
mod readers_props;
pub(crate) mod text_util;
