//! `cargo bench`: metagate's throughput figures beside their baselines, in the same run.
//!
//! Sections (pass names to run a subset: `cargo bench -- gate`):
//! - `gate`: `gate --jsonl` over a generated 1,000,000-line file, beside a bare serde_json
//!   parse-and-print loop and `jq -c .` (when installed) over the same file; then with
//!   telemetry on (every decision in a fresh SQLite store, durable before its line is out).
//! - `repair`: the median time to read a broken ~200-byte call leniently (and to decide it),
//!   beside serde_json parsing the same call unbroken.
//! - `policy`: `gate --jsonl` with the example policy (`fixtures/policies/sirthaddeus.toml`,
//!   an intent and a caller given, so intent, caller, path, shell and URL checks all run),
//!   beside the same tools with every policy rule removed; then the same mix without its
//!   three hostile calls (what the checks cost a call that passes, with no rejection to
//!   write); then the whole mix again with telemetry on, so the limits (counted from the
//!   store) show separately.
//! - `grants`: `gate --jsonl` with telemetry and the example policy requiring grants
//!   (`[permit] require`, a live grant for each capability in the store, so every call needing
//!   one looks its grants up), beside the same policy without `[permit]`.
//! - `lint`: `lint` over a generated 1,000,000-call JSON Lines trace (the `gate` mix) in each
//!   output format, beside the bare serde_json loop over the same file (budget: under 10 s).
//! - `startup`: `gate` run once per call, with and without telemetry, beside
//!   `examples/bare_echo.rs` (a bare Rust binary that parses and prints one JSON document),
//!   built with the same profile; the three run in turn, and the medians are compared.
//! - `latency`: one policy decision in-process (read, correct, check) for each call kind of
//!   the `policy` mix, p50/p99/p99.9 over 100,000 decisions a kind, beside the per-decision
//!   figures two policy engines publish.
//! - `messages`: `gate --jsonl` over whole OpenAI assistant messages of 4 calls each (the
//!   `gate` mix's calls, grouped), beside the same calls one per line.
//! - `callgrind`: instructions per call, counted by valgrind's callgrind (which no other load
//!   disturbs), for the `gate` mix, the `policy` mix, the 4-call messages, and the text
//!   dialects beside the same calls as JSON: a run of 4,000 calls minus a run of 2,000, so
//!   start-up is left out. Skipped when valgrind is missing.
//! - `postgres`: the shared PostgreSQL store (docs/postgres.md) on a local server with
//!   PostgreSQL's durable settings (`tests/support/postgres.rs`, a Unix socket): `gate
//!   --jsonl` over the `gate` mix, without and with a per-caller limit (every group then takes
//!   the fleet's decisions lock and counts), and `gate` one call per process, each beside the
//!   same run into an SQLite store.
//! - `pg-evaluate`: `evaluate --dry-run` over the synthetic store of `cargo bench --bench
//!   evaluate` (10,000,000 events, `METAGATE_BENCH_EVENTS` for another size; generated once
//!   into `target/bench-evaluate-N.db`, shared with that bench), copied by `db copy` into a
//!   database of the durable local server: wall time and peak RSS on PostgreSQL, beside the
//!   same run on the SQLite file, whose report it must equal. Then a run is stored on each and
//!   `tools health` timed on both (best of 7), beside `metagate --version`.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/postgres.rs"]
mod postgres_server;
#[path = "../tests/support/skips.rs"]
mod skips;

/// The binary measured: this build's, or another build's named by `$METAGATE_BENCH_BIN` (to
/// measure two builds with one bench, one after the other).
static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    std::env::var("METAGATE_BENCH_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_metagate").to_string())
});

fn main() {
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |name: &str| wanted.is_empty() || wanted.iter().any(|w| name.contains(w.as_str()));
    let dir = tempfile::tempdir().expect("temp dir");
    if run("gate") {
        bench_gate(dir.path());
    }
    if run("repair") {
        bench_repair();
    }
    if run("policy") {
        bench_policy(dir.path());
    }
    if run("startup") {
        bench_startup(dir.path());
    }
    if run("grants") {
        bench_grants(dir.path());
    }
    if run("lint") {
        bench_lint(dir.path());
    }
    if run("latency") {
        bench_latency(dir.path());
    }
    if run("messages") {
        bench_messages(dir.path());
    }
    if run("callgrind") {
        bench_callgrind(dir.path());
    }
    let postgres = cfg!(feature = "postgres");
    if !postgres && (run("postgres") || run("pg-evaluate")) {
        eprintln!("postgres, pg-evaluate: left out (cargo bench --features postgres runs them)");
    }
    if postgres && run("postgres") {
        bench_postgres(dir.path());
    }
    if postgres && run("pg-evaluate") {
        bench_pg_evaluate();
    }
}

