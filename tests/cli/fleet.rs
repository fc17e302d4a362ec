//! The store shared by a fleet: the commands that work on PostgreSQL, run the same way on an
//! SQLite file and on a database of the test PostgreSQL server (`tests/support/postgres.rs`),
//! each test once per backend. Two working folders, each with its own HOME, stand for two
//! hosts writing the same store.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

mod merge;

use crate::common::{
    BACKENDS, Backend, LineStream, Sandbox, fixture, new_store, store_count, store_rows,
};
use crate::postgres_server;

/// The evening of the week the telemetry fixtures record.
const NOW: &str = "2026-11-20T18:00:00Z";

/// One host: a working folder and HOME of its own, with the policy `text`.
struct Host {
    sb: Sandbox,
    policy: String,
}

impl Host {
    fn new(policy: &str) -> Host {
        let sb = Sandbox::new();
        let policy = sb.file("policy.toml", policy).display().to_string();
        Host { sb, policy }
    }

    /// `metagate --policy P --db STORE ARGS…`, not yet run.
    fn command(&self, db: &str, args: &[&str]) -> Command {
        let mut c = self.sb.std_cmd();
        c.args(["--policy", &self.policy, "--db", db]).args(args);
        c
    }

    /// Runs it with `input` on stdin: (stdout, stderr, status).
    fn run(&self, db: &str, args: &[&str], input: &str) -> (String, String, i32) {
        run(self.command(db, args), input)
    }

    /// One call through `gate --report`: (report, status).
    fn gate(&self, db: &str, flags: &[&str], call: &Value) -> (Value, i32) {
        let mut args = vec!["gate", "--quiet", "--report"];
        args.extend(flags);
        let (out, err, code) = self.run(db, &args, &call.to_string());
        let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} / {err}"));
        (report, code)
    }

    /// `permit grant --capability system_execute --for 5m` on `db`, after `flags` (`--now`):
    /// the grant's id.
    fn grant(&self, db: &str, flags: &[&str]) -> String {
        let mut args = flags.to_vec();
        args.extend([
            "permit",
            "grant",
            "--capability",
            "system_execute",
            "--for",
            "5m",
            "--format",
            "json",
        ]);
        let (out, err, code) = self.run(db, &args, "");
        assert_eq!(code, 0, "{err}");
        let grant: Value = serde_json::from_str(&out).unwrap();
        grant["id"].as_str().unwrap().to_string()
    }

    /// `metagate … ARGS` on `db`, which must succeed: its output, as JSON.
    fn json(&self, db: &str, args: &[&str]) -> Value {
        let (out, err, code) = self.run(db, args, "");
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    fn db_info(&self, db: &str) -> Value {
        self.json(db, &["db", "info", "--format", "json"])
    }
}

/// Runs `command` with `input` on stdin: (stdout, stderr, status).
pub(crate) fn run(command: Command, input: &str) -> (String, String, i32) {
    let mut process = LineStream::spawn(command);
    process.write(input);
    let out = process.finish();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap(),
    )
}

const LIMITS: &str = r#"
[limits]
per_caller = { per_minute = 10 }
[tools.t]
"#;

const GRANTS: &str = r#"
extends = "none"
[tools.system_execute]
capability = "system_execute"
[tools.system_execute.args.command]
type = "string"
required = true
kind = "shell"
[permit]
require = ["system_execute"]
[paths]
root = "."
"#;

