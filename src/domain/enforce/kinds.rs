//! Checks an argument's `kind` switches on: `path`, `shell`, `url`, `regex`, `git_ref`.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::Value;

use super::{Checker, blocked, internal};
use crate::checks::path::{self, Fs};
use crate::domain::error::{Category, ToolError};
use crate::domain::policy::{ArgKind, Policy};
use crate::shellcheck;
use crate::wire::args::ArgValue;

/// Checks every string the argument holds: a string, or every string inside an array or an
/// object, however deep (see [`texts`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn check(
    checker: &Checker,
    policy: &Policy,
    tool: &str,
    name: &str,
    kind: ArgKind,
    value: &ArgValue<'_>,
    fs: &dyn Fs,
    note: &mut dyn FnMut(std::fmt::Arguments<'_>),
) -> Result<(), Box<ToolError>> {
    // Most arguments are one string, read without building a JSON value (or a list).
    let one;
    let single: [&str; 1];
    let whole;
    let held: Vec<Cow<'_, str>>;
    let listed: Vec<&str>;
    let strings: &[&str] = match value.as_str() {
        Some(s) => {
            one = s;
            single = [&*one];
            &single
        }
        None => {
            whole = value.to_value();
            held = texts(&whole);
            listed = held.iter().map(|s| &**s).collect();
            &listed
        }
    };
    for &s in strings {
        match kind {
            ArgKind::Path => {
                let rules = match checker.paths(fs) {
                    Ok(r) => r,
                    Err(e) => return internal(policy, tool, e),
                };
                match path::check(s, rules, fs) {
                    Ok(relative) if checker.is_protected(&relative, fs) => {
                        let rule = "metagate's own files are protected";
                        note(format_args!("{name} (path): {s:?} refused: {rule}"));
                        return Err(Box::new(
                            blocked(
                                tool,
                                refused(name, "path", s, rule),
                                "Leave metagate's policy file and telemetry store alone"
                                    .to_string(),
                                rule,
                            )
                            .detail("argument", name),
                        ));
                    }
                    Ok(relative) => note(format_args!(
                        "{name} (path): {s:?} resolves to {relative:?} inside the root"
                    )),
                    Err(e) => {
                        let rule = e.rule();
                        note(format_args!("{name} (path): {s:?} refused: {rule}"));
                        return Err(Box::new(
                            blocked(
                                tool,
                                refused(name, "path", s, &rule),
                                {
                                    let mut text =
                                        String::with_capacity(rules.root().as_os_str().len() + 48);
                                    text.push_str("Use a path inside ");
                                    path::push_path(&mut text, rules.root());
                                    text.push_str(" that no deny rule matches");
                                    text
                                },
                                &rule,
                            )
                            .detail("argument", name),
                        ));
                    }
                }
            }
            ArgKind::Shell => match shellcheck::check(s, &checker.shell_rules()) {
                None => note(format_args!("{name} (shell): passes")),
                Some(finding) => {
                    let rule = finding.rule();
                    note(format_args!("{name} (shell): refused: {rule}"));
                    return Err(Box::new(blocked(
                            tool,
                            [name, ": the command is refused: ", &rule].concat(),
                            "Rewrite the command without it; run the steps as separate plain commands".to_string(),
                            &rule,
                        )
                        .detail("argument", name)));
                }
            },
            ArgKind::Url => {
                let rules = &policy.rules.urls;
                let verdict = match url_host(s) {
                    Err(e) => Err(e),
                    Ok((scheme, host)) => {
                        if !rules.schemes.is_empty() && !rules.schemes.iter().any(|s| *s == scheme)
                        {
                            // `url_host` admits only ASCII letters, digits, `+-.` in schemes.
                            let mut rule = String::from("scheme \"");
                            rule.push_str(&scheme);
                            rule.push_str("\" is not allowed (urls.schemes: ");
                            rule.push_str(&rules.schemes.join(", "));
                            rule.push(')');
                            Err(rule)
                        } else if let Some(p) = rules.deny_hosts.iter().find(|p| p.matches(&host)) {
                            Err(format!("host {host} is denied (urls.deny_hosts: {})", p.0))
                        } else if !rules.hosts.is_empty()
                            && !rules.hosts.iter().any(|p| p.matches(&host))
                        {
                            Err(format!("host {host} is not in urls.hosts"))
                        } else {
                            Ok(host)
                        }
                    }
                };
                match verdict {
                    Ok(host) => note(format_args!("{name} (url): host {host} allowed")),
                    Err(rule) => {
                        note(format_args!("{name} (url): refused: {rule}"));
                        return Err(Box::new(
                            blocked(
                                tool,
                                refused(name, "URL", s, &rule),
                                "Use a URL the policy allows".to_string(),
                                &rule,
                            )
                            .detail("argument", name),
                        ));
                    }
                }
            }
            ArgKind::Regex => match regex::RegexBuilder::new(s).size_limit(1 << 20).build() {
                Ok(_) => note(format_args!("{name} (regex): compiles")),
                Err(e) => {
                    let first = e
                        .to_string()
                        .lines()
                        .last()
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                    note(format_args!("{name} (regex): does not compile: {first}"));
                    return Err(Box::new(ToolError::new(
                        Category::InvalidParameters,
                        format!("{name} is not a valid regular expression: {first}"),
                    )
                    .tool(tool)
                    .suggest(format!("Send {name} as a valid regular expression (escape special characters with \\\\)"))
                    .detail("argument", name)));
                }
            },
            ArgKind::GitRef => {
                match git_ref_problem(s) {
                    None => note(format_args!("{name} (git_ref): valid")),
                    Some(problem) => {
                        note(format_args!("{name} (git_ref): {problem}"));
                        return Err(Box::new(ToolError::new(
                        Category::InvalidParameters,
                        format!("{name} is not a valid git reference: {problem}"),
                    )
                    .tool(tool)
                    .suggest(
                        "Use a branch, tag or commit name of letters, digits, -, _, / and ."
                            .to_string(),
                    )
                    .detail("argument", name)));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Every text in `value` a tool could take for the argument: strings, numbers and booleans
/// (as JSON writes them), inside arrays and objects' values at any depth. A policy may put a
/// kind on an `array`, `object` or `any` argument, and a tool may read a path or a command
/// from anywhere in it, so nothing is skipped: a check that skipped what it cannot read would
/// let it through unchecked. Only `null` holds no text.
pub fn texts(value: &Value) -> Vec<Cow<'_, str>> {
    fn walk<'v>(value: &'v Value, out: &mut Vec<Cow<'v, str>>) {
        match value {
            Value::String(s) => out.push(Cow::Borrowed(s)),
            Value::Number(n) => out.push(Cow::Owned(n.to_string())),
            Value::Bool(b) => out.push(Cow::Borrowed(if *b { "true" } else { "false" })),
            Value::Null => {}
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
        }
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    out
}

/// `{name}: the {what} "{value}" is refused: {rule}`, the value shortened.
fn refused(name: &str, what: &str, value: &str, rule: &str) -> String {
    let mut text = String::with_capacity(name.len() + what.len() + value.len() + rule.len() + 32);
    text.push_str(name);
    text.push_str(": the ");
    text.push_str(what);
    text.push(' ');
    push_shortened(&mut text, value);
    text.push_str(" is refused: ");
    text.push_str(rule);
    text
}

/// The first 120 characters of `s` as `{:?}` writes them, and `…` when there were more.
fn push_shortened(out: &mut String, s: &str) {
    use std::fmt::Write as _;
    // What `{:?}` writes, without its per-character escaping where nothing needs it.
    if s.len() <= 120
        && s.bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    let cut = s.char_indices().nth(120).map_or(s, |(at, _)| &s[..at]);
    let _ = write!(out, "{cut:?}");
    if cut.len() < s.len() {
        out.push('…');
    }
}

#[cfg(test)]
fn shorten(s: &str) -> String {
    let mut out = String::new();
    push_shortened(&mut out, s);
    out
}

/// What is wrong with a git reference (seed 003's characters; no `..`, no leading `-`).
pub fn git_ref_problem(r: &str) -> Option<&'static str> {
    if r.is_empty() {
        Some("it is empty")
    } else if r.starts_with('-') {
        Some("it starts with '-' (it would be read as an option)")
    } else if r.contains("..") {
        Some("it contains '..'")
    } else if !r
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'.'))
    {
        Some("it holds characters other than letters, digits, '-', '_', '/' and '.'")
    } else {
        None
    }
}

/// The scheme and host of a URL, read conservatively: a URL whose host is ambiguous
/// (credentials, backslashes, whitespace, encoded characters in the host, a port that is not
/// one) is refused rather than guessed at. The host comes back in the one spelling rules are
/// compared with: lower case, trailing dots dropped, an IPv4 address as four decimal numbers
/// whichever way it was written (`2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376` and
/// `169.254.43518` are all `169.254.169.254`, as browsers and `inet_aton` read them), an IPv6
/// address bracketed and compressed (`[fd00:ec2::254]`), an IPv4-mapped one as IPv4.
pub fn url_host(url: &str) -> Result<(Cow<'_, str>, Cow<'_, str>), String> {
    match plain_url_host(url) {
        Some((scheme, host)) => Ok((Cow::Borrowed(scheme), Cow::Borrowed(host))),
        None => careful_url_host(url),
    }
}

/// [`url_host`] for any URL, without the shortcut for plain ones.
fn careful_url_host(url: &str) -> Result<(Cow<'_, str>, Cow<'_, str>), String> {
    // URLs are short: plain byte loops, where memchr's set-up per search would cost more.
    let bytes = url.as_bytes();
    if bytes
        .iter()
        .any(|b| b.is_ascii_control() || *b == b' ' || *b == b'\\')
        || url.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("the URL holds whitespace, control characters or backslashes".to_string());
    }
    // The first `:` followed by `//`; read by bytes, as every separator here is ASCII.
    let at = (0..bytes.len())
        .find(|&at| bytes[at] == b':' && bytes[at + 1..].starts_with(b"//"))
        .ok_or_else(|| "not an absolute URL (scheme://host/…)".to_string())?;
    let (scheme, rest) = (&url[..at], &url[at + 3..]);
    if !scheme
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphabetic)
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return Err(format!("{scheme:?} is not a URL scheme"));
    }
    let authority = &rest[..position(rest, |b| matches!(b, b'/' | b'?' | b'#'))];
    if authority.bytes().any(|b| b == b'@') {
        return Err("the URL carries credentials (user@host)".to_string());
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let end = v6
            .bytes()
            .position(|b| b == b']')
            .ok_or("an IPv6 host is not closed with ']'")?;
        (&authority[..end + 2], &v6[end + 1..])
    } else {
        authority.split_at(position(authority, |b| b == b':'))
    };
    check_port(port)?;
    Ok((lowercase(scheme), canonical_host(host)?))
}

