//! The stdio proxy's gaps of issue 41 (items 3 to 5), with the real everything server: what
//! was checked is what the server gets, the server's command needs no `--`, and the store the
//! proxy writes to is never a silent surprise.

use std::process::Command;

use serde_json::{Value, json};

use super::{Setup, setup};
use crate::common::{LineStream, store_rows};

/// A JSON-RPC session with the proxy on its stdio, read line by line.
struct Session(LineStream);

impl Session {
    fn start(command: Command) -> Session {
        let mut session = Session(LineStream::spawn(command));
        session.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "gaps", "version": "1"}}),
        );
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        self.0.write(&format!("{message}\n"));
    }

    /// Sends a request and reads up to its answer (what the server says meanwhile is skipped).
    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.0.next();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn finish(self) -> String {
        String::from_utf8_lossy(&self.0.finish().stderr).into_owned()
    }
}

fn proxy(s: &Setup, server: Vec<String>) -> Command {
    let command = s.through(&[], server);
    let mut cmd = s.sb.program(&command[0]);
    cmd.args(&command[1..]);
    cmd
}

/// Item 3: stringified arguments are checked as an object, and sent on as that object (the
/// everything server refuses a string), the change recorded as an envelope correction.
#[test]
fn stringified_arguments_reach_the_server_as_the_corrected_object() {
    let Some(s) = setup() else { return };
    let mut session = Session::start(proxy(&s, s.everything()));
    let answer = session.request(
        1,
        "tools/call",
        json!({"name": "get-sum", "arguments": "{\"a\": \"2\", \"b\": 3}"}),
    );
    let stderr = session.finish();
    let result = &answer["result"];
    assert!(
        result["content"].is_array() && result["isError"] != json!(true),
        "{answer}\n{stderr}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains('5'), "{text}");
    let rows = store_rows(&s.db, "SELECT verdict, corrections FROM decisions");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], "corrected");
    let corrections = rows[0][1].as_str().unwrap();
    assert!(corrections.contains("envelope"), "{corrections}");
}

/// Item 4: the first word that is not one of metagate's options starts the server, as
/// clients that drop `--` (argparse, MCP Inspector's CLI) write it; `--` still works, and
/// what follows the server's program is the server's, options included.
#[test]
fn the_server_command_needs_no_double_dash() {
    let Some(s) = setup() else { return };
    let mut command = s.through(&["--quiet"], s.everything());
    command.retain(|word| word != "--");
    let calls = json!([["get-sum", {"a": 2, "b": 3}]]);
    let (results, _) = s.calls(&calls, &command);
    assert_eq!(results[0]["isError"], json!(false), "{results:?}");
    // Options after the program are the program's: `sh -c` gets its `-c`.
    let out =
        s.sb.cmd()
            .args(["mcp", "--no-telemetry", "sh", "-c", "exit 5"])
            .write_stdin("")
            .output()
            .unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
}

/// Item 5: the proxy says at start which store and which policy it took; `--print-config`
/// writes, for each client, a snippet that names both, which started with an empty
/// environment from another folder records in that same store.
#[test]
fn the_store_is_said_and_each_clients_snippet_names_it() {
    let Some(s) = setup() else { return };
    let mut session = Session::start(proxy(&s, s.everything()));
    session.request(1, "ping", json!({}));
    let stderr = session.finish();
    let said = stderr
        .lines()
        .find(|l| l.starts_with("metagate: mcp: store "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(said.contains(&s.db), "{said}");
    assert!(said.contains(&s.policy.display().to_string()), "{said}");

    for (client, key) in [
        ("claude-desktop", "mcpServers"),
        ("cursor", "mcpServers"),
        ("vscode", "servers"),
        ("zed", "context_servers"),
    ] {
        let mut flags = vec!["--print-config", client];
        flags.push("--");
        let mut command = s.through(&flags, s.everything());
        // `through` puts its own `--` before the server: one is enough.
        let at = command.iter().rposition(|w| w == "--").unwrap();
        command.remove(at);
        let out =
            s.sb.program(&command[0])
                .args(&command[1..])
                .output()
                .unwrap();
        assert!(out.status.success(), "{out:?}");
        let snippet: Value = serde_json::from_slice(&out.stdout).unwrap();
        let servers = snippet[key]
            .as_object()
            .unwrap_or_else(|| panic!("{snippet}"));
        let (_, server) = servers.iter().next().unwrap();
        let args: Vec<&str> = server["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let after = |flag: &str| args[args.iter().position(|a| *a == flag).unwrap() + 1];
        assert_eq!(after("--db"), s.db, "{client}");
        assert_eq!(
            after("--policy"),
            s.policy.display().to_string(),
            "{client}"
        );
        assert_eq!(
            server["type"].as_str(),
            (client == "vscode").then_some("stdio")
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("Windows:") && stderr.contains("macOS:"),
            "{stderr}"
        );
        if client == "zed" {
            // Started as a client starts it: no environment, another folder.
            let elsewhere = tempfile::tempdir().unwrap();
            let mut cmd = Command::new(server["command"].as_str().unwrap());
            cmd.args(&args).env_clear().current_dir(elsewhere.path());
            let mut session = Session::start(cmd);
            let answer = session.request(
                1,
                "tools/call",
                json!({"name": "get-sum", "arguments": {"a": 1, "b": 2}}),
            );
            let stderr = session.finish();
            assert!(
                answer["result"]["content"].is_array()
                    && answer["result"]["isError"] != json!(true),
                "{answer}\n{stderr}"
            );
        }
    }
    let rows = store_rows(&s.db, "SELECT tool FROM decisions WHERE tool = 'get-sum'");
    assert_eq!(
        rows.len(),
        1,
        "the snippet's proxy wrote to the store named"
    );
}

/// Item 7: `[mcp] sampling = false` keeps a server from having the client's model write for
/// it: the request never reaches the client, and the server is told why.
#[test]
fn a_sampling_request_is_refused_when_the_policy_says_so() {
    let Some(s) = setup() else { return };
    std::fs::write(&s.policy, "[mcp]\nsampling = false\n").unwrap();
    let (report, stderr) = s.drive(&["sampling"], &s.through(&[], s.everything()));
    assert_eq!(report["asked"], json!([]), "{report}");
    assert_eq!(report["result"]["isError"], json!(true), "{report}");
    assert!(
        report["result"]["text"]
            .as_str()
            .unwrap()
            .contains("does not let this server ask the client to sample"),
        "{report}"
    );
    assert!(stderr.contains("refused a sampling request"), "{stderr}");
}
