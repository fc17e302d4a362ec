//! What the readers of JSON-carrying dialects share: where a bracketed JSON value ends, reading
//! it (strictly, then through the lenient repair reader when nothing would be dropped), taking
//! one call object apart by the keys its dialect names, and writing one back.
//!
//! A call object that several markers hold (a list, `;`-separated objects) is one [`Found`]
//! whose span is the object alone: the brackets and separators between calls are kept text, so
//! replacing each span keeps the list valid.

use super::{Found, Refusal};
use serde_json::{Map, Value};
use std::ops::Range;

/// A refusal at `offset`.
pub(crate) fn refusal(offset: usize, message: impl Into<String>) -> Refusal {
    Refusal {
        offset,
        message: message.into(),
    }
}

/// The first index at or after `i` that is not ASCII whitespace.
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The last index before `end` (exclusive) after trimming ASCII whitespace.
pub(crate) fn trim_end_at(b: &[u8], mut end: usize) -> usize {
    while end > 0 && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

/// Where `needle` first starts in `hay` at or after `from`.
pub(crate) fn find_from(hay: &str, needle: &str, from: usize) -> Option<usize> {
    hay.get(from..)?.find(needle).map(|p| p + from)
}

/// The end (exclusive) of the JSON object or array opening at `open` (`{` or `[`), strings in
/// either quote skipped: `None` when the text ends first (the output was cut off), a closer
/// does not match its opener, or it nests deeper than 128 (no reader goes deeper). The
/// openers are kept one bit a level, so no search allocates.
pub(crate) fn bracketed_end(b: &[u8], open: usize) -> Option<usize> {
    // Bit `d` of `kinds`: the opener at depth `d` is `[`.
    let mut kinds: u128 = 0;
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return None;
                }
            }
            c @ (b'{' | b'[') => {
                if depth == 128 {
                    return None;
                }
                if c == b'[' {
                    kinds |= 1 << depth;
                } else {
                    kinds &= !(1 << depth);
                }
                depth += 1;
            }
            c @ (b'}' | b']') => {
                if depth == 0 {
                    return None;
                }
                depth -= 1;
                let list = kinds & (1 << depth) != 0;
                if list != (c == b']') {
                    return None;
                }
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Reads the JSON value `text[range]`: strict JSON (no repairs), or else (an object only)
/// the lenient repair reader when it reads the slice whole, dropping and completing nothing;
/// with the repairs it made.
pub(crate) fn read_json(text: &str, range: Range<usize>) -> Result<(Value, Vec<String>), Refusal> {
    let slice = &text[range.clone()];
    if let Ok(value) = serde_json::from_str::<Value>(slice) {
        return Ok((value, Vec::new()));
    }
    let fail = || {
        refusal(
            range.start,
            "the JSON here cannot be read whole; write it as one JSON value",
        )
    };
    if !slice.starts_with('{') {
        return Err(fail());
    }
    let parsed = crate::repair::parse(slice.as_bytes()).map_err(|e| {
        refusal(
            range.start,
            format!("the JSON here cannot be read whole: {e}"),
        )
    })?;
    let loses_text = parsed.repairs.iter().any(|r| {
        r.starts_with("ignored text")
            || r.starts_with("completed output")
            || r.contains("code fence")
    });
    if loses_text
        || parsed.more_calls > 0
        || parsed.dialect.is_some()
        || !parsed.warnings.is_empty()
    {
        return Err(fail());
    }
    Ok((parsed.value, parsed.repairs))
}

/// The keys one dialect writes a call object with.
pub(crate) struct CallKeys {
    /// The key of the tool name.
    pub name: &'static str,
    /// The keys the arguments may stand under (at most one of them present), the first
    /// being the one `write` uses.
    pub arguments: &'static [&'static str],
    /// The key of the call id, when the dialect carries one.
    pub id: Option<&'static str>,
    /// Keys the dialect allows beside those and that carry nothing (`"type": "function"`).
    pub ignored: &'static [(&'static str, &'static str)],
}

/// The name and arguments of `{"name": …, "arguments": {…}}`, the keys being `keys`, read
/// from `text[range]`.
pub(crate) fn read_call_object(
    text: &str,
    range: Range<usize>,
    keys: &CallKeys,
) -> Result<Found, Refusal> {
    let at = range.start;
    let (value, repairs) = read_json(text, range.clone())?;
    let Value::Object(map) = value else {
        return Err(refusal(at, "a call here must be a JSON object"));
    };
    let mut found = call_from_map(map, at, range, keys)?;
    found.repairs = repairs;
    Ok(found)
}

