//! Issue 39's hostile cases (its items 5–10) through the real binary in a temporary home:
//! tool names that read as paths, hard links, approval-like arguments and the grant feedback,
//! the MCP proxy's unchecked paths, unbounded inputs, and secrets placed where redaction did
//! not look. Each hostile row passed (or hung, or grew) before issue 39; the ordinary rows of
//! the same shapes still pass.

use serde_json::{Value, json};

use crate::common::{Sandbox, gate};

/// The decision on one Agent Zero call under the built-in policy: (stdout, status).
fn decide(sb: &Sandbox, call: &Value) -> (Value, i32) {
    let (out, code, _) = gate(
        sb,
        &["--quiet", "--no-telemetry"],
        call.to_string().as_bytes(),
    );
    (out, code)
}

fn terminal(name: &str, code: &str) -> Value {
    json!({"tool_name": name, "tool_args": {"runtime": "terminal", "code": code}})
}

#[test]
fn tool_names_that_read_as_paths_are_checked_as_their_tool_or_refused() {
    let sb = Sandbox::new();
    // (name, command, refused, the rule that refuses it, the tool it is read as)
    let rows = [
        ("./code_execution_tool", "sudo id", "denied command", None),
        ("/code_execution_tool", "sudo id", "denied command", None),
        (
            "../tools/code_execution_tool",
            "sudo id",
            "denied command",
            None,
        ),
        ("./code_execution_tool:x", "sudo id", "denied command", None),
        (
            "tools\\code_execution_tool",
            "sudo id",
            "denied command",
            None,
        ),
        ("./no_such_tool", "ls", "gate.tool_name", None),
        ("../../bin/sh", "ls", "gate.tool_name", None),
        ("code\u{1}execution_tool", "ls", "gate.tool_name", None),
        ("code_execution_tool..", "ls", "gate.tool_name", None),
        (
            ".code_execution_tool",
            "ls",
            "",
            Some("code_execution_tool"),
        ),
        (
            "./code_execution_tool",
            "ls",
            "",
            Some("code_execution_tool"),
        ),
        ("code_execution_tool", "ls", "", Some("code_execution_tool")),
        ("unknown_plain_tool", "ls", "", Some("unknown_plain_tool")),
    ];
    for (name, command, rule, passes_as) in rows {
        let (out, code) = decide(&sb, &terminal(name, command));
        match passes_as {
            Some(tool) => {
                assert_eq!(code, 0, "{name:?} {command}: {out}");
                assert_eq!(out["tool_name"], tool, "{name:?}: {out}");
            }
            None => {
                assert_eq!(code, 1, "{name:?} {command}: {out}");
                assert_eq!(
                    out["error"]["category"], "policy_blocked",
                    "{name:?}: {out}"
                );
                let got = out["error"]["details"]["rule"].as_str().unwrap_or("");
                assert!(got.contains(rule), "{name:?}: {rule} not in {out}");
            }
        }
    }
}

#[test]
fn a_path_like_name_is_refused_even_when_unknown_tools_is_reject_or_pass() {
    for mode in ["pass", "reject"] {
        let sb = Sandbox::new();
        sb.file(
            "policy.toml",
            &format!("[gate]\nunknown_tools = \"{mode}\"\n"),
        );
        let (out, code, _) = gate(
            &sb,
            &["--quiet", "--no-telemetry", "--policy", "policy.toml"],
            terminal("./nope", "ls").to_string().as_bytes(),
        );
        assert_eq!(code, 1, "{mode}: {out}");
        assert_eq!(
            out["error"]["details"]["rule"], "gate.tool_name",
            "{mode}: {out}"
        );
    }
}

/// `python3` for the hostile MCP server, or None (said loudly) when the machine has none and
/// `METAGATE_REQUIRE_MCP_DEPS` is not set.
fn python() -> Option<&'static str> {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("METAGATE_REQUIRE_MCP_DEPS").is_none(),
            "python3 is not installed (METAGATE_REQUIRE_MCP_DEPS is set)"
        );
        eprintln!("\n*** SKIPPED a hostile MCP server test: python3 is not installed ***\n");
    }
    found.then_some("python3")
}

