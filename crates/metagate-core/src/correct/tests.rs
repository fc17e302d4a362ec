//! The correction pipeline's tests, by stage.

use super::*;
use serde_json::json;

fn run_builtin(tool: &str, args: Value) -> (Result<(), Box<ToolError>>, Value, Report) {
    let policy = Policy::builtin();
    let text = args.to_string();
    let mut args = Args::from_text(&text).unwrap();
    let mut report = Report::default();
    let r = run(&policy, tool, None, &mut args, &mut report);
    let out: Value = serde_json::from_str(&args.to_json_string()).unwrap();
    (r, out, report)
}

/// The tools the correction tables below call, on top of the built-in policy.
const CORRECTION_TOOLS: &str = include_str!("../../../../fixtures/policies/issue37-tools.toml");

fn run_on(tool: &str, args: Value) -> (Result<(), Box<ToolError>>, Value, Report) {
    let source = crate::policy::Source {
        name: "p.toml",
        text: CORRECTION_TOOLS,
    };
    let policy = Policy::from_source(source, None).unwrap();
    let text = args.to_string();
    let mut args = Args::from_text(&text).unwrap();
    let mut report = Report::default();
    let r = run(&policy, tool, None, &mut args, &mut report);
    let out: Value = serde_json::from_str(&args.to_json_string()).unwrap();
    (r, out, report)
}

/// (tool, arguments sent, arguments that go out, or None for a refusal, and a text its
/// message holds).
type CorrectionRow = (&'static str, Value, Option<Value>, &'static str);

fn check_rows(rows: Vec<CorrectionRow>) {
    for (tool, sent, want, text) in rows {
        let (r, out, report) = run_on(tool, sent.clone());
        match want {
            Some(want) => {
                r.unwrap_or_else(|e| panic!("{tool} {sent}: {}", e.message));
                assert_eq!(out, want, "{tool} {sent}");
                assert!(
                    report
                        .corrections
                        .iter()
                        .any(|c| c.to_string().contains(text)),
                    "{tool} {sent}: {:?}",
                    report.corrections
                );
            }
            None => {
                let e = r.expect_err(&format!("{tool} {sent} must be refused"));
                assert!(e.message.contains(text), "{tool} {sent}: {}", e.message);
            }
        }
    }
}

#[test]
fn a_lone_unknown_argument_is_the_lone_missing_one() {
    check_rows(vec![
        (
            "notify",
            json!({"msg": "hi"}),
            Some(json!({"message": "hi"})),
            "message",
        ),
        (
            "read_file",
            json!({"file_path": "/tmp/a", "limit": 3}),
            Some(json!({"path": "/tmp/a", "limit": 3})),
            "path",
        ),
        (
            "clock",
            json!({"tz": "UTC"}),
            Some(json!({"timezone": "UTC"})),
            "timezone",
        ),
        // Its value is fixed as the declared argument's would be.
        (
            "greet",
            json!({"people": "Alice"}),
            Some(json!({"names": ["Alice"]})),
            "names",
        ),
        // A value of another type is not the missing argument's.
        (
            "read_file",
            json!({"file_path": 7}),
            None,
            "missing required argument \"path\"",
        ),
        // Two unknown, or two missing: more than one reading.
        (
            "notify",
            json!({"msg": "hi", "lvl": "x"}),
            None,
            "was sent \"msg\" and \"lvl\", which it does not take",
        ),
        (
            "convert_time",
            json!({"from": "UTC", "time": "12:00"}),
            None,
            "was sent \"from\", which it does not take",
        ),
        // Blank is no value.
        (
            "notify",
            json!({"msg": " "}),
            None,
            "missing required argument",
        ),
        // An enum takes only its values.
        (
            "pick",
            json!({"choice": "blue"}),
            None,
            "missing required argument \"mode\"",
        ),
        (
            "pick",
            json!({"choice": "Fast"}),
            Some(json!({"mode": "fast"})),
            "mode",
        ),
    ]);
}

