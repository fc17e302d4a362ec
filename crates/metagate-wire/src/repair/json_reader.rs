//! The recursive-descent reader of one JSON object, lenient about the usual damage, counting
//! every repair it makes.

use super::bytes::{
    HexDigits, find_byte, find_bytes, four_hex_digits, is_json_number, is_literal_byte,
    is_unquoted_key_char,
};
use super::messages::{
    MSG_CUT_AFTER_KEY, MSG_CUT_KEY, MSG_CUT_LITERAL, MSG_CUT_NUMBER, MSG_CUT_STRING,
    MSG_EXPECTED_KEY, MSG_EXPECTED_VALUE, REPAIR_KIND_COUNT, ReadFailure, RepairKind, preview,
};
use serde_json::{Map, Number, Value};

/// Deepest nesting of objects and arrays the lenient reader accepts ([`MSG_DEPTH`] says it).
pub const MAX_DEPTH: usize = 128;

/// Recursive-descent reader over the whole (decoded) input. Offsets are
/// absolute, so errors point into the original text.
pub(super) struct JsonReader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pub(super) pos: usize,
    /// Where reading stops: `limit`, or earlier where a closing code fence
    /// was met in a structural position.
    end: usize,
    /// The end of the region being read; `end` is reset to it per attempt.
    pub(super) limit: usize,
    /// Treat "```" in a structural position as the end of input.
    pub(super) stop_at_fence: bool,
    /// How many repairs of each kind this attempt made, indexed by [`RepairKind`].
    counts_by_kind: [u32; REPAIR_KIND_COUNT],
    /// The kinds of repair in the order they were first made (the order they are reported).
    kinds_in_order: Vec<RepairKind>,
    /// Closers appended to complete cut-off output, innermost first.
    pub(super) closers: String,
    /// The input ended between complete values: the rest of the reading only closes.
    cut_off: bool,
    /// The root object got as far as a `:`: it is a real (if broken)
    /// object, so the `{`s inside it are not other candidates.
    pub(super) root_reached_colon: bool,
    /// A buffer reused by every string with escapes, so its capacity carries from one string to the next.
    string_scratch: String,
}

