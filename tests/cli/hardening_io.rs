//! Issue 39's hostile cases (its items 5–10) through the real binary in a temporary home:
//! tool names that read as paths, hard links, approval-like arguments and the grant feedback,
//! the MCP proxy's unchecked paths, unbounded inputs, and secrets placed where redaction did
//! not look. Each hostile row passed (or hung, or grew) before issue 39; the ordinary rows of
//! the same shapes still pass.

use serde_json::{Value, json};

use crate::common::{Sandbox, gate, texts};

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

/// A tool behind a grant, and one that declares a `confirm` argument of its own.
const GRANT_POLICY: &str = r#"
extends = "none"

[tools.system_execute]
capability = "system_execute"
[tools.system_execute.args.command]
type = "string"
required = true

[tools.delete_branch]
capability = "system_execute"
[tools.delete_branch.args.name]
type = "string"
required = true
[tools.delete_branch.args.confirm]
type = "boolean"

[permit]
require = ["system_execute"]
"#;

#[test]
fn approval_like_arguments_are_stripped_and_the_grant_command_goes_to_the_operator_only() {
    let sb = Sandbox::new();
    sb.file("policy.toml", GRANT_POLICY);
    let gate_report = |tool: &str, args: Value| {
        let out = sb
            .cmd()
            .args([
                "--policy",
                "policy.toml",
                "--db",
                "s.db",
                "gate",
                "--report",
            ])
            .write_stdin(json!({"name": tool, "arguments": args}).to_string())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        (report, String::from_utf8(out.stderr).unwrap())
    };
    let stripped = |report: &Value| -> Vec<String> {
        report["corrections"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "strip")
            .map(|c| c["from"].as_str().unwrap().to_string())
            .collect()
    };
    for name in [
        "user_confirmed",
        "confirm",
        "is_approved",
        "isApproved",
        "consent_given",
        "dangerously_skip_permissions",
        "skip_confirmation",
        "preApproved",
        "operatorConsent",
    ] {
        let (report, stderr) = gate_report("system_execute", json!({"command": "ls", name: true}));
        assert_eq!(stripped(&report), [name], "{name}: {report}");
        let error = &report["error"];
        assert_eq!(error["category"], "confirmation_required", "{report}");
        // The model is told which capability to ask for, never a command it could run.
        let told = format!("{error} {}", report["feedback"]);
        assert!(
            told.contains("a grant of capability system_execute"),
            "{told}"
        );
        assert!(!told.contains("permit grant"), "{told}");
        assert!(
            stderr.contains("an operator can allow it with: metagate --policy ")
                && stderr.contains(" permit grant --capability system_execute --for 5m"),
            "{stderr}"
        );
    }
    // A tool that declares the argument keeps it; ordinary arguments are never stripped.
    let (report, _) = gate_report("delete_branch", json!({"name": "old", "confirm": true}));
    assert!(stripped(&report).is_empty(), "{report}");
    let (report, _) = gate_report("system_execute", json!({"command": "ls"}));
    assert!(stripped(&report).is_empty(), "{report}");
}

/// `metagate ARGS` with stdin from `stdin`, in `sb`: (status, stderr).
fn run_on(sb: &Sandbox, args: &[&str], stdin: std::process::Stdio) -> (i32, String) {
    let out = sb.std_cmd().args(args).stdin(stdin).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[cfg(unix)]
#[test]
fn file_inputs_are_regular_files_and_bounded() {
    use std::process::Stdio;
    let sb = Sandbox::new();
    let fifo = sb.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success(),
        "mkfifo"
    );
    let fifo = fifo.to_str().unwrap();
    // (arguments, what the error names): each ended at once before reading, where it hung or
    // grew before issue 39.
    let rows: [(&[&str], &str); 6] = [
        (
            &["lint", "/dev/zero"],
            "/dev/zero is a device, not a regular file",
        ),
        (
            &["lint", fifo],
            "is a FIFO (named pipe), not a regular file",
        ),
        (
            &["record", "/dev/zero"],
            "/dev/zero is a device, not a regular file",
        ),
        (
            &["record", fifo],
            "is a FIFO (named pipe), not a regular file",
        ),
        (
            &["--policy", fifo, "gate"],
            "is a FIFO (named pipe), not a regular file",
        ),
        (&["policy", "check", "/dev/zero"], "not a regular file"),
    ];
    for (args, want) in rows {
        let (code, stderr) = run_on(&sb, args, Stdio::null());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    // Stdin without an end: each ends with a clear error, within its bound.
    let zero = || Stdio::from(std::fs::File::open("/dev/zero").unwrap());
    let (code, stderr) = run_on(&sb, &["lint", "-"], zero());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("larger than the 256 MiB"), "{stderr}");
    let (code, stderr) = run_on(&sb, &["record", "--db", "s.db"], zero());
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("without ending: not JSON Lines"),
        "{stderr}"
    );
    // Ordinary files of the same kinds still read.
    sb.file(
        "calls.jsonl",
        &terminal("code_execution_tool", "ls").to_string(),
    );
    sb.file("policy.toml", "[gate]\nunknown_tools = \"pass\"\n");
    let (code, stderr) = run_on(
        &sb,
        &["--policy", "policy.toml", "lint", "calls.jsonl"],
        Stdio::null(),
    );
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn one_message_holds_at_most_1024_calls() {
    let sb = Sandbox::new();
    let message = |n: usize| {
        let calls: Vec<Value> = (0..n)
            .map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "response", "arguments": "{\"text\":\"x\"}"}}))
            .collect();
        json!({"role": "assistant", "content": null, "tool_calls": calls}).to_string()
    };
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--no-telemetry"],
        message(1025).as_bytes(),
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1025 calls, more than the 1024"),
        "{out}"
    );
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--no-telemetry"],
        message(1024).as_bytes(),
    );
    assert_eq!(
        code,
        0,
        "{}",
        out.to_string().chars().take(300).collect::<String>()
    );
}

