//! `metagate permit` and the grants `gate` enforces, through the real binary with a test-only
//! clock (`--now`): expiry, revocation, sessions, scopes, grant-like fields, audit, bad input,
//! concurrent operators, and the interactive flow at a real pseudo-terminal.

use serde_json::{Value, json};

mod scopes;

use crate::common::{
    BACKENDS, BIN, Backend, Sandbox, fixture_path, new_store, store_count, store_execute,
    store_is_untouched,
};

/// A small policy in the sandbox: its path root is the sandbox.
const POLICY: &str = r#"
extends = "none"

[tools.system_execute]
capability = "system_execute"
[tools.system_execute.args.command]
type = "string"
required = true
kind = "shell"

[tools.file_read]
capability = "file_access"
[tools.file_read.args.path]
type = "string"
required = true
kind = "path"
access = "read"

[tools.browser_navigate]
capability = "browser_control"
[tools.browser_navigate.args.url]
type = "string"
required = true
kind = "url"

[tools.web_search]
capability = "search"
[tools.web_search.args.query]
type = "string"

[permit]
require = ["system_execute", "file_access", "browser_control"]

[paths]
root = "."
"#;

fn at(minutes: i64) -> String {
    let t: i64 = 1_763_632_800; // 2026-11-20T10:00:00Z
    let ts = t + minutes * 60;
    // RFC 3339 without a date library: whole minutes after T0 on the same day.
    let secs = ts % 86_400;
    format!("2026-11-20T{:02}:{:02}:00Z", secs / 3600, secs / 60 % 60)
}

struct Env {
    sb: Sandbox,
    policy: String,
    /// The store every command is given with `--db`; none for the default file in the sandbox.
    db: Option<String>,
}

impl Env {
    fn new() -> Env {
        Env::with(POLICY)
    }

    /// A sandbox with `text` as its policy.
    fn with(text: &str) -> Env {
        let sb = Sandbox::new();
        let policy = sb.file("policy.toml", text).display().to_string();
        Env {
            sb,
            policy,
            db: None,
        }
    }

    /// `Env::new` with a new store of `backend`.
    fn on(backend: Backend) -> Env {
        Env::with_on(backend, POLICY)
    }

    /// `Env::with` with a new store of `backend`.
    fn with_on(backend: Backend, text: &str) -> Env {
        let mut env = Env::with(text);
        env.db = Some(new_store(backend, &env.sb));
        env
    }

    /// `--db STORE` when the store is not the default one.
    fn db_args(&self) -> Vec<&str> {
        match &self.db {
            Some(db) => vec!["--db", db],
            None => vec![],
        }
    }

