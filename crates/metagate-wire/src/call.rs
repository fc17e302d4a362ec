//! Tool-call envelopes: recognizing the shape a call came in, and writing it back out
//! (docs/gate.md, "Envelopes").
//!
//! A [`Call`] keeps every field of the envelope that the gate does not own (Agent Zero's
//! `thoughts`, ids, `jsonrpc`…) as the raw JSON text it came in, so those fields go back out
//! byte for byte and in their place, and so the gate never spends time building values it
//! will not look at. Only the name and the arguments are read.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::args::Args;
use crate::correction::{Correction, Kind};
use crate::repair::{self, json_type_phrase};
use crate::scan;

/// The envelope shapes `gate` reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Agent Zero's `{"tool_name","tool_args"}`.
    AgentZero,
    /// OpenAI Chat Completions' `tool_calls` item.
    OpenAiChat,
    /// OpenAI Responses' `function_call` item.
    OpenAiResponses,
    /// Anthropic's `tool_use` block.
    Anthropic,
    /// MCP's `tools/call` request.
    Mcp,
    /// Gemini's `functionCall`.
    Gemini,
    /// `{"name","arguments"}`.
    Plain,
    /// Llama's `{"name", "parameters"}`.
    Llama,
    /// LangChain's `ToolCall`, `{"name", "args", "id", "type": "tool_call"}` (an `AIMessage`'s
    /// `tool_calls` items).
    LangChain,
}

impl Shape {
    /// Every envelope, in the order the docs list them.
    pub const ALL: [Shape; 9] = [
        Shape::AgentZero,
        Shape::OpenAiChat,
        Shape::OpenAiResponses,
        Shape::Anthropic,
        Shape::Mcp,
        Shape::Gemini,
        Shape::Plain,
        Shape::Llama,
        Shape::LangChain,
    ];

    /// The name reports and telemetry use.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::AgentZero => "agent-zero",
            Shape::OpenAiChat => "openai",
            Shape::OpenAiResponses => "openai-responses",
            Shape::Anthropic => "anthropic",
            Shape::Mcp => "mcp",
            Shape::Gemini => "gemini",
            Shape::Plain => "plain",
            Shape::Llama => "llama",
            Shape::LangChain => "langchain",
        }
    }

    /// What the shape looks like, in a few words.
    pub fn looks_like(self) -> &'static str {
        match self {
            Shape::AgentZero => "{\"tool_name\", \"tool_args\"}",
            Shape::OpenAiChat => "OpenAI chat tool_calls item",
            Shape::OpenAiResponses => "OpenAI Responses function_call item",
            Shape::Anthropic => "Anthropic tool_use block",
            Shape::Mcp => "MCP tools/call request",
            Shape::Gemini => "Gemini functionCall part",
            Shape::Plain => "{\"name\", \"arguments\"}",
            Shape::Llama => "{\"name\", \"parameters\"} (Llama)",
            Shape::LangChain => "{\"name\", \"args\", \"type\": \"tool_call\"} (LangChain)",
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.to_ascii_lowercase().replace('_', "-");
        Shape::ALL
            .into_iter()
            .find(|shape| shape.as_str() == wanted)
            .ok_or_else(|| {
                let names: Vec<_> = Shape::ALL.iter().map(|s| s.as_str()).collect();
                format!("unknown shape {s:?} (one of: {})", names.join(", "))
            })
    }
}

/// How the arguments were carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgsForm {
    Object,
    /// A JSON-encoded string (OpenAI `arguments`); written back as a string.
    String,
    /// No arguments field.
    Absent,
    /// An arguments field holding `null`.
    Null,
}

/// Why a document is not a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotACall {
    /// Why the input is no call.
    pub message: String,
    /// Whether the document may hold calls in another way (a message, a response, an array):
    /// it is strict JSON, but no envelope's fields name a call in it.
    pub holds_no_envelope: bool,
    /// The envelope the call was recognized as, when it got that far: the model is shown
    /// how to send a call in it.
    pub shape: Option<Shape>,
}

impl fmt::Display for NotACall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for NotACall {}

fn not_a_call(message: impl Into<String>) -> NotACall {
    NotACall {
        message: message.into(),
        holds_no_envelope: false,
        shape: None,
    }
}

/// One field of the envelope.
#[derive(Debug, Clone)]
enum Slot<'a> {
    /// Untouched JSON text, borrowed from the input.
    Raw(&'a str),
    /// An object's text, already split into its fields by the scan.
    Split(&'a str, Vec<scan::Field<'a>>),
    /// A value from a document that had to be repaired first.
    Owned(Value),
    /// Where the arguments go.
    Args,
    /// The object holding name and arguments (`function`, `params`, `functionCall`).
    Holder(Fields<'a>),
}

type Fields<'a> = Vec<(Cow<'a, str>, Slot<'a>)>;

/// One tool call, read out of its envelope.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// The envelope it came in, which the answer keeps.
    pub shape: Shape,
    /// The name as sent, with any `:method` suffix.
    pub name: Cow<'a, str>,
    args_form: ArgsForm,
    /// Its arguments.
    pub args: Args<'a>,
    fields: Fields<'a>,
    /// Arguments sent as one bare value, not an object (smolagents'
    /// `"arguments": "image.png"`): the call has no arguments until
    /// [`Call::place_bare_argument`] names the one this value is.
    bare: Option<Value>,
}

/// Where each shape keeps its name and arguments.
struct Slots {
    /// Key of the nested object holding name and arguments, if any.
    holder: Option<&'static str>,
    name: &'static str,
    args: &'static str,
}

fn slots(shape: Shape) -> Slots {
    let (holder, name, args) = match shape {
        Shape::AgentZero => (None, "tool_name", "tool_args"),
        Shape::OpenAiChat => (Some("function"), "name", "arguments"),
        Shape::OpenAiResponses => (None, "name", "arguments"),
        Shape::Anthropic => (None, "name", "input"),
        Shape::Mcp => (Some("params"), "name", "arguments"),
        Shape::Gemini => (Some("functionCall"), "name", "args"),
        Shape::Plain => (None, "name", "arguments"),
        Shape::Llama => (None, "name", "parameters"),
        Shape::LangChain => (None, "name", "args"),
    };
    Slots { holder, name, args }
}

