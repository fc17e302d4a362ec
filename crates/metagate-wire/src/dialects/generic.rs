//! llama.cpp's generic format, for templates without a tool-call syntax of their own: the
//! whole output is one JSON object, `{"tool_call": {"name":…,"arguments":{…}}}` or, with
//! parallel calls, `{"tool_calls": [{"name":…,"arguments":{…},"id":"…"}, …]}` (a `<think>`
//! block or a fence around it kept).
//!
//! Each inner call object is one call, its span the object alone; the envelope around it is
//! kept. `write` puts the id last, as llama.cpp's schema orders it.

use super::text_util::{
    CallKeys, bracketed_end, find_from, read_call_list, read_call_object, refusal, skip_ws,
    write_call_object,
};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const KEYS: CallKeys = CallKeys {
    name: "name",
    arguments: &["arguments"],
    id: Some("id"),
    ignored: &[("type", "function")],
};

/// Where the envelope's value opens, and whether it is the list (`tool_calls`).
fn envelope(text: &str) -> Option<(usize, usize, bool)> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if text[i..].starts_with("<think>") {
        i = skip_ws(b, find_from(text, "</think>", i)? + "</think>".len());
    }
    if text[i..].starts_with("```") {
        i += 3;
        if text[i..].starts_with("json") {
            i += 4;
        }
        i = skip_ws(b, i);
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let outer = i;
    i = skip_ws(b, i + 1);
    let many = if text[i..].starts_with("\"tool_calls\"") {
        true
    } else if text[i..].starts_with("\"tool_call\"") {
        false
    } else {
        return None;
    };
    if many && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        // Strict JSON with `tool_calls` is a message to the document reader.
        return None;
    }
    i = skip_ws(b, i + if many { 12 } else { 11 });
    if b.get(i) != Some(&b':') {
        return None;
    }
    Some((outer, skip_ws(b, i + 1), many))
}

pub(crate) fn detect(text: &str) -> bool {
    envelope(text).is_some()
}

pub(crate) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let Some((outer, value, many)) = envelope(text) else {
        return Ok(Vec::new());
    };
    if bracketed_end(b, outer).is_none() {
        return Err(refusal(outer, "the `tool_call` object is cut off"));
    }
    let (calls, end) = match (many, b.get(value)) {
        (true, Some(b'[')) => read_call_list(text, value, &KEYS)?,
        (false, Some(b'{')) => {
            let end =
                bracketed_end(b, value).ok_or_else(|| refusal(value, "the call is cut off"))?;
            (vec![read_call_object(text, value..end, &KEYS)?], end)
        }
        (true, _) => return Err(refusal(value, "`tool_calls` must be a list of calls")),
        (false, _) => return Err(refusal(value, "`tool_call` must be a call object")),
    };
    let after = skip_ws(b, end);
    if b.get(after) != Some(&b'}') {
        return Err(refusal(
            after,
            "the object holds more than the call; nothing beside `tool_call` may be left unread",
        ));
    }
    Ok(calls)
}

pub(crate) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    write_call_object(&KEYS, found, name, arguments, false)
}

#[cfg(test)]
mod tests {
    use super::super::text_util::testing::{Case, check, refused};
    use super::*;

    #[test]
    fn generic_variants_read() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            (r#"{"tool_call":{"name":"special_function","arguments":{"arg1":1}}}"#,
             &[("special_function", r#"{"arg1":1}"#, None)], true),
            ("{\n  \"tool_call\": {\n    \"name\": \"f\",\n    \"arguments\": {\"q\": \"ünï\"}\n  }\n}",
             &[("f", r#"{"q":"ünï"}"#, None)], false),
            (r#"{"tool_calls":[{"name":"a","arguments":{"x":[1,{"y":2}]},"id":"123456789"},{"name":"b","arguments":{},"id":"987654321"},]}"#,
             &[("a", r#"{"x":[1,{"y":2}]}"#, Some("123456789")), ("b", "{}", Some("987654321"))], true),
            ("<think>I need the tool.</think>\n{\"tool_call\": {\"name\": \"f\", \"arguments\": {}}}\n",
             &[("f", "{}", None)], false),
            ("```json\n{\"tool_call\":{\"name\":\"f\",\"arguments\":{\"a\":null}}}\n```",
             &[("f", r#"{"a":null}"#, None)], true),
        ];
        for (text, want, canonical) in cases {
            assert!(detect(text), "{text:?}");
            check(read, write, text, want, *canonical);
        }
    }

    #[test]
    fn generic_malformed_is_refused() {
        for text in [
            r#"{"tool_call":{"name":"f","arguments":{"a":1}}"#,
            r#"{"tool_call":{"name":"f","arguments":{"a":"#,
            r#"{"tool_call":{"name":"f","arguments":{}},"response":"hi"}"#,
            r#"{"tool_call":[{"name":"f","arguments":{}}]}"#,
            r#"{"tool_call":{"arguments":{}}}"#,
            r#"{"tool_call":{"name":"f","parameters":{}}}"#,
            r#"{"tool_calls":{"name":"f","arguments":{}},}"#,
            r#"{"tool_calls":[],}"#,
        ] {
            assert!(detect(text), "{text:?}");
            refused(read, text);
        }
        for text in [
            r#"{"response":"hello"}"#,
            r#"{"name":"tool_call"}"#,
            "tool_call",
        ] {
            assert!(!detect(text), "{text:?}");
        }
    }
}
