//! Generates a synthetic telemetry store for demos and benchmarks.
//!
//! ```sh
//! cargo run --release --example synth_store -- /tmp/demo.db 100000
//! cargo run --release --example synth_store -- /tmp/demo.db 100000 --end 2026-11-20T18:00:00Z --days 7 --seed 7 --mix 50,15,15,10,10
//! metagate --db /tmp/demo.db evaluate
//! ```
//!
//! `--mix` weighs the kinds of session: healthy, boundary-crossing, low-utility, re-ask,
//! wrong argument name (defaults 50,15,15,10,10). Events are appended to the store.

use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use metagate_store::Store;
use metagate_store::synth::{self, Config, Mix};

fn main() {
    if let Err(e) = run() {
        eprintln!("synth_store: error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_millis() as i64;
    let mut config = Config {
        events: 1_000_000,
        end_ms: now,
        span_ms: 7 * 86_400_000,
        seed: 1,
        mix: Mix::default(),
    };
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--end" => {
                config.end_ms = metagate_core::events::parse_time(&value("--end")?)
                    .map_err(|e| e.to_string())?
            }
            "--days" => {
                let days: i64 = value("--days")?
                    .parse()
                    .map_err(|e| format!("--days: {e}"))?;
                config.span_ms = days * 86_400_000;
            }
            "--seed" => {
                config.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--mix" => {
                let w: Vec<u32> = value("--mix")?
                    .split(',')
                    .map(|n| n.trim().parse().map_err(|e| format!("--mix: {e}")))
                    .collect::<Result<_, _>>()?;
                let [healthy, boundary, low_utility, reask, alias] = w[..] else {
                    return Err(
                        "--mix takes five weights: healthy,boundary,low_utility,reask,alias".into(),
                    );
                };
                config.mix = Mix {
                    healthy,
                    boundary,
                    low_utility,
                    reask,
                    alias,
                };
            }
            "-h" | "--help" => {
                println!(
                    "synth_store FILE [EVENTS] [--end TIME] [--days N] [--seed N] [--mix H,B,L,R,A]"
                );
                return Ok(());
            }
            _ => positional.push(a),
        }
    }
    let path = PathBuf::from(
        positional
            .first()
            .ok_or("synth_store FILE [EVENTS]: name a store file")?,
    );
    if let Some(n) = positional.get(1) {
        config.events = n
            .replace('_', "")
            .parse()
            .map_err(|e| format!("EVENTS: {e}"))?;
    }
    let mut store = Store::open(&path).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let written = synth::generate(&mut store, &config, &mut |n| {
        eprint!("\rsynth_store: {n} events");
    })
    .map_err(|e| e.to_string())?;
    eprintln!(
        "\rsynth_store: wrote {} events ({} decisions, {} outcomes, {} asks, {} corrections) to {} in {:.1} s",
        written.total(),
        written.decisions,
        written.outcomes,
        written.asks,
        written.corrections,
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
