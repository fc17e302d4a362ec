//! Cohere's Command R dialects. Command R7B writes
//! `<|START_ACTION|>[{"tool_call_id":"0","tool_name":"f","parameters":{…}}]<|END_ACTION|>`,
//! with its reasoning in `<|START_THINKING|>…<|END_THINKING|>` and its answer in
//! `<|START_RESPONSE|>…<|END_RESPONSE|>` (both kept as they are); Command R+ writes
//! ``Action: ```json\n[{"tool_name":"f","parameters":{…}}]\n``` `` after its plan.
//!
//! Each element of the list is one call (its span the element alone, the brackets and
//! markers kept), `tool_call_id` its id; `write` puts the id first, as the model does.

use super::text_util::{
    CallKeys, find_from, read_call_list, refusal, skip_ws, trim_end_at, write_call_object,
};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const START_ACTION: &str = "<|START_ACTION|>";
const END_ACTION: &str = "<|END_ACTION|>";
const START_THINKING: &str = "<|START_THINKING|>";
const END_THINKING: &str = "<|END_THINKING|>";
const ACTION: &str = "Action:";
const FENCE: &str = "```";

const KEYS: CallKeys = CallKeys {
    name: "tool_name",
    arguments: &["parameters"],
    id: Some("tool_call_id"),
    ignored: &[],
};

/// Where the list of a Command R+ `Action:` block opens: after `Action:`, whitespace, a fence
/// (``` or ```json) and whitespace.
fn action_list_open(text: &str, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, at + ACTION.len());
    if !text[i..].starts_with(FENCE) {
        return None;
    }
    i += FENCE.len();
    if text[i..].starts_with("json") {
        i += 4;
    }
    i = skip_ws(b, i);
    (b.get(i) == Some(&b'[')).then_some(i)
}

/// The next `Action:` that opens a fenced list, at or after `from`.
fn next_action(text: &str, mut from: usize) -> Option<(usize, usize)> {
    while let Some(p) = find_from(text, ACTION, from) {
        let at_line_start = p == 0 || text.as_bytes()[p - 1] == b'\n';
        if at_line_start && let Some(open) = action_list_open(text, p) {
            return Some((p, open));
        }
        from = p + ACTION.len();
    }
    None
}

pub(crate) fn detect(text: &str) -> bool {
    text.contains(START_ACTION) || next_action(text, 0).is_some()
}

pub(crate) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut i = 0;
    loop {
        let thinking = find_from(text, START_THINKING, i);
        let action = find_from(text, START_ACTION, i);
        let plus = next_action(text, i);
        let first = [thinking, action, plus.map(|(p, _)| p)]
            .into_iter()
            .flatten()
            .min();
        let Some(p) = first else { break };
        if Some(p) == thinking {
            // The model's reasoning is kept as it is, markers it quotes included.
            match find_from(text, END_THINKING, p + START_THINKING.len()) {
                Some(e) => i = e + END_THINKING.len(),
                None if calls.is_empty() && action.is_none() && plus.is_none() => break,
                None => {
                    return Err(refusal(
                        p,
                        "`<|START_THINKING|>` is never closed with `<|END_THINKING|>`",
                    ));
                }
            }
        } else if Some(p) == action {
            let open = skip_ws(b, p + START_ACTION.len());
            if b.get(open) != Some(&b'[') {
                return Err(refusal(
                    open,
                    "`<|START_ACTION|>` must be followed by a JSON list of calls",
                ));
            }
            let (found, end) = read_call_list(text, open, &KEYS)?;
            calls.extend(found);
            let after = skip_ws(b, end);
            if text[after..].starts_with(END_ACTION) {
                i = after + END_ACTION.len();
            } else if after == b.len() {
                // The server stopped on `<|END_ACTION|>` and left it out.
                i = after;
            } else {
                return Err(refusal(
                    after,
                    "the list of calls must be closed with `<|END_ACTION|>`",
                ));
            }
        } else {
            let (_, open) = plus.expect("the first marker is one of the three");
            let (found, end) = read_call_list(text, open, &KEYS)?;
            calls.extend(found);
            let after = skip_ws(b, end);
            if text[after..].starts_with(FENCE) {
                i = after + FENCE.len();
            } else if trim_end_at(b, b.len()) <= after {
                i = after;
            } else {
                return Err(refusal(
                    after,
                    "the `Action:` list must be closed with a ``` fence",
                ));
            }
        }
    }
    Ok(calls)
}

pub(crate) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    write_call_object(&KEYS, found, name, arguments, true)
}

#[cfg(test)]
#[path = "command_r_tests.rs"]
mod tests;