/// [`read_call_object`] on a map already read.
pub(crate) fn call_from_map(
    map: Map<String, Value>,
    at: usize,
    span: Range<usize>,
    keys: &CallKeys,
) -> Result<Found, Refusal> {
    let mut name = None;
    let mut arguments = None;
    let mut arguments_key = None;
    let mut id = None;
    for (key, value) in map {
        if key == keys.name {
            match value {
                Value::String(s) if !s.trim().is_empty() => name = Some(s),
                _ => {
                    return Err(refusal(
                        at,
                        format!("`{}` must be the tool name, a non-empty string", keys.name),
                    ));
                }
            }
        } else if let Some(&k) = keys.arguments.iter().find(|k| **k == key) {
            if arguments.is_some() {
                return Err(refusal(
                    at,
                    format!(
                        "a call holds both {}; write the arguments once",
                        keys.arguments
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                ));
            }
            arguments = Some(arguments_object(value, at, &key)?);
            arguments_key = Some(k);
        } else if Some(key.as_str()) == keys.id {
            match value {
                Value::String(s) => id = Some(s),
                Value::Number(n) => id = Some(n.to_string()),
                _ => return Err(refusal(at, format!("`{key}` must be a string"))),
            }
        } else if keys
            .ignored
            .iter()
            .any(|(k, v)| *k == key && value.as_str() == Some(v))
        {
        } else {
            return Err(refusal(
                at,
                format!(
                    "a call holds `{key}`, which is neither `{}` nor `{}`; nothing in it may be left unread",
                    keys.name, keys.arguments[0]
                ),
            ));
        }
    }
    let Some(name) = name else {
        return Err(refusal(
            at,
            format!("a call lacks `{}`, the tool name", keys.name),
        ));
    };
    Ok(Found {
        span,
        name,
        arguments: arguments.unwrap_or_default(),
        id,
        arguments_key,
        ..Found::default()
    })
}

/// The arguments `value` under `key`: an object, or a string holding one JSON object (how
/// OpenAI-style servers write them); `null` is no arguments.
fn arguments_object(value: Value, at: usize, key: &str) -> Result<Map<String, Value>, Refusal> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(refusal(
                at,
                format!(
                    "`{key}` is a string that does not hold one JSON object; write the arguments as an object"
                ),
            )),
        },
        _ => Err(refusal(
            at,
            format!("`{key}` must be an object of arguments"),
        )),
    }
}

/// `{"<name key>":name,"<arguments key>":{…}}` with the id first when the dialect writes
/// it first (`id_first`), else last; compact, as servers render calls. The arguments go
/// under the key the call came with, else the dialect's first.
pub(crate) fn write_call_object(
    keys: &CallKeys,
    found: &Found,
    name: &str,
    arguments: &Map<String, Value>,
    id_first: bool,
) -> String {
    let mut out = String::from("{");
    let id = keys.id.zip(found.id.as_deref());
    if id_first && let Some((k, v)) = id {
        push_member(&mut out, k, &Value::String(v.to_owned()));
        out.push(',');
    }
    push_member(&mut out, keys.name, &Value::String(name.to_owned()));
    out.push(',');
    let key = found
        .arguments_key
        .filter(|k| keys.arguments.contains(k))
        .unwrap_or(keys.arguments[0]);
    push_member(&mut out, key, &Value::Object(arguments.clone()));
    if !id_first && let Some((k, v)) = id {
        out.push(',');
        push_member(&mut out, k, &Value::String(v.to_owned()));
    }
    out.push('}');
    out
}

fn push_member(out: &mut String, key: &str, value: &Value) {
    out.push_str(&Value::String(key.to_owned()).to_string());
    out.push(':');
    out.push_str(&value.to_string());
}

/// The call objects of the JSON list opening at `open`: one [`Found`] per element, each span
/// the element alone. Returns them and the end of the list.
pub(crate) fn read_call_list(
    text: &str,
    open: usize,
    keys: &CallKeys,
) -> Result<(Vec<Found>, usize), Refusal> {
    let b = text.as_bytes();
    let Some(end) = bracketed_end(b, open) else {
        return Err(refusal(
            open,
            "the list of calls is cut off or its brackets do not match",
        ));
    };
    let mut calls = Vec::new();
    let mut i = skip_ws(b, open + 1);
    let close = end - 1;
    while i < close {
        if b[i] != b'{' {
            return Err(refusal(
                i,
                "each element of the list of calls must be a JSON object",
            ));
        }
        let Some(e) = bracketed_end(b, i) else {
            return Err(refusal(i, "a call in the list is cut off"));
        };
        calls.push(read_call_object(text, i..e, keys)?);
        i = skip_ws(b, e);
        if i < close {
            if b[i] != b',' {
                return Err(refusal(i, "calls in a list must be separated by commas"));
            }
            i = skip_ws(b, i + 1);
            if i >= close {
                // A trailing comma holds nothing; the list is read whole.
                break;
            }
        }
    }
    if calls.is_empty() {
        return Err(refusal(open, "the list of calls is empty"));
    }
    Ok((calls, end))
}

