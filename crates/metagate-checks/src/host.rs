//! How URLs and hosts are read: the scheme and host of a URL, the one spelling hosts are compared
//! in, and the host patterns grant scopes name. Read conservatively: what different parsers could
//! read differently is refused rather than guessed at.

use std::borrow::Cow;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Why a URL, host or host pattern is refused: a sentence for whoever wrote it (the model, in a
/// rejection, or the operator, for a policy or a grant's scope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError(String);

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HostError {}

/// The scheme and host of a URL, read conservatively: a URL whose host is ambiguous
/// (credentials, backslashes, whitespace, encoded characters in the host, a port that is not
/// one) is refused rather than guessed at. The host comes back in the one spelling rules are
/// compared with: lower case, trailing dots dropped, an IPv4 address as four decimal numbers
/// whichever way it was written (`2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376` and
/// `169.254.43518` are all `169.254.169.254`, as browsers and `inet_aton` read them), an IPv6
/// address bracketed and compressed (`[fd00:ec2::254]`), an IPv4-mapped one as IPv4.
pub fn url_host(url: &str) -> Result<(Cow<'_, str>, Cow<'_, str>), HostError> {
    match plain_url_host(url) {
        Some((scheme, host)) => Ok((Cow::Borrowed(scheme), Cow::Borrowed(host))),
        None => careful_url_host(url).map_err(HostError),
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
    // An `@` before the first `/` is credentials to every parser that ends the authority at
    // `/` alone: `http://x#@169.254.169.254/` and `http://x?@169.254.169.254/` are host `x` to
    // a browser and to Python, and the metadata address to such a parser. Refused wherever it
    // stands there, as is a credential part proper (`user@host`).
    if rest[..position(rest, |b| b == b'/')]
        .bytes()
        .any(|b| b == b'@')
    {
        return Err(
            "the URL carries credentials (user@host), or an `@` before its path that parsers read differently"
                .to_string(),
        );
    }
    let authority = &rest[..position(rest, |b| matches!(b, b'/' | b'?' | b'#'))];
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
    Ok((lowercase(scheme), canonical(host)?))
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
pub fn canonical_host(host: &str) -> Result<Cow<'_, str>, HostError> {
    canonical(host).map_err(HostError)
}

/// [`canonical_host`], its refusal still a sentence for the readers of this module to word.
fn canonical(host: &str) -> Result<Cow<'_, str>, String> {
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
    if let Some(label) = host.split('.').find(|l| !valid_punycode_label(l)) {
        // Browsers decode `xn--` labels and refuse the URL when one does not decode to a
        // name; other parsers send it as written: the two would not fetch the same.
        return Err(format!(
            "the host label {label:?} is not valid punycode (browsers refuse it)"
        ));
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

/// Whether `label` is not punycode (`xn--…`), or is punycode WHATWG URL parsers accept:
/// it decodes (RFC 3492) to a name with a character beyond ASCII, every ASCII one a lower-case
/// letter, digit or `-`, every other a letter, mark or digit already in lower case (IDNA maps
/// upper case away, so an upper-case form is never what a browser would write). IDNA's finer
/// rules (normalization, bidirectional text, joiners) are not checked again here.
fn valid_punycode_label(label: &str) -> bool {
    let Some(encoded) = label
        .get(..4)
        .filter(|prefix| prefix.eq_ignore_ascii_case("xn--"))
        .map(|_| &label[4..])
    else {
        return true;
    };
    // Browsers read the host in lower case first.
    let Some(decoded) = punycode_decode(&encoded.to_ascii_lowercase()) else {
        return false;
    };
    !decoded.is_empty()
        && decoded.iter().any(|c| !c.is_ascii())
        && decoded.iter().all(|&c| {
            if c.is_ascii() {
                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
            } else {
                (c.is_alphanumeric() && !c.is_uppercase()) || is_mark(c)
            }
        })
}

/// Combining marks (the general category M), as far as the ranges most scripts use go.
fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036f | 0x0483..=0x0489 | 0x0591..=0x05bd | 0x0610..=0x061a | 0x064b..=0x065f
        | 0x0900..=0x0903 | 0x093a..=0x094f | 0x0e31..=0x0e3a | 0x0e47..=0x0e4e
        | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x20d0..=0x20ff | 0x3099..=0x309a | 0xfe20..=0xfe2f)
}

/// Punycode (RFC 3492) decoded: the code points `encoded` (without `xn--`) stands for, or
/// `None` when it is not punycode.
fn punycode_decode(encoded: &str) -> Option<Vec<char>> {
    const BASE: u32 = 36;
    const T_MIN: u32 = 1;
    const T_MAX: u32 = 26;
    let (basic, extended) = match encoded.rfind('-') {
        Some(at) => (&encoded[..at], &encoded[at + 1..]),
        None => ("", encoded),
    };
    let mut output: Vec<char> = basic.chars().collect();
    let (mut code, mut index, mut bias) = (128u32, 0u32, 72u32);
    let mut digits = extended.bytes().peekable();
    while digits.peek().is_some() {
        let before = index;
        let mut weight = 1u32;
        let mut k = BASE;
        loop {
            let digit = match digits.next()? {
                b @ b'a'..=b'z' => b - b'a',
                b @ b'A'..=b'Z' => b - b'A',
                b @ b'0'..=b'9' => b - b'0' + 26,
                _ => return None,
            } as u32;
            index = index.checked_add(digit.checked_mul(weight)?)?;
            let threshold = k.saturating_sub(bias).clamp(T_MIN, T_MAX);
            if digit < threshold {
                break;
            }
            weight = weight.checked_mul(BASE - threshold)?;
            k += BASE;
        }
        let length = u32::try_from(output.len()).ok()? + 1;
        bias = adapt_bias(index - before, length, before == 0);
        code = code.checked_add(index / length)?;
        index %= length;
        output.insert(index as usize, char::from_u32(code)?);
        index += 1;
    }
    Some(output)
}

/// RFC 3492's bias adaptation.
fn adapt_bias(delta: u32, points: u32, first: bool) -> u32 {
    const BASE: u32 = 36;
    let mut delta = if first { delta / 700 } else { delta / 2 };
    delta += delta / points;
    let mut k = 0;
    while delta > ((BASE - 1) * 26) / 2 {
        delta /= BASE - 1;
        k += BASE;
    }
    k + (BASE * delta) / (delta + 38)
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
    // A port that is no number up to 65535, a host ending in a number (an IPv4 address in
    // one of its many spellings), punycode, and an `@` after `?` or `#` but before any `/`
    // (`http://x#@169.254.169.254`) are for the careful reading.
    if colon.is_some_and(|c| check_port(&rest[c..end]).is_err())
        || rest[end..position(rest, |b| b == b'/')].contains('@')
        || host.starts_with("xn--")
        || host.contains(".xn--")
        || host[host.rfind('.').map_or(0, |k| k + 1)..].starts_with(|c: char| c.is_ascii_digit())
        || host.starts_with('.')
        || host.contains("..")
    {
        return None;
    }
    (!host.is_empty()).then(|| (&url[..s], host))
}

/// The addresses a host (as [`url_host`] gives it) reaches or names besides itself, each in
/// the spelling hosts are compared in: the IPv4 address inside an IPv6 one that carries it
/// (IPv4-compatible `[::169.254.169.254]`, SIIT `[::ffff:0:a.b.c.d]`, NAT64 `[64:ff9b::…]`,
/// 6to4 `[2002:…]`, Teredo's server and client), and the addresses a name spells out for a
/// wildcard DNS service (nip.io, sslip.io and any domain set up the same way) to answer
/// with: four labels of decimal numbers (`169.254.169.254.nip.io`), four numbers joined by
/// `-` (`169-254-169-254.nip.io`, `app-169-254-169-254.sslip.io`), eight hex digits
/// (`a9fea9fe.nip.io`, `magic-a9fea9fe.nip.io`), an IPv6 address with `-` for `:`
/// (`fd00-ec2--254.sslip.io`). A deny rule matches a host when it matches one of these.
pub fn embedded_addresses(host: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut add = |address: String| {
        if address != host && !found.contains(&address) {
            found.push(address);
        }
    };
    if let Some(inner) = host.strip_prefix('[') {
        if let Ok(v6) = inner.trim_end_matches(']').parse::<Ipv6Addr>() {
            carried_ipv4(v6)
                .into_iter()
                .for_each(|v4| add(v4.to_string()));
        }
        return found;
    }
    let labels: Vec<&str> = host.split('.').collect();
    for window in labels.windows(4) {
        if let Some(v4) = four_decimals(window) {
            add(v4.to_string());
        }
    }
    for label in &labels {
        let parts: Vec<&str> = label.split('-').collect();
        for window in parts.windows(4) {
            if let Some(v4) = four_decimals(window) {
                add(v4.to_string());
            }
        }
        for part in &parts {
            if part.len() == 8
                && let Ok(n) = u32::from_str_radix(part, 16)
            {
                add(Ipv4Addr::from(n).to_string());
            }
        }
        // sslip.io writes IPv6 with `-` for `:` (`--1` is `::1`), maybe after a name part.
        if label.contains("--") || parts.len() >= 8 {
            for start in 0..parts.len() {
                let colons = parts[start..].join(":");
                if let Ok(v6) = colons.parse::<Ipv6Addr>() {
                    match v6.to_ipv4_mapped() {
                        Some(v4) => add(v4.to_string()),
                        None => add(format!("[{v6}]")),
                    }
                    carried_ipv4(v6)
                        .into_iter()
                        .for_each(|v4| add(v4.to_string()));
                    break;
                }
            }
        }
    }
    found
}

/// `a.b.c.d` from four decimal numbers up to 255 (no sign, no other base).
fn four_decimals(parts: &[&str]) -> Option<Ipv4Addr> {
    let mut bytes = [0u8; 4];
    for (byte, part) in bytes.iter_mut().zip(parts) {
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *byte = part.parse().ok()?;
    }
    Some(Ipv4Addr::from(bytes))
}

/// The IPv4 addresses an IPv6 address carries, which a host reaching it may reach:
/// IPv4-compatible (`::a.b.c.d`, but not `::` or `::1`), SIIT (`::ffff:0:a.b.c.d`), the
/// NAT64 well-known prefix (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`), and Teredo
/// (`2001:0:SERVER::…:~CLIENT`).
fn carried_ipv4(v6: Ipv6Addr) -> Vec<Ipv4Addr> {
    let s = v6.segments();
    let last = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mut out = Vec::new();
    match s {
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => {}
        [0, 0, 0, 0, 0 | 0xffff, 0, _, _] | [0x64, 0xff9b, 0, 0, 0, 0, _, _] => out.push(last),
        [0x2002, high, low, ..] => {
            out.push(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)))
        }
        [0x2001, 0, high, low, ..] => {
            out.push(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)));
            out.push(Ipv4Addr::from(!u32::from(last)));
        }
        _ => {}
    }
    out
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

