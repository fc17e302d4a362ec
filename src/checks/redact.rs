//! Secret redaction for recorded tool-call arguments.
//!
//! Every tool call that metagate records goes through [`redact_value`] before it
//! is written to the telemetry store, so that no credential ever reaches the
//! database file. Two independent mechanisms are applied:
//!
//! 1. **Secret keys** ([`is_secret_key`]): under an object key that names a
//!    secret, the whole value (string, number, object, array) is replaced by
//!    [`REDACTED`]. `null`, `""` and booleans are left alone: they carry no
//!    secret, and keeping flags such as `"withCredentials": true` readable is
//!    useful.
//! 2. **Secrets inside strings** ([`redact_text`]): every string value, at any
//!    depth, is scanned and only the matched spans are replaced; the rest of
//!    the string is kept. Object keys themselves are never rewritten.
//!
//! As an extra, inside an array a string that is a secret command-line flag
//! (`"--password"`, `"--api-key"`, …) causes the *next* string item to be
//! redacted whole (argv-style arrays).
//!
//! The scanner is hand-written (no regex), works on bytes, does two linear
//! passes over each string of at least [`MIN_SCAN_LEN`] bytes, and does not
//! allocate when nothing is found. See the documentation of [`redact_text`] for
//! the exact text rules and thresholds.
//!
//! Redaction is idempotent: `[REDACTED]` is never matched again, and
//! [`redact_text`] re-scans its own output (only when it changed something)
//! until nothing more is found.

use serde_json::Value;

/// The replacement for every redacted span or value.
pub const REDACTED: &str = "[REDACTED]";
const REDACTED_B: &[u8] = REDACTED.as_bytes();

/// Strings shorter than this (in bytes) are not scanned by [`redact_text`].
pub const MIN_SCAN_LEN: usize = 8;
/// Minimum length of a token-character run considered by the entropy rule.
pub const ENTROPY_MIN_LEN: usize = 32;
/// Minimum Shannon entropy (bits per character) of a run flagged by the entropy rule.
pub const ENTROPY_MIN_BITS: f64 = 3.5;
/// A run is considered made of words (not random) when at least this
/// percentage of its adjacent letter pairs are common English/code bigrams.
pub const BIGRAM_MAX_PERCENT: u32 = 45;
/// Minimum number of body characters after a well-known key prefix.
pub const PREFIX_MIN_BODY: usize = 16;

/// Longest normalized key [`is_secret_key`] will consider; longer keys are not secret keys.
const MAX_KEY_LEN: usize = 128;
/// Longest key looked back for in free text (`KEY=value`).
const MAX_TEXT_KEY_LEN: usize = 64;
/// Upper bound of scans done by [`redact_text`] (the first plus re-scans of the output).
const MAX_PASSES: usize = 4;

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

