//! `metagate gate` driven as a user drives it: stdin in, stdout and exit status out.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{
    BACKENDS, Backend, Sandbox, correction_kinds, fixture, fixture_path, gate, gate_lines,
    new_store, store_rows,
};

// ---- Seed 000's four verification scenarios ------------------------------------------------

#[test]
fn seed_runtime_bash_becomes_terminal_and_is_reported() {
    let sb = Sandbox::new();
    let input =
        r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"echo hello"}}"#;
    let (out, code, stderr) = gate(&sb, &[], input.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(out["tool_args"]["runtime"], "terminal");
    assert_eq!(out["tool_args"]["code"], "echo hello");
    assert!(
        stderr.contains(r#"runtime "bash" → "terminal" (value_alias)"#),
        "{stderr}"
    );

    let (report, code, _) = gate(&sb, &["--report"], input.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(report["verdict"], "corrected");
    let first = &report["corrections"][0];
    assert_eq!(
        (&first["kind"], &first["path"], &first["from"], &first["to"]),
        (
            &json!("value_alias"),
            &json!("/runtime"),
            &json!("bash"),
            &json!("terminal")
        )
    );
}

#[test]
fn seed_python_without_code_is_rejected_naming_code() {
    let sb = Sandbox::new();
    let (out, code, _) = gate(
        &sb,
        &[],
        fixture("calls/python-without-code.json").as_bytes(),
    );
    assert_eq!(code, 1);
    assert_eq!(out["error"]["category"], "invalid_parameters");
    assert_eq!(out["error"]["missing"], json!(["code"]));
    assert_eq!(out["error"]["retryable"], true);
    assert_eq!(out["error"]["tool"], "code_execution_tool");
    let feedback = out["feedback"].as_str().unwrap();
    assert!(feedback.starts_with("[tool_error]\ncategory: invalid_parameters\nerror: "));
    assert!(feedback.contains("\"code\""));
    assert!(feedback.ends_with("\nretryable: true"));
}

#[test]
fn seed_runtime_output_with_session_zero_passes_without_warning() {
    let sb = Sandbox::new();
    let (report, code, _) = gate(
        &sb,
        &["--report"],
        fixture("calls/output-session.json").as_bytes(),
    );
    assert_eq!(code, 0);
    assert_ne!(report["verdict"], "rejected");
    assert_eq!(report["warnings"], json!([]));
    assert_eq!(report["error"], Value::Null);
    assert_eq!(report["call"]["tool_args"]["runtime"], "output");
    assert_eq!(report["call"]["tool_args"]["session"], 0);
}

/// Seed 000's `arg_aliases`, copied from the seed (not from the built-in policy), with the
/// other arguments each tool needs to pass.
const ARG_ALIASES: &[(&str, &str, &str, &str)] = &[
    (
        "code_execution_tool",
        "command",
        "code",
        r#"{"runtime":"terminal"}"#,
    ),
    (
        "code_execution_tool",
        "script",
        "code",
        r#"{"runtime":"terminal"}"#,
    ),
    (
        "code_execution_tool",
        "cmd",
        "code",
        r#"{"runtime":"terminal"}"#,
    ),
    (
        "code_execution_tool",
        "language",
        "runtime",
        r#"{"code":"ls"}"#,
    ),
    ("code_execution_tool", "lang", "runtime", r#"{"code":"ls"}"#),
    ("response", "message", "text", "{}"),
    ("response", "content", "text", "{}"),
    ("response", "response", "text", "{}"),
    ("response", "answer", "text", "{}"),
    ("response", "reply", "text", "{}"),
    ("call_subordinate", "task", "message", "{}"),
    ("call_subordinate", "instruction", "message", "{}"),
    ("call_subordinate", "instructions", "message", "{}"),
    ("call_subordinate", "text", "message", "{}"),
    ("call_subordinate", "query", "message", "{}"),
    ("call_subordinate", "prompt", "message", "{}"),
    ("memory_load", "search", "query", "{}"),
    ("memory_load", "text", "query", "{}"),
    ("memory_load", "question", "query", "{}"),
    ("memory_load", "lookup", "query", "{}"),
    ("memory_save", "content", "text", "{}"),
    ("memory_save", "memory", "text", "{}"),
    ("memory_save", "data", "text", "{}"),
    ("memory_save", "message", "text", "{}"),
    ("search_engine", "search", "query", "{}"),
    ("search_engine", "text", "query", "{}"),
    ("search_engine", "question", "query", "{}"),
    ("search_engine", "q", "query", "{}"),
    ("browser_agent", "task", "message", "{}"),
    ("browser_agent", "instruction", "message", "{}"),
    ("browser_agent", "text", "message", "{}"),
    ("browser_agent", "query", "message", "{}"),
    ("browser_agent", "url", "message", "{}"),
    ("skills_tool", "action", "method", "{}"),
    ("skills_tool", "command", "method", "{}"),
    ("skills_tool", "operation", "method", "{}"),
];

/// Seed 000's `value_aliases` for `runtime`.
const RUNTIME_ALIASES: &[(&str, &str)] = &[
    ("bash", "terminal"),
    ("shell", "terminal"),
    ("sh", "terminal"),
    ("zsh", "terminal"),
    ("cmd", "terminal"),
    ("powershell", "terminal"),
    ("node", "nodejs"),
    ("js", "nodejs"),
    ("javascript", "nodejs"),
    ("py", "python"),
    ("python3", "python"),
];

#[test]
fn seed_every_argument_alias_is_corrected() {
    let sb = Sandbox::new();
    let mut input = String::new();
    for (tool, alias, _, rest) in ARG_ALIASES {
        let value = if *alias == "language" || *alias == "lang" {
            "python"
        } else {
            "VALUE"
        };
        let mut args: Value = serde_json::from_str(rest).unwrap();
        args[*alias] = json!(value);
        input.push_str(&json!({"tool_name": tool, "tool_args": args}).to_string());
        input.push('\n');
    }
    let lines = gate_lines(&sb, &["--report"], input.as_bytes());
    assert_eq!(lines.len(), ARG_ALIASES.len());
    for ((tool, alias, canonical, _), out) in ARG_ALIASES.iter().zip(&lines) {
        let case = format!("{tool}.{alias} → {canonical}");
        assert_eq!(out["verdict"], "corrected", "{case}: {out}");
        let args = &out["call"]["tool_args"];
        assert!(args.get(*alias).is_none(), "{case}: alias left in {args}");
        assert!(!args[*canonical].is_null(), "{case}: {args}");
        let alias_fix = out["corrections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "arg_alias")
            .unwrap_or_else(|| panic!("{case}: no arg_alias correction in {out}"));
        assert_eq!(alias_fix["from"], *alias, "{case}");
        assert_eq!(alias_fix["to"], *canonical, "{case}");
    }
}

#[test]
fn seed_every_runtime_value_alias_is_corrected_any_case_and_spacing() {
    let sb = Sandbox::new();
    let mut input = String::new();
    for (wrong, _) in RUNTIME_ALIASES {
        for spelled in [wrong.to_string(), format!("  {}  ", wrong.to_uppercase())] {
            let call = json!({"tool_name":"code_execution_tool","tool_args":{"runtime": spelled, "code":"x"}});
            input.push_str(&call.to_string());
            input.push('\n');
        }
    }
    let lines = gate_lines(&sb, &["--report"], input.as_bytes());
    let expected: Vec<&str> = RUNTIME_ALIASES.iter().flat_map(|(_, r)| [*r, *r]).collect();
    for (out, want) in lines.iter().zip(expected) {
        assert_eq!(out["call"]["tool_args"]["runtime"], want, "{out}");
        assert!(
            out["corrections"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["kind"] == "value_alias")
        );
    }
}

#[test]
fn seed_defaults_and_agent_zero_types() {
    let sb = Sandbox::new();
    let (out, code, _) = gate(&sb, &[], fixture("calls/reset-string.json").as_bytes());
    assert_eq!(code, 0);
    assert_eq!(
        out["tool_args"]["reset"], false,
        "\"false\" must not stay truthy"
    );
    assert_eq!(out["tool_args"]["session"], 1);
    let (out, _, _) = gate(&sb, &[], fixture("calls/runtime-bash.json").as_bytes());
    assert_eq!(out["tool_args"]["session"], 0);
    assert_eq!(out["tool_args"]["reset"], false);
    let (out, _, _) = gate(&sb, &[], fixture("calls/anthropic.json").as_bytes());
    assert_eq!(
        out["input"],
        json!({"message":"Summarize the report","profile":"researcher"})
    );
    let (out, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"memory_save","tool_args":{"text":"x","area":"attic"}}"#,
    );
    assert_eq!(code, 1);
    assert_eq!(out["error"]["category"], "invalid_parameters");
    let (out, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"memory_load","tool_args":{"query":"x","threshold":"0.7","limit":"3"}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out["tool_args"]["threshold"], json!(0.7));
    assert_eq!(out["tool_args"]["limit"], json!(3));
}

#[test]
fn canonical_and_alias_both_present_keeps_canonical_and_warns() {
    let sb = Sandbox::new();
    let (out, code, _) = gate(
        &sb,
        &["--report"],
        br#"{"tool_name":"response","tool_args":{"text":"same","message":"same"}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out["verdict"], "pass");
    assert_eq!(out["call"]["tool_args"]["text"], "same");
    assert_eq!(out["warnings"].as_array().unwrap().len(), 1);
}

/// Two values under an argument's name and its alias are two readings: refused, never one of
/// them passed on unchecked (a tool reading `file` would have read `/etc/passwd` past the path
/// check of `path`).
#[test]
fn canonical_and_alias_with_two_values_are_refused() {
    let sb = Sandbox::new();
    for (input, names) in [
        (
            r#"{"tool_name":"response","tool_args":{"text":"kept","message":"other"}}"#,
            ["text", "message"],
        ),
        (
            r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"ls","command":"sudo id"}}"#,
            ["code", "command"],
        ),
    ] {
        let (out, code, _) = gate(&sb, &["--report"], input.as_bytes());
        assert_eq!(code, 1, "{out}");
        assert_eq!(out["error"]["category"], "invalid_parameters", "{out}");
        assert_eq!(
            out["error"]["details"]["ambiguous"][0]["candidates"],
            json!(names),
            "{out}"
        );
    }
}

#[test]
fn blank_and_empty_arguments_are_missing() {
    let sb = Sandbox::new();
    for input in [
        r#"{"tool_name":"response","tool_args":{}}"#,
        r#"{"tool_name":"response","tool_args":{"text":"  "}}"#,
        r#"{"tool_name":"response","tool_args":{"text":null}}"#,
        r#"{"tool_name":"response"}"#,
    ] {
        let (out, code, _) = gate(&sb, &[], input.as_bytes());
        assert_eq!(code, 1, "{input}");
        assert_eq!(out["error"]["missing"], json!(["text"]), "{input}");
    }
}

#[test]
fn reasoning_fields_are_stripped() {
    let sb = Sandbox::new();
    let (out, code, _) = gate(
        &sb,
        &["--report"],
        fixture("calls/think-fields.json").as_bytes(),
    );
    assert_eq!(code, 0);
    assert_eq!(
        out["call"]["tool_args"],
        json!({"query":"rust serde preserve_order"})
    );
    assert_eq!(out["corrections"][0]["kind"], "strip");
}

#[test]
fn unknown_tools_pass_or_are_rejected_as_the_policy_says() {
    let sb = Sandbox::new();
    let input = fixture("calls/unknown-tool.json");
    let (out, code, stderr) = gate(&sb, &[], input.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(out, json!({"tool_name":"my_tool","tool_args":{"x":1}}));
    // Unchecked, not unchanged: reasoning fields are still stripped from unknown tools.
    assert!(stderr.contains("passed through unchecked"), "{stderr}");
    let policy = sb.file("strict.toml", "[gate]\nunknown_tools = \"reject\"\n");
    let (out, code, _) = gate(
        &sb,
        &["--policy", policy.to_str().unwrap()],
        input.as_bytes(),
    );
    assert_eq!(code, 1);
    assert_eq!(out["error"]["category"], "tool_not_found");
    assert_eq!(out["error"]["retryable"], false);
}

#[test]
fn method_suffix_supplies_the_method_argument() {
    let sb = Sandbox::new();
    let (out, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"skills_tool:load","tool_args":{"skill_name":"git"}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out["tool_name"], "skills_tool:load");
    let (out, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"skills_tool","tool_args":{"skill_name":"git"}}"#,
    );
    assert_eq!(code, 1);
    assert_eq!(out["error"]["missing"], json!(["method"]));
    // Agent Zero runs `code_execution_tool:` as `code_execution_tool`: judged as it, so the
    // shell checks apply, and an empty method supplies no method argument.
    let (out, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"code_execution_tool:","tool_args":{"runtime":"terminal","code":"echo $(id)"}}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["error"]["category"], "policy_blocked");
    let (out, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"skills_tool:","tool_args":{"skill_name":"git"}}"#,
    );
    assert_eq!(code, 1);
    assert_eq!(out["error"]["missing"], json!(["method"]));
    // The name says one method, the argument another: two readings, refused.
    let (out, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"skills_tool:load","tool_args":{"method":"list","skill_name":"git"}}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out["error"]["details"]["ambiguous"][0]["candidates"],
        json!(["load", "list"])
    );
    let (_, code, _) = gate(
        &sb,
        &[],
        br#"{"tool_name":"skills_tool:load","tool_args":{"method":"load","skill_name":"git"}}"#,
    );
    assert_eq!(code, 0);
}

