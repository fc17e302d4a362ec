//! Python calls with literal arguments, `get_weather(city="Dallas", days=[1, 2])`, as the
//! pythonic dialects write them: keyword arguments only, each value a literal (strings in
//! either quote, triple-quoted, raw; numbers; `True`/`False`/`None`; lists, tuples, dicts with
//! string keys). Anything that is not a literal (a name, an operator, a call, an f-string, a
//! set) is refused: only a literal has one reading without running code.

use super::Refusal;
use super::text_util::refusal;
use serde_json::{Map, Value};
use std::ops::Range;

/// How deep lists and dicts may nest.
const MAX_DEPTH: usize = 128;

/// A cursor over Python source.
pub(crate) struct Py<'a> {
    text: &'a str,
    b: &'a [u8],
    /// The byte the cursor is at.
    pub(crate) i: usize,
}

/// One call read: its name, arguments and bytes.
pub(crate) struct PyCall {
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) span: Range<usize>,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Whether `s` is a name Python accepts as a keyword argument.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(is_ident_start) && chars.all(is_ident_char)
}

impl<'a> Py<'a> {
    pub(crate) fn new(text: &'a str, i: usize) -> Self {
        Py {
            text,
            b: text.as_bytes(),
            i,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    pub(crate) fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn fail<T>(&self, message: impl Into<String>) -> Result<T, Refusal> {
        Err(refusal(self.i, message))
    }

    /// The identifier at the cursor (dots allowed between parts when `dotted`), if any.
    pub(crate) fn identifier(&mut self, dotted: bool) -> Option<&'a str> {
        let start = self.i;
        let rest = &self.text[start..];
        let mut end = 0;
        let mut need_start = true;
        for (k, c) in rest.char_indices() {
            if need_start {
                if !is_ident_start(c) {
                    break;
                }
                need_start = false;
            } else if c == '.' && dotted {
                need_start = true;
                continue;
            } else if !is_ident_char(c) {
                break;
            }
            end = k + c.len_utf8();
        }
        if end == 0 {
            return None;
        }
        self.i = start + end;
        Some(&self.text[start..start + end])
    }

    /// `name(k=v, …)` at the cursor: the call, its name as written (dots kept).
    pub(crate) fn call(&mut self) -> Result<PyCall, Refusal> {
        let start = self.i;
        let Some(name) = self.identifier(true) else {
            return self.fail("a call must start with the tool name");
        };
        self.skip_ws();
        if self.peek() != Some(b'(') {
            return self.fail(format!(
                "`{name}` must be followed by `(` and its arguments"
            ));
        }
        self.i += 1;
        let arguments = self.keyword_arguments()?;
        Ok(PyCall {
            name: name.to_owned(),
            arguments,
            span: start..self.i,
        })
    }

    /// The keyword arguments after a call's `(`, through its `)`.
    fn keyword_arguments(&mut self) -> Result<Map<String, Value>, Refusal> {
        let mut args = Map::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b')') => {
                    self.i += 1;
                    return Ok(args);
                }
                None => return self.fail("the call is cut off before its `)`"),
                _ => {}
            }
            let at = self.i;
            if self.text[at..].starts_with("**") {
                self.i += 2;
                self.skip_ws();
                if self.peek() != Some(b'{') {
                    return self.fail("`**` must be followed by a dict literal");
                }
                let Value::Object(map) = self.value(0)? else {
                    return self.fail("`**` must be followed by a dict literal");
                };
                for (k, v) in map {
                    insert_once(&mut args, k, v, at)?;
                }
            } else {
                let name = match self.identifier(false) {
                    Some(n) => {
                        let after = self.i;
                        self.skip_ws();
                        if self.peek() == Some(b'=') && self.b.get(self.i + 1) != Some(&b'=') {
                            self.i += 1;
                            n
                        } else {
                            self.i = after;
                            return Err(refusal(
                                at,
                                "a positional argument has no name; write each argument as name=value",
                            ));
                        }
                    }
                    None => {
                        return Err(refusal(
                            at,
                            "a positional argument has no name; write each argument as name=value",
                        ));
                    }
                };
                self.skip_ws();
                let value = self.value(0)?;
                insert_once(&mut args, name.to_owned(), value, at)?;
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b')') => {}
                None => return self.fail("the call is cut off before its `)`"),
                Some(_) => {
                    return self.fail(
                        "only a literal may stand here, then `,` or `)`; an expression is not read",
                    );
                }
            }
        }
    }

    /// One literal value at the cursor.
    pub(crate) fn value(&mut self, depth: usize) -> Result<Value, Refusal> {
        if depth > MAX_DEPTH {
            return self.fail("the value nests too deep");
        }
        self.skip_ws();
        let Some(c) = self.peek() else {
            return self.fail("the value is cut off");
        };
        match c {
            b'"' | b'\'' => self.strings(),
            b'0'..=b'9' | b'-' | b'+' | b'.' => self.number(),
            b'[' => {
                self.i += 1;
                Ok(Value::Array(self.elements(b']', depth)?))
            }
            b'(' => self.tuple(depth),
            b'{' => self.dict(depth),
            _ => {
                let at = self.i;
                if let Some(word) = self.identifier(false) {
                    if matches!(self.peek(), Some(b'"' | b'\''))
                        && matches!(word, "r" | "R" | "u" | "U")
                    {
                        self.i = at;
                        return self.strings();
                    }
                    if matches!(self.peek(), Some(b'"' | b'\'')) {
                        return Err(refusal(
                            at,
                            format!(
                                "a `{word}` string is not a literal the call can carry; write a plain string"
                            ),
                        ));
                    }
                    return match word {
                        "True" => Ok(Value::Bool(true)),
                        "False" => Ok(Value::Bool(false)),
                        "None" => Ok(Value::Null),
                        "true" | "false" | "null" => Err(refusal(
                            at,
                            format!("`{word}` is JSON, not Python; write True, False or None"),
                        )),
                        _ => Err(refusal(
                            at,
                            format!(
                                "`{word}` is not a literal; write the value itself (a quoted string, a number, True, False, None, a list or a dict)"
                            ),
                        )),
                    };
                }
                self.fail("only a literal may stand here")
            }
        }
    }

    /// Elements up to `close`, commas between, a trailing comma allowed.
    fn elements(&mut self, close: u8, depth: usize) -> Result<Vec<Value>, Refusal> {
        let mut out = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(out);
            }
            out.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                None => return self.fail("the list is cut off"),
                Some(_) => return self.fail("expected `,` or the closing bracket after a value"),
            }
        }
    }

    /// `( … )`: a tuple is a list; `(x)` is x.
    fn tuple(&mut self, depth: usize) -> Result<Value, Refusal> {
        self.i += 1;
        self.skip_ws();
        if self.peek() == Some(b')') {
            self.i += 1;
            return Ok(Value::Array(Vec::new()));
        }
        let first = self.value(depth + 1)?;
        self.skip_ws();
        match self.peek() {
            Some(b')') => {
                self.i += 1;
                Ok(first)
            }
            Some(b',') => {
                self.i += 1;
                let mut rest = self.elements(b')', depth)?;
                rest.insert(0, first);
                Ok(Value::Array(rest))
            }
            None => self.fail("the tuple is cut off"),
            Some(_) => self.fail("expected `,` or `)` after a value"),
        }
    }

    /// `{k: v, …}` with string keys; a set (`{1, 2}`) has no JSON reading.
    fn dict(&mut self, depth: usize) -> Result<Value, Refusal> {
        self.i += 1;
        let mut map = Map::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                return Ok(Value::Object(map));
            }
            let at = self.i;
            let key = self.value(depth + 1)?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(refusal(
                    at,
                    "a set (or a dict without `:`) has no JSON reading; write a list or a dict",
                ));
            }
            let Value::String(key) = key else {
                return Err(refusal(at, "dict keys must be strings"));
            };
            self.i += 1;
            let value = self.value(depth + 1)?;
            insert_once(&mut map, key, value, at)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                None => return self.fail("the dict is cut off"),
                Some(_) => return self.fail("expected `,` or `}` after a value"),
            }
        }
    }

    /// One string literal, or several side by side (Python joins them).
    fn strings(&mut self) -> Result<Value, Refusal> {
        let mut out = self.string()?;
        loop {
            let save = self.i;
            self.skip_ws();
            let next = self.peek();
            let prefixed = matches!(next, Some(b'r' | b'R' | b'u' | b'U'))
                && matches!(self.b.get(self.i + 1), Some(b'"' | b'\''));
            if matches!(next, Some(b'"' | b'\'')) || prefixed {
                out.push_str(&self.string()?);
            } else {
                self.i = save;
                return Ok(Value::String(out));
            }
        }
    }

    /// One string literal at the cursor, an `r`/`u` prefix allowed.
    fn string(&mut self) -> Result<String, Refusal> {
        let start = self.i;
        let mut raw = false;
        if let Some(c @ (b'r' | b'R' | b'u' | b'U')) = self.peek() {
            raw = matches!(c, b'r' | b'R');
            self.i += 1;
        }
        let q = self.b[self.i];
        let triple = self.b.get(self.i + 1) == Some(&q) && self.b.get(self.i + 2) == Some(&q);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let rest = &self.text[self.i..];
            let Some(c) = rest.chars().next() else {
                return Err(refusal(
                    start,
                    "the string is cut off before its closing quote",
                ));
            };
            if c as u32 == q as u32 {
                if !triple {
                    self.i += 1;
                    return Ok(out);
                }
                if rest.as_bytes().starts_with(&[q, q, q]) {
                    self.i += 3;
                    return Ok(out);
                }
            }
            if c == '\n' && !triple {
                return Err(refusal(
                    self.i,
                    "a new line inside a quoted string; write it as \\n",
                ));
            }
            if c == '\\' {
                self.escape(raw, &mut out)?;
                continue;
            }
            out.push(c);
            self.i += c.len_utf8();
        }
    }

    /// The escape sequence at the cursor (a backslash), its meaning pushed to `out`.
    fn escape(&mut self, raw: bool, out: &mut String) -> Result<(), Refusal> {
        let at = self.i;
        let Some(next) = self.text[at + 1..].chars().next() else {
            return Err(refusal(at, "the string is cut off inside an escape"));
        };
        self.i += 1 + next.len_utf8();
        if raw {
            out.push('\\');
            out.push(next);
            return Ok(());
        }
        let simple = match next {
            '\n' => Some(None),
            '\\' => Some(Some('\\')),
            '\'' => Some(Some('\'')),
            '"' => Some(Some('"')),
            'n' => Some(Some('\n')),
            'r' => Some(Some('\r')),
            't' => Some(Some('\t')),
            'a' => Some(Some('\x07')),
            'b' => Some(Some('\x08')),
            'f' => Some(Some('\x0c')),
            'v' => Some(Some('\x0b')),
            _ => None,
        };
        if let Some(c) = simple {
            out.extend(c);
            return Ok(());
        }
        let digits = |n: usize, radix: u32, this: &mut Self| -> Result<u32, Refusal> {
            let end = this.i + n;
            let hex = this.text.get(this.i..end).filter(|h| h.len() == n);
            match hex.and_then(|h| u32::from_str_radix(h, radix).ok()) {
                Some(v) if hex.is_some_and(|h| h.bytes().all(|c| c.is_ascii_hexdigit())) => {
                    this.i = end;
                    Ok(v)
                }
                _ => Err(refusal(at, "a malformed escape sequence")),
            }
        };
        let code = match next {
            'x' => digits(2, 16, self)?,
            'u' => digits(4, 16, self)?,
            'U' => digits(8, 16, self)?,
            '0'..='7' => {
                let mut v = next as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            self.i += 1;
                        }
                        _ => break,
                    }
                }
                v
            }
            'N' => return Err(refusal(at, "a \\N{…} escape; write the character itself")),
            other => {
                // Python keeps an unknown escape as written.
                out.push('\\');
                out.push(other);
                return Ok(());
            }
        };
        match char::from_u32(code) {
            Some(c) => {
                out.push(c);
                Ok(())
            }
            None => Err(refusal(
                at,
                "an escape that is not a character (a lone surrogate)",
            )),
        }
    }

    /// A number at the cursor (a sign allowed), as JSON writes it.
    fn number(&mut self) -> Result<Value, Refusal> {
        let start = self.i;
        let mut sign = "";
        if let Some(s @ (b'-' | b'+')) = self.peek() {
            sign = if s == b'-' { "-" } else { "" };
            self.i += 1;
            self.skip_ws();
        }
        let body_start = self.i;
        while let Some(c) = self.peek() {
            let exp_sign = matches!(c, b'+' | b'-')
                && matches!(self.b[self.i - 1], b'e' | b'E')
                && !self.text[body_start..self.i].starts_with("0x")
                && !self.text[body_start..self.i].starts_with("0X");
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exp_sign {
                self.i += 1;
            } else {
                break;
            }
        }
        let body: String = self.text[body_start..self.i]
            .chars()
            .filter(|&c| c != '_')
            .collect();
        let bad = || {
            refusal(
                start,
                format!("`{}` is not a number literal", &self.text[start..self.i]),
            )
        };
        if body.is_empty() {
            return Err(bad());
        }
        let lower = body.to_ascii_lowercase();
        let radix = match lower.get(..2) {
            Some("0x") => Some(16),
            Some("0o") => Some(8),
            Some("0b") => Some(2),
            _ => None,
        };
        let decimal = if let Some(radix) = radix {
            let v = u128::from_str_radix(&lower[2..], radix).map_err(|_| bad())?;
            v.to_string()
        } else {
            if lower.ends_with('j') {
                return Err(refusal(start, "a complex number has no JSON reading"));
            }
            let (mantissa, exponent) = match lower.find('e') {
                Some(e) => (&lower[..e], Some(&lower[e + 1..])),
                None => (&lower[..], None),
            };
            let (int, frac) = match mantissa.find('.') {
                Some(d) => (&mantissa[..d], Some(&mantissa[d + 1..])),
                None => (mantissa, None),
            };
            if !int.bytes().all(|c| c.is_ascii_digit())
                || !frac.is_none_or(|f| f.bytes().all(|c| c.is_ascii_digit()))
                || (int.is_empty() && frac.is_none_or(str::is_empty))
            {
                return Err(bad());
            }
            if frac.is_none()
                && exponent.is_none()
                && int.starts_with('0')
                && int.bytes().any(|c| c != b'0')
            {
                return Err(refusal(
                    start,
                    "a number with leading zeros; Python reads no such literal",
                ));
            }
            let int = int.trim_start_matches('0');
            let mut s = String::from(if int.is_empty() { "0" } else { int });
            if let Some(f) = frac {
                s.push('.');
                s.push_str(if f.is_empty() { "0" } else { f });
            }
            if let Some(e) = exponent {
                s.push('e');
                s.push_str(e);
            }
            s
        };
        match serde_json::from_str::<Value>(&format!("{sign}{decimal}")) {
            Ok(v @ Value::Number(_)) => Ok(v),
            _ => Err(bad()),
        }
    }
}

