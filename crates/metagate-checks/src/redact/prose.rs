//! Secrets told in sentences: `my password is hunter2`, `use password Hn7tQ2zX`.

use super::bytes::{find, is_key_byte, scan_while};
use super::key_names::{KeyKind, classify_key};
use super::key_values::{is_placeholder, names_key};
use super::{MAX_TEXT_KEY_LEN, REDACTED_B};

/// Secrets told in prose: `my password is hunter2`, `the API key was AbC123…`. Anchored on
/// ` is ` / ` was ` after a word that names a secret; the next word is redacted when it looks
/// like a secret rather than English (a digit, a symbol, or upper case inside it), so
/// "the password is wrong" stays as it is.
pub(super) fn scan_prose(b: &[u8], out: &mut Vec<(usize, usize)>) {
    scan_named_words(b, out);
    for connector in [&b" is "[..], b" was ", b" IS "] {
        let mut from = 0;
        while let Some(at) = find(b, from, connector) {
            from = at + 1;
            let mut start = at;
            while start > 0 && is_key_byte(b[start - 1]) {
                start -= 1;
            }
            if start == at {
                continue;
            }
            // "This pass is required", "the pwd is /tmp": alone, `pass` and `pwd` are English.
            if matches!(
                names_secret(b, start, at),
                KeyKind::Plain | KeyKind::Ambiguous
            ) {
                continue;
            }
            let value_start = at + connector.len();
            let mut value_end = scan_while(b, value_start, |c| !c.is_ascii_whitespace());
            // Sentence punctuation is kept; a last `!` or `?` is redacted with the word, as
            // passwords end with them (`Summer2024!`) more often than a sentence is lost.
            while value_end > value_start
                && matches!(b[value_end - 1], b'.' | b',' | b';' | b')' | b'"' | b'\'')
            {
                value_end -= 1;
            }
            let value = &b[value_start..value_end];
            if value.len() >= 4 && looks_like_secret_word(value) && !is_placeholder(value) {
                out.push((value_start, value_end));
            }
        }
    }
}

fn looks_like_secret_word(v: &[u8]) -> bool {
    v.iter().any(u8::is_ascii_digit)
        || v.iter().any(|c| !c.is_ascii_alphanumeric() && *c < 0x80)
        || v[1..].iter().any(u8::is_ascii_uppercase)
}

/// What the word `b[start..end]` names: a secret key, or `key` after `API `.
fn names_secret(b: &[u8], start: usize, end: usize) -> KeyKind {
    let word = &b[start..end];
    match classify_key(word) {
        KeyKind::Plain
            if word.eq_ignore_ascii_case(b"key")
                && start >= 4
                && b[start - 4..start - 1].eq_ignore_ascii_case(b"api") =>
        {
            KeyKind::Secret
        }
        kind => kind,
    }
}

/// `use password Hn7tQ2zX to log in`, `the API key AbC123xyz`: a word naming a secret, one
/// space, then a word that looks like a password (see [`looks_like_password`]). `pass` and
/// `pwd` are left out: "pass 3 of 5".
fn scan_named_words(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let mut at = 0;
    while let Some(offset) = b.get(at..).and_then(|rest| memchr::memchr(b' ', rest)) {
        let space = at + offset;
        at = space + 1;
        // The word after the space first: it is rarely password-like, and cheaper to look at.
        let value_start = space + 1;
        let mut value_end = scan_while(b, value_start, |c| !c.is_ascii_whitespace());
        while value_end > value_start
            && matches!(
                b[value_end - 1],
                b'.' | b',' | b';' | b':' | b')' | b'"' | b'\''
            )
        {
            value_end -= 1;
        }
        if !looks_like_password(&b[value_start..value_end]) {
            continue;
        }
        let mut start = space;
        while start > 0 && is_key_byte(b[start - 1]) && space - start <= MAX_TEXT_KEY_LEN {
            start -= 1;
        }
        // `<Password type="x">` is a tag, not a sentence.
        let in_tag = start > 0 && matches!(b[start - 1], b'<' | b':');
        if start < space
            && !in_tag
            // `#define set_private_key nettle_set_private_key`: code.
            && !names_key(&b[value_start..value_end], &b[start..space])
            && !names_key(&b[start..space], &b[value_start..value_end])
            && space - start <= MAX_TEXT_KEY_LEN
            && matches!(
                names_secret(b, start, space),
                KeyKind::Secret | KeyKind::Header
            )
        {
            out.push((value_start, value_end));
        }
    }
}

/// At least 6 bytes with a letter and a digit or a symbol, and not a flag, a path, a file
/// name, a version, a variable, markup, code or a placeholder. `_` and `*` are not symbols
/// here: `struct passwd *getpwent`, `XSecurityAuthorization auth_id` and "the secrets
/// corpus.**" are code and markdown.
fn looks_like_password(v: &[u8]) -> bool {
    const SYMBOLS: &[u8] = b"!@#$%^&+~";
    if v.len() < 6
        || matches!(
            v[0],
            b'-' | b'/'
                | b'*'
                | b'&'
                | b'_'
                | b'~'
                | b'.'
                | b'$'
                | b'('
                | b'['
                | b'{'
                | b'<'
                | b'#'
                | b'\''
                | b'"'
                | b'`'
        )
    {
        return false;
    }
    let (mut letter, mut digit_or_symbol) = (false, false);
    for &c in v {
        if matches!(c, b'/' | b'\\' | b'<' | b'>' | b'"' | b'\'' | b'`' | b'=') {
            return false;
        }
        letter |= c.is_ascii_alphabetic();
        digit_or_symbol |= c.is_ascii_digit() || SYMBOLS.contains(&c);
    }
    if !(letter && digit_or_symbol) {
        return false;
    }
    let file_name = v.iter().rposition(|&c| c == b'.').is_some_and(|dot| {
        (2..=5).contains(&(v.len() - dot)) && v[dot + 1..].iter().all(u8::is_ascii_alphabetic)
    });
    let version = v
        .strip_prefix(b"v")
        .unwrap_or(v)
        .iter()
        .all(|&c| c.is_ascii_digit() || c == b'.');
    !file_name
        && !version
        && !v.windows(REDACTED_B.len()).any(|w| w == REDACTED_B)
        && !is_placeholder(v)
}
