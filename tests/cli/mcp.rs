//! `metagate mcp` end to end, with real third-party MCP software only: the official MCP Python
//! SDK's client (driven by `tests/mcp/driver.py`) talking to the npm servers
//! `@modelcontextprotocol/server-filesystem` and `server-everything`, once directly and once
//! through metagate. `scripts/mcp-deps.sh` installs them (`.ci/run` runs it first); without
//! them these tests say so loudly and pass, unless `METAGATE_REQUIRE_MCP_DEPS` is set (as
//! `.ci/run` sets it), where they fail.
//!
//! The tests that read what the proxy stored run on an SQLite file and on a PostgreSQL
//! database each; those of the protocol alone, on an SQLite file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{BACKENDS, BIN, Backend, Sandbox, new_store, store_rows};

mod gaps;
mod http;

/// The installed MCP software.
struct Deps {
    python: PathBuf,
    filesystem: PathBuf,
    everything: PathBuf,
}

fn deps() -> Option<Deps> {
    let root = std::env::var_os("METAGATE_MCP_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-deps"));
    if !root.join("installed").is_file() {
        let why = format!(
            "the MCP servers and client are not installed in {}: run scripts/mcp-deps.sh",
            root.display()
        );
        crate::skips::skip(&crate::skips::MCP, &why);
        return None;
    }
    let bin = root.join("node/node_modules/.bin");
    Some(Deps {
        python: root.join("venv/bin/python"),
        filesystem: bin.join("mcp-server-filesystem"),
        everything: bin.join("mcp-server-everything"),
    })
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(name)
}

/// A served folder, a policy for it and a store, in a sandbox.
struct Setup {
    sb: Sandbox,
    deps: Deps,
    data: PathBuf,
    policy: PathBuf,
    /// The store, as `--db` names it: the sandbox's file, or a PostgreSQL URL.
    db: String,
}

/// The filesystem server's policy: its `path` arguments are paths inside the served folder,
/// `.env` files refused.
const FS_POLICY: &str = r#"
[paths]
root = "data"
deny = ["**/.env"]

[tools.read_text_file.args.path]
kind = "path"

[tools.write_file.args.path]
kind = "path"

[intents.reading]
allow = ["read_text_file", "list_directory", "list_allowed_directories"]
"#;

/// The set-up with a new store of `backend`.
fn setup_on(backend: Backend) -> Option<Setup> {
    let deps = deps()?;
    let sb = Sandbox::new();
    let db = new_store(backend, &sb);
    sb.file("data/a.txt", "hello\n");
    sb.file("data/.env", "SECRET=do-not-read\n");
    let policy = sb.file("metagate.toml", FS_POLICY);
    let data = sb.path().join("data").canonicalize().unwrap();
    Some(Setup {
        sb,
        deps,
        data,
        policy,
        db,
    })
}

/// The set-up for a test of the protocol alone, whose store is beside the point: an SQLite
/// file.
fn setup() -> Option<Setup> {
    setup_on(Backend::Sqlite)
}

impl Setup {
    fn filesystem(&self) -> Vec<String> {
        vec![
            self.deps.filesystem.display().to_string(),
            self.data.display().to_string(),
        ]
    }

    fn everything(&self) -> Vec<String> {
        vec![self.deps.everything.display().to_string()]
    }

    fn paged(&self) -> Vec<String> {
        vec![
            self.deps.python.display().to_string(),
            script("paged_server.py").display().to_string(),
        ]
    }

    /// `metagate mcp FLAGS -- SERVER`, with the sandbox's policy and store.
    fn through(&self, flags: &[&str], server: Vec<String>) -> Vec<String> {
        let mut command = vec![BIN.to_string(), "--policy".into()];
        command.push(self.policy.display().to_string());
        command.push("--db".into());
        command.push(self.db.clone());
        command.push("mcp".into());
        command.extend(flags.iter().map(|f| f.to_string()));
        command.push("--".into());
        command.extend(server);
        command
    }