/// Whether a field holds `null`.
fn is_null(slot: &Slot<'_>) -> bool {
    match slot {
        Slot::Raw(raw) => *raw == "null",
        Slot::Owned(v) => v.is_null(),
        _ => false,
    }
}

/// A view of a field's JSON: its first byte tells its type without parsing it.
trait Peek {
    fn first_byte(&self) -> u8;
    fn is_object(&self) -> bool {
        self.first_byte() == b'{'
    }
}

impl Peek for Slot<'_> {
    fn first_byte(&self) -> u8 {
        match self {
            Slot::Raw(raw) => raw.as_bytes().first().copied().unwrap_or(0),
            Slot::Split(..) => b'{',
            Slot::Owned(Value::Object(_)) | Slot::Holder(_) => b'{',
            Slot::Owned(Value::String(_)) => b'"',
            Slot::Owned(Value::Array(_)) => b'[',
            Slot::Owned(_) | Slot::Args => 0,
        }
    }
}

fn get<'f, 'a>(fields: &'f Fields<'a>, key: &str) -> Option<&'f Slot<'a>> {
    fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn position(fields: &Fields<'_>, key: &str) -> Option<usize> {
    fields.iter().position(|(k, _)| k == key)
}

/// The string a field holds, if it is one.
fn slot_str<'s>(slot: &'s Slot<'_>) -> Option<Cow<'s, str>> {
    match slot {
        Slot::Raw(raw) if raw.starts_with('"') => scan::decode_string(raw),
        Slot::Owned(Value::String(s)) => Some(Cow::Borrowed(s)),
        _ => None,
    }
}

/// The string a field holds, for as long as the input lives.
fn owned_str<'a>(slot: &Slot<'a>) -> Option<Cow<'a, str>> {
    match slot {
        Slot::Raw(raw) if raw.starts_with('"') => scan::decode_string(raw),
        Slot::Owned(Value::String(s)) => Some(Cow::Owned(s.clone())),
        _ => None,
    }
}

fn slot_value(slot: &Slot<'_>) -> Option<Value> {
    match slot {
        Slot::Raw(raw) | Slot::Split(raw, _) => serde_json::from_str(raw).ok(),
        Slot::Owned(v) => Some(v.clone()),
        Slot::Args | Slot::Holder(_) => None,
    }
}

/// A key an envelope holds twice is two readings of one call: this reader would take the
/// first, most tools' JSON readers the last, so the call is refused with both named rather
/// than checked as one thing and run as another.
/// `holder` names the nested object `fields` are from; `None` is the call itself.
fn twice(fields: &Fields<'_>, holder: Option<&str>) -> Result<(), NotACall> {
    for (i, (key, first)) in fields.iter().enumerate() {
        if let Some((_, again)) = fields[i + 1..].iter().find(|(k, _)| k == key) {
            let whole = holder.map_or_else(|| "the call".to_string(), |h| format!("`{h}`"));
            return Err(not_a_call(format!(
                "{whole} has `{key}` twice ({} and {}): which one is meant cannot be told; \
                 send each field once",
                shown(first),
                shown(again)
            )));
        }
    }
    Ok(())
}

/// A field's value as sent, cut to a length a message can carry.
fn shown(slot: &Slot<'_>) -> String {
    let text = match slot {
        Slot::Raw(raw) | Slot::Split(raw, _) => Cow::Borrowed(*raw),
        Slot::Owned(v) => Cow::Owned(v.to_string()),
        Slot::Args | Slot::Holder(_) => Cow::Borrowed("{…}"),
    };
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.into_owned(),
    }
}

/// Which envelope a document is, by the fields that identify it; for shapes that nest the
/// call, also the nested object's fields (read once, here).
/// Where the keys that tell envelopes apart are, found in one pass over a call's fields (a
/// key given twice is refused before this, so the first is the only one).
#[derive(Default)]
struct Marks {
    params: Option<usize>,
    function_call: Option<usize>,
    function: Option<usize>,
    kind: Option<usize>,
    tool_name: Option<usize>,
    tool: Option<usize>,
    name: Option<usize>,
    input: Option<usize>,
    arguments: Option<usize>,
    parameters: Option<usize>,
    args: Option<usize>,
    method: Option<usize>,
    /// How many keys of [`ARGUMENT_KEYS`] the call holds: more than one is a second place for
    /// the arguments, looked at closely only then.
    argument_keys: usize,
}

impl Marks {
    fn of(fields: &Fields<'_>) -> Marks {
        let mut m = Marks::default();
        for (i, (key, _)) in fields.iter().enumerate() {
            // The first byte rules out most keys (`thoughts`, `id`) before any comparison of
            // the whole key. A key that may hold arguments is counted as it is matched.
            let mark = match (key.as_bytes().first(), key.as_ref()) {
                (Some(b'p'), "params") => &mut m.params,
                (Some(b'f'), "functionCall") => &mut m.function_call,
                (Some(b'f'), "function") => &mut m.function,
                (Some(b't'), "type") => &mut m.kind,
                (Some(b't'), "tool_name") => &mut m.tool_name,
                (Some(b't'), "tool") => &mut m.tool,
                (Some(b'n'), "name") => &mut m.name,
                (Some(b'i'), "input") => &mut m.input,
                (Some(b'a'), "arguments") => &mut m.arguments,
                (Some(b'p'), "parameters") => &mut m.parameters,
                (Some(b'a'), "args") => &mut m.args,
                (Some(b'm'), "method") => &mut m.method,
                (Some(b'a' | b't' | b'k' | b'f'), other) => {
                    if ARGUMENT_KEYS.contains(&other) {
                        m.argument_keys += 1;
                    }
                    continue;
                }
                _ => continue,
            };
            if matches!(
                key.as_ref(),
                "params"
                    | "functionCall"
                    | "function"
                    | "input"
                    | "arguments"
                    | "parameters"
                    | "args"
            ) {
                m.argument_keys += 1;
            }
            mark.get_or_insert(i);
        }
        m
    }
}

fn shape_of<'a>(fields: &Fields<'a>) -> Option<(Shape, Option<Fields<'a>>)> {
    shape_marked(fields, &Marks::of(fields))
}