#[test]
fn gate_record_permit_and_db_info_keep_the_same_rows_on_both_backends() {
    for backend in BACKENDS {
        let host = Host::new("[tools.t]\n");
        let db = new_store(backend, &host.sb);
        let call = |n: u32| json!({"name": "t", "arguments": {"n": n}});
        let (report, code) = host.gate(&db, &["--session", "s1"], &call(0));
        assert_eq!(
            (code, report["verdict"].as_str()),
            (0, Some("pass")),
            "{backend:?}"
        );
        let lines: String = (1..=3).map(|n| format!("{}\n", call(n))).collect();
        let (out, err, code) = host.run(&db, &["gate", "--jsonl", "--quiet"], &lines);
        assert_eq!((code, out.lines().count()), (0, 3), "{backend:?}: {err}");
        let events = concat!(
            r#"{"type":"outcome","session":"s1","tool":"t","status":"ok"}"#,
            "\n",
            r#"{"type":"ask","session":"s1","user":"u","text":"hi"}"#,
            "\n",
            r#"{"type":"correction","session":"s1","tool":"t","note":"n"}"#,
            "\n"
        );
        for strict in [&[][..], &["--strict"][..]] {
            let mut args = vec!["record"];
            args.extend(strict);
            let (_, err, code) = host.run(&db, &args, events);
            assert_eq!(code, 0, "{backend:?}: {err}");
        }
        let info = host.db_info(&db);
        assert_eq!(
            info["schema_version"],
            metagate_store::SCHEMA_VERSION,
            "{backend:?}"
        );
        assert_eq!(
            info["tables"],
            json!({"decisions": 4, "outcomes": 2, "asks": 2, "user_corrections": 2,
                   "grants": 0, "grant_events": 0, "eval_runs": 0, "eval_recommendations": 0}),
            "{backend:?}"
        );
        // Retention: everything is younger than a day.
        let (out, err, code) = host.run(
            &db,
            &["db", "prune", "--before", "1d", "--format", "json"],
            "",
        );
        assert_eq!(code, 0, "{backend:?}: {err}");
        let pruned: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(pruned["rows"]["decisions"], 0, "{backend:?}: {pruned}");
        let (_, err, code) = host.run(&db, &["db", "prune", "--before", "0s"], "");
        assert_eq!(code, 0, "{backend:?}: {err}");
        assert_eq!(host.db_info(&db)["tables"]["outcomes"], 0, "{backend:?}");
    }
}

/// Sixteen processes on two hosts, at the same moment, for one caller limited to 10 a minute:
/// exactly 10 pass, whichever host they run on.
#[test]
fn a_per_caller_limit_holds_across_two_hosts() {
    for backend in BACKENDS {
        let hosts = [Host::new(LIMITS), Host::new(LIMITS)];
        let db = new_store(backend, &hosts[0].sb);
        // The store is set up (tables, limit indexes) before the race, as a fleet's is.
        hosts[0].gate(
            &db,
            &["--caller", "other"],
            &json!({"name": "t", "arguments": {}}),
        );
        let children: Vec<_> = (0..16)
            .map(|i| {
                let call = json!({"name": "t", "arguments": {"n": i}}).to_string();
                let mut c = hosts[i % 2].command(
                    &db,
                    &[
                        "--now",
                        "2026-11-20T10:00:30Z",
                        "gate",
                        "--quiet",
                        "--caller",
                        "agent",
                    ],
                );
                c.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = c.spawn().unwrap();
                std::io::Write::write_all(&mut child.stdin.take().unwrap(), call.as_bytes())
                    .unwrap();
                child
            })
            .collect();
        let mut passed = 0;
        let mut limited = 0;
        for child in children {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => passed += 1,
                Some(1) => {
                    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                    assert_eq!(v["error"]["category"], "rate_limited", "{backend:?}: {v}");
                    limited += 1;
                }
                other => panic!("{backend:?}: status {other:?}: {stderr}"),
            }
        }
        assert_eq!((passed, limited), (10, 6), "{backend:?}");
    }
}

/// A grant made by the operator on one host lets the agent's call through on another, and
/// its revocation there stops the next one.
#[test]
fn a_grant_made_on_one_host_is_honoured_and_revoked_on_the_other() {
    for backend in BACKENDS {
        let (operator, agent) = (Host::new(GRANTS), Host::new(GRANTS));
        let db = new_store(backend, &operator.sb);
        let ls = json!({"name": "system_execute", "arguments": {"command": "ls"}});
        let (r, code) = agent.gate(&db, &[], &ls);
        assert_eq!(code, 1, "{backend:?}: {r}");
        assert_eq!(r["error"]["category"], "confirmation_required");
        let id = operator.grant(&db, &[]);
        if backend == Backend::Postgres {
            // A fleet shares a PostgreSQL store's grant key as it shares the store: each host
            // keeps a copy in its state folder (docs/grants.md, "Sealed rows"). Without it the
            // agent's host sees no grant.
            let (r, code) = agent.gate(&db, &[], &ls);
            assert_eq!(code, 1, "{backend:?}: without the key: {r}");
            let key = |h: &Host| h.sb.path().join("state/metagate/grant.key");
            std::fs::create_dir_all(key(&agent).parent().unwrap()).unwrap();
            std::fs::copy(key(&operator), key(&agent)).unwrap();
        }
        let (r, code) = agent.gate(&db, &[], &ls);
        assert_eq!(
            (code, r["verdict"].as_str()),
            (0, Some("pass")),
            "{backend:?}: {r}"
        );
        let (out, err, code) = agent.run(&db, &["permit", "list", "--format", "json"], "");
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&id), "{backend:?}: {out}");
        let (_, err, code) = operator.run(&db, &["permit", "revoke", &id], "");
        assert_eq!(code, 0, "{backend:?}: {err}");
        let (r, code) = agent.gate(&db, &[], &ls);
        assert_eq!(code, 1, "{backend:?}: {r}");
        assert_eq!(r["error"]["category"], "confirmation_required");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("revoked"),
            "{r}"
        );
        // The audit trail holds the grant, its use, the denials (one more on PostgreSQL:
        // before the key was copied) and the revocation.
        assert_eq!(
            operator.db_info(&db)["tables"]["grant_events"],
            5 + i64::from(backend == Backend::Postgres),
            "{backend:?}"
        );
    }
}

