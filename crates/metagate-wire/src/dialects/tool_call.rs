//! Hermes and Qwen's `<tool_call>` blocks, each holding one call object:
//! `<tool_call>\n{"name": "get_weather", "arguments": {"city": "Dallas"}}\n</tool_call>`, one
//! block per call (how Hermes 2 Pro, Qwen 2.5 and Qwen3 write parallel calls). The span is the
//! object alone: the tags are kept text. The last block may lack its `</tool_call>` when the
//! output ends after its object (the server stopped on the tag).
//!
//! A single block holding anything but a call object of these keys (another envelope,
//! `{"tool_name": …}`, or what cannot be read) is left to the JSON reader, which reads any
//! envelope inside one block.

use super::text_util::{
    CallKeys, read_call_object, refusal, skip_ws, value_end, write_call_object,
};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";
const KEYS: CallKeys = CallKeys {
    name: "name",
    arguments: &["arguments", "parameters"],
    id: Some("id"),
    ignored: &[],
};

/// `<tool_call>` followed by an object.
pub(super) fn detect(text: &str) -> bool {
    let b = text.as_bytes();
    let mut at = 0;
    while let Some(p) = text[at..].find(OPEN) {
        let i = skip_ws(b, at + p + OPEN.len());
        if b.get(i) == Some(&b'{') {
            return true;
        }
        at += p + OPEN.len();
    }
    false
}

pub(super) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut objects = Vec::new();
    let mut at = 0;
    while let Some(p) = text[at..].find(OPEN).map(|p| at + p) {
        let i = skip_ws(b, p + OPEN.len());
        if b.get(i) != Some(&b'{') {
            return Err(refusal(i, "a <tool_call> block must hold one call object"));
        }
        let e = value_end(text, i, "call in <tool_call>")?;
        let c = skip_ws(b, e);
        at = if text[c..].starts_with(CLOSE) {
            c + CLOSE.len()
        } else if c == b.len() {
            c
        } else {
            return Err(refusal(
                c,
                "expected </tool_call> after the call object: one block holds one call",
            ));
        };
        objects.push(i..e);
    }
    if objects.len() == 1 {
        // One block may hold any envelope, which the JSON reader reads.
        return Ok(read_call_object(text, objects[0].clone(), &KEYS)
            .map(|mut found| {
                found.arguments_key.get_or_insert("arguments");
                vec![found]
            })
            .unwrap_or_default());
    }
    let mut calls = Vec::with_capacity(objects.len());
    for range in objects {
        let mut found = read_call_object(text, range, &KEYS)?;
        found.arguments_key.get_or_insert("arguments");
        calls.push(found);
    }
    Ok(calls)
}

pub(super) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    write_call_object(&KEYS, found, name, arguments, false)
}