    /// `metagate --policy P --now T ARGS…`: (stdout, stderr, status).
    fn run(&self, now: &str, args: &[&str]) -> (String, String, i32) {
        let out = self
            .sb
            .cmd()
            .args(self.db_args())
            .args(["--policy", &self.policy, "--now", now])
            .args(args)
            .output()
            .unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
            out.status.code().unwrap(),
        )
    }

    fn grant(&self, now: &str, args: &[&str]) -> String {
        let mut all = vec!["permit", "grant", "--format", "json"];
        all.extend(args);
        let (out, err, code) = self.run(now, &all);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["id"].as_str().unwrap().to_string()
    }

    /// One call through `gate --report`: (report, status).
    fn gate(&self, now: &str, flags: &[&str], tool: &str, args: Value) -> (Value, i32) {
        let out = self
            .sb
            .cmd()
            .args(self.db_args())
            .args(["--policy", &self.policy, "--now", now, "gate", "--report"])
            .args(flags)
            .write_stdin(json!({"name": tool, "arguments": args}).to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let mut v: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{e}: {stdout} / {}", String::from_utf8_lossy(&out.stderr)));
        if let Some(command) = operator_command(&out.stderr) {
            v["operator_command"] = command.into();
        }
        (v, out.status.code().unwrap())
    }

    fn list_all(&self, now: &str) -> Value {
        let (out, err, code) = self.run(now, &["permit", "list", "--all", "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    }
}

/// The `metagate permit grant …` command `gate` told the operator on stderr, when it told one.
/// Only the operator is told it: the model's rejection names the capability to ask for.
fn operator_command(stderr: &[u8]) -> Option<String> {
    const SAID: &str = "an operator can allow it with: ";
    let stderr = String::from_utf8_lossy(stderr);
    let line = stderr.lines().find(|l| l.contains(SAID))?;
    Some(line.split_once(SAID).unwrap().1.to_string())
}

fn assert_needs_grant(report: &Value, code: i32, what: &str) {
    assert_eq!(code, 1, "{what}: {report}");
    let e = &report["error"];
    assert_eq!(e["category"], "confirmation_required", "{what}: {report}");
    assert_eq!(e["retryable"], false, "{what}");
    let suggestion = e["suggestion"].as_str().unwrap();
    let capability = e["details"]["capability"].as_str().unwrap();
    assert!(
        suggestion.contains(&format!("a grant of capability {capability}")),
        "{what}: {suggestion}"
    );
    // What reaches the model never carries a command it could run to grant itself the call.
    if let Some(command) = report["operator_command"].as_str() {
        for sent in [&e.to_string(), report["feedback"].as_str().unwrap_or("")] {
            assert!(!sent.contains(command), "{what}: {sent}");
        }
    }
    assert!(!suggestion.contains(" --for 5m"), "{what}: {suggestion}");
    assert!(e["details"].get("command").is_none(), "{what}: {report}");
}

#[test]
fn system_execute_needs_a_live_grant() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        let ls = json!({"command": "ls -la"});
        let (r, code) = env.gate(&at(0), &[], "system_execute", ls.clone());
        assert_needs_grant(&r, code, "no grant");
        assert!(
            r["operator_command"]
                .as_str()
                .unwrap()
                .ends_with("permit grant --capability system_execute --for 5m"),
            "{r}"
        );

        // The exact suggested command works, and then the call passes.
        let id = env.grant(&at(0), &["--capability", "system_execute", "--for", "5m"]);
        assert!(id.starts_with("mg_") && id.len() == 35, "{id}");
        let (r, code) = env.gate(&at(1), &[], "system_execute", ls.clone());
        assert_eq!((code, r["verdict"].as_str()), (0, Some("pass")), "{r}");
        let (r, code) = env.gate(&at(4), &[], "system_execute", ls.clone());
        assert_eq!(code, 0, "{r}");

        // Expired at 5 minutes.
        let (r, code) = env.gate(&at(5), &[], "system_execute", ls.clone());
        assert_needs_grant(&r, code, "expired");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("expired"),
            "{r}"
        );
        assert_eq!(r["error"]["details"]["grant"], id.as_str());

        // A new grant, then revoked.
        let id2 = env.grant(&at(10), &["--capability", "system_execute", "--for", "1h"]);
        assert_eq!(env.gate(&at(11), &[], "system_execute", ls.clone()).1, 0);
        let (out, err, code) = env.run(&at(12), &["permit", "revoke", &id2]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&id2));
        let (r, code) = env.gate(&at(13), &[], "system_execute", ls.clone());
        assert_needs_grant(&r, code, "revoked");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("revoked"),
            "{r}"
        );

        // A grant whose granted_at lies in the future (the clock moved back) is not live.
        env.grant(&at(30), &["--capability", "system_execute", "--for", "1h"]);
        let (r, code) = env.gate(&at(20), &[], "system_execute", ls.clone());
        assert_needs_grant(&r, code, "future");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("future"),
            "{r}"
        );
        assert_eq!(env.gate(&at(31), &[], "system_execute", ls).1, 0);

        // A tool whose capability needs no grant is untouched.
        let (r, code) = env.gate(&at(0), &[], "web_search", json!({"query": "x"}));
        assert_eq!(code, 0, "{r}");
    }
}

/// The command a refusal suggests, run exactly as printed by an operator in another folder
/// with another home (so another default store), makes the grant the gate then finds: it
/// names the store and the policy, both absolute.
#[test]
fn the_suggested_command_works_from_anywhere() {
    // SQLite-only: it checks that a relative store file is named by its absolute path.
    let env = Env::new();
    std::fs::create_dir_all(env.sb.path().join("stores")).unwrap();
    let gate = |now: &str| {
        let out = env
            .sb
            .cmd()
            .args([
                "--policy",
                "policy.toml",
                "--db",
                "stores/g.db",
                "--now",
                now,
            ])
            .args(["gate", "--report", "--session", "s1"])
            .write_stdin(r#"{"name":"system_execute","arguments":{"command":"ls"}}"#)
            .output()
            .unwrap();
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if let Some(command) = operator_command(&out.stderr) {
            v["operator_command"] = command.into();
        }
        (v, out.status.code().unwrap())
    };
    let (r, code) = gate(&at(0));
    assert_needs_grant(&r, code, "no grant");
    let command = r["operator_command"].as_str().unwrap();
    let store = env.sb.path().join("stores/g.db");
    assert!(
        command.contains(&format!(" --db {} ", store.display())),
        "{command}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let command = command.replacen("metagate", &format!("{} --now {}", BIN, at(0)), 1);
    let out = std::process::Command::new("sh")
        .args(["-c", &command])
        .env_clear()
        .env("HOME", elsewhere.path())
        .env("PATH", "/usr/bin:/bin")
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (r, code) = gate(&at(1));
    assert_eq!((code, r["verdict"].as_str()), (0, Some("pass")), "{r}");
}

#[test]
fn a_session_bound_grant_covers_only_its_session() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        let ls = json!({"command": "ls"});
        env.grant(
            &at(0),
            &["--capability", "system_execute", "--session", "s1"],
        );
        assert_eq!(
            env.gate(&at(1), &["--session", "s1"], "system_execute", ls.clone())
                .1,
            0
        );
        let (r, code) = env.gate(&at(1), &["--session", "s2"], "system_execute", ls.clone());
        assert_needs_grant(&r, code, "other session");
        // Another session's ID and grant are not the caller's business.
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("session \"s2\"") && !message.contains("s1"),
            "{r}"
        );
        assert!(r["error"]["details"].get("grant").is_none(), "{r}");
        // The operator's command binds the new grant to the caller's own session.
        assert!(
            r["operator_command"]
                .as_str()
                .unwrap()
                .contains("--session s2"),
            "{r}"
        );
        let (r, code) = env.gate(&at(1), &[], "system_execute", ls.clone());
        assert_needs_grant(&r, code, "no session");
        // METAGATE_SESSION counts as the session too.
        let out = env
            .sb
            .cmd()
            .env("METAGATE_SESSION", "s1")
            .args(env.db_args())
            .args(["--policy", &env.policy, "--now", &at(2), "gate", "-q"])
            .write_stdin(json!({"name": "system_execute", "arguments": ls}).to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
    }
}

