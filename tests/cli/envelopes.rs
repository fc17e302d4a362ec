//! Issue 37's two JSON envelopes through the real binary: a whole LangChain `AIMessage` (its
//! `"name": null` names no call; its `tool_calls` are the calls, `args` read) and smolagents'
//! one-argument call with a bare string as its `arguments`.

use serde_json::{Value, json};

use crate::common::{Sandbox, gate};

const TOOLS: &str = r#"
[tools.final_answer.args.answer]
type = "string"
required = true
[tools.add.args.a]
type = "integer"
required = true
[tools.add.args.b]
type = "integer"
"#;

fn report(input: &str) -> (Value, i32) {
    let sb = Sandbox::new();
    let policy = sb.path().join("tools.toml");
    std::fs::write(&policy, TOOLS).unwrap();
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--report", "--policy", policy.to_str().unwrap()],
        input.as_bytes(),
    );
    (out, code)
}

#[test]
fn a_langchain_ai_message_is_checked_call_by_call() {
    let message = json!({
        "content": "",
        "additional_kwargs": {},
        "response_metadata": {},
        "type": "ai",
        "name": null,
        "id": "run-1",
        "example": false,
        "tool_calls": [
            {"name": "add", "args": {"a": 1, "b": "2"}, "id": "call_1", "type": "tool_call"},
            {"name": "final_answer", "args": {"answer": "done"}, "id": "call_2", "type": "tool_call"}
        ],
        "invalid_tool_calls": [],
        "usage_metadata": null
    });
    let (out, code) = report(&message.to_string());
    assert_eq!(code, 0, "{out}");
    let calls = out["calls"]
        .as_array()
        .expect("a message's report lists its calls");
    assert_eq!(calls.len(), 2, "{out}");
    assert_eq!(calls[0]["shape"], "langchain");
    assert_eq!(calls[0]["tool"], "add");
    // `args` is read and corrected like any arguments: "2" is the integer 2.
    assert_eq!(calls[0]["call"]["args"], json!({"a": 1, "b": 2}), "{out}");
    assert_eq!(calls[0]["call"]["id"], "call_1");
    assert_eq!(calls[1]["call"]["args"], json!({"answer": "done"}));
}

#[test]
fn a_bare_string_is_the_argument_of_a_one_argument_tool() {
    let (out, code) = report(r#"{"name": "final_answer", "arguments": "image.png"}"#);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["verdict"], "corrected");
    assert_eq!(out["call"]["arguments"], json!({"answer": "image.png"}));
    assert_eq!(out["corrections"][0]["kind"], "envelope");
    // A tool of two arguments: which one cannot be told.
    let (out, code) = report(r#"{"name": "add", "arguments": "5"}"#);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["error"]["category"], "invalid_parameters");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("add takes 2 arguments (`a`, `b`)"),
        "{message}"
    );
    // An unknown tool: nothing says which argument it is.
    let (out, code) = report(r#"{"name": "nope", "arguments": "x"}"#);
    assert_eq!(code, 1, "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not in the policy"),
        "{out}"
    );
}
