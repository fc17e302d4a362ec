//! The events `record` appends (docs/telemetry.md, "metagate record"): tool outcomes, user turns (`ask`) and user
//! corrections, read from one JSON object each, checked, redacted, and with boundary axes
//! normalized. Pure: the time `now` and the axis table are passed in.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::error::Category;
use metagate_checks::redact;

/// Outcome error types beyond the taxonomy: a tool's own referral signals (seed 001).
const REFERRAL_TYPES: [&str; 2] = ["wrong_tool_boundary", "low_utility"];

/// One recorded event.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A tool call ended (`type: outcome`).
    Outcome(Box<Outcome>),
    /// A user asked for something (`type: ask`).
    Ask(Ask),
    /// A user corrected what a tool did (`type: correction`).
    Correction(UserCorrection),
}

impl Event {
    #[cfg(test)]
    fn kind(&self) -> &'static str {
        match self {
            Event::Outcome(_) => "outcome",
            Event::Ask(_) => "ask",
            Event::Correction(_) => "correction",
        }
    }
}

/// How one tool call ended, as an integrator records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// When it ended, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The agent's session, if given.
    pub session: Option<String>,
    /// The tool that ran.
    pub tool: String,
    /// The method of a multi-method tool, if given.
    pub method: Option<String>,
    /// `true` for `"ok"`, `false` for `"error"`.
    pub ok: bool,
    /// The error type (a taxonomy category, a referral, or the integrator's own name).
    pub error_type: Option<String>,
    /// The error's text, redacted.
    pub error_message: Option<String>,
    /// Normalized boundary axes, deduplicated, in the order first seen.
    pub axes: Vec<String>,
    /// The axes as the tool wrote them.
    pub axes_raw: Vec<String>,
    /// For a referral: the task the tool was asked to do, redacted.
    pub observed_task_shape: Option<String>,
    /// For a referral: how the tool could be split, redacted.
    pub suggested_split: Option<String>,
    /// For a referral: what shows the boundary, redacted.
    pub evidence: Option<String>,
    /// The whole `metadata` object, redacted.
    pub metadata: Option<Value>,
    /// The caller whose call it answers, when the event names it (`caller`).
    pub caller: Option<String>,
    /// The gate decision it answers (`decision`, or `metadata.decision_id` as `metagate mcp`
    /// writes it): the store takes the caller from there.
    pub decision_id: Option<i64>,
    /// The id of the call it answers (`call_id`, or `metadata.call_id`): the store takes the
    /// caller from the session's decision of that call.
    pub call_id: Option<String>,
}

/// A user's request, for the re-ask detection of evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    /// When it was asked, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The agent's session, if given.
    pub session: Option<String>,
    /// Who asked, redacted.
    pub user: Option<String>,
    /// What was asked, redacted.
    pub text: Option<String>,
    /// Capability names, trimmed and lowercased.
    pub capabilities: Vec<String>,
}

/// A user saying a tool did the wrong thing.
#[derive(Debug, Clone, PartialEq)]
pub struct UserCorrection {
    /// When, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The agent's session, if given.
    pub session: Option<String>,
    /// The tool corrected.
    pub tool: String,
    /// The method of a multi-method tool, if given.
    pub method: Option<String>,
    /// What the user said, redacted.
    pub note: Option<String>,
}

/// How boundary axes are normalized: trimmed, lowercased, runs of spaces, `-` and `_` made one
/// `_`, then obvious synonyms collapsed (`fetch`, `http`, `download` → `transport`).
#[derive(Debug, Clone, Default)]
pub struct AxisTable {
    synonyms: HashMap<String, String>,
}

impl AxisTable {
    /// A table from `synonym → axis` pairs (the policy's `[axes.synonyms]`).
    pub fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> AxisTable {
        AxisTable {
            synonyms: pairs
                .into_iter()
                .map(|(from, to)| (shape(from), shape(to)))
                .collect(),
        }
    }

    /// The axis an already normalized name folds to, when a synonym names it: `evaluate`
    /// folds stored axes again, so synonyms added to a policy apply to what was recorded
    /// before.
    pub fn fold(&self, normalized: &str) -> Option<&str> {
        self.synonyms
            .get(normalized)
            .map(String::as_str)
            .filter(|axis| *axis != normalized)
    }

    fn normalize(&self, raw: &str) -> String {
        let shaped = shape(raw);
        match self.synonyms.get(&shaped) {
            Some(axis) => axis.clone(),
            None => shaped,
        }
    }
}

