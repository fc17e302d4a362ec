//! A week of telemetry as an operator sees it (issue 27), evaluated night after night through
//! the real binary: a web fetcher failing behind SSO, a summarizer users keep re-asking in
//! sessions shared with a healthy calculator, a model writing `qry` for `query`, a confusing
//! calendar schema, a tool failing only on the first day, and on the eighth day a rarely used
//! method name that mostly fails. Each week is recorded (through `record` and `gate`) into an
//! SQLite file and into a PostgreSQL database, and evaluated alike on both.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{
    BACKENDS, Backend, Sandbox, fixture_path, new_store_named, store_count, store_execute,
    store_rows, texts,
};

/// Nights: each evaluates the 7 days before it.
const NIGHT1: &str = "2026-11-21T02:00:00Z";
const NIGHT2: &str = "2026-11-22T02:00:00Z";
const NIGHT2_LATER: &str = "2026-11-22T03:00:00Z";
const NIGHT3: &str = "2026-11-23T02:00:00Z";

fn ts(day: u32, seconds: u32) -> String {
    format!(
        "2026-11-{day:02}T{:02}:{:02}:{:02}Z",
        8 + seconds / 3600,
        (seconds / 60) % 60,
        seconds % 60
    )
}

/// What goes wrong on a day besides the usual.
#[derive(Clone, Copy, Default)]
struct Extras {
    /// The translator fails (day one only).
    translator_fails: bool,
    /// web_fetcher's rarely used `get` method shows up, mostly failing.
    fetcher_get: bool,
    /// Twice the summarizer's sessions, each also with two explicit corrections: its rate of
    /// complaints per call rises by half over the week.
    more_reasks: bool,
}

