//! Tool definitions imported with `--tools` and `[[import]]`, checked by their JSON Schema
//! after the correction rules ran on their declared properties.

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_path, gate};

fn tools(name: &str) -> String {
    fixture_path(&format!("tools/{name}")).display().to_string()
}

/// (tools file, call, exit, what must come out: the corrected arguments, or the category)
struct Case {
    name: &'static str,
    tools: &'static str,
    call: Value,
    expect: Expect,
}

enum Expect {
    Args(Value),
    Rejected(&'static str),
}

fn cases() -> Vec<Case> {
    use Expect::*;
    vec![
        Case {
            name: "openai: clean call passes",
            tools: "openai.json",
            call: json!({"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Oslo, Norway\"}"}}),
            expect: Args(json!({"location":"Oslo, Norway"})),
        },
        Case {
            name: "openai: case style, enum case and coercion on declared properties",
            tools: "openai.json",
            call: json!({"id":"c2","type":"function","function":{"name":"get_weather","arguments":"{\"Location\":\"Oslo\",\"unit\":\"Celsius\",\"days\":\"3\"}"}}),
            expect: Args(json!({"location":"Oslo","unit":"celsius","days":3})),
        },
        Case {
            name: "openai: a schema default is not filled in",
            tools: "openai.json",
            call: json!({"id":"c3","type":"function","function":{"name":"search_issues","arguments":"{\"repo\":\"rust-lang/rust\",\"query\":\"ICE\",\"limit\":\"50\",\"include_prs\":\"false\"}"}}),
            expect: Args(
                json!({"repo":"rust-lang/rust","query":"ICE","limit":50,"include_prs":false}),
            ),
        },
        Case {
            name: "openai: additionalProperties false rejects an unknown argument",
            tools: "openai.json",
            call: json!({"id":"c4","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Oslo\",\"wind\":true}"}}),
            expect: Rejected("invalid_parameters"),
        },
        Case {
            name: "openai: a nested type error is the schema's, with its path",
            tools: "openai.json",
            call: json!({"id":"c5","type":"function","function":{"name":"create_event","arguments":"{\"title\":\"Sync\",\"start\":\"2026-11-23T10:00:00Z\",\"reminder\":{\"minutes_before\":\"ten\"}}"}}),
            expect: Rejected("type_mismatch"),
        },
        Case {
            name: "openai: a bound is the schema's",
            tools: "openai.json",
            call: json!({"id":"c6","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Oslo\",\"days\":40}"}}),
            expect: Rejected("invalid_parameters"),
        },
        Case {
            name: "openai: a missing required argument is named",
            tools: "openai.json",
            call: json!({"id":"c7","type":"function","function":{"name":"search_issues","arguments":"{\"repo\":\"a/b\"}"}}),
            expect: Rejected("invalid_parameters"),
        },
        Case {
            name: "mcp: near-miss name and nullable integer",
            tools: "mcp.json",
            call: json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.rs","max_btyes":"null"}}}),
            expect: Args(json!({"path":"src/main.rs","max_bytes":null})),
        },
        Case {
            name: "mcp: a JSON-encoded array where an array is declared",
            tools: "mcp.json",
            call: json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"select 1","params":"[1, \"a\", null]","timeoutMs":"500"}}}),
            expect: Args(json!({"sql":"select 1","params":[1,"a",null],"timeout_ms":500})),
        },
        Case {
            name: "mcp: a const inside a nested object",
            tools: "mcp.json",
            call: json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"select 1","options":{"readonly":false}}}}),
            expect: Rejected("invalid_parameters"),
        },
        Case {
            name: "anthropic: enum case and a required array",
            tools: "anthropic.json",
            call: json!({"type":"tool_use","id":"toolu_1","name":"send_email","input":{"to":["a@example.com"],"subject":"Hi","body":"Hello","priority":"HIGH"}}),
            expect: Args(
                json!({"to":["a@example.com"],"subject":"Hi","body":"Hello","priority":"high"}),
            ),
        },
        Case {
            name: "anthropic: a string is not an array",
            tools: "anthropic.json",
            call: json!({"type":"tool_use","id":"toolu_2","name":"send_email","input":{"to":"a@example.com","subject":"Hi","body":"Hello"}}),
            expect: Rejected("type_mismatch"),
        },
        Case {
            name: "anthropic: a name two edits from a short one is not guessed, so text is missing",
            tools: "anthropic.json",
            call: json!({"type":"tool_use","id":"toolu_3","name":"translate","input":{"tx":"hello","target_language":"de"}}),
            expect: Rejected("invalid_parameters"),
        },
        Case {
            name: "anthropic: a letter dropped from a four-letter name is one edit",
            tools: "anthropic.json",
            call: json!({"type":"tool_use","id":"toolu_3","name":"translate","input":{"txt":"hello","target_language":"de"}}),
            expect: Args(json!({"text":"hello","target_language":"de"})),
        },
        Case {
            name: "anthropic: a near miss with one candidate is corrected",
            tools: "anthropic.json",
            call: json!({"type":"tool_use","id":"toolu_4","name":"translate","input":{"text":"hello","target_langauge":"DE"}}),
            expect: Args(json!({"text":"hello","target_language":"de"})),
        },
    ]
}

