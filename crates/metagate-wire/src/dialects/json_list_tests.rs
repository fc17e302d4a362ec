use super::super::text_util::testing::{Case, check, refused};
use super::*;

#[test]
fn json_list_variants_read() {
    #[rustfmt::skip]
    let cases: &[Case] = &[
        // Granite 3.x.
        (r#"<|tool_call|>[{"name":"get_weather","arguments":{"city":"Dallas"}}]"#,
         &[("get_weather", r#"{"city":"Dallas"}"#, None)], true),
        ("<|tool_call|>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]",
         &[("a", r#"{"x":1}"#, None), ("b", "{}", None)], false),
        // Granite with thinking before and prose after.
        ("<think>The user wants weather.</think><|tool_call|>[{\"name\":\"w\",\"arguments\":{\"q\":\"日本\"}}]\nDone.",
         &[("w", r#"{"q":"日本"}"#, None)], true),
        // A list in `<tool_call>`, spaced, closed and not.
        ("<tool_call> [ {\"name\":\"a\",\"arguments\":{\"n\":[1,2]}} , {\"name\":\"b\",\"parameters\":{\"m\":{\"k\":\"v\"}}} ] </tool_call>",
         &[("a", r#"{"n":[1,2]}"#, None), ("b", r#"{"m":{"k":"v"}}"#, None)], false),
        ("I will call it.\n<tool_call>[{\"name\":\"a\",\"arguments\":{}}]",
         &[("a", "{}", None)], true),
        // xLAM: a bare list with prose after it, `parameters` too, a trailing comma.
        ("[{\"name\":\"get_weather\",\"arguments\":{\"location\":\"San Francisco, CA\"}},{\"name\":\"search\",\"arguments\":{\"query\":\"x\"}}]\nBoth at once.",
         &[("get_weather", r#"{"location":"San Francisco, CA"}"#, None), ("search", r#"{"query":"x"}"#, None)], true),
        ("  [\n  {\"name\": \"f\", \"parameters\": {\"a\": true}},\n]\n",
         &[("f", r#"{"a":true}"#, None)], false),
        ("<think>\nplan\n</think>\n\n[{\"name\":\"f\",\"arguments\":{}}]",
         &[("f", "{}", None)], true),
        // Fenced, with prose around.
        ("Here you go:\n```json\n[{\"name\":\"f\",\"arguments\":{\"a\":\"b\"}}]\n```\nAnything else?",
         &[("f", r#"{"a":"b"}"#, None)], true),
        ("```\n[{\"name\":\"f\",\"arguments\":{}},{\"name\":\"g\",\"arguments\":{\"z\":-0.5e3}}]\n```",
         &[("f", "{}", None), ("g", r#"{"z":-0.5e3}"#, None)], false),
        // A fence of code first, then a fenced list.
        ("```python\nprint([1])\n```\nand\n```json\n[{\"name\":\"f\",\"arguments\":{}}]\n```",
         &[("f", "{}", None)], true),
        // Firefunction v2.
        (r#" functools[{"name":"f","arguments":{"a":1}}]"#, &[("f", r#"{"a":1}"#, None)], true),
        // Ids, string arguments holding an object, `"type":"function"`.
        (r#"<|tool_call|>[{"type":"function","name":"f","arguments":"{\"a\":1}","id":"call_1"}]"#,
         &[("f", r#"{"a":1}"#, Some("call_1"))], false),
        // The key the arguments came under is written back.
        (r#"<|tool_call|>[{"name":"f","parameters":{"a":1}},{"name":"g","arguments":{}}]"#,
         &[("f", r#"{"a":1}"#, None), ("g", "{}", None)], true),
        (r#"<|tool_call|>[{"name":"f","arguments":{"a":1},"id":"call_1"}]"#,
         &[("f", r#"{"a":1}"#, Some("call_1"))], true),
    ];
    for (text, want, canonical) in cases {
        assert!(detect(text), "{text:?}");
        check(read, write, text, want, *canonical);
    }
}

#[test]
fn repaired_calls_say_so() {
    let text =
        "<|tool_call|>[{'name':'f','arguments':{'a':True}}, {\"name\":\"g\",\"arguments\":{}}]";
    let found = read(text).unwrap();
    assert_eq!(found.len(), 2);
    assert!(!found[0].repairs.is_empty(), "{:?}", found[0]);
    assert!(found[1].repairs.is_empty(), "{:?}", found[1]);
    assert_eq!(found[0].arguments.get("a"), Some(&Value::Bool(true)));
}

#[test]
fn json_list_malformed_is_refused() {
    let cases = [
        // Cut off.
        r#"<|tool_call|>[{"name":"f","arguments":{"a":1}}"#,
        r#"[{"name":"f","arguments":{"a":"#,
        "```json\n[{\"name\":\"f\",\"arguments\":{}}]\n",
        // Mismatched brackets, elements that are not calls, missing commas.
        r#"[{"name":"f","arguments":{"a":1}}},{"name":"g"}]"#,
        r#"<|tool_call|>[{"name":"f","arguments":{}}, "g"]"#,
        r#"<|tool_call|>[{"name":"f","arguments":{}} {"name":"g","arguments":{}}]"#,
        // A call without a name, with both argument keys, with an unknown key.
        r#"<|tool_call|>[{"arguments":{}}]"#,
        r#"<|tool_call|>[{"name":"f","arguments":{},"parameters":{}}]"#,
        r#"<|tool_call|>[{"name":"f","arguments":{},"extra":[1]}]"#,
        // Text after the list where the closing tag must stand.
        "<tool_call>[{\"name\":\"f\",\"arguments\":{}}] more </tool_call>",
    ];
    for text in cases {
        assert!(detect(text), "{text:?}");
        refused(read, text);
    }
}

#[test]
fn json_list_is_not_detected_elsewhere() {
    for text in [
        r#"{"name":"f","arguments":{}}"#,
        r#"<tool_call>{"name":"f","arguments":{}}</tool_call>"#,
        "See [the docs](x) for more.",
        "```json\n{\"a\":1}\n```",
        r#"text then [{"name":"f"}] later"#,
        // Strict JSON arrays are the document reader's (OpenAI items, xLAM's list alone).
        r#"[{"name":"f","arguments":{}}]"#,
        r#"[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]"#,
    ] {
        assert!(!detect(text), "{text:?}");
    }
}