/// An object naming a tool of its own (`tool_name`, `function`, or `name` beside arguments):
/// a call, to a reader that takes the first `{` of a text.
pub(crate) fn names_a_tool(map: &Map<String, Value>) -> bool {
    map.contains_key("tool_name")
        || map.get("function").is_some_and(Value::is_object)
        || (map.contains_key("name")
            && ["arguments", "parameters", "input", "args", "tool_args"]
                .iter()
                .any(|k| map.contains_key(*k)))
}

/// Whether `value` is or holds (at any depth) an object naming a tool.
pub(crate) fn holds_a_call(value: &Value) -> bool {
    match value {
        Value::Object(map) => names_a_tool(map) || map.values().any(holds_a_call),
        Value::Array(items) => items.iter().any(holds_a_call),
        _ => false,
    }
}

/// Refuses arguments written outside JSON (Python, raw code) that hold a JSON call: a reader
/// taking the first `{` of the text would run that call, not the one checked.
pub(crate) fn refuse_inner_call(
    arguments: &Map<String, Value>,
    name: &str,
    at: usize,
) -> Result<(), Refusal> {
    if arguments.values().any(holds_a_call) {
        return Err(refusal(
            at,
            format!(
                "the arguments of `{name}` hold a call of their own (an object naming a tool):                  a reader taking the first `{{` would run that one; send each call as a call"
            ),
        ));
    }
    Ok(())
}