/// A store that cannot be reached is the operator's to fix: exit 2 after the busy timeout,
/// nothing for the model on stdout.
#[test]
fn an_unreachable_postgres_store_is_a_set_up_fault() {
    if !crate::postgres_server::available() {
        return;
    }
    let host = Host::new("[telemetry]\nbusy_timeout_ms = 300\n[tools.t]\n");
    let gone = host.sb.path().join("no-server");
    std::fs::create_dir(&gone).unwrap();
    let db = format!(
        "postgres://postgres@{}/db",
        gone.display().to_string().replace('/', "%2F")
    );
    let started = std::time::Instant::now();
    let (out, err, code) = host.run(&db, &["gate"], r#"{"name":"t","arguments":{}}"#);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("cannot be reached") && err.contains("300 ms"),
        "{err}"
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    for args in [
        &["record"][..],
        &["permit", "list"][..],
        &["db", "info"][..],
    ] {
        let (out, err, code) = host.run(&db, args, "");
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
    }
}

/// `[store] url` names the store when neither `--db` nor `$METAGATE_DB` does; `$METAGATE_DB`
/// takes a URL too.
#[test]
fn the_policy_or_the_environment_may_name_the_postgres_store() {
    if !crate::postgres_server::available() {
        return;
    }
    let url = postgres_server::fresh_database();
    let host = Host::new(&format!("[store]\nurl = \"{url}\"\n[tools.t]\n"));
    let mut c = host.sb.std_cmd();
    c.args(["--policy", &host.policy, "gate", "--quiet"]);
    let (_, err, code) = run(c, r#"{"name":"t","arguments":{}}"#);
    assert_eq!(code, 0, "{err}");
    let other = Host::new("[tools.t]\n");
    let mut c = other.sb.std_cmd();
    c.env("METAGATE_DB", &url)
        .args(["--policy", &other.policy, "db", "info", "--format", "json"]);
    let (out, err, code) = run(c, "");
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["tables"]["decisions"], 1);
    assert!(!host.sb.path().join("state").exists());
    let bad = Host::new("[store]\nurl = \"/var/db/m.db\"\n");
    let mut c = bad.sb.std_cmd();
    c.args(["--policy", &bad.policy, "db", "info"]);
    let (_, err, code) = run(c, "");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("store.url"), "{err}");
}

