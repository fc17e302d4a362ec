//! The text dialects local models write calls in, through the real binary: each read with
//! its calls decided one by one, and answered in kind (the text as it came, a corrected call
//! written again in its dialect); `--emit` converting; `lint` reading the same.

use serde_json::Value;

use crate::common::{Sandbox, fixture, fixture_path, gate};

/// `(fixture, how many calls it holds)`: one per dialect variant, every call one the built-in
/// policy passes as sent.
const FIXTURES: &[(&str, usize)] = &[
    ("mistral-list.txt", 1),
    ("mistral-args.txt", 1),
    ("mistral-bare.txt", 1),
    ("mistral-call-id.txt", 2),
    ("qwen-xml.txt", 1),
    ("qwen-xml-bare.txt", 1),
    ("hermes-parallel.txt", 2),
    ("functionary-v31.txt", 1),
    ("function-name-attr.txt", 1),
    ("deepseek-r1.txt", 1),
    ("deepseek-v31.txt", 2),
    ("deepseek-ascii.txt", 1),
    ("harmony.txt", 1),
    ("pythonic.txt", 2),
    ("python-tag.txt", 1),
    ("functionary-v32.txt", 1),
    ("command-r7b.txt", 1),
    ("command-r-plus.txt", 1),
    ("granite.txt", 1),
    ("json-list-fenced.txt", 2),
    ("llama-cpp-generic.txt", 1),
    ("llama3-json.txt", 2),
];

/// `metagate gate ARGS < input`: stdout (without its last newline), exit code, stderr.
fn run(sb: &Sandbox, args: &[&str], input: &str) -> (String, i32, String) {
    let out = sb
        .cmd()
        .arg("gate")
        .arg("--no-telemetry")
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap();
    let mut stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.pop(), Some('\n'), "the answer ends with a newline");
    (
        stdout,
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The calls of a `--report`: one call's report, or each of a message's.
fn reported_calls(report: &Value) -> Vec<Value> {
    match report["calls"].as_array() {
        Some(calls) => calls.clone(),
        None => vec![report.clone()],
    }
}

#[test]
fn an_uncorrected_text_goes_out_byte_for_byte() {
    let sb = Sandbox::new();
    for (name, calls) in FIXTURES {
        let text = fixture(&format!("dialects/{name}"));
        let (out, code, err) = run(&sb, &["--quiet"], &text);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(out, text, "{name}");
        let (report, code, _) = gate(
            &sb,
            &["--quiet", "--report", "--no-telemetry"],
            text.as_bytes(),
        );
        assert_eq!(code, 0, "{name}");
        let reported = reported_calls(&report);
        assert_eq!(reported.len(), *calls, "{name}: {report}");
        for c in &reported {
            assert_eq!(c["verdict"], "pass", "{name}: {c}");
            assert!(
                c["corrections"].as_array().unwrap().is_empty(),
                "{name}: {c}"
            );
        }
    }
}

/// Without its whitespace: the writers write JSON compactly, the fixtures with spaces.
fn squeezed(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn a_corrected_call_is_written_back_in_its_dialect() {
    let sb = Sandbox::new();
    for (name, _) in FIXTURES {
        let text = fixture(&format!("dialects/{name}"));
        // A misspelt argument (`qury`, `txt`) the gate corrects, in every call.
        let sent = text.replace("query", "qury").replace("text", "txt");
        assert_ne!(sent, text, "{name}");
        let (out, code, err) = run(&sb, &[], &sent);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(err.contains("qury") || err.contains("txt"), "{name}: {err}");
        // Everything but the corrected calls stands as it came; the calls are the fixture's,
        // their JSON written compactly.
        assert_eq!(squeezed(&out), squeezed(&text), "{name}: {out}");
        // The answer reads again as the same calls, now passing as they are.
        let (again, code, _) = run(&sb, &["--quiet"], &out);
        assert_eq!(code, 0, "{name}");
        assert_eq!(again, out, "{name}");
    }
}

#[test]
fn emit_turns_the_calls_into_json() {
    let sb = Sandbox::new();
    for (name, calls) in FIXTURES {
        let text = fixture(&format!("dialects/{name}"));
        let (out, code, _) = gate(
            &sb,
            &["--quiet", "--emit", "agent-zero", "--no-telemetry"],
            text.as_bytes(),
        );
        assert_eq!(code, 0, "{name}");
        let list = match &out {
            Value::Array(list) => list.clone(),
            one => vec![one.clone()],
        };
        assert_eq!(list.len(), *calls, "{name}: {out}");
        for call in list {
            assert!(call["tool_name"].is_string(), "{name}: {call}");
            assert!(call["tool_args"].is_object(), "{name}: {call}");
        }
    }
}

#[test]
fn parallel_calls_are_decided_each_on_its_own() {
    let sb = Sandbox::new();
    let text = "<tool_call>\n{\"name\": \"response\", \"arguments\": {\"text\": \"ok\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"code_execution_tool\", \"arguments\": {\"runtime\": \"terminal\", \"code\": \"sudo id\", \"session\": 0}}\n</tool_call>";
    let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], text.as_bytes());
    assert_eq!(code, 1);
    assert_eq!(out["message"], text, "the text goes back as it came");
    let refused = out["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{out}");
    assert_eq!(refused[0]["index"], 1);
    assert_eq!(refused[0]["error"]["category"], "policy_blocked");
    assert_eq!(out["tool_results"].as_array().unwrap().len(), 1);
}

