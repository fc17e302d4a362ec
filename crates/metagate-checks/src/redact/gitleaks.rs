//! gitleaks' maintained secret patterns (about 220 rules: cloud, SaaS and payment keys, most of
//! them named by a keyword near the secret or a prefix of it), applied beside the hand-written
//! rules. The rules are data: `third_party/gitleaks/gitleaks.toml`, a copy of gitleaks' own
//! configuration with its MIT licence notice, turned into static tables by `build.rs`.
//!
//! As gitleaks does, a rule runs only on a text that holds one of its keywords (one
//! Aho-Corasick pass finds them all), its secret is its first non-empty capture group, and a
//! match is dropped when its secret's entropy is at or under the rule's threshold or an
//! allowlist (the rule's or the global one) accepts it. Each rule's regex is compiled the first
//! time one of its keywords is seen, so a process pays only for the rules its texts need: a
//! `regex::RegexSet` of every rule takes seconds to build and about 500 MiB with Unicode
//! classes, and then hundreds of microseconds per text (docs/telemetry.md has the figures).
//!
//! Patterns are read in ASCII mode (`(?-u)`), as Go's RE2 reads `\w`, `\s`, `\d` and `\b`; a
//! `{` that does not start a repetition is a literal in Go and is escaped for Rust.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::bytes::Regex;

use super::REDACTED_B;
use super::bytes::shannon_entropy;

/// What an allowlist's regexes are matched against.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    /// The secret (the capture group).
    Secret,
    /// The whole match.
    Match,
    /// The line that holds the match.
    Line,
}

/// One rule as `build.rs` wrote it.
struct RuleData {
    /// gitleaks' name of the rule: read by the tests, and what the generated table is read by.
    #[cfg_attr(not(test), allow(dead_code))]
    id: &'static str,
    pattern: &'static str,
    /// Matches whose secret has at most this Shannon entropy are dropped; 0: no threshold.
    entropy: f64,
    /// The capture group that holds the secret; 0: the first non-empty one.
    secret_group: usize,
    /// Lower case.
    keywords: &'static [&'static str],
    allowlists: &'static [AllowlistData],
}

/// A list of what is not a secret: a match is allowed when one of the regexes matches its
/// target or its secret contains one of the stopwords (both, when `all`).
struct AllowlistData {
    target: Target,
    all: bool,
    regexes: &'static [&'static str],
    /// Lower case.
    stopwords: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/gitleaks_rules.rs"));

/// The keyword automaton, built on first use.
struct Keywords {
    automaton: AhoCorasick,
    /// The rule of each keyword pattern.
    rule_of: Vec<usize>,
}

fn keywords() -> &'static Keywords {
    static KEYWORDS: OnceLock<Keywords> = OnceLock::new();
    KEYWORDS.get_or_init(|| {
        let mut patterns = Vec::new();
        let mut rule_of = Vec::new();
        for (index, rule) in RULES.iter().enumerate() {
            for keyword in rule.keywords {
                patterns.push(*keyword);
                rule_of.push(index);
            }
        }
        // A contiguous NFA: about as fast as a DFA on short texts, at a third of the build
        // time, which every process that records pays once.
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&patterns)
            .expect("gitleaks keywords build an automaton");
        Keywords { automaton, rule_of }
    })
}

/// Compiled regexes, one slot per rule or allowlist, filled on first use; a pattern Rust cannot
/// read stays `None` (the test `every_gitleaks_pattern_compiles` keeps that from happening).
struct Compiled {
    rules: Vec<OnceLock<Option<Regex>>>,
    global: Vec<OnceLock<CompiledAllowlist>>,
    allowlists: Vec<Vec<OnceLock<CompiledAllowlist>>>,
}

struct CompiledAllowlist {
    regexes: Vec<Regex>,
    /// Case-insensitive; `None` when the list has no stopwords.
    stopwords: Option<AhoCorasick>,
}

impl CompiledAllowlist {
    fn new(list: &AllowlistData) -> Self {
        let stopwords = (!list.stopwords.is_empty()).then(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(list.stopwords)
                .expect("gitleaks stopwords build an automaton")
        });
        CompiledAllowlist {
            regexes: list.regexes.iter().filter_map(|p| compile(p)).collect(),
            stopwords,
        }
    }
}

/// How much of the line around a match an allowlist with `regexTarget = "line"` sees: gitleaks
/// reads files, whose lines are short; an argument may be one line of megabytes, and reading
/// all of it again for every match would make the scan quadratic.
const LINE_CONTEXT: usize = 256;

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| Compiled {
        rules: RULES.iter().map(|_| OnceLock::new()).collect(),
        global: GLOBAL_ALLOWLISTS.iter().map(|_| OnceLock::new()).collect(),
        allowlists: RULES
            .iter()
            .map(|rule| rule.allowlists.iter().map(|_| OnceLock::new()).collect())
            .collect(),
    })
}

/// The pattern in Rust's syntax: ASCII classes, and literal `{` escaped.
fn rust_syntax(go: &str) -> String {
    let b = go.as_bytes();
    let mut out = String::with_capacity(go.len() + 8);
    out.push_str("(?-u)");
    let mut in_class = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' => {
                let next = go[i + 1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&go[i..i + 1 + next]);
                i += 1 + next;
                continue;
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'{' if !in_class && !starts_repetition(&b[i..]) => {
                out.push_str("\\{");
                i += 1;
                continue;
            }
            _ => {}
        }
        let len = go[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&go[i..i + len]);
        i += len;
    }
    out
}

