//! Where the calls are in a document: one call, a whole assistant message or API response
//! holding several (OpenAI chat and Responses, Anthropic, Gemini), an array of calls, or a
//! transcript of many turns. `gate` and `lint` both read documents here, so they can never
//! disagree about what a document holds.
//!
//! Nothing here decides anything about a call: each one is handed on as text, with its byte
//! offset in the document, for the gate to read.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::call;

/// What the reader found.
#[derive(Debug)]
pub enum Item<'a> {
    /// A call, and where it sits.
    Call(Site<'a>),
    /// Something that looked like a call and could not be read.
    Problem(Problem),
}

/// One call, as text, and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site<'a> {
    /// Byte offset of the call from the start of the text the reader was given.
    pub offset: usize,
    /// The call's text: a slice of the document, or decoded when the call came inside a JSON
    /// string (an Agent Zero history message).
    pub text: Cow<'a, str>,
    /// What the text is, which decides what an unreadable call means.
    pub origin: Origin,
}

/// Where a call's text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A record standing on its own (a line, an array element): if no call can be read in
    /// it, the trace itself is at fault (not JSON, or of an unknown shape).
    Record,
    /// A place that holds a call by definition (`tool_calls`, a `tool_use` block, a Gemini
    /// part with `functionCall`, a Responses `function_call` item, an Agent Zero message's
    /// content): if no call can be read there, the call is malformed.
    Slot,
}

/// A part of the document that cannot be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where in the input, in bytes.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// What a whole document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// One call in its envelope (or what may be one: the gate reads it as a call).
    Call,
    /// One assistant turn or API response: an OpenAI chat message, choice or
    /// `chat.completion`; a Responses `response`; an Anthropic message or Messages API
    /// response; a Gemini response or content. Its calls are decided together.
    Message,
    /// A JSON array of calls (items that hold no call, such as a Responses `message` item,
    /// are kept as they are).
    Array,
    /// Several turns: `messages`, an array of messages, an Agent Zero history message. The
    /// calls in it were made, not about to be.
    Transcript,
}

/// The message for a document in no envelope the gate reads, with the envelopes it does.
pub const UNKNOWN_SHAPE: &str = "unknown shape: expected a tool call in an envelope the gate reads, \
    a chat message (`role` with `tool_calls` or `tool_use` content), an API response \
    (`choices`, `output`, `candidates`), an Agent Zero message (`ai`, `content`) or a \
    transcript (an array of messages, or `messages`)";

/// Reads one strict JSON document (`doc` is a slice of `base`, which offsets count from) and
/// hands every call and problem in it to `visit`, in order. Returns what the document is.
pub fn read<'a>(base: &'a str, doc: &'a str, visit: &mut dyn FnMut(Item<'a>)) -> Container {
    let reader = Reader { base };
    match doc.as_bytes().first() {
        Some(b'[') => reader.array(doc, visit),
        Some(b'{') => reader.object(doc, false, visit),
        _ => {
            reader.problem(doc, UNKNOWN_SHAPE, visit);
            Container::Call
        }
    }
}

/// Whether `text` holds a string that is one of the keys that make an object a message, a
/// response or a transcript rather than a call (a quick, conservative test: a value spelled
/// like a key only sends the text the slower way).
pub fn names_a_container_key(text: &str) -> bool {
    const KEYS: [&[u8]; 10] = [
        b"messages\"",
        b"role\"",
        b"tool_calls\"",
        b"function_call\"",
        b"ai\"",
        b"choices\"",
        b"message\"",
        b"output\"",
        b"candidates\"",
        b"parts\"",
    ];
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'"', bytes).any(|at| {
        let rest = &bytes[at + 1..];
        KEYS.iter().any(|k| rest.starts_with(k))
    })
}

struct Reader<'a> {
    base: &'a str,
}