/// See the `pg-evaluate` section above.
fn bench_pg_evaluate() {
    use metagate_store::synth::{self, Config};
    // The store and the time of `benches/evaluate.rs`.
    const NOW: &str = "2026-11-20T18:00:00Z";
    let events: u64 = std::env::var("METAGATE_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(10_000_000);
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let db = target.join(format!("bench-evaluate-{events}.db"));
    if !db.exists() {
        let started = Instant::now();
        synth::generate_file(&db, &Config::week(events, 7)).expect("generate");
        println!(
            "pg-evaluate: generated {events} events in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let sqlite = db.display().to_string();
    let pg = postgres_server::durable_server().fresh_database();
    let started = Instant::now();
    let copied = Command::new(&*BIN)
        .args(["db", "copy", &sqlite, &pg])
        .output()
        .expect("db copy");
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    println!(
        "pg-evaluate: db copy of {} into PostgreSQL: {:.1} s",
        db.display(),
        started.elapsed().as_secs_f64()
    );
    let evaluate = |store: &str| {
        let started = Instant::now();
        let out = Command::new("/usr/bin/time")
            .arg("-v")
            .arg(&*BIN)
            .args(["--db", store, "--now", NOW, "evaluate", "--since", "7d"])
            .args(["--dry-run", "--format", "json"])
            .output()
            .expect("/usr/bin/time");
        let wall = started.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let rss_kib: f64 = stderr
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("Maximum resident set size (kbytes): ")
            })
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0);
        let mut report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        report.as_object_mut().unwrap().remove("shards");
        (wall, rss_kib / 1024.0, report)
    };
    let (sqlite_wall, sqlite_rss, sqlite_report) = evaluate(&sqlite);
    let (pg_wall, pg_rss, pg_report) = evaluate(&pg);
    assert_eq!(sqlite_report, pg_report, "the two reports differ");
    println!(
        "pg-evaluate: evaluate --dry-run, {} events in the window (the same report on both)",
        pg_report["events"]
    );
    println!(
        "  PostgreSQL {:>7.2} s  peak RSS {:>5.0} MiB   (target <= 120 s)",
        pg_wall.as_secs_f64(),
        pg_rss
    );
    println!(
        "  SQLite     {:>7.2} s  peak RSS {:>5.0} MiB   ratio postgres / sqlite {:.2}",
        sqlite_wall.as_secs_f64(),
        sqlite_rss,
        pg_wall.as_secs_f64() / sqlite_wall.as_secs_f64()
    );
    // `tools health` reads the latest stored run and what came after it: a run stored on each.
    let timed = |store: &str, args: &[&str]| {
        let started = Instant::now();
        let out = Command::new(&*BIN)
            .args(["--db", store, "--now", NOW])
            .args(args)
            .output()
            .expect("metagate");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        started.elapsed()
    };
    for store in [&sqlite, &pg] {
        timed(store, &["evaluate", "--since", "7d", "--format", "json"]);
    }
    let version = best(7, || timed(&sqlite, &["--version"]));
    for format in ["json", "known-tools"] {
        let args = ["tools", "health", "--format", format];
        let on_pg = best(7, || timed(&pg, &args));
        let on_sqlite = best(7, || timed(&sqlite, &args));
        println!(
            "pg-evaluate: tools health --format {format}, best of 7: PostgreSQL {:.1} ms, SQLite {:.1} ms, metagate --version {:.1} ms (budget 200 ms)",
            on_pg.as_secs_f64() * 1000.0,
            on_sqlite.as_secs_f64() * 1000.0,
            version.as_secs_f64() * 1000.0
        );
    }
}

/// See the `postgres` section above.
fn bench_postgres(dir: &Path) {
    const LINES: usize = 1_000_000;
    const RUNS: usize = 100;
    let server = postgres_server::durable_server();
    let file = dir.join("pg-calls.jsonl");
    generate(&file, LINES);
    let limits = dir.join("pg-limits.toml");
    std::fs::write(
        &limits,
        "[limits]\nper_caller = { per_minute = 1000000000 }\n",
    )
    .unwrap();
    println!("postgres: gate --jsonl, {LINES} lines of the gate mix, built-in policy; best of 2");
    for (what, policy) in [("no limits", None), ("a per-caller limit", Some(&limits))] {
        let mut figures = Vec::new();
        for backend in ["sqlite", "postgres"] {
            let time = best(2, || {
                let db = match backend {
                    "sqlite" => {
                        let db = dir.join(format!("pg-bench-{}.db", figures.len()));
                        for suffix in ["", "-wal", "-shm"] {
                            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
                        }
                        db.display().to_string()
                    }
                    _ => server.fresh_database(),
                };
                let mut cmd = Command::new(&*BIN);
                cmd.builtin_policy(dir);
                if let Some(p) = policy {
                    cmd.arg("--policy").arg(p);
                }
                cmd.args([
                    "gate", "--jsonl", "--quiet", "--caller", "agent", "--db", &db,
                ]);
                time_command(&mut cmd, &file)
            });
            figures.push(rate(LINES, time));
            println!(
                "  {what:<20} {backend:<9} {:>10.0} calls/s  ({:.2} s)",
                rate(LINES, time),
                time.as_secs_f64()
            );
        }
        println!(
            "  {what:<20} ratio postgres / sqlite {:.2}   (budget >= 50,000 calls/s on PostgreSQL)",
            figures[1] / figures[0]
        );
    }
    let call = dir.join("pg-call.json");
    std::fs::write(
        &call,
        r#"{"thoughts":["Run it."],"headline":"Running","tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"ls -la"}}"#,
    )
    .unwrap();
    // One store of each kind for every run, as an agent loop keeps one.
    let sqlite = dir.join("pg-startup.db").display().to_string();
    let pg = server.fresh_database();
    let mut times: [Vec<Duration>; 3] = Default::default();
    for _ in 0..RUNS {
        times[0].push(time_command(
            Command::new(&*BIN)
                .args(["gate", "--quiet", "--no-telemetry"])
                .builtin_policy(dir),
            &call,
        ));
        for (i, db) in [(1, &sqlite), (2, &pg)] {
            times[i].push(time_command(
                Command::new(&*BIN)
                    .args(["gate", "--quiet", "--db", db])
                    .builtin_policy(dir),
                &call,
            ));
        }
    }
    let [bare, sqlite, pg] = times.map(|mut t| {
        t.sort_unstable();
        t[t.len() / 2].as_secs_f64()
    });
    println!("postgres: gate, one call per process ({RUNS} runs each, in turn; medians)");
    println!(
        "  gate --no-telemetry          {:>7.0} µs per call",
        bare * 1e6
    );
    println!(
        "  gate, SQLite store           {:>7.0} µs per call   ratio {:>5.2}",
        sqlite * 1e6,
        sqlite / bare
    );
    println!(
        "  gate, PostgreSQL store       {:>7.0} µs per call   ratio {:>5.2}   (a connection per call)",
        pg * 1e6,
        pg / bare
    );
}