    /// Plays `scenario` with the Python SDK's client against `server`; returns its report
    /// and what the server side wrote on stderr.
    fn drive(&self, scenario: &[&str], server: &[String]) -> (Value, String) {
        let out = self
            .sb
            .program(&self.deps.python)
            .arg(script("driver.py"))
            .args(scenario)
            .arg("--")
            .args(server)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "the client failed ({}): {stderr}",
            out.status
        );
        let report = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        (report, stderr)
    }

    fn calls(&self, calls: &Value, server: &[String]) -> (Vec<Value>, String) {
        let (report, stderr) = self.drive(&["calls", &calls.to_string()], server);
        (report["results"].as_array().unwrap().clone(), stderr)
    }

    fn file(&self, name: &str) -> String {
        self.data.join(name).display().to_string()
    }

    /// Rows of the store: `(verdict, tool)` of each decision, and `(status, decision_id,
    /// error_type)` of each outcome.
    fn store(&self) -> (Vec<Decided>, Vec<Ended>) {
        let text = |v: &Value| v.as_str().unwrap().to_string();
        let decisions = store_rows(&self.db, "SELECT verdict, tool FROM decisions ORDER BY id")
            .iter()
            .map(|r| (text(&r[0]), text(&r[1])))
            .collect();
        // The decision an outcome names is in its metadata, JSON each dialect reads its own
        // way: read here instead.
        let outcomes = store_rows(
            &self.db,
            "SELECT status, metadata, error_type FROM outcomes ORDER BY id",
        )
        .iter()
        .map(|r| {
            let decision = r[1].as_str().and_then(|metadata| {
                let metadata: Value = serde_json::from_str(metadata).unwrap();
                metadata.get("decision_id").map(|id| id.as_i64().unwrap())
            });
            (text(&r[0]), decision, r[2].as_str().map(str::to_string))
        })
        .collect();
        (decisions, outcomes)
    }
}

/// A decision row: verdict and tool.
type Decided = (String, String);
/// An outcome row: status, the decision it names, and its error type.
type Ended = (String, Option<i64>, Option<String>);

/// The text of a tool result the model reads.
fn text(result: &Value) -> &str {
    result["text"].as_str().unwrap()
}

#[test]
fn the_tool_list_through_metagate_is_the_servers() {
    let Some(s) = setup() else { return };
    let (direct, _) = s.drive(&["list"], &s.filesystem());
    let (through, _) = s.drive(&["list"], &s.through(&[], s.filesystem()));
    assert!(direct["tools"].as_array().unwrap().len() >= 10, "{direct}");
    assert_eq!(through["tools"], direct["tools"]);
    assert_eq!(through["protocol"], direct["protocol"]);
}

#[test]
fn a_good_call_passes() {
    for backend in BACKENDS {
        let Some(s) = setup_on(backend) else { return };
        let calls = json!([["read_text_file", {"path": s.file("a.txt")}]]);
        let (results, _) = s.calls(&calls, &s.through(&[], s.filesystem()));
        assert_eq!(results[0], json!({"isError": false, "text": "hello\n"}));
        let (decisions, outcomes) = s.store();
        assert_eq!(
            decisions,
            [("pass".to_string(), "read_text_file".to_string())]
        );
        assert_eq!(outcomes, [("ok".to_string(), Some(1), None)]);
    }
}

