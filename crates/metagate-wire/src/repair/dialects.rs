//! The text dialects of tool calls: `<function_calls>`/`<invoke>`/`<parameter>`,
//! `<invoke>`/`<tool_args>`, and `<tool_call>`.

use super::bytes::{find_byte, find_bytes, has_non_whitespace, skip_whitespace};
use super::messages::{MSG_CUT_STRING, ReadFailure, more_followed_warning};
use super::object_search::{FoundObject, ObjectSearch};
use super::{Dialect, Parsed};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The tag a text dialect opens with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum DialectTag {
    FunctionCalls,
    Invoke,
    ToolCall,
}

/// Whether `<name` followed by whitespace, `>` or `/` starts at `p`.
fn is_tag_at(b: &[u8], p: usize, name: &[u8]) -> bool {
    let e = p + 1 + name.len();
    e < b.len()
        && b[p] == b'<'
        && &b[p + 1..e] == name
        && matches!(b[e], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')
}

/// The first tag in `from..to` that opens a text dialect, and where it is.
pub(super) fn find_dialect_tag(b: &[u8], from: usize, to: usize) -> Option<(usize, DialectTag)> {
    let mut i = from;
    while let Some(p) = find_byte(b, b'<', i, to) {
        if is_tag_at(b, p, b"function_calls") {
            return Some((p, DialectTag::FunctionCalls));
        }
        if is_tag_at(b, p, b"invoke") {
            return Some((p, DialectTag::Invoke));
        }
        if is_tag_at(b, p, b"tool_call") {
            return Some((p, DialectTag::ToolCall));
        }
        i = p + 1;
    }
    None
}

/// Where the first `<name` tag in `from..to` starts.
fn find_named_tag(b: &[u8], name: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = find_byte(b, b'<', i, to) {
        if is_tag_at(b, p, name) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// How many `<name` tags stand in `from..to`.
fn count_tags(b: &[u8], name: &[u8], from: usize, to: usize) -> usize {
    let mut n = 0;
    let mut i = from;
    while let Some(p) = find_named_tag(b, name, i, to) {
        n += 1;
        i = p + 1;
    }
    n
}

/// An opening tag that was read.
struct OpenTag {
    /// Its `name` attribute, entities decoded.
    name: Option<String>,
    /// The offset just past the tag's `>`.
    content_start: usize,
    /// `<tag … />`: the tag has no content.
    self_closing: bool,
}

/// Reads the opening tag `<tag …>` at `p` and its `name` attribute.
fn read_open_tag(text: &str, p: usize, tag: &str) -> Result<OpenTag, ReadFailure> {
    let b = text.as_bytes();
    let len = b.len();
    let mut i = p + 1 + tag.len();
    let mut name = None;
    loop {
        i = skip_whitespace(b, i, len);
        if i >= len {
            return Err(ReadFailure::new(
                format!("<{tag}> tag is not closed with `>`"),
                p,
            ));
        }
        match b[i] {
            b'>' => {
                return Ok(OpenTag {
                    name,
                    content_start: i + 1,
                    self_closing: false,
                });
            }
            b'/' if i + 1 < len && b[i + 1] == b'>' => {
                return Ok(OpenTag {
                    name,
                    content_start: i + 2,
                    self_closing: true,
                });
            }
            _ => {}
        }
        let attr_start = i;
        while i < len && !matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | b'=' | b'>' | b'/') {
            i += 1;
        }
        if i == attr_start {
            i += 1;
            continue;
        }
        let attr = &text[attr_start..i];
        i = skip_whitespace(b, i, len);
        let mut value = None;
        if i < len && b[i] == b'=' {
            i = skip_whitespace(b, i + 1, len);
            if i < len && (b[i] == b'"' || b[i] == b'\'') {
                let Some(close) = find_byte(b, b[i], i + 1, len) else {
                    return Err(ReadFailure::new(
                        format!("attribute `{attr}` of the <{tag}> tag is not closed"),
                        i,
                    ));
                };
                value = Some(&text[i + 1..close]);
                i = close + 1;
            } else {
                let s = i;
                while i < len && !matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | b'>') {
                    i += 1;
                }
                value = Some(&text[s..i]);
            }
        }
        if attr == "name"
            && let Some(v) = value
        {
            name = Some(decode_xml_entities(v).into_owned());
        }
    }
}

/// Decodes `&lt; &gt; &amp; &quot; &apos;` and numeric character references.
fn decode_xml_entities(s: &str) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let named = [
            ("&lt;", '<'),
            ("&gt;", '>'),
            ("&amp;", '&'),
            ("&quot;", '"'),
            ("&apos;", '\''),
        ];
        if let Some(&(ent, ch)) = named.iter().find(|(ent, _)| rest.starts_with(ent)) {
            out.push(ch);
            rest = &rest[ent.len()..];
            continue;
        }
        if let Some(num) = rest.strip_prefix("&#")
            && let Some(semi) = num.get(..num.len().min(10)).and_then(|h| h.find(';'))
        {
            let digits = &num[..semi];
            let cp = match digits.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => digits.parse::<u32>().ok(),
            };
            if let Some(ch) = cp.and_then(char::from_u32) {
                out.push(ch);
                rest = &num[semi + 1..];
                continue;
            }
        }
        out.push('&');
        rest = &rest[1..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A `<parameter>` value: strict JSON when it parses, else the raw text with
/// one leading and one trailing newline removed. That text comes too when the JSON
/// reading is neither a string nor `null` (see [`Parsed::texts`]).
fn parameter_value(raw: &str) -> (Value, Option<String>) {
    let decoded = decode_xml_entities(raw);
    let mut s: &str = &decoded;
    if let Some(r) = s.strip_prefix("\r\n").or_else(|| s.strip_prefix('\n')) {
        s = r;
    }
    if let Some(r) = s.strip_suffix("\r\n").or_else(|| s.strip_suffix('\n')) {
        s = r;
    }
    match serde_json::from_str::<Value>(&decoded) {
        Ok(v @ (Value::String(_) | Value::Null)) => (v, None),
        Ok(v) => (v, Some(s.to_owned())),
        Err(_) => (Value::String(s.to_owned()), None),
    }
}

impl ObjectSearch<'_> {
    /// Reads the object between `after` and the tag that closes it (`close`, else
    /// `fallback`), and where that tag is. A closing tag can stand inside one of the
    /// object's strings (`"echo '</tool_call>'"`): when the object read up to a tag is cut
    /// off inside a string, it is read again up to the next such tag, a few times at most.
    fn json_before_closing_tag(
        &mut self,
        after: usize,
        close: &[u8],
        fallback: Option<&[u8]>,
    ) -> Result<(FoundObject, Option<usize>), ReadFailure> {
        const TRIES: usize = 8;
        let (b, len) = (self.bytes, self.bytes.len());
        let tag = if find_bytes(b, close, after, len).is_some() {
            Some(close)
        } else {
            fallback
        };
        let mut from = after;
        for _ in 0..TRIES {
            let stop = tag.and_then(|t| find_bytes(b, t, from, len));
            match (self.find_json_object(after, stop.unwrap_or(len)), stop, tag) {
                (Err(e), Some(at), Some(t))
                    if e.message == MSG_CUT_STRING
                        && find_bytes(b, t, at + t.len(), len).is_some() =>
                {
                    from = at + t.len();
                }
                (result, stop, _) => return result.map(|out| (out, stop)),
            }
        }
        let stop = tag.and_then(|t| find_bytes(b, t, from, len));
        self.find_json_object(after, stop.unwrap_or(len))
            .map(|out| (out, stop))
    }

    /// Reads the call in the dialect whose opening `tag` starts at `tp`.
    pub(super) fn read_dialect(
        &mut self,
        tp: usize,
        tag: DialectTag,
        mut repairs: Vec<String>,
    ) -> Result<Parsed, ReadFailure> {
        let b = self.bytes;
        let len = b.len();
        match tag {
            DialectTag::ToolCall => {
                let open = read_open_tag(self.text, tp, "tool_call")?;
                let mut more_calls = 0;
                let (
                    FoundObject {
                        map,
                        repairs: more,
                        mut warnings,
                        ..
                    },
                    close,
                ) = self.json_before_closing_tag(open.content_start, b"</tool_call>", None)?;
                repairs.extend(more);
                if let Some(c) = close {
                    let n = count_tags(b, b"tool_call", c, len);
                    more_calls = n;
                    if n > 0 {
                        warnings.push(more_followed_warning(
                            n,
                            "<tool_call> block",
                            "<tool_call> blocks",
                        ));
                    }
                }
                Ok(Parsed {
                    value: Value::Object(map),
                    repairs,
                    warnings,
                    dialect: Some(Dialect::ToolCallTag),
                    texts: Vec::new(),
                    more_calls,
                })
            }
            DialectTag::FunctionCalls => {
                let open = read_open_tag(self.text, tp, "function_calls")?;
                let inv = find_named_tag(b, b"invoke", open.content_start, len)
                    .ok_or_else(|| ReadFailure::new("<function_calls> contains no <invoke>", tp))?;
                self.read_invoke(inv, repairs)
            }
            DialectTag::Invoke => self.read_invoke(tp, repairs),
        }
    }

    /// Reads the `<invoke>` block at `ip` (with `<parameter>`s or one `<tool_args>`) as
    /// `{"name":…,"arguments":{…}}`.
    fn read_invoke(&mut self, ip: usize, mut repairs: Vec<String>) -> Result<Parsed, ReadFailure> {
        const CLOSE_PARAM: &[u8] = b"</parameter>";
        let b = self.bytes;
        let text = self.text;
        let len = b.len();
        let open = read_open_tag(text, ip, "invoke")?;
        let name = open
            .name
            .ok_or_else(|| ReadFailure::new("<invoke> tag has no name attribute", ip))?;
        let mut warnings = Vec::new();
        let mut texts = Vec::new();
        let mut p = skip_whitespace(b, open.content_start, len);
        let (arguments, dialect, end) = if is_tag_at(b, p, b"tool_args") {
            let ta = read_open_tag(text, p, "tool_args")?;
            let closes = |from| {
                find_bytes(b, b"</tool_args>", from, len)
                    .or_else(|| find_bytes(b, b"</invoke>", from, len))
                    .unwrap_or(len)
            };
            let (args, stop) = if ta.self_closing
                || !has_non_whitespace(b, ta.content_start, closes(ta.content_start))
            {
                (Map::new(), closes(ta.content_start))
            } else {
                let (out, stop) = self.json_before_closing_tag(
                    ta.content_start,
                    b"</tool_args>",
                    Some(b"</invoke>"),
                )?;
                repairs.extend(out.repairs);
                warnings.extend(out.warnings);
                (out.map, stop.unwrap_or(len))
            };
            (args, Dialect::InvokeToolArgs, stop)
        } else {
            let mut args = Map::new();
            if !open.self_closing {
                loop {
                    p = skip_whitespace(b, p, len);
                    if p >= len {
                        repairs
                            .push("completed output that was cut off with `</invoke>`".to_owned());
                        break;
                    }
                    if b[p..].starts_with(b"</invoke") {
                        p += b"</invoke".len();
                        break;
                    }
                    if !is_tag_at(b, p, b"parameter") {
                        return Err(ReadFailure::new(
                            "expected <parameter> or </invoke> inside <invoke>",
                            p,
                        ));
                    }
                    let pt = read_open_tag(text, p, "parameter")?;
                    let key = pt.name.ok_or_else(|| {
                        ReadFailure::new("<parameter> tag has no name attribute", p)
                    })?;
                    if pt.self_closing {
                        args.insert(key, Value::String(String::new()));
                        p = pt.content_start;
                        continue;
                    }
                    let Some(close) = find_bytes(b, CLOSE_PARAM, pt.content_start, len) else {
                        return Err(ReadFailure::new(
                            format!(
                                "<parameter name=\"{key}\"> is not closed: missing </parameter>"
                            ),
                            p,
                        ));
                    };
                    let (value, raw) = parameter_value(&text[pt.content_start..close]);
                    // A repeated name keeps its last value, and that value's text.
                    texts.retain(|(k, _)| *k != key);
                    if let Some(raw) = raw {
                        texts.push((key.clone(), raw));
                    }
                    args.insert(key, value);
                    p = close + CLOSE_PARAM.len();
                }
            }
            (args, Dialect::FunctionCalls, p)
        };
        let n = count_tags(b, b"invoke", end, len);
        if n > 0 {
            warnings.push(more_followed_warning(
                n,
                "<invoke> block",
                "<invoke> blocks",
            ));
        }
        let mut value = Map::new();
        value.insert("name".to_owned(), Value::String(name));
        value.insert("arguments".to_owned(), Value::Object(arguments));
        Ok(Parsed {
            value: Value::Object(value),
            repairs,
            warnings,
            dialect: Some(dialect),
            texts,
            more_calls: n,
        })
    }
}
