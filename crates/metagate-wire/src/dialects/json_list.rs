//! JSON lists of call objects, `[{"name":…,"arguments":{…}}, …]`, where a marker opens them:
//! Granite's `<|tool_call|>[…]` and `<tool_call>[…]</tool_call>` (a list, not Hermes's one
//! object), Firefunction's `functools[…]`, a fenced ```` ```json ```` list, or a bare list
//! opening the output (xLAM), after a `<think>` block if any.
//!
//! The arguments stand under `arguments` or `parameters`; each element is one call, its span
//! the element alone (brackets, commas, markers and fences kept). `write` uses the key the
//! call came with (`arguments` when it had none).

use super::text_util::{CallKeys, find_from, read_call_list, refusal, skip_ws, write_call_object};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const KEYS: CallKeys = CallKeys {
    name: "name",
    arguments: &["arguments", "parameters"],
    id: Some("id"),
    ignored: &[("type", "function")],
};

/// A marker that opens a list, and what closes it after the `]` (if anything must).
const MARKERS: &[(&str, Option<&str>)] = &[
    ("<|tool_call|>", None),
    ("<tool_call>", Some("</tool_call>")),
    ("functools", None),
    ("```", Some("```")),
];

/// Where the list after the marker at `p` opens, when a list of objects follows it.
fn list_after(text: &str, p: usize, marker: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = p + marker.len();
    if marker == "```" {
        if p > 0 && b[p - 1] != b'\n' {
            return None;
        }
        if text[i..].starts_with("json") {
            i += 4;
        }
        if b.get(i) != Some(&b'\n') {
            return None;
        }
    }
    let open = skip_ws(b, i);
    let first = skip_ws(b, open + 1);
    (b.get(open) == Some(&b'[') && b.get(first) == Some(&b'{')).then_some(open)
}

/// Where a bare list opens the text (after whitespace and a `<think>` block). A text that is
/// one strict JSON array is not this reader's: the document reader reads its calls, whatever
/// their envelopes.
fn bare_list(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if text[i..].starts_with("<think>") {
        i = skip_ws(b, find_from(text, "</think>", i)? + "</think>".len());
    }
    let first = skip_ws(b, i + 1);
    let opens = b.get(i) == Some(&b'[')
        && b.get(first) == Some(&b'{')
        && text[first..].contains("\"name\"");
    (opens && serde_json::from_str::<serde::de::IgnoredAny>(text).is_err()).then_some(i)
}

/// The next marker opening a list at or after `from`: where it stands, where the list opens,
/// what must close it.
fn next_list(text: &str, from: usize) -> Option<(usize, usize, Option<&'static str>)> {
    let mut best: Option<(usize, usize, Option<&'static str>)> = None;
    for (marker, close) in MARKERS {
        let mut at = from;
        while let Some(p) = find_from(text, marker, at) {
            if best.is_some_and(|(b, _, _)| b < p) {
                break;
            }
            if let Some(open) = list_after(text, p, marker) {
                best = Some((p, open, *close));
                break;
            }
            at = p + marker.len();
            if *marker == "```" {
                // A fence that holds no list: its closing fence opens nothing either.
                at = find_from(text, marker, at).map_or(text.len(), |q| q + marker.len());
            }
        }
    }
    best
}

pub(crate) fn detect(text: &str) -> bool {
    bare_list(text).is_some() || next_list(text, 0).is_some()
}

pub(crate) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut i = 0;
    if let Some(open) = bare_list(text) {
        let (found, end) = read_call_list(text, open, &KEYS)?;
        calls.extend(found);
        i = end;
    }
    while let Some((_, open, close)) = next_list(text, i) {
        let (found, end) = read_call_list(text, open, &KEYS)?;
        calls.extend(found);
        i = end;
        if let Some(close) = close {
            let after = skip_ws(b, end);
            if text[after..].starts_with(close) {
                i = after + close.len();
            } else if after < b.len() || close == "```" {
                return Err(refusal(
                    after,
                    format!("the list of calls must be closed with `{close}`"),
                ));
            }
        }
    }
    Ok(calls)
}

pub(crate) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    write_call_object(&KEYS, found, name, arguments, false)
}

#[cfg(test)]
#[path = "json_list_tests.rs"]
mod tests;