fn shape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut gap = false;
    for c in raw.trim().chars() {
        if c.is_whitespace() || c == '-' || c == '_' {
            gap = !out.is_empty();
            continue;
        }
        if gap {
            out.push('_');
            gap = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// An event's fields, each at most once: readers disagree on which of two copies counts (as
/// the gate refuses an envelope field sent twice), so a line holding one twice is bad.
struct Fields(serde_json::Map<String, Value>);

/// Reads [`Fields`], noting in `twice` the path of a field given twice, which ends the read.
struct FieldsSeed<'t> {
    twice: &'t RefCell<Option<String>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for FieldsSeed<'_> {
    type Value = Fields;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Fields, D::Error> {
        struct Visit<'t> {
            twice: &'t RefCell<Option<String>>,
        }
        impl<'de> serde::de::Visitor<'de> for Visit<'_> {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Fields, A::Error> {
                let mut map = serde_json::Map::new();
                while let Some(k) = a.next_key::<String>()? {
                    if map.contains_key(&k) {
                        *self.twice.borrow_mut() = Some(k);
                        return Err(serde::de::Error::custom("a field is given twice"));
                    }
                    // `record` reads fields out of `metadata` too, and stores the rest: a
                    // field given twice in there is as bad as one at the top.
                    let v = if k == "metadata" {
                        let raw: Box<serde_json::value::RawValue> = a.next_value()?;
                        if let Some(path) = field_twice(raw.get()) {
                            *self.twice.borrow_mut() = Some(format!("{k}.{path}"));
                            return Err(serde::de::Error::custom("a field is given twice"));
                        }
                        serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?
                    } else {
                        a.next_value::<Value>()?
                    };
                    map.insert(k, v);
                }
                Ok(Fields(map))
            }
        }
        d.deserialize_map(Visit { twice: self.twice })
    }
}

/// Reads an event line's fields, or says why it cannot: a field given twice (where serde_json
/// found it), a line that is JSON but no object, or not JSON at all.
fn read_fields(line: &str) -> Result<Fields, String> {
    use serde::de::DeserializeSeed;
    let twice = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(line);
    let read = FieldsSeed { twice: &twice }
        .deserialize(&mut de)
        .and_then(|fields| de.end().map(|()| fields));
    read.map_err(|e| match twice.take() {
        Some(path) if e.line() == 0 => format!("the field {path:?} is given twice"),
        Some(path) => format!(
            "the field {path:?} is given twice at line {} column {}",
            e.line(),
            e.column()
        ),
        // serde_json finds no object only at the first byte past the blanks: JSON of another
        // type there is a data error, anything else one of syntax.
        None if e.classify() == serde_json::error::Category::Data
            && !line
                .trim_start_matches([' ', '\t', '\n', '\r'])
                .starts_with('{') =>
        {
            "an event is a JSON object".to_string()
        }
        None => format!("not JSON: {e}"),
    })
}

/// The first field given twice in an object anywhere in `json` (a JSON text already known to
/// be valid), as a path: `evidence`, `pages[2].title`.
fn field_twice(json: &str) -> Option<String> {
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(json);
    // A field given twice stops the walk with an error, and each level it passes through on
    // its way out adds its step to the path.
    let _ = serde::de::DeserializeSeed::deserialize(Walker(&found), &mut de);
    let steps: Vec<Step> = found.into_inner()?;
    let mut path = String::new();
    for step in steps.iter().rev() {
        match step {
            Step::Key(k) if path.is_empty() => path.push_str(k),
            Step::Key(k) => {
                path.push('.');
                path.push_str(k);
            }
            Step::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    Some(path)
}

/// One step of a path into a JSON value.
enum Step {
    Key(String),
    Index(usize),
}

/// Reads a JSON value keeping nothing but the keys of the object it is in, to find one given
/// twice (which a `Value` would silently keep the last of). On finding one it fails, with the
/// path to it, innermost step first, in the cell.
#[derive(Clone, Copy)]
struct Walker<'w>(&'w RefCell<Option<Vec<Step>>>);

impl Walker<'_> {
    /// Adds `step` to the path of a field given twice below it, when that is why it failed.
    fn on_the_way_out(self, step: impl FnOnce() -> Step) {
        if let Some(steps) = self.0.borrow_mut().as_mut() {
            steps.push(step());
        }
    }
}

/// A key as read: borrowed from the input unless it holds an escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(Visit)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Walker<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Walker<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            match a.next_element_seed(self) {
                Ok(Some(())) => i += 1,
                Ok(None) => return Ok(()),
                Err(e) => {
                    self.on_the_way_out(|| Step::Index(i));
                    return Err(e);
                }
            }
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut seen: Vec<Key<'de>> = Vec::new();
        while let Some(k) = a.next_key::<Key<'de>>()? {
            if seen.iter().any(|s| s.0 == k.0) {
                *self.0.borrow_mut() = Some(vec![Step::Key(k.0.into_owned())]);
                return Err(serde::de::Error::custom("a field is given twice"));
            }
            if let Err(e) = a.next_value_seed(self) {
                self.on_the_way_out(|| Step::Key(k.0.into_owned()));
                return Err(e);
            }
            seen.push(k);
        }
        Ok(())
    }
}

