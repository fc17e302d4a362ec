//! Streaming the telemetry of one store into an [`Aggregate`]: each table is read once, in
//! row order, with memory bounded by the number of tools and methods (plus the alias pairs
//! seen), never by the number of events.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::StoreError;
use crate::runs::{self as results, HighWater};
use metagate_core::evolution::blame::{CallRef, Candidate};
use metagate_core::evolution::fold::{
    CallRow, CorrectionFields, OutcomeFields, Reading, Reask, add_candidate, add_correction,
    add_outcome, blamed_ids, learn_from_call, own_failure, own_fault, weigh_followup,
};
use metagate_core::evolution::{Aggregate, AskRow, ReaskDetector, Window};
use metagate_core::policy::Policy;
use metagate_core::policy::thresholds::Thresholds;

/// How many rows pass between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Opens a store to read it: read-only, never created, never migrated, so evaluating someone
/// else's shard (or a `--dry-run`) leaves its bytes alone. `None` for a file that holds no
/// telemetry yet (an empty file or database); another program's database is an error. A
/// writer holding the store is waited for up to `busy_timeout`.
pub fn open_read_only(
    path: &Path,
    busy_timeout: std::time::Duration,
) -> Result<Option<Connection>, StoreError> {
    crate::existing_file(path)?;
    let fail = |e| StoreError::from_sqlite(path, e);
    let conn = crate::open_read_only(path, busy_timeout)?;
    if crate::schema_version(&conn, path)? == 0 {
        return Ok(None);
    }
    conn.execute_batch("PRAGMA cache_size = -16384; PRAGMA temp_store = FILE;")
        .map_err(fail)?;
    Ok(Some(conn))
}

/// Rows read so far and an estimate of the total, for a progress bar.
type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// The largest row id of each telemetry table: an upper bound of what a scan reads.
pub fn row_estimate(conn: &Connection) -> rusqlite::Result<u64> {
    let mut total = 0u64;
    for table in ["decisions", "outcomes", "asks", "user_corrections"] {
        let n: Option<i64> =
            conn.query_row(&format!("SELECT max(rowid) FROM {table}"), [], |r| r.get(0))?;
        total += n.unwrap_or(0).max(0) as u64;
    }
    Ok(total)
}

/// Reads one store's telemetry in the window, every table from one snapshot, and the row ids
/// that snapshot ends at: events recorded while the scan runs are after them, so `tools
/// health` counts them live rather than losing them between the scan and the stored run.
#[allow(clippy::too_many_arguments)]
pub fn scan(
    conn: &Connection,
    policy: &Policy,
    window: &Window,
    t: &Thresholds,
    done_before: u64,
    total: u64,
    progress: Progress<'_>,
    reasks: Option<&mut ReaskSink<'_>>,
) -> rusqlite::Result<(Aggregate, HighWater)> {
    let mut reasks = reasks;
    let snapshot = conn.unchecked_transaction()?;
    let conn: &Connection = &snapshot;
    let high_water = results::high_water(conn)?;
    let mut agg = Aggregate::default();
    let mut seen = done_before;
    let mut tick = |seen: &mut u64| {
        *seen += 1;
        if (*seen).is_multiple_of(PROGRESS_EVERY) {
            progress(*seen, total);
        }
    };
    decisions(conn, policy, window, &mut agg, &mut || tick(&mut seen))?;
    // `+ts_ms`: a window is most of the table, which a scan in row order reads fastest.
    let range: [&dyn rusqlite::ToSql; 2] = [&window.from_ms, &window.until_ms];
    let outcomes = Rows::table("outcomes WHERE +ts_ms >= ?1 AND +ts_ms < ?2");
    let axes = policy.axis_table();
    let read = Reading {
        window,
        t,
        axes: &axes,
    };
    add_outcomes(conn, outcomes, &range, &read, &mut agg, &mut || {
        tick(&mut seen)
    })?;
    // A store of an older metagate (read, never migrated) keeps no re-asks there.
    let explicit = if results::has_column(conn, "user_corrections", "reask_ask_id")? {
        " AND reask_ask_id IS NULL"
    } else {
        ""
    };
    let from = format!("user_corrections WHERE +ts_ms >= ?1 AND +ts_ms < ?2{explicit}");
    let corrections = Rows::table(&from);
    add_corrections(conn, corrections, &range, &read, &mut agg, &mut || {
        tick(&mut seen)
    })?;
    asks(conn, policy, window, t, &mut agg, &mut reasks, &mut || {
        tick(&mut seen)
    })?;
    progress(seen, total);
    snapshot.finish()?;
    agg.finish();
    Ok((agg, high_water))
}

