//! Whether a key names a secret (`api_key`, `X-Auth-Token`, `Set-Cookie`), and of which kind.

use super::bytes::has_at;

/// Longest normalized key `classify_key` will consider; longer keys are not secret keys.
const MAX_KEY_LEN: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum KeyKind {
    /// Not a secret.
    Plain,
    /// A secret; in text its value ends at the usual value delimiters.
    Secret,
    /// `authorization` / `cookie`: a header whose unquoted value runs to the end of the line.
    Header,
    /// `pass` / `pwd`: a password, but also an everyday word (a test count, the shell's working
    /// directory), so a value that is a number or a path is kept.
    Ambiguous,
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

/// Every secret word of `classify_key` contains one of these trigrams
/// (`tok`en, `pas`sword/`pas`swd/`pas`sphrase/`pas`s, se`cre`t/`cre`dential, api`key`,
/// `ses`sionid/`ses`sid, `aut`h/`aut`horization, c`ook`ie, `pwd`): keys without any
/// are rejected after one pass.
const SECRET_TRIGRAMS: [u32; 8] = [
    trigram(b"tok"),
    trigram(b"pas"),
    trigram(b"cre"),
    trigram(b"key"),
    trigram(b"ses"),
    trigram(b"aut"),
    trigram(b"ook"),
    trigram(b"pwd"),
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

/// Whether, and how, an object key names a secret: `Plain` when it does not.
///
/// The key is normalized: ASCII letters are lowercased, every ASCII character
/// that is not a letter or digit is dropped (this covers `_ - . space`, and
/// also `: / [ ] $ @`), and trailing digits are dropped (`password2`).
/// Component boundaries (a dropped separator, or a lower-case → upper-case
/// camelCase step) are remembered for the few rules that need them. Keys whose
/// normalized form is longer than 128 bytes are never secret keys.
///
/// The normalized key `k` names a secret (`Secret`, or `Header` for
/// `authorization`/`cookie`) when `k`, or `k` minus one trailing
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
/// `pass` and `pwd` as the whole key are `Ambiguous`: everyday words too, so a
/// number or a path under them is kept (`{"pass": 12}`, `PWD=/home/bob`). As the
/// last component of a longer key (`db_pass`, `MYSQL_PWD`) they are `Secret`, and
/// so is `sshpass`.
///
/// Deliberately **not** secret keys: plain `key` (dict/memory keys), `session`
/// (an integer in Agent Zero), `author`, `authority`, `oauth`, `secretary`,
/// `keyboard`, `monkey`, `tokens`, `max_tokens`, `token_count`, `tokenizer`,
/// `token_type`, `password_hash`, `password_file`, `token_url`, `signature`,
/// `pin`, `ssn`, `code`, `text`, `query`, `message`, `reset`, `runtime`.
pub(super) fn classify_key(key: &[u8]) -> KeyKind {
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
    if SECRET_SUFFIXES.iter().any(|s| ends_with(c, s)) || c == b"sshpass" {
        return KeyKind::Secret;
    }
    // Alone, `pass` and `pwd` may be a count of passed tests or the working directory; as the
    // last component of a longer key (`db_pass`, `MYSQL_PWD`, but not `bypass`, `compass` or
    // `OLDPWD`) they name a password.
    if c == b"pass" || c == b"pwd" {
        return KeyKind::Ambiguous;
    }
    let last_component = |word: &[u8]| {
        ends_with(c, word) && c.len() > word.len() && bit(bounds, c.len() - word.len())
    };
    if last_component(b"pass") || last_component(b"pwd") {
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
