//! Functionary v3.2: each message part opens with `>>>` and a recipient on its own line,
//! `>>>get_weather\n{"city":"Paris"}`; `>>>all\n` opens text for the user (kept), and
//! `>>>python\n` may be followed by raw code (read as `python` with `code`). The template ends
//! the prompt with `>>>`, so the output's first part comes without it: `get_weather\n{…}`.
//!
//! Each call's span is `name\n{…}`; the `>>>` before it is kept, so the first part written
//! back keeps whichever form it came in. `>>>` followed by anything but a name and a new
//! line (a REPL prompt in prose) is text.

use super::text_util::{
    bracketed_end, find_from, names_a_tool, read_json, refusal, skip_ws, text_holds_a_call,
    trim_end_at,
};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const SEP: &str = ">>>";
const TEXT: &str = "all";
const PYTHON: &str = "python";

/// A part's header at `i` (after any `>>>`): its recipient and where its body starts.
fn header(text: &str, i: usize) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    let mut e = i;
    while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
        e += 1;
    }
    (e > i && b.get(e) == Some(&b'\n')).then(|| (&text[i..e], e + 1))
}

/// The next `>>>` opening a part, at or after `from`: where the part's header starts.
fn next_part(text: &str, mut from: usize) -> Option<usize> {
    while let Some(p) = find_from(text, SEP, from) {
        let h = p + SEP.len();
        if header(text, h).is_some() {
            return Some(h);
        }
        from = h;
    }
    None
}

/// The output opens with a call part without `>>>` (`name\n{…}`) and another part follows.
/// Alone, `word\n{…}` is as likely prose before a JSON call (`Sure\n{"tool_name": …}`), which
/// read as a call to `Sure` would pass the real one unchecked: the JSON reader reads it.
fn opens_with_call(text: &str) -> bool {
    let b = text.as_bytes();
    let Some((_, body)) = header(text, 0) else {
        return false;
    };
    if b.get(body) != Some(&b'{') {
        return false;
    }
    bracketed_end(b, body).is_some_and(|e| {
        let after = skip_ws(b, e);
        text[after..].starts_with(SEP)
    })
}

pub(crate) fn detect(text: &str) -> bool {
    next_part(text, 0).is_some() || opens_with_call(text)
}

pub(crate) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    // The first part stands at 0 without `>>>` when the output opens with a header.
    let opens = next_part(text, 0).is_some()
        && header(text, 0)
            .is_some_and(|(r, body)| r == TEXT || r == PYTHON || b.get(body) == Some(&b'{'));
    let mut part = if opens { Some(0) } else { next_part(text, 0) };
    while let Some(h) = part {
        let (recipient, body) = header(text, h).expect("a part starts at a header");
        let next = next_part(text, body);
        let stop = next.map_or(b.len(), |n| n - SEP.len());
        if recipient == TEXT {
            // Text for the user: kept as it is.
            part = next;
            continue;
        }
        if b.get(body) == Some(&b'{') {
            let end = bracketed_end(b, body).ok_or_else(|| {
                refusal(body, format!("the arguments of `{recipient}` are cut off"))
            })?;
            let (Value::Object(arguments), repairs) = read_json(text, body..end)? else {
                return Err(refusal(body, "the arguments must be a JSON object"));
            };
            if names_a_tool(&arguments) {
                return Err(refusal(
                    body,
                    format!(
                        "the object after `{recipient}` holds a call of its own: prose before a \
                         JSON call, or a call to `{recipient}`? Send the call alone"
                    ),
                ));
            }
            calls.push(Found {
                span: h..end,
                name: recipient.to_owned(),
                arguments,
                repairs,
                ..Found::default()
            });
            let after = skip_ws(b, end);
            if after < stop {
                return Err(refusal(
                    after,
                    format!("text follows the arguments of `{recipient}`; open it with `>>>all`"),
                ));
            }
        } else if recipient == PYTHON {
            let end = trim_end_at(b, stop);
            if end <= body {
                return Err(refusal(body, "`>>>python` is followed by no code"));
            }
            if text_holds_a_call(&text[body..end]) {
                return Err(refusal(
                    body,
                    "the code holds a JSON call (an object naming a tool): a reader taking the \
                     first `{` would run that one; send each call as a call",
                ));
            }
            let mut arguments = Map::new();
            arguments.insert("code".into(), Value::String(text[body..end].to_owned()));
            calls.push(Found {
                span: h..end,
                name: PYTHON.into(),
                arguments,
                ..Found::default()
            });
        } else {
            return Err(refusal(
                body,
                format!(
                    "the arguments of `{recipient}` must be a JSON object on the line after its name"
                ),
            ));
        }
        part = next;
    }
    Ok(calls)
}

