//! A whole assistant message, API response or array of calls: each call decided on its own,
//! and the document answered in kind. When every call passes, the document goes out with each
//! call corrected in its place and every other byte as it came. When any is refused, the
//! answer holds what the agent loop sends back: the document (passing calls corrected), one
//! tool result in the API's own shape per refused call, and which calls those are.

use serde::Serialize;
use serde_json::{Value, json};

use super::answer::Answer;
use super::decision::{malformed, malformed_in};
use super::render::{ReportDoc, report_doc};
use super::stages::decide_found;
use super::{Decision, Gate, Options, Sink, Verdict};
use metagate_core::correct::Report;
use metagate_core::error::ToolError;
use metagate_wire::call::{NotACall, Shape};
use metagate_wire::dialects::{self, Reading};
use metagate_wire::document::{self, Container, Item};
use metagate_wire::scan;

/// The most calls one message may hold. What deciding a message holds is bounded by it: the
/// document (at most [`super::MAX_DOCUMENT`] bytes) and one decision per call. No model sends
/// a thousand calls in one turn; 300,000 of them in a 30 MB message took 531 MB to decide.
pub const MAX_CALLS: usize = 1024;

/// One call of a message and where it sits.
#[derive(Debug, Clone)]
pub(crate) struct PlacedDecision<'a> {
    /// The byte range of the call's text in the document.
    start: usize,
    end: usize,
    /// The call's id as the document gives it, if it gives one.
    id: Option<Value>,
    /// The envelope a call in this place has, whether or not this one could be read.
    shape: Option<Shape>,
    pub(crate) decision: Decision<'a>,
}

/// Every call of a document, decided.
#[derive(Debug, Clone)]
pub(crate) struct MessageAnswer<'a> {
    pub(crate) document: &'a [u8],
    pub(crate) calls: Vec<PlacedDecision<'a>>,
    /// The document is a text holding calls in a dialect (not JSON): written back byte for
    /// byte around its calls, line breaks and all; or, when this holds a shape (`--emit`),
    /// its calls alone as a JSON array in that shape.
    pub(crate) text: Option<Option<Shape>>,
}

