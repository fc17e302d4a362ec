//! Outcome errors clustered per tool: messages normalized so that one failure repeated with a
//! different request id, time or path counts as one (`HTTP 401 Unauthorized (request X)`).

use std::collections::BTreeMap;

/// At most this many distinct clusters are kept per tool and method; messages past them are
/// counted under [`OTHER`].
const MAX_CLUSTERS: usize = 32;

/// The message of the cluster that holds what did not fit.
const OTHER: &str = "(other messages)";

/// A normalized message is at most this many characters.
const MAX_MESSAGE: usize = 120;

/// Between a cluster's category and message in [`add`]'s keys.
const SEPARATOR: char = '\u{1f}';

/// A message with what varies between repeats of one failure taken out: runs of digits become
/// `N` (a status code from 100 to 599 stays), hexadecimal ids of eight or more characters
/// (hashes, UUIDs) `X`, quoted text `"…"`, a URL its scheme and host; spaces are collapsed and
/// the whole is cut to 120 characters.
fn normalize_message(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_MESSAGE + 8));
    let mut rest = text.trim();
    let mut space = false;
    while let Some(c) = rest.chars().next() {
        if out.len() > 4 * MAX_MESSAGE {
            break;
        }
        if c.is_whitespace() {
            space = !out.is_empty();
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        if let Some(after) = url_at(rest, &mut out) {
            rest = after;
            continue;
        }
        if matches!(c, '"' | '\'' | '`')
            && let Some(end) = rest[1..].find(c)
        {
            out.push(c);
            out.push('…');
            out.push(c);
            rest = &rest[1 + end + 1..];
            continue;
        }
        if let Some(end) = version_end(rest) {
            // A version tells one deploy from another: kept whole.
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if c.is_ascii_alphanumeric() {
            let end = alnum_end(rest);
            let code_number = out.ends_with('-') && {
                let prefix = last_word(&out[..out.len() - 1]);
                prefix.len() >= 2 && prefix.bytes().all(|b| b.is_ascii_uppercase())
            };
            if code_number && end <= 6 && rest[..end].bytes().all(|b| b.is_ascii_digit()) {
                // The number of a code such as `ORA-00942`: part of the code.
                out.push_str(&rest[..end]);
                rest = &rest[end..];
                continue;
            }
            rest = token(&rest[..end], &mut out, &rest[end..]);
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if out.chars().count() > MAX_MESSAGE || !rest.trim().is_empty() {
        out = out.chars().take(MAX_MESSAGE).collect();
        out.push('…');
    }
    out
}

/// The length of a version at the start of `text` (`2.4.1`, `v1.10`, `1.2.3-rc1` up to its
/// dotted part): two to four dotted numbers, not followed by another letter or digit.
fn version_end(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = usize::from(b.first().is_some_and(|c| *c == b'v' || *c == b'V'));
    let mut groups = 0;
    loop {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start || i - start > 4 {
            return None;
        }
        groups += 1;
        if groups < 4 && i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            i += 1;
            continue;
        }
        break;
    }
    let ends = b.get(i).is_none_or(|c| !c.is_ascii_alphanumeric());
    (groups >= 2 && ends).then_some(i)
}

/// An error code: upper-case letters, digits or `_`, at most 12, starting with a letter
/// (`E1042`, `HTTP2`, `ERR_NO_TABLE`), or at most 6 with a letter anywhere (SQLSTATE `42P01`).
fn is_code(word: &str) -> bool {
    let b = word.as_bytes();
    let chars_ok = b
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
    let starts_upper = b.first().is_some_and(u8::is_ascii_uppercase);
    // A time's `T` and `Z` (`20T10`) make no code.
    let has_upper = b
        .iter()
        .any(|c| c.is_ascii_uppercase() && !matches!(c, b'T' | b'Z'));
    chars_ok && ((starts_upper && b.len() <= 12) || (has_upper && b.len() <= 6))
}

/// The run of letters, digits and `_` that `text` ends with.
fn last_word(text: &str) -> &str {
    let start = text
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    &text[start..]
}

fn alnum_end(text: &str) -> usize {
    text.find(|ch: char| !ch.is_ascii_alphanumeric())
        .unwrap_or(text.len())
}

/// Writes one run of letters and digits, normalized, and returns what follows it: a
/// hexadecimal run of eight or more (with a digit and a letter) is `X`, and so are the `-`
/// groups that continue it (a UUID); a three-digit number from 100 to 599 stays (a status
/// code); any other run of digits is `N`.
fn token<'a>(token: &str, out: &mut String, mut rest: &'a str) -> &'a str {
    let hex = |t: &str| t.bytes().all(|b| b.is_ascii_hexdigit());
    let has_digit = token.bytes().any(|b| b.is_ascii_digit());
    let has_letter = token.bytes().any(|b| b.is_ascii_alphabetic());
    if token.len() >= 8 && has_digit && has_letter && hex(token) {
        out.push('X');
        while let Some(group) = rest.strip_prefix('-') {
            let end = alnum_end(group);
            if end == 0 || !hex(&group[..end]) {
                break;
            }
            rest = &group[end..];
        }
        return rest;
    }
    if token.len() == 3 && !has_letter && (b'1'..=b'5').contains(&token.as_bytes()[0]) {
        out.push_str(token);
        return rest;
    }
    if has_digit && has_letter && is_code(token) {
        // An error code names the failure: `E1042` is not `E1043`.
        out.push_str(token);
        return rest;
    }
    let mut in_digits = false;
    for b in token.bytes() {
        if b.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            out.push(char::from(b));
            in_digits = false;
        }
    }
    rest
}

