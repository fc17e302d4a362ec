//! What became of each call metagate forwarded: the server's answer read as an outcome
//! (`ok`, or `error` with a taxonomy category when the answer names one, and its text
//! redacted), linked to the call's decision, and written to the store as `record` writes
//! outcomes, by a thread of its own so the answer reaches the client first.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::framing::Message;
use super::{Clock, Diag, OpenStore};
use metagate_checks::redact;
use metagate_core::error::Category;
use metagate_core::events::{Event, Outcome};

/// The longest error text kept of an answer, in characters.
const MAX_MESSAGE_CHARS: usize = 2000;

/// A forwarded call waiting for its answer.
#[derive(Debug, Clone)]
pub struct InFlight {
    /// The decision's row in the store (none with telemetry off).
    pub decision_id: Option<i64>,
    /// The tool called.
    pub tool: String,
    /// Its method, if any.
    pub method: Option<String>,
    /// The session, if any.
    pub session: Option<String>,
    /// When the call went to the server.
    pub sent: Instant,
    /// Its spans, ended with it (docs/otel.md).
    pub trace: crate::otel::McpCall,
}

/// How a call ended.
pub enum Ending<'m, 'a> {
    /// The server answered (a `CallToolResult`, or a JSON-RPC error).
    Answered(&'m Message<'a>),
    /// The client cancelled it (`notifications/cancelled`), with its reason.
    Cancelled(Option<String>),
    /// The server went away before answering.
    ServerGone,
}

/// The `error.type` of a call that ended as `ending`, none when it succeeded.
pub(crate) fn error_type(ending: &Ending<'_, '_>) -> Option<&'static str> {
    match ending {
        Ending::Answered(message) => read_answer(message).1.map(|c| c.as_str()),
        Ending::Cancelled(_) => Some(Category::Cancelled.as_str()),
        Ending::ServerGone => Some(Category::ServerError.as_str()),
    }
}

/// The outcome of `call`, as of `now_ms`.
pub fn outcome(call: &InFlight, ending: &Ending<'_, '_>, now_ms: i64) -> Outcome {
    let (ok, error_type, message) = match ending {
        Ending::Answered(message) => read_answer(message),
        Ending::Cancelled(reason) => (false, Some(Category::Cancelled), reason.clone()),
        Ending::ServerGone => (
            false,
            Some(Category::ServerError),
            Some("the MCP server ended before it answered".to_string()),
        ),
    };
    let error_message = message.filter(|_| !ok).map(|m| {
        let short: String = m.chars().take(MAX_MESSAGE_CHARS).collect();
        redact::redact_text(&short).unwrap_or(short)
    });
    let latency_us = u64::try_from(call.sent.elapsed().as_micros()).unwrap_or(u64::MAX);
    Outcome {
        ts_ms: now_ms,
        session: call.session.clone(),
        tool: call.tool.clone(),
        method: call.method.clone(),
        ok,
        error_type: error_type.map(|c| c.as_str().to_string()),
        error_message,
        axes: Vec::new(),
        axes_raw: Vec::new(),
        observed_task_shape: None,
        suggested_split: None,
        evidence: None,
        metadata: Some(json!({
            "via": "metagate mcp",
            "decision_id": call.decision_id,
            "latency_us": latency_us,
        })),
        caller: None,
        decision_id: call.decision_id,
        call_id: None,
    }
}

