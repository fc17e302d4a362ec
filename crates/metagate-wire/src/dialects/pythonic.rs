//! Pythonic calls: a Python list of calls with literal keyword arguments,
//! `[get_weather(city="Dallas"), add(a=1, b=2)]`, as Llama 3.2 and 4 write them opening the
//! output (vLLM's `pythonic` parser), Llama 4 inside `<|python_start|>…<|python_end|>`, and
//! LFM2 inside `<|tool_call_start|>…<|tool_call_end|>` after its prose or `<think>` block.
//!
//! Each call is one [`Found`], its span `name(…)` alone; the brackets, commas and markers are
//! kept. `write` writes `name(k=v, …)` with double-quoted strings (`python_literal.rs`).

use super::python_literal::{Py, write_call};
use super::text_util::{find_from, refusal, refuse_inner_call, skip_ws};
use super::{Found, Refusal};
use serde_json::{Map, Value};

/// The markers a block of calls stands between.
const BLOCKS: &[(&str, &str)] = &[
    ("<|tool_call_start|>", "<|tool_call_end|>"),
    ("<|python_start|>", "<|python_end|>"),
];

/// Whether a call (`name(`) opens at `i`.
fn call_at(text: &str, i: usize) -> bool {
    let mut py = Py::new(text, i);
    if py.identifier(true).is_none() {
        return false;
    }
    py.skip_ws();
    text.as_bytes().get(py.i) == Some(&b'(')
}

/// Where a bare list of calls opens the output (after whitespace and a `<think>` block).
fn bare_list(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if text[i..].starts_with("<think>") {
        i = skip_ws(b, find_from(text, "</think>", i)? + "</think>".len());
    }
    (b.get(i) == Some(&b'[') && call_at(text, skip_ws(b, i + 1))).then_some(i)
}

/// The next fence (```` ``` ````, ```` ```python ````, ```` ```py ```` on a line of its own) at or
/// after `from` that opens a list of calls: where it stands and where the list opens. A fence
/// holding anything else is code or prose, its closing fence skipped with it.
fn next_fenced(text: &str, mut from: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    while let Some(p) = find_from(text, FENCE, from) {
        let at_line_start = p == 0 || b[p - 1] == b'\n';
        let rest = &text[p + FENCE.len()..];
        let tag = ["python\n", "py\n", "\n"]
            .into_iter()
            .find(|t| rest.starts_with(t));
        if at_line_start && let Some(tag) = tag {
            let open = skip_ws(b, p + FENCE.len() + tag.len());
            if b.get(open) == Some(&b'[') && call_at(text, skip_ws(b, open + 1)) {
                return Some((p, open));
            }
        }
        let after = p + FENCE.len();
        from = find_from(text, FENCE, after).map_or(text.len(), |q| q + FENCE.len());
    }
    None
}

const FENCE: &str = "```";

pub(crate) fn detect(text: &str) -> bool {
    BLOCKS.iter().any(|(open, _)| text.contains(open))
        || bare_list(text).is_some()
        || next_fenced(text, 0).is_some()
}

/// The calls of the list opening at `open`, and where it ends.
fn read_list(text: &str, open: usize, calls: &mut Vec<Found>) -> Result<usize, Refusal> {
    let mut py = Py::new(text, open + 1);
    let before = calls.len();
    loop {
        py.skip_ws();
        match text.as_bytes().get(py.i) {
            Some(b']') => break,
            None => return Err(refusal(py.i, "the list of calls is cut off before its `]`")),
            _ => {}
        }
        let call = py.call()?;
        calls.push(found(call)?);
        py.skip_ws();
        match text.as_bytes().get(py.i) {
            Some(b',') => py.i += 1,
            Some(b']') => {}
            None => return Err(refusal(py.i, "the list of calls is cut off before its `]`")),
            Some(_) => return Err(refusal(py.i, "calls in the list must be separated by `,`")),
        }
    }
    if calls.len() == before {
        return Err(refusal(open, "the list of calls is empty"));
    }
    Ok(py.i + 1)
}