#[test]
fn a_single_value_where_an_array_is_declared_is_its_one_element() {
    check_rows(vec![
        (
            "greet",
            json!({"names": "Alice"}),
            Some(json!({"names": ["Alice"]})),
            "names",
        ),
        (
            "greet",
            json!({"names": 3}),
            Some(json!({"names": [3]})),
            "names",
        ),
        (
            "greet",
            json!({"names": {"first": "A"}}),
            Some(json!({"names": [{"first": "A"}]})),
            "names",
        ),
        // A JSON array in a string is read as that array, as before.
        (
            "greet",
            json!({"names": "[\"A\",\"B\"]"}),
            Some(json!({"names": ["A", "B"]})),
            "names",
        ),
        // Null is no value to wrap; an integer argument takes no array.
        ("greet", json!({"names": null}), None, "\"names\" must be"),
        (
            "greet",
            json!({"names": ["A"], "count": [1]}),
            None,
            "\"count\" must be",
        ),
    ]);
}

#[test]
fn a_near_miss_whose_other_reading_is_present_has_one_reading() {
    check_rows(vec![
        (
            "convert_time",
            json!({"fom_timezone": "UTC", "to_timezone": "CET", "time": "12:00"}),
            Some(json!({"from_timezone": "UTC", "to_timezone": "CET", "time": "12:00"})),
            "from_timezone",
        ),
        // Neither reading given: two readings, refused.
        (
            "convert_time",
            json!({"fom_timezone": "UTC", "time": "12:00"}),
            None,
            "more than one reading",
        ),
    ]);
}

#[test]
fn the_four_seed_scenarios() {
    let (r, out, report) = run_builtin(
        "code_execution_tool",
        json!({"runtime":"bash","code":"echo hello"}),
    );
    r.unwrap();
    assert_eq!(out["runtime"], "terminal");
    assert_eq!(report.corrections[0].kind, Kind::ValueAlias);

    let (r, _, _) = run_builtin("code_execution_tool", json!({"runtime":"python"}));
    let e = r.unwrap_err();
    assert_eq!(e.category, Category::InvalidParameters);
    assert_eq!(e.missing, ["code"]);

    let (r, _, report) = run_builtin(
        "code_execution_tool",
        json!({"runtime":"output","session":0}),
    );
    r.unwrap();
    assert!(report.warnings.is_empty());
}

#[test]
fn alias_only_when_canonical_absent() {
    // The same value under both names: one reading, the canonical name kept.
    let (r, out, report) = run_builtin("response", json!({"message":"a","text":"a"}));
    r.unwrap();
    assert_eq!(out, json!({"message":"a","text":"a"}));
    assert!(report.corrections.is_empty());
    assert_eq!(report.warnings.len(), 1);
    // Two values: two readings, refused naming both names.
    let (r, _, _) = run_builtin("response", json!({"message":"a","text":"b"}));
    let e = r.unwrap_err();
    assert_eq!(e.category, Category::InvalidParameters);
    assert!(
        e.message.contains("\"text\"") && e.message.contains("\"message\""),
        "{e}"
    );
}

#[test]
fn two_aliases_for_one_name_are_ambiguous() {
    let (r, _, _) = run_builtin(
        "code_execution_tool",
        json!({"runtime":"terminal","command":"ls","script":"pwd"}),
    );
    let e = r.unwrap_err();
    assert_eq!(e.category, Category::InvalidParameters);
    assert!(
        e.message.contains("command") && e.message.contains("script"),
        "{e}"
    );
}

#[test]
fn rename_keeps_position() {
    let (r, out, _) = run_builtin(
        "code_execution_tool",
        json!({"language":"python","command":"print(1)","session":1,"reset":true}),
    );
    r.unwrap();
    let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["runtime", "code", "session", "reset"]);
}

#[test]
fn coercion_is_exact_or_refused() {
    let cases = [
        ("session", json!("5"), Some(json!(5))),
        ("session", json!(" -3 "), Some(json!(-3))),
        ("session", json!("5.5"), None),
        ("session", json!("05"), None),
        ("session", json!("+5"), None),
        ("reset", json!("FALSE"), Some(json!(false))),
        ("reset", json!("True"), Some(json!(true))),
        ("reset", json!("yes"), None),
        ("reset", json!("1"), None),
    ];
    for (arg, given, want) in cases {
        let mut args = json!({"runtime":"output"});
        args[arg] = given.clone();
        let (r, out, _) = run_builtin("code_execution_tool", args);
        match want {
            Some(w) => {
                r.unwrap();
                assert_eq!(out[arg], w, "{arg} {given}");
            }
            None => {
                let e = r.unwrap_err();
                assert_eq!(e.category, Category::TypeMismatch, "{arg} {given}");
                assert!(e.message.contains(arg));
            }
        }
    }
    let (r, out, _) = run_builtin(
        "memory_load",
        json!({"query":"x","threshold":"0.7","limit":"10"}),
    );
    r.unwrap();
    assert_eq!(out["threshold"], json!(0.7));
    assert_eq!(out["limit"], json!(10));
}

