//! What the readers of JSON-carrying dialects share: where a bracketed JSON value ends, reading
//! one whole (strictly, else through the lenient repair reader when it drops and completes
//! nothing), taking a call object apart, and writing one back.

use super::{Found, Refusal};
use serde_json::{Map, Value};
use std::ops::Range;

/// The end (exclusive) of the JSON object or array opening at `open`, strings skipped; `None`
/// when the text ends first (the output was cut off) or a closer does not match its opener.
pub(super) fn bracketed_end(b: &[u8], open: usize) -> Option<usize> {
    let mut stack: Vec<u8> = Vec::new();
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return None;
                }
            }
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            c @ (b'}' | b']') => {
                if stack.pop() != Some(c) {
                    return None;
                }
                if stack.is_empty() {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The first index at or after `i` that is not ASCII whitespace.
pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end of the JSON value opening at `at` (`{` or `[`), or a refusal saying it was cut off.
pub(super) fn value_end(text: &str, at: usize, what: &str) -> Result<usize, Refusal> {
    bracketed_end(text.as_bytes(), at).ok_or_else(|| {
        Refusal::at(
            at,
            format!(
                "the {what} is cut off or its brackets do not match; not completed: send the \
                 whole call again"
            ),
        )
    })
}

/// The JSON value `text[range]`, and the repairs it needed: strict JSON, or (an object only)
/// what the lenient reader reads when it reads the slice whole.
pub(super) fn read_json(text: &str, range: Range<usize>) -> Result<(Value, Vec<String>), Refusal> {
    let slice = &text[range.clone()];
    if let Ok(value) = serde_json::from_str::<Value>(slice) {
        return Ok((value, Vec::new()));
    }
    let fail =
        |why: String| Refusal::at(range.start, format!("the JSON here cannot be read: {why}"));
    if !slice.trim_start().starts_with('{') {
        return Err(fail("it is not one JSON value".to_string()));
    }
    let parsed = crate::repair::parse(slice.as_bytes()).map_err(|e| fail(e.to_string()))?;
    let loses_text = parsed.repairs.iter().any(|r| {
        r.starts_with("ignored text") || r.starts_with("completed output") || r.contains("fence")
    });
    if loses_text
        || parsed.more_calls > 0
        || parsed.dialect.is_some()
        || !parsed.warnings.is_empty()
    {
        return Err(fail(
            "reading it would drop or complete part of it; send it as one JSON object".to_string(),
        ));
    }
    Ok((parsed.value, parsed.repairs))
}

/// The JSON object `text[range]` as arguments, with its repairs.
pub(super) fn read_arguments(
    text: &str,
    range: Range<usize>,
) -> Result<(Map<String, Value>, Vec<String>), Refusal> {
    let at = range.start;
    match read_json(text, range)? {
        (Value::Object(map), repairs) => Ok((map, repairs)),
        (other, _) => Err(Refusal::at(
            at,
            format!(
                "the arguments must be a JSON object, not {}",
                crate::repair::json_type_phrase(&other)
            ),
        )),
    }
}

/// The keys a call object (`{"name": …, "arguments": {…}}`) may hold.
pub(super) struct CallKeys {
    /// The keys the arguments may stand under, at most one present.
    pub(super) arguments: &'static [&'static str],
    /// The key of the call id, when the dialect carries one.
    pub(super) id: Option<&'static str>,
}

/// The call in the JSON object `text[range]`: its `name`, its arguments under one of
/// `keys.arguments` (an object, or a string holding one), its id; any other key is refused,
/// for nothing in a call may be left unchecked.
pub(super) fn read_call_object(
    text: &str,
    range: Range<usize>,
    keys: &CallKeys,
) -> Result<Found, Refusal> {
    let at = range.start;
    let (value, mut repairs) = read_json(text, range.clone())?;
    let Value::Object(map) = value else {
        return Err(Refusal::at(at, "a call here must be a JSON object"));
    };
    let mut found = Found {
        span: range,
        ..Found::default()
    };
    let mut name = None;
    let mut arguments = None;
    for (key, value) in map {
        if key == "name" {
            match value {
                Value::String(s) if !s.trim().is_empty() => name = Some(s),
                _ => return Err(Refusal::at(at, "`name` must be the tool name, a string")),
            }
        } else if let Some(k) = keys.arguments.iter().find(|k| **k == key) {
            if arguments.is_some() {
                return Err(Refusal::at(
                    at,
                    "a call holds its arguments twice: a tool reading the other would run \
                     what was never checked; write them once",
                ));
            }
            found.arguments_key = Some(k);
            arguments = Some(arguments_object(value, at, k, &mut repairs)?);
        } else if Some(key.as_str()) == keys.id {
            match value {
                Value::String(s) => found.id = Some(s),
                Value::Number(n) => found.id = Some(n.to_string()),
                _ => return Err(Refusal::at(at, format!("`{key}` must be a string"))),
            }
        } else {
            return Err(Refusal::at(
                at,
                format!(
                    "a call holds `{key}`, which is neither `name` nor `{}`: nothing in a call \
                     may be left unread",
                    keys.arguments[0]
                ),
            ));
        }
    }
    found.name = name.ok_or_else(|| Refusal::at(at, "the call has no `name`"))?;
    found.arguments = arguments.unwrap_or_default();
    found.repairs = repairs;
    Ok(found)
}

/// Arguments as an object: an object, or a string that holds one (decoded).
fn arguments_object(
    value: Value,
    at: usize,
    key: &str,
    repairs: &mut Vec<String>,
) -> Result<Map<String, Value>, Refusal> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(map)) => {
                repairs.push(format!("decoded `{key}` from a JSON string into an object"));
                Ok(map)
            }
            _ => Err(Refusal::at(
                at,
                format!("`{key}` is a string that holds no JSON object"),
            )),
        },
        other => Err(Refusal::at(
            at,
            format!(
                "`{key}` must be an object, not {}",
                crate::repair::json_type_phrase(&other)
            ),
        )),
    }
}

/// A call object written again: `name`, its arguments under the key it came with (else
/// `default_key`), and its id under `id_key`.
pub(super) fn write_call_object(
    found: &Found,
    name: &str,
    arguments: &Map<String, Value>,
    default_key: &str,
    id_key: Option<&str>,
) -> String {
    let mut map = Map::new();
    map.insert("name".to_owned(), Value::String(name.to_owned()));
    map.insert(
        found.arguments_key.unwrap_or(default_key).to_owned(),
        Value::Object(arguments.clone()),
    );
    if let (Some(id), Some(key)) = (&found.id, id_key) {
        map.insert(key.to_owned(), Value::String(id.clone()));
    }
    Value::Object(map).to_string()
}

/// A JSON object as compact text.
pub(super) fn object_text(arguments: &Map<String, Value>) -> String {
    serde_json::to_string(arguments).expect("a map of values always serializes")
}