/// Issue 39's planted policy: a symbolic link `metagate.toml` another user made in a sticky
/// folder everyone can write, pointing at a TOML this user owns. Only root can make another
/// user's link, so elsewhere this says it is skipped.
#[cfg(target_os = "linux")]
#[test]
fn a_policy_found_through_another_users_link_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    if !nix_is_root() {
        eprintln!(
            "\n*** SKIPPED the planted-policy test: only root can make another user's link ***\n"
        );
        return;
    }
    let shared = sb.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let mine = sb.file("mine.toml", "[gate]\nunknown_tools = \"pass\"\n");
    let link = shared.join("metagate.toml");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    let out = sb
        .std_cmd()
        .current_dir(&shared)
        .args(["gate", "--no-telemetry"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("symbolic link of another user's (uid 65534)"),
        "{stderr}"
    );
    // The same link of this user's own is the policy, as before.
    std::os::unix::fs::lchown(&link, Some(0), Some(0)).unwrap();
    let (out, code, _) = texts(
        sb.cmd()
            .current_dir(&shared)
            .args(["gate", "--no-telemetry", "--quiet"])
            .write_stdin(terminal("./x", "ls").to_string())
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1, "{out}");
}

#[cfg(target_os = "linux")]
fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        == Some("0")
}

#[test]
fn hard_links_are_refused_for_writes_reads_outside_a_scope_and_metagates_own_files() {
    let sb = Sandbox::new();
    sb.file("policy.toml", crate::hardening::POLICY);
    sb.file("docs/plain.txt", "x");
    sb.file("outside/bashrc", "alias ls='x'");
    std::fs::hard_link(
        sb.path().join("outside/bashrc"),
        sb.path().join("docs/notes.txt"),
    )
    .unwrap();
    // The store exists once a grant is made; then a link to it, its policy and its log.
    let (grant, code) = crate::hardening::run(
        &sb,
        "s.db",
        &[
            "permit",
            "grant",
            "--format",
            "json",
            "--capability",
            "file_access",
            "--scope",
            "./docs",
            "--for",
            "5m",
        ],
        "",
    );
    assert_eq!(code, 0, "{grant}");
    std::fs::hard_link(sb.path().join("policy.toml"), sb.path().join("docs/p.txt")).unwrap();
    std::fs::hard_link(sb.path().join("s.db"), sb.path().join("docs/d.txt")).unwrap();
    let gate = |tool: &str, path: &str| {
        let call = json!({"name": tool, "arguments": {"path": path}}).to_string();
        crate::hardening::run(&sb, "s.db", &["gate", "--quiet"], &call)
    };
    // (tool, path, refused, what the refusal says)
    let rows = [
        ("file_write", "docs/notes.txt", Some("hard links")),
        ("file_read", "docs/notes.txt", Some("hard links")),
        ("file_read", "docs/p.txt", Some("own files are protected")),
        ("file_write", "docs/p.txt", Some("own files are protected")),
        ("file_read", "docs/d.txt", Some("own files are protected")),
        ("file_read", "docs/plain.txt", None),
        ("file_write", "docs/plain.txt", None),
        ("file_write", "docs/new.txt", None),
    ];
    for (tool, path, refused) in rows {
        let (out, code) = gate(tool, path);
        match refused {
            Some(why) => {
                assert_eq!(code, 1, "{tool} {path}: {out}");
                let message = out["error"]["message"].as_str().unwrap();
                assert!(message.contains(why), "{tool} {path}: {out}");
            }
            None => assert_eq!(code, 0, "{tool} {path}: {out}"),
        }
    }
}

#[test]
fn the_default_deny_list_holds_registry_cluster_and_state_credentials() {
    let sb = Sandbox::new();
    sb.file("policy.toml", "[paths]\nroot = \".\"\n[tools.read.args.path]\ntype = \"string\"\nkind = \"path\"\naccess = \"read\"\n");
    for (path, refused) in [
        (".npmrc", true),
        ("app/.npmrc", true),
        (".docker/config.json", true),
        (".kube/config", true),
        (".vault-token", true),
        (".pypirc", true),
        ("infra/terraform.tfstate", true),
        ("infra/terraform.tfstate.backup", true),
        ("infra/main.tf", false),
        ("docker/config.json", false),
        ("kube/config.yaml", false),
        ("package.json", false),
    ] {
        let call = json!({"name": "read", "arguments": {"path": path}}).to_string();
        let (out, code, _) = gate(
            &sb,
            &["--quiet", "--no-telemetry", "--policy", "policy.toml"],
            call.as_bytes(),
        );
        assert_eq!(code == 1, refused, "{path}: {out}");
    }
}
