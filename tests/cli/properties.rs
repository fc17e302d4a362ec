//! Properties of the gate, over generated calls: a broken call comes back as the original call
//! or as a rejection, never as a different call; the gate is idempotent; nothing panics.

use std::path::Path;

use metagate::gate::{Decision, Gate, Options, Verdict, render};
use metagate_core::enforce::NoFacts;
use metagate_core::policy::{Policy, ReadError};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn policy() -> Policy {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tools/openai.json");
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| ReadError::new(p, e));
    Policy::load(None, None, &[tools], &read).expect("fixtures load")
}

fn run(policy: &Policy, input: &[u8]) -> (Decision<'static>, Option<Value>) {
    // Leak the input so the decision can outlive this frame; tests only.
    let input: &'static [u8] = Box::leak(input.to_vec().into_boxed_slice());
    let options = Options::default();
    let d = Gate::corrections_only(policy, options).decide_call(input, &mut NoFacts, 0);
    let mut out = Vec::new();
    render(&d, &options, &mut out);
    assert!(!out.contains(&b'\n'), "one line out");
    let v: Value = serde_json::from_slice(&out).expect("valid JSON out");
    let call = (d.verdict != Verdict::Rejected).then_some(v);
    (d, call)
}

/// A valid call: tool name and canonical arguments.
fn clean_call() -> impl Strategy<Value = (String, Map<String, Value>)> {
    let text = "[a-z][a-z0-9 ]{0,10}[a-z0-9]";
    prop_oneof![
        (prop::sample::select(vec!["terminal", "python", "nodejs"]), text, 0..5i64, any::<bool>()).prop_map(
            |(runtime, code, session, reset)| {
                let args = json!({"runtime": runtime, "code": code, "session": session, "reset": reset});
                ("code_execution_tool".to_string(), args.as_object().unwrap().clone())
            }
        ),
        (text, 0..100i64, 1..50i64).prop_map(|(query, threshold, limit)| {
            let args = json!({"query": query, "threshold": threshold as f64 / 100.0 + 0.001, "limit": limit});
            ("memory_load".to_string(), args.as_object().unwrap().clone())
        }),
        (text, prop::sample::select(vec!["main", "fragments", "solutions"])).prop_map(|(t, area)| {
            let args = json!({"text": t, "area": area});
            ("memory_save".to_string(), args.as_object().unwrap().clone())
        }),
        (text, prop::sample::select(vec!["open", "closed", "all"]), 1..100i64, any::<bool>(), prop::collection::vec(text, 0..3))
            .prop_map(|(q, state, limit, prs, labels)| {
                let args = json!({"repo": "rust-lang/rust", "query": q, "state": state, "limit": limit, "include_prs": prs, "labels": labels});
                ("search_issues".to_string(), args.as_object().unwrap().clone())
            }),
    ]
}

#[derive(Debug, Clone, Copy)]
enum Envelope {
    AgentZero,
    OpenAiString,
    Anthropic,
    Mcp,
    Gemini,
}

fn envelope(e: Envelope, tool: &str, args: &Value) -> Value {
    match e {
        Envelope::AgentZero => json!({"thoughts": ["x"], "tool_name": tool, "tool_args": args}),
        Envelope::OpenAiString => {
            json!({"id": "call_1", "type": "function", "function": {"name": tool, "arguments": args.to_string()}})
        }
        Envelope::Anthropic => {
            json!({"type": "tool_use", "id": "toolu_1", "name": tool, "input": args})
        }
        Envelope::Mcp => {
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": args}})
        }
        Envelope::Gemini => json!({"functionCall": {"name": tool, "args": args}}),
    }
}

/// Ways a model breaks a call's arguments without changing what it means.
#[derive(Debug, Clone)]
enum ArgBreak {
    /// An integer or a boolean sent as a string.
    Stringify(usize, bool),
    /// A name in another case style.
    Case(usize),
    /// A known alias for the name, or a known wrong value.
    Alias(usize),
    /// Two letters of a long name swapped.
    Transpose(usize),
    /// An enum value in the wrong case.
    EnumCase(usize),
}