#[test]
fn a_scoped_grant_covers_only_paths_inside_it() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        for f in [
            "docs/a.txt",
            "docs/sub/b.txt",
            "docs2/c.txt",
            "docsx.txt",
            "other/d.txt",
        ] {
            env.sb.file(f, "x");
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(env.sb.path().join("other"), env.sb.path().join("docs/link"))
            .unwrap();
        env.grant(
            &at(0),
            &["--capability", "file_access", "--scope", "./docs"],
        );
        let read = |p: &str| env.gate(&at(1), &[], "file_read", json!({"path": p}));
        for inside in [
            "docs/a.txt",
            "docs/sub/b.txt",
            "./docs",
            "docs/sub/../a.txt",
            "other/../docs/a.txt",
        ] {
            let (r, code) = read(inside);
            assert_eq!(code, 0, "{inside}: {r}");
        }
        // `docs/..`, the root, holds this run's policy file: a tool that only reads may name it.
        let mut outside = vec![
            "docs2/c.txt",
            "docsx.txt",
            "other/d.txt",
            "docs/../other/d.txt",
            "docs/..",
        ];
        if cfg!(unix) {
            outside.push("docs/link/d.txt");
        }
        for p in outside {
            let (r, code) = read(p);
            assert_needs_grant(&r, code, p);
            assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("does not cover the path"),
                "{p}: {r}"
            );
            // The operator's command names the path the call needs, resolved.
            assert!(
                r["operator_command"].as_str().unwrap().contains("--scope "),
                "{r}"
            );
        }

        // Hosts: exact, or *.parent for subdomains.
        env.grant(
            &at(0),
            &[
                "--capability",
                "browser_control",
                "--scope",
                "docs.example.com",
            ],
        );
        let nav = |u: &str| env.gate(&at(1), &[], "browser_navigate", json!({"url": u}));
        assert_eq!(nav("https://docs.example.com/x").1, 0);
        assert_eq!(nav("https://example.com/").1, 1);
        assert_eq!(nav("https://docs.example.com.evil.io/").1, 1);
    }
}

#[test]
fn grant_like_fields_are_stripped_and_never_grant() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        let fake = "mg_0123456789abcdef0123456789abcdef";
        let args = json!({"command": "ls", "grant_id": fake, "permit": true, "approvedBy": "x", "note": fake, "Permission": {"all": true}});
        let (r, code) = env.gate(&at(0), &[], "system_execute", args.clone());
        assert_needs_grant(&r, code, "carrying grant-like fields");
        let stripped: Vec<&str> = r["corrections"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "strip")
            .map(|c| c["from"].as_str().unwrap())
            .collect();
        assert_eq!(
            stripped,
            // `approvedBy` reads as an approval (issue 39): stripped by pattern.
            ["grant_id", "permit", "approvedBy", "note", "Permission"],
            "{r}"
        );
        assert!(r["warnings"].as_array().unwrap().len() >= 4, "{r}");
        // A real id in the call does not help either.
        let id = env.grant(
            &at(0),
            &["--capability", "system_execute", "--session", "other"],
        );
        let (r, code) = env.gate(
            &at(1),
            &[],
            "system_execute",
            json!({"command": "ls", "grant": id}),
        );
        assert_needs_grant(&r, code, "carrying a real id");
        // With a grant the call passes, and the fields are gone from what goes out.
        env.grant(&at(0), &["--capability", "system_execute"]);
        let (r, code) = env.gate(&at(1), &[], "system_execute", args);
        assert_eq!(code, 0, "{r}");
        assert_eq!(r["verdict"], "corrected");
        let out = &r["call"]["arguments"];
        assert_eq!(out, &json!({"command": "ls"}), "{r}");
        assert!(!r["call"].to_string().contains("mg_"), "{r}");
    }
}