fn shape_marked<'a>(fields: &Fields<'a>, m: &Marks) -> Option<(Shape, Option<Fields<'a>>)> {
    let at = |mark: Option<usize>| mark.map(|i| &fields[i].1);
    let str_at = |mark: Option<usize>| at(mark).and_then(slot_str);
    if let Some(params) = at(m.params).filter(|p| p.is_object())
        && str_at(m.method).as_deref() == Some("tools/call")
    {
        return Some((Shape::Mcp, object_fields(params)));
    }
    if let Some(call) = at(m.function_call).filter(|c| c.is_object()) {
        return Some((Shape::Gemini, object_fields(call)));
    }
    if let Some(f) = at(m.function).filter(|f| f.is_object())
        && let Some(inner) = object_fields(f)
        && get(&inner, "name").is_some()
    {
        return Some((Shape::OpenAiChat, Some(inner)));
    }
    let flat = |shape| Some((shape, None));
    match str_at(m.kind).as_deref() {
        Some("tool_use") => return flat(Shape::Anthropic),
        Some("function_call") => return flat(Shape::OpenAiResponses),
        _ => {}
    }
    if m.tool_name.is_some() || at(m.tool).is_some_and(|t| t.first_byte() == b'"') {
        return flat(Shape::AgentZero);
    }
    // `"name": null` names nothing: a LangChain `AIMessage` carries one beside its
    // `tool_calls`, which are its calls.
    if at(m.name).is_some_and(|name| !is_null(name)) {
        // Anthropic's content block without its `type`: the arguments are under `input`.
        if m.input.is_some() && m.arguments.is_none() {
            return flat(Shape::Anthropic);
        }
        if m.parameters.is_some() && m.arguments.is_none() && m.input.is_none() {
            return flat(Shape::Llama);
        }
        if m.args.is_some() && m.arguments.is_none() && m.input.is_none() && m.parameters.is_none()
        {
            return flat(Shape::LangChain);
        }
        return flat(Shape::Plain);
    }
    None
}

/// Another envelope's call in the same document (`tool_name` beside `function`, …): a
/// consumer of that envelope would run a call this gate never checked, so the document is
/// refused rather than half checked. Each envelope is named by the fields that identify it.
fn second_envelope(
    fields: &Fields<'_>,
    m: &Marks,
    shape: Shape,
) -> Option<(&'static str, &'static str)> {
    const MCP: &str = "`params` (MCP)";
    const GEMINI: &str = "`functionCall` (Gemini)";
    const OPENAI: &str = "`function` (OpenAI)";
    const AGENT_ZERO: &str = "`tool_name` (Agent Zero)";
    const NAMED: &str = "`name` with `input` or `arguments`";
    let at = |mark: Option<usize>| mark.map(|i| &fields[i].1);
    let own = match shape {
        Shape::Mcp => MCP,
        Shape::Gemini => GEMINI,
        Shape::OpenAiChat => OPENAI,
        Shape::AgentZero => AGENT_ZERO,
        Shape::Anthropic
        | Shape::OpenAiResponses
        | Shape::Plain
        | Shape::Llama
        | Shape::LangChain => NAMED,
    };
    let object = |mark| at(mark).is_some_and(|s| s.is_object());
    // Most calls hold the keys of one envelope only: nothing more to look at.
    let signs = [
        m.params.is_some(),
        m.function_call.is_some(),
        m.function.is_some(),
        m.tool_name.is_some() || m.tool.is_some(),
        m.name.is_some() && (m.input.is_some() || m.arguments.is_some() || m.args.is_some()),
    ];
    if signs.iter().filter(|&&here| here).count() < 2 {
        return None;
    }
    // A `function` or `params` is only read when it could hold a call.
    let other = [
        (MCP, object(m.params)),
        (GEMINI, object(m.function_call)),
        (OPENAI, object(m.function)),
        (
            AGENT_ZERO,
            m.tool_name.is_some() || at(m.tool).is_some_and(|t| t.first_byte() == b'"'),
        ),
        (
            NAMED,
            m.name.is_some() && (m.input.is_some() || m.arguments.is_some() || m.args.is_some()),
        ),
    ]
    .into_iter()
    .filter(|(what, here)| *here && *what != own)
    .map(|(what, _)| what)
    .find(|&what| match what {
        MCP => at(m.method)
            .and_then(slot_str)
            .is_some_and(|method| method == "tools/call"),
        OPENAI => at(m.function)
            .and_then(object_fields)
            .is_some_and(|f| get(&f, "name").is_some()),
        _ => true,
    })?;
    Some((own, other))
}

/// An argument (or a key inside one) given twice is two readings of the call: this gate
/// checks one, and a tool's JSON reader may take the other (cJSON, gjson and simdjson keep the
/// first, serde_json and Python the last). Refused rather than passed through as sent.
fn refuse_repeated(found: Option<scan::RepeatedKey>) -> Result<(), NotACall> {
    match found {
        None => Ok(()),
        Some(r) => {
            let place = if r.pointer.is_empty() {
                format!("argument `{}`", r.key)
            } else {
                format!("key `{}` (in the argument at {})", r.key, r.pointer)
            };
            Err(not_a_call(format!(
                "the {place} is given twice: tools differ on which one they read, so the call \
                 cannot be checked as the tool would run it; send it once"
            )))
        }
    }
}

/// Keys that hold a call's arguments, or more calls, in one envelope or another.
const ARGUMENT_KEYS: &[&str] = &[
    "arguments",
    "args",
    "input",
    "parameters",
    "tool_args",
    "tool_input",
    "kwargs",
    "action_input",
    "params",
    "function",
    "functionCall",
    "function_call",
    "tool_calls",
];

