//! `key=value`, `key: value` and `"key": "value"` where the key names a secret, and what
//! follows such a key without being a secret (placeholders, type names, code).

use super::bytes::{is_key_byte, is_value_stop, scan_while};
use super::key_names::{KeyKind, classify_key};
use super::{MAX_TEXT_KEY_LEN, REDACTED_B};

/// What a structured rule found at a position.
#[derive(Clone, Copy, Debug)]
pub(super) enum Hit {
    /// Redact `b[.0...1]`.
    Redact(usize, usize),
    /// A value was read up to here and is not a secret: key rules stay quiet until there.
    Skip(usize),
}

impl Hit {
    pub(super) fn redact((start, end): (usize, usize)) -> Self {
        Hit::Redact(start, end)
    }
}

#[derive(Clone, Copy)]
pub(super) struct ValueCtx<'a> {
    /// The key was quoted (`"token": …`): JSON or a dict literal.
    pub(super) key_quoted: bool,
    /// `key = value` with spaces, or `key := value`: probably code.
    pub(super) code_assign: bool,
    /// What the key names; a `Header` value runs to the end of the line when unquoted.
    pub(super) kind: KeyKind,
    /// `key=value`: an unquoted value also ends at `& ( < > |` (query strings, shell).
    pub(super) assignment: bool,
    /// `?key=value` or `&key=value`: a URL query or form body, where an `&` always ends the
    /// value (one inside it is written `%26`).
    pub(super) query: bool,
    /// `--password=value`: a command-line option, whose unquoted value is the rest of the word
    /// (`&` included: it is part of a password more often than a shell operator there).
    pub(super) option: bool,
    pub(super) key: &'a [u8],
}

/// How far before a `value` key the `name` or `key` beside it is looked for.
const PAIR_LOOKBACK: usize = 256;

/// `sep` is the index of a `=` or `:`.
pub(super) fn key_value_at(b: &[u8], sep: usize) -> Option<Hit> {
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
    let kind = match classify_key(key) {
        KeyKind::Secret if is_type_name_pass(key) => KeyKind::Ambiguous,
        KeyKind::Plain if key.eq_ignore_ascii_case(b"value") => named_pair_kind_before(b, j),
        KeyKind::Plain if b[sep] == b'=' && j > 0 && matches!(b[j - 1], b'?' | b'&') => {
            query_key_kind(key)
        }
        kind => kind,
    };
    if kind == KeyKind::Plain || value_start > n {
        return None;
    }
    // "Nothing to pass: {}", "the out-of-band pass: `evaluate`": in prose `pass:` is English.
    // As a key it is quoted (JSON), starts its line (YAML, headers) or a quoted argument
    // (`curl -H "X-DB-Pass: …"`).
    if kind == KeyKind::Ambiguous
        && b[sep] == b':'
        && quotes == 0
        && !starts_line(b, j)
        && !(j > 0 && matches!(b[j - 1], b'"' | b'\''))
    {
        return None;
    }
    parse_value(
        b,
        value_start,
        ValueCtx {
            key_quoted: quotes > 0,
            code_assign,
            kind,
            assignment: b[sep] == b'=',
            query: j > 0 && matches!(b[j - 1], b'?' | b'&'),
            option: b[sep] == b'=' && key[0] == b'-',
            key,
        },
    )
}

/// `LoopPass`, `StripSymbolsPass`: in text a capitalized name ending in `Pass` is usually a
/// type (`struct StripSymbolsPass : PassInfoMixin<…>`, `Pass *ResultPass = nullptr`), so it
/// is read as `pass` alone is: a number, a path or code under it is kept.
fn is_type_name_pass(key: &[u8]) -> bool {
    key.len() > 4
        && key[0].is_ascii_uppercase()
        && key.ends_with(b"Pass")
        && key[key.len() - 5].is_ascii_lowercase()
        && key.iter().all(u8::is_ascii_alphanumeric)
}

/// Only indentation or a YAML list dash is between the start of `b[at]`'s line and `at`.
fn starts_line(b: &[u8], at: usize) -> bool {
    b[..at]
        .iter()
        .rev()
        .take_while(|&&c| c != b'\n' && c != b'\r')
        .all(|&c| matches!(c, b' ' | b'\t' | b'-'))
}

/// A URL query parameter that carries a signature rather than naming a secret: `sig=`
/// (Azure shared access signatures), `signature=`, `X-Amz-Signature=`, `X-Goog-Signature=`.
/// Anyone holding the URL holds the access it grants.
fn query_key_kind(key: &[u8]) -> KeyKind {
    let signature = b"signature";
    let ends_signature = key.len() >= signature.len()
        && key[key.len() - signature.len()..].eq_ignore_ascii_case(signature);
    if key.eq_ignore_ascii_case(b"sig") || ends_signature {
        KeyKind::Secret
    } else {
        KeyKind::Plain
    }
}