#[test]
fn a_misspelled_argument_is_corrected_and_succeeds() {
    for backend in BACKENDS {
        let Some(s) = setup_on(backend) else { return };
        let calls = json!([
            // `pth`: a near miss of the server's own `path`, from its schema alone.
            ["read_text_file", {"pth": s.file("a.txt")}],
            // `contnet`: a near miss of the server's own `content`, from its schema alone.
            ["write_file", {"path": s.file("b.txt"), "contnet": "written"}],
        ]);
        let (direct, _) = s.calls(&calls, &s.filesystem());
        assert!(
            direct.iter().all(|r| r["isError"] == true),
            "the server refuses both: {direct:?}"
        );
        let (results, stderr) = s.calls(&calls, &s.through(&[], s.filesystem()));
        assert_eq!(results[0], json!({"isError": false, "text": "hello\n"}));
        assert_eq!(results[1]["isError"], false, "{results:?}");
        assert_eq!(
            std::fs::read_to_string(s.data.join("b.txt")).unwrap(),
            "written"
        );
        assert!(
            stderr.contains(r#"argument "pth" → "path" (arg_fuzzy)"#),
            "{stderr}"
        );
        assert!(
            stderr.contains(r#"argument "contnet" → "content" (arg_fuzzy)"#),
            "{stderr}"
        );
        let (decisions, _) = s.store();
        assert_eq!(decisions.len(), 2, "{decisions:?}");
        assert!(
            decisions.iter().all(|(verdict, _)| verdict == "corrected"),
            "{decisions:?}"
        );
    }
}

#[test]
fn a_denied_path_is_answered_by_metagate_and_never_reaches_the_server() {
    for backend in BACKENDS {
        let Some(s) = setup_on(backend) else { return };
        let calls = json!([
            ["read_text_file", {"path": s.file(".env")}],
            ["write_file", {"path": s.file(".env"), "content": "SECRET=overwritten"}],
        ]);
        let (results, _) = s.calls(&calls, &s.through(&[], s.filesystem()));
        for result in &results {
            assert_eq!(result["isError"], true);
            assert!(
                text(result).starts_with("[tool_error]\ncategory: policy_blocked\n"),
                "{result}"
            );
            assert!(text(result).contains("deny rule `**/.env`"), "{result}");
            assert!(!text(result).contains("do-not-read"));
            assert_eq!(
                result["meta"]["metagate/error"]["category"],
                "policy_blocked"
            );
        }
        assert_eq!(
            std::fs::read_to_string(s.data.join(".env")).unwrap(),
            "SECRET=do-not-read\n",
            "the write never reached the server"
        );
        let (decisions, outcomes) = s.store();
        assert!(
            decisions.iter().all(|(v, _)| v == "rejected"),
            "{decisions:?}"
        );
        assert!(outcomes.is_empty(), "nothing was forwarded: {outcomes:?}");
    }
}

#[test]
fn the_servers_own_errors_pass_through() {
    for backend in BACKENDS {
        let Some(s) = setup_on(backend) else { return };
        let calls = json!([["read_text_file", {"path": s.file("missing.txt")}]]);
        let (direct, _) = s.calls(&calls, &s.filesystem());
        let (through, _) = s.calls(&calls, &s.through(&[], s.filesystem()));
        assert_eq!(through, direct);
        assert_eq!(through[0]["isError"], true);
        assert!(text(&through[0]).contains("ENOENT"), "{through:?}");
        let (decisions, outcomes) = s.store();
        assert_eq!(decisions[0].0, "pass");
        assert_eq!(outcomes, [("error".to_string(), Some(1), None)]);
    }
}

#[test]
fn the_store_holds_a_decision_per_call_and_an_outcome_per_forwarded_call() {
    for backend in BACKENDS {
        let Some(s) = setup_on(backend) else { return };
        let calls = json!([
            ["read_text_file", {"path": s.file("a.txt")}],
            ["read_text_file", {"pth": s.file("a.txt")}],
            ["read_text_file", {"path": s.file(".env")}],
            ["read_text_file", {"path": s.file("missing.txt")}],
            ["list_directory", {"path": s.data.display().to_string()}],
            ["no_such_tool", {}],
        ]);
        let (results, _) = s.calls(&calls, &s.through(&["--session", "s1"], s.filesystem()));
        assert_eq!(results.len(), 6);
        let (decisions, outcomes) = s.store();
        let verdicts: Vec<&str> = decisions.iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(
            verdicts,
            ["pass", "corrected", "rejected", "pass", "pass", "pass"],
            "one decision per call"
        );
        let linked: Vec<Option<i64>> = outcomes.iter().map(|(_, id, _)| *id).collect();
        assert_eq!(
            linked,
            [Some(1), Some(2), Some(4), Some(5), Some(6)],
            "one outcome per forwarded call, naming its decision"
        );
        let statuses: Vec<&str> = outcomes.iter().map(|(s, _, _)| s.as_str()).collect();
        assert_eq!(statuses, ["ok", "ok", "error", "ok", "error"]);
        assert_eq!(outcomes[4].2.as_deref(), Some("tool_not_found"));
        let out =
            s.sb.cmd()
                .args(["--db", &s.db, "tools", "health", "--format", "json"])
                .output()
                .unwrap();
        let health: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(health.get("read_text_file").is_some(), "{health}");
    }
}

#[test]
fn an_intent_leaves_tools_out_of_the_list_and_refuses_them() {
    for backend in BACKENDS {
        let Some(s) = setup_on(backend) else { return };
        let server = s.through(&["--intent", "reading"], s.filesystem());
        let (listed, _) = s.drive(&["list"], &server);
        let mut names: Vec<&str> = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "list_allowed_directories",
                "list_directory",
                "read_text_file"
            ]
        );
        let calls = json!([["write_file", {"path": s.file("c.txt"), "content": "x"}]]);
        let (results, _) = s.calls(&calls, &server);
        assert!(
            text(&results[0]).contains("category: policy_blocked"),
            "{results:?}"
        );
        assert!(!s.data.join("c.txt").exists());
        let (decisions, outcomes) = s.store();
        assert_eq!(
            decisions,
            [("rejected".to_string(), "write_file".to_string())]
        );
        assert!(outcomes.is_empty(), "nothing was forwarded: {outcomes:?}");
    }
}