/// Decides every call in the document `input`: strict JSON that names no envelope
/// (`not_a_call` says why it is no call). A document holding no calls in any way a message,
/// response or array does is refused as that.
pub(super) fn decide_calls<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    not_a_call: NotACall,
    sink: &mut dyn Sink,
    latency: &mut dyn FnMut() -> u64,
) -> Answer<'a> {
    let Ok(text) = std::str::from_utf8(input) else {
        return refused(
            gate,
            input,
            sink,
            latency,
            "the document is not UTF-8".to_string(),
        );
    };
    let doc = text.trim_ascii();
    let mut sites = Vec::new();
    let mut problems = Vec::new();
    let mut more = 0usize;
    let container = document::read(text, doc, &mut |item| match item {
        Item::Call(_) if sites.len() >= MAX_CALLS => more += 1,
        Item::Call(site) => sites.push(site),
        Item::Problem(p) => problems.push(p),
    });
    if more > 0 {
        return refused(
            gate,
            input,
            sink,
            latency,
            format!(
                "the message holds {} calls, more than the {MAX_CALLS} metagate decides in one message",
                sites.len() + more
            ),
        );
    }
    if container == Container::Call {
        // JSON that holds calls in a dialect's own envelope (`{"tool_call": {…}}`).
        match dialects::read(text) {
            Some(Ok(reading)) => return decide_text_calls(gate, input, reading, sink, latency),
            Some(Err(r)) => return refused(gate, input, sink, latency, r.describe(text)),
            None => {}
        }
    }
    if container == Container::Call {
        let d = Decision::rejected(
            input,
            malformed_in(not_a_call.message, not_a_call.shape),
            Report::default(),
        );
        sink.record(gate.policy, &d, latency());
        return Answer::One(d);
    }
    if container == Container::Transcript {
        return refused(
            gate,
            input,
            sink,
            latency,
            "this is a transcript of past turns, not calls to make: send the assistant's last \
             message (or the calls in it)"
                .to_string(),
        );
    }
    if let Some(p) = problems.first() {
        // Not JSON after all: a text dialect opening with `[` (`[TOOL_CALLS]…`, `[f(a=1)]`).
        return match dialects::read(text) {
            Some(Ok(reading)) => decide_text_calls(gate, input, reading, sink, latency),
            Some(Err(r)) => refused(gate, input, sink, latency, r.describe(text)),
            None => refused(
                gate,
                input,
                sink,
                latency,
                format!("the message cannot be read: {}", p.message),
            ),
        };
    }
    if sites.is_empty() {
        // Not the model's mistake to fix by calling something: the agent sent a turn that
        // answers in text, which needs no gate.
        let e = malformed("no tool call in the message").suggest(
            "A message of text alone is the model's answer, not a call: pass metagate only the \
             turns that call tools (finish_reason \"tool_calls\", stop_reason \"tool_use\", \
             function_call items, functionCall parts)",
        );
        let d = Decision::rejected(input, e, Report::default());
        sink.record(gate.policy, &d, latency());
        return Answer::One(d);
    }
    // Inside a document every call keeps its own envelope: `--emit` converts single calls.
    let gate = Gate {
        options: Options {
            emit: None,
            ..gate.options
        },
        ..*gate
    };
    let mut calls = Vec::with_capacity(sites.len());
    for site in sites {
        let start = site.offset;
        let end = start + site.text.len();
        let bytes = &input[start..end];
        let now = sink.now_ms();
        let mut decision = gate.decide_call(bytes, sink.facts(), now);
        let shape = decision.shape.or_else(|| expected_shape(bytes));
        if decision.call.is_none() {
            decision.unread_id = raw_id(bytes);
        }
        let id = decision.call_id();
        sink.record(gate.policy, &decision, latency());
        calls.push(PlacedDecision {
            start,
            end,
            id,
            shape,
            decision,
        });
    }
    Answer::Message(MessageAnswer {
        document: input,
        calls,
        text: None,
    })
}

/// `input` refused as a whole, for `message`.
fn refused<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    sink: &mut dyn Sink,
    latency: &mut dyn FnMut() -> u64,
    message: String,
) -> Answer<'a> {
    let d = Decision::rejected(input, malformed(message), Report::default());
    sink.record(gate.policy, &d, latency());
    Answer::One(d)
}

/// Decides every call a dialect reader found in the text `input`, each on its own: one call
/// is answered as a call (the text around it kept), several as a message.
pub(super) fn decide_text_calls<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    mut reading: Reading,
    sink: &mut dyn Sink,
    latency: &mut dyn FnMut() -> u64,
) -> Answer<'a> {
    if reading.calls.len() == 1 {
        let found = reading.calls.pop().expect("one call");
        let now = sink.now_ms();
        let d = decide_found(gate, input, reading.dialect, found, sink.facts(), now);
        sink.record(gate.policy, &d, latency());
        return Answer::One(d);
    }
    let emit = gate.options.emit;
    let gate = Gate {
        options: Options {
            emit: None,
            ..gate.options
        },
        ..*gate
    };
    let mut calls = Vec::with_capacity(reading.calls.len());
    for found in reading.calls {
        let (start, end) = (found.span.start, found.span.end);
        let id = found.id.clone().map(Value::String);
        let now = sink.now_ms();
        let found = dialects::Found {
            span: 0..end - start,
            ..found
        };
        let decision = decide_found(
            &gate,
            &input[start..end],
            reading.dialect,
            found,
            sink.facts(),
            now,
        );
        sink.record(gate.policy, &decision, latency());
        calls.push(PlacedDecision {
            start,
            end,
            id,
            shape: None,
            decision,
        });
    }
    Answer::Message(MessageAnswer {
        document: input,
        calls,
        text: Some(emit),
    })
}

