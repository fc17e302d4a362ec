//! A strict JSON scanner that splits an object into its fields' raw text without building
//! values: the gate's fast path only reads the few fields it owns, and copies the rest.
//!
//! It accepts exactly what `serde_json` accepts (RFC 8259, nesting up to 128 levels); a
//! property test holds the two to agreement. Anything it refuses goes the slow way, through
//! the lenient reader, so a disagreement could cost time but never change a call.

use std::borrow::Cow;

/// serde_json refuses the 128th nested container; so does the scanner.
const MAX_DEPTH: usize = 128;

/// One field of an object: its key (borrowed when it has no escapes) and its value's JSON
/// text; for an object value the scan was asked to open, its fields too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field<'a> {
    pub(crate) key: Cow<'a, str>,
    pub(crate) value: &'a str,
    pub(crate) fields: Option<Vec<Field<'a>>>,
}

/// The fields of the one JSON object `text` holds (whitespace around it allowed), in order,
/// or `None` when `text` is not exactly one strictly valid JSON object.
pub(crate) fn object_fields(text: &str) -> Option<Vec<Field<'_>>> {
    object_fields_opening(text, &|_, _| false)
}

/// As [`object_fields`], also splitting the object values for which `open(key, depth)` says
/// so (depth 1 is the outer object's fields), in the same pass.
pub(crate) fn object_fields_opening<'a>(
    text: &'a str,
    open: &dyn Fn(&str, usize) -> bool,
) -> Option<Vec<Field<'a>>> {
    let bytes = text.as_bytes();
    let pos = skip_ws(bytes, 0);
    let (fields, end) = split_object(text, pos, 1, open)?;
    (skip_ws(bytes, end) == bytes.len()).then_some(fields)
}

/// Splits the object at `pos` into fields; `depth` counts it among the containers open.
fn split_object<'a>(
    text: &'a str,
    mut pos: usize,
    depth: usize,
    open: &dyn Fn(&str, usize) -> bool,
) -> Option<(Vec<Field<'a>>, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(pos) != Some(&b'{') || depth >= MAX_DEPTH {
        return None;
    }
    pos = skip_ws(bytes, pos + 1);
    let mut fields = Vec::with_capacity(8);
    if bytes.get(pos) == Some(&b'}') {
        return Some((fields, pos + 1));
    }
    loop {
        let key_start = pos;
        let escaped;
        (pos, escaped) = string_end(bytes, pos)?;
        let key = if escaped {
            decode_string(&text[key_start..pos])?
        } else {
            Cow::Borrowed(&text[key_start + 1..pos - 1])
        };
        pos = skip_ws(bytes, pos);
        if bytes.get(pos) != Some(&b':') {
            return None;
        }
        pos = skip_ws(bytes, pos + 1);
        let value_start = pos;
        let nested = if bytes.get(pos) == Some(&b'{') && open(&key, depth) {
            let (inner, end) = split_object(text, pos, depth + 1, open)?;
            pos = end;
            Some(inner)
        } else {
            pos = skip_value(bytes, pos, depth)?;
            None
        };
        fields.push(Field {
            key,
            value: &text[value_start..pos],
            fields: nested,
        });
        pos = skip_ws(bytes, pos);
        match bytes.get(pos) {
            Some(b',') => pos = skip_ws(bytes, pos + 1),
            Some(b'}') => return Some((fields, pos + 1)),
            _ => return None,
        }
    }
}

/// The text of a JSON string literal (quotes included) decoded; borrowed without escapes.
pub(crate) fn decode_string(literal: &str) -> Option<Cow<'_, str>> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    if memchr::memchr(b'\\', inner.as_bytes()).is_some() {
        match unescape_plain(inner) {
            Some(text) => Some(Cow::Owned(text)),
            None => serde_json::from_str::<String>(literal).ok().map(Cow::Owned),
        }
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// The inside of a string literal decoded, when its escapes are all single characters (`\"`,
/// `\n`, …) and it holds no raw quote or control character; None leaves the rest (`\u`, and
/// anything serde_json must judge) to serde_json. Stringified arguments are full of `\"`.
fn unescape_plain(inner: &str) -> Option<String> {
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut start = 0;
    loop {
        let end = memchr::memchr(b'\\', &bytes[start..]).map_or(bytes.len(), |k| start + k);
        let run = &bytes[start..end];
        if run.iter().any(|&b| b < 0x20 || b == b'"') {
            return None;
        }
        out.extend_from_slice(run);
        if end == bytes.len() {
            break;
        }
        out.push(match bytes.get(end + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'b' => 0x08,
            b'f' => 0x0c,
            _ => return None,
        });
        start = end + 2;
    }
    // Only ASCII was put in for escapes, between runs of the (valid) input.
    String::from_utf8(out).ok()
}