/// A second place a reader could take the arguments (or another call) from, beside the one
/// this envelope reads (`own`): a tool reading that one would run what the gate never checked,
/// so the call is refused with both named. `holder` names the nested object `fields` are of.
fn second_argument_field(
    fields: &Fields<'_>,
    own: &str,
    holder: Option<&str>,
) -> Result<(), NotACall> {
    let named = |key: &str| match holder {
        Some(h) => format!("`{h}.{key}`"),
        None => format!("`{key}`"),
    };
    for (key, slot) in fields {
        if key == own || !ARGUMENT_KEYS.contains(&key.as_ref()) {
            continue;
        }
        // What could hold arguments or calls: an object, an array of calls, a string of JSON.
        let could_hold = match slot.first_byte() {
            b'{' => true,
            b'[' => matches!(key.as_ref(), "tool_calls" | "function_call"),
            b'"' => !matches!(key.as_ref(), "function" | "functionCall" | "params"),
            _ => false,
        };
        if could_hold {
            return Err(not_a_call(format!(
                "the call holds its arguments in {} and also has {}: a tool reading the second \
                 would run what the gate never checked; send the arguments in {} only",
                named(own),
                named(key),
                named(own)
            )));
        }
    }
    Ok(())
}

/// The envelope a strict JSON object is, judged by the fields that identify it (as the gate
/// judges), without reading the call; `None` when `text` is not one strict JSON object or
/// holds no envelope's identifying fields. `lint` uses it to tell a call from other records.
pub fn shape_of_text(text: &str) -> Option<Shape> {
    let fields = scan::object_fields(text)?;
    shape_of(&slots_of(fields)).map(|(shape, _)| shape)
}

/// The fields of an object-valued slot.
fn object_fields<'a>(slot: &Slot<'a>) -> Option<Fields<'a>> {
    match slot {
        Slot::Raw(raw) => scan::object_fields(raw).map(slots_of),
        Slot::Split(_, fields) => Some(slots_of(fields.clone())),
        Slot::Owned(Value::Object(map)) => Some(owned_fields(map.clone())),
        Slot::Holder(fields) => Some(fields.clone()),
        _ => None,
    }
}

