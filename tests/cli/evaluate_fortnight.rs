//! A fortnight of traffic as an operator pages on it (issue 40): generated deterministically
//! from a fixed seed, replayed day by day through `gate --jsonl --replay` (the calls, with
//! their own time, session and caller) and `record` (the outcomes, asks and corrections), and
//! evaluated every night at 02:00 over the seven days before, `--fail-on new`, as the docs
//! say. Planted: a step change in a tool's failures, a useless tool users re-ask after, a
//! learnable alias, two overlapping tools, a tool that gets fixed, one bad caller on a shared
//! tool, a transient 429 burst, a rare tool with too little evidence, and a busy healthy tool.
//! Each problem must page on the night its evidence supports, with the right blame; nothing
//! else may page; a fix resolves its findings the night it shows.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::common::{Sandbox, texts};

const SEED: u64 = 0x6d67_2026_1101_0040;

/// A small deterministic generator (xorshift64*): the same fortnight on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A whole number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `2026-11-DD` at `secs` seconds after midnight.
fn at(day: u32, secs: u64) -> String {
    format!(
        "2026-11-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// A time of the working day (08:00–20:00), in seconds after midnight.
fn work_time(rng: &mut Rng) -> u64 {
    8 * 3600 + rng.below(12 * 3600)
}

/// `n` distinct indexes among `0..of`, chosen by `rng`: which calls of a day fail.
fn pick(rng: &mut Rng, n: usize, of: usize) -> BTreeSet<usize> {
    let mut set = BTreeSet::new();
    while set.len() < n.min(of) {
        set.insert(rng.below(of as u64) as usize);
    }
    set
}

/// One day: the gate's calls (replay lines) and `record`'s events, each in time order.
struct Day {
    calls: Vec<(u64, Value)>,
    events: Vec<(u64, Value)>,
}

impl Day {
    fn event(&mut self, secs: u64, v: Value) {
        self.events.push((secs, v));
    }

    fn outcome(
        &mut self,
        day: u32,
        secs: u64,
        session: &str,
        tool: &str,
        error: Option<(&str, &str)>,
    ) {
        let mut o = json!({"type":"outcome","ts":at(day, secs),"session":session,"tool":tool,"status":"ok"});
        if let Some((kind, message)) = error {
            o["status"] = json!("error");
            o["error_type"] = json!(kind);
            o["error_message"] = json!(message);
        }
        self.event(secs, o);
    }
}

/// The crm adapter deployed on day 9 at 14:00 breaks two calls in five.
const CRM_DEPLOY: (u32, u64) = (9, 14 * 3600);
/// The renderer is fixed on day 8 at 10:00.
const RENDER_FIX: (u32, u64) = (8, 10 * 3600);
/// The report bot starts on day 5.
const REPORT_BOT_FROM: u32 = 5;

fn generate(day: u32, rng: &mut Rng) -> Day {
    let mut d = Day {
        calls: Vec::new(),
        events: Vec::new(),
    };
    // A step change: crm_lookup fails 2% of the time, then 40% after the deploy; two callers
    // share it evenly, so neither is to blame.
    let crm_calls = 120;
    let mut times: Vec<u64> = (0..crm_calls).map(|_| work_time(rng)).collect();
    times.sort();
    let (before, after): (Vec<usize>, Vec<usize>) =
        (0..crm_calls).partition(|i| (day, times[*i]) < CRM_DEPLOY);
    let fail_before = pick(rng, before.len() / 50, before.len());
    let fail_after = pick(rng, after.len() * 2 / 5, after.len());
    for (i, &t) in times.iter().enumerate() {
        let caller = ["support-bot", "sales-bot"][i % 2];
        let session = format!("crm-{day}-{i}");
        let fails = match before.iter().position(|&b| b == i) {
            Some(k) => fail_before.contains(&k),
            None => fail_after.contains(&after.iter().position(|&a| a == i).unwrap()),
        };
        let error = match (fails, (day, t) >= CRM_DEPLOY) {
            (false, _) => None,
            (true, false) => Some((
                "permanent_failure",
                "upstream closed the connection after 30s",
            )),
            (true, true) => Some((
                "permanent_failure",
                "KeyError: 'account_tier' (crm-adapter 2.4.1)",
            )),
        };
        let mut o = json!({"type":"outcome","ts":at(day, t),"session":session,"tool":"crm_lookup","status":"ok","caller":caller});
        if let Some((kind, message)) = error {
            o["status"] = json!("error");
            o["error_type"] = json!(kind);
            o["error_message"] = json!(message);
        }
        d.event(t, o);
    }
    // A useless tool: its results pass, and users re-ask in 27 of 30 sessions.
    for i in 0..30 {
        let t = work_time(rng);
        let s = format!("pdf-sum-{day}-{i}");
        let caps = json!(["summarize", "pdf"]);
        d.event(t, json!({"type":"ask","ts":at(day,t),"session":s,"user":"u","text":"summarize the attached contract","capabilities":caps}));
        d.outcome(day, t + 5, &s, "summarize_pdf", None);
        if i < 27 {
            d.event(t + 40, json!({"type":"ask","ts":at(day,t+40),"session":s,"user":"u","text":"no, that is not what the contract says, summarize it again","capabilities":caps}));
            d.outcome(day, t + 45, &s, "summarize_pdf", None);
        }
    }
    // A learnable alias: models write `qry` for memory_load's `query`, then correct it. `page` is
    // unknown too: with two unknown arguments `qry` has no one reading, so the gate refuses it and
    // evaluate learns the alias from the re-ask.
    for i in 0..3 {
        let t = work_time(rng);
        let s = format!("mem-{day}-{i}");
        let topic = ["travel plans", "user preferences", "open invoices"][i];
        for (dt, args) in [
            (0, json!({"qry": topic, "page": 1})),
            (3, json!({"query": topic, "page": 1})),
        ] {
            d.calls.push((
                t + dt,
                json!({"ts":at(day,t+dt),"session":s,"caller":"assistant","call":{"name":"memory_load","arguments":args}}),
            ));
        }
    }
    for i in 0..20 {
        let t = work_time(rng);
        d.calls.push((
            t,
            json!({"ts":at(day,t),"session":format!("mem-ok-{day}-{i}"),"caller":"assistant","call":{"name":"memory_load","arguments":{"query":"recent notes"}}}),
        ));
    }
    // Two overlapping tools: 8 of 20 wiki questions go to search_docs first, which refers
    // them away; search_wiki then answers.
    for i in 0..40 {
        let t = work_time(rng);
        let s = format!("search-{day}-{i}");
        if i < 20 {
            d.outcome(day, t, &s, "search_docs", None);
        } else if i < 32 {
            d.outcome(day, t, &s, "search_wiki", None);
        } else {
            d.event(t, json!({"type":"outcome","ts":at(day,t),"session":s,"tool":"search_docs","status":"error","error_type":"wrong_tool_boundary","error_message":"this is a wiki page, not product documentation","metadata":{"boundary_axes":["wiki","knowledge_base"],"evidence":"the page lives in the team wiki"}}));
            d.outcome(day, t + 20, &s, "search_wiki", None);
        }
    }
    // A tool that gets fixed: the renderer crashes 7 times in 10 until the fix.
    for i in 0..40 {
        let t = work_time(rng);
        let broken = (day, t) < RENDER_FIX;
        let error = (broken && i % 10 < 7).then_some((
            "permanent_failure",
            "renderer crashed: font cache corrupt (pdf-render 1.3.0)",
        ));
        d.outcome(day, t, &format!("render-{day}-{i}"), "pdf_render", error);
    }
    // One bad caller on a shared tool: sql_query through the gate, its outcomes naming the
    // call's id; from day 5 the report bot queries a table that does not exist, and retries.
    let mut n = 0;
    for caller in ["analytics-bot", "finance-bot", "ops-bot", "report-bot"] {
        if caller == "report-bot" && day < REPORT_BOT_FROM {
            continue;
        }
        let fails = if caller == "report-bot" {
            pick(rng, 27, 30)
        } else {
            let n = usize::from(rng.below(3) == 0);
            pick(rng, n, 30)
        };
        for i in 0..30 {
            let t = work_time(rng);
            let s = format!("sql-{caller}-{day}-{i}");
            let id = format!("call_{day}_{n}");
            n += 1;
            let args = json!({"sql": format!("select * from t{}", i % 5)}).to_string();
            d.calls.push((
                t,
                json!({"ts":at(day,t),"session":s,"caller":caller,"call":{"id":id,"type":"function","function":{"name":"sql_query","arguments":args}}}),
            ));
            let mut o = json!({"type":"outcome","ts":at(day,t+1),"session":s,"tool":"sql_query","status":"ok","call_id":id});
            if fails.contains(&i) {
                o["status"] = json!("error");
                o["error_type"] = json!("permanent_failure");
                o["error_message"] = json!(if caller == "report-bot" {
                    format!("ERROR: relation \"report_{i}\" does not exist (SQLSTATE 42P01)")
                } else {
                    "ERROR: canceling statement due to statement timeout (SQLSTATE 57014)"
                        .to_string()
                });
            }
            d.event(t + 1, o);
        }
    }
    // A transient burst: the weather API answers 429 for an hour on day 6.
    for i in 0..60 {
        let t = work_time(rng);
        d.outcome(day, t, &format!("weather-{day}-{i}"), "weather", None);
    }
    if day == 6 {
        for i in 0..25 {
            let t = 13 * 3600 + rng.below(3600);
            d.outcome(
                day,
                t,
                &format!("weather-burst-{i}"),
                "weather",
                Some(("rate_limited", "HTTP 429 Too Many Requests")),
            );
        }
    }
    // A rare tool: one fax a day, and on day 10 three that fail.
    let t = work_time(rng);
    d.outcome(day, t, &format!("fax-{day}"), "fax_send", None);
    if day == 10 {
        for i in 0..3 {
            d.outcome(
                day,
                t + 60 * (i + 1),
                &format!("fax-{day}-r{i}"),
                "fax_send",
                Some(("permanent_failure", "line busy")),
            );
        }
    }
    // A busy, healthy tool: 400 calls, two failures, and now and then a re-ask.
    let failing = pick(rng, 2, 400);
    for i in 0..400 {
        let t = work_time(rng);
        let s = format!("calc-{day}-{i}");
        let error = failing
            .contains(&i)
            .then_some(("permanent_failure", "division by zero"));
        if i % 100 == 0 {
            let caps = json!(["compute"]);
            d.event(t, json!({"type":"ask","ts":at(day,t),"session":s,"user":"u","text":"what is 17% of 2300","capabilities":caps}));
            d.outcome(day, t + 2, &s, "calculator", error);
            d.event(t + 30, json!({"type":"ask","ts":at(day,t+30),"session":s,"user":"u","text":"again: what is 17% of 2300","capabilities":caps}));
            d.outcome(day, t + 32, &s, "calculator", None);
        } else {
            d.outcome(day, t, &s, "calculator", error);
        }
    }
    d.calls.sort_by_key(|c| c.0);
    d.events.sort_by_key(|e| e.0);
    d
}

struct Fortnight {
    sb: Sandbox,
    db: PathBuf,
}

impl Fortnight {
    fn run(&self, now: &str, args: &[&str]) -> (String, i32, String) {
        texts(
            self.sb
                .cmd()
                .arg("--db")
                .arg(&self.db)
                .args(["--now", now])
                .args(args)
                .output()
                .unwrap(),
        )
    }

    fn day(&self, day: u32, d: &Day) {
        let calls: String = d.calls.iter().map(|(_, c)| format!("{c}\n")).collect();
        let out = self
            .sb
            .cmd()
            .arg("--db")
            .arg(&self.db)
            .args(["--now", &at(day, 23 * 3600)])
            .args(["gate", "--jsonl", "--replay", "--quiet"])
            .write_stdin(calls)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let file = self.sb.file(
            &format!("day-{day}.jsonl"),
            &d.events
                .iter()
                .map(|(_, e)| format!("{e}\n"))
                .collect::<String>(),
        );
        let (_, code, err) = self.run(&at(day, 23 * 3600), &["record", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
}

/// What a finding is about: (tool, kind, subject).
type Key = (String, String, String);

fn key(r: &Value) -> Key {
    (
        r["tool"].as_str().unwrap().to_string(),
        r["kind"].as_str().unwrap().to_string(),
        r["subject"].as_str().unwrap().to_string(),
    )
}

fn k(tool: &str, kind: &str, subject: &str) -> Key {
    (tool.to_string(), kind.to_string(), subject.to_string())
}

fn find<'a>(report: &'a Value, tool: &str, kind: &str) -> Option<&'a Value> {
    report["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tool"] == tool && r["kind"] == kind)
}

/// The findings that paged: new or reopened, at or above the floor.
fn paged(report: &Value) -> BTreeSet<Key> {
    let since = &report["since_last_run"];
    let ids: BTreeSet<&str> = ["new", "reopened"]
        .iter()
        .flat_map(|l| since[l].as_array().unwrap())
        .map(|v| v.as_str().unwrap())
        .collect();
    report["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| ids.contains(r["id"].as_str().unwrap()))
        .map(key)
        .collect()
}

/// The ground truth: what each night must page on.
fn expected_pages(night: u32) -> BTreeSet<Key> {
    let pages: Vec<Key> = match night {
        // Present from the first day: each pages the first night.
        1 => vec![
            k("summarize_pdf", "tighten_acceptance", ""),
            k("memory_load", "learn_alias", "qry=query"),
            k("search_docs", "sharpen_descriptions", "search_wiki"),
            k("pdf_render", "demote", ""),
        ],
        // The report bot's first day.
        5 => vec![k("sql_query", "fix_caller", "report-bot")],
        // The deploy at 14:00 on day 9.
        9 => vec![k("crm_lookup", "change_point", "failure_rate")],
        _ => vec![],
    };
    pages.into_iter().collect()
}

#[test]
fn a_fortnight_pages_each_problem_on_its_night_and_nothing_else() {
    let sb = Sandbox::new();
    let db = sb.path().join("fortnight.db");
    let f = Fortnight { sb, db };
    let mut rng = Rng(SEED);
    let mut render_demote: Option<String> = None;
    let mut last = Value::Null;
    for day in 1..=14u32 {
        let d = generate(day, &mut rng);
        f.day(day, &d);
        let night = format!("2026-11-{:02}T02:00:00Z", day + 1);
        let (out, code, err) = f.run(
            &night,
            &[
                "evaluate",
                "--since",
                "7d",
                "--format",
                "json",
                "--fail-on",
                "new",
            ],
        );
        let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        let want = expected_pages(day);
        let got = paged(&report);
        let listed: Vec<String> = report["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} {} {} {} {}",
                    r["tool"], r["kind"], r["subject"], r["confidence"], r["change"]
                )
            })
            .collect();
        assert_eq!(got, want, "night {day}: {listed:#?}");
        assert_eq!(code, i32::from(!want.is_empty()), "night {day}: {err}");
        // Nothing is ever said against the healthy, the transient or the rare above the floor.
        let floor = report["since_last_run"]["confidence_floor"]
            .as_f64()
            .unwrap();
        for r in report["recommendations"].as_array().unwrap() {
            let tool = r["tool"].as_str().unwrap();
            if ["calculator", "weather", "fax_send", "search_wiki"].contains(&tool) {
                assert!(
                    r["confidence"].as_f64().unwrap() < floor,
                    "night {day}: {r:#}"
                );
            }
            // The shared tool is never demoted, nor its failures blamed on it.
            if tool == "sql_query" {
                assert_eq!(r["kind"], "fix_caller", "night {day}: {r:#}");
            }
            // Overlapping tools: sharpen their descriptions, never split one.
            assert!(
                !(tool == "search_docs" && r["kind"] == "split_boundary"),
                "{r:#}"
            );
        }
        // The fix shows on day 8: the renderer's findings resolve that night, not before.
        let resolved: BTreeSet<&str> = report["since_last_run"]["resolved"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        if day == 1 {
            render_demote = find(&report, "pdf_render", "demote")
                .map(|r| r["id"].as_str().unwrap().to_string());
        }
        let render_id = render_demote
            .as_deref()
            .expect("the renderer demoted on night 1");
        assert_eq!(
            resolved.contains(render_id),
            day == 8,
            "night {day}: {resolved:?}"
        );
        assert_eq!(
            find(&report, "pdf_render", "demote").is_some(),
            day < 8,
            "night {day}"
        );
        checks_of_the_night(day, &report);
        last = report;
    }
    // The last night still carries what is still wrong, and pages on none of it again.
    assert!(find(&last, "crm_lookup", "change_point").is_some());
    assert!(find(&last, "sql_query", "fix_caller").is_some());
    // `tools health` draws each tool's nights in a line that fits 80 columns (what evaluate
    // over now counts: the last run's week and what came after): the crm step shows.
    let (table, code, err) = f.run("2026-11-15T02:00:00Z", &["tools", "health"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("nights"))
        .collect();
    assert_eq!(lines.len(), 11, "{table}");
    for line in &lines {
        assert!(line.chars().count() <= 80, "{line}");
    }
    let crm = lines.iter().find(|l| l.starts_with("crm_lookup")).unwrap();
    let spark: Vec<char> = crm["crm_lookup".len()..]
        .trim_start()
        .trim_start_matches("failure ")
        .chars()
        .take(14)
        .collect();
    assert_eq!(spark[6], '▁', "{crm}");
    assert!(
        spark[8..13].iter().all(|c| !matches!(c, '▁' | '·')),
        "{crm}"
    );
}

/// The blame and the evidence of each problem, on the nights it shows.
fn checks_of_the_night(day: u32, report: &Value) {
    if day >= 9 {
        let c = find(report, "crm_lookup", "change_point").expect("the crm step");
        let counts = &c["evidence"]["counts"];
        assert_eq!(counts["changed_at"], "2026-11-09T14:00:00Z", "{c:#}");
        assert!(counts["before"]["rate"].as_f64().unwrap() <= 0.05, "{c:#}");
        assert!(counts["after"]["rate"].as_f64().unwrap() >= 0.3, "{c:#}");
        let summary = c["summary"].as_str().unwrap();
        assert!(summary.contains("from 14:00 on 2026-11-09"), "{summary}");
        // The deploy's version survives clustering: it tells this deploy from the next.
        assert!(summary.contains("crm-adapter 2.4.1"), "{summary}");
        assert!(summary.contains("fix the tool"), "{summary}");
        // The sessions shown: the latest of the dominant error, each with caller and time.
        let samples = c["evidence"]["samples"].as_array().unwrap();
        assert!(!samples.is_empty());
        let times: Vec<&str> = samples.iter().map(|s| s["at"].as_str().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
        for s in samples {
            assert!(s["error"].as_str().unwrap().contains("2.4.1"), "{s}");
            assert!(s["caller"].is_string(), "{s}");
        }
    }
    if (REPORT_BOT_FROM..=REPORT_BOT_FROM + 6).contains(&day) {
        let c = find(report, "sql_query", "fix_caller").unwrap_or_else(|| {
            panic!(
                "night {day}: the report bot: {:#}",
                report["recommendations"]
            )
        });
        assert_eq!(c["subject"], "report-bot");
        let summary = c["summary"].as_str().unwrap();
        assert!(
            summary.contains("fix the caller, not the tool"),
            "{summary}"
        );
        assert!(summary.contains("42P01"), "{summary}");
        for s in c["evidence"]["samples"].as_array().unwrap() {
            assert_eq!(s["caller"], "report-bot", "{s}");
            assert!(s["error"].as_str().unwrap().contains("42P01"), "{s}");
        }
    }
    if day == 1 {
        // Re-asks after results that passed: tighten what the tool accepts.
        let t = find(report, "summarize_pdf", "tighten_acceptance").unwrap();
        assert!(t["summary"].as_str().unwrap().contains("tighten"));
        let sharpen = find(report, "search_docs", "sharpen_descriptions").unwrap();
        assert!(
            sharpen["summary"]
                .as_str()
                .unwrap()
                .contains("sharpen both descriptions")
        );
        // The busy healthy tool's few re-asks stay under the floor, listed apart.
        let calc = find(report, "calculator", "tighten_acceptance").unwrap();
        let below: Vec<&Value> = report["since_last_run"]["below_floor"]
            .as_array()
            .unwrap()
            .iter()
            .collect();
        assert!(below.contains(&&calc["id"]), "{calc:#}");
    }
}

/// The chromium to drive, when there is one on the PATH; `.ci/run` installs Debian's and sets
/// `METAGATE_REQUIRE_CHROMIUM`, so there it is never skipped.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    });
    assert!(
        found.is_some() || std::env::var_os("METAGATE_REQUIRE_CHROMIUM").is_none(),
        "METAGATE_REQUIRE_CHROMIUM is set but no chromium is on the PATH"
    );
    found
}

/// Runs headless chromium on `page` with `args`, in a new empty profile, for at most a minute.
fn headless(browser: &PathBuf, sb: &Sandbox, args: &[String], page: &std::path::Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .current_dir(sb.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let mut out = String::new();
    use std::io::Read;
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    out
}

/// `evaluate --format html` over ten days of the fortnight, opened in a real headless
/// Chromium: the page renders without errors, each tool's chart holds a point per night and
/// series the JSON report has a value for, the change points are marked, and a screenshot is
/// saved (to `docs/evaluate-report.png` with `METAGATE_SAVE_SCREENSHOT=1`).
#[test]
fn the_fortnight_report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        crate::skips::skip(&crate::skips::CHROMIUM, "no chromium on the PATH");
        return;
    };
    let sb = Sandbox::new();
    let db = sb.path().join("fortnight.db");
    let f = Fortnight { sb, db };
    let mut rng = Rng(SEED);
    for day in 1..=10u32 {
        let d = generate(day, &mut rng);
        f.day(day, &d);
    }
    let night = "2026-11-11T02:00:00Z";
    let (html, code, err) = f.run(
        night,
        &["evaluate", "--since", "7d", "--format", "html", "--dry-run"],
    );
    assert_eq!(code, 0, "{err}");
    // Self-contained: nothing is fetched from anywhere.
    for outside in ["http://", "https://", "src=", "<link"] {
        assert!(!html.contains(outside), "{outside} in the page");
    }
    let (json, _, _) = f.run(
        night,
        &["evaluate", "--since", "7d", "--format", "json", "--dry-run"],
    );
    let report: Value = serde_json::from_str(&json).unwrap();
    let page = f.sb.file("report.html", &html);
    let dom = headless(&browser, &f.sb, &["--dump-dom".to_string()], &page);
    let start = dom
        .find("<pre id=\"render-check\"")
        .expect("the page's load handler ran");
    let body = &dom[start..];
    let text = &body[body.find('>').unwrap() + 1..body.find("</pre>").unwrap()];
    let check: Value =
        serde_json::from_str(&text.replace("&quot;", "\"").replace("&amp;", "&")).unwrap();
    assert_eq!(check["errors"], json!([]), "{check}");
    let tools = report["tools"].as_object().unwrap();
    assert_eq!(
        check["charts"].as_object().unwrap().len(),
        tools.len(),
        "{check}"
    );
    for (tool, t) in tools {
        let expected: usize = t["nights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                usize::from(n["failure_rate"].is_number()) + usize::from(n["utility"].is_number())
            })
            .sum();
        assert_eq!(check["charts"][tool]["points"], expected, "{tool}: {check}");
        assert!(
            check["charts"][tool]["width"].as_f64().unwrap() > 100.0,
            "{check}"
        );
    }
    // The step change and the bad caller are marked where they happened.
    assert_eq!(check["charts"]["crm_lookup"]["changes"], 1, "{check}");
    assert_eq!(check["charts"]["sql_query"]["changes"], 1, "{check}");
    assert!(html.contains("data-at=\"2026-11-09T14:00:00Z\""));
    // Findings with their sessions, each with its caller and time.
    assert!(
        html.contains("<td>report-bot</td>"),
        "the bad caller's sessions"
    );
    let shot = f.sb.path().join("evaluate-report.png");
    headless(
        &browser,
        &f.sb,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,2600".to_string(),
        ],
        &page,
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    if std::env::var_os("METAGATE_SAVE_SCREENSHOT").is_some() {
        let docs =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/evaluate-report.png");
        std::fs::write(docs, &png).unwrap();
    }
}
