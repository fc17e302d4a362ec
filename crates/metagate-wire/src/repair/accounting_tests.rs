//! The reader never passes a call with content dropped: for any input, either it refuses, or
//! every word of the text it read as the call is in the call read, and the text it kept
//! outside the call holds no object it could read as another (issue 37, docs/gate.md).

use super::object_search::ObjectSearch;
use proptest::prelude::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// The words (runs of letters, digits and `_`) of every key and scalar of `v`, lowercased; a
/// number by its text.
fn value_words(v: &Value, out: &mut BTreeSet<String>) {
    let add = |text: &str, out: &mut BTreeSet<String>| {
        for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !w.is_empty() {
                out.insert(w.to_lowercase());
            }
        }
    };
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                add(k, out);
                value_words(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| value_words(x, out)),
        Value::String(s) => add(s, out),
        Value::Number(n) => add(&n.to_string(), out),
        Value::Bool(b) => add(&b.to_string(), out),
        Value::Null => {}
    }
}

/// The words of `text` that must be in the call read from it: everything but comments,
/// code-fence markers and their language tags, the letter of an escape, and the literals
/// that read as null. Where the scan cannot tell (`//` inside an unquoted URL), it leaves a
/// word out, which makes the check weaker, never wrong.
fn source_words(text: &str) -> BTreeSet<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut words = BTreeSet::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut BTreeSet<String>| {
        let w = std::mem::take(word).to_lowercase();
        if !w.is_empty() && !matches!(w.as_str(), "none" | "undefined" | "null") {
            words.insert(w);
        }
    };
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match quote {
            None if c == '/' && next == Some('/') => {
                flush(&mut word, &mut words);
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            None if c == '/' && next == Some('*') => {
                flush(&mut word, &mut words);
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
                continue;
            }
            None if c == '`' && next == Some('`') && chars.get(i + 2) == Some(&'`') => {
                flush(&mut word, &mut words);
                i += 3;
                while i < chars.len() && (chars[i].is_alphanumeric() || "_-+.".contains(chars[i])) {
                    i += 1;
                }
                continue;
            }
            None if matches!(c, '"' | '\'' | '`' | '\u{201c}' | '\u{2018}') => {
                flush(&mut word, &mut words);
                quote = Some(match c {
                    '\u{201c}' => '\u{201d}',
                    '\u{2018}' => '\u{2019}',
                    q => q,
                });
            }
            Some(q) if c == q => {
                flush(&mut word, &mut words);
                quote = None;
            }
            Some(q) if c == '\\' && q != '\u{201d}' && q != '\u{2019}' => {
                flush(&mut word, &mut words);
                // An escape's letter (and a `\u`'s digits) are no word of the text.
                i += if next == Some('u') { 6 } else { 2 };
                continue;
            }
            _ if c.is_alphanumeric() || c == '_' => word.push(c),
            _ => flush(&mut word, &mut words),
        }
        i += 1;
    }
    flush(&mut word, &mut words);
    words
}

/// The invariant, for one input.
fn check_accounts(text: &str) -> Result<(), TestCaseError> {
    let mut search = ObjectSearch::new(text);
    let Ok(found) = search.find_json_object(0, text.len()) else {
        return Ok(());
    };
    prop_assert!(found.start < found.end && found.end <= text.len());
    let mut have = BTreeSet::new();
    value_words(&Value::Object(found.map.clone()), &mut have);
    let call_text = &text[found.start..found.end];
    let missing: Vec<String> = source_words(call_text).difference(&have).cloned().collect();
    prop_assert!(
        missing.is_empty(),
        "{text:?}: read {} from {call_text:?}, which drops {missing:?}",
        Value::Object(found.map.clone())
    );
    // Members after the call (`{"a":1}, "b": 2}`) are the call's, never prose.
    let after = text[found.end..].trim_start();
    if let Some(rest) = after.strip_prefix(',').filter(|_| found.more == 0) {
        prop_assert!(
            rest.chars().all(|c| c.is_whitespace() || "}]`".contains(c)),
            "{text:?}: {after:?} kept after the call"
        );
    }
    if found.more == 0 {
        for kept in [&text[..found.start], &text[found.end..]] {
            if let Ok(other) = super::parse(kept.as_bytes()) {
                prop_assert!(
                    other.value.as_object().is_some_and(|m| m.is_empty()),
                    "{text:?}: the text kept beside the call, {kept:?}, holds {}",
                    other.value
                );
            }
        }
    }
    Ok(())
}

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"",
            "'",
            "\"a\"",
            "\"b\":",
            "'c'",
            "key",
            "x9",
            "value",
            "1",
            ".5",
            "1.",
            "-",
            "true",
            "None",
            "TRUE",
            "https://x.org/p",
            "\n",
            " ",
            "\u{a0}",
            "\u{3000}",
            "\u{201c}q\u{201d}",
            "```",
            "```json\n",
            "//",
            "/*",
            "*/",
            "\\\"",
            "\\n",
            "Sure!",
            "then",
            "{\"k\": \"v\"}",
            "}, \"m\": 2}",
            "]}",
        ]),
        0..30,
    )
    .prop_map(|v| v.concat())
}

/// Calls damaged in the ways the reader repairs, in prose, sometimes followed by another.
fn damaged() -> impl Strategy<Value = String> {
    let member = prop_oneof![
        Just("\"alpha\": \"one two\"".to_string()),
        Just("beta: 2024-10-18T18:35:22Z".to_string()),
        Just("\"gamma\" \"three\"".to_string()),
        Just("\u{201c}delta\u{201d}: [4, 5\n 6]".to_string()),
        Just("'eps': .75".to_string()),
        Just("\"zeta\": {\"eta\": True}".to_string()),
    ];
    (
        prop::collection::vec(member, 1..4),
        0u8..6,
        prop::sample::select(vec!["", "Sure: ", "```json\n", "text {x} "]),
        prop::sample::select(vec![
            "",
            " done",
            "\n```",
            " and {\"theta\": 9}",
            " {\"iota\": 1",
        ]),
    )
        .prop_map(|(members, damage, before, after)| {
            let body = match damage {
                0 => members.join(", "),
                1 => members.join("\n"),
                2 => format!(", {}", members.join(",")),
                3 => members.join(",") + ",]",
                4 => match members.split_first() {
                    Some((first, rest)) if !rest.is_empty() => {
                        format!("{first}}}, {}", rest.join(", "))
                    }
                    _ => members.join(","),
                },
                _ => members.join(",\u{a0}"),
            };
            format!("{before}{{{body}}}{after}")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn a_call_read_accounts_for_its_text(text in prop_oneof![soup(), damaged()]) {
        check_accounts(&text)?;
    }

    #[test]
    fn a_call_read_from_bytes_accounts_for_its_text(
        bytes in prop::collection::vec(any::<u8>(), 0..200)
    ) {
        check_accounts(&String::from_utf8_lossy(&bytes))?;
    }
}