fn slots_of(fields: Vec<scan::Field<'_>>) -> Fields<'_> {
    fields
        .into_iter()
        .map(|f| {
            let slot = match f.fields {
                Some(inner) => Slot::Split(f.value, inner),
                None => Slot::Raw(f.value),
            };
            (f.key, slot)
        })
        .collect()
}

/// Which object values the scan of an envelope splits as it goes: those that may hold the
/// call (`function`, `params`, `functionCall`) or its arguments.
fn opens(key: &str, depth: usize) -> bool {
    match depth {
        1 => matches!(
            key,
            "tool_args"
                | "args"
                | "arguments"
                | "input"
                | "parameters"
                | "function"
                | "params"
                | "functionCall"
        ),
        2 => matches!(key, "arguments" | "args"),
        _ => false,
    }
}

fn owned_fields<'a>(map: Map<String, Value>) -> Fields<'a> {
    map.into_iter()
        .map(|(k, v)| (Cow::Owned(k), Slot::Owned(v)))
        .collect()
}

impl<'a> Call<'a> {
    /// Reads a call from strict JSON, borrowing every field it does not own.
    /// `Ok(None)` means the input is not strict JSON (the caller may repair it).
    pub fn from_json(
        input: &'a [u8],
        fixes: &mut Vec<Correction>,
    ) -> Result<Option<Call<'a>>, NotACall> {
        let Ok(text) = std::str::from_utf8(input) else {
            return Ok(None);
        };
        let first = text.trim_start().as_bytes().first().copied();
        if first == Some(b'[') {
            // An array may hold calls (a bare `tool_calls` list): the caller reads it as such,
            // and an array that is not strict JSON is refused there.
            return Err(NotACall {
                holds_no_envelope: true,
                ..not_a_call("expected a JSON object holding a tool call, got an array")
            });
        }
        if first != Some(b'{') {
            return match serde_json::from_str::<Value>(text) {
                Ok(other) => Err(expected_object(&other)),
                Err(_) => Ok(None),
            };
        }
        match scan::object_fields_opening(text, &opens) {
            Some(fields) => Call::from_fields(slots_of(fields), fixes).map(Some),
            None => Ok(None),
        }
    }

    /// Reads a call out of an already parsed (usually repaired) document.
    pub fn from_value(value: Value, fixes: &mut Vec<Correction>) -> Result<Call<'a>, NotACall> {
        match value {
            Value::Object(map) => Call::from_fields(owned_fields(map), fixes),
            other => Err(expected_object(&other)),
        }
    }

    fn from_fields(fields: Fields<'a>, fixes: &mut Vec<Correction>) -> Result<Call<'a>, NotACall> {
        twice(&fields, None)?;
        let marks = Marks::of(&fields);
        let (shape, inner) = shape_marked(&fields, &marks).ok_or_else(|| NotACall {
            holds_no_envelope: true,
            ..not_a_call(
                "no tool name found: expected `tool_name` (Agent Zero), `function.name` (OpenAI), \
                 `name` with `input` (Anthropic) or `arguments`, `params.name` (MCP) or \
                 `functionCall.name` (Gemini)",
            )
        })?;
        if let Some((own, other)) = second_envelope(&fields, &marks, shape) {
            return Err(not_a_call(format!(
                "the call holds two envelopes, {own} and {other}: a tool reading the second \
                 would run a call the gate never checked; send one call in one envelope"
            )));
        }
        Call::from_shape(fields, shape, inner, marks.argument_keys, fixes).map_err(|e| NotACall {
            shape: Some(shape),
            ..e
        })
    }

    /// The rest of [`Call::from_fields`], once the envelope is known to be `shape`.
    fn from_shape(
        mut fields: Fields<'a>,
        shape: Shape,
        inner: Option<Fields<'a>>,
        argument_keys: usize,
        fixes: &mut Vec<Correction>,
    ) -> Result<Call<'a>, NotACall> {
        let slots = slots(shape);
        if let (Some(inner), Some(key)) = (&inner, slots.holder) {
            twice(inner, Some(key))?;
        }
        let own = slots.holder.unwrap_or(slots.args);
        let agent_zero_args = shape == Shape::AgentZero && position(&fields, "tool_args").is_none();
        let own = if agent_zero_args && position(&fields, "args").is_some() {
            "args"
        } else {
            own
        };
        if argument_keys > 1 {
            second_argument_field(&fields, own, None)?;
        }
        // A holder with more than a name and arguments may hold a second place for them.
        if let (Some(inner), Some(key)) = (&inner, slots.holder)
            && inner.len() > 2
        {
            second_argument_field(inner, slots.args, Some(key))?;
        }
        if shape == Shape::AgentZero {
            normalize_agent_zero(&mut fields, fixes);
        }
        let holder: &mut Fields<'a> = match slots.holder {
            None => &mut fields,
            Some(key) => {
                let at = position(&fields, key).expect("the shape was recognized by this key");
                let inner =
                    inner.ok_or_else(|| not_a_call(format!("`{key}` must be an object")))?;
                fields[at].1 = Slot::Holder(inner);
                match &mut fields[at].1 {
                    Slot::Holder(inner) => inner,
                    _ => unreachable!("just set"),
                }
            }
        };
        let name = match get(holder, slots.name) {
            Some(slot) => match owned_str(slot) {
                Some(s) if !s.trim().is_empty() => s,
                Some(_) => return Err(not_a_call("the tool name is empty")),
                None => {
                    return Err(not_a_call(format!(
                        "the tool name must be a string, got {}",
                        slot_value(slot)
                            .as_ref()
                            .map_or("nothing", json_type_phrase)
                    )));
                }
            },
            None => return Err(not_a_call(format!("no `{}` field", slots.name))),
        };
        let (args, args_form) = match position(holder, slots.args) {
            None => (Args::new(), ArgsForm::Absent),
            Some(at) => {
                let slot = std::mem::replace(&mut holder[at].1, Slot::Args);
                let value = match slot {
                    Slot::Split(raw, inner) => {
                        refuse_repeated(scan::repeated_among(raw, &inner, 2, &mut String::new()))?;
                        return Ok(Call {
                            shape,
                            name,
                            args_form: ArgsForm::Object,
                            args: Args::from_fields(inner),
                            fields,
                            bare: None,
                        });
                    }
                    Slot::Raw(raw) if raw.starts_with('{') => {
                        refuse_repeated(scan::repeated_key(raw))?;
                        let args = Args::from_text(raw).ok_or_else(|| {
                            not_a_call(format!("`{}` is not readable", slots.args))
                        })?;
                        return Ok(Call {
                            shape,
                            name,
                            args_form: ArgsForm::Object,
                            args,
                            fields,
                            bare: None,
                        });
                    }
                    // Stringified arguments (OpenAI): decoded without a deserializer.
                    Slot::Raw(raw) => match raw
                        .starts_with('"')
                        .then(|| scan::decode_string(raw))
                        .flatten()
                    {
                        Some(text) => Value::String(text.into_owned()),
                        None => serde_json::from_str::<Value>(raw).map_err(|e| {
                            not_a_call(format!("`{}` is not readable: {e}", slots.args))
                        })?,
                    },
                    Slot::Owned(v) => v,
                    Slot::Args | Slot::Holder(_) => unreachable!("arguments are a plain field"),
                };
                match value {
                    Value::Null => (Args::new(), ArgsForm::Null),
                    Value::Object(map) => (Args::from_map(map), ArgsForm::Object),
                    Value::String(text) if let Some(bare) = bare_value(&text) => {
                        // Written back as the shape writes arguments once they are placed.
                        let args_form = match shape {
                            Shape::OpenAiChat | Shape::OpenAiResponses => ArgsForm::String,
                            _ => ArgsForm::Object,
                        };
                        return Ok(Call {
                            shape,
                            name,
                            args_form,
                            args: Args::new(),
                            fields,
                            bare: Some(bare),
                        });
                    }
                    Value::String(text) => {
                        let args = parse_args_string(&text, slots.args, fixes)?;
                        // Only OpenAI's envelopes carry arguments as a string; Agent Zero's
                        // tools and an MCP server read an object, and must get the
                        // arguments the decision checked, so they are sent as one.
                        if matches!(shape, Shape::AgentZero | Shape::Mcp) {
                            let mut fix = Correction::noted(
                                Kind::Envelope,
                                format!(
                                    "decoded `{}` from a JSON string into an object",
                                    slots.args
                                ),
                            );
                            fix.to = Value::Object(args.to_map());
                            fix.from = Value::String(text);
                            fixes.push(fix);
                            (args, ArgsForm::Object)
                        } else {
                            (args, ArgsForm::String)
                        }
                    }
                    other => {
                        return Err(not_a_call(format!(
                            "`{}` must be an object, got {}",
                            slots.args,
                            json_type_phrase(&other)
                        )));
                    }
                }
            }
        };
        Ok(Call {
            shape,
            name,
            args_form,
            args,
            fields,
            bare: None,
        })
    }

    /// The arguments' one bare value, when they came as one (see [`bare_value`]): the caller
    /// places it with [`Call::place_bare_argument`] or refuses the call.
    pub fn bare_argument(&self) -> Option<&Value> {
        self.bare.as_ref()
    }

    /// The key the arguments stand under in this call's envelope (`arguments`, `tool_args`).
    pub fn arguments_field(&self) -> &'static str {
        slots(self.shape).args
    }

    /// Makes the bare value the argument `name`, the call's only one.
    pub fn place_bare_argument(&mut self, name: &str) {
        if let Some(value) = self.bare.take() {
            self.args = Args::new();
            self.args.push(name.to_owned(), value);
        }
    }

    /// The tool part of the name (`skills_tool` of `skills_tool:load`).
    pub fn tool(&self) -> &str {
        split_method(&self.name).0
    }

    /// The `:method` suffix, if any.
    pub fn method(&self) -> Option<&str> {
        split_method(&self.name).1
    }

    /// An id the envelope carries, used when converting to a shape that needs one.
    pub fn id(&self) -> Option<Value> {
        let slot = match self.shape {
            Shape::OpenAiChat | Shape::Anthropic | Shape::Mcp | Shape::LangChain => {
                get(&self.fields, "id")
            }
            Shape::OpenAiResponses => get(&self.fields, "call_id"),
            Shape::Gemini => match get(&self.fields, "functionCall") {
                Some(Slot::Holder(inner)) => get(inner, "id"),
                _ => None,
            },
            Shape::AgentZero | Shape::Plain | Shape::Llama => None,
        }?;
        slot_value(slot).filter(|v| v.is_string() || v.is_number())
    }

    /// Gives the call another tool name, written in the name's own place in the envelope.
    pub fn rename(&mut self, name: String) {
        let slots = slots(self.shape);
        let holder = match slots.holder {
            None => Some(&mut self.fields),
            Some(key) => self.fields.iter_mut().find_map(|(k, slot)| match slot {
                Slot::Holder(inner) if k == key => Some(inner),
                _ => None,
            }),
        };
        if let Some((_, slot)) =
            holder.and_then(|fields| fields.iter_mut().find(|(k, _)| k == slots.name))
        {
            *slot = Slot::Owned(Value::String(name.clone()));
        }
        self.name = Cow::Owned(name);
    }

    /// Writes the call in the shape it came in, the (corrected) arguments in their place.
    fn write_json(&self, out: &mut Vec<u8>) {
        self.write_fields(&self.fields, slots(self.shape).holder.is_none(), out);
    }

    fn write_fields(&self, fields: &Fields<'_>, holds_args: bool, out: &mut Vec<u8>) {
        let slots = slots(self.shape);
        out.push(b'{');
        let mut first = true;
        let mut comma = |out: &mut Vec<u8>| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
        };
        for (key, slot) in fields {
            comma(out);
            write_str(key, out);
            out.push(b':');
            match slot {
                Slot::Raw(raw) | Slot::Split(raw, _) => write_raw(raw, out),
                Slot::Owned(v) => write_value(v, out),
                Slot::Args => self.write_args(out),
                Slot::Holder(inner) => self.write_fields(inner, true, out),
            }
        }
        if holds_args && self.args_form == ArgsForm::Absent && !self.args.is_empty() {
            // Absent arguments are never raw: they were filled in by the gate.
            comma(out);
            write_str(slots.args, out);
            out.push(b':');
            self.write_args(out);
        }
        out.push(b'}');
    }

    fn write_args(&self, out: &mut Vec<u8>) {
        match self.args_form {
            ArgsForm::String => write_str(&self.args.to_json_string(), out),
            ArgsForm::Null if self.args.is_empty() => out.extend_from_slice(b"null"),
            // Filled in where none came: OpenAI's shapes carry their arguments as a string.
            ArgsForm::Absent | ArgsForm::Null
                if matches!(self.shape, Shape::OpenAiChat | Shape::OpenAiResponses) =>
            {
                write_str(&self.args.to_json_string(), out)
            }
            ArgsForm::Object | ArgsForm::Absent | ArgsForm::Null => self.args.write_json(out),
        }
    }

    /// The call in its own shape, as a value.
    #[cfg(test)]
    fn to_value(&self) -> Value {
        let mut out = Vec::new();
        self.write_json(&mut out);
        serde_json::from_slice(&out).expect("metagate writes valid JSON")
    }

    /// Writes the call in another shape. Fields only the source shape knows are dropped; an
    /// id is carried over when both shapes have one, and derived from the call otherwise.
    pub fn write_as(&self, shape: Shape, out: &mut Vec<u8>) {
        if shape == self.shape {
            return self.write_json(out);
        }
        write_value(&self.converted(shape), out);
    }

    fn converted(&self, shape: Shape) -> Value {
        // MCP's ids may be numbers; OpenAI's and Anthropic's are strings.
        let id = self.id().map(|id| match (shape, id) {
            (Shape::Mcp, id) => id,
            (_, Value::Number(n)) => Value::String(n.to_string()),
            (_, id) => id,
        });
        let derived = || derived_id(&self.name, &self.args);
        let args_string = || Value::String(self.args.to_json_string());
        let name = Value::String(self.name.to_string());
        let args = Value::Object(self.args.to_map());
        let mut out = Map::new();
        match shape {
            Shape::AgentZero => {
                out.insert("tool_name".into(), name);
                out.insert("tool_args".into(), args);
            }
            Shape::OpenAiChat => {
                out.insert(
                    "id".into(),
                    id.unwrap_or_else(|| format!("call_{}", derived()).into()),
                );
                out.insert("type".into(), "function".into());
                let mut function = Map::new();
                function.insert("name".into(), name);
                function.insert("arguments".into(), args_string());
                out.insert("function".into(), Value::Object(function));
            }
            Shape::OpenAiResponses => {
                out.insert("type".into(), "function_call".into());
                out.insert(
                    "call_id".into(),
                    id.unwrap_or_else(|| format!("call_{}", derived()).into()),
                );
                out.insert("name".into(), name);
                out.insert("arguments".into(), args_string());
            }
            Shape::Anthropic => {
                out.insert("type".into(), "tool_use".into());
                out.insert(
                    "id".into(),
                    id.unwrap_or_else(|| format!("toolu_{}", derived()).into()),
                );
                out.insert("name".into(), name);
                out.insert("input".into(), args);
            }
            Shape::Mcp => {
                out.insert("jsonrpc".into(), "2.0".into());
                out.insert(
                    "id".into(),
                    id.unwrap_or_else(|| format!("call_{}", derived()).into()),
                );
                out.insert("method".into(), "tools/call".into());
                let mut params = Map::new();
                params.insert("name".into(), name);
                params.insert("arguments".into(), args);
                out.insert("params".into(), Value::Object(params));
            }
            Shape::Gemini => {
                let mut call = Map::new();
                call.insert("name".into(), name);
                call.insert("args".into(), args);
                out.insert("functionCall".into(), Value::Object(call));
            }
            Shape::Plain => {
                out.insert("name".into(), name);
                out.insert("arguments".into(), args);
            }
            Shape::Llama => {
                out.insert("name".into(), name);
                out.insert("parameters".into(), args);
            }
            Shape::LangChain => {
                out.insert("name".into(), name);
                out.insert("args".into(), args);
                out.insert(
                    "id".into(),
                    id.unwrap_or_else(|| format!("call_{}", derived()).into()),
                );
                out.insert("type".into(), "tool_call".into());
            }
        }
        Value::Object(out)
    }
}

