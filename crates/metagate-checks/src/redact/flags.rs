//! Secrets on command lines: `--password value`, `-u user:password`.

use super::bytes::{has_at, is_key_byte, scan_while};
use super::key_names::{KeyKind, classify_key};
use super::key_values::{Hit, ValueCtx, is_placeholder, parse_value, quoted_end};
use super::{MAX_TEXT_KEY_LEN, REDACTED_B};

/// `--secret-flag value`, `-u user:password`, `--user user:password`.
pub(super) fn flag_at(b: &[u8], i: usize) -> Option<Hit> {
    if i > 0
        && !matches!(
            b[i - 1],
            b' ' | b'\t' | b'\n' | b'"' | b'\'' | b'(' | b'[' | b','
        )
    {
        return None;
    }
    if has_at(b, i, b"-u ") {
        return user_pass_at(b, i + 3).map(Hit::redact);
    }
    if has_at(b, i, b"--user ") {
        return user_pass_at(b, i + 7).map(Hit::redact);
    }
    if !has_at(b, i, b"--") {
        return None;
    }
    let ks = i + 2;
    let ke = scan_while(b, ks, is_key_byte);
    if ke == ks || ke - ks > MAX_TEXT_KEY_LEN || ke >= b.len() || !matches!(b[ke], b' ' | b'\t') {
        return None;
    }
    let key = &b[ks..ke];
    let kind = classify_key(key);
    if kind == KeyKind::Plain {
        return None;
    }
    let k = scan_while(b, ke, |c| c == b' ' || c == b'\t');
    if k >= b.len() || b[k] == b'-' {
        return None;
    }
    parse_value(
        b,
        k,
        ValueCtx {
            key_quoted: false,
            code_assign: false,
            kind,
            assignment: false,
            query: false,
            option: false,
            key,
        },
    )
}

fn user_pass_at(b: &[u8], start: usize) -> Option<(usize, usize)> {
    let k = scan_while(b, start, |c| c == b' ');
    let (vs, end) = match b.get(k) {
        Some(&q @ (b'"' | b'\'')) => (k + 1, quoted_end(b, k + 1, q, false)),
        Some(_) => (
            k,
            scan_while(b, k, |c| {
                !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'' | b'`' | b';' | b'|' | b'&')
            }),
        ),
        None => return None,
    };
    let colon = vs + b[vs..end].iter().position(|&c| c == b':')?;
    // A user name, not `date -u +%H:%M`.
    let user = &b[vs..colon];
    if user.is_empty()
        || !user.iter().all(|&c| {
            c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-' | b'@' | b'$' | b'\\')
        })
    {
        return None;
    }
    let pw = &b[colon + 1..end];
    // `redis-cli -u redis://:pw@host`: a URL, whose password the URL rule finds.
    if pw.is_empty()
        || pw.starts_with(b"//")
        || pw.iter().all(u8::is_ascii_digit)
        || pw.starts_with(REDACTED_B)
        || is_placeholder(pw)
    {
        return None;
    }
    Some((colon + 1, end))
}
