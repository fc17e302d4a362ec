//! Secrets in URL userinfo: `scheme://user:password@host`, a password holding `/`, `?` or
//! `#` (which a URL parser reads as the end of the authority, but `git`, `curl` and a person
//! pasting a URL mean as the password), and a token given as the user name
//! (`https://8f3a9c2d7e1b4a6f9c0d@api.example.com`).

use super::REDACTED_B;
use super::key_values::is_placeholder;

/// A user name this long, of token characters with a letter and a digit, is a token: user
/// names are words, tokens are not.
const TOKEN_USER_MIN: usize = 16;

/// The userinfo secret of a URL; `s` is the index just after `://`.
pub(super) fn userinfo_at(b: &[u8], s: usize) -> Option<(usize, usize)> {
    let mut last_at = None;
    let mut k = s;
    while k < b.len() && !ends_url(b[k]) && !matches!(b[k], b'/' | b'?' | b'#') {
        if b[k] == b'@' {
            last_at = Some(k);
        }
        k += 1;
    }
    let Some(at) = last_at else {
        return wide_password_at(b, s, k);
    };
    let colon = b[s..at].iter().position(|&c| c == b':').map(|p| s + p);
    let user = &b[s..colon.unwrap_or(at)];
    if token_like(user) {
        return Some((s, at));
    }
    let colon = colon?;
    let pw = &b[colon + 1..at];
    if pw.is_empty() || pw.starts_with(REDACTED_B) || is_placeholder(pw) {
        return None;
    }
    Some((colon + 1, at))
}

/// Bytes no URL in a text holds: where one ends.
fn ends_url(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\' | b'{' | b'}' | b'|' | b'^'
        )
}

/// `user:pass/wo?rd#x@host`: a password running past the first `/`, `?` or `#` (at `stop`)
/// to an `@` before a host name. Not when what follows the colon up to `stop` is a port.
fn wide_password_at(b: &[u8], s: usize, stop: usize) -> Option<(usize, usize)> {
    let colon = s + b[s..stop].iter().position(|&c| c == b':')?;
    let user = &b[s..colon];
    if user.is_empty() || !user.iter().all(|&c| is_user_byte(c)) {
        return None;
    }
    if b[colon + 1..stop].iter().all(u8::is_ascii_digit) {
        return None; // `host:8080/path@…`: a port, then a path
    }
    let end = (stop..b.len()).find(|&k| ends_url(b[k])).unwrap_or(b.len());
    let at = (stop..end).find(|&k| b[k] == b'@' && host_at(&b[k + 1..end]))?;
    let pw = &b[colon + 1..at];
    (!pw.starts_with(REDACTED_B) && !is_placeholder(pw)).then_some((colon + 1, at))
}

/// Whether `rest` starts with a host name: letters, digits, `-` and at least one `.`, or
/// `localhost`, up to a port, a path or the end.
fn host_at(rest: &[u8]) -> bool {
    let len = rest
        .iter()
        .position(|&c| matches!(c, b':' | b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let host = &rest[..len];
    host == b"localhost"
        || (host.len() >= 3
            && host.contains(&b'.')
            && host.first().is_some_and(u8::is_ascii_alphanumeric)
            && host
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.'))
}

fn is_user_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"._~%!$&()*+,;=-".contains(&c)
}

/// A user name that is a token: long, of token characters, with a letter and a digit.
fn token_like(user: &[u8]) -> bool {
    user.len() >= TOKEN_USER_MIN
        && user
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        && user.iter().any(u8::is_ascii_digit)
        && user.iter().any(u8::is_ascii_alphabetic)
        && !user.starts_with(REDACTED_B)
}

#[cfg(test)]
mod tests {
    use crate::redact::{redact_text, redact_value};
    use serde_json::json;

    #[test]
    fn userinfo_placements() {
        for (text, want) in [
            (
                "git clone https://deploy:Vq8#rT2mZ9x@git.example.com/org/app.git",
                Some("git clone https://deploy:[REDACTED]@git.example.com/org/app.git"),
            ),
            (
                "https://ci:Kp3/wQ9xZ7m@git.example.com/x",
                Some("https://ci:[REDACTED]@git.example.com/x"),
            ),
            (
                "curl https://bot:Tn5?bY8kR2p@registry.example.com/v2/",
                Some("curl https://bot:[REDACTED]@registry.example.com/v2/"),
            ),
            (
                "curl https://8f3a9c2d7e1b4a6f9c0d@api.example.com",
                Some("curl https://[REDACTED]@api.example.com"),
            ),
            (
                "https://8f3a9c2d7e1b4a6f9c0d:x-oauth-basic@github.com/o/r",
                Some("https://[REDACTED]@github.com/o/r"),
            ),
            // Ordinary URLs of the same shapes.
            ("https://example.com:8443/users/@me", None),
            ("see https://medium.com/@someone/a-post-1234", None),
            ("ssh://git@github.com/org/repo.git", None),
            ("https://alice@example.com/path", None),
            ("https://deploy-bot@git.example.com/org/app.git", None),
            ("http://localhost:8080/api?user=@me", None),
            ("https://host:abc/x", None),
        ] {
            assert_eq!(redact_text(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn a_secret_key_is_redacted_and_kept_unique() {
        let token = "ghp_Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Df3Gh5";
        let other = "ghp_Zx9Cv8Bn7Mq6Wl5Er4Ty3Ui2Op1As0Df9Gh8";
        let mut v = json!({"code": "ls", token: "x", other: "y", "[REDACTED]": "z"});
        assert!(redact_value(&mut v) >= 2);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 4, "{v}");
        assert!(!v.to_string().contains("ghp_"), "{v}");
        assert_eq!(v["code"], "ls");
        let mut plain = json!({"runtime": "terminal", "description_of_the_task": "x"});
        assert_eq!(redact_value(&mut plain), 0);
    }
}
