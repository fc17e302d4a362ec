//! Passwords in URL userinfo: `scheme://user:password@host`.

use super::REDACTED_B;
use super::key_values::is_placeholder;

/// URL userinfo password; `s` is the index just after `://`.
pub(super) fn userinfo_at(b: &[u8], s: usize) -> Option<(usize, usize)> {
    let mut last_at = None;
    let mut k = s;
    while k < b.len() {
        match b[k] {
            b'/' | b'?' | b'#' | b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\' | b'{' | b'}' | b'|'
            | b'^' => break,
            c if c.is_ascii_whitespace() => break,
            b'@' => last_at = Some(k),
            _ => {}
        }
        k += 1;
    }
    let at = last_at?;
    let colon = s + b[s..at].iter().position(|&c| c == b':')?;
    let pw = &b[colon + 1..at];
    if pw.is_empty() || pw.starts_with(REDACTED_B) || is_placeholder(pw) {
        return None;
    }
    Some((colon + 1, at))
}