/// `{n}`, `{n,}` or `{n,m}` at the start of `b`.
fn starts_repetition(b: &[u8]) -> bool {
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let first = digits(1);
    if first == 0 {
        return false;
    }
    let mut k = 1 + first;
    if b.get(k) == Some(&b',') {
        k += 1 + digits(k + 1);
    }
    b.get(k) == Some(&b'}')
}

fn compile(pattern: &str) -> Option<Regex> {
    Regex::new(&rust_syntax(pattern)).ok()
}

fn rule_regex(index: usize) -> Option<&'static Regex> {
    compiled().rules[index]
        .get_or_init(|| compile(RULES[index].pattern))
        .as_ref()
}

/// Pushes the spans of the secrets gitleaks' rules find in `b`.
pub(super) fn scan_gitleaks(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let keywords = keywords();
    // Rules are few (about 220): a bit set of the ones whose keywords occur.
    let mut wanted = [0u64; 4];
    let mut any = false;
    for found in keywords.automaton.find_overlapping_iter(b) {
        let rule = keywords.rule_of[found.pattern().as_usize()];
        if let Some(word) = wanted.get_mut(rule / 64) {
            *word |= 1 << (rule % 64);
            any = true;
        }
    }
    if !any {
        return;
    }
    for (index, rule) in RULES.iter().enumerate() {
        if wanted
            .get(index / 64)
            .is_none_or(|w| w & (1 << (index % 64)) == 0)
        {
            continue;
        }
        let Some(regex) = rule_regex(index) else {
            continue;
        };
        for captures in regex.captures_iter(b) {
            let whole = captures.get(0).expect("group 0 is the match");
            let secret = match rule.secret_group {
                0 => (1..captures.len())
                    .find_map(|g| captures.get(g).filter(|m| !m.is_empty()))
                    .unwrap_or(whole),
                group => match captures.get(group) {
                    Some(m) => m,
                    None => continue,
                },
            };
            let text = secret.as_bytes();
            // `sqlite3_api->column_bytes16`: a member access, which the generic rule reads as
            // an assignment (`>`) to a secret-named key.
            let member = secret.start() >= 2 && &b[secret.start() - 2..secret.start()] == b"->";
            if member
                || text.is_empty()
                || text.windows(REDACTED_B.len()).any(|w| w == REDACTED_B)
                || (rule.entropy > 0.0 && shannon_entropy(text) <= rule.entropy)
            {
                continue;
            }
            let found = Found {
                secret: text,
                whole: whole.as_bytes(),
                line: line_around(b, whole.start(), whole.end()),
            };
            let allowed = GLOBAL_ALLOWLISTS
                .iter()
                .zip(&compiled().global)
                .chain(rule.allowlists.iter().zip(&compiled().allowlists[index]))
                .any(|(list, regexes)| found.allowed_by(list, regexes));
            if !allowed {
                out.push((secret.start(), secret.end()));
            }
        }
    }
}

/// A match, as the allowlists see it.
struct Found<'a> {
    secret: &'a [u8],
    whole: &'a [u8],
    line: &'a [u8],
}

impl Found<'_> {
    fn allowed_by(&self, list: &AllowlistData, compiled: &OnceLock<CompiledAllowlist>) -> bool {
        let target = match list.target {
            Target::Secret => self.secret,
            Target::Match => self.whole,
            Target::Line => self.line,
        };
        let compiled = compiled.get_or_init(|| CompiledAllowlist::new(list));
        let by_regex = compiled.regexes.iter().any(|r| r.is_match(target));
        let by_stopword = compiled
            .stopwords
            .as_ref()
            .is_some_and(|words| words.is_match(self.secret));
        if list.all {
            (list.regexes.is_empty() || by_regex) && (list.stopwords.is_empty() || by_stopword)
        } else {
            by_regex || by_stopword
        }
    }
}

/// The line that holds `b[start..end]`, at most [`LINE_CONTEXT`] bytes on either side.
fn line_around(b: &[u8], start: usize, end: usize) -> &[u8] {
    let floor = start.saturating_sub(LINE_CONTEXT);
    let ceiling = (end + LINE_CONTEXT).min(b.len());
    let line_start = memchr::memrchr(b'\n', &b[floor..start]).map_or(floor, |p| floor + p + 1);
    let line_end = memchr::memchr(b'\n', &b[end..ceiling]).map_or(ceiling, |p| end + p);
    &b[line_start..line_end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gitleaks_pattern_compiles() {
        let mut broken = Vec::new();
        for rule in RULES {
            if compile(rule.pattern).is_none() {
                broken.push(rule.id.to_string());
            }
            for list in rule.allowlists.iter().chain(GLOBAL_ALLOWLISTS) {
                for pattern in list.regexes {
                    if compile(pattern).is_none() {
                        broken.push(format!("{}: allowlist {pattern}", rule.id));
                    }
                }
            }
        }
        assert!(broken.is_empty(), "{broken:#?}");
        assert!(RULES.len() >= 200, "{} rules", RULES.len());
    }

    #[test]
    fn go_syntax_is_read_as_go_reads_it() {
        assert_eq!(
            rust_syntax(r"^\$(?:\d+|{\d+})$"),
            r"(?-u)^\$(?:\d+|\{\d+})$"
        );
        assert_eq!(rust_syntax(r"a{2,}[{]\{x{1}"), r"(?-u)a{2,}[{]\{x{1}");
    }
}
