//! `cargo bench`: metagate's throughput figures beside their baselines, in the same run.
//!
//! Sections (pass names to run a subset: `cargo bench -- gate`):
//! - `gate`: `gate --jsonl` over a generated 1,000,000-line file, beside a bare serde_json
//!   parse-and-print loop and `jq -c .` (when installed) over the same file; then with
//!   telemetry on (every decision in a fresh SQLite store, durable before its line is out).
//! - `repair`: the median time to read a broken ~200-byte call leniently (and to decide it),
//!   beside serde_json parsing the same call unbroken.
//! - `startup`: `gate` run once per call, beside `examples/bare_echo.rs` (a bare Rust binary
//!   that parses and prints one JSON document), built with the same profile.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_metagate");

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
    if run("startup") {
        bench_startup(dir.path());
    }
}

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
    let mut out = BufWriter::new(File::create(path).unwrap());
    for i in 0..lines {
        let line = MIX[i % MIX.len()].replace('@', &i.to_string());
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
            Command::new(BIN)
                .args(["gate", "--jsonl", "--quiet", "--no-telemetry"])
                .env("METAGATE_POLICY", ""),
            &file,
        )
    });
    let db = dir.join("bench.db");
    let with_telemetry = best(3, || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        time_command(
            Command::new(BIN)
                .args(["gate", "--jsonl", "--quiet", "--db"])
                .arg(&db)
                .env("METAGATE_POLICY", ""),
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
    const RUNS: u32 = 300;
    let call = dir.join("call.json");
    std::fs::write(
        &call,
        r#"{"thoughts":["Run it."],"headline":"Running","tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"ls -la"}}"#,
    )
    .unwrap();
    let bare = bare_echo();
    let per_run = |cmd: &mut dyn FnMut() -> Duration| {
        best(3, || (0..RUNS).map(|_| cmd()).sum::<Duration>() / RUNS)
    };
    let gate = per_run(&mut || {
        time_command(
            Command::new(BIN)
                .args(["gate", "--quiet"])
                .env("METAGATE_POLICY", ""),
            &call,
        )
    });
    let baseline = per_run(&mut || time_command(&mut Command::new(&bare), &call));
    let db = dir.join("startup.db");
    let recorded = per_run(&mut || {
        time_command(
            Command::new(BIN)
                .args(["gate", "--quiet", "--db"])
                .arg(&db)
                .env("METAGATE_POLICY", ""),
            &call,
        )
    });
    println!("gate, one call per process ({RUNS} runs, best of 3 means)");
    println!(
        "  metagate gate              {:>9.0} µs per call",
        gate.as_secs_f64() * 1e6
    );
    println!(
        "  bare serde_json binary     {:>9.0} µs per call",
        baseline.as_secs_f64() * 1e6
    );
    println!(
        "  ratio gate / bare          {:>12.2}   (budget <= 1.5)",
        gate.as_secs_f64() / baseline.as_secs_f64()
    );
    println!(
        "  with telemetry             {:>9.0} µs per call (a durable commit: the store opened, one row, fsync)",
        recorded.as_secs_f64() * 1e6
    );
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
    let policy = metagate::schema::Policy::builtin();
    let options = metagate::gate::Options::default();
    let repaired = metagate::repair::parse(BROKEN.as_bytes()).expect("the broken call is readable");
    let clean = serde_json::to_string(&repaired.value).unwrap();
    let repair = median_ns(RUNS, || {
        black_box(metagate::repair::parse(black_box(BROKEN.as_bytes())).unwrap());
    });
    let decide = median_ns(RUNS, || {
        black_box(metagate::gate::decide(&policy, black_box(BROKEN.as_bytes()), &options).verdict);
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