fn decisions(
    conn: &Connection,
    policy: &Policy,
    window: &Window,
    agg: &mut Aggregate,
    tick: &mut dyn FnMut(),
) -> rusqlite::Result<()> {
    // Arguments are only read for the calls that can teach something: rejected ones, and
    // ones with warnings (an unknown argument kept).
    let mut rows = conn.prepare(
        "SELECT id, ts_ms, session, tool, method, verdict, category, \
           CASE WHEN verdict = 'corrected' THEN corrections END, \
           CASE WHEN verdict = 'rejected' OR warnings <> '[]' THEN args END, caller \
         FROM decisions WHERE ts_ms >= ?1 AND ts_ms < ?2",
    )?;
    let mut next_call = conn.prepare(
        "SELECT verdict, args FROM decisions \
         WHERE session = ?1 AND tool = ?2 AND (ts_ms > ?3 OR (ts_ms = ?3 AND id > ?4)) \
         ORDER BY ts_ms, id LIMIT 1",
    )?;
    let mut rows = rows.query(params![window.from_ms, window.until_ms])?;
    while let Some(r) = rows.next()? {
        tick();
        agg.events += 1;
        let Some(tool) = r.get_ref(3)?.as_str_or_null()? else {
            continue;
        };
        let ts_ms: i64 = r.get(1)?;
        let method = r.get_ref(4)?.as_str_or_null()?;
        let verdict = r.get_ref(5)?.as_str()?;
        let category = r.get_ref(6)?.as_str_or_null()?;
        let rejected = verdict == "rejected";
        let tally = agg.tally(tool, method);
        tally.add_decisions(1, ts_ms, verdict, category);
        tally.add_caller_calls(r.get_ref(9)?.as_str_or_null()?, ts_ms, 1);
        if let Some(corrections) = r.get_ref(7)?.as_str_or_null()? {
            for kind in correction_kinds(corrections) {
                match tally.corrections.get_mut(kind) {
                    Some(n) => *n += 1,
                    None => {
                        tally.corrections.insert(kind.to_string(), 1);
                    }
                }
            }
        }
        let args = r.get_ref(8)?.as_str_or_null()?;
        if !rejected && args.is_none() {
            continue;
        }
        let call = CallRow {
            id: r.get(0)?,
            ts_ms,
            session: r.get_ref(2)?.as_str_or_null()?,
            tool,
            method,
            rejected,
            args,
        };
        learn_from_call(call, policy, agg, &mut |session, tool, ts_ms, id| {
            next_call
                .query_row(params![session, tool, ts_ms, id], |n| {
                    Ok((n.get::<_, String>(0)?, n.get::<_, Option<String>>(1)?))
                })
                .optional()
        })?;
    }
    Ok(())
}

/// The `kind`s of a `corrections` column, without parsing the rest.
fn correction_kinds(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("\"kind\":\"").filter_map(move |(i, m)| {
        let rest = &text[i + m.len()..];
        rest.find('"').map(|end| &rest[..end])
    })
}

/// The columns [`add_outcomes`] reads, in order: the message only of errors.
pub(super) const OUTCOME_COLUMNS: &str = "ts_ms, tool, method, status, error_type, \
    CASE WHEN error_type = 'wrong_tool_boundary' THEN boundary_axes END, \
    observed_task_shape, suggested_split, evidence, \
    session, CASE WHEN status = 'error' THEN error_message END, caller";

/// [`OUTCOME_COLUMNS`] of a store from before outcomes knew their caller.
const OUTCOME_COLUMNS_UNCALLED: &str = "ts_ms, tool, method, status, error_type, \
    CASE WHEN error_type = 'wrong_tool_boundary' THEN boundary_axes END, \
    observed_task_shape, suggested_split, evidence, \
    session, CASE WHEN status = 'error' THEN error_message END, NULL";

/// Which rows of a table to read: `[WITH …] SELECT columns FROM {from}`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rows<'a> {
    /// A `WITH` clause the query opens with, or `""`.
    pub(crate) with: &'a str,
    /// The table (and whatever it is joined to) and the `WHERE` clause.
    pub(crate) from: &'a str,
}

