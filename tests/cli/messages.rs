//! Whole assistant messages and API responses with parallel tool calls, in every API shape:
//! each call decided on its own, the document answered in kind.

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture, texts};

/// How a call is written inside a document of one API family.
#[derive(Clone, Copy)]
enum CallStyle {
    OpenAiChat,
    Responses,
    Anthropic,
    Gemini,
    AgentZero,
}

impl CallStyle {
    fn call(self, id: &str, tool: &str, args: &Value) -> String {
        let args_text = serde_json::to_string(args).unwrap();
        let as_string = serde_json::to_string(&args_text).unwrap();
        match self {
            CallStyle::OpenAiChat => format!(
                r#"{{"id":"{id}","type":"function","function":{{"name":"{tool}","arguments":{as_string}}}}}"#
            ),
            CallStyle::Responses => format!(
                r#"{{"type":"function_call","id":"fc_{id}","call_id":"{id}","name":"{tool}","arguments":{as_string},"status":"completed"}}"#
            ),
            CallStyle::Anthropic => {
                format!(r#"{{"type":"tool_use","id":"{id}","name":"{tool}","input":{args_text}}}"#)
            }
            CallStyle::Gemini => format!(
                r#"{{"functionCall":{{"name":"{tool}","args":{args_text},"id":"{id}"}},"thoughtSignature":"c2ln"}}"#
            ),
            CallStyle::AgentZero => format!(
                r#"{{"thoughts":["{id}"],"headline":"h","tool_name":"{tool}","tool_args":{args_text}}}"#
            ),
        }
    }

    /// Whether a tool result is this API's own answer to the refused call `id`.
    fn is_result_for(self, result: &Value, id: &str, feedback_has: &str) -> bool {
        let text_has = |v: &Value| v.as_str().is_some_and(|s| s.contains(feedback_has));
        match self {
            CallStyle::OpenAiChat => {
                result["role"] == "tool"
                    && result["tool_call_id"] == id
                    && text_has(&result["content"])
            }
            CallStyle::Responses => {
                result["type"] == "function_call_output"
                    && result["call_id"] == id
                    && text_has(&result["output"])
            }
            CallStyle::Anthropic => {
                result["type"] == "tool_result"
                    && result["tool_use_id"] == id
                    && result["is_error"] == true
                    && text_has(&result["content"])
            }
            CallStyle::Gemini => {
                result["functionResponse"]["id"] == id
                    && result["functionResponse"]["name"] == "code_execution_tool"
                    && text_has(&result["functionResponse"]["response"]["error"])
            }
            CallStyle::AgentZero => {
                result["error"]["category"] == "invalid_parameters" && text_has(&result["feedback"])
            }
        }
    }
}

/// Every shape a document with calls comes in: a template where `{A}` and `{B}` are the calls,
/// with text, ids, usage and unknown fields around them.
const SHAPES: &[(&str, CallStyle, &str)] = &[
    (
        "openai assistant message",
        CallStyle::OpenAiChat,
        r#"{"role":"assistant","content":null,"refusal":null,"tool_calls":[{A},{B}],"x_vendor":{"k":[1,2.50,"é"]}}"#,
    ),
    (
        "openai choice",
        CallStyle::OpenAiChat,
        r#"{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{A},{B}]},"logprobs":null,"finish_reason":"tool_calls"}"#,
    ),
    (
        "openai chat.completion",
        CallStyle::OpenAiChat,
        r#"{"id":"chatcmpl-9","object":"chat.completion","created":1732000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{A},{B}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12},"system_fingerprint":"fp_1"}"#,
    ),
    (
        "openai bare tool_calls array",
        CallStyle::OpenAiChat,
        r#"[{A}, {B}]"#,
    ),
    (
        "responses response",
        CallStyle::Responses,
        r#"{"id":"resp_1","object":"response","status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[]},{A},{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Checking.","annotations":[]}]},{B}],"usage":{"total_tokens":3}}"#,
    ),
    (
        "responses output array",
        CallStyle::Responses,
        r#"[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"ok"}]},{A},{B}]"#,
    ),
    (
        "anthropic assistant message",
        CallStyle::Anthropic,
        r#"{"role":"assistant","content":[{"type":"text","text":"I'll check."},{A},{"type":"thinking","thinking":"hmm","signature":"sig"},{B}]}"#,
    ),
    (
        "anthropic messages response",
        CallStyle::Anthropic,
        r#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"Let me check."},{A},{B}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}"#,
    ),
    (
        "gemini response",
        CallStyle::Gemini,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Sure."},{A},{B}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3},"modelVersion":"gemini-2.5"}"#,
    ),
    (
        "gemini content",
        CallStyle::Gemini,
        r#"{"role":"model","parts":[{A},{B}]}"#,
    ),
    (
        "array of agent zero calls",
        CallStyle::AgentZero,
        r#"[{A},{B}]"#,
    ),
];

fn document(template: &str, a: &str, b: &str) -> String {
    template.replace("{A}", a).replace("{B}", b)
}

fn run(sb: &Sandbox, args: &[&str], input: &str) -> (String, i32, String) {
    texts(
        sb.cmd()
            .arg("gate")
            .arg("--no-telemetry")
            .args(args)
            .write_stdin(input)
            .output()
            .unwrap(),
    )
}

#[test]
fn every_shape_passes_corrects_and_refuses_call_by_call() {
    let sb = Sandbox::new();
    let clean_a = json!({"query": "prefs"});
    let clean_b = json!({"query": "rust"});
    for &(name, style, template) in SHAPES {
        let a = style.call("call_a", "memory_load", &clean_a);
        let b = style.call("call_b", "search_engine", &clean_b);

        // All pass: the document goes out byte for byte.
        let input = document(template, &a, &b);
        let (out, code, err) = run(&sb, &[], &input);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(out, format!("{input}\n"), "{name}");

        // One corrected: that call is rewritten in its place, every other byte as it came.
        let sloppy = style.call("call_a", "memory_load", &json!({"search": "prefs"}));
        let (out, code, err) = run(&sb, &[], &document(template, &sloppy, &b));
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(out, format!("{input}\n"), "{name}: corrected in place");
        assert!(
            err.contains("call 1: memory_load: argument \"search\" → \"query\""),
            "{name}: {err}"
        );

        // One refused: exit 1, the document (the passing call corrected), and the refused
        // call's result in the API's own shape.
        let broken = style.call(
            "call_b",
            "code_execution_tool",
            &json!({"runtime": "python"}),
        );
        let input = document(template, &sloppy, &broken);
        let (out, code, _) = run(&sb, &[], &input);
        assert_eq!(code, 1, "{name}");
        assert_eq!(out.matches('\n').count(), 1, "{name}: one line");
        let answer: Value = serde_json::from_str(&out).unwrap();
        let expected: Value = serde_json::from_str(&document(template, &a, &broken)).unwrap();
        assert_eq!(
            answer["message"], expected,
            "{name}: passing call corrected, refused as sent"
        );
        let results = answer["tool_results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{name}");
        assert!(
            style.is_result_for(&results[0], "call_b", "missing required argument \"code\""),
            "{name}: {}",
            results[0]
        );
        assert_eq!(answer["refused"][0]["index"], 1, "{name}");
        if !matches!(style, CallStyle::AgentZero) {
            assert_eq!(answer["refused"][0]["id"], "call_b", "{name}");
        }
        assert_eq!(
            answer["refused"][0]["error"]["category"], "invalid_parameters",
            "{name}"
        );

        // --report: the worst verdict, one report per call with its id, in order.
        let (out, code, _) = run(&sb, &["--report"], &input);
        assert_eq!(code, 1, "{name}");
        let report: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["verdict"], "rejected", "{name}");
        let calls = report["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2, "{name}");
        assert_eq!(calls[0]["verdict"], "corrected", "{name}");
        assert_eq!(calls[1]["verdict"], "rejected", "{name}");
        assert_eq!(calls[1]["error"]["missing"], json!(["code"]), "{name}");
        if !matches!(style, CallStyle::AgentZero) {
            assert_eq!(calls[0]["id"], "call_a", "{name}");
            assert_eq!(calls[1]["id"], "call_b", "{name}");
        }
    }
}

#[test]
fn a_message_without_a_call_is_refused() {
    let sb = Sandbox::new();
    for text_only in [
        r#"{"role":"assistant","content":"All done."}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"All done."}]}"#,
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#,
        r#"{"id":"resp_1","object":"response","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]}}]}"#,
    ] {
        let (out, code, _) = run(&sb, &[], text_only);
        assert_eq!(code, 1, "{text_only}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["category"], "malformed_call", "{text_only}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no tool call in the message"),
            "{v}"
        );
    }
}

#[test]
fn a_transcript_is_not_a_call_to_make() {
    let sb = Sandbox::new();
    let transcript = r#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"response","arguments":"{\"text\":\"a\"}"}}]}]}"#;
    let (out, code, _) = run(&sb, &[], transcript);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("transcript")
    );
}

