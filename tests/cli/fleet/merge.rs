//! `db copy --merge`: a host's history joins a fleet store that has its own, on either backend,
//! and no row arrives twice however it travels.

use serde_json::{Value, json};

use super::{GRANTS, Host, NOW, record_week};
use crate::common::{BACKENDS, new_store, store_rows};

/// The tables whose rows are history, merged under new ids (or, for grants, as they are).
const HISTORY: [&str; 6] = [
    "decisions",
    "outcomes",
    "asks",
    "user_corrections",
    "grants",
    "grant_events",
];

/// `db copy [--merge] FROM TO --format json` from `host`: (report, stderr, status).
fn copy(host: &Host, from: &str, to: &str, merge: bool) -> (Value, String, i32) {
    let mut args = vec!["db", "copy", from, to, "--format", "json"];
    if merge {
        args.push("--merge");
    }
    let (out, err, code) = host.run(from, &args, "");
    let report = serde_json::from_str(&out).unwrap_or(Value::Null);
    (report, err, code)
}

fn added(report: &Value, table: &str) -> i64 {
    report["tables"][table]["added"].as_i64().unwrap()
}

fn counts(host: &Host, db: &str) -> Value {
    host.db_info(db)["tables"].clone()
}

fn count(counts: &Value, table: &str) -> i64 {
    counts[table].as_i64().unwrap()
}

/// What `evaluate` makes of the week on `db`, tool by tool.
fn tools(host: &Host, db: &str) -> Value {
    let args = [
        "--now",
        NOW,
        "evaluate",
        "--since",
        "7d",
        "--dry-run",
        "--format",
        "json",
    ];
    let (out, err, code) = host.run(db, &args, "");
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<Value>(&out).unwrap()["tools"].clone()
}

/// A host's week: the telemetry fixtures, a grant used by a call, and an evaluate run (so the
/// host has re-ask corrections and run rows of its own, which a merge leaves out).
fn host_week(host: &Host, db: &str) -> String {
    record_week(host, db);
    let id = host.grant(db, &["--now", NOW]);
    let ls = json!({"name": "system_execute", "arguments": {"command": "ls"}});
    let (r, code) = host.gate(db, &["--now", NOW], &ls);
    assert_eq!(code, 0, "{r}");
    let (_, err, code) = host.run(db, &["--now", NOW, "evaluate", "--since", "7d"], "");
    assert_eq!(code, 0, "{err}");
    id
}

/// The decisions a grant's events name, by what they hold rather than their ids.
fn granted_calls(db: &str, grant: &str) -> Vec<Vec<Value>> {
    store_rows(
        db,
        &format!(
            "SELECT e.event, d.ts_ms, d.tool, d.args FROM grant_events e \
             JOIN decisions d ON d.id = e.decision_id WHERE e.grant_id = '{grant}' \
             ORDER BY d.ts_ms, e.event"
        ),
    )
}

