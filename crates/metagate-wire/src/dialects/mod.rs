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
//!
//! [`read`] is the registry: it masks the reasoning blocks (`reasoning.rs`), asks each
//! dialect in [`DIALECTS`] order whether its markers are there, lets the first that reads any
//! call read the text, and then holds the reading to account: the spans in order, inside the
//! text and apart, and nothing outside them that another reader (or a JSON call object) would
//! read as a call: two readings of one text that would run different calls are refused.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::ops::Range;

pub(crate) mod command_r;
mod deepseek;
mod function_tag;
pub(crate) mod functionary;
pub(crate) mod generic;
mod harmony;
pub(crate) mod json_list;
pub(crate) mod llama3_json;
mod mistral;
pub(crate) mod python_literal;
pub(crate) mod python_tag;
pub(crate) mod pythonic;
#[cfg(test)]
mod readers_props;
mod reasoning;
#[cfg(test)]
mod tests;
pub(crate) mod text_util;
mod tool_call;

pub use reasoning::mask_reasoning;

/// One dialect: its names and its reader's three functions.
pub struct Dialect {
    /// A stable, short name (`mistral`, `qwen_xml`): reports and tests use it.
    pub name: &'static str,
    /// How notes name it: its opening marker.
    pub label: &'static str,
    detect: fn(&str) -> bool,
    read: fn(&str) -> Result<Vec<Found>, Refusal>,
    write: fn(&Found, &str, &Map<String, Value>) -> String,
}

impl Dialect {
    /// The call `found` written again in this dialect with `name` and `arguments`.
    pub fn write(&self, found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
        (self.write)(found, name, arguments)
    }
}

impl std::fmt::Debug for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for Dialect {
    fn eq(&self, other: &Dialect) -> bool {
        self.name == other.name
    }
}

/// The dialects, in the order they are asked: special tokens first (harmony, DeepSeek,
/// Mistral, Command R), then the tags (`<function=…>` before `<tool_call>`, which may wrap
/// it), then what opens with plain JSON or Python (a list, `{"tool_call": …}`, objects one
/// after another), which a tag's own content must not be taken for.
pub static DIALECTS: &[Dialect] = &[
    Dialect {
        name: "harmony",
        label: "<|channel|>commentary to=functions.…",
        detect: harmony::detect,
        read: harmony::read,
        write: harmony::write,
    },
    Dialect {
        name: "deepseek",
        label: "<｜tool▁calls▁begin｜>",
        detect: deepseek::detect,
        read: deepseek::read,
        write: deepseek::write,
    },
    Dialect {
        name: "mistral",
        label: "[TOOL_CALLS]",
        detect: mistral::detect,
        read: mistral::read,
        write: mistral::write,
    },
    Dialect {
        name: "command_r",
        label: "<|START_ACTION|> / Action:",
        detect: command_r::detect,
        read: command_r::read,
        write: command_r::write,
    },
    Dialect {
        name: "function_tag",
        label: "<function=…>",
        detect: function_tag::detect,
        read: function_tag::read,
        write: function_tag::write,
    },
    Dialect {
        name: "python_tag",
        label: "<|python_tag|>",
        detect: python_tag::detect,
        read: python_tag::read,
        write: python_tag::write,
    },
    Dialect {
        name: "functionary",
        label: ">>>name",
        detect: functionary::detect,
        read: functionary::read,
        write: functionary::write,
    },
    Dialect {
        name: "pythonic",
        label: "[f(a=1)]",
        detect: pythonic::detect,
        read: pythonic::read,
        write: pythonic::write,
    },
    Dialect {
        name: "json_list",
        label: "JSON list of calls",
        detect: json_list::detect,
        read: json_list::read,
        write: json_list::write,
    },
    Dialect {
        name: "generic",
        label: "{\"tool_call\": …}",
        detect: generic::detect,
        read: generic::read,
        write: generic::write,
    },
    Dialect {
        name: "tool_call",
        label: "<tool_call>",
        detect: tool_call::detect,
        read: tool_call::read,
        write: tool_call::write,
    },
    Dialect {
        name: "llama3_json",
        label: "`;`-separated call objects",
        detect: llama3_json::detect,
        read: llama3_json::read,
        write: llama3_json::write,
    },
];

/// The calls one dialect read in a text.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The dialect they came in.
    pub dialect: &'static Dialect,
    /// Every call, in order; at least one.
    pub calls: Vec<Found>,
}