/// Reads a host pattern as [`host_syntax`] does, refusing a wildcard over a whole public suffix
/// (`*.com`, `*.co.uk`, `*.github.io`): anyone can register or publish a name under one, so
/// such a grant reaches hosts nobody meant to allow.
pub fn host_pattern(text: &str) -> Result<String, HostError> {
    let h = host_syntax(text)?;
    if let Some(parent) = h.strip_prefix("*.")
        && (!parent.contains('.') || PUBLIC_SUFFIXES.contains(&parent))
    {
        return Err(HostError(format!(
            "{h:?} covers every host under the public suffix {parent}, where anyone can register a name; name the hosts (host:docs.example.com), or a wildcard under a registered domain (*.example.com)"
        )));
    }
    Ok(h)
}

/// Public suffixes of more than one label: the common second-level registries of country
/// domains, and shared hosting domains where anyone can publish under their own subdomain. A
/// short list of the ones grants are likely to meet, not the whole Public Suffix List; every
/// single label (`com`, `uk`, `localhost`) is refused besides.
#[rustfmt::skip]
const PUBLIC_SUFFIXES: &[&str] = &[
    // Country domains' registries.
    "ac.uk", "co.uk", "gov.uk", "ltd.uk", "me.uk", "net.uk", "nhs.uk", "org.uk", "plc.uk",
    "police.uk", "sch.uk", "asn.au", "com.au", "edu.au", "gov.au", "id.au", "net.au", "org.au",
    "ac.nz", "co.nz", "geek.nz", "govt.nz", "net.nz", "org.nz", "school.nz", "ac.jp", "co.jp",
    "ed.jp", "go.jp", "gr.jp", "lg.jp", "ne.jp", "or.jp", "ac.kr", "co.kr", "go.kr", "ne.kr",
    "or.kr", "re.kr", "ac.in", "co.in", "edu.in", "firm.in", "gen.in", "gov.in", "ind.in", "net.in",
    "org.in", "res.in", "ac.za", "co.za", "edu.za", "gov.za", "net.za", "org.za", "com.br",
    "edu.br", "gov.br", "net.br", "org.br", "ac.cn", "com.cn", "edu.cn", "gov.cn", "net.cn",
    "org.cn", "com.hk", "edu.hk", "gov.hk", "net.hk", "org.hk", "com.tw", "edu.tw", "gov.tw",
    "net.tw", "org.tw", "com.sg", "edu.sg", "gov.sg", "net.sg", "org.sg", "com.my", "edu.my",
    "gov.my", "net.my", "org.my", "com.mx", "edu.mx", "gob.mx", "net.mx", "org.mx", "com.ar",
    "edu.ar", "gob.ar", "net.ar", "org.ar", "com.co", "edu.co", "gov.co", "net.co", "org.co",
    "com.tr", "edu.tr", "gen.tr", "gov.tr", "net.tr", "org.tr", "ac.il", "co.il", "gov.il",
    "net.il", "org.il", "ac.id", "co.id", "go.id", "or.id", "web.id", "ac.th", "co.th", "go.th",
    "in.th", "com.eg", "com.ng", "com.ph", "com.pk", "com.pl", "com.sa", "com.ua", "com.vn",
    // Shared hosting: every customer's name sits under these.
    "appspot.com", "azurewebsites.net", "blogspot.com", "cloudfront.net", "firebaseapp.com",
    "fly.dev", "github.io", "gitlab.io", "glitch.me", "herokuapp.com", "netlify.app",
    "ngrok-free.app", "ngrok.io", "onrender.com", "pages.dev", "readthedocs.io", "s3.amazonaws.com",
    "vercel.app", "web.app", "workers.dev",
];

