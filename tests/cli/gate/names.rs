//! Names and types, both ways: argument and tool names, values and types corrected when the
//! reading is exact and rejected when it is a guess; unknown arguments; a closed stderr.

use super::*;
use crate::common::{BACKENDS, new_store, store_rows};

const NAMES_POLICY: &str = r#"
[tools.lookup.args.user_id]
type = "integer"
required = true

[tools.lookup.args.limit_max]
type = "integer"

[tools.lookup.args.limit_min]
type = "integer"

[tools.lookup.args.include_archived]
type = "boolean"

[tools.lookup.args.ratio]
type = "number"

[tools.lookup.args.filters]
type = ["object", "null"]
"#;

#[test]
fn names_and_types_are_corrected_when_exact_and_rejected_when_a_guess() {
    let sb = Sandbox::new();
    let policy = sb.file("names.toml", NAMES_POLICY);
    let p = policy.to_str().unwrap();
    let corrected: &[(&str, Value, &str)] = &[
        ("camelCase", json!({"userId": 7}), "arg_case"),
        ("PascalCase", json!({"UserId": 7}), "arg_case"),
        ("kebab-case", json!({"user-id": 7}), "arg_case"),
        (
            "near miss",
            json!({"user_id": 7, "include_archieved": true}),
            "arg_fuzzy",
        ),
        ("integer string", json!({"user_id": "7"}), "coerce"),
        (
            "negative integer string",
            json!({"user_id": "-7"}),
            "coerce",
        ),
        (
            "boolean string any case",
            json!({"user_id": 7, "include_archived": "TRUE"}),
            "coerce",
        ),
        (
            "number string",
            json!({"user_id": 7, "ratio": "0.7"}),
            "coerce",
        ),
        (
            "null string where null is allowed",
            json!({"user_id": 7, "filters": "null"}),
            "coerce",
        ),
        (
            "JSON-encoded object",
            json!({"user_id": 7, "filters": "{\"tag\": \"a\"}"}),
            "coerce",
        ),
    ];
    for (name, args, kind) in corrected {
        let call = json!({"name": "lookup", "arguments": args});
        let (out, code, _) = gate(
            &sb,
            &["--quiet", "--report", "--policy", p],
            call.to_string().as_bytes(),
        );
        assert_eq!(code, 0, "{name}: {out}");
        let kinds = correction_kinds(&out);
        assert!(kinds.iter().any(|k| k == kind), "{name}: {kinds:?}");
        let args = &out["call"]["arguments"];
        assert!(
            args["user_id"] == json!(7) || args["user_id"] == json!(-7),
            "{name}: {args}"
        );
    }
    let (out, _, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"name":"lookup","arguments":{"user_id":7,"ratio":"0.7","filters":"{\"tag\":\"a\"}"}}"#,
    );
    assert_eq!(
        out["arguments"],
        json!({"user_id":7,"ratio":0.7,"filters":{"tag":"a"}})
    );

    let rejected: &[(&str, Value, &str, &[&str])] = &[
        (
            "lossy integer",
            json!({"user_id": "5.5"}),
            "type_mismatch",
            &["user_id", "integer"],
        ),
        (
            "leading zeros",
            json!({"user_id": "007"}),
            "type_mismatch",
            &["integer"],
        ),
        (
            "yes is not a boolean",
            json!({"user_id": 1, "include_archived": "yes"}),
            "type_mismatch",
            &["boolean"],
        ),
        (
            "1 is not a boolean",
            json!({"user_id": 1, "include_archived": 1}),
            "type_mismatch",
            &["boolean"],
        ),
        (
            "NaN is not a number",
            json!({"user_id": 1, "ratio": "NaN"}),
            "type_mismatch",
            &["number"],
        ),
        (
            "null where null is not allowed",
            json!({"user_id": 1, "ratio": "null"}),
            "type_mismatch",
            &["number"],
        ),
        (
            "two near names",
            json!({"user_id": 1, "limit_mix": 3}),
            "invalid_parameters",
            &["limit_max", "limit_min"],
        ),
        (
            "two spellings of one name",
            json!({"userId": 1, "UserID": 2}),
            "invalid_parameters",
            &["userId", "UserID"],
        ),
    ];
    for (name, args, category, words) in rejected {
        let call = json!({"name": "lookup", "arguments": args});
        let (out, code, _) = gate(
            &sb,
            &["--quiet", "--policy", p],
            call.to_string().as_bytes(),
        );
        assert_eq!(code, 1, "{name}: {out}");
        assert_eq!(out["error"]["category"], *category, "{name}: {out}");
        let message = out["error"]["message"].as_str().unwrap();
        for w in *words {
            assert!(message.contains(w), "{name}: {message}");
        }
    }
}

