//! OpenTelemetry export (docs/otel.md) end to end: the real binary sends to a real OTLP
//! receiver, Arize Phoenix (PyPI, run locally; `scripts/otel-deps.sh` installs it), and what
//! arrived is read back through Phoenix's own REST API. Without Phoenix, or in a test build
//! without the `otlp` feature, the receiver's test says so loudly and passes, unless
//! `METAGATE_REQUIRE_OTEL` is set (as `.ci/run` sets it), where it fails. The collector-down
//! test needs no receiver and always runs.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{LineStream, Sandbox, fixture_path, store_rows};

/// A secret in an argument: redacted in the store, so it must never reach the receiver.
const SECRET: &str = "sk-live-abcdefghijklmnop1234567890";

/// The trace a caller's `TRACEPARENT` and an MCP client's `_meta` name.
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
const CLIENT_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_SPAN: &str = "b7ad6b7169203331";

fn skip_or_fail(why: &str) {
    assert!(
        std::env::var_os("METAGATE_REQUIRE_OTEL").is_none(),
        "{why} (METAGATE_REQUIRE_OTEL is set)"
    );
    eprintln!("\n*** SKIPPED the OpenTelemetry export test: {why} ***\n");
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Phoenix server of this test's own, stopped when dropped.
struct Phoenix {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn phoenix_binary() -> Option<PathBuf> {
    let root = std::env::var_os("METAGATE_OTEL_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/otel-deps"));
    let bin = root.join("venv/bin/phoenix");
    (root.join("installed").is_file() && bin.is_file()).then_some(bin)
}

impl Phoenix {
    fn start() -> Option<Phoenix> {
        if !cfg!(feature = "otlp") {
            skip_or_fail("this build has no `otlp` feature (cargo test --features otlp)");
            return None;
        }
        let Some(bin) = phoenix_binary() else {
            skip_or_fail("Arize Phoenix is not installed: run scripts/otel-deps.sh");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let child = Command::new(&bin)
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            // Nothing leaves the machine.
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("DO_NOT_TRACK", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut phoenix = Phoenix { child, port, dir };
        // Phoenix takes up to a minute to start on a busy machine: wait for its health check.
        let until = Instant::now() + Duration::from_secs(300);
        loop {
            if get(port, "/healthz").is_some_and(|(status, _)| status == 200) {
                return Some(phoenix);
            }
            let log = std::fs::read_to_string(phoenix.dir.path().join("phoenix.log"));
            if let Ok(Some(status)) = phoenix.child.try_wait() {
                panic!("phoenix ended ({status}): {log:?}");
            }
            assert!(Instant::now() < until, "phoenix did not start: {log:?}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans of `project`, once at least `want` of them arrived (ingestion is
    /// asynchronous), with the whole answer's text.
    fn spans(&self, project: &str, want: usize) -> (Vec<Value>, String) {
        let path = format!("/v1/projects/{project}/spans?limit=1000");
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some((200, body)) = get(self.port, &path) {
                let v: Value = serde_json::from_str(&body).unwrap();
                let spans = v["data"].as_array().cloned().unwrap_or_default();
                if spans.len() >= want {
                    return (spans, body);
                }
            }
            assert!(
                Instant::now() < until,
                "fewer than {want} spans arrived in {project}: {:?}",
                get(self.port, &path)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// `GET path` on the local port: the status and body, none when nothing answers.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    Some((
        status,
        if chunked {
            unchunk(body)
        } else {
            body.to_string()
        },
    ))
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn span_id(span: &Value) -> &str {
    span["context"]["span_id"].as_str().unwrap()
}

fn trace_id(span: &Value) -> &str {
    span["context"]["trace_id"].as_str().unwrap()
}

/// `metagate ARGS` on `input` with `vars` set: stdout, exit status, stderr.
fn metagate(
    sb: &Sandbox,
    vars: &[(&str, &str)],
    args: &[&str],
    input: &str,
) -> (String, i32, String) {
    let mut cmd = sb.std_cmd();
    cmd.envs(vars.iter().copied()).args(args);
    let mut child = cmd
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
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Two calls with ids: one passed (corrected) with a bearer token in its code, one refused.
fn calls() -> String {
    [
        json!({"type": "tool_use", "id": "toolu_s1", "name": "code_execution_tool",
               "input": {"runtime": "terminal", "session": 0,
                         "code": format!("curl -H 'Authorization: Bearer {SECRET}' x")}}),
        json!({"type": "tool_use", "id": "toolu_r2", "name": "code_execution_tool",
               "input": {"runtime": "terminal"}}),
    ]
    .iter()
    .map(|c| format!("{c}\n"))
    .collect()
}

#[test]
fn decisions_mcp_requests_and_evaluations_arrive_at_phoenix_as_the_conventions_name_them() {
    let Some(phoenix) = Phoenix::start() else {
        return;
    };
    let endpoint = phoenix.endpoint();
    let sb = Sandbox::new();
    let db = sb.path().join("t.db");
    let db = db.to_str().unwrap();

    // gate --jsonl, continuing the caller's trace from TRACEPARENT.
    let traceparent = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let vars = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "openinference.project.name=gate",
        ),
        ("TRACEPARENT", traceparent.as_str()),
    ];
    let (_, code, stderr) = metagate(&sb, &vars, &["--db", db, "gate", "--jsonl"], &calls());
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("otlp"), "{stderr}");
    let (spans, body) = phoenix.spans("gate", 3);
    assert!(!body.contains(SECRET), "the secret arrived: {body}");
    let root = named(&spans, "metagate gate");
    assert_eq!(root.len(), 1, "{spans:#?}");
    let root = root[0];
    assert_eq!(trace_id(root), CALLER_TRACE);
    assert_eq!(root["parent_id"], CALLER_SPAN);
    let decisions = named(&spans, "execute_tool code_execution_tool");
    assert_eq!(decisions.len(), 2, "{spans:#?}");
    let rows = store_rows(
        db,
        "SELECT call_id, verdict, category FROM decisions ORDER BY id",
    );
    for row in &rows {
        let span = decisions
            .iter()
            .find(|s| s["attributes"]["gen_ai.tool.call.id"] == row[0])
            .unwrap_or_else(|| panic!("no span for {row:?}: {decisions:#?}"));
        assert_eq!(span["parent_id"], span_id(root));
        assert_eq!(trace_id(span), CALLER_TRACE);
        let a = &span["attributes"];
        assert_eq!(a["gen_ai.operation.name"], "execute_tool");
        assert_eq!(a["gen_ai.tool.name"], "code_execution_tool");
        assert_eq!(a["metagate.verdict"], row[1]);
        assert_eq!(
            a["error.type"],
            if row[2].is_null() {
                Value::Null
            } else {
                row[2].clone()
            }
        );
        let events = span["events"].as_array().unwrap();
        assert_eq!(events.len(), 1, "{span:#}");
        assert_eq!(events[0]["name"], "gen_ai.guardrail.result");
        assert_eq!(events[0]["attributes"]["metagate.verdict"], row[1]);
    }
    let passed = decisions
        .iter()
        .find(|s| s["attributes"]["gen_ai.tool.call.id"] == "toolu_s1")
        .unwrap();
    let args = passed["attributes"]["gen_ai.tool.call.arguments"]
        .as_str()
        .unwrap();
    assert!(args.contains("[REDACTED]"), "{args}");
    let corrections = passed["events"][0]["attributes"]["metagate.corrections"]
        .as_str()
        .unwrap();
    assert!(corrections.contains("\"default\""), "{corrections}");

    // An MCP session: the client's trace context from params._meta, passed on to the server.
    let python = phoenix_binary().unwrap().with_file_name("python");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otel/trace_server.py");
    let mut cmd = sb.std_cmd();
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=mcp")
        .args(["--db", db, "mcp", "--"])
        .arg(&python)
        .arg(&server);
    let mut mcp = LineStream::spawn(cmd);
    let init = mcp.ask(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "otel-test", "version": "1"}}})
        .to_string(),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "trace-echo", "{init}");
    mcp.write(&format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    ));
    let client_parent = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let answer = mcp.ask(
        &json!({"jsonrpc": "2.0", "id": "call-7", "method": "tools/call", "params": {
            "name": "echo", "arguments": {"message": "hi", "token": SECRET},
            "_meta": {"traceparent": client_parent}}})
        .to_string(),
    );
    let received: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let passed_on = received["_meta"]["traceparent"]
        .as_str()
        .unwrap()
        .to_string();
    let out = mcp.finish();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (spans, body) = phoenix.spans("mcp", 4);
    assert!(!body.contains(SECRET), "the secret arrived: {body}");
    let requests = named(&spans, "tools/call echo");
    assert_eq!(requests.len(), 2, "a server and a client span: {spans:#?}");
    let server_span = requests
        .iter()
        .find(|s| s["parent_id"] == CLIENT_SPAN)
        .unwrap_or_else(|| panic!("no span under the client's: {requests:#?}"));
    assert_eq!(trace_id(server_span), CLIENT_TRACE);
    let client_span = requests
        .iter()
        .find(|s| s["parent_id"] == span_id(server_span))
        .unwrap_or_else(|| panic!("no client span under the server span: {requests:#?}"));
    assert_eq!(
        passed_on,
        format!("00-{CLIENT_TRACE}-{}-01", span_id(client_span)),
        "the server continues the client span"
    );
    for span in [server_span, client_span] {
        let a = &span["attributes"];
        assert_eq!(a["mcp.method.name"], "tools/call");
        assert_eq!(a["gen_ai.tool.name"], "echo");
        assert_eq!(a["jsonrpc.request.id"], "call-7");
        assert_eq!(a["error.type"], Value::Null);
    }
    let decision = named(&spans, "execute_tool echo");
    assert_eq!(decision.len(), 1, "{spans:#?}");
    assert_eq!(decision[0]["parent_id"], span_id(server_span));
    assert_eq!(named(&spans, "metagate mcp").len(), 1, "{spans:#?}");

    // evaluate: findings as evaluation events, per-tool figures for the window.
    let now = "2026-11-20T18:00:00Z";
    let evaluated = sb.path().join("e.db");
    let evaluated = evaluated.to_str().unwrap();
    let fixture = fixture_path("telemetry/movie-list.jsonl");
    let (_, code, stderr) = metagate(
        &sb,
        &[],
        &[
            "--db",
            evaluated,
            "--now",
            now,
            "record",
            fixture.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    let vars = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "openinference.project.name=evaluate",
        ),
    ];
    let (report, code, stderr) = metagate(
        &sb,
        &vars,
        &[
            "--db", evaluated, "--now", now, "evaluate", "--since", "1d", "--format", "json",
        ],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&report).unwrap();
    let (spans, _) = phoenix.spans("evaluate", 2);
    let evaluation = named(&spans, "evaluate");
    assert_eq!(evaluation.len(), 1, "{spans:#?}");
    let root = named(&spans, "metagate evaluate");
    assert_eq!(evaluation[0]["parent_id"], span_id(root[0]));
    let events = evaluation[0]["events"].as_array().unwrap();
    let findings: Vec<&Value> = events
        .iter()
        .filter(|e| e["name"] == "gen_ai.evaluation.result")
        .collect();
    let shown: Vec<&Value> = report["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["muted"] != true)
        .collect();
    assert!(!shown.is_empty(), "{report:#}");
    assert_eq!(findings.len(), shown.len(), "{events:#?}");
    let tighten = findings
        .iter()
        .find(|e| e["attributes"]["gen_ai.evaluation.name"] == "tighten_acceptance")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(tighten["attributes"]["gen_ai.tool.name"], "web_fetcher");
    assert!(tighten["attributes"]["gen_ai.evaluation.score.value"].is_f64());
    let figures = events
        .iter()
        .find(|e| {
            e["name"] == "metagate.tool.figures"
                && e["attributes"]["gen_ai.tool.name"] == "web_fetcher"
        })
        .unwrap_or_else(|| panic!("{events:#?}"));
    let health = &report["tools"]["web_fetcher"]["health"];
    assert_eq!(
        figures["attributes"]["metagate.tool.reasks"],
        health["reasks"]
    );
    assert_eq!(
        figures["attributes"]["metagate.tool.utility"],
        health["utility"]
    );
}

/// With nothing listening where the spans go, every answer and exit status is the one given
/// without export, and the operator gets one line saying what was lost. (A build without the
/// `otlp` feature says instead, once, that it cannot export.)
#[test]
fn with_the_collector_down_answers_and_exit_codes_are_unchanged_and_one_warning_said() {
    let sb = Sandbox::new();
    let down = format!("http://127.0.0.1:{}", free_port());
    let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", down.as_str())];
    let one = calls().lines().nth(1).unwrap().to_string();
    for (args, input) in [
        (vec!["gate", "--jsonl"], calls()),
        (vec!["gate"], one.clone()),
        (vec!["gate", "--no-telemetry"], one),
    ] {
        let db = sb.path().join(format!("{}.db", args.len()));
        let mut with_db = vec!["--db", db.to_str().unwrap()];
        with_db.extend(&args);
        let (out, code, err) = metagate(&sb, &[], &with_db, &input);
        let db2 = sb.path().join(format!("{}-x.db", args.len()));
        with_db[1] = db2.to_str().unwrap();
        let (out_x, code_x, err_x) = metagate(&sb, &vars, &with_db, &input);
        assert_eq!((&out_x, code_x), (&out, code), "{args:?}: {err_x}");
        let extra: Vec<&str> = err_x
            .lines()
            .filter(|l| !err.lines().any(|b| b == *l))
            .collect();
        let no_spans = args.contains(&"--no-telemetry");
        if cfg!(feature = "otlp") && no_spans {
            // The store is off, so nothing is exported, and nothing is lost.
            assert!(extra.is_empty(), "{args:?}: {extra:?}");
            continue;
        }
        assert_eq!(extra.len(), 1, "{args:?}: {err_x}");
        assert!(
            extra[0].starts_with("metagate: warning: otlp: "),
            "{extra:?}"
        );
        if cfg!(feature = "otlp") {
            assert!(extra[0].contains(&down), "{extra:?}");
            assert!(extra[0].contains("not exported"), "{extra:?}");
        } else {
            assert!(extra[0].contains("without the `otlp` feature"), "{extra:?}");
        }
    }
}
