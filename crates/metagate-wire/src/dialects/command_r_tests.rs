use super::super::text_util::testing::{Case, check, refused};
use super::*;

#[test]
fn command_r_variants_read() {
    #[rustfmt::skip]
    let cases: &[Case] = &[
        // The issue's R7B case: `parameters` read, `tool_call_id` kept.
        (r#"<|START_ACTION|>[{"tool_call_id":"0","tool_name":"f","parameters":{"arg1":1}}]<|END_ACTION|>"#,
         &[("f", r#"{"arg1":1}"#, Some("0"))], true),
        // Thinking before, several calls, spaced as the model writes them.
        ("<|START_THINKING|>I should call both. <|START_ACTION|> is how.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {}}\n]<|END_ACTION|>",
         &[("get_weather", r#"{"city":"Paris"}"#, Some("0")), ("get_time", "{}", Some("1"))], false),
        // The server stopped on `<|END_ACTION|>` and dropped it.
        (r#"<|START_ACTION|>[{"tool_call_id":"0","tool_name":"f","parameters":{"q":"naïve ☃"}}]"#,
         &[("f", r#"{"q":"naïve ☃"}"#, Some("0"))], true),
        // A response before the action is kept; nested values and no id.
        (r#"<|START_RESPONSE|>Let me check.<|END_RESPONSE|><|START_ACTION|>[{"tool_name":"search","parameters":{"filter":{"tags":["a","b"],"n":null}}}]<|END_ACTION|>"#,
         &[("search", r#"{"filter":{"tags":["a","b"],"n":null}}"#, None)], true),
        // Command R+: a plan, then the fenced list.
        ("Plan: I will search.\nAction:\n```json\n[\n    {\n        \"tool_name\": \"internet_search\",\n        \"parameters\": {\"query\": \"biggest penguin\"}\n    }\n]\n```",
         &[("internet_search", r#"{"query":"biggest penguin"}"#, None)], false),
        ("Action: ```json\n[{\"tool_name\":\"directly_answer\",\"parameters\":{}},{\"tool_name\":\"f\",\"parameters\":{\"a\":[1,{\"b\":2}]}}]\n```\nThen I answer.",
         &[("directly_answer", "{}", None), ("f", r#"{"a":[1,{"b":2}]}"#, None)], true),
        // Two action blocks.
        (r#"<|START_ACTION|>[{"tool_call_id":"0","tool_name":"a","parameters":{}}]<|END_ACTION|> and <|START_ACTION|>[{"tool_call_id":"1","tool_name":"b","parameters":{"x":1.5}}]<|END_ACTION|>"#,
         &[("a", "{}", Some("0")), ("b", r#"{"x":1.5}"#, Some("1"))], true),
    ];
    for (text, want, canonical) in cases {
        assert!(detect(text), "{text:?}");
        check(read, write, text, want, *canonical);
    }
}

#[test]
fn command_r_malformed_is_refused() {
    let cases = [
        // Cut off inside the list, inside a string.
        r#"<|START_ACTION|>[{"tool_call_id":"0","tool_name":"f","parameters":{"arg1":1}"#,
        r#"<|START_ACTION|>[{"tool_call_id":"0","tool_name":"f","parameters":{"q":"cut"#,
        // Not a list; an unknown key; the call under `arguments`, which R7B does not use.
        r#"<|START_ACTION|>{"tool_name":"f","parameters":{}}<|END_ACTION|>"#,
        r#"<|START_ACTION|>[{"tool_name":"f","parameters":{},"extra":1}]<|END_ACTION|>"#,
        r#"<|START_ACTION|>[{"tool_name":"f","arguments":{"a":1}}]<|END_ACTION|>"#,
        // Text after the list instead of the closing marker.
        r#"<|START_ACTION|>[{"tool_name":"f","parameters":{}}] oops <|END_ACTION|>"#,
        // Empty list; not an object in the list; parameters not an object.
        "<|START_ACTION|>[]<|END_ACTION|>",
        r#"<|START_ACTION|>[{"tool_name":"f","parameters":{}}, 3]<|END_ACTION|>"#,
        r#"<|START_ACTION|>[{"tool_name":"f","parameters":[1]}]<|END_ACTION|>"#,
        // An action inside thinking never closed.
        r#"<|START_THINKING|>hmm <|START_ACTION|>[{"tool_name":"f","parameters":{}}]<|END_ACTION|>"#,
        // R+ fence never closed, with prose after.
        "Action: ```json\n[{\"tool_name\":\"f\",\"parameters\":{}}]\nmore words",
    ];
    for text in cases {
        assert!(detect(text), "{text:?}");
        refused(read, text);
    }
}

#[test]
fn command_r_is_not_detected_in_plain_text() {
    for text in [
        "Action: nothing to do",
        "Plain prose with [brackets]",
        r#"{"tool_name":"f"}"#,
    ] {
        assert!(!detect(text), "{text:?}");
    }
}