/// Writes `messages` lines, each an OpenAI assistant message holding 4 calls of the `gate` mix
/// (as OpenAI `tool_calls` items), to `path`.
fn message_calls(path: &Path, messages: usize) -> PathBuf {
    const CALLS: &[&str] = &[
        r#"{"id":"call_@a","type":"function","function":{"name":"memory_load","arguments":"{\"search\":\"notes @\",\"limit\":\"5\"}"}}"#,
        r#"{"id":"call_@b","type":"function","function":{"name":"response","arguments":"{\"text\":\"Result @ is ready.\"}"}}"#,
        r#"{"id":"call_@c","type":"function","function":{"name":"code_execution_tool","arguments":"{\"runtime\":\"bash\",\"code\":\"ls -la /tmp/@\"}"}}"#,
        r#"{"id":"call_@d","type":"function","function":{"name":"search_engine","arguments":"{\"query\":\"rust @\"}"}}"#,
    ];
    let mut out = BufWriter::new(File::create(path).unwrap());
    for i in 0..messages {
        let calls: Vec<String> = CALLS
            .iter()
            .map(|c| c.replace('@', &i.to_string()))
            .collect();
        writeln!(
            out,
            r#"{{"role":"assistant","content":null,"tool_calls":[{}]}}"#,
            calls.join(",")
        )
        .unwrap();
    }
    out.flush().unwrap();
    path.to_path_buf()
}

fn bench_messages(dir: &Path) {
    const MESSAGES: usize = 250_000;
    let messages = message_calls(&dir.join("messages.jsonl"), MESSAGES);
    let singles = dir.join("message-singles.jsonl");
    {
        // The same calls, one per line.
        let mut out = BufWriter::new(File::create(&singles).unwrap());
        for line in BufReader::new(File::open(&messages).unwrap()).lines() {
            let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            for call in v["tool_calls"].as_array().unwrap() {
                writeln!(out, "{call}").unwrap();
            }
        }
        out.flush().unwrap();
    }
    let gate = |file: &Path| {
        time_command(
            Command::new(&*BIN)
                .args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
                .builtin_policy(dir),
            file,
        )
    };
    let whole = best(3, || gate(&messages));
    let one_by_one = best(3, || gate(&singles));
    let calls = MESSAGES * 4;
    let (w, s) = (rate(calls, whole), rate(calls, one_by_one));
    println!(
        "gate --jsonl over {MESSAGES} OpenAI messages of 4 calls ({calls} calls), built-in policy"
    );
    println!(
        "  4-call messages            {w:>12.0} calls/s  ({:.0} messages/s, {:.2} s)",
        w / 4.0,
        whole.as_secs_f64()
    );
    println!(
        "  the same calls one a line  {s:>12.0} calls/s  ({:.2} s)",
        one_by_one.as_secs_f64()
    );
    println!("  ratio messages / single    {:>12.2}", w / s);
}

/// Instructions a run of `gate --jsonl` takes, as callgrind counts them.
fn instructions(cmd: &mut Command, input: &Path) -> Option<u64> {
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut valgrind = Command::new("valgrind");
    valgrind
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(program)
        .args(args)
        .stdin(File::open(input).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => valgrind.env(k, v),
            None => valgrind.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        valgrind.current_dir(dir);
    }
    let out = valgrind.output().ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .lines()
        .find_map(|l| l.split("Collected : ").nth(1))
        .and_then(|n| n.trim().parse().ok())
}

fn bench_callgrind(dir: &Path) {
    if !have("valgrind") {
        println!("callgrind: valgrind is not installed");
        return;
    }
    let root = policy_root(&dir.join("callgrind-root"));
    let checks = root.join("checks.toml");
    let mut example = example_policy();
    example.remove("limits");
    std::fs::write(&checks, toml::to_string(&example).unwrap()).unwrap();
    let per_call = |name: &str,
                    make: &dyn Fn(&Path, usize) -> PathBuf,
                    per_line: usize,
                    cmd: &dyn Fn() -> Command| {
        let small = make(&dir.join(format!("{name}-small.jsonl")), 2000 / per_line);
        let large = make(&dir.join(format!("{name}-large.jsonl")), 4000 / per_line);
        match (
            instructions(&mut cmd(), &large),
            instructions(&mut cmd(), &small),
        ) {
            (Some(l), Some(s)) => {
                println!("  {name:<28} {:>8} instructions per call", (l - s) / 2000)
            }
            _ => println!("  {name:<28} not counted (valgrind failed)"),
        }
    };
    println!("callgrind: instructions per call (4,000 calls minus 2,000)");
    per_call(
        "gate mix, built-in policy",
        &|p, n| {
            generate(p, n);
            p.to_path_buf()
        },
        1,
        &|| {
            let mut c = Command::new(&*BIN);
            c.args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
                .builtin_policy(dir);
            c
        },
    );
    per_call("policy mix, example policy", &policy_calls, 1, &|| {
        let mut c = Command::new(&*BIN);
        c.args([
            "gate",
            "--jsonl",
            "--quiet",
            "--no-telemetry",
            "--caller",
            "bench",
            "--intent",
            "bench",
            "--policy",
        ])
        .arg(&checks)
        .current_dir(&root);
        c
    });
    per_call("4-call OpenAI messages", &message_calls, 4, &|| {
        let mut c = Command::new(&*BIN);
        c.args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
            .builtin_policy(dir);
        c
    });
    for (name, mix) in [
        ("8 calls as JSON", &MIX[..8]),
        ("the same 8 in text dialects", DIALECT_MIX),
    ] {
        per_call(
            name,
            &|p, n| {
                generate_from(mix, p, n);
                p.to_path_buf()
            },
            1,
            &|| {
                let mut c = Command::new(&*BIN);
                c.args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
                    .builtin_policy(dir);
                c
            },
        );
    }
}