#[test]
fn audit_trail_records_granted_used_denied_revoked() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        let ls = json!({"command": "ls"});
        env.gate(&at(0), &["--session", "a"], "system_execute", ls.clone());
        let id = env.grant(
            &at(1),
            &["--capability", "system_execute", "--reason", "deploy"],
        );
        env.gate(&at(2), &["--session", "a"], "system_execute", ls.clone());
        let (_, err, code) = env.run(&at(3), &["permit", "revoke", "--all"]);
        assert_eq!(code, 0, "{err}");
        let doc = env.list_all(&at(4));
        let events: Vec<(&str, Option<&str>)> = doc["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["event"].as_str().unwrap(), e["grant"].as_str()))
            .collect();
        assert_eq!(
            events,
            [
                ("denied", None),
                ("granted", Some(id.as_str())),
                ("used", Some(id.as_str())),
                ("revoked", Some(id.as_str()))
            ]
        );
        let ev = doc["events"].as_array().unwrap();
        // used and denied name their gate decision.
        assert!(ev[0]["decision"].as_i64().is_some() && ev[2]["decision"].as_i64().is_some());
        assert_ne!(ev[0]["decision"], ev[2]["decision"]);
        assert_eq!(
            (ev[1]["detail"].as_str(), ev[2]["session"].as_str()),
            (Some("deploy"), Some("a"))
        );
        assert_eq!(doc["grants"][0]["status"], "revoked");
        // The table shows the same.
        let (out, _, _) = env.run(&at(4), &["permit", "list", "--all"]);
        for word in ["denied", "granted", "used", "revoked", &id] {
            assert!(out.contains(word), "{word}: {out}");
        }
        // The live list is empty now.
        let (out, _, _) = env.run(&at(4), &["permit", "list", "--format", "json"]);
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"grants": []})
        );
    }
}

#[test]
fn list_shows_live_grants_with_time_left() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        env.sb.file("docs/a.txt", "x");
        let a = env.grant(
            &at(0),
            &[
                "--capability",
                "file_access",
                "--scope",
                "docs",
                "--for",
                "15m",
            ]
            .map(|s| if s == "docs" { "./docs" } else { s }),
        );
        let b = env.grant(
            &at(0),
            &[
                "--capability",
                "system_execute",
                "--session",
                "s1",
                "--for",
                "1h",
            ],
        );
        let (out, _, code) = env.run(&at(5), &["permit", "list", "--format", "json"]);
        assert_eq!(code, 0);
        let doc: Value = serde_json::from_str(&out).unwrap();
        let grants = doc["grants"].as_array().unwrap();
        assert_eq!(grants.len(), 2);
        let by_id = |id: &str| grants.iter().find(|g| g["id"] == id).unwrap().clone();
        assert_eq!(by_id(&a)["expires_in_ms"], 10 * 60_000);
        assert_eq!(by_id(&b)["session"], "s1");
        assert!(by_id(&a)["scope"][0].as_str().unwrap().ends_with("/docs"));
        let (table, _, _) = env.run(&at(5), &["permit", "list"]);
        for word in [
            "id",
            "capability",
            "scope",
            "session",
            "expires in",
            "status",
            "10m",
            "55m",
            "live",
        ] {
            assert!(table.contains(word), "{word}: {table}");
        }
        // Expired grants leave the live list, and stay in --all.
        let (out, _, _) = env.run(&at(20), &["permit", "list", "--format", "json"]);
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap()["grants"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert_eq!(env.list_all(&at(20))["grants"].as_array().unwrap().len(), 2);
    }
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        let cases: &[(&[&str], &str)] = &[
            (
                &["permit", "grant", "--capability", "teleport"],
                "unknown capability",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "system_execute",
                    "--for",
                    "0m",
                ],
                "zero",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "system_execute",
                    "--for",
                    "-5m",
                ],
                "negative",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "system_execute",
                    "--for",
                    "soon",
                ],
                "cannot read",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "system_execute",
                    "--for",
                    "10",
                ],
                "no unit",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "file_access",
                    "--scope",
                    "/etc",
                ],
                "outside the root",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "file_access",
                    "--scope",
                    "../..",
                ],
                "outside the root",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "file_access",
                    "--scope",
                    "docs",
                ],
                "./docs",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "system_execute",
                    "--scope",
                    "./x",
                ],
                "could never be checked",
            ),
            (
                &[
                    "permit",
                    "grant",
                    "--capability",
                    "file_access",
                    "--scope",
                    "example.com",
                ],
                "no tool with capability file_access has a url argument",
            ),
            (
                &["permit", "revoke", "mg_0123456789abcdef0123456789abcdef"],
                "no grant",
            ),
            (&["permit", "revoke", "mg_nope"], "not a grant id"),
        ];
        for (args, part) in cases {
            let (out, err, code) = env.run(&at(0), args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(out.is_empty(), "{args:?}: {out}");
            assert!(err.contains(part), "{args:?}: {err}");
        }
        // Revoking twice.
        let id = env.grant(&at(0), &["--capability", "system_execute"]);
        assert_eq!(env.run(&at(1), &["permit", "revoke", &id]).2, 0);
        let (_, err, code) = env.run(&at(2), &["permit", "revoke", &id]);
        assert_eq!(code, 2);
        assert!(err.contains("already revoked"), "{err}");
        // Nothing to revoke is 1.
        let (_, err, code) = env.run(&at(3), &["permit", "revoke", "--all"]);
        assert_eq!(code, 1);
        assert!(err.contains("nothing to revoke"), "{err}");
        // Without a subcommand and without a terminal: the equivalent command, exit 2.
        let (out, err, code) = env.run(&at(0), &["permit"]);
        assert_eq!((code, out.as_str()), (2, ""));
        assert!(
            err.contains("terminal")
                && err.contains(
                    "permit grant --capability <system_execute|file_access|browser_control>"
                ),
            "{err}"
        );
    }
}

