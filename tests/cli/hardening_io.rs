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
