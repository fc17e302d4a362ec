//! A table per dialect variant (what real servers hand back, and the malformed shapes their own
//! test suites feed their parsers: cut off, text around, thinking before, several calls,
//! fenced), the refusals, and the property that a reading accounts for every byte.

use super::*;
use proptest::prelude::*;
use serde_json::json;

/// `(what, input, dialect, [(name, arguments)])`.
type Case = (
    &'static str,
    &'static str,
    &'static str,
    Vec<(&'static str, Value)>,
);

fn cases() -> Vec<Case> {
    vec![
        // Mistral.
        (
            "mistral list",
            r#"[TOOL_CALLS][{"name":"add","arguments":{"a":3.5,"b":4}}]"#,
            "mistral",
            vec![("add", json!({"a":3.5,"b":4}))],
        ),
        (
            "mistral list, a space, ids, two calls",
            r#"[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}, "id": "abc123def"}, {"name": "sub", "arguments": {"a": 2}, "id": "bcd234efg"}]"#,
            "mistral",
            vec![("add", json!({"a":1})), ("sub", json!({"a":2}))],
        ),
        (
            "mistral name{…}",
            r#"[TOOL_CALLS]get_weather{"city": "Paris"}"#,
            "mistral",
            vec![("get_weather", json!({"city":"Paris"}))],
        ),
        (
            "mistral name[ARGS]{…}, two calls, prose before",
            "I'll check both.\n[TOOL_CALLS]get_weather[ARGS]{\"city\":\"Paris\"}[TOOL_CALLS]get_time[ARGS]{\"tz\":\"CET\"}",
            "mistral",
            vec![
                ("get_weather", json!({"city":"Paris"})),
                ("get_time", json!({"tz":"CET"})),
            ],
        ),
        (
            "mistral [CALL_ID]",
            r#"[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city":"Paris"}"#,
            "mistral",
            vec![("get_weather", json!({"city":"Paris"}))],
        ),
        (
            "mistral without the marker",
            r#"get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city":"Paris"}"#,
            "mistral",
            vec![("get_weather", json!({"city":"Paris"}))],
        ),
        (
            "magistral thinking before",
            r#"[THINK]Maybe [TOOL_CALLS]x[ARGS]{}?[/THINK][TOOL_CALLS]add[ARGS]{"a":1}"#,
            "mistral",
            vec![("add", json!({"a":1}))],
        ),
        // Qwen3-Coder XML and Functionary's <function=…>.
        (
            "qwen xml in <tool_call>",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>\n</tool_call>",
            "function_tag",
            vec![("get_weather", json!({"city":"Dallas"}))],
        ),
        (
            "qwen xml without <tool_call>, JSON values",
            "<function=search>\n<parameter=query>\nrust\n</parameter>\n<parameter=limit>\n5\n</parameter>\n<parameter=filters>\n{\"lang\": \"en\"}\n</parameter>\n</function>",
            "function_tag",
            vec![(
                "search",
                json!({"query":"rust","limit":5,"filters":{"lang":"en"}}),
            )],
        ),
        (
            "qwen xml, two calls, thinking before",
            "<think>\nI need <function=x> maybe\n</think>\n\n<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=b>\n</function>\n</tool_call>",
            "function_tag",
            vec![("a", json!({"x":1})), ("b", json!({}))],
        ),
        (
            "qwen xml, a </parameter> left out",
            "<function=write>\n<parameter=path>\na.txt\n<parameter=text>\nhi\n</parameter>\n</function>",
            "function_tag",
            vec![("write", json!({"path":"a.txt","text":"hi"}))],
        ),
        (
            "functionary v3.1",
            r#"<function=get_weather>{"city": "Dallas"}</function>"#,
            "function_tag",
            vec![("get_weather", json!({"city":"Dallas"}))],
        ),
        (
            "hermes fallback <function name=…>, two calls, text around",
            r#"Sure. <function name="a">{"x":1}</function> and <function name='b'>{}</function> done."#,
            "function_tag",
            vec![("a", json!({"x":1})), ("b", json!({}))],
        ),
        // <tool_call> blocks.
        (
            "two <tool_call> blocks",
            "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>",
            "tool_call",
            vec![("a", json!({"x":1})), ("b", json!({}))],
        ),
        (
            "one <tool_call>, thinking before, closer stripped",
            "<think>call a</think>\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": \"</tool_call>\"}}",
            "tool_call",
            vec![("a", json!({"x":"</tool_call>"}))],
        ),
        (
            "<tool_call> with arguments as a string",
            r#"<tool_call>{"name":"a","arguments":"{\"x\":1}"}</tool_call><tool_call>{"name":"b","parameters":{}}</tool_call>"#,
            "tool_call",
            vec![("a", json!({"x":1})), ("b", json!({}))],
        ),
        // DeepSeek.
        (
            "deepseek r1 with fence, thinking before",
            "<think>weather</think>\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Dallas\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            "deepseek",
            vec![("get_weather", json!({"city":"Dallas"}))],
        ),
        (
            "deepseek v3.1, two calls",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{\"x\":1}<｜tool▁call▁end｜><｜tool▁call▁begin｜>b<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            "deepseek",
            vec![("a", json!({"x":1})), ("b", json!({}))],
        ),
        (
            "deepseek ASCII bars and underscores",
            "<|tool_calls_begin|><|tool_call_begin|>function<|tool_sep|>get_weather\n{\"city\":\"Dallas\"}<|tool_call_end|><|tool_calls_end|>",
            "deepseek",
            vec![("get_weather", json!({"city":"Dallas"}))],
        ),
        (
            "deepseek spaces and escaped underscores",
            "<｜tool calls begin｜><｜tool\\_call\\_begin｜>a<｜tool sep｜>{}<｜tool call end｜>",
            "deepseek",
            vec![("a", json!({}))],
        ),
        // Harmony.
        (
            "harmony with analysis before",
            "<|channel|>analysis<|message|>Need to call get_weather to=functions.x.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Tokyo\"}<|call|>",
            "harmony",
            vec![("get_weather", json!({"city":"Tokyo"}))],
        ),
        (
            "harmony, to= in the role, <|call|> stripped",
            "<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{\"q\":1}",
            "harmony",
            vec![("lookup", json!({"q":1}))],
        ),
        (
            "harmony, two calls and a final message",
            "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{}<|call|><|start|>assistant<|channel|>commentary to=functions.b<|message|>{\"y\":2}<|call|>",
            "harmony",
            vec![("a", json!({})), ("b", json!({"y":2}))],
        ),
    ]
}

#[test]
fn every_variant_reads_as_its_calls() {
    for (what, input, dialect, want) in cases() {
        let reading = read(input)
            .unwrap_or_else(|| panic!("{what}: no dialect"))
            .unwrap_or_else(|r| panic!("{what}: refused: {}", r.describe(input)));
        assert_eq!(reading.dialect.name, dialect, "{what}");
        let got: Vec<(String, Value)> = reading
            .calls
            .iter()
            .map(|c| (c.name.clone(), Value::Object(c.arguments.clone())))
            .collect();
        let want: Vec<(String, Value)> = want.into_iter().map(|(n, a)| (n.to_owned(), a)).collect();
        assert_eq!(got, want, "{what}");
        assert_round_trips(input, &reading);
    }
}

/// Each call written again in place reads as the same call, and the text as it came is the
/// text when nothing is rewritten.
fn assert_round_trips(input: &str, reading: &Reading) {
    assert_eq!(write_in_kind(input, &reading.calls, |_, _| None), input);
    let rewritten = write_in_kind(input, &reading.calls, |_, c| {
        Some(reading.dialect.write(c, &c.name, &c.arguments))
    });
    let again = read(&rewritten)
        .expect("the rewritten text holds the dialect")
        .unwrap_or_else(|r| {
            panic!(
                "rewritten {rewritten:?} refused: {}",
                r.describe(&rewritten)
            )
        });
    assert_eq!(again.dialect, reading.dialect);
    let names = |r: &Reading| {
        r.calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone(), c.id.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&again), names(reading), "rewritten: {rewritten:?}");
}

#[test]
fn a_schema_decides_parameter_texts() {
    let input = "<function=f>\n<parameter=n>\n007\n</parameter>\n<parameter=s>\nplain\n</parameter>\n</function>";
    let r = read(input).unwrap().unwrap();
    // `007` is no JSON: text. A number would keep its text for a string argument.
    assert_eq!(r.calls[0].arguments["n"], json!("007"));
    let r = read("<function=f>\n<parameter=n>\n12345\n</parameter>\n</function>")
        .unwrap()
        .unwrap();
    assert_eq!(r.calls[0].arguments["n"], json!(12345));
    assert_eq!(r.calls[0].texts, vec![("n".to_owned(), "12345".to_owned())]);
}

#[test]
fn ids_come_with_the_calls() {
    let r = read(r#"[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{}"#)
        .unwrap()
        .unwrap();
    assert_eq!(r.calls[0].id.as_deref(), Some("a1b2c3d4e"));
    let r = read(r#"[TOOL_CALLS][{"name":"f","arguments":{},"id":"xyz987abc"}]"#)
        .unwrap()
        .unwrap();
    assert_eq!(r.calls[0].id.as_deref(), Some("xyz987abc"));
}

#[test]
fn repaired_json_says_so() {
    let r = read("[TOOL_CALLS]f[ARGS]{'a': True,}").unwrap().unwrap();
    assert_eq!(r.calls[0].arguments["a"], json!(true));
    assert!(!r.calls[0].repairs.is_empty());
}

/// `(what, input, a word the refusal says)`.
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "mistral cut off in the arguments",
        r#"[TOOL_CALLS]f[ARGS]{"a": "b"#,
        "cut off",
    ),
    (
        "mistral cut off after the marker",
        "Sure [TOOL_CALLS]",
        "cut off",
    ),
    (
        "mistral cut off after the name",
        "[TOOL_CALLS]get_weather",
        "cut off",
    ),
    (
        "mistral list cut off",
        r#"[TOOL_CALLS][{"name":"a","arguments":{}},"#,
        "cut off",
    ),
    ("mistral list of no calls", "[TOOL_CALLS][1]", "call object"),
    (
        "mistral [ARGS] with no name",
        r#"[ARGS]{"a":1}"#,
        "no tool name",
    ),
    (
        "mistral unknown key",
        r#"[TOOL_CALLS][{"name":"a","arguments":{},"run":"rm"}]"#,
        "`run`",
    ),
    (
        "mistral arguments twice",
        r#"[TOOL_CALLS][{"name":"a","arguments":{},"parameters":{}}]"#,
        "both",
    ),
    (
        "qwen cut off",
        "<tool_call>\n<function=f>\n<parameter=a>\n1",
        "cut off",
    ),
    (
        "qwen parameter twice",
        "<function=f><parameter=a>1</parameter><parameter=a>2</parameter></function>",
        "twice",
    ),
    (
        "functionary no closer",
        r#"<function=f>{"a":1} and more"#,
        "</function>",
    ),
    (
        "tool_call text inside the block",
        "<tool_call>{\"name\":\"a\",\"arguments\":{}} {\"name\":\"b\"}</tool_call>",
        "one call",
    ),
    (
        "tool_call cut off",
        "<tool_call>{\"name\":\"a\",\"arguments\":{\"x\":",
        "cut off",
    ),
    (
        "deepseek cut off before sep",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function",
        "cut off",
    ),
    (
        "deepseek no call end",
        "<｜tool▁call▁begin｜>a<｜tool▁sep｜>{} trailing",
        "tool▁call▁end",
    ),
    ("deepseek begin only", "<｜tool▁calls▁begin｜>", "holds no"),
    (
        "harmony cut off in the arguments",
        "<|channel|>commentary to=functions.f<|message|>{\"a\":",
        "cut off",
    ),
    (
        "harmony text after the arguments",
        "<|channel|>commentary to=functions.f<|message|>{} and {}<|call|>",
        "one message",
    ),
    (
        "two dialects",
        "<function=a>{}</function><tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>",
        "two dialects",
    ),
    (
        "a call object beside the calls",
        "[TOOL_CALLS]a[ARGS]{} then {\"name\":\"b\",\"arguments\":{}}",
        "JSON object",
    ),
];

#[test]
fn what_cannot_be_read_whole_is_refused() {
    for (what, input, says) in REFUSED {
        match read(input) {
            Some(Err(r)) => assert!(
                r.message.contains(says),
                "{what}: {:?} does not say {says:?}",
                r.message
            ),
            other => panic!("{what}: not refused: {other:?}"),
        }
    }
}

#[test]
fn text_without_markers_is_left_to_the_json_reader() {
    for input in [
        r#"{"tool_name":"x","tool_args":{}}"#,
        "Just prose, with a <b>tag</b> and [brackets].",
        r#"<tool_call>{"tool_name":"x","tool_args":{}}</tool_call>"#,
        "<think>[TOOL_CALLS]a[ARGS]{}</think>no call here",
    ] {
        assert!(read(input).is_none(), "{input}");
    }
}

/// Pieces the generated texts are made of: every dialect's markers, names, JSON, prose.
const PIECES: &[&str] = &[
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "abc123def",
    "get_weather",
    "add",
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "<function name=\"f\">",
    ">",
    "</function>",
    "<parameter=",
    "city",
    "</parameter>",
    "\n",
    " ",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\"name\"",
    "\"arguments\"",
    "{\"a\":1}",
    "{}",
    "<think>",
    "</think>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|start|>assistant",
    "<|channel|>",
    "commentary",
    "analysis",
    " to=functions.f",
    "<|message|>",
    "<|call|>",
    "<|end|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<|tool_call_begin|>",
    "<|tool_sep|>",
    "<|tool_call_end|>",
    "function",
    "```json\n",
    "```",
    "Sure, ",
    "é",
    "｜",
    "'",
    "\\",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// For any text: either no dialect, a refusal, or calls whose spans lie in order inside the
    /// text, with every byte outside them kept as it came (the answer writes it back) and
    /// holding no call of another reading; each call written again reads the same.
    #[test]
    fn a_reading_accounts_for_every_byte(input in text()) {
        if let Some(Ok(reading)) = read(&input) {
            prop_assert!(!reading.calls.is_empty());
            let mut at = 0;
            for c in &reading.calls {
                prop_assert!(c.span.start >= at && c.span.end <= input.len());
                at = c.span.end;
            }
            let masked = mask_reasoning(&input);
            let mut kept = masked.to_string().into_bytes();
            for c in &reading.calls {
                kept[c.span.clone()].fill(b' ');
            }
            let kept = String::from_utf8(kept).unwrap();
            for other in DIALECTS {
                prop_assert!(other == reading.dialect || !(other.detect)(&kept), "{} in kept text", other.name);
            }
            assert_round_trips(&input, &reading);
        }
    }
}