#[test]
fn a_hosts_history_joins_a_live_fleet_store_once() {
    for backend in BACKENDS {
        let (host, other) = (Host::new(GRANTS), Host::new(GRANTS));
        let own = host.sb.path().join("host.db").display().to_string();
        let grant = host_week(&host, &own);
        // The fleet's own history: another host's refused call and an outcome.
        let fleet = new_store(backend, &other.sb);
        let pwd = json!({"name": "system_execute", "arguments": {"command": "pwd"}});
        let (r, code) = other.gate(&fleet, &["--now", NOW, "--session", "f1"], &pwd);
        assert_eq!(code, 1, "{backend:?}: {r}");
        let outcome = r#"{"type":"outcome","session":"f1","tool":"fleet_tool","status":"ok"}"#;
        let (_, err, code) = other.run(&fleet, &["--now", NOW, "record"], outcome);
        assert_eq!(code, 0, "{backend:?}: {err}");
        let (host_had, fleet_had) = (counts(&host, &own), counts(&other, &fleet));
        let explicit = store_rows(
            &own,
            "SELECT count(*) FROM user_corrections WHERE reask_ask_id IS NULL",
        )[0][0]
            .as_i64()
            .unwrap();
        assert!(
            count(&host_had, "user_corrections") > explicit,
            "the host's run found re-asks"
        );

        // A plain copy refuses a store with a history of its own, and says what to use.
        let (_, err, code) = copy(&host, &own, &fleet, false);
        assert_eq!(code, 2, "{backend:?}: {err}");
        assert!(err.contains("--merge"), "{err}");

        let (report, err, code) = copy(&host, &own, &fleet, true);
        assert_eq!(code, 0, "{backend:?}: {err}");
        assert_eq!(report["mode"], "merge");
        for table in HISTORY {
            let expected = if table == "user_corrections" {
                explicit
            } else {
                count(&host_had, table)
            };
            assert_eq!(added(&report, table), expected, "{backend:?}: {table}");
        }
        let not_merged: Vec<&str> = report["not_merged"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(not_merged.contains(&"eval_runs"), "{report}");
        assert_eq!(added(&report, "eval_runs"), 0);
        assert!(err.contains("not merged: eval_runs"), "{err}");
        let fleet_has = counts(&other, &fleet);
        for table in HISTORY {
            assert_eq!(
                count(&fleet_has, table),
                count(&fleet_had, table) + added(&report, table),
                "{backend:?}: {table}"
            );
        }

        // The grant's use names the same call in the fleet as on the host.
        assert_eq!(granted_calls(&fleet, &grant), granted_calls(&own, &grant));
        assert!(!granted_calls(&own, &grant).is_empty());
        // Evaluate on the fleet counts the host's tools as the host did, re-asks included.
        let (at_host, at_fleet) = (tools(&host, &own), tools(&other, &fleet));
        // (system_execute is the one tool both have called.)
        let host_tools = at_host.as_object().unwrap();
        assert!(host_tools.len() >= 4, "{at_host}");
        for (tool, seen) in host_tools.iter().filter(|(t, _)| *t != "system_execute") {
            assert_eq!(&at_fleet[tool], seen, "{backend:?}: {tool}");
        }

        // A revocation made in the fleet holds when the host's history arrives again, and
        // nothing arrives twice.
        let (_, err, code) = other.run(&fleet, &["permit", "revoke", &grant], "");
        assert_eq!(code, 0, "{err}");
        let (again, err, code) = copy(&host, &own, &fleet, true);
        assert_eq!(code, 0, "{err}");
        for table in HISTORY {
            assert_eq!(added(&again, table), 0, "{backend:?}: {table}");
        }
        let revoked = store_rows(
            &fleet,
            &format!("SELECT revoked_at_ms FROM grants WHERE id = '{grant}'"),
        );
        assert!(!revoked[0][0].is_null(), "{backend:?}: the grant came back");

        // The fleet copied on, and merged back into the host: the host gains the fleet's own
        // rows and none of its own; the way back the other way adds nothing.
        let replica = host.sb.path().join("replica.db").display().to_string();
        let (_, err, code) = copy(&host, &fleet, &replica, false);
        assert_eq!(code, 0, "{err}");
        let (home, err, code) = copy(&host, &replica, &own, true);
        assert_eq!(code, 0, "{err}");
        for table in ["decisions", "outcomes"] {
            assert_eq!(
                added(&home, table),
                count(&fleet_had, table),
                "{backend:?}: {table}"
            );
        }
        let (back, err, code) = copy(&host, &own, &replica, true);
        assert_eq!(code, 0, "{err}");
        for table in HISTORY {
            assert_eq!(added(&back, table), 0, "{backend:?}: {table}");
        }
    }
}

/// Two stores that began as one file (`cp`, an image with a store in it) share an identity, so
/// their later rows claim the same origins. A merge refuses them rather than drop one. SQLite
/// only: a file copy is what makes the twins.
#[test]
fn twins_made_by_a_file_copy_are_refused_rather_than_merged() {
    let host = Host::new(GRANTS);
    let call = |command: &str| json!({"name": "system_execute", "arguments": {"command": command}});
    let first = host.sb.path().join("first.db").display().to_string();
    host.gate(&first, &["--now", NOW], &call("ls"));
    let twin = host.sb.path().join("twin.db").display().to_string();
    // The file and its log, as a snapshot of the folder holds them.
    std::fs::copy(&first, &twin).unwrap();
    std::fs::copy(format!("{first}-wal"), format!("{twin}-wal")).unwrap();
    host.gate(&first, &["--now", NOW], &call("pwd"));
    host.gate(&twin, &["--now", NOW], &call("whoami"));
    let (_, err, code) = copy(&host, &twin, &first, true);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("share an identity"), "{err}");
    // Rows the twins still hold alike are no clash: a copy of the first merges back cleanly.
    let other = host.sb.path().join("other.db").display().to_string();
    let (_, err, code) = copy(&host, &first, &other, false);
    assert_eq!(code, 0, "{err}");
    let (report, err, code) = copy(&host, &other, &first, true);
    assert_eq!(code, 0, "{err}");
    assert_eq!(added(&report, "decisions"), 0);
}
