//! The recursive-descent reader of one JSON object, lenient about the usual damage, counting
//! every repair it makes.

use super::bytes::{
    HexDigits, find_byte, find_bytes, four_hex_digits, is_json_number, is_literal_byte,
    is_number_like, is_space_char, is_unquoted_key_char, unquoted_value_end,
};
use super::messages::{
    MSG_CUT_AFTER_KEY, MSG_CUT_KEY, MSG_CUT_LITERAL, MSG_CUT_NUMBER, MSG_CUT_STRING, MSG_CUT_VALUE,
    MSG_EXPECTED_KEY, MSG_EXPECTED_VALUE, MSG_WORDS, REPAIR_KIND_COUNT, ReadFailure, RepairKind,
    preview,
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
    /// The last skip of whitespace passed a line break: two members or elements on lines of
    /// their own are read as if a comma stood between them.
    crossed_line: bool,
    /// How many arrays and objects are open around the reading position: a closer of the
    /// wrong kind is read as the one it must be only when no open container takes it.
    open_arrays: usize,
    open_objects: usize,
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
            crossed_line: false,
            open_arrays: 0,
            open_objects: 0,
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
        self.open_arrays = 0;
        self.open_objects = 0;
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
        self.crossed_line = false;
        while self.pos < self.end {
            match self.bytes[self.pos] {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' => {
                    self.crossed_line = true;
                    self.pos += 1;
                }
                0x80..=0xFF => match self.text[self.pos..].chars().next() {
                    Some(ch) if is_space_char(ch) => {
                        self.count_repair(RepairKind::UnicodeSpace);
                        self.pos += ch.len_utf8();
                    }
                    _ => return,
                },
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
    /// engine may do it twice) and a code fence inside the braces (`{```json {…} ```}`).
    /// Returns the object and the wrapper it came in.
    pub(super) fn read_root(
        &mut self,
        start: usize,
    ) -> Result<(Map<String, Value>, Wrapper), ReadFailure> {
        let inside = self.skip_ascii_space(start + 1);
        if self.bytes[inside..self.limit].starts_with(b"```") {
            return self.read_fence_in_braces(start, inside);
        }
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
            return self.read_object(1).map(|m| (m, Wrapper::None));
        }
        self.restart_at(innermost);
        let map = self.read_object(1)?;
        for _ in 0..extra {
            if self.cut_off {
                return Ok((map, Wrapper::Doubled));
            }
            self.skip_whitespace_and_comments();
            match self.peek() {
                Some(b'}') => self.pos += 1,
                None => return Ok((map, Wrapper::Doubled)),
                Some(_) => {
                    return Err(ReadFailure::new(
                        "expected `}` closing the doubled `{{`",
                        self.pos,
                    ));
                }
            }
        }
        Ok((map, Wrapper::Doubled))
    }

    /// The first offset at or after `i` (before `limit`) that is not an ASCII space.
    fn skip_ascii_space(&self, mut i: usize) -> usize {
        while i < self.limit && matches!(self.bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    }

    /// `{```json {…} ```}`: the fence at `fence` inside the braces opened at `start` wraps
    /// the one object the braces hold. Anything else there is refused: the braces and the
    /// fence cannot both be read as the object's own.
    fn read_fence_in_braces(
        &mut self,
        start: usize,
        fence: usize,
    ) -> Result<(Map<String, Value>, Wrapper), ReadFailure> {
        let mut i = fence + 3;
        while i < self.limit && super::bytes::is_fence_tag_byte(self.bytes[i]) {
            i += 1;
        }
        let open = self.skip_ascii_space(i);
        if self.bytes.get(open) != Some(&b'{') || open >= self.limit {
            return Err(ReadFailure::new(
                "a code fence inside the braces must hold one object",
                open.min(self.limit),
            ));
        }
        let fence_was = self.stop_at_fence;
        self.restart_at(open);
        self.stop_at_fence = true;
        let read = self.read_object(1);
        self.stop_at_fence = fence_was;
        let map = read?;
        let close = self.skip_ascii_space(self.pos);
        if self.cut_off || !self.bytes[close..self.limit].starts_with(b"```") {
            return Err(ReadFailure::new(
                "expected the code fence inside the braces to close after the object",
                close,
            ));
        }
        let brace = self.skip_ascii_space(close + 3);
        if self.bytes.get(brace) != Some(&b'}') || brace >= self.limit {
            return Err(ReadFailure::new(
                "expected `}` closing the braces around the code fence",
                brace.min(self.limit),
            ));
        }
        self.end = self.limit;
        self.pos = brace + 1;
        debug_assert!(start < fence);
        Ok((map, Wrapper::FenceInBraces))
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
        self.open_objects += 1;
        let read = self.read_members(depth);
        self.open_objects -= 1;
        read
    }

    /// A closer that ends the object being read: `}`, or a `]` no open array takes.
    /// Returns whether it closed the object (and was consumed, unless it closes an outer
    /// container too).
    fn close_object(&mut self) -> bool {
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                true
            }
            Some(b']') if self.open_arrays == 0 => {
                self.count_repair(RepairKind::WrongCloser);
                self.pos += 1;
                true
            }
            Some(b']') => {
                // `[{"a":1]`: the object's `}` is missing; the `]` closes the array around it.
                self.count_repair(RepairKind::MissingCloser);
                true
            }
            _ => false,
        }
    }

    /// The members of an object, up to and past its closer.
    fn read_members(&mut self, depth: usize) -> Result<Map<String, Value>, ReadFailure> {
        let mut map = Map::new();
        let mut after_comma = false;
        // The value of the last member was an object: a `}` after it may be that object's or
        // the root's, so members after an early `}` would have two readings.
        let mut last_was_object = false;
        loop {
            self.skip_whitespace_and_comments();
            match self.peek() {
                None => {
                    self.close_cut_off('}');
                    return Ok(map);
                }
                Some(b',') if map.is_empty() && !after_comma => {
                    self.count_repair(RepairKind::LeadingComma);
                    self.pos += 1;
                    continue;
                }
                Some(_) => {
                    let closer = self.peek();
                    if self.close_object() {
                        if after_comma {
                            self.count_repair(RepairKind::TrailingComma);
                        }
                        if closer == Some(b'}') && self.early_closer(depth, last_was_object, &map) {
                            after_comma = true;
                            continue;
                        }
                        return Ok(map);
                    }
                }
            }
            let quoted_key = matches!(self.bytes[self.pos], b'"' | b'\'' | b'`');
            let key = self.read_key()?;
            self.skip_whitespace_and_comments();
            match self.peek() {
                Some(b':') => {
                    self.pos += 1;
                    self.root_reached_colon |= depth == 1;
                }
                // `{"key" "value"}`: two strings on one line, the second a value.
                Some(b'"') if quoted_key && !self.crossed_line => {
                    self.count_repair(RepairKind::MissingColon);
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
            last_was_object = value.is_object();
            map.insert(key, value);
            if self.cut_off {
                self.closers.push('}');
                return Ok(map);
            }
            self.skip_whitespace_and_comments();
            let closer = self.peek();
            match closer {
                None => {
                    self.close_cut_off('}');
                    return Ok(map);
                }
                Some(b',') => {
                    self.pos += 1;
                    after_comma = true;
                }
                Some(c) if self.close_object() => {
                    if c == b'}' && self.early_closer(depth, last_was_object, &map) {
                        after_comma = true;
                        continue;
                    }
                    return Ok(map);
                }
                Some(c) if self.crossed_line && starts_key(c) => {
                    self.count_repair(RepairKind::MissingComma);
                    after_comma = false;
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

    /// After the root's `}` (at `pos`): `, "key": …` follows, so that `}` came early and the
    /// members after it are the object's too (`{"query": "crash"}, "state": "closed"}`).
    /// Only the root's, only after a member whose value is no object, and only when a key
    /// and its `:` follow the comma. Moves past the comma when so.
    fn early_closer(
        &mut self,
        depth: usize,
        last_was_object: bool,
        map: &Map<String, Value>,
    ) -> bool {
        if depth != 1 || last_was_object || map.is_empty() {
            return false;
        }
        let comma = self.skip_ascii_space(self.pos);
        if self.bytes.get(comma) != Some(&b',') || comma >= self.end {
            return false;
        }
        let key = self.skip_ascii_space(comma + 1);
        let Some(after_key) = self.key_end(key) else {
            return false;
        };
        let colon = self.skip_ascii_space(after_key);
        let quoted = matches!(self.bytes.get(key), Some(b'"' | b'\''));
        let member = colon < self.end
            && (self.bytes[colon] == b':' || (quoted && self.bytes[colon] == b'"'));
        if member {
            self.count_repair(RepairKind::EarlyCloser);
            self.pos = comma + 1;
        }
        member
    }

    /// Where the key starting at `at` ends (a quoted one or an identifier), if one does.
    fn key_end(&self, at: usize) -> Option<usize> {
        let b = self.bytes;
        let q = *b.get(at).filter(|_| at < self.end)?;
        if q == b'"' || q == b'\'' {
            let mut i = at + 1;
            while i < self.end && b[i] != q && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            return (i < self.end && b[i] == q).then_some(i + 1);
        }
        let mut i = at;
        while i < self.end && b[i] < 0x80 && is_unquoted_key_char(char::from(b[i])) {
            i += 1;
        }
        (i > at).then_some(i)
    }

    /// Reads an array; `pos` is at its `[`, nested `depth` levels deep.
    fn read_array(&mut self, depth: usize) -> Result<Vec<Value>, ReadFailure> {
        if depth > MAX_DEPTH {
            return Err(ReadFailure::too_deep(self.pos));
        }
        self.pos += 1;
        self.open_arrays += 1;
        let read = self.read_elements(depth);
        self.open_arrays -= 1;
        read
    }

    /// A closer that ends the array being read: `]`, or a `}` no open object takes.
    fn close_array(&mut self) -> bool {
        match self.peek() {
            Some(b']') => {
                self.pos += 1;
                true
            }
            Some(b'}') if self.open_objects == 0 => {
                self.count_repair(RepairKind::WrongCloser);
                self.pos += 1;
                true
            }
            Some(b'}') => {
                // `{"values":[1,2,3\n}`: the array's `]` is missing; the `}` closes the object.
                self.count_repair(RepairKind::MissingCloser);
                true
            }
            _ => false,
        }
    }

    /// The elements of an array, up to and past its closer.
    fn read_elements(&mut self, depth: usize) -> Result<Vec<Value>, ReadFailure> {
        let mut items = Vec::new();
        let mut after_comma = false;
        loop {
            self.skip_whitespace_and_comments();
            if self.peek().is_none() {
                self.close_cut_off(']');
                return Ok(items);
            }
            if self.close_array() {
                if after_comma {
                    self.count_repair(RepairKind::TrailingComma);
                }
                return Ok(items);
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
                Some(_) if self.close_array() => return Ok(items),
                Some(c) if self.crossed_line && starts_value(c) => {
                    self.count_repair(RepairKind::MissingComma);
                    after_comma = false;
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
            0x80..=0xFF => match self.text[self.pos..].chars().next() {
                Some(q @ ('\u{201c}' | '\u{2018}')) => {
                    Ok(Value::String(self.read_typographic(q, false)?))
                }
                Some(ch) if ch.is_alphanumeric() => self.read_unquoted_value(self.pos),
                _ => Err(ReadFailure::new(MSG_EXPECTED_VALUE, self.pos)),
            },
            _ => Err(ReadFailure::new(MSG_EXPECTED_VALUE, self.pos)),
        }
    }

    /// Reads a key; the caller guarantees `pos < end`.
    fn read_key(&mut self) -> Result<String, ReadFailure> {
        let c = self.bytes[self.pos];
        if matches!(c, b'"' | b'\'' | b'`') {
            return self.read_string(true);
        }
        if let Some(q @ ('\u{201c}' | '\u{2018}')) = self.text[self.pos..].chars().next() {
            return self.read_typographic(q, true);
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

    /// Reads a string between typographic quotes (`“…”`, `‘…’`); `pos` is at the opening
    /// one. The text between is taken as it stands: no escapes, and the closing quote is the
    /// first of its kind.
    fn read_typographic(&mut self, open: char, is_key: bool) -> Result<String, ReadFailure> {
        let close = if open == '\u{201c}' {
            '\u{201d}'
        } else {
            '\u{2019}'
        };
        let start = self.pos + open.len_utf8();
        let Some(len) = self.text[start..self.end].find(close) else {
            let msg = if is_key { MSG_CUT_KEY } else { MSG_CUT_STRING };
            return Err(ReadFailure::new(msg, self.end));
        };
        let inner = &self.text[start..start + len];
        if inner.bytes().any(|c| c < 0x20) {
            self.count_repair(RepairKind::ControlChar);
        }
        self.count_repair(RepairKind::TypographicQuotes);
        self.pos = start + len + close.len_utf8();
        Ok(inner.to_owned())
    }

    /// An unquoted value of one word starting at `start` (`https://x.org/a`,
    /// `2024-10-18T18:35:22Z`, `57eeeeb1-…`), read as a string: it is no JSON literal or
    /// number, so a tool that declares another type refuses it as it would the quoted text.
    /// Refused when more words follow on its line (`hello world`) or when the input ends
    /// right after it (the word may have been cut).
    fn read_unquoted_value(&mut self, start: usize) -> Result<Value, ReadFailure> {
        let end = unquoted_value_end(self.text, start, self.end);
        if self.at_end_of_input(end) {
            return Err(ReadFailure::new(MSG_CUT_VALUE, end));
        }
        let mut after = end;
        while after < self.end && matches!(self.bytes[after], b' ' | b'\t') {
            after += 1;
        }
        let one_word = after >= self.end
            || matches!(self.bytes[after], b',' | b'}' | b']' | b'\n' | b'\r' | b'/');
        if !one_word {
            return Err(ReadFailure::new(MSG_WORDS, start));
        }
        self.count_repair(RepairKind::UnquotedValue);
        self.pos = end;
        Ok(Value::String(self.text[start..end].to_owned()))
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

    /// Reads a number; refuses a cut-off one and any that is not JSON (`+1`, `0x1F`, `01`)
    /// but reads `.5` and `1.` with the missing 0. A token that starts with a digit and is
    /// no number in any notation (`10-20`, `2024-10-18`, `57eeeeb1-…`) is an unquoted value.
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
        let spelled: std::borrow::Cow<'_, str> = if is_json_number(token.as_bytes()) {
            token.into()
        } else if let Some(fixed) = with_missing_zero(token) {
            self.count_repair(RepairKind::NumberDigit);
            fixed.into()
        } else if self.bytes[start].is_ascii_digit()
            && (!is_number_like(token.as_bytes())
                || unquoted_value_end(self.text, start, self.end) > i)
        {
            return self.read_unquoted_value(start);
        } else {
            return Err(invalid());
        };
        let n = spelled.parse::<Number>().map_err(|_| invalid())?;
        self.pos = i;
        Ok(Value::Number(n))
    }

    /// Reads a bare word: JSON's literals, and Python's and JavaScript's (counted as repairs);
    /// any other word is an unquoted value.
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
        // A literal is a whole word: `true_story` or `None/Some` is a value of its own.
        let whole = unquoted_value_end(self.text, start, self.end) == i;
        let value = match word {
            "true" if whole => Value::Bool(true),
            "false" if whole => Value::Bool(false),
            "null" if whole => Value::Null,
            "True" if whole => {
                self.count_repair(RepairKind::PythonTrue);
                Value::Bool(true)
            }
            "False" if whole => {
                self.count_repair(RepairKind::PythonFalse);
                Value::Bool(false)
            }
            "None" if whole => {
                self.count_repair(RepairKind::PythonNone);
                Value::Null
            }
            "undefined" if whole => {
                self.count_repair(RepairKind::JavaScriptUndefined);
                Value::Null
            }
            _ => {
                if self.at_end_of_input(i) && WORDS.iter().any(|w| w.starts_with(word)) {
                    return Err(ReadFailure::new(MSG_CUT_LITERAL, i));
                }
                if whole && (word == "NaN" || word == "Infinity") {
                    return Err(ReadFailure::new(format!("invalid number `{word}`"), start));
                }
                // `TRUE`, `Null`: a literal in a case JSON lacks, or a word? Two readings.
                if whole && WORDS.iter().any(|w| w.eq_ignore_ascii_case(word)) {
                    return Err(ReadFailure::new(
                        format!(
                            "`{word}` reads as a literal or as a word: write true, false or \
                             null, or quote it"
                        ),
                        start,
                    ));
                }
                return self.read_unquoted_value(start);
            }
        };
        self.pos = i;
        Ok(value)
    }
}

/// How a root object was wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wrapper {
    None,
    /// `{{ … }}` (or tripled).
    Doubled,
    /// `{```json {…} ```}`.
    FenceInBraces,
}

/// `.5` → `0.5`, `-.5` → `-0.5`, `1.` → `1.0` (also before an exponent, `1.e3`); none for
/// anything else.
fn with_missing_zero(token: &str) -> Option<String> {
    let (sign, digits) = match token.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", token),
    };
    let fixed = if let Some(frac) = digits.strip_prefix('.') {
        format!("{sign}0.{frac}")
    } else if let Some(dot) = digits.find('.') {
        let (int, rest) = digits.split_at(dot);
        let rest = &rest[1..];
        if rest.is_empty() || rest.starts_with(['e', 'E']) {
            format!("{sign}{int}.0{rest}")
        } else {
            return None;
        }
    } else {
        return None;
    };
    is_json_number(fixed.as_bytes()).then_some(fixed)
}

/// Bytes that can open a key: a quote, or the first character of an unquoted one.
fn starts_key(c: u8) -> bool {
    matches!(c, b'"' | b'\'' | b'`') || c.is_ascii_alphabetic() || matches!(c, b'_' | b'$')
}

/// Bytes that can open a value.
fn starts_value(c: u8) -> bool {
    matches!(c, b'"' | b'\'' | b'`' | b'{' | b'[' | b'-' | b'0'..=b'9') || c.is_ascii_alphabetic()
}
