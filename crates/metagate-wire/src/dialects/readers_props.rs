//! Properties every reader of this family holds on any text made of their markers, calls and
//! prose: no panic; a reading's spans stand in order, apart, on character boundaries; and the
//! calls written back uncorrected read as the same calls.

use super::{Found, Refusal};
use proptest::prelude::*;
use serde_json::{Map, Value};

type Reader = (
    &'static str,
    fn(&str) -> bool,
    fn(&str) -> Result<Vec<Found>, Refusal>,
    fn(&Found, &str, &Map<String, Value>) -> String,
);

const READERS: &[Reader] = &[
    (
        "command_r",
        super::command_r::detect,
        super::command_r::read,
        super::command_r::write,
    ),
    (
        "functionary",
        super::functionary::detect,
        super::functionary::read,
        super::functionary::write,
    ),
    (
        "generic",
        super::generic::detect,
        super::generic::read,
        super::generic::write,
    ),
    (
        "json_list",
        super::json_list::detect,
        super::json_list::read,
        super::json_list::write,
    ),
    (
        "llama3_json",
        super::llama3_json::detect,
        super::llama3_json::read,
        super::llama3_json::write,
    ),
    (
        "python_tag",
        super::python_tag::detect,
        super::python_tag::read,
        super::python_tag::write,
    ),
    (
        "pythonic",
        super::pythonic::detect,
        super::pythonic::read,
        super::pythonic::write,
    ),
];

const FRAGMENTS: &[&str] = &[
    "<|tool_call|>",
    "<tool_call>",
    "</tool_call>",
    " functools",
    "```json\n",
    "\n```",
    "```",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "Action:\n",
    "<|START_RESPONSE|>",
    "<|python_tag|>",
    "<|eom_id|>",
    ">>>",
    "all\n",
    "python\n",
    "f\n",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<|python_start|>",
    "<|python_end|>",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ",",
    ";",
    ":",
    "=",
    "\n",
    " ",
    "\"",
    "'",
    "\\",
    "ü",
    "☃",
    "prose ",
    "True",
    "None",
    "1",
    "-2.5",
    "x",
    r#"{"name":"f","arguments":{"a":1}}"#,
    r#"{"name":"g","parameters":{"q":"ü"}}"#,
    r#"{"tool_call_id":"0","tool_name":"t","parameters":{"k":[1,2]}}"#,
    r#"{"tool_name":"t","parameters":{}}"#,
    r#"{"tool_call":"#,
    r#"{"tool_calls":"#,
    r#"{"name":"#,
    r#""arguments":"#,
    "get_weather(city=\"Dallas\")",
    "add(a=1, b=2)",
    "f()",
    "brave_search.call(query='q')",
    "{\"a\":\"}\"}",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..14).prop_map(|v| v.concat())
}

fn summary(found: &[Found]) -> Vec<(String, Map<String, Value>, Option<String>)> {
    found
        .iter()
        .map(|f| (f.name.clone(), f.arguments.clone(), f.id.clone()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn readings_hold_together(text in text()) {
        for (name, detect, read, write) in READERS {
            if !detect(&text) {
                continue;
            }
            let Ok(found) = read(&text) else { continue };
            let mut at = 0;
            for f in &found {
                prop_assert!(f.span.start >= at && f.span.start < f.span.end && f.span.end <= text.len(),
                    "{name}: {text:?}: {f:?}");
                prop_assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
                at = f.span.end;
            }
            let mut again = text.clone();
            for f in found.iter().rev() {
                again.replace_range(f.span.clone(), &write(f, &f.name, &f.arguments));
            }
            let reread = read(&again);
            prop_assert!(reread.is_ok(), "{name}: {text:?} written back as {again:?}: {reread:?}");
            prop_assert_eq!(summary(&reread.unwrap()), summary(&found), "{}: {:?} → {:?}", name, text, again);
        }
    }
}
