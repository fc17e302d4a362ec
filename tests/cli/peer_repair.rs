//! The lenient reader scored against the own test suites of the two best-known JSON repair
//! libraries, json_repair (PyPI `json-repair`) and jsonrepair (npm `jsonrepair`): every case of
//! `fixtures/repair/peer-cases.jsonl` (see `fixtures/repair/README.md` for where each came
//! from and how the peers' answers were recorded) goes through the real binary as the
//! `arguments` string of a call to a tool nothing is declared about, and each answer is scored:
//!
//! - `same`: the arguments read are the peers' answer (several calls read are compared with
//!   the array of objects the peers answer), or both refuse;
//! - `refused`: the gate refused where the peer answered;
//! - `different`: the gate passed something else;
//! - `dropped`: the gate passed arguments missing a word the peers' answer holds: content
//!   dropped, which must never happen.
//!
//! `cargo test --test cli peer_repair -- --nocapture` prints the figures. Each case's score is
//! committed in `fixtures/repair/peer-scores.jsonl`, so a change of any one is seen;
//! `METAGATE_UPDATE_PEER_SCORES=1` rewrites that file. `METAGATE_PEER_SCORE_BIN=PATH` scores
//! another build of metagate instead (an older one, for a before-and-after), printing the
//! figures and checking nothing.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture, fixture_path};

/// A case's score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Score {
    Same,
    Refused,
    Different,
    Dropped,
}

impl Score {
    fn as_str(self) -> &'static str {
        match self {
            Score::Same => "same",
            Score::Refused => "refused",
            Score::Different => "different",
            Score::Dropped => "dropped",
        }
    }
}

/// What the gate made of a case: refused, or the arguments of each call read.
#[derive(Debug)]
enum Ours {
    Refused(String),
    Read(Vec<Value>),
}

/// The arguments of one call as the report shows them (a JSON string, or an object).
fn arguments_of(call: &Value) -> Value {
    match &call["function"]["arguments"] {
        Value::String(text) if text.trim().is_empty() => json!({}),
        Value::String(text) => serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("the gate wrote arguments that are not JSON ({e}): {text}")),
        other => other.clone(),
    }
}

impl Ours {
    /// What the gate made of the case, for a failure message.
    fn describe(&self) -> String {
        match self {
            Ours::Refused(why) => format!("refused: {why}"),
            Ours::Read(values) => format!("read as {}", Value::Array(values.clone())),
        }
    }
}

fn ours_from_report(report: &Value) -> Ours {
    if report["verdict"] == "rejected" {
        let why = report["error"]["message"]
            .as_str()
            .or_else(|| report["calls"][0]["error"]["message"].as_str())
            .unwrap_or_default();
        return Ours::Refused(why.to_string());
    }
    match report["calls"].as_array() {
        Some(calls) => Ours::Read(calls.iter().map(|c| arguments_of(&c["call"])).collect()),
        None => Ours::Read(vec![arguments_of(&report["call"])]),
    }
}

/// Equal as JSON values, numbers compared by value (`1.0` is `1`).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// The words (runs of letters, digits and `_`) of every key and scalar in `v`, counted; a
/// number by its value, so that `1e10` and `10000000000.0` hold the same words.
fn words(v: &Value, out: &mut BTreeMap<String, usize>) {
    fn add(text: &str, out: &mut BTreeMap<String, usize>) {
        for w in text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
        {
            *out.entry(w.to_lowercase()).or_default() += 1;
        }
    }
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                add(k, out);
                words(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| words(x, out)),
        Value::Number(n) => add(
            &n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string()),
            out,
        ),
        Value::String(s) => add(s, out),
        Value::Bool(b) => add(if *b { "true" } else { "false" }, out),
        Value::Null => {}
    }
}

/// Whether `ours` lacks a word some peer's answer holds as often as it does.
fn drops_content(ours: &[Value], answers: &[&Value]) -> bool {
    let mut have = BTreeMap::new();
    ours.iter().for_each(|v| words(v, &mut have));
    answers.iter().any(|answer| {
        let mut want = BTreeMap::new();
        words(answer, &mut want);
        want.iter()
            .any(|(w, n)| have.get(w).copied().unwrap_or(0) < *n)
    })
}