#[test]
fn notifications_pass_through() {
    let Some(s) = setup() else { return };
    let (report, _) = s.drive(&["notifications"], &s.through(&[], s.everything()));
    assert!(!report["logs"].as_array().unwrap().is_empty(), "{report}");
    let seen = report["notifications"].as_array().unwrap();
    assert!(seen.contains(&json!("notifications/message")), "{report}");
    assert!(
        seen.contains(&json!("notifications/tools/list_changed")),
        "{report}"
    );
}

#[test]
fn progress_passes_through() {
    let Some(s) = setup() else { return };
    let (report, _) = s.drive(&["progress"], &s.through(&[], s.everything()));
    assert_eq!(
        report["progress"],
        json!([[1.0, 4.0], [2.0, 4.0], [3.0, 4.0], [4.0, 4.0]])
    );
    assert_eq!(report["result"]["isError"], false);
}

#[test]
fn a_paginated_tools_list_passes_through_and_every_page_is_checked() {
    let Some(s) = setup() else { return };
    let (direct, _) = s.drive(&["list"], &s.paged());
    let (through, _) = s.drive(&["list"], &s.through(&[], s.paged()));
    assert_eq!(direct["pages"], 3);
    assert_eq!(through["pages"], 3);
    assert_eq!(through["tools"], direct["tools"]);
    // The last page's tool is in the registry: its schema corrects the call.
    let calls = json!([["tool_7", {"mesage": "hi", "repeat": "2"}]]);
    let (results, _) = s.calls(&calls, &s.through(&[], s.paged()));
    let echoed: Value = serde_json::from_str(text(&results[0])).unwrap();
    assert_eq!(echoed["arguments"], json!({"message": "hi", "repeat": 2}));
}

#[test]
fn a_sampling_request_from_the_server_passes_through() {
    let Some(s) = setup() else { return };
    let (report, _) = s.drive(&["sampling"], &s.through(&[], s.everything()));
    assert_eq!(report["asked"][0]["maxTokens"], 20);
    assert!(
        text(&report["result"])
            .contains("sampled: Resource trigger-sampling-request context: say hi"),
        "{report}"
    );
}

#[test]
fn an_elicitation_request_from_the_server_passes_through() {
    let Some(s) = setup() else { return };
    let (report, _) = s.drive(&["elicitation"], &s.through(&[], s.everything()));
    assert!(!report["asked"].as_array().unwrap().is_empty());
    assert!(text(&report["result"]).contains("Ada Lovelace"), "{report}");
}

