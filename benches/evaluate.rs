//! `cargo bench --bench evaluate`: `metagate evaluate` and `metagate tools health` on a
//! generated store of 10,000,000 events (`METAGATE_BENCH_EVENTS` for another size), beside
//! baselines measured in the same run:
//! - evaluate: wall time and peak RSS (`/usr/bin/time -v`), beside a bare in-process read of
//!   every row of the four telemetry tables (the floor any pass over the store pays);
//! - tools health: wall time (best of 7), beside `metagate --version` (process start-up).
//!
//! The store is generated once into `target/bench-evaluate-N.db` and reused.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use metagate_store::synth::{self, Config};

const BIN: &str = env!("CARGO_BIN_EXE_metagate");
/// The end of the generated week (`synth::WEEK_END_MS`): the runs take it as now.
const NOW: &str = "2026-11-20T18:00:00Z";

fn main() {
    let events: u64 = std::env::var("METAGATE_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(10_000_000);
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let db = target.join(format!("bench-evaluate-{events}.db"));
    if !db.exists() || rows(&db) < events {
        let _ = std::fs::remove_file(&db);
        let started = Instant::now();
        let written = synth::generate_file(&db, &Config::week(events, 7)).expect("generate");
        println!(
            "generated {} events in {:.1} s ({} decisions, {} outcomes, {} asks, {} corrections)",
            written.total(),
            started.elapsed().as_secs_f64(),
            written.decisions,
            written.outcomes,
            written.asks,
            written.corrections
        );
    }
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!(
        "store: {} ({} rows, {:.0} MiB)",
        db.display(),
        rows(&db),
        size as f64 / 1048576.0
    );

    let floor = bare_read(&db);
    let db_arg = db.to_str().unwrap();
    let evaluate = |dry_run: bool| {
        let mut args = vec![
            "--db", db_arg, "--now", NOW, "evaluate", "--since", "7d", "--format", "json",
        ];
        if dry_run {
            args.push("--dry-run");
        }
        timed(&args)
    };
    let (wall, rss, out) = evaluate(true);
    let report: serde_json::Value = serde_json::from_slice(&out).expect("evaluate JSON");
    println!(
        "evaluate --dry-run, {} events in the window: {:.2} s, peak RSS {:.0} MiB (budget 60 s, 256 MiB); bare read of every row: {:.2} s; ratio {:.2}×",
        report["events"],
        wall.as_secs_f64(),
        rss as f64 / 1024.0,
        floor.as_secs_f64(),
        wall.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "  {} tools, {} recommendations, {} proposed aliases",
        report["tools"].as_object().map_or(0, |t| t.len()),
        report["recommendations"].as_array().map_or(0, |r| r.len()),
        report["proposed_aliases"].as_array().map_or(0, |r| r.len())
    );
    let (wall, rss, _) = evaluate(false);
    println!(
        "evaluate (stored): {:.2} s, peak RSS {:.0} MiB",
        wall.as_secs_f64(),
        rss as f64 / 1024.0
    );

    let version = best(7, || run(&["--version"]));
    for format in ["json", "known-tools", "table"] {
        let health = best(7, || {
            run(&[
                "--db",
                db.to_str().unwrap(),
                "--now",
                NOW,
                "tools",
                "health",
                "--format",
                format,
            ])
        });
        println!(
            "tools health --format {format}: {:.1} ms (budget 200 ms); metagate --version: {:.1} ms; ratio {:.2}×",
            ms(health),
            ms(version),
            ms(health) / ms(version)
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn rows(db: &Path) -> u64 {
    let Ok(conn) = rusqlite::Connection::open(db) else {
        return 0;
    };
    ["decisions", "outcomes", "asks", "user_corrections"]
        .iter()
        .map(|t| {
            conn.query_row(
                &format!("SELECT coalesce(max(rowid), 0) FROM {t}"),
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_or(0) as u64
        })
        .sum()
}

/// Reads every column of every row once, in row order: the floor of a pass over the store.
fn bare_read(db: &Path) -> Duration {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let started = Instant::now();
    let mut bytes = 0usize;
    for table in ["decisions", "outcomes", "asks", "user_corrections"] {
        let mut st = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
        let n = st.column_count();
        let mut q = st.query([]).unwrap();
        while let Some(r) = q.next().unwrap() {
            for i in 0..n {
                bytes += match r.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Text(t) => t.len(),
                    _ => 1,
                };
            }
        }
    }
    std::hint::black_box(bytes);
    started.elapsed()
}

/// Runs metagate under `/usr/bin/time -v`: wall time, peak RSS in KiB, stdout.
fn timed(args: &[&str]) -> (Duration, u64, Vec<u8>) {
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(BIN)
        .args(args)
        .output()
        .expect("/usr/bin/time");
    let wall = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rss = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    (wall, rss, out.stdout)
}

fn run(args: &[&str]) -> Duration {
    let started = Instant::now();
    let out = Command::new(BIN).args(args).output().expect("metagate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed()
}

fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap()
}