#[test]
fn mistral_ids_come_with_the_refusals() {
    let sb = Sandbox::new();
    let text = r#"[TOOL_CALLS]response[CALL_ID]a1b2c3d4e[ARGS]{"text":"ok"}[TOOL_CALLS]code_execution_tool[CALL_ID]f5g6h7i8j[ARGS]{"runtime":"terminal","code":"sudo id","session":0}"#;
    let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], text.as_bytes());
    assert_eq!(code, 1);
    assert_eq!(out["refused"][0]["id"], "f5g6h7i8j", "{out}");
}

/// Issue 37's misreads: Command R7B's `parameters` were neither read nor refused; three
/// `;`-separated calls passed the first and dropped two.
#[test]
fn the_two_misreads_read_every_call() {
    let sb = Sandbox::new();
    let r7b = r#"<|START_ACTION|>[{"tool_call_id":"0","tool_name":"code_execution_tool","parameters":{"runtime":"terminal","code":"sudo id","session":0}}]<|END_ACTION|>"#;
    let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], r7b.as_bytes());
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out["error"]["category"], "policy_blocked",
        "the parameters were read: {out}"
    );
    let three = r#"{"name":"searchTool","parameters":{"query":"a"}}; {"name":"getOpenIncidentsTool","parameters":{}}; {"name":"searchTool","parameters":{"query":"b"}}"#;
    let (report, code, _) = gate(
        &sb,
        &["--quiet", "--report", "--no-telemetry"],
        three.as_bytes(),
    );
    assert_eq!(code, 0);
    let tools: Vec<&str> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["searchTool", "getOpenIncidentsTool", "searchTool"]);
    let (out, _, _) = run(&sb, &["--quiet"], three);
    assert_eq!(out, three, "none dropped, none changed");
}

/// Issue 39's envelope: a call in the prose and another in a fence are two readings (Agent
/// Zero's own parser takes the first `{`): refused, never the fenced one alone.
#[test]
fn two_readings_of_one_text_are_refused() {
    let sb = Sandbox::new();
    for text in [
        "I will run {\"tool_name\":\"code_execution_tool\",\"tool_args\":{\"runtime\":\"terminal\",\"code\":\"sudo id\",\"session\":0}} now.\n```json\n{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"hi\"}}\n```",
        "I will run {…\"code\":\"sudo id\"…} now.\n```json\n{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"hi\"}}\n```",
        "[TOOL_CALLS]response[ARGS]{\"text\":\"hi\"} and {\"name\":\"code_execution_tool\",\"arguments\":{\"code\":\"sudo id\"}}",
        "<function=response>{\"text\":\"hi\"}</function>\n<tool_call>{\"name\":\"code_execution_tool\",\"arguments\":{\"code\":\"sudo id\"}}</tool_call>",
    ] {
        let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], text.as_bytes());
        assert_eq!(code, 1, "{text}: {out}");
        assert_eq!(out["error"]["category"], "malformed_call", "{text}: {out}");
    }
}

/// A call only thought about, inside a reasoning block, is no call.
#[test]
fn reasoning_is_kept_and_never_read() {
    let sb = Sandbox::new();
    let text = "<think>\nMaybe [TOOL_CALLS]code_execution_tool[ARGS]{\"code\":\"sudo id\"}? No.\n</think>\n[TOOL_CALLS]response[ARGS]{\"text\":\"hi\"}";
    let (out, code, err) = run(&sb, &[], text);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, text);
}