impl<'a> JsonReader<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        JsonReader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            end: text.len(),
            limit: text.len(),
            stop_at_fence: false,
            counts_by_kind: [0; REPAIR_KIND_COUNT],
            kinds_in_order: Vec::new(),
            closers: String::new(),
            cut_off: false,
            root_reached_colon: false,
            string_scratch: String::new(),
        }
    }

    /// Starts a new attempt at `pos`, forgetting what the last one counted.
    pub(super) fn restart_at(&mut self, pos: usize) {
        self.pos = pos;
        self.end = self.limit;
        self.counts_by_kind = [0; REPAIR_KIND_COUNT];
        self.kinds_in_order.clear();
        self.closers.clear();
        self.cut_off = false;
        self.root_reached_colon = false;
    }

    /// Counts one repair of `kind`.
    fn count_repair(&mut self, kind: RepairKind) {
        let c = &mut self.counts_by_kind[kind as usize];
        if *c == 0 {
            self.kinds_in_order.push(kind);
        }
        *c += 1;
    }

    /// Each kind of repair this attempt made, with its count, in the order first made.
    pub(super) fn repairs_counted(&self) -> Vec<(RepairKind, u32)> {
        self.kinds_in_order
            .iter()
            .map(|&k| (k, self.counts_by_kind[k as usize]))
            .collect()
    }

    /// The byte at `pos`, unless reading has reached its end.
    fn peek(&self) -> Option<u8> {
        if self.pos < self.end {
            Some(self.bytes[self.pos])
        } else {
            None
        }
    }

    /// Whether reading stopped at the true end of the input (as opposed to a
    /// closing tag or fence), so that a token there may have been cut.
    fn at_end_of_input(&self, i: usize) -> bool {
        i >= self.end && self.end == self.bytes.len()
    }

    /// Skips whitespace and comments; a closing code fence ends the input.
    fn skip_whitespace_and_comments(&mut self) {
        while self.pos < self.end {
            match self.bytes[self.pos] {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.pos + 1 < self.end && self.bytes[self.pos + 1] == b'/' => {
                    self.count_repair(RepairKind::Comment);
                    self.pos =
                        find_byte(self.bytes, b'\n', self.pos + 2, self.end).unwrap_or(self.end);
                }
                b'/' if self.pos + 1 < self.end && self.bytes[self.pos + 1] == b'*' => {
                    self.count_repair(RepairKind::Comment);
                    self.pos = find_bytes(self.bytes, b"*/", self.pos + 2, self.end)
                        .map_or(self.end, |p| p + 2);
                }
                b'`' if self.stop_at_fence
                    && self.bytes[self.pos..self.end].starts_with(b"```") =>
                {
                    self.end = self.pos;
                }
                _ => return,
            }
        }
    }

    /// Reads the object whose `{` is at `start`, unwrapping a doubled root
    /// `{{ … }}` (or a tripled one: models that escape braces for a template
    /// engine may do it twice). Returns the object and whether it was doubled.
    pub(super) fn read_root(
        &mut self,
        start: usize,
    ) -> Result<(Map<String, Value>, bool), ReadFailure> {
        self.restart_at(start + 1);
        self.skip_whitespace_and_comments();
        let mut extra = 0;
        let mut innermost = start;
        while self.peek() == Some(b'{') && extra < MAX_DEPTH {
            innermost = self.pos;
            extra += 1;
            self.pos += 1;
            self.skip_whitespace_and_comments();
        }
        // Braces past the deepest nesting read: whatever they wrap is too deep to be read.
        if extra == MAX_DEPTH && self.peek() == Some(b'{') {
            return Err(ReadFailure::too_deep(self.pos));
        }
        if extra == 0 {
            self.restart_at(start);
            return self.read_object(1).map(|m| (m, false));
        }
        self.restart_at(innermost);
        let map = self.read_object(1)?;
        for _ in 0..extra {
            if self.cut_off {
                return Ok((map, true));
            }
            self.skip_whitespace_and_comments();
            match self.peek() {
                Some(b'}') => self.pos += 1,
                None => return Ok((map, true)),
                Some(_) => {
                    return Err(ReadFailure::new(
                        "expected `}` closing the doubled `{{`",
                        self.pos,
                    ));
                }
            }
        }
        Ok((map, true))
    }

    /// Marks the output as cut off at a safe point and records `closer`.
    fn close_cut_off(&mut self, closer: char) {
        self.cut_off = true;
        self.closers.push(closer);
    }

    /// Reads an object; `pos` is at its `{`, nested `depth` levels deep.
    fn read_object(&mut self, depth: usize) -> Result<Map<String, Value>, ReadFailure> {
        if depth > MAX_DEPTH {
            return Err(ReadFailure::too_deep(self.pos));
        }
        self.pos += 1;
        let mut map = Map::new();
        let mut after_comma = false;
        loop {
            self.skip_whitespace_and_comments();
            match self.peek() {
                None => {
                    self.close_cut_off('}');
                    return Ok(map);
                }
                Some(b'}') => {
                    if after_comma {
                        self.count_repair(RepairKind::TrailingComma);
                    }
                    self.pos += 1;
                    return Ok(map);
                }
                Some(_) => {}
            }
            let key = self.read_key()?;
            self.skip_whitespace_and_comments();
            match self.peek() {
                Some(b':') => {
                    self.pos += 1;
                    self.root_reached_colon |= depth == 1;
                }
                None => return Err(ReadFailure::new(MSG_CUT_AFTER_KEY, self.end)),
                Some(_) => return Err(ReadFailure::new("expected `:` after the key", self.pos)),
            }
            self.skip_whitespace_and_comments();
            if self.peek().is_none() {
                return Err(ReadFailure::new(MSG_CUT_AFTER_KEY, self.end));
            }
            let value = self.read_value(depth)?;
            map.insert(key, value);
            if self.cut_off {
                self.closers.push('}');
                return Ok(map);
            }
            self.skip_whitespace_and_comments();
            match self.peek() {
                None => {
                    self.close_cut_off('}');
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
                    return Err(ReadFailure::new(
                        "expected `,` or `}` after an object member",
                        self.pos,
                    ));
                }
            }
        }
    }

    /// Reads an array; `pos` is at its `[`, nested `depth` levels deep.
    fn read_array(&mut self, depth: usize) -> Result<Vec<Value>, ReadFailure> {
        if depth > MAX_DEPTH {
            return Err(ReadFailure::too_deep(self.pos));
        }
        self.pos += 1;
        let mut items = Vec::new();
        let mut after_comma = false;
        loop {
            self.skip_whitespace_and_comments();
            match self.peek() {
                None => {
                    self.close_cut_off(']');
                    return Ok(items);
                }
                Some(b']') => {
                    if after_comma {
                        self.count_repair(RepairKind::TrailingComma);
                    }
                    self.pos += 1;
                    return Ok(items);
                }
                Some(_) => {}
            }
            items.push(self.read_value(depth)?);
            if self.cut_off {
                self.closers.push(']');
                return Ok(items);
            }
            self.skip_whitespace_and_comments();
            match self.peek() {
                None => {
                    self.close_cut_off(']');
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
                    return Err(ReadFailure::new(
                        "expected `,` or `]` after an array element",
                        self.pos,
                    ));
                }
            }
        }
    }

    /// Reads a value; the caller guarantees `pos < end`.
    pub(super) fn read_value(&mut self, depth: usize) -> Result<Value, ReadFailure> {
        match self.bytes[self.pos] {
            b'{' => Ok(Value::Object(self.read_object(depth + 1)?)),
            b'[' => Ok(Value::Array(self.read_array(depth + 1)?)),
            b'"' | b'\'' | b'`' => Ok(Value::String(self.read_string(false)?)),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.read_number(),
            c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => self.read_word(),
            _ => Err(ReadFailure::new(MSG_EXPECTED_VALUE, self.pos)),
        }
    }

    /// Reads a key; the caller guarantees `pos < end`.
    fn read_key(&mut self) -> Result<String, ReadFailure> {
        let c = self.bytes[self.pos];
        if matches!(c, b'"' | b'\'' | b'`') {
            return self.read_string(true);
        }
        let start = self.pos;
        let mut i = start;
        while i < self.end {
            let c = self.bytes[i];
            if c < 0x80 {
                if is_unquoted_key_char(char::from(c)) {
                    i += 1;
                    continue;
                }
                break;
            }
            match self.text[i..].chars().next() {
                Some(ch) if is_unquoted_key_char(ch) => i += ch.len_utf8(),
                _ => break,
            }
        }
        if i == start {
            return Err(ReadFailure::new(MSG_EXPECTED_KEY, start));
        }
        if self.at_end_of_input(i) {
            return Err(ReadFailure::new(MSG_CUT_KEY, i));
        }
        self.count_repair(RepairKind::UnquotedKey);
        self.pos = i;
        Ok(self.text[start..i].to_owned())
    }

    /// Reads a string quoted with `"`, `'` or `` ` ``; `pos` is at the quote.
    fn read_string(&mut self, is_key: bool) -> Result<String, ReadFailure> {
        let b = self.bytes;
        let text = self.text;
        let q = b[self.pos];
        match q {
            b'\'' => self.count_repair(RepairKind::SingleQuoted),
            b'`' => self.count_repair(RepairKind::Backtick),
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
        let mut buf = std::mem::take(&mut self.string_scratch);
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
                self.count_repair(RepairKind::ControlChar);
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
                match four_hex_digits(b, i + 1, end) {
                    HexDigits::CutOff => break None,
                    HexDigits::NotHex => {
                        self.count_repair(RepairKind::InvalidEscape);
                        buf.push('u');
                        i += 1;
                    }
                    HexDigits::Value(cp) => {
                        i += 5;
                        if (0xD800..0xDC00).contains(&cp) {
                            let low = if b[i..end].starts_with(b"\\u") {
                                match four_hex_digits(b, i + 2, end) {
                                    HexDigits::Value(lo) if (0xDC00..0xE000).contains(&lo) => {
                                        Some(lo)
                                    }
                                    HexDigits::CutOff => break None,
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
                                    self.count_repair(RepairKind::LoneSurrogate);
                                    buf.push('\u{FFFD}');
                                }
                            }
                        } else if let Some(ch) = char::from_u32(cp) {
                            buf.push(ch);
                        } else {
                            self.count_repair(RepairKind::LoneSurrogate);
                            buf.push('\u{FFFD}');
                        }
                    }
                }
            } else {
                // An invalid escape: keep the character after the backslash.
                self.count_repair(RepairKind::InvalidEscape);
                let ch = text[i..].chars().next().unwrap_or('\\');
                buf.push(ch);
                i += ch.len_utf8();
            }
            run = i;
        };
        self.string_scratch = buf;
        result.ok_or_else(|| {
            ReadFailure::new(if is_key { MSG_CUT_KEY } else { MSG_CUT_STRING }, self.end)
        })
    }

    /// Reads a number; refuses a cut-off one and any that is not JSON (`+1`, `.5`, `0x1F`).
    fn read_number(&mut self) -> Result<Value, ReadFailure> {
        let start = self.pos;
        let mut i = start;
        while i < self.end
            && (self.bytes[i].is_ascii_alphanumeric()
                || matches!(self.bytes[i], b'.' | b'+' | b'-' | b'_'))
        {
            i += 1;
        }
        if self.at_end_of_input(i) {
            return Err(ReadFailure::new(MSG_CUT_NUMBER, i));
        }
        let token = &self.text[start..i];
        let invalid = || ReadFailure::new(format!("invalid number `{}`", preview(token)), start);
        if !is_json_number(token.as_bytes()) {
            return Err(invalid());
        }
        let n = token.parse::<Number>().map_err(|_| invalid())?;
        self.pos = i;
        Ok(Value::Number(n))
    }

    /// Reads a bare word: JSON's literals, and Python's and JavaScript's (counted as repairs).
    fn read_word(&mut self) -> Result<Value, ReadFailure> {
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
        while i < self.end && is_literal_byte(self.bytes[i]) {
            i += 1;
        }
        let word = &self.text[start..i];
        let value = match word {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            "True" => {
                self.count_repair(RepairKind::PythonTrue);
                Value::Bool(true)
            }
            "False" => {
                self.count_repair(RepairKind::PythonFalse);
                Value::Bool(false)
            }
            "None" => {
                self.count_repair(RepairKind::PythonNone);
                Value::Null
            }
            "undefined" => {
                self.count_repair(RepairKind::JavaScriptUndefined);
                Value::Null
            }
            _ => {
                if self.at_end_of_input(i) && WORDS.iter().any(|w| w.starts_with(word)) {
                    return Err(ReadFailure::new(MSG_CUT_LITERAL, i));
                }
                if word == "NaN" || word == "Infinity" {
                    return Err(ReadFailure::new(format!("invalid number `{word}`"), start));
                }
                return Err(ReadFailure::new(
                    format!("{MSG_EXPECTED_VALUE}, found `{}`", preview(word)),
                    start,
                ));
            }
        };
        self.pos = i;
        Ok(value)
    }
}