/// `port` is empty, or `:` and at most 65535 in decimal digits (an empty port is the
/// scheme's own, as browsers read it).
fn check_port(port: &str) -> Result<(), String> {
    let Some(digits) = port.strip_prefix(':') else {
        return match port {
            "" => Ok(()),
            _ => Err(format!("{port:?} after the host is not a port")),
        };
    };
    // Leading zeros are allowed (`:0080` is port 80); the length bound keeps `u32` safe.
    let trimmed = digits.trim_start_matches('0');
    if !digits.bytes().all(|b| b.is_ascii_digit())
        || trimmed.len() > 5
        || trimmed.parse::<u32>().unwrap_or(0) > 65535
    {
        return Err(format!("the port {digits:?} is not a number up to 65535"));
    }
    Ok(())
}

/// The spelling a host is compared in (see [`url_host`]); `host` as written in the URL,
/// brackets and all. Also used for the hosts a policy names, so both sides agree.
pub fn canonical_host(host: &str) -> Result<Cow<'_, str>, String> {
    if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.strip_suffix(']').unwrap_or(inner);
        let v6: Ipv6Addr = inner
            .parse()
            .map_err(|_| format!("[{inner}] is not an IPv6 address"))?;
        // `[::ffff:a.b.c.d]` reaches the IPv4 host: compared as that host.
        return Ok(Cow::Owned(match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{v6}]"),
        }));
    }
    if !host.is_ascii() {
        // Browsers map fullwidth letters, `。` and soft hyphens (IDNA) to another, ASCII
        // host: refused rather than mapped, as the mapping is large and changes.
        return Err(format!(
            "the host {host:?} holds characters other than ASCII; write it in punycode (xn--…)"
        ));
    }
    let host = host.trim_end_matches('.');
    if host.is_empty() {
        return Err("the URL has no host".to_string());
    }
    if host.bytes().any(|b| b == b'%') {
        return Err("the host is percent-encoded".to_string());
    }
    if let Some(bad) = host
        .bytes()
        .find(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')))
    {
        return Err(format!(
            "the host {host:?} holds {:?}, which no host name has",
            bad as char
        ));
    }
    if host.starts_with('.') || host.contains("..") {
        // No host name has an empty label; `*.example.org` must not be met by `a..example.org`.
        return Err(format!("the host {host:?} has an empty label"));
    }
    let last = &host[host.rfind('.').map_or(0, |k| k + 1)..];
    if last.bytes().all(|b| b.is_ascii_digit()) || ipv4_number(last).is_some() {
        // A host ending in a number is an IPv4 address to browsers, or nothing.
        return ipv4(host)
            .map(|v4| Cow::Owned(v4.to_string()))
            .ok_or_else(|| format!("the host {host:?} ends in a number but is no IPv4 address"));
    }
    Ok(lowercase(host))
}

