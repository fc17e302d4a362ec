//! One table per repair class of the lenient reader (docs/gate.md, "Reading what models
//! send"): what each class repairs, with the sentence it reports, and next to it what the
//! class leaves refused because reading it would be a guess.

use super::parse;
use serde_json::Value;

/// What an input must come to.
enum Want {
    /// This object, with a repair sentence holding this text.
    Reads(&'static str, &'static str),
    /// A refusal whose message holds this text.
    Refused(&'static str),
}
use Want::{Reads, Refused};

fn check(class: &str, table: &[(&str, Want)]) {
    for (input, want) in table {
        let got = parse(input.as_bytes());
        match (want, got) {
            (Reads(json, note), Ok(p)) => {
                let want: Value = serde_json::from_str(json).expect("the table's JSON");
                assert_eq!(p.value, want, "{class}: {input:?}");
                assert!(
                    p.repairs.iter().any(|r| r.contains(note)),
                    "{class}: {input:?}: no repair saying {note:?} in {:?}",
                    p.repairs
                );
                assert_eq!(p.more_calls, 0, "{class}: {input:?}");
            }
            (Refused(why), Err(e)) => {
                assert!(e.message.contains(why), "{class}: {input:?}: {e}");
            }
            (Reads(..), Err(e)) => panic!("{class}: {input:?} refused: {e}"),
            (Refused(why), Ok(p)) => {
                panic!(
                    "{class}: {input:?} read as {} (wanted a refusal: {why})",
                    p.value
                )
            }
        }
    }
}

#[test]
fn unquoted_one_word_values() {
    check(
        "unquoted values",
        &[
            (
                "{url: https://x.org/a}",
                Reads(r#"{"url":"https://x.org/a"}"#, "unquoted one-word value"),
            ),
            (
                r#"{"date": 2024-10-18T18:35:22Z}"#,
                Reads(
                    r#"{"date":"2024-10-18T18:35:22Z"}"#,
                    "1 unquoted one-word value",
                ),
            ),
            (
                r#"{"rowId": 57eeeeb1-450b-482c-81b9-4be77e95dee2}"#,
                Reads(
                    r#"{"rowId":"57eeeeb1-450b-482c-81b9-4be77e95dee2"}"#,
                    "unquoted one-word value",
                ),
            ),
            (
                "{\"a\": yes,\n \"b\": Zürich}",
                Reads(r#"{"a":"yes","b":"Zürich"}"#, "2 unquoted one-word values"),
            ),
            (
                r#"{"range": 10-20, "v": 1.1.1}"#,
                Reads(r#"{"range":"10-20","v":"1.1.1"}"#, "unquoted"),
            ),
            (
                r#"{"key": 1notanumber}"#,
                Reads(r#"{"key":"1notanumber"}"#, "unquoted"),
            ),
            (
                r#"{"a": [x, y]}"#,
                Reads(r#"{"a":["x","y"]}"#, "2 unquoted one-word values"),
            ),
            ("{\"a\": trueish}", Reads(r#"{"a":"trueish"}"#, "unquoted")),
            // Guesses: several words, a word that may be cut, numbers in other notations,
            // placeholders, a word running into a bracket.
            (r#"{"a": hello world}"#, Refused("more than one word")),
            (
                r#"{"a": hello"#,
                Refused("cut off inside an unquoted value"),
            ),
            (r#"{"a": 0x1F}"#, Refused("invalid number `0x1F`")),
            (r#"{"a": 1_000}"#, Refused("invalid number `1_000`")),
            (r#"{"a": +1}"#, Refused("invalid number `+1`")),
            (r#"{"a": 01}"#, Refused("invalid number `01`")),
            (r#"{"a": 1e}"#, Refused("invalid number `1e`")),
            (r#"{"a": ...}"#, Refused("invalid number `...`")),
            (r#"{"a": NaN}"#, Refused("invalid number `NaN`")),
            (r#"{"a": TRUE}"#, Refused("reads as a literal or as a word")),
            (r#"{"a": Null}"#, Refused("reads as a literal or as a word")),
            (
                "{text:words{words in brackets}}",
                Refused("more than one word"),
            ),
            (r#"{"key": "v"alue"}"#, Refused("expected `,` or `}`")),
        ],
    );
}

#[test]
fn non_ascii_spaces_between_tokens() {
    check(
        "non-ASCII spaces",
        &[
            (
                "{\u{a0}\"a\":\u{3000}1\u{202f}}",
                Reads(
                    r#"{"a":1}"#,
                    "read 3 non-ASCII spaces between tokens as whitespace",
                ),
            ),
            (
                "{\"a\":\u{2000}1,\u{200b}\"b\":\u{205f}[2,\u{2009}3]\u{feff}}",
                Reads(r#"{"a":1,"b":[2,3]}"#, "non-ASCII spaces"),
            ),
            // Inside a string a space is the string's own.
            (
                "{'a':'x\u{a0}y'}",
                Reads("{\"a\":\"x\u{a0}y\"}", "single-quoted"),
            ),
            // Not a space: a character no reading takes.
            ("{\"a\":\u{2028}1}", Refused("expected a value")),
        ],
    );
}

#[test]
fn wrong_and_missing_inner_closers() {
    check(
        "closers",
        &[
            (r#"{"a":2]"#, Reads(r#"{"a":2}"#, "read 1 wrong closer")),
            (r#"{"a":2,]"#, Reads(r#"{"a":2}"#, "wrong closer")),
            (
                "{\"values\":[1,2,3\n}",
                Reads(r#"{"values":[1,2,3]}"#, "inserted 1 missing closer"),
            ),
            (
                r#"{"a":{"b":1]}"#,
                Reads(r#"{"a":{"b":1}}"#, "wrong closer"),
            ),
            (
                r#"{"x":[{"a":1]}"#,
                Reads(r#"{"x":[{"a":1}]}"#, "missing closer"),
            ),
            (
                r#"{"key1": ["value1", "value2"}, "key2": ["value3"]}"#,
                Reads(
                    r#"{"key1":["value1","value2"],"key2":["value3"]}"#,
                    "missing closer",
                ),
            ),
        ],
    );
}

#[test]
fn missing_commas_between_lines() {
    check(
        "missing commas",
        &[
            (
                "{\"a\": 1\n\"b\": 2}",
                Reads(r#"{"a":1,"b":2}"#, "inserted 1 missing comma between lines"),
            ),
            (
                "{\n  \"a\": [\"x\"\n    \"y\"]\n  b: 3\n}",
                Reads(r#"{"a":["x","y"],"b":3}"#, "2 missing commas"),
            ),
            // On one line the two are not known to be members of one object.
            (r#"{"a": 1 "b": 2}"#, Refused("expected `,` or `}`")),
            (r#"{"a": ["x" "y"]}"#, Refused("expected `,` or `]`")),
        ],
    );
}

#[test]
fn leading_commas() {
    check(
        "leading comma",
        &[
            (
                r#"{,"a":1}"#,
                Reads(r#"{"a":1}"#, "removed 1 leading comma"),
            ),
            (r#"{ , }"#, Reads(r#"{}"#, "leading comma")),
            (r#"{"a":1,,"b":2}"#, Refused("expected a key")),
        ],
    );
}

#[test]
fn numbers_missing_a_digit() {
    check(
        "numbers",
        &[
            (
                r#"{"key": .25}"#,
                Reads(r#"{"key":0.25}"#, "read 1 number with the 0 it lacked"),
            ),
            (
                r#"{"key": 1. , "b": -.5}"#,
                Reads(r#"{"key":1.0,"b":-0.5}"#, "2 numbers"),
            ),
            (
                r#"{"key": 2.e3}"#,
                Reads(r#"{"key":2.0e3}"#, "the 0 it lacked"),
            ),
            (r#"{"key": 1."#, Refused("cut off inside a number")),
            (r#"{"key": .}"#, Refused("invalid number `.`")),
            (r#"{"key": -}"#, Refused("invalid number `-`")),
        ],
    );
}

#[test]
fn missing_colons_between_two_strings() {
    check(
        "missing colon",
        &[
            (
                r#"{"key2" "value2"}"#,
                Reads(r#"{"key2":"value2"}"#, "inserted 1 missing colon"),
            ),
            (
                r#"{"a" "b", "c": 1}"#,
                Reads(r#"{"a":"b","c":1}"#, "missing colon"),
            ),
            (r#"{"a" 1}"#, Refused("expected `:` after the key")),
            ("{\"a\"\n\"b\"}", Refused("expected `:` after the key")),
            (r#"{a "b"}"#, Refused("expected `:` after the key")),
        ],
    );
}

#[test]
fn typographic_quotes() {
    check(
        "typographic quotes",
        &[
            (
                "{\u{201c}a\u{201d}:\u{201c}b\u{201d}}",
                Reads(r#"{"a":"b"}"#, "2 typographic-quoted strings"),
            ),
            (
                "{\u{2018}a\u{2019}: [\u{2018}x y\u{2019}]}",
                Reads(r#"{"a":["x y"]}"#, "typographic"),
            ),
            ("{\u{201c}a\": 1}", Refused("cut off inside a key")),
            ("{\"a\": \u{201c}b", Refused("cut off inside a string")),
        ],
    );
}

#[test]
fn backslash_escaped_documents() {
    check(
        "escaped document",
        &[
            (
                r#"{\"key\": \"value\"}"#,
                Reads(r#"{"key":"value"}"#, "unescaped a backslash-escaped object"),
            ),
            (
                r#"{\"a\": [1, \"x\\\"y\"]}"#,
                Reads(r#"{"a":[1,"x\"y"]}"#, "unescaped"),
            ),
            // A quote left unescaped: the text is not one escaped object.
            (r#"{\"key\": "value\"}"#, Refused("")),
        ],
    );
}

/// The cases where one reading would drop content (issue 37): each is one call with all
/// of it, several calls (counted, for the caller to refuse or split), or a refusal.
#[test]
fn nothing_is_dropped() {
    check(
        "early closer",
        &[
            (
                r#"{"query": "crash"}, "state": "closed"}"#,
                Reads(
                    r#"{"query":"crash","state":"closed"}"#,
                    "after an early `}`",
                ),
            ),
            (
                r#"{"key1": "value1"}, "key2": "value2", "key3": "value3"}"#,
                Reads(
                    r#"{"key1":"value1","key2":"value2","key3":"value3"}"#,
                    "early",
                ),
            ),
            (
                r#"{"key": "value"}, "key2" "value2"}"#,
                Reads(r#"{"key":"value","key2":"value2"}"#, "missing colon"),
            ),
            // After an object value, the `}` may be that object's or the root's.
            (
                r#"{"a": {"b": 1}}, "c": 2}"#,
                Refused("another value follows"),
            ),
            (
                r#"{"key": "value"}, "key2": }"#,
                Refused("expected a value"),
            ),
            (
                r#"{"key": "value"}, ["abc"]"#,
                Refused("another value follows"),
            ),
            (
                r#"{"key":"value"}[1,2,3,True]"#,
                Refused("another value follows"),
            ),
        ],
    );
    check(
        "fence in braces",
        &[
            (
                "{```\n{\"query\":\"crash\"}\n```}",
                Reads(r#"{"query":"crash"}"#, "code fence inside the braces"),
            ),
            (
                "{```json\n{\"a\":\"b\"}\n```}",
                Reads(r#"{"a":"b"}"#, "code fence inside the braces"),
            ),
            ("{```\nls\n```}", Refused("must hold one object")),
            (
                "{```\n{\"a\":1}\n```, \"b\": 2}",
                Refused("expected `}` closing the braces"),
            ),
        ],
    );
    check(
        "arrays",
        &[
            (
                r#"[{"key":"value"}][{"key":"value_after"}]"#,
                Refused("top-level JSON value is an array"),
            ),
            (
                r#"[{"key":"value"}},{"key":"value"}]"#,
                Refused("top-level JSON value is an array"),
            ),
            (r#"[]{}"#, Refused("top-level JSON value is an array")),
        ],
    );
    check(
        "objects after",
        &[
            (
                r#"{"a":1} then {"b": 2"#,
                Refused("another object beside the call"),
            ),
            (
                "{\"a\":1}\nand {'b': 'hel",
                Refused("another object beside the call"),
            ),
        ],
    );
    for (input, more) in [
        (r#"{"a":1}{"a":2}"#, 1),
        ("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n", 2),
        (r#"{"a":2}{}"#, 1),
        (r#"{"a":1} and then {"b":2}"#, 1),
        ("```json\n{\"a\":1}\n```\nand\n```json\n{\"b\":2}\n```", 1),
    ] {
        let p = parse(input.as_bytes()).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(p.more_calls, more, "{input:?}");
    }
}
