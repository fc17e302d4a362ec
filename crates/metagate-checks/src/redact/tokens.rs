//! Secrets recognised by their own shape: PEM private keys, JWTs, bearer tokens, AWS key
//! ids and well-known key prefixes.

use super::PREFIX_MIN_BODY;
use super::bytes::{contains, find, has_at, is_token68, is_word_byte, scan_while};

pub(super) const PEM_BEGIN: &[u8] = b"-----BEGIN ";

/// `-----BEGIN … PRIVATE KEY-----` at `i`.
pub(super) fn pem_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    const BEGIN: &[u8] = PEM_BEGIN;
    const END: &[u8] = b"-----END ";
    if !has_at(b, i, BEGIN) {
        return None;
    }
    let label_start = i + BEGIN.len();
    let window = &b[..(label_start + 100).min(b.len())];
    let label_end = find(window, label_start, b"-----")?;
    let label = &b[label_start..label_end];
    if label.contains(&b'\n') || !contains(label, b"PRIVATE KEY") {
        return None;
    }
    let end = match find(b, label_end + 5, END) {
        Some(es) => {
            let window = &b[..(es + END.len() + 100).min(b.len())];
            match find(window, es + END.len(), b"-----") {
                Some(x) => x + 5,
                None => scan_while(b, es, |c| c != b'\n'),
            }
        }
        None => b.len(),
    };
    Some((i, end))
}

/// Rules anchored at the start of a word (`b[i]` is a letter at a boundary).
pub(super) fn word_token_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    match b[i] {
        b'e' => jwt_at(b, i),
        b'b' | b'B' => bearer_at(b, i),
        b'A' => aws_at(b, i).or_else(|| prefixed_at(b, i)),
        _ => prefixed_at(b, i),
    }
}

fn jwt_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if !has_at(b, i, b"eyJ") {
        return None;
    }
    // Segment by segment, so that a failed candidate costs only what it read.
    let segment = |from: usize| scan_while(b, from, is_word_byte);
    let header_end = segment(i);
    if header_end - i < 10 || b.get(header_end) != Some(&b'.') {
        return None;
    }
    let payload_end = segment(header_end + 1);
    if payload_end - header_end < 3 || b.get(payload_end) != Some(&b'.') {
        return None;
    }
    // Signature (possibly empty), then any further segments (JWE has five).
    let mut end = segment(payload_end + 1);
    while b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(|&c| is_word_byte(c)) {
        end = segment(end + 1);
    }
    Some((i, end))
}

fn bearer_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let word = b.get(i..i + 6)?;
    if !word.eq_ignore_ascii_case(b"bearer") || !matches!(b.get(i + 6), Some(b' ' | b'\t')) {
        return None;
    }
    let cs = scan_while(b, i + 6, |c| c == b' ' || c == b'\t');
    let ce = scan_while(b, cs, is_token68);
    (ce - cs >= 8 && b[cs..ce].iter().any(u8::is_ascii_digit)).then_some((cs, ce))
}

fn aws_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let rest = &b[i..];
    if rest.len() < 20 || !(has_at(rest, 0, b"AKIA") || has_at(rest, 0, b"ASIA")) {
        return None;
    }
    let id_ok = rest[4..20]
        .iter()
        .all(|&c| c.is_ascii_uppercase() || c.is_ascii_digit());
    let bounded = rest.get(20).is_none_or(|c| !c.is_ascii_alphanumeric());
    (id_ok && bounded).then_some((i, i + 20))
}

/// Well-known key prefixes, grouped by first byte, with the minimum body length.
fn prefixes_for(c: u8) -> &'static [(&'static [u8], usize)] {
    const M: usize = PREFIX_MIN_BODY;
    match c {
        b's' => &[
            (b"sk-", M),
            (b"sk_live_", M),
            (b"sk_test_", M),
            (b"shpat_", M),
            (b"shpss_", M),
        ],
        b'r' => &[(b"rk_live_", M), (b"rk_test_", M)],
        b'p' => &[(b"pk_live_", M), (b"pk_test_", M), (b"pypi-", M)],
        b'w' => &[(b"whsec_", M)],
        b'g' => &[
            (b"ghp_", M),
            (b"gho_", M),
            (b"ghu_", M),
            (b"ghs_", M),
            (b"ghr_", M),
            (b"github_pat_", M),
            (b"glpat-", M),
            (b"gsk_", M),
        ],
        b'x' => &[
            (b"xoxb-", M),
            (b"xoxp-", M),
            (b"xoxa-", M),
            (b"xoxr-", M),
            (b"xoxs-", M),
            (b"xapp-", M),
            (b"xai-", M),
        ],
        b'h' => &[(b"hf_", M)],
        b'n' => &[(b"npm_", M)],
        b'd' => &[(b"dop_v1_", M)],
        b'S' => &[(b"SG.", M)],
        b'A' => &[(b"AIza", 35)],
        _ => &[],
    }
}

fn prefixed_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    for &(prefix, min_body) in prefixes_for(b[i]) {
        if !has_at(b, i, prefix) {
            continue;
        }
        let dots = prefix == b"SG.";
        let bs = i + prefix.len();
        let mut be = if dots {
            // `.` is not a word byte: bound the scan so `SG.SG.SG.…` stays linear.
            let limit = (bs + 128).min(b.len());
            bs + scan_while(&b[bs..limit], 0, |c| is_word_byte(c) || c == b'.')
        } else {
            scan_while(b, bs, is_word_byte)
        };
        while dots && be > bs && b[be - 1] == b'.' {
            be -= 1;
        }
        let body = &b[bs..be];
        if body.len() >= min_body && char_classes(body) >= 2 {
            return Some((i, be));
        }
    }
    None
}

/// How many of {lower case, upper case, digit} occur in `s`.
fn char_classes(s: &[u8]) -> u32 {
    let lower = s.iter().any(u8::is_ascii_lowercase);
    let upper = s.iter().any(u8::is_ascii_uppercase);
    let digit = s.iter().any(u8::is_ascii_digit);
    u32::from(lower) + u32::from(upper) + u32::from(digit)
}