/// Whether a `tools/call` answer is a task the server started (a `CreateTaskResult`), whose
/// outcome comes with the answer to `tasks/result`: its task id.
pub fn started_task(message: &Message<'_>) -> Option<String> {
    #[derive(Deserialize)]
    struct Created {
        task: Option<Task>,
        content: Option<serde::de::IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Task {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    let created: Created = serde_json::from_str(message.result?.get()).ok()?;
    match created {
        Created {
            task: Some(task),
            content: None,
        } => Some(task.task_id),
        _ => None,
    }
}

/// The task id in a request's params (`tasks/result`, `tasks/cancel`).
pub fn task_of(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    serde_json::from_str::<Params>(params?.get())
        .ok()
        .map(|p| p.task_id)
}

/// `(ok, category, text)` of an answer.
fn read_answer(message: &Message<'_>) -> (bool, Option<Category>, Option<String>) {
    if let Some(error) = message.error {
        #[derive(Deserialize)]
        struct RpcError {
            code: Option<i64>,
            message: Option<String>,
        }
        let e: Option<RpcError> = serde_json::from_str(error.get()).ok();
        let code = e.as_ref().and_then(|e| e.code);
        let text = e.and_then(|e| e.message);
        return (
            false,
            Some(code.map_or(Category::ServerError, category_of)),
            text,
        );
    }
    #[derive(Deserialize)]
    struct CallResult<'a> {
        #[serde(rename = "isError")]
        is_error: Option<bool>,
        #[serde(borrow)]
        content: Option<&'a RawValue>,
    }
    let result: Option<CallResult<'_>> = message
        .result
        .and_then(|r| serde_json::from_str(r.get()).ok());
    let Some(result) = result.filter(|r| r.is_error == Some(true)) else {
        return (true, None, None);
    };
    let text = result.content.map(|c| texts(c.get())).unwrap_or_default();
    // The TypeScript SDK reports its own refusals in the text: "MCP error -32602: Input
    // validation error: …", and an unknown tool as "MCP error -32602: Tool x not found".
    let category = text.strip_prefix("MCP error ").and_then(|rest| {
        let (code, why) = rest.split_once(':')?;
        let code = code.trim().parse::<i64>().ok()?;
        let unknown_tool = why.trim_start().starts_with("Tool ") && why.contains(" not found");
        Some(if unknown_tool {
            Category::ToolNotFound
        } else {
            category_of(code)
        })
    });
    (false, category, Some(text))
}

/// The text blocks of a result's `content`, one per line.
fn texts(content: &str) -> String {
    let Ok(Value::Array(blocks)) = serde_json::from_str::<Value>(content) else {
        return String::new();
    };
    let parts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    parts.join("\n")
}

/// The category a JSON-RPC error code (JSON-RPC's own, or the MCP SDKs') stands for.
fn category_of(code: i64) -> Category {
    match code {
        -32602 => Category::InvalidParameters,
        -32601 => Category::ToolNotFound,
        -32700 | -32600 => Category::MalformedCall,
        // The TypeScript SDK's request timeout.
        -32001 => Category::Timeout,
        _ => Category::ServerError,
    }
}

/// Writes outcomes to the store as they come, each group in one transaction.
pub(crate) struct OutcomeRecorder {
    sender: SyncSender<Option<Outcome>>,
    thread: JoinHandle<()>,
}

/// How many outcomes wait for the store before the relay waits for it.
const BACKLOG: usize = 4096;

impl OutcomeRecorder {
    /// A recorder writing to the store `open` opens (in its own thread, on a connection of
    /// its own).
    pub(crate) fn start(open: OpenStore, diag: Diag) -> OutcomeRecorder {
        let (sender, receiver) = sync_channel(BACKLOG);
        let thread = std::thread::Builder::new()
            .name("metagate-outcomes".into())
            .spawn(move || write_all(&open, &receiver, &diag))
            .expect("a thread starts");
        OutcomeRecorder { sender, thread }
    }

    /// A handle for the relay's threads.
    pub(crate) fn sender(&self) -> Outcomes {
        Outcomes(Some(self.sender.clone()))
    }

    /// Writes what is queued, then ends.
    pub(crate) fn finish(self) {
        let _ = self.sender.send(None);
        let _ = self.thread.join();
    }
}

/// Where the relay's threads send outcomes; nowhere with telemetry off.
#[derive(Clone, Default)]
pub(crate) struct Outcomes(Option<SyncSender<Option<Outcome>>>);

impl Outcomes {
    pub(crate) fn send(&self, call: &InFlight, ending: &Ending<'_, '_>, clock: &Clock) {
        if let Some(sender) = &self.0 {
            let outcome = outcome(call, ending, clock());
            if let Err(TrySendError::Full(o)) = sender.try_send(Some(outcome)) {
                let _ = sender.send(o);
            }
        }
    }
}

fn write_all(open: &OpenStore, receiver: &Receiver<Option<Outcome>>, diag: &Diag) {
    let mut store = match open() {
        Ok(s) => Some(s),
        Err(e) => {
            diag(&format!(
                "metagate: error: telemetry: {e}; tool outcomes are not recorded"
            ));
            None
        }
    };
    let mut failing = false;
    let mut events = Vec::new();
    while let Ok(first) = receiver.recv() {
        let mut last = first.is_none();
        events.extend(first.map(|o| Event::Outcome(Box::new(o))));
        while !last && let Ok(next) = receiver.try_recv() {
            last = next.is_none();
            events.extend(next.map(|o| Event::Outcome(Box::new(o))));
        }
        if let Some(store) = store.as_mut()
            && !events.is_empty()
        {
            match store.insert_events(&events) {
                Ok(()) => failing = false,
                Err(e) if !failing => {
                    failing = true;
                    diag(&format!(
                        "metagate: error: telemetry: {e}; tool outcomes are not recorded until it works"
                    ));
                }
                Err(_) => {}
            }
        }
        events.clear();
        if last {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::framing::read;

    fn call() -> InFlight {
        InFlight {
            decision_id: Some(9),
            tool: "read_text_file".into(),
            method: None,
            session: Some("s".into()),
            sent: Instant::now(),
            trace: crate::otel::McpCall::none(),
        }
    }

    fn answered(line: &str) -> Outcome {
        let message = read(line.as_bytes()).unwrap();
        outcome(&call(), &Ending::Answered(&message), 5)
    }

    #[test]
    fn results_become_outcomes() {
        let ok = answered(
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
        );
        assert!(ok.ok);
        assert_eq!((ok.error_type, ok.error_message), (None, None));
        assert_eq!(ok.metadata.as_ref().unwrap()["decision_id"], 9);
        let failed = answered(
            r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"ENOENT: no such file, token=sk-live-abcdefghijklmnopqrstuvwxyz0123"}]}}"#,
        );
        assert!(!failed.ok);
        assert_eq!(failed.error_type, None, "the text names no category");
        let text = failed.error_message.unwrap();
        assert!(
            text.starts_with("ENOENT") && text.contains("[REDACTED]"),
            "{text}"
        );
        let sdk = answered(
            r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"MCP error -32602: Input validation error"}]}}"#,
        );
        assert_eq!(sdk.error_type.as_deref(), Some("invalid_parameters"));
        let unknown = answered(
            r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"MCP error -32602: Tool nope not found"}]}}"#,
        );
        assert_eq!(unknown.error_type.as_deref(), Some("tool_not_found"));
        let rpc = answered(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        );
        assert_eq!(
            (
                rpc.ok,
                rpc.error_type.as_deref(),
                rpc.error_message.as_deref()
            ),
            (false, Some("tool_not_found"), Some("Method not found"))
        );
    }

    #[test]
    fn cancelled_and_abandoned_calls_are_errors_of_their_kind() {
        let c = outcome(&call(), &Ending::Cancelled(Some("user".into())), 1);
        assert_eq!(c.error_type.as_deref(), Some("cancelled"));
        let gone = outcome(&call(), &Ending::ServerGone, 1);
        assert_eq!(gone.error_type.as_deref(), Some("server_error"));
    }

    #[test]
    fn tasks_are_told_apart_from_results() {
        let task = read(
            br#"{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t-1","status":"working"}}}"#,
        )
        .unwrap();
        assert_eq!(started_task(&task).as_deref(), Some("t-1"));
        let result = read(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#).unwrap();
        assert_eq!(started_task(&result), None);
        let params =
            read(br#"{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"t-1"}}"#)
                .unwrap();
        assert_eq!(task_of(params.params).as_deref(), Some("t-1"));
    }
}