fn break_args(tool: &str, args: &Map<String, Value>, how: &[ArgBreak]) -> Map<String, Value> {
    let mut out: Vec<(String, Value)> = args.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let n = out.len();
    for b in how {
        match *b {
            ArgBreak::Stringify(i, upper) => {
                let v = &mut out[i % n].1;
                *v = match &*v {
                    Value::Number(x) if x.is_i64() => Value::String(x.to_string()),
                    Value::Bool(x) if upper => Value::String(x.to_string().to_uppercase()),
                    Value::Bool(x) => Value::String(x.to_string()),
                    other => other.clone(),
                };
            }
            ArgBreak::Case(i) => {
                let k = &mut out[i % n].0;
                *k = k.to_uppercase();
            }
            ArgBreak::Alias(i) => {
                let (k, v) = &mut out[i % n];
                match (tool, k.as_str()) {
                    ("code_execution_tool", "code") => *k = "command".into(),
                    ("code_execution_tool", "runtime") => {
                        *v = match v.as_str() {
                            Some("terminal") => json!("bash"),
                            Some("python") => json!("py"),
                            Some("nodejs") => json!("node"),
                            _ => v.clone(),
                        }
                    }
                    ("memory_load", "query") => *k = "search".into(),
                    ("memory_save", "text") => *k = "content".into(),
                    _ => {}
                }
            }
            ArgBreak::Transpose(i) => {
                let k = &mut out[i % n].0;
                if k.len() >= 6 {
                    let mut chars: Vec<char> = k.chars().collect();
                    chars.swap(2, 3);
                    *k = chars.into_iter().collect();
                }
            }
            ArgBreak::EnumCase(i) => {
                let (k, v) = &mut out[i % n];
                if ["area", "state", "runtime"].contains(&k.as_str())
                    && let Some(s) = v.as_str()
                {
                    *v = json!(s.to_uppercase());
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Ways a model breaks the text of a call.
fn break_text(text: &str, how: u8) -> String {
    match how % 9 {
        0 => format!("```json\n{text}\n```"),
        1 => format!("Here is the call:\n{text}\nDone."),
        2 => text.replace("\":", "\" :").replace('}', ",}"),
        3 => text.replacen('{', "{ // call\n", 1),
        4 => format!("{{{text}}}"),
        5 => text.trim_end_matches('}').to_string(),
        6 => format!("{text}{text}"),
        7 if !text.contains('\'') && !text.contains("\\\"") => text.replace('"', "'"),
        8 => text.replace("true", "True").replace("false", "False"),
        _ => text.to_string(),
    }
}

/// The tool and arguments a decision let through, whatever the envelope.
fn tool_and_args(call: &Value) -> (String, Value) {
    let name_at = [
        "/tool_name",
        "/function/name",
        "/name",
        "/params/name",
        "/functionCall/name",
    ];
    let args_at = [
        "/tool_args",
        "/function/arguments",
        "/input",
        "/params/arguments",
        "/functionCall/args",
        "/arguments",
    ];
    let name = name_at
        .iter()
        .find_map(|p| call.pointer(p))
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    let args = args_at.iter().find_map(|p| call.pointer(p)).unwrap();
    let args = match args {
        Value::String(s) => serde_json::from_str(s).unwrap(),
        other => other.clone(),
    };
    (name, args)
}

fn envelope_strategy() -> impl Strategy<Value = Envelope> {
    prop::sample::select(vec![
        Envelope::AgentZero,
        Envelope::OpenAiString,
        Envelope::Anthropic,
        Envelope::Mcp,
        Envelope::Gemini,
    ])
}

fn arg_break() -> impl Strategy<Value = ArgBreak> {
    prop_oneof![
        (any::<usize>(), any::<bool>()).prop_map(|(i, u)| ArgBreak::Stringify(i, u)),
        any::<usize>().prop_map(ArgBreak::Case),
        any::<usize>().prop_map(ArgBreak::Alias),
        any::<usize>().prop_map(ArgBreak::Transpose),
        any::<usize>().prop_map(ArgBreak::EnumCase),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_broken_call_comes_back_as_the_original_or_is_rejected(
        (tool, args) in clean_call(),
        env in envelope_strategy(),
        arg_breaks in prop::collection::vec(arg_break(), 0..3),
        text_breaks in prop::collection::vec(any::<u8>(), 0..3),
    ) {
        let policy = policy();
        let clean = envelope(env, &tool, &Value::Object(args.clone())).to_string();
        let (d, out) = run(&policy, clean.as_bytes());
        prop_assert_eq!(d.verdict, Verdict::Pass, "the generated call is clean: {}", clean);
        let original = out.unwrap();

        let broken_args = break_args(&tool, &args, &arg_breaks);
        let mut broken = envelope(env, &tool, &Value::Object(broken_args)).to_string();
        for how in &text_breaks {
            broken = break_text(&broken, *how);
        }
        let (d, out) = run(&policy, broken.as_bytes());
        if let Some(call) = out {
            prop_assert_eq!(tool_and_args(&call), tool_and_args(&original), "broken: {}", broken);
            prop_assert_eq!(&call, &original, "broken: {}", broken);
            // Idempotent: the gate's own output passes unchanged.
            let again_text = call.to_string();
            let (again, again_out) = run(&policy, again_text.as_bytes());
            prop_assert_eq!(again.verdict, Verdict::Pass);
            prop_assert_eq!(again_out.unwrap(), call);
        } else {
            prop_assert!(d.error.is_some());
        }
    }

    #[test]
    fn any_input_gets_one_line_and_the_gate_is_idempotent(input in prop::collection::vec(any::<u8>(), 0..300)) {
        let policy = policy();
        let (_, out) = run(&policy, &input);
        if let Some(call) = out {
            let text = call.to_string();
            let (again, again_out) = run(&policy, text.as_bytes());
            prop_assert_ne!(again.verdict, Verdict::Corrected);
            if again.verdict == Verdict::Pass {
                prop_assert_eq!(again_out.unwrap(), call);
            }
        }
    }

    #[test]
    fn json_soup_gets_one_line_and_the_gate_is_idempotent(
        tool in prop::sample::select(vec!["code_execution_tool", "response", "memory_load", "search_issues", "other"]),
        keys in prop::collection::vec("[a-zA-Z_]{1,12}", 0..5),
        values in prop::collection::vec(prop_oneof![
            Just(json!(null)), any::<bool>().prop_map(Value::from), any::<i32>().prop_map(Value::from),
            "[ -~]{0,12}".prop_map(Value::from), Just(json!([1, "a"])), Just(json!({"k": 1}))
        ], 0..5),
        env in envelope_strategy(),
    ) {
        let policy = policy();
        let args: Map<String, Value> = keys.into_iter().zip(values).collect();
        let input = envelope(env, tool, &Value::Object(args)).to_string();
        let (_, out) = run(&policy, input.as_bytes());
        if let Some(call) = out {
            let (again, again_out) = run(&policy, call.to_string().as_bytes());
            prop_assert_eq!(again.verdict, Verdict::Pass, "{} → {}", input, call);
            prop_assert_eq!(again_out.unwrap(), call);
        }
    }
}
