//! Who an HTTP request is, and whether its origin may call: a bearer token the policy maps to
//! a caller (by the token's SHA-256, so no token is written in the policy), or, when the policy
//! allows it, nobody from a loopback address; a browser's `Origin` must be a loopback one or
//! one the policy lists (the DNS-rebinding check the Streamable HTTP transport requires).

use std::net::IpAddr;

use metagate_core::policy::mcp::McpRules;
use sha2::{Digest, Sha256};

/// Why a request is refused before it reaches a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 401: no token, or one the policy does not know.
    Unauthenticated(&'static str),
    /// 403: a browser origin that may not call.
    Origin(String),
}

/// The caller of a request with `authorization` (the header's value) from `peer`; `fallback`
/// is the caller of an unauthenticated loopback request (`--caller`).
pub fn caller(
    rules: &McpRules,
    authorization: Option<&[u8]>,
    peer: IpAddr,
    fallback: Option<&str>,
) -> Result<Option<String>, Refusal> {
    let Some(value) = authorization else {
        if rules.unauthenticated_loopback && is_loopback(peer) {
            return Ok(fallback.map(str::to_string));
        }
        return Err(Refusal::Unauthenticated("a bearer token is required"));
    };
    let token = value
        .strip_prefix(b"Bearer ")
        .or_else(|| value.strip_prefix(b"bearer "))
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
        .ok_or(Refusal::Unauthenticated(
            "the Authorization header is not a bearer token",
        ))?;
    let hash: [u8; 32] = Sha256::digest(token).into();
    // Hashes are compared, never tokens: how long a comparison takes says nothing of a token.
    rules
        .tokens
        .iter()
        .find(|(known, _)| *known == hash)
        .map(|(_, caller)| Some(caller.clone()))
        .ok_or(Refusal::Unauthenticated("the bearer token is not known"))
}

/// Whether a request with `origin` (the header's value) may call: no `Origin` (not a
/// browser), a loopback origin, or one the policy lists.
pub fn origin_allowed(rules: &McpRules, origin: Option<&[u8]>) -> Result<(), Refusal> {
    let Some(origin) = origin else { return Ok(()) };
    let text = std::str::from_utf8(origin)
        .map_err(|_| Refusal::Origin("the Origin header is not text".into()))?
        .trim()
        .trim_end_matches('/')
        .to_ascii_lowercase();
    if rules.origins.contains(&text) || loopback_origin(&text) {
        return Ok(());
    }
    Err(Refusal::Origin(format!(
        "the origin {text:?} may not call this server ([mcp] origins lists those that may)"
    )))
}

fn loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    if rest.contains(['/', '@', '?', '#']) {
        return false;
    }
    let host = match rest.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((host, port)) if port.is_empty() || port.starts_with(':') => host,
            _ => return false,
        },
        None => rest.split(':').next().unwrap_or(rest),
    };
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(is_loopback)
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(loopback: bool) -> McpRules {
        McpRules {
            tokens: vec![(Sha256::digest(b"s3cret").into(), "alice".into())],
            unauthenticated_loopback: loopback,
            origins: vec!["https://app.example".into()],
            sampling: true,
        }
    }

    #[test]
    fn a_known_token_names_its_caller_and_nothing_else_passes() {
        let here: IpAddr = "127.0.0.1".parse().unwrap();
        let far: IpAddr = "192.0.2.7".parse().unwrap();
        let r = rules(false);
        assert_eq!(
            caller(&r, Some(b"Bearer s3cret"), far, None),
            Ok(Some("alice".into()))
        );
        for bad in [&b"Bearer s3cre"[..], b"Bearer ", b"Basic s3cret", b"s3cret"] {
            assert!(caller(&r, Some(bad), here, None).is_err(), "{bad:?}");
        }
        assert!(caller(&r, None, here, None).is_err());
        let open = rules(true);
        assert_eq!(caller(&open, None, here, Some("me")), Ok(Some("me".into())));
        assert!(caller(&open, None, far, Some("me")).is_err());
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(caller(&open, None, mapped, None).is_ok());
    }

    #[test]
    fn origins_are_loopback_or_listed() {
        let r = rules(false);
        for ok in [
            None,
            Some(&b"http://localhost:6274"[..]),
            Some(b"http://127.0.0.1"),
            Some(b"http://[::1]:8080"),
            Some(b"https://APP.example/"),
        ] {
            assert!(origin_allowed(&r, ok).is_ok(), "{ok:?}");
        }
        for bad in [
            &b"https://evil.example"[..],
            b"http://localhost.evil.example",
            b"http://127.0.0.1.evil.example",
            b"http://localhost@evil.example",
            b"null",
            b"http://[::1].evil",
        ] {
            assert!(origin_allowed(&r, Some(bad)).is_err(), "{bad:?}");
        }
    }
}