fn args_of(out: &Value) -> Value {
    for pointer in [
        "/function/arguments",
        "/params/arguments",
        "/input",
        "/tool_args",
        "/arguments",
    ] {
        if let Some(a) = out.pointer(pointer) {
            return match a {
                Value::String(s) => serde_json::from_str(s).unwrap(),
                other => other.clone(),
            };
        }
    }
    panic!("no arguments in {out}")
}

#[test]
fn imported_definitions_correct_and_check_calls() {
    let sb = Sandbox::new();
    for case in cases() {
        let file = tools(case.tools);
        let (out, code, _) = gate(
            &sb,
            &["--quiet", "--tools", &file],
            case.call.to_string().as_bytes(),
        );
        match case.expect {
            Expect::Args(want) => {
                assert_eq!(code, 0, "{}: {out}", case.name);
                assert_eq!(args_of(&out), want, "{}", case.name);
            }
            Expect::Rejected(category) => {
                assert_eq!(code, 1, "{}: {out}", case.name);
                assert_eq!(out["error"]["category"], category, "{}: {out}", case.name);
            }
        }
    }
}

#[test]
fn schema_errors_carry_their_paths() {
    let sb = Sandbox::new();
    let call = json!({"type":"function","function":{"name":"create_event","arguments":{"title":"Sync","start":"2026-11-23T10:00:00Z","attendees":[{"email":"a@b.c","optional":"no"}]}}});
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--tools", &tools("openai.json")],
        call.to_string().as_bytes(),
    );
    assert_eq!(code, 1);
    let errors = out["error"]["details"]["schema_errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["path"] == "/attendees/0/optional"),
        "{errors:?}"
    );
    assert!(
        out["feedback"]
            .as_str()
            .unwrap()
            .contains("/attendees/0/optional")
    );
}

#[test]
fn policy_imports_with_aliases_and_defaults_on_top() {
    let sb = Sandbox::new();
    let policy = sb.file(
        "policy/metagate.toml",
        &format!(
            "[[import]]\npath = {:?}\nfill_defaults = true\n\n[[import]]\npath = \"../tools/mcp.json\"\nformat = \"mcp\"\n\n\
             [tools.get_weather.aliases]\ncity = \"location\"\n\n[tools.get_weather.args.unit.values]\nc = \"celsius\"\n",
            tools("openai.json")
        ),
    );
    sb.file(
        "tools/mcp.json",
        &std::fs::read_to_string(fixture_path("tools/mcp.json")).unwrap(),
    );
    let p = policy.to_str().unwrap();
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"name":"get_weather","arguments":{"city":"Bergen","unit":"C"}}"#,
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out["arguments"],
        json!({"location":"Bergen","unit":"celsius"})
    );
    // fill_defaults = true: the schema's default for `unit` is filled in when absent.
    let (out, _, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"name":"get_weather","arguments":{"location":"Bergen"}}"#,
    );
    assert_eq!(
        out["arguments"],
        json!({"location":"Bergen","unit":"celsius"})
    );
    // The relative import resolved against the policy's folder.
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"name":"read_file","arguments":{"path":"a"}}"#,
    );
    assert_eq!(code, 0, "{out}");
    // Built-in tools are still there.
    let (out, _, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"tool_name":"response","tool_args":{"message":"x"}}"#,
    );
    assert_eq!(out["tool_args"], json!({"text":"x"}));
    // policy show prints the import and the tools it brought.
    let shown = sb
        .cmd()
        .args(["policy", "show", "--policy", p])
        .output()
        .unwrap();
    let shown: toml::Table = toml::from_str(&String::from_utf8(shown.stdout).unwrap()).unwrap();
    assert_eq!(shown["import"].as_array().unwrap().len(), 2);
    assert!(shown["tools"].get("run_query").is_some());
}