/// Issue 24, item 6: a number the declared type cannot hold (an integer outside i64, a number
/// that is not finite as an f64) is a type mismatch naming the argument, with a short message
/// however long the number; ordinary numbers pass as sent, and the gate's output gated again
/// is the same bytes.
#[test]
fn numbers_beyond_the_declared_type_are_type_mismatches() {
    let sb = Sandbox::new();
    let policy = sb.file("names.toml", NAMES_POLICY);
    let p = policy.to_str().unwrap();
    // `user_id` is an integer, `ratio` a number.
    let line = |arg: &str, value: &str| {
        let user = if arg == "user_id" {
            ""
        } else {
            r#""user_id":1,"#
        };
        format!("{{\"name\":\"lookup\",\"arguments\":{{{user}\"{arg}\":{value}}}}}\n")
    };
    let digits = |n: usize| format!("1{}", "0".repeat(n - 1));
    let refused: Vec<(&str, String)> = vec![
        ("user_id", "9223372036854775808".into()),
        ("user_id", "-9223372036854775809".into()),
        ("user_id", "18446744073709551616".into()),
        ("user_id", "1e19".into()),
        ("user_id", digits(100_000)),
        ("user_id", "\"9223372036854775808\"".into()),
        ("ratio", "1e99999999".into()),
        ("ratio", "-1e99999999".into()),
        ("ratio", "1e309".into()),
        ("ratio", digits(100_000)),
    ];
    let input: String = refused
        .iter()
        .map(|(arg, value)| line(arg, value))
        .collect();
    let out = gate_lines(&sb, &["--policy", p], input.as_bytes());
    assert_eq!(out.len(), refused.len());
    for ((arg, value), v) in refused.iter().zip(&out) {
        let shown = &value[..value.len().min(30)];
        assert_eq!(
            v["error"]["category"], "type_mismatch",
            "{arg} = {shown}: {v}"
        );
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("\"{arg}\"")), "{message}");
        assert!(message.len() < 300, "{arg} = {shown}: {message}");
    }

    let passed: &[(&str, &str)] = &[
        ("user_id", "0"),
        ("user_id", "-0"),
        ("user_id", "42"),
        ("user_id", "9223372036854775807"),
        ("user_id", "-9223372036854775808"),
        ("user_id", "5.0"),
        ("user_id", "1e3"),
        ("ratio", "0.7"),
        ("ratio", "-2.5e-3"),
        ("ratio", "1e308"),
        ("ratio", "12345678901234567890"),
        (
            "ratio",
            "3.14159265358979323846264338327950288419716939937510",
        ),
    ];
    let input: String = passed.iter().map(|(arg, value)| line(arg, value)).collect();
    let gate_jsonl = |stdin: Vec<u8>| {
        let out = sb
            .cmd()
            .args(["gate", "--jsonl", "--quiet", "--policy", p])
            .write_stdin(stdin)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let first = gate_jsonl(input.clone().into_bytes());
    assert_eq!(first, input, "ordinary numbers pass as sent");
    assert_eq!(gate_jsonl(first.clone().into_bytes()), first);
}

#[test]
fn unknown_arguments_are_kept_dropped_or_rejected() {
    let sb = Sandbox::new();
    let input = br#"{"tool_name":"response","tool_args":{"text":"hi","mood":"happy"}}"#;
    let (out, code, stderr) = gate(&sb, &[], input);
    assert_eq!(code, 0);
    assert_eq!(out["tool_args"]["mood"], "happy");
    assert!(
        stderr.contains("unknown argument \"mood\" kept"),
        "{stderr}"
    );
    for (setting, code_want) in [("drop", 0), ("reject", 1)] {
        let policy = sb.file(
            &format!("{setting}.toml"),
            &format!("[gate]\nunknown_args = \"{setting}\"\n"),
        );
        let (out, code, _) = gate(
            &sb,
            &["--quiet", "--policy", policy.to_str().unwrap()],
            input,
        );
        assert_eq!(code, code_want, "{setting}");
        if setting == "drop" {
            assert_eq!(out["tool_args"], json!({"text":"hi"}));
        } else {
            assert_eq!(out["error"]["category"], "invalid_parameters");
            assert_eq!(out["error"]["details"]["unknown"], json!(["mood"]));
        }
    }
}