/// A URL at the start of `text`: its scheme and host go to `out`, and the text after the URL
/// is returned.
fn url_at<'a>(text: &'a str, out: &mut String) -> Option<&'a str> {
    let scheme_end = text.find("://")?;
    let scheme = &text[..scheme_end];
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let after = &text[scheme_end + 3..];
    let end = after
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')' | '>'))
        .unwrap_or(after.len());
    let host_end = after[..end].find(['/', '?', '#']).unwrap_or(end);
    out.push_str(scheme);
    out.push_str("://");
    out.push_str(&after[..host_end]);
    if host_end < end {
        out.push_str("/…");
    }
    Some(&after[end..])
}

/// Counts one error of `category` with `message` (normalized here) in `clusters`, keeping at
/// most [`MAX_CLUSTERS`] of them.
pub(crate) fn add(clusters: &mut BTreeMap<String, u64>, category: &str, message: &str) -> String {
    let mut key = String::with_capacity(category.len() + 1 + message.len());
    key.push_str(category);
    key.push(SEPARATOR);
    key.push_str(&normalize_message(message));
    bump(clusters, key, 1)
}

/// Counts `n` under `key` (or its category's [`OTHER`] when full), and returns the key used.
fn bump(clusters: &mut BTreeMap<String, u64>, key: String, n: u64) -> String {
    if let Some(count) = clusters.get_mut(&key) {
        *count += n;
        return key;
    }
    if clusters.len() < MAX_CLUSTERS {
        clusters.insert(key.clone(), n);
        return key;
    }
    let category = key.split(SEPARATOR).next().unwrap_or("");
    let other = format!("{category}{SEPARATOR}{OTHER}");
    *clusters.entry(other.clone()).or_default() += n;
    other
}

/// A cluster key as a person reads it: `category "message"`.
pub fn describe(key: &str) -> String {
    match key.split_once(SEPARATOR) {
        Some((category, message)) => format!("{category} \"{message}\""),
        None => key.to_string(),
    }
}

/// Adds every cluster of `from` to `into`, still keeping at most [`MAX_CLUSTERS`].
pub(crate) fn merge(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (key, n) in from {
        bump(into, key.clone(), *n);
    }
}

/// One cluster: the error's category, its normalized message and how often it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCluster {
    /// The error category the cluster is in.
    pub category: String,
    /// The message, with paths, numbers and quoted values normalized away.
    pub message: String,
    /// How many errors read so.
    pub count: u64,
}