/// Rows an agent writes into the store itself are no grants: a row forged from nothing, a
/// real grant's row copied under another id or with a later expiry, a revoked row brought back
/// by clearing its revocation. `gate` refuses the calls they would cover, and `permit list`
/// shows each as not a grant; the real grant still works until revoked.
#[test]
fn forged_grant_rows_are_refused() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        let db = env.db.clone().unwrap();
        let t0 = at(0);
        let real = env.grant(&t0, &["--capability", "system_execute", "--for", "10m"]);
        let call = json!({"command": "ls"});
        let (report, code) = env.gate(&at(1), &[], "system_execute", call.clone());
        assert_eq!(code, 0, "{backend:?}: {report}");
        // The agent's forgeries, beside the real row.
        store_execute(
            &db,
            &format!(
                "INSERT INTO grants (id, capability, scope, session, granted_at_ms, expires_at_ms) \
                   VALUES ('mg_00000000000000000000000000000001', 'file_access', '[]', NULL, 0, 99999999999999); \
                 INSERT INTO grants (id, capability, scope, session, granted_at_ms, expires_at_ms, granted_by, reason, mac) \
                   SELECT 'mg_00000000000000000000000000000002', 'browser_control', scope, session, granted_at_ms, 99999999999999, granted_by, reason, mac \
                   FROM grants WHERE id = '{real}';"
            ),
        );
        for (tool, args) in [
            ("file_read", json!({"path": "a.txt"})),
            ("browser_navigate", json!({"url": "https://example.com/"})),
        ] {
            let (report, code) = env.gate(&at(2), &[], tool, args);
            assert_eq!(code, 1, "{backend:?}: {tool}: {report}");
            assert_eq!(report["error"]["category"], "confirmation_required");
            let message = report["error"]["message"].as_str().unwrap();
            assert!(message.contains("no valid seal"), "{backend:?}: {message}");
        }
        // The real grant's expiry pushed back: its seal no longer fits.
        store_execute(
            &db,
            &format!(
                "UPDATE grants SET expires_at_ms = expires_at_ms + 3600000 WHERE id = '{real}'"
            ),
        );
        let (report, code) = env.gate(&at(3), &[], "system_execute", call.clone());
        assert_eq!(code, 1, "{backend:?}: {report}");
        let listed = env.list_all(&at(3));
        let status = |id: &str| {
            listed["grants"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["id"] == id)
                .map(|g| g["status"].as_str().unwrap().to_string())
                .unwrap()
        };
        for id in [
            real.as_str(),
            "mg_00000000000000000000000000000001",
            "mg_00000000000000000000000000000002",
        ] {
            assert_eq!(
                status(id),
                "not a grant (no valid MAC)",
                "{backend:?}: {id}"
            );
        }
        // A new grant, revoked, then its revocation cleared: still revoked in effect.
        let second = env.grant(&at(4), &["--capability", "system_execute", "--for", "10m"]);
        let (_, _, code) = env.run(&at(5), &["permit", "revoke", &second]);
        assert_eq!(code, 0);
        store_execute(
            &db,
            &format!("UPDATE grants SET revoked_at_ms = NULL WHERE id = '{second}'"),
        );
        let (report, code) = env.gate(&at(6), &[], "system_execute", call.clone());
        assert_eq!(code, 1, "{backend:?}: {report}");
        assert_eq!(
            status_of(&env.list_all(&at(6)), &second),
            "not a grant (no valid MAC)"
        );
    }
}

