//! `cargo bench --bench copy`: `db copy --merge`, a host's history joining a fleet store that
//! holds its own, on PostgreSQL (the local durable server of `tests/support/postgres.rs`) and on
//! an SQLite file, beside the plain copy of the same rows into an empty store in the same run
//! (the floor: the same rows read and written, none renumbered). Then the same merge again,
//! which must add nothing.
//!
//! Two synthetic stores of `METAGATE_BENCH_EVENTS` events each (1,000,000 by default), seeds 7
//! (the host) and 8 (the fleet's own), are generated once into `target/bench-copy-SEED-N.db`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use metagate_store::synth::{self, Config};
use serde_json::Value;

#[path = "../tests/support/postgres.rs"]
mod postgres_server;
#[path = "../tests/support/skips.rs"]
mod skips;

const BIN: &str = env!("CARGO_BIN_EXE_metagate");

fn main() {
    let events: u64 = std::env::var("METAGATE_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(1_000_000);
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let host = synthetic(&target, events, 7);
    let fleet_own = synthetic(&target, events, 8);
    let dir = tempfile::tempdir().expect("temp dir");
    let host = host.display().to_string();

    // PostgreSQL: the fleet store gets its own history first, by a plain copy.
    let server = postgres_server::durable_server();
    let fleet = server.fresh_database();
    copy(&fleet_own.display().to_string(), &fleet, false);
    let empty = server.fresh_database();
    let (plain, _) = copy(&host, &empty, false);
    let (merged, report) = copy(&host, &fleet, true);
    let (again, second) = copy(&host, &fleet, true);
    assert_eq!(added(&second), 0, "a second merge added rows: {second}");
    print("PostgreSQL", added(&report), plain, merged, again);

    // SQLite: the fleet store is a copy of the fleet's own file.
    let file = dir.path().join("fleet.db");
    std::fs::copy(&fleet_own, &file).expect("copy the fleet's store");
    let fleet = file.display().to_string();
    let empty = dir.path().join("empty.db").display().to_string();
    let (plain, _) = copy(&host, &empty, false);
    let (merged, report) = copy(&host, &fleet, true);
    let (again, second) = copy(&host, &fleet, true);
    assert_eq!(added(&second), 0, "a second merge added rows: {second}");
    print("SQLite", added(&report), plain, merged, again);
}

/// The synthetic store of `events` events made with `seed`, generated when missing.
fn synthetic(target: &Path, events: u64, seed: u64) -> PathBuf {
    let db = target.join(format!("bench-copy-{seed}-{events}.db"));
    if db.exists() {
        return db;
    }
    let partial = target.join(format!("bench-copy-{seed}-{events}.db.partial"));
    let _ = std::fs::remove_file(&partial);
    let started = Instant::now();
    synth::generate_file(&partial, &Config::week(events, seed)).expect("generate");
    std::fs::rename(&partial, &db).expect("rename the generated store");
    println!(
        "generated {} ({events} events) in {:.1} s",
        db.display(),
        started.elapsed().as_secs_f64()
    );
    db
}

/// `db copy [--merge] FROM TO --format json`: (seconds, report).
fn copy(from: &str, to: &str, merge: bool) -> (f64, Value) {
    let started = Instant::now();
    let mut command = Command::new(BIN);
    command.args(["db", "copy", from, to, "--format", "json"]);
    if merge {
        command.arg("--merge");
    }
    let out = command.output().expect("db copy");
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (seconds, serde_json::from_slice(&out.stdout).expect("JSON"))
}

/// How many rows a copy added, over every table.
fn added(report: &Value) -> u64 {
    report["tables"]
        .as_object()
        .expect("tables")
        .values()
        .map(|t| t["added"].as_u64().unwrap_or(0))
        .sum()
}

fn print(store: &str, rows: u64, plain: f64, merged: f64, again: f64) {
    println!("{store}: a host's {rows} rows");
    println!(
        "  merged into a fleet store holding its own  {merged:>7.2} s  {:>9.0} rows/s",
        rows as f64 / merged
    );
    println!(
        "  plain copy into an empty store (floor)     {plain:>7.2} s  {:>9.0} rows/s  ratio {:.2}",
        rows as f64 / plain,
        merged / plain
    );
    println!("  the same merge again (adds nothing)        {again:>7.2} s");
}