/// `db copy` moves a store SQLite → PostgreSQL → SQLite with every row and id: the copy
/// counts as the original does and evaluates to the same report; copying again adds nothing.
#[test]
fn db_copy_round_trips_a_store_through_postgres() {
    if !crate::postgres_server::available() {
        return;
    }
    let host = Host::new(GRANTS);
    let original = host.sb.path().join("original.db").display().to_string();
    let back = host.sb.path().join("back.db").display().to_string();
    let pg = postgres_server::fresh_database();
    record_week(&host, &original);
    host.grant(&original, &["--now", NOW]);
    let ls = json!({"name": "system_execute", "arguments": {"command": "ls"}});
    host.gate(&original, &["--now", NOW], &ls);
    let (_, err, code) = host.run(&original, &["--now", NOW, "evaluate", "--since", "1d"], "");
    assert_eq!(code, 0, "{err}");

    let copy = |from: &str, to: &str| -> Value {
        let (out, err, code) = host.run(from, &["db", "copy", from, to, "--format", "json"], "");
        assert_eq!(code, 0, "{from} → {to}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let first = copy(&original, &pg);
    assert!(
        first["tables"]["decisions"]["added"].as_u64().unwrap() > 0,
        "{first}"
    );
    assert_eq!(first["tables"]["eval_runs"]["added"], 1, "{first}");
    // Again: nothing new.
    let again = copy(&original, &pg);
    let added: u64 = again["tables"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["added"].as_u64().unwrap())
        .sum();
    assert_eq!(added, 0, "{again}");
    copy(&pg, &back);

    let counts = |db: &str| {
        let info = host.db_info(db);
        (
            info["schema_version"].clone(),
            info["tables"].clone(),
            info["first"].clone(),
            info["last"].clone(),
        )
    };
    assert_eq!(counts(&original), counts(&pg));
    assert_eq!(counts(&original), counts(&back));
    let report = |db: &str| -> Value {
        let (out, err, code) = host.run(
            db,
            &[
                "--now",
                NOW,
                "evaluate",
                "--since",
                "1d",
                "--dry-run",
                "--format",
                "json",
            ],
            "",
        );
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    // The only difference allowed: which store was read.
    let (a, b, c) = (
        without_places(report(&original)),
        without_places(report(&back)),
        without_places(report(&pg)),
    );
    assert_eq!(a, b);
    assert_eq!(a, c, "evaluate on PostgreSQL itself");
    stored_runs_read_the_same(&host, &original, &pg, NOW);
    // The copy in PostgreSQL takes new rows after the copied ones.
    host.gate(&pg, &["--now", NOW], &ls);

    // Another store's history under the same ids is refused, naming the table.
    let other = host.sb.path().join("other.db").display().to_string();
    host.gate(
        &other,
        &[],
        &json!({"name": "system_execute", "arguments": {"command": "pwd"}}),
    );
    let (_, err, code) = host.run(&other, &["db", "copy", &other, &pg], "");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("another row of decisions"), "{err}");
}

/// An `evaluate --format json` report without what names the stores read and written.
fn without_places(mut report: Value) -> Value {
    let doc = report.as_object_mut().unwrap();
    doc.remove("shards");
    doc.remove("stored_in");
    report
}

/// `evaluate` stores its run (with the re-asks it found) alike in SQLite and in PostgreSQL,
/// reads shards of both kinds together, and compares a second run with the first alike.
#[test]
fn evaluate_runs_alike_on_both_backends_and_over_mixed_shards() {
    // PostgreSQL is the point here: without it (recorded as a skip) there is nothing to compare.
    if !postgres_server::available() {
        return;
    }
    const LATER: &str = "2026-11-21T18:00:00Z";
    let host = Host::new(GRANTS);
    let mut stores = Vec::new();
    for backend in BACKENDS {
        let db = new_store(backend, &host.sb);
        record_week(&host, &db);
        stores.push(db);
    }
    let evaluate = |dbs: &[&str], now: &str, since: &str| -> Value {
        let mut c = host.sb.std_cmd();
        c.args(["--policy", &host.policy]);
        for db in dbs {
            c.args(["--db", db]);
        }
        c.args([
            "--now", now, "evaluate", "--since", since, "--format", "json", "--all",
        ]);
        let (out, err, code) = run(c, "");
        assert_eq!(code, 0, "{dbs:?}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let (sqlite, pg) = (stores[0].as_str(), stores[1].as_str());
    let first = without_places(evaluate(&[sqlite], NOW, "1d"));
    assert_eq!(first, without_places(evaluate(&[pg], NOW, "1d")));
    assert!(first["run"].is_i64(), "{first}");
    assert_eq!(
        host.db_info(sqlite)["tables"],
        host.db_info(pg)["tables"],
        "the same rows stored, re-asks among them"
    );
    // A second run over another window is compared with the first alike.
    let second = without_places(evaluate(&[sqlite], LATER, "2d"));
    assert_eq!(second, without_places(evaluate(&[pg], LATER, "2d")));
    assert!(
        second["since_last_run"]["previous_run"].is_object(),
        "{second}"
    );
    let health = |db: &str| host.json(db, &["--now", LATER, "tools", "health", "--format", "json"]);
    assert_eq!(health(sqlite), health(pg));
    // Two shards of two kinds: each one's events counted once, whichever comes first.
    let mixed = evaluate(&[pg, sqlite], LATER, "2d");
    let other = evaluate(&[sqlite, pg], LATER, "2d");
    assert_eq!(
        mixed["events"],
        2 * second["events"].as_u64().unwrap(),
        "{mixed}"
    );
    assert_eq!(mixed["tools"], other["tools"]);
    assert_eq!(mixed["stored_in"], mixed["shards"][0], "kept in the first");
    // One store given twice is refused.
    let mut c = host.sb.std_cmd();
    c.args(["--policy", &host.policy, "--db", pg, "--db", pg, "evaluate"]);
    let (out, err, code) = run(c, "");
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("are the same store"), "{err}");
}

/// A synthetic store (every kind of session: boundary crossings, useless answers, re-asks,
/// argument names models get wrong) evaluates alike as a file and, copied, in PostgreSQL:
/// the same report, the same rows stored (the re-asks found among them), the same health.
#[test]
fn a_synthetic_store_evaluates_alike_in_postgres() {
    if !crate::postgres_server::available() {
        return;
    }
    use metagate_store::synth::{self, Config, Mix};
    let host = Host::new("[tools.t]\n");
    let sqlite = host.sb.path().join("synth.db").display().to_string();
    let mut store = metagate_store::Store::open(std::path::Path::new(&sqlite)).unwrap();
    let config = Config {
        events: 5_000,
        end_ms: metagate_core::events::parse_time(NOW).unwrap(),
        span_ms: 86_400_000,
        seed: 3,
        mix: Mix::default(),
    };
    synth::generate(&mut store, &config, &mut |_| {}).unwrap();
    drop(store);
    let pg = postgres_server::fresh_database();
    let (_, err, code) = host.run(&sqlite, &["db", "copy", &sqlite, &pg], "");
    assert_eq!(code, 0, "{err}");
    let evaluate = |db: &str| -> Value {
        let args = [
            "--now", NOW, "evaluate", "--since", "2d", "--format", "json", "--all",
        ];
        without_places(host.json(db, &args))
    };
    let report = evaluate(&sqlite);
    assert!(report["events"].as_u64().unwrap() > 4_900, "{report}");
    let kinds: Vec<&str> = report["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"learn_alias") && kinds.contains(&"split_boundary"),
        "{kinds:?}"
    );
    assert_eq!(report, evaluate(&pg));
    assert_eq!(host.db_info(&sqlite)["tables"], host.db_info(&pg)["tables"]);
    let health = |db: &str| host.json(db, &["--now", NOW, "tools", "health", "--format", "json"]);
    assert_eq!(health(&sqlite), health(&pg));
}

/// What reads the stored runs (`tools health`, `evaluate show`) says the same of a store and
/// of its copy, and a person's status set on each (`--reject`, `--accept`) reads the same.
fn stored_runs_read_the_same(host: &Host, sqlite: &str, pg: &str, run_at: &str) {
    // Rows recorded after the run, which `tools health` counts live.
    let now = "2026-11-20T19:00:00Z";
    let later = r#"{"type":"outcome","ts":"2026-11-20T18:30:00Z","session":"s9","tool":"web_fetcher","method":"fetch_url","status":"error","error_type":"wrong_tool_boundary","metadata":{"boundary_axes":["transport","extraction"]}}
{"type":"outcome","ts":"2026-11-20T18:30:01Z","session":"s9","tool":"calculator","status":"ok"}
{"type":"correction","ts":"2026-11-20T18:31:00Z","session":"s9","tool":"web_fetcher","method":"fetch_url","note":"the list is a menu"}
"#;
    let ls = json!({"name": "system_execute", "arguments": {"command": "ls"}});
    for db in [sqlite, pg] {
        let (_, err, code) = host.run(db, &["--now", run_at, "record"], later);
        assert_eq!(code, 0, "{err}");
        host.gate(db, &["--now", "2026-11-20T18:40:00Z"], &ls);
    }
    let json = |db: &str, args: &[&str]| -> Value {
        let mut all = vec!["--now", now];
        all.extend(args);
        let (out, err, code) = host.run(db, &all, "");
        assert_eq!(code, 0, "{args:?} on {db}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let same = |args: &[&str]| {
        let (a, b) = (json(sqlite, args), json(pg, args));
        assert_eq!(a, b, "{args:?}");
        a
    };
    let health = same(&["tools", "health", "--format", "json"]);
    assert!(!health.as_object().unwrap().is_empty(), "{health}");
    let listed = json(
        sqlite,
        &[
            "evaluate",
            "--since",
            "1d",
            "--dry-run",
            "--format",
            "json",
            "--all",
        ],
    );
    let ids: Vec<String> = listed["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!ids.is_empty(), "{listed}");
    for id in &ids {
        same(&["evaluate", "show", id, "--format", "json"]);
    }
    let rejected = same(&["evaluate", "--reject", &ids[0], "--format", "json"]);
    assert_eq!(rejected["status"], "rejected", "{rejected}");
    same(&["evaluate", "show", &ids[0], "--format", "json"]);
    // `<known_tools>` leaves the rejected recommendation out alike.
    let known_tools = |db: &str| {
        let (out, err, code) = host.run(
            db,
            &["--now", now, "tools", "health", "--format", "known-tools"],
            "",
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    assert_eq!(known_tools(sqlite), known_tools(pg));
    let accepted = same(&["evaluate", "--accept", &ids[0], "--format", "json"]);
    assert_eq!(accepted["previous"], "rejected", "{accepted}");
    // An unknown id is refused alike (exit 1, nothing on stdout).
    for db in [sqlite, pg] {
        let (out, err, code) = host.run(db, &["evaluate", "show", "r_none"], "");
        assert_eq!((code, out.as_str()), (1, ""), "{err}");
    }
}

/// The decisions lock held past the busy timeout (another host stuck mid-group): the call is
/// not let through unrecorded. The store was usable at start, so this is a fault of the call,
/// answered as `on_internal_error` says (fail closed by default), the reason on stderr only.
#[test]
fn a_decisions_lock_held_too_long_fails_the_call_closed() {
    if !crate::postgres_server::available() {
        return;
    }
    let host = Host::new(
        "[telemetry]\nbusy_timeout_ms = 300\n[limits]\nper_caller = { per_minute = 10 }\n[tools.t]\n",
    );
    let db = postgres_server::fresh_database();
    let call = json!({"name": "t", "arguments": {}});
    assert_eq!(host.gate(&db, &["--caller", "a"], &call).1, 0);
    let mut holder = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    holder
        .execute("SELECT pg_advisory_lock($1)", &[&0x6d67_0001_i64])
        .unwrap();
    let (out, err, code) = host.run(&db, &["gate", "--caller", "a"], &call.to_string());
    assert_eq!(code, 1, "{out} {err}");
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["error"]["category"], "server_error", "{answer}");
    assert!(!out.contains("postgres"), "{out}");
    assert!(err.contains("decisions lock"), "{err}");
    holder
        .execute("SELECT pg_advisory_unlock($1)", &[&0x6d67_0001_i64])
        .unwrap();
    assert_eq!(host.gate(&db, &["--caller", "a"], &call).1, 0);
    // The refusal itself was recorded (after the lock was given up), as every decision is.
    assert_eq!(host.db_info(&db)["tables"]["decisions"], 3);
}

/// A session is the agent's to name, at any length: an outcome, an ask and a decision under a
/// 100,000-character session are stored on both stores (PostgreSQL's btree indexes once
/// refused a session over about 2.7 kB).
#[test]
fn a_long_session_is_stored_on_both_stores() {
    // Letters that do not compress (PostgreSQL compresses an index entry before it weighs it).
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let session: String = (0..100_000)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[(state >> 33) as usize % 36])
        })
        .collect();
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let events = sb.file(
            "long.jsonl",
            &format!(
                "{{\"type\":\"outcome\",\"session\":\"{session}\",\"tool\":\"calculator\",\"status\":\"ok\"}}\n\
                 {{\"type\":\"ask\",\"session\":\"{session}\",\"text\":\"add these up\"}}\n"
            ),
        );
        let out = sb
            .cmd()
            .args(["--db", &db, "record"])
            .arg(&events)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{backend:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = sb
            .cmd()
            .args(["--db", &db, "gate", "--quiet", "--session", &session])
            .write_stdin(fixture("calls/runtime-bash.json"))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{backend:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(store_count(&db, "outcomes"), 1, "{backend:?}");
        assert_eq!(store_count(&db, "asks"), 1, "{backend:?}");
        assert_eq!(store_count(&db, "decisions"), 1, "{backend:?}");
    }
}

/// PostgreSQL's text cannot hold U+0000, SQLite's can: an outcome, an ask and a correction
/// with a NUL in their text are recorded on both stores (PostgreSQL once refused the whole
/// `record`, exit 2), PostgreSQL holding U+FFFD where the NUL was.
#[test]
fn text_holding_a_nul_is_recorded_on_both_stores() {
    let events = concat!(
        r#"{"type":"outcome","session":"s\u0000","tool":"t\u0000","status":"error","error_type":"e\u0000","error_message":"bad\u0000byte"}"#,
        "\n",
        r#"{"type":"ask","session":"s\u0000","user":"u\u0000","text":"hi\u0000there"}"#,
        "\n",
        r#"{"type":"correction","session":"s\u0000","tool":"t\u0000","note":"n\u0000"}"#,
        "\n"
    );
    for backend in BACKENDS {
        let host = Host::new("[tools.t]\n");
        let db = new_store(backend, &host.sb);
        for strict in [&[][..], &["--strict"][..]] {
            let mut args = vec!["record"];
            args.extend(strict);
            let (_, err, code) = host.run(&db, &args, events);
            assert_eq!(code, 0, "{backend:?} {strict:?}: {err}");
        }
        let nul = match backend {
            Backend::Sqlite => "\0",
            Backend::Postgres => "\u{fffd}",
        };
        for (sql, sent) in [
            (
                "SELECT session, tool, error_type, error_message FROM outcomes",
                &["s\0", "t\0", "e\0", "bad\0byte"][..],
            ),
            (
                "SELECT session, \"user\", text FROM asks",
                &["s\0", "u\0", "hi\0there"],
            ),
            (
                "SELECT session, tool, note FROM user_corrections",
                &["s\0", "t\0", "n\0"],
            ),
        ] {
            let stored: Vec<Value> = sent.iter().map(|t| json!(t.replace('\0', nul))).collect();
            assert_eq!(store_rows(&db, sql)[0], stored, "{backend:?}: {sql}");
        }
        for table in ["outcomes", "asks", "user_corrections"] {
            assert_eq!(store_count(&db, table), 2, "{backend:?}: {table}");
        }
    }
}

/// A tool name holding a NUL is a control character in a name (issue 39): refused on both
/// stores alike, even when the policy declares it, and the refusal is stored (on PostgreSQL
/// with the NUL as U+FFFD).
#[test]
fn a_tool_named_with_a_nul_is_refused_and_stored_on_both_stores() {
    for backend in BACKENDS {
        let host = Host::new("[tools.\"a\\u0000b\"]\nlimits = { per_minute = 1 }\n");
        let db = new_store(backend, &host.sb);
        let call = json!({"name": "a\u{0}b", "arguments": {}});
        let (report, code) = host.gate(&db, &["--now", NOW], &call);
        assert_eq!(code, 1, "{backend:?}: {report}");
        assert_eq!(
            report["error"]["details"]["rule"], "gate.tool_name",
            "{backend:?}: {report}"
        );
        assert_eq!(store_count(&db, "decisions"), 1, "{backend:?}");
    }
}

/// Records the four telemetry fixtures of a week (a boundary, a movie list, arithmetic, a late
/// re-ask) into `store`.
fn record_week(host: &Host, store: &str) {
    for fixture in ["boundary", "movie-list", "arithmetic", "reask-late"] {
        let path = crate::common::fixture_path(&format!("telemetry/{fixture}.jsonl"));
        let (_, err, code) = host.run(
            store,
            &["--now", NOW, "record", &path.display().to_string()],
            "",
        );
        assert_eq!(code, 0, "{fixture}: {err}");
    }
}

/// A stream whose connection is lost (the server restarted, a failover, a proxy's idle
/// timeout) opens a new one: the group in flight when it finds out fails closed, and the calls
/// after it are decided and stored again, without restarting the stream.
#[test]
fn a_stream_opens_a_new_connection_when_its_connection_is_lost() {
    if !crate::postgres_server::available() {
        return;
    }
    let host = Host::new("[tools.t]\n");
    let db = postgres_server::fresh_database();
    let mut stream =
        LineStream::spawn(host.command(&db, &["gate", "--jsonl", "--quiet", "--report"]));
    let mut ask = |n: u32| stream.ask(&json!({"name": "t", "arguments": {"n": n}}).to_string());
    let verdict = |report: &Value| -> String {
        match report["verdict"].as_str() {
            Some("rejected") => report["error"]["category"].as_str().unwrap().to_string(),
            other => other.unwrap().to_string(),
        }
    };
    assert_eq!(verdict(&ask(0)), "pass");
    // Every other connection to the database, the stream's, ended by the server.
    let mut admin = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    let ended = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap();
    assert_eq!(ended.len(), 1, "the stream's connection");
    // The first call after may find out (fail closed); none after it may.
    let first = verdict(&ask(1));
    assert!(
        ["pass", "server_error"].contains(&first.as_str()),
        "{first}"
    );
    for n in 2..5 {
        assert_eq!(verdict(&ask(n)), "pass", "call {n}");
    }
    let out = stream.finish();
    assert!(out.status.success() || first == "server_error", "{out:?}");
    let stored = if first == "pass" { 5 } else { 4 };
    assert_eq!(store_count(&db, "decisions"), stored);
}

/// Text no dictionary compresses: a btree index entry of PostgreSQL holds about 2,700 bytes
/// of it at most.
fn incompressible(len: usize, seed: u64) -> String {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            char::from(
                b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                    [(state >> 33) as usize % 62],
            )
        })
        .collect()
}

/// A model may name a tool (or a method) of any length. On PostgreSQL such a name is kept
/// bounded where it is indexed, so it neither fails its own decision nor the other calls of
/// its group, and `record` and `evaluate` take it too.
#[test]
fn names_of_any_length_are_stored_on_both_stores() {
    // PostgreSQL is the point here: without it (recorded as a skip) there is nothing to compare.
    if !postgres_server::available() {
        return;
    }
    for backend in BACKENDS {
        let host = Host::new("[tools.t]\n");
        let db = new_store(backend, &host.sb);
        let (tool, other_tool) = (incompressible(10_000, 1), incompressible(10_000, 2));
        let method = incompressible(5_000, 3);
        let lines = [
            json!({"name": tool, "arguments": {}}),
            json!({"name": other_tool, "arguments": {}}),
            json!({"name": "skills_tool", "arguments": {"method": method}}),
            json!({"name": "t", "arguments": {}}),
        ]
        .map(|l| format!("{l}\n"))
        .concat();
        let (out, err, code) = host.run(
            &db,
            &["--now", NOW, "gate", "--jsonl", "--quiet", "--report"],
            &lines,
        );
        assert_eq!(code, 0, "{backend:?}: {err}");
        let verdicts: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["verdict"].clone())
            .collect();
        assert_eq!(verdicts.last(), Some(&json!("pass")), "{backend:?}: {out}");
        assert!(
            !out.contains("server_error"),
            "{backend:?}: no call failed for want of a record: {out}"
        );
        let stored = store_rows(&db, "SELECT tool FROM decisions ORDER BY id");
        assert_eq!(stored.len(), 4, "{backend:?}");
        let names: Vec<&str> = stored.iter().map(|r| r[0].as_str().unwrap()).collect();
        assert_ne!(names[0], names[1], "{backend:?}: two long names stay two");
        if backend == Backend::Postgres {
            assert!(names[0].len() <= 1024 && names[0].starts_with(&tool[..900]));
        } else {
            assert_eq!(names[0], tool);
        }
        let outcome = json!({"type": "outcome", "session": "s", "tool": tool, "method": method,
            "status": "error", "error_type": incompressible(4_000, 4)});
        let (_, err, code) = host.run(&db, &["--now", NOW, "record"], &format!("{outcome}\n"));
        assert_eq!(code, 0, "{backend:?}: {err}");
        let (_, err, code) = host.run(&db, &["--now", NOW, "evaluate", "--since", "1d"], "");
        assert_eq!(code, 0, "{backend:?}: {err}");
        let (_, err, code) = host.run(&db, &["--now", NOW, "tools", "health"], "");
        assert_eq!(code, 0, "{backend:?}: {err}");
        if backend == Backend::Sqlite {
            // Copied into PostgreSQL, bounded there; copied again, found there as it is.
            let pg = postgres_server::fresh_database();
            for expected in [4, 0] {
                let args = ["db", "copy", db.as_str(), pg.as_str(), "--format", "json"];
                let (out, err, code) = host.run(&db, &args, "");
                assert_eq!(code, 0, "{err}");
                let report: Value = serde_json::from_str(&out).unwrap();
                assert_eq!(report["tables"]["decisions"]["added"], expected, "{report}");
            }
        }
    }
}

/// A PostgreSQL store whose columns are not what this metagate wrote (changed by hand, or by
/// another program) is an error naming the store, exit 2, never a panic: every row is read
/// through a reader that returns the mismatch.
#[test]
fn a_postgres_column_of_another_type_is_an_error_not_a_panic() {
    // PostgreSQL is the point here: without it (recorded as a skip) there is nothing to compare.
    if !postgres_server::available() {
        return;
    }
    let host = Host::new(GRANTS);
    let db = new_store(Backend::Postgres, &host.sb);
    host.grant(&db, &[]);
    let mut admin = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "ALTER TABLE grants ALTER COLUMN revoked_at_ms TYPE text USING revoked_at_ms::text; \
             ALTER TABLE grant_events ALTER COLUMN ts_ms TYPE text USING ts_ms::text",
        )
        .unwrap();
    for args in [
        &["permit", "list", "--format", "json"][..],
        &["permit", "list", "--all", "--format", "json"][..],
    ] {
        let (out, err, code) = host.run(&db, args, "");
        assert_eq!(code, 2, "{args:?}: {out} / {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains("PostgreSQL store"), "{args:?}: {err}");
    }
}