/// The envelope a call's place implies, read from its identifying fields when the call
/// itself could not be read.
fn expected_shape(raw: &[u8]) -> Option<Shape> {
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(borrow, default, rename = "type")]
        kind: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        function: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default, rename = "functionCall")]
        function_call: Option<&'a serde_json::value::RawValue>,
    }
    let probe: Probe<'_> = serde_json::from_slice(raw).ok()?;
    match probe.kind.as_deref() {
        Some("tool_use") => Some(Shape::Anthropic),
        Some("function_call") => Some(Shape::OpenAiResponses),
        _ if probe.function_call.is_some() => Some(Shape::Gemini),
        _ if probe.function.is_some() => Some(Shape::OpenAiChat),
        _ => None,
    }
}

/// The id an unreadable call still carries (`id`, or `call_id` in the Responses API).
fn raw_id(raw: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Ids {
        #[serde(default)]
        id: Option<Value>,
        #[serde(default)]
        call_id: Option<Value>,
    }
    let ids: Ids = serde_json::from_slice(raw).ok()?;
    ids.call_id
        .or(ids.id)
        .filter(|v| v.is_string() || v.is_number())
}

impl MessageAnswer<'_> {
    /// The worst verdict among the calls.
    pub(super) fn verdict(&self) -> Verdict {
        let mut worst = Verdict::Pass;
        for c in &self.calls {
            match c.decision.verdict {
                Verdict::Rejected => return Verdict::Rejected,
                Verdict::Corrected => worst = Verdict::Corrected,
                Verdict::Pass => {}
            }
        }
        worst
    }

    /// The document with every passing call as decided (corrected in its place) and every
    /// refused one as it came, on one line.
    fn write_document(&self, out: &mut Vec<u8>) {
        let mut at = 0;
        let doc_start = out.len();
        for c in &self.calls {
            out.extend_from_slice(&self.document[at..c.start]);
            if c.decision.error.is_some() {
                out.extend_from_slice(&self.document[c.start..c.end]);
            } else {
                c.decision.write_call(out);
            }
            at = c.end;
        }
        out.extend_from_slice(&self.document[at..]);
        if self.text.is_some() {
            return;
        }
        // Line breaks can only stand between the tokens of valid JSON: dropping them keeps
        // every value as it came and the answer on one line.
        let written = &out[doc_start..];
        let trimmed = written.trim_ascii();
        if trimmed.len() == written.len() && memchr::memchr2(b'\n', b'\r', written).is_none() {
            return;
        }
        let (lead, len) = (
            trimmed.as_ptr() as usize - written.as_ptr() as usize,
            trimmed.len(),
        );
        let one_line: Vec<u8> = out[doc_start + lead..doc_start + lead + len]
            .iter()
            .copied()
            .filter(|b| !matches!(b, b'\n' | b'\r'))
            .collect();
        out.truncate(doc_start);
        out.extend_from_slice(&one_line);
    }

    /// Writes the answer's output line (without the newline).
    pub(crate) fn render(&self, options: &Options, out: &mut Vec<u8>) {
        if options.report {
            #[derive(Serialize)]
            struct CallReport<'r> {
                index: usize,
                id: Option<&'r Value>,
                #[serde(flatten)]
                report: ReportDoc<'r>,
            }
            let written: Vec<Option<String>> = self
                .calls
                .iter()
                .map(|c| report_call(&c.decision))
                .collect();
            let mut calls = Vec::with_capacity(self.calls.len());
            for (index, (c, call)) in self.calls.iter().zip(&written).enumerate() {
                calls.push(CallReport {
                    index,
                    id: c.id.as_ref(),
                    report: report_doc(&c.decision, call.as_deref()),
                });
            }
            let doc = json!({
                "verdict": self.verdict().as_str(),
                "calls": calls,
            });
            scan::write_value(&doc, out);
            return;
        }
        if self.verdict() != Verdict::Rejected {
            if let Some(Some(shape)) = self.text {
                return self.write_calls_as(shape, out);
            }
            return self.write_document(out);
        }
        let mut document = Vec::new();
        self.write_document(&mut document);
        let document: Value = match self.text {
            Some(_) => Value::String(String::from_utf8_lossy(&document).into_owned()),
            None => serde_json::from_slice(&document).expect("the document was strict JSON"),
        };
        let refused: Vec<&PlacedDecision<'_>> = self
            .calls
            .iter()
            .filter(|c| c.decision.error.is_some())
            .collect();
        let results: Vec<Value> = refused.iter().map(|c| tool_result(c)).collect();
        let listed: Vec<Value> = refused
            .iter()
            .map(|c| {
                let index = self
                    .calls
                    .iter()
                    .position(|o| std::ptr::eq(o, *c))
                    .expect("a refused call is one of the calls");
                json!({
                    "index": index,
                    "id": c.id,
                    "error": c.decision.error.as_ref().map(ToolError::to_json),
                })
            })
            .collect();
        let doc = json!({
            "message": document,
            "tool_results": results,
            "refused": listed,
        });
        scan::write_value(&doc, out);
    }
}

