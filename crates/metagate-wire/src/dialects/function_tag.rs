//! Calls written as a `<function…>` tag:
//!
//! - Qwen3-Coder and Qwen3.5's XML: `<function=get_weather>\n<parameter=city>\nDallas\n
//!   </parameter>\n</function>`, inside `<tool_call>…</tool_call>` or not. A value is text;
//!   one that reads as other JSON (`5`, `true`, `{"a":1}`) is that JSON, its text kept in
//!   [`Found::texts`] for the schema to decide. A `</parameter>` left out before the next
//!   `<parameter=` or `</function>` is read as there (Qwen's own parsers do so).
//! - Functionary v3.1 (and llama.cpp's Hermes fallback): `<function=get_weather>{"city":
//!   "Dallas"}</function>`, and `<function name="get_weather">{…}</function>`.
//!
//! The span is the `<function…>…</function>` tag: a `<tool_call>` around it is kept text.
//! [`Found::arguments_key`] says which form the call came in, for `write`: [`PARAMS`],
//! [`JSON_EQ`] or [`JSON_ATTR`].

use super::text_util::{object_text, read_arguments, refusal, skip_ws, value_end};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const PARAMS: &str = "<parameter=";
const JSON_EQ: &str = "<function=>{…}";
const JSON_ATTR: &str = "<function name=…>{…}";
const CLOSE: &str = "</function>";
const CLOSE_PARAM: &str = "</parameter>";

pub(super) fn detect(text: &str) -> bool {
    text.contains("<function=") || text.contains("<function name=")
}

pub(super) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let mut calls = Vec::new();
    let mut at = 0;
    while let Some(p) = next_tag(text, at) {
        let (found, end) = read_one(text, p)?;
        calls.push(found);
        at = end;
    }
    Ok(calls)
}

fn next_tag(text: &str, from: usize) -> Option<usize> {
    ["<function=", "<function name="]
        .iter()
        .filter_map(|t| text[from..].find(t).map(|p| from + p))
        .min()
}

/// The call whose tag opens at `p`, and where it ends.
fn read_one(text: &str, p: usize) -> Result<(Found, usize), Refusal> {
    let b = text.as_bytes();
    let (name, attr, after) = if let Some(rest) = text[p..].strip_prefix("<function=") {
        let close = rest
            .find('>')
            .ok_or_else(|| refusal(p, "the <function=…> tag is not closed with `>`"))?;
        (
            rest[..close].trim(),
            false,
            p + "<function=".len() + close + 1,
        )
    } else {
        let rest = &text[p + "<function name=".len()..];
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
        let Some(q) = quote else {
            return Err(refusal(p, "the name of <function name=…> must be quoted"));
        };
        let close = rest[1..]
            .find(q)
            .ok_or_else(|| refusal(p, "the name of <function name=…> is not closed"))?;
        let tag_end = rest[1 + close + 1..]
            .find('>')
            .filter(|g| rest[1 + close + 1..1 + close + 1 + g].trim().is_empty())
            .ok_or_else(|| refusal(p, "the <function name=…> tag is not closed with `>`"))?;
        let after = p + "<function name=".len() + 1 + close + 1 + tag_end + 1;
        (&rest[1..1 + close], true, after)
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(refusal(p, "the <function> tag names no tool (one word)"));
    }
    let mut found = Found {
        name: name.to_owned(),
        ..Found::default()
    };
    let i = skip_ws(b, after);
    let end = if b.get(i) == Some(&b'{') {
        found.arguments_key = Some(if attr { JSON_ATTR } else { JSON_EQ });
        let e = value_end(text, i, "arguments")?;
        let (arguments, repairs) = read_arguments(text, i..e)?;
        found.arguments = arguments;
        found.repairs = repairs;
        let c = skip_ws(b, e);
        if !text[c..].starts_with(CLOSE) {
            return Err(refusal(
                c,
                format!("expected </function> after the arguments of `{name}`"),
            ));
        }
        c + CLOSE.len()
    } else if !attr {
        found.arguments_key = Some(PARAMS);
        read_parameters(text, p, i, &mut found)?
    } else {
        return Err(refusal(
            i,
            "expected the JSON arguments after <function name=…>",
        ));
    };
    found.span = p..end;
    Ok((found, end))
}

/// The `<parameter=…>` values from `i` up to `</function>`; where the tag ends.
fn read_parameters(
    text: &str,
    p: usize,
    mut i: usize,
    found: &mut Found,
) -> Result<usize, Refusal> {
    let b = text.as_bytes();
    loop {
        i = skip_ws(b, i);
        if i >= b.len() {
            return Err(refusal(
                p,
                format!(
                    "output was cut off inside <function={}>; not completed",
                    found.name
                ),
            ));
        }
        if text[i..].starts_with(CLOSE) {
            return Ok(i + CLOSE.len());
        }
        let Some(rest) = text[i..].strip_prefix(PARAMS) else {
            return Err(refusal(
                i,
                "expected <parameter=…> or </function> inside <function=…>",
            ));
        };
        let close = rest
            .find('>')
            .ok_or_else(|| refusal(i, "the <parameter=…> tag is not closed with `>`"))?;
        let key = rest[..close].trim();
        if key.is_empty() {
            return Err(refusal(i, "a <parameter=…> tag names no argument"));
        }
        let v = i + PARAMS.len() + close + 1;
        let ends = [CLOSE_PARAM, PARAMS, CLOSE]
            .iter()
            .filter_map(|t| text[v..].find(t).map(|q| (v + q, *t)))
            .min_by_key(|(q, _)| *q);
        let Some((ve, closer)) = ends else {
            return Err(refusal(
                i,
                format!("output was cut off inside <parameter={key}>; not completed"),
            ));
        };
        if found.arguments.contains_key(key) {
            return Err(refusal(
                i,
                format!(
                    "the argument `{key}` is given twice: a tool reading the other would run what was never checked"
                ),
            ));
        }
        let (value, raw) = parameter_value(&text[v..ve]);
        if let Some(raw) = raw {
            found.texts.push((key.to_owned(), raw));
        }
        found.arguments.insert(key.to_owned(), value);
        i = if closer == CLOSE_PARAM {
            ve + CLOSE_PARAM.len()
        } else {
            ve
        };
    }
}

/// A value as Qwen writes it: one newline after the tag and one before the closer are no part
/// of it; text that reads as JSON is that JSON, its text kept for the schema (a string
/// argument takes the text as written, as Qwen's own parser does).
fn parameter_value(raw: &str) -> (Value, Option<String>) {
    let s = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    let s = s
        .strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s);
    match serde_json::from_str::<Value>(s) {
        Ok(v) => (v, Some(s.to_owned())),
        Err(_) => (Value::String(s.to_owned()), None),
    }
}

pub(super) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    match found.arguments_key {
        Some(JSON_ATTR) => format!(
            "<function name=\"{name}\">{}</function>",
            object_text(arguments)
        ),
        Some(JSON_EQ) => format!("<function={name}>{}</function>", object_text(arguments)),
        _ => {
            let mut out = format!("<function={name}>\n");
            for (k, v) in arguments {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push_str(&format!("<parameter={k}>\n{text}\n</parameter>\n"));
            }
            out.push_str(CLOSE);
            out
        }
    }
}