/// Writes untouched JSON as it came; output is one line, so a field that spans lines is
/// written compactly.
fn write_raw(raw: &str, out: &mut Vec<u8>) {
    if memchr::memchr2(b'\n', b'\r', raw.as_bytes()).is_some() {
        let v: Value = serde_json::from_str(raw).expect("raw JSON was validated");
        write_value(&v, out);
    } else {
        out.extend_from_slice(raw.as_bytes());
    }
}

fn write_str(s: &str, out: &mut Vec<u8>) {
    scan::write_string(s, out);
}

fn write_value(v: &Value, out: &mut Vec<u8>) {
    scan::write_value(v, out);
}

fn expected_object(v: &Value) -> NotACall {
    NotACall {
        holds_no_envelope: v.is_array(),
        ..not_a_call(format!(
            "expected a JSON object holding a tool call, got {}",
            json_type_phrase(v)
        ))
    }
}

/// Agent Zero's own validator refuses `tool`, `args` and a string `tool_args`: normalize them.
fn normalize_agent_zero(fields: &mut Fields<'_>, fixes: &mut Vec<Correction>) {
    let rename_tool = position(fields, "tool_name").is_none() && position(fields, "tool").is_some();
    let rename_args = position(fields, "tool_args").is_none() && position(fields, "args").is_some();
    for (key, _) in fields.iter_mut() {
        let to = match key.as_ref() {
            "tool" if rename_tool => "tool_name",
            "args" if rename_args => "tool_args",
            _ => continue,
        };
        let mut fix = Correction::noted(Kind::Envelope, format!("renamed `{key}` to `{to}`"));
        fix.from = Value::String(key.to_string());
        fix.to = to.into();
        fixes.push(fix);
        *key = Cow::Borrowed(to);
    }
}

