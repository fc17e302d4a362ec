//! The telemetry store through the real binary: decisions, `record`, redaction, concurrency,
//! crashes, and stores that cannot be used; on SQLite and PostgreSQL where the store allows.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rusqlite::Connection;
use serde_json::{Value, json};

#[cfg(target_os = "linux")]
use crate::common::unprivileged;
use crate::common::{
    BACKENDS, BIN, Backend, Sandbox, fixture, gate, new_store, new_store_named, store_count,
    store_is_untouched, store_rows, wait_for_count,
};

#[test]
fn every_decision_is_a_row_with_its_context() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let out = sb
            .cmd()
            .args([
                "--db",
                &db,
                "gate",
                "--quiet",
                "--session",
                "s1",
                "--caller",
                "planner",
                "--intent",
                "file_task",
            ])
            .write_stdin(fixture("calls/runtime-bash.json"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let out = sb
            .cmd()
            .env("METAGATE_SESSION", "s2")
            .env("METAGATE_CALLER", "worker")
            .args(["--db", &db, "gate", "--quiet", "--jsonl"])
            .write_stdin(fixture("calls/mixed.jsonl"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let all = store_rows(
            &db,
            "SELECT session, caller, intent, tool, method, shape, verdict, category, corrections, args, latency_us, ts_ms, fingerprint FROM decisions ORDER BY id",
        );
        assert_eq!(all.len(), 1 + 5);
        let first = &all[0];
        assert_eq!(
            &first[..8],
            &[
                json!("s1"),
                json!("planner"),
                json!("file_task"),
                json!("code_execution_tool"),
                Value::Null,
                json!("agent-zero"),
                json!("corrected"),
                Value::Null
            ]
        );
        let corrections: Value = serde_json::from_str(first[8].as_str().unwrap()).unwrap();
        assert_eq!(corrections[0]["kind"], "value_alias");
        let args: Value = serde_json::from_str(first[9].as_str().unwrap()).unwrap();
        assert_eq!(args["runtime"], "terminal");
        assert!(first[10].as_i64().unwrap() >= 0);
        assert!(first[11].as_i64().unwrap() > 1_700_000_000_000);
        assert!(first[12].as_i64().is_some());
        let verdicts: Vec<&str> = all[1..].iter().map(|r| r[6].as_str().unwrap()).collect();
        assert_eq!(
            verdicts,
            ["pass", "corrected", "rejected", "rejected", "corrected"]
        );
        assert_eq!(all[3][7], "invalid_parameters");
        assert_eq!(all[4][7], "malformed_call");
        assert_eq!(
            all[4][3],
            Value::Null,
            "a call that could not be read has no tool"
        );
        assert!(all[1..].iter().all(|r| r[0] == "s2" && r[1] == "worker"));
    }
}

#[test]
fn no_telemetry_writes_nothing() {
    // SQLite-only: it checks that no default store file is made.
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["gate", "--quiet", "--no-telemetry"])
        .write_stdin(fixture("calls/runtime-bash.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!sb.db().exists());
}

#[test]
fn the_store_is_where_the_documentation_says() {
    // SQLite-only: the default store is a file, with its place and permissions.
    let sb = Sandbox::new();
    let input = fixture("calls/runtime-bash.json");
    sb.cmd()
        .args(["gate", "-q"])
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert!(sb.db().exists(), "$XDG_STATE_HOME/metagate/metagate.db");
    let env_db = sb.path().join("env.db");
    sb.cmd()
        .env("METAGATE_DB", &env_db)
        .args(["gate", "-q"])
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(store_count(&env_db, "decisions"), 1);
    let flag_db = sb.path().join("flag.db");
    sb.cmd()
        .env("METAGATE_DB", &env_db)
        .args(["gate", "-q", "--db"])
        .arg(&flag_db)
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(store_count(&flag_db, "decisions"), 1);
    assert_eq!(store_count(&env_db, "decisions"), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&flag_db).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}

#[test]
fn record_stores_every_event_type_and_skips_bad_lines_by_number() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        record_stores_every_event_type_on(&sb, &db, new_store_named(backend, &sb, "fresh.db"));
    }
}

fn record_stores_every_event_type_on(sb: &Sandbox, db: &str, fresh: String) {
    let events = sb.file(
        "events.jsonl",
        concat!(
            r#"{"type":"outcome","ts":"2026-11-20T10:00:00Z","session":"s1","tool":"web_fetcher","method":"fetch_url","status":"error","error_type":"wrong_tool_boundary","error_message":"crosses","metadata":{"boundary_axes":["Fetch"," HTML-extract "],"observed_task_shape":"fetch + extract movie titles","suggested_split":"separate transport from extraction","evidence":"titles were menu items"}}"#, "\n",
            r#"{"type":"outcome","session":"s1","tool":"calculator","status":"ok"}"#, "\n",
            "\n",
            r#"{"type":"outcome","tool":"x","status":"maybe"}"#, "\n",
            r#"{"type":"ask","ts":"2026-11-20T10:00:05Z","session":"s1","user":"u1","text":"list this week's top movies","capabilities":["http_fetch","html_extract"]}"#, "\n",
            "this is not an event\n",
            r#"{"type":"correction","session":"s1","tool":"web_fetcher","method":"fetch_url","note":"user said the list is a menu"}"#, "\n",
        ),
    );
    let out = sb
        .cmd()
        .args(["--db", db, "--now", "2026-11-21T08:00:00Z", "record"])
        .arg(&events)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "bad lines make the status 1");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("events.jsonl:4:") && err.contains("\"status\""),
        "{err}"
    );
    assert!(
        err.contains("events.jsonl:6:") && err.contains("not JSON"),
        "{err}"
    );
    assert!(!err.contains(":3:"), "blank lines are not errors: {err}");
    assert_eq!(
        (
            store_count(db, "outcomes"),
            store_count(db, "asks"),
            store_count(db, "user_corrections")
        ),
        (2, 1, 1)
    );
    let o = &store_rows(
        db,
        "SELECT boundary_axes, boundary_axes_raw, observed_task_shape, suggested_split, evidence, ts_ms FROM outcomes ORDER BY id",
    )[0];
    assert_eq!(o[0], json!(r#"["transport","extraction"]"#));
    assert_eq!(o[1], json!(r#"["Fetch"," HTML-extract "]"#));
    assert_eq!(o[2], "fetch + extract movie titles");
    assert_eq!(o[5], json!(1_795_168_800_000_i64));
    // The default time is now (here, the controlled one).
    let calc = &store_rows(db, "SELECT ts_ms FROM outcomes WHERE tool = 'calculator'")[0];
    assert_eq!(calc[0], json!(1_795_248_000_000_i64));
    let ask = &store_rows(db, r#"SELECT capabilities, "user" FROM asks"#)[0];
    assert_eq!(ask[0], json!(r#"["http_fetch","html_extract"]"#));

    // Strict: one bad line and nothing is stored.
    let before = store_count(db, "outcomes");
    let out = sb
        .cmd()
        .args(["--db", db, "record", "--strict"])
        .arg(&events)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing stored"));
    assert_eq!(store_count(db, "outcomes"), before);

    // Stdin, `-`, and a clean run exits 0.
    let out = sb
        .cmd()
        .args(["--db", db, "record", "-"])
        .write_stdin("{\"type\":\"outcome\",\"tool\":\"a\",\"status\":\"ok\"}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(store_count(db, "outcomes"), before + 1);
    // A file that cannot be read is metagate's failure: 2.
    let out = sb
        .cmd()
        .args(["--db", db, "record", "/nonexistent/events.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // …and it stops the run before a store is even made.
    let out = sb
        .cmd()
        .args(["--db", &fresh, "record", "/nonexistent/events.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(store_is_untouched(&fresh), "{fresh}");
}

/// A byte that is not UTF-8 spoils its line, not its input: the other lines, of that file and
/// of the files after it, are stored.
#[test]
fn a_line_that_is_not_utf8_is_one_bad_line() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let mut text =
            b"{\"type\":\"ask\",\"text\":\"one\"}\n{\"type\":\"ask\",\"text\":\"bad \xff\"}\n"
                .to_vec();
        text.extend_from_slice(b"{\"type\":\"ask\",\"text\":\"three\"}\n");
        let odd = sb.path().join("odd.jsonl");
        std::fs::write(&odd, &text).unwrap();
        let ok = sb.file("ok.jsonl", "{\"type\":\"ask\",\"text\":\"four\"}\n");
        let out = sb
            .cmd()
            .args(["--db", &db, "record"])
            .arg(&odd)
            .arg(&ok)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("odd.jsonl:2: not UTF-8 (byte 27 of the line); line skipped"),
            "{err}"
        );
        assert!(err.contains("skipped 1 bad line\n"), "{err}");
        assert!(
            err.contains("stored 0 outcomes, 3 asks, 0 corrections in "),
            "{err}"
        );
        assert_eq!(store_count(&db, "asks"), 3);
        // Stdin alike.
        let out = sb
            .cmd()
            .args(["--db", &db, "record"])
            .write_stdin(text)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(store_count(&db, "asks"), 5);
        // A folder (which opens on Unix, then cannot be read) stops the run before anything is
        // stored, or a store is made.
        let out = sb
            .cmd()
            .args(["--db", &db, "record"])
            .arg(&ok)
            .arg(sb.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("is a folder, not a regular file"));
        assert_eq!(store_count(&db, "asks"), 5);
        let fresh = new_store_named(backend, &sb, "fresh.db");
        let out = sb
            .cmd()
            .args(["--db", &fresh, "record"])
            .arg(sb.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(store_is_untouched(&fresh), "{fresh}");
        // A byte order mark opens the file, not its first event.
        let bom = sb.file("bom.jsonl", "\u{feff}{\"type\":\"ask\",\"text\":\"six\"}\n");
        let out = sb
            .cmd()
            .args(["--db", &db, "record"])
            .arg(&bom)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(store_count(&db, "asks"), 6);
        let one = sb.file("one.jsonl", "{\"type\":\"outcome\",\"tool\":\"t\",\"status\":\"ok\"}\n{\"type\":\"ask\",\"text\":\"x\"}\n");
        let out = sb
            .cmd()
            .args(["--db", &db, "record"])
            .arg(&one)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("stored 1 outcome, 1 ask, 0 corrections in "),
            "{err}"
        );
    }
}

/// A line may hold 64 MiB, as a call may in `gate`; a longer one (or a last line with no
/// newline) is one bad line, read past without being kept, so memory stays bounded.
#[test]
fn a_line_over_64_mib_is_one_bad_line() {
    const LIMIT: usize = 64 << 20;
    // SQLite only: this test is about the length of a line; a long session is stored on both
    // stores in `fleet::a_long_session_is_stored_on_both_stores`.
    let sb = Sandbox::new();
    let db = sb.db();
    let (pre, post) = (
        r#"{"type":"outcome","tool":"big","status":"ok","session":""#,
        r#""}"#,
    );
    let mut event = String::with_capacity(LIMIT);
    event.push_str(pre);
    event.push_str(&"s".repeat(LIMIT - pre.len() - post.len()));
    event.push_str(post);
    let mut input = Vec::with_capacity(4 * LIMIT);
    input.extend_from_slice(event.as_bytes());
    input.extend_from_slice(b"\r\n");
    input.extend_from_slice(event.replacen("ss", "sss", 1).as_bytes());
    input.extend_from_slice(b"\n{\"type\":\"outcome\",\"tool\":\"small\",\"status\":\"ok\"}\n");
    input.extend_from_slice(&vec![b'x'; LIMIT + LIMIT / 2]);
    let path = sb.path().join("big.jsonl");
    std::fs::write(&path, &input).unwrap();
    drop(input);
    let out = sb.cmd().arg("record").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    for n in [2, 4] {
        assert!(
            err.contains(&format!(
                "big.jsonl:{n}: longer than the 64 MiB metagate reads as one event; line skipped"
            )),
            "{err}"
        );
    }
    assert!(
        err.contains("stored 2 outcomes") && err.contains("skipped 2 bad lines"),
        "{err}"
    );
    let stored = store_rows(
        &db,
        "SELECT tool, length(session) FROM outcomes ORDER BY id",
    );
    assert_eq!(
        stored,
        [
            [json!("big"), json!(LIMIT - pre.len() - post.len())],
            [json!("small"), Value::Null]
        ]
    );
}

/// `metagate --db STORE --policy POLICY record ARGS…` with its standard input to write to, as
/// an agent runs it as a coprocess.
fn record_coprocess(
    sb: &Sandbox,
    db: &str,
    policy: &Path,
    args: &[&str],
) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = sb
        .std_cmd()
        .args(["--db", db])
        .arg("--policy")
        .arg(policy)
        .arg("record")
        .args(args)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// An agent keeps `record -` open as a coprocess: each event is in the store as soon as it is
/// written (where `gate`'s prerequisites look), not after 10,000 more or the end of the
/// input, and a stopped coprocess has lost none of them.
#[test]
fn a_coprocess_has_each_event_stored_before_it_waits_for_more() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let policy = sb.file(
            "req.toml",
            "[tools.run_tests]\n[tools.deploy]\nrequires = [\"run_tests\"]\n",
        );
        let (mut child, mut stdin) = record_coprocess(&sb, &db, &policy, &["-"]);
        let ran = r#"{"type":"outcome","session":"s1","tool":"run_tests","status":"ok"}"#;
        writeln!(stdin, "{ran}").unwrap();
        stdin.flush().unwrap();
        let stored = wait_for_count(&db, "SELECT count(*) FROM outcomes", 1);
        assert_eq!(stored, 1, "the event waits in memory");
        let deploy = r#"{"name":"deploy","arguments":{}}"#;
        let (answer, code, _) = gate(
            &sb,
            &[
                "--db",
                &db,
                "--policy",
                policy.to_str().unwrap(),
                "--session",
                "s1",
                "--quiet",
            ],
            deploy.as_bytes(),
        );
        assert_eq!(code, 0, "{answer}");
        // A burst, then half a line: everything whole is stored while the rest is awaited.
        let burst: String = (0..500).map(|_| format!("{ran}\n")).collect();
        write!(stdin, "{burst}{{\"type\":\"outcome\",").unwrap();
        stdin.flush().unwrap();
        assert_eq!(
            wait_for_count(&db, "SELECT count(*) FROM outcomes", 501),
            501
        );
        // Stopped the hard way: nothing written whole is lost.
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(store_count(&db, "outcomes"), 501);
    }
}

/// `record` fails halfway (here: the store stays locked past the busy timeout): it says how
/// much it had stored, and through which line, so a retry does not store those lines twice
/// unawares.
#[test]
fn a_record_that_fails_halfway_says_what_it_stored() {
    let sb = Sandbox::new();
    // SQLite-only: the store is held by an SQLite write lock (BEGIN IMMEDIATE) on the file.
    let db = sb.db();
    let db_arg = db.display().to_string();
    let policy = sb.file("bt.toml", "[telemetry]\nbusy_timeout_ms = 300\n");
    let event = r#"{"type":"outcome","tool":"t","status":"ok"}"#;
    let (child, mut stdin) = record_coprocess(&sb, &db_arg, &policy, &["-"]);
    write!(stdin, "{event}\n\n{event}\nnot an event\n{event}\n").unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        wait_for_count(&db_arg, "SELECT count(*) FROM outcomes", 3),
        3
    );
    let holder = Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    write!(stdin, "{event}\n{event}\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    holder.execute_batch("COMMIT").unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("metagate: record: 3 events were stored in ")
            && err.contains(
                "before the error below: every good line through <stdin>:5; none after it (a retry of the whole input stores those 3 again)\nmetagate: error: "
            ),
        "{err}"
    );
    assert_eq!(store_count(&db, "outcomes"), 3);

    // Nothing stored is said too: a retry is then safe.
    let file = sb.file("two.jsonl", &format!("{event}\n{event}\n"));
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let out = sb
        .cmd()
        .arg("--policy")
        .arg(&policy)
        .arg("record")
        .arg(&file)
        .output()
        .unwrap();
    holder.execute_batch("COMMIT").unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("metagate: record: nothing was stored before the error below\n"),
        "{err}"
    );
    assert_eq!(store_count(&db, "outcomes"), 3);
}

/// `record --strict` reads and checks every line before it writes any: while it waits for
/// input, other writers (`gate` above all, which fails closed) are not kept out of the store.
#[test]
fn record_strict_holds_no_lock_while_it_waits_for_input() {
    let sb = Sandbox::new();
    // SQLite-only: the lock it must not hold is the SQLite file's write lock (BEGIN IMMEDIATE).
    let db = sb.db();
    let db_arg = db.display().to_string();
    let policy = sb.file("bt.toml", "[telemetry]\nbusy_timeout_ms = 300\n");
    let event = |tool: &str| format!(r#"{{"type":"outcome","tool":"{tool}","status":"ok"}}"#);
    for bad in [false, true] {
        let (child, mut stdin) = record_coprocess(&sb, &db_arg, &policy, &["--strict", "-"]);
        writeln!(stdin, "{}", event("first")).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let call = br#"{"name":"response","arguments":{"text":"hi"}}"#;
        let (answer, code, stderr) = gate(
            &sb,
            &["--policy", policy.to_str().unwrap(), "--quiet"],
            call,
        );
        assert_eq!(code, 0, "{answer} {stderr}");
        let other = Connection::open(&db).unwrap();
        other.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
        let last = if bad {
            "not an event".to_string()
        } else {
            event("second")
        };
        writeln!(stdin, "{last}").unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if bad {
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(err.contains("nothing stored (--strict)"), "{err}");
        } else {
            assert_eq!(out.status.code(), Some(0), "{err}");
        }
    }
    // All or nothing, in the order read; and the stage is gone with the process.
    assert_eq!(
        store_rows(&db, "SELECT tool FROM outcomes ORDER BY id"),
        [[json!("first")], [json!("second")]]
    );
    assert_eq!(store_count(&db, "decisions"), 2);
}

/// `metadata` feeds cohesion warnings and `split_boundary` (`boundary_axes`, `evidence`): a
/// field given twice in it is refused as one at the top is, since readers disagree on which
/// copy counts.
#[test]
fn a_field_twice_inside_metadata_is_a_bad_line() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let out = sb
        .cmd()
        .args(["--db", &db, "record", "-"])
        .write_stdin(concat!(
            r#"{"type":"outcome","tool":"a","status":"ok"}"#,
            "\n",
            r#"{"type":"outcome","tool":"a","status":"error","error_type":"wrong_tool_boundary","metadata":{"boundary_axes":["transport","extraction"],"evidence":"real","boundary_axes":["x"],"evidence":"forged"}}"#,
            "\n",
        ))
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("<stdin>:2: the field \"metadata.boundary_axes\" is given twice"),
            "{err}"
        );
        assert_eq!(
            store_rows(&db, "SELECT status FROM outcomes"),
            [[json!("ok")]]
        );
    }
}

/// `ts`, `--now`, `--since` and `--until` read RFC 3339 (with its lowercase `t`/`z` and a space
/// for the `T`), not the wider ISO 8601 and Temporal forms, which other readers take otherwise.
#[test]
fn times_are_rfc_3339_and_nothing_wider() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let line = |ts: &str| format!("{{\"type\":\"ask\",\"ts\":\"{ts}\",\"text\":\"x\"}}\n");
        let good = [
            "2026-11-20T10:00:00Z",
            "2026-11-20t10:00:00z",
            "2026-11-20 12:00:00+02:00",
        ];
        let bad = [
            ("2026-11-20T10:00:00+25:00", "an offset is at most ±23:59"),
            ("20261120T100000Z", "YYYY-MM-DD"),
            ("2026-11-20T10:00Z", "the seconds are required"),
            (
                "2026-11-20T10:00:00Z[Europe/Paris]",
                "a time zone in brackets",
            ),
            ("+002026-11-20T10:00:00Z", "four digits"),
            ("2026-11-20T10:00:00,5Z", "not a comma"),
        ];
        let input: String = good
            .iter()
            .map(|ts| line(ts))
            .chain(bad.iter().map(|(ts, _)| line(ts)))
            .collect();
        let out = sb
            .cmd()
            .args(["--db", &db, "--now", "2026-11-21T00:00:00Z", "record", "-"])
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        for (i, (ts, why)) in bad.iter().enumerate() {
            let want = format!(
                "<stdin>:{}: {ts:?} is not an RFC 3339 time: ",
                good.len() + i + 1
            );
            let said = err.lines().find(|l| l.contains(&want));
            assert!(said.is_some_and(|l| l.contains(why)), "{want}{why}\n{err}");
        }
        assert!(err.contains("skipped 6 bad lines"), "{err}");
        let stored = store_rows(&db, "SELECT DISTINCT ts_ms FROM asks");
        assert_eq!(stored, [[json!(1_795_168_800_000_i64)]]);
        // The flags share the reader; --since and --until also take durations.
        for args in [
            &["--now", "2026-11-21T00:00:00+24:00", "db", "info"][..],
            &["evaluate", "--dry-run", "--since", "2026-11-20T10Z"],
            &["evaluate", "--dry-run", "--until", "20261120T100000Z"],
        ] {
            let out = sb.cmd().args(["--db", &db]).args(args).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("is not an RFC 3339 time"), "{args:?}: {err}");
        }
        for args in [
            &[
                "--now",
                "2026-11-21 00:00:00z",
                "evaluate",
                "--dry-run",
                "--since",
                "2d",
            ][..],
            &[
                "--now",
                "2026-11-21T00:00:00Z",
                "evaluate",
                "--dry-run",
                "--since",
                "2026-11-20t00:00:00z",
                "--until",
                "30m",
            ],
        ] {
            let out = sb.cmd().args(["--db", &db]).args(args).output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// `--db` naming a folder is said to be one, by every command; a missing store is said to be
/// missing even where that is no error (`permit list`), so a typo is not taken for "no grants".
#[test]
fn a_folder_or_a_typo_as_the_store_is_named_as_such() {
    // SQLite-only: a folder or a misspelt file name as the store.
    let sb = Sandbox::new();
    let folder = sb.path().join("stores");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = folder.to_str().unwrap();
    for args in [
        &["db", "info"][..],
        &["permit", "list"][..],
        &["tools", "health"][..],
        &["evaluate"][..],
        &["record", "-"][..],
        &["gate"][..],
    ] {
        let out = sb
            .cmd()
            .args(["--db", folder])
            .args(args)
            .write_stdin("{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"hi\"}}\n")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is a folder: the store is a file"),
            "{args:?}: {err}"
        );
        assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
    }
    let out = sb
        .cmd()
        .args(["--db", "typo.db", "permit", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("there is no telemetry store at typo.db"),
        "{err}"
    );
    assert!(!sb.path().join("typo.db").exists());
}

#[test]
fn db_info_reports_tables_and_span() {
    // SQLite-only: the default store file, never created by asking (fleet.rs compares db info).
    let sb = Sandbox::new();
    let out = sb.cmd().args(["db", "info"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "asking about a store never creates one"
    );
    assert!(!sb.db().exists());
    sb.cmd()
        .args(["record"])
        .write_stdin("{\"type\":\"ask\",\"ts\":\"2026-11-20T10:00:00Z\",\"session\":\"s\"}\n{\"type\":\"outcome\",\"ts\":\"2026-11-22T10:00:00Z\",\"tool\":\"t\",\"status\":\"ok\"}\n")
        .output()
        .unwrap();
    let out = sb
        .cmd()
        .args(["db", "info", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["schema_version"], metagate_store::SCHEMA_VERSION);
    assert_eq!(
        info["tables"],
        json!({"decisions":0,"outcomes":1,"asks":1,"user_corrections":0,"grants":0,"grant_events":0,"eval_runs":0,"eval_recommendations":0})
    );
    assert_eq!(info["first"], "2026-11-20T10:00:00Z");
    assert_eq!(info["last"], "2026-11-22T10:00:00Z");
    let out = sb.cmd().args(["db", "info"]).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("schema version") && table.contains("outcomes"),
        "{table}"
    );
}

/// Runs metagate as someone who may not write in `folders` (made read-only here; see
/// [`unprivileged`]). None when that cannot be arranged.
#[cfg(target_os = "linux")]
fn run_without_write_access(
    sb: &Sandbox,
    folders: &[&Path],
    args: &[&str],
) -> Option<std::process::Output> {
    use std::os::unix::fs::PermissionsExt;
    let mut cmd = unprivileged(sb)?;
    for folder in folders {
        for e in std::fs::read_dir(folder).unwrap() {
            std::fs::set_permissions(e.unwrap().path(), PermissionsExt::from_mode(0o444)).unwrap();
        }
        std::fs::set_permissions(folder, PermissionsExt::from_mode(0o555)).unwrap();
    }
    let out = cmd.args(args).stdin(Stdio::null()).output().unwrap();
    for folder in folders {
        // Writable again, so that the sandbox can be removed.
        std::fs::set_permissions(folder, PermissionsExt::from_mode(0o755)).unwrap();
    }
    Some(out)
}

/// Reading a store this process may not write, in a folder it may write, creates nothing
/// beside it: SQLite's `-wal`/`-shm` made by such a reader belonged to it and carried the
/// store's mode of the moment, and locked the store's owner out (every gate call failed
/// closed) until someone deleted them.
#[cfg(target_os = "linux")]
#[test]
fn reading_a_store_one_may_not_write_leaves_its_owner_able_to() {
    // SQLite-only: file permissions.
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let db = sb.path().join("shared").join("m.db");
    let db_arg = db.to_str().unwrap().to_string();
    let line = "{\"type\":\"outcome\",\"tool\":\"calculator\",\"status\":\"ok\"}\n";
    let record = |cmd: &mut std::process::Command| {
        let mut child = cmd
            .args(["--db", &db_arg, "record"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    assert_eq!(record(&mut sb.std_cmd()).status.code(), Some(0));
    let Some(_) = unprivileged(&sb) else {
        crate::skips::skip(&crate::skips::ROOT, "running as root without setpriv");
        return;
    };
    // The owner makes the store read-only for a moment; a look at it meanwhile...
    std::fs::set_permissions(&db, PermissionsExt::from_mode(0o444)).unwrap();
    for args in [
        &["db", "info", "--format", "json"][..],
        &["tools", "health", "--format", "json"],
        &["permit", "list", "--format", "json"],
        &["evaluate", "--dry-run", "--format", "json"],
    ] {
        let out = unprivileged(&sb)
            .unwrap()
            .args(["--db", &db_arg])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names: Vec<_> = std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["m.db"], "{args:?} left files beside the store");
    }
    // ...leaves the store writable by its owner once it is writable again.
    std::fs::set_permissions(&db, PermissionsExt::from_mode(0o644)).unwrap();
    let out = record(&mut unprivileged(&sb).unwrap());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(store_count(&db, "outcomes"), 2);
}

/// A store in a folder the reader may not write (another user's, a read-only mount) is read
/// as it is, creating nothing beside it; writing to it says it cannot be written; and one
/// whose write-ahead log still holds changes is refused rather than read without them.
#[cfg(target_os = "linux")]
#[test]
fn a_store_in_a_read_only_folder_can_be_read() {
    // SQLite-only: file permissions.
    let sb = Sandbox::new();
    let ro = sb.path().join("ro");
    let unfolded = sb.path().join("unfolded");
    std::fs::create_dir_all(&unfolded).unwrap();
    let db = ro.join("m.db");
    let record = |line: &str| {
        let out = sb
            .cmd()
            .args(["--db", db.to_str().unwrap(), "record"])
            .write_stdin(line)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    record("{\"type\":\"outcome\",\"session\":\"s\",\"tool\":\"calculator\",\"status\":\"ok\"}\n");
    // A second outcome written while another connection is open stays in the log: copied
    // then, the file and its log are a store whose log holds a change.
    let held = Connection::open(&db).unwrap();
    held.query_row("SELECT count(*) FROM outcomes", [], |r| r.get::<_, i64>(0))
        .unwrap();
    record(
        "{\"type\":\"outcome\",\"session\":\"s\",\"tool\":\"calculator\",\"status\":\"error\"}\n",
    );
    for name in ["m.db", "m.db-wal"] {
        std::fs::copy(ro.join(name), unfolded.join(name)).unwrap();
    }
    assert!(std::fs::metadata(unfolded.join("m.db-wal")).unwrap().len() > 0);
    drop(held);
    assert!(!ro.join("m.db-wal").exists());
    let before = store_bytes(&db);

    let ro_db = db.to_str().unwrap();
    let runs: &[(&[&str], i32)] = &[
        (&["db", "info", "--format", "json"], 0),
        (&["tools", "health", "--format", "json"], 0),
        (&["permit", "list", "--format", "json"], 0),
        (&["evaluate", "--dry-run", "--format", "json"], 0),
        (&["record", "fixtures-none.jsonl"], 2),
        (&["evaluate", "--format", "json"], 2),
    ];
    for (args, status) in runs {
        let mut all = vec!["--db", ro_db];
        all.extend_from_slice(args);
        let Some(out) = run_without_write_access(&sb, &[&ro], &all) else {
            crate::skips::skip(&crate::skips::ROOT, "running as root without setpriv");
            return;
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*status), "{args:?}: {err}");
        if *status == 0 {
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            match args[0] {
                "db" => assert_eq!(doc["tables"]["outcomes"], 2, "{doc}"),
                "tools" => assert_eq!(doc["calculator"]["health"]["calls"], 2, "{doc}"),
                "evaluate" => assert_eq!(doc["events"], 2, "{doc}"),
                _ => assert_eq!(doc["grants"], json!([]), "{doc}"),
            }
        } else if args[0] == "evaluate" {
            assert!(err.contains("cannot be written"), "{args:?}: {err}");
        }
        let mut names: Vec<_> = std::fs::read_dir(&ro)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["m.db"],
            "{args:?} left files beside the store: {err}"
        );
        assert_eq!(store_bytes(&db), before, "{args:?} changed the store");
    }

    let unfolded_db = unfolded.join("m.db");
    let out = run_without_write_access(
        &sb,
        &[&unfolded],
        &[
            "--db",
            unfolded_db.to_str().unwrap(),
            "db",
            "info",
            "--format",
            "json",
        ],
    )
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("holds changes not yet in the file"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Every byte of every file of the store: the database, and its log if one is left.
fn store_bytes(db: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let p = format!("{}{suffix}", db.display());
        if let Ok(bytes) = std::fs::read(p) {
            all.extend(bytes);
        }
    }
    all
}

/// The secrets corpus (fixtures/telemetry/secrets.txt): every call through `gate --db` (all in
/// one `--jsonl` run, then each in a process of its own) and every event through `record
/// --db`, then no byte of any secret is in the store file, its `-wal` or its `-shm`.
///
/// `METAGATE_SECRETS_BIN=/path/to/metagate` runs the same corpus against another build (an
/// older one, to count what it leaks); the failure names every secret that reached the store.
#[test]
fn secrets_never_reach_the_store() {
    // SQLite-only: it reads the bytes of the store file, its `-wal` and `-shm`.
    let sb = Sandbox::new();
    let db = sb.path().join("store.db");
    let db_arg = db.to_str().unwrap();
    let tools = crate::common::fixture_path("telemetry/secret-tools.json");
    let tools_arg = tools.to_str().unwrap();
    let secrets: Vec<String> = fixture("telemetry/secrets.txt")
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with("# "))
        .map(str::to_string)
        .collect();
    let calls = fixture("telemetry/secret-calls.jsonl");
    let events = fixture("telemetry/secret-events.jsonl");
    // The corpus really holds every secret, so this test can fail; a placement is one secret
    // in one call or event.
    let placements: usize = secrets
        .iter()
        .map(|s| {
            let n = calls
                .lines()
                .chain(events.lines())
                .filter(|l| l.contains(s.as_str()))
                .count();
            assert!(n > 0, "{s} is in no fixture");
            n
        })
        .sum();
    assert!(placements >= 100, "{placements} placements");
    let bin = std::env::var_os("METAGATE_SECRETS_BIN").unwrap_or_else(|| BIN.into());
    let run = |args: &[&str], input: &str| {
        let mut child = sb
            .program(&bin)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        // A call the policy refuses exits 1 and is recorded all the same: the corpus holds
        // `bash -c "…"`, which the shell check refuses (issue 23).
        let refused = args[0] == "gate" && out.status.code() == Some(1);
        assert!(
            out.status.code() == Some(0) || refused,
            "{args:?}: {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let gate = ["gate", "--db", db_arg, "--tools", tools_arg, "--quiet"];
    let stdout = run(&[&gate[..], &["--jsonl"]].concat(), &calls);
    // The calls themselves go to the tools untouched.
    assert!(stdout.contains("ghp_16C7e42F292c6912E7710c838347Ae178B4a"));
    assert!(stdout.contains("-pMy5qlPw0rdA"));
    for line in calls.lines() {
        run(&gate, line);
    }
    run(&["record", "--db", db_arg], &events);
    assert_eq!(
        store_count(&db, "decisions"),
        2 * calls.lines().count() as i64
    );
    let bytes = store_bytes(&db);
    let text = String::from_utf8_lossy(&bytes);
    let leaked: Vec<&String> = secrets
        .iter()
        .filter(|s| text.contains(s.as_str()))
        .collect();
    assert!(
        leaked.is_empty(),
        "{} of {} secrets ({placements} placements) reached the store: {leaked:#?}",
        leaked.len(),
        secrets.len()
    );
    assert!(text.contains("[REDACTED]"));
}

#[test]
fn eight_processes_at_once_lose_no_decision() {
    for backend in BACKENDS {
        const PROCESSES: usize = 8;
        const CALLS: usize = 10_000;
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let mut children = Vec::new();
        for p in 0..PROCESSES {
            let mut input = String::new();
            for i in 0..CALLS {
                if i % 3 == 0 {
                    input.push_str(&format!(
                    "{{\"tool_name\":\"response\",\"tool_args\":{{\"message\":\"p{p} n{i}\"}}}}\n"
                ));
                } else {
                    input.push_str(&format!("{{\"tool_name\":\"code_execution_tool\",\"tool_args\":{{\"runtime\":\"bash\",\"code\":\"echo {p} {i}\"}}}}\n"));
                }
            }
            let mut child = sb
                .std_cmd()
                .args(["gate", "--jsonl", "--quiet", "--session"])
                .arg(format!("p{p}"))
                .arg("--db")
                .arg(&db)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
            children.push((child, writer));
        }
        for (child, writer) in children {
            let out = child.wait_with_output().unwrap();
            writer.join().unwrap();
            assert_eq!(out.status.code(), Some(0));
            assert!(
                out.stderr.is_empty(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), CALLS);
        }
        assert_eq!(store_count(&db, "decisions"), (PROCESSES * CALLS) as i64);
        for p in 0..PROCESSES {
            let n = store_rows(
                &db,
                &format!("SELECT count(*) FROM decisions WHERE session = 'p{p}'"),
            )[0][0]
                .as_i64()
                .unwrap();
            assert_eq!(n, CALLS as i64, "process {p}");
        }
    }
}

#[test]
fn a_killed_stream_leaves_a_store_with_every_answered_line() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store_named(backend, &sb, "killed.db");
        let mut child = sb
            .std_cmd()
            .args(["gate", "--jsonl", "--quiet", "--db"])
            .arg(&db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut answered = Vec::new();
        // Send in bursts and read each burst's answers; in the last burst read only some, then
        // kill the process mid-stream.
        for burst in 0..30 {
            let mut chunk = String::new();
            for i in 0..200 {
                let n = burst * 200 + i;
                chunk.push_str(&format!(
                    "{{\"tool_name\":\"response\",\"tool_args\":{{\"text\":\"line-{n}\"}}}}\n"
                ));
            }
            stdin.write_all(chunk.as_bytes()).unwrap();
            stdin.flush().unwrap();
            let wanted = if burst == 29 { 77 } else { 200 };
            for _ in 0..wanted {
                let mut line = String::new();
                assert_ne!(stdout.read_line(&mut line).unwrap(), 0);
                let v: Value = serde_json::from_str(&line).unwrap();
                answered.push(v["tool_args"]["text"].as_str().unwrap().to_string());
            }
        }
        // SIGKILL: no destructor, no checkpoint, no goodbye.
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(answered.len(), 29 * 200 + 77);
        // A file can be left torn; a PostgreSQL server keeps its own pages whole.
        if backend == Backend::Sqlite {
            let check = store_rows(&db, "PRAGMA integrity_check");
            assert_eq!(check, [[json!("ok")]]);
        }
        let stored: std::collections::HashSet<String> =
            store_rows(&db, "SELECT args FROM decisions")
                .iter()
                .map(|row| {
                    let args: Value = serde_json::from_str(row[0].as_str().unwrap()).unwrap();
                    args["text"].as_str().unwrap().to_string()
                })
                .collect();
        for text in &answered {
            assert!(
                stored.contains(text),
                "{text} was written to stdout but has no row"
            );
        }
    }
}

/// A store that cannot be used is a set-up fault for every command that writes to it: a
/// clear error and status 2, nothing on stdout. `gate` answers no call with it, whatever
/// `on_internal_error` says (that is for faults inside a check), and a stream stops before
/// its first line.
#[test]
fn a_store_that_cannot_be_used_is_a_set_up_fault() {
    // SQLite-only: unusable files (fleet.rs has the unreachable PostgreSQL store).
    let sb = Sandbox::new();
    let junk = sb.file("junk.db", &"not a database ".repeat(400));
    let newer = sb.path().join("newer.db");
    {
        let conn = Connection::open(&newer).unwrap();
        conn.execute_batch(&metagate_store::MIGRATIONS.concat())
            .unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let cases = [
        (junk.clone(), "not an SQLite database"),
        (newer.clone(), "newer metagate"),
        (
            Path::new("/proc/metagate/none.db").to_path_buf(),
            "/proc/metagate",
        ),
    ];
    let call = fixture("calls/runtime-bash.json");
    let open = sb.file("open.toml", "[gate]\non_internal_error = \"pass\"\n");
    for (db, words) in &cases {
        let out = sb
            .cmd()
            .arg("record")
            .arg("--db")
            .arg(db)
            .write_stdin("{\"type\":\"outcome\",\"tool\":\"a\",\"status\":\"ok\"}\n")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", db.display());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(words), "{err}");
        for flags in [
            &["-q"][..],
            &["-q", "--policy", open.to_str().unwrap()],
            &["-q", "--jsonl"],
        ] {
            let out = sb
                .cmd()
                .arg("gate")
                .args(flags)
                .arg("--db")
                .arg(db)
                .write_stdin(format!("{}\n{}\n", call.trim(), call.trim()))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{flags:?} {}: {err}",
                db.display()
            );
            assert!(out.stdout.is_empty(), "{flags:?}: {:?}", out.stdout);
            assert!(
                err.starts_with("metagate: error: cannot use the telemetry store")
                    && err.contains(words),
                "{err}"
            );
        }
    }
    // The junk file was not touched.
    assert_eq!(
        std::fs::read_to_string(&junk).unwrap(),
        "not a database ".repeat(400)
    );
}

#[test]
fn a_lock_held_past_the_busy_timeout_is_named() {
    // SQLite-only: the lock is SQLite's file lock (fleet.rs holds the PostgreSQL one).
    let sb = Sandbox::new();
    let db = sb.path().join("locked.db");
    sb.cmd()
        .args(["record", "--db"])
        .arg(&db)
        .write_stdin("")
        .output()
        .unwrap();
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let policy = sb.file("fast.toml", "[telemetry]\nbusy_timeout_ms = 200\n");
    let out = sb
        .cmd()
        .args(["record", "--policy"])
        .arg(&policy)
        .arg("--db")
        .arg(&db)
        .write_stdin("{\"type\":\"outcome\",\"tool\":\"a\",\"status\":\"ok\"}\n")
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("locked by another process") && err.contains("200 ms"),
        "{err}"
    );
    conn.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn a_full_disk_is_an_error_not_lost_data() {
    // SQLite-only: the full disk is a file-size limit on the store file.
    let sb = Sandbox::new();
    let db = sb.path().join("full.db");
    // A file size limit stands in for a full disk: writes past it fail.
    let big = r#"{"type":"outcome","tool":"a","status":"ok","error_message":"PAD"}"#
        .replace("PAD", &"x".repeat(2000));
    let input: String = std::iter::repeat_n(big.as_str(), 200)
        .map(|l| format!("{l}\n"))
        .collect();
    let script = format!(
        "trap '' XFSZ; ulimit -f 256; exec {} record --db {}",
        BIN,
        db.display()
    );
    let mut child = std::process::Command::new("bash")
        .args(["-c", &script])
        .env("HOME", sb.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash");
    // The process may stop reading once the store cannot grow.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output();
    match out {
        Ok(out) => {
            assert_eq!(
                out.status.code(),
                Some(2),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(err.contains("full.db") && err.contains("disk"), "{err}");
        }
        Err(e) => panic!("could not run the size-limited record: {e}"),
    }
}

/// Processes that find no store and set one up at the same moment all get it. Switching a new
/// file to WAL, SQLite answers "busy" at once, without calling the busy handler, to a process
/// that read the file while another was switching it; that process tries again within the
/// busy timeout instead of failing (about one trial in ten failed before).
#[test]
fn processes_setting_up_one_new_store_all_get_it() {
    for backend in BACKENDS {
        const PROCESSES: usize = 12;
        let sb = Sandbox::new();
        let events = sb.file(
            "one.jsonl",
            "{\"type\":\"outcome\",\"tool\":\"t\",\"status\":\"ok\"}\n",
        );
        for trial in 0..40 {
            let db = new_store_named(backend, &sb, &format!("new-{trial}.db"));
            let children: Vec<_> = (0..PROCESSES)
                .map(|_| {
                    sb.std_cmd()
                        .arg("--db")
                        .arg(&db)
                        .arg("record")
                        .arg(&events)
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for child in children {
                let out = child.wait_with_output().unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "trial {trial}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert_eq!(
                store_count(&db, "outcomes"),
                PROCESSES as i64,
                "{backend:?}: trial {trial}"
            );
        }
    }
}

/// A device or a pipe given as the store is refused by name, before anything opens it (a
/// pipe would wait for a writer), by readers and writers alike.
#[cfg(unix)]
#[test]
fn a_device_or_a_pipe_is_not_a_store() {
    // SQLite-only: a device or a pipe named as the store file.
    let sb = Sandbox::new();
    let fifo = sb.path().join("events.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut paths = vec!["/dev/null".to_string()];
    if made {
        paths.push(fifo.display().to_string());
    }
    for path in &paths {
        for args in [&["db", "info"][..], &["record", "-"], &["tools", "health"]] {
            let out = sb
                .cmd()
                .args(["--db", path])
                .args(args)
                .write_stdin("")
                .timeout(Duration::from_secs(20))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{path} {args:?}: {err}");
            assert!(
                err.contains(&format!("{path} is not a regular file")),
                "{path} {args:?}: {err}"
            );
        }
    }
}

/// `evaluate` waits for a store another process holds as long as the policy says
/// (`telemetry.busy_timeout_ms`), as every other command does, and says so.
#[test]
fn evaluate_waits_as_long_as_the_policy_says() {
    // SQLite-only: the store is held by an exclusive SQLite file lock.
    let sb = Sandbox::new();
    let db = sb.path().join("held.db");
    let policy = sb.file("p.toml", "[telemetry]\nbusy_timeout_ms = 300\n");
    let out = sb
        .cmd()
        .args(["--db", db.to_str().unwrap(), "record"])
        .write_stdin("{\"type\":\"outcome\",\"tool\":\"t\",\"status\":\"ok\"}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let holder = Connection::open(&db).unwrap();
    holder
        .execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; INSERT INTO asks (ts_ms) VALUES (1);",
        )
        .unwrap();
    for dry_run in [true, false] {
        let mut args = vec!["--policy", policy.to_str().unwrap(), "--db"];
        args.extend([db.to_str().unwrap(), "evaluate"]);
        if dry_run {
            args.push("--dry-run");
        }
        let out = sb.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("stayed locked for 300 ms"), "{err}");
    }
    holder.execute_batch("ROLLBACK").unwrap();
}

/// An `error_type` outside the taxonomy (an integrator's own name) is stored as given, with one
/// warning per name; evaluate counts it as the tool's own failure and the known types as ever.
#[test]
fn record_keeps_an_error_type_of_the_integrators_own() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let db = new_store(backend, &sb);
        let lines = [
            r#"{"type":"outcome","tool":"t","status":"error","error_type":"vendor_quota"}"#,
            r#"{"type":"outcome","tool":"t","status":"error","error_type":"timeout"}"#,
            r#"{"type":"outcome","tool":"t","status":"error","error_type":"vendor_quota"}"#,
            r#"{"type":"outcome","tool":"t","status":"error","error_type":"permanent_failure"}"#,
            r#"{"type":"outcome","tool":"t","status":"ok"}"#,
        ];
        let out = sb
            .cmd()
            .args(["--db", &db, "record"])
            .write_stdin(lines.join("\n") + "\n")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert_eq!(err.matches("is not one metagate knows").count(), 1, "{err}");
        assert!(
            err.contains("<stdin>:1: warning: error_type \"vendor_quota\""),
            "{err}"
        );
        let stored = store_rows(&db, "SELECT error_type FROM outcomes ORDER BY id");
        assert_eq!(stored[0][0], json!("vendor_quota"));
        let out = sb
            .cmd()
            .args(["--db", &db, "evaluate", "--dry-run", "--format", "json"])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let health = &doc["tools"]["t"]["health"];
        assert_eq!(health["outcomes"]["by_type"]["vendor_quota"], 2, "{health}");
        assert_eq!(health["extrinsic_failures"], 1, "timeout: {health}");
        assert_eq!(
            health["failures"], 3,
            "permanent_failure and vendor_quota: {health}"
        );
    }
}