/// The first eight calls of [`MIX`], each written in a text dialect a local model emits.
const DIALECT_MIX: &[&str] = &[
    r#"[TOOL_CALLS]response[ARGS]{"text":"Result @ is ready."}"#,
    r#"<tool_call>{"name":"code_execution_tool","arguments":{"runtime":"bash","code":"ls -la /tmp/@"}}</tool_call>"#,
    r#"<function=code_execution_tool><parameter=runtime>terminal</parameter><parameter=code>echo @</parameter><parameter=session>0</parameter><parameter=reset>false</parameter></function>"#,
    r#"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>memory_load<｜tool▁sep｜>{"search":"notes @","limit":"5"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"#,
    r#"<|channel|>commentary to=functions.search_engine <|constrain|>json<|message|>{"query":"rust @"}<|call|>"#,
    r#"[TOOL_CALLS][{"name":"code_execution_tool","arguments":{"runtime":"python"}}]"#,
    r#"[my_tool(x=@)]"#,
    r#"<|python_tag|>{"name":"response","parameters":{"message":"done @"}}"#,
];

/// A mix of what agents send: clean calls, calls needing correction, rejections, garbage.
const MIX: &[&str] = &[
    r#"{"thoughts":["Answer the user."],"headline":"Answering","tool_name":"response","tool_args":{"text":"Result @ is ready."}}"#,
    r#"{"thoughts":["Run it."],"headline":"Running","tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"ls -la /tmp/@"}}"#,
    r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"echo @","session":0,"reset":false}}"#,
    r#"{"id":"call_@","type":"function","function":{"name":"memory_load","arguments":"{\"search\":\"notes @\",\"limit\":\"5\"}"}}"#,
    r#"{"type":"tool_use","id":"toolu_@","name":"search_engine","input":{"query":"rust @"}}"#,
    r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"python"}}"#,
    r#"{"jsonrpc":"2.0","id":@,"method":"tools/call","params":{"name":"my_tool","arguments":{"x":@}}}"#,
    r#"{"tool_name":"response","tool_args":{"message":"done @"}}"#,
];

fn generate(path: &Path, lines: usize) -> u64 {
    generate_from(MIX, path, lines)
}