/// The `n` largest clusters, largest first (ties by category, then message).
pub fn top(clusters: &BTreeMap<String, u64>, n: usize) -> Vec<ErrorCluster> {
    let mut all: Vec<ErrorCluster> = clusters
        .iter()
        .map(|(key, count)| {
            let (category, message) = key.split_once(SEPARATOR).unwrap_or((key, ""));
            ErrorCluster {
                category: category.to_string(),
                message: message.to_string(),
                count: *count,
            }
        })
        .collect();
    all.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.category.cmp(&b.category))
            .then_with(|| a.message.cmp(&b.message))
    });
    all.truncate(n);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_of_one_failure_normalize_alike() {
        let a = normalize_message("HTTP 401 Unauthorized (request 8f3a9b2c1d, at 1795197600123)");
        let b = normalize_message("HTTP 401   Unauthorized (request 0c1d2e3f4a, at 1795197999999)");
        assert_eq!(a, "HTTP 401 Unauthorized (request X, at N)");
        assert_eq!(
            normalize_message("timeout after 30s at 2026-11-20T10:00:00Z, req_8f3a9b2c"),
            "timeout after Ns at N-N-NTN:N:NZ, req_X"
        );
        assert_eq!(a, b);
        assert_eq!(
            normalize_message("GET https://sso.example.com/login?next=/x failed"),
            "GET https://sso.example.com/… failed"
        );
        assert_eq!(
            normalize_message("no such file 'a b.txt' in \"dir\""),
            "no such file '…' in \"…\""
        );
        assert_eq!(
            normalize_message("id 123e4567-e89b-12d3-a456-426614174000"),
            "id X"
        );
        let long = normalize_message(&"word ".repeat(100));
        assert!(long.chars().count() <= 121 && long.ends_with('…'));
        assert_eq!(normalize_message("  "), "");
    }

    /// What tells deploys and failures apart stays: versions, error codes.
    #[test]
    fn versions_and_codes_are_kept() {
        let cases = [
            (
                "KeyError: 'account_tier' (crm-adapter 2.4.1)",
                "KeyError: '…' (crm-adapter 2.4.1)",
            ),
            ("crm-adapter v3.0 failed", "crm-adapter v3.0 failed"),
            (
                "ORA-00942: table or view does not exist",
                "ORA-00942: table or view does not exist",
            ),
            ("error E1042 at row 17", "error E1042 at row N"),
            (
                "ERROR: relation \"t\" does not exist (SQLSTATE 42P01)",
                "ERROR: relation \"…\" does not exist (SQLSTATE 42P01)",
            ),
            ("retry 3 of 5", "retry N of N"),
            ("at 10.5s", "at N.Ns"),
            ("ip 10.0.0.12 refused", "ip 10.0.0.12 refused"),
        ];
        for (text, want) in cases {
            assert_eq!(normalize_message(text), want, "{text}");
        }
        assert_ne!(
            normalize_message("KeyError: 'x' (crm-adapter 2.4.1)"),
            normalize_message("KeyError: 'x' (crm-adapter 2.4.2)")
        );
    }

    #[test]
    fn clusters_are_bounded_and_ranked() {
        let mut c = BTreeMap::new();
        for i in 0..100 {
            add(
                &mut c,
                "permanent_failure",
                &format!("failure kind {}", ["a", "b"][i % 2]),
            );
        }
        for i in 0..40 {
            add(
                &mut c,
                "permanent_failure",
                &format!("unique reason {}", "z".repeat(i + 1)),
            );
        }
        assert_eq!(c.len(), MAX_CLUSTERS + 1);
        let top3 = top(&c, 3);
        assert_eq!(top3[0].count, 50);
        assert_eq!(top3[0].message, "failure kind a");
        assert_eq!(top3[2].message, OTHER);
        let mut merged = BTreeMap::new();
        merge(&mut merged, &c);
        merge(&mut merged, &c);
        assert_eq!(top(&merged, 1)[0].count, 100);
    }
}
