//! Every repair of the lenient reader and every text dialect, in every envelope, through the
//! real binary, each with the exact call that must come out.

use serde_json::{Value, json};

use crate::common::{Sandbox, correction_kinds, gate};

const ARGS: &str = r#"{"runtime":"terminal","code":"ls -la","session":0,"reset":false}"#;

/// One clean call per envelope (arguments as an object, an extra `meta: null` field).
fn envelopes() -> Vec<(&'static str, String)> {
    let a = ARGS;
    vec![
        (
            "agent-zero",
            format!(
                r#"{{"thoughts":["list it"],"tool_name":"code_execution_tool","tool_args":{a},"meta":null}}"#
            ),
        ),
        (
            "openai",
            format!(
                r#"{{"id":"call_1","type":"function","function":{{"name":"code_execution_tool","arguments":{a}}},"meta":null}}"#
            ),
        ),
        (
            "openai-responses",
            format!(
                r#"{{"type":"function_call","call_id":"call_2","name":"code_execution_tool","arguments":{a},"meta":null}}"#
            ),
        ),
        (
            "anthropic",
            format!(
                r#"{{"type":"tool_use","id":"toolu_1","name":"code_execution_tool","input":{a},"meta":null}}"#
            ),
        ),
        (
            "mcp",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"code_execution_tool","arguments":{a}}},"meta":null}}"#
            ),
        ),
        (
            "gemini",
            format!(
                r#"{{"functionCall":{{"name":"code_execution_tool","args":{a}}},"meta":null}}"#
            ),
        ),
        (
            "plain",
            format!(r#"{{"name":"code_execution_tool","arguments":{a},"meta":null}}"#),
        ),
    ]
}

