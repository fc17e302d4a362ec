//! Secrets told in sentences: `my password is hunter2`.

use super::bytes::{find, is_key_byte, scan_while};
use super::key_names::{KeyKind, classify_key};
use super::key_values::is_placeholder;

/// Secrets told in prose: `my password is hunter2`, `the API key was AbC123…`. Anchored on
/// ` is ` / ` was ` after a word that names a secret; the next word is redacted when it looks
/// like a secret rather than English (a digit, a symbol, or upper case inside it), so
/// "the password is wrong" stays as it is.
pub(super) fn scan_prose(b: &[u8], out: &mut Vec<(usize, usize)>) {
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
            let word = &b[start..at];
            let names_secret = classify_key(word) != KeyKind::Plain
                || (word.eq_ignore_ascii_case(b"key")
                    && start >= 4
                    && b[start - 4..start - 1].eq_ignore_ascii_case(b"api"));
            if !names_secret {
                continue;
            }
            let value_start = at + connector.len();
            let mut value_end = scan_while(b, value_start, |c| !c.is_ascii_whitespace());
            while value_end > value_start
                && matches!(
                    b[value_end - 1],
                    b'.' | b',' | b';' | b'!' | b'?' | b')' | b'"' | b'\''
                )
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