fn status_of(listed: &Value, id: &str) -> String {
    listed["grants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id)
        .map(|g| g["status"].as_str().unwrap().to_string())
        .unwrap()
}

#[test]
fn revoke_all_counts_only_live_grants() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        // Before any store: nothing to revoke, and no store made by asking. A PostgreSQL
        // database exists before metagate sets up its tables: none of its grants is live.
        let (_, err, code) = env.run(&at(0), &["permit", "revoke", "--all"]);
        assert_eq!(code, 1, "{err}");
        let said = match backend {
            Backend::Sqlite => "nothing to revoke: there is no telemetry store",
            Backend::Postgres => "nothing to revoke: no grant is live",
        };
        assert!(err.contains(said), "{err}");
        let store = env.db.as_deref().unwrap();
        match backend {
            Backend::Sqlite => assert!(store_is_untouched(store), "{store}"),
            // Every command sets up its tables in an empty database (docs/postgres.md).
            Backend::Postgres => assert_eq!(store_count(store, "grants"), 0),
        }
        env.grant(&at(0), &["--capability", "system_execute", "--for", "1m"]);
        env.grant(&at(0), &["--capability", "system_execute", "--for", "1h"]);
        env.grant(&at(0), &["--capability", "file_access", "--for", "1h"]);
        let (out, err, code) = env.run(&at(10), &["permit", "revoke", "--all"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("revoked 2 grants (1 expired grant marked revoked too"),
            "{out}"
        );
        // The expired one is revoked too (so that it stays over if the clock moves back).
        let statuses: Vec<String> = env.list_all(&at(10))["grants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["status"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(statuses, ["revoked", "revoked", "revoked"]);
    }
}

/// `revoke --all` ends grants already expired at its clock, as a single `revoke` does: were
/// the clock to move back, they would come alive again.
#[test]
fn revoke_all_ends_expired_grants_for_good() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        env.grant(&at(0), &["--capability", "system_execute", "--for", "5m"]);
        let ls = json!({"command": "ls"});
        assert_eq!(env.gate(&at(1), &[], "system_execute", ls.clone()).1, 0);
        let (out, err, code) = env.run(&at(60), &["permit", "revoke", "--all"]);
        assert_eq!((code, out.as_str()), (1, ""), "{err}");
        assert!(
            err.contains("nothing to revoke: no grant is live (1 expired grant marked revoked too"),
            "{err}"
        );
        // The clock moves back into the grant's five minutes: it stays over.
        let (r, code) = env.gate(&at(1), &[], "system_execute", ls);
        assert_needs_grant(
            &r,
            code,
            "an expired grant revoked by --all, the clock moved back",
        );
        assert!(
            r["error"]["message"].as_str().unwrap().contains("revoked"),
            "{r}"
        );
        let events = env.list_all(&at(60))["events"].clone();
        assert!(
            events
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["event"] == "revoked"),
            "{events}"
        );
        // Nothing left to revoke at all.
        let (_, err, code) = env.run(&at(61), &["permit", "revoke", "--all"]);
        assert_eq!(code, 1);
        assert!(err.ends_with("no grant is live\n"), "{err}");
    }
}

/// A grant dated later than now (the clock moved back) is not live, but it would come alive:
/// `list` shows it and `revoke --all` ends it for good.
#[test]
fn revoke_all_ends_grants_dated_later_too() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        env.grant(&at(60), &["--capability", "system_execute", "--for", "15m"]);
        let (out, err, code) = env.run(&at(0), &["permit", "list"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("system_execute"), "{out}");
        let (out, err, code) = env.run(&at(0), &["permit", "revoke", "--all"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("revoked 1 grant"), "{out}");
        let (r, code) = env.gate(&at(65), &[], "system_execute", json!({"command": "ls"}));
        assert_needs_grant(&r, code, "a revoked grant once the clock caught up");
    }
}

/// A folder whose name holds glob characters is a folder, not a pattern.
#[test]
fn a_folder_named_like_a_glob_is_still_a_folder() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        for f in ["rep[1]/ok.txt", "rep1/other.txt"] {
            env.sb.file(f, "x");
        }
        env.grant(
            &at(0),
            &["--capability", "file_access", "--scope", "./rep[1]"],
        );
        let read = |p: &str| env.gate(&at(1), &[], "file_read", json!({"path": p}));
        for inside in ["rep[1]", "rep[1]/ok.txt"] {
            let (r, code) = read(inside);
            assert_eq!(code, 0, "{inside}: {r}");
        }
        for outside in ["rep1", "rep1/other.txt"] {
            let (r, code) = read(outside);
            assert_needs_grant(&r, code, outside);
        }
    }
}

/// The suggested command for a file in such a folder grants that file: its `--scope` is
/// spelled `path:…`, which `--scope` never reads as a pattern (`rep[1]` would match `rep1`).
#[test]
fn the_suggested_scope_for_a_glob_named_folder_is_literal() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        for f in ["rep[1]/keep.txt", "rep1/new.txt"] {
            env.sb.file(f, "x");
        }
        let call = json!({"path": "rep[1]/new.txt"});
        let (r, code) = env.gate(&at(0), &[], "file_read", call.clone());
        assert_needs_grant(&r, code, "no grant");
        let command = r["operator_command"].as_str().unwrap();
        let quoted = command
            .split(" --scope ")
            .nth(1)
            .and_then(|rest| rest.strip_prefix('\''))
            .and_then(|rest| rest.split('\'').next())
            .unwrap_or_else(|| panic!("no quoted --scope in {command}"));
        assert!(
            quoted.starts_with("path:") && quoted.ends_with("rep[1]/new.txt"),
            "{command}"
        );
        env.grant(&at(0), &["--capability", "file_access", "--scope", quoted]);
        let (r, code) = env.gate(&at(1), &[], "file_read", call);
        assert_eq!(code, 0, "the suggested grant did not cover its call: {r}");
        let (r, code) = env.gate(&at(1), &[], "file_read", json!({"path": "rep1/new.txt"}));
        assert_needs_grant(&r, code, "rep1/new.txt");
    }
}