/// `lines` lines of `mix`, in turn, each `@` the line's number.
fn generate_from(mix: &[&str], path: &Path, lines: usize) -> u64 {
    let mut out = BufWriter::new(File::create(path).unwrap());
    for i in 0..lines {
        let line = mix[i % mix.len()].replace('@', &i.to_string());
        out.write_all(line.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Best of `runs` wall-clock times.
fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap()
}

fn time_command(cmd: &mut Command, input: &Path) -> Duration {
    let started = Instant::now();
    let status = cmd
        .stdin(File::open(input).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(status.success(), "{cmd:?} failed");
    elapsed
}

/// The baseline: read lines, parse each into a serde_json Value, print it compactly.
fn serde_loop(input: &Path) -> Duration {
    let started = Instant::now();
    let reader = BufReader::with_capacity(256 * 1024, File::open(input).unwrap());
    let mut out = BufWriter::with_capacity(256 * 1024, File::create("/dev/null").unwrap());
    for line in reader.split(b'\n') {
        let line = line.unwrap();
        match serde_json::from_slice::<serde_json::Value>(&line) {
            Ok(v) => serde_json::to_writer(&mut out, &v).unwrap(),
            Err(_) => out.write_all(b"{\"error\":null}").unwrap(),
        }
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    started.elapsed()
}

/// Runs a command on the built-in policy whatever the environment holds: no
/// `$METAGATE_POLICY`, and a working folder and config folder without a policy file.
trait BuiltinPolicy {
    fn builtin_policy(&mut self, dir: &Path) -> &mut Self;
}

impl BuiltinPolicy for Command {
    fn builtin_policy(&mut self, dir: &Path) -> &mut Self {
        self.env_remove("METAGATE_POLICY")
            .env("XDG_CONFIG_HOME", dir.join("no-config"))
            .current_dir(dir)
    }
}

fn rate(lines: usize, d: Duration) -> f64 {
    lines as f64 / d.as_secs_f64()
}

fn have(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn bench_gate(dir: &Path) {
    const LINES: usize = 1_000_000;
    let file: PathBuf = dir.join("calls.jsonl");
    let bytes = generate(&file, LINES);
    println!(
        "gate --jsonl: {LINES} lines, {:.1} MB, built-in policy, no telemetry",
        bytes as f64 / 1e6
    );
    let gate = best(3, || {
        time_command(
            Command::new(&*BIN)
                .args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
                .builtin_policy(dir),
            &file,
        )
    });
    let db = dir.join("bench.db");
    let with_telemetry = best(3, || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        time_command(
            Command::new(&*BIN)
                .args(["gate", "--jsonl", "--quiet", "--db"])
                .arg(&db)
                .builtin_policy(dir),
            &file,
        )
    });
    let serde = best(3, || serde_loop(&file));
    let g = rate(LINES, gate);
    let s = rate(LINES, serde);
    println!(
        "  metagate gate --jsonl      {:>12.0} calls/s  ({:.2} s)",
        g,
        gate.as_secs_f64()
    );
    println!(
        "  serde_json parse+print     {:>12.0} lines/s  ({:.2} s)",
        s,
        serde.as_secs_f64()
    );
    println!(
        "  ratio gate / serde_json    {:>12.2}   (budget >= 0.50)",
        g / s
    );
    if have("jq") {
        // Every line of the mix is JSON, so jq reads the same file to its end.
        let jq = best(3, || {
            time_command(Command::new("jq").arg("-c").arg("."), &file)
        });
        let j = rate(LINES, jq);
        println!(
            "  jq -c .                    {:>12.0} lines/s  ({:.2} s)",
            j,
            jq.as_secs_f64()
        );
        println!(
            "  ratio gate / jq            {:>12.2}   (budget >= 4)",
            g / j
        );
    } else {
        println!("  jq -c .                    not installed");
    }
    let t = rate(LINES, with_telemetry);
    println!(
        "  with telemetry             {:>12.0} calls/s  ({:.2} s; budget >= 100,000)",
        t,
        with_telemetry.as_secs_f64()
    );
    println!("  ratio with / without       {:>12.2}", t / g);
}

/// Calls for the example policy, as an agent doing file and web work sends them: paths that
/// exist and that do not, shell commands, URLs, searches, in several envelopes; three in
/// twenty are hostile (a path escape, a command substitution, plain `http`).
const POLICY_MIX: &[&str] = &[
    r#"{"tool_name":"file_read","tool_args":{"path":"docs/notes-@.md"}}"#,
    r#"{"tool_name":"file_read","tool_args":{"file":"src/main.rs","max_lines":"@"}}"#,
    r#"{"tool_name":"file_list","tool_args":{}}"#,
    r#"{"type":"tool_use","id":"toolu_@","name":"system_execute","input":{"command":"grep -rn 'fn main' src | head -n @"}}"#,
    r#"{"tool_name":"system_execute","tool_args":{"cmd":"ls -la /tmp/@ && echo done"}}"#,
    r#"{"tool_name":"web_search","tool_args":{"q":"rust borrow checker @"}}"#,
    r#"{"id":"call_@","type":"function","function":{"name":"browser_navigate","arguments":"{\"url\":\"https://example.com/a/@\"}"}}"#,
    r#"{"tool_name":"file_read","tool_args":{"path":"../../etc/passwd"}}"#,
    r#"{"tool_name":"system_execute","tool_args":{"command":"echo $(cat ~/.ssh/id_rsa) @"}}"#,
    r#"{"tool_name":"browser_navigate","tool_args":{"url":"http://example.com/@"}}"#,
    r#"{"tool_name":"web_search","tool_args":{"query":"weather in city @"}}"#,
    r#"{"tool_name":"file_read","tool_args":{"path":"src/lib.rs","max_lines":@}}"#,
    r#"{"tool_name":"system_execute","tool_args":{"command":"python3 script.py --n @"}}"#,
    r#"{"tool_name":"file_list","tool_args":{"path":"docs"}}"#,
    r#"{"tool_name":"browser_navigate","tool_args":{"address":"https://docs.rs/serde/@"}}"#,
    r#"{"id":"call_@","type":"function","function":{"name":"web_search","arguments":{"query":"tokio @"}}}"#,
    r#"{"tool_name":"file_read","tool_args":{"path":"docs/guide/chapter-@.md"}}"#,
    r#"{"tool_name":"system_execute","tool_args":{"command":"git log --oneline -n @"}}"#,
    r#"{"name":"web_search","arguments":{"query":"news @"}}"#,
    r#"{"tool_name":"file_read","tool_args":{"path":"README.md"}}"#,
];

/// The example policy as a `toml::Table`, plus the intent and caller the bench declares.
fn example_policy() -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/policies/sirthaddeus.toml");
    let mut table: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    let extra: toml::Table = r#"
        [intents.bench]
        allow = ["file_read", "file_list", "system_execute", "web_search", "browser_navigate"]
        forbid = ["screen_capture"]
        [callers.bench]
        deny = ["screen_read"]
    "#
    .parse()
    .unwrap();
    for (key, value) in extra {
        let section = table
            .entry(key)
            .or_insert_with(|| toml::Table::new().into());
        section
            .as_table_mut()
            .unwrap()
            .extend(value.as_table().unwrap().clone());
    }
    // Grants are benched on their own (`grants`): here, the checks as they were.
    table.remove("permit");
    table
}

/// The same tools, with intents, callers, kinds, paths, URLs and limits taken out.
fn without_rules(mut table: toml::Table) -> toml::Table {
    for key in ["intents", "callers", "paths", "urls", "shell", "limits"] {
        table.remove(key);
    }
    for (_, tool) in table["tools"].as_table_mut().unwrap().iter_mut() {
        if let Some(args) = tool.get_mut("args").and_then(|a| a.as_table_mut()) {
            for (_, arg) in args.iter_mut() {
                arg.as_table_mut().unwrap().remove("kind");
            }
        }
    }
    table
}

/// A folder the example policy's paths point into.
fn policy_root(root: &Path) -> PathBuf {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    for file in ["src/main.rs", "src/lib.rs", "README.md"] {
        std::fs::write(root.join(file), "fn main() {}\n").unwrap();
    }
    root.to_path_buf()
}

/// Writes `lines` calls of [`POLICY_MIX`] to `path`.
fn policy_calls(path: &Path, lines: usize) -> PathBuf {
    calls_of(POLICY_MIX, path, lines)
}

/// [`POLICY_MIX`] without its three hostile calls: what the checks cost a call that passes,
/// apart from writing rejections (which the rule-free run never writes).
fn passing_policy_calls(path: &Path, lines: usize) -> PathBuf {
    let hostile = ["../../etc/passwd", "$(cat", "\"http://"];
    let passing: Vec<&str> = POLICY_MIX
        .iter()
        .copied()
        .filter(|call| !hostile.iter().any(|h| call.contains(h)))
        .collect();
    assert_eq!(passing.len(), POLICY_MIX.len() - hostile.len());
    calls_of(&passing, path, lines)
}

/// Writes `lines` calls of `mix` to `path`, `@` replaced by the line number.
fn calls_of(mix: &[&str], path: &Path, lines: usize) -> PathBuf {
    let mut out = BufWriter::new(File::create(path).unwrap());
    for i in 0..lines {
        let line = mix[i % mix.len()].replace('@', &i.to_string());
        writeln!(out, "{line}").unwrap();
    }
    out.flush().unwrap();
    path.to_path_buf()
}

fn bench_policy(dir: &Path) {
    const LINES: usize = 1_000_000;
    let root = policy_root(&dir.join("policy-root"));
    // Limits are counted in the store, so the policy without telemetry leaves them out
    // (with limits and no store, every call would fail closed).
    let example = example_policy();
    let mut no_limits = example.clone();
    no_limits.remove("limits");
    let write = |name: &str, table: &toml::Table| {
        let path = root.join(name);
        std::fs::write(&path, toml::to_string(table).unwrap()).unwrap();
        path
    };
    let with = write("example.toml", &example);
    let checks = write("checks.toml", &no_limits);
    let bare = write("bare.toml", &without_rules(example));
    let file = policy_calls(&dir.join("policy-calls.jsonl"), LINES);
    let passing = passing_policy_calls(&dir.join("passing-calls.jsonl"), LINES);
    // The bare policy has no intents, so it runs without `--intent`.
    let gate = |policy: &Path, db: Option<&Path>, file: &Path| {
        let mut cmd = Command::new(&*BIN);
        cmd.args(["gate", "--jsonl", "--quiet", "--caller", "bench"])
            .arg("--policy")
            .arg(policy)
            .current_dir(&root);
        if policy != bare {
            cmd.args(["--intent", "bench"]);
        }
        match db {
            Some(db) => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
                }
                cmd.arg("--db").arg(db)
            }
            None => cmd.arg("--no-telemetry"),
        };
        time_command(&mut cmd, file)
    };
    let checked = best(3, || gate(&checks, None, &file));
    let unchecked = best(3, || gate(&bare, None, &file));
    let checked_passing = best(3, || gate(&checks, None, &passing));
    let unchecked_passing = best(3, || gate(&bare, None, &passing));
    let db = dir.join("policy.db");
    let checked_db = best(3, || gate(&with, Some(&db), &file));
    let unchecked_db = best(3, || gate(&bare, Some(&db), &file));
    let (c, u) = (rate(LINES, checked), rate(LINES, unchecked));
    let (cd, ud) = (rate(LINES, checked_db), rate(LINES, unchecked_db));
    println!("gate --jsonl with the example policy: {LINES} lines, intent and caller given");
    println!("  no telemetry (intent, caller, path, shell, URL checks)");
    println!(
        "    example policy           {c:>12.0} calls/s  ({:.2} s)",
        checked.as_secs_f64()
    );
    println!(
        "    same tools, no rules     {u:>12.0} calls/s  ({:.2} s)",
        unchecked.as_secs_f64()
    );
    println!(
        "    cost of the checks       {:>11.1} %   (budget < 10 %)",
        (1.0 - c / u) * 100.0
    );
    let (cp, up) = (rate(LINES, checked_passing), rate(LINES, unchecked_passing));
    println!("  the same mix without its 3 hostile calls in 20 (no rejections to write)");
    println!("    example policy           {cp:>12.0} calls/s");
    println!("    same tools, no rules     {up:>12.0} calls/s");
    println!(
        "    cost of the checks       {:>11.1} %",
        (1.0 - cp / up) * 100.0
    );
    println!("  with telemetry (adds the limits, counted from the store)");
    println!(
        "    example policy           {cd:>12.0} calls/s  ({:.2} s)",
        checked_db.as_secs_f64()
    );
    println!(
        "    same tools, no rules     {ud:>12.0} calls/s  ({:.2} s)",
        unchecked_db.as_secs_f64()
    );
    println!(
        "    cost of checks + limits  {:>11.1} %",
        (1.0 - cd / ud) * 100.0
    );
}

fn bench_grants(dir: &Path) {
    const LINES: usize = 200_000;
    let root = policy_root(&dir.join("grants-root"));
    // Limits left out of both, so the store work compared is the grant lookups only.
    let mut without = example_policy();
    without.remove("limits");
    let mut with = without.clone();
    let fixture: toml::Table = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/policies/sirthaddeus.toml"),
    )
    .unwrap()
    .parse()
    .unwrap();
    with.insert("permit".into(), fixture["permit"].clone());
    let write = |name: &str, table: &toml::Table| {
        let path = root.join(name);
        std::fs::write(&path, toml::to_string(table).unwrap()).unwrap();
        path
    };
    let with = write("grants.toml", &with);
    let without = write("no-grants.toml", &without);
    let file = policy_calls(&dir.join("grant-calls.jsonl"), LINES);
    let db = dir.join("grants.db");
    let gate = |policy: &Path| {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        for cap in ["screen_read", "system_execute", "file_access"] {
            let status = Command::new(&*BIN)
                .arg("--policy")
                .arg(&with)
                .arg("--db")
                .arg(&db)
                .args(["permit", "grant", "--capability", cap, "--for", "1h"])
                .current_dir(&root)
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        }
        let mut cmd = Command::new(&*BIN);
        cmd.args([
            "gate", "--jsonl", "--quiet", "--caller", "bench", "--intent", "bench",
        ])
        .arg("--policy")
        .arg(policy)
        .arg("--db")
        .arg(&db)
        .current_dir(&root);
        time_command(&mut cmd, &file)
    };
    let granted = best(3, || gate(&with));
    let plain = best(3, || gate(&without));
    let (g, p) = (rate(LINES, granted), rate(LINES, plain));
    println!("gate --jsonl with telemetry, example policy: {LINES} lines");
    println!(
        "  grants required (live)     {g:>12.0} calls/s  ({:.2} s)",
        granted.as_secs_f64()
    );
    println!(
        "  no [permit]                {p:>12.0} calls/s  ({:.2} s)",
        plain.as_secs_f64()
    );
    println!("  ratio with / without       {:>12.2}", g / p);
}

