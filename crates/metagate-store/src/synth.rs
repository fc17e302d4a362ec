//! A synthetic telemetry store for demos and benchmarks: sessions of gate decisions, outcomes,
//! asks and corrections drawn from a mix of healthy tools, boundary-crossing tools, low-utility
//! tools, same-topic re-asks and argument names models keep getting wrong. Deterministic for
//! a seed.

use rusqlite::{TransactionBehavior, params};

use crate::{Store, StoreError};

/// Relative weights of the kinds of session generated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    /// A calculator that always works.
    pub healthy: u32,
    /// A web fetcher asked to extract and render as well as fetch.
    pub boundary: u32,
    /// A summarizer whose results are shape-valid but useless.
    pub low_utility: u32,
    /// The user asks again about the same thing right after an answer.
    pub reask: u32,
    /// A model calls `memory_load` with `qry`, is rejected, then calls it with `query`.
    pub alias: u32,
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            healthy: 50,
            boundary: 15,
            low_utility: 15,
            reask: 10,
            alias: 10,
        }
    }
}

/// What the synthetic store holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// How many events to write.
    pub events: u64,
    /// The last event's time; events spread over `[end_ms - span_ms, end_ms)`.
    pub end_ms: i64,
    /// Over how long, in milliseconds.
    pub span_ms: i64,
    /// The random seed, so that a store can be made again.
    pub seed: u64,
    /// The share of each kind of event.
    pub mix: Mix,
}

/// splitmix64: small, fast and good enough to spread synthetic events.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// How many rows of each table were written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Decisions written.
    pub decisions: u64,
    /// Outcomes written.
    pub outcomes: u64,
    /// Asks written.
    pub asks: u64,
    /// Corrections written.
    pub corrections: u64,
}

impl Written {
    /// Rows written in all.
    pub fn total(&self) -> u64 {
        self.decisions + self.outcomes + self.asks + self.corrections
    }
}

/// The end of the benchmarks' week, 2026-11-20T18:00:00Z: their stores' events end here.
pub const WEEK_END_MS: i64 = 1_795_197_600_000;

impl Config {
    /// The benchmarks' store: `events` events over the seven days to [`WEEK_END_MS`], the
    /// default mix, drawn from `seed`.
    pub fn week(events: u64, seed: u64) -> Config {
        Config {
            events,
            end_ms: WEEK_END_MS,
            span_ms: 7 * 86_400_000,
            seed,
            mix: Mix::default(),
        }
    }
}

/// A new store file at `db` generated from `config`, its log folded into the file so that the
/// file alone holds the store (a benchmark reuses it, or copies it).
pub fn generate_file(db: &std::path::Path, config: &Config) -> Result<Written, StoreError> {
    let mut store = Store::open(db)?;
    let written = generate(&mut store, config, &mut |_| {})?;
    let checkpoint = store
        .conn()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    checkpoint.map_err(|e| store.err(e))?;
    Ok(written)
}

/// Rows per transaction.
const BATCH: u64 = 200_000;