impl MessageAnswer<'_> {
    /// The calls of a text alone, as a JSON array of calls in `shape` (`--emit`).
    fn write_calls_as(&self, shape: Shape, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, c) in self.calls.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            if let Some(call) = &c.decision.call {
                call.write_as(shape, out);
            }
        }
        out.push(b']');
    }
}

/// The call as decided, as JSON text, for a report (none when refused).
fn report_call(decision: &Decision<'_>) -> Option<String> {
    let mut out = Vec::new();
    decision.write_json(&mut out);
    (!out.is_empty()).then(|| String::from_utf8(out).expect("the gate writes UTF-8"))
}

/// The tool result a refused call gets, in its API's own shape; the rejection document where
/// the API has none of its own.
fn tool_result(c: &PlacedDecision<'_>) -> Value {
    let error = c
        .decision
        .error
        .as_ref()
        .expect("only refused calls get a result");
    let feedback = error.feedback();
    let id = c.id.clone().unwrap_or(Value::Null);
    let tool = c.decision.tool().unwrap_or_default();
    tool_result_in(c.shape, id, tool, &feedback, true).unwrap_or_else(|| {
        json!({
            "error": error.to_json(),
            "feedback": feedback,
        })
    })
}

/// A tool's result (`text`, an error when `is_error`) in the shape of the API the call came
/// in, answering the call `id`; `None` for shapes whose APIs have no tool result of their own.
pub(crate) fn tool_result_in(
    shape: Option<Shape>,
    id: Value,
    tool: &str,
    text: &str,
    is_error: bool,
) -> Option<Value> {
    Some(match shape? {
        Shape::OpenAiChat => json!({
            "role": "tool",
            "tool_call_id": id,
            "content": text,
        }),
        Shape::Anthropic => json!({
            "type": "tool_result",
            "tool_use_id": id,
            "content": text,
            "is_error": is_error,
        }),
        Shape::OpenAiResponses => json!({
            "type": "function_call_output",
            "call_id": id,
            "output": text,
        }),
        Shape::Gemini => {
            let key = if is_error { "error" } else { "output" };
            let mut response = json!({
                "name": tool,
                "response": {key: text},
            });
            if !id.is_null() {
                response["id"] = id;
            }
            json!({ "functionResponse": response })
        }
        Shape::Mcp => json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {
                "content": [{"type": "text", "text": text}],
                "isError": is_error,
            },
        }),
        Shape::AgentZero | Shape::Plain | Shape::Llama | Shape::LangChain => return None,
    })
}