/// Builds the bare baseline with the same profile as this bench.
fn bare_echo() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--example", "bare_echo"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo");
    assert!(status.success(), "building examples/bare_echo.rs failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("release").join("examples").join("bare_echo")
}

fn bench_startup(dir: &Path) {
    const RUNS: usize = 300;
    let call = dir.join("call.json");
    std::fs::write(
        &call,
        r#"{"thoughts":["Run it."],"headline":"Running","tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"ls -la"}}"#,
    )
    .unwrap();
    let bare = bare_echo();
    // One store for every run, as an agent loop keeps one.
    let db = dir.join("startup.db");
    let mut times: [Vec<Duration>; 3] = Default::default();
    // In turn, so a change in the machine's load falls on all three alike.
    for _ in 0..RUNS {
        times[0].push(time_command(&mut Command::new(&bare), &call));
        times[1].push(time_command(
            Command::new(&*BIN)
                .args(["gate", "--quiet", "--no-telemetry"])
                .builtin_policy(dir),
            &call,
        ));
        times[2].push(time_command(
            Command::new(&*BIN)
                .args(["gate", "--quiet", "--db"])
                .arg(&db)
                .builtin_policy(dir),
            &call,
        ));
    }
    let [baseline, gate, recorded] = times.map(|mut t| {
        t.sort_unstable();
        t[t.len() / 2].as_secs_f64()
    });
    println!("gate, one call per process ({RUNS} runs each, in turn; medians)");
    println!(
        "  bare serde_json binary       {:>7.0} µs per call",
        baseline * 1e6
    );
    println!(
        "  metagate gate --no-telemetry {:>7.0} µs per call   ratio {:>5.2}   (budget <= 1.5)",
        gate * 1e6,
        gate / baseline
    );
    println!(
        "  metagate gate, telemetry     {:>7.0} µs per call   ratio {:>5.2}   (budget <= 2.5; the decision on disk before the answer)",
        recorded * 1e6,
        recorded / baseline
    );
}

