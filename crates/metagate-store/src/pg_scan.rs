//! `evaluate`'s reading of a PostgreSQL store: what `aggregate.rs` reads from an SQLite file,
//! from one snapshot (a REPEATABLE READ transaction), with the same results. What is only
//! counted is counted in the server: decisions by tool, method, verdict and category, and the
//! kinds of their corrections, in one grouped query each. What the tallies keep as text or
//! weigh by time (rejected calls and unknown arguments, outcomes, corrections, asks) is read
//! row by row in the order SQLite reads it, a batch at a time through a cursor (a portal), so
//! the client's memory stays flat however many rows there are.

use postgres::{IsolationLevel, Transaction};

use crate::StoreError;
use crate::aggregate::OUTCOME_COLUMNS;
use crate::pg::PgStore;
use crate::pg_text::ToPgText;
use crate::runs::HighWater;
use metagate_core::evolution::blame::{CallRef, Candidate};
use metagate_core::evolution::fold::{
    CallRow, CorrectionFields, OutcomeFields, Reading, Reask, add_candidate, add_correction,
    add_outcome, blamed_ids, learn_from_call, own_failure, own_fault, weigh_followup,
};
use metagate_core::evolution::{Aggregate, AskRow, ReaskDetector, Window};
use metagate_core::policy::Policy;
use metagate_core::policy::thresholds::Thresholds;

/// Rows fetched from a cursor at a time.
const BATCH: i32 = 10_000;

/// The temporary table [`PgReaskSink`] fills, on the connection that stores the run.
pub(crate) const PG_REASK_TABLE: &str = "pg_temp.evaluate_reasks";

/// Where the re-asks a scan detects wait until the run is stored: a temporary table of the
/// connection that stores it, as with SQLite.
pub struct PgReaskSink<'c> {
    store: &'c mut PgStore,
    /// Re-asks found.
    pub count: u64,
}

impl<'c> PgReaskSink<'c> {
    /// An empty sink on `store`'s connection.
    pub fn new(store: &'c mut PgStore) -> Result<PgReaskSink<'c>, StoreError> {
        let made = store.client().batch_execute(&format!(
            "DROP TABLE IF EXISTS {PG_REASK_TABLE}; \
             CREATE TEMP TABLE evaluate_reasks (reask_ask_id BIGINT NOT NULL, corrects_ask_id BIGINT, \
               ts_ms BIGINT NOT NULL, session TEXT, tool TEXT NOT NULL, method TEXT, note TEXT, \
               blamed_outcome_id BIGINT, blamed_decision_id BIGINT)"
        ));
        made.map_err(|e| store.err(e))?;
        Ok(PgReaskSink { store, count: 0 })
    }

    fn push(&mut self, r: &Reask<'_>) -> Result<(), postgres::Error> {
        let (outcome, decision) = blamed_ids(&r.blamed.call);
        let insert = self.store.prepared(
            "INSERT INTO pg_temp.evaluate_reasks (reask_ask_id, corrects_ask_id, ts_ms, session, tool, method, \
               note, blamed_outcome_id, blamed_decision_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )?;
        self.store.client().execute(
            &insert,
            &[
                &r.later_id,
                &r.earlier_id,
                &r.ts_ms,
                &r.session.pg_text(),
                &r.blamed.tool.pg_key(),
                &r.blamed.method.pg_key(),
                &r.note.pg_text(),
                &outcome,
                &decision,
            ],
        )?;
        self.count += 1;
        Ok(())
    }
}

/// How a scan reports its progress: rows read so far, and the estimated total.
pub(crate) struct Progress<'a> {
    pub(crate) seen: u64,
    pub(crate) total: u64,
    pub(crate) report: &'a mut dyn FnMut(u64, u64),
}

impl Progress<'_> {
    fn add(&mut self, n: u64) {
        self.seen += n;
        (self.report)(self.seen, self.total);
    }
}