#[test]
fn an_unreadable_call_is_refused_on_its_own() {
    let sb = Sandbox::new();
    let message = r#"{"role":"assistant","tool_calls":[{"id":"ok","type":"function","function":{"name":"response","arguments":"{\"text\":\"a\"}"}},{"id":"cut","type":"function","function":{"name":"memory_load","arguments":"{\"query\":\"pre"}}]}"#;
    let (out, code, _) = run(&sb, &[], message);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["refused"].as_array().unwrap().len(), 1);
    assert_eq!(v["refused"][0]["id"], "cut");
    assert_eq!(v["tool_results"][0]["tool_call_id"], "cut");
    assert_eq!(v["tool_results"][0]["role"], "tool");
    // The suggestion shows the envelope the model was writing.
    assert!(
        v["refused"][0]["error"]["suggestion"]
            .as_str()
            .unwrap()
            .contains("\"type\": \"function\""),
        "{v}"
    );
}

#[test]
fn jsonl_answers_a_message_per_line() {
    let sb = Sandbox::new();
    let message = fixture("messages/openai-two-calls.json");
    let input = format!(
        "{}\n{}\n",
        message.trim(),
        r#"{"tool_name":"response","tool_args":{"message":"x"}}"#
    );
    let out = sb
        .cmd()
        .args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0]["message"]["tool_calls"].as_array().unwrap().len(),
        2
    );
    assert_eq!(lines[0]["refused"][0]["id"], "call_2");
    assert_eq!(lines[1]["tool_args"]["text"], "x");
}