/// The per-decision figures two policy engines publish, to set ours beside (theirs, measured
/// on their machines with their policies, not here).
const PUBLISHED: &[&str] = &[
    "Cedar (AWS), published: 4–11 µs per authorization request",
    "agent-airlock, published: 2 µs p50, 27 µs p95 per tool-call check",
];

fn bench_latency(dir: &Path) {
    use metagate::gate::{Gate, Options, Verdict};
    use metagate_checks::path::CachedFs;
    use metagate_core::enforce::{Checker, Context, NoFacts, Scope, Setup};
    use metagate_core::policy::{Policy, Source};
    use std::hint::black_box;
    const PER_KIND: usize = 100_000;
    const VARIANTS: usize = 1_000;
    let root = policy_root(&dir.join("latency-root"));
    // As the `policy` section's run without telemetry: limits are counted in a store.
    let mut table = example_policy();
    table.remove("limits");
    let text = toml::to_string(&table).unwrap();
    let policy = Policy::from_source(
        Source {
            name: "example.toml",
            text: &text,
        },
        Some(root.join("example.toml")),
    )
    .expect("the example policy compiles");
    let checker = Checker::new(
        &policy,
        &Setup {
            cwd: &root,
            protected: Vec::new(),
            home: None,
            own_binary: None,
            programs: None,
            grant_key: None,
        },
    );
    let context = Context {
        session: None,
        caller: Some("bench".into()),
        intent: Some("bench".into()),
    };
    let fs = CachedFs::new(Instant::now, Duration::from_secs(1));
    let gate = Gate {
        policy: &policy,
        options: Options::default(),
        checker: Some(&checker),
        context: &context,
        fs: &fs,
        scope: Scope { runtime: true },
    };
    // Each kind with a thousand different numbers in it, so no answer is the same text twice
    // running; the kinds in turn, so the machine's moments fall on all alike.
    let calls: Vec<Vec<String>> = POLICY_MIX
        .iter()
        .map(|kind| {
            (0..VARIANTS)
                .map(|i| kind.replace('@', &(i * 7 + 3).to_string()))
                .collect()
        })
        .collect();
    let mut facts = NoFacts;
    let now_ms = 1_795_000_000_000;
    let mut verdicts = vec![Verdict::Pass; POLICY_MIX.len()];
    let mut times: Vec<Vec<u32>> = vec![Vec::with_capacity(PER_KIND); POLICY_MIX.len()];
    for round in 0..PER_KIND {
        for (kind, variants) in calls.iter().enumerate() {
            let input = variants[round % VARIANTS].as_bytes();
            let started = Instant::now();
            let decision = gate.decide_call(black_box(input), &mut facts, now_ms);
            let verdict = decision.verdict;
            drop(black_box(decision));
            let took = started.elapsed().as_nanos();
            times[kind].push(u32::try_from(took).unwrap_or(u32::MAX));
            verdicts[kind] = verdict;
        }
    }
    println!(
        "one policy decision in-process (read, correct, check), example policy, intent and caller given: {PER_KIND} decisions a kind, {} in all",
        PER_KIND * POLICY_MIX.len()
    );
    println!(
        "  {:<4} {:<10} {:<48} {:>8} {:>8} {:>9}",
        "kind", "verdict", "call", "p50 µs", "p99 µs", "p99.9 µs"
    );
    let mut worst_p99 = 0.0f64;
    for (kind, mut t) in times.into_iter().enumerate() {
        t.sort_unstable();
        let at = |q: f64| f64::from(t[((t.len() as f64 * q) as usize).min(t.len() - 1)]) / 1000.0;
        let shown: String = POLICY_MIX[kind].chars().take(48).collect();
        if verdicts[kind] != Verdict::Rejected {
            worst_p99 = worst_p99.max(at(0.99));
        }
        println!(
            "  {:<4} {:<10} {:<48} {:>8.2} {:>8.2} {:>9.2}",
            kind + 1,
            verdicts[kind].as_str(),
            shown,
            at(0.5),
            at(0.99),
            at(0.999)
        );
    }
    println!("  worst p99 of the kinds not refused: {worst_p99:.2} µs (budget <= 5 µs)");
    for line in PUBLISHED {
        println!("  beside: {line}");
    }
}