/// Replaces secrets in `value` in place; returns how many replacements were made.
///
/// * Object entries whose key satisfies [`is_secret_key`] have their whole value
///   replaced by `"[REDACTED]"` (one replacement), unless the value is `null`,
///   `""`, a boolean, or already `"[REDACTED]"`.
/// * Every other string (object values and array items, at any depth) goes
///   through [`redact_text`]; each redacted span counts as one replacement.
/// * In an array, the string following a secret flag item such as
///   `"--password"` or `"--api-key"` is redacted whole.
/// * Object keys, numbers, booleans and nulls outside secret keys are kept.
pub fn redact_value(value: &mut Value) -> usize {
    match value {
        Value::String(s) => redact_string(s),
        Value::Array(items) => redact_array(items),
        Value::Object(map) => {
            let mut count = 0;
            for (key, v) in map.iter_mut() {
                count += if is_secret_key(key) {
                    redact_whole(v)
                } else {
                    redact_value(v)
                };
            }
            count
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

fn redact_array(items: &mut [Value]) -> usize {
    let mut count = 0;
    let mut after_secret_flag = false;
    for item in items.iter_mut() {
        let follows_flag = std::mem::take(&mut after_secret_flag);
        if let Value::String(s) = item {
            if follows_flag && !s.starts_with('-') {
                count += redact_whole(item);
                continue;
            }
            after_secret_flag = is_secret_flag(s);
        }
        count += redact_value(item);
    }
    count
}

/// `--password`, `--api-key`, … (a long option naming a secret, without `=value`).
fn is_secret_flag(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 2
        && b.len() <= MAX_TEXT_KEY_LEN
        && b.starts_with(b"--")
        && b[2..].iter().all(|&c| is_key_byte(c))
        && classify_key(&b[2..]) != KeyKind::Plain
}

fn redact_whole(v: &mut Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) => 0,
        Value::String(s) if s.is_empty() || s == REDACTED => 0,
        _ => {
            *v = Value::String(REDACTED.to_owned());
            1
        }
    }
}

fn redact_string(s: &mut String) -> usize {
    match redact_text_counted(s) {
        Some((redacted, count)) => {
            *s = redacted;
            count
        }
        None => 0,
    }
}

// ---------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------

/// True when an object key names a secret.
///
/// The key is normalized: ASCII letters are lowercased, every ASCII character
/// that is not a letter or digit is dropped (this covers `_ - . space`, and
/// also `: / [ ] $ @`), and trailing digits are dropped (`password2`).
/// Component boundaries (a dropped separator, or a lower-case → upper-case
/// camelCase step) are remembered for the few rules that need them. Keys whose
/// normalized form is longer than 128 bytes are never secret keys.
///
/// The normalized key `k` names a secret when `k`, or `k` minus one trailing
/// *modifier* (`value`, `str`, `string`, `plain`, `plaintext`, `raw`, `b64`,
/// `base64`, `encoded`, `data`, `bytes`, `confirm`, `confirmation`,
/// `header`), satisfies one of:
///
/// * ends with `token` (`token`, `access_token`, `refresh_token`, `id_token`,
///   `auth_token`, `session_token`, `csrftoken`, `x-auth-token`, `GITHUB_TOKEN`),
///   **except** when what precedes `token` ends with a count/cursor/tokenizer
///   word: `max min num total count page next prev previous continuation
///   cancellation cancel sync bos eos pad unk sep cls mask stop special start
///   end` (words of 3 letters must start a component: `max_token`,
///   `next_page_token`, `eos_token` are not secrets, `backend_token` is).
///   Plurals and counts (`tokens`, `max_tokens`, `token_count`,
///   `tokenizer`, `token_type`) never end with `token`;
/// * ends with one of `password passwords passwd passphrase secret secrets
///   apikey apikeys accesskey privatekey secretkey sessionkey signingkey
///   encryptionkey sessionid sessid credential credentials authorization
///   cookie cookies` (so `client_secret`, `db.password`, `x-api-key`,
///   `Api.Key`, `AWS_SECRET_ACCESS_KEY`, `Set-Cookie`, `Proxy-Authorization`);
/// * is exactly `auth`, ends with an `auth` component (`basic_auth`,
///   `proxyAuth`), or is `x-auth` / starts with an `x-auth-` component
///   (`X-Auth-Key`);
/// * with a modifier: `secretValue`, `api_key_value`, `password_confirmation`,
///   `auth_header`.
///
/// Deliberately **not** secret keys: plain `key` (dict/memory keys), `session`
/// (an integer in Agent Zero), `author`, `authority`, `oauth`, `secretary`,
/// `keyboard`, `monkey`, `tokens`, `max_tokens`, `token_count`, `tokenizer`,
/// `token_type`, `password_hash`, `password_file`, `token_url`, `signature`,
/// `pin`, `ssn`, `code`, `text`, `query`, `message`, `reset`, `runtime`.
pub fn is_secret_key(key: &str) -> bool {
    classify_key(key.as_bytes()) != KeyKind::Plain
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum KeyKind {
    /// Not a secret.
    Plain,
    /// A secret; in text its value ends at the usual value delimiters.
    Secret,
    /// `authorization` / `cookie`: a header whose unquoted value runs to the end of the line.
    Header,
}

const SECRET_SUFFIXES: &[&[u8]] = &[
    b"password",
    b"passwords",
    b"passwd",
    b"passphrase",
    b"secret",
    b"secrets",
    b"apikey",
    b"apikeys",
    b"accesskey",
    b"privatekey",
    b"secretkey",
    b"sessionkey",
    b"signingkey",
    b"encryptionkey",
    b"sessionid",
    b"sessid",
    b"credential",
    b"credentials",
];

const HEADER_SUFFIXES: &[&[u8]] = &[b"authorization", b"cookie", b"cookies"];

const KEY_MODIFIERS: &[&[u8]] = &[
    b"value",
    b"str",
    b"string",
    b"plain",
    b"plaintext",
    b"raw",
    b"b64",
    b"base64",
    b"encoded",
    b"data",
    b"bytes",
    b"confirm",
    b"confirmation",
    b"header",
];

const TOKEN_NOT_SECRET_AFTER: &[&[u8]] = &[
    b"max",
    b"min",
    b"num",
    b"total",
    b"count",
    b"page",
    b"next",
    b"prev",
    b"previous",
    b"continuation",
    b"cancellation",
    b"cancel",
    b"sync",
    b"bos",
    b"eos",
    b"pad",
    b"unk",
    b"sep",
    b"cls",
    b"mask",
    b"stop",
    b"special",
    b"start",
    b"end",
];

/// Every secret word of [`is_secret_key`] contains one of these trigrams
/// (`tok`en, `pas`sword/`pas`swd/`pas`sphrase, se`cre`t/`cre`dential, api`key`,
/// `ses`sionid/`ses`sid, `aut`h/`aut`horization, c`ook`ie): keys without any
/// are rejected after one pass.
const SECRET_TRIGRAMS: [u32; 7] = [
    trigram(b"tok"),
    trigram(b"pas"),
    trigram(b"cre"),
    trigram(b"key"),
    trigram(b"ses"),
    trigram(b"aut"),
    trigram(b"ook"),
];

const fn trigram(t: &[u8; 3]) -> u32 {
    (t[0] as u32) << 16 | (t[1] as u32) << 8 | t[2] as u32
}

/// Whether the normalized key contains one of [`SECRET_TRIGRAMS`].
fn has_secret_trigram(key: &[u8]) -> bool {
    let mut window = 0u32;
    for &c in key {
        if c.is_ascii_alphanumeric() || c >= 0x80 {
            window = ((window << 8) | u32::from(c.to_ascii_lowercase())) & 0xff_ffff;
            if SECRET_TRIGRAMS.contains(&window) {
                return true;
            }
        }
    }
    false
}

fn classify_key(key: &[u8]) -> KeyKind {
    if !has_secret_trigram(key) {
        return KeyKind::Plain;
    }
    let mut buf = [0u8; MAX_KEY_LEN];
    let mut len = 0;
    // Bit i set: a component starts at buf[i].
    let mut bounds: u128 = 0;
    let mut after_sep = true;
    let mut prev_lower = false;
    for &c in key {
        if c.is_ascii_alphanumeric() || c >= 0x80 {
            if len == MAX_KEY_LEN {
                return KeyKind::Plain;
            }
            if after_sep || (prev_lower && c.is_ascii_uppercase()) {
                bounds |= 1 << len;
            }
            after_sep = false;
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            buf[len] = c.to_ascii_lowercase();
            len += 1;
        } else {
            after_sep = true;
            prev_lower = false;
        }
    }
    while len > 0 && buf[len - 1].is_ascii_digit() {
        len -= 1;
    }
    let norm = &buf[..len];
    let kind = core_kind(norm, bounds);
    if kind != KeyKind::Plain {
        return kind;
    }
    for m in KEY_MODIFIERS {
        if norm.len() > m.len() && ends_with(norm, m) {
            let kind = core_kind(&norm[..norm.len() - m.len()], bounds);
            if kind != KeyKind::Plain {
                return kind;
            }
        }
    }
    KeyKind::Plain
}

/// `s.ends_with(suffix)`, checking the last byte first and without a `memcmp` call.
#[inline]
fn ends_with(s: &[u8], suffix: &[u8]) -> bool {
    s.len() >= suffix.len()
        && s.last() == suffix.last()
        && s[s.len() - suffix.len()..]
            .iter()
            .zip(suffix)
            .all(|(x, y)| x == y)
}

#[inline]
fn bit(bounds: u128, i: usize) -> bool {
    i < 128 && bounds & (1 << i) != 0
}

fn core_kind(c: &[u8], bounds: u128) -> KeyKind {
    if HEADER_SUFFIXES.iter().any(|s| ends_with(c, s)) {
        return KeyKind::Header;
    }
    if ends_with(c, b"token") {
        let before = &c[..c.len() - 5];
        let excluded = TOKEN_NOT_SECRET_AFTER.iter().any(|w| {
            ends_with(before, w) && {
                let at = before.len() - w.len();
                w.len() >= 4 || at == 0 || bit(bounds, at)
            }
        });
        return if excluded {
            KeyKind::Plain
        } else {
            KeyKind::Secret
        };
    }
    if SECRET_SUFFIXES.iter().any(|s| ends_with(c, s)) {
        return KeyKind::Secret;
    }
    if c == b"auth"
        || (c.len() > 4 && ends_with(c, b"auth") && bit(bounds, c.len() - 4))
        || (has_at(c, 0, b"xauth") && bit(bounds, 1) && (c.len() == 5 || bit(bounds, 5)))
    {
        return KeyKind::Secret;
    }
    KeyKind::Plain
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

/// Redacts secrets inside one free-text string (a shell command, a header line,
/// a URL…), returning `None` when nothing was found (so callers avoid an
/// allocation). Strings shorter than [`MIN_SCAN_LEN`] bytes are not scanned.
///
/// Each matched span is replaced by `[REDACTED]`; overlapping or touching
/// spans are merged. Rules (first pass, structured):
///
/// * **`key=value` / `key: value`** where `key` (a run of `[A-Za-z0-9_.-]`,
///   optionally in quotes) satisfies [`is_secret_key`]: URL query strings
///   (`?api_key=XYZ&x=1`), env assignments (`PASSWORD=hunter2 ./run`,
///   `export GITHUB_TOKEN=…`), headers (`X-Api-Key: …`), YAML, and JSON-ish
///   `"password": "…"` (also with `\"` escapes). Only the value is replaced.
///   A quoted value runs to its closing quote (or end of line); an unquoted
///   one to whitespace or one of ``" ' ` , ; ) } \`` (after `=` also
///   `& ( | < >`, for query strings and shell commands). For
///   `authorization`/`cookie` keys an unquoted value runs to the end of the
///   line (or a quote). An auth scheme word at the start of the value
///   (`Bearer`, `Basic`, `Token`, `Bot`, `Digest`, …) is kept:
///   `Authorization: Bearer abc.def` → `Authorization: Bearer [REDACTED]`.
///   Not redacted: `$NAME` (upper-case) and `${…}`/`{{…}}`/`{…}`/`<…>`
///   placeholders; type names and literals after the key (`token: str`,
///   `password: Optional[str]`, `= None`); a call (`= get_token()`); in
///   code-style `key = value` (spaces around `=`, or `:=`) an unquoted
///   expression containing `.` or `[` or the key's own name (`token = token`);
///   after a quoted key (`"token": x`) an unquoted value unless it is a number;
///   `::`, `==`, `=>`, `!=`, `<=`, `>=`; and a key directly after `://` (URL
///   user names are handled by the userinfo rule).
/// * **`--secret-flag value`** (`--password hunter2`, `--token "x"`), and
///   **`-u`/`--user user:password`** (curl): the value / the password part.
/// * **URL userinfo** `scheme://user:password@host` → the password part.
/// * **PEM private keys**: from `-----BEGIN … PRIVATE KEY-----` through the
///   matching `-----END … PRIVATE KEY-----`, or to the end of the string.
/// * **JWTs**: `eyJ` at a token boundary, then base64url segments joined by at
///   least two dots (first segment ≥ 10 characters, second ≥ 2).
/// * **`Bearer <token>`** anywhere: token of ≥ 8 `[A-Za-z0-9._~+/=-]`
///   characters containing a digit.
/// * **Well-known prefixes** at a token boundary (previous byte not
///   `[A-Za-z0-9_-]`, so `disk-usage` never matches `sk-`), followed by ≥ 16
///   characters `[A-Za-z0-9_-]` (35 for `AIza`) that mix at least two of
///   lower case, upper case and digits: `sk-` (covers `sk-proj-`, `sk-ant-`),
///   `sk_live_ sk_test_ rk_live_ rk_test_ pk_live_ pk_test_ whsec_ ghp_ gho_
///   ghu_ ghs_ ghr_ github_pat_ glpat- gsk_ xoxb- xoxp- xoxa- xoxr- xoxs- xapp-
///   xai- hf_ npm_ pypi- SG. shpat_ shpss_ dop_v1_ AIza`; and `AKIA`/`ASIA`
///   followed by exactly 16 `[A-Z0-9]` (AWS access key ids). The whole token,
///   prefix included, is replaced.
///
/// Second pass (**high-entropy runs**): a maximal run of `[A-Za-z0-9+/_-]`
/// plus trailing `=` padding (an `=` followed by more token characters splits
/// the run, so `FOO=<value>` only flags the value) is redacted when all hold:
///
/// * length ≥ [`ENTROPY_MIN_LEN`] (32);
/// * less than 90 % hex digits and `- _ /` (git SHAs, SHA-256 digests, UUIDs,
///   `diff-<sha>` are ids; hex has at most 4 bits/char anyway);
/// * not CamelCase words: mixed case, and on average ≥ 5 letters/digits per
///   word, where a word boundary is a lower → upper step, a letter ↔ digit
///   step or a `_ - + /` (`MCSymbolELF`, `xGLXQueryMaxSwapBarriersSGIXReq`;
///   random mixed-case text changes class about every other character);
/// * not a structured identifier: at least two `_ - /` separators with every
///   segment between them ≤ 8 characters, single-case, CamelCase words or
///   wordy (next rule)
///   (`NL80211_WOWLAN_TRIG_WAKEUP_PKT_8023`, `armv7neon-unknown-linux-gnueabihf`,
///   `com/NetBSD/src/blob/trunk/sys`);
/// * fewer than half of adjacent pairs are ascending or descending sequences
///   (`ABCDEFGH…0123456789` alphabets);
/// * fewer than [`BIGRAM_MAX_PERCENT`] (45 %) of its adjacent letter pairs
///   are among the 128 most common bigrams of English/code words (≈ 75 % of
///   bigrams in identifiers and prose, ≈ 19 % in random text). This is what
///   rejects long identifiers and paths (`this_is_a_very_long_snake_case…`,
///   `/usr/lib/x86_64-linux-gnu/…`, `getUserAccountSettings…`), whose entropy
///   (4.0–4.3 bits) overlaps with that of random 32-character keys;
/// * Shannon entropy ≥ [`ENTROPY_MIN_BITS`] (3.5 bits/char; rejects digit
///   strings and repetitive runs);
/// * a run with a `/` but no upper-case letter is a path (random base64 of
///   this length always has upper case): only its `/`-separated segments are
///   considered, each by the same rules;
/// * it is not base64 of ordinary text: when the run decodes (standard or
///   url-safe alphabet) to UTF-8 without control characters, it is redacted
///   only if that text itself contains a secret by these rules.
///
/// Measured (xorshift-random strings, framed by spaces), the text rules
/// catch 99.2 % / 99.6 % / 99.96 % of 32- / 40- / 64-character `[A-Za-z0-9]`
/// keys, 99.0 / 99.6 / 99.9 % of standard base64, 98.6 / 99.4 / 99.97 % of
/// base64url and 98.2 / 99.1 / 99.9 % of `[a-z0-9]` keys. Of 125,000
/// distinct ≥ 32-character runs taken from Rust crate sources, the Python
/// standard library, `/etc` and `/usr/include`, 3.7 % are flagged, nearly
/// all genuinely random (base64 certificates, signatures, generated tables)
/// plus some mangled C++ symbols and acronym-heavy paths.
pub fn redact_text(text: &str) -> Option<String> {
    redact_text_counted(text).map(|(redacted, _)| redacted)
}

fn redact_text_counted(text: &str) -> Option<(String, usize)> {
    if text.len() < MIN_SCAN_LEN {
        return None;
    }
    let mut spans = Vec::new();
    collect_spans(text.as_bytes(), &mut spans, 0);
    if spans.is_empty() {
        return None;
    }
    let (mut out, mut count) = apply_spans(text, &mut spans);
    // Re-scan the output so that redaction is idempotent even when a
    // replacement changed the context of a neighbouring match. This only runs
    // when something was found, and almost always stops after one extra scan.
    for _ in 1..MAX_PASSES {
        spans.clear();
        collect_spans(out.as_bytes(), &mut spans, 0);
        if spans.is_empty() {
            break;
        }
        let (next, n) = apply_spans(&out, &mut spans);
        out = next;
        count += n;
    }
    Some((out, count))
}

fn apply_spans(text: &str, spans: &mut [(usize, usize)]) -> (String, usize) {
    for span in spans.iter_mut() {
        // Spans always start and end at ASCII bytes or at the ends of the
        // string; stay on char boundaries regardless.
        while !text.is_char_boundary(span.0) {
            span.0 -= 1;
        }
        while !text.is_char_boundary(span.1) {
            span.1 += 1;
        }
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut count = 0;
    let mut i = 0;
    while i < spans.len() {
        let (start, mut end) = spans[i];
        i += 1;
        while i < spans.len() && spans[i].0 <= end {
            end = end.max(spans[i].1);
            i += 1;
        }
        let start = start.max(last);
        if end <= start {
            continue;
        }
        out.push_str(&text[last..start]);
        out.push_str(REDACTED);
        last = end;
        count += 1;
    }
    out.push_str(&text[last..]);
    (out, count)
}

/// Pushes every secret span of `b`. `depth` > 0 when scanning decoded base64.
fn collect_spans(b: &[u8], out: &mut Vec<(usize, usize)>, depth: u8) {
    scan_structured(b, out);
    scan_prose(b, out);
    let structured = out.len();
    scan_runs(b, out, structured, depth);
}

fn has_secret(text: &[u8], depth: u8) -> bool {
    let mut spans = Vec::new();
    collect_spans(text, &mut spans, depth);
    !spans.is_empty()
}

// Byte classes, looked up in `CLASS` (one table load instead of a chain of compares).
/// `[A-Za-z0-9_.-]`: key characters in text.
const KEY: u8 = 1;
/// `[A-Za-z0-9_-]`: word characters (token boundaries).
const WORD: u8 = 2;
/// `[A-Za-z0-9+/_-]`: entropy-run characters.
const RUN: u8 = 4;
/// `= : -`: anchors of the structured rules.
const ANCHOR: u8 = 8;
/// First letters of the word-start rules (JWT, Bearer, well-known prefixes).
const START: u8 = 16;

static CLASS: [u8; 256] = build_classes();

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
        if b == b'=' || b == b':' || b == b'-' {
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
fn is_key_byte(c: u8) -> bool {
    CLASS[usize::from(c)] & KEY != 0
}

#[inline]
fn is_word_byte(c: u8) -> bool {
    CLASS[usize::from(c)] & WORD != 0
}

#[inline]
fn is_run_byte(c: u8) -> bool {
    CLASS[usize::from(c)] & RUN != 0
}

/// `b[i..].starts_with(p)` without a `memcmp` call (prefixes are short).
#[inline]
fn has_at(b: &[u8], i: usize, p: &[u8]) -> bool {
    b.len() >= i + p.len() && b[i..i + p.len()].iter().zip(p).all(|(x, y)| x == y)
}

#[inline]
fn is_token68(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

#[inline]
fn is_value_stop(c: u8) -> bool {
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
fn scan_while(b: &[u8], from: usize, pred: impl Fn(u8) -> bool) -> usize {
    let mut k = from;
    while k < b.len() && pred(b[k]) {
        k += 1;
    }
    k
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, 0, needle).is_some()
}

/// First pass: rules anchored on a separator, a dash or a word start.
fn scan_structured(b: &[u8], out: &mut Vec<(usize, usize)>) {
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

/// Secrets told in prose: `my password is hunter2`, `the API key was AbC123…`. Anchored on
/// ` is ` / ` was ` after a word that names a secret; the next word is redacted when it looks
/// like a secret rather than English (a digit, a symbol, or upper case inside it), so
/// "the password is wrong" stays as it is.
fn scan_prose(b: &[u8], out: &mut Vec<(usize, usize)>) {
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

/// What a structured rule found at a position.
#[derive(Clone, Copy, Debug)]
enum Hit {
    /// Redact `b[.0...1]`.
    Redact(usize, usize),
    /// A value was read up to here and is not a secret: key rules stay quiet until there.
    Skip(usize),
}

impl Hit {
    fn redact((start, end): (usize, usize)) -> Self {
        Hit::Redact(start, end)
    }
}

#[derive(Clone, Copy)]
struct ValueCtx<'a> {
    /// The key was quoted (`"token": …`): JSON or a dict literal.
    key_quoted: bool,
    /// `key = value` with spaces, or `key := value`: probably code.
    code_assign: bool,
    /// Unquoted value runs to the end of the line.
    header: bool,
    /// `key=value`: an unquoted value also ends at `& ( < > |` (query strings, shell).
    assignment: bool,
    key: &'a [u8],
}

/// `sep` is the index of a `=` or `:`.
fn key_value_at(b: &[u8], sep: usize) -> Option<Hit> {
    let n = b.len();
    let next = b.get(sep + 1).copied();
    let prev = if sep > 0 { Some(b[sep - 1]) } else { None };
    let mut value_start = sep + 1;
    let mut code_assign = false;
    if b[sep] == b'=' {
        if matches!(next, Some(b'=' | b'>' | b'~'))
            || matches!(prev, Some(b'=' | b'!' | b'<' | b'>'))
        {
            return None;
        }
        code_assign = matches!(next, Some(b' ' | b'\t'));
    } else {
        if next == Some(b':') || prev == Some(b':') {
            return None;
        }
        if next == Some(b'=') {
            value_start = sep + 2;
            code_assign = true;
        }
    }
    // Look back for the key: optional spaces, optional closing quote(s), key bytes.
    let mut j = sep;
    let mut spaces = 0;
    while j > 0 && matches!(b[j - 1], b' ' | b'\t') && spaces < 4 {
        j -= 1;
        spaces += 1;
    }
    if spaces > 0 && b[sep] == b'=' {
        code_assign = true;
    }
    let mut quotes = 0;
    while j > 0 && matches!(b[j - 1], b'"' | b'\'' | b'\\') && quotes < 3 {
        j -= 1;
        quotes += 1;
    }
    let key_end = j;
    while j > 0 && is_key_byte(b[j - 1]) {
        j -= 1;
        if key_end - j > MAX_TEXT_KEY_LEN {
            return None;
        }
    }
    if j == key_end || (j >= 3 && &b[j - 3..j] == b"://") {
        return None;
    }
    let key = &b[j..key_end];
    let kind = classify_key(key);
    if kind == KeyKind::Plain || value_start > n {
        return None;
    }
    parse_value(
        b,
        value_start,
        ValueCtx {
            key_quoted: quotes > 0,
            code_assign,
            header: kind == KeyKind::Header,
            assignment: b[sep] == b'=',
            key,
        },
    )
}

/// Parses the value of a secret key starting at `start` (spaces allowed):
/// the span to redact, or how far to skip when the value was read but is not
/// a secret (so that a long non-secret value is never re-scanned).
fn parse_value(b: &[u8], start: usize, ctx: ValueCtx<'_>) -> Option<Hit> {
    let n = b.len();
    let mut k = scan_while(b, start, |c| c == b' ' || c == b'\t');
    if k >= n {
        return None;
    }
    // Python string prefixes: f"…", r'…', rb"…".
    let p = scan_while(b, k, |c| {
        matches!(c, b'f' | b'F' | b'r' | b'R' | b'b' | b'B' | b'u' | b'U')
    });
    if p > k && p - k <= 2 && p < n && matches!(b[p], b'"' | b'\'') {
        k = p;
    }
    let (quote, escaped, vs) = match b[k] {
        q @ (b'"' | b'\'' | b'`') => (Some(q), false, k + 1),
        b'\\' if k + 1 < n && matches!(b[k + 1], b'"' | b'\'') => (Some(b[k + 1]), true, k + 2),
        _ => (None, false, k),
    };
    if quote.is_none() && ctx.key_quoted && !b[k].is_ascii_digit() {
        return None;
    }
    if b[vs..].starts_with(REDACTED_B) {
        return None;
    }
    let (cs, single) = scheme_at(b, vs).unwrap_or((vs, false));
    if b[cs..].starts_with(REDACTED_B) {
        return None;
    }
    let scheme = cs != vs;
    let end = match quote {
        Some(q) => quoted_end(b, cs, q, escaped),
        None if single => scan_while(b, cs, |c| {
            !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'' | b'`' | b'\\' | b',' | b';')
        }),
        None if scheme => scan_while(b, cs, |c| c != b'\n' && c != b'\r'),
        None if ctx.header => scan_while(b, cs, |c| {
            !matches!(c, b'\n' | b'\r' | b'"' | b'\'' | b'`' | b'\\')
        }),
        None if ctx.assignment => scan_while(b, cs, |c| !is_value_stop(c)),
        None => scan_while(b, cs, |c| {
            !c.is_ascii_whitespace()
                && !matches!(c, b'"' | b'\'' | b'`' | b',' | b';' | b')' | b'}' | b'\\')
        }),
    };
    let mut end = end;
    while end > cs && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    if end <= cs {
        return None;
    }
    let v = &b[cs..end];
    let not_secret = is_placeholder(v)
        || (quote.is_none()
            && !scheme
            && (is_code_word(v)
                || b.get(end) == Some(&b'(')
                || (ctx.code_assign
                    && (v.contains(&b'.') || v.contains(&b'[') || names_key(v, ctx.key)))));
    Some(if not_secret {
        Hit::Skip(end)
    } else {
        Hit::Redact(cs, end)
    })
}

/// End of a quoted value whose content starts at `from`.
fn quoted_end(b: &[u8], from: usize, q: u8, escaped: bool) -> usize {
    let mut k = from;
    while k < b.len() {
        let c = b[k];
        if c == b'\n' || c == b'\r' {
            return k;
        }
        if c == q {
            let backslash = k > from && b[k - 1] == b'\\';
            if escaped {
                return if backslash { k - 1 } else { k };
            }
            if !backslash {
                return k;
            }
        }
        k += 1;
    }
    b.len()
}

/// Authorization schemes kept in front of a redacted credential; `true` when
/// the credential is a single token.
const SCHEMES: &[(&[u8], bool)] = &[
    (b"bearer", true),
    (b"basic", true),
    (b"token", true),
    (b"bot", true),
    (b"dpop", true),
    (b"apikey", true),
    (b"negotiate", true),
    (b"ntlm", true),
    (b"digest", false),
    (b"hoba", false),
    (b"mutual", false),
    (b"vapid", false),
    (b"aws4-hmac-sha256", false),
];

/// If a scheme word followed by spaces and a credential starts at `at`,
/// returns the credential start and whether it is a single token.
fn scheme_at(b: &[u8], at: usize) -> Option<(usize, bool)> {
    let e = scan_while(b, at, |c| c.is_ascii_alphanumeric() || c == b'-');
    let word = &b[at..e];
    let single = SCHEMES
        .iter()
        .find(|(s, _)| word.eq_ignore_ascii_case(s))?
        .1;
    let k = scan_while(b, e, |c| c == b' ');
    if k == e || k >= b.len() || b[k].is_ascii_whitespace() {
        return None;
    }
    Some((k, single))
}

/// Environment references and template placeholders: `$TOKEN` (upper case),
/// `${NAME}`, `${{ secrets.X }}`, `{{ x }}`, `{token}`, `<your-api-key>`.
fn is_placeholder(v: &[u8]) -> bool {
    // `{name}` / `{name` (an unquoted value stops at `}`).
    let braced = |inner: &[u8]| {
        let inner = inner.strip_suffix(b"}").unwrap_or(inner);
        !inner.is_empty()
            && inner
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
    };
    match v {
        [b'{', b'{', ..] | [b'$', b'{', b'{', ..] => true,
        [b'$', b'{', inner @ ..] | [b'{', inner @ ..] => braced(inner),
        [b'<', .., b'>'] => true,
        [b'$', rest @ ..] => {
            !rest.is_empty()
                && (rest[0].is_ascii_uppercase() || rest[0] == b'_')
                && rest
                    .iter()
                    .all(|&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
        }
        _ => false,
    }
}

/// Type names and literals that follow a secret-named variable in code.
const CODE_WORDS: &[&[u8]] = &[
    b"none",
    b"null",
    b"nil",
    b"true",
    b"false",
    b"undefined",
    b"str",
    b"string",
    b"bytes",
    b"int",
    b"integer",
    b"bool",
    b"boolean",
    b"float",
    b"number",
    b"any",
    b"object",
    b"optional",
    b"option",
    b"list",
    b"dict",
    b"vec",
    b"char",
    b"u32",
    b"u64",
    b"usize",
    b"i32",
    b"i64",
    b"required",
    b"secretstr",
    b"secretstring",
];

fn is_code_word(v: &[u8]) -> bool {
    let lead = scan_while(v, 0, |c| c.is_ascii_alphanumeric() || c == b'_');
    (lead == v.len() || matches!(v[lead], b'[' | b'<' | b'?'))
        && CODE_WORDS.iter().any(|w| v[..lead].eq_ignore_ascii_case(w))
}

/// `token = token`, `self.api_key = api_key`: the value is an identifier
/// that the key ends with (ignoring case and separators).
fn names_key(v: &[u8], key: &[u8]) -> bool {
    if v.is_empty() || !v.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_') {
        return false;
    }
    let mut vi = v.iter().rev().filter(|c| c.is_ascii_alphanumeric());
    let mut ki = key.iter().rev().filter(|c| c.is_ascii_alphanumeric());
    loop {
        match (vi.next(), ki.next()) {
            (None, _) => return true,
            (Some(_), None) => return false,
            (Some(a), Some(k)) if a.eq_ignore_ascii_case(k) => {}
            _ => return false,
        }
    }
}

/// URL userinfo password; `s` is the index just after `://`.
fn userinfo_at(b: &[u8], s: usize) -> Option<(usize, usize)> {
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

const PEM_BEGIN: &[u8] = b"-----BEGIN ";

/// `-----BEGIN … PRIVATE KEY-----` at `i`.
fn pem_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
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

/// `--secret-flag value`, `-u user:password`, `--user user:password`.
fn flag_at(b: &[u8], i: usize) -> Option<Hit> {
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
            header: kind == KeyKind::Header,
            assignment: false,
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
    let pw = &b[colon + 1..end];
    if pw.is_empty()
        || pw.iter().all(u8::is_ascii_digit)
        || pw.starts_with(REDACTED_B)
        || is_placeholder(pw)
    {
        return None;
    }
    Some((colon + 1, end))
}

/// Rules anchored at the start of a word (`b[i]` is a letter at a boundary).
fn word_token_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
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

// ---------------------------------------------------------------------------
// High-entropy runs
// ---------------------------------------------------------------------------

/// Second pass: maximal token runs that look random. Runs entirely covered by
/// a span of the first pass (`out[..structured]`, sorted and disjoint) are skipped.
fn scan_runs(b: &[u8], out: &mut Vec<(usize, usize)>, structured: usize, depth: u8) {
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

/// Shannon entropy in bits per character of an ASCII run.
fn shannon_entropy(run: &[u8]) -> f64 {
    let mut counts = [0u32; 128];
    for &c in run {
        counts[usize::from(c & 0x7f)] += 1;
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

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod prose_tests {
    use super::*;

    #[test]
    fn secrets_told_in_prose() {
        for (text, secret) in [
            ("my password is S3cr3tPassw0rd, log in", "S3cr3tPassw0rd"),
            ("The API key was AbCdEfGh12345.", "AbCdEfGh12345"),
            (
                "wifi passphrase is correct-horse-battery!",
                "correct-horse-battery",
            ),
            ("your token is tk_9f8e7d6c", "tk_9f8e7d6c"),
        ] {
            let out = redact_text(text).unwrap_or_else(|| panic!("nothing found in {text}"));
            assert!(!out.contains(secret), "{out}");
        }
        for text in [
            "the password is wrong, try again",
            "the token is expired",
            "this key is missing from the map",
            "the password is required",
        ] {
            assert_eq!(redact_text(text), None, "{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    const PEM_BODY: &str = "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB";

    fn pem() -> String {
        format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\naFDrBz9vFqU4yE3Tz+9nOq1D0wXbKCP6rHq0yE1JZ8k3XfhRSMkGJ0mX7yLtTq2\n-----END RSA PRIVATE KEY-----"
        )
    }

    /// (description, value, secret that must disappear)
    fn secret_corpus() -> Vec<(&'static str, Value, String)> {
        let s = |x: &str| x.to_string();
        vec![
            (
                "top-level password",
                json!({"password": "hunter2"}),
                s("hunter2"),
            ),
            ("api_key", json!({"api_key": "abc123xyz"}), s("abc123xyz")),
            (
                "apiKey number",
                json!({"apiKey": 918273645}),
                s("918273645"),
            ),
            ("API-KEY", json!({"API-KEY": "k-9f8e7d6c"}), s("k-9f8e7d6c")),
            (
                "Api.Key",
                json!({"Api.Key": "zz-top-secret"}),
                s("zz-top-secret"),
            ),
            (
                "x-api-key header map",
                json!({"headers": {"x-api-key": "kv_112233"}}),
                s("kv_112233"),
            ),
            (
                "nested in array",
                json!({"items": [{"name": "svc"}, {"name": "x", "client_secret": "cs-77aa88"}]}),
                s("cs-77aa88"),
            ),
            (
                "object under credentials",
                json!({"credentials": {"user": "bob", "pass": "s3cr3tpass"}}),
                s("s3cr3tpass"),
            ),
            (
                "array under secrets",
                json!({"secrets": ["alpha-1", "beta-2"]}),
                s("alpha-1"),
            ),
            (
                "refresh_token",
                json!({"refresh_token": "rt.9a8b7c6d"}),
                s("rt.9a8b7c6d"),
            ),
            (
                "accessToken",
                json!({"auth": {"accessToken": "at_0099"}}),
                s("at_0099"),
            ),
            (
                "x-auth-token",
                json!({"X-Auth-Token": "xat-5544"}),
                s("xat-5544"),
            ),
            (
                "session_id",
                json!({"session_id": "sess-4242"}),
                s("sess-4242"),
            ),
            (
                "Authorization key",
                json!({"Authorization": "Bearer tok_abcdef"}),
                s("tok_abcdef"),
            ),
            (
                "Cookie key",
                json!({"Cookie": "sid=abc123; theme=dark"}),
                s("sid=abc123"),
            ),
            (
                "AWS secret key",
                json!({"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}),
                s("wJalrXUtnFEMI"),
            ),
            (
                "private_key PEM",
                json!({"private_key": pem()}),
                s(PEM_BODY),
            ),
            ("secretValue", json!({"secretValue": "sv-123"}), s("sv-123")),
            (
                "argv flag",
                json!({"argv": ["mysql", "--password", "pw-in-argv"]}),
                s("pw-in-argv"),
            ),
            (
                "bearer in shell command",
                json!({"code": "curl -H \"Authorization: Bearer abc.def\" https://api.example.com/v1"}),
                s("abc.def"),
            ),
            (
                "basic auth header line",
                json!({"text": "Authorization: Basic dXNlcjpwYXNzd29yZA=="}),
                s("dXNlcjpwYXNzd29yZA"),
            ),
            (
                "token scheme",
                json!({"cmd": "curl -H 'Authorization: token gh0_not_a_prefix_99' api"}),
                s("gh0_not_a_prefix_99"),
            ),
            (
                "standalone bearer",
                json!({"cmd": "send header Bearer q9w8e7r6t5y4 to the proxy"}),
                s("q9w8e7r6t5y4"),
            ),
            (
                "JWT in free text",
                json!({"message": format!("my session is {JWT} thanks")}),
                s(JWT),
            ),
            (
                "PEM in multi-line string",
                json!({"content": format!("key file:\n{}\ndone", pem())}),
                s(PEM_BODY),
            ),
            (
                "PEM without END",
                json!({"content": format!("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{PEM_BODY}")}),
                s(PEM_BODY),
            ),
            (
                "sk-proj-",
                json!(["use sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t now"]),
                s("Ab3dEf6hIj9kLm2nOp5qRs8t"),
            ),
            (
                "sk-",
                json!(["sk-4f9Kq2LmX8vB1nZ7pR3sT6wY"]),
                s("4f9Kq2LmX8vB1nZ7pR3sT6wY"),
            ),
            (
                "sk_live_",
                json!(["key sk_live_51Hq8bKLm2ZpQ9rT4vX7y here"]),
                s("51Hq8bKLm2ZpQ9rT4vX7y"),
            ),
            (
                "sk_test_",
                json!(["sk_test_4eC39HqLyjWDarjtT1zdp7dc"]),
                s("4eC39HqLyjWDarjtT1zdp7dc"),
            ),
            (
                "rk_live_",
                json!(["rk_live_9aB8cD7eF6gH5iJ4kL3m"]),
                s("9aB8cD7eF6gH5iJ4kL3m"),
            ),
            (
                "pk_live_",
                json!(["pk_live_1a2B3c4D5e6F7g8H9i0J"]),
                s("1a2B3c4D5e6F7g8H9i0J"),
            ),
            (
                "ghp_",
                json!([
                    "git clone https://github.com/x/y && echo ghp_R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"
                ]),
                s("R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"),
            ),
            (
                "gho_",
                json!(["gho_16C7e42F292c6912E7710c838347Ae178B4a"]),
                s("16C7e42F292c6912E7710c838347Ae178B4a"),
            ),
            (
                "ghu_",
                json!(["(ghu_aB1cD2eF3gH4iJ5kL6mN7oP8)"]),
                s("aB1cD2eF3gH4iJ5kL6mN7oP8"),
            ),
            (
                "ghs_",
                json!(["\"ghs_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2\""]),
                s("Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2"),
            ),
            (
                "ghr_",
                json!(["ghr_Qq1Ww2Ee3Rr4Tt5Yy6Uu7Ii8"]),
                s("Qq1Ww2Ee3Rr4Tt5Yy6Uu7Ii8"),
            ),
            (
                "github_pat_",
                json!(["github_pat_11ABCDEFG0abcdefghij_KLMNOPqrstuv1234"]),
                s("11ABCDEFG0abcdefghij"),
            ),
            (
                "glpat-",
                json!(["glpat-xY7zW9vU1tS3rQ5pO2nM"]),
                s("xY7zW9vU1tS3rQ5pO2nM"),
            ),
            (
                "xoxb-",
                json!(["slack xoxb-1234567890-0987654321-AbCdEfGhIjKl"]),
                s("1234567890-0987654321"),
            ),
            (
                "xoxp-",
                json!(["xoxp-2222222222-3333333333-abcdEFGH"]),
                s("2222222222-3333333333"),
            ),
            (
                "xoxa-",
                json!(["xoxa-2-4444444444-AbcDefGhiJkl"]),
                s("4444444444-AbcDefGhiJkl"),
            ),
            (
                "xapp-",
                json!(["xapp-1-A0123456789-5555555555-abcDEF"]),
                s("A0123456789-5555555555"),
            ),
            (
                "AKIA",
                json!(["aws_access_key_id AKIAIOSFODNN7EXAMPLE ok"]),
                s("AKIAIOSFODNN7EXAMPLE"),
            ),
            (
                "ASIA",
                json!(["ASIAZ3XK9LMNOPQRST12"]),
                s("ASIAZ3XK9LMNOPQRST12"),
            ),
            (
                "AIza",
                json!(["maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"]),
                s("SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
            ),
            (
                "hf_",
                json!(["hf_AbCdEfGhIjKlMnOpQrStUvWxYz"]),
                s("AbCdEfGhIjKlMnOpQrStUvWxYz"),
            ),
            (
                "npm_",
                json!(["//registry.npmjs.org/:_authToken=npm_Ab12Cd34Ef56Gh78Ij90"]),
                s("Ab12Cd34Ef56Gh78Ij90"),
            ),
            (
                "pypi-",
                json!(["pypi-AgEIcHlwaS5vcmcCJGI4"]),
                s("AgEIcHlwaS5vcmcCJGI4"),
            ),
            (
                "SG.",
                json!(["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"]),
                s("ngeVfQFYQlKU0ufo8x5d1A"),
            ),
            (
                "URL query parameter",
                json!({"url": "https://api.example.com/v1/data?api_key=XYZsecret123&x=1"}),
                s("XYZsecret123"),
            ),
            (
                "URL userinfo",
                json!({"dsn": "postgres://admin:p4ssw0rd!@db.internal:5432/app"}),
                s("p4ssw0rd!"),
            ),
            (
                "env assignment",
                json!({"code": "PASSWORD=hunter2xyz ./run.sh --fast"}),
                s("hunter2xyz"),
            ),
            (
                "export token",
                json!({"code": "export GITHUB_TOKEN=plainvalue42 && git push"}),
                s("plainvalue42"),
            ),
            (
                "JSON-ish inside string",
                json!({"body": "{\"user\": \"bob\", \"password\": \"pa55 word\"}"}),
                s("pa55 word"),
            ),
            (
                "flag with value",
                json!({"code": "mysql --password hunter22 -h db"}),
                s("hunter22"),
            ),
            (
                "curl -u",
                json!({"code": "curl -u admin:s3cretpw https://x.example"}),
                s("s3cretpw"),
            ),
            (
                "cookie header line",
                json!({"raw": "GET / HTTP/1.1\r\nCookie: sessionid=abc; csrftoken=def\r\nHost: x"}),
                s("sessionid=abc"),
            ),
            (
                "YAML config",
                json!({"file": "db:\n  user: app\n  password: Tr0ub4dor&3\n"}),
                s("Tr0ub4dor&3"),
            ),
            (
                "prefix inside a placeholder",
                json!({"tpl": "token: \"{{ ghp_R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6 }}\""}),
                s("R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"),
            ),
            (
                "YAML PEM value",
                json!({"file": "tls:\n  private_key: -----BEGIN PRIVATE KEY-----\n  MIIBVgIBADAN\n  tail9Kq==\n  -----END PRIVATE KEY-----\n  cert: x\n"}),
                s("tail9Kq"),
            ),
            (
                "high-entropy alone",
                json!({"value": "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO"}),
                s("u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO"),
            ),
            (
                "high-entropy in sentence",
                json!({"message": "the key is NnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7 keep it safe"}),
                s("NnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7"),
            ),
            (
                "high-entropy base64",
                json!({"text": "blob WAXwdlornB1+DzfESSG9P2Vk6t9/FCpyZoxH4iPR end"}),
                s("WAXwdlornB1+DzfESSG9P2Vk6t9/FCpyZoxH4iPR"),
            ),
            (
                "high-entropy lower+digits",
                json!(["19r0wyojfljooa5lqsaj08xui6d39zzzzg4zdmen"]),
                s("19r0wyojfljooa5lqsaj08xui6d39zzzzg4zdmen"),
            ),
            (
                "base64 of a PEM",
                json!(["LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB"]),
                s("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB"),
            ),
        ]
    }

    #[test]
    fn secrets_are_redacted() {
        let corpus = secret_corpus();
        assert!(corpus.len() >= 40);
        for (name, mut v, secret) in corpus {
            let n = redact_value(&mut v);
            let out = serde_json::to_string(&v).unwrap();
            assert!(!out.contains(&secret), "{name}: secret survived: {out}");
            assert!(out.contains(REDACTED), "{name}: no marker: {out}");
            assert!(n >= 1, "{name}: count {n}");
        }
    }

    #[test]
    fn non_secrets_are_kept() {
        let corpus = vec![
            json!({"runtime":"terminal","code":"ls -la /tmp && grep -r foo src","session":0,"reset":false}),
            json!({"runtime":"python","code":"import os\nprint(os.listdir('.'))","session":1,"reset":true}),
            json!({"max_tokens": 512, "temperature": 0.2}),
            json!({"tokens": 1200, "token_count": 5, "num_tokens": 7, "maxTokens": 100}),
            json!({"tokenizer": "cl100k_base", "token_type": "Bearer", "next_page_token": "CAESBggDEAEYAQ"}),
            json!({"author": "Jane Doe", "authority": "login.example.com", "oauth": null}),
            json!({"keyboard": "us", "key": "user:42:profile", "monkey": "banana", "secretary": "Ann"}),
            json!({"code": "x = 1", "text": "hello world", "query": "select * from users where name = 'bob'"}),
            json!({"message": "Hello, how are you today? I will send the report tomorrow."}),
            json!({"password": null, "token": "", "is_password": true, "withCredentials": false}),
            json!({"sha": "da39a3ee5e6b4b0d3255bfef95601890afd80709"}),
            json!({"digest": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}),
            json!({"id": "550e8400-e29b-41d4-a716-446655440000"}),
            json!({"path": "/home/user/projects/metagate/src/telemetry/store/sqlite_backend.rs"}),
            json!({"path": "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}),
            json!({"fn": "this_is_a_very_long_snake_case_function_name"}),
            json!({"name": "getUserAccountSettingsFromDatabaseWithRetryPolicy"}),
            json!({"name": "test_redact_value_handles_nested_arrays_and_objects_correctly"}),
            json!({"data": "SGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0IG1lc3NhZ2UgZm9yIHlvdQ=="}),
            json!({"alphabet": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"}),
            json!({"path": "/usr/include/llvm-14/llvm/MC/MCSymbolELF.h"}),
            json!({"consts": "NL80211_WOWLAN_TRIG_WAKEUP_PKT_8023 TLS_CIPHER_AES_GCM_128_SALT_SIZE"}),
            json!({"dir": "x64-windows/debug/bin/boost_graph-vc141-mt-gd-x64-1_67.dll"}),
            json!({"sym": "llvm/DebugInfo/PDB/PDBSymbolTypeVTable.h thumbv7neon-unknown-linux-gnueabihf"}),
            json!({"file": "diff-cbaef692b3958312e80fd5507a7e2aff071f1acb086f10e8a96bc06a7bb289db.patch"}),
            json!({"command": "du -sh /var/log && df -h # check disk-usage for task-runner-service-production"}),
            json!({"url": "https://github.com/rust-lang/rust/commit/da39a3ee5e6b4b0d3255bfef95601890afd80709"}),
            json!({"url": "https://example.com/search?page=2&sort=desc&q=rust+serde"}),
            json!({"code": "curl -H \"Authorization: Bearer $OPENAI_API_KEY\" https://api.openai.com/v1/models"}),
            json!({"code": "def login(password: str) -> bool:\n    token = get_token(password)\n    self.api_key = api_key\n    return check(token)"}),
            json!({"code": "use crate::token::Lexer;\nlet n = max_tokens: 512;"}),
            json!({"text": "max_tokens: 512, session: 3"}),
            json!({"yaml": "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n"}),
            json!({"when": "2024-01-15T10:30:00Z", "session": 3, "reset": false}),
            json!({"text": "The bearer of this letter is a friend. Tokens are counted per request."}),
            json!({"cmd": "git push -u origin main && sort -u names.txt"}),
            json!({"cmd": "pip install scikit-learn && python -m sk_helper --token-file ~/.tok"}),
            json!(["--password", "-", "short"]),
        ];
        assert!(corpus.len() >= 25);
        for v in corpus {
            let mut got = v.clone();
            let n = redact_value(&mut got);
            assert_eq!(got, v, "changed ({n} replacements)");
            assert_eq!(n, 0);
        }
    }

    #[test]
    fn key_names() {
        for k in [
            "token",
            "access_token",
            "refresh_token",
            "id_token",
            "auth_token",
            "session_token",
            "x-auth-token",
            "GITHUB_TOKEN",
            "csrftoken",
            "backend_token",
            "password",
            "Password2",
            "db.password",
            "newPassword",
            "passwd",
            "passphrase",
            "secret",
            "client_secret",
            "clientSecret",
            "secret_key",
            "secretValue",
            "secretvalue",
            "api_key",
            "API-KEY",
            "apiKey",
            "x-api-key",
            "Api.Key",
            "accessKey",
            "private_key",
            "privateKey",
            "Authorization",
            "proxy-authorization",
            "auth",
            "basic_auth",
            "X-Auth-Key",
            "cookie",
            "Set-Cookie",
            "sessionid",
            "session_key",
            "session_secret",
            "credential",
            "credentials",
            "AWS_SECRET_ACCESS_KEY",
            "password_confirmation",
            "auth_header",
            "headers[Authorization]",
        ] {
            assert!(is_secret_key(k), "{k} should be secret");
        }
        for k in [
            "max_tokens",
            "maxTokens",
            "tokens",
            "token_count",
            "num_tokens",
            "tokenizer",
            "token_type",
            "next_page_token",
            "nextPageToken",
            "eos_token",
            "code",
            "text",
            "query",
            "message",
            "session",
            "reset",
            "runtime",
            "author",
            "authority",
            "oauth",
            "keyboard",
            "key",
            "monkey",
            "secretary",
            "signature",
            "pin",
            "ssn",
            "password_hash",
            "password_file",
            "token_url",
            "xauthority",
            "",
            "__",
            "keys",
        ] {
            assert!(!is_secret_key(k), "{k} should not be secret");
        }
    }

    #[test]
    fn text_shapes() {
        let cases = [
            (
                "curl -H \"Authorization: Bearer abc.def\"",
                "curl -H \"Authorization: Bearer [REDACTED]\"",
            ),
            (
                "https://api.example.com/v1?api_key=XYZ&x=1",
                "https://api.example.com/v1?api_key=[REDACTED]&x=1",
            ),
            ("PASSWORD=hunter2 ./run", "PASSWORD=[REDACTED] ./run"),
            (
                "redis://:s3cret@cache:6379/0 and https://u:p4ss@h.example/x",
                "redis://:[REDACTED]@cache:6379/0 and https://u:[REDACTED]@h.example/x",
            ),
            (
                "{\\\"password\\\": \\\"abc def\\\", \\\"user\\\": \\\"bob\\\"}",
                "{\\\"password\\\": \\\"[REDACTED]\\\", \\\"user\\\": \\\"bob\\\"}",
            ),
            ("Cookie: a=1; b=2\nHost: x", "Cookie: [REDACTED]\nHost: x"),
            ("token = \"hardcoded-123\"", "token = \"[REDACTED]\""),
            ("password = hunter2", "password = [REDACTED]"),
            ("x AKIAIOSFODNN7EXAMPLE y", "x [REDACTED] y"),
            (
                "OPENAI_API_KEY=sk-abcDEF1234567890ghij",
                "OPENAI_API_KEY=[REDACTED]",
            ),
            (
                "a -----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY----- b",
                "a [REDACTED] b",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact_text(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(redact_text("short"), None);
        assert_eq!(redact_text("Authorization: Bearer [REDACTED]"), None);
        assert_eq!(redact_text("disk-usage-for-the-whole-cluster-1234"), None);
    }

    #[test]
    fn counts() {
        let mut v = json!({
            "password": "x1",
            "nested": [{"token": 5}, "Authorization: Bearer abcdef123456 and ghp_R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"],
        });
        assert_eq!(redact_value(&mut v), 4);
        assert_eq!(redact_value(&mut v), 0);
    }

    /// Inputs built to make a scanner backtrack end (their speed is the bench's business) and
    /// redacting the result again changes nothing.
    #[test]
    fn adversarial_inputs_finish_and_stay_redacted() {
        let patterns = [
            "eyJ.",
            "eyJhbGciOiJIUzI1.eyJ",
            "SG.",
            "password=${",
            "password=str[",
            "token: {",
            "://",
            "://a:b",
            "-----BEGIN ",
            "-----BEGIN PRIVATE KEY-----",
            "a:",
            "a=",
            "--password ",
            "-u a:",
            "Bearer ",
            "sk-",
            "AKIA",
            "\"password\": \"",
            "Cookie: ${",
            "A",
            "Ab1+",
            "x ",
            "=",
            ":",
            "-",
            "\\\"",
        ];
        for p in patterns {
            let text = p.repeat(200_000 / p.len());
            let once = redact_text(&text);
            if let Some(once) = once {
                assert_eq!(redact_text(&once), None, "{p:?}");
            }
        }
    }

    #[test]
    fn random_keys_are_caught() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabets: [&[u8]; 3] = [
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            b"abcdefghijklmnopqrstuvwxyz0123456789",
        ];
        for alphabet in alphabets {
            let trials = 1000;
            let caught = (0..trials)
                .filter(|_| {
                    let key: String = (0..40)
                        .map(|_| char::from(alphabet[(next() % alphabet.len() as u64) as usize]))
                        .collect();
                    redact_text(&format!("value {key} end")).is_some_and(|r| !r.contains(&key))
                })
                .count();
            assert!(caught * 100 >= trials * 97, "{caught}/{trials}");
        }
    }

    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("password=".to_string()),
            Just("Authorization: Bearer ".to_string()),
            Just("\"token\": \"".to_string()),
            Just("https://u:p@h/".to_string()),
            Just("://".to_string()),
            Just("-----BEGIN RSA PRIVATE KEY-----\n".to_string()),
            Just("-----END RSA PRIVATE KEY-----".to_string()),
            Just("eyJhbGciOiJIUzI1NiJ9.".to_string()),
            Just("ghp_".to_string()),
            Just("sk-".to_string()),
            Just("AKIA".to_string()),
            Just(REDACTED.to_string()),
            Just("--password ".to_string()),
            Just("-u ".to_string()),
            Just("$TOKEN".to_string()),
            Just("Cookie: ".to_string()),
            Just("\\\"".to_string()),
            "[ \n\"'=:@&,;/.\\\\-]{1,3}",
            "[A-Za-z0-9+/_=-]{1,48}",
            "[ -~]{0,12}",
            any::<String>().prop_map(|s| s.chars().take(8).collect()),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(fragment(), 0..12).prop_map(|v| v.concat())
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("password".to_string()),
            Just("api_key".to_string()),
            Just("code".to_string()),
            Just("session".to_string()),
            Just("args".to_string()),
            "[a-zA-Z_-]{0,12}",
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics(s in any::<String>()) {
            let _ = redact_text(&s);
            let _ = is_secret_key(&s);
        }

        #[test]
        fn text_is_idempotent(s in text()) {
            if let Some(once) = redact_text(&s) {
                prop_assert_eq!(redact_text(&once), None, "once = {:?}", once);
            }
        }

        #[test]
        fn value_is_idempotent(v in json_value()) {
            let mut once = v.clone();
            redact_value(&mut once);
            let mut twice = once.clone();
            let n = redact_value(&mut twice);
            prop_assert_eq!(&once, &twice);
            prop_assert_eq!(n, 0);
        }
    }

    /// `cargo test --release -- --ignored --nocapture bench` (see also `examples/bench.rs`).
    #[test]
    #[ignore]
    fn bench() {
        let (clean, bearer) = (bench_clean(), bench_bearer());
        for (name, v) in [("clean", clean), ("bearer", bearer)] {
            let iters = 200_000;
            let start = std::time::Instant::now();
            for _ in 0..iters {
                let mut c = std::hint::black_box(&v).clone();
                std::hint::black_box(redact_value(&mut c));
            }
            let per = start.elapsed().as_nanos() as f64 / f64::from(iters);
            println!("{name}: {per:.0} ns/call (clone included)");
        }
    }

    fn bench_clean() -> Value {
        json!({"runtime":"terminal","code":"cd /home/user/project && cargo build --release 2>&1 | tail -n 20","session":0,"reset":false,"description":"Build the project in release mode"})
    }

    fn bench_bearer() -> Value {
        json!({"runtime":"terminal","code":"curl -s -H \"Authorization: Bearer abcDEF123456ghiJKL\" https://api.example.com/v1/items?page=2","session":0,"reset":false})
    }
}