fn found(call: super::python_literal::PyCall) -> Result<Found, Refusal> {
    refuse_inner_call(&call.arguments, &call.name, call.span.start)?;
    Ok(Found {
        span: call.span,
        name: call.name,
        arguments: call.arguments,
        ..Found::default()
    })
}

/// The next block marker at or after `from`, outside `<think>` blocks.
fn next_block(text: &str, mut from: usize) -> Option<(usize, &'static str, &'static str)> {
    loop {
        let think = find_from(text, "<think>", from);
        let block = BLOCKS
            .iter()
            .filter_map(|(o, c)| find_from(text, o, from).map(|p| (p, *o, *c)))
            .min_by_key(|(p, _, _)| *p);
        match (think, block) {
            (Some(t), Some((p, _, _))) if t < p => {
                // A marker the model quotes while reasoning is not a call.
                from = find_from(text, "</think>", t)? + "</think>".len();
            }
            (_, block) => return block,
        }
    }
}

pub(crate) fn read(text: &str) -> Result<Vec<Found>, Refusal> {
    let b = text.as_bytes();
    let mut calls = Vec::new();
    let mut i = 0;
    if let Some(open) = bare_list(text) {
        i = read_list(text, open, &mut calls)?;
    }
    loop {
        let block = next_block(text, i);
        let fenced = next_fenced(text, i);
        if let Some((_, open)) = fenced
            && block.is_none_or(|(p, _, _)| fenced.is_some_and(|(f, _)| f < p))
        {
            let end = read_list(text, open, &mut calls)?;
            let after = skip_ws(b, end);
            if !text[after..].starts_with(FENCE) {
                return Err(refusal(
                    after,
                    "the fenced list of calls must be closed with ```",
                ));
            }
            i = after + FENCE.len();
            continue;
        }
        let Some((p, open, close)) = block else { break };
        let j = skip_ws(b, p + open.len());
        let end = if b.get(j) == Some(&b'[') {
            read_list(text, j, &mut calls)?
        } else if call_at(text, j) {
            let mut py = Py::new(text, j);
            let call = py.call()?;
            calls.push(found(call)?);
            py.i
        } else {
            return Err(refusal(
                j,
                format!("`{open}` must be followed by a list of calls"),
            ));
        };
        let after = skip_ws(b, end);
        if text[after..].starts_with(close) {
            i = after + close.len();
        } else if after == b.len() {
            // The server stopped on the closing marker and left it out.
            i = after;
        } else {
            return Err(refusal(
                after,
                format!("the calls must be closed with `{close}`"),
            ));
        }
    }
    Ok(calls)
}

pub(crate) fn write(_found: &Found, name: &str, arguments: &Map<String, Value>) -> String {
    write_call(name, arguments)
}

#[cfg(test)]
mod tests {
    use super::super::text_util::testing::{Case, check, refused};
    use super::*;