/// Only a file that holds no tool definitions is fatal (exit 2, naming the file); a tool whose
/// schema is broken, or that two files define, is read around with a warning naming both.
#[test]
fn only_files_of_no_tools_are_fatal() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["gate", "--tools", &tools("not-tools.json")])
        .write_stdin(r#"{"name":"fine","arguments":{}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    for m in ["not-tools.json", "not an OpenAI tools array"] {
        assert!(err.contains(m), "{err}");
    }
    assert!(
        err.contains(&format!(
            "the built-in policy with --tools {} is invalid",
            tools("not-tools.json")
        )),
        "the heading must name the tools file: {err}"
    );
    let out = sb
        .cmd()
        .args(["gate", "--tools", "/nonexistent/tools.json"])
        .write_stdin("{}")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/tools.json"));

    // A broken schema: the tool is still checked by its arguments' names and types.
    let out = sb
        .cmd()
        .args(["gate", "--tools", &tools("invalid-schema.json")])
        .write_stdin(r#"{"name":"fine","arguments":{"a":"x"}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    for m in ["invalid-schema.json", "broken_tool", "\"strng\""] {
        assert!(err.contains(m), "{err}");
    }
    // One tool in two files: the first definition is used, and said.
    let out = sb
        .cmd()
        .args([
            "gate",
            "--tools",
            &tools("openai.json"),
            "--tools",
            &tools("openai.json"),
        ])
        .write_stdin(r#"{"name":"get_weather","arguments":{"location":"Oslo"}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("also defined in"));
}

