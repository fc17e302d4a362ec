//! `metagate mcp --listen` with the MCP Python SDK's Streamable HTTP client in front of the
//! real everything server: callers told apart by their bearer tokens (each its own limits),
//! requests without a token refused, browser origins checked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use super::{Setup, setup};
use crate::common::store_rows;

/// A policy mapping `tokens` (token, caller) by their hashes, with a per-caller rate.
fn policy(tokens: &[(&str, &str)], extra: &str) -> String {
    let mut text = String::from("[mcp]\n");
    text.push_str(extra);
    text.push_str("\n[mcp.tokens]\n");
    for (token, caller) in tokens {
        text.push_str(&format!("\"sha256:{}\" = \"{caller}\"\n", sha256(token)));
    }
    text.push_str("\n[limits]\nper_caller = { per_minute = 10 }\n");
    text
}

/// The SHA-256 of `text` in hex, by the system's own tool (the test's oracle, not metagate's
/// code).
fn sha256(text: &str) -> String {
    let mut child = std::process::Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// metagate listening on a port of its own; killed when dropped.
struct Listening {
    child: Child,
    addr: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen(s: &Setup, policy_text: &str) -> Listening {
    std::fs::write(&s.policy, policy_text).unwrap();
    let command = s.through(&["--listen", "127.0.0.1:0", "--quiet"], s.everything());
    listen_with(s.sb.program(&command[0]).args(&command[1..]))
}

/// Starts `command` (a `metagate mcp --listen` on port 0) and reads where it listens.
fn listen_with(command: &mut std::process::Command) -> Listening {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let addr = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "metagate ended before listening"
        );
        if let Some(rest) = line
            .trim()
            .strip_prefix("metagate: mcp: listening on http://")
        {
            break rest.trim_end_matches("/mcp").to_string();
        }
    };
    // Kept drained, so that metagate never waits on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Listening { child, addr }
}