/// Adds `key` once: a second value under the same key would drop the first.
fn insert_once(
    map: &mut Map<String, Value>,
    key: String,
    value: Value,
    at: usize,
) -> Result<(), Refusal> {
    if map.contains_key(&key) {
        return Err(refusal(
            at,
            format!("`{key}` is given twice; write each argument once"),
        ));
    }
    map.insert(key, value);
    Ok(())
}

/// `name(k=v, …)`: identifiers as keyword arguments, any other key in a trailing `**{…}`.
pub(crate) fn write_call(name: &str, arguments: &Map<String, Value>) -> String {
    let mut out = String::from(name);
    out.push('(');
    let mut first = true;
    let mut others = Map::new();
    for (k, v) in arguments {
        if !is_identifier(k) {
            others.insert(k.clone(), v.clone());
            continue;
        }
        if !first {
            out.push_str(", ");
        }
        first = false;
        out.push_str(k);
        out.push('=');
        write_value(v, &mut out);
    }
    if !others.is_empty() {
        if !first {
            out.push_str(", ");
        }
        out.push_str("**");
        write_value(&Value::Object(others), &mut out);
    }
    out.push(')');
    out
}

/// `v` as a Python literal.
pub(crate) fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (k, (key, item)) in map.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_string(key, out);
                out.push_str(": ");
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
#[path = "python_literal_tests.rs"]
mod tests;