/// Writes `s` as a JSON string literal, escaped exactly as serde_json escapes it, copying
/// the runs that need no escaping whole.
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    write_escaped(s, out);
    out.push(b'"');
}

/// Writes the pieces as one JSON string, as [`write_string`] writes their concatenation.
#[cfg(test)]
fn write_string_parts(parts: &[&str], out: &mut Vec<u8>) {
    out.reserve(parts.iter().map(|p| p.len()).sum::<usize>() + 2);
    out.push(b'"');
    for part in parts {
        write_escaped(part, out);
    }
    out.push(b'"');
}

/// The inside of a JSON string: `s` with quotes, backslashes and control characters escaped.
fn write_escaped(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let mut start = 0;
    loop {
        let stop = plain_run(bytes, start);
        out.extend_from_slice(&bytes[start..stop]);
        let Some(&b) = bytes.get(stop) else { break };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]),
        }
        start = stop + 1;
    }
}

/// Writes a value as compact JSON, byte for byte what `serde_json::to_writer` writes.
pub fn write_value(v: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => serde_json::to_writer(&mut *out, n).expect("writing to a Vec"),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => write_map(map.iter().map(|(k, v)| (k.as_str(), v)), out),
    }
}

/// Writes an object as compact JSON (see [`write_value`]).
pub fn write_map<'a>(
    entries: impl Iterator<Item = (&'a str, &'a serde_json::Value)>,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for (i, (k, item)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(k, out);
        out.push(b':');
        write_value(item, out);
    }
    out.push(b'}');
}

/// A key an object holds twice, and where: the JSON pointer of the object (from the value
/// [`repeated_key`] was given) and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RepeatedKey {
    pub(crate) pointer: String,
    pub(crate) key: String,
}

/// The first key some object inside the strict JSON value `text` holds twice (readers differ
/// on which of the two they keep). `None` when every object's keys are distinct, or when
/// `text` is not strict JSON (which the caller refuses on its own).
pub(crate) fn repeated_key(text: &str) -> Option<RepeatedKey> {
    let bytes = text.as_bytes();
    let mut pointer = String::new();
    repeated_in(text, skip_ws(bytes, 0), 0, &mut pointer)
}

/// [`repeated_key`] for the value at `pos`, whose place is `pointer`.
fn repeated_in(text: &str, pos: usize, depth: usize, pointer: &mut String) -> Option<RepeatedKey> {
    let bytes = text.as_bytes();
    match bytes.get(pos)? {
        b'{' => {
            let (fields, _) = split_object(text, pos, depth + 1, &|_, _| false)?;
            repeated_among(text, &fields, depth + 1, pointer)
        }
        b'[' => {
            if depth + 1 >= MAX_DEPTH {
                return None;
            }
            let mut at = skip_ws(bytes, pos + 1);
            let mut index = 0usize;
            while bytes.get(at) != Some(&b']') {
                if matches!(bytes.get(at), Some(b'{' | b'[')) {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    let found = repeated_in(text, at, depth + 1, pointer);
                    pointer.truncate(len);
                    if found.is_some() {
                        return found;
                    }
                }
                at = skip_ws(bytes, skip_value(bytes, at, depth + 1)?);
                match bytes.get(at)? {
                    b',' => at = skip_ws(bytes, at + 1),
                    b']' => {}
                    _ => return None,
                }
                index += 1;
            }
            None
        }
        _ => None,
    }
}

