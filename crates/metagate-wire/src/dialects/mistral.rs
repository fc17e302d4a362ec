//! Mistral's `[TOOL_CALLS]`, in every variant its models write (Mistral 7B v0.3, Nemo, Small
//! 3.x, Devstral, Ministral, Magistral):
//!
//! - a JSON list after the marker: `[TOOL_CALLS][{"name":"add","arguments":{"a":1},"id":"…"}]`
//!   (each element one call, its span the element alone: the marker, brackets and commas are
//!   kept text);
//! - the name, then the arguments: `[TOOL_CALLS]add[ARGS]{"a":1}`, `[TOOL_CALLS]add{"a":1}`,
//!   `[TOOL_CALLS]add[CALL_ID]a1b2c3d4e[ARGS]{"a":1}`, one marker per call (the span starts at
//!   the name: the marker is kept);
//! - the same without the marker, when a server dropped the special token:
//!   `add[CALL_ID]a1b2c3d4e[ARGS]{"a":1}`, `add[ARGS]{"a":1}`.
//!
//! For the named form, [`Found::arguments_key`] is `Some("[ARGS]")` when the call wrote that
//! marker, so a corrected call is written the way it came.

use super::text_util::{
    CallKeys, object_text, read_arguments, read_call_object, refusal, skip_ws, value_end,
    write_call_object,
};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const MARKER: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";
const KEYS: CallKeys = CallKeys {
    name: "name",
    arguments: &["arguments", "parameters"],
    id: Some("id"),
    ignored: &[],
};

pub(super) fn detect(text: &str) -> bool {
    text.contains(MARKER) || text.contains(ARGS) || text.contains(CALL_ID)
}

pub(super) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut at = 0;
    loop {
        let marker = text[at..].find(MARKER).map(|p| at + p);
        let bare = bare_call_start(text, at)?;
        let start = match (marker, bare) {
            (Some(m), Some(n)) if n < m => Start::Bare(n),
            (Some(m), _) => Start::Marker(m),
            (None, Some(n)) => Start::Bare(n),
            (None, None) => break,
        };
        at = match start {
            Start::Bare(n) => {
                let (found, end) = read_named(text, n)?;
                calls.push(found);
                end
            }
            Start::Marker(m) => {
                let i = skip_ws(b, m + MARKER.len());
                match b.get(i) {
                    None => {
                        return Err(refusal(
                            m,
                            "output was cut off after [TOOL_CALLS], before the call; not \
                             completed",
                        ));
                    }
                    Some(b'[') => read_list(text, i, &mut calls)?,
                    Some(b'{') => {
                        let end = value_end(text, i, "call after [TOOL_CALLS]")?;
                        calls.push(list_element(text, i, end)?);
                        end
                    }
                    Some(_) => {
                        let (found, end) = read_named(text, i)?;
                        calls.push(found);
                        end
                    }
                }
            }
        };
    }
    Ok(calls)
}

enum Start {
    Marker(usize),
    Bare(usize),
}

/// Where a call without the marker starts at or after `from`: the name just before the first
/// `[CALL_ID]` or `[ARGS]` that no `[TOOL_CALLS]` comes before.
fn bare_call_start(text: &str, from: usize) -> Result<Option<usize>, Refusal> {
    let next = [ARGS, CALL_ID]
        .iter()
        .filter_map(|m| text[from..].find(m).map(|p| from + p))
        .min();
    let Some(q) = next else {
        return Ok(None);
    };
    if text[from..q].contains(MARKER) {
        return Ok(None);
    }
    let name_start = text[from..q]
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_name_char(c))
        .map_or(from, |(p, c)| from + p + c.len_utf8());
    if name_start == q {
        return Err(refusal(
            q,
            "[ARGS] or [CALL_ID] stands with no tool name before it",
        ));
    }
    Ok(Some(name_start))
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// The calls of the list opening at `open`; where the list ends.
fn read_list(text: &str, open: usize, calls: &mut Vec<Found>) -> Result<usize, Refusal> {
    let b = text.as_bytes();
    let end = value_end(text, open, "list of calls after [TOOL_CALLS]")?;
    let mut i = skip_ws(b, open + 1);
    if b[i] == b']' {
        return Err(refusal(open, "[TOOL_CALLS] is followed by an empty list"));
    }
    loop {
        if b[i] != b'{' {
            return Err(refusal(
                i,
                "each element of the [TOOL_CALLS] list must be a call object",
            ));
        }
        let e = value_end(text, i, "call")?;
        calls.push(list_element(text, i, e)?);
        i = skip_ws(b, e);
        match b[i] {
            b',' => i = skip_ws(b, i + 1),
            b']' if i + 1 == end => return Ok(end),
            _ => {
                return Err(refusal(
                    i,
                    "expected `,` or `]` after a call in the [TOOL_CALLS] list",
                ));
            }
        }
    }
}

/// One `{"name":…,"arguments":…}` element.
fn list_element(text: &str, start: usize, end: usize) -> Result<Found, Refusal> {
    let mut found = read_call_object(text, start..end, &KEYS)?;
    found.arguments_key.get_or_insert("arguments");
    Ok(found)
}

/// `name[CALL_ID]id[ARGS]{…}` (the two markers each optional) starting at `start`; the call
/// and where it ends.
fn read_named(text: &str, start: usize) -> Result<(Found, usize), Refusal> {
    let b = text.as_bytes();
    let mut i = start;
    while i < b.len() && text[i..].starts_with(is_name_char) {
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    let name = &text[start..i];
    if name.is_empty() {
        return Err(refusal(start, "expected a tool name after [TOOL_CALLS]"));
    }
    let mut found = Found {
        name: name.to_owned(),
        ..Found::default()
    };
    if text[i..].starts_with(CALL_ID) {
        let id_start = i + CALL_ID.len();
        let id_end = text[id_start..]
            .find(|c: char| c == '[' || c == '{' || c.is_whitespace())
            .map_or(text.len(), |p| id_start + p);
        if id_end == id_start {
            return Err(refusal(i, "[CALL_ID] is followed by no id"));
        }
        found.id = Some(text[id_start..id_end].to_owned());
        i = id_end;
    }
    if text[i..].starts_with(ARGS) {
        found.arguments_key = Some(ARGS);
        i += ARGS.len();
    }
    let open = skip_ws(b, i);
    if open >= b.len() {
        return Err(refusal(
            start,
            format!(
                "output was cut off after the tool name `{name}`, before its arguments; not completed"
            ),
        ));
    }
    if b[open] != b'{' {
        return Err(refusal(
            open,
            format!("expected the JSON arguments of `{name}` after its name"),
        ));
    }
    let end = value_end(text, open, "arguments")?;
    let (arguments, repairs) = read_arguments(text, open..end)?;
    found.arguments = arguments;
    found.repairs = repairs;
    found.span = start..end;
    Ok((found, end))
}

pub(super) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    match found.arguments_key {
        Some(ARGS) | None => {
            let mut out = name.to_owned();
            if let Some(id) = &found.id {
                out.push_str(CALL_ID);
                out.push_str(id);
            }
            if found.arguments_key.is_some() {
                out.push_str(ARGS);
            }
            out.push_str(&object_text(arguments));
            out
        }
        Some(_) => write_call_object(&KEYS, found, name, arguments, false),
    }
}