/// Appends about `config.events` events (whole sessions: a few more at most) to the store.
/// `progress` is called after each transaction with the rows written so far.
pub fn generate(
    store: &mut Store,
    config: &Config,
    progress: &mut dyn FnMut(u64),
) -> Result<Written, StoreError> {
    let path = store.path().to_path_buf();
    let fail = |e| StoreError::from_sqlite(&path, e);
    // A generated store can be generated again: trade durability for speed.
    store
        .conn()
        .execute_batch("PRAGMA synchronous = OFF;")
        .map_err(fail)?;
    let mut rng = Rng(config.seed);
    let mut written = Written::default();
    let mut session_no: u64 = 0;
    let m = config.mix;
    let weights = [m.healthy, m.boundary, m.low_utility, m.reask, m.alias];
    let total_weight: u64 = weights.iter().map(|w| u64::from(*w)).sum::<u64>().max(1);
    while written.total() < config.events {
        let tx = store
            .conn()
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        {
            let mut decision = tx
                .prepare_cached(
                    "INSERT INTO decisions (ts_ms, session, tool, method, shape, verdict, category, corrections, warnings, args) \
                     VALUES (?1, ?2, ?3, ?4, 'plain', ?5, ?6, ?7, ?8, ?9)",
                )
                .map_err(fail)?;
            let mut outcome = tx
                .prepare_cached(
                    "INSERT INTO outcomes (ts_ms, session, tool, method, status, error_type, boundary_axes, boundary_axes_raw, observed_task_shape, suggested_split, evidence) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9, ?10)",
                )
                .map_err(fail)?;
            let mut ask = tx
                .prepare_cached(
                    "INSERT INTO asks (ts_ms, session, user, text, capabilities) VALUES (?1, ?2, 'u1', ?3, ?4)",
                )
                .map_err(fail)?;
            let mut correction = tx
                .prepare_cached(
                    "INSERT INTO user_corrections (ts_ms, session, tool, method, note) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(fail)?;
            let batch_end = (written.total() + BATCH).min(config.events);
            while written.total() < batch_end {
                session_no += 1;
                let session = format!("s{session_no}");
                let mut ts = config.end_ms - 1 - rng.below(config.span_ms.max(1) as u64) as i64;
                let mut step = |rng: &mut Rng| {
                    ts = (ts + 1_000 + rng.below(30_000) as i64).min(config.end_ms - 1);
                    ts
                };
                let mut pick = rng.below(total_weight);
                let mut kind = 0;
                while pick >= u64::from(weights[kind]) {
                    pick -= u64::from(weights[kind]);
                    kind += 1;
                }
                let ok = |d: &mut rusqlite::CachedStatement<'_>,
                          ts: i64,
                          tool: &str,
                          method: Option<&str>,
                          args: &str| {
                    d.execute(params![
                        ts,
                        session,
                        tool,
                        method,
                        "pass",
                        None::<&str>,
                        "[]",
                        "[]",
                        args
                    ])
                };
                match kind {
                    0 => {
                        let t = step(&mut rng);
                        ask.execute(params![t, session, "what is 17 * 23", r#"["compute"]"#])
                            .map_err(fail)?;
                        let t = step(&mut rng);
                        ok(
                            &mut decision,
                            t,
                            "calculator",
                            None,
                            r#"{"expression":"17*23"}"#,
                        )
                        .map_err(fail)?;
                        outcome
                            .execute(params![
                                t + 5,
                                session,
                                "calculator",
                                None::<&str>,
                                "ok",
                                None::<&str>,
                                "[]",
                                None::<&str>,
                                None::<&str>,
                                None::<&str>
                            ])
                            .map_err(fail)?;
                        written.asks += 1;
                        written.decisions += 1;
                        written.outcomes += 1;
                    }
                    1 => {
                        let t = step(&mut rng);
                        ask.execute(params![
                            t,
                            session,
                            "list this week's top movies",
                            r#"["http_fetch","html_extract"]"#
                        ])
                        .map_err(fail)?;
                        let t = step(&mut rng);
                        ok(
                            &mut decision,
                            t,
                            "web_fetcher",
                            Some("fetch_url"),
                            r#"{"url":"https://example.com/movies"}"#,
                        )
                        .map_err(fail)?;
                        let axes = if rng.below(2) == 0 {
                            r#"["transport","extraction"]"#
                        } else {
                            r#"["transport","rendering"]"#
                        };
                        let evidence = (rng.below(3) > 0).then_some(
                            "transport succeeded but extracted output remained low utility",
                        );
                        outcome
                            .execute(params![
                                t + 5,
                                session,
                                "web_fetcher",
                                "fetch_url",
                                "error",
                                "wrong_tool_boundary",
                                axes,
                                "fetch + extract movie titles",
                                "separate HTTP transport from extraction",
                                evidence
                            ])
                            .map_err(fail)?;
                        written.asks += 1;
                        written.decisions += 1;
                        written.outcomes += 1;
                    }
                    2 => {
                        let t = step(&mut rng);
                        ok(
                            &mut decision,
                            t,
                            "summarizer",
                            Some("summarize"),
                            r#"{"text":"…"}"#,
                        )
                        .map_err(fail)?;
                        let low = rng.below(3) > 0;
                        outcome
                            .execute(params![
                                t + 5,
                                session,
                                "summarizer",
                                "summarize",
                                if low { "error" } else { "ok" },
                                low.then_some("low_utility"),
                                "[]",
                                None::<&str>,
                                None::<&str>,
                                low.then_some("summary repeats the title")
                            ])
                            .map_err(fail)?;
                        written.decisions += 1;
                        written.outcomes += 1;
                        if low && rng.below(4) == 0 {
                            correction
                                .execute(params![
                                    t + 20_000,
                                    session,
                                    "summarizer",
                                    "summarize",
                                    "user said the summary is empty"
                                ])
                                .map_err(fail)?;
                            written.corrections += 1;
                        }
                    }
                    3 => {
                        let t0 = step(&mut rng);
                        ask.execute(params![
                            t0,
                            session,
                            "top news headlines today",
                            r#"["http_fetch","html_extract"]"#
                        ])
                        .map_err(fail)?;
                        let t = step(&mut rng);
                        ok(
                            &mut decision,
                            t,
                            "web_fetcher",
                            Some("fetch"),
                            r#"{"url":"https://news.example.com"}"#,
                        )
                        .map_err(fail)?;
                        outcome
                            .execute(params![
                                t + 5,
                                session,
                                "web_fetcher",
                                "fetch",
                                "ok",
                                None::<&str>,
                                "[]",
                                None::<&str>,
                                None::<&str>,
                                None::<&str>
                            ])
                            .map_err(fail)?;
                        let t = step(&mut rng);
                        ask.execute(params![
                            t,
                            session,
                            "this is wrong, those are menu items; try again",
                            r#"["http_fetch","html_extract"]"#
                        ])
                        .map_err(fail)?;
                        written.asks += 2;
                        written.decisions += 1;
                        written.outcomes += 1;
                    }
                    _ => {
                        let t = step(&mut rng);
                        decision
                            .execute(params![t, session, "memory_load", None::<&str>, "rejected", "invalid_parameters", "[]", r#"["unknown argument \"qry\" kept (memory_load declares: query, threshold, limit, filter)"]"#, r#"{"qry":"user preferences","limit":5}"#])
                            .map_err(fail)?;
                        let t = step(&mut rng);
                        ok(
                            &mut decision,
                            t,
                            "memory_load",
                            None,
                            r#"{"query":"user preferences","limit":5}"#,
                        )
                        .map_err(fail)?;
                        written.decisions += 2;
                    }
                }
            }
        }
        tx.commit().map_err(fail)?;
        progress(written.total());
    }
    Ok(written)
}
