//! Llama 3.1's `<|python_tag|>`: a built-in tool called as Python,
//! `<|python_tag|>brave_search.call(query="…")`; custom tools as JSON,
//! `<|python_tag|>{"name":…,"parameters":{…}}` (several separated by `;`); or code for the
//! code interpreter, `<|python_tag|>print(1)` (read as `code_interpreter` with `code`). A
//! trailing `<|eom_id|>` or `<|eot_id|>` is kept.
//!
//! The tag is kept outside every span, so one tag before several JSON calls stays one tag.
//! `write` writes `name.call(…)` for the built-in search tools, the code itself for
//! `code_interpreter` with only `code`, and the JSON object otherwise (its arguments under the
//! key they came with, else `parameters`).

use super::llama3_json::{KEYS, read_objects};
use super::python_literal::{Py, write_call};
use super::text_util::{
    find_from, refusal, refuse_inner_call, skip_ws, text_holds_a_call, trim_end_at,
    write_call_object,
};
use super::{Found, Refusal};
use serde_json::{Map, Value};

const TAG: &str = "<|python_tag|>";
/// The markers that end what follows the tag.
const ENDS: &[&str] = &["<|eom_id|>", "<|eot_id|>", TAG];
/// The built-in tools Llama 3.1 calls as `name.call(…)`.
const BUILTIN: &[&str] = &["brave_search", "wolfram_alpha"];
const CODE_TOOL: &str = "code_interpreter";

pub(crate) fn detect(text: &str) -> bool {
    text.contains(TAG)
}

/// Where what follows the tag ending at `from` stops: the next end marker or the text's end.
fn segment_end(text: &str, from: usize) -> usize {
    ENDS.iter()
        .filter_map(|m| find_from(text, m, from))
        .min()
        .unwrap_or(text.len())
}

/// `name.call(` at `i`: the call, its name without `.call`.
fn builtin_call(text: &str, i: usize) -> Option<Result<Found, Refusal>> {
    let mut py = Py::new(text, i);
    let dotted = py.identifier(true)?;
    let tool = dotted.strip_suffix(".call")?;
    py.skip_ws();
    if text.as_bytes().get(py.i) != Some(&b'(') {
        return None;
    }
    py.i = i;
    Some(py.call().and_then(|call| {
        refuse_inner_call(&call.arguments, tool, call.span.start)?;
        Ok(Found {
            span: call.span,
            name: tool.to_owned(),
            arguments: call.arguments,
            ..Found::default()
        })
    }))
}

pub(crate) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(p) = find_from(text, TAG, from) {
        let start = skip_ws(b, p + TAG.len());
        let stop = segment_end(text, start);
        let end = if b.get(start) == Some(&b'{') {
            let (found, end) = read_objects(text, start, &KEYS)?;
            calls.extend(found);
            end
        } else if let Some(call) = builtin_call(text, start) {
            let call = call?;
            let end = call.span.end;
            calls.push(call);
            end
        } else {
            let end = trim_end_at(b, stop);
            if end <= start {
                return Err(refusal(
                    start,
                    "`<|python_tag|>` is followed by nothing to run",
                ));
            }
            if text_holds_a_call(&text[start..end]) {
                return Err(refusal(
                    start,
                    "the code holds a JSON call (an object naming a tool): a reader taking the \
                     first `{` would run that one; send each call as a call",
                ));
            }
            let mut arguments = Map::new();
            arguments.insert("code".into(), Value::String(text[start..end].to_owned()));
            calls.push(Found {
                span: start..end,
                name: CODE_TOOL.into(),
                arguments,
                ..Found::default()
            });
            end
        };
        let after = skip_ws(b, end);
        if after < stop {
            return Err(refusal(
                after,
                "text follows the call before `<|eom_id|>`; nothing after a call may be left unread",
            ));
        }
        from = stop;
    }
    Ok(calls)
}

pub(crate) fn write(found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    if BUILTIN.contains(&name) {
        return write_call(&format!("{name}.call"), arguments);
    }
    if name == CODE_TOOL
        && arguments.len() == 1
        && let Some(Value::String(code)) = arguments.get("code")
        && !code.trim_start().starts_with('{')
        && !code.trim().is_empty()
        && !ENDS.iter().any(|m| code.contains(m))
    {
        return code.trim().to_owned();
    }
    write_call_object(&KEYS, found, name, arguments, false)
}

#[cfg(test)]
mod tests {
    use super::super::text_util::testing::{Case, check, refused};
    use super::*;

    #[test]
    fn python_tag_variants_read() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // The issue's case, and llama.cpp's built-in tool tests.
            ("<|python_tag|>brave_search.call(query=\"what is the weather in Dallas\")",
             &[("brave_search", r#"{"query":"what is the weather in Dallas"}"#, None)], true),
            ("<|python_tag|>wolfram_alpha.call(query=\"integral of x^2\")<|eom_id|>",
             &[("wolfram_alpha", r#"{"query":"integral of x^2"}"#, None)], true),
            // A custom tool in JSON; several separated by `;`.
            ("<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Dallas\"}}",
             &[("get_weather", r#"{"city":"Dallas"}"#, None)], false),
            ("<|python_tag|>{\"name\":\"a\",\"parameters\":{\"x\":[1,{\"y\":\"ü\"}]}}; {\"name\":\"b\",\"parameters\":{}}<|eom_id|>",
             &[("a", r#"{"x":[1,{"y":"ü"}]}"#, None), ("b", "{}", None)], true),
            // Code for the code interpreter, prose before.
            ("Let me compute it.\n<|python_tag|>print(sum(range(10)))<|eom_id|>",
             &[("code_interpreter", r#"{"code":"print(sum(range(10)))"}"#, None)], true),
            ("<|python_tag|>import math\nprint(math.pi)\n",
             &[("code_interpreter", r#"{"code":"import math\nprint(math.pi)"}"#, None)], true),
            // A custom tool called as a built-in is read, and written back as JSON.
            ("<|python_tag|>get_time.call(tz=\"UTC\")", &[("get_time", r#"{"tz":"UTC"}"#, None)], false),
            // Two tags.
            ("<|python_tag|>brave_search.call(query=\"a\")<|eom_id|><|python_tag|>brave_search.call(query=\"b\")",
             &[("brave_search", r#"{"query":"a"}"#, None), ("brave_search", r#"{"query":"b"}"#, None)], true),
        ];
        for (text, want, canonical) in cases {
            assert!(detect(text), "{text:?}");
            check(read, write, text, want, *canonical);
        }
    }

    #[test]
    fn python_tag_malformed_is_refused() {
        for text in [
            "<|python_tag|>brave_search.call(query=\"cut",
            "<|python_tag|>brave_search.call(query=x)",
            "<|python_tag|>brave_search.call(\"positional\")",
            "<|python_tag|>brave_search.call(query=\"a\") and more words",
            "<|python_tag|>{\"name\":\"a\",\"parameters\":{\"q\":1}",
            "<|python_tag|>{\"name\":\"a\",\"parameters\":{}} then prose",
            "<|python_tag|>{\"parameters\":{}}",
            "<|python_tag|>   <|eom_id|>",
            // A JSON call inside: a reader taking the first `{` would run it.
            "<|python_tag|>brave_search.call(query={\"tool_name\": \"code_execution_tool\", \"tool_args\": {}})",
            "<|python_tag|>Sure, here: {\"tool_name\": \"code_execution_tool\", \"tool_args\": {}}",
        ] {
            assert!(detect(text), "{text:?}");
            refused(read, text);
        }
        assert!(!detect("brave_search.call(query=\"a\")"));
    }
}
