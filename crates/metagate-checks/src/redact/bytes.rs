//! Byte classes and the small byte-slice helpers every text rule uses, entropy included.

// Byte classes, looked up in `CLASS` (one table load instead of a chain of compares).
/// `[A-Za-z0-9_.-]`: key characters in text.
const KEY: u8 = 1;
/// `[A-Za-z0-9_-]`: word characters (token boundaries).
const WORD: u8 = 2;
/// `[A-Za-z0-9+/_-]`: entropy-run characters.
const RUN: u8 = 4;
/// `= : - >`: anchors of the structured rules.
pub(super) const ANCHOR: u8 = 8;
/// First letters of the word-start rules (JWT, Bearer, well-known prefixes).
pub(super) const START: u8 = 16;

pub(super) static CLASS: [u8; 256] = build_classes();

const fn build_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let alnum = b.is_ascii_alphanumeric();
        if alnum || b == b'_' || b == b'-' {
            t[c] |= KEY | WORD | RUN;
        }
        if b == b'.' {
            t[c] |= KEY;
        }
        if b == b'+' || b == b'/' {
            t[c] |= RUN;
        }
        if b == b'=' || b == b':' || b == b'-' || b == b'>' {
            t[c] |= ANCHOR;
        }
        c += 1;
    }
    let starts = b"ebBAsrpwgxhndS";
    let mut i = 0;
    while i < starts.len() {
        t[starts[i] as usize] |= START;
        i += 1;
    }
    t
}

#[inline]
pub(super) fn is_key_byte(c: u8) -> bool {
    CLASS[usize::from(c)] & KEY != 0
}

#[inline]
pub(super) fn is_word_byte(c: u8) -> bool {
    CLASS[usize::from(c)] & WORD != 0
}

#[inline]
pub(super) fn is_run_byte(c: u8) -> bool {
    CLASS[usize::from(c)] & RUN != 0
}

/// `b[i..].starts_with(p)` without a `memcmp` call (prefixes are short).
#[inline]
pub(super) fn has_at(b: &[u8], i: usize, p: &[u8]) -> bool {
    b.len() >= i + p.len() && b[i..i + p.len()].iter().zip(p).all(|(x, y)| x == y)
}

#[inline]
pub(super) fn is_token68(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

#[inline]
pub(super) fn is_value_stop(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'"' | b'\''
                | b'`'
                | b'&'
                | b','
                | b';'
                | b')'
                | b'}'
                | b'('
                | b'|'
                | b'<'
                | b'>'
                | b'\\'
        )
}

#[inline]
pub(super) fn scan_while(b: &[u8], from: usize, pred: impl Fn(u8) -> bool) -> usize {
    let mut k = from;
    while k < b.len() && pred(b[k]) {
        k += 1;
    }
    k
}

pub(super) fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

pub(super) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, 0, needle).is_some()
}

/// Shannon entropy in bits per byte (the same measure gitleaks' thresholds use).
pub(super) fn shannon_entropy(run: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &c in run {
        counts[usize::from(c)] += 1;
    }
    let n = run.len() as f64;
    counts
        .iter()
        .filter(|&&k| k > 0)
        .map(|&k| {
            let p = f64::from(k) / n;
            -p * p.log2()
        })
        .sum()
}