/// Reads a host scope: a host name (`example.com`, `my_host.example.com`, `localhost`), a
/// wildcard over a parent name (`*.example.com`), or an IP address (`127.0.0.1` in any
/// spelling [`url_host`] reads, `[::1]` or `::1`), in the spelling `url_host`
/// gives the hosts of calls: lower case, no trailing dot, an address canonical. A port is
/// refused: a host scope covers every port of its host.
pub fn host_syntax(text: &str) -> Result<String, HostError> {
    syntax(text).map_err(HostError)
}

/// [`host_syntax`], its refusal still a sentence for the readers of this module to word.
fn syntax(text: &str) -> Result<String, String> {
    let h = text.trim().to_ascii_lowercase();
    let not_a_host = || {
        format!("{h:?} is not a host name (write example.com, *.example.com, 127.0.0.1 or [::1])")
    };
    if let Some((name, _)) = split_port(&h) {
        return Err(format!(
            "{h:?}: a host scope covers every port of its host; write host:{name}"
        ));
    }
    // IPv6, bracketed (as URLs write it) or not.
    if h.starts_with('[') || h.parse::<std::net::Ipv6Addr>().is_ok() {
        let inner = match h.strip_prefix('[') {
            Some(rest) => rest.strip_suffix(']').ok_or_else(not_a_host)?,
            None => &h,
        };
        return canonical(&format!("[{inner}]"))
            .map(std::borrow::Cow::into_owned)
            .map_err(|_| not_a_host());
    }
    let h = h.trim_end_matches('.');
    let (wild, bare) = match h.strip_prefix("*.") {
        Some(parent) => (true, parent),
        None => (false, h),
    };
    let labels_ok = !bare.is_empty()
        && bare.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !labels_ok {
        return Err(not_a_host());
    }
    if wild {
        // A wildcard is over names: `*.1.2.3` would be part of an address.
        let last = &bare[bare.rfind('.').map_or(0, |k| k + 1)..];
        if last.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "{h:?}: a wildcard covers the subdomains of a name, not of an address"
            ));
        }
        return Ok(h.to_string());
    }
    // An address in another spelling (`0x7f000001`) is the address, as in calls.
    canonical(bare)
        .map(std::borrow::Cow::into_owned)
        .map_err(|e| format!("{h:?} is not a host name: {e}"))
}