    #[test]
    fn pythonic_variants_read() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // The issue's case.
            (r#"[get_weather(city="Dallas"), add(a=1, b=2)]"#,
             &[("get_weather", r#"{"city":"Dallas"}"#, None), ("add", r#"{"a":1,"b":2}"#, None)], true),
            // vLLM's cases: single quotes, nested values, empty arguments, new lines.
            ("[get_weather(city='San Francisco', metric='celsius')]",
             &[("get_weather", r#"{"city":"San Francisco","metric":"celsius"}"#, None)], false),
            ("[register_user(name=\"John Doe\", age=37, address={\"city\": \"San Francisco\", \"state\": \"CA\"}, role=None, passed_test=True, aliases=[\"John\", \"Johnny\"])]",
             &[("register_user", r#"{"name":"John Doe","age":37,"address":{"city":"San Francisco","state":"CA"},"role":null,"passed_test":true,"aliases":["John","Johnny"]}"#, None)], true),
            ("[get_time()]", &[("get_time", "{}", None)], true),
            ("[\n  f(a=1),\n  g(b='☃ ünï'),\n]", &[("f", r#"{"a":1}"#, None), ("g", r#"{"b":"☃ ünï"}"#, None)], false),
            ("<think>Which tool?</think>\n[f(x=1.5)]", &[("f", r#"{"x":1.5}"#, None)], true),
            // Escaped quotes and a triple-quoted string.
            (r#"[write(text="say \"hi\"\n")]"#, &[("write", r#"{"text":"say \"hi\"\n"}"#, None)], true),
            ("[write(text='''a\nb''')]", &[("write", r#"{"text":"a\nb"}"#, None)], false),
            // Llama 4.
            ("<|python_start|>[f(a=1)]<|python_end|>", &[("f", r#"{"a":1}"#, None)], true),
            // Fenced, prose and another fence of code around.
            ("Calling:\n```python\n[f(a=1), g()]\n```\nDone.", &[("f", r#"{"a":1}"#, None), ("g", "{}", None)], true),
            ("```bash\nls [x]\n```\n```\n[f(q='x')]\n```", &[("f", r#"{"q":"x"}"#, None)], false),
            ("<|python_start|>f(a=1)<|python_end|>", &[("f", r#"{"a":1}"#, None)], true),
            // LFM2: prose and thinking before, several blocks, the end marker stripped.
            ("<|tool_call_start|>[get_candidate_status(candidate_id=\"12345\")]<|tool_call_end|>Checking the status.",
             &[("get_candidate_status", r#"{"candidate_id":"12345"}"#, None)], true),
            ("<think>I will use <|tool_call_start|> soon</think>Sure.<|tool_call_start|>[a(), b(n=[1, 2])]<|tool_call_end|> and <|tool_call_start|>[c(k={\"x\": None})]",
             &[("a", "{}", None), ("b", r#"{"n":[1, 2]}"#, None), ("c", r#"{"k":{"x":null}}"#, None)], true),
        ];
        for (text, want, canonical) in cases {
            assert!(detect(text), "{text:?}");
            check(read, write, text, want, *canonical);
        }
    }

    #[test]
    fn pythonic_malformed_is_refused() {
        for text in [
            // Cut off: in a string, before `)`, before `]`.
            "[get_weather(city=\"Dal",
            "[get_weather(city=\"Dallas\"",
            "[get_weather(city=\"Dallas\")",
            "<|tool_call_start|>[f(a=1), g(",
            // Not literals; positional arguments; no separator; an empty list.
            "[f(a=x)]",
            "[f(a=1+2)]",
            "[f(a=open('/etc/passwd').read())]",
            "[f(\"positional\")]",
            "[f(a=1) g(b=2)]",
            "<|tool_call_start|>[]<|tool_call_end|>",
            "<|tool_call_start|>not a call<|tool_call_end|>",
            "<|tool_call_start|>[f()] trailing <|tool_call_end|>",
            "[f(a=true)]",
            "```python\n[f(a=1)]\nno closing fence",
            // A JSON call inside the arguments: a reader taking the first `{` would run it.
            "[Sure(x={\"tool_name\": \"code_execution_tool\", \"tool_args\": {\"code\": \"rm -rf /\"}})]",
            "<|tool_call_start|>[f(a=[{'name': 'g', 'arguments': {}}])]<|tool_call_end|>",
        ] {
            assert!(detect(text), "{text:?}");
            refused(read, text);
        }
        for text in [
            "[1, 2]",
            "see [docs](x)",
            "f(a=1)",
            "text [f(a=1)]",
            "```python\nprint([1])\n```",
            "```\nf(a=1)\n```",
        ] {
            assert!(!detect(text), "{text:?}");
        }
    }
}