impl<'a> Rows<'a> {
    pub(super) fn table(from: &'a str) -> Rows<'a> {
        Rows { with: "", from }
    }
}

/// Adds the outcomes `SELECT OUTCOME_COLUMNS FROM rows` finds.
pub(super) fn add_outcomes(
    conn: &Connection,
    rows: Rows<'_>,
    args: &[&dyn rusqlite::ToSql],
    read: &Reading<'_>,
    agg: &mut Aggregate,
    tick: &mut dyn FnMut(),
) -> rusqlite::Result<()> {
    let columns = if results::has_column(conn, "outcomes", "caller")? {
        OUTCOME_COLUMNS
    } else {
        OUTCOME_COLUMNS_UNCALLED
    };
    let mut rows = conn.prepare(&format!("{}SELECT {columns} FROM {}", rows.with, rows.from))?;
    let mut rows = rows.query(args)?;
    while let Some(r) = rows.next()? {
        tick();
        let row = OutcomeFields {
            ts_ms: r.get(0)?,
            tool: r.get_ref(1)?.as_str()?,
            method: r.get_ref(2)?.as_str_or_null()?,
            status: r.get_ref(3)?.as_str()?,
            error_type: r.get_ref(4)?.as_str_or_null()?,
            axes: r.get_ref(5)?.as_str_or_null()?,
            shape: r.get_ref(6)?.as_str_or_null()?,
            split: r.get_ref(7)?.as_str_or_null()?,
            evidence: r.get_ref(8)?.as_str_or_null()?,
            session: r.get_ref(9)?.as_str_or_null()?,
            message: r.get_ref(10)?.as_str_or_null()?,
            caller: r.get_ref(11)?.as_str_or_null()?,
        };
        add_outcome(row, read, agg);
    }
    Ok(())
}

/// Adds the explicit user corrections `SELECT ts_ms, tool, method, session, note FROM rows`
/// finds.
pub(super) fn add_corrections(
    conn: &Connection,
    rows: Rows<'_>,
    args: &[&dyn rusqlite::ToSql],
    read: &Reading<'_>,
    agg: &mut Aggregate,
    tick: &mut dyn FnMut(),
) -> rusqlite::Result<()> {
    let mut rows = conn.prepare(&format!(
        "{}SELECT ts_ms, tool, method, session, note FROM {}",
        rows.with, rows.from
    ))?;
    let mut rows = rows.query(args)?;
    while let Some(r) = rows.next()? {
        tick();
        let row = CorrectionFields {
            ts_ms: r.get(0)?,
            tool: r.get_ref(1)?.as_str()?,
            method: r.get_ref(2)?.as_str_or_null()?,
            session: r.get_ref(3)?.as_str_or_null()?,
            note: r.get_ref(4)?.as_str_or_null()?,
        };
        add_correction(row, read, agg);
    }
    Ok(())
}

/// Where the re-asks a scan detects wait until the run is stored: a temporary table of the
/// connection that stores it (nothing is written to the store before then, and memory stays
/// flat however many there are).
pub struct ReaskSink<'c> {
    insert: rusqlite::Statement<'c>,
    /// Re-asks found.
    pub count: u64,
}

/// The temporary table [`ReaskSink`] fills, on the connection that stores the run.
pub(crate) const REASK_TABLE: &str = "temp.evaluate_reasks";

