//! Issue 37 through the real binary: the cases where a reading dropped content, each now one
//! call with all of it or a refusal; the safe repair classes judged by the tool's schema; the
//! corrections with exactly one reading; and feedback that says what went wrong.

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_path, gate};

/// `metagate gate --report` with the tools of `fixtures/policies/issue37-tools.toml` on one
/// document: the report and the exit code.
fn report(input: &str) -> (Value, i32) {
    let sb = Sandbox::new();
    let policy = fixture_path("policies/issue37-tools.toml");
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--report", "--policy", policy.to_str().unwrap()],
        input.as_bytes(),
    );
    (out, code)
}

/// An OpenAI chat call of `tool` whose `arguments` string is `arguments`.
fn openai(tool: &str, arguments: &str) -> String {
    json!({"id": "call_1", "type": "function", "function": {"name": tool, "arguments": arguments}})
        .to_string()
}

/// The arguments of the call a report passed.
fn passed_args(out: &Value) -> Value {
    assert_ne!(out["verdict"], "rejected", "{out}");
    match &out["call"]["function"]["arguments"] {
        Value::String(s) => serde_json::from_str(s).unwrap(),
        _ => out["call"]["tool_args"].clone(),
    }
}

fn refusal(out: &Value) -> (&str, &str) {
    assert_eq!(out["verdict"], "rejected", "{out}");
    (
        out["error"]["category"].as_str().unwrap(),
        out["error"]["message"].as_str().unwrap(),
    )
}

#[test]
fn members_after_an_early_closer_are_read_into_the_call() {
    let (out, code) = report(&openai(
        "search_issues",
        r#"{"query": "crash"}, "state": "closed"}"#,
    ));
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        passed_args(&out),
        json!({"query": "crash", "state": "closed"})
    );
    // The same in a whole document: the envelope's own `}` came early.
    let (out, code) =
        report(r#"{"tool_name": "search_issues", "tool_args": {"query": "crash"}}, "x": 1}"#);
    assert_eq!(code, 1, "{out}");
    assert!(refusal(&out).1.contains("another value follows"), "{out}");
}

#[test]
fn a_fence_inside_the_braces_wraps_the_arguments() {
    let (out, code) = report(&openai(
        "search_issues",
        "{```\n{\"query\":\"crash\"}\n```}",
    ));
    assert_eq!(code, 0, "{out}");
    assert_eq!(passed_args(&out), json!({"query": "crash"}));
    assert!(
        !out.to_string().contains("missing required"),
        "the model is not told it omitted what it sent: {out}"
    );
}

#[test]
fn arrays_of_objects_as_arguments_are_refused() {
    for args in [
        r#"[{"key":"value"}},{"key":"value"}]"#,
        r#"[{"query":"a"}][{"query":"b"}]"#,
    ] {
        let (out, code) = report(&openai("search_issues", args));
        assert_eq!(code, 1, "{args}: {out}");
        let (category, message) = refusal(&out);
        assert_eq!(category, "malformed_call", "{out}");
        assert!(message.contains("array, not an object"), "{out}");
    }
}

