//! LangChain's envelopes: a `ToolCall` is a call (`args` read, its id kept), and a whole
//! `AIMessage` is a message whose `tool_calls` are its calls, its `"name": null` naming none.

use super::*;
use crate::document::{self, Container, Item};
use serde_json::json;

const AI_MESSAGE: &str = r#"{"content": "", "additional_kwargs": {"tool_calls": [{"id": "call_1", "function": {"arguments": "{\"a\": 1}", "name": "add"}, "type": "function"}]}, "response_metadata": {"finish_reason": "tool_calls"}, "type": "ai", "name": null, "id": "run-1", "example": false, "tool_calls": [{"name": "add", "args": {"a": 1, "b": [2, {"c": "ü"}]}, "id": "call_1", "type": "tool_call"}, {"name": "get_time", "args": {}, "id": "call_2", "type": "tool_call"}], "invalid_tool_calls": [], "usage_metadata": null}"#;

fn call_of(text: &str) -> Call<'_> {
    Call::from_json(text.as_bytes(), &mut Vec::new())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .unwrap_or_else(|| panic!("{text}: not strict JSON"))
}

#[test]
fn a_langchain_tool_call_is_read_with_its_args() {
    let cases: &[(&str, &str, Value, Option<Value>)] = &[
        (
            r#"{"name":"add","args":{"a":1,"b":2},"id":"call_1","type":"tool_call"}"#,
            "add",
            json!({"a": 1, "b": 2}),
            Some(json!("call_1")),
        ),
        (r#"{"name":"f","args":{}}"#, "f", json!({}), None),
        (
            r#"{"name":"f","args":{"q":{"nested":["ünï"]}},"id":null,"type":"tool_call"}"#,
            "f",
            json!({"q": {"nested": ["ünï"]}}),
            None,
        ),
    ];
    for (text, name, args, id) in cases {
        let call = call_of(text);
        assert_eq!(call.shape, Shape::LangChain, "{text}");
        assert_eq!(call.name, *name);
        assert_eq!(Value::Object(call.args.to_map()), *args, "{text}");
        assert_eq!(call.id(), *id);
        // Uncorrected, it goes out as it came.
        let mut out = Vec::new();
        call.write_as(Shape::LangChain, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), *text);
    }
    let call = call_of(cases[0].0);
    let mut out = Vec::new();
    call.write_as(Shape::OpenAiChat, &mut out);
    let out: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out["id"], json!("call_1"));
    assert_eq!(out["function"]["arguments"], json!("{\"a\":1,\"b\":2}"));
    let call = call_of(r#"{"tool_name":"add","tool_args":{"a":1}}"#);
    let mut out = Vec::new();
    call.write_as(Shape::LangChain, &mut out);
    let out: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out["args"], json!({"a": 1}));
    assert_eq!(out["type"], json!("tool_call"));
    assert!(out["id"].as_str().unwrap().starts_with("call_"));
}

#[test]
fn a_second_place_for_langchain_args_is_refused() {
    for text in [
        r#"{"name":"f","args":{"a":1},"arguments":{"a":2}}"#,
        r#"{"name":"f","args":{"a":1},"input":{"a":2}}"#,
    ] {
        let got = Call::from_json(text.as_bytes(), &mut Vec::new());
        assert!(
            got.as_ref().is_err()
                || got.as_ref().unwrap().as_ref().unwrap().shape != Shape::LangChain,
            "{text}"
        );
        assert!(
            got.is_err(),
            "{text}: both places cannot be read as one call"
        );
    }
}

#[test]
fn a_langchain_ai_message_is_a_message_of_its_tool_calls() {
    let whole = Call::from_json(AI_MESSAGE.as_bytes(), &mut Vec::new());
    match whole {
        Err(e) => assert!(e.holds_no_envelope, "{e}"),
        Ok(c) => panic!("the message read as one call: {:?}", c.map(|c| c.name)),
    }
    let mut sites = Vec::new();
    let container = document::read(AI_MESSAGE, AI_MESSAGE, &mut |item| match item {
        Item::Call(site) => sites.push(site),
        Item::Problem(p) => panic!("{p:?}"),
    });
    assert_eq!(container, Container::Message);
    let calls: Vec<_> = sites
        .iter()
        .map(|site| {
            let call = call_of(&site.text);
            (
                call.shape,
                call.name.to_string(),
                Value::Object(call.args.to_map()),
                call.id(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                Shape::LangChain,
                "add".to_owned(),
                json!({"a": 1, "b": [2, {"c": "ü"}]}),
                Some(json!("call_1"))
            ),
            (
                Shape::LangChain,
                "get_time".to_owned(),
                json!({}),
                Some(json!("call_2"))
            ),
        ]
    );
}

#[test]
fn a_null_name_names_no_call() {
    let got = Call::from_json(br#"{"name":null,"arguments":{"a":1}}"#, &mut Vec::new());
    assert!(got.is_err_and(|e| e.holds_no_envelope));
}

#[test]
fn arguments_sent_as_one_bare_value_wait_for_their_name() {
    let cases: &[(&str, Option<Value>)] = &[
        (
            r#"{"name": "final_answer", "arguments": "image.png"}"#,
            Some(json!("image.png")),
        ),
        (
            r#"{"name": "f", "arguments": "Paris, France"}"#,
            Some(json!("Paris, France")),
        ),
        (r#"{"name": "f", "arguments": "42"}"#, Some(json!(42))),
        (
            r#"{"name": "f", "arguments": "\"quoted\""}"#,
            Some(json!("quoted")),
        ),
        (
            r#"{"name": "f", "parameters": "ünï ☃"}"#,
            Some(json!("ünï ☃")),
        ),
        (
            r#"{"tool_name": "f", "tool_args": "just text"}"#,
            Some(json!("just text")),
        ),
        // Objects, lists and null are arguments (or refused) as before.
        (r#"{"name": "f", "arguments": "{\"a\": 1}"}"#, None),
        (r#"{"name": "f", "arguments": ""}"#, None),
    ];
    for (text, bare) in cases {
        let call = call_of(text);
        assert_eq!(call.bare_argument(), bare.as_ref(), "{text}");
        if bare.is_some() {
            assert!(call.args.is_empty(), "{text}");
        }
    }
    for text in [
        r#"{"name": "f", "arguments": "[1]"}"#,
        r#"{"name": "f", "arguments": "null"}"#,
    ] {
        assert!(
            Call::from_json(text.as_bytes(), &mut Vec::new()).is_err(),
            "{text}"
        );
    }
    let mut call = call_of(cases[0].0);
    call.place_bare_argument("answer");
    assert!(call.bare_argument().is_none());
    let mut out = Vec::new();
    call.write_as(Shape::Plain, &mut out);
    assert_eq!(
        serde_json::from_slice::<Value>(&out).unwrap(),
        json!({"name": "final_answer", "arguments": {"answer": "image.png"}})
    );
    let mut call =
        call_of(r#"{"type":"function","id":"c","function":{"name":"f","arguments":"x"}}"#);
    call.place_bare_argument("q");
    let mut out = Vec::new();
    call.write_as(Shape::OpenAiChat, &mut out);
    let out: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out["function"]["arguments"], json!("{\"q\":\"x\"}"));
}
