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