/// Without telemetry, or with a store that cannot be used, the gate cannot see grants: that is
/// the operator's set-up to fix (exit 2, a message on stderr), never a refusal shown to the
/// model, whatever `on_internal_error` says.
#[test]
fn grants_without_a_usable_store_are_a_set_up_fault() {
    // SQLite-only: the unusable stores are a folder and a file that is not SQLite
    // (fleet.rs has the unreachable PostgreSQL one).
    let env = Env::with(&format!("{POLICY}\n[gate]\non_internal_error = \"pass\"\n"));
    env.grant(&at(0), &["--capability", "system_execute"]);
    std::fs::create_dir_all(env.sb.path().join("a-folder.db")).unwrap();
    env.sb
        .file("garbage.db", "this is not an SQLite file, not at all");
    for (flags, says) in [
        (vec!["--no-telemetry"], "permit.require"),
        (vec!["--db", "a-folder.db"], "is a folder"),
        (vec!["--db", "garbage.db"], "not an SQLite database"),
    ] {
        let out = env
            .sb
            .cmd()
            .args(["--policy", &env.policy, "--now", &at(1), "gate", "--quiet"])
            .args(&flags)
            .write_stdin(
                json!({"name": "system_execute", "arguments": {"command": "ls"}}).to_string(),
            )
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(out.stdout.is_empty(), "{flags:?}");
        assert!(err.contains(says), "{flags:?}: {err}");
    }
}

#[test]
fn the_builtin_policy_needs_no_grants() {
    // SQLite-only: "listing never creates a store" is about the default store file.
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["gate", "--no-telemetry"])
        .write_stdin(r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"ls","session":0,"reset":false,"grant":"x"}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (_, err, code) = {
        let o = sb.cmd().args(["permit"]).output().unwrap();
        (
            o.stdout,
            String::from_utf8(o.stderr).unwrap(),
            o.status.code().unwrap(),
        )
    };
    assert_eq!(code, 2);
    assert!(err.contains("requires no grants"), "{err}");
    // Listing never creates a store.
    let o = sb.cmd().args(["permit", "list"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        String::from_utf8(o.stdout)
            .unwrap()
            .contains("no live grants")
    );
    assert!(!sb.db().exists());
}

#[test]
fn the_example_policy_requires_seed_004s_capabilities() {
    let sb = Sandbox::new();
    let policy = fixture_path("policies/sirthaddeus.toml")
        .display()
        .to_string();
    let out = sb
        .cmd()
        .args(["--policy", &policy, "policy", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let shown: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        shown["permit"]["require"],
        toml::Value::Array(
            ["screen_read", "system_execute", "file_access"]
                .map(|c| toml::Value::String(c.into()))
                .to_vec()
        ),
        "{text}"
    );
    // The built-in policy requires none, and says so.
    let out = sb.cmd().args(["policy", "show"]).output().unwrap();
    let shown: toml::Table = toml::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap();
    assert_eq!(shown["permit"]["require"], toml::Value::Array(Vec::new()));
}

#[test]
fn policy_check_names_the_permit_key_and_line() {
    let sb = Sandbox::new();
    let file = sb.file(
        "p.toml",
        "extends = \"none\"\n[tools.t]\ncapability = \"c\"\n\n[permit]\nrequire = [\"c\", \"nope\", \"\"]\n",
    );
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 2);
    assert!(
        err.contains("p.toml:6:") && err.contains("permit.require"),
        "{err}"
    );
    assert!(
        err.contains("\"nope\" is not a capability") && err.contains("empty"),
        "{err}"
    );
}

/// Two operators (and more) granting and revoking at once: every grant is stored, every
/// revocation recorded, none lost to a lock.
#[test]
fn concurrent_grants_and_revokes_lose_nothing() {
    for backend in BACKENDS {
        let env = Env::on(backend);
        // Create the store first, so that the racers do not also race the migration.
        env.grant(&at(0), &["--capability", "file_access"]);
        let per = 8;
        let mut children = Vec::new();
        for worker in 0..4 {
            // Each worker grants, then revokes every live grant (its own and the others'), so
            // grants and revocations interleave across processes.
            let script = format!(
                "for i in $(seq {per}); do {bin} --db '{db}' --policy {policy} permit grant --capability system_execute --for 1h --reason w{worker} >/dev/null || exit 9; {bin} --db '{db}' permit revoke --all >/dev/null 2>&1; s=$?; [ $s -le 1 ] || exit 8; done",
                bin = BIN,
                db = env.db.as_deref().unwrap(),
                policy = env.policy,
            );
            let mut sh = std::process::Command::new("sh");
            sh.args(["-c", &script])
                .current_dir(env.sb.path())
                .env_clear();
            for (k, v) in [
                ("HOME", env.sb.path().to_path_buf()),
                ("XDG_STATE_HOME", env.sb.path().join("state")),
            ] {
                sh.env(k, v);
            }
            sh.env("PATH", std::env::var_os("PATH").unwrap_or_default());
            children.push(sh.spawn().unwrap());
        }
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let doc = env.list_all(&at(0));
        let grants = doc["grants"].as_array().unwrap();
        let ours: Vec<&Value> = grants
            .iter()
            .filter(|g| g["capability"] == "system_execute")
            .collect();
        assert_eq!(ours.len(), 4 * per, "every grant is stored");
        let events = doc["events"].as_array().unwrap();
        let count = |kind: &str| events.iter().filter(|e| e["event"] == kind).count();
        assert_eq!(count("granted"), 4 * per + 1);
        let revoked = grants.iter().filter(|g| g["status"] == "revoked").count();
        assert_eq!(
            count("revoked"),
            revoked,
            "one event per revocation, none twice"
        );
        for w in 0..4 {
            let reason = format!("w{w}");
            assert_eq!(
                ours.iter()
                    .filter(|g| g["reason"] == reason.as_str())
                    .count(),
                per
            );
        }
    }
}

