//! Reasoning blocks: what a model thinks before it calls. No reader looks inside them (a call
//! the model only considered is no call), and the answer keeps them byte for byte.
//!
//! The blocks: `<think>…</think>` (DeepSeek R1, Qwen3, and a `</think>` alone when the chat
//! template opened the block in the prompt), `<|START_THINKING|>…<|END_THINKING|>` (Command
//! R7B), `[THINK]…[/THINK]` (Magistral), and harmony's analysis channel
//! (`<|channel|>analysis<|message|>…<|end|>`). A block cut off runs to the end of the text.

use std::borrow::Cow;

/// Each pair of markers that opens and closes a block.
const BLOCKS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("[THINK]", "[/THINK]"),
    ("<|channel|>analysis<|message|>", "<|end|>"),
];

/// `text` with every reasoning block's bytes (its markers included) replaced by spaces: the
/// same length, so every offset into it is an offset into `text`.
pub fn mask_reasoning(text: &str) -> Cow<'_, str> {
    let ranges = reasoning_blocks(text);
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for r in ranges {
        bytes[r].fill(b' ');
    }
    // Every block starts and ends at an ASCII marker or the text's end: still UTF-8.
    Cow::Owned(String::from_utf8(bytes).expect("blocks end on ASCII markers"))
}

/// The byte ranges of the reasoning blocks, in order.
fn reasoning_blocks(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    if !text.contains("THINK") && !text.contains("think>") && !text.contains("analysis") {
        return out;
    }
    let mut at = 0;
    // A `</think>` with no `<think>` before it: the template opened the block.
    if let Some(close) = text.find("</think>")
        && !text[..close].contains("<think>")
    {
        at = close + "</think>".len();
        out.push(0..at);
    }
    loop {
        let next = BLOCKS
            .iter()
            .filter_map(|&(open, close)| text[at..].find(open).map(|p| (at + p, open, close)))
            .min_by_key(|&(p, _, _)| p);
        let Some((p, open, close)) = next else {
            break;
        };
        let inner = p + open.len();
        let end = text[inner..]
            .find(close)
            .map_or(text.len(), |c| inner + c + close.len());
        out.push(p..end);
        at = end;
    }
    out
}