/// `name:port` split in two, when `text` is a host (or wildcard) name followed by a port.
pub fn split_port(text: &str) -> Option<(&str, &str)> {
    let (name, port) = text.rsplit_once(':')?;
    let bracketed = name.starts_with('[') && name.ends_with(']');
    (!port.is_empty()
        && port.bytes().all(|b| b.is_ascii_digit())
        && (bracketed || !name.contains([':', '[', ']']))
        && !name.is_empty())
    .then_some((name, port))
}

/// Whether a host pattern (a name, or `*.` and a parent name) covers `host`.
pub fn pattern_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        // By labels: *.example.com covers a.example.com, not badexample.com, and not
        // `..example.com` or `a..example.com` (no label is empty, as in a scope).
        Some(parent) => host
            .strip_suffix(parent)
            .and_then(|rest| rest.strip_suffix('.'))
            .is_some_and(|labels| labels.split('.').all(|l| !l.is_empty())),
        None => pattern == host,
    }
}

/// Why a call's host (as `url_host` gives it) is no host name a scope could name, if it is
/// not: one with an empty label (`.example.org`, `a..example.org`), which `--scope` refuses.
pub fn host_problem(host: &str) -> Option<String> {
    (!host.starts_with('[') && host.split('.').any(str::is_empty))
        .then(|| format!("the host {host:?} has an empty label"))
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

    /// `xn--` labels browsers decode: a label that does not decode to a name is refused, as
    /// WHATWG parsers refuse it (other parsers would send it as written).
    #[test]
    fn punycode_labels_must_decode_to_a_name() {
        for good in [
            "xn--bcher-kva.de",
            "xn--mnchen-3ya.de",
            "xn--fiqs8s",
            "www.xn--80ak6aa92e.com",
            "XN--BCHER-KVA.de",
        ] {
            assert!(canonical_host(good).is_ok(), "{good}");
        }
        for bad in [
            "xn--bcher-kva08",
            "xn--bcher-kva1.de",
            "xn--bcher-kva0x.de",
            "xn--bcher-kvaexample",
            "xn--",
            "xn--abc-",
            "xn--a.example",
            "a.xn--zz.example",
        ] {
            let error = canonical_host(bad).unwrap_err().to_string();
            assert!(error.contains("punycode"), "{bad}: {error}");
        }
        assert_eq!(
            punycode_decode("bcher-kva"),
            Some("bücher".chars().collect())
        );
        assert_eq!(punycode_decode("fiqs8s"), Some("中国".chars().collect()));
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
                Err(e) => assert!(e.to_string().contains(says), "{url}: {e}"),
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