/// An IPv4 address written in one to four parts, the way WHATWG URL parsers and `inet_aton`
/// read it: each part decimal, octal (leading `0`) or hex (`0x`), the last filling the bytes
/// that are left (`169.254.43518`, `2852039166`).
fn ipv4(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u64> = host.split('.').map(ipv4_number).collect::<Option<_>>()?;
    let (&last, leading) = parts.split_last()?;
    if leading.len() > 3
        || leading.iter().any(|&n| n > 255)
        || last >> (8 * (4 - leading.len())) != 0
    {
        return None;
    }
    let high = leading
        .iter()
        .enumerate()
        .fold(0u64, |sum, (i, &n)| sum | n << (24 - 8 * i));
    Some(Ipv4Addr::from(u32::try_from(high | last).ok()?))
}

/// One part of an IPv4 address: `0x…` hex (`0x` alone is 0), `0…` octal, else decimal.
fn ipv4_number(part: &str) -> Option<u64> {
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x").or(part.strip_prefix("0X")) {
        (hex, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() {
        return (radix == 16).then_some(0);
    }
    // `from_str_radix` takes a sign; an address part has none.
    if digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// The scheme and host of the URLs agents send most, read in one look at each byte: a
/// lower-case scheme, then `://`, then a host of lower-case letters, digits, `-_.` (perhaps a
/// port of digits up to 65535), nothing in the URL [`url_host`] would refuse or fold, and not
/// ending in a number. Anything else (`None`) is for [`url_host`]'s careful reading, which
/// gives the same answer wherever this one gives one.
fn plain_url_host(url: &str) -> Option<(&str, &str)> {
    let b = url.as_bytes();
    // Whitespace, control characters, backslashes and non-ASCII bytes, anywhere. A fold
    // rather than `any`, so the loop has no early exit and runs a word at a time.
    if b.iter().fold(false, |odd, &c| {
        odd | (c <= b' ') | (c >= 0x7f) | (c == b'\\')
    }) {
        return None;
    }
    let s = b.iter().position(|&c| {
        !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.'))
    })?;
    if !b[0].is_ascii_lowercase() || !b[s..].starts_with(b"://") {
        return None;
    }
    let rest = &url[s + 3..];
    let mut colon = None;
    let mut end = rest.len();
    for (i, c) in rest.bytes().enumerate() {
        match c {
            b'/' | b'?' | b'#' => {
                end = i;
                break;
            }
            b':' => {
                colon.get_or_insert(i);
            }
            b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {}
            // Credentials, `[`, `%`, upper case: the careful reading says what they mean.
            _ => return None,
        }
    }
    let host = rest[..colon.unwrap_or(end)].trim_end_matches('.');
    // A port that is no number up to 65535, and a host ending in a number (an IPv4 address
    // in one of its many spellings), are for the careful reading.
    if colon.is_some_and(|c| check_port(&rest[c..end]).is_err())
        || host[host.rfind('.').map_or(0, |k| k + 1)..].starts_with(|c: char| c.is_ascii_digit())
        || host.starts_with('.')
        || host.contains("..")
    {
        return None;
    }
    (!host.is_empty()).then(|| (&url[..s], host))
}

/// Where the first byte `stop` holds for is, or the length.
fn position(s: &str, stop: impl Fn(u8) -> bool) -> usize {
    s.bytes().position(stop).unwrap_or(s.len())
}

/// `s` in ASCII lower case, copied only when it has an upper-case letter.
fn lowercase(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The shortcut for plain URLs answers as the careful reading does, wherever it answers.
        #[test]
        fn the_plain_url_shortcut_agrees_with_the_careful_reading(
            start in prop::sample::select(vec![
                "https://", "HTTP://", "a+b.c://", "1x://", "x:", "", "https://", "git+ssh://",
            ]),
            pieces in prop::collection::vec(prop::sample::select(vec![
                "https", "+", ":", "//", "/", "?", "#", "@", "[", "]", "::1", ".",
                "%41", "Example.COM", "a", "é", " ", "\\", "\t", ":8080", "docs.rs", "x_y-0",
                "0x1f", "255", "0377", ":99999", ":080", "169.254", "\u{3000}", "\u{ad}",
            ]), 0..8),
        ) {
            let url = [start, &pieces.concat()].concat();
            if let Some((scheme, host)) = plain_url_host(&url) {
                let careful = careful_url_host(&url);
                prop_assert_eq!(careful, Ok((scheme.into(), host.into())), "{:?}", url);
            }
        }

        /// The shortcut for plain text writes what `{:?}` writes.
        #[test]
        fn shorten_quotes_as_debug_does(s in "[ -~]{0,130}|\\PC{0,10}") {
            let cut: String = s.chars().take(120).collect();
            let expected = if cut.len() < s.len() {
                format!("{cut:?}…")
            } else {
                format!("{cut:?}")
            };
            prop_assert_eq!(shorten(&s), expected);
        }
    }

    #[test]
    fn texts_are_every_string_at_every_depth() {
        let value =
            serde_json::json!(["a", ["b", {"k": "c", "n": {"deep": ["d"]}}], 7, false, null]);
        let got: Vec<String> = texts(&value).into_iter().map(Cow::into_owned).collect();
        assert_eq!(got, ["a", "b", "c", "d", "7", "false"]);
        assert!(texts(&Value::Null).is_empty());
    }

    #[test]
    fn git_refs() {
        for ok in ["main", "feature/x-1", "v1.2.3", "a_b", "0123abc"] {
            assert_eq!(git_ref_problem(ok), None, "{ok}");
        }
        for bad in [
            "", "-rf", "a..b", "x y", "a;b", "$(id)", "a~1", "HEAD@{1}", "a:b",
        ] {
            assert!(git_ref_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn urls() {
        assert_eq!(
            url_host("https://Example.com./a?b").unwrap(),
            ("https".into(), "example.com".into())
        );
        assert_eq!(url_host("http://[::1]:8080/").unwrap().1, "[::1]");
        assert_eq!(url_host("HTTP://a.b:80").unwrap().0, "http");
        for bad in [
            "example.com",
            "https://user:pw@example.com",
            "https://good.com@evil.com",
            "http://evil.com\\@good.com",
            "https://%65vil.com",
            "https:// spaced.com",
            "https:///nohost",
            "1http://x",
        ] {
            assert!(url_host(bad).is_err(), "{bad}");
        }
    }

    /// Every spelling browsers and `inet_aton` read as 169.254.169.254 comes out as that.
    #[test]
    fn ip_hosts_come_out_in_one_spelling() {
        let host = |url: &str| url_host(url).map(|(_, h)| h.into_owned());
        for url in [
            "https://169.254.169.254/",
            "https://2852039166/",
            "https://0xa9fea9fe/",
            "https://0XA9FEA9FE./",
            "https://0251.0376.0251.0376/",
            "https://169.254.43518/",
            "https://169.16689662/",
            "https://0xa9.0xfe.0xa9.0xfe:443/",
            "https://[::ffff:169.254.169.254]/",
            "https://[::FFFF:A9FE:A9FE]:80/",
        ] {
            assert_eq!(host(url).as_deref(), Ok("169.254.169.254"), "{url}");
        }
        assert_eq!(host("http://127.1:8080/").as_deref(), Ok("127.0.0.1"));
        assert_eq!(host("http://0x/").as_deref(), Ok("0.0.0.0"));
        for url in [
            "https://[fd00:ec2:0::254]/",
            "https://[FD00:0EC2:0000:0000:0000:0000:0000:0254]/",
        ] {
            assert_eq!(host(url).as_deref(), Ok("[fd00:ec2::254]"), "{url}");
        }
        // Names that merely hold digits are names.
        for (url, want) in [
            ("https://1password.com/", "1password.com"),
            ("https://a.1b/", "a.1b"),
            ("https://x0x1.io/", "x0x1.io"),
        ] {
            assert_eq!(host(url).as_deref(), Ok(want), "{url}");
        }
        // Ending in a number, but no address: browsers refuse these too.
        for url in [
            "https://256.1.1.1/",
            "https://1.2.3.4.5/",
            "https://4294967296/",
            "https://08/",
            "https://0x1g.0x2/",
            "https://1..2/",
            "https://example.0x/",
            "https://99999999999999999999999/",
        ] {
            assert!(host(url).is_err(), "{url}");
        }
    }

    #[test]
    fn hosts_beyond_ascii_and_odd_authorities_are_refused() {
        for (url, says) in [
            ("https://169\u{3002}254\u{3002}169\u{3002}254/", "punycode"),
            (
                "https://\u{ff4d}\u{ff45}\u{ff54}\u{ff41}data.google.internal/",
                "punycode",
            ),
            ("https://metadata.google\u{ad}.internal/", "punycode"),
            ("https://a..example.org/", "empty label"),
            ("https://.example.org/", "empty label"),
            ("https://b\u{fc}cher.de/", "punycode"),
            ("https://example.com\u{3000}/", "whitespace"),
            ("https://example.com\u{a0}/", "whitespace"),
            ("https://exa\u{2028}mple.com/", "whitespace"),
            ("https://example.com:99999/", "port"),
            ("https://example.com:65536/", "port"),
            ("https://example.com:8o/", "port"),
            ("https://example.com:-1/", "port"),
            ("http://example.com:80:80/", "port"),
            ("https://example.com:\u{ff18}\u{ff10}/", "port"),
            ("https://[::1]:99999/", "port"),
            ("https://[::1]x/", "port"),
            ("https://[evil.com]/", "IPv6"),
            ("https://[]/", "IPv6"),
            ("https://[1.2.3.4]/", "IPv6"),
            ("https://[fe80::1%25eth0]/", "IPv6"),
            ("https://ex<ample.com/", "no host name"),
            ("https://ex]ample.com/", "no host name"),
        ] {
            match url_host(url) {
                Err(e) => assert!(e.contains(says), "{url}: {e}"),
                Ok(h) => panic!("{url}: {h:?}"),
            }
        }
        for (url, host) in [
            ("https://example.com:/", "example.com"),
            ("https://example.com:0443/x", "example.com"),
            ("https://example.com:65535", "example.com"),
            ("https://xn--bcher-kva.de/", "xn--bcher-kva.de"),
        ] {
            assert_eq!(url_host(url).unwrap().1, host, "{url}");
        }
        // Beyond ASCII in the path or query is not the host's business.
        assert_eq!(
            url_host("https://example.com/caf\u{e9}").unwrap().1,
            "example.com"
        );
    }
}
