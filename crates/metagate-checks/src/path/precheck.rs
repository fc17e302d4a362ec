//! Refusals read from the text of the path alone, before any file system is asked.

use super::PathError;

/// Longest accepted path argument, in bytes (Linux `PATH_MAX`).
pub(super) const MAX_PATH_BYTES: usize = 4096;
/// Longest accepted path component, in bytes (Linux `NAME_MAX`).
pub(super) const MAX_COMPONENT_BYTES: usize = 255;

/// Refusals that need no file system.
pub(super) fn precheck(raw: &str) -> Result<(), PathError> {
    if raw.is_empty() {
        return Err(PathError::Empty);
    }
    if raw.starts_with(trimmed_by_tools) || raw.ends_with(trimmed_by_tools) {
        return Err(PathError::OuterWhitespace);
    }
    // Most paths hold none of the three bytes: one scan tells, and the refusals (in their
    // order) are looked for only when it finds one.
    if memchr::memchr3(b'\0', b'\\', b'%', raw.as_bytes()).is_some() {
        if raw.contains('\0') {
            return Err(PathError::Nul);
        }
        if raw.contains('\\') {
            return Err(PathError::Backslash);
        }
        if let Some(sequence) = find_encoded(raw) {
            return Err(PathError::Encoded { sequence });
        }
    }
    if raw.starts_with('~') {
        return Err(PathError::Tilde);
    }
    if raw.starts_with('$') {
        return Err(PathError::Dollar);
    }
    if let Some(scheme) = uri_scheme(raw) {
        return Err(PathError::Scheme {
            scheme: scheme.to_string(),
        });
    }
    if raw.len() > MAX_PATH_BYTES
        || (raw.len() > MAX_COMPONENT_BYTES
            && raw.split('/').any(|c| c.len() > MAX_COMPONENT_BYTES))
    {
        return Err(PathError::TooLong);
    }
    Ok(())
}

/// What some language's `trim` removes: Unicode white space (Rust, Go), the BOM
/// (JavaScript), and the separators U+001C…U+001F (Python's `str.strip`).
fn trimmed_by_tools(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{1c}'..='\u{1f}' | '\u{feff}')
}

/// The scheme `raw` starts with (`^[A-Za-z][A-Za-z0-9+.-]*:`), when it has two characters
/// or more; a drive letter is not taken for one.
fn uri_scheme(raw: &str) -> Option<&str> {
    let end = raw
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    let scheme = &raw[..end];
    (raw.as_bytes()[end] == b':' && scheme.len() >= 2 && scheme.as_bytes()[0].is_ascii_alphabetic())
        .then_some(scheme)
}
/// `.`, `/`, `\`, NUL or overlong UTF-8 lead, encoded once or more; or an `e0`/`f0` lead
/// followed by a byte that only an overlong form has ([`overlong_end`]).
fn find_encoded(raw: &str) -> Option<String> {
    const TARGETS: [u8; 6] = [0x2e, 0x2f, 0x5c, 0x00, 0xc0, 0xc1];
    let bytes = raw.as_bytes();
    for (start, &byte) in bytes.iter().enumerate() {
        if byte != b'%' {
            continue;
        }
        let mut at = start + 1;
        while let Some(value) = hex_at(bytes, at) {
            if value == 0x25 {
                at += 2;
            } else if TARGETS.contains(&value) {
                let end = at + 2;
                return Some(String::from_utf8_lossy(bytes.get(start..end)?).into_owned());
            } else if let Some(end) = overlong_end(bytes, value, at + 2) {
                return Some(String::from_utf8_lossy(&bytes[start..end]).into_owned());
            } else {
                break;
            }
        }
    }
    None
}

/// Where the encoded byte at `at` ends when, after the lead `lead`, it makes an overlong
/// form: `e0` then `80`…`9f` (three bytes for what fits in two: `%e0%80%ae` is `.`), `f0`
/// then `80`…`8f` (four for three). Lenient decoders read these as the short character.
fn overlong_end(bytes: &[u8], lead: u8, at: usize) -> Option<usize> {
    let last = match lead {
        0xe0 => 0x9f,
        0xf0 => 0x8f,
        _ => return None,
    };
    let (value, end) = encoded_byte(bytes, at)?;
    (0x80..=last).contains(&value).then_some(end)
}

/// The byte `%` + any number of `25` + two hex digits at `at` encodes, and where it ends.
fn encoded_byte(bytes: &[u8], at: usize) -> Option<(u8, usize)> {
    if bytes.get(at) != Some(&b'%') {
        return None;
    }
    let mut at = at + 1;
    loop {
        match hex_at(bytes, at)? {
            0x25 => at += 2,
            value => return Some((value, at + 2)),
        }
    }
}

fn hex_at(bytes: &[u8], at: usize) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let high = digit(*bytes.get(at)?)?;
    let low = digit(*bytes.get(at + 1)?)?;
    Some(high * 16 + low)
}