// ---- Envelopes -----------------------------------------------------------------------------

/// Every envelope of docs/gate.md ("Envelopes") with a call that needs correcting; where the arguments
/// live; whether they are a JSON string.
const ENVELOPES: &[(&str, &str, &str, bool)] = &[
    (
        "agent-zero",
        r#"{"thoughts":["t"],"headline":"h","tool_name":"response","tool_args":{"message":"hi"},"extra":{"k":[1,2]}}"#,
        "/tool_args",
        false,
    ),
    (
        "openai",
        r#"{"id":"call_1","type":"function","function":{"name":"response","arguments":"{\"message\":\"hi\"}"},"index":0}"#,
        "/function/arguments",
        true,
    ),
    (
        "openai-object",
        r#"{"id":"call_1","type":"function","function":{"name":"response","arguments":{"message":"hi"}}}"#,
        "/function/arguments",
        false,
    ),
    (
        "openai-responses",
        r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"response","arguments":"{\"message\":\"hi\"}","status":"completed"}"#,
        "/arguments",
        true,
    ),
    (
        "anthropic",
        r#"{"type":"tool_use","id":"toolu_1","name":"response","input":{"message":"hi"},"cache_control":{"type":"ephemeral"}}"#,
        "/input",
        false,
    ),
    (
        "mcp",
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"response","arguments":{"message":"hi"},"_meta":{"progressToken":1}}}"#,
        "/params/arguments",
        false,
    ),
    (
        "gemini",
        r#"{"functionCall":{"name":"response","args":{"message":"hi"},"id":"g1"},"thoughtSignature":"abc"}"#,
        "/functionCall/args",
        false,
    ),
    (
        "plain",
        r#"{"name":"response","arguments":{"message":"hi"},"meta":null}"#,
        "/arguments",
        false,
    ),
];