/// `"key":` → `key:` for identifier-like keys.
fn unquote_keys(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let end = after.find('"').unwrap();
        let word = &after[..end];
        let ident = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ident && after[end + 1..].starts_with(':') {
            out.push_str(word);
        } else {
            out.push('"');
            out.push_str(word);
            out.push('"');
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

type Break = fn(&str) -> String;

/// The repairs of issue 3 item 1, as ways to break a clean call.
const REPAIRS: &[(&str, Break)] = &[
    ("markdown fence", |t| format!("```json\n{t}\n```")),
    ("bare fence", |t| format!("```\n{t}\n```\n")),
    ("prose around", |t| {
        format!("Sure! Here is the call you asked for:\n{t}\nLet me know if you need more.")
    }),
    ("line comment", |t| t.replacen('{', "{ // the call\n", 1)),
    ("block comment", |t| t.replacen('{', "{ /* the call */ ", 1)),
    ("single quotes", |t| t.replace('"', "'")),
    ("backtick strings", |t| t.replace("\"ls -la\"", "`ls -la`")),
    ("unquoted keys", |t| unquote_keys(t)),
    ("trailing commas", |t| {
        t.replace('}', ",}").replace(']', ",]")
    }),
    ("python literals", |t| {
        t.replace("false", "False").replace("null", "None")
    }),
    ("undefined", |t| t.replace("null", "undefined")),
    ("doubled root", |t| format!("{{{t}}}")),
    ("raw newline in a string", |t| {
        t.replace("ls -la", "ls\n-la")
    }),
    ("cut off between values", |t| {
        t.trim_end_matches('}').to_string()
    }),
];

#[test]
fn every_repair_in_every_envelope() {
    let sb = Sandbox::new();
    for (shape, clean) in envelopes() {
        let expected: Value = serde_json::from_str(&clean).unwrap();
        // Two calls back to back are no repair: one would be dropped, so the document is
        // refused in every envelope.
        let twice = format!(
            "{clean}\n{}",
            r#"{"tool_name":"response","tool_args":{"text":"second"}}"#
        );
        let (out, code, _) = gate(&sb, &["--quiet", "--report"], twice.as_bytes());
        assert_eq!(code, 1, "{shape} / two calls back to back");
        assert!(
            out["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("2 calls came back to back")),
            "{shape}: {out}"
        );
        for (repair, breaker) in REPAIRS {
            let broken = breaker(&clean);
            let (out, code, _) = gate(&sb, &["--quiet", "--report"], broken.as_bytes());
            let case = format!("{shape} / {repair}: {broken}");
            assert_eq!(code, 0, "{case}\n{out}");
            assert_eq!(out["verdict"], "corrected", "{case}");
            assert_eq!(out["shape"], shape, "{case}");
            let mut call = out["call"].clone();
            if *repair == "raw newline in a string" {
                let code_at = [
                    "/tool_args/code",
                    "/function/arguments/code",
                    "/arguments/code",
                    "/input/code",
                    "/params/arguments/code",
                    "/functionCall/args/code",
                ]
                .into_iter()
                .find(|p| call.pointer(p).is_some())
                .unwrap();
                assert_eq!(call.pointer(code_at).unwrap(), "ls\n-la", "{case}");
                *call.pointer_mut(code_at).unwrap() = json!("ls -la");
            }
            assert_eq!(call, expected, "{case}");
            let kinds = correction_kinds(&out);
            assert!(kinds.iter().any(|k| k == "repair"), "{case}: {kinds:?}");
            if *repair == "two objects back to back" {
                assert!(!out["warnings"].as_array().unwrap().is_empty(), "{case}");
            }
        }
    }
}

#[test]
fn cut_strings_numbers_and_keys_are_never_completed() {
    let sb = Sandbox::new();
    let clean = r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"ls -la","session":10}}"#;
    let cuts = [
        ("inside a string", clean.find("ls -la").unwrap() + 3),
        ("inside a number", clean.find("10").unwrap() + 1),
        ("a number at the end", clean.find("10").unwrap() + 2),
        ("inside a key", clean.find("session").unwrap() + 3),
        (
            "a key without its value",
            clean.find("session").unwrap() + 9,
        ),
    ];
    for (what, at) in cuts {
        let (out, code, _) = gate(&sb, &["--quiet"], &clean.as_bytes()[..at]);
        assert_eq!(code, 1, "{what}");
        assert_eq!(out["error"]["category"], "malformed_call", "{what}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(message.contains("output was cut off"), "{what}: {message}");
        assert!(message.contains("line 1, column"), "{what}: {message}");
    }
    // Unreadable input names line and column.
    let (out, _, _) = gate(
        &sb,
        &["--quiet"],
        b"{\n  \"tool_name\": \"x\",\n  \"tool_args\": {\"a\": @}\n}",
    );
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("line 3"), "{message}");
}

/// A call missing a comma is not read from the object inside it: its arguments (an object
/// with a `name`) were once taken for the call, and another tool went out with exit 0.
#[test]
fn an_object_that_fails_is_never_replaced_by_one_inside_it() {
    let sb = Sandbox::new();
    for broken in [
        r#"{"thoughts":["Load the git skill."] "tool_name":"skills_tool:load","tool_args":{"name":"git"}}"#,
        r#"{"tool_name":"call_subordinate" "tool_args":{"name":"response","arguments":{"text":"done"}}}"#,
        r#"Here: {"tool_name":"x" "tool_args":{"a":{"name":"response","input":{"text":"y"}}}}"#,
    ] {
        let (out, code, _) = gate(&sb, &["--quiet"], broken.as_bytes());
        assert_eq!(code, 1, "{broken}: {out}");
        assert_eq!(out["error"]["category"], "malformed_call", "{broken}");
    }
    // A colon missing between two strings is read in (issue 37): the call is the outer
    // object, whose arguments this tool refuses, never the `response` call inside it.
    let (out, code, _) = gate(
        &sb,
        &["--quiet"],
        br#"{"tool_name" "code_execution_tool", "tool_args": {"name":"response","arguments":{"text":"y"}}}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["error"]["tool"], "code_execution_tool", "{out}");
    // A `{` in the prose before a whole call opens another reading of the text (Agent Zero's
    // own parser takes the first `{`): refused, broken or not (issue 39).
    for text in [
        r#"First {"oops" "x":{"name":"no"}} then {"tool_name":"response","tool_args":{"text":"hi"}}"#,
        r#"First {oops} then {"tool_name":"response","tool_args":{"text":"hi"}} {it}"#,
    ] {
        let (out, code, _) = gate(&sb, &["--quiet"], text.as_bytes());
        assert_eq!(code, 1, "{out}");
        assert!(
            out["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("a `{` in the text before the call")),
            "{out}"
        );
    }
}

#[test]
fn string_arguments_are_repaired_inside() {
    let sb = Sandbox::new();
    let call = json!({"id":"call_9","type":"function","function":{"name":"memory_load","arguments":"{'search': 'notes', limit: '5',}"}});
    let (out, code, _) = gate(&sb, &["--quiet", "--report"], call.to_string().as_bytes());
    assert_eq!(code, 0, "{out}");
    let args: Value =
        serde_json::from_str(out["call"]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"query":"notes","limit":5}));
    assert!(
        out["corrections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "repair")
    );
}

/// The text dialects of issue 3 item 2, and what each must become.
fn dialects() -> Vec<(&'static str, String)> {
    vec![
        (
            "function_calls",
            "<function_calls>\n<invoke name=\"code_execution_tool\">\n<parameter name=\"runtime\">terminal</parameter>\n<parameter name=\"code\">ls -la</parameter>\n<parameter name=\"session\">0</parameter>\n<parameter name=\"reset\">false</parameter>\n</invoke>\n</function_calls>".to_string(),
        ),
        (
            "invoke without function_calls, with prose",
            "I'll list the files.\n<invoke name=\"code_execution_tool\"><parameter name=\"runtime\">terminal</parameter><parameter name=\"code\">ls -la</parameter><parameter name=\"session\">0</parameter><parameter name=\"reset\">false</parameter></invoke>".to_string(),
        ),
        (
            "invoke with tool_args",
            format!("<invoke name=\"code_execution_tool\"><tool_args>{ARGS}</tool_args></invoke>"),
        ),
        (
            "tool_call with a plain call",
            format!("<tool_call>{{\"name\": \"code_execution_tool\", \"arguments\": {ARGS}}}</tool_call>"),
        ),
        (
            "tool_call with a repaired call",
            format!("<tool_call>\n{{'name': 'code_execution_tool', 'arguments': {},}}\n</tool_call>", ARGS.replace('"', "'")),
        ),
    ]
}

#[test]
fn every_dialect_comes_out_as_agent_zero_or_as_emitted() {
    let sb = Sandbox::new();
    let want_args: Value = serde_json::from_str(ARGS).unwrap();
    for (dialect, text) in dialects() {
        let (out, code, _) = gate(&sb, &["--quiet", "--report"], text.as_bytes());
        assert_eq!(code, 0, "{dialect}: {out}");
        // A Hermes call object in <tool_call> is answered in kind (tests/cli/dialects.rs): its
        // report shows the call as plain JSON, and reading it changed no envelope.
        let in_kind = dialect.starts_with("tool_call");
        let want = if in_kind {
            json!({"name":"code_execution_tool","arguments":want_args})
        } else {
            json!({"tool_name":"code_execution_tool","tool_args":want_args})
        };
        assert_eq!(out["call"], want, "{dialect}");
        assert_eq!(
            out["corrections"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["kind"] == "envelope"),
            !in_kind,
            "{dialect}"
        );
        for (shape, clean) in envelopes() {
            let (out, code, _) = gate(&sb, &["--quiet", "--emit", shape], text.as_bytes());
            assert_eq!(code, 0, "{dialect} as {shape}");
            let mut expected: Value = serde_json::from_str(&clean).unwrap();
            // Conversion carries only the call: no `meta`, no `thoughts`, derived ids.
            let expected_obj = expected.as_object_mut().unwrap();
            expected_obj.remove("meta");
            expected_obj.remove("thoughts");
            for key in ["id", "call_id"] {
                if expected_obj.contains_key(key) {
                    expected_obj.insert(key.to_string(), out[key].clone());
                }
            }
            let mut got = out.clone();
            if shape == "openai" || shape == "openai-responses" {
                // Converted OpenAI calls carry their arguments as a JSON string.
                let at = if shape == "openai" {
                    "/function/arguments"
                } else {
                    "/arguments"
                };
                let args: Value =
                    serde_json::from_str(got.pointer(at).unwrap().as_str().unwrap()).unwrap();
                *got.pointer_mut(at).unwrap() = args;
            }
            assert_eq!(got, expected, "{dialect} as {shape}");
        }
    }
    // A <tool_call> may hold any envelope.
    for (shape, clean) in envelopes() {
        let text = format!("<tool_call>{clean}</tool_call>");
        let (out, code, _) = gate(&sb, &["--quiet", "--report"], text.as_bytes());
        assert_eq!(code, 0, "{shape}");
        assert_eq!(out["shape"], shape);
        assert_eq!(out["call"]["tool_args"], want_args, "{shape}");
    }
}

#[test]
fn malformed_dialects_are_rejected_with_what_is_missing() {
    let sb = Sandbox::new();
    for text in [
        "<function_calls><invoke><parameter name=\"a\">1</parameter></invoke></function_calls>",
        "<function_calls><invoke name=\"x\"><parameter name=\"a\">1</invoke></function_calls>",
    ] {
        let (out, code, _) = gate(&sb, &["--quiet"], text.as_bytes());
        assert_eq!(code, 1, "{text}");
        assert_eq!(out["error"]["category"], "malformed_call");
        assert!(
            out["error"]["message"].as_str().unwrap().contains("line 1"),
            "{out}"
        );
    }
}

/// `<parameter>` values are text: a tool's string argument keeps the text even where it reads
/// as JSON, while typed arguments (and tools metagate does not know) take the JSON reading.
#[test]
fn dialect_parameters_read_as_the_schema_types_them() {
    let sb = Sandbox::new();
    let call = "<function_calls><invoke name=\"code_execution_tool\">\
        <parameter name=\"runtime\">python</parameter>\
        <parameter name=\"command\">{\"a\": [1, 2]}</parameter>\
        <parameter name=\"session\">\n0\n</parameter>\
        <parameter name=\"reset\">true</parameter></invoke></function_calls>";
    let (out, code, _) = gate(&sb, &["--quiet", "--report"], call.as_bytes());
    assert_eq!(code, 0, "{out}");
    // `command` is an alias of the string `code`: the text, not the object it reads as.
    assert_eq!(
        out["call"]["tool_args"],
        json!({"runtime":"python","code":"{\"a\": [1, 2]}","session":0,"reset":true})
    );
    assert!(
        !correction_kinds(&out).contains(&"coerce".to_string()),
        "{out}"
    );
    let (out, code, err) = gate(
        &sb,
        &["--quiet", "--explain"],
        b"<invoke name=\"response\"><parameter name=\"text\">42</parameter></invoke>",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["tool_args"]["text"], "42");
    assert!(
        err.contains("envelope: <parameter> \"text\" kept as text"),
        "{err}"
    );
    let (out, code, _) = gate(
        &sb,
        &["--quiet"],
        b"<invoke name=\"my_tool\"><parameter name=\"n\">42</parameter></invoke>",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["tool_args"]["n"], 42);
    // The output is the call: read again, it is left as it is.
    let (again, code, _) = gate(&sb, &["--quiet", "--report"], out.to_string().as_bytes());
    assert_eq!(code, 0);
    assert_eq!(again["verdict"], "pass", "{again}");
}