/// `metagate mcp` between `client` (JSON-RPC lines, sent whole, then closed) and the hostile
/// server in `mode`: (the client's answers by id, stderr, what the server was sent).
fn through_hostile(mode: &str, client: &[Value]) -> Option<(Vec<Value>, String, String)> {
    let python = python()?;
    let sb = Sandbox::new();
    let log = sb.path().join("server-got.jsonl");
    let server =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    let input: String = client.iter().map(|m| format!("{m}\n")).collect();
    let out = sb
        .cmd()
        .args(["mcp", "--no-telemetry", "--", python])
        .arg(&server)
        .arg(mode)
        .arg(&log)
        .write_stdin(input)
        .output()
        .unwrap();
    let answers = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got = std::fs::read_to_string(&log).unwrap_or_default();
    Some((answers, String::from_utf8(out.stderr).unwrap(), got))
}

fn opening() -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

fn echo(id: Option<i64>, method: &str, message: &str) -> Value {
    let mut m = json!({"jsonrpc": "2.0", "method": method, "params": {"name": "echo", "arguments": {"message": message}}});
    if let Some(id) = id {
        m["id"] = id.into();
    }
    m
}

#[test]
fn mcp_calls_in_another_spelling_or_without_an_id_never_reach_the_server() {
    // (message, whether the server may see it, the error the client gets for its id)
    let rows = [
        (echo(None, "tools/call", "as-a-notification"), false),
        (echo(None, "Tools/Call", "notification-cased"), false),
        (echo(Some(2), "Tools/Call", "cased"), false),
        (echo(Some(3), "TOOLS/CALL", "upper"), false),
        (echo(Some(4), "tools/call ", "spaced"), false),
        (echo(Some(5), "tools/call", "ordinary"), true),
    ];
    let mut client = opening();
    client.extend(rows.iter().map(|(m, _)| m.clone()));
    let Some((answers, stderr, got)) = through_hostile("plain", &client) else {
        return;
    };
    for (message, relayed) in &rows {
        let text = message["params"]["arguments"]["message"].as_str().unwrap();
        assert_eq!(
            got.contains(text),
            *relayed,
            "{message}: the server got {got}"
        );
        let Some(id) = message.get("id") else {
            continue;
        };
        let answer = answers
            .iter()
            .find(|a| &a["id"] == id)
            .unwrap_or_else(|| panic!("{message}: no answer in {answers:?}"));
        assert_eq!(
            answer.get("error").is_none(),
            *relayed,
            "{message}: {answer}"
        );
    }
    assert!(
        stderr.contains("without an id (a notification) is refused"),
        "{stderr}"
    );
}

#[test]
fn mcp_answers_to_ids_the_client_never_sent_are_dropped() {
    let mut client = opening();
    client.push(echo(Some(3), "tools/call", "ordinary"));
    let Some((answers, stderr, _)) = through_hostile("forge", &client) else {
        return;
    };
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(
        ids,
        [&json!(1), &json!(3)],
        "one answer per request: {answers:?}"
    );
    assert!(
        !answers.iter().any(|a| a.to_string().contains("again")),
        "{answers:?}"
    );
    assert!(
        stderr.contains("that no request of the client's waits on"),
        "{stderr}"
    );
}

#[test]
fn mcp_a_tools_list_without_end_fails_closed() {
    let mut client = opening();
    client.push(echo(Some(3), "tools/call", "ordinary"));
    let Some((answers, stderr, _)) = through_hostile("endless", &client) else {
        return;
    };
    let call = answers.iter().find(|a| a["id"] == 3).unwrap();
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert!(stderr.contains("more than 10000 tools"), "{stderr}");
}
