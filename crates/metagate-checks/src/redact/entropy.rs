//! The second pass: long runs of token characters that look random.

use super::bytes::{is_run_byte, scan_while, shannon_entropy};
use super::spans::has_secret;
use super::{BIGRAM_MAX_PERCENT, ENTROPY_MIN_BITS, ENTROPY_MIN_LEN};

/// Second pass: maximal token runs that look random. Runs entirely covered by
/// a span of the first pass (`out[..structured]`, sorted and disjoint) are skipped.
pub(super) fn scan_runs(b: &[u8], out: &mut Vec<(usize, usize)>, structured: usize, depth: u8) {
    let n = b.len();
    let mut i = 0;
    let mut cursor = 0;
    while i < n {
        if !is_run_byte(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i = scan_while(b, i, is_run_byte);
        let mut end = i;
        if i < n && b[i] == b'=' {
            let k = scan_while(b, i, |c| c == b'=');
            if k >= n || !is_run_byte(b[k]) {
                end = k;
            }
            i = k;
        }
        if end - start < ENTROPY_MIN_LEN {
            continue;
        }
        while cursor < structured && out[cursor].1 <= start {
            cursor += 1;
        }
        if cursor < structured && out[cursor].0 <= start && out[cursor].1 >= end {
            continue;
        }
        let run = &b[start..end];
        if run.contains(&b'/') && !run.iter().any(u8::is_ascii_uppercase) {
            // Base64 of 32+ characters always has upper-case letters: this is
            // a path or URL path, so only its segments can be secrets.
            let mut seg = start;
            for part in run.split(|&c| c == b'/') {
                if part.len() >= ENTROPY_MIN_LEN && looks_random(part, depth) {
                    out.push((seg, seg + part.len()));
                }
                seg += part.len() + 1;
            }
        } else if looks_random(run, depth) {
            out.push((start, end));
        }
    }
}

/// The 128 most frequent letter bigrams of words in Rust/Python sources and
/// English documentation (≈ 75 % of all bigram occurrences there).
const COMMON_BIGRAMS: &str = "in co on st er re de th te se at en it or an ub es pu ns le ti he od \
nt ar li nd no tr al et as la ri pa om io ed is ra ng me ta to ro ne el ss ge pe tt ma ct ve ll cl \
ty ec ut pr si lo ce ic il ht us ha un ea sp nc ch fi if ul ex ac rt di ca op fo oc ad am ur gi na \
js ou tp rs ef of mi bi ot wi ke im ps do em mp id bu va so pt cr po rr ts ck lf ap os hi yp mo pl \
hu tu be ow lt ol";

const BIGRAM_TABLE: [u32; 26] = build_bigram_table();

const fn build_bigram_table() -> [u32; 26] {
    let s = COMMON_BIGRAMS.as_bytes();
    let mut table = [0u32; 26];
    let mut i = 0;
    while i + 1 < s.len() {
        if s[i].is_ascii_lowercase() && s[i + 1].is_ascii_lowercase() {
            table[(s[i] - b'a') as usize] |= 1 << (s[i + 1] - b'a');
            i += 2;
        } else {
            i += 1;
        }
    }
    table
}

#[inline]
fn is_common_bigram(a: u8, b: u8) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    BIGRAM_TABLE[(a - b'a') as usize] & (1 << (b - b'a')) != 0
}

fn looks_random(run: &[u8], depth: u8) -> bool {
    // Hashes, UUIDs, `diff-<sha256>`: at least 90 % hex digits and separators.
    let hexish = run
        .iter()
        .filter(|&&c| c.is_ascii_hexdigit() || matches!(c, b'-' | b'_' | b'/'))
        .count();
    if hexish * 10 >= run.len() * 9 {
        return false;
    }
    if is_camel_words(run) || is_structured_identifier(run) {
        return false;
    }
    let sequential = run
        .windows(2)
        .filter(|w| w[1] == w[0].wrapping_add(1) || w[0] == w[1].wrapping_add(1))
        .count();
    if sequential * 2 >= run.len() - 1 || is_wordy(run) {
        return false;
    }
    if shannon_entropy(run) < ENTROPY_MIN_BITS {
        return false;
    }
    match decode_base64_text(run) {
        Some(text) => depth == 0 && has_secret(text.as_bytes(), depth + 1),
        None => true,
    }
}

/// Mixed case and at least 5 alphanumerics per word on average, a word
/// boundary being a lower → upper step, a letter ↔ digit step or a
/// separator: `MCSymbolELF` (2 words), `DWARFDebugAbbrev` (2),
/// `PDBSymbolTypeVTable` (3).
fn is_camel_words(s: &[u8]) -> bool {
    let (mut alnum, mut words) = (0usize, 0usize);
    let (mut upper, mut lower) = (false, false);
    let mut prev = b' ';
    for &c in s {
        if !c.is_ascii_alphanumeric() {
            prev = b' ';
            continue;
        }
        upper |= c.is_ascii_uppercase();
        lower |= c.is_ascii_lowercase();
        let boundary = !prev.is_ascii_alphanumeric()
            || (prev.is_ascii_lowercase() && c.is_ascii_uppercase())
            || (prev.is_ascii_digit() != c.is_ascii_digit());
        words += usize::from(boundary);
        alnum += 1;
        prev = c;
    }
    upper && lower && alnum >= 5 * words
}

/// At least [`BIGRAM_MAX_PERCENT`] of the adjacent letter pairs are common bigrams.
fn is_wordy(s: &[u8]) -> bool {
    let (mut pairs, mut common) = (0u32, 0u32);
    for w in s.windows(2) {
        if w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic() {
            pairs += 1;
            common += u32::from(is_common_bigram(w[0], w[1]));
        }
    }
    pairs > 0 && common * 100 >= BIGRAM_MAX_PERCENT * pairs
}

/// `NL80211_WOWLAN_TRIG_WAKEUP_PKT_8023`, `boost_graph-vc141-mt-gd-x64`,
/// `com/NetBSD/src/blob/trunk`, `llvm/ObjectYAML/DWARFYAML`: at least two
/// `_ - /` separators, and every segment between them is short (≤ 8),
/// single-case, wordy, or made of long CamelCase words. Random keys of this
/// length have long mixed-case segments.
fn is_structured_identifier(run: &[u8]) -> bool {
    let is_sep = |c: &u8| matches!(c, b'_' | b'-' | b'/');
    run.iter().filter(|c| is_sep(c)).count() >= 2
        && run.split(is_sep).all(|seg| {
            let upper = seg.iter().filter(|c| c.is_ascii_uppercase()).count();
            let lower = seg.iter().filter(|c| c.is_ascii_lowercase()).count();
            seg.len() <= 8 || upper == 0 || lower == 0 || is_wordy(seg) || is_camel_words(seg)
        })
}

fn b64_value(c: u8) -> Option<u32> {
    Some(u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    }))
}

/// Decodes a base64 / base64url run when the result is UTF-8 text without
/// control characters (other than tab and newlines).
fn decode_base64_text(run: &[u8]) -> Option<String> {
    let mut data = run;
    while let [rest @ .., b'='] = data {
        data = rest;
    }
    if data.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for &c in data {
        acc = (acc << 6) | b64_value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            let byte = (acc >> bits) as u8;
            acc &= (1 << bits) - 1;
            if (byte < 0x20 && !matches!(byte, b'\t' | b'\n' | b'\r')) || byte == 0x7f {
                return None;
            }
            out.push(byte);
        }
    }
    String::from_utf8(out).ok()
}