#[test]
fn a_signal_reaches_the_server_and_its_status_is_metagates() {
    let Some(s) = setup() else { return };
    let mut child =
        s.sb.std_cmd()
            .args(["mcp", "--no-telemetry", "--"])
            .args(s.everything())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
    // Give the server time to start, then ask metagate to stop.
    std::thread::sleep(Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "metagate did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + 15), "the server died of SIGTERM");
}

#[test]
fn the_servers_exit_status_and_start_failures_are_reported() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["mcp", "--no-telemetry", "--", "sh", "-c", "exit 7"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    let out = sb
        .cmd()
        .args(["mcp", "--no-telemetry", "--", "/no/such/server"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot start the MCP server /no/such/server"),
        "{stderr}"
    );
    let out = sb.cmd().args(["mcp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a server command is required");
}

/// The stdio transport's shutdown: the client closes metagate's stdin, the server's is closed;
/// a server that does not end gets SIGTERM, then SIGKILL, and its status is metagate's.
#[test]
fn a_server_that_outlives_its_input_is_terminated_then_killed() {
    let sb = Sandbox::new();
    let started = Instant::now();
    let out = sb
        .cmd()
        .args([
            "mcp",
            "--no-telemetry",
            "--",
            "sh",
            "-c",
            "trap '' TERM; exec sleep 60",
        ])
        .write_stdin("")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(128 + 9), "killed: {out:?}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(4) && took < Duration::from_secs(20),
        "2 s for the closed input, 2 s after SIGTERM: {took:?}"
    );
}

/// The example policy of docs/mcp.md ("A policy for a server"), its served folder the
/// sandbox's `data`.
fn docs_policy(data: &Path) -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/mcp.md")).unwrap();
    let section = page.split("## A policy for a server").nth(1).unwrap();
    let block = section.split("```toml\n").nth(1).unwrap();
    let policy = block.split("```").next().unwrap();
    assert!(policy.contains("extends = \"none\""), "{policy}");
    policy.replace("/home/me/notes", &data.display().to_string())
}

/// `policy check FILE -- SERVER`: the docs' policy for the filesystem server warns about the
/// server's tools on its own (they come at run time), and is clean with the server's list,
/// which is counted as the server's; a name the server lacks is still a warning.
#[test]
fn policy_check_lists_the_servers_tools() {
    let Some(s) = setup() else { return };
    let policy = s.sb.file("filesystem.toml", &docs_policy(&s.data));
    let check = |policy: &Path, server: &[String]| {
        let out =
            s.sb.cmd()
                .args(["policy", "check"])
                .arg(policy)
                .arg("--")
                .args(server)
                .output()
                .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        (String::from_utf8(out.stdout).unwrap(), err)
    };
    let (alone, err) = s.sb.policy_check(&policy);
    assert_eq!(alone, 0);
    assert!(
        err.contains("\"list_directory\" is not a tool this policy knows"),
        "{err}"
    );
    assert!(err.contains("policy check FILE -- SERVER_COMMAND"), "{err}");
    let (out, err) = check(&policy, &s.filesystem());
    assert!(!err.contains("metagate: warning"), "{err}");
    let (direct, _) = s.drive(&["list"], &s.filesystem());
    let n = direct["tools"].as_array().unwrap().len();
    assert_eq!(
        out,
        format!(
            "{}: ok with the server's tools ({n} tools: {n} from the server; 1 intent, 0 warnings)\n",
            policy.display()
        )
    );
    // Layered on the built-in policy, Agent Zero's tools are counted apart.
    let layered = s.sb.file(
        "layered.toml",
        &docs_policy(&s.data).replace("extends = \"none\"", ""),
    );
    let (out, _) = check(&layered, &s.filesystem());
    assert!(
        out.contains(&format!("{n} from the server, 8 built in (Agent Zero's)")),
        "{out}"
    );
    // A misspelt tool is not the server's either.
    let typo = s.sb.file(
        "typo.toml",
        &docs_policy(&s.data).replace("\"list_directory\"", "\"list_directroy\""),
    );
    let (out, err) = check(&typo, &s.filesystem());
    assert!(
        err.contains("\"list_directroy\" is not a tool this policy knows"),
        "{err}"
    );
    assert!(out.contains("1 warning)"), "{out}");
    // The same registry `mcp` builds: a reading intent admits list_directory through it.
    let (report, _) = s.drive(
        &["list"],
        &s.through(&["--intent", "reading"], s.filesystem())
            .into_iter()
            .map(|a| {
                if a == s.policy.display().to_string() {
                    policy.display().to_string()
                } else {
                    a
                }
            })
            .collect::<Vec<_>>(),
    );
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.contains(&"list_directory"), "{names:?}");
}