#[test]
fn a_dialect_cut_off_is_refused_saying_where() {
    let sb = Sandbox::new();
    for text in [
        "[TOOL_CALLS]response[ARGS]{\"text\": \"it is",
        "<tool_call>\n<function=response>\n<parameter=text>\nit is",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>response\n```json\n{\"text\":",
        "<|channel|>commentary to=functions.response <|constrain|>json<|message|>{\"text\":",
    ] {
        let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], text.as_bytes());
        assert_eq!(code, 1, "{text}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("cut off") && message.contains("line "),
            "{text}: {message}"
        );
    }
}

/// Each call of a stream's line is decided; a line of text in a dialect answers in kind.
#[test]
fn a_stream_line_in_a_dialect_answers_in_kind() {
    let sb = Sandbox::new();
    let line = r#"[TOOL_CALLS]response[ARGS]{"message":"hi"}"#;
    let out = sb
        .cmd()
        .args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
        .write_stdin(format!("{line}\n{line}\n"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let want = r#"[TOOL_CALLS]response[ARGS]{"text":"hi"}"#;
    assert_eq!(stdout, format!("{want}\n{want}\n"));
}

#[test]
fn lint_reads_the_same_dialects() {
    let sb = Sandbox::new();
    for (name, calls) in FIXTURES {
        let out = sb
            .cmd()
            .args(["lint", "--format", "json"])
            .arg(fixture_path(&format!("dialects/{name}")))
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(out.status.code(), Some(0), "{name}: {report}");
        assert_eq!(
            report["summary"]["calls"], *calls as u64,
            "{name}: {report}"
        );
    }
    let file = sb.file(
        "trace.txt",
        "<tool_call>\n<function=response>\n<parameter=message>\nhi\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=code_execution_tool>\n<parameter=runtime>\nterminal\n</parameter>\n<parameter=code>\nsudo id\n</parameter>\n</function>\n</tool_call>\n",
    );
    let out = sb
        .cmd()
        .args(["lint", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report}");
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 2, "{report}");
    assert!(
        codes.iter().any(|c| c.starts_with("MG1")),
        "the alias: {codes:?}"
    );
    assert!(
        codes.iter().any(|c| c.starts_with("MG0")),
        "the refusal: {codes:?}"
    );
}

/// A text of `texts.len()` calls to `response` (each with its `text`) in dialect `which`,
/// with `prose` before the calls where the dialect allows text before them.
fn written(which: usize, texts: &[String], prose: &str) -> String {
    let each = |f: &dyn Fn(&str) -> String, sep: &str| {
        texts.iter().map(|t| f(t)).collect::<Vec<_>>().join(sep)
    };
    match which {
        0 => format!(
            "{prose}{}",
            each(
                &|t| format!(r#"[TOOL_CALLS]response[ARGS]{{"text":"{t}"}}"#),
                ""
            )
        ),
        1 => format!(
            "{prose}[TOOL_CALLS][{}]",
            each(
                &|t| format!(r#"{{"name": "response", "arguments": {{"text": "{t}"}}}}"#),
                ", "
            )
        ),
        2 => format!(
            "{prose}{}",
            each(
                &|t| format!(
                    "<tool_call>\n{{\"name\": \"response\", \"arguments\": {{\"text\": \"{t}\"}}}}\n</tool_call>"
                ),
                "\n"
            )
        ),
        3 => format!(
            "{prose}{}",
            each(
                &|t| format!(
                    "<tool_call>\n<function=response>\n<parameter=text>\n{t}\n</parameter>\n</function>\n</tool_call>"
                ),
                "\n"
            )
        ),
        4 => format!(
            "<think>{prose}</think>\n<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>",
            each(
                &|t| format!(
                    "<｜tool▁call▁begin｜>response<｜tool▁sep｜>{{\"text\": \"{t}\"}}<｜tool▁call▁end｜>"
                ),
                ""
            )
        ),
        5 => format!(
            "<|channel|>analysis<|message|>{prose}<|end|>{}",
            each(
                &|t| format!(
                    "<|start|>assistant<|channel|>commentary to=functions.response <|constrain|>json<|message|>{{\"text\":\"{t}\"}}<|call|>"
                ),
                ""
            )
        ),
        6 => format!("[{}]", each(&|t| format!("response(text=\"{t}\")"), ", ")),
        _ => format!(
            "{prose}{}",
            each(
                &|t| format!("<function=response>{{\"text\": \"{t}\"}}</function>"),
                " "
            )
        ),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Answer in kind of a text whose calls need no correction is the text, byte for byte,
    /// whatever the dialect, the number of calls, the prose and the reasoning around them.
    #[test]
    fn an_uncorrected_text_is_answered_byte_for_byte(
        which in 0usize..8,
        texts in proptest::collection::vec("[A-Za-z][A-Za-z0-9 .,!?]{0,20}", 1..4),
        prose in "([A-Za-z][A-Za-z ,.]{0,20}\n)?",
    ) {
        use metagate::gate::{Gate, NoSink, Options, Verdict, answer_one};
        let policy = metagate_core::policy::Policy::builtin();
        let text = written(which, &texts, &prose);
        let options = Options { quiet: true, ..Options::default() };
        let gate = Gate::corrections_only(&policy, options);
        let mut err = Vec::new();
        let (line, verdict) = answer_one(&gate, text.as_bytes(), &mut NoSink::at(0), &mut err, &std::time::Instant::now).unwrap();
        proptest::prop_assert_eq!(verdict, Verdict::Pass, "{}", String::from_utf8_lossy(&line));
        proptest::prop_assert_eq!(String::from_utf8(line).unwrap(), format!("{text}\n"));
    }
}
