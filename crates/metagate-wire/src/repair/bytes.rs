//! Byte-level helpers over the (decoded) input: searching for bytes and code fences,
//! whitespace, the byte classes of keys and literals, JSON numbers, and `\u` escapes.

/// Where the bracketed value opening at `open` ends (just past its closing bracket), counting
/// brackets outside strings; `to` when it never closes.
pub(super) fn bracketed_span_end(b: &[u8], open: usize, to: usize) -> usize {
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

/// The first `x` in `from..to`.
pub(super) fn find_byte(b: &[u8], x: u8, from: usize, to: usize) -> Option<usize> {
    if from >= to {
        return None;
    }
    b[from..to].iter().position(|&c| c == x).map(|i| i + from)
}

/// The first occurrence of `needle` (not empty) wholly inside `from..to`.
pub(super) fn find_bytes(b: &[u8], needle: &[u8], from: usize, to: usize) -> Option<usize> {
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
pub(super) fn find_fence_at_line_start(b: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = find_bytes(b, b"```", i, to) {
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

/// The four whitespace bytes JSON allows between tokens.
pub(super) fn is_json_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first offset at or after `i` (before `to`) that is not JSON whitespace.
pub(super) fn skip_whitespace(b: &[u8], mut i: usize, to: usize) -> usize {
    while i < to && is_json_whitespace(b[i]) {
        i += 1;
    }
    i
}

/// Whether anything but JSON whitespace stands in `from..to`.
pub(super) fn has_non_whitespace(b: &[u8], from: usize, to: usize) -> bool {
    from < to && b[from..to].iter().any(|&c| !is_json_whitespace(c))
}

/// Bytes of a code-fence language tag (`json`, `json5`, `tool_code`, …).
pub(super) fn is_fence_tag_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'.')
}

/// Characters an unquoted key may hold (`user_id`, `$ref`, `a.b`, `x-y`).
pub(super) fn is_unquoted_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | '.')
}

/// Bytes of a bare word in value position (`true`, `None`, `undefined`, `NaN`).
pub(super) fn is_literal_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// A valid JSON number: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`.
pub(super) fn is_json_number(t: &[u8]) -> bool {
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

/// The value of one hex digit.
fn hex_digit_value(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some(u32::from(c - b'0')),
        b'a'..=b'f' => Some(u32::from(c - b'a' + 10)),
        b'A'..=b'F' => Some(u32::from(c - b'A' + 10)),
        _ => None,
    }
}

/// What stood where a `\u` escape's four hex digits belong.
pub(super) enum HexDigits {
    /// The code unit they spell.
    Value(u32),
    /// A byte that is not a hex digit.
    NotHex,
    /// The input ended first.
    CutOff,
}

/// Four hex digits at `i` (bounded by `end`).
pub(super) fn four_hex_digits(b: &[u8], i: usize, end: usize) -> HexDigits {
    let mut v = 0;
    for k in 0..4 {
        if i + k >= end {
            return HexDigits::CutOff;
        }
        match hex_digit_value(b[i + k]) {
            Some(d) => v = v * 16 + d,
            None => return HexDigits::NotHex,
        }
    }
    HexDigits::Value(v)
}

/// The non-ASCII spaces read as whitespace between tokens (never inside a string): no-break
/// space, the Mongolian vowel separator, the typographic spaces U+2000–U+200B, narrow no-break space, medium mathematical
/// space, ideographic space and a byte-order mark.
pub(super) fn is_space_char(c: char) -> bool {
    matches!(
        c,
        '\u{a0}' | '\u{180e}' | '\u{2000}'
            ..='\u{200b}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// Whether `t` is a number in some notation JSON lacks (`+1`, `0x1F`, `01`, `1_000`, `1e`,
/// `1.2.`): such a token is refused, never read as text.
pub(super) fn is_number_like(t: &[u8]) -> bool {
    let mut i = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    if t[i..].starts_with(b"0x") || t[i..].starts_with(b"0X") {
        return t.len() > i + 2
            && t[i + 2..]
                .iter()
                .all(|c| c.is_ascii_hexdigit() || *c == b'_');
    }
    let digits = |i: &mut usize| {
        while *i < t.len() && (t[*i].is_ascii_digit() || t[*i] == b'_') {
            *i += 1;
        }
    };
    digits(&mut i);
    if i < t.len() && t[i] == b'.' {
        i += 1;
        digits(&mut i);
    }
    if i < t.len() && matches!(t[i], b'e' | b'E') {
        i += 1;
        if i < t.len() && matches!(t[i], b'+' | b'-') {
            i += 1;
        }
        digits(&mut i);
    }
    i == t.len() && t.iter().any(u8::is_ascii_digit)
}

/// Where the unquoted value starting at `start` ends (before `to`): at whitespace, a
/// non-ASCII space, a quote or a bracket, comma or brace.
pub(super) fn unquoted_value_end(text: &str, start: usize, to: usize) -> usize {
    let b = text.as_bytes();
    let mut i = start;
    while i < to {
        let c = b[i];
        if c < 0x80 {
            if is_json_whitespace(c) || matches!(c, b',' | b'}' | b']' | b'{' | b'[' | b'"') {
                return i;
            }
            i += 1;
            continue;
        }
        match text[i..].chars().next() {
            Some(ch) if !is_space_char(ch) => i += ch.len_utf8(),
            _ => return i,
        }
    }
    to
}

/// The first offset at or after `i` (before `to`) that is neither JSON whitespace nor one of
/// the non-ASCII spaces the reader skips between tokens.
pub(super) fn skip_spaces(text: &str, mut i: usize, to: usize) -> usize {
    let b = text.as_bytes();
    while i < to {
        if is_json_whitespace(b[i]) {
            i += 1;
            continue;
        }
        match text[i..].chars().next() {
            Some(ch) if b[i] >= 0x80 && is_space_char(ch) => i += ch.len_utf8(),
            _ => break,
        }
    }
    i
}