/// A tool set that contradicts itself in every way real ones do loads with a warning for each
/// (naming the tool and the key) and still checks calls; `tools check` reports the same, and
/// what may break constrained decoding.
#[test]
fn a_sloppy_tool_set_loads_with_warnings_and_checks_calls() {
    let sb = Sandbox::new();
    let sloppy = tools("sloppy.json");
    let run = |call: &str| {
        let out = sb
            .cmd()
            .args(["gate", "--report", "--tools", &sloppy])
            .write_stdin(call.to_string())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            report,
            out.status.code().unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (report, code, err) = run(
        r#"{"name":"find_restaurants","arguments":{"city":"Oslo","price_range":"2","open_now":"True","tags":["veg"]}}"#,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["verdict"], "corrected");
    assert_eq!(
        args_of(&report["call"]),
        json!({"city":"Oslo","price_range":2,"open_now":true,"tags":["veg"]})
    );
    for (tool, key) in [
        ("find_restaurants", "parameters/type"),
        ("find_restaurants", "parameters/properties/price_range/enum"),
        ("find_restaurants", "parameters/properties/price_range/type"),
        ("find_restaurants", "parameters/properties/open_now/enum"),
        ("find_restaurants", "parameters/properties/limit/default"),
        ("find_restaurants", "parameters/required"),
        ("book_table", "parameters/properties/restaurant/required"),
        ("book_table", "parameters/properties/people/type"),
        ("book_table", "parameters/properties/when/type"),
        ("weird_schema", "`parameters` is not a JSON Schema object"),
        ("entry 4", "has no `name`"),
    ] {
        assert!(
            err.lines()
                .any(|l| l.contains(&format!("tool {tool:?}")) && l.contains(key)),
            "{tool} {key}: {err}"
        );
    }
    // The value that is no integer is kept as declared.
    let (report, code, _) =
        run(r#"{"name":"find_restaurants","arguments":{"city":"Oslo","price_range":"dontcare"}}"#);
    assert_eq!((code, &report["verdict"]), (0, &json!("pass")));
    // Still checked: a value outside the enum, a missing required argument.
    let (report, code, _) =
        run(r#"{"name":"find_restaurants","arguments":{"city":"Oslo","price_range":"9"}}"#);
    assert_eq!(
        (code, &report["error"]["category"]),
        (1, &json!("invalid_parameters"))
    );
    let (report, code, _) = run(r#"{"name":"book_table","arguments":{"people":"4"}}"#);
    assert_eq!(code, 1);
    assert_eq!(report["error"]["missing"], json!(["restaurant"]));
    // A tool whose schema is no schema is known, its arguments unchecked.
    let (report, code, _) = run(r#"{"name":"weird_schema","arguments":{"x":1}}"#);
    assert_eq!((code, &report["verdict"]), (0, &json!("pass")));

    // The pre-flight report: the same problems, and the decoding risk.
    let out = sb
        .cmd()
        .args(["tools", "check", "--format", "json", &sloppy])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools_found = doc["files"][0]["tools"].as_array().unwrap();
    let by_name = |n: &str| tools_found.iter().find(|t| t["name"] == n).unwrap();
    assert!(
        by_name("find_restaurants")["problems"]
            .as_array()
            .unwrap()
            .len()
            >= 6
    );
    assert_eq!(by_name("get_weather")["problems"], json!([]));
    assert_eq!(by_name("get_weather")["risks"][0]["construct"], "pattern");
    assert_eq!(by_name("get_weather")["risks"][0]["level"], "risk");
    // A clean file: nothing to report, exit 0.
    let out = sb
        .cmd()
        .args(["tools", "check", &tools("openai.json")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Not tools at all: exit 2.
    let out = sb
        .cmd()
        .args(["tools", "check", &tools("not-tools.json")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `tools check` fails on problems and on constructs that break constrained decoding, not on
/// notes: `"format": "email"` (left to the model while decoding) on a very common schema is
/// said, in the report and the JSON, and the check still exits 0.
#[test]
fn notes_alone_do_not_fail_tools_check() {
    let sb = Sandbox::new();
    let contacts = tools("contacts.json");
    let out = sb
        .cmd()
        .args(["tools", "check", &contacts])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with(&format!(
            "{contacts}: 2 tools, 0 with problems, 0 with decoding risks, 1 with notes\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("    note: /properties/email/format (format): "),
        "{text}"
    );
    let out = sb
        .cmd()
        .args(["tools", "check", "--format", "json", &contacts])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let risks = doc["files"][0]["tools"][0]["risks"].as_array().unwrap();
    let noted: Vec<(&str, &str)> = risks
        .iter()
        .map(|r| {
            (
                r["construct"].as_str().unwrap(),
                r["level"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        noted,
        [
            ("format", "note"),
            ("format", "note"),
            ("uniqueItems", "note")
        ]
    );
    // A risk beside the notes still fails it: the sloppy set's lookahead pattern.
    let out = sb
        .cmd()
        .args(["tools", "check", &contacts, &tools("sloppy.json")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// An `[[import]]` whose file cannot be read is the policy's mistake: `policy check` and every
/// command name the policy, the line of that import's `path` and the key.
#[test]
fn an_unreadable_import_names_the_policy_line_and_key() {
    let sb = Sandbox::new();
    sb.file(
        "tools.json",
        &std::fs::read_to_string(tools("openai.json")).unwrap(),
    );
    let policy = sb.file(
        "p.toml",
        "[[import]]\npath = \"tools.json\"\n\n[[import]]\nformat = \"mcp\"\npath = \"gone.json\"\n",
    );
    let (code, err) = sb.policy_check(&policy);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("p.toml:6:1: import.path: cannot read "),
        "{err}"
    );
    assert!(err.contains("gone.json"), "{err}");
    let out = sb
        .cmd()
        .arg("--policy")
        .arg(&policy)
        .arg("gate")
        .write_stdin("{}")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("p.toml:6:1: import.path"));
}