impl PgStore {
    /// The largest id of each telemetry table: an upper bound of what a scan reads.
    pub(crate) fn row_estimate(&mut self) -> Result<u64, StoreError> {
        let row = self.client().query_one(
            "SELECT (SELECT coalesce(max(id), 0) FROM decisions) + (SELECT coalesce(max(id), 0) FROM outcomes) \
               + (SELECT coalesce(max(id), 0) FROM asks) + (SELECT coalesce(max(id), 0) FROM user_corrections)",
            &[],
        );
        let total: i64 = row.and_then(|r| r.try_get(0)).map_err(|e| self.err(e))?;
        Ok(total.max(0) as u64)
    }

    /// See [`crate::aggregate::scan`].
    pub(crate) fn scan(
        &mut self,
        policy: &Policy,
        window: &Window,
        t: &Thresholds,
        progress: &mut Progress<'_>,
        sink: Option<&mut PgReaskSink<'_>>,
    ) -> Result<(Aggregate, HighWater), postgres::Error> {
        let mut tx = self
            .client()
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let high_water = {
            let r = tx.query_one(
                "SELECT (SELECT coalesce(max(id), 0) FROM decisions), (SELECT coalesce(max(id), 0) FROM outcomes), \
                   (SELECT coalesce(max(id), 0) FROM user_corrections WHERE reask_ask_id IS NULL)",
                &[],
            )?;
            HighWater {
                decisions: r.try_get(0)?,
                outcomes: r.try_get(1)?,
                corrections: r.try_get(2)?,
            }
        };
        let mut agg = Aggregate::default();
        decisions(&mut tx, policy, window, &mut agg, progress)?;
        let axes = policy.axis_table();
        let read = Reading {
            window,
            t,
            axes: &axes,
        };
        let range = [&window.from_ms as _, &window.until_ms as _];
        let sql = format!(
            "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE ts_ms >= $1 AND ts_ms < $2 ORDER BY id"
        );
        for_each_row(&mut tx, &sql, &range, progress, &mut |_, r| {
            add_outcome(outcome_fields(r)?, &read, &mut agg);
            Ok(())
        })?;
        for_each_row(
            &mut tx,
            "SELECT ts_ms, tool, method, session, note FROM user_corrections \
             WHERE ts_ms >= $1 AND ts_ms < $2 AND reask_ask_id IS NULL ORDER BY id",
            &range,
            progress,
            &mut |_, r| {
                add_correction(correction_fields(r)?, &read, &mut agg);
                Ok(())
            },
        )?;
        asks(&mut tx, policy, window, t, &mut agg, sink, progress)?;
        tx.commit()?;
        agg.finish();
        Ok((agg, high_water))
    }
}

type Params<'a> = [&'a (dyn postgres::types::ToSql + Sync)];

/// A row of `SELECT OUTCOME_COLUMNS`.
pub(super) fn outcome_fields(r: &postgres::Row) -> Result<OutcomeFields<'_>, postgres::Error> {
    Ok(OutcomeFields {
        ts_ms: r.try_get(0)?,
        tool: r.try_get(1)?,
        method: r.try_get(2)?,
        status: r.try_get(3)?,
        error_type: r.try_get(4)?,
        axes: r.try_get(5)?,
        shape: r.try_get(6)?,
        split: r.try_get(7)?,
        evidence: r.try_get(8)?,
        session: r.try_get(9)?,
        message: r.try_get(10)?,
        caller: r.try_get(11)?,
    })
}

/// A row of `SELECT ts_ms, tool, method, session, note` from `user_corrections`.
pub(super) fn correction_fields(
    r: &postgres::Row,
) -> Result<CorrectionFields<'_>, postgres::Error> {
    Ok(CorrectionFields {
        ts_ms: r.try_get(0)?,
        tool: r.try_get(1)?,
        method: r.try_get(2)?,
        session: r.try_get(3)?,
        note: r.try_get(4)?,
    })
}