#[test]
fn a_pretty_printed_message_goes_out_on_one_line() {
    let sb = Sandbox::new();
    let pretty = "{\n  \"role\": \"assistant\",\n  \"tool_calls\": [\n    {\"id\": \"c1\", \"type\": \"function\", \"function\": {\"name\": \"response\", \"arguments\": \"{\\\"text\\\":\\\"a\\\"}\"}}\n  ]\n}\n";
    let (out, code, _) = run(&sb, &[], pretty);
    assert_eq!(code, 0);
    assert_eq!(out.matches('\n').count(), 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    let expected: Value = serde_json::from_str(pretty).unwrap();
    assert_eq!(v, expected);
}

#[test]
fn a_thousand_calls_are_decided_in_one_pass() {
    let sb = Sandbox::new();
    let calls: Vec<String> = (0..1000)
        .map(|i| {
            CallStyle::OpenAiChat.call(
                &format!("c{i}"),
                "memory_load",
                &json!({"search": i.to_string()}),
            )
        })
        .collect();
    let message = format!(
        r#"{{"role":"assistant","tool_calls":[{}]}}"#,
        calls.join(",")
    );
    let (out, code, _) = run(&sb, &["--quiet"], &message);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let got = v["tool_calls"].as_array().unwrap();
    assert_eq!(got.len(), 1000);
    assert_eq!(got[999]["id"], "c999");
    let args: Value =
        serde_json::from_str(got[999]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"query": "999"}));
}

#[test]
fn each_call_of_a_message_is_one_decision_row_with_its_id() {
    let sb = Sandbox::new();
    let message = fixture("messages/openai-two-calls.json");
    let out = sb
        .cmd()
        .args(["gate", "--quiet"])
        .write_stdin(message)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let mut st = conn
        .prepare("SELECT call_id, tool, verdict FROM decisions ORDER BY id")
        .unwrap();
    let rows: Vec<(Option<String>, Option<String>, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                Some("call_1".into()),
                Some("memory_load".into()),
                "corrected".into()
            ),
            (
                Some("call_2".into()),
                Some("code_execution_tool".into()),
                "rejected".into()
            ),
        ]
    );
}

