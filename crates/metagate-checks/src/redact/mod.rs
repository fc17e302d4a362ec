//! Secret redaction for recorded tool-call arguments.
//!
//! Every tool call that metagate records goes through [`redact_value`] before it
//! is written to the telemetry store, so that no credential ever reaches the
//! database file. Two independent mechanisms are applied:
//!
//! 1. **Secret keys** (`classify_key`): under an object key that names a
//!    secret, the whole value (string, number, object, array) is replaced by
//!    [`REDACTED`]. `null`, `""` and booleans are left alone: they carry no
//!    secret, and keeping flags such as `"withCredentials": true` readable is
//!    useful.
//! 2. **Secrets inside strings** ([`redact_text`]): every string value, at any
//!    depth, is scanned and only the matched spans are replaced; the rest of
//!    the string is kept. An object key is rewritten only when it holds a
//!    secret itself (a token sent as an argument name): `[REDACTED]`, made
//!    unique again (`[REDACTED]#2`).
//!
//! As an extra, inside an array a string that is a secret command-line flag
//! (`"--password"`, `"--api-key"`, …) causes the *next* string item to be
//! redacted whole, and arrays that are a command line (`["mysql", "-pX"]`) are
//! read as one; and the `value` beside a `name` or `key` that names a secret is
//! redacted whole (`{"name": "DB_PASSWORD", "value": "…"}`).
//!
//! The scanner is hand-written, works on bytes, does linear passes over each
//! string of at least `MIN_SCAN_LEN` bytes, and does not allocate when nothing
//! is found. Beside it run gitleaks' maintained rules, read as data
//! (`third_party/gitleaks/gitleaks.toml`, see `gitleaks.rs`): each rule's regex runs only on texts
//! that hold one of its keywords. See the documentation of [`redact_text`] for
//! the exact text rules and thresholds.
//!
//! Redaction is idempotent: `[REDACTED]` is never matched again, and
//! [`redact_text`] re-scans its own output (only when it changed something)
//! until nothing more is found.

use serde_json::Value;

use key_names::{KeyKind, classify_key};
use spans::redact_text_counted;
use values::{redact_array, redact_for_kind, redact_object, redact_string, redact_whole};

/// The replacement for every redacted span or value.
pub const REDACTED: &str = "[REDACTED]";
const REDACTED_B: &[u8] = REDACTED.as_bytes();

/// Strings shorter than this (in bytes) are not scanned by [`redact_text`].
const MIN_SCAN_LEN: usize = 8;
/// Minimum length of a token-character run considered by the entropy rule.
const ENTROPY_MIN_LEN: usize = 32;
/// Minimum Shannon entropy (bits per character) of a run flagged by the entropy rule.
const ENTROPY_MIN_BITS: f64 = 3.5;
/// A run is considered made of words (not random) when at least this
/// percentage of its adjacent letter pairs are common English/code bigrams.
const BIGRAM_MAX_PERCENT: u32 = 45;
/// Minimum number of body characters after a well-known key prefix.
const PREFIX_MIN_BODY: usize = 16;

/// Longest key looked back for in free text (`KEY=value`).
const MAX_TEXT_KEY_LEN: usize = 64;

mod bytes;
mod commands;
mod database;
mod entropy;
mod flags;
mod gitleaks;
mod key_names;
mod key_values;
mod prose;
mod spans;
mod structured;
mod tokens;
mod urls;
mod values;
mod xml;

#[cfg(test)]
mod tests;

