//! The PostgreSQL store over TCP: TLS as the URL's `sslmode` asks, and the password from
//! `$PGPASSWORD` or the password file. A connection the mode forbids, or a password refused,
//! is a set-up fault (exit 2) whose message names the URL without its password and never
//! shows a password. (The library's tests, `crates/metagate-store/src/pg/connect/tests.rs`, check in the
//! server itself which connections are encrypted.)

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use serde_json::Value;

use crate::common::Sandbox;
use crate::postgres_tls_server::{PASSWORD, plain_tcp_server, tls_server};

/// A sandbox with a policy that gates tool `t`.
fn host() -> (Sandbox, String) {
    let sb = Sandbox::new();
    let policy = sb
        .file(
            "policy.toml",
            "[telemetry]\nbusy_timeout_ms = 2000\n[tools.t]\n",
        )
        .display()
        .to_string();
    (sb, policy)
}

/// `metagate --policy P --db URL ARGS…` with `env` added, `input` on stdin: (stdout, stderr,
/// status).
fn run(
    (sb, policy): &(Sandbox, String),
    url: &str,
    env: &[(&str, &str)],
    args: &[&str],
    input: &str,
) -> (String, String, i32) {
    let mut command: Command = sb.std_cmd();
    command.args(["--policy", policy, "--db", url]).args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    crate::fleet::run(command, input)
}

const CALL: &str = r#"{"name":"t","arguments":{}}"#;

/// One call gated, then the decisions the store holds.
fn gate_then_count(h: &(Sandbox, String), url: &str, env: &[(&str, &str)]) -> Result<i64, String> {
    let (_, err, code) = run(h, url, env, &["gate", "--quiet"], CALL);
    if code != 0 {
        return Err(format!("gate exited {code}: {err}"));
    }
    let (out, err, code) = run(h, url, env, &["db", "info", "--format", "json"], "");
    if code != 0 {
        return Err(format!("db info exited {code}: {err}"));
    }
    let info: Value = serde_json::from_str(&out).unwrap();
    Ok(info["tables"]["decisions"].as_i64().unwrap())
}

/// The run failed as a set-up fault: exit 2, nothing on stdout, the URL shown.
fn assert_set_up_fault((out, err, code): (String, String, i32), url_shown: &str) -> String {
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains(url_shown), "{err}");
    err
}

#[test]
fn require_and_verify_full_carry_a_gate_and_its_record_over_tls() {
    if !crate::postgres_server::available() {
        return;
    }
    let h = host();
    let server = tls_server();
    let db = server.fresh_database();
    let env = [("PGPASSWORD", PASSWORD)];
    assert_eq!(
        gate_then_count(&h, &server.url(&db, "sslmode=require"), &env),
        Ok(1)
    );
    let ca = server.ca().display().to_string();
    let full = server.url(&db, &format!("sslmode=verify-full&sslrootcert={ca}"));
    assert_eq!(gate_then_count(&h, &full, &env), Ok(2));
}

#[test]
fn an_untrusted_or_misnamed_certificate_is_a_set_up_fault() {
    if !crate::postgres_server::available() {
        return;
    }
    let h = host();
    let server = tls_server();
    let db = server.fresh_database();
    let env = [("PGPASSWORD", PASSWORD)];
    let other = server.other_ca().display().to_string();
    let url = server.url(&db, &format!("sslmode=verify-full&sslrootcert={other}"));
    let err = assert_set_up_fault(run(&h, &url, &env, &["gate"], CALL), &url);
    assert!(
        err.contains("no TLS connection with sslmode=verify-full"),
        "{err}"
    );
    let ca = server.ca().display().to_string();
    let misnamed = format!(
        "postgres://agent@wrong.invalid:{}/{db}?hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={ca}",
        server.port()
    );
    let err = assert_set_up_fault(run(&h, &misnamed, &env, &["record"], ""), &misnamed);
    assert!(err.contains("not valid for name"), "{err}");
}

#[test]
fn require_refuses_a_server_without_tls_and_disable_connects() {
    if !crate::postgres_server::available() {
        return;
    }
    let h = host();
    let server = plain_tcp_server();
    let db = server.fresh_database();
    let env = [("PGPASSWORD", PASSWORD)];
    let url = server.url(&db, "sslmode=require");
    let err = assert_set_up_fault(run(&h, &url, &env, &["gate"], CALL), &url);
    assert!(err.contains("server does not support TLS"), "{err}");
    assert!(err.contains("never falls back to plaintext"), "{err}");
    assert_eq!(
        gate_then_count(&h, &server.url(&db, "sslmode=disable"), &env),
        Ok(1)
    );
}

#[test]
fn the_password_may_come_from_a_private_password_file_only() {
    if !crate::postgres_server::available() {
        return;
    }
    let h = host();
    let server = tls_server();
    let db = server.fresh_database();
    let url = server.url(&db, "sslmode=require");
    let pgpass = h.0.file(
        ".pgpass",
        &format!(
            "# the test server\n127.0.0.1:{}:*:agent:{PASSWORD}\n",
            server.port()
        ),
    );
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(gate_then_count(&h, &url, &[]), Ok(1));
    // $PGPASSFILE names it wherever it is.
    let moved = h.0.path().join("elsewhere-pgpass");
    std::fs::rename(&pgpass, &moved).unwrap();
    let moved_text = moved.display().to_string();
    assert_eq!(
        gate_then_count(&h, &url, &[("PGPASSFILE", &moved_text)]),
        Ok(2)
    );
    // Readable by others: ignored, with a warning, as libpq does.
    std::fs::set_permissions(&moved, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = assert_set_up_fault(
        run(&h, &url, &[("PGPASSFILE", &moved_text)], &["gate"], CALL),
        &url,
    );
    assert!(
        err.contains("warning: password file") && err.contains("group or world access"),
        "{err}"
    );
    assert!(err.contains("no password was given"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

#[test]
fn a_wrong_password_is_a_set_up_fault_that_never_shows_it() {
    if !crate::postgres_server::available() {
        return;
    }
    let h = host();
    let server = tls_server();
    let db = server.fresh_database();
    let wrong = "wrong-pw-9f8e7d";
    let in_url = server
        .url(&db, "sslmode=require")
        .replace("agent@", &format!("agent:{wrong}@"));
    let shown = in_url.replace(wrong, "***");
    let from_url = assert_set_up_fault(run(&h, &in_url, &[], &["gate"], CALL), &shown);
    assert!(
        from_url.contains("password authentication failed")
            && from_url.contains("the password came from the URL"),
        "{from_url}"
    );
    let url = server.url(&db, "sslmode=require");
    let from_env = assert_set_up_fault(
        run(&h, &url, &[("PGPASSWORD", wrong)], &["db", "info"], ""),
        &url,
    );
    assert!(from_env.contains("$PGPASSWORD"), "{from_env}");
    for err in [from_url, from_env] {
        assert!(!err.contains(wrong), "{err}");
    }
}