/// What [`Reader::list`] does with each element of a list.
type EachElement<'f, 'a> = dyn FnMut(&Reader<'a>, &'a str, &mut dyn FnMut(Item<'a>)) + 'f;

/// The fields that tell a message, a response or a transcript from a call. Everything else is
/// skipped.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
    #[serde(borrow, default)]
    role: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_calls: Option<&'a RawValue>,
    #[serde(borrow, default)]
    function_call: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ai: Option<&'a RawValue>,
    #[serde(borrow, default)]
    choices: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    candidates: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parts: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "functionCall")]
    function_call_part: Option<&'a RawValue>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
    // The fields that name a call in one envelope or another: only an object holding one of
    // them is looked at as a call.
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool: Option<&'a RawValue>,
    #[serde(borrow, default)]
    function: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

impl Probe<'_> {
    /// Whether the object holds a field that names a call in some envelope.
    fn names_a_call(&self) -> bool {
        self.name.is_some()
            || self.tool_name.is_some()
            || self.tool.is_some()
            || self.function.is_some()
            || self.params.is_some()
            || self.function_call_part.is_some()
    }
}

/// An item's `type`, when it has one.
#[derive(Deserialize)]
struct Typed<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

/// Item types that are calls: an Anthropic `tool_use` block, a Responses `function_call`.
fn is_call_type(kind: &str) -> bool {
    matches!(kind, "tool_use" | "function_call")
}

impl<'a> Reader<'a> {
    fn offset(&self, part: &str) -> usize {
        part.as_ptr() as usize - self.base.as_ptr() as usize
    }

    fn problem(&self, part: &str, message: impl Into<String>, visit: &mut dyn FnMut(Item<'a>)) {
        visit(Item::Problem(Problem {
            offset: self.offset(part),
            message: message.into(),
        }));
    }

    fn site(&self, text: &'a str, origin: Origin, visit: &mut dyn FnMut(Item<'a>)) {
        visit(Item::Call(Site {
            offset: self.offset(text),
            text: Cow::Borrowed(text),
            origin,
        }));
    }