/// The first key `fields` (an object's, at `pointer`) hold twice, or one nested in their
/// values. `depth` counts the containers open around the values.
pub(crate) fn repeated_among(
    text: &str,
    fields: &[Field<'_>],
    depth: usize,
    pointer: &mut String,
) -> Option<RepeatedKey> {
    let twice = if fields.len() <= 16 {
        fields
            .iter()
            .enumerate()
            .find(|(i, f)| fields[..*i].iter().any(|g| g.key == f.key))
            .map(|(_, f)| f)
    } else {
        let mut seen = std::collections::HashSet::with_capacity(fields.len());
        fields.iter().find(|f| !seen.insert(&f.key))
    };
    if let Some(f) = twice {
        return Some(RepeatedKey {
            pointer: pointer.clone(),
            key: f.key.to_string(),
        });
    }
    for f in fields {
        if !matches!(f.value.as_bytes().first(), Some(b'{' | b'[')) {
            continue;
        }
        let len = pointer.len();
        pointer.push('/');
        pointer.push_str(&f.key.replace('~', "~0").replace('/', "~1"));
        // The value's offset within `text`, which its slice borrows from.
        let at = f.value.as_ptr() as usize - text.as_ptr() as usize;
        let found = repeated_in(text, at, depth, pointer);
        pointer.truncate(len);
        if found.is_some() {
            return found;
        }
    }
    None
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// The end of the value starting at `pos`. `depth` counts the containers already open.
fn skip_value(bytes: &[u8], pos: usize, depth: usize) -> Option<usize> {
    match *bytes.get(pos)? {
        b'"' => skip_string(bytes, pos),
        b'{' => skip_container(bytes, pos, depth, b'}'),
        b'[' => skip_container(bytes, pos, depth, b']'),
        b't' => skip_literal(bytes, pos, b"true"),
        b'f' => skip_literal(bytes, pos, b"false"),
        b'n' => skip_literal(bytes, pos, b"null"),
        b'-' | b'0'..=b'9' => skip_number(bytes, pos),
        _ => None,
    }
}

fn skip_container(bytes: &[u8], pos: usize, depth: usize, close: u8) -> Option<usize> {
    if depth + 1 >= MAX_DEPTH {
        return None;
    }
    let object = close == b'}';
    let mut pos = skip_ws(bytes, pos + 1);
    if bytes.get(pos) == Some(&close) {
        return Some(pos + 1);
    }
    loop {
        if object {
            pos = skip_string(bytes, pos)?;
            pos = skip_ws(bytes, pos);
            if bytes.get(pos) != Some(&b':') {
                return None;
            }
            pos = skip_ws(bytes, pos + 1);
        }
        pos = skip_value(bytes, pos, depth + 1)?;
        pos = skip_ws(bytes, pos);
        match *bytes.get(pos)? {
            b',' => pos = skip_ws(bytes, pos + 1),
            c if c == close => return Some(pos + 1),
            _ => return None,
        }
    }
}

/// The end of the string literal starting at `pos` (which must be a quote).
fn skip_string(bytes: &[u8], pos: usize) -> Option<usize> {
    string_end(bytes, pos).map(|(end, _)| end)
}

/// The end of the string literal starting at `pos`, and whether it holds escapes.
fn string_end(bytes: &[u8], pos: usize) -> Option<(usize, bool)> {
    if bytes.get(pos) != Some(&b'"') {
        return None;
    }
    let mut i = pos + 1;
    let mut escaped = false;
    loop {
        i = plain_run(bytes, i);
        match *bytes.get(i)? {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                match *bytes.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => i = unicode_escape_end(bytes, i)?,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

/// Where the `\\u` escape at `i` ends. serde_json reads a surrogate only as half of a pair;
/// a lone one goes to the lenient reader, which replaces it with U+FFFD. Out of line: the
/// loop over a string's plain runs stays small.
#[inline(never)]
fn unicode_escape_end(bytes: &[u8], i: usize) -> Option<usize> {
    let unit = hex_unit(bytes, i + 2)?;
    let after = i + 6;
    match unit {
        0xD800..=0xDBFF => {
            if bytes.get(after..after + 2) != Some(b"\\u".as_slice()) {
                return None;
            }
            (0xDC00..=0xDFFF)
                .contains(&hex_unit(bytes, after + 2)?)
                .then_some(after + 6)
        }
        0xDC00..=0xDFFF => None,
        _ => Some(after),
    }
}

/// The UTF-16 code unit written as four hex digits at `pos`.
fn hex_unit(bytes: &[u8], pos: usize) -> Option<u16> {
    let hex = bytes.get(pos..pos + 4)?;
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

/// The index of the first byte from `i` on that ends a plain run inside a string: a quote, a
/// backslash or a control character. Eight bytes at a time, as most of a call is strings.
fn plain_run(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let quote = has_zero(x ^ (ONES * u64::from(b'"')));
        let backslash = has_zero(x ^ (ONES * u64::from(b'\\')));
        // A byte below 0x20 has none of its top three bits set.
        let control = has_zero(x & (ONES * 0xe0));
        // The lowest flag of each mask marks its first match exactly (a false flag can only
        // follow a true one), so the lowest of all three is the byte that ends the run.
        let flags = quote | backslash | control;
        if flags != 0 {
            return i + (flags.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

fn skip_literal(bytes: &[u8], pos: usize, word: &[u8]) -> Option<usize> {
    bytes[pos..].starts_with(word).then_some(pos + word.len())
}

fn skip_number(bytes: &[u8], mut pos: usize) -> Option<usize> {
    let digits = |bytes: &[u8], mut p: usize| {
        let start = p;
        while bytes.get(p).is_some_and(u8::is_ascii_digit) {
            p += 1;
        }
        (p > start).then_some(p)
    };
    if bytes.get(pos) == Some(&b'-') {
        pos += 1;
    }
    pos = match bytes.get(pos)? {
        b'0' => pos + 1,
        b'1'..=b'9' => digits(bytes, pos)?,
        _ => return None,
    };
    if bytes.get(pos) == Some(&b'.') {
        pos = digits(bytes, pos + 1)?;
    }
    if let Some(b'e' | b'E') = bytes.get(pos) {
        pos += 1;
        if let Some(b'+' | b'-') = bytes.get(pos) {
            pos += 1;
        }
        pos = digits(bytes, pos)?;
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    fn fields(text: &str) -> Vec<(String, String)> {
        object_fields(text)
            .unwrap_or_else(|| panic!("refused {text:?}"))
            .into_iter()
            .map(|f| (f.key.into_owned(), f.value.to_string()))
            .collect()
    }

    #[test]
    fn splits_fields_keeping_their_text() {
        assert_eq!(
            fields(r#" { "a" : 1.50 , "b\u0041":{"x":[1,{"y":null}]},"c":"q\"t" } "#),
            [
                ("a".to_string(), "1.50".to_string()),
                ("bA".to_string(), r#"{"x":[1,{"y":null}]}"#.to_string()),
                ("c".to_string(), r#""q\"t""#.to_string()),
            ]
        );
        assert_eq!(fields("{}"), []);
        let opened = object_fields_opening(r#"{"a":{"b":{"c":1}},"d":{"e":2}}"#, &|k, d| {
            k == "a" && d == 1
        })
        .unwrap();
        let inner = opened[0].fields.as_ref().unwrap();
        assert_eq!((inner[0].key.as_ref(), inner[0].value), ("b", r#"{"c":1}"#));
        assert!(inner[0].fields.is_none() && opened[1].fields.is_none());
    }

    #[test]
    fn writes_strings_as_serde_json_does() {
        let all: String = (0u8..=0x7f).map(char::from).chain("é€😀".chars()).collect();
        for s in ["", "plain", "a\"b\\c", "line\nnext\ttab", all.as_str()] {
            let mut ours = Vec::new();
            write_string(s, &mut ours);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
    }

    #[test]
    fn refuses_what_is_not_strict_json() {
        for bad in [
            "",
            "[]",
            "{",
            "{}}",
            "{} {}",
            r#"{"a"}"#,
            r#"{"a":}"#,
            r#"{"a":1,}"#,
            r#"{a:1}"#,
            r#"{'a':1}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":+1}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":tru}"#,
            r#"{"a":True}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12g4"}"#,
            "{\"a\":\"\n\"}",
            r#"{"a":[1,]}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":1}//"#,
            r#"{"a":NaN}"#,
        ] {
            assert!(object_fields(bad).is_none(), "accepted {bad:?}");
        }
    }

    #[test]
    fn nesting_stops_where_serde_json_stops() {
        for depth in [125, 126, 127, 128, 129, 200] {
            let text = format!("{{\"a\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
            let ours = object_fields(&text).is_some();
            let theirs = serde_json::from_str::<Value>(&text).is_ok();
            assert_eq!(ours, theirs, "depth {depth}");
            let text = format!(
                "{{\"a\":{}1{}}}",
                "{\"a\":".repeat(depth),
                "}".repeat(depth)
            );
            let ours = object_fields_opening(&text, &|_, _| true).is_some();
            let theirs = serde_json::from_str::<Value>(&text).is_ok();
            assert_eq!(ours, theirs, "opened depth {depth}");
        }
    }

    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| f.to_string()),
            "[a-z \"\\\\/é\\n]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-z_]{1,6}", inner), 0..5).prop_map(|v| {
                    let body: Vec<String> = v
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\" : {v}"))
                        .collect();
                    format!("{{ {} }}", body.join(", "))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn agrees_with_serde_json_on_valid_objects(body in prop::collection::vec(("[a-z_]{1,6}", json_text()), 0..6)) {
            let text = format!("{{{}}}", body.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect::<Vec<_>>().join(","));
            let theirs: Value = serde_json::from_str(&text).unwrap();
            let ours = object_fields(&text).expect("valid JSON accepted");
            prop_assert_eq!(ours.len(), body.len());
            for (field, (k, v)) in ours.iter().zip(&body) {
                prop_assert_eq!(field.key.as_ref(), k.as_str());
                prop_assert_eq!(field.value, v.as_str());
            }
            prop_assert!(theirs.is_object());
        }

        #[test]
        fn value_writing_agrees_with_serde_json(text in json_text()) {
            let v: Value = serde_json::from_str(&text).unwrap();
            let mut ours = Vec::new();
            write_value(&v, &mut ours);
            prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&v).unwrap());
        }

        #[test]
        fn plain_runs_end_at_the_first_quote_backslash_or_control(
            bytes in prop::collection::vec(prop::sample::select(vec![b'a', b' ', b'"', b'\\', b'\n', 0x1f, 0x20, 0x7f, 0xc3, 0xa9]), 0..40),
            start in 0usize..40,
        ) {
            let start = start.min(bytes.len());
            let naive = bytes[start..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .map_or(bytes.len(), |k| start + k);
            prop_assert_eq!(plain_run(&bytes, start), naive);
        }

        #[test]
        fn string_literals_decode_as_serde_json_decodes_them(
            s in any::<String>(),
            pieces in prop::collection::vec(prop::sample::select(vec![
                "a", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u0041", "\\ud83d\\ude00",
                "\\x", "\\", "\"", "\n", "é", " ",
            ]), 0..8),
        ) {
            let written = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(decode_string(&written).map(Cow::into_owned), Some(s.clone()));
            // Literals come from the scanner, already whole; with escapes in them (the road
            // this decodes itself) a broken one must still come out as serde_json says.
            let inner = pieces.concat();
            prop_assume!(inner.contains('\\'));
            let literal = format!("\"{inner}\"");
            prop_assert_eq!(
                decode_string(&literal).map(Cow::into_owned),
                serde_json::from_str::<String>(&literal).ok(),
                "{:?}", literal
            );
        }

        #[test]
        fn accepts_string_escapes_as_serde_json_does(
            pieces in prop::collection::vec(prop::sample::select(vec![
                "a", "\\u0041", "\\ud83d", "\\ude00", "\\ud800", "\\udfff", "\\uDBFF",
                "\\uDC00", "\\u", "\\n", "u",
            ]), 0..6),
        ) {
            // A surrogate the scanner let through once panicked where serde_json read it.
            let text = format!("{{\"k\":\"{}\"}}", pieces.concat());
            let theirs = serde_json::from_str::<Value>(&text).is_ok();
            prop_assert_eq!(object_fields(&text).is_some(), theirs, "{:?}", text);
        }

        #[test]
        fn string_writing_agrees_with_serde_json(s in any::<String>()) {
            let mut ours = Vec::new();
            write_string(&s, &mut ours);
            prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&s).unwrap());
        }

        #[test]
        fn pieces_are_written_as_their_concatenation(parts in prop::collection::vec(any::<String>(), 0..5)) {
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            let mut ours = Vec::new();
            write_string_parts(&parts, &mut ours);
            prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&parts.concat()).unwrap());
        }

        #[test]
        fn agrees_with_serde_json_on_broken_text(text in json_text(), cut in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let text = format!("{{\"k\":{text}}}");
            let mut bytes = text.into_bytes();
            let at = cut.index(bytes.len());
            bytes[at] = byte;
            if let Ok(broken) = std::str::from_utf8(&bytes) {
                let theirs = serde_json::from_str::<Value>(broken).is_ok_and(|v| v.is_object());
                prop_assert_eq!(object_fields(broken).is_some(), theirs, "{:?}", broken);
            }
        }
    }
}
