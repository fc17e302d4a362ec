//! Lenient recovery of exactly one JSON object from the text a (small, local)
//! LLM emitted as a tool call.
//!
//! [`parse`] first tries strict JSON. Only when that fails does it run a
//! hand-written recursive-descent reader that tolerates the usual damage
//! (code fences, prose, comments, single quotes, unquoted keys, trailing
//! commas, Python literals, doubled braces, raw control characters, several
//! objects back to back, output cut off between complete values) and reports
//! every repair it made. It also reads three text dialects of tool calls
//! (`<function_calls>`/`<invoke>`/`<parameter>`, `<invoke>`/`<tool_args>`,
//! and `<tool_call>`).
//!
//! Depends on `std` and `serde_json` (with `preserve_order` and
//! `arbitrary_precision`) only.
//!
//! Repair sentences (`N` is a count; singular forms for 1):
//! "replaced invalid UTF-8", "removed a byte-order mark",
//! "removed a markdown code fence", "ignored text before the object",
//! "ignored text after the object", "unwrapped a doubled root `{{ … }}`",
//! "removed N comments", "converted N single-quoted strings to double quotes",
//! "converted N backtick strings to double quotes", "quoted N unquoted keys",
//! "removed N trailing commas", "replaced Python literal True with true"
//! (also False/false, None/null; " (N times)" appended when N > 1),
//! "replaced JavaScript literal undefined with null",
//! "escaped N raw control characters inside strings",
//! "dropped the backslash of N invalid escape sequences",
//! "replaced N lone surrogate escapes with U+FFFD",
//! "completed output that was cut off with `…`" (the closers appended, or
//! `</invoke>` in the `<invoke>` dialect).
//!
//! Warnings: "N more objects followed the first one and were ignored",
//! "N more `<invoke>` blocks …", "N more `<tool_call>` blocks …".

use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// Deepest nesting of objects and arrays the lenient reader accepts.
pub const MAX_DEPTH: usize = 128;

/// What was read, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Always a JSON object (`Value::Object`).
    pub value: Value,
    /// One short human sentence per repair applied, in order; empty when the
    /// input was strict JSON.
    pub repairs: Vec<String>,
    /// Things that were not repairs but that the caller should know, e.g.
    /// "2 more objects followed the first one and were ignored".
    pub warnings: Vec<String>,
    /// Set when the call came in a text dialect.
    pub dialect: Option<Dialect>,
    /// `<parameter>` values read as JSON other than a string or `null` (`5`, `true`,
    /// `{"a":1}`), each with its text: the dialect writes text, and only the tool's schema
    /// says which reading was meant (a string argument takes the text).
    pub texts: Vec<(String, String)>,
}

/// The text dialects of tool calls that [`parse`] understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `<function_calls><invoke name="x"><parameter name="k">v</parameter></invoke></function_calls>`
    FunctionCalls,
    /// `<invoke name="x"><tool_args>{…}</tool_args></invoke>`
    InvokeToolArgs,
    /// `<tool_call>{…}</tool_call>`
    ToolCallTag,
}

impl Dialect {
    /// A stable, short name for the dialect.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::FunctionCalls => "function_calls",
            Dialect::InvokeToolArgs => "invoke_tool_args",
            Dialect::ToolCallTag => "tool_call",
        }
    }
}

/// Why no object could be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What was wrong.
    pub message: String,
    /// 1-based line of the offending byte.
    pub line: usize,
    /// 1-based column (in characters) of the offending byte.
    pub column: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for ParseError {}

/// Reads exactly one JSON object from `input`, leniently.
pub fn parse(input: &[u8]) -> Result<Parsed, ParseError> {
    if let Ok(value) = serde_json::from_slice::<Value>(input) {
        if value.is_object() {
            return Ok(Parsed {
                value,
                repairs: Vec::new(),
                warnings: Vec::new(),
                dialect: None,
                texts: Vec::new(),
            });
        }
        let first = skip_plain_ws(input, 0, input.len());
        let (line, column) = line_col(&String::from_utf8_lossy(&input[..first]), first);
        return Err(ParseError {
            message: format!(
                "top-level JSON value is {}, not an object",
                describe(&value)
            ),
            line,
            column,
        });
    }
    let mut repairs = Vec::new();
    let text = match std::str::from_utf8(input) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            repairs.push("replaced invalid UTF-8".to_owned());
            String::from_utf8_lossy(input)
        }
    };
    let mut lenient = Lenient::new(&text);
    lenient.run(repairs).map_err(|fail| {
        let (line, column) = line_col(&text, fail.pos);
        ParseError {
            message: fail.msg.into_owned(),
            line,
            column,
        }
    })
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// 1-based line and column (in characters) of byte offset `pos` in `text`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &text.as_bytes()[..pos];
    let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let column = 1 + text[line_start..pos].chars().count();
    (line, column)
}

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/// The gate refuses text nested deeper than this whatever it holds (lint reports it as the gate does).
pub const MSG_DEPTH: &str = "nesting deeper than 128 levels";
const MSG_CUT_STRING: &str = "output was cut off inside a string; not completed";
const MSG_CUT_KEY: &str = "output was cut off inside a key; not completed";
const MSG_CUT_AFTER_KEY: &str = "output was cut off after a key, before its value; not completed";
const MSG_CUT_NUMBER: &str =
    "output was cut off inside a number (more digits may have followed); not completed";
const MSG_CUT_LITERAL: &str = "output was cut off inside a literal; not completed";
const MSG_EXPECTED_VALUE: &str = "expected a value";
const MSG_EXPECTED_KEY: &str = "expected a key";
const MSG_NO_OBJECT: &str = "no JSON object found";
const MSG_EMPTY: &str = "input is empty";
const MSG_TOP_ARRAY: &str = "top-level JSON value is an array, not an object";

fn plural(n: u32, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn times(n: u32) -> String {
    if n == 1 {
        String::new()
    } else {
        format!(" ({n} times)")
    }
}

fn more_followed(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 more {one} followed the first one and was ignored")
    } else {
        format!("{n} more {many} followed the first one and were ignored")
    }
}

/// Repairs the reader counts while it reads one candidate object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Comment,
    SingleQuoted,
    Backtick,
    UnquotedKey,
    TrailingComma,
    PyTrue,
    PyFalse,
    PyNone,
    Undefined,
    ControlChar,
    InvalidEscape,
    LoneSurrogate,
}

const N_KINDS: usize = 12;

impl Kind {
    fn message(self, n: u32) -> String {
        match self {
            Kind::Comment => format!("removed {}", plural(n, "comment", "comments")),
            Kind::SingleQuoted => format!(
                "converted {} to double quotes",
                plural(n, "single-quoted string", "single-quoted strings")
            ),
            Kind::Backtick => format!(
                "converted {} to double quotes",
                plural(n, "backtick string", "backtick strings")
            ),
            Kind::UnquotedKey => format!("quoted {}", plural(n, "unquoted key", "unquoted keys")),
            Kind::TrailingComma => {
                format!("removed {}", plural(n, "trailing comma", "trailing commas"))
            }
            Kind::PyTrue => format!("replaced Python literal True with true{}", times(n)),
            Kind::PyFalse => format!("replaced Python literal False with false{}", times(n)),
            Kind::PyNone => format!("replaced Python literal None with null{}", times(n)),
            Kind::Undefined => {
                format!(
                    "replaced JavaScript literal undefined with null{}",
                    times(n)
                )
            }
            Kind::ControlChar => format!(
                "escaped {} inside strings",
                plural(n, "raw control character", "raw control characters")
            ),
            Kind::InvalidEscape => format!(
                "dropped the backslash of {}",
                plural(n, "invalid escape sequence", "invalid escape sequences")
            ),
            Kind::LoneSurrogate => format!(
                "replaced {} with U+FFFD",
                plural(n, "lone surrogate escape", "lone surrogate escapes")
            ),
        }
    }
}

/// A failure at a byte offset of the (decoded) input.
#[derive(Debug)]
struct Fail {
    msg: Cow<'static, str>,
    pos: usize,
}

impl Fail {
    fn new(msg: impl Into<Cow<'static, str>>, pos: usize) -> Self {
        Fail {
            msg: msg.into(),
            pos,
        }
    }
}