/// Whether a program the pseudo-terminal tests drive is there (said when it is not).
fn installed(program: &str, version_flag: &str) -> bool {
    let there = std::process::Command::new(program)
        .arg(version_flag)
        .output()
        .is_ok();
    if !there {
        crate::skips::skip(
            &crate::skips::TERMINAL,
            &format!("{program} is not installed"),
        );
    }
    there
}

/// Ctrl-C at a choice ends `permit` granting nothing (status 1 when the prompt reads it as a
/// cancelled answer, 130 when the signal comes first) and the cursor shown again (the prompt
/// hides it while a choice is made). Through script(1), which gives it a pseudo-terminal.
#[test]
fn ctrl_c_at_a_prompt_leaves_the_cursor_shown() {
    if !installed("script", "--version") {
        return;
    }
    let env = Env::new();
    let inner = format!(
        "HOME={dir} {bin} --policy {policy} --now {now} permit",
        dir = env.sb.path().display(),
        bin = BIN,
        policy = env.policy,
        now = at(0),
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "(sleep 2; printf '\\003'; sleep 1) | script -qec '{inner}' /dev/null"
        ))
        .current_dir(env.sb.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(1 | 130)), "{text:?}");
    let hidden = text
        .rfind("\x1b[?25l")
        .unwrap_or_else(|| panic!("no prompt: {text:?}"));
    assert!(text[hidden..].contains("\x1b[?25h"), "{text:?}");
}

/// The interactive flow at a real pseudo-terminal, through tmux.
#[test]
fn interactive_permit_at_a_real_terminal() {
    if !installed("tmux", "-V") {
        return;
    }
    for backend in BACKENDS {
        let env = Env::on(backend);
        env.sb.file("docs/a.txt", "x");
        let socket = env.sb.path().join("tmux.sock");
        let tmux = |args: &[&str]| {
            std::process::Command::new("tmux")
                .arg("-S")
                .arg(&socket)
                .args(args)
                .output()
                .unwrap()
        };
        let script = env.sb.file(
        "run.sh",
        &format!(
            "#!/bin/sh\ncd {dir}\nHOME={dir} XDG_STATE_HOME={dir}/state {bin} --db '{db}' --policy {policy} --now {now} permit; echo \"exit=$?\"; sleep 30\n",
            dir = env.sb.path().display(),
            bin = BIN,
            db = env.db.as_deref().unwrap(),
            policy = env.policy,
            now = at(0),
        ),
    );
        let screen =
            || String::from_utf8(tmux(&["capture-pane", "-p", "-t", "mg"]).stdout).unwrap();
        let wait_for = |text: &str| {
            for _ in 0..100 {
                if screen().contains(text) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            panic!("the terminal never showed {text:?}:\n{}", screen());
        };
        let out = tmux(&[
            "new-session",
            "-d",
            "-s",
            "mg",
            "-x",
            "160",
            "-y",
            "40",
            "sh",
            script.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let keys = |k: &[&str]| {
            let mut args = vec!["send-keys", "-t", "mg"];
            args.extend(k);
            tmux(&args);
        };
        wait_for("Capability to allow");
        assert!(
            screen().contains("file_access (unlocks file_read)"),
            "{}",
            screen()
        );
        keys(&["Down", "Enter"]); // file_access
        wait_for("Scope");
        keys(&["-l", "./docs"]);
        keys(&["Enter"]);
        wait_for("For how long");
        keys(&["Down", "Enter"]); // 15 minutes
        wait_for("Reason");
        keys(&["-l", "reading docs"]);
        keys(&["Enter"]);
        wait_for("Allow file_access for 15m");
        keys(&["y"]);
        wait_for("exit=");
        let text = screen();
        tmux(&["kill-server"]);
        assert!(text.contains("exit=0"), "{text}");
        assert!(text.contains("granted mg_"), "{text}");
        let doc = env.list_all(&at(1));
        let g = &doc["grants"][0];
        assert_eq!(
            (g["capability"].as_str(), g["reason"].as_str()),
            (Some("file_access"), Some("reading docs"))
        );
        assert_eq!(g["expires_in_ms"], 14 * 60_000);
        assert!(g["scope"][0].as_str().unwrap().ends_with("/docs"), "{g}");
    }
}