fn score(case: &Value, ours: &Ours) -> Score {
    let expected = case["expected"].get("value");
    let answers: Vec<&Value> = ["expected", "json_repair", "jsonrepair"]
        .iter()
        .filter_map(|k| case[*k].get("value"))
        .collect();
    match ours {
        Ours::Refused(_) => {
            if expected.is_some() {
                Score::Refused
            } else {
                Score::Same
            }
        }
        Ours::Read(values) => {
            let as_one = match values.as_slice() {
                [one] => one.clone(),
                several => Value::Array(several.to_vec()),
            };
            if expected.is_some_and(|e| same_value(e, &as_one)) {
                Score::Same
            } else if drops_content(values, &answers) {
                Score::Dropped
            } else {
                Score::Different
            }
        }
    }
}

/// Both peers answered this case with the same value.
fn peers_agree(case: &Value) -> bool {
    match (
        case["json_repair"].get("value"),
        case["jsonrepair"].get("value"),
    ) {
        (Some(a), Some(b)) => same_value(a, b),
        _ => false,
    }
}

/// Every case, and the report the binary `bin` gave it.
fn run_cases(bin: &str) -> Vec<(Value, Ours)> {
    let cases: Vec<Value> = fixture("repair/peer-cases.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a case is JSON"))
        .collect();
    let mut input = String::new();
    for case in &cases {
        let call = json!({
            "id": "call_1",
            "type": "function",
            "function": {"name": "probe", "arguments": case["input"]},
        });
        input.push_str(&call.to_string());
        input.push('\n');
    }
    let sb = Sandbox::new();
    let out = sb
        .program(bin)
        .args(["gate", "--jsonl", "--report", "--quiet", "--no-telemetry"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("piped");
            let feed = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
            let out = child.wait_with_output();
            feed.join()
                .expect("the writer thread")
                .expect("stdin written");
            out
        })
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 out");
    let reports: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(
        reports.len(),
        cases.len(),
        "one report per case; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    cases
        .into_iter()
        .zip(reports.iter().map(ours_from_report))
        .collect()
}

/// The figures, over every case and over the cases both peers agree on.
fn figures(scored: &[(Value, Ours, Score)]) -> String {
    let count = |agreed: bool, s: Score| {
        scored
            .iter()
            .filter(|(c, _, x)| *x == s && (!agreed || peers_agree(c)))
            .count()
    };
    let line = |agreed: bool| {
        [
            Score::Same,
            Score::Refused,
            Score::Different,
            Score::Dropped,
        ]
        .iter()
        .map(|&s| format!("{} {}", count(agreed, s), s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
    };
    let agreed = scored.iter().filter(|(c, _, _)| peers_agree(c)).count();
    format!(
        "{} cases: {}\n{agreed} cases both peers answer alike: {}",
        scored.len(),
        line(false),
        line(true)
    )
}

#[test]
fn peer_suites_score_as_committed_and_never_drop_content() {
    let other = std::env::var("METAGATE_PEER_SCORE_BIN").ok();
    let bin = other
        .clone()
        .unwrap_or_else(|| crate::common::BIN.to_string());
    let scored: Vec<(Value, Ours, Score)> = run_cases(&bin)
        .into_iter()
        .map(|(case, ours)| {
            let s = score(&case, &ours);
            (case, ours, s)
        })
        .collect();
    eprintln!("peer suites, scored with {bin}:\n{}", figures(&scored));
    if other.is_some() {
        return;
    }
    let dropped: Vec<String> = scored
        .iter()
        .filter(|(_, _, s)| *s == Score::Dropped)
        .map(|(c, o, _)| format!("case {}: {} {}", c["id"], c["input"], o.describe()))
        .collect();
    assert!(
        dropped.is_empty(),
        "calls passed with content dropped:\n{}",
        dropped.join("\n")
    );
    let path = fixture_path("repair/peer-scores.jsonl");
    let now: Vec<String> = scored
        .iter()
        .map(|(c, _, s)| json!({"id": c["id"], "score": s.as_str()}).to_string())
        .collect();
    if std::env::var_os("METAGATE_UPDATE_PEER_SCORES").is_some() {
        std::fs::write(&path, now.join("\n") + "\n").expect("scores written");
        return;
    }
    let committed = fixture("repair/peer-scores.jsonl");
    let changed: Vec<String> = committed
        .lines()
        .zip(&now)
        .zip(&scored)
        .filter(|((was, is), _)| was != is)
        .map(|((was, is), (c, o, _))| {
            format!("{was} -> {is}: input {} {}", c["input"], o.describe())
        })
        .collect();
    assert_eq!(
        committed.lines().count(),
        now.len(),
        "one committed score per case"
    );
    assert!(
        changed.is_empty(),
        "scores changed (rerun with METAGATE_UPDATE_PEER_SCORES=1 if that is meant):\n{}",
        changed.join("\n")
    );
}