/// How far after now an event's time may lie before `record` warns: the clocks of two machines
/// differ by seconds, while a wrong time zone or a mistyped date puts it hours or years ahead,
/// where every window that ends now leaves it out.
const AHEAD_WARN_MS: i64 = 5 * 60 * 1000;

/// A length of time in the unit that reads best: minutes, hours, then days.
fn span(ms: i64) -> String {
    const MINUTE: i64 = 60 * 1000;
    const HOUR: i64 = 60 * MINUTE;
    match ms {
        _ if ms < 2 * HOUR => format!("{} minutes", ms / MINUTE),
        _ if ms < 48 * HOUR => format!("{} hours", ms / HOUR),
        _ => format!("{} days", ms / (24 * HOUR)),
    }
}

/// Whether metagate knows `error_type`: one of the taxonomy's categories, or a referral
/// (`wrong_tool_boundary`, `low_utility`). Others are stored as given, and counted as the
/// tool's own failure.
pub fn known_error_type(error_type: &str) -> bool {
    error_type.parse::<Category>().is_ok() || REFERRAL_TYPES.contains(&error_type)
}

/// Why an event line is refused: a sentence saying what is wrong with it, for the integrator
/// who wrote it (`record` prints it beside the file and line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventError(String);

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EventError {}

/// Parses one event line. Returns the event and warnings (unknown fields, a time far ahead
/// of now); an error says what is wrong with the line.
pub fn parse(
    line: &str,
    now_ms: i64,
    axes: &AxisTable,
) -> Result<(Event, Vec<String>), EventError> {
    read_event(line, now_ms, axes).map_err(EventError)
}

/// [`parse`], its refusal a sentence still to be wrapped.
fn read_event(line: &str, now_ms: i64, axes: &AxisTable) -> Result<(Event, Vec<String>), String> {
    let value = read_fields(line)?;
    let mut map = value.0;
    let kind =
        take_string(&mut map, "type")?.ok_or("missing \"type\" (outcome, ask or correction)")?;
    let ts_ms = match take(&mut map, "ts") {
        None | Some(Value::Null) => now_ms,
        Some(Value::String(s)) => parse_time(&s).map_err(|e| e.to_string())?,
        Some(_) => {
            return Err(
                "\"ts\" must be an RFC 3339 time, e.g. \"2026-11-20T10:00:00Z\"".to_string(),
            );
        }
    };
    let session = take_string(&mut map, "session")?;
    let mut notes = Vec::new();
    if ts_ms.saturating_sub(now_ms) > AHEAD_WARN_MS {
        notes.push(format!(
            "\"ts\" {} is {} after now: limits, evaluate and tools health count it only from then",
            format_time(ts_ms),
            span(ts_ms.saturating_sub(now_ms))
        ));
    }
    let event = match kind.as_str() {
        "outcome" => Event::Outcome(Box::new(outcome(
            &mut map, ts_ms, session, axes, &mut notes,
        )?)),
        "ask" => {
            let capabilities = match take(&mut map, "capabilities") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .into_iter()
                    .map(|v| match v {
                        Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_lowercase()),
                        _ => Err("\"capabilities\" holds non-empty strings".to_string()),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("\"capabilities\" must be an array of strings".to_string()),
            };
            Event::Ask(Ask {
                ts_ms,
                session,
                user: take_string(&mut map, "user")?.map(redacted),
                text: take_string(&mut map, "text")?.map(redacted),
                capabilities,
            })
        }
        "correction" => Event::Correction(UserCorrection {
            ts_ms,
            session,
            tool: required_string(&mut map, "tool")?,
            method: take_string(&mut map, "method")?,
            note: take_string(&mut map, "note")?.map(redacted),
        }),
        other => {
            return Err(format!(
                "unknown event type {other:?} (outcome, ask or correction)"
            ));
        }
    };
    notes.extend(map.keys().map(|k| format!("unknown field {k:?} ignored")));
    Ok((event, notes))
}