/// The `record` events of one day.
fn events(day: u32, extras: Extras) -> String {
    let mut lines: Vec<Value> = Vec::new();
    let mut at = 0u32;
    let mut next = |step: u32| {
        at += step;
        at
    };
    // Summarizer and calculator in one session: the user re-asks about the summary.
    let mixed = if extras.more_reasks { 12 } else { 6 };
    for i in 0..mixed {
        let s = format!("mix-{day}-{i}");
        let t0 = next(300);
        let caps = json!(["summarize", "compute"]);
        lines.push(json!({"type":"ask","ts":ts(day,t0),"session":s,"user":"u1","text":"summarize the quarterly report and total the expenses","capabilities":caps}));
        lines.push(json!({"type":"outcome","ts":ts(day,t0+5),"session":s,"tool":"calculator","method":"add","status":"ok"}));
        lines.push(json!({"type":"outcome","ts":ts(day,t0+10),"session":s,"tool":"summarizer","method":"summarize","status":"ok"}));
        lines.push(json!({"type":"ask","ts":ts(day,t0+60),"session":s,"user":"u1","text":"that summary misses the point, summarize it again","capabilities":caps}));
        lines.push(json!({"type":"outcome","ts":ts(day,t0+70),"session":s,"tool":"summarizer","method":"summarize","status":"ok"}));
        lines.push(json!({"type":"outcome","ts":ts(day,t0+75),"session":s,"tool":"calculator","method":"add","status":"ok"}));
        if extras.more_reasks {
            // The user says so outright too: the summarizer's rate of complaints rises.
            for (dt, note) in [
                (90, "still misses the point"),
                (95, "the summary is useless"),
            ] {
                lines.push(json!({"type":"correction","ts":ts(day,t0+dt),"session":s,"tool":"summarizer","method":"summarize","note":note}));
            }
        }
    }
    // The calculator alone, healthy.
    for i in 0..30 {
        let s = format!("calc-{day}-{i}");
        let t0 = next(60);
        lines.push(json!({"type":"ask","ts":ts(day,t0),"session":s,"user":"u2","text":"what is 17% of 2300","capabilities":["compute"]}));
        lines.push(json!({"type":"outcome","ts":ts(day,t0+2),"session":s,"tool":"calculator","method":"add","status":"ok"}));
    }
    // The fetcher behind SSO: 401s, and referrals along authentication and extraction.
    for i in 0..8 {
        let s = format!("sso-{day}-{i}");
        let t0 = next(120);
        lines.push(json!({"type":"ask","ts":ts(day,t0),"session":s,"user":"u3","text":"list the open tickets on the intranet","capabilities":["http_fetch","html_extract"]}));
        let outcome = if i < 6 {
            json!({"type":"outcome","ts":ts(day,t0+3),"session":s,"tool":"web_fetcher","method":"fetch_url","status":"error","error_type":"permanent_failure","error_message":format!("HTTP 401 Unauthorized (request {:08x}{day:02}{i:02})", 0x9f3a_b2c1u32 + i * 7)})
        } else {
            json!({"type":"outcome","ts":ts(day,t0+3),"session":s,"tool":"web_fetcher","method":"fetch_url","status":"ok"})
        };
        lines.push(outcome);
    }
    let referrals = [
        (
            json!(["transport", "session-cookies"]),
            "redirected to the SSO login page",
        ),
        (
            json!(["HTTP", "SSO"]),
            "the intranet asks for a login first",
        ),
        (
            json!(["fetch", "extraction"]),
            "page loaded, ticket table not extracted",
        ),
    ];
    for (i, (axes, evidence)) in referrals.iter().enumerate() {
        let s = format!("sso-ref-{day}-{i}");
        let t0 = next(120);
        lines.push(json!({"type":"outcome","ts":ts(day,t0),"session":s,"tool":"web_fetcher","method":"fetch_url","status":"error","error_type":"wrong_tool_boundary","error_message":"request crosses the tool boundary","metadata":{"boundary_axes":axes,"observed_task_shape":"fetch + log in + extract tickets","suggested_split":"separate authenticated sessions from fetching","evidence":evidence}}));
    }
    // A healthy, rarely used tool.
    for i in 0..2 {
        let t0 = next(60);
        lines.push(json!({"type":"outcome","ts":ts(day,t0),"session":format!("clock-{day}-{i}"),"tool":"clock","status":"ok"}));
    }
    if extras.translator_fails {
        for i in 0..6 {
            let t0 = next(60);
            let (status, error) = if i < 5 {
                ("error", Some("permanent_failure"))
            } else {
                ("ok", None)
            };
            let mut o = json!({"type":"outcome","ts":ts(day,t0),"session":format!("tr-{day}-{i}"),"tool":"translator","method":"translate","status":status});
            if let Some(e) = error {
                o["error_type"] = json!(e);
                o["error_message"] = json!("upstream model unavailable");
            }
            lines.push(o);
        }
    }
    if extras.fetcher_get {
        for i in 0..6 {
            let t0 = next(60);
            let mut o = json!({"type":"outcome","ts":ts(day,t0),"session":format!("get-{day}-{i}"),"tool":"web_fetcher","method":"get","status":"ok"});
            if i % 2 == 0 {
                o["status"] = json!("error");
                o["error_type"] = json!("permanent_failure");
                o["error_message"] = json!("unsupported URL scheme");
            }
            lines.push(o);
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The calls a model sent through the gate on a day, by session.
fn calls(day: u32) -> Vec<(String, String)> {
    let memory = [
        // `page` is unknown too: with two unknown arguments `qry` has no one reading, so the
        // gate refuses it and evaluate learns the alias from the re-ask.
        json!({"name":"memory_load","arguments":{"qry":"user preferences","limit":5,"page":1}}),
        json!({"name":"memory_load","arguments":{"query":"user preferences","limit":5,"page":1}}),
        json!({"name":"memory_load","arguments":{"qry":"travel plans","limit":3,"page":1}}),
        json!({"name":"memory_load","arguments":{"query":"travel plans","limit":3,"page":1}}),
    ];
    let good_when = json!({"start":"2026-11-24T10:00:00","tz":"Europe/Oslo"});
    let event = |args: Value| json!({"name":"calendar_create","arguments":args});
    let calendar = [
        event(json!({"title":"Sync","when":"tomorrow 10am","span":"1h"})),
        event(json!({"title":"Sync","when":{"start":"2026-11-24T10:00:00"},"span":"1h"})),
        event(json!({"title":"Sync","when":good_when,"span":"1h","people":["ana@example.com"]})),
        event(json!({"title":"Sync","when":good_when})),
        event(
            json!({"title":"Sync","when":good_when,"span":"1h","people":[{"email":"ana@example.com"}]}),
        ),
        event(json!({"title":"Review","when":"friday","span":"30m"})),
        event(json!({"title":"Review","when":{"start":"2026-11-27T15:00:00"},"span":"30m"})),
        event(json!({"title":"Review","when":good_when,"span":"30m"})),
    ];
    let lines = |calls: &[Value]| calls.iter().map(|c| format!("{c}\n")).collect::<String>();
    vec![
        (format!("mem-{day}"), lines(&memory)),
        (format!("cal-{day}"), lines(&calendar)),
    ]
}

struct Week {
    sb: Sandbox,
    /// The store, as `--db` names it: a file of the sandbox, or a PostgreSQL URL.
    db: String,
    policy: PathBuf,
}

impl Week {
    /// An empty store of `backend`, and the gate's policy.
    fn new(backend: Backend) -> Week {
        let sb = Sandbox::new();
        let tools = fixture_path("tools/calendar.json");
        let policy = sb.file(
            "gate-policy.toml",
            &format!("[[import]]\npath = {:?}\n", tools.display().to_string()),
        );
        let db = new_store_named(backend, &sb, "week.db");
        Week { sb, db, policy }
    }

    fn day(&self, day: u32, extras: Extras) {
        let at = format!("2026-11-{day:02}T21:00:00Z");
        let file = self
            .sb
            .file(&format!("day-{day}.jsonl"), &events(day, extras));
        let out = self
            .sb
            .cmd()
            .arg("--db")
            .arg(&self.db)
            .args(["--now", &at, "record"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (session, input) in calls(day) {
            let out = self
                .sb
                .cmd()
                .arg("--db")
                .arg(&self.db)
                .arg("--policy")
                .arg(&self.policy)
                .args(["--now", &format!("2026-11-{day:02}T09:00:00Z")])
                .args(["gate", "--jsonl", "--quiet", "--session", &session])
                .write_stdin(input)
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// `metagate --policy P --db DB --now NOW ARGS`: stdout, exit status, stderr.
    fn run(&self, now: &str, args: &[&str]) -> (String, i32, String) {
        texts(
            self.sb
                .cmd()
                .arg("--db")
                .arg(&self.db)
                .arg("--policy")
                .arg(&self.policy)
                .args(["--now", now])
                .args(args)
                .output()
                .unwrap(),
        )
    }

    /// `evaluate --since 7d --format json ARGS` at `now`.
    fn night(&self, now: &str, args: &[&str]) -> (Value, i32, String) {
        let mut all = vec!["evaluate", "--since", "7d", "--format", "json"];
        all.extend_from_slice(args);
        let (out, code, err) = self.run(now, &all);
        let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
        (v, code, err)
    }
}

fn recs(report: &Value) -> &Vec<Value> {
    report["recommendations"].as_array().unwrap()
}

fn find<'a>(report: &'a Value, tool: &str, method: Option<&str>, kind: &str) -> &'a Value {
    recs(report)
        .iter()
        .find(|r| r["tool"] == tool && r["kind"] == kind && r["method"].as_str() == method)
        .unwrap_or_else(|| panic!("no {kind} for {tool} {method:?} in {report:#}"))
}

fn sessions(rec: &Value) -> Vec<String> {
    rec["evidence"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn ids(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// Seven days recorded into a new store of `backend`, through `record` and `gate`.
fn week(backend: Backend) -> Week {
    let w = Week::new(backend);
    for day in 14..=20 {
        w.day(
            day,
            Extras {
                translator_fails: day == 14,
                ..Extras::default()
            },
        );
    }
    w
}

#[test]
fn a_week_of_telemetry_night_after_night() {
    let mut reports = BACKENDS.into_iter().map(night_after_night);
    let sqlite = reports.next().expect("SQLite is always there");
    // The same week gives the same reports on both backends, night after night.
    if let Some(postgres) = reports.next() {
        assert_eq!(sqlite, postgres);
    }
}

/// The week's nights on a store of `backend`; returns each stored night's report, without
/// what names the store and the policy file.
fn night_after_night(backend: Backend) -> Vec<Value> {
    let w = week(backend);
    let (night1, code, stderr) = w.night(NIGHT1, &["--fail-on", "new"]);
    // The first run in a store: everything is new, and cron hears of it.
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(night1["schema_version"], 2);
    assert_eq!(night1["since_last_run"]["previous_run"], Value::Null);
    assert_eq!(
        night1["policy"]["file"].as_str(),
        Some(w.policy.to_str().unwrap())
    );
    assert!(
        night1["policy"]["hash"]
            .as_str()
            .unwrap()
            .starts_with("fnv1a64:")
    );

    // The healthy calculator: 294 calls, no failure, and no re-ask blamed on it.
    let calc = &night1["tools"]["calculator"]["health"];
    assert_eq!(calc["calls"], 294);
    assert_eq!(calc["user_corrections"], 0, "{calc}");
    assert!(
        recs(&night1).iter().all(|r| r["tool"] != "calculator"),
        "{night1:#}"
    );
    assert!(recs(&night1).iter().all(|r| r["tool"] != "clock"));

    // The summarizer users keep re-asking: blamed, and degraded by low utility.
    let summarizer = &night1["tools"]["summarizer"]["health"];
    assert_eq!(summarizer["reasks"], 42);
    assert_eq!(summarizer["degraded"], true);
    let tighten = find(
        &night1,
        "summarizer",
        Some("summarize"),
        "tighten_acceptance",
    );
    assert!(sessions(tighten).iter().all(|s| s.starts_with("mix-")));
    assert!(!sessions(tighten).is_empty());
    assert!(
        tighten["evidence"]["examples"]
            .to_string()
            .contains("that summary misses the point"),
        "{tighten}"
    );
    assert_eq!(tighten["evidence"]["counts"]["reasks"], 42);
    // Its results pass and users re-ask: tightening is the remedy, said once (degraded as it
    // is, no demotion repeats it).
    assert!(
        recs(&night1)
            .iter()
            .all(|r| !(r["tool"] == "summarizer" && r["kind"] == "demote")),
        "{night1:#}"
    );

    // The fetcher behind SSO: demoted, its 401s clustered, split along authentication first.
    let fetcher = &night1["tools"]["web_fetcher"]["health"];
    assert_eq!(
        fetcher["top_errors"][0],
        json!({"category": "permanent_failure", "message": "HTTP 401 Unauthorized (request X)", "count": 42})
    );
    let demote = find(&night1, "web_fetcher", Some("fetch_url"), "demote");
    assert!(sessions(demote).iter().all(|s| s.starts_with("sso-")));
    assert!(
        demote["summary"]
            .as_str()
            .unwrap()
            .contains("HTTP 401 Unauthorized")
    );
    let split = find(&night1, "web_fetcher", Some("fetch_url"), "split_boundary");
    assert_eq!(
        split["axes"],
        json!(["authentication", "extraction", "transport"])
    );
    assert!(sessions(split).iter().all(|s| s.starts_with("sso-ref-")));

    // qry for query: an alias, and no schema advice from the rejections it explains.
    let alias = find(&night1, "memory_load", None, "learn_alias");
    assert!(sessions(alias).iter().all(|s| s.starts_with("mem-")));
    assert!(!sessions(alias).is_empty());
    assert!(
        recs(&night1)
            .iter()
            .all(|r| !(r["tool"] == "memory_load" && r["kind"] == "review_schema")),
        "{night1:#}"
    );

    // The calendar schema: per argument, by cause, with the suggestion that fits.
    let when = recs(&night1)
        .iter()
        .find(|r| r["kind"] == "review_schema" && r["subject"] == "when")
        .unwrap();
    assert_eq!(when["evidence"]["counts"]["wrong_type"], 14);
    assert_eq!(when["evidence"]["counts"]["nested_shape"], 14);
    assert_eq!(when["evidence"]["counts"].get("missing"), None, "{when}");
    assert!(sessions(when).iter().all(|s| s.starts_with("cal-")));
    assert!(when["summary"].as_str().unwrap().contains("inner fields"));
    let people = recs(&night1)
        .iter()
        .find(|r| r["kind"] == "review_schema" && r["subject"] == "people")
        .unwrap();
    assert_eq!(people["evidence"]["counts"]["nested_shape"], 7);
    let span = recs(&night1)
        .iter()
        .find(|r| r["kind"] == "review_schema" && r["subject"] == "span")
        .unwrap();
    assert_eq!(span["evidence"]["counts"]["missing"], 7);

    // The translator failed on the first day only.
    let translator = find(&night1, "translator", Some("translate"), "demote");

    // Most severe first.
    let severities: Vec<f64> = recs(&night1)
        .iter()
        .map(|r| r["severity"].as_f64().unwrap())
        .collect();
    assert!(
        severities.windows(2).all(|w| w[0] >= w[1]),
        "{severities:?}"
    );

    // Every key the JSON carries is documented, key by key.
    json_keys_are_documented(&night1);

    // The digest lists what is new most severe first, as the report does; what is under the
    // confidence floor is listed apart.
    let floor = night1["since_last_run"]["confidence_floor"]
        .as_f64()
        .unwrap();
    let listed: Vec<&Value> = recs(&night1)
        .iter()
        .filter(|r| r["confidence"].as_f64().unwrap() >= floor)
        .map(|r| &r["id"])
        .collect();
    let below: Vec<&Value> = recs(&night1)
        .iter()
        .filter(|r| r["confidence"].as_f64().unwrap() < floor)
        .map(|r| &r["id"])
        .collect();
    assert_eq!(
        night1["since_last_run"]["below_floor"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        below
    );
    let new: Vec<&Value> = night1["since_last_run"]["new"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(new, listed);

    // The table for people: the 401s in a line of their own, and when each problem was first
    // seen.
    let (table, code, err) = w.run(NIGHT1, &["evaluate", "--since", "7d", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains(
            "errors web_fetcher.fetch_url: permanent_failure \"HTTP 401 Unauthorized (request X)\" ×42"
        ),
        "{table}"
    );
    assert!(table.contains("first seen"), "{table}");
    let demote_row = table
        .lines()
        .find(|l| l.contains(demote["id"].as_str().unwrap()) && l.contains("demote"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(demote_row.contains("2026-11-21"), "{demote_row}");

    // The re-asks are stored, each with the ask it corrects and the call it blames.
    let stored = store_rows(
        &w.db,
        "SELECT count(*), min(tool), max(tool), \
           count(corrects_ask_id), count(blamed_outcome_id) \
         FROM user_corrections WHERE reask_ask_id IS NOT NULL",
    );
    assert_eq!(
        stored,
        [[
            json!(42),
            json!("summarizer"),
            json!("summarizer"),
            json!(42),
            json!(42)
        ]],
        "{backend:?}"
    );

    // `evaluate show` prints one recommendation with its evidence and the re-asks behind it.
    let id = tighten["id"].as_str().unwrap();
    let (out, code, err) = w.run(NIGHT1, &["evaluate", "show", id, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["evidence"], tighten["evidence"]);
    assert_eq!(shown["reasks"].as_array().unwrap().len(), 10);
    assert_eq!(
        shown["reasks"][0]["corrects_ask"]["text"],
        "summarize the quarterly report and total the expenses"
    );
    let (text, code, _) = w.run(NIGHT1, &["evaluate", "show", id]);
    assert_eq!(code, 0);
    assert!(
        text.contains("sessions: mix-") && text.contains("re-asks stored against it"),
        "{text}"
    );
    let (_, code, err) = w.run(NIGHT1, &["evaluate", "show", "rec_0000000000000000"]);
    assert_eq!(code, 1);
    assert!(err.contains("no recommendation"), "{err}");

    // <known_tools>: degraded methods flagged, recommendations in one line, no false alarm.
    let (block, code, _) = w.run(
        NIGHT1,
        &[
            "tools",
            "health",
            "--format",
            "known-tools",
            "--budget",
            "5000",
        ],
    );
    assert_eq!(code, 0);
    let line = |tool: &str| -> String {
        block
            .lines()
            .find(|l| l.starts_with(&format!("- {tool}:")))
            .unwrap_or_else(|| panic!("{tool} in {block}"))
            .to_string()
    };
    assert!(
        line("web_fetcher").contains("fetch_url (degraded)"),
        "{block}"
    );
    assert!(line("summarizer").contains("recommended: "), "{block}");
    // What --reject must take out of the block later is in it now.
    assert!(
        line("summarizer").contains("tighten its acceptance"),
        "{block}"
    );
    assert!(line("memory_load").contains("alias qry → query"), "{block}");
    assert!(!line("calculator").contains("user corrections"), "{block}");
    assert!(!line("calculator").contains("recommended"), "{block}");
    // A tight budget drops the healthiest, least-used tool first, never a degraded one.
    let full = block.chars().count();
    let clock = line("clock").chars().count() + 1;
    let budget = (full - clock + 1).to_string();
    let (tight, _, _) = w.run(
        NIGHT1,
        &[
            "tools",
            "health",
            "--format",
            "known-tools",
            "--budget",
            &budget,
        ],
    );
    assert!(!tight.contains("- clock"), "{tight}");
    assert!(
        tight.contains("- web_fetcher") && tight.contains("- summarizer"),
        "{tight}"
    );

    // The operator rejects the summarizer's tighten_acceptance and the learned alias.
    let alias_id = alias["id"].as_str().unwrap();
    for rec in [id, alias_id] {
        let (_, code, err) = w.run(NIGHT1, &["evaluate", "--reject", rec]);
        assert_eq!(code, 0, "{err}");
    }

    // Night two: a new deprecate_alias, the translator resolved, nothing else new.
    w.day(
        21,
        Extras {
            fetcher_get: true,
            ..Extras::default()
        },
    );
    // Before it is stored, night two's table marks the same: what is new, what is resolved.
    let (table, code, err) = w.run(NIGHT2, &["evaluate", "--since", "7d", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let get_id = recommendation_id_in(&table, "deprecate_alias");
    let digest_line = |label: &str, rec_id: &str| {
        table
            .lines()
            .any(|l| l.trim_start().starts_with(label) && l.contains(rec_id))
    };
    // Three failures in six calls of a rare method: too little evidence to page on, listed
    // apart under the confidence floor.
    assert!(digest_line("under", &get_id), "{table}");
    assert!(
        table.contains("4 under the confidence floor 0.50"),
        "{table}"
    );
    assert!(
        digest_line("resolved", translator["id"].as_str().unwrap()),
        "{table}"
    );
    assert!(
        table.contains("0 new, 0 worse, 0 better, 1 resolved"),
        "{table}"
    );
    // Per tool, what moved: the fetcher's six calls of `get`, the translator gone.
    assert!(
        table.contains("tool      web_fetcher: calls 77 → 83"),
        "{table}"
    );
    assert!(
        table.contains("tool      translator: no calls in this window"),
        "{table}"
    );
    let patch = w.sb.path().join("aliases.toml");
    let (night2, code, stderr) = w.night(
        NIGHT2,
        &[
            "--fail-on",
            "new",
            "--emit-policy-patch",
            patch.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let since = &night2["since_last_run"];
    let get = find(&night2, "web_fetcher", Some("get"), "deprecate_alias");
    assert_eq!(since["new"], json!([]));
    assert!(ids(&since["below_floor"]).contains(get["id"].as_str().unwrap()));
    assert_eq!(get["change"], "new");
    assert!(get["confidence"].as_f64().unwrap() < 0.5, "{get}");
    // The floor is the operator's to set: lowered, the same finding pages.
    let (low, code, stderr) = w.night(
        NIGHT2,
        &["--dry-run", "--fail-on", "new", "--confidence-floor", "0.2"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        ids(&low["since_last_run"]["new"]),
        BTreeSet::from([get["id"].as_str().unwrap().to_string()])
    );
    assert_eq!(get["id"], get_id.as_str());
    assert!(sessions(get).iter().all(|s| s.starts_with("get-")));
    assert_eq!(
        ids(&since["resolved"]),
        BTreeSet::from([translator["id"].as_str().unwrap().to_string()])
    );
    assert_eq!(since["previous_run"]["id"], night1["run"]);
    let fetcher = &since["tools"]["web_fetcher"];
    assert_eq!(
        (&fetcher["before"]["calls"], &fetcher["now"]["calls"]),
        (&json!(77), &json!(83)),
        "{since}"
    );
    // 42 401s of 56 judged outcomes, then 42 401s and 3 failed `get`s of 62.
    assert_eq!(fetcher["before"]["failure_rate"], json!(0.75), "{since}");
    assert_eq!(fetcher["now"]["failure_rate"], json!(0.73), "{since}");
    assert_eq!(since["tools"]["translator"]["now"], Value::Null, "{since}");
    assert_eq!(
        since["tools"]["calculator"]["before"],
        since["tools"]["calculator"]["now"]
    );
    // Nothing else moved: the other problems are as they were.
    assert_eq!(since["worse"], json!([]));
    assert_eq!(since["better"], json!([]));
    for r in recs(&night2) {
        if r["id"] != get["id"] {
            assert_eq!(r["first_seen"], night1_first_seen(&night1, r), "{r}");
        }
    }
    // The rejected ones stay muted: not shown, not in the patch, not in <known_tools>.
    assert!(
        recs(&night2)
            .iter()
            .all(|r| r["id"] != id && r["id"] != alias_id)
    );
    assert_eq!(
        ids(&night2["muted"]),
        BTreeSet::from([id.to_string(), alias_id.to_string()])
    );
    let patch_text = std::fs::read_to_string(&patch).unwrap();
    assert!(!patch_text.contains("qry"), "{patch_text}");
    let (block, _, _) = w.run(NIGHT2, &["tools", "health", "--format", "known-tools"]);
    assert!(!block.contains("tighten"), "{block}");
    assert!(!block.contains("qry"), "{block}");
    // The table for people hides them too, says how many it hides, and --all shows them.
    let (table, code, err) = w.run(NIGHT2, &["evaluate", "--since", "7d", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(!table.contains(id) && !table.contains(alias_id), "{table}");
    assert!(table.contains("2 muted recommendations hidden"), "{table}");
    let (table, _, _) = w.run(NIGHT2, &["evaluate", "--since", "7d", "--dry-run", "--all"]);
    assert!(table.contains(id) && table.contains(alias_id), "{table}");
    let (all, _, _) = w.night(NIGHT2, &["--dry-run", "--all"]);
    assert!(
        recs(&all)
            .iter()
            .any(|r| r["id"] == id && r["muted"] == true)
    );

    // A quiet night: nothing new, so cron stays quiet.
    let (quiet, code, stderr) = w.night(NIGHT2_LATER, &["--fail-on", "new"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(quiet["since_last_run"]["new"], json!([]));
    assert_eq!(quiet["since_last_run"]["resolved"], json!([]));

    // Another policy than the gate's changes the results: the run says so.
    let (_, code, stderr) = w.sb_run_without_policy(NIGHT2_LATER);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("warning: the policy differs from the previous run's"),
        "{stderr}"
    );

    // The summarizer's rate of complaints grows past its rejection by more than the mute
    // margin: shown again, reopened, and cron hears of it even with --fail-on new.
    w.day(
        22,
        Extras {
            more_reasks: true,
            ..Extras::default()
        },
    );
    let (night3, code, stderr) = w.night(NIGHT3, &["--fail-on", "new"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(ids(&night3["since_last_run"]["reopened"]).contains(id));
    let again = recs(&night3).iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(again["change"], "reopened");
    assert_eq!(again["status"], "proposed");
    assert!(ids(&night3["since_last_run"]["worse"]).contains(id));
    // The alias's rate did not worsen: still muted, though its count grew.
    assert!(ids(&night3["muted"]).contains(alias_id));
    [night1, night2, all, quiet, night3]
        .into_iter()
        .map(without_places)
        .collect()
}

/// An `evaluate --format json` report without what differs from one sandbox to the next: the
/// names of its stores and policy file, and the policy's hash (the effective policy it hashes
/// writes the sandbox's folder as the path root). Whether the policy changed stays.
fn without_places(mut report: Value) -> Value {
    let doc = report.as_object_mut().unwrap();
    doc.remove("shards");
    doc.remove("stored_in");
    let unnamed = |policy: &mut Value| {
        if let Some(policy) = policy.as_object_mut() {
            policy.remove("file");
            policy.remove("hash");
        }
    };
    unnamed(&mut doc["policy"]["previous"]);
    unnamed(&mut doc["policy"]);
    report
}

impl Week {
    /// A dry run at `now` without the gate's policy.
    fn sb_run_without_policy(&self, now: &str) -> (String, i32, String) {
        texts(
            self.sb
                .cmd()
                .arg("--db")
                .arg(&self.db)
                .args(["--now", now, "evaluate", "--since", "7d", "--dry-run"])
                .output()
                .unwrap(),
        )
    }
}

/// The id on the table row of the one recommendation of `kind`.
fn recommendation_id_in(table: &str, kind: &str) -> String {
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.contains(kind) && l.contains("rec_"))
        .collect();
    let row = rows
        .first()
        .unwrap_or_else(|| panic!("no {kind} in {table}"));
    let at = row.find("rec_").unwrap();
    row[at..]
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next()
        .unwrap()
        .to_string()
}

/// When night one first saw the recommendation `r` of a later night.
fn night1_first_seen(night1: &Value, r: &Value) -> Value {
    recs(night1)
        .iter()
        .find(|x| x["id"] == r["id"])
        .map_or(Value::Null, |x| x["first_seen"].clone())
}

/// Takes the hours of recent referrals out of every stored tally, as a run stored before they
/// were kept has none: rewritten whole, in SQL both dialects read alike.
fn forget_recent_hours(db: &str) {
    let rows = store_rows(db, "SELECT run_id, tool, method, tally FROM eval_health");
    let mut forgot = 0;
    for row in rows {
        let mut tally: Value = serde_json::from_str(row[3].as_str().unwrap()).unwrap();
        if tally
            .as_object_mut()
            .unwrap()
            .remove("recent_by_hour")
            .is_some()
        {
            forgot += 1;
        }
        let quoted = |v: &Value| format!("'{}'", v.as_str().unwrap().replace('\'', "''"));
        store_execute(
            db,
            &format!(
                "UPDATE eval_health SET tally = {} WHERE run_id = {} AND tool = {} AND method = {}",
                quoted(&json!(tally.to_string())),
                row[0],
                quoted(&row[1]),
                quoted(&row[2]),
            ),
        );
    }
    assert!(forgot > 0, "no tally in {db} kept the hours");
}

/// A policy patch used alone keeps the imported tools: the gate still knows the calendar's
/// schema, and corrects `qry`.
#[test]
fn a_policy_patch_works_alone() {
    for backend in BACKENDS {
        let w = week(backend);
        let patch = w.sb.path().join("patch.toml");
        let (_, code, err) = w.night(
            NIGHT1,
            &["--dry-run", "--emit-policy-patch", patch.to_str().unwrap()],
        );
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(&patch).unwrap();
        assert!(
            text.contains("[[import]]") && text.contains("calendar.json"),
            "{text}"
        );
        assert_eq!(w.sb.policy_check(&patch).0, 0);
        let gate = |call: &str| -> Value {
            let out =
                w.sb.cmd()
                    .arg("--policy")
                    .arg(&patch)
                    .args(["gate", "--no-telemetry", "--report", "--quiet"])
                    .write_stdin(call)
                    .output()
                    .unwrap();
            serde_json::from_slice(&out.stdout).unwrap()
        };
        let alias = gate(r#"{"name":"memory_load","arguments":{"qry":"x"}}"#);
        assert_eq!(alias["verdict"], "corrected", "{alias}");
        let calendar = gate(
            r#"{"name":"calendar_create","arguments":{"title":"a","when":"soon","span":"1h"}}"#,
        );
        assert_eq!(calendar["verdict"], "rejected", "{calendar}");
        assert_eq!(calendar["error"]["category"], "type_mismatch", "{calendar}");
    }
}

/// `tools health` counts "recent" over the hours ending now, whatever the last run covered
/// (issue 26): days after a run, its recent referrals are not recent any more.
#[test]
fn tools_health_recent_is_the_hours_ending_now() {
    for backend in BACKENDS {
        let w = Week::new(backend);
        w.day(20, Extras::default());
        let (_, code, err) = w.night(NIGHT1, &[]);
        assert_eq!(code, 0, "{err}");
        let health = |now: &str| -> Value {
            let (out, code, err) = w.run(now, &["tools", "health", "--format", "json"]);
            assert_eq!(code, 0, "{err}");
            serde_json::from_str(&out).unwrap()
        };
        let fresh = health(NIGHT1);
        assert_eq!(
            fresh["web_fetcher"]["health"]["wrong_tool_boundary_recent"],
            3
        );
        // Part of the run's recent hours are still recent (the referrals were at 09:18, 09:20
        // and 09:22 on the 20th): only the last one counts, as evaluate over now counts it.
        let midway = "2026-11-21T09:21:00Z";
        let part = health(midway);
        assert_eq!(
            part["web_fetcher"]["health"]["wrong_tool_boundary_recent"], 1,
            "{part}"
        );
        // A run stored before the hours were kept: counted from the rows, the same.
        forget_recent_hours(&w.db);
        assert_eq!(
            health(midway)["web_fetcher"]["health"]["wrong_tool_boundary_recent"],
            1
        );
        let (now, _, _) = w.run(
            midway,
            &[
                "evaluate",
                "--since",
                "2026-11-14T02:00:00Z",
                "--dry-run",
                "--format",
                "json",
            ],
        );
        let now: Value = serde_json::from_str(&now).unwrap();
        assert_eq!(
            now["tools"]["web_fetcher"]["health"]["wrong_tool_boundary_recent"],
            1
        );
        let later = "2026-11-24T02:00:00Z";
        let old = health(later);
        assert_eq!(
            old["web_fetcher"]["health"]["wrong_tool_boundary_recent"],
            0
        );
        assert_eq!(old["web_fetcher"]["health"]["wrong_tool_boundary"], 3);
        // As evaluate over now counts them.
        let (now, _, _) = w.run(
            later,
            &["evaluate", "--since", "4d", "--dry-run", "--format", "json"],
        );
        let now: Value = serde_json::from_str(&now).unwrap();
        assert_eq!(
            now["tools"]["web_fetcher"]["health"]["wrong_tool_boundary_recent"],
            0
        );
    }
}

/// `db prune` deletes old events but keeps the latest run's window.
#[test]
fn prune_keeps_what_the_latest_run_needs() {
    for backend in BACKENDS {
        let w = week(backend);
        let (_, code, err) = w.night(NIGHT1, &[]);
        assert_eq!(code, 0, "{err}");
        let count = |db: &str| store_count(db, "outcomes");
        let before = count(&w.db);
        // Asked for 3 days, but the run covers 7: nothing in its window goes.
        let (out, code, err) = w.run(
            NIGHT1,
            &["db", "prune", "--before", "3d", "--format", "json"],
        );
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("are kept: evaluate run 1 covers them"),
            "{err}"
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["rows"]["outcomes"], 0);
        assert_eq!(count(&w.db), before);
        // A later run over the last two days: what is older than its window can go.
        let (_, code, _) = w.run(NIGHT1, &["evaluate", "--since", "2d"]);
        assert_eq!(code, 0);
        let (out, code, _) = w.run(
            NIGHT1,
            &[
                "db",
                "prune",
                "--before",
                "3d",
                "--dry-run",
                "--format",
                "json",
            ],
        );
        assert_eq!(code, 0);
        let dry: Value = serde_json::from_str(&out).unwrap();
        let would = dry["rows"]["outcomes"].as_i64().unwrap();
        assert!(would > 0, "{dry}");
        assert_eq!(count(&w.db), before);
        let (out, code, _) = w.run(
            NIGHT1,
            &["db", "prune", "--before", "3d", "--format", "json"],
        );
        assert_eq!(code, 0);
        let done: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(done["rows"]["outcomes"], would);
        assert_eq!(count(&w.db), before - would);
        // tools health still reads the latest run.
        let (_, code, err) = w.run(NIGHT1, &["tools", "health"]);
        assert_eq!(code, 0, "{err}");
    }
}

/// Confidence follows the rate, not the count (issue 27): four low-utility referrals among
/// six calls make a confident recommendation, the same four among three hundred do not, where
/// both used to score 1.00 from the count alone.
#[test]
fn confidence_follows_the_rate_not_the_count() {
    for backend in BACKENDS {
        let w = Week::new(backend);
        let mut lines = String::new();
        let mut at = 0u32;
        for (tool, calls) in [("rare_tool", 6u32), ("busy_tool", 300)] {
            for i in 0..calls {
                at += 10;
                let mut o = json!({"type":"outcome","ts":ts(20, at),"session":format!("{tool}-{i}"),"tool":tool,"method":"run","status":"ok"});
                if i < 4 {
                    o["status"] = json!("error");
                    o["error_type"] = json!("low_utility");
                    o["error_message"] = json!("the answer was not what was asked");
                }
                lines.push_str(&format!("{o}\n"));
            }
        }
        let file = w.sb.file("volume.jsonl", &lines);
        let (_, code, err) = w.run("2026-11-20T21:00:00Z", &["record", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let (report, code, err) = w.night(NIGHT1, &["--dry-run"]);
        assert_eq!(code, 0, "{err}");
        let confidence = |tool: &str| {
            recs(&report)
                .iter()
                .find(|r| r["tool"] == tool && r["kind"] == "tighten_acceptance")
                .map_or(0.0, |r| r["confidence"].as_f64().unwrap())
        };
        let rare = confidence("rare_tool");
        let busy = confidence("busy_tool");
        assert!(rare >= 0.3, "{rare} {report:#}");
        assert!(busy <= 0.05, "{busy} {report:#}");
        // The same evidence on both, so the rate is what tells them apart.
        let counts = |tool: &str| report["tools"][tool]["health"]["low_utility"].clone();
        assert_eq!(counts("rare_tool"), 4);
        assert_eq!(counts("busy_tool"), 4);
    }
}

/// Each key of the report, of a tool, of a health object, of the digest and of a
/// recommendation has its row in docs/evaluate.md.
fn json_keys_are_documented(report: &Value) {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/evaluate.md"))
            .unwrap();
    let section = docs
        .split("## `evaluate --format json`, key by key")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the JSON section of docs/evaluate.md");
    // The keys a row's first cell names: "| `new`, `worse`, `better` | ..." names three.
    let documented: BTreeSet<String> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split(" |").next())
        .flat_map(|cell| cell.split(", "))
        .map(|key| key.trim_matches('`').to_string())
        .collect();
    let objects = [
        report,
        &report["since_last_run"],
        &report["tools"]["web_fetcher"],
        &report["tools"]["web_fetcher"]["health"],
        &report["recommendations"][0],
    ];
    for object in objects {
        for key in object.as_object().unwrap().keys() {
            assert!(
                documented.contains(key),
                "docs/evaluate.md does not document the key {key:?}: {documented:?}"
            );
        }
    }
}

/// The operations the docs owe an operator: a cron line and a systemd timer that run the
/// nightly pass with --fail-on, and prune.
#[test]
fn the_docs_show_cron_systemd_and_prune() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/evaluate.md"))
            .unwrap();
    let cron = docs
        .lines()
        .find(|l| l.starts_with("30 2 * * *"))
        .unwrap_or_else(|| panic!("no crontab line in docs/evaluate.md"));
    assert!(
        cron.contains(" evaluate ") && cron.contains("--fail-on new"),
        "{cron}"
    );
    let service = docs
        .lines()
        .find(|l| l.starts_with("ExecStart="))
        .unwrap_or_else(|| panic!("no systemd service in docs/evaluate.md"));
    assert!(service.contains("--fail-on new"), "{service}");
    assert!(docs.contains("OnCalendar="), "no systemd timer");
    assert!(docs.contains("db prune --before 90d"), "no prune example");
}