/// Each call of a message counts toward the limits as it is decided: three identical calls in
/// one message meet the loop breaker at the third.
#[test]
fn the_calls_of_one_message_count_toward_limits_in_order() {
    let sb = Sandbox::new();
    let policy = sb.file(
        "p.toml",
        "[limits]\nloop = { repeat = 3, window_secs = 60 }\n",
    );
    let call = |id: &str| CallStyle::Anthropic.call(id, "memory_load", &json!({"query": "same"}));
    let message = format!(
        r#"{{"role":"assistant","content":[{},{},{}]}}"#,
        call("t1"),
        call("t2"),
        call("t3")
    );
    let out = sb
        .cmd()
        .args(["--policy"])
        .arg(&policy)
        .args(["gate", "--quiet", "--session", "s1"])
        .write_stdin(message)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["refused"].as_array().unwrap().len(), 1);
    assert_eq!(v["refused"][0]["id"], "t3");
    assert_eq!(v["refused"][0]["error"]["category"], "rate_limited");
    assert_eq!(v["tool_results"][0]["type"], "tool_result");
}

/// `gate` and `lint` read documents through one reader: on every fixture they count the same
/// calls and refuse the same ones (lint reports an unreadable record as a failure of the
/// trace, the gate refuses it as `malformed_call`). A message of text alone is the one place
/// they part: the gate was asked to pass a call and refuses, lint has no call to check.
#[test]
fn gate_and_lint_read_every_fixture_alike() {
    let sb = Sandbox::new();
    let mut files: Vec<std::path::PathBuf> = ["fixtures/calls", "fixtures/messages"]
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(crate::common::fixture_path(
                dir.trim_start_matches("fixtures/"),
            ))
            .unwrap()
            .map(|e| e.unwrap().path())
        })
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() > 25, "{files:?}");
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let jsonl = file.extension().is_some_and(|e| e == "jsonl");
        let mut cmd = sb.cmd();
        cmd.args(["gate", "--report", "--no-telemetry", "--quiet"]);
        if jsonl {
            cmd.arg("--jsonl");
        }
        let out = cmd.write_stdin(text.clone()).output().unwrap();
        let (mut calls, mut refused) = (0, 0);
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let each = v["calls"]
                .as_array()
                .cloned()
                .unwrap_or_else(|| vec![v.clone()]);
            calls += each.len();
            refused += each.iter().filter(|c| c["verdict"] == "rejected").count();
        }
        let lint = sb
            .cmd()
            .args(["lint", "--format", "json"])
            .arg(file)
            .output()
            .unwrap();
        let report = serde_json::from_slice::<Value>(&lint.stdout).unwrap();
        let summary = report["summary"].clone();
        // A line of prose in a trace is a finding to lint (MG112) and a refusal to the gate.
        let prose = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "MG112")
            .count();
        let as_n = |k: &str| summary[k].as_u64().unwrap() as usize;
        if as_n("calls") == 0 && as_n("failures") == 0 {
            assert!(
                text.contains("\"role\""),
                "{}: lint found nothing",
                file.display()
            );
            continue;
        }
        assert_eq!(
            (calls, refused),
            (
                as_n("calls") + as_n("failures") + prose,
                as_n("errors") + as_n("failures") + prose
            ),
            "{}: gate against lint {summary}",
            file.display()
        );
        checked += 1;
    }
    assert!(checked > 25);
}