/// A call as a small model sends it: fenced, single quotes, an unquoted key, a Python literal,
/// a trailing comma, and prose around it.
const BROKEN: &str = "Sure, here it is:\n```json\n{'thoughts': ['list the folder'], tool_name: 'code_execution_tool', 'tool_args': {'runtime': 'bash', 'code': 'ls -la /tmp && du -sh /tmp/cache', 'session': 0, 'reset': False,},}\n```";

fn median_ns(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<u128> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos()
        })
        .collect();
    times.sort_unstable();
    times[runs / 2] as f64
}

fn bench_repair() {
    use std::hint::black_box;
    const RUNS: usize = 200_000;
    let policy = metagate_core::policy::Policy::builtin();
    let options = metagate::gate::Options::default();
    let repaired =
        metagate_wire::repair::parse(BROKEN.as_bytes()).expect("the broken call is readable");
    let clean = serde_json::to_string(&repaired.value).unwrap();
    let repair = median_ns(RUNS, || {
        black_box(metagate_wire::repair::parse(black_box(BROKEN.as_bytes())).unwrap());
    });
    let decide = median_ns(RUNS, || {
        black_box(
            metagate::gate::Gate::corrections_only(&policy, options)
                .decide_call(
                    black_box(BROKEN.as_bytes()),
                    &mut metagate_core::enforce::NoFacts,
                    0,
                )
                .verdict,
        );
    });
    let strict = median_ns(RUNS, || {
        black_box(serde_json::from_str::<serde_json::Value>(black_box(&clean)).unwrap());
    });
    println!(
        "repair of a broken {}-byte call ({} repairs; median of {RUNS})",
        BROKEN.len(),
        repaired.repairs.len()
    );
    println!(
        "  repair::parse              {:>9.2} µs   (budget <= 20 µs)",
        repair / 1000.0
    );
    println!("  gate decide, same call     {:>9.2} µs", decide / 1000.0);
    println!("  serde_json, the clean call {:>9.2} µs", strict / 1000.0);
}

fn bench_lint(dir: &Path) {
    const LINES: usize = 1_000_000;
    let file: PathBuf = dir.join("trace.jsonl");
    let bytes = generate(&file, LINES);
    println!(
        "lint: a {LINES}-call JSON Lines trace, {:.1} MB, built-in policy",
        bytes as f64 / 1e6
    );
    let serde = best(3, || serde_loop(&file));
    println!(
        "  serde_json parse+print     {:>12.0} lines/s  ({:.2} s)",
        rate(LINES, serde),
        serde.as_secs_f64()
    );
    for format in ["human", "json", "sarif", "github"] {
        // The mix has rejections: --exit-zero so a finished run is a success.
        let lint = best(3, || {
            time_command(
                Command::new(&*BIN)
                    .args(["lint", "--exit-zero", "--format", format])
                    .arg(&file)
                    .builtin_policy(dir),
                &file,
            )
        });
        println!(
            "  metagate lint --format {format:<7} {:>8.0} calls/s  ({:.2} s; budget < 10 s; {:.2}x serde_json's time)",
            rate(LINES, lint),
            lint.as_secs_f64(),
            lint.as_secs_f64() / serde.as_secs_f64()
        );
    }
}