fn without(mut doc: Value, pointer: &str) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let holder = if parent.is_empty() {
        &mut doc
    } else {
        doc.pointer_mut(parent).unwrap()
    };
    holder.as_object_mut().unwrap().remove(key);
    doc
}

#[test]
fn every_envelope_round_trips_in_its_own_shape() {
    let sb = Sandbox::new();
    for (name, input, args_at, as_string) in ENVELOPES {
        let (out, code, _) = gate(&sb, &["--quiet"], input.as_bytes());
        assert_eq!(code, 0, "{name}");
        let original: Value = serde_json::from_str(input).unwrap();
        // Every other field equal as JSON values…
        assert_eq!(
            without(out.clone(), args_at),
            without(original, args_at),
            "{name}"
        );
        // …and the arguments corrected, in the form they came in.
        let args = out.pointer(args_at).unwrap();
        let args: Value = if *as_string {
            serde_json::from_str(args.as_str().expect("still a string")).unwrap()
        } else {
            args.clone()
        };
        assert_eq!(args, json!({"text":"hi"}), "{name}");
        // Key order of the envelope is kept.
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            keys(&out),
            keys(&serde_json::from_str(input).unwrap()),
            "{name}"
        );
    }
}

#[test]
fn agent_zero_spellings_are_normalized() {
    let sb = Sandbox::new();
    let (out, code, _) = gate(
        &sb,
        &["--report"],
        fixture("calls/args-string.json").as_bytes(),
    );
    assert_eq!(code, 0);
    let call = &out["call"];
    assert_eq!(call["tool_name"], "memory_save");
    assert_eq!(
        call["tool_args"],
        json!({"text":"The user prefers metric units.","area":"main"})
    );
    assert!(call.get("tool").is_none() && call.get("args").is_none());
    let envelope_fixes = out["corrections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "envelope")
        .count();
    assert_eq!(envelope_fixes, 3);
}

#[test]
fn emit_converts_between_shapes() {
    let sb = Sandbox::new();
    let input = fixture("calls/runtime-bash.json");
    let expect_args = json!({"runtime":"terminal","code":"echo hello","session":0,"reset":false});
    let cases: &[(&str, &str, bool)] = &[
        ("openai", "/function/arguments", true),
        ("openai-responses", "/arguments", true),
        ("anthropic", "/input", false),
        ("mcp", "/params/arguments", false),
        ("gemini", "/functionCall/args", false),
        ("plain", "/arguments", false),
        ("agent-zero", "/tool_args", false),
    ];
    for (shape, at, as_string) in cases {
        let (out, code, _) = gate(&sb, &["--quiet", "--emit", shape], input.as_bytes());
        assert_eq!(code, 0, "{shape}");
        let args = out.pointer(at).unwrap_or_else(|| panic!("{shape}: {out}"));
        let args: Value = if *as_string {
            serde_json::from_str(args.as_str().unwrap()).unwrap()
        } else {
            args.clone()
        };
        assert_eq!(args, expect_args, "{shape}");
        // What --emit wrote is itself read back as the same call.
        let (again, code, _) = gate(&sb, &["--quiet", "--report"], out.to_string().as_bytes());
        assert_eq!(code, 0);
        assert_eq!(again["verdict"], "pass", "{shape}: {again}");
        assert_eq!(again["tool"], "code_execution_tool");
    }
    // An MCP id may be a number; OpenAI's and Anthropic's are strings.
    let mcp = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"response","arguments":{"text":"x"}}}"#;
    for (shape, at) in [
        ("anthropic", "/id"),
        ("openai", "/id"),
        ("openai-responses", "/call_id"),
    ] {
        let (out, _, _) = gate(&sb, &["--quiet", "--emit", shape], mcp);
        assert_eq!(out.pointer(at), Some(&json!("7")), "{shape}: {out}");
    }
    let (out, _, _) = gate(&sb, &["--quiet", "--emit", "mcp"], mcp);
    assert_eq!(out["id"], 7);
    let out = sb
        .cmd()
        .args(["gate", "--emit", "xml"])
        .write_stdin("{}")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

