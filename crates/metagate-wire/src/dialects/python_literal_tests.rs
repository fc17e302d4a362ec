use super::*;
use serde_json::json;

fn value_of(src: &str) -> Result<Value, Refusal> {
    let mut py = Py::new(src, 0);
    let v = py.value(0)?;
    py.skip_ws();
    assert_eq!(py.i, src.len(), "{src:?} not read to its end");
    Ok(v)
}

#[test]
fn literals_read_as_json() {
    let cases: &[(&str, Value)] = &[
        (r#""Dallas""#, json!("Dallas")),
        ("'it''s'", json!("its")),
        (r#"'say "hi"'"#, json!("say \"hi\"")),
        (
            r#""a\nb\t\\ \x41\u00e9\U0001F600 \101""#,
            json!("a\nb\t\\ Aé😀 A"),
        ),
        (r#""\d stays""#, json!("\\d stays")),
        (r#"r"C:\new""#, json!("C:\\new")),
        ("u'ü'", json!("ü")),
        ("'''two\nlines'''", json!("two\nlines")),
        (
            r#""""with "quotes" inside""""#,
            json!("with \"quotes\" inside"),
        ),
        ("\"joined\" 'strings'", json!("joinedstrings")),
        ("'☃ 日本'", json!("☃ 日本")),
        ("42", json!(42)),
        ("-7", json!(-7)),
        ("+3", json!(3)),
        ("1_000", json!(1000)),
        ("0x1F", json!(31)),
        ("0o17", json!(15)),
        ("0b101", json!(5)),
        ("3.25", json!(3.25)),
        (".5", json!(0.5)),
        ("5.", json!(5.0)),
        ("1e3", serde_json::from_str("1e3").unwrap()),
        ("2.5E-2", serde_json::from_str("2.5e-2").unwrap()),
        ("0", json!(0)),
        ("00", json!(0)),
        (
            "123456789012345678901234567890",
            serde_json::from_str("123456789012345678901234567890").unwrap(),
        ),
        ("True", json!(true)),
        ("False", json!(false)),
        ("None", json!(null)),
        ("[1, 'a', None]", json!([1, "a", null])),
        ("[1, 2,]", json!([1, 2])),
        ("[]", json!([])),
        ("(1, 2)", json!([1, 2])),
        ("(1,)", json!([1])),
        ("()", json!([])),
        ("(5)", json!(5)),
        (
            "{'a': 1, \"b\": [True, {}]}",
            json!({"a": 1, "b": [true, {}]}),
        ),
        ("{}", json!({})),
        (
            "{\n  'k': {'n': {'m': None}},\n}",
            json!({"k": {"n": {"m": null}}}),
        ),
    ];
    for (src, want) in cases {
        assert_eq!(
            value_of(src).unwrap_or_else(|r| panic!("{src:?}: {r:?}")),
            *want,
            "{src:?}"
        );
    }
}

#[test]
fn non_literals_are_refused() {
    for src in [
        "x",
        "true",
        "null",
        "1 + 2",
        "len('a')",
        "f'{x}'",
        "b'bytes'",
        "rb'x'",
        "{1, 2}",
        "{1: 'a'}",
        "{'a': 1, 'a': 2}",
        "1j",
        "inf",
        "-inf",
        "01",
        "1.2.3",
        "0xZZ",
        "...",
        "'cut",
        "'''cut",
        "'new\nline'",
        "\"\\N{BULLET}\"",
        "\"\\ud800\"",
        "\"\\x4\"",
        "[1, 2",
        "[1 2]",
        "{'a' 1}",
        "(1 2)",
    ] {
        let got = {
            let mut py = Py::new(src, 0);
            py.value(0).and_then(|v| {
                py.skip_ws();
                if py.i == src.len() {
                    Ok(v)
                } else {
                    Err(refusal(py.i, "trailing"))
                }
            })
        };
        assert!(got.is_err(), "{src:?} read as {got:?}");
    }
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 5), "]".repeat(MAX_DEPTH + 5));
    assert!(value_of(&deep).is_err());
}

#[test]
fn calls_read_and_refuse() {
    let ok: &[(&str, &str, Value)] = &[
        (
            "get_weather(city=\"Dallas\")",
            "get_weather",
            json!({"city": "Dallas"}),
        ),
        ("add(a=1, b=2)", "add", json!({"a": 1, "b": 2})),
        ("f()", "f", json!({})),
        ("f( a = [1, (2, 3)] , )", "f", json!({"a": [1, [2, 3]]})),
        ("ns.tool(x=None)", "ns.tool", json!({"x": null})),
        ("f(**{'my-key': 1}, b=2)", "f", json!({"my-key": 1, "b": 2})),
        ("f(from='a')", "f", json!({"from": "a"})),
        ("météo(ville='Paris')", "météo", json!({"ville": "Paris"})),
    ];
    for (src, name, args) in ok {
        let mut py = Py::new(src, 0);
        let call = py.call().unwrap_or_else(|r| panic!("{src:?}: {r:?}"));
        assert_eq!(call.name, *name);
        assert_eq!(Value::Object(call.arguments), *args, "{src:?}");
        assert_eq!(call.span, 0..src.len());
    }
    for src in [
        "f('positional')",
        "f(a)",
        "f(a=1, a=2)",
        "f(a=x)",
        "f(a=1 b=2)",
        "f(a=1",
        "f(a==1)",
        "f(**x)",
        "f(a=g())",
        "f",
        "1(a=1)",
    ] {
        let mut py = Py::new(src, 0);
        assert!(py.call().is_err(), "{src:?}");
    }
}

#[test]
fn written_calls_read_back() {
    let args = json!({
        "s": "quote \" backslash \\ newline \n tab \t bell \u{7} ü ☃",
        "n": [1, -2.5, 1e300, 12345678901234567890u64],
        "b": [true, false, null],
        "d": {"k-ey": {"x": []}, "": "empty key"},
        "not-an-identifier": 1,
        "from": "keyword",
    });
    let Value::Object(map) = args else {
        unreachable!()
    };
    let written = write_call("f", &map);
    let mut py = Py::new(&written, 0);
    let call = py.call().unwrap_or_else(|r| panic!("{written:?}: {r:?}"));
    assert_eq!(call.arguments, map, "{written}");
    assert_eq!(
        write_call("add", &serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap()),
        "add(a=1, b=2)"
    );
}

mod written_values {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e12f64..1e12).prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any JSON value written as a Python literal reads back as itself, and any arguments
        /// written as a call read back as those arguments.
        #[test]
        fn python_literals_read_back(value in json_value(), key in "[a-z_][a-z0-9_]{0,8}|[^a-z]{1,4}") {
            let mut out = String::new();
            write_value(&value, &mut out);
            let mut py = Py::new(&out, 0);
            let read = py.value(0);
            prop_assert_eq!(read.as_ref().ok(), Some(&value), "{}", out);
            prop_assert_eq!(py.i, out.len());
            let mut args = Map::new();
            args.insert(key, value);
            let call = write_call("tool", &args);
            let mut py = Py::new(&call, 0);
            let read = py.call();
            prop_assert!(read.is_ok(), "{}: {:?}", call, read.err());
            prop_assert_eq!(read.unwrap().arguments, args);
        }
    }
}