fn outcome(
    map: &mut Map<String, Value>,
    ts_ms: i64,
    session: Option<String>,
    axes: &AxisTable,
    notes: &mut Vec<String>,
) -> Result<Outcome, String> {
    let tool = required_string(map, "tool")?;
    let method = take_string(map, "method")?;
    let mut ok = match take_string(map, "status")?.as_deref() {
        Some("ok") => true,
        Some("error") => false,
        Some(other) => return Err(format!("\"status\" is \"ok\" or \"error\", not {other:?}")),
        None => return Err("missing \"status\" (\"ok\" or \"error\")".to_string()),
    };
    let error_type = take_string(map, "error_type")?;
    // A type outside the taxonomy is the integrator's own name: kept as given (record warns
    // once per name), and counted by evaluate as the tool's own failure.
    if error_type.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err("\"error_type\" is empty: name the error, or leave the field out".to_string());
    }
    if ok && let Some(t) = &error_type {
        // A referral is the tool saying its own "success" was not one: counting it as a
        // success is the silent drift referrals exist to stop.
        if !REFERRAL_TYPES.contains(&t.as_str()) {
            return Err(format!(
                "\"status\": \"ok\" with error_type {t:?}: an error type belongs with \"status\": \"error\""
            ));
        }
        notes.push(format!(
            "\"status\": \"ok\" with error_type {t:?}: recorded as a {t} referral"
        ));
        ok = false;
    }
    let error_message = take_string(map, "error_message")?.map(redacted);
    let caller = take_string(map, "caller")?.filter(|c| !c.trim().is_empty());
    let mut call_id = take_string(map, "call_id")?.filter(|c| !c.is_empty());
    let mut decision_id = match take(map, "decision") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_i64().is_some_and(|i| i > 0) => n.as_i64(),
        Some(_) => {
            return Err(
                "\"decision\" must be a decision's row id (a positive integer)".to_string(),
            );
        }
    };
    let mut metadata = match take(map, "metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err("\"metadata\" must be an object".to_string()),
    };
    let mut axes_raw = Vec::new();
    let text_field = |key: &str| -> Result<Option<String>, String> {
        match metadata.as_ref().and_then(|m| m.get(key)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(redacted(s.clone()))),
            Some(_) => Err(format!("\"metadata.{key}\" must be a string")),
        }
    };
    let observed_task_shape = text_field("observed_task_shape")?;
    let suggested_split = text_field("suggested_split")?;
    let evidence = text_field("evidence")?;
    if let Some(m) = &metadata {
        match m.get("boundary_axes") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    match item {
                        // Axes reach reports and the prompt block: a secret named in one
                        // is stored redacted, and counts as no axis.
                        Value::String(s) => axes_raw.push(redacted(s.clone())),
                        _ => return Err("\"metadata.boundary_axes\" holds strings".to_string()),
                    }
                }
            }
            Some(_) => {
                return Err("\"metadata.boundary_axes\" must be an array of strings".to_string());
            }
        }
    }
    let mut normalized: Vec<String> = Vec::new();
    for raw in axes_raw
        .iter()
        .filter(|raw| !raw.contains(redact::REDACTED))
    {
        let axis = axes.normalize(raw);
        if !axis.is_empty() && !normalized.contains(&axis) {
            normalized.push(axis);
        }
    }
    if let Some(m) = &metadata {
        decision_id = decision_id.or_else(|| m.get("decision_id").and_then(Value::as_i64));
        if call_id.is_none()
            && let Some(Value::String(id)) = m.get("call_id")
        {
            call_id = Some(id.clone()).filter(|c| !c.is_empty());
        }
    }
    if let Some(m) = &mut metadata {
        let mut v = Value::Object(std::mem::take(m));
        redact::redact_value(&mut v);
        if let Value::Object(redacted_map) = v {
            *m = redacted_map;
        }
    }
    Ok(Outcome {
        ts_ms,
        session,
        tool,
        method,
        ok,
        error_type,
        error_message,
        axes: normalized,
        axes_raw,
        observed_task_shape,
        suggested_split,
        evidence,
        metadata: metadata.map(Value::Object),
        caller,
        decision_id,
        call_id,
    })
}

fn redacted(text: String) -> String {
    redact::redact_text(&text).unwrap_or(text)
}

fn take(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    map.shift_remove(key)
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match take(map, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{key:?} must be a string")),
    }
}

fn required_string(map: &mut Map<String, Value>, key: &str) -> Result<String, String> {
    match take_string(map, key)? {
        Some(s) if !s.trim().is_empty() => Ok(s),
        _ => Err(format!("missing {key:?}")),
    }
}

/// Milliseconds since the epoch of an RFC 3339 time (`2026-11-20T10:00:00Z`, `…+02:00`,
/// `…T10:00:00.250Z`). RFC 3339 itself allows a lowercase `t` and `z` (its §5.6 note), and a
/// space for the `T` (as `date --rfc-3339` writes it); the wider ISO 8601 and Temporal forms
/// (no dashes, no seconds, an offset past ±23:59 or with seconds, a time zone in brackets, a
/// six-digit year, a comma for the decimal point) are refused, as no other reader of the same
/// text would agree on them.
pub fn parse_time(text: &str) -> Result<i64, TimeError> {
    let trimmed = text.trim();
    let canonical = rfc3339(trimmed).map_err(|why| TimeError::Shape {
        text: text.to_string(),
        why,
    })?;
    match canonical.parse::<jiff::Timestamp>() {
        Ok(ts) => Ok(ts.as_millisecond()),
        // The shape is right, so the date does not exist (February 30th) or the time is past
        // what metagate reads: jiff's own error for the latter names an internal parameter
        // and its range in seconds, which says nothing to a user.
        Err(e) => Err(match canonical[..19].parse::<jiff::civil::DateTime>() {
            Ok(_) => TimeError::TooLate {
                text: text.to_string(),
            },
            Err(_) => TimeError::NoSuchTime {
                text: text.to_string(),
                why: e.to_string(),
            },
        }),
    }
}

