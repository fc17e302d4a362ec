//! Llama 3.x's JSON calls as vLLM's `llama3_json` parser reads them: call objects
//! `{"name":…,"parameters":{…}}` one after another, separated by `;` or a new line
//! (`{"name":"a","parameters":{}}; {"name":"b","parameters":{}}`), opening the output
//! (after a `<think>` block, if any). One object alone is an ordinary JSON call, read
//! elsewhere; this reader is for two or more, none of which may be dropped.
//!
//! Each object is one call, its span the object alone, the separators kept. `write` uses the
//! key the call came with, else `parameters` (the key Llama 3's template writes).

use super::text_util::{
    CallKeys, bracketed_end, find_from, read_call_object, refusal, skip_ws, write_call_object,
};
use super::{Found, Refusal};
use serde_json::{Map, Value};

pub(super) const KEYS: CallKeys = CallKeys {
    name: "name",
    arguments: &["parameters", "arguments"],
    id: None,
    ignored: &[("type", "function")],
};

/// Whether a call object (`{"name"` or `{"type"`) opens at `i`.
fn call_object_at(text: &str, i: usize) -> bool {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'{') {
        return false;
    }
    let k = skip_ws(b, i + 1);
    text[k..].starts_with("\"name\"") || text[k..].starts_with("\"type\"")
}

/// Where the first object opens: the start of the output, after whitespace and `<think>`.
fn first_object(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if text[i..].starts_with("<think>") {
        i = skip_ws(b, find_from(text, "</think>", i)? + "</think>".len());
    }
    call_object_at(text, i).then_some(i)
}

/// Where the next object opens after the one ending at `end`, when a separator (`;` or a
/// new line) stands between them.
fn next_object(text: &str, end: usize) -> Option<usize> {
    let b = text.as_bytes();
    let j = skip_ws(b, end);
    let next = if b.get(j) == Some(&b';') {
        skip_ws(b, j + 1)
    } else if b[end..j].contains(&b'\n') {
        j
    } else {
        return None;
    };
    (b.get(next) == Some(&b'{')).then_some(next)
}

/// A call object opens the output and another object follows it: after a `;`, any object
/// (it must be read or refused, never dropped); after a new line, a call object (lines of
/// argument objects are the JSON reader's).
pub(crate) fn detect(text: &str) -> bool {
    let b = text.as_bytes();
    first_object(text)
        .and_then(|i| bracketed_end(b, i))
        .and_then(|e| next_object(text, e).map(|n| (e, n)))
        .is_some_and(|(e, n)| b.get(skip_ws(b, e)) == Some(&b';') || call_object_at(text, n))
}

/// The call objects from `start` on, separated by `;` or new lines, and where they end.
pub(super) fn read_objects(
    text: &str,
    start: usize,
    keys: &CallKeys,
) -> Result<(Vec<Found>, usize), Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut i = start;
    loop {
        let end = bracketed_end(b, i).ok_or_else(|| refusal(i, "a call object is cut off"))?;
        calls.push(read_call_object(text, i..end, keys)?);
        match next_object(text, end) {
            Some(n) => i = n,
            None => {
                let j = skip_ws(b, end);
                if b.get(j) == Some(&b';') && skip_ws(b, j + 1) == b.len() {
                    // A `;` closing the last call separates nothing.
                    return Ok((calls, j + 1));
                }
                return Ok((calls, end));
            }
        }
    }
}

pub(crate) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let Some(start) = first_object(text) else {
        return Ok(Vec::new());
    };
    let (calls, end) = read_objects(text, start, &KEYS)?;
    // What follows is kept as prose only when no call object hides in it.
    let mut k = end;
    while let Some(p) = find_from(text, "{", k) {
        if call_object_at(text, p) {
            return Err(refusal(
                p,
                "a call object follows prose after the calls; separate calls with `;` or a new line",
            ));
        }
        k = p + 1;
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
    fn llama3_json_variants_read() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // The issue's case: all three calls read, none dropped.
            (r#"{"name":"searchTool","parameters":{"query":"a"}}; {"name":"getOpenIncidentsTool","parameters":{}}; {"name":"searchTool","parameters":{"query":"b"}}"#,
             &[("searchTool", r#"{"query":"a"}"#, None), ("getOpenIncidentsTool", "{}", None), ("searchTool", r#"{"query":"b"}"#, None)], true),
            // New lines, `arguments`, `"type":"function"`, a trailing `;`.
            ("{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n{\"type\": \"function\", \"name\": \"b\", \"parameters\": {\"y\": [\"ü\", {\"z\": false}]}};",
             &[("a", r#"{"x":1}"#, None), ("b", r#"{"y":["ü",{"z":false}]}"#, None)], false),
            ("<think>two calls</think>\n{\"name\":\"a\",\"parameters\":{}};{\"name\":\"b\",\"parameters\":{}}\nThat is all.",
             &[("a", "{}", None), ("b", "{}", None)], true),
        ];
        for (text, want, canonical) in cases {
            assert!(detect(text), "{text:?}");
            check(read, write, text, want, *canonical);
        }
    }

    #[test]
    fn llama3_json_malformed_is_refused() {
        for text in [
            // The last call cut off; a bad call in the middle; a call after prose.
            r#"{"name":"a","parameters":{}}; {"name":"b","parameters":{"q":"#,
            r#"{"name":"a","parameters":{}}; {"name":"b","parameters":3}; {"name":"c","parameters":{}}"#,
            "{\"name\":\"a\",\"parameters\":{}};\n{\"name\":\"b\",\"parameters\":{}} and then {\"name\":\"c\",\"parameters\":{}}",
            r#"{"name":"a","parameters":{}}; {"parameters":{}}"#,
        ] {
            assert!(detect(text), "{text:?}");
            refused(read, text);
        }
        for text in [
            r#"{"name":"a","parameters":{}}"#,
            r#"{"name":"a","parameters":{}} {"name":"b","parameters":{}}"#,
            "{\"a\":1}\n{\"a\":2}",
            "prose {\"name\":\"a\"}; {\"name\":\"b\"}",
        ] {
            assert!(!detect(text), "{text:?}");
        }
    }
}