impl<'c> ReaskSink<'c> {
    /// An empty sink on `conn` (a stage left from an earlier run on it is emptied).
    pub fn new(conn: &'c Connection) -> rusqlite::Result<ReaskSink<'c>> {
        conn.execute_batch(&format!(
            "PRAGMA temp_store = FILE; PRAGMA temp.cache_size = -2048; \
             DROP TABLE IF EXISTS {REASK_TABLE}; \
             CREATE TABLE {REASK_TABLE} (reask_ask_id INTEGER NOT NULL, corrects_ask_id INTEGER, \
               ts_ms INTEGER NOT NULL, session TEXT, tool TEXT NOT NULL, method TEXT, note TEXT, \
               blamed_outcome_id INTEGER, blamed_decision_id INTEGER);"
        ))?;
        let insert = conn.prepare(&format!(
            "INSERT INTO {REASK_TABLE} (reask_ask_id, corrects_ask_id, ts_ms, session, tool, method, note, \
               blamed_outcome_id, blamed_decision_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        ))?;
        Ok(ReaskSink { insert, count: 0 })
    }

    fn push(&mut self, r: &Reask<'_>) -> rusqlite::Result<()> {
        let (outcome, decision) = blamed_ids(&r.blamed.call);
        self.insert.execute(params![
            r.later_id,
            r.earlier_id,
            r.ts_ms,
            r.session,
            r.blamed.tool,
            r.blamed.method,
            r.note,
            outcome,
            decision
        ])?;
        self.count += 1;
        Ok(())
    }
}

fn asks(
    conn: &Connection,
    policy: &Policy,
    window: &Window,
    t: &Thresholds,
    agg: &mut Aggregate,
    sink: &mut Option<&mut ReaskSink<'_>>,
    tick: &mut dyn FnMut(),
) -> rusqlite::Result<()> {
    let unsessioned: i64 = conn.query_row(
        "SELECT count(*) FROM asks WHERE session IS NULL AND +ts_ms >= ?1 AND +ts_ms < ?2",
        params![window.from_ms, window.until_ms],
        |r| r.get(0),
    )?;
    agg.events += unsessioned.max(0) as u64;
    let mut rows = conn.prepare(
        "SELECT ts_ms, session, text, capabilities, id FROM asks INDEXED BY asks_by_session \
         WHERE session IS NOT NULL AND ts_ms >= ?1 AND ts_ms < ?2 ORDER BY session, ts_ms, id",
    )?;
    // The tools that answered between two asks of a session: outcomes, else calls the gate let
    // through. Rows are few per pair of asks; grouping them here spares SQLite a sorter per
    // query.
    let mut between = conn.prepare(
        "SELECT tool, method, id, ts_ms, status, error_type FROM outcomes \
         WHERE session = ?1 AND ts_ms >= ?2 AND ts_ms < ?3",
    )?;
    let mut between_calls = conn.prepare(
        "SELECT tool, method, id, ts_ms, 'ok', NULL FROM decisions \
         WHERE session = ?1 AND ts_ms >= ?2 AND ts_ms < ?3 AND verdict <> 'rejected' AND tool IS NOT NULL",
    )?;
    let capability_of = |tool: &str| policy.tool(tool).and_then(|t| t.capability.clone());
    let mut detector = ReaskDetector::default();
    let mut rows = rows.query(params![window.from_ms, window.until_ms])?;
    while let Some(r) = rows.next()? {
        tick();
        agg.events += 1;
        let capabilities =
            serde_json::from_str::<Vec<String>>(r.get_ref(3)?.as_str()?).unwrap_or_default();
        let ask = AskRow {
            id: r.get(4)?,
            ts_ms: r.get(0)?,
            session: r.get(1)?,
            text: r.get(2)?,
            capabilities,
        };
        let session = ask.session.clone();
        let Some(followup) = detector.next(ask, t) else {
            continue;
        };
        let mut candidates = |calls: bool| -> rusqlite::Result<Vec<Candidate>> {
            let (st, call): (_, fn(i64) -> CallRef) = if calls {
                (&mut between_calls, CallRef::Decision)
            } else {
                (&mut between, CallRef::Outcome)
            };
            let mut found: Vec<Candidate> = Vec::new();
            let mut rows = st.query(params![session, followup.earlier_ms, followup.later_ms])?;
            while let Some(r) = rows.next()? {
                let Some(tool) = r.get_ref(0)?.as_str_or_null()? else {
                    continue;
                };
                let status = r.get_ref(4)?.as_str()?;
                let error_type = r.get_ref(5)?.as_str_or_null()?;
                add_candidate(
                    &mut found,
                    Candidate {
                        tool: tool.to_string(),
                        method: r.get_ref(1)?.as_str_or_null()?.map(str::to_string),
                        call: call(r.get(2)?),
                        last_ms: r.get(3)?,
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
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use metagate_core::policy::thresholds::Thresholds;

    const H: i64 = 3_600_000;

    fn t() -> Thresholds {
        Thresholds::default()
    }

    fn window() -> Window {
        Window::new(0, 48 * H, 48 * H, &t())
    }

    /// What is recorded while a scan runs is after the high-water marks the scan returns, and out
    /// of what it read: `tools health` then counts it live instead of losing it (the marks were
    /// once read after the scan, past rows the scan never saw).
    #[test]
    fn a_scan_reads_one_snapshot_and_says_where_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = Store::open(&path).unwrap();
        let insert = |tool: &str| {
            writer
                .conn_ref()
                .execute(
                    "INSERT INTO outcomes (ts_ms, tool, status) VALUES (?1, ?2, 'ok')",
                    rusqlite::params![H, tool],
                )
                .unwrap();
        };
        insert("before");
        let reader = open_read_only(&path, crate::BUSY_TIMEOUT).unwrap().unwrap();
        let policy = metagate_core::policy::Policy::builtin();
        let (agg, hw) = scan(
            &reader,
            &policy,
            &window(),
            &t(),
            0,
            0,
            &mut |_, _| insert("during"),
            None,
        )
        .unwrap();
        assert_eq!(hw.outcomes, 1);
        assert!(agg.tallies.contains_key("before"));
        assert!(!agg.tallies.contains_key("during"));
        let (agg, hw) = scan(
            &reader,
            &policy,
            &window(),
            &t(),
            0,
            0,
            &mut |_, _| {},
            None,
        )
        .unwrap();
        assert!(hw.outcomes > 1);
        assert!(agg.tallies.contains_key("during"));
    }
}