/// Runs the built-in policy over one number-typed argument given as JSON text, so that it
/// keeps the digits it was written with (a `json!` literal could not hold most of these):
/// `session` (of `code_execution_tool`) and `limit` are integers, `threshold` a number.
fn run_number_arg(arg: &str, value: &str) -> (Result<(), Box<ToolError>>, String, Report) {
    let (tool, required) = match arg {
        "session" => ("code_execution_tool", r#""runtime":"output""#),
        _ => ("memory_load", r#""query":"x""#),
    };
    run_builtin_text(tool, &format!("{{{required},\"{arg}\":{value}}}"))
}

fn run_builtin_text(tool: &str, args: &str) -> (Result<(), Box<ToolError>>, String, Report) {
    let policy = Policy::builtin();
    let mut args = Args::from_text(args).unwrap();
    let mut report = Report::default();
    let r = run(&policy, tool, None, &mut args, &mut report);
    (r, args.to_json_string(), report)
}

/// A number the declared type cannot hold is a type mismatch naming the argument (issue
/// 24, item 6): an integer outside i64, a number that is not finite as an f64. Every case
/// passed before.
#[test]
fn numbers_beyond_the_declared_type_are_type_mismatches() {
    let digits = |n: usize| format!("1{}", "0".repeat(n - 1));
    let (d400, d100k) = (digits(400), digits(100_000));
    let (minus_d100k, d400_and_a_half) = (format!("-{d100k}"), format!("{d400}.5"));
    let cases: &[(&str, &str)] = &[
        ("session", "9223372036854775808"),
        ("session", "-9223372036854775809"),
        ("session", "12345678901234567890"),
        ("session", "18446744073709551616"),
        ("session", "9.3e18"),
        ("session", "-1e19"),
        ("session", "1e300"),
        ("session", &d100k),
        ("session", &minus_d100k),
        // A string is coerced only to an integer the type holds.
        ("session", "\"9223372036854775808\""),
        // Whole only once rounded through an f64: the integer type cannot hold them either.
        ("session", "1e-400"),
        ("session", "1.0000000000000000001"),
        ("limit", "9223372036854775808"),
        ("limit", &d400),
        ("threshold", "1e99999999"),
        ("threshold", "-1e99999999"),
        ("threshold", "1e309"),
        ("threshold", "1.5e400"),
        ("threshold", "2e308"),
        ("threshold", &d400),
        ("threshold", &d100k),
        ("threshold", &d400_and_a_half),
    ];
    for (arg, value) in cases {
        let shown = &value[..value.len().min(30)];
        let (r, _, _) = run_number_arg(arg, value);
        let e = r.expect_err(&format!("{arg} = {shown}… passed"));
        assert_eq!(e.category, Category::TypeMismatch, "{arg} = {shown}…: {e}");
        assert!(e.message.contains(&format!("\"{arg}\"")), "{e}");
        // The message stays short whatever the number's length.
        assert!(e.message.len() < 300, "{arg} = {shown}…: {}", e.message);
    }
}

/// Ordinary numbers, and the ends of each type's range, still pass (a string only through
/// an exact coercion); the gate applied to its own output changes nothing.
#[test]
fn numbers_the_declared_type_holds_still_pass() {
    let long_decimal = format!("0.{}", "3".repeat(400));
    let digits_300 = format!("1{}", "0".repeat(299));
    let cases: &[(&str, &str, &str)] = &[
        ("session", "0", "0"),
        ("session", "-0", "-0"),
        ("session", "5", "5"),
        ("session", "9223372036854775807", "9223372036854775807"),
        ("session", "-9223372036854775808", "-9223372036854775808"),
        ("session", "5.0", "5.0"),
        ("session", "1e3", "1e3"),
        ("session", "9.2e18", "9.2e18"),
        ("session", "\"42\"", "42"),
        ("session", "\" -3 \"", "-3"),
        ("session", "\"9223372036854775807\"", "9223372036854775807"),
        (
            "session",
            "\"-9223372036854775808\"",
            "-9223372036854775808",
        ),
        ("limit", "10", "10"),
        ("threshold", "0.7", "0.7"),
        ("threshold", "-2.5e-3", "-2.5e-3"),
        ("threshold", "1e308", "1e308"),
        (
            "threshold",
            "-1.7976931348623157e308",
            "-1.7976931348623157e308",
        ),
        ("threshold", "5e-324", "5e-324"),
        // Too small to tell from zero is still a finite number (it reads as 0.0).
        ("threshold", "1e-400", "1e-400"),
        ("threshold", "12345678901234567890", "12345678901234567890"),
        ("threshold", &digits_300, &digits_300),
        ("threshold", &long_decimal, &long_decimal),
        ("threshold", "\"0.7\"", "0.7"),
    ];
    for &(arg, value, want) in cases {
        let (r, out, report) = run_number_arg(arg, value);
        r.unwrap_or_else(|e| panic!("{arg} = {value}: {e}"));
        assert!(
            out.contains(&format!("\"{arg}\":{want}")),
            "{arg} = {value}: {out}"
        );
        let was_coerced = report.corrections.iter().any(|c| c.kind == Kind::Coerce);
        assert_eq!(was_coerced, value.starts_with('"'), "{arg} = {value}");
        // Its own output again: passes, nothing corrected, the same text.
        let tool = if arg == "session" {
            "code_execution_tool"
        } else {
            "memory_load"
        };
        let (again, out_again, report_again) = run_builtin_text(tool, &out);
        again.unwrap_or_else(|e| panic!("{arg} = {value}, second pass: {e}"));
        assert!(report_again.corrections.is_empty(), "{arg} = {value}");
        assert_eq!(out_again, out, "{arg} = {value}");
    }
}

#[test]
fn case_style_and_near_misses() {
    let (r, out, report) = run_builtin("memory_load", json!({"Query":"x"}));
    r.unwrap();
    assert_eq!(out, json!({"query":"x"}));
    assert_eq!(report.corrections[0].kind, Kind::ArgCase);
    let (r, out, report) = run_builtin("memory_load", json!({"qeury":"x","treshold":0.5}));
    r.unwrap();
    assert_eq!(out, json!({"query":"x","threshold":0.5}));
    assert!(report.corrections.iter().all(|c| c.kind == Kind::ArgFuzzy));
    // A letter dropped from a four-letter name is one edit; beside the name itself it is
    // a second reading of it.
    let (r, out, _) = run_builtin(
        "code_execution_tool",
        json!({"runtime":"terminal","cod":"ls"}),
    );
    r.unwrap();
    assert_eq!(out["code"], "ls");
    let (r, _, _) = run_builtin("response", json!({"text":"x","tex":"y"}));
    assert_eq!(r.unwrap_err().category, Category::InvalidParameters);
}

#[test]
fn blank_strings_count_as_missing_and_empty_args_are_checked() {
    let (r, _, _) = run_builtin("response", json!({"text":"   "}));
    assert_eq!(r.unwrap_err().missing, ["text"]);
    let (r, _, _) = run_builtin("search_engine", json!({}));
    assert_eq!(r.unwrap_err().missing, ["query"]);
}

#[test]
fn enum_case_and_enum_membership() {
    let (r, out, report) = run_builtin("memory_save", json!({"text":"x","area":"Main"}));
    r.unwrap();
    assert_eq!(out["area"], "main");
    assert_eq!(report.corrections[0].kind, Kind::EnumCase);
    let (r, _, _) = run_builtin("memory_save", json!({"text":"x","area":"elsewhere"}));
    assert_eq!(r.unwrap_err().category, Category::InvalidParameters);
}

#[test]
fn strip_reasoning_fields() {
    let (r, out, report) = run_builtin(
        "response",
        json!({"_tafc_think":"hmm","_tafc_think_2":"x","text":"ok"}),
    );
    r.unwrap();
    assert_eq!(out, json!({"text":"ok"}));
    assert_eq!(report.corrections.len(), 2);
}

#[test]
fn unknown_tool_passes_with_a_warning() {
    let (r, out, report) = run_builtin("my_tool", json!({"x":1}));
    r.unwrap();
    assert_eq!(out, json!({"x":1}));
    assert_eq!(report.warnings.len(), 1);
}