/// The kind of the secret a `value` key holds when the `name` or `key` just before it names
/// one, in text: `- name: DB_PASSWORD` / `value: …` (Kubernetes), `<add key="ApiKey"
/// value="…"/>` (.NET settings), `{"name": "X-Api-Key", "value": "…"}` (HAR headers). The
/// last such name within [`PAIR_LOOKBACK`] bytes before `key_start` counts.
fn named_pair_kind_before(b: &[u8], key_start: usize) -> KeyKind {
    let from = key_start.saturating_sub(PAIR_LOOKBACK);
    let mut kind = KeyKind::Plain;
    let mut i = from;
    while i < key_start {
        let at_word = i == 0 || !is_key_byte(b[i - 1]);
        let word_end = if !at_word {
            None
        } else if b[i..key_start].len() >= 4 && b[i..i + 4].eq_ignore_ascii_case(b"name") {
            Some(i + 4)
        } else if b[i..key_start].len() >= 3 && b[i..i + 3].eq_ignore_ascii_case(b"key") {
            Some(i + 3)
        } else {
            None
        };
        let Some(word_end) = word_end.filter(|&e| e < key_start && !is_key_byte(b[e])) else {
            i += 1;
            continue;
        };
        let k = scan_while(b, word_end, |c| matches!(c, b'"' | b'\'' | b'\\' | b' '));
        if k < key_start && matches!(b[k], b'=' | b':') {
            let vs = scan_while(b, k + 1, |c| matches!(c, b'"' | b'\'' | b'\\' | b' '));
            let ve = scan_while(b, vs, is_key_byte).min(key_start);
            if ve > vs {
                kind = classify_key(&b[vs..ve]);
            }
        }
        i = word_end;
    }
    kind
}

/// Parses the value of a secret key starting at `start` (spaces allowed):
/// the span to redact, or how far to skip when the value was read but is not
/// a secret (so that a long non-secret value is never re-scanned).
pub(super) fn parse_value(b: &[u8], start: usize, ctx: ValueCtx<'_>) -> Option<Hit> {
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
        None if ctx.kind == KeyKind::Header => scan_while(b, cs, |c| {
            !matches!(c, b'\n' | b'\r' | b'"' | b'\'' | b'`' | b'\\')
        }),
        None if ctx.option => scan_while(b, cs, |c| {
            !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'' | b'`' | b'\\')
        }),
        None if ctx.assignment => assignment_end(b, cs, ctx.query),
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
        || (ctx.kind == KeyKind::Ambiguous
            && (is_number_or_path(v) || quote == Some(b'`') || names_key(v, ctx.key)))
        || (quote.is_none()
            && !scheme
            && (is_code_word(v)
                || b.get(end) == Some(&b'(')
                // `pass = resolver->find(…)`: a member access.
                || (v.ends_with(b"-") && b.get(end) == Some(&b'>'))
                || (ctx.code_assign
                    && (v.contains(&b'.') || v.contains(&b'[') || names_key(v, ctx.key)))));
    Some(if not_secret {
        Hit::Skip(end)
    } else {
        Hit::Redact(cs, end)
    })
}

/// End of an unquoted `key=value` value starting at `from`. Outside a URL query an `&` is
/// part of the value (`DB_PASSWORD=Nb7p&Y@b3vDDAYBE`) unless it reads as a shell operator
/// (`&&`, `& ` or a last `&`) or starts the next pair of a form body (`pw=x&user=bob`).
fn assignment_end(b: &[u8], from: usize, query: bool) -> usize {
    let mut end = scan_while(b, from, |c| !is_value_stop(c));
    while !query && b.get(end) == Some(&b'&') {
        let next = end + 1;
        let key_end = scan_while(b, next, is_key_byte);
        let ends = b
            .get(next)
            .is_none_or(|&c| c == b'&' || c.is_ascii_whitespace());
        if ends || (key_end > next && b.get(key_end) == Some(&b'=')) {
            break;
        }
        end = scan_while(b, next, |c| !is_value_stop(c));
    }
    end
}

/// End of a quoted value whose content starts at `from`.
pub(super) fn quoted_end(b: &[u8], from: usize, q: u8, escaped: bool) -> usize {
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
pub(super) fn is_placeholder(v: &[u8]) -> bool {
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

/// A number (`pass: 12`, tests that passed) or a path (`PWD=/home/bob`, the shell's working
/// directory): what the everyday words `pass` and `pwd` usually hold.
pub(super) fn is_number_or_path(v: &[u8]) -> bool {
    (!v.is_empty() && v.iter().all(u8::is_ascii_digit))
        || v.starts_with(b"/")
        || v.starts_with(b"~")
        || v.starts_with(b"./")
        || v.starts_with(b"../")
}

/// Type names and literals that follow a secret-named variable in code.
const CODE_WORDS: &[&[u8]] = &[
    b"none",
    b"null",
    b"nil",
    b"true",
    b"false",
    b"undefined",
    b"nullptr",
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
pub(super) fn names_key(v: &[u8], key: &[u8]) -> bool {
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
