//! gpt-oss's harmony format: messages of `<|start|>role<|channel|>channel … <|message|>text`
//! ended by `<|end|>`, `<|return|>` or, for a tool call, `<|call|>`. A call is a message whose
//! header names a recipient: `<|start|>assistant<|channel|>commentary to=functions.get_weather
//! <|constrain|>json<|message|>{"city":"Dallas"}<|call|>` (`to=` may stand in the role part
//! instead, `<|start|>assistant to=functions.x<|channel|>commentary json<|message|>…`, and the
//! output often starts at `<|channel|>`, the prompt having opened the message). The analysis
//! channel before it is reasoning, and the final channel's text is kept as it is.
//!
//! `<|call|>` is a stop token that servers often strip: a call whose JSON is whole at the end
//! of the output is read without it. The span is the message, from its `<|start|>` (or
//! `<|channel|>`) through its `<|call|>`; [`Found::arguments_key`] says which it started with
//! and whether `<|call|>` was there.

use super::text_util::{object_text, read_arguments, refusal, skip_ws, value_end};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const CALL: &str = "<|call|>";
/// `arguments_key` values: the message opened with `<|start|>assistant`, or at `<|channel|>`;
/// and `…_CUT` when `<|call|>` was left out.
const FROM_START: &str = "<|start|>";
const FROM_CHANNEL: &str = "<|channel|>";
const FROM_START_CUT: &str = "<|start|>…";
const FROM_CHANNEL_CUT: &str = "<|channel|>…";

pub(super) fn detect(text: &str) -> bool {
    text.contains(CHANNEL) && text.contains("to=")
}

/// Where the message content starting at `from` ends, and the terminator there (if any).
fn content_end(text: &str, from: usize) -> (usize, Option<&'static str>) {
    ["<|call|>", "<|end|>", "<|return|>", START, CHANNEL]
        .iter()
        .filter_map(|t| text[from..].find(t).map(|p| (from + p, Some(*t))))
        .min_by_key(|(p, _)| *p)
        .unwrap_or((text.len(), None))
}

pub(super) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut at = 0;
    while let Some(c) = text[at..].find(CHANNEL).map(|p| at + p) {
        let before = &text[at..c];
        let start = before
            .rfind(START)
            .map(|s| at + s)
            .filter(|&s| !text[s + START.len()..c].contains("<|"));
        let ms = start.unwrap_or(c);
        let Some(m) = text[c..].find(MESSAGE).map(|p| c + p) else {
            return Err(refusal(
                c,
                "output was cut off in a harmony message header, before <|message|>; not completed",
            ));
        };
        let header = &text[ms..m];
        let content = m + MESSAGE.len();
        let (end, terminator) = content_end(text, content);
        let Some(to) = header.find("to=") else {
            at = end;
            continue;
        };
        let recipient = &header[to + 3..];
        let name_end = recipient
            .find(|ch: char| ch.is_whitespace() || ch == '<')
            .unwrap_or(recipient.len());
        let recipient = &recipient[..name_end];
        let name = recipient.strip_prefix("functions.").unwrap_or(recipient);
        if name.is_empty() {
            return Err(refusal(ms + to, "`to=` in a harmony header names no tool"));
        }
        let open = skip_ws(b, content);
        if b.get(open) != Some(&b'{') {
            return Err(refusal(
                open,
                format!("expected the JSON arguments of `{name}` after <|message|>"),
            ));
        }
        let e = value_end(text, open, "arguments")?;
        if e > end || text[e..end].trim() != "" {
            return Err(refusal(
                e,
                format!(
                    "text follows the arguments of `{name}` in its message: one message holds one call"
                ),
            ));
        }
        let (arguments, repairs) = read_arguments(text, open..e)?;
        let (span_end, key) = match terminator {
            Some(CALL) => (
                end + CALL.len(),
                if start.is_some() {
                    FROM_START
                } else {
                    FROM_CHANNEL
                },
            ),
            None => (
                e,
                if start.is_some() {
                    FROM_START_CUT
                } else {
                    FROM_CHANNEL_CUT
                },
            ),
            Some(t) => {
                return Err(refusal(
                    end,
                    format!("the call to `{name}` ends with {t}, not <|call|>: it may be no call"),
                ));
            }
        };
        calls.push(Found {
            span: ms..span_end,
            name: name.to_owned(),
            arguments,
            repairs,
            arguments_key: Some(key),
            ..Found::default()
        });
        at = span_end;
    }
    Ok(calls)
}

pub(super) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    let key = found.arguments_key.unwrap_or(FROM_START);
    let start = if key.starts_with(START) {
        "<|start|>assistant"
    } else {
        ""
    };
    let call = if key.ends_with('…') { "" } else { CALL };
    format!(
        "{start}<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{}{call}",
        object_text(arguments)
    )
}