#[test]
fn several_objects_in_one_arguments_string_are_refused_naming_how_many() {
    for (args, n) in [
        (r#"{"query":"a"}{"query":"b"}"#, 2),
        (
            "{\"query\":\"a\"}\n{\"query\":\"b\"}\n{\"query\":\"c\"}\n",
            3,
        ),
    ] {
        let (out, code) = report(&openai("search_issues", args));
        assert_eq!(code, 1, "{out}");
        let (category, message) = refusal(&out);
        assert_eq!(category, "malformed_call");
        assert!(
            message.contains(&format!("holds {n} JSON objects back to back")),
            "{out}"
        );
        assert_eq!(out["error"]["retryable"], true, "{out}");
    }
}

#[test]
fn each_safe_repair_class_reads_through_the_binary() {
    let cases = [
        ("{url: https://x.org/a}", json!({"url": "https://x.org/a"})),
        (
            "{\"url\":\u{a0}\"https://x.org\"\u{3000}}",
            json!({"url": "https://x.org"}),
        ),
        ("{\"url\": \"u\"]", json!({"url": "u"})),
        ("{\"url\": \"u\",]", json!({"url": "u"})),
        (
            "{\"url\": \"u\"\n\"retries\": 2}",
            json!({"url": "u", "retries": 2}),
        ),
        ("{,\"url\": \"u\"}", json!({"url": "u"})),
        ("{\"url\" \"u\"}", json!({"url": "u"})),
        (
            "{\u{201c}url\u{201d}:\u{201c}u\u{201d}}",
            json!({"url": "u"}),
        ),
        (r#"{\"url\": \"u\"}"#, json!({"url": "u"})),
    ];
    for (args, want) in cases {
        let (out, code) = report(&openai("fetch_page", args));
        assert_eq!(code, 0, "{args}: {out}");
        assert_eq!(passed_args(&out), want, "{args}");
        assert!(
            out["corrections"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["kind"] == "repair"),
            "{args}: {out}"
        );
    }
    // An unquoted value where the tool declares another type is refused as its text would
    // be: it is read as a string, never as a guess at a number.
    let (out, code) = report(&openai("fetch_page", "{url: u, retries: 2x}"));
    assert_eq!(code, 1, "{out}");
    assert_eq!(refusal(&out).0, "type_mismatch", "{out}");
    // Numbers with their missing 0, where the tool declares nothing.
    let (out, code) = report(&openai("unknown_tool", r#"{"a": .25, "b": 1.}"#));
    assert_eq!(code, 0, "{out}");
    assert_eq!(passed_args(&out), json!({"a": 0.25, "b": 1.0}));
    // What the peers guess at stays refused.
    for args in [
        r#"{"url": "https://x.org"#,
        r#"{"url": "u", "retries": 1"#,
        r#"{"url": "u", ...}"#,
        r#"{"url": "say "hi" now"}"#,
    ] {
        let (out, code) = report(&openai("fetch_page", args));
        assert_eq!(code, 1, "{args}: {out}");
        assert_eq!(refusal(&out).0, "malformed_call", "{args}");
    }
}

#[test]
fn corrections_with_one_reading() {
    for (tool, args, want) in [
        ("notify", json!({"msg": "hi"}), json!({"message": "hi"})),
        (
            "read_file",
            json!({"file_path": "a.txt"}),
            json!({"path": "a.txt"}),
        ),
        ("clock", json!({"tz": "UTC"}), json!({"timezone": "UTC"})),
        (
            "greet",
            json!({"names": "Alice"}),
            json!({"names": ["Alice"]}),
        ),
        (
            "convert_time",
            json!({"fom_timezone": "UTC", "to_timezone": "CET"}),
            json!({"from_timezone": "UTC", "to_timezone": "CET"}),
        ),
    ] {
        let call = json!({"tool_name": tool, "tool_args": args}).to_string();
        let (out, code) = report(&call);
        assert_eq!(code, 0, "{call}: {out}");
        assert_eq!(out["verdict"], "corrected", "{out}");
        assert_eq!(out["call"]["tool_args"], want, "{call}");
    }
}

#[test]
fn a_missing_argument_feedback_names_the_unknown_ones_sent() {
    let call = json!({"tool_name": "notify", "tool_args": {"msg": 1, "body": "x"}}).to_string();
    let (out, code) = report(&call);
    assert_eq!(code, 1, "{out}");
    let feedback = out["feedback"].as_str().unwrap();
    assert!(
        feedback.contains("missing required argument \"message\""),
        "{feedback}"
    );
    assert!(
        feedback.contains("was sent \"msg\" and \"body\", which it does not take"),
        "{feedback}"
    );
}

#[test]
fn code_of_another_language_in_the_terminal_is_a_retryable_syntax_error() {
    for (code_text, runtime) in [
        ("print(sum(range(10)))", "\"runtime\": \"python\""),
        ("console.log(1+1)", "\"runtime\": \"nodejs\""),
    ] {
        let call = json!({
            "tool_name": "code_execution_tool",
            "tool_args": {"runtime": "terminal", "code": code_text}
        })
        .to_string();
        let (out, code) = report(&call);
        assert_eq!(code, 1, "{out}");
        let error = &out["error"];
        assert_eq!(error["category"], "invalid_parameters", "{out}");
        assert_eq!(error["retryable"], true, "{out}");
        assert!(
            error["message"].as_str().unwrap().contains("syntax error"),
            "{out}"
        );
        assert!(
            error["suggestion"].as_str().unwrap().contains(runtime),
            "{code_text}: {out}"
        );
    }
}
