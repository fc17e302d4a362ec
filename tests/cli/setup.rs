//! Set-up faults (exit 2; docs/telemetry.md, "When the store cannot be used"): a store `gate` cannot use, no place for one, rules that
//! need a store when telemetry is off. Each is exit 2 with a message for the operator on
//! stderr and nothing on stdout, never a rejection fed to the model.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{BIN, LineStream, Sandbox};

const CALL: &str = "{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"hi\"}}\n";

/// Asserts `out` is a set-up fault whose message holds `words`, and returns the message.
fn assert_set_up_fault(out: &Output, what: &str, words: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(
        out.stdout.is_empty(),
        "{what}: stdout {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.starts_with("metagate: error: "), "{what}: {err}");
    assert!(err.contains(words), "{what}: {err}");
    err
}

/// `gate`, one document and a stream, with and without a policy that fails open.
fn gate_every_way(sb: &Sandbox, env: &[(&str, &Path)], args: &[&str]) -> Vec<(String, Output)> {
    let open = sb.file("fail-open.toml", "[gate]\non_internal_error = \"pass\"\n");
    let open = open.to_str().unwrap().to_string();
    [
        vec!["gate"],
        vec!["gate", "--jsonl"],
        vec!["--policy", open.as_str(), "gate"],
        vec!["--policy", open.as_str(), "gate", "--jsonl"],
    ]
    .into_iter()
    .map(|mode| {
        let mut cmd = Command::new(BIN);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(sb.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .args(args)
            .args(&mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The process may have ended before reading a byte.
        let _ = child.stdin.take().unwrap().write_all(CALL.as_bytes());
        (
            format!("{args:?} {mode:?}"),
            child.wait_with_output().unwrap(),
        )
    })
    .collect()
}

#[test]
fn a_store_gate_cannot_use_is_exit_2_naming_it() {
    let sb = Sandbox::new();
    let folder = sb.path().join("stores");
    std::fs::create_dir_all(&folder).unwrap();
    let junk = sb.file("junk.db", "this is not an SQLite file, not at all\n");
    let home = sb.path();
    for (db, words) in [
        (Path::new("/dev/null"), "/dev/null is not a regular file"),
        (folder.as_path(), "is a folder: the store is a file"),
        (
            junk.as_path(),
            "is not a metagate store: the file is not an SQLite",
        ),
    ] {
        for (what, out) in gate_every_way(&sb, &[("HOME", home)], &["--db", db.to_str().unwrap()]) {
            assert_set_up_fault(&out, &what, words);
        }
    }
}

/// `env -i metagate gate`: no `--db`, `$METAGATE_DB`, `$XDG_STATE_HOME` or `$HOME`.
#[test]
fn no_place_for_the_store_is_exit_2() {
    let sb = Sandbox::new();
    for (what, out) in gate_every_way(&sb, &[], &[]) {
        assert_set_up_fault(&out, &what, "no place for the telemetry store");
    }
    // Telemetry off needs no place for it.
    let out = Command::new(BIN)
        .env_clear()
        .current_dir(sb.path())
        .args(["gate", "--no-telemetry"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "empty input is a malformed call"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["category"], "malformed_call");
}

/// A store this user may not write (made read-only by its owner) is refused before the first
/// call, and nothing is made beside it.
#[cfg(target_os = "linux")]
#[test]
fn a_read_only_store_is_exit_2() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let db = sb.path().join("ro").join("m.db");
    let made = sb
        .cmd()
        .args(["--db", db.to_str().unwrap(), "gate", "-q"])
        .write_stdin(CALL)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0));
    let Some(mut cmd) = crate::common::unprivileged(&sb) else {
        crate::skips::skip(&crate::skips::ROOT, "running as root without setpriv");
        return;
    };
    std::fs::set_permissions(&db, PermissionsExt::from_mode(0o444)).unwrap();
    let listing = || {
        let mut names: Vec<_> = std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let mut child = cmd
        .args(["--db", db.to_str().unwrap(), "gate", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(CALL.as_bytes());
    let out = child.wait_with_output().unwrap();
    assert_set_up_fault(&out, "read-only", "cannot be written");
    assert_eq!(listing(), before, "nothing made beside the store");
}

/// Limits, prerequisites and grants are read from the store at each call: a policy that sets
/// them and `--no-telemetry` contradict each other, and the run says so before the first call
/// (the README's example: the example policy sets limits and grants).
#[test]
fn rules_that_read_the_store_without_telemetry_are_exit_2() {
    let sb = Sandbox::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/policies/sirthaddeus.toml");
    let requires = sb.file(
        "requires.toml",
        "[tools.deploy]\nrequires = [\"build\"]\n[tools.build]\n",
    );
    let limits = sb.file(
        "limits.toml",
        "[gate]\non_internal_error = \"pass\"\n[limits]\nper_tool = { per_minute = 5 }\n",
    );
    let lookup: &[&str] = &["--intent", "lookup_search"];
    for (policy, flags, named) in [
        (
            example.as_path(),
            lookup,
            "sets limits.per_tool, limits.loop, permit.require (",
        ),
        (
            example.as_path(),
            &["--intent", "lookup_search", "--caller", "teacher-ai"][..],
            "sets callers.teacher-ai.limits, limits.per_tool",
        ),
        (
            requires.as_path(),
            &["--session", "s1"][..],
            "sets tools.deploy.requires (",
        ),
        (limits.as_path(), &[][..], "sets limits.per_tool ("),
    ] {
        for jsonl in [&[][..], &["--jsonl"]] {
            let out = sb
                .cmd()
                .arg("--policy")
                .arg(policy)
                .args(["gate", "--no-telemetry"])
                .args(flags)
                .args(jsonl)
                .write_stdin("{\"tool_name\":\"web_search\",\"tool_args\":{\"query\":\"x\"}}\n")
                .output()
                .unwrap();
            let err = assert_set_up_fault(&out, &policy.display().to_string(), named);
            assert!(err.contains("--no-telemetry"), "{err}");
        }
    }
    // Rules this run cannot reach read nothing: a prerequisite without a session (refused
    // for want of one, as ever), another caller's limit.
    let out = sb
        .cmd()
        .arg("--policy")
        .arg(&requires)
        .args(["gate", "--no-telemetry", "-q"])
        .write_stdin("{\"name\":\"deploy\",\"arguments\":{}}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["error"]["details"]["rule"], "tools.deploy.requires",
        "{v}"
    );
    // With telemetry on, the example answers.
    let out = sb
        .cmd()
        .arg("--policy")
        .arg(&example)
        .args(["gate", "--intent", "lookup_search", "-q"])
        .write_stdin("{\"tool_name\":\"web_search\",\"tool_args\":{\"query\":\"x\"}}\n")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gate --jsonl` with a store it cannot use ends at once, before reading a line: an agent
/// loop waiting on its first answer learns of it then, not after its first call.
#[test]
fn a_stream_ends_before_its_first_line() {
    let sb = Sandbox::new();
    let mut child = sb
        .std_cmd()
        .args(["--db", "/dev/null", "gate", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // stdin stays open, and nothing is written to it.
    let stdin = child.stdin.take().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "gate waited for input"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_set_up_fault(&out, "stream", "/dev/null is not a regular file");
}

/// A store that worked and then fails is a fault inside the run: each call is answered as
/// `on_internal_error` says (here the default, fail closed), and the answer never names the
/// store or why it failed; the operator reads that on stderr.
#[cfg(unix)]
#[test]
fn a_store_failing_mid_stream_is_answered_per_the_policy_without_its_path() {
    let sb = Sandbox::new();
    let db = sb.path().join("filling.db");
    let pad = "x".repeat(4000);
    let line = format!("{{\"tool_name\":\"response\",\"tool_args\":{{\"text\":\"{pad}\"}}}}\n");
    let input = line.repeat(400);
    // A file size limit stands in for a full disk: the store opens, then its log cannot grow.
    let script = format!(
        "trap '' XFSZ; ulimit -f 1024; exec {BIN} --db {} gate --jsonl -q",
        db.display()
    );
    let mut child = Command::new("bash")
        .args(["-c", &script])
        .env_clear()
        .env("HOME", sb.path())
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 400);
    let rejected: Vec<&Value> = lines.iter().filter(|l| l.get("error").is_some()).collect();
    assert!(
        !rejected.is_empty() && rejected.len() < 400,
        "{} rejected: {err}",
        rejected.len()
    );
    for r in rejected {
        assert_eq!(r["error"]["category"], "server_error");
        let text = r.to_string();
        assert!(
            !text.contains("filling.db") && !text.contains(sb.path().to_str().unwrap()),
            "{text}"
        );
    }
    assert!(
        err.contains("metagate: error: telemetry:") && err.contains("filling.db"),
        "{err}"
    );
}

/// A store another process holds past the busy timeout while `gate` runs: the limit check
/// cannot count (nor the decision be recorded), and the call is answered per the policy (fail
/// closed) without a word of which store or why; that is on stderr.
#[test]
fn a_store_locked_mid_stream_is_named_on_stderr_only() {
    let sb = Sandbox::new();
    let db = sb.path().join("held.db");
    let policy = sb.file(
        "limits.toml",
        "[telemetry]\nbusy_timeout_ms = 200\n[limits]\nper_tool = { per_minute = 100 }\n",
    );
    let mut command = sb.std_cmd();
    command.arg("--policy").arg(&policy).arg("--db").arg(&db);
    command.args(["gate", "--jsonl", "-q"]);
    let mut stream = LineStream::spawn(command);
    assert_eq!(stream.ask(CALL.trim_end())["tool_args"]["text"], "hi");
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let answer = stream.ask(CALL.trim_end());
    holder.execute_batch("ROLLBACK").unwrap();
    let out = stream.finish();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(answer["error"]["category"], "server_error", "{answer}");
    let text = answer.to_string();
    assert!(
        !text.contains("held.db") && !text.contains("locked"),
        "{text}"
    );
    assert!(
        err.contains("held.db is locked")
            && err.contains("the checks that read the store could not run"),
        "{err}"
    );
}

/// A standard output closed before the start (`metagate gate >&-`) is a set-up fault: the
/// answer would be lost, so exit 2 saying so, never 0. `record` writes nothing there and
/// runs. (A reader that goes away once the answer started is another matter:
/// `gate::closed_stdout_pipe_exits_quietly`.)
#[cfg(unix)]
#[test]
fn a_closed_stdout_at_the_start_is_exit_2() {
    let sb = Sandbox::new();
    let run = |args: &str| {
        let mut child = Command::new("bash")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", sb.path())
            .env("BIN", BIN)
            .current_dir(sb.path())
            .args(["-c", &format!("exec \"$BIN\" {args} >&-")])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(CALL.as_bytes());
        child.wait_with_output().unwrap()
    };
    for args in [
        "gate --no-telemetry",
        "gate --jsonl",
        "lint -",
        "policy show",
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {err}");
        assert!(
            err.contains("standard output is closed: the answer would be lost"),
            "{args}: {err}"
        );
    }
    // The call is a bad event to record (status 1), but record ran.
    let out = run("record");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("skipped 1 bad line"), "{err}");
}