    fn array(&self, raw: &'a str, visit: &mut dyn FnMut(Item<'a>)) -> Container {
        let items = match serde_json::from_str::<Vec<&'a RawValue>>(raw) {
            Ok(items) => items,
            Err(e) => {
                self.problem(raw, format!("not a JSON array: {e}"), visit);
                return Container::Array;
            }
        };
        let mut container = Container::Array;
        for item in items {
            let item = item.get();
            if item.starts_with('{') {
                if self.object(item, true, visit) != Container::Call {
                    container = Container::Transcript;
                }
            } else {
                self.problem(item, UNKNOWN_SHAPE, visit);
            }
        }
        container
    }

    /// An object: a call, or a message, response or transcript holding calls. `in_list`: an
    /// element of an array, where items that hold no call (a `text` block, a `reasoning`
    /// item) may stand beside calls.
    fn object(&self, raw: &'a str, in_list: bool, visit: &mut dyn FnMut(Item<'a>)) -> Container {
        // Most objects are calls: one naming none of the keys of the others is one.
        if !names_a_container_key(raw) {
            if in_list {
                self.call_or_item(raw, None, visit);
            } else {
                self.site(raw, Origin::Record, visit);
            }
            return Container::Call;
        }
        let probe = match serde_json::from_str::<Probe<'a>>(raw) {
            Ok(p) => p,
            Err(e) => {
                self.problem(raw, format!("cannot read this object: {e}"), visit);
                return Container::Call;
            }
        };
        // An item of a Responses `output` list: a `message` item holds text, not a turn.
        if in_list && probe.kind.as_deref() == Some("message") {
            self.call_or_item(raw, Some(&probe), visit);
            return Container::Call;
        }
        if let Some(messages) = probe.messages {
            let messages = messages.get();
            if messages.starts_with('[') {
                self.array(messages, visit);
            } else {
                self.problem(messages, "`messages` must be an array of messages", visit);
            }
            return Container::Transcript;
        }
        // An envelope naming a call is a call, whatever else it carries: the gate refuses a
        // call with a second place for arguments or calls, naming both.
        if probe.names_a_call() && call::shape_of_text(raw).is_some() {
            self.site(raw, Origin::Record, visit);
            return Container::Call;
        }
        if let Some(choices) = probe.choices {
            self.list(choices.get(), "choices", visit, &mut |r, item, visit| {
                r.choice(item, visit)
            });
            return Container::Message;
        }
        if let Some(output) = probe.output
            && output.get().starts_with('[')
        {
            self.list(output.get(), "output", visit, &mut |r, item, visit| {
                r.call_or_item(item, None, visit)
            });
            return Container::Message;
        }
        if let Some(candidates) = probe.candidates {
            self.list(
                candidates.get(),
                "candidates",
                visit,
                &mut |r, item, visit| r.candidate(item, visit),
            );
            return Container::Message;
        }
        if let Some(message) = probe.message
            && message.get().starts_with('{')
        {
            // A chat completion's choice: `{"index", "message", "finish_reason"}`.
            self.choice(raw, visit);
            return Container::Message;
        }
        if let Some(parts) = probe.parts {
            self.parts(parts.get(), visit);
            return Container::Message;
        }
        if probe.role.is_some() || probe.tool_calls.is_some() {
            self.message(&probe, visit);
            return Container::Message;
        }
        if let (Some(ai), Some(content)) = (probe.ai, probe.content) {
            self.agent_zero(ai.get(), content.get(), visit);
            return Container::Transcript;
        }
        if in_list {
            self.call_or_item(raw, Some(&probe), visit);
        } else {
            self.site(raw, Origin::Record, visit);
        }
        Container::Call
    }

    /// Each element of the array `raw` (the value of `key`), handed to `each`.
    fn list(
        &self,
        raw: &'a str,
        key: &str,
        visit: &mut dyn FnMut(Item<'a>),
        each: &mut EachElement<'_, 'a>,
    ) {
        match serde_json::from_str::<Vec<&'a RawValue>>(raw) {
            Ok(items) => {
                for item in items {
                    let item = item.get();
                    if item.starts_with('{') {
                        each(self, item, visit);
                    } else {
                        self.problem(
                            item,
                            format!("an element of `{key}` is not an object"),
                            visit,
                        );
                    }
                }
            }
            Err(_) => self.problem(raw, format!("`{key}` must be an array"), visit),
        }
    }

    /// A chat completion's choice: the calls of its `message`.
    fn choice(&self, raw: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
        #[derive(Deserialize)]
        struct Choice<'a> {
            #[serde(borrow, default)]
            message: Option<&'a RawValue>,
        }
        match serde_json::from_str::<Choice<'a>>(raw) {
            Ok(Choice {
                message: Some(message),
            }) if message.get().starts_with('{') => {
                match serde_json::from_str::<Probe<'a>>(message.get()) {
                    Ok(probe) => self.message(&probe, visit),
                    Err(e) => self.problem(
                        message.get(),
                        format!("cannot read this message: {e}"),
                        visit,
                    ),
                }
            }
            Ok(_) => {}
            Err(e) => self.problem(raw, format!("cannot read this choice: {e}"), visit),
        }
    }

    /// A Gemini candidate: the calls of its `content.parts`.
    fn candidate(&self, raw: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
        #[derive(Deserialize)]
        struct Candidate<'a> {
            #[serde(borrow, default)]
            content: Option<&'a RawValue>,
        }
        #[derive(Deserialize)]
        struct Content<'a> {
            #[serde(borrow, default)]
            parts: Option<&'a RawValue>,
        }
        let parts = serde_json::from_str::<Candidate<'a>>(raw)
            .ok()
            .and_then(|c| c.content)
            .and_then(|c| serde_json::from_str::<Content<'a>>(c.get()).ok())
            .and_then(|c| c.parts);
        if let Some(parts) = parts {
            self.parts(parts.get(), visit);
        }
    }

    /// Gemini parts: each part with a `functionCall` is a call (the part is its envelope).
    fn parts(&self, raw: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
        self.list(raw, "parts", visit, &mut |r, part, visit| {
            let is_call = serde_json::from_str::<Probe<'_>>(part)
                .is_ok_and(|p| p.function_call_part.is_some());
            if is_call {
                r.site(part, Origin::Slot, visit);
            }
        });
    }

    /// An object standing where a call or another item may be: a call site, or (for a typed
    /// item that is no call, such as a `text` block, a Responses `message` or `reasoning`
    /// item, a Gemini `text` part) nothing.
    fn call_or_item(
        &self,
        raw: &'a str,
        probe: Option<&Probe<'a>>,
        visit: &mut dyn FnMut(Item<'a>),
    ) {
        let owned;
        let probe = match probe {
            Some(p) => Some(p),
            None => {
                owned = serde_json::from_str::<Probe<'a>>(raw).ok();
                owned.as_ref()
            }
        };
        if let Some(p) = probe {
            if let Some(kind) = p.kind.as_deref() {
                if is_call_type(kind) {
                    return self.site(raw, Origin::Slot, visit);
                }
                if call::shape_of_text(raw).is_none() {
                    // A typed item of another kind: text, reasoning, a message of the Responses API.
                    if kind == "message"
                        && let Some(content) = p.content
                    {
                        self.blocks(content.get(), visit);
                    }
                    return;
                }
            }
            if p.text.is_some() && call::shape_of_text(raw).is_none() {
                return;
            }
        }
        self.site(raw, Origin::Record, visit);
    }

    /// An OpenAI or Anthropic chat message: its `tool_calls`, its legacy `function_call`,
    /// and the `tool_use` blocks of its content.
    fn message(&self, probe: &Probe<'a>, visit: &mut dyn FnMut(Item<'a>)) {
        if let Some(calls) = probe.tool_calls.map(RawValue::get) {
            match serde_json::from_str::<Option<Vec<&'a RawValue>>>(calls) {
                Ok(calls) => {
                    for call in calls.into_iter().flatten() {
                        self.site(call.get(), Origin::Slot, visit);
                    }
                }
                Err(_) => self.problem(calls, "`tool_calls` must be an array of calls", visit),
            }
        }
        if let Some(call) = probe.function_call.map(RawValue::get)
            && call != "null"
        {
            self.site(call, Origin::Slot, visit);
        }
        if let Some(content) = probe.content.map(RawValue::get) {
            self.blocks(content, visit);
        }
    }

    /// Content blocks: each `tool_use` block is a call.
    fn blocks(&self, content: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
        if !content.starts_with('[') {
            return;
        }
        if let Ok(blocks) = serde_json::from_str::<Vec<&'a RawValue>>(content) {
            for block in blocks {
                let block = block.get();
                let is_call = serde_json::from_str::<Typed<'_>>(block)
                    .is_ok_and(|b| b.kind.as_deref().is_some_and(is_call_type));
                if is_call {
                    self.site(block, Origin::Slot, visit);
                }
            }
        }
    }

    /// An Agent Zero history message `{"ai": true, "content": …}`: the content is what the
    /// model wrote, the call (as text, or already parsed into an object).
    fn agent_zero(&self, ai: &'a str, content: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
        match ai {
            "true" => {}
            // A person's turn: no call in it.
            "false" => return,
            _ => {
                return self.problem(
                    ai,
                    "an Agent Zero message whose `ai` is neither true nor false",
                    visit,
                );
            }
        }
        match content.as_bytes().first() {
            Some(b'"') => match serde_json::from_str::<String>(content) {
                Ok(text) => visit(Item::Call(Site {
                    offset: self.offset(content),
                    text: Cow::Owned(text),
                    origin: Origin::Slot,
                })),
                Err(e) => self.problem(content, format!("cannot read `content`: {e}"), visit),
            },
            Some(b'{') => self.site(content, Origin::Slot, visit),
            _ => self.problem(
                content,
                "the `content` of an Agent Zero AI message is neither a call nor a string holding one",
                visit,
            ),
        }
    }
}
