//! DeepSeek's tool-call tokens:
//!
//! - R1 and V3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n
//!   ```json\n{"city":"Dallas"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>` (the fence may be left
//!   out);
//! - V3.1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":"Dallas"}
//!   <｜tool▁call▁end｜><｜tool▁calls▁end｜>`.
//!
//! The tokens are read in every spelling models and servers write them: the full-width bar `｜`
//! or an ASCII `|`, words joined by `▁`, `_`, `\_` or a space. One call per `tool▁call▁begin …
//! tool▁call▁end`, its span those tokens and what they hold; the outer tokens are kept text.
//! [`Found::arguments_key`] says the form and spelling, for `write`.

use super::text_util::{object_text, read_arguments, refusal, skip_ws, value_end};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const R1_WIDE: &str = "r1｜";
const R1_ASCII: &str = "r1|";
const V31_WIDE: &str = "v3.1｜";
const V31_ASCII: &str = "v3.1|";

/// A token: its words joined by `_` (`tool_call_begin`), where it ends, and whether its bar
/// was the full-width one.
struct Token {
    name: String,
    end: usize,
    wide: bool,
}

/// The token starting at `i`, if one does.
fn token_at(text: &str, i: usize) -> Option<Token> {
    let rest = text.get(i..)?.strip_prefix('<')?;
    let (wide, rest) = if let Some(r) = rest.strip_prefix('｜') {
        (true, r)
    } else {
        (false, rest.strip_prefix('|')?)
    };
    let bar = if wide { '｜' } else { '|' };
    let close = rest.find(bar)?;
    if close > 40 || !rest[close + bar.len_utf8()..].starts_with('>') {
        return None;
    }
    let words = &rest[..close];
    let mut name = String::with_capacity(words.len());
    let mut chars = words.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            'a'..='z' => name.push(c),
            '▁' | '_' | ' ' => name.push('_'),
            '\\' if chars.peek() == Some(&'_') => {}
            _ => return None,
        }
    }
    let end = i + 1 + bar.len_utf8() + close + bar.len_utf8() + 1;
    Some(Token { name, end, wide })
}

/// The first token named `name` at or after `from`, and where it starts.
fn find_token(text: &str, name: &str, from: usize) -> Option<(usize, Token)> {
    let mut at = from;
    while let Some(p) = text[at..].find('<').map(|p| at + p) {
        if let Some(t) = token_at(text, p)
            && t.name == name
        {
            return Some((p, t));
        }
        at = p + 1;
    }
    None
}

pub(super) fn detect(text: &str) -> bool {
    (text.contains("tool▁call") || text.contains("tool_call") || text.contains("tool call"))
        && (find_token(text, "tool_calls_begin", 0).is_some()
            || find_token(text, "tool_call_begin", 0).is_some())
}

pub(super) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut at = 0;
    while let Some((p, begin)) = find_token(text, "tool_call_begin", at) {
        let Some((sep_at, sep)) = find_token(text, "tool_sep", begin.end) else {
            return Err(refusal(
                p,
                "output was cut off inside a DeepSeek tool call, before <｜tool▁sep｜>; not completed",
            ));
        };
        let head = text[begin.end..sep_at].trim();
        let mut found = Found::default();
        let open;
        if head == "function" {
            // R1/V3: the name on the rest of the line, the arguments in an optional fence.
            let line_end = text[sep.end..]
                .find('\n')
                .map_or(text.len(), |n| sep.end + n);
            found.name = text[sep.end..line_end].trim().to_owned();
            let mut i = skip_ws(b, line_end);
            if text[i..].starts_with("```") {
                i = text[i..].find('\n').map_or(text.len(), |n| i + n);
                i = skip_ws(b, i);
            }
            open = i;
            found.arguments_key = Some(if begin.wide { R1_WIDE } else { R1_ASCII });
        } else {
            found.name = head.to_owned();
            open = skip_ws(b, sep.end);
            found.arguments_key = Some(if begin.wide { V31_WIDE } else { V31_ASCII });
        }
        if found.name.is_empty() || found.name.contains(char::is_whitespace) {
            return Err(refusal(p, "a DeepSeek tool call names no tool (one word)"));
        }
        if b.get(open) != Some(&b'{') {
            return Err(refusal(
                open,
                format!("expected the JSON arguments of `{}`", found.name),
            ));
        }
        let e = value_end(text, open, "arguments")?;
        let (arguments, repairs) = read_arguments(text, open..e)?;
        found.arguments = arguments;
        found.repairs = repairs;
        let mut i = skip_ws(b, e);
        if head == "function" && text[i..].starts_with("```") {
            i = skip_ws(b, i + 3);
        }
        let Some(end) = token_at(text, i).filter(|t| t.name == "tool_call_end") else {
            return Err(refusal(
                i,
                format!(
                    "expected <｜tool▁call▁end｜> after the arguments of `{}`",
                    found.name
                ),
            ));
        };
        found.span = p..end.end;
        at = end.end;
        calls.push(found);
    }
    if calls.is_empty()
        && let Some((p, _)) = find_token(text, "tool_calls_begin", 0)
    {
        return Err(refusal(
            p,
            "<｜tool▁calls▁begin｜> holds no <｜tool▁call▁begin｜>: the output was cut off or \
             names no call",
        ));
    }
    Ok(calls)
}

pub(super) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    let key = found.arguments_key.unwrap_or(V31_WIDE);
    // Full-width bars come with `▁` between the words, ASCII ones with `_`, as written.
    let (bar, sep) = if key.ends_with('｜') {
        ("｜", "▁")
    } else {
        ("|", "_")
    };
    let t = |w: &str| format!("<{bar}{}{bar}>", w.replace('▁', sep));
    let args = object_text(arguments);
    if key.starts_with("r1") {
        format!(
            "{}function{}{name}\n```json\n{args}\n```{}",
            t("tool▁call▁begin"),
            t("tool▁sep"),
            t("tool▁call▁end")
        )
    } else {
        format!(
            "{}{name}{}{args}{}",
            t("tool▁call▁begin"),
            t("tool▁sep"),
            t("tool▁call▁end")
        )
    }
}