/// The one value a string of arguments holds when it holds no object of them: the text
/// itself when it is no JSON at all and holds no object (`"image.png"`), or the JSON scalar it
/// encodes (`"42"`, `"\"x\""`). A string opening an object or a list, encoding `null`, or
/// holding an object inside prose is read as arguments (or refused) as before.
fn bare_value(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() || t.starts_with(['{', '[']) {
        return None;
    }
    match serde_json::from_str::<Value>(t) {
        Ok(Value::Null | Value::Object(_) | Value::Array(_)) => None,
        Ok(scalar) => Some(scalar),
        Err(_) => repair::parse(text.as_bytes())
            .is_err()
            .then(|| Value::String(text.to_owned())),
    }
}

fn parse_args_string<'a>(
    text: &str,
    field: &str,
    fixes: &mut Vec<Correction>,
) -> Result<Args<'a>, NotACall> {
    if text.trim().is_empty() {
        return Ok(Args::new());
    }
    if let Some(args) = Args::from_text_owned(text) {
        refuse_repeated(scan::repeated_key(text))?;
        return Ok(args);
    }
    match repair::parse(text.as_bytes()) {
        Ok(parsed) if parsed.more_calls > 0 => {
            // `{"a":1}{"a":2}`: how parallel calls break when a server joins them. Reading
            // the first alone would drop the others, which the model believes it made.
            let n = parsed.more_calls + 1;
            Err(not_a_call(format!(
                "`{field}` holds {n} JSON objects back to back: {n} calls in one; send each \
                 as a call of its own"
            )))
        }
        Ok(parsed) => {
            for note in parsed.repairs.into_iter().chain(parsed.warnings) {
                fixes.push(Correction::noted(Kind::Repair, format!("{field}: {note}")));
            }
            match parsed.value {
                Value::Object(map) => Ok(Args::from_map(map)),
                other => Err(not_a_call(format!(
                    "`{field}` must encode a JSON object, got {}",
                    json_type_phrase(&other)
                ))),
            }
        }
        Err(e) => Err(not_a_call(format!("`{field}` is not readable JSON: {e}"))),
    }
}

/// Splits `skills_tool:load` into the tool and its method.
/// Agent Zero splits on the first `:` whatever follows, so `code_execution_tool:` runs
/// `code_execution_tool` and is judged as it; an empty method supplies no method argument.
pub fn split_method(name: &str) -> (&str, Option<&str>) {
    match memchr::memchr(b':', name.as_bytes()) {
        Some(at) if at > 0 => {
            let method = &name[at + 1..];
            (&name[..at], (!method.is_empty()).then_some(method))
        }
        _ => (name, None),
    }
}

/// A stable id for a converted call that had none: the same call always gets the same id.
fn derived_id(name: &str, args: &Args<'_>) -> String {
    // FNV-1a over the name and the compact arguments.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(name.as_bytes());
    feed(&[0]);
    feed(args.to_json_string().as_bytes());
    format!("{hash:016x}")
}