/// A closed stderr loses the messages, never the exit status (no panic, no 101).
#[test]
fn a_closed_stderr_keeps_the_exit_status() {
    let sb = Sandbox::new();
    let cases: [(&[&str], i32); 4] = [
        (&["gate", "--policy", "/no/such/policy.toml"], 2),
        (&["lint", "/no/such/trace.jsonl"], 2),
        (&["evaluate", "--since", "abc"], 2),
        (&["gate", "--no-telemetry"], 1),
    ];
    for (args, want) in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = sb
            .std_cmd()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(writer)
            .status()
            .unwrap();
        assert_eq!(out.code(), Some(want), "{args:?}");
    }
}

/// A tool name the policy does not know but that folds (spaces, case, separators) to exactly
/// one it does is read as that tool, and checked as it: passed unchecked, it would run for an
/// agent that trims names or finds tools on a case-insensitive file system.
#[test]
fn a_tool_name_in_another_spelling_is_read_as_the_tool() {
    let sb = Sandbox::new();
    let policy = sb.file("p.toml", "[permit]\nrequire = [\"system_execute\"]\n");
    let p = policy.to_str().unwrap();
    let spellings = [
        ("Code_Execution_Tool", None),
        ("code_execution_tool ", None),
        ("code-execution-tool:x", Some("x")),
    ];
    let call_named = |sent: &str| {
        json!({"id":"call_1","type":"function","function":{"name":sent,"arguments":"{\"runtime\":\"terminal\",\"code\":\"ls\"}"}}).to_string()
    };
    for (sent, method) in spellings {
        let call = call_named(sent);
        let (out, code, _) = gate(&sb, &["--report"], call.as_bytes());
        assert_eq!(code, 0, "{sent}: {out}");
        assert_eq!(out["tool"], "code_execution_tool", "{sent}");
        assert_eq!(out["method"], json!(method), "{sent}");
        let name = method.map_or("code_execution_tool".to_string(), |m| {
            format!("code_execution_tool:{m}")
        });
        assert_eq!(out["call"]["function"]["name"], json!(name), "{sent}");
        assert_eq!(out["call"]["id"], "call_1", "{sent}");
        let fix = &out["corrections"][0];
        assert_eq!(
            (fix["kind"].as_str(), fix["to"].as_str()),
            (Some("envelope"), Some("code_execution_tool")),
            "{sent}: {out}"
        );
    }
    // Under a policy that requires a grant for the tool, the other spelling needs it too, and
    // the grant the store holds covers it.
    for backend in BACKENDS {
        let db = new_store(backend, &sb);
        let under_policy = ["--db", &db, "--policy", p, "--report"];
        for (sent, _) in spellings {
            let (out, code, _) = gate(&sb, &under_policy, call_named(sent).as_bytes());
            assert_eq!(code, 1, "{backend:?} {sent}: {out}");
            assert_eq!(
                out["error"]["category"], "confirmation_required",
                "{backend:?} {sent}"
            );
        }
        let granted = sb
            .cmd()
            .args(["--db", &db, "--policy", p, "permit", "grant"])
            .args(["--capability", "system_execute", "--format", "json"])
            .output()
            .unwrap();
        assert!(granted.status.success(), "{backend:?}: {granted:?}");
        for (sent, _) in spellings {
            let (out, code, _) = gate(&sb, &under_policy, call_named(sent).as_bytes());
            assert_eq!(code, 0, "{backend:?} {sent}: {out}");
            assert_eq!(out["tool"], "code_execution_tool", "{backend:?} {sent}");
        }
        let recorded = store_rows(&db, "SELECT tool, verdict FROM decisions ORDER BY id");
        let expected: Vec<Vec<Value>> = ["rejected", "corrected"]
            .iter()
            .flat_map(|verdict| {
                spellings.map(|_| vec![json!("code_execution_tool"), json!(verdict)])
            })
            .collect();
        assert_eq!(recorded, expected, "{backend:?}");
    }
    // A name that folds to no tool, or to two, is left as sent.
    let two = sb.file(
        "two.toml",
        "extends = \"none\"\n[gate]\nunknown_tools = \"pass\"\n[tools.read_file]\n[tools.readfile]\n",
    );
    let (out, code, _) = gate(
        &sb,
        &["--report", "--policy", two.to_str().unwrap()],
        br#"{"name":"Read-File","arguments":{}}"#,
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["tool"], "Read-File");
    assert_eq!(out["corrections"], json!([]));
}
