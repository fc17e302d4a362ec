//! The first pass over a text: rules anchored on a separator, a dash, the end of a tag or a
//! word start.

use super::bytes::{ANCHOR, CLASS, START, find, has_at, is_word_byte};
use super::flags::flag_at;
use super::key_values::{Hit, key_value_at};
use super::tokens::{PEM_BEGIN, pem_at, word_token_at};
use super::urls::userinfo_at;
use super::xml::element_at;

/// First pass: rules anchored on a separator, a dash, the end of a tag or a word start.
pub(super) fn scan_structured(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let n = b.len();
    let mut i = 0;
    // End of a value that a key rule read and found not to be a secret (a
    // placeholder, a type name…): key rules do not re-trigger inside it, which
    // keeps the scan linear, but all the other rules still run there.
    let mut quiet_until = 0;
    while i < n {
        let c = b[i];
        let class = CLASS[usize::from(c)];
        if class & (ANCHOR | START) == 0 {
            i += 1;
            continue;
        }
        let keyed = i >= quiet_until;
        let hit = match c {
            b'=' if keyed => key_value_at(b, i),
            b':' => keyed.then(|| key_value_at(b, i)).flatten().or_else(|| {
                if has_at(b, i + 1, b"//") {
                    userinfo_at(b, i + 3).map(Hit::redact)
                } else {
                    None
                }
            }),
            b'>' if keyed => element_at(b, i),
            b'-' => pem_at(b, i)
                .map(Hit::redact)
                .or_else(|| keyed.then(|| flag_at(b, i)).flatten()),
            _ if class & START != 0 && (i == 0 || !is_word_byte(b[i - 1])) => {
                word_token_at(b, i).map(Hit::redact)
            }
            _ => None,
        };
        match hit {
            None => i += 1,
            Some(Hit::Skip(end)) => {
                quiet_until = end;
                i += 1;
            }
            Some(Hit::Redact(start, end)) => {
                // A private key starting inside the span (`private_key:
                // -----BEGIN …` in YAML) must not be cut at its end.
                let window = &b[..(end + PEM_BEGIN.len() - 1).min(n)];
                let end = find(window, i + 1, PEM_BEGIN)
                    .and_then(|p| pem_at(b, p))
                    .map_or(end, |(_, pem_end)| pem_end.max(end));
                out.push((start, end));
                i = end.max(i + 1);
            }
        }
    }
}
