//! `policy check FILE -- SERVER_COMMAND`: the tools an MCP server lists, asked of the server
//! itself as `metagate mcp` asks it (initialize, then every page of `tools/list`), so that a
//! policy written for a server is checked against the tools it will be layered on.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

/// How long the server has to start and list its tools (`npx` may fetch the package first).
const TIMEOUT: Duration = Duration::from_secs(60);

/// A listing of more pages than this is taken to be a server going round in circles.
const MAX_PAGES: usize = 1000;

/// How long the server has to exit once its stdin is closed, before it is killed.
const GRACE: Duration = Duration::from_secs(2);

/// The protocol revision metagate asks for; a server answers with the one it speaks.
const PROTOCOL: &str = "2025-06-18";

/// The items of the server's `tools/list`, every page; empty when the server has no tools.
pub fn list(command: &[OsString]) -> Result<Vec<Value>> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| anyhow!("no server command after --"))?;
    let name = program.to_string_lossy().into_owned();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start the MCP server {name}"))?;
    let listed = talk(&mut child, &name);
    end(&mut child);
    listed
}

fn talk(child: &mut Child, name: &str) -> Result<Vec<Value>> {
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (lines, from_server) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut session = Session {
        stdin: &mut stdin,
        lines: from_server,
        deadline: Instant::now() + TIMEOUT,
        name,
        next_id: 1,
    };
    let init = session.request(
        "initialize",
        json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": { "name": "metagate policy check", "version": env!("CARGO_PKG_VERSION") },
        }),
    )?;
    session.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
    if init.pointer("/capabilities/tools").is_none() {
        return Ok(Vec::new());
    }
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = session.request("tools/list", params)?;
        match page.get("tools") {
            Some(Value::Array(items)) => tools.extend(items.iter().cloned()),
            _ => bail!("the MCP server {name} answered tools/list without a `tools` array"),
        }
        cursor = page.get("nextCursor").filter(|c| !c.is_null()).cloned();
        if cursor.is_none() {
            return Ok(tools);
        }
    }
    bail!("the MCP server {name} listed more than {MAX_PAGES} pages of tools")
}

/// One conversation with the server over its stdin and stdout.
struct Session<'a> {
    stdin: &'a mut ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    deadline: Instant,
    name: &'a str,
    next_id: i64,
}

impl Session<'_> {
    fn send(&mut self, message: &Value) -> Result<()> {
        let mut line = message.to_string();
        line.push('\n');
        // A message, not the io::Error: a broken pipe here is the server's, and must not read
        // as the quiet end of a reader gone from metagate's own stdout.
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| {
                anyhow!(
                    "the MCP server {} stopped reading its input ({e})",
                    self.name
                )
            })
    }

    /// Sends a request and returns its result, answering what the server asks meanwhile.
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let line = match self
                .lines
                .recv_timeout(self.deadline.saturating_duration_since(Instant::now()))
            {
                Ok(Ok(line)) => line,
                Ok(Err(e)) => bail!("cannot read from the MCP server {}: {e}", self.name),
                Err(RecvTimeoutError::Timeout) => bail!(
                    "the MCP server {} did not answer {method} within {} s",
                    self.name,
                    TIMEOUT.as_secs()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    bail!(
                        "the MCP server {} ended before it answered {method}",
                        self.name
                    )
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                say!(
                    "metagate: warning: the MCP server {} wrote a line that is not JSON-RPC; skipped",
                    self.name
                );
                continue;
            };
            match (message.get("id"), message.get("method")) {
                // The server's own request (roots, sampling): this client offers none.
                (Some(their), Some(_)) => {
                    let refusal = json!({
                        "jsonrpc": "2.0",
                        "id": their,
                        "error": { "code": -32601, "message": "metagate policy check answers no requests" },
                    });
                    self.send(&refusal)?;
                }
                (Some(answered), None) if answered == &json!(id) => {
                    if let Some(error) = message.get("error") {
                        let text = error.get("message").and_then(Value::as_str).unwrap_or("");
                        bail!("the MCP server {} refused {method}: {text}", self.name);
                    }
                    return Ok(message.get("result").cloned().unwrap_or(Value::Null));
                }
                // Notifications (logging, progress) and answers to nothing asked.
                _ => {}
            }
        }
    }
}

/// Ends the server as the stdio transport says: stdin closed, a moment to exit, then killed.
fn end(child: &mut Child) {
    drop(child.stdin.take());
    let until = Instant::now() + GRACE;
    while Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