/// The status of one raw HTTP/1.1 POST to the endpoint with `headers`.
fn status_of(addr: &str, headers: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

fn client(s: &Setup, token: &str, calls: &Value, url: &str) -> Vec<Value> {
    let out =
        s.sb.program(&s.deps.python)
            .arg(super::script("driver.py"))
            .args(["calls", &calls.to_string(), "--", url])
            .env("MCP_TOKEN", token)
            .stdin(Stdio::null())
            .output()
            .unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["results"].as_array().unwrap().clone()
}

/// Two SDK clients with their own tokens at once: each is its own caller, held to its own
/// per-caller rate (10 a minute: 10 of each one's 16 calls pass), each session its own.
#[test]
fn two_tokens_are_two_callers_each_with_its_own_limit() {
    let Some(s) = setup() else { return };
    let served = listen(
        &s,
        &policy(&[("tok-alice", "alice"), ("tok-bob", "bob")], ""),
    );
    let calls = json!(
        (0..16)
            .map(|i| json!(["get-sum", {"a": i, "b": 1}]))
            .collect::<Vec<_>>()
    );
    let results = std::thread::scope(|scope| {
        let runs: Vec<_> = ["tok-alice", "tok-bob"]
            .map(|token| {
                let (s, calls, url) = (&s, &calls, format!("http://{}/mcp", served.addr));
                scope.spawn(move || client(s, token, calls, &url))
            })
            .into_iter()
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    for results in &results {
        let passed = results
            .iter()
            .filter(|r| r["isError"] == json!(false))
            .count();
        assert_eq!(passed, 10, "{results:?}");
        let limited = results
            .iter()
            .filter(|r| {
                r["meta"]["metagate/error"]["details"]["rule"] == "limits.per_caller.per_minute"
            })
            .count();
        assert_eq!(limited, 6, "{results:?}");
    }
    let rows = store_rows(
        &s.db,
        "SELECT caller, COUNT(DISTINCT session), SUM(verdict = 'pass') FROM decisions GROUP BY caller ORDER BY caller",
    );
    assert_eq!(
        rows,
        [
            vec![json!("alice"), json!(1), json!(10)],
            vec![json!("bob"), json!(1), json!(10)]
        ]
    );
}

/// Without a token, with an unknown one, or from a foreign browser origin, nothing reaches a
/// session; loopback without a token is let in only when the policy says so.
#[test]
fn requests_without_a_known_token_or_from_a_foreign_origin_are_refused() {
    let Some(s) = setup() else { return };
    let served = listen(&s, &policy(&[("tok-alice", "alice")], ""));
    let addr = &served.addr;
    assert_eq!(status_of(addr, ""), 401);
    assert_eq!(
        status_of(addr, "Authorization: Bearer tok-mallory\r\n"),
        401
    );
    assert_eq!(
        status_of(addr, "Authorization: Basic dG9rLWFsaWNl\r\n"),
        401
    );
    assert_eq!(
        status_of(
            addr,
            "Authorization: Bearer tok-alice\r\nOrigin: https://evil.example\r\n"
        ),
        403
    );
    assert_eq!(
        status_of(
            addr,
            "Authorization: Bearer tok-alice\r\nOrigin: http://localhost:6274\r\n"
        ),
        200
    );
    drop(served);
    let served = listen(&s, &policy(&[], "unauthenticated_loopback = true"));
    assert_eq!(status_of(&served.addr, ""), 200);
}

/// A client of the 2024-11-05 HTTP+SSE transport (the SDK's `sse_client`) works through the
/// same sessions, its caller its token's; without a token its stream is refused.
#[test]
fn a_legacy_sse_client_works() {
    let Some(s) = setup() else { return };
    let served = listen(&s, &policy(&[("tok-alice", "alice")], ""));
    let url = format!("sse:http://{}/sse", served.addr);
    let calls = json!([["get-sum", {"a": 2, "b": 3}], ["echo", {"message": "old"}]]);
    let results = client(&s, "tok-alice", &calls, &url);
    assert_eq!(
        results[0]["text"], "The sum of 2 and 3 is 5.",
        "{results:?}"
    );
    assert_eq!(results[1]["text"], "Echo: old");
    let rows = store_rows(&s.db, "SELECT caller, tool FROM decisions ORDER BY id");
    assert_eq!(
        rows,
        [
            vec![json!("alice"), json!("get-sum")],
            vec![json!("alice"), json!("echo")]
        ]
    );
    let mut stream = TcpStream::connect(&served.addr).unwrap();
    write!(
        stream,
        "GET /sse HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    assert_eq!(&head[9..12], b"401");
}

/// The everything server in its Streamable HTTP mode, on a free port; killed when dropped.
struct Upstream {
    child: Child,
    url: String,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn upstream(s: &Setup) -> Upstream {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child =
        s.sb.program(&s.deps.everything)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the server ended");
        if line.contains("listening on port") {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let mut stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    Upstream {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// `--upstream` to the everything server's own Streamable HTTP: from a stdio client, and
/// from an HTTP client through `--listen`, calls are checked (a string coerced to the number
/// the schema wants) and answered by the real server.
#[test]
fn an_upstream_http_server_works_end_to_end() {
    let Some(s) = setup() else { return };
    let up = upstream(&s);
    std::fs::write(&s.policy, policy(&[("tok-alice", "alice")], "")).unwrap();
    let mut command = s.through(&["--upstream", &up.url], Vec::new());
    command.retain(|w| w != "--");
    let calls = json!([["get-sum", {"a": "4", "b": 3}], ["echo", {"message": "up"}]]);
    let (results, _) = s.calls(&calls, &command);
    assert_eq!(
        results[0]["text"], "The sum of 4 and 3 is 7.",
        "{results:?}"
    );
    assert_eq!(results[1]["text"], "Echo: up");

    let command = s.through(
        &["--listen", "127.0.0.1:0", "--upstream", &up.url],
        Vec::new(),
    );
    let served = listen_with(
        s.sb.program(&command[0])
            .args(&command[1..command.len() - 1]),
    );
    let results = client(
        &s,
        "tok-alice",
        &calls,
        &format!("http://{}/mcp", served.addr),
    );
    assert_eq!(
        results[0]["text"], "The sum of 4 and 3 is 7.",
        "{results:?}"
    );
    let rows = store_rows(&s.db, "SELECT verdict, caller FROM decisions ORDER BY id");
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0][0], "corrected");
    assert_eq!(rows[2], [json!("corrected"), json!("alice")]);
}