/// Reads the calls in `text` in the first dialect whose markers it holds (outside reasoning
/// blocks): `None` when it holds none (the text is read as JSON), a [`Refusal`] when the
/// dialect's text cannot be read whole or another reading would read other calls.
pub fn read(text: &str) -> Option<Result<Reading, Refusal>> {
    let masked = mask_reasoning(text);
    let mut chosen = None;
    for dialect in DIALECTS {
        if !(dialect.detect)(&masked) {
            continue;
        }
        match (dialect.read)(&masked) {
            Ok(calls) if calls.is_empty() => {}
            Ok(calls) => {
                chosen = Some((dialect, calls));
                break;
            }
            Err(refusal) => return Some(Err(refusal)),
        }
    }
    let (dialect, calls) = chosen?;
    Some(account(&masked, dialect, &calls).map(|()| Reading { dialect, calls }))
}

/// Holds a reading to account: spans in order, apart and on character boundaries, and the
/// kept text (outside the spans and the reasoning) holding no call another reading would take.
fn account(masked: &str, dialect: &Dialect, calls: &[Found]) -> Result<(), Refusal> {
    let mut at = 0;
    let mut kept = String::with_capacity(masked.len());
    for c in calls {
        let Range { start, end } = c.span;
        if start < at || end > masked.len() || start >= end {
            return Err(Refusal::at(
                start,
                "the calls overlap or stand outside the text; nothing can be said of them",
            ));
        }
        if !masked.is_char_boundary(start) || !masked.is_char_boundary(end) {
            return Err(Refusal::at(
                start,
                "a call does not start or end on a character",
            ));
        }
        kept.push_str(&masked[at..start]);
        // Spaces keep the offsets of what follows, for a refusal to say where.
        kept.extend(std::iter::repeat_n(' ', end - start));
        at = end;
    }
    kept.push_str(&masked[at..]);
    for other in DIALECTS {
        if other != dialect && (other.detect)(&kept) {
            return Err(Refusal::at(
                first_non_space(&kept),
                format!(
                    "the text holds calls in two dialects ({} and {}): a reader of the other would \
                     run other calls; send the calls in one",
                    dialect.label, other.label
                ),
            ));
        }
    }
    if let Some(at) = call_object_in(&kept) {
        return Err(Refusal::at(
            at,
            format!(
                "a JSON object beside the {} calls names a tool: a reader taking the first \
                 `{{` would run it instead; send every call in the dialect",
                dialect.label
            ),
        ));
    }
    Ok(())
}

/// Where a `{` stands in `kept` that is followed by a key naming a tool (`"name"`,
/// `"tool_name"`, `"function"`): a JSON call the reading left aside.
fn call_object_in(kept: &str) -> Option<usize> {
    let b = kept.as_bytes();
    let open = memchr::memchr(b'{', b)?;
    let rest = &kept[open..];
    [
        "\"name\"",
        "\"tool_name\"",
        "\"function\"",
        "'name'",
        "'tool_name'",
    ]
    .iter()
    .any(|k| rest.contains(k))
    .then_some(open)
}

fn first_non_space(s: &str) -> usize {
    s.find(|c: char| !c.is_whitespace()).unwrap_or(0)
}

/// The text with every call replaced by what `written` gives for it (`None`: the call's own
/// bytes), every other byte as it came.
pub fn write_in_kind<'t>(
    text: &'t str,
    calls: &[Found],
    mut written: impl FnMut(usize, &Found) -> Option<String>,
) -> Cow<'t, str> {
    let mut out = String::new();
    let mut at = 0;
    let mut changed = false;
    for (i, c) in calls.iter().enumerate() {
        if let Some(w) = written(i, c) {
            if !changed {
                out.reserve(text.len() + w.len());
                changed = true;
            }
            out.push_str(&text[at..c.span.start]);
            out.push_str(&w);
            at = c.span.end;
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

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

impl Refusal {
    /// A refusal at `offset`.
    pub fn at(offset: usize, message: impl Into<String>) -> Refusal {
        Refusal {
            offset,
            message: message.into(),
        }
    }

    /// The message with the line and column (1-based, in characters) of the offset in `text`.
    pub fn describe(&self, text: &str) -> String {
        let mut pos = self.offset.min(text.len());
        while !text.is_char_boundary(pos) {
            pos -= 1;
        }
        let before = &text[..pos];
        let line = 1 + before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = 1 + text[line_start..pos].chars().count();
        format!("{} at line {line}, column {column}", self.message)
    }
}