/// Replaces secrets in `value` in place; returns how many replacements were made.
///
/// * Object entries whose key names a secret (`classify_key`) have their whole value
///   replaced by `"[REDACTED]"` (one replacement), unless the value is `null`,
///   `""`, a boolean, or already `"[REDACTED]"`; under `pass` and `pwd`, which are
///   also everyday words, a number or a path is kept too.
/// * The `value` of an object whose `name` or `key` names a secret is redacted
///   whole: `{"name": "DB_PASSWORD", "value": "…"}` (Kubernetes env entries, HAR
///   and Postman headers, .NET settings).
/// * Every other string (object values and array items, at any depth) goes
///   through [`redact_text`]; each redacted span counts as one replacement.
/// * In an array, the string following a secret flag item such as
///   `"--password"` or `"--api-key"` is redacted whole.
/// * Object keys holding a secret are redacted (made unique again); other keys,
///   numbers, booleans and nulls outside secret keys are kept.
pub fn redact_value(value: &mut Value) -> usize {
    match value {
        Value::String(s) => redact_string(s),
        Value::Array(items) => redact_array(items),
        Value::Object(map) => redact_object(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Redacts a value that was found at `path`, a JSON pointer into a call's arguments
/// (`/db/password`), as [`redact_value`] would have redacted it in place: whole when a
/// segment of the path names a secret, else its secrets only. For values taken out of their
/// object, such as the `from` and `to` of a correction.
pub fn redact_at_path(path: &str, value: &mut Value) -> usize {
    let mut last = KeyKind::Plain;
    for segment in path.split('/') {
        last = classify_key(segment.as_bytes());
        if matches!(last, KeyKind::Secret | KeyKind::Header) {
            return redact_whole(value);
        }
    }
    redact_for_kind(last, value)
}

/// Redacts secrets inside one free-text string (a shell command, a header line,
/// a URL…), returning `None` when nothing was found (so callers avoid an
/// allocation). Strings shorter than `MIN_SCAN_LEN` bytes are not scanned.
///
/// Each matched span is replaced by `[REDACTED]`; overlapping or touching
/// spans are merged. Rules (first pass, structured):
///
/// * **`key=value` / `key: value`** where `key` (a run of `[A-Za-z0-9_.-]`,
///   optionally in quotes) names a secret (`classify_key`): URL query strings
///   (`?api_key=XYZ&x=1`), env assignments (`PASSWORD=hunter2 ./run`,
///   `export GITHUB_TOKEN=…`), headers (`X-Api-Key: …`), YAML, and JSON-ish
///   `"password": "…"` (also with `\"` escapes). Only the value is replaced.
///   A quoted value runs to its closing quote (or end of line); an unquoted
///   one to whitespace or one of ``" ' ` , ; ) } \`` (after `=` also
///   `& ( | < >`, for query strings and shell commands, except after an
///   option: `--password=a&b` is redacted whole). For
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
///   user names are handled by the userinfo rule). The keys `pass` and `pwd`
///   alone keep a number, a path, a backquoted command or their own name
///   (`PWD=/home/bob`, `pass: 3`), and `pass:` counts only where a key can
///   start (a line, a quote), not in prose ("nothing to pass: {}"). A `value`
///   key counts when a `name` or `key` naming a secret comes just before it
///   (`- name: DB_PASSWORD` / `value: …`, `<add key="ApiKey" value="…"/>`), and
///   in a URL query `sig=`, `signature=` and `X-Amz-Signature=` count too.
/// * **XML elements** whose name names a secret, closed right after their text:
///   `<password>…</password>`, `<db:apiKey><![CDATA[…]]></db:apiKey>`.
/// * **`--secret-flag value`** (`--password hunter2`, `--token "x"`), and
///   **`-u`/`--user user:password`** (curl): the value / the password part.
/// * **Password options of known commands**, after the command in the same
///   simple command (quotes do not end it, so `bash -c "mysql -pX"` counts):
///   `mysql -pX`, `sshpass -p X`, `docker login -p X`, `redis-cli -a X`,
///   `zip -P X`, `7z -pX`, `ldapsearch -w X`, `smbclient -U user%X`,
///   `mongosh -p X`, `sqlcmd -P X`, `plink -pw X`, `keytool -storepass X`,
///   `openssl -passin pass:X`, `ssh-keygen -N X`, `xfreerdp /p:X`,
///   `lftp -u user,X`, `snmpwalk -A X -X Y`, `sqlplus user/X@db` (the table
///   is in `commands.rs`).
/// * **URL userinfo** `scheme://user:password@host` → the password part.
/// * **PEM private keys**: from `-----BEGIN … PRIVATE KEY-----` through the
///   matching `-----END … PRIVATE KEY-----`, or to the end of the string.
/// * **JWTs**: `eyJ` at a token boundary, then base64url segments joined by at
///   least two dots (first segment ≥ 10 characters, second ≥ 2).
/// * **`Bearer <token>`** anywhere: token of ≥ 8 `[A-Za-z0-9._~+/=-]`
///   characters containing a digit.
/// * **Secrets told in prose**: `my password is hunter2`, and a word naming a
///   secret followed by one that looks like a password (`use password
///   Hn7tQ2zX`: 6 bytes or more, a letter and a digit or a symbol, not a path,
///   file name, version or markup).
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
/// * length ≥ `ENTROPY_MIN_LEN` (32);
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
/// * fewer than `BIGRAM_MAX_PERCENT` (45 %) of its adjacent letter pairs
///   are among the 128 most common bigrams of English/code words (≈ 75 % of
///   bigrams in identifiers and prose, ≈ 19 % in random text). This is what
///   rejects long identifiers and paths (`this_is_a_very_long_snake_case…`,
///   `/usr/lib/x86_64-linux-gnu/…`, `getUserAccountSettings…`), whose entropy
///   (4.0–4.3 bits) overlaps with that of random 32-character keys;
/// * Shannon entropy ≥ `ENTROPY_MIN_BITS` (3.5 bits/char; rejects digit
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
///
/// Last (**gitleaks' rules**): each of gitleaks' rules whose keywords occur in
/// the text runs its regex; its secret (first capture group) is redacted unless
/// its entropy is at or under the rule's threshold or an allowlist accepts it.
pub fn redact_text(text: &str) -> Option<String> {
    redact_text_counted(text).map(|(redacted, _)| redacted)
}
