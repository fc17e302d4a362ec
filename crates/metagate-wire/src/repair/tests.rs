//! The lenient reader's tests, all through [`parse`]: tables of inputs with what must come
//! out (or the failure and where), exact repair sentences, and property tests.

use super::bytes::is_unquoted_key_char;
use super::messages::MSG_DEPTH;
use super::*;
use proptest::prelude::*;

/// (name, input, expected object as JSON). Names starting with a dialect's
/// `as_str()` must come out in that dialect; their `repairs` must be empty
/// unless the name ends in `_repaired`. Every other input must have
/// non-empty `repairs` exactly when it is not strict JSON.
const CASES: &[(&str, &str, &str)] = &[
    ("strict", r#"{"a":1}"#, r#"{"a":1}"#),
    (
        "strict_ws_numbers",
        " {\"a\": [1, 2.5e3, -0, 1E+2], \"b\": {\"c\": null}}\n",
        r#"{"a":[1,2.5e3,-0,1E+2],"b":{"c":null}}"#,
    ),
    (
        "strict_escapes",
        r#"{"a":"\u00e9\ud83d\ude00\n\"\\\/"}"#,
        r#"{"a":"é😀\n\"\\/"}"#,
    ),
    (
        "fence_json",
        "```json\n{\"name\":\"x\",\"args\":{}}\n```",
        r#"{"name":"x","args":{}}"#,
    ),
    ("fence_no_tag", "```\n{\"a\":1}\n```", r#"{"a":1}"#),
    ("fence_inline", "```{\"a\":1}```", r#"{"a":1}"#),
    (
        "fence_with_prose",
        "Sure!\n```json\n{\"a\":1}\n```\nLet me know.",
        r#"{"a":1}"#,
    ),
    (
        "fence_second_holds_object",
        "```bash\nls -la\n```\nthen\n```json\n{\"a\":1}\n```",
        r#"{"a":1}"#,
    ),
    (
        "fence_string_holds_backticks",
        "```json\n{\"md\":\"```py\\nx\\n```\",}\n```",
        r#"{"md":"```py\nx\n```"}"#,
    ),
    ("fence_unclosed", "```json\n{\"a\":\"b\"}", r#"{"a":"b"}"#),
    (
        "fence_cut_off",
        "```json\n{\"a\":\"b\",\n```",
        r#"{"a":"b"}"#,
    ),
    (
        "prose_around",
        "Sure! Here is the call: {\"a\":1} Let me know…",
        r#"{"a":1}"#,
    ),
    ("prose_only_empty_object", "Nothing to pass: {}.", r#"{}"#),
    (
        "prose_leading_bracket",
        "[1] Here it is: {\"a\":1}",
        r#"{"a":1}"#,
    ),
    (
        "line_comment",
        "{\"a\":1, // the a\n\"b\":2}",
        r#"{"a":1,"b":2}"#,
    ),
    ("block_comment", "{/* c */\"a\":/* d */1}", r#"{"a":1}"#),
    (
        "single_quotes",
        r#"{'a':'it\'s "x"'}"#,
        r#"{"a":"it's \"x\""}"#,
    ),
    (
        "backtick_string",
        "{\"a\":`say \"hi\"`}",
        r#"{"a":"say \"hi\""}"#,
    ),
    (
        "unquoted_keys",
        "{tool_name: \"x\", tool-args: {a.b: 1, $c: 2, 名前: 3}}",
        r#"{"tool_name":"x","tool-args":{"a.b":1,"$c":2,"名前":3}}"#,
    ),
    ("trailing_comma_object", "{\"a\":1,}", r#"{"a":1}"#),
    (
        "trailing_comma_array",
        "{\"a\":[1,2,],\"b\":[],}",
        r#"{"a":[1,2],"b":[]}"#,
    ),
    (
        "python_literals",
        "{\"a\":True,\"b\":False,\"c\":None,\"d\":undefined,\"e\":\"True\"}",
        r#"{"a":true,"b":false,"c":null,"d":null,"e":"True"}"#,
    ),
    ("doubled_root", "{{\"a\":{\"b\":1}}}", r#"{"a":{"b":1}}"#),
    ("doubled_root_spaced", "{ {\"a\":1} }", r#"{"a":1}"#),
    ("tripled_root", "{{{\"a\":{\"b\":1}}}}", r#"{"a":{"b":1}}"#),
    (
        "raw_control_chars",
        "{\"a\":\"line1\nline2\ttab\u{1}\"}",
        r#"{"a":"line1\nline2\ttab\u0001"}"#,
    ),
    ("two_objects", "{\"a\":1}{\"b\":2}", r#"{"a":1}"#),
    ("two_objects_newline", "{\"a\":1}\n{\"b\":2}", r#"{"a":1}"#),
    (
        "three_objects_space",
        "{\"a\":1} {\"b\":2} {\"c\":3}",
        r#"{"a":1}"#,
    ),
    ("cut_after_string", "{\"a\":\"b\"", r#"{"a":"b"}"#),
    ("cut_nested", "{\"a\":{\"b\":[1,2]", r#"{"a":{"b":[1,2]}}"#),
    ("cut_after_comma", "{\"a\":\"b\",", r#"{"a":"b"}"#),
    ("cut_after_true", "{\"a\":true", r#"{"a":true}"#),
    ("cut_after_python_none", "{\"a\":None", r#"{"a":null}"#),
    (
        "cut_in_array_after_comma",
        "{\"a\":[\"x\",",
        r#"{"a":["x"]}"#,
    ),
    ("cut_number_then_space", "{\"a\":12 ", r#"{"a":12}"#),
    ("cut_after_open_brace", "{", r#"{}"#),
    (
        "invalid_escapes",
        r#"{"a":"\x41 \'q\'"}"#,
        r#"{"a":"x41 'q'"}"#,
    ),
    ("lone_surrogate", r#"{"a":"\ud800x"}"#, r#"{"a":"\ufffdx"}"#),
    ("byte_order_mark", "\u{feff}{\"a\":1}", r#"{"a":1}"#),
    (
        "big_number_kept_exactly",
        "{\"a\":123456789012345678901234567890.125e-3,}",
        r#"{"a":123456789012345678901234567890.125e-3}"#,
    ),
    (
        "everything_at_once",
        "Sure! Here you go:\n```json\n{'tool_name': 'search', tool_args: {query: 'rust \"json\"', limit: 5, exact: True,}, // done\n}\n```\nAnything else?",
        r#"{"tool_name":"search","tool_args":{"query":"rust \"json\"","limit":5,"exact":true}}"#,
    ),
    (
        "function_calls",
        "<function_calls>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">5</parameter>\n<parameter name=\"opts\">{\"a\":1}</parameter>\n<parameter name=\"flag\">true</parameter>\n<parameter name=\"q\">\"quoted\"</parameter>\n</invoke>\n</function_calls>",
        r#"{"name":"get_weather","arguments":{"city":"Paris","days":5,"opts":{"a":1},"flag":true,"q":"quoted"}}"#,
    ),
    (
        "function_calls_bare_invoke_single_quotes_entities",
        "<invoke name='a&amp;b'><parameter name='code'>\nif a &lt; b &amp;&amp; c:\n    pass\n\n</parameter></invoke>",
        r#"{"name":"a&b","arguments":{"code":"if a < b && c:\n    pass\n"}}"#,
    ),
    (
        "function_calls_in_prose_and_fence",
        "I'll check.\n```xml\n<function_calls><invoke name=\"ls\"><parameter name=\"path\"> /tmp </parameter></invoke></function_calls>\n```",
        r#"{"name":"ls","arguments":{"path":" /tmp "}}"#,
    ),
    (
        "invoke_tool_args",
        "<invoke name=\"x\"><tool_args>{\"a\": 1}</tool_args></invoke>",
        r#"{"name":"x","arguments":{"a":1}}"#,
    ),
    (
        "invoke_tool_args_repaired",
        "<invoke name=\"x\">\n<tool_args>\n{'a': True,}\n</tool_args>\n</invoke>",
        r#"{"name":"x","arguments":{"a":true}}"#,
    ),
    (
        "tool_call",
        "<tool_call>\n{\"name\": \"x\", \"arguments\": {\"a\": 1}}\n</tool_call>",
        r#"{"name":"x","arguments":{"a":1}}"#,
    ),
    (
        "tool_call_with_its_closing_tag_in_a_string",
        "<tool_call>{\"name\": \"x\", \"arguments\": {\"c\": \"echo '</tool_call>' </tool_call>\"}}</tool_call>",
        r#"{"name":"x","arguments":{"c":"echo '</tool_call>' </tool_call>"}}"#,
    ),
    (
        "invoke_tool_args_with_closing_tags_in_a_string",
        "<invoke name=\"x\"><tool_args>{\"c\": \"</tool_args></invoke>\"}</tool_args></invoke>",
        r#"{"name":"x","arguments":{"c":"</tool_args></invoke>"}}"#,
    ),
    (
        "tool_call_unclosed",
        "<tool_call>\n{\"name\": \"x\", \"arguments\": {\"a\": \"b\"}}",
        r#"{"name":"x","arguments":{"a":"b"}}"#,
    ),
    (
        "tool_call_after_prose_with_braces",
        "I'll use {tool} now: <tool_call>{\"name\": \"x\"}</tool_call>",
        r#"{"name":"x"}"#,
    ),
    (
        "json_before_tag_in_string",
        "{\"a\": \"<tool_call>\",}",
        r#"{"a":"<tool_call>"}"#,
    ),
    (
        "tool_call_any_envelope_repaired",
        "Calling now.\n<tool_call>\n{tool: 'x', args: {},}\n</tool_call>",
        r#"{"tool":"x","args":{}}"#,
    ),
];

#[test]
fn parameter_texts_come_with_readings_other_than_strings() {
    let p = parse(
        b"<invoke name=\"x\"><parameter name=\"n\">\n12345\n</parameter>\
          <parameter name=\"b\">true</parameter><parameter name=\"o\">{\"a\": 1}</parameter>\
          <parameter name=\"l\">[1, 2]</parameter><parameter name=\"s\">\"q\"</parameter>\
          <parameter name=\"z\">null</parameter><parameter name=\"t\">plain</parameter>\
          <parameter name=\"r\">1</parameter><parameter name=\"r\">2.50</parameter></invoke>",
    )
    .unwrap();
    let texts: Vec<(&str, &str)> = p
        .texts
        .iter()
        .map(|(k, t)| (k.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ("n", "12345"),
            ("b", "true"),
            ("o", "{\"a\": 1}"),
            ("l", "[1, 2]"),
            ("r", "2.50"),
        ]
    );
    // JSON dialects carry JSON: no texts.
    let p = parse(b"<tool_call>{\"name\":\"x\",\"arguments\":{\"n\":5}}</tool_call>").unwrap();
    assert!(p.texts.is_empty());
}

fn dialect_of(name: &str) -> Option<Dialect> {
    [
        Dialect::InvokeToolArgs,
        Dialect::FunctionCalls,
        Dialect::ToolCallTag,
    ]
    .into_iter()
    .find(|d| name.starts_with(d.as_str()))
}

#[test]
fn cases() {
    for &(name, input, expected) in CASES {
        let expected: Value = serde_json::from_str(expected).unwrap();
        let got = parse(input.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got.value, expected, "{name}: value");
        match dialect_of(name) {
            Some(d) => {
                assert_eq!(got.dialect, Some(d), "{name}: dialect");
                assert_eq!(
                    got.repairs.is_empty(),
                    !name.ends_with("_repaired"),
                    "{name}: repairs {:?}",
                    got.repairs
                );
            }
            None => {
                assert_eq!(got.dialect, None, "{name}: dialect");
                // Objects that follow the first one are warnings, not repairs.
                let strict = serde_json::from_str::<Value>(input).is_ok();
                assert_eq!(
                    got.repairs.is_empty(),
                    strict || name.contains("objects"),
                    "{name}: repairs {:?}",
                    got.repairs
                );
            }
        }
        assert_eq!(
            !got.warnings.is_empty(),
            name.contains("objects"),
            "{name}: warnings {:?}",
            got.warnings
        );
        // Idempotence.
        let again = parse(serde_json::to_string(&got.value).unwrap().as_bytes()).unwrap();
        assert_eq!(again.value, got.value, "{name}: idempotence");
        assert!(again.repairs.is_empty(), "{name}: idempotence");
    }
}

fn repairs_of(input: &str) -> Vec<String> {
    parse(input.as_bytes()).unwrap().repairs
}

#[test]
fn exact_messages() {
    assert_eq!(
        repairs_of("```json\n{'a': True, b: None, c: [1,],}\n```"),
        [
            "removed a markdown code fence",
            "converted 1 single-quoted string to double quotes",
            "replaced Python literal True with true",
            "quoted 2 unquoted keys",
            "replaced Python literal None with null",
            "removed 2 trailing commas",
        ]
    );
    assert_eq!(
        repairs_of("Here: {\"a\":{\"b\":[\"x\","),
        [
            "ignored text before the object",
            "completed output that was cut off with `]}}`"
        ]
    );
    assert_eq!(
        repairs_of("{{\"a\":\"x\ty\"}} // c\n"),
        [
            "unwrapped a doubled root `{{ … }}`",
            "escaped 1 raw control character inside strings",
            "ignored text after the object",
        ]
    );
    assert_eq!(
        repairs_of("{\"a\":[True,True],\"b\":undefined,'c':`d`,\"e\":\"\\q\\ud800\"}"),
        [
            "replaced Python literal True with true (2 times)",
            "replaced JavaScript literal undefined with null",
            "converted 1 single-quoted string to double quotes",
            "converted 1 backtick string to double quotes",
            "dropped the backslash of 1 invalid escape sequence",
            "replaced 1 lone surrogate escape with U+FFFD",
        ]
    );
    assert_eq!(repairs_of("{/*x*/\"a\":1 // y\n}"), ["removed 2 comments"]);
    let p = parse(b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}").unwrap();
    assert!(p.repairs.is_empty());
    assert_eq!(
        p.warnings,
        ["2 more objects followed the first one and were ignored"]
    );
    let p = parse(b"{\"a\":1} {\"b\":2} and some prose").unwrap();
    assert_eq!(p.repairs, ["ignored text after the object"]);
    assert_eq!(
        p.warnings,
        ["1 more object followed the first one and was ignored"]
    );
    let p = parse(b"{\"a\":\"\x80x\"}").unwrap();
    assert_eq!(p.repairs[0], "replaced invalid UTF-8");
    let p = parse(
        b"<invoke name=\"a\"><parameter name=\"k\">1</parameter></invoke><invoke name=\"b\"></invoke>",
    )
    .unwrap();
    assert_eq!(
        p.warnings,
        ["1 more <invoke> block followed the first one and was ignored"]
    );
    let p = parse(b"<invoke name=\"a\"><parameter name=\"k\">1</parameter>").unwrap();
    assert_eq!(
        p.repairs,
        ["completed output that was cut off with `</invoke>`"]
    );
    let p =
        parse(b"<tool_call>{\"name\":\"a\"}</tool_call>\n<tool_call>{\"name\":\"b\"}</tool_call>")
            .unwrap();
    assert_eq!(p.value, serde_json::json!({"name":"a"}));
    assert_eq!(
        p.warnings,
        ["1 more <tool_call> block followed the first one and was ignored"]
    );
    assert_eq!(Dialect::FunctionCalls.as_str(), "function_calls");
    assert_eq!(Dialect::InvokeToolArgs.as_str(), "invoke_tool_args");
    assert_eq!(Dialect::ToolCallTag.as_str(), "tool_call");
}

#[test]
fn numbers_keep_their_digits() {
    let p = parse(b"{\"a\": 3.14159265358979323846264338327950288419716939937510,}").unwrap();
    assert_eq!(
        p.value["a"].to_string(),
        "3.14159265358979323846264338327950288419716939937510"
    );
    // serde_json spells exponents its own way, in strict parsing too.
    let p = parse(b"{\"a\": 1e400,}").unwrap();
    let strict: Value = serde_json::from_str("{\"a\": 1e400}").unwrap();
    assert_eq!(p.value, strict);
}

/// (name, input, message substring, line, column)
const REJECTS: &[(&str, &str, &str, usize, usize)] = &[
    // A `{` before the call: a reader taking the first `{` (Agent Zero's) reads another
    // call than this one would (issue 39).
    (
        "prose_brace_before_the_call",
        "Use {braces} like this: {\"a\":1}",
        "a `{` in the text before the call",
        1,
        5,
    ),
    (
        "prose_empty_object_before_the_call",
        "The set {} is empty; call {\"a\":1}",
        "a `{` in the text before the call",
        1,
        9,
    ),
    (
        "prose_call_before_a_fenced_call",
        "I will run {…\"code\":\"sudo id\"…} now.\n```json\n{\"tool_name\":\"response\"}\n```",
        "a `{` in the text before the call",
        1,
        12,
    ),
    (
        "cut_string",
        r#"{"a":"hel"#,
        "output was cut off inside a string",
        1,
        10,
    ),
    (
        "cut_number",
        r#"{"a":1"#,
        "output was cut off inside a number",
        1,
        7,
    ),
    (
        "cut_number_in_array",
        r#"{"a":[1,2"#,
        "output was cut off inside a number",
        1,
        10,
    ),
    (
        "cut_key",
        r#"{"a":"b","c"#,
        "output was cut off inside a key",
        1,
        12,
    ),
    (
        "cut_unquoted_key",
        r#"{"a":"b", c"#,
        "output was cut off inside a key",
        1,
        12,
    ),
    (
        "key_no_value",
        r#"{"a":"#,
        "output was cut off after a key",
        1,
        6,
    ),
    (
        "key_no_colon",
        r#"{"a""#,
        "output was cut off after a key",
        1,
        5,
    ),
    (
        "cut_literal",
        r#"{"a":tr"#,
        "output was cut off inside a literal",
        1,
        8,
    ),
    (
        "cut_escape",
        r#"{"a":"x\u12"#,
        "output was cut off inside a string",
        1,
        12,
    ),
    (
        "array_top",
        "[1,2]",
        "top-level JSON value is an array, not an object",
        1,
        1,
    ),
    (
        "array_top_lenient",
        " [1,2,]",
        "top-level JSON value is an array, not an object",
        1,
        2,
    ),
    (
        "array_in_fence",
        "x\n```json\n[{\"a\":1},]\n```",
        "top-level JSON value is an array",
        3,
        1,
    ),
    (
        "string_top",
        "\"x\"",
        "top-level JSON value is a string, not an object",
        1,
        1,
    ),
    (
        "number_top",
        "\n 42",
        "top-level JSON value is a number, not an object",
        2,
        2,
    ),
    (
        "null_top",
        "null",
        "top-level JSON value is null, not an object",
        1,
        1,
    ),
    ("empty", "", "input is empty", 1, 1),
    ("blank", " \n\t ", "input is empty", 1, 1),
    (
        "only_prose",
        "Hello, I cannot help with that.",
        "no JSON object found",
        1,
        1,
    ),
    (
        "plus_number",
        "{\n  \"a\": +1\n}",
        "invalid number `+1`",
        2,
        8,
    ),
    ("leading_zero", "{\"a\": 01}", "invalid number `01`", 1, 7),
    ("hex_number", "{\"a\": 0x1F}", "invalid number `0x1F`", 1, 7),
    ("nan", "{\"a\": NaN}", "invalid number `NaN`", 1, 7),
    (
        "bare_words",
        "{\"a\": yes please}",
        "unquoted text of more than one word",
        1,
        7,
    ),
    (
        "missing_comma",
        "{\"a\": 1 \"b\": 2}",
        "expected `,` or `}`",
        1,
        9,
    ),
    (
        "error_in_fence_points_at_original",
        "Sure:\n```json\n{\"a\": 01}\n```",
        "invalid number",
        3,
        7,
    ),
    (
        "invoke_without_name",
        "<invoke><parameter name=\"a\">1</parameter></invoke>",
        "<invoke> tag has no name attribute",
        1,
        1,
    ),
    (
        "parameter_without_name",
        "<invoke name=\"x\">\n  <parameter>1</parameter></invoke>",
        "<parameter> tag has no name attribute",
        2,
        3,
    ),
    (
        "unclosed_parameter",
        "<invoke name=\"x\">\n<parameter name=\"a\">1",
        "<parameter name=\"a\"> is not closed: missing </parameter>",
        2,
        1,
    ),
    (
        "function_calls_without_invoke",
        "<function_calls>\n</function_calls>",
        "<function_calls> contains no <invoke>",
        1,
        1,
    ),
    (
        "tool_call_cut",
        "<tool_call>\n{\"name\":\"x\",\"arguments\":{\"a\":\"b",
        "output was cut off inside a string",
        2,
        32,
    ),
    (
        "tool_call_empty",
        "<tool_call></tool_call>",
        "no JSON object found",
        1,
        12,
    ),
];

#[test]
fn rejects() {
    let deep = "[".repeat(100_000);
    let deep_in_object = format!("{{\"a\":\n{deep}");
    let generated = [
        ("100k_nested_brackets", deep.as_str(), MSG_DEPTH, 1, 129),
        (
            "100k_nested_in_object",
            deep_in_object.as_str(),
            MSG_DEPTH,
            2,
            128,
        ),
    ];
    for &(name, input, msg, line, column) in REJECTS.iter().chain(&generated) {
        let e = parse(input.as_bytes()).expect_err(name);
        assert!(e.message.contains(msg), "{name}: {e}");
        assert_eq!((e.line, e.column), (line, column), "{name}: {e}");
    }
}

#[test]
fn deep_nesting_is_rejected_without_overflow() {
    for input in [
        vec![b'['; 100_000],
        [b"{\"a\":".as_slice(), &[b'['; 100_000]].concat(),
        b"{\"a\":".repeat(100_000),
    ] {
        let e = parse(&input).unwrap_err();
        assert!(e.message.contains("nesting deeper than 128 levels"), "{e}");
        assert_eq!(e.line, 1);
    }
    let e = parse(&[b'['; 100_000]).unwrap_err();
    assert_eq!((e.line, e.column), (1, 129));
    // Braces alone open as many (doubled) roots: too deep too, not a missing key.
    let e = parse(&[b'{'; 100_000]).unwrap_err();
    assert!(e.too_deep, "{e}");
    assert_eq!(e.message, MSG_DEPTH);
    assert_eq!((e.line, e.column), (1, 130));
    // A few braces that never close are still read as a doubled root.
    assert!(parse(b"{{\"a\":1}}").is_ok());
    // 128 levels are fine.
    let s = format!("{}1{}", "{\"a\":".repeat(128), "}".repeat(128));
    assert!(parse(s.as_bytes()).is_ok());
    let s = format!("{}1{},", "{\"a\":".repeat(128), "}".repeat(128));
    assert!(parse(s.as_bytes()).is_ok());
    let s = format!("{}1{},", "{\"a\":".repeat(129), "}".repeat(129));
    assert!(parse(s.as_bytes()).is_err());
}

#[test]
fn display() {
    let e = parse(b"{\"a\":").unwrap_err();
    assert_eq!(
        e.to_string(),
        "output was cut off after a key, before its value; not completed at line 1, column 6"
    );
}

#[test]
fn pathological_inputs_finish() {
    // Each must end without a panic or a stack overflow; how fast is the bench's business.
    let n = 2_000_000;
    let _ = parse(&vec![b'{'; n]);
    let _ = parse(format!("{{\"a\":\"{}", "{".repeat(n)).as_bytes());
    let _ = parse("{x ".repeat(n / 3).as_bytes());
    let _ = parse("{\"a".repeat(n / 3).as_bytes());
    let _ = parse("```{\"a\":\"".repeat(n / 8).as_bytes());
    let _ = parse("{}".repeat(n / 2).as_bytes());
    let _ = parse("<".repeat(n).as_bytes());
    let p = parse(format!("{}{{\"a\":1}}", "{ ".repeat(n / 2)).as_bytes());
    assert!(p.is_err() || p.unwrap().value.is_object());
}

// --- property tests ---------------------------------------------------

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,8}",
        prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
        prop::collection::vec(
            prop::sample::select(vec![
                "\"",
                "'",
                "`",
                "\\",
                "\n",
                "{",
                "}",
                "```",
                "//",
                "True",
                "<invoke name=\"x\">",
                "é"
            ]),
            0..5
        )
        .prop_map(|v| v.concat()),
    ]
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z_$][a-zA-Z0-9_.$-]{0,6}", arb_string()]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = Value> {
    prop::collection::vec((arb_key(), arb_json()), 0..6)
        .prop_map(|kv| Value::Object(kv.into_iter().collect()))
}

#[derive(Clone, Copy)]
struct Style {
    unquote_keys: bool,
    single_quotes: bool,
    trailing_commas: bool,
}

fn emit_str(s: &str, st: Style, out: &mut String) {
    let json = serde_json::to_string(s).unwrap();
    if st.single_quotes && !s.contains('\'') {
        out.push('\'');
        out.push_str(&json[1..json.len() - 1]);
        out.push('\'');
    } else {
        out.push_str(&json);
    }
}

fn emit(v: &Value, st: Style, out: &mut String) {
    match v {
        Value::String(s) => emit_str(s, st, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                emit(item, st, out);
            }
            if st.trailing_commas && !items.is_empty() {
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if st.unquote_keys && !k.is_empty() && k.chars().all(is_unquoted_key_char) {
                    out.push_str(k);
                } else {
                    emit_str(k, st, out);
                }
                out.push(':');
                emit(item, st, out);
            }
            if st.trailing_commas && !map.is_empty() {
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&serde_json::to_string(other).unwrap()),
    }
}

fn styled(v: &Value, st: Style) -> String {
    let mut out = String::new();
    emit(v, st, &mut out);
    out
}

fn mutated_json() -> impl Strategy<Value = Vec<u8>> {
    let tokens = prop::collection::vec(
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"",
            "'",
            "`",
            "\\",
            "\\u",
            "d83d",
            "true",
            "Tr",
            "None",
            "1",
            "-",
            "e",
            ".",
            "\n",
            " ",
            "```",
            "```json\n",
            "//",
            "/*",
            "*/",
            "a",
            "<invoke name=\"x\">",
            "<parameter name=\"k\">",
            "</parameter>",
            "</invoke>",
            "<tool_call>",
            "</tool_call>",
            "<tool_args>",
            "<function_calls>",
            "&lt;",
            "é",
        ]),
        0..40,
    )
    .prop_map(|v| v.concat().into_bytes());
    let mutations = (
        arb_object(),
        prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 0..6),
    )
        .prop_map(|(v, muts)| {
            let mut bytes = serde_json::to_vec(&v).unwrap();
            for (idx, op, byte) in muts {
                let len = bytes.len();
                if len == 0 {
                    bytes.push(byte);
                    continue;
                }
                let i = idx.index(len);
                match op {
                    0 => bytes[i] = byte,
                    1 => {
                        bytes.remove(i);
                    }
                    2 => bytes.insert(i, byte),
                    _ => bytes.truncate(i),
                }
            }
            bytes
        });
    prop_oneof![tokens, mutations]
}

fn check_ok_is_stable(input: &[u8]) {
    if let Ok(p) = parse(input) {
        assert!(p.value.is_object());
        let again = parse(serde_json::to_string(&p.value).unwrap().as_bytes()).unwrap();
        assert_eq!(again.value, p.value);
        assert!(again.repairs.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics_on_bytes(input in prop::collection::vec(any::<u8>(), 0..300)) {
        check_ok_is_stable(&input);
    }

    #[test]
    fn never_panics_on_mutations(input in mutated_json()) {
        check_ok_is_stable(&input);
    }

    #[test]
    fn strict_round_trip(v in arb_object()) {
        let p = parse(&serde_json::to_vec(&v).unwrap()).unwrap();
        prop_assert_eq!(&p.value, &v);
        prop_assert!(p.repairs.is_empty());
        let pretty = serde_json::to_vec_pretty(&v).unwrap();
        let p = parse(&pretty).unwrap();
        prop_assert_eq!(&p.value, &v);
        prop_assert!(p.repairs.is_empty());
    }

    #[test]
    fn broken_round_trip(v in arb_object()) {
        let strict = serde_json::to_string(&v).unwrap();
        let none = Style { unquote_keys: false, single_quotes: false, trailing_commas: false };
        let all = Style { unquote_keys: true, single_quotes: true, trailing_commas: true };
        let mut inputs = vec![
            format!("```json\n{strict}\n```"),
            format!("```\n{strict}\n```"),
            format!("Sure! Here is the call: {strict}\nLet me know if you need more."),
            styled(&v, Style { unquote_keys: true, ..none }),
            styled(&v, Style { single_quotes: true, ..none }),
            styled(&v, Style { trailing_commas: true, ..none }),
            format!("Here:\n```json\n{}\n```\nDone.", styled(&v, all)),
        ];
        let cut = strict.trim_end_matches(['}', ']']);
        if !cut.ends_with(|c: char| c.is_ascii_digit()) {
            inputs.push(cut.to_owned());
            inputs.push(format!("```json\n{cut}"));
        }
        for input in inputs {
            let p = parse(input.as_bytes());
            prop_assert!(p.is_ok(), "{:?}: {:?}", input, p);
            let p = p.unwrap();
            prop_assert_eq!(&p.value, &v, "{:?}", input);
            prop_assert_eq!(p.dialect, None);
            if serde_json::from_str::<Value>(&input).is_err() {
                prop_assert!(!p.repairs.is_empty(), "{:?}", input);
            }
        }
    }
}