/// Why a time is refused by [`parse_time`]; each names the text as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    /// Not in RFC 3339's `date-time` shape; `why` says where it departs.
    Shape {
        /// The time as given.
        text: String,
        /// What is wrong with its shape.
        why: &'static str,
    },
    /// In shape, but no such time exists (February 30th), as jiff says.
    NoSuchTime {
        /// The time as given.
        text: String,
        /// jiff's reason.
        why: String,
    },
    /// After the latest time metagate reads.
    TooLate {
        /// The time as given.
        text: String,
    },
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeError::Shape { text, why } => write!(
                f,
                "{text:?} is not an RFC 3339 time: {why} (write e.g. 2026-11-20T10:00:00Z or 2026-11-20T12:00:00+02:00)"
            ),
            TimeError::NoSuchTime { text, why } => {
                write!(f, "{text:?} is not an RFC 3339 time: {why}")
            }
            TimeError::TooLate { text } => write!(
                f,
                "{text:?} is after {}, the limit of the times metagate reads",
                jiff::Timestamp::MAX.strftime("%Y-%m-%dT%H:%M:%SZ")
            ),
        }
    }
}

impl std::error::Error for TimeError {}

/// Checks `text` against RFC 3339's `date-time` and returns it as jiff is to read it: with at
/// most nine digits of a second's fraction (a time is kept to the millisecond). Says what is
/// wrong otherwise.
fn rfc3339(text: &str) -> Result<Cow<'_, str>, &'static str> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range.clone())
            .is_some_and(|d| d.len() == range.len() && d.iter().all(u8::is_ascii_digit))
    };
    let two = |at: usize| u32::from(b[at] - b'0') * 10 + u32::from(b[at + 1] - b'0');
    if !(digits(0..4) && b.get(4) == Some(&b'-')) {
        return Err(if b.first().is_some_and(|c| *c == b'+' || *c == b'-') {
            "the year is four digits, 0000 to 9999"
        } else {
            "it starts with the date as YYYY-MM-DD"
        });
    }
    if !(digits(5..7) && b.get(7) == Some(&b'-') && digits(8..10)) {
        return Err("it starts with the date as YYYY-MM-DD");
    }
    match b.get(10) {
        Some(b'T' | b't' | b' ') => {}
        None => return Err("a date alone is no time: add the time and its offset"),
        Some(_) => return Err("the date and the time are separated by T"),
    }
    if !(digits(11..13) && b.get(13) == Some(&b':') && digits(14..16)) {
        return Err("the time is HH:MM:SS");
    }
    if b.get(16) != Some(&b':') || !digits(17..19) {
        return Err("the time is HH:MM:SS: the seconds are required");
    }
    if two(11) > 23 || two(14) > 59 || two(17) > 60 {
        return Err("the time is HH:MM:SS, hours to 23, minutes to 59, seconds to 60");
    }
    let mut at = 19;
    let mut fraction = "";
    let mut truncated = false;
    match b.get(at) {
        Some(b'.') => {
            let n = b[at + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if n == 0 {
                return Err("a decimal point is followed by digits");
            }
            fraction = &text[at..at + 1 + n.min(9)];
            truncated = n > 9;
            at += 1 + n;
        }
        Some(b',') => return Err("the seconds' fraction follows a point, not a comma"),
        _ => {}
    }
    let offset = match b.get(at) {
        Some(b'Z' | b'z') => {
            at += 1;
            "Z"
        }
        Some(b'+' | b'-') => {
            let start = at;
            if !(digits(at + 1..at + 3) && b.get(at + 3) == Some(&b':') && digits(at + 4..at + 6)) {
                return Err("the offset is ±HH:MM");
            }
            if two(at + 1) > 23 || two(at + 4) > 59 {
                return Err("an offset is at most ±23:59");
            }
            at += 6;
            &text[start..at]
        }
        None => return Err("the offset is missing: add Z for UTC, or ±HH:MM"),
        Some(_) => return Err("the time ends with its offset: Z, or ±HH:MM"),
    };
    match b.get(at) {
        None => {}
        Some(b'[') => return Err("a time zone in brackets is not part of RFC 3339"),
        Some(b':') => return Err("an offset has no seconds: it is ±HH:MM"),
        Some(_) => return Err("there is more after the offset"),
    }
    if !truncated {
        // jiff reads this spelling as it is (a lowercase `t` or `z`, a space for the `T`).
        return Ok(Cow::Borrowed(text));
    }
    // More digits of a second than jiff reads: the rest is below a nanosecond.
    Ok(Cow::Owned(format!(
        "{}T{}{fraction}{offset}",
        &text[..10],
        &text[11..19]
    )))
}