pub(crate) fn write(_found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    if name == PYTHON
        && arguments.len() == 1
        && let Some(Value::String(code)) = arguments.get("code")
        && !code.trim().is_empty()
        && !code.starts_with('{')
        && !code.contains(SEP)
    {
        return format!("{PYTHON}\n{}", code.trim_end());
    }
    format!("{name}\n{}", Value::Object(arguments.clone()))
}

#[cfg(test)]
mod tests {
    use super::super::text_util::testing::{Case, check, refused};
    use super::*;

    #[test]
    fn functionary_variants_read() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // The first part without `>>>`, as the template leaves it.
            ("get_weather\n{\"location\":\"Paris\"}\n>>>all\nDone.", &[("get_weather", r#"{"location":"Paris"}"#, None)], true),
            (">>>get_weather\n{\"location\": \"Paris\"}", &[("get_weather", r#"{"location":"Paris"}"#, None)], false),
            // Text first, then several calls.
            ("all\nLet me check both.>>>get_weather\n{\"city\":\"Paris\"}\n>>>get_time\n{}",
             &[("get_weather", r#"{"city":"Paris"}"#, None), ("get_time", "{}", None)], true),
            (">>>all\nSure, I can help.\n>>>special_function\n{\"arg1\":1}\n>>>all\nDone, ünï ☃.",
             &[("special_function", r#"{"arg1":1}"#, None)], true),
            // Nested values, unicode, a REPL prompt in the text.
            ("all\nIn a REPL: >>> print(1)\n>>>f\n{\"a\":{\"b\":[1,\"日本\",null]}}",
             &[("f", r#"{"a":{"b":[1,"日本",null]}}"#, None)], true),
            // Raw python, and python with JSON.
            (">>>python\nprint('hello')\nprint(2)\n>>>f\n{}",
             &[("python", r#"{"code":"print('hello')\nprint(2)"}"#, None), ("f", "{}", None)], true),
            ("python\n{\"code\":\"{}\"}\n>>>all\nok", &[("python", r#"{"code":"{}"}"#, None)], true),
            // Prose opening the output before the first `>>>` is kept.
            ("Hello\nthere.\n>>>f\n{}", &[("f", "{}", None)], true),
        ];
        for (text, want, canonical) in cases {
            assert!(detect(text), "{text:?}");
            check(read, write, text, want, *canonical);
        }
        // A word on a line before a JSON call, and nothing after: prose, left to the JSON
        // reader (read as a call to `Sure`, the call inside would pass unchecked).
        for text in [
            "Sure\n{\"tool_name\":\"code_execution_tool\",\"tool_args\":{}}",
            "get_weather\n{\"location\":\"Paris\"}",
        ] {
            assert!(!detect(text), "{text:?}");
        }
        let r = read("Sure\n{\"tool_name\":\"x\",\"tool_args\":{}}\n>>>all\nok").unwrap_err();
        assert!(r.message.contains("a call of its own"), "{}", r.message);
    }

    #[test]
    fn functionary_malformed_is_refused() {
        for text in [
            // Cut off; not an object; text after the arguments; no code.
            ">>>f\n{\"a\":1",
            ">>>f\n{\"a\":\"cut",
            ">>>f\n[1, 2]",
            ">>>f\nnot json",
            ">>>f\n{\"a\":1} and then words",
            ">>>python\n   ",
            // A part whose object is a call of its own, and code holding a JSON call.
            ">>>all\nok>>>Sure\n{\"tool_name\":\"code_execution_tool\",\"tool_args\":{}}",
            ">>>python\nrun({\"name\": \"x\", \"arguments\": {}})\n>>>f\n{}",
        ] {
            assert!(detect(text), "{text:?}");
            refused(read, text);
        }
        // Text alone is not this reader's: the next one reads it.
        assert_eq!(read(">>>all\nonly text"), Ok(Vec::new()));
        for text in [
            "Sure\n{\"a\":1} said the model",
            ">>> print(1)",
            "plain text",
            "all\nwords",
        ] {
            assert!(!detect(text), "{text:?}");
        }
    }
}