// ---- Streams -------------------------------------------------------------------------------

#[test]
fn jsonl_answers_a_thousand_mixed_lines_in_order() {
    let sb = Sandbox::new();
    let kinds = [
        r#"{"tool_name":"response","tool_args":{"text":"@"}}"#,
        r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"echo @"}}"#,
        r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"python"}}"#,
        "not json at all",
        r#"{"id":"call_@","type":"function","function":{"name":"memory_load","arguments":"{\"search\":\"@\"}"}}"#,
        "[1,2,3]",
        "",
    ];
    let mut input = String::new();
    for i in 0..1000 {
        input.push_str(&kinds[i % kinds.len()].replace('@', &i.to_string()));
        input.push('\n');
    }
    let lines = gate_lines(&sb, &[], input.as_bytes());
    assert_eq!(lines.len(), 1000);
    for (i, out) in lines.iter().enumerate() {
        let tag = i.to_string();
        match i % kinds.len() {
            0 => assert_eq!(out["tool_args"]["text"], tag),
            1 => assert_eq!(out["tool_args"]["code"], format!("echo {tag}")),
            2 => assert_eq!(out["error"]["missing"], json!(["code"])),
            3 | 5 | 6 => assert_eq!(out["error"]["category"], "malformed_call", "line {i}"),
            4 => {
                assert_eq!(out["id"], format!("call_{tag}"));
                let args: Value =
                    serde_json::from_str(out["function"]["arguments"].as_str().unwrap()).unwrap();
                assert_eq!(args["query"], tag);
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn jsonl_coprocess_gets_each_answer_before_sending_the_next_line() {
    let sb = Sandbox::new();
    let mut child = sb
        .std_cmd()
        .args(["gate", "--jsonl", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    for i in 0..50 {
        let call = if i % 2 == 0 {
            json!({"tool_name":"response","tool_args":{"message": i.to_string()}})
        } else {
            json!({"tool_name":"code_execution_tool","tool_args":{"runtime":"python"}})
        };
        writeln!(stdin, "{call}").unwrap();
        stdin.flush().unwrap();
        let answer = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no answer to line {i} while the writer waits"));
        let v: Value = serde_json::from_str(&answer).unwrap();
        if i % 2 == 0 {
            assert_eq!(v["tool_args"]["text"], i.to_string());
        } else {
            assert_eq!(v["error"]["category"], "invalid_parameters");
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

// ---- Idempotence ---------------------------------------------------------------------------

#[test]
fn gate_of_its_own_output_changes_nothing() {
    let sb = Sandbox::new();
    let dir = fixture_path("calls");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e == "jsonl") {
            continue;
        }
        let input = std::fs::read(&path).unwrap();
        let first = sb
            .cmd()
            .args(["gate", "--quiet"])
            .write_stdin(input)
            .output()
            .unwrap();
        if first.status.code() != Some(0) {
            continue;
        }
        let second = sb
            .cmd()
            .args(["gate", "--quiet", "--report"])
            .write_stdin(first.stdout.clone())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&second.stdout).unwrap();
        assert_eq!(report["verdict"], "pass", "{}: {report}", path.display());
        let again = sb
            .cmd()
            .args(["gate", "--quiet"])
            .write_stdin(first.stdout.clone())
            .output()
            .unwrap();
        assert_eq!(again.stdout, first.stdout, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} fixtures passed the gate");
}

// ---- Bad input -----------------------------------------------------------------------------

#[test]
fn bad_input_is_a_malformed_call_never_a_crash() {
    let sb = Sandbox::new();
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let big = format!(
        r#"{{"tool_name":"response","tool_args":{{"text":"{}"}}}}"#,
        "x".repeat(10 * 1024 * 1024)
    );
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("whitespace", b"  \n\t ".to_vec()),
        ("not json", b"hello there".to_vec()),
        ("array", b"[1,2]".to_vec()),
        ("string", b"\"tool\"".to_vec()),
        ("number", b"42".to_vec()),
        ("no tool name", b"{\"args\":{}}".to_vec()),
        ("deeply nested", nested.into_bytes()),
        ("invalid utf-8", vec![0xff, 0xfe, b'{', b'}']),
        (
            "10 MB of prose",
            "all work and no play ".repeat(500_000).into_bytes(),
        ),
        (
            "10 MB array",
            format!("[{}1]", "1,".repeat(5_000_000)).into_bytes(),
        ),
    ];
    let mut stream = Vec::new();
    for (name, input) in &cases {
        let (out, code, _) = gate(&sb, &[], input);
        assert_eq!(code, 1, "{name}");
        assert_eq!(out["error"]["category"], "malformed_call", "{name}");
        assert_eq!(out["error"]["retryable"], true, "{name}");
        if !input.contains(&b'\n') {
            stream.extend_from_slice(input);
            stream.push(b'\n');
        }
    }
    // The same inputs as lines of a stream: each answered in-band, the stream goes on.
    stream.extend_from_slice(br#"{"tool_name":"response","tool_args":{"text":"still here"}}"#);
    stream.push(b'\n');
    let lines = gate_lines(&sb, &[], &stream);
    let (last, bad) = lines.split_last().unwrap();
    assert_eq!(
        bad.len(),
        stream.iter().filter(|&&b| b == b'\n').count() - 1
    );
    assert!(
        bad.iter()
            .all(|l| l["error"]["category"] == "malformed_call")
    );
    assert_eq!(last["tool_args"]["text"], "still here");
    // A 10 MB call is simply a call.
    let (out, code, _) = gate(&sb, &["--quiet"], big.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(
        out["tool_args"]["text"].as_str().unwrap().len(),
        10 * 1024 * 1024
    );
}

/// Arguments filled in where none came keep the shape's form: a JSON string for OpenAI's.
#[test]
fn filled_in_arguments_keep_the_shapes_form() {
    let sb = Sandbox::new();
    let policy = sb.file(
        "p.toml",
        "[tools.t]\n[tools.t.args.a]\ntype = \"integer\"\ndefault = 1\n",
    );
    let policy = policy.to_str().unwrap();
    for (call, pointer) in [
        (
            r#"{"id":"c","type":"function","function":{"name":"t"}}"#,
            "/function/arguments",
        ),
        (
            r#"{"id":"c","type":"function","function":{"name":"t","arguments":null}}"#,
            "/function/arguments",
        ),
        (
            r#"{"type":"function_call","call_id":"c","name":"t"}"#,
            "/arguments",
        ),
    ] {
        let (out, code, _) = gate(&sb, &["--quiet", "--policy", policy], call.as_bytes());
        assert_eq!(code, 0, "{call}");
        assert_eq!(
            out.pointer(pointer),
            Some(&json!(r#"{"a":1}"#)),
            "{call}: {out}"
        );
    }
    let (out, _, _) = gate(&sb, &["--quiet", "--policy", policy], br#"{"name":"t"}"#);
    assert_eq!(out["arguments"], json!({"a": 1}));
}

/// One line out per line in holds for universal-newline readers too: a raw CR inside a call
/// that needs no correction once went out as it came, splitting its line in two.
#[test]
fn a_raw_carriage_return_never_splits_an_answer() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
        .write_stdin(
            "{\"tool_name\":\"response\",\r\"tool_args\":{\"text\":\"a\"}}\n\
             {\"tool_name\":\"response\",\"tool_args\":{\"text\":\"b\"}}\r\n",
        )
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\r'), "{text:?}");
    assert_eq!(text.lines().count(), 2, "{text:?}");
}

/// The 64 MiB limit is the call's: its line end does not count.
#[test]
fn a_call_of_exactly_the_limit_passes_with_its_line_end() {
    let sb = Sandbox::new();
    let (pre, post) = (r#"{"tool_name":"response","tool_args":{"text":""#, r#""}}"#);
    let mut call = String::with_capacity(64 << 20);
    call.push_str(pre);
    call.push_str(&"a".repeat((64 << 20) - pre.len() - post.len()));
    call.push_str(post);
    for args in [&["--quiet"][..], &["--quiet", "--jsonl"]] {
        let run = |input: String| {
            let out = sb
                .cmd()
                .arg("gate")
                .args(args)
                .arg("--no-telemetry")
                .write_stdin(input)
                .output()
                .unwrap();
            out.stdout
        };
        assert_eq!(run(format!("{call}\r\n")).len(), call.len() + 1, "{args:?}");
        // One byte more inside the call is over the limit.
        let stdout = run(format!("{}\n", call.replacen("aa", "aaa", 1)));
        let answer: Value = serde_json::from_slice(&stdout).unwrap();
        assert_eq!(answer["error"]["category"], "malformed_call", "{args:?}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("67108864 bytes"), "{message}");
        // What to do names the bound, not the form of a call, which was not what was wrong.
        let suggestion = answer["error"]["suggestion"].as_str().unwrap();
        assert!(suggestion.contains("at most 64 MiB"), "{suggestion}");
        assert!(
            !suggestion.contains("exactly one tool call"),
            "{suggestion}"
        );
    }
}

/// Input nested past the reader's depth says so, with the limit, in the message and in what
/// to do: a run of 100,000 `{` once read as "expected a key at line 1, column 130".
#[test]
fn nesting_too_deep_names_the_limit() {
    let sb = Sandbox::new();
    let braces = "{".repeat(100_000);
    let in_args = format!(
        r#"{{"tool_name":"response","tool_args":{{"text":{}}}}}"#,
        "[".repeat(100_000)
    );
    for input in [braces, in_args] {
        let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], input.as_bytes());
        assert_eq!(code, 1);
        let error = &out["error"];
        assert_eq!(error["category"], "malformed_call", "{out}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("nesting deeper than 128 levels at line 1"),
            "{message}"
        );
        let suggestion = error["suggestion"].as_str().unwrap();
        assert!(
            suggestion.contains("at most 128 levels deep"),
            "{suggestion}"
        );
    }
}

/// A lone surrogate escape (`\ud800`) is text serde_json refuses: it once panicked where an
/// argument was read as a value (telemetry, `--emit`, a shell argument). It is repaired to
/// U+FFFD, as the lenient reader repairs it anywhere else, and the stream goes on.
#[test]
fn a_lone_surrogate_escape_is_repaired_never_a_panic() {
    let calls = [
        r#"{"tool_name":"response","tool_args":{"text":"\ud800"}}"#,
        r#"{"tool_name":"response","tool_args":{"text":"a\udfff\u0041"}}"#,
        r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"echo \udfff"}}"#,
        r#"{"tool_name":"\ud800","tool_args":{}}"#,
    ];
    let recorded_runs: [&[&str]; 2] = [&["--quiet"], &["--quiet", "--emit", "openai"]];
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        for call in calls {
            for args in recorded_runs
                .iter()
                .copied()
                .chain([&["--no-telemetry"][..]])
            {
                let out = sb
                    .cmd()
                    .args(["--db", &db, "gate"])
                    .args(args)
                    .write_stdin(call)
                    .output()
                    .unwrap();
                let code = out.status.code().unwrap();
                assert!(
                    code == 0 || code == 1,
                    "{backend:?} {call} {args:?}: exit {code}"
                );
                let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
                let text = answer.to_string();
                assert!(
                    !text.contains("\\ud800") && !text.contains("\\udfff"),
                    "{backend:?}: {text}"
                );
            }
        }
        let (out, _, _) = gate(
            &sb,
            &["--db", &db, "--report", "--quiet"],
            calls[0].as_bytes(),
        );
        assert_eq!(out["call"]["tool_args"]["text"], "\u{fffd}", "{backend:?}");
        assert_eq!(out["verdict"], "corrected", "{backend:?}");
        let mut stream = calls.join("\n");
        stream.push_str("\n{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"after\"}}\n");
        let lines = gate_lines(&sb, &["--db", &db], stream.as_bytes());
        assert_eq!(lines.len(), calls.len() + 1, "{backend:?}");
        assert_eq!(
            lines[calls.len()]["tool_args"]["text"],
            "after",
            "{backend:?}"
        );
        // What the store kept is the repaired text, every call of the recorded runs, the
        // report and the stream.
        let rows = store_rows(&db, "SELECT tool, args FROM decisions ORDER BY id");
        assert_eq!(
            rows.len(),
            calls.len() * recorded_runs.len() + 1 + calls.len() + 1,
            "{backend:?}"
        );
        let stored_args =
            |row: &Vec<Value>| -> Value { serde_json::from_str(row[1].as_str().unwrap()).unwrap() };
        assert_eq!(
            stored_args(&rows[0]),
            json!({"text": "\u{fffd}"}),
            "{backend:?}"
        );
        assert_eq!(
            stored_args(&rows[2]),
            json!({"text": "a\u{fffd}A"}),
            "{backend:?}"
        );
        assert_eq!(rows[6][0], "\u{fffd}", "{backend:?}");
    }
}

/// A NUL in a tool name is answered and its decision recorded: refused, as every control
/// character in a name is (issue 39: a tool found on disk by its name would be another
/// file's). SQLite keeps the name as sent; PostgreSQL, whose text cannot hold U+0000, keeps
/// it with U+FFFD in its place.
#[test]
fn a_nul_in_a_tool_name_is_answered_and_recorded() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let (out, code, _) = gate(
            &sb,
            &["--db", &db, "--quiet"],
            br#"{"tool_name":"a\u0000b","tool_args":{}}"#,
        );
        assert_eq!(code, 1, "{backend:?}: {out}");
        assert_eq!(out["error"]["tool"], "a\u{0}b", "{backend:?}");
        assert_eq!(
            out["error"]["details"]["rule"], "gate.tool_name",
            "{backend:?}"
        );
        let stored = match backend {
            Backend::Sqlite => "a\u{0}b",
            Backend::Postgres => "a\u{fffd}b",
        };
        let rows = store_rows(&db, "SELECT tool, verdict FROM decisions");
        assert_eq!(
            rows,
            [vec![json!(stored), json!("rejected")]],
            "{backend:?}"
        );
    }
}

/// Two envelopes in one document are two calls: a consumer of either would run its own, so
/// checking one and passing the other through untouched (as once happened) is refused.
#[test]
fn a_document_holding_two_envelopes_is_refused() {
    let sb = Sandbox::new();
    let shell = r#""runtime":"terminal","code":"sudo reboot""#;
    let cases = [
        format!(
            r#"{{"tool_name":"code_execution_tool","tool_args":{{{shell}}},"function":{{"name":"response","arguments":"{{\"text\":\"x\"}}"}}}}"#
        ),
        format!(
            r#"{{"type":"tool_use","id":"t1","name":"code_execution_tool","input":{{{shell}}},"function":{{"name":"response","arguments":"{{}}"}}}}"#
        ),
        format!(
            r#"{{"functionCall":{{"name":"response","args":{{"text":"x"}}}},"tool_name":"code_execution_tool","tool_args":{{{shell}}}}}"#
        ),
        format!(
            r#"{{"tool_name":"response","tool_args":{{"text":"x"}},"name":"code_execution_tool","input":{{{shell}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"response","arguments":{{"text":"x"}}}},"tool_name":"code_execution_tool","tool_args":{{{shell}}}}}"#
        ),
    ];
    for call in &cases {
        let (out, code, _) = gate(&sb, &["--quiet"], call.as_bytes());
        assert_eq!(code, 1, "{call}");
        assert_eq!(out["error"]["category"], "malformed_call", "{call}");
        assert!(
            out["error"]["message"]
                .as_str()
                .unwrap()
                .contains("two envelopes"),
            "{out}"
        );
    }
    // A sibling `name` without arguments is only a field, as before.
    let (out, code, _) = gate(
        &sb,
        &["--quiet"],
        br#"{"tool_name":"response","tool_args":{"text":"x"},"name":"note"}"#,
    );
    assert_eq!(code, 0, "{out}");
    // `name` with `input` is Anthropic's block without its `type`: the arguments are there.
    let (out, code, _) = gate(
        &sb,
        &["--quiet"],
        br#"{"name":"response","input":{"message":"hi"}}"#,
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, json!({"name":"response","input":{"text":"hi"}}));
}

/// A field sent twice is two readings of one call: metagate would check the first, the
/// tool's JSON reader would most likely run the last. Refused, naming both, in every shape;
/// a key repeated inside the arguments is read as the tool's reader reads it (the last).
#[test]
fn an_envelope_field_sent_twice_is_refused_naming_both() {
    let sb = Sandbox::new();
    let cases = [
        (
            r#"{"tool_name":"response","tool_name":"code_execution_tool","tool_args":{"text":"hi"}}"#,
            "the call has `tool_name` twice (\"response\" and \"code_execution_tool\")",
        ),
        (
            r#"{"tool_name":"response","tool_args":{"text":"hi"},"tool_args":{"text":"bye"}}"#,
            r#"the call has `tool_args` twice ({"text":"hi"} and {"text":"bye"})"#,
        ),
        (
            r#"{"id":"c1","type":"function","function":{"name":"response","arguments":"{}"},"function":{"name":"x","arguments":"{}"}}"#,
            "the call has `function` twice",
        ),
        (
            r#"{"id":"c1","type":"function","function":{"name":"response","name":"x","arguments":"{}"}}"#,
            "`function` has `name` twice (\"response\" and \"x\")",
        ),
        (
            r#"{"type":"tool_use","id":"t1","name":"response","input":{"text":"a"},"input":{"text":"b"}}"#,
            "the call has `input` twice",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"response","arguments":{},"arguments":{"text":"b"}}}"#,
            "`params` has `arguments` twice",
        ),
    ];
    for (call, message) in cases {
        let (out, code, _) = gate(&sb, &["--no-telemetry"], call.as_bytes());
        assert_eq!(code, 1, "{call}");
        assert_eq!(out["error"]["category"], "malformed_call", "{call}");
        let got = out["error"]["message"].as_str().unwrap();
        assert!(got.starts_with(message), "{call}: {got}");
    }
    // The mirror image: once each passes; a repeated argument is two readings, refused.
    for call in [
        r#"{"tool_name":"response","tool_args":{"text":"hi"}}"#,
        r#"{"id":"c1","type":"function","function":{"name":"response","arguments":"{\"text\":\"hi\"}"}}"#,
    ] {
        let (out, code, _) = gate(&sb, &["--no-telemetry"], call.as_bytes());
        assert_eq!(code, 0, "{call}: {out}");
    }
    let (out, code, _) = gate(
        &sb,
        &["--no-telemetry", "--report"],
        br#"{"tool_name":"response","tool_args":{"text":"","text":"second"}}"#,
    );
    assert_eq!((code, &out["verdict"]), (1, &json!("rejected")), "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("argument `text` is given twice"),
        "{out}"
    );
}

/// Arguments sent as a string holding two objects are two calls in one (how parallel calls
/// break when a server joins them): refused naming both, never the first passed and the second
/// dropped (issue 37), and never the second run.
#[test]
fn an_arguments_string_of_two_objects_is_refused_as_two_calls() {
    let sb = Sandbox::new();
    let first = r#"{"runtime":"terminal","code":"ls","session":0,"reset":false}"#;
    let second = r#"{"runtime":"terminal","code":"sudo rm -rf /"}"#;
    let both = format!("{first} {second}");
    let calls = [
        json!({"type":"function_call","call_id":"c","name":"code_execution_tool","arguments": both}),
        json!({"id":"c","type":"function","function":{"name":"code_execution_tool","arguments": both}}),
        json!({"tool_name":"code_execution_tool","tool_args": format!("{first}{second}")}),
    ];
    for call in calls {
        let (out, code, _) = gate(
            &sb,
            &["--no-telemetry", "--report"],
            call.to_string().as_bytes(),
        );
        assert_eq!(code, 1, "{out}");
        assert_eq!(out["error"]["category"], "malformed_call", "{out}");
        assert!(
            out["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("holds 2 JSON objects back to back")),
            "{out}"
        );
        assert!(out["call"].is_null(), "{out}");
    }
}

/// A stream that cannot be read or written says which side failed.
#[cfg(target_os = "linux")]
#[test]
fn stream_failures_name_their_side() {
    let sb = Sandbox::new();
    let folder = std::fs::File::open(sb.path()).unwrap();
    let out = sb
        .std_cmd()
        .args(["gate", "--jsonl", "--no-telemetry"])
        .stdin(folder)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("cannot read the calls: "), "{err}");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut child = sb
        .std_cmd()
        .args(["gate", "--jsonl", "--no-telemetry"])
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"x\"}}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("cannot write the answers: "), "{err}");
}

/// A model's tool name with a line break and escape sequences cannot forge a stderr line or
/// reach the terminal: each note is one line, with no control character.
#[test]
fn stderr_notes_are_one_safe_line_each() {
    let sb = Sandbox::new();
    let call = r#"{"tool_name":"e\u001b[2Jvil\u0007\nFAKE\u2028x","tool_args":{"a\u001b\nb":1}}"#;
    for args in [
        &["gate", "--no-telemetry", "--explain"][..],
        &["gate", "--jsonl", "--no-telemetry", "--explain"][..],
    ] {
        let out = sb
            .cmd()
            .args(args)
            .write_stdin(format!("{call}\n"))
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.lines().count() >= 3, "{err}");
        for line in err.lines() {
            assert!(line.starts_with("metagate: "), "{args:?}: {line:?}");
            assert!(
                !line.chars().any(|c| c.is_control() || c == '\u{2028}'),
                "{args:?}: {line:?}"
            );
        }
    }
}

/// An answer that cannot be written (a full disk) fails with status 2 and names standard
/// output, whichever command wrote it; `policy check` used to panic there.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_named_and_never_a_panic() {
    let sb = Sandbox::new();
    let policy = fixture_path("policies/sirthaddeus.toml");
    let policy = policy.to_str().unwrap();
    let trace = fixture_path("traces/clean");
    let trace = trace.to_str().unwrap();
    let call = fixture_path("calls/runtime-bash.json");
    let commands: &[&[&str]] = &[
        &["gate", "--no-telemetry"],
        &["policy", "show"],
        &["policy", "check", policy],
        &["lint", trace],
        &["lint", "--format", "json", trace],
    ];
    for args in commands {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = sb
            .std_cmd()
            .args(*args)
            .stdin(std::fs::File::open(&call).unwrap())
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("cannot write to standard output: "),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn closed_stdout_pipe_exits_quietly() {
    let sb = Sandbox::new();
    let mut input = String::new();
    for _ in 0..200_000 {
        input.push_str(r#"{"tool_name":"response","tool_args":{"message":"hello"}}"#);
        input.push('\n');
    }
    // The store named, so that its creation is not announced: stderr stays empty.
    let mut child = sb
        .std_cmd()
        .arg("--db")
        .arg(sb.db())
        .args(["gate", "--jsonl", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("\"text\""));
    drop(stdout);
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn invalid_or_unreadable_policy_exits_2_naming_file_key_and_line() {
    let sb = Sandbox::new();
    let bad = sb.file(
        "bad.toml",
        "[gate]\nunknown_args = \"keep\"\n\n[tools.t.args.a]\ntype = \"integer\"\ndefault = \"zero\"\n",
    );
    let out = sb
        .cmd()
        .args(["gate", "--policy", bad.to_str().unwrap()])
        .write_stdin(fixture("calls/runtime-bash.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.toml:6:1: tools.t.args.a.default"),
        "{err}"
    );

    let out = sb
        .cmd()
        .args(["gate", "--policy", "/nonexistent/policy.toml"])
        .write_stdin("{}")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/policy.toml"));
}

mod names;
