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
        if c.is_ascii_alphanumeric() {
            let end = alnum_end(rest);
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
pub(crate) fn add(clusters: &mut BTreeMap<String, u64>, category: &str, message: &str) {
    let mut key = String::with_capacity(category.len() + 1 + message.len());
    key.push_str(category);
    key.push(SEPARATOR);
    key.push_str(&normalize_message(message));
    bump(clusters, key, 1);
}

fn bump(clusters: &mut BTreeMap<String, u64>, key: String, n: u64) {
    if let Some(count) = clusters.get_mut(&key) {
        *count += n;
        return;
    }
    if clusters.len() < MAX_CLUSTERS {
        clusters.insert(key, n);
        return;
    }
    let category = key.split(SEPARATOR).next().unwrap_or("");
    let other = format!("{category}{SEPARATOR}{OTHER}");
    *clusters.entry(other).or_default() += n;
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
