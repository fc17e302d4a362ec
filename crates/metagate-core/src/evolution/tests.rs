use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::*;
use crate::policy::Policy;

const H: i64 = 3_600_000;

fn t() -> Thresholds {
    Thresholds::default()
}

fn window() -> Window {
    Window::new(0, 48 * H, 48 * H, &t())
}

fn caps(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn ask(ts_s: i64, session: &str, text: &str, c: &[&str]) -> AskRow {
    AskRow {
        id: ts_s,
        ts_ms: ts_s * 1000,
        session: session.to_string(),
        text: Some(text.to_string()),
        capabilities: caps(c),
    }
}

#[test]
fn capability_overlap_is_measured_against_the_earlier_ask() {
    let cases: &[(&[&str], &[&str], f64)] = &[
        (&["a", "b"], &["a", "b"], 1.0),
        (&["a", "b"], &["a", "b", "c"], 1.0),
        (&["a", "b", "c"], &["a", "b"], 0.67),
        (&["a", "b"], &["a"], 0.5),
        (&["a"], &["b"], 0.0),
        (&[], &["a"], 0.0),
        (&[], &[], 0.0),
    ];
    for (a, b, want) in cases {
        assert_eq!(
            capability_overlap(&caps(a), &caps(b)),
            *want,
            "{a:?} → {b:?}"
        );
    }
}

#[test]
fn reasks_need_the_same_session_the_window_and_the_overlap() {
    // (earlier, later, re-ask?, phrase?)
    let cases: Vec<(AskRow, AskRow, bool, bool)> = vec![
        (
            ask(0, "s", "movies", &["f", "x"]),
            ask(90, "s", "movies", &["f", "x"]),
            true,
            false,
        ),
        (
            ask(0, "s", "movies", &["f", "x"]),
            ask(180, "s", "movies", &["f", "x"]),
            true,
            false,
        ),
        (
            ask(0, "s", "movies", &["f", "x"]),
            ask(181, "s", "movies", &["f", "x"]),
            false,
            false,
        ),
        (
            ask(0, "s", "movies", &["f", "x"]),
            ask(10, "t", "movies", &["f", "x"]),
            false,
            false,
        ),
        (
            ask(0, "s", "movies", &["f", "x", "r"]),
            ask(10, "s", "movies", &["f", "x"]),
            true,
            false,
        ),
        (
            ask(0, "s", "movies", &["f", "x"]),
            ask(10, "s", "sums", &["compute"]),
            false,
            false,
        ),
        (
            ask(0, "s", "movies", &["f"]),
            ask(900, "s", "This is WRONG", &["z"]),
            false,
            true,
        ),
    ];
    for (i, (a, b, reask, phrase)) in cases.into_iter().enumerate() {
        let mut d = ReaskDetector::default();
        assert_eq!(d.next(a, &t()), None);
        let got = d.next(b, &t());
        assert_eq!(
            got.as_ref().is_some_and(|f| f.reask),
            reask,
            "case {i}: {got:?}"
        );
        assert_eq!(
            got.as_ref().is_some_and(|f| f.phrase.is_some()),
            phrase,
            "case {i}"
        );
    }
}

#[test]
fn an_intervening_ask_of_another_shape_breaks_the_chain() {
    let mut d = ReaskDetector::default();
    assert!(d.next(ask(0, "s", "movies", &["f", "x"]), &t()).is_none());
    assert!(d.next(ask(30, "s", "sum", &["compute"]), &t()).is_none());
    assert!(d.next(ask(60, "s", "movies", &["f", "x"]), &t()).is_none());
}

fn outcome(ts_ms: i64, ok: bool, error_type: Option<&'static str>) -> OutcomeRow<'static> {
    OutcomeRow {
        ts_ms,
        ok,
        error_type,
        axes: Vec::new(),
        shape: None,
        split: None,
        evidence: None,
        session: None,
        message: None,
        caller: None,
    }
}

#[test]
fn utility_counts_what_the_tool_is_to_blame_for() {
    let w = window();
    let now = w.now_ms;
    // (outcomes, user corrections, expected utility)
    let cases: Vec<(Vec<OutcomeRow<'static>>, u64, Option<f64>)> = vec![
        (vec![], 0, None),
        (vec![outcome(now, true, None)], 0, Some(1.0)),
        (
            vec![
                outcome(now, true, None),
                outcome(now, false, Some("timeout")),
            ],
            0,
            Some(1.0),
        ),
        (
            vec![
                outcome(now, true, None),
                outcome(now, false, Some("network_error")),
            ],
            0,
            Some(1.0),
        ),
        (
            vec![
                outcome(now, true, None),
                outcome(now, false, Some("rate_limited")),
            ],
            0,
            Some(1.0),
        ),
        (
            vec![
                outcome(now, true, None),
                outcome(now, false, Some("invalid_parameters")),
            ],
            0,
            Some(1.0),
        ),
        (
            vec![
                outcome(now, true, None),
                outcome(now, false, Some("permanent_failure")),
            ],
            0,
            Some(0.5),
        ),
        (
            vec![
                outcome(now, true, None),
                outcome(now, false, Some("low_utility")),
            ],
            0,
            Some(0.5),
        ),
        (
            vec![
                outcome(now, true, None),
                outcome(now, false, Some("wrong_tool_boundary")),
            ],
            0,
            Some(0.67),
        ),
        // A user correction weighs three times the tool's own low_utility referral.
        (
            vec![
                outcome(now, true, None),
                outcome(now, true, None),
                outcome(now, true, None),
            ],
            1,
            Some(0.5),
        ),
        (vec![outcome(now, true, None)], 1, Some(0.25)),
        (
            vec![outcome(now, false, Some("some_new_type"))],
            0,
            Some(0.0),
        ),
    ];
    for (i, (outcomes, corrections, want)) in cases.into_iter().enumerate() {
        let mut m = Tally::default();
        for o in &outcomes {
            m.add_outcome(o, &w, &t());
        }
        for _ in 0..corrections {
            m.add_user_correction(now, true, &w, &t());
        }
        assert_eq!(m.utility(), want, "case {i}");
    }
}

#[test]
fn old_evidence_weighs_less() {
    let w = window();
    let mut m = Tally::default();
    // A failure one half-life ago and a success now: 1 / (1 + ½).
    m.add_outcome(
        &outcome(w.now_ms - 72 * H, false, Some("permanent_failure")),
        &w,
        &t(),
    );
    m.add_outcome(&outcome(w.now_ms, true, None), &w, &t());
    assert_eq!(m.utility(), Some(0.67));
    assert_eq!(recency_weight(0, H), 1.0);
    assert_eq!(recency_weight(2 * H, H), 0.25);
}

fn referral(axes: &[&str], evidence: Option<&'static str>) -> OutcomeRow<'static> {
    OutcomeRow {
        axes: caps(axes),
        evidence,
        ..outcome(47 * H, false, Some("wrong_tool_boundary"))
    }
}

#[test]
fn cohesion_needs_weighted_referrals_across_axes() {
    // (referrals, warning?)
    let cases: Vec<(Vec<OutcomeRow<'static>>, bool)> = vec![
        (vec![referral(&["a", "b"], Some("e")); 3], true),
        (vec![referral(&["a", "b"], Some("e")); 2], false),
        (vec![referral(&["a"], Some("e")); 5], false),
        (
            vec![
                referral(&["a"], Some("e")),
                referral(&["b"], Some("e")),
                referral(&["a"], None),
            ],
            false,
        ),
        (
            vec![
                referral(&["a"], Some("e")),
                referral(&["b"], Some("e")),
                referral(&["a"], None),
                referral(&["c"], None),
            ],
            true,
        ),
        (vec![referral(&[], Some("e")); 4], false),
    ];
    for (i, (referrals, warning)) in cases.into_iter().enumerate() {
        let mut m = Tally::default();
        for r in &referrals {
            m.add_outcome(r, &window(), &t());
        }
        assert_eq!(m.cohesion_warning(&t()), warning, "case {i}");
        assert_eq!(m.boundary_recent, referrals.len() as u64);
    }
}

#[test]
fn degraded_is_recurgents_rule() {
    // (failures, successes, degraded?)
    let cases = [
        (3, 1, true),
        (2, 0, false),
        (3, 2, false),
        (4, 2, true),
        (3, 3, false),
        (4, 3, false),
        (10, 6, true),
        (10, 7, false),
    ];
    for (failures, successes, want) in cases {
        let m = Tally {
            failures,
            outcomes_ok: successes,
            ..Tally::default()
        };
        assert_eq!(m.degraded(&t()), want, "{failures}/{successes}");
    }
}

fn kinds_of(tallies: &Tallies) -> Vec<&'static str> {
    recommend(tallies, &[], &t())
        .iter()
        .map(|r| r.kind)
        .collect()
}

fn one(tool: &str, method: &str, m: Tally) -> Tallies {
    let mut all = Tallies::new();
    all.entry(tool.to_string())
        .or_default()
        .insert(method.to_string(), m);
    all
}

#[test]
fn recommendation_rules() {
    let healthy = Tally {
        calls: 100,
        passed: 100,
        outcomes_ok: 100,
        good_w: 100.0,
        ..Tally::default()
    };
    assert!(kinds_of(&one("calc", "", healthy.clone())).is_empty());
    let low = Tally {
        low_utility: 2,
        ..healthy.clone()
    };
    assert_eq!(kinds_of(&one("t", "", low)), ["tighten_acceptance"]);
    let corrected = Tally {
        low_utility: 1,
        reask_corrections: 1,
        ..healthy.clone()
    };
    assert_eq!(kinds_of(&one("t", "", corrected)), ["tighten_acceptance"]);
    let hints_only = Tally {
        phrase_hints: 9,
        ..healthy.clone()
    };
    assert!(kinds_of(&one("t", "", hints_only)).is_empty());
    let failing = Tally {
        failures: 5,
        outcomes_ok: 1,
        ..Tally::default()
    };
    assert_eq!(kinds_of(&one("t", "", failing)), ["demote"]);
    let missing = Tally {
        calls: 10,
        rejected: 4,
        arg_faults: [(
            "code".to_string(),
            [("missing".to_string(), 3)].into_iter().collect(),
        )]
        .into_iter()
        .collect(),
        ..Tally::default()
    };
    let recs = recommend(&one("t", "", missing), &[], &t());
    assert_eq!(recs[0].kind, "review_schema");
    assert_eq!(recs[0].subject, "code");
    // A rarely used method name that mostly fails.
    let mut tallies = one("web", "fetch_url", healthy.clone());
    tallies.get_mut("web").unwrap().insert(
        "fetch".to_string(),
        Tally {
            calls: 6,
            rejected: 4,
            ..Tally::default()
        },
    );
    let recs = recommend(&tallies, &[], &t());
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (recs[0].kind, recs[0].method.as_deref()),
        ("deprecate_alias", Some("fetch"))
    );
}

#[test]
fn ids_are_stable_and_distinct() {
    let a = recommendation_id("t", Some("m"), "demote", "");
    assert_eq!(a, recommendation_id("t", Some("m"), "demote", ""));
    assert_ne!(a, recommendation_id("t", None, "demote", ""));
    assert_ne!(a, recommendation_id("tm", None, "demote", ""));
    assert_ne!(a, recommendation_id("t", Some("m"), "split_boundary", ""));
    assert_eq!(a.len(), 4 + 16);
}

fn obj(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text).unwrap() {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

#[test]
fn alias_pairs_need_the_same_value_under_a_declared_name() {
    let policy = Policy::builtin();
    let tool = policy.tool("memory_load").unwrap();
    let flagged = obj(r#"{"qry":"cats","limit":5,"flag":true,"blank":"","secret":"[REDACTED]"}"#);
    let unknown = unknown_args(tool, &policy, &flagged);
    assert_eq!(unknown, ["qry", "flag", "blank", "secret"]);
    // (next verdict, next arguments, pairs)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
    let cases: &[Case<'_>] = &[
        ("pass", r#"{"query":"cats","limit":5}"#, &[("qry", "query")]),
        ("corrected", r#"{"query":"cats"}"#, &[("qry", "query")]),
        ("rejected", r#"{"query":"cats"}"#, &[]),
        ("pass", r#"{"query":"dogs"}"#, &[]),
        // "limit" was already in the first call: not a pair.
        ("pass", r#"{"query":"x","limit":"cats"}"#, &[]),
        ("pass", r#"{"query":"[REDACTED]","filter":true}"#, &[]),
    ];
    for (verdict, next, want) in cases {
        let got = alias_pairs(&unknown, &flagged, verdict, &obj(next), tool);
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want, "{verdict} {next}");
    }
    // Declared names, aliases and case variants are not unknown.
    let known = obj(r#"{"query":"a","Query":"b","QUERY_":"c"}"#);
    assert!(
        unknown_args(tool, &policy, &known).is_empty(),
        "{:?}",
        unknown_args(tool, &policy, &known)
    );
}

#[test]
fn missing_required_honours_unless() {
    let policy = Policy::builtin();
    let tool = policy.tool("code_execution_tool").unwrap();
    let cases: &[(&str, &[&str])] = &[
        (r#"{"runtime":"python"}"#, &["code"]),
        (r#"{"runtime":"output"}"#, &[]),
        (r#"{"runtime":" Output "}"#, &[]),
        (r#"{"code":"ls"}"#, &["runtime"]),
        (r#"{"runtime":"terminal","code":"  "}"#, &["code"]),
        (r#"{"runtime":null,"code":"ls"}"#, &["runtime"]),
    ];
    for (args, want) in cases {
        assert_eq!(missing_required(tool, &obj(args)), *want, "{args}");
    }
}

#[test]
fn aliases_are_proposed_when_frequent_and_clear() {
    let key = |t: &str, f: &str, to: &str| (t.to_string(), f.to_string(), to.to_string());
    let pairs: BTreeMap<_, _> = [
        (key("m", "qry", "query"), 3),
        (key("m", "q", "query"), 4),
        (key("m", "q", "filter"), 2),
        (key("m", "n", "limit"), 2),
    ]
    .into_iter()
    .collect();
    let got = propose_aliases(&pairs, &t());
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].from.as_str(), got[0].to.as_str(), got[0].count),
        ("qry", "query", 3)
    );
    let patch = policy_patch(&got, &PatchBase::default());
    let parsed: toml::Table = toml::from_str(&patch).unwrap();
    assert_eq!(
        parsed["tools"]["m"]["aliases"]["qry"].as_str(),
        Some("query")
    );
    let odd = policy_patch(
        &[ProposedAlias {
            tool: "a.b".into(),
            from: "we\"ird key".into(),
            to: "x".into(),
            count: 3,
            share: 1.0,
            sessions: Vec::new(),
        }],
        &PatchBase::default(),
    );
    let parsed: toml::Table = toml::from_str(&odd).unwrap();
    assert_eq!(
        parsed["tools"]["a.b"]["aliases"]["we\"ird key"].as_str(),
        Some("x")
    );
}

#[test]
fn moments_are_durations_or_times() {
    let now = 10 * 86_400_000;
    assert_eq!(parse_moment("7d", now), Ok(3 * 86_400_000));
    assert_eq!(parse_moment("24h", now), Ok(9 * 86_400_000));
    assert_eq!(parse_moment("30m", now), Ok(now - 1_800_000));
    assert_eq!(parse_moment("90s", now), Ok(now - 90_000));
    assert_eq!(parse_moment("1w", now), Ok(3 * 86_400_000));
    assert_eq!(parse_moment("1970-01-02T00:00:00Z", now), Ok(86_400_000));
    assert!(parse_moment("7 days", now).is_err());
    assert!(parse_moment("", now).is_err());
    assert!(parse_moment("99999999999999999999d", now).is_err());
    // Looking back past 1970 goes on (events may predate it); past the earliest time there is,
    // it looks back over everything, never to a time that cannot be shown.
    assert_eq!(parse_moment("11d", now), Ok(-86_400_000));
    let earliest = jiff::Timestamp::MIN.as_millisecond();
    assert_eq!(parse_moment("99999999999d", now), Ok(earliest));
    assert!(crate::events::format_time(earliest).starts_with("-9999"));
}

proptest! {
    #[test]
    fn known_tools_never_exceeds_its_budget(
        n in 0usize..30,
        budget in 0usize..3000,
        top in 0usize..20,
        seed in any::<u64>(),
    ) {
        let mut tallies = Tallies::new();
        for i in 0..n {
            let m = Tally {
                calls: seed.rotate_left(i as u32) % 50,
                outcomes_ok: (seed >> (i % 60)) % 7,
                failures: (seed >> ((i + 3) % 60)) % 5,
                good_w: ((seed >> (i % 50)) % 7) as f64,
                bad_w: ((seed >> ((i + 1) % 50)) % 3) as f64,
                boundary_recent: (seed >> (i % 40)) % 3,
                last_ms: Some(47 * H),
                ..Tally::default()
            };
            tallies.entry(format!("tool_{i}_{}", "x".repeat(i % 9))).or_default().insert(format!("m{}", i % 3), m);
        }
        let block = health::known_tools(&tallies, &Default::default(), top, budget, 48 * H, &t());
        prop_assert!(block.chars().count() <= budget);
        if !block.is_empty() {
            prop_assert!(block.starts_with("<known_tools>\n") && block.ends_with("</known_tools>\n"));
            prop_assert!(block.lines().count() - 2 <= top);
            // Degraded tools come last.
            let flags: Vec<bool> = block.lines().filter(|l| l.starts_with("- ")).map(|l| l.ends_with("degraded")).collect();
            prop_assert!(flags.windows(2).all(|w| !w[0] || w[1]), "{block}");
        }
    }

    #[test]
    fn merging_tallies_is_adding_them(a in 0u64..100, b in 0u64..100, c in 0u64..100) {
        let w = window();
        let mut x = Tally::default();
        x.add_decisions(a, 5, "pass", None);
        let mut y = Tally::default();
        y.add_decisions(b, 7, "rejected", Some("invalid_parameters"));
        y.add_decisions(c, 3, "corrected", None);
        for _ in 0..c {
            y.add_outcome(&outcome(w.now_ms, true, None), &w, &t());
        }
        let mut z = x.clone();
        z.merge(&y);
        prop_assert_eq!(z.calls, a + b + c);
        prop_assert_eq!(z.passed + z.corrected + z.rejected, z.calls);
        prop_assert_eq!(z.rejections.get("invalid_parameters").copied().unwrap_or(0), b);
        let expected = if c > 0 {
            Some(w.now_ms)
        } else {
            [(a, 5), (b, 7)].iter().filter(|(n, _)| *n > 0).map(|(_, t)| *t).max()
        };
        prop_assert_eq!(z.last_ms, expected);
    }
}