#[cfg(test)]
#[path = "call_envelope_tests.rs"]
mod envelope_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> (Call<'_>, Vec<Correction>) {
        let mut fixes = Vec::new();
        let call = Call::from_json(text.as_bytes(), &mut fixes)
            .unwrap()
            .expect("strict JSON");
        (call, fixes)
    }

    fn written(call: &Call<'_>) -> String {
        let mut out = Vec::new();
        call.write_json(&mut out);
        String::from_utf8(out).unwrap()
    }

    const DOCS: &[(Shape, &str)] = &[
        (
            Shape::AgentZero,
            r#"{"thoughts":["a"],"headline":"h","tool_name":"response","tool_args":{"text":"x"}}"#,
        ),
        (
            Shape::OpenAiChat,
            r#"{"id":"call_1","type":"function","function":{"name":"response","arguments":"{\"text\":\"x\"}"}}"#,
        ),
        (
            Shape::OpenAiChat,
            r#"{"id":"call_1","type":"function","function":{"name":"response","arguments":{"text":"x"}}}"#,
        ),
        (
            Shape::OpenAiResponses,
            r#"{"type":"function_call","call_id":"c","name":"response","arguments":"{\"text\":\"x\"}"}"#,
        ),
        (
            Shape::Anthropic,
            r#"{"type":"tool_use","id":"toolu_1","name":"response","input":{"text":"x"}}"#,
        ),
        (
            Shape::Mcp,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"response","arguments":{"text":"x"}}}"#,
        ),
        (
            Shape::Gemini,
            r#"{"functionCall":{"name":"response","args":{"text":"x"}}}"#,
        ),
        (
            Shape::Plain,
            r#"{"name":"response","arguments":{"text":"x"}}"#,
        ),
    ];

    #[test]
    fn every_shape_is_recognized_and_written_back_byte_for_byte() {
        for (shape, doc) in DOCS {
            let (call, fixes) = read(doc);
            assert_eq!(call.shape, *shape, "{doc}");
            assert!(fixes.is_empty());
            assert_eq!(call.name, "response");
            assert_eq!(
                call.args.to_map(),
                *json!({"text":"x"}).as_object().unwrap()
            );
            assert_eq!(written(&call), *doc);
            // The same document read as a value gives the same call.
            let v: Value = serde_json::from_str(doc).unwrap();
            let owned = Call::from_value(v.clone(), &mut Vec::new()).unwrap();
            assert_eq!(owned.shape, *shape);
            assert_eq!(owned.to_value(), v);
        }
    }

    #[test]
    fn raw_fields_keep_their_bytes() {
        let doc = r#"{"n":1.50,"s":"\u00e9","tool_name":"t","tool_args":{"a":1}, "z" : [ 1 ]}"#;
        let (call, _) = read(doc);
        let out = written(&call);
        assert!(
            out.contains(r#""n":1.50"#) && out.contains(r#""s":"\u00e9""#),
            "{out}"
        );
    }

    #[test]
    fn agent_zero_spellings_are_normalized_in_place() {
        let (call, fixes) =
            read(r#"{"headline":"h","tool":"response","args":"{\"text\":\"x\"}","z":1}"#);
        assert_eq!(fixes.len(), 3);
        let out = call.to_value();
        let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["headline", "tool_name", "tool_args", "z"]);
        assert_eq!(out["tool_args"], json!({"text":"x"}));
    }

    /// An MCP server reads `params.arguments` as an object: stringified arguments are sent on
    /// decoded (an envelope correction), or the server would refuse the call the decision
    /// passed. OpenAI's envelopes keep theirs a string.
    #[test]
    fn stringified_mcp_arguments_go_on_as_an_object() {
        let (call, fixes) = read(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-sum","arguments":"{\"a\": 2, \"b\": 3}"}}"#,
        );
        assert_eq!(call.shape, Shape::Mcp);
        assert_eq!(fixes.len(), 1, "{fixes:?}");
        assert_eq!(fixes[0].kind, Kind::Envelope);
        assert_eq!(
            call.to_value()["params"]["arguments"],
            json!({"a": 2, "b": 3})
        );
        let (call, fixes) =
            read(r#"{"type":"function_call","call_id":"c","name":"t","arguments":"{\"a\":1}"}"#);
        assert!(fixes.is_empty(), "{fixes:?}");
        assert_eq!(call.to_value()["arguments"], json!("{\"a\":1}"));
    }

    #[test]
    fn absent_and_null_arguments() {
        let (mut call, _) = read(r#"{"tool_name":"t"}"#);
        assert_eq!(call.args_form, ArgsForm::Absent);
        assert_eq!(written(&call), r#"{"tool_name":"t"}"#);
        call.args.push("a".into(), json!(1));
        assert_eq!(written(&call), r#"{"tool_name":"t","tool_args":{"a":1}}"#);
        let (call, _) = read(r#"{"tool_name":"t","tool_args":null}"#);
        assert_eq!(written(&call), r#"{"tool_name":"t","tool_args":null}"#);
        let (mut call, _) = read(r#"{"function":{"name":"t"}}"#);
        call.args.push("a".into(), json!(1));
        // OpenAI carries its arguments as a JSON string.
        assert_eq!(
            written(&call),
            r#"{"function":{"name":"t","arguments":"{\"a\":1}"}}"#
        );
    }

    #[test]
    fn method_suffix_is_split() {
        let (call, _) = read(r#"{"tool_name":"skills_tool:load","tool_args":{}}"#);
        assert_eq!(call.tool(), "skills_tool");
        assert_eq!(call.method(), Some("load"));
        assert_eq!(split_method("x"), ("x", None));
        assert_eq!(split_method(":x"), (":x", None));
        assert_eq!(split_method("x:"), ("x", None));
        assert_eq!(split_method("x:a:b"), ("x", Some("a:b")));
    }

    #[test]
    fn conversion_keeps_ids_and_derives_missing_ones() {
        let (call, _) = read(r#"{"type":"tool_use","id":"toolu_9","name":"t","input":{"a":1}}"#);
        let mut out = Vec::new();
        call.write_as(Shape::OpenAiChat, &mut out);
        let out: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(out["id"], json!("toolu_9"));
        assert_eq!(out["function"]["arguments"], json!("{\"a\":1}"));
        let (call, _) = read(r#"{"tool_name":"t","tool_args":{"a":1}}"#);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        call.write_as(Shape::Anthropic, &mut a);
        call.write_as(Shape::Anthropic, &mut b);
        assert_eq!(a, b);
        let a: Value = serde_json::from_slice(&a).unwrap();
        assert!(a["id"].as_str().unwrap().starts_with("toolu_"));
    }

    #[test]
    fn not_calls_are_explained() {
        for bad in [
            r#"[1]"#,
            r#"{"x":1}"#,
            r#"{"tool_name":""}"#,
            r#"{"tool_name":5}"#,
            r#"{"tool_name":"t","tool_args":[1]}"#,
            r#"{"name":"t","arguments":"[1]"}"#,
            r#"{"function":{"name":"t"},"type":"function","x":{"function":1}}"#,
        ] {
            let r = Call::from_json(bad.as_bytes(), &mut Vec::new());
            let last = bad.ends_with(r#"{"function":1}}"#);
            assert_eq!(r.is_err(), !last, "{bad}");
        }
        assert!(matches!(
            Call::from_json(b"{nope", &mut Vec::new()),
            Ok(None)
        ));
    }

    #[test]
    fn shape_names_parse() {
        for s in Shape::ALL {
            assert_eq!(s.as_str().parse::<Shape>().unwrap(), s);
        }
        assert_eq!("agent_zero".parse::<Shape>().unwrap(), Shape::AgentZero);
        assert!("xml".parse::<Shape>().is_err());
    }
}