/// A second place that could hold the arguments (or another call) beside the one an envelope
/// reads: a tool reading that one would run what the gate never checked. Every combination is
/// refused as `malformed_call` naming both fields.
#[test]
fn a_second_place_for_arguments_is_refused_naming_both() {
    let sb = Sandbox::new();
    let checked = r#"{"runtime":"terminal","code":"ls"}"#;
    let hidden = r#"{"runtime":"terminal","code":"sudo id"}"#;
    let hidden_string = serde_json::to_string(hidden).unwrap();
    let checked_string = serde_json::to_string(checked).unwrap();
    let envelopes: Vec<(&str, String, &str)> = vec![
        (
            "plain",
            format!(r#"{{"name":"code_execution_tool","arguments":{checked},@}}"#),
            "`arguments`",
        ),
        (
            "agent zero",
            format!(r#"{{"tool_name":"code_execution_tool","tool_args":{checked},@}}"#),
            "`tool_args`",
        ),
        (
            "anthropic",
            format!(
                r#"{{"type":"tool_use","id":"t","name":"code_execution_tool","input":{checked},@}}"#
            ),
            "`input`",
        ),
        (
            "responses",
            format!(
                r#"{{"type":"function_call","call_id":"c","name":"code_execution_tool","arguments":{checked_string},@}}"#
            ),
            "`arguments`",
        ),
        (
            "llama",
            format!(r#"{{"name":"code_execution_tool","parameters":{checked},@}}"#),
            "`parameters`",
        ),
    ];
    let seconds: Vec<(&str, String)> = vec![
        ("input", format!(r#""input":{hidden}"#)),
        ("parameters", format!(r#""parameters":{hidden}"#)),
        ("args", format!(r#""args":{hidden}"#)),
        ("kwargs", format!(r#""kwargs":{hidden}"#)),
        ("action_input", format!(r#""action_input":{hidden_string}"#)),
        (
            "tool_calls",
            format!(
                r#""tool_calls":[{{"id":"x","type":"function","function":{{"name":"code_execution_tool","arguments":{hidden_string}}}}}]"#
            ),
        ),
        (
            "function_call",
            format!(
                r#""function_call":{{"name":"code_execution_tool","arguments":{hidden_string}}}"#
            ),
        ),
        ("arguments", format!(r#""arguments":{hidden}"#)),
        ("tool_args", format!(r#""tool_args":{hidden}"#)),
    ];
    let mut refused = 0;
    for (envelope, template, own) in &envelopes {
        for (field, second) in &seconds {
            if own.trim_matches('`') == *field {
                continue;
            }
            let call = template.replace('@', second);
            let (out, code, _) = run(&sb, &["--quiet"], &call);
            assert_eq!(code, 1, "{envelope} + {field}: {out}");
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(
                v["error"]["category"], "malformed_call",
                "{envelope} + {field}"
            );
            let message = v["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(&format!("`{field}`")) && message.contains(own),
                "{envelope} + {field}: {message}"
            );
            refused += 1;
        }
    }
    assert!(refused >= 40, "{refused}");
    // Nested: `function.parameters` beside `function.arguments`, `params.input` beside
    // `params.arguments`, `functionCall.arguments` beside `functionCall.args`.
    for (call, both) in [
        (
            format!(
                r#"{{"id":"c","type":"function","function":{{"name":"code_execution_tool","arguments":{checked_string},"parameters":{hidden}}}}}"#
            ),
            ["`function.arguments`", "`function.parameters`"],
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"code_execution_tool","arguments":{checked},"input":{hidden}}}}}"#
            ),
            ["`params.arguments`", "`params.input`"],
        ),
        (
            format!(
                r#"{{"functionCall":{{"name":"code_execution_tool","args":{checked},"arguments":{hidden}}}}}"#
            ),
            ["`functionCall.args`", "`functionCall.arguments`"],
        ),
    ] {
        let (out, code, _) = run(&sb, &["--quiet"], &call);
        assert_eq!(code, 1, "{call}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let message = v["error"]["message"].as_str().unwrap();
        assert!(both.iter().all(|b| message.contains(b)), "{message}");
    }
}

/// A key given twice is two readings: this gate would check one and a tool's JSON reader may
/// run the other. Refused wherever it is in the arguments, as sent or inside a string.
#[test]
fn a_repeated_key_in_the_arguments_is_refused() {
    let sb = Sandbox::new();
    for (call, key) in [
        (
            r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"ls","code":"sudo id"}}"#,
            "argument `code`",
        ),
        (
            r#"{"id":"c","type":"function","function":{"name":"code_execution_tool","arguments":"{\"runtime\":\"terminal\",\"code\":\"sudo id\",\"code\":\"ls\"}"}}"#,
            "argument `code`",
        ),
        (
            r#"{"name":"memory_save","arguments":{"text":"a","metadata":{"k":1,"k":2}}}"#,
            "key `k` (in the argument at /metadata)",
        ),
        (
            r#"{"name":"memory_save","arguments":{"text":"a","list":[{"a":1},{"b":1,"b":2}]}}"#,
            "key `b` (in the argument at /list/1)",
        ),
    ] {
        let (out, code, _) = run(&sb, &["--quiet"], call);
        assert_eq!(code, 1, "{call}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["category"], "malformed_call");
        assert!(v["error"]["message"].as_str().unwrap().contains(key), "{v}");
    }
    // Distinct keys in distinct objects are fine.
    let (_, code, _) = run(
        &sb,
        &["--quiet"],
        r#"{"name":"memory_save","arguments":{"text":"a","metadata":{"k":1,"j":{"k":2}}}}"#,
    );
    assert_eq!(code, 0);
}

/// Tool names with spaces, line breaks or controls around them are the tool Python's
/// `.strip()` would dispatch to: read as that name (an `envelope` correction) and checked.
#[test]
fn names_are_trimmed_of_whitespace_and_controls_before_lookup() {
    let sb = Sandbox::new();
    for name in [
        "code_execution_tool\t",
        "code_execution_tool\r",
        "code_execution_tool\n",
        "code_execution_tool\u{a0}",
        " code_execution_tool",
        "\u{2003}code_execution_tool\u{3000}",
        "code_execution_tool\u{1f}",
    ] {
        let call =
            json!({"tool_name": name, "tool_args": {"runtime": "terminal", "code": "sudo id"}});
        let (out, code, _) = run(&sb, &["--report"], &call.to_string());
        assert_eq!(code, 1, "{name:?}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["category"], "policy_blocked", "{name:?}: {v}");
        assert_eq!(v["tool"], "code_execution_tool", "{name:?}");
    }
    let call = json!({"tool_name": "response\u{a0}", "tool_args": {"text": "x"}});
    let (out, code, _) = run(&sb, &["--report"], &call.to_string());
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["call"]["tool_name"], "response");
    assert!(
        v["corrections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "envelope")
    );
}

/// The Llama shape `{"name", "parameters"}` is read, corrected and written back as it came.
#[test]
fn the_llama_shape_is_read() {
    let sb = Sandbox::new();
    let (out, code, _) = run(
        &sb,
        &["--quiet"],
        r#"{"name":"response","parameters":{"message":"done"}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\"name\":\"response\",\"parameters\":{\"text\":\"done\"}}\n"
    );
}

/// Two calls back to back in one document: one reading would keep the first and drop the
/// other, which the agent would then never run. Refused, saying how to send several.
#[test]
fn calls_back_to_back_are_refused_not_dropped() {
    // Two <tool_call> blocks are parallel calls now, each decided (tests/cli/dialects.rs).
    let sb = Sandbox::new();
    for input in [
        r#"{"tool_name":"response","tool_args":{"text":"a"}}{"tool_name":"response","tool_args":{"text":"b"}}"#,
        "```json\n{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"a\"}}\n{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"b\"}}\n```",
    ] {
        let (out, code, _) = run(&sb, &["--quiet"], input);
        assert_eq!(code, 1, "{input}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("2 calls came back to back"),
            "{v}"
        );
    }
}

/// The smaller items: a letter dropped from a short name is one edit like any other; a
/// `tool_not_found` says not to retry the call while pointing at the tools there are; a call
/// cut off in an OpenAI envelope is shown an OpenAI call.
#[test]
fn near_misses_refusals_and_suggestions_fit_the_call() {
    let sb = Sandbox::new();
    for (sent, fixed) in [("qury", "query"), ("qeury", "query"), ("querry", "query")] {
        let call = json!({"tool_name": "memory_load", "tool_args": {sent: "prefs"}});
        let (out, code, _) = run(&sb, &["--quiet"], &call.to_string());
        assert_eq!(code, 0, "{sent}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["tool_args"][fixed], "prefs", "{sent}");
    }
    let policy = sb.file("p.toml", "[gate]\nunknown_tools = \"reject\"\n");
    let out = sb
        .cmd()
        .arg("--policy")
        .arg(&policy)
        .args(["gate", "--quiet", "--no-telemetry"])
        .write_stdin(r#"{"tool_name":"no_such_tool","tool_args":{}}"#)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["category"], "tool_not_found");
    assert_eq!(v["error"]["retryable"], false);
    let suggestion = v["error"]["suggestion"].as_str().unwrap();
    assert!(
        suggestion.starts_with("Do not call \"no_such_tool\" again"),
        "{suggestion}"
    );
    assert!(suggestion.contains("response"), "{suggestion}");

    let cut = r#"{"id":"call_1","type":"function","function":{"name":"memory_load","arguments":"{\"query\":\"pre"}}"#;
    let (out, code, _) = run(&sb, &["--quiet"], cut);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    let suggestion = v["error"]["suggestion"].as_str().unwrap();
    assert!(suggestion.contains(r#""type": "function""#), "{suggestion}");
    assert!(!suggestion.contains("tool_name"), "{suggestion}");
}