/// An RFC 3339 time in UTC, to the second when there are no milliseconds.
pub fn format_time(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(ts) if ms % 1000 == 0 => ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        Err(_) => ms.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> AxisTable {
        AxisTable::new([
            ("fetch", "transport"),
            ("http", "transport"),
            ("scrape", "extraction"),
        ])
    }

    #[test]
    fn a_referral_is_never_a_success() {
        let line = r#"{"type":"outcome","tool":"w","status":"ok","error_type":"low_utility"}"#;
        let (e, notes) = parse(line, 0, &table()).unwrap();
        let Event::Outcome(o) = e else { panic!() };
        assert!(!o.ok);
        assert_eq!(o.error_type.as_deref(), Some("low_utility"));
        assert!(
            notes[0].contains("recorded as a low_utility referral"),
            "{notes:?}"
        );
        let line = r#"{"type":"outcome","tool":"w","status":"ok","error_type":"timeout"}"#;
        let e = parse(line, 0, &table()).unwrap_err().to_string();
        assert!(e.contains("belongs with"), "{e}");
    }

    /// An integrator's own error type is kept as given; metagate's own types are known.
    #[test]
    fn an_error_type_outside_the_taxonomy_is_kept() {
        let line = r#"{"type":"outcome","tool":"w","status":"error","error_type":"vendor_quota"}"#;
        let (e, notes) = parse(line, 0, &table()).unwrap();
        let Event::Outcome(o) = e else { panic!() };
        assert_eq!(o.error_type.as_deref(), Some("vendor_quota"));
        assert!(notes.is_empty(), "{notes:?}");
        assert!(!known_error_type("vendor_quota"));
        for known in [
            "timeout",
            "wrong_tool_boundary",
            "low_utility",
            "malformed_call",
        ] {
            assert!(known_error_type(known), "{known}");
        }
    }

    #[test]
    fn times_out_of_range_name_the_limit() {
        assert!(parse_time("9999-12-30T22:00:00Z").is_ok());
        for late in ["9999-12-31T23:59:59Z", "9999-12-31 23:59:59.0000000001z"] {
            let e = parse_time(late).unwrap_err().to_string();
            assert!(e.contains("after 9999-12-30T22:00:00Z"), "{late}: {e}");
        }
        // The earliest RFC 3339 time, pushed back a day less a minute, is still in range.
        assert!(parse_time("0000-01-01T00:00:00+23:59").is_ok());
        for bad in ["2026-02-30T00:00:00Z", "2026-11-20T10:00:00", "soon"] {
            let e = parse_time(bad).unwrap_err().to_string();
            assert!(e.contains("is not an RFC 3339 time"), "{bad}: {e}");
        }
    }

    #[test]
    fn times_are_rfc_3339_and_nothing_wider() {
        let at = |t: &str| parse_time(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        let ten = at("2026-11-20T10:00:00Z");
        // RFC 3339 §5.6: lowercase t and z; and the space its note allows for readability.
        for same in [
            "2026-11-20t10:00:00z",
            "2026-11-20 10:00:00Z",
            "2026-11-20T12:00:00+02:00",
            "2026-11-20T08:00:00-02:00",
            "2026-11-20T10:00:00-00:00",
            " 2026-11-20T10:00:00Z\n",
            "2026-11-20T10:00:00.0000000000001Z",
        ] {
            assert_eq!(at(same), ten, "{same}");
        }
        assert_eq!(at("2026-11-20T10:00:00.25Z"), ten + 250);
        assert_eq!(at("2026-11-20T11:59:00+01:59"), ten);
        // A leap second reads as the second before it.
        assert_eq!(at("2016-12-31T23:59:60Z"), at("2016-12-31T23:59:59Z"));
        for (bad, why) in [
            ("2026-11-20T10:00:00+25:00", "at most ±23:59"),
            ("2026-11-20T10:00:00+24:00", "at most ±23:59"),
            ("2026-11-20T10:00:00+02:60", "at most ±23:59"),
            ("2026-11-20T10:00:00+25:59:59", "at most ±23:59"),
            ("2026-11-20T10:00:00+02:00:30", "no seconds"),
            ("2026-11-20T10:00:00+0200", "±HH:MM"),
            ("2026-11-20T10:00:00+02", "±HH:MM"),
            ("20261120T100000Z", "YYYY-MM-DD"),
            ("2026-11-20T100000Z", "HH:MM:SS"),
            ("2026-11-20T10Z", "HH:MM:SS"),
            ("2026-11-20T10:00Z", "seconds are required"),
            ("2026-11-20T24:00:00Z", "hours to 23"),
            ("2026-11-20T10:00:00Z[Europe/Paris]", "brackets"),
            ("2026-11-20T10:00:00+01:00[Europe/Paris]", "brackets"),
            ("+002026-11-20T10:00:00Z", "four digits"),
            ("-002026-11-20T10:00:00Z", "four digits"),
            ("2026-11-20T10:00:00,5Z", "comma"),
            ("2026-11-20T10:00:00.Z", "followed by digits"),
            ("2026-11-20", "date alone"),
            ("2026-11-20_10:00:00Z", "separated by T"),
            ("2026-11-20T10:00:00ZZ", "more after the offset"),
            ("2026-11-20T10:00:00 Z", "ends with its offset"),
            ("2026-11-20T10:00:00", "offset is missing"),
            ("2026-11-2T10:00:00Z", "YYYY-MM-DD"),
            ("", "YYYY-MM-DD"),
            ("２０２６-11-20T10:00:00Z", "YYYY-MM-DD"),
        ] {
            let e = parse_time(bad).unwrap_err().to_string();
            assert!(
                e.contains("is not an RFC 3339 time") && e.contains(why),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_time_far_ahead_of_now_is_recorded_with_a_warning() {
        let now = parse_time("2026-11-20T10:00:00Z").unwrap();
        let at = |ts: &str| {
            let line = format!(r#"{{"type":"ask","ts":"{ts}","text":"hi"}}"#);
            let (event, warnings) = parse(&line, now, &table()).unwrap();
            let Event::Ask(a) = event else { panic!() };
            assert_eq!(a.ts_ms, parse_time(ts).unwrap());
            warnings
        };
        // Clocks a few minutes apart, and the past, are not worth a word.
        assert!(at("2026-11-20T10:04:59Z").is_empty());
        assert!(at("2020-01-01T00:00:00Z").is_empty());
        for (ts, ahead) in [
            ("2026-11-20T10:10:00Z", "10 minutes"),
            ("2026-11-20T19:00:00+02:00", "7 hours"),
            ("2026-11-21T16:00:00Z", "30 hours"),
            ("2062-11-20T10:00:00Z", "13149 days"),
        ] {
            let warnings = at(ts);
            assert_eq!(warnings.len(), 1, "{ts}");
            assert!(
                warnings[0].contains(&format!("is {ahead} after now")),
                "{ts}: {warnings:?}"
            );
        }
    }

    #[test]
    fn axes_are_normalized_and_kept_raw() {
        let line = r#"{"type":"outcome","ts":"2026-11-20T10:00:00Z","session":"s1","tool":"web_fetcher","method":"fetch_url","status":"error","error_type":"wrong_tool_boundary","error_message":"crosses","metadata":{"boundary_axes":[" Fetch ","HTTP","scrape","Task  Shape",""],"observed_task_shape":"fetch + extract","evidence":"titles were menu items"}}"#;
        let now = parse_time("2026-11-20T10:00:00Z").unwrap();
        let (event, warnings) = parse(line, now, &table()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let Event::Outcome(o) = event else { panic!() };
        assert_eq!(o.axes, ["transport", "extraction", "task_shape"]);
        assert_eq!(o.axes_raw.len(), 5);
        assert_eq!(o.ts_ms, parse_time("2026-11-20T10:00:00Z").unwrap());
        assert!(!o.ok);
        assert_eq!(o.observed_task_shape.as_deref(), Some("fetch + extract"));
    }

    #[test]
    fn every_event_type_reads() {
        let now = 1_000;
        let (e, _) = parse(
            r#"{"type":"outcome","tool":"calculator","status":"ok"}"#,
            now,
            &table(),
        )
        .unwrap();
        let Event::Outcome(o) = e else { panic!() };
        assert!(o.ok && o.ts_ms == 1_000);
        let (e, _) = parse(r#"{"type":"ask","session":"s1","user":"u1","text":"top movies","capabilities":["HTTP_Fetch ","html_extract"]}"#, now, &table()).unwrap();
        let Event::Ask(a) = e else { panic!() };
        assert_eq!(a.capabilities, ["http_fetch", "html_extract"]);
        let (e, _) = parse(
            r#"{"type":"correction","session":"s1","tool":"web_fetcher","note":"a menu"}"#,
            now,
            &table(),
        )
        .unwrap();
        assert_eq!(e.kind(), "correction");
    }

    #[test]
    fn bad_events_say_what_is_wrong() {
        let cases = [
            ("nope", "not JSON"),
            ("[1]", "object"),
            (r#"{"tool":"x"}"#, "missing \"type\""),
            (r#"{"type":"party"}"#, "unknown event type"),
            (r#"{"type":"outcome","status":"ok"}"#, "missing \"tool\""),
            (
                r#"{"type":"outcome","tool":"x","status":"fine"}"#,
                "\"status\"",
            ),
            (
                r#"{"type":"outcome","tool":"x","status":"error","error_type":"  "}"#,
                "\"error_type\" is empty",
            ),
            (
                r#"{"type":"outcome","tool":"x","status":"ok","ts":"yesterday"}"#,
                "RFC 3339",
            ),
            (
                r#"{"type":"outcome","tool":"x","status":"ok","metadata":{"boundary_axes":"a"}}"#,
                "array of strings",
            ),
            (r#"{"type":"ask","capabilities":[1]}"#, "non-empty strings"),
            ("\"ok\"", "object"),
            (
                r#"{"type":"outcome","tool":"a","tool":"b","status":"ok"}"#,
                "the field \"tool\" is given twice",
            ),
            (
                r#"{"type":"ask","type":"outcome","tool":"a","status":"ok"}"#,
                "\"type\" is given twice",
            ),
            (
                r#"{"type":"outcome","tool":"a","status":"error","error_type":"wrong_tool_boundary","metadata":{"boundary_axes":["transport","extraction"],"evidence":"real","boundary_axes":["x"],"evidence":"forged"}}"#,
                "the field \"metadata.boundary_axes\" is given twice",
            ),
            (
                r#"{"type":"outcome","tool":"a","status":"ok","metadata":{"evidence":"a","evi\u0064ence":"b"}}"#,
                "the field \"metadata.evidence\" is given twice",
            ),
            (
                r#"{"type":"outcome","tool":"a","status":"ok","metadata":{"pages":[1,{"n":2.5e400},{"title":"a","title":"b"}]}}"#,
                "the field \"metadata.pages[2].title\" is given twice",
            ),
            (
                r#"{"type":"outcome","tool":"a","status":"ok","metadata":{"x":{"y":{"z":1,"z":2}}}}"#,
                "the field \"metadata.x.y.z\" is given twice",
            ),
        ];
        for (line, want) in cases {
            let e = parse(line, 0, &table()).unwrap_err().to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
        let (_, warnings) = parse(
            r#"{"type":"correction","tool":"x","sesion":"s"}"#,
            0,
            &table(),
        )
        .unwrap();
        assert_eq!(warnings, ["unknown field \"sesion\" ignored"]);
    }

    #[test]
    fn metadata_keeps_its_values_and_may_repeat_a_name_elsewhere() {
        let line = r#"{"type":"outcome","tool":"a","status":"ok","metadata":{"n":1.50,"big":123456789012345678901234567890,"a":{"id":1},"b":{"id":2},"list":[{"id":3},{"id":4}],"evidence":"e"}}"#;
        let (e, warnings) = parse(line, 0, &table()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let Event::Outcome(o) = e else { panic!() };
        assert_eq!(o.evidence.as_deref(), Some("e"));
        assert_eq!(
            o.metadata.unwrap().to_string(),
            r#"{"n":1.50,"big":123456789012345678901234567890,"a":{"id":1},"b":{"id":2},"list":[{"id":3},{"id":4}],"evidence":"e"}"#
        );
        // Too deep a nesting is refused, not a crash.
        let deep = format!(
            r#"{{"type":"outcome","tool":"a","status":"ok","metadata":{}1{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(
            parse(&deep, 0, &table())
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
    }

    #[test]
    fn secrets_in_free_text_are_redacted() {
        let line = r#"{"type":"outcome","tool":"x","status":"error","error_type":"server_error","error_message":"401 with Authorization: Bearer sk-abcdefghijklmnopqrstuvwx","metadata":{"api_key":"hunter2hunter2"}}"#;
        let (e, _) = parse(line, 0, &table()).unwrap();
        let Event::Outcome(o) = e else { panic!() };
        assert!(
            !o.error_message
                .unwrap()
                .contains("sk-abcdefghijklmnopqrstuvwx")
        );
        assert_eq!(o.metadata.unwrap()["api_key"], redact::REDACTED);
        // Axes go to reports and the prompt block: a token there is stored redacted and is
        // no axis; an ask's user is free text too.
        let line = r#"{"type":"outcome","tool":"t","status":"error","error_type":"wrong_tool_boundary","metadata":{"boundary_axes":["ghp_16C7e42F292c6912E7710c838347Ae178B4a","fetch"]}}"#;
        let (e, _) = parse(line, 0, &table()).unwrap();
        let Event::Outcome(o) = e else { panic!() };
        assert_eq!(o.axes_raw, [redact::REDACTED, "fetch"]);
        assert_eq!(o.axes, ["transport"]);
        let line = r#"{"type":"ask","user":"AKIAIOSFODNN7EXAMPLE","text":"hi"}"#;
        let (e, _) = parse(line, 0, &table()).unwrap();
        let Event::Ask(a) = e else { panic!() };
        assert_eq!(a.user.as_deref(), Some(redact::REDACTED));
    }

    #[test]
    fn times_round_trip() {
        let ms = parse_time("2026-11-20T12:00:00+02:00").unwrap();
        assert_eq!(format_time(ms), "2026-11-20T10:00:00Z");
        assert_eq!(format_time(ms + 5), "2026-11-20T10:00:00.005Z");
    }
}