/// At most 24 characters of `s`, for messages.
fn preview(s: &str) -> String {
    let mut out: String = s.chars().take(24).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

// ---------------------------------------------------------------------------
// Byte helpers
// ---------------------------------------------------------------------------

/// Where the bracketed value opening at `open` ends (just past its closing bracket), counting
/// brackets outside strings; `to` when it never closes.
fn span_end(b: &[u8], open: usize, to: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < to {
        match b[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b'"' => {
                i += 1;
                while i < to && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    to
}

fn find_byte(b: &[u8], x: u8, from: usize, to: usize) -> Option<usize> {
    if from >= to {
        return None;
    }
    b[from..to].iter().position(|&c| c == x).map(|i| i + from)
}

fn find_sub(b: &[u8], needle: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = find_byte(b, needle[0], i, to) {
        if p + needle.len() <= to && &b[p..p + needle.len()] == needle {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// The next "```" in `from..to` that starts a line (after spaces or tabs).
fn find_fence_open(b: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = find_sub(b, b"```", i, to) {
        let mut k = p;
        while k > from && matches!(b[k - 1], b' ' | b'\t') {
            k -= 1;
        }
        if k == from || b[k - 1] == b'\n' {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_plain_ws(b: &[u8], mut i: usize, to: usize) -> usize {
    while i < to && is_ws(b[i]) {
        i += 1;
    }
    i
}

fn has_non_ws(b: &[u8], from: usize, to: usize) -> bool {
    from < to && b[from..to].iter().any(|&c| !is_ws(c))
}

/// Bytes of a code-fence language tag (`json`, `json5`, `tool_code`, …).
fn is_fence_tag_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'.')
}

fn is_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | '.')
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// A valid JSON number: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`.
fn is_json_number(t: &[u8]) -> bool {
    let mut i = 0;
    let n = t.len();
    if i < n && t[i] == b'-' {
        i += 1;
    }
    match t.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while i < n && t[i].is_ascii_digit() {
                i += 1;
            }
        }
        _ => return false,
    }
    if i < n && t[i] == b'.' {
        i += 1;
        let s = i;
        while i < n && t[i].is_ascii_digit() {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    if i < n && (t[i] == b'e' || t[i] == b'E') {
        i += 1;
        if i < n && (t[i] == b'+' || t[i] == b'-') {
            i += 1;
        }
        let s = i;
        while i < n && t[i].is_ascii_digit() {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    i == n
}

fn hex_val(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some(u32::from(c - b'0')),
        b'a'..=b'f' => Some(u32::from(c - b'a' + 10)),
        b'A'..=b'F' => Some(u32::from(c - b'A' + 10)),
        _ => None,
    }
}

enum Hex {
    Ok(u32),
    Bad,
    Cut,
}

/// Four hex digits at `i` (bounded by `end`).
fn hex4(b: &[u8], i: usize, end: usize) -> Hex {
    let mut v = 0;
    for k in 0..4 {
        if i + k >= end {
            return Hex::Cut;
        }
        match hex_val(b[i + k]) {
            Some(d) => v = v * 16 + d,
            None => return Hex::Bad,
        }
    }
    Hex::Ok(v)
}

// ---------------------------------------------------------------------------
// The JSON reader
// ---------------------------------------------------------------------------

/// Recursive-descent reader over the whole (decoded) input. Offsets are
/// absolute, so errors point into the original text.
struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    /// Where reading stops: `limit`, or earlier where a closing code fence
    /// was met in a structural position.
    end: usize,
    /// The end of the region being read; `end` is reset to it per attempt.
    limit: usize,
    /// Treat "```" in a structural position as the end of input.
    fence: bool,
    counts: [u32; N_KINDS],
    order: Vec<Kind>,
    /// Closers appended to complete cut-off output, innermost first.
    closers: String,
    truncated: bool,
    /// The root object got as far as a `:`: it is a real (if broken)
    /// object, so the `{`s inside it are not other candidates.
    committed: bool,
    buf: String,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            b: text.as_bytes(),
            pos: 0,
            end: text.len(),
            limit: text.len(),
            fence: false,
            counts: [0; N_KINDS],
            order: Vec::new(),
            closers: String::new(),
            truncated: false,
            committed: false,
            buf: String::new(),
        }
    }

    fn reset(&mut self, pos: usize) {
        self.pos = pos;
        self.end = self.limit;
        self.counts = [0; N_KINDS];
        self.order.clear();
        self.closers.clear();
        self.truncated = false;
        self.committed = false;
    }

    fn note(&mut self, kind: Kind) {
        let c = &mut self.counts[kind as usize];
        if *c == 0 {
            self.order.push(kind);
        }
        *c += 1;
    }

    fn kinds(&self) -> Vec<(Kind, u32)> {
        self.order
            .iter()
            .map(|&k| (k, self.counts[k as usize]))
            .collect()
    }

    fn peek(&self) -> Option<u8> {
        if self.pos < self.end {
            Some(self.b[self.pos])
        } else {
            None
        }
    }

    /// Whether reading stopped at the true end of the input (as opposed to a
    /// closing tag or fence), so that a token there may have been cut.
    fn at_true_end(&self, i: usize) -> bool {
        i >= self.end && self.end == self.b.len()
    }

    /// Skips whitespace and comments; a closing code fence ends the input.
    fn skip_ws(&mut self) {
        while self.pos < self.end {
            match self.b[self.pos] {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.pos + 1 < self.end && self.b[self.pos + 1] == b'/' => {
                    self.note(Kind::Comment);
                    self.pos = find_byte(self.b, b'\n', self.pos + 2, self.end).unwrap_or(self.end);
                }
                b'/' if self.pos + 1 < self.end && self.b[self.pos + 1] == b'*' => {
                    self.note(Kind::Comment);
                    self.pos =
                        find_sub(self.b, b"*/", self.pos + 2, self.end).map_or(self.end, |p| p + 2);
                }
                b'`' if self.fence && self.b[self.pos..self.end].starts_with(b"```") => {
                    self.end = self.pos;
                }
                _ => return,
            }
        }
    }

    /// Reads the object whose `{` is at `start`, unwrapping a doubled root
    /// `{{ … }}` (or a tripled one: models that escape braces for a template
    /// engine may do it twice). Returns the object and whether it was doubled.
    fn read_root(&mut self, start: usize) -> Result<(Map<String, Value>, bool), Fail> {
        self.reset(start + 1);
        self.skip_ws();
        let mut extra = 0;
        let mut innermost = start;
        while self.peek() == Some(b'{') && extra < MAX_DEPTH {
            innermost = self.pos;
            extra += 1;
            self.pos += 1;
            self.skip_ws();
        }
        if extra == 0 {
            self.reset(start);
            return self.read_object(1).map(|m| (m, false));
        }
        self.reset(innermost);
        let map = self.read_object(1)?;
        for _ in 0..extra {
            if self.truncated {
                return Ok((map, true));
            }
            self.skip_ws();
            match self.peek() {
                Some(b'}') => self.pos += 1,
                None => return Ok((map, true)),
                Some(_) => {
                    return Err(Fail::new("expected `}` closing the doubled `{{`", self.pos));
                }
            }
        }
        Ok((map, true))
    }

    /// Marks the output as cut off at a safe point and records `closer`.
    fn cut_here(&mut self, closer: char) {
        self.truncated = true;
        self.closers.push(closer);
    }

    fn read_object(&mut self, depth: usize) -> Result<Map<String, Value>, Fail> {
        if depth > MAX_DEPTH {
            return Err(Fail::new(MSG_DEPTH, self.pos));
        }
        self.pos += 1;
        let mut map = Map::new();
        let mut after_comma = false;
        loop {
            self.skip_ws();
            match self.peek() {
                None => {
                    self.cut_here('}');
                    return Ok(map);
                }
                Some(b'}') => {
                    if after_comma {
                        self.note(Kind::TrailingComma);
                    }
                    self.pos += 1;
                    return Ok(map);
                }
                Some(_) => {}
            }
            let key = self.read_key()?;
            self.skip_ws();
            match self.peek() {
                Some(b':') => {
                    self.pos += 1;
                    self.committed |= depth == 1;
                }
                None => return Err(Fail::new(MSG_CUT_AFTER_KEY, self.end)),
                Some(_) => return Err(Fail::new("expected `:` after the key", self.pos)),
            }
            self.skip_ws();
            if self.peek().is_none() {
                return Err(Fail::new(MSG_CUT_AFTER_KEY, self.end));
            }
            let value = self.read_value(depth)?;
            map.insert(key, value);
            if self.truncated {
                self.closers.push('}');
                return Ok(map);
            }
            self.skip_ws();
            match self.peek() {
                None => {
                    self.cut_here('}');
                    return Ok(map);
                }
                Some(b',') => {
                    self.pos += 1;
                    after_comma = true;
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(map);
                }
                Some(_) => {
                    return Err(Fail::new(
                        "expected `,` or `}` after an object member",
                        self.pos,
                    ));
                }
            }
        }
    }

    fn read_array(&mut self, depth: usize) -> Result<Vec<Value>, Fail> {
        if depth > MAX_DEPTH {
            return Err(Fail::new(MSG_DEPTH, self.pos));
        }
        self.pos += 1;
        let mut items = Vec::new();
        let mut after_comma = false;
        loop {
            self.skip_ws();
            match self.peek() {
                None => {
                    self.cut_here(']');
                    return Ok(items);
                }
                Some(b']') => {
                    if after_comma {
                        self.note(Kind::TrailingComma);
                    }
                    self.pos += 1;
                    return Ok(items);
                }
                Some(_) => {}
            }
            items.push(self.read_value(depth)?);
            if self.truncated {
                self.closers.push(']');
                return Ok(items);
            }
            self.skip_ws();
            match self.peek() {
                None => {
                    self.cut_here(']');
                    return Ok(items);
                }
                Some(b',') => {
                    self.pos += 1;
                    after_comma = true;
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(_) => {
                    return Err(Fail::new(
                        "expected `,` or `]` after an array element",
                        self.pos,
                    ));
                }
            }
        }
    }

    /// Reads a value; the caller guarantees `pos < end`.
    fn read_value(&mut self, depth: usize) -> Result<Value, Fail> {
        match self.b[self.pos] {
            b'{' => Ok(Value::Object(self.read_object(depth + 1)?)),
            b'[' => Ok(Value::Array(self.read_array(depth + 1)?)),
            b'"' | b'\'' | b'`' => Ok(Value::String(self.read_string(false)?)),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.read_number(),
            c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => self.read_word(),
            _ => Err(Fail::new(MSG_EXPECTED_VALUE, self.pos)),
        }
    }

    /// Reads a key; the caller guarantees `pos < end`.
    fn read_key(&mut self) -> Result<String, Fail> {
        let c = self.b[self.pos];
        if matches!(c, b'"' | b'\'' | b'`') {
            return self.read_string(true);
        }
        let start = self.pos;
        let mut i = start;
        while i < self.end {
            let c = self.b[i];
            if c < 0x80 {
                if is_key_char(char::from(c)) {
                    i += 1;
                    continue;
                }
                break;
            }
            match self.text[i..].chars().next() {
                Some(ch) if is_key_char(ch) => i += ch.len_utf8(),
                _ => break,
            }
        }
        if i == start {
            return Err(Fail::new(MSG_EXPECTED_KEY, start));
        }
        if self.at_true_end(i) {
            return Err(Fail::new(MSG_CUT_KEY, i));
        }
        self.note(Kind::UnquotedKey);
        self.pos = i;
        Ok(self.text[start..i].to_owned())
    }

    /// Reads a string quoted with `"`, `'` or `` ` ``; `pos` is at the quote.
    fn read_string(&mut self, is_key: bool) -> Result<String, Fail> {
        let b = self.b;
        let text = self.text;
        let q = b[self.pos];
        match q {
            b'\'' => self.note(Kind::SingleQuoted),
            b'`' => self.note(Kind::Backtick),
            _ => {}
        }
        let start = self.pos + 1;
        let end = self.end;
        let mut i = start;
        // Fast path: no escapes, no control characters.
        while i < end {
            let c = b[i];
            if c == q {
                self.pos = i + 1;
                return Ok(text[start..i].to_owned());
            }
            if c == b'\\' || c < 0x20 {
                break;
            }
            i += 1;
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let mut run = start;
        let result = loop {
            if i >= end {
                break None;
            }
            let c = b[i];
            if c == q {
                buf.push_str(&text[run..i]);
                self.pos = i + 1;
                break Some(buf.clone());
            }
            if c < 0x20 {
                self.note(Kind::ControlChar);
                i += 1;
                continue;
            }
            if c != b'\\' {
                i += 1;
                continue;
            }
            buf.push_str(&text[run..i]);
            i += 1;
            if i >= end {
                break None;
            }
            let e = b[i];
            let simple = match e {
                b'"' => Some('"'),
                b'\\' => Some('\\'),
                b'/' => Some('/'),
                b'b' => Some('\u{8}'),
                b'f' => Some('\u{c}'),
                b'n' => Some('\n'),
                b'r' => Some('\r'),
                b't' => Some('\t'),
                b'\'' | b'`' if q != b'"' => Some(char::from(e)),
                _ => None,
            };
            if let Some(ch) = simple {
                buf.push(ch);
                i += 1;
            } else if e == b'u' {
                match hex4(b, i + 1, end) {
                    Hex::Cut => break None,
                    Hex::Bad => {
                        self.note(Kind::InvalidEscape);
                        buf.push('u');
                        i += 1;
                    }
                    Hex::Ok(cp) => {
                        i += 5;
                        if (0xD800..0xDC00).contains(&cp) {
                            let low = if b[i..end].starts_with(b"\\u") {
                                match hex4(b, i + 2, end) {
                                    Hex::Ok(lo) if (0xDC00..0xE000).contains(&lo) => Some(lo),
                                    Hex::Cut => break None,
                                    _ => None,
                                }
                            } else {
                                None
                            };
                            match low {
                                Some(lo) => {
                                    let ch = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                    buf.push(char::from_u32(ch).unwrap_or('\u{FFFD}'));
                                    i += 6;
                                }
                                None => {
                                    self.note(Kind::LoneSurrogate);
                                    buf.push('\u{FFFD}');
                                }
                            }
                        } else if let Some(ch) = char::from_u32(cp) {
                            buf.push(ch);
                        } else {
                            self.note(Kind::LoneSurrogate);
                            buf.push('\u{FFFD}');
                        }
                    }
                }
            } else {
                // An invalid escape: keep the character after the backslash.
                self.note(Kind::InvalidEscape);
                let ch = text[i..].chars().next().unwrap_or('\\');
                buf.push(ch);
                i += ch.len_utf8();
            }
            run = i;
        };
        self.buf = buf;
        result.ok_or_else(|| Fail::new(if is_key { MSG_CUT_KEY } else { MSG_CUT_STRING }, self.end))
    }

    fn read_number(&mut self) -> Result<Value, Fail> {
        let start = self.pos;
        let mut i = start;
        while i < self.end
            && (self.b[i].is_ascii_alphanumeric() || matches!(self.b[i], b'.' | b'+' | b'-' | b'_'))
        {
            i += 1;
        }
        if self.at_true_end(i) {
            return Err(Fail::new(MSG_CUT_NUMBER, i));
        }
        let token = &self.text[start..i];
        let invalid = || Fail::new(format!("invalid number `{}`", preview(token)), start);
        if !is_json_number(token.as_bytes()) {
            return Err(invalid());
        }
        let n = token.parse::<Number>().map_err(|_| invalid())?;
        self.pos = i;
        Ok(Value::Number(n))
    }

    fn read_word(&mut self) -> Result<Value, Fail> {
        const WORDS: [&str; 7] = [
            "true",
            "false",
            "null",
            "True",
            "False",
            "None",
            "undefined",
        ];
        let start = self.pos;
        let mut i = start;
        while i < self.end && is_word_byte(self.b[i]) {
            i += 1;
        }
        let word = &self.text[start..i];
        let value = match word {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            "True" => {
                self.note(Kind::PyTrue);
                Value::Bool(true)
            }
            "False" => {
                self.note(Kind::PyFalse);
                Value::Bool(false)
            }
            "None" => {
                self.note(Kind::PyNone);
                Value::Null
            }
            "undefined" => {
                self.note(Kind::Undefined);
                Value::Null
            }
            _ => {
                if self.at_true_end(i) && WORDS.iter().any(|w| w.starts_with(word)) {
                    return Err(Fail::new(MSG_CUT_LITERAL, i));
                }
                if word == "NaN" || word == "Infinity" {
                    return Err(Fail::new(format!("invalid number `{word}`"), start));
                }
                return Err(Fail::new(
                    format!("{MSG_EXPECTED_VALUE}, found `{}`", preview(word)),
                    start,
                ));
            }
        };
        self.pos = i;
        Ok(value)
    }
}

// ---------------------------------------------------------------------------
// Finding the object in the text
// ---------------------------------------------------------------------------

/// An object read successfully from a candidate `{`.
struct Found {
    map: Map<String, Value>,
    start: usize,
    end: usize,
    doubled: bool,
    kinds: Vec<(Kind, u32)>,
    closers: String,
}

enum Scan {
    Found(Found),
    /// No object; the most promising failure and how far it read.
    Failed(Option<(Fail, usize)>),
    /// A verdict that ends the search (a top-level array).
    Final(Fail),
}

/// An object found by [`Lenient::json`].
struct JsonOut {
    map: Map<String, Value>,
    repairs: Vec<String>,
    warnings: Vec<String>,
    /// Offset of the object's `{`.
    start: usize,
}

fn keep_best(best: &mut Option<(Fail, usize)>, other: Option<(Fail, usize)>) {
    if let Some((f, c)) = other
        && best.as_ref().is_none_or(|(_, bc)| c > *bc)
    {
        *best = Some((f, c));
    }
}

struct Lenient<'a> {
    text: &'a str,
    b: &'a [u8],
    reader: Reader<'a>,
    /// Bytes read by failed attempts so far.
    work: usize,
    /// Past this, failed attempts no longer retry from the next `{` inside
    /// what they read, which keeps the whole search linear.
    budget: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tag {
    FunctionCalls,
    Invoke,
    ToolCall,
}

/// Whether `<name` followed by whitespace, `>` or `/` starts at `p`.
fn tag_at(b: &[u8], p: usize, name: &[u8]) -> bool {
    let e = p + 1 + name.len();
    e < b.len()
        && b[p] == b'<'
        && &b[p + 1..e] == name
        && matches!(b[e], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')
}

fn find_tag(b: &[u8], from: usize, to: usize) -> Option<(usize, Tag)> {
    let mut i = from;
    while let Some(p) = find_byte(b, b'<', i, to) {
        if tag_at(b, p, b"function_calls") {
            return Some((p, Tag::FunctionCalls));
        }
        if tag_at(b, p, b"invoke") {
            return Some((p, Tag::Invoke));
        }
        if tag_at(b, p, b"tool_call") {
            return Some((p, Tag::ToolCall));
        }
        i = p + 1;
    }
    None
}

fn find_named_tag(b: &[u8], name: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = find_byte(b, b'<', i, to) {
        if tag_at(b, p, name) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

fn count_tags(b: &[u8], name: &[u8], from: usize, to: usize) -> usize {
    let mut n = 0;
    let mut i = from;
    while let Some(p) = find_named_tag(b, name, i, to) {
        n += 1;
        i = p + 1;
    }
    n
}

struct OpenTag {
    name: Option<String>,
    after: usize,
    self_closing: bool,
}

/// Reads the opening tag `<tag …>` at `p` and its `name` attribute.
fn open_tag(text: &str, p: usize, tag: &str) -> Result<OpenTag, Fail> {
    let b = text.as_bytes();
    let len = b.len();
    let mut i = p + 1 + tag.len();
    let mut name = None;
    loop {
        i = skip_plain_ws(b, i, len);
        if i >= len {
            return Err(Fail::new(format!("<{tag}> tag is not closed with `>`"), p));
        }
        match b[i] {
            b'>' => {
                return Ok(OpenTag {
                    name,
                    after: i + 1,
                    self_closing: false,
                });
            }
            b'/' if i + 1 < len && b[i + 1] == b'>' => {
                return Ok(OpenTag {
                    name,
                    after: i + 2,
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
        i = skip_plain_ws(b, i, len);
        let mut value = None;
        if i < len && b[i] == b'=' {
            i = skip_plain_ws(b, i + 1, len);
            if i < len && (b[i] == b'"' || b[i] == b'\'') {
                let Some(close) = find_byte(b, b[i], i + 1, len) else {
                    return Err(Fail::new(
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
            name = Some(decode_entities(v).into_owned());
        }
    }
}

/// Decodes `&lt; &gt; &amp; &quot; &apos;` and numeric character references.
fn decode_entities(s: &str) -> Cow<'_, str> {
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
fn param_value(raw: &str) -> (Value, Option<String>) {
    let decoded = decode_entities(raw);
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

impl<'a> Lenient<'a> {
    fn new(text: &'a str) -> Self {
        Lenient {
            text,
            b: text.as_bytes(),
            reader: Reader::new(text),
            work: 0,
            budget: 4 * text.len() + 4096,
        }
    }

    fn run(&mut self, mut repairs: Vec<String>) -> Result<Parsed, Fail> {
        let b = self.b;
        let len = b.len();
        let mut from = 0;
        if self.text.starts_with('\u{feff}') {
            from = '\u{feff}'.len_utf8();
            repairs.push("removed a byte-order mark".to_owned());
        }
        if !has_non_ws(b, from, len) {
            return Err(Fail::new(MSG_EMPTY, 0));
        }
        let tag = find_tag(b, from, len);
        if let Some((tp, t)) = tag
            && find_byte(b, b'{', from, tp).is_none()
        {
            return self.dialect(tp, t, repairs);
        }
        let json = self.json(from, len);
        // A tag after some `{`: the object wins only when it starts before
        // the tag; otherwise the dialect is read, if it can be.
        if let Some((tp, t)) = tag
            && json.as_ref().map_or(true, |out| out.start > tp)
            && let Ok(parsed) = self.dialect(tp, t, repairs.clone())
        {
            return Ok(parsed);
        }
        let out = json?;
        repairs.extend(out.repairs);
        Ok(Parsed {
            value: Value::Object(out.map),
            repairs,
            warnings: out.warnings,
            dialect: None,
            texts: Vec::new(),
        })
    }

    /// Reads the object between `after` and the tag that closes it (`close`, else
    /// `fallback`), and where that tag is. A closing tag can stand inside one of the
    /// object's strings (`"echo '</tool_call>'"`): when the object read up to a tag is cut
    /// off inside a string, it is read again up to the next such tag, a few times at most.
    fn json_in_tag(
        &mut self,
        after: usize,
        close: &[u8],
        fallback: Option<&[u8]>,
    ) -> Result<(JsonOut, Option<usize>), Fail> {
        const TRIES: usize = 8;
        let (b, len) = (self.b, self.b.len());
        let tag = if find_sub(b, close, after, len).is_some() {
            Some(close)
        } else {
            fallback
        };
        let mut from = after;
        for _ in 0..TRIES {
            let stop = tag.and_then(|t| find_sub(b, t, from, len));
            match (self.json(after, stop.unwrap_or(len)), stop, tag) {
                (Err(e), Some(at), Some(t))
                    if e.msg == MSG_CUT_STRING && find_sub(b, t, at + t.len(), len).is_some() =>
                {
                    from = at + t.len();
                }
                (result, stop, _) => return result.map(|out| (out, stop)),
            }
        }
        let stop = tag.and_then(|t| find_sub(b, t, from, len));
        self.json(after, stop.unwrap_or(len)).map(|out| (out, stop))
    }

    /// Finds and reads the object in `from..to`: first inside code fences,
    /// then anywhere.
    fn json(&mut self, from: usize, to: usize) -> Result<JsonOut, Fail> {
        let b = self.b;
        let mut best = None;
        // Fences are looked for only when the region does not itself start
        // with the value (whose strings may hold fenced code).
        let first = skip_plain_ws(b, from, to);
        let fenced = find_sub(b, b"```", from, to).is_some();
        let mut open = if fenced && first < to && b[first] != b'{' && b[first] != b'[' {
            find_fence_open(b, from, to)
        } else {
            None
        };
        while let Some(o) = open {
            let mut cs = o + 3;
            while cs < to && is_fence_tag_byte(b[cs]) {
                cs += 1;
            }
            let close = find_sub(b, b"```", cs, to);
            match self.find_object(cs, close.unwrap_or(to), to, true) {
                Scan::Found(f) => return Ok(self.finish(f, Some((o, cs)), from, to)),
                Scan::Final(e) => return Err(e),
                Scan::Failed(e) => keep_best(&mut best, e),
            }
            if self.work > self.budget {
                break;
            }
            open = close.and_then(|c| find_fence_open(b, c + 3, to));
        }
        match self.find_object(from, to, to, fenced) {
            Scan::Found(f) => Ok(self.finish(f, None, from, to)),
            Scan::Final(e) => Err(e),
            Scan::Failed(e) => {
                keep_best(&mut best, e);
                Err(best.map_or_else(
                    || Fail::new(MSG_NO_OBJECT, skip_plain_ws(b, from, to)),
                    |(f, _)| f,
                ))
            }
        }
    }

    /// Tries each `{` in `from..to` in turn (reading up to `limit`).
    fn find_object(&mut self, from: usize, to: usize, limit: usize, fence: bool) -> Scan {
        let b = self.b;
        self.reader.limit = limit;
        self.reader.fence = fence;
        let mut best: Option<(Fail, usize)> = None;
        let mut scan_from = from;
        let first = skip_plain_ws(b, from, to);
        if first < to && b[first] == b'[' {
            self.reader.reset(first);
            match self.reader.read_value(0) {
                Ok(_) => {
                    let after = self.reader.pos;
                    if find_byte(b, b'{', after, to).is_none() {
                        return Scan::Final(Fail::new(MSG_TOP_ARRAY, first));
                    }
                    scan_from = after;
                }
                Err(f) if f.msg == MSG_DEPTH => return Scan::Final(f),
                Err(f) => {
                    let c = f.pos.max(first + 1) - first;
                    self.work += c;
                    best = Some((f, c));
                }
            }
        }
        // An empty `{}` inside prose is more likely prose than the call: keep
        // it only if no non-empty object follows.
        let mut empty_in_prose: Option<Found> = None;
        let mut next = find_byte(b, b'{', scan_from, to);
        while let Some(p) = next {
            match self.reader.read_root(p) {
                Ok((map, doubled)) => {
                    let found = Found {
                        map,
                        start: p,
                        end: self.reader.pos.max(p + 1),
                        doubled,
                        kinds: self.reader.kinds(),
                        closers: std::mem::take(&mut self.reader.closers),
                    };
                    if !found.map.is_empty() || !has_non_ws(b, from, p) {
                        return Scan::Found(found);
                    }
                    next = find_byte(b, b'{', found.end, to);
                    empty_in_prose.get_or_insert(found);
                }
                Err(f) if f.msg == MSG_DEPTH => return Scan::Final(f),
                Err(f) => {
                    let fp = f.pos.max(p + 1);
                    let c = fp - p;
                    self.work += c;
                    keep_best(&mut best, Some((f, c)));
                    // Retry at the next `{` inside what this attempt read only
                    // while it looked like prose (never got to a `:`), and only
                    // within the work budget; otherwise go on past the failure.
                    // An object opening with a quoted key is JSON, not prose in braces.
                    let keyed = b.get(skip_plain_ws(b, p + 1, to)) == Some(&b'"');
                    next = if self.reader.committed || keyed || self.work > self.budget {
                        // Not inside what failed: a `{` there is one of its values (its
                        // arguments), and taking that for the call would run another tool.
                        find_byte(b, b'{', span_end(b, p, to).max(fp), to)
                    } else {
                        // A `{` right after another was already tried as the
                        // inner one of a doubled root.
                        let mut q = find_byte(b, b'{', p + 1, to);
                        while let Some(c) = q {
                            let k = b[..c].iter().rposition(|&x| !is_ws(x));
                            if k.is_none_or(|k| k < from || b[k] != b'{') {
                                break;
                            }
                            q = find_byte(b, b'{', c + 1, to);
                        }
                        q
                    };
                }
            }
        }
        match empty_in_prose {
            Some(found) => Scan::Found(found),
            None => Scan::Failed(best),
        }
    }

    /// Turns a found object into the value, repairs and warnings.
    fn finish(
        &mut self,
        f: Found,
        fence: Option<(usize, usize)>,
        from: usize,
        to: usize,
    ) -> JsonOut {
        let b = self.b;
        let mut repairs = Vec::new();
        let before = match fence {
            Some((open, cs)) => {
                repairs.push("removed a markdown code fence".to_owned());
                has_non_ws(b, from, open) || has_non_ws(b, cs, f.start)
            }
            None => has_non_ws(b, from, f.start),
        };
        if before {
            repairs.push("ignored text before the object".to_owned());
        }
        if f.doubled {
            repairs.push("unwrapped a doubled root `{{ … }}`".to_owned());
        }
        for &(kind, n) in &f.kinds {
            repairs.push(kind.message(n));
        }
        let (extra, after) = self.trailing(f.end, to, fence.is_some());
        if after {
            repairs.push("ignored text after the object".to_owned());
        }
        if !f.closers.is_empty() {
            repairs.push(format!(
                "completed output that was cut off with `{}`",
                f.closers
            ));
        }
        let mut warnings = Vec::new();
        if extra > 0 {
            warnings.push(more_followed(extra, "object", "objects"));
        }
        JsonOut {
            map: f.map,
            repairs,
            warnings,
            start: f.start,
        }
    }

    /// Looks past the object: counts further objects that follow directly
    /// and tells whether any other text follows.
    fn trailing(&mut self, mut p: usize, to: usize, fenced: bool) -> (usize, bool) {
        let b = self.b;
        let mut fence_open = fenced;
        let mut extra = 0;
        self.reader.limit = to;
        loop {
            p = skip_plain_ws(b, p, to);
            if p >= to {
                return (extra, false);
            }
            if fence_open && b[p..to].starts_with(b"```") {
                fence_open = false;
                p += 3;
                continue;
            }
            let mut q = p;
            if b[q] == b',' {
                q = skip_plain_ws(b, q + 1, to);
            }
            if q < to && b[q] == b'{' && self.reader.read_root(q).is_ok() {
                extra += 1;
                p = self.reader.pos.max(q + 1);
                continue;
            }
            return (extra, true);
        }
    }

    fn dialect(&mut self, tp: usize, tag: Tag, mut repairs: Vec<String>) -> Result<Parsed, Fail> {
        let b = self.b;
        let len = b.len();
        match tag {
            Tag::ToolCall => {
                let open = open_tag(self.text, tp, "tool_call")?;
                let (
                    JsonOut {
                        map,
                        repairs: more,
                        mut warnings,
                        ..
                    },
                    close,
                ) = self.json_in_tag(open.after, b"</tool_call>", None)?;
                repairs.extend(more);
                if let Some(c) = close {
                    let n = count_tags(b, b"tool_call", c, len);
                    if n > 0 {
                        warnings.push(more_followed(n, "<tool_call> block", "<tool_call> blocks"));
                    }
                }
                Ok(Parsed {
                    value: Value::Object(map),
                    repairs,
                    warnings,
                    dialect: Some(Dialect::ToolCallTag),
                    texts: Vec::new(),
                })
            }
            Tag::FunctionCalls => {
                let open = open_tag(self.text, tp, "function_calls")?;
                let inv = find_named_tag(b, b"invoke", open.after, len)
                    .ok_or_else(|| Fail::new("<function_calls> contains no <invoke>", tp))?;
                self.invoke(inv, repairs)
            }
            Tag::Invoke => self.invoke(tp, repairs),
        }
    }

    fn invoke(&mut self, ip: usize, mut repairs: Vec<String>) -> Result<Parsed, Fail> {
        const CLOSE_PARAM: &[u8] = b"</parameter>";
        let b = self.b;
        let text = self.text;
        let len = b.len();
        let open = open_tag(text, ip, "invoke")?;
        let name = open
            .name
            .ok_or_else(|| Fail::new("<invoke> tag has no name attribute", ip))?;
        let mut warnings = Vec::new();
        let mut texts = Vec::new();
        let mut p = skip_plain_ws(b, open.after, len);
        let (arguments, dialect, end) = if tag_at(b, p, b"tool_args") {
            let ta = open_tag(text, p, "tool_args")?;
            let closes = |from| {
                find_sub(b, b"</tool_args>", from, len)
                    .or_else(|| find_sub(b, b"</invoke>", from, len))
                    .unwrap_or(len)
            };
            let (args, stop) = if ta.self_closing || !has_non_ws(b, ta.after, closes(ta.after)) {
                (Map::new(), closes(ta.after))
            } else {
                let (out, stop) =
                    self.json_in_tag(ta.after, b"</tool_args>", Some(b"</invoke>"))?;
                repairs.extend(out.repairs);
                warnings.extend(out.warnings);
                (out.map, stop.unwrap_or(len))
            };
            (args, Dialect::InvokeToolArgs, stop)
        } else {
            let mut args = Map::new();
            if !open.self_closing {
                loop {
                    p = skip_plain_ws(b, p, len);
                    if p >= len {
                        repairs
                            .push("completed output that was cut off with `</invoke>`".to_owned());
                        break;
                    }
                    if b[p..].starts_with(b"</invoke") {
                        p += b"</invoke".len();
                        break;
                    }
                    if !tag_at(b, p, b"parameter") {
                        return Err(Fail::new(
                            "expected <parameter> or </invoke> inside <invoke>",
                            p,
                        ));
                    }
                    let pt = open_tag(text, p, "parameter")?;
                    let key = pt
                        .name
                        .ok_or_else(|| Fail::new("<parameter> tag has no name attribute", p))?;
                    if pt.self_closing {
                        args.insert(key, Value::String(String::new()));
                        p = pt.after;
                        continue;
                    }
                    let Some(close) = find_sub(b, CLOSE_PARAM, pt.after, len) else {
                        return Err(Fail::new(
                            format!(
                                "<parameter name=\"{key}\"> is not closed: missing </parameter>"
                            ),
                            p,
                        ));
                    };
                    let (value, raw) = param_value(&text[pt.after..close]);
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
            warnings.push(more_followed(n, "<invoke> block", "<invoke> blocks"));
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
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (name, input, expected object as JSON). Names starting with a dialect's
    /// `as_str()` must come out in that dialect; their `repairs` must be empty
    /// unless the name ends in `_repaired`. Every other input must have
    /// non-empty `repairs` exactly when it is not strict JSON.
    const CASES: &[(&str, &str, &str)] = &[
        ("strict", r#"{"a":1}"#, r#"{"a":1}"#),
        (
            "strict_ws_numbers",
            " {\"a\": [1, 2.5e3, -0, 1E+2], \"b\": {\"c\": null}}\n",
            r#"{"a":[1,2.5e3,-0,1E+2],"b":{"c":null}}"#,
        ),
        (
            "strict_escapes",
            r#"{"a":"\u00e9\ud83d\ude00\n\"\\\/"}"#,
            r#"{"a":"é😀\n\"\\/"}"#,
        ),
        (
            "fence_json",
            "```json\n{\"name\":\"x\",\"args\":{}}\n```",
            r#"{"name":"x","args":{}}"#,
        ),
        ("fence_no_tag", "```\n{\"a\":1}\n```", r#"{"a":1}"#),
        ("fence_inline", "```{\"a\":1}```", r#"{"a":1}"#),
        (
            "fence_with_prose",
            "Sure!\n```json\n{\"a\":1}\n```\nLet me know.",
            r#"{"a":1}"#,
        ),
        (
            "fence_second_holds_object",
            "```bash\nls -la\n```\nthen\n```json\n{\"a\":1}\n```",
            r#"{"a":1}"#,
        ),
        (
            "fence_string_holds_backticks",
            "```json\n{\"md\":\"```py\\nx\\n```\",}\n```",
            r#"{"md":"```py\nx\n```"}"#,
        ),
        ("fence_unclosed", "```json\n{\"a\":\"b\"}", r#"{"a":"b"}"#),
        (
            "fence_cut_off",
            "```json\n{\"a\":\"b\",\n```",
            r#"{"a":"b"}"#,
        ),
        (
            "prose_around",
            "Sure! Here is the call: {\"a\":1} Let me know…",
            r#"{"a":1}"#,
        ),
        (
            "prose_brace_fails_first",
            "Use {braces} like this: {\"a\":1}",
            r#"{"a":1}"#,
        ),
        (
            "prose_empty_object_is_prose",
            "The set {} is empty; call {\"a\":1}",
            r#"{"a":1}"#,
        ),
        ("prose_only_empty_object", "Nothing to pass: {}.", r#"{}"#),
        (
            "prose_leading_bracket",
            "[1] Here it is: {\"a\":1}",
            r#"{"a":1}"#,
        ),
        (
            "line_comment",
            "{\"a\":1, // the a\n\"b\":2}",
            r#"{"a":1,"b":2}"#,
        ),
        ("block_comment", "{/* c */\"a\":/* d */1}", r#"{"a":1}"#),
        (
            "single_quotes",
            r#"{'a':'it\'s "x"'}"#,
            r#"{"a":"it's \"x\""}"#,
        ),
        (
            "backtick_string",
            "{\"a\":`say \"hi\"`}",
            r#"{"a":"say \"hi\""}"#,
        ),
        (
            "unquoted_keys",
            "{tool_name: \"x\", tool-args: {a.b: 1, $c: 2, 名前: 3}}",
            r#"{"tool_name":"x","tool-args":{"a.b":1,"$c":2,"名前":3}}"#,
        ),
        ("trailing_comma_object", "{\"a\":1,}", r#"{"a":1}"#),
        (
            "trailing_comma_array",
            "{\"a\":[1,2,],\"b\":[],}",
            r#"{"a":[1,2],"b":[]}"#,
        ),
        (
            "python_literals",
            "{\"a\":True,\"b\":False,\"c\":None,\"d\":undefined,\"e\":\"True\"}",
            r#"{"a":true,"b":false,"c":null,"d":null,"e":"True"}"#,
        ),
        ("doubled_root", "{{\"a\":{\"b\":1}}}", r#"{"a":{"b":1}}"#),
        ("doubled_root_spaced", "{ {\"a\":1} }", r#"{"a":1}"#),
        ("tripled_root", "{{{\"a\":{\"b\":1}}}}", r#"{"a":{"b":1}}"#),
        (
            "raw_control_chars",
            "{\"a\":\"line1\nline2\ttab\u{1}\"}",
            r#"{"a":"line1\nline2\ttab\u0001"}"#,
        ),
        ("two_objects", "{\"a\":1}{\"b\":2}", r#"{"a":1}"#),
        ("two_objects_newline", "{\"a\":1}\n{\"b\":2}", r#"{"a":1}"#),
        (
            "three_objects_space",
            "{\"a\":1} {\"b\":2} {\"c\":3}",
            r#"{"a":1}"#,
        ),
        ("cut_after_string", "{\"a\":\"b\"", r#"{"a":"b"}"#),
        ("cut_nested", "{\"a\":{\"b\":[1,2]", r#"{"a":{"b":[1,2]}}"#),
        ("cut_after_comma", "{\"a\":\"b\",", r#"{"a":"b"}"#),
        ("cut_after_true", "{\"a\":true", r#"{"a":true}"#),
        ("cut_after_python_none", "{\"a\":None", r#"{"a":null}"#),
        (
            "cut_in_array_after_comma",
            "{\"a\":[\"x\",",
            r#"{"a":["x"]}"#,
        ),
        ("cut_number_then_space", "{\"a\":12 ", r#"{"a":12}"#),
        ("cut_after_open_brace", "{", r#"{}"#),
        (
            "invalid_escapes",
            r#"{"a":"\x41 \'q\'"}"#,
            r#"{"a":"x41 'q'"}"#,
        ),
        ("lone_surrogate", r#"{"a":"\ud800x"}"#, r#"{"a":"\ufffdx"}"#),
        ("byte_order_mark", "\u{feff}{\"a\":1}", r#"{"a":1}"#),
        (
            "big_number_kept_exactly",
            "{\"a\":123456789012345678901234567890.125e-3,}",
            r#"{"a":123456789012345678901234567890.125e-3}"#,
        ),
        (
            "everything_at_once",
            "Sure! Here you go:\n```json\n{'tool_name': 'search', tool_args: {query: 'rust \"json\"', limit: 5, exact: True,}, // done\n}\n```\nAnything else?",
            r#"{"tool_name":"search","tool_args":{"query":"rust \"json\"","limit":5,"exact":true}}"#,
        ),
        (
            "function_calls",
            "<function_calls>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">5</parameter>\n<parameter name=\"opts\">{\"a\":1}</parameter>\n<parameter name=\"flag\">true</parameter>\n<parameter name=\"q\">\"quoted\"</parameter>\n</invoke>\n</function_calls>",
            r#"{"name":"get_weather","arguments":{"city":"Paris","days":5,"opts":{"a":1},"flag":true,"q":"quoted"}}"#,
        ),
        (
            "function_calls_bare_invoke_single_quotes_entities",
            "<invoke name='a&amp;b'><parameter name='code'>\nif a &lt; b &amp;&amp; c:\n    pass\n\n</parameter></invoke>",
            r#"{"name":"a&b","arguments":{"code":"if a < b && c:\n    pass\n"}}"#,
        ),
        (
            "function_calls_in_prose_and_fence",
            "I'll check.\n```xml\n<function_calls><invoke name=\"ls\"><parameter name=\"path\"> /tmp </parameter></invoke></function_calls>\n```",
            r#"{"name":"ls","arguments":{"path":" /tmp "}}"#,
        ),
        (
            "invoke_tool_args",
            "<invoke name=\"x\"><tool_args>{\"a\": 1}</tool_args></invoke>",
            r#"{"name":"x","arguments":{"a":1}}"#,
        ),
        (
            "invoke_tool_args_repaired",
            "<invoke name=\"x\">\n<tool_args>\n{'a': True,}\n</tool_args>\n</invoke>",
            r#"{"name":"x","arguments":{"a":true}}"#,
        ),
        (
            "tool_call",
            "<tool_call>\n{\"name\": \"x\", \"arguments\": {\"a\": 1}}\n</tool_call>",
            r#"{"name":"x","arguments":{"a":1}}"#,
        ),
        (
            "tool_call_with_its_closing_tag_in_a_string",
            "<tool_call>{\"name\": \"x\", \"arguments\": {\"c\": \"echo '</tool_call>' </tool_call>\"}}</tool_call>",
            r#"{"name":"x","arguments":{"c":"echo '</tool_call>' </tool_call>"}}"#,
        ),
        (
            "invoke_tool_args_with_closing_tags_in_a_string",
            "<invoke name=\"x\"><tool_args>{\"c\": \"</tool_args></invoke>\"}</tool_args></invoke>",
            r#"{"name":"x","arguments":{"c":"</tool_args></invoke>"}}"#,
        ),
        (
            "tool_call_unclosed",
            "<tool_call>\n{\"name\": \"x\", \"arguments\": {\"a\": \"b\"}}",
            r#"{"name":"x","arguments":{"a":"b"}}"#,
        ),
        (
            "tool_call_after_prose_with_braces",
            "I'll use {tool} now: <tool_call>{\"name\": \"x\"}</tool_call>",
            r#"{"name":"x"}"#,
        ),
        (
            "json_before_tag_in_string",
            "{\"a\": \"<tool_call>\",}",
            r#"{"a":"<tool_call>"}"#,
        ),
        (
            "tool_call_any_envelope_repaired",
            "Calling now.\n<tool_call>\n{tool: 'x', args: {},}\n</tool_call>",
            r#"{"tool":"x","args":{}}"#,
        ),
    ];

    #[test]
    fn parameter_texts_come_with_readings_other_than_strings() {
        let p = parse(
            b"<invoke name=\"x\"><parameter name=\"n\">\n12345\n</parameter>\
              <parameter name=\"b\">true</parameter><parameter name=\"o\">{\"a\": 1}</parameter>\
              <parameter name=\"l\">[1, 2]</parameter><parameter name=\"s\">\"q\"</parameter>\
              <parameter name=\"z\">null</parameter><parameter name=\"t\">plain</parameter>\
              <parameter name=\"r\">1</parameter><parameter name=\"r\">2.50</parameter></invoke>",
        )
        .unwrap();
        let texts: Vec<(&str, &str)> = p
            .texts
            .iter()
            .map(|(k, t)| (k.as_str(), t.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                ("n", "12345"),
                ("b", "true"),
                ("o", "{\"a\": 1}"),
                ("l", "[1, 2]"),
                ("r", "2.50"),
            ]
        );
        // JSON dialects carry JSON: no texts.
        let p = parse(b"<tool_call>{\"name\":\"x\",\"arguments\":{\"n\":5}}</tool_call>").unwrap();
        assert!(p.texts.is_empty());
    }

    fn dialect_of(name: &str) -> Option<Dialect> {
        [
            Dialect::InvokeToolArgs,
            Dialect::FunctionCalls,
            Dialect::ToolCallTag,
        ]
        .into_iter()
        .find(|d| name.starts_with(d.as_str()))
    }

    #[test]
    fn cases() {
        for &(name, input, expected) in CASES {
            let expected: Value = serde_json::from_str(expected).unwrap();
            let got = parse(input.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got.value, expected, "{name}: value");
            match dialect_of(name) {
                Some(d) => {
                    assert_eq!(got.dialect, Some(d), "{name}: dialect");
                    assert_eq!(
                        got.repairs.is_empty(),
                        !name.ends_with("_repaired"),
                        "{name}: repairs {:?}",
                        got.repairs
                    );
                }
                None => {
                    assert_eq!(got.dialect, None, "{name}: dialect");
                    // Objects that follow the first one are warnings, not repairs.
                    let strict = serde_json::from_str::<Value>(input).is_ok();
                    assert_eq!(
                        got.repairs.is_empty(),
                        strict || name.contains("objects"),
                        "{name}: repairs {:?}",
                        got.repairs
                    );
                }
            }
            assert_eq!(
                !got.warnings.is_empty(),
                name.contains("objects"),
                "{name}: warnings {:?}",
                got.warnings
            );
            // Idempotence.
            let again = parse(serde_json::to_string(&got.value).unwrap().as_bytes()).unwrap();
            assert_eq!(again.value, got.value, "{name}: idempotence");
            assert!(again.repairs.is_empty(), "{name}: idempotence");
        }
    }

    fn repairs_of(input: &str) -> Vec<String> {
        parse(input.as_bytes()).unwrap().repairs
    }

    #[test]
    fn exact_messages() {
        assert_eq!(
            repairs_of("```json\n{'a': True, b: None, c: [1,],}\n```"),
            [
                "removed a markdown code fence",
                "converted 1 single-quoted string to double quotes",
                "replaced Python literal True with true",
                "quoted 2 unquoted keys",
                "replaced Python literal None with null",
                "removed 2 trailing commas",
            ]
        );
        assert_eq!(
            repairs_of("Here: {\"a\":{\"b\":[\"x\","),
            [
                "ignored text before the object",
                "completed output that was cut off with `]}}`"
            ]
        );
        assert_eq!(
            repairs_of("{{\"a\":\"x\ty\"}} // c\n"),
            [
                "unwrapped a doubled root `{{ … }}`",
                "escaped 1 raw control character inside strings",
                "ignored text after the object",
            ]
        );
        assert_eq!(
            repairs_of("{\"a\":[True,True],\"b\":undefined,'c':`d`,\"e\":\"\\q\\ud800\"}"),
            [
                "replaced Python literal True with true (2 times)",
                "replaced JavaScript literal undefined with null",
                "converted 1 single-quoted string to double quotes",
                "converted 1 backtick string to double quotes",
                "dropped the backslash of 1 invalid escape sequence",
                "replaced 1 lone surrogate escape with U+FFFD",
            ]
        );
        assert_eq!(repairs_of("{/*x*/\"a\":1 // y\n}"), ["removed 2 comments"]);
        let p = parse(b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}").unwrap();
        assert!(p.repairs.is_empty());
        assert_eq!(
            p.warnings,
            ["2 more objects followed the first one and were ignored"]
        );
        let p = parse(b"{\"a\":1} {\"b\":2} and some prose").unwrap();
        assert_eq!(p.repairs, ["ignored text after the object"]);
        assert_eq!(
            p.warnings,
            ["1 more object followed the first one and was ignored"]
        );
        let p = parse(b"{\"a\":\"\x80x\"}").unwrap();
        assert_eq!(p.repairs[0], "replaced invalid UTF-8");
        let p = parse(
            b"<invoke name=\"a\"><parameter name=\"k\">1</parameter></invoke><invoke name=\"b\"></invoke>",
        )
        .unwrap();
        assert_eq!(
            p.warnings,
            ["1 more <invoke> block followed the first one and was ignored"]
        );
        let p = parse(b"<invoke name=\"a\"><parameter name=\"k\">1</parameter>").unwrap();
        assert_eq!(
            p.repairs,
            ["completed output that was cut off with `</invoke>`"]
        );
        let p = parse(
            b"<tool_call>{\"name\":\"a\"}</tool_call>\n<tool_call>{\"name\":\"b\"}</tool_call>",
        )
        .unwrap();
        assert_eq!(p.value, serde_json::json!({"name":"a"}));
        assert_eq!(
            p.warnings,
            ["1 more <tool_call> block followed the first one and was ignored"]
        );
        assert_eq!(Dialect::FunctionCalls.as_str(), "function_calls");
        assert_eq!(Dialect::InvokeToolArgs.as_str(), "invoke_tool_args");
        assert_eq!(Dialect::ToolCallTag.as_str(), "tool_call");
    }

    #[test]
    fn numbers_keep_their_digits() {
        let p = parse(b"{\"a\": 3.14159265358979323846264338327950288419716939937510,}").unwrap();
        assert_eq!(
            p.value["a"].to_string(),
            "3.14159265358979323846264338327950288419716939937510"
        );
        // serde_json spells exponents its own way, in strict parsing too.
        let p = parse(b"{\"a\": 1e400,}").unwrap();
        let strict: Value = serde_json::from_str("{\"a\": 1e400}").unwrap();
        assert_eq!(p.value, strict);
    }

    /// (name, input, message substring, line, column)
    const REJECTS: &[(&str, &str, &str, usize, usize)] = &[
        (
            "cut_string",
            r#"{"a":"hel"#,
            "output was cut off inside a string",
            1,
            10,
        ),
        (
            "cut_number",
            r#"{"a":1"#,
            "output was cut off inside a number",
            1,
            7,
        ),
        (
            "cut_number_in_array",
            r#"{"a":[1,2"#,
            "output was cut off inside a number",
            1,
            10,
        ),
        (
            "cut_key",
            r#"{"a":"b","c"#,
            "output was cut off inside a key",
            1,
            12,
        ),
        (
            "cut_unquoted_key",
            r#"{"a":"b", c"#,
            "output was cut off inside a key",
            1,
            12,
        ),
        (
            "key_no_value",
            r#"{"a":"#,
            "output was cut off after a key",
            1,
            6,
        ),
        (
            "key_no_colon",
            r#"{"a""#,
            "output was cut off after a key",
            1,
            5,
        ),
        (
            "cut_literal",
            r#"{"a":tr"#,
            "output was cut off inside a literal",
            1,
            8,
        ),
        (
            "cut_escape",
            r#"{"a":"x\u12"#,
            "output was cut off inside a string",
            1,
            12,
        ),
        (
            "array_top",
            "[1,2]",
            "top-level JSON value is an array, not an object",
            1,
            1,
        ),
        (
            "array_top_lenient",
            " [1,2,]",
            "top-level JSON value is an array, not an object",
            1,
            2,
        ),
        (
            "array_in_fence",
            "x\n```json\n[{\"a\":1},]\n```",
            "top-level JSON value is an array",
            3,
            1,
        ),
        (
            "string_top",
            "\"x\"",
            "top-level JSON value is a string, not an object",
            1,
            1,
        ),
        (
            "number_top",
            "\n 42",
            "top-level JSON value is a number, not an object",
            2,
            2,
        ),
        (
            "null_top",
            "null",
            "top-level JSON value is null, not an object",
            1,
            1,
        ),
        ("empty", "", "input is empty", 1, 1),
        ("blank", " \n\t ", "input is empty", 1, 1),
        (
            "only_prose",
            "Hello, I cannot help with that.",
            "no JSON object found",
            1,
            1,
        ),
        (
            "plus_number",
            "{\n  \"a\": +1\n}",
            "invalid number `+1`",
            2,
            8,
        ),
        ("dot_number", "{\"a\": .5}", "invalid number `.5`", 1, 7),
        ("leading_zero", "{\"a\": 01}", "invalid number `01`", 1, 7),
        ("hex_number", "{\"a\": 0x1F}", "invalid number `0x1F`", 1, 7),
        ("nan", "{\"a\": NaN}", "invalid number `NaN`", 1, 7),
        (
            "bare_word",
            "{\"a\": yes}",
            "expected a value, found `yes`",
            1,
            7,
        ),
        (
            "missing_comma",
            "{\"a\": 1 \"b\": 2}",
            "expected `,` or `}`",
            1,
            9,
        ),
        (
            "error_in_fence_points_at_original",
            "Sure:\n```json\n{\"a\": 01}\n```",
            "invalid number",
            3,
            7,
        ),
        (
            "invoke_without_name",
            "<invoke><parameter name=\"a\">1</parameter></invoke>",
            "<invoke> tag has no name attribute",
            1,
            1,
        ),
        (
            "parameter_without_name",
            "<invoke name=\"x\">\n  <parameter>1</parameter></invoke>",
            "<parameter> tag has no name attribute",
            2,
            3,
        ),
        (
            "unclosed_parameter",
            "<invoke name=\"x\">\n<parameter name=\"a\">1",
            "<parameter name=\"a\"> is not closed: missing </parameter>",
            2,
            1,
        ),
        (
            "function_calls_without_invoke",
            "<function_calls>\n</function_calls>",
            "<function_calls> contains no <invoke>",
            1,
            1,
        ),
        (
            "tool_call_cut",
            "<tool_call>\n{\"name\":\"x\",\"arguments\":{\"a\":\"b",
            "output was cut off inside a string",
            2,
            32,
        ),
        (
            "tool_call_empty",
            "<tool_call></tool_call>",
            "no JSON object found",
            1,
            12,
        ),
    ];

    #[test]
    fn rejects() {
        let deep = "[".repeat(100_000);
        let deep_in_object = format!("{{\"a\":\n{deep}");
        let generated = [
            ("100k_nested_brackets", deep.as_str(), MSG_DEPTH, 1, 129),
            (
                "100k_nested_in_object",
                deep_in_object.as_str(),
                MSG_DEPTH,
                2,
                128,
            ),
        ];
        for &(name, input, msg, line, column) in REJECTS.iter().chain(&generated) {
            let e = parse(input.as_bytes()).expect_err(name);
            assert!(e.message.contains(msg), "{name}: {e}");
            assert_eq!((e.line, e.column), (line, column), "{name}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_rejected_without_overflow() {
        for input in [
            vec![b'['; 100_000],
            [b"{\"a\":".as_slice(), &[b'['; 100_000]].concat(),
            b"{\"a\":".repeat(100_000),
        ] {
            let e = parse(&input).unwrap_err();
            assert!(e.message.contains("nesting deeper than 128 levels"), "{e}");
            assert_eq!(e.line, 1);
        }
        let e = parse(&[b'['; 100_000]).unwrap_err();
        assert_eq!((e.line, e.column), (1, 129));
        // Braces alone are no object at all (a key is expected).
        let e = parse(&[b'{'; 100_000]).unwrap_err();
        assert_eq!(e.message, "expected a key");
        // 128 levels are fine.
        let s = format!("{}1{}", "{\"a\":".repeat(128), "}".repeat(128));
        assert!(parse(s.as_bytes()).is_ok());
        let s = format!("{}1{},", "{\"a\":".repeat(128), "}".repeat(128));
        assert!(parse(s.as_bytes()).is_ok());
        let s = format!("{}1{},", "{\"a\":".repeat(129), "}".repeat(129));
        assert!(parse(s.as_bytes()).is_err());
    }

    #[test]
    fn display() {
        let e = parse(b"{\"a\":").unwrap_err();
        assert_eq!(
            e.to_string(),
            "output was cut off after a key, before its value; not completed at line 1, column 6"
        );
    }

    #[test]
    fn pathological_inputs_finish() {
        // Each must end without a panic or a stack overflow; how fast is the bench's business.
        let n = 2_000_000;
        let _ = parse(&vec![b'{'; n]);
        let _ = parse(format!("{{\"a\":\"{}", "{".repeat(n)).as_bytes());
        let _ = parse("{x ".repeat(n / 3).as_bytes());
        let _ = parse("{\"a".repeat(n / 3).as_bytes());
        let _ = parse("```{\"a\":\"".repeat(n / 8).as_bytes());
        let _ = parse("{}".repeat(n / 2).as_bytes());
        let _ = parse("<".repeat(n).as_bytes());
        let p = parse(format!("{}{{\"a\":1}}", "{ ".repeat(n / 2)).as_bytes());
        assert!(p.is_err() || p.unwrap().value.is_object());
    }

    // --- property tests ---------------------------------------------------

    fn arb_string() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z ]{0,8}",
            prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
            prop::collection::vec(
                prop::sample::select(vec![
                    "\"",
                    "'",
                    "`",
                    "\\",
                    "\n",
                    "{",
                    "}",
                    "```",
                    "//",
                    "True",
                    "<invoke name=\"x\">",
                    "é"
                ]),
                0..5
            )
            .prop_map(|v| v.concat()),
        ]
    }

    fn arb_key() -> impl Strategy<Value = String> {
        prop_oneof!["[a-zA-Z_$][a-zA-Z0-9_.$-]{0,6}", arb_string()]
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            arb_string().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((arb_key(), inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn arb_object() -> impl Strategy<Value = Value> {
        prop::collection::vec((arb_key(), arb_json()), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().collect()))
    }

    #[derive(Clone, Copy)]
    struct Style {
        unquote_keys: bool,
        single_quotes: bool,
        trailing_commas: bool,
    }

    fn emit_str(s: &str, st: Style, out: &mut String) {
        let json = serde_json::to_string(s).unwrap();
        if st.single_quotes && !s.contains('\'') {
            out.push('\'');
            out.push_str(&json[1..json.len() - 1]);
            out.push('\'');
        } else {
            out.push_str(&json);
        }
    }

    fn emit(v: &Value, st: Style, out: &mut String) {
        match v {
            Value::String(s) => emit_str(s, st, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    emit(item, st, out);
                }
                if st.trailing_commas && !items.is_empty() {
                    out.push(',');
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if st.unquote_keys && !k.is_empty() && k.chars().all(is_key_char) {
                        out.push_str(k);
                    } else {
                        emit_str(k, st, out);
                    }
                    out.push(':');
                    emit(item, st, out);
                }
                if st.trailing_commas && !map.is_empty() {
                    out.push(',');
                }
                out.push('}');
            }
            other => out.push_str(&serde_json::to_string(other).unwrap()),
        }
    }

    fn styled(v: &Value, st: Style) -> String {
        let mut out = String::new();
        emit(v, st, &mut out);
        out
    }

    fn mutated_json() -> impl Strategy<Value = Vec<u8>> {
        let tokens = prop::collection::vec(
            prop::sample::select(vec![
                "{",
                "}",
                "[",
                "]",
                ":",
                ",",
                "\"",
                "'",
                "`",
                "\\",
                "\\u",
                "d83d",
                "true",
                "Tr",
                "None",
                "1",
                "-",
                "e",
                ".",
                "\n",
                " ",
                "```",
                "```json\n",
                "//",
                "/*",
                "*/",
                "a",
                "<invoke name=\"x\">",
                "<parameter name=\"k\">",
                "</parameter>",
                "</invoke>",
                "<tool_call>",
                "</tool_call>",
                "<tool_args>",
                "<function_calls>",
                "&lt;",
                "é",
            ]),
            0..40,
        )
        .prop_map(|v| v.concat().into_bytes());
        let mutations = (
            arb_object(),
            prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 0..6),
        )
            .prop_map(|(v, muts)| {
                let mut bytes = serde_json::to_vec(&v).unwrap();
                for (idx, op, byte) in muts {
                    let len = bytes.len();
                    if len == 0 {
                        bytes.push(byte);
                        continue;
                    }
                    let i = idx.index(len);
                    match op {
                        0 => bytes[i] = byte,
                        1 => {
                            bytes.remove(i);
                        }
                        2 => bytes.insert(i, byte),
                        _ => bytes.truncate(i),
                    }
                }
                bytes
            });
        prop_oneof![tokens, mutations]
    }

    fn check_ok_is_stable(input: &[u8]) {
        if let Ok(p) = parse(input) {
            assert!(p.value.is_object());
            let again = parse(serde_json::to_string(&p.value).unwrap().as_bytes()).unwrap();
            assert_eq!(again.value, p.value);
            assert!(again.repairs.is_empty());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_on_bytes(input in prop::collection::vec(any::<u8>(), 0..300)) {
            check_ok_is_stable(&input);
        }

        #[test]
        fn never_panics_on_mutations(input in mutated_json()) {
            check_ok_is_stable(&input);
        }

        #[test]
        fn strict_round_trip(v in arb_object()) {
            let p = parse(&serde_json::to_vec(&v).unwrap()).unwrap();
            prop_assert_eq!(&p.value, &v);
            prop_assert!(p.repairs.is_empty());
            let pretty = serde_json::to_vec_pretty(&v).unwrap();
            let p = parse(&pretty).unwrap();
            prop_assert_eq!(&p.value, &v);
            prop_assert!(p.repairs.is_empty());
        }

        #[test]
        fn broken_round_trip(v in arb_object()) {
            let strict = serde_json::to_string(&v).unwrap();
            let none = Style { unquote_keys: false, single_quotes: false, trailing_commas: false };
            let all = Style { unquote_keys: true, single_quotes: true, trailing_commas: true };
            let mut inputs = vec![
                format!("```json\n{strict}\n```"),
                format!("```\n{strict}\n```"),
                format!("Sure! Here is the call: {strict}\nLet me know if you need more."),
                styled(&v, Style { unquote_keys: true, ..none }),
                styled(&v, Style { single_quotes: true, ..none }),
                styled(&v, Style { trailing_commas: true, ..none }),
                format!("Here:\n```json\n{}\n```\nDone.", styled(&v, all)),
            ];
            let cut = strict.trim_end_matches(['}', ']']);
            if !cut.ends_with(|c: char| c.is_ascii_digit()) {
                inputs.push(cut.to_owned());
                inputs.push(format!("```json\n{cut}"));
            }
            for input in inputs {
                let p = parse(input.as_bytes());
                prop_assert!(p.is_ok(), "{:?}: {:?}", input, p);
                let p = p.unwrap();
                prop_assert_eq!(&p.value, &v, "{:?}", input);
                prop_assert_eq!(p.dialect, None);
                if serde_json::from_str::<Value>(&input).is_err() {
                    prop_assert!(!p.repairs.is_empty(), "{:?}", input);
                }
            }
        }
    }
}