/// Whether raw text (code) holds a `{` with a key naming a tool after it: conservatively,
/// a JSON call a reader taking the first `{` would run.
pub(crate) fn text_holds_a_call(code: &str) -> bool {
    let Some(open) = code.find('{') else {
        return false;
    };
    let rest = &code[open..];
    [
        "\"name\"",
        "'name'",
        "\"tool_name\"",
        "'tool_name'",
        "\"function\"",
    ]
    .iter()
    .any(|k| rest.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_end_cases() {
        let cases: &[(&str, Option<usize>)] = &[
            (r#"{"a":1}"#, Some(7)),
            (r#"{"a":"}"} x"#, Some(9)),
            (r#"[{"a":[1,2]}]"#, Some(13)),
            (r#"{'a':'}'}"#, Some(9)),
            (r#"{"a":"\"}"}"#, Some(11)),
            (r#"{"a":1"#, None),
            (r#"{"a":1]"#, None),
            (r#"{"a":"x"#, None),
            (r#"[{]}"#, None),
            ("}", None),
        ];
        for (text, want) in cases {
            assert_eq!(bracketed_end(text.as_bytes(), 0), *want, "{text}");
        }
        let deep = |n: usize| format!("{}{}", "[{".repeat(n / 2), "}]".repeat(n / 2));
        assert_eq!(bracketed_end(deep(128).as_bytes(), 0), Some(256));
        assert_eq!(bracketed_end(deep(130).as_bytes(), 0), None);
    }

    #[test]
    fn call_objects_read_or_refuse() {
        let keys = CallKeys {
            name: "name",
            arguments: &["arguments", "parameters"],
            id: Some("id"),
            ignored: &[("type", "function")],
        };
        let ok: &[(&str, &str, &str, Option<&str>)] = &[
            (
                r#"{"name":"f","arguments":{"a":1}}"#,
                "f",
                r#"{"a":1}"#,
                None,
            ),
            (r#"{"name":"f","parameters":{}}"#, "f", "{}", None),
            (
                r#"{"type":"function","name":"f","parameters":{"q":"ü"}}"#,
                "f",
                r#"{"q":"ü"}"#,
                None,
            ),
            (
                r#"{"name":"f","arguments":"{\"a\":[1]}","id":"c1"}"#,
                "f",
                r#"{"a":[1]}"#,
                Some("c1"),
            ),
            (r#"{"name":"f"}"#, "f", "{}", None),
            (
                r#"{'name':'f','arguments':{'a':True}}"#,
                "f",
                r#"{"a":true}"#,
                None,
            ),
        ];
        for (text, name, args, id) in ok {
            let found = read_call_object(text, 0..text.len(), &keys).unwrap();
            assert_eq!(found.name, *name, "{text}");
            assert_eq!(
                Value::Object(found.arguments),
                serde_json::from_str::<Value>(args).unwrap()
            );
            assert_eq!(found.id.as_deref(), *id);
        }
        let bad = [
            r#"{"name":"f","arguments":{},"parameters":{}}"#,
            r#"{"name":"f","args":{}}"#,
            r#"{"arguments":{}}"#,
            r#"{"name":3,"arguments":{}}"#,
            r#"{"name":"f","arguments":"image.png"}"#,
            r#"{"name":"f","arguments":[1]}"#,
            r#"{"type":"other","name":"f"}"#,
            r#"["name"]"#,
        ];
        for text in bad {
            assert!(
                read_call_object(text, 0..text.len(), &keys).is_err(),
                "{text}"
            );
        }
    }
}

/// What every reader's tests check of a reading.
/// The end of the JSON value opening at `at` (`{` or `[`), or a refusal saying it was cut off.
pub(crate) fn value_end(text: &str, at: usize, what: &str) -> Result<usize, Refusal> {
    bracketed_end(text.as_bytes(), at).ok_or_else(|| {
        refusal(
            at,
            format!(
                "the {what} is cut off or its brackets do not match; not completed: send the \
                 whole call again"
            ),
        )
    })
}

/// The JSON object `text[range]` as arguments, with its repairs.
pub(crate) fn read_arguments(
    text: &str,
    range: Range<usize>,
) -> Result<(Map<String, Value>, Vec<String>), Refusal> {
    let at = range.start;
    match read_json(text, range)? {
        (Value::Object(map), repairs) => Ok((map, repairs)),
        (other, _) => Err(refusal(
            at,
            format!(
                "the arguments must be a JSON object, not {}",
                crate::repair::json_type_phrase(&other)
            ),
        )),
    }
}

/// A JSON object as compact text.
pub(crate) fn object_text(arguments: &Map<String, Value>) -> String {
    serde_json::to_string(arguments).expect("a map of values always serializes")
}

#[cfg(test)]
pub(crate) mod testing {
    use super::super::{Found, Refusal};
    use serde_json::{Map, Value};

    pub(crate) type Read = fn(&str) -> Result<Vec<Found>, Refusal>;
    pub(crate) type Write = fn(&Found, &str, &Map<String, Value>) -> String;

    /// One call a case expects: name, arguments as JSON, id.
    pub(crate) type Want<'a> = (&'a str, &'a str, Option<&'a str>);

    /// A text, the calls it reads as, and whether each uncorrected write gives back its span.
    pub(crate) type Case<'a> = (&'a str, &'a [Want<'a>], bool);

    fn summary(found: &[Found]) -> Vec<(String, Value, Option<String>)> {
        found
            .iter()
            .map(|f| {
                (
                    f.name.clone(),
                    Value::Object(f.arguments.clone()),
                    f.id.clone(),
                )
            })
            .collect()
    }

    /// `text` reads as `want`, with spans in order inside the text; writing every call back
    /// (uncorrected) and reading again gives the same calls; and when `canonical`, each
    /// uncorrected write is the very bytes of its span.
    pub(crate) fn check(read: Read, write: Write, text: &str, want: &[Want], canonical: bool) {
        let found = read(text).unwrap_or_else(|r| panic!("{text:?} refused: {r:?}"));
        let expected: Vec<_> = want
            .iter()
            .map(|(n, a, id)| {
                let args: Value = serde_json::from_str(a).expect("the case's arguments are JSON");
                (n.to_string(), args, id.map(str::to_owned))
            })
            .collect();
        assert_eq!(summary(&found), expected, "{text:?}");
        let mut last = 0;
        for f in &found {
            assert!(
                f.span.start >= last && f.span.end <= text.len(),
                "{text:?}: {f:?}"
            );
            assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
            last = f.span.end;
        }
        let mut rebuilt = text.to_owned();
        for f in found.iter().rev() {
            let again = write(f, &f.name, &f.arguments);
            if canonical {
                assert_eq!(
                    again,
                    &text[f.span.clone()],
                    "{text:?}: written back differently"
                );
            }
            rebuilt.replace_range(f.span.clone(), &again);
        }
        let reread = read(&rebuilt).unwrap_or_else(|r| panic!("{rebuilt:?} refused: {r:?}"));
        assert_eq!(
            summary(&reread),
            expected,
            "{rebuilt:?}, written back from {text:?}"
        );
        // A corrected call reads back as corrected, the others as they were.
        let first = &found[0];
        let mut corrected = Map::new();
        corrected.insert("path".into(), Value::String("/tmp/ü \"x\"\n".into()));
        corrected.insert(
            "n".into(),
            serde_json::json!([1, 2.5, {"k": null, "t": true}]),
        );
        let mut text2 = text.to_owned();
        text2.replace_range(first.span.clone(), &write(first, "fixed_name", &corrected));
        let reread = read(&text2).unwrap_or_else(|r| panic!("{text2:?} refused: {r:?}"));
        let mut want2 = expected.clone();
        want2[0].0 = "fixed_name".into();
        want2[0].1 = Value::Object(corrected);
        assert_eq!(summary(&reread), want2, "{text2:?}");
    }

    /// `text` is refused, at an offset inside it.
    pub(crate) fn refused(read: Read, text: &str) {
        match read(text) {
            Ok(found) => panic!("{text:?} read as {found:?}"),
            Err(r) => assert!(r.offset <= text.len(), "{text:?}: {r:?}"),
        }
    }
}