/// Calls `each` on every row `sql` finds, fetched `BATCH` at a time through a cursor; `each`
/// may run other statements in the transaction meanwhile.
fn for_each_row(
    tx: &mut Transaction<'_>,
    sql: &str,
    params: &Params<'_>,
    progress: &mut Progress<'_>,
    each: &mut dyn FnMut(&mut Transaction<'_>, &postgres::Row) -> Result<(), postgres::Error>,
) -> Result<(), postgres::Error> {
    let portal = tx.bind(sql, params)?;
    loop {
        let rows = tx.query_portal(&portal, BATCH)?;
        for r in &rows {
            each(tx, r)?;
        }
        progress.add(rows.len() as u64);
        if rows.len() < BATCH as usize {
            return Ok(());
        }
    }
}

fn decisions(
    tx: &mut Transaction<'_>,
    policy: &Policy,
    window: &Window,
    agg: &mut Aggregate,
    progress: &mut Progress<'_>,
) -> Result<(), postgres::Error> {
    let range = [&window.from_ms as _, &window.until_ms as _];
    // Counted in the server: one row per tool, method, verdict and category.
    let groups = tx.query(
        "SELECT tool, method, verdict, category, count(*), max(ts_ms), caller FROM decisions \
         WHERE ts_ms >= $1 AND ts_ms < $2 GROUP BY tool, method, verdict, category, caller, div(ts_ms, 3600000)",
        &range,
    )?;
    let mut counted = 0;
    for r in &groups {
        let n: i64 = r.try_get(4)?;
        let n = n.max(0) as u64;
        agg.events += n;
        counted += n;
        let Some(tool) = r.try_get::<_, Option<&str>>(0)? else {
            continue;
        };
        let tally = agg.tally(tool, r.try_get(1)?);
        tally.add_decisions(n, r.try_get(5)?, r.try_get(2)?, r.try_get(3)?);
        tally.add_caller_calls(r.try_get(6)?, r.try_get(5)?, n);
    }
    // The kinds of the corrections made, read as `aggregate.rs` reads them: each
    // `"kind":"…"` of the column's text.
    let kinds = tx.query(
        "SELECT tool, method, m[1], count(*) FROM decisions, \
           regexp_matches(corrections, '\"kind\":\"([^\"]*)\"', 'g') AS m \
         WHERE ts_ms >= $1 AND ts_ms < $2 AND verdict = 'corrected' AND tool IS NOT NULL \
         GROUP BY tool, method, m[1]",
        &range,
    )?;
    for r in &kinds {
        let n: i64 = r.try_get(3)?;
        let kind: String = r.try_get(2)?;
        *agg.tally(r.try_get(0)?, r.try_get(1)?)
            .corrections
            .entry(kind)
            .or_default() += n.max(0) as u64;
    }
    progress.add(counted);
    // The calls that can teach more than their count, in the order SQLite reads them, each
    // with the call after it (same session and tool), which SQLite looks up for the few
    // calls that need it: here a look-up in the server costs less than a round trip.
    let mut quiet = Progress {
        seen: 0,
        total: 0,
        report: &mut |_, _| {},
    };
    for_each_row(
        tx,
        "SELECT d.id, d.ts_ms, d.session, d.tool, d.method, d.verdict = 'rejected', d.args,            n.verdict, n.args          FROM decisions d LEFT JOIN LATERAL (            SELECT verdict, args FROM decisions n            WHERE d.session IS NOT NULL AND n.session = d.session AND n.tool = d.tool              AND (n.ts_ms > d.ts_ms OR (n.ts_ms = d.ts_ms AND n.id > d.id))            ORDER BY n.ts_ms, n.id LIMIT 1) n ON true          WHERE d.ts_ms >= $1 AND d.ts_ms < $2 AND d.tool IS NOT NULL            AND (d.verdict = 'rejected' OR (d.warnings <> '[]' AND d.args IS NOT NULL))          ORDER BY d.id",
        &range,
        &mut quiet,
        &mut |_, r| {
            let call = CallRow {
                id: r.try_get(0)?,
                ts_ms: r.try_get(1)?,
                session: r.try_get(2)?,
                tool: r.try_get(3)?,
                method: r.try_get(4)?,
                rejected: r.try_get(5)?,
                args: r.try_get(6)?,
            };
            let next: Option<String> = r.try_get(7)?;
            let next_args: Option<String> = r.try_get(8)?;
            learn_from_call(call, policy, agg, &mut |_, _, _, _| {
                Ok::<_, postgres::Error>(next.clone().map(|v| (v, next_args.clone())))
            })
        },
    )
}

fn asks(
    tx: &mut Transaction<'_>,
    policy: &Policy,
    window: &Window,
    t: &Thresholds,
    agg: &mut Aggregate,
    mut sink: Option<&mut PgReaskSink<'_>>,
    progress: &mut Progress<'_>,
) -> Result<(), postgres::Error> {
    let range = [&window.from_ms as _, &window.until_ms as _];
    let unsessioned: i64 = tx
        .query_one(
            "SELECT count(*) FROM asks WHERE session IS NULL AND ts_ms >= $1 AND ts_ms < $2",
            &range,
        )?
        .try_get(0)?;
    agg.events += unsessioned.max(0) as u64;
    // Rows in the order SQLite gives them: by time, then id.
    let between = tx.prepare(
        "SELECT tool, method, id, ts_ms, status, error_type FROM outcomes \
         WHERE session = $1 AND ts_ms >= $2 AND ts_ms < $3 ORDER BY ts_ms, id",
    )?;
    let between_calls = tx.prepare(
        "SELECT tool, method, id, ts_ms, 'ok', NULL::text FROM decisions \
         WHERE session = $1 AND ts_ms >= $2 AND ts_ms < $3 AND verdict <> 'rejected' AND tool IS NOT NULL \
         ORDER BY ts_ms, id",
    )?;
    let capability_of = |tool: &str| policy.tool(tool).and_then(|t| t.capability.clone());
    let mut detector = ReaskDetector::default();
    // Sessions in SQLite's order (bytewise), whatever the database's collation.
    for_each_row(
        tx,
        "SELECT ts_ms, session, text, capabilities, id FROM asks \
         WHERE session IS NOT NULL AND ts_ms >= $1 AND ts_ms < $2 \
         ORDER BY session COLLATE \"C\", ts_ms, id",
        &range,
        progress,
        &mut |tx, r| {
            agg.events += 1;
            let capabilities =
                serde_json::from_str::<Vec<String>>(r.try_get(3)?).unwrap_or_default();
            let ask = AskRow {
                id: r.try_get(4)?,
                ts_ms: r.try_get(0)?,
                session: r.try_get(1)?,
                text: r.try_get(2)?,
                capabilities,
            };
            let session = ask.session.clone();
            let Some(followup) = detector.next(ask, t) else {
                return Ok(());
            };
            let mut candidates = |calls: bool| -> Result<Vec<Candidate>, postgres::Error> {
                let (st, call): (_, fn(i64) -> CallRef) = if calls {
                    (&between_calls, CallRef::Decision)
                } else {
                    (&between, CallRef::Outcome)
                };
                let mut found: Vec<Candidate> = Vec::new();
                let at: &Params<'_> =
                    &[&session.pg_text(), &followup.earlier_ms, &followup.later_ms];
                for r in tx.query(st, at)? {
                    let Some(tool) = r.try_get::<_, Option<&str>>(0)? else {
                        continue;
                    };
                    let status: &str = r.try_get(4)?;
                    let error_type: Option<&str> = r.try_get(5)?;
                    add_candidate(
                        &mut found,
                        Candidate {
                            tool: tool.to_string(),
                            method: r.try_get(1)?,
                            call: call(r.try_get(2)?),
                            last_ms: r.try_get(3)?,
                            flagged: own_fault(status, error_type),
                            failed: own_failure(status, error_type),
                        },
                    );
                }
                Ok(found)
            };
            let mut stage = |r: &Reask<'_>| match sink.as_deref_mut() {
                Some(sink) => sink.push(r),
                None => Ok(()),
            };
            weigh_followup(
                &followup,
                &session,
                &capability_of,
                window,
                t,
                agg,
                &mut candidates,
                &mut stage,
            )
        },
    )
}
