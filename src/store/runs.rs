//! Evaluate runs in the store: saved idempotently (one run per window, replaced when run
//! again), recommendations keeping their id and status across runs, and read back for `tools
//! health` with live counts of what was recorded since.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::evolution::{Aggregate, ProposedAlias, Recommendation, Tallies, Tally, Window};
use crate::domain::policy::thresholds::Thresholds;
use crate::store::{Store, StoreError};

/// What one run found, ready to be stored.
pub struct Run<'a> {
    pub window: &'a Window,
    pub ran_at_ms: i64,
    pub shards: &'a [String],
    pub aggregate: &'a Aggregate,
    pub recommendations: &'a mut [Recommendation],
    pub aliases: &'a [ProposedAlias],
    pub thresholds: &'a Thresholds,
    /// Where the scan of the store the run is saved in ended ([`super::scan::scan`]).
    pub high_water: HighWater,
}

/// The largest row ids of the telemetry tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HighWater {
    pub decisions: i64,
    pub outcomes: i64,
    pub corrections: i64,
}

pub fn high_water(conn: &Connection) -> rusqlite::Result<HighWater> {
    let max = |table: &str| -> rusqlite::Result<i64> {
        conn.query_row(
            &format!("SELECT coalesce(max(rowid), 0) FROM {table}"),
            [],
            |r| r.get(0),
        )
    };
    Ok(HighWater {
        decisions: max("decisions")?,
        outcomes: max("outcomes")?,
        corrections: max("user_corrections")?,
    })
}

/// Stores a run, replacing an earlier run over the same window; recommendations already known
/// keep their status (and `run.recommendations` are given it). Returns the run's id.
pub fn save(store: &mut Store, run: Run<'_>) -> Result<i64, StoreError> {
    store.immediate(|tx| save_in(tx, run))
}

fn save_in(tx: &rusqlite::Transaction<'_>, run: Run<'_>) -> rusqlite::Result<i64> {
    let hw = run.high_water;
    let shards = serde_json::to_string(run.shards).expect("strings serialize");
    let id: i64 = tx
        .query_row(
            "INSERT INTO eval_runs (window_from_ms, window_to_ms, ran_at_ms, events, shards, \
               decisions_hw, outcomes_hw, corrections_hw, unlinked_corrections) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT (window_from_ms, window_to_ms) DO UPDATE SET \
               ran_at_ms = excluded.ran_at_ms, events = excluded.events, shards = excluded.shards, \
               decisions_hw = excluded.decisions_hw, outcomes_hw = excluded.outcomes_hw, \
               corrections_hw = excluded.corrections_hw, unlinked_corrections = excluded.unlinked_corrections \
             RETURNING id",
            params![
                run.window.from_ms,
                run.window.until_ms,
                run.ran_at_ms,
                run.aggregate.events as i64,
                shards,
                hw.decisions,
                hw.outcomes,
                hw.corrections,
                run.aggregate.unlinked_corrections as i64,
            ],
            |r| r.get(0),
        )?;
    for table in [
        "eval_health",
        "eval_run_recommendations",
        "eval_alias_pairs",
    ] {
        tx.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [id])?;
    }
    {
        let t = run.thresholds;
        let mut health = tx
            .prepare(
                "INSERT INTO eval_health (run_id, tool, method, calls, utility, cohesion_warning, degraded, tally) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
        for (tool, methods) in &run.aggregate.tallies {
            for (method, tally) in methods {
                health.execute(params![
                    id,
                    tool,
                    method,
                    tally.calls as i64,
                    tally.utility(),
                    tally.cohesion_warning(t),
                    tally.degraded(t),
                    serde_json::to_string(tally).expect("a tally serializes"),
                ])?;
            }
        }
        let mut upsert = tx
            .prepare(
                "INSERT INTO eval_recommendations (id, tool, method, kind, subject, confidence, summary, axes, evidence, first_seen_ms, last_seen_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10) \
                 ON CONFLICT (id) DO UPDATE SET confidence = excluded.confidence, summary = excluded.summary, \
                   axes = excluded.axes, evidence = excluded.evidence, \
                   last_seen_ms = max(last_seen_ms, excluded.last_seen_ms) \
                 RETURNING status",
            )?;
        let mut link = tx.prepare(
            "INSERT OR IGNORE INTO eval_run_recommendations (run_id, rec_id) VALUES (?1, ?2)",
        )?;
        let json = |v: &[String]| serde_json::to_string(v).expect("strings serialize");
        for r in run.recommendations.iter_mut() {
            r.status = upsert.query_row(
                params![
                    r.id,
                    r.tool,
                    r.method,
                    r.kind,
                    r.subject,
                    r.confidence,
                    r.summary,
                    json(&r.axes),
                    json(&r.evidence),
                    run.ran_at_ms
                ],
                |row| row.get(0),
            )?;
            link.execute(params![id, r.id])?;
        }
        let mut pair = tx
            .prepare(
                "INSERT INTO eval_alias_pairs (run_id, tool, from_arg, to_arg, count) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
        for ((tool, from, to), n) in &run.aggregate.alias_pairs {
            pair.execute(params![id, tool, from, to, *n as i64])?;
        }
    }
    Ok(id)
}

/// The statuses of known recommendations (for a `--dry-run`, which stores nothing).
pub fn statuses(conn: &Connection, recs: &mut [Recommendation]) -> rusqlite::Result<()> {
    if !has_tables(conn)? {
        return Ok(());
    }
    let mut st = conn.prepare("SELECT status FROM eval_recommendations WHERE id = ?1")?;
    for r in recs {
        if let Some(s) = st.query_row([&r.id], |row| row.get(0)).optional()? {
            r.status = s;
        }
    }
    Ok(())
}

/// Whether this store has the evaluate tables (a read-only store of an older metagate may
/// not).
pub fn has_tables(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'eval_recommendations')",
        [],
        |r| r.get(0),
    )
}

/// Sets a recommendation's status; `Ok(None)` when no recommendation has that id, else the
/// recommendation's tool, kind and previous status.
pub fn set_status(
    store: &mut Store,
    id: &str,
    status: &str,
) -> Result<Option<(String, String, String)>, StoreError> {
    store.immediate(|tx| {
        let found: Option<(String, String, String)> = tx
            .query_row(
                "SELECT tool, kind, status FROM eval_recommendations WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        if found.is_some() {
            tx.execute(
                "UPDATE eval_recommendations SET status = ?2 WHERE id = ?1",
                params![id, status],
            )?;
        }
        Ok(found)
    })
}

/// The latest run, as `tools health` reads it.
#[derive(Debug, Clone, Default)]
pub struct LatestRun {
    pub id: i64,
    pub window_from_ms: i64,
    pub window_to_ms: i64,
    pub ran_at_ms: i64,
    pub high_water: HighWater,
    pub tallies: Tallies,
    /// Tool → recommendation kinds of the run still open (proposed or accepted).
    pub open_recommendations: BTreeMap<String, Vec<String>>,
    /// Tallies stored by the run that cannot be read back (tool, method, why): left out of
    /// [`LatestRun::tallies`], for the caller to say so.
    pub unreadable: Vec<(String, String, String)>,
}

/// The run `tools health` builds on when `until_ms` (exclusive) is the end of now: the one
/// made last among those whose window ends by then. A window reaching past it (an `--until`
/// ahead, or a clock set back) counted events whose time has not come yet.
pub fn latest(conn: &Connection, until_ms: i64) -> rusqlite::Result<Option<LatestRun>> {
    if !has_tables(conn)? {
        return Ok(None);
    }
    let run = conn
        .query_row(
            "SELECT id, window_from_ms, window_to_ms, ran_at_ms, decisions_hw, outcomes_hw, corrections_hw \
             FROM eval_runs WHERE window_to_ms <= ?1 ORDER BY ran_at_ms DESC, id DESC LIMIT 1",
            [until_ms],
            |r| {
                Ok(LatestRun {
                    id: r.get(0)?,
                    window_from_ms: r.get(1)?,
                    window_to_ms: r.get(2)?,
                    ran_at_ms: r.get(3)?,
                    high_water: HighWater {
                        decisions: r.get(4)?,
                        outcomes: r.get(5)?,
                        corrections: r.get(6)?,
                    },
                    ..LatestRun::default()
                })
            },
        )
        .optional()?;
    let Some(mut run) = run else {
        return Ok(None);
    };
    let mut st = conn.prepare("SELECT tool, method, tally FROM eval_health WHERE run_id = ?1")?;
    let mut rows = st.query([run.id])?;
    while let Some(r) = rows.next()? {
        let tool: String = r.get(0)?;
        let method: String = r.get(1)?;
        match serde_json::from_str::<Tally>(r.get_ref(2)?.as_str()?) {
            Ok(tally) => {
                run.tallies.entry(tool).or_default().insert(method, tally);
            }
            Err(e) => run.unreadable.push((tool, method, e.to_string())),
        }
    }
    let mut st = conn.prepare(
        "SELECT r.tool, r.kind FROM eval_run_recommendations l JOIN eval_recommendations r ON r.id = l.rec_id \
         WHERE l.run_id = ?1 AND r.status <> 'rejected' ORDER BY r.tool, r.kind",
    )?;
    let mut rows = st.query([run.id])?;
    while let Some(r) = rows.next()? {
        run.open_recommendations
            .entry(r.get(0)?)
            .or_default()
            .push(r.get(1)?);
    }
    Ok(Some(run))
}

/// Whether the store holds any evaluate run at all.
pub fn any_run(conn: &Connection) -> rusqlite::Result<bool> {
    if !has_tables(conn)? {
        return Ok(false);
    }
    conn.query_row("SELECT EXISTS (SELECT 1 FROM eval_runs)", [], |r| r.get(0))
}

/// What a run counted: the rows its scan read (row ids up to its high-water marks) dated in
/// its window, which ends at `until_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub high_water: HighWater,
    pub until_ms: i64,
}

impl Counted {
    /// A store never evaluated: nothing counted yet.
    pub const NOTHING: Counted = Counted {
        high_water: HighWater {
            decisions: 0,
            outcomes: 0,
            corrections: 0,
        },
        until_ms: i64::MIN,
    };

    pub fn of(run: &LatestRun) -> Counted {
        Counted {
            high_water: run.high_water,
            until_ms: run.window_to_ms,
        }
    }
}

// The rows of `window` a run did not count come in two parts. Those recorded after its scan
// (row id past the high-water mark) are read by row id from the end of each table; `+ts_ms`
// keeps the planner off the time indexes, which would walk the whole window. Those its scan
// read but dated at or after its window's end (dated ahead when recorded, or a run with an
// `--until` before it was made) are found through an index that starts with the time, or with
// the tool: one seek per tool name, walking from name to name (`min(tool) … WHERE tool > name`)
// since SQLite has no skip-scan without statistics. Either way the cost follows the rows
// counted, never the size of the store.

/// Decisions recorded after the run: ?1 high-water mark, ?2 and ?3 the window.
const DECISIONS_AFTER: &str = "SELECT tool, method, verdict, category, count(*), max(ts_ms) FROM decisions \
     WHERE rowid > ?1 AND +ts_ms >= ?2 AND +ts_ms < ?3 AND tool IS NOT NULL \
     GROUP BY tool, method, verdict, category";

/// Decisions the run's scan read dated at or after its window: ?1 and ?2 the times, ?3 the
/// high-water mark.
const DECISIONS_AHEAD: &str = "WITH RECURSIVE names(name) AS ( \
       SELECT (SELECT min(tool) FROM decisions INDEXED BY decisions_by_tool) \
       UNION ALL \
       SELECT (SELECT min(tool) FROM decisions INDEXED BY decisions_by_tool WHERE tool > name) \
       FROM names WHERE name IS NOT NULL) \
     SELECT tool, method, verdict, category, count(*), max(ts_ms) \
     FROM names CROSS JOIN decisions INDEXED BY decisions_by_tool \
     WHERE tool = name AND ts_ms >= ?1 AND ts_ms < ?2 AND decisions.rowid <= ?3 \
     GROUP BY tool, method, verdict, category";

const OUTCOMES_AFTER: &str = "outcomes WHERE rowid > ?1 AND +ts_ms >= ?2 AND +ts_ms < ?3";

const OUTCOMES_AHEAD: &str =
    "outcomes INDEXED BY outcomes_by_ts WHERE ts_ms >= ?1 AND ts_ms < ?2 AND rowid <= ?3";

const CORRECTIONS_AFTER: &str =
    "user_corrections WHERE rowid > ?1 AND +ts_ms >= ?2 AND +ts_ms < ?3";

const CORRECTION_NAMES: &str = "WITH RECURSIVE names(name) AS ( \
       SELECT (SELECT min(tool) FROM user_corrections INDEXED BY user_corrections_by_tool) \
       UNION ALL \
       SELECT (SELECT min(tool) FROM user_corrections INDEXED BY user_corrections_by_tool WHERE tool > name) \
       FROM names WHERE name IS NOT NULL) ";

const CORRECTIONS_AHEAD: &str = "names CROSS JOIN user_corrections INDEXED BY user_corrections_by_tool \
     WHERE tool = name AND ts_ms >= ?1 AND ts_ms < ?2 AND user_corrections.rowid <= ?3";

/// Counts of what `evaluate` over `window` would count and the run did not: every event dated
/// in the window (so none before its time comes), less those `counted`. With the run's own
/// counts that is each event of the window once.
pub fn live(
    conn: &Connection,
    counted: &Counted,
    window: &Window,
    t: &Thresholds,
) -> rusqlite::Result<Tallies> {
    let mut agg = Aggregate::default();
    let hw = counted.high_water;
    let (from, until) = (window.from_ms, window.until_ms);
    // The part of the window after the run's, when there is one.
    let ahead_from = counted.until_ms.max(from);
    let ahead = ahead_from < until;
    let mut add_decisions = |sql: &str, args: &[&dyn rusqlite::ToSql]| -> rusqlite::Result<()> {
        let mut st = conn.prepare(sql)?;
        let mut rows = st.query(args)?;
        while let Some(r) = rows.next()? {
            let tool: String = r.get(0)?;
            let method: Option<String> = r.get(1)?;
            let verdict: String = r.get(2)?;
            let category: Option<String> = r.get(3)?;
            let n: i64 = r.get(4)?;
            let last: i64 = r.get(5)?;
            let tally = agg.tally(&tool, method.as_deref());
            tally.add_decisions(n.max(0) as u64, last, &verdict, category.as_deref());
        }
        Ok(())
    };
    add_decisions(DECISIONS_AFTER, &[&hw.decisions, &from, &until])?;
    if ahead && hw.decisions > 0 {
        add_decisions(DECISIONS_AHEAD, &[&ahead_from, &until, &hw.decisions])?;
    }
    let outcomes_hw = [&ahead_from as &dyn rusqlite::ToSql, &until, &hw.outcomes];
    let corrections_hw = [&ahead_from as &dyn rusqlite::ToSql, &until, &hw.corrections];
    use crate::store::aggregate::{Rows, add_corrections, add_outcomes};
    add_outcomes(
        conn,
        Rows::table(OUTCOMES_AFTER),
        &[&hw.outcomes, &from, &until],
        window,
        t,
        &mut agg,
        &mut || {},
    )?;
    add_corrections(
        conn,
        Rows::table(CORRECTIONS_AFTER),
        &[&hw.corrections, &from, &until],
        window,
        t,
        &mut agg,
        &mut || {},
    )?;
    if ahead && hw.outcomes > 0 {
        add_outcomes(
            conn,
            Rows::table(OUTCOMES_AHEAD),
            &outcomes_hw,
            window,
            t,
            &mut agg,
            &mut || {},
        )?;
    }
    if ahead && hw.corrections > 0 {
        let rows = Rows {
            with: CORRECTION_NAMES,
            from: CORRECTIONS_AHEAD,
        };
        add_corrections(conn, rows, &corrections_hw, window, t, &mut agg, &mut || {})?;
    }
    Ok(agg.tallies)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tools health` has 200 ms on a store of 10,000,000 events: every live query must find
    /// its rows through the row id or an index, never by reading a table or an index whole.
    #[test]
    fn live_counts_never_scan_a_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let conn = store.conn_ref();
        let queries = [
            DECISIONS_AFTER.to_string(),
            DECISIONS_AHEAD.to_string(),
            format!("SELECT ts_ms FROM {OUTCOMES_AFTER}"),
            format!("SELECT ts_ms FROM {OUTCOMES_AHEAD}"),
            format!("SELECT ts_ms FROM {CORRECTIONS_AFTER}"),
            format!("{CORRECTION_NAMES}SELECT ts_ms, tool, method FROM {CORRECTIONS_AHEAD}"),
        ];
        for sql in queries {
            let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let plan: Vec<String> = st
                .query_map([1_i64, 2, 3], |r| r.get::<_, String>(3))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for step in &plan {
                let table = ["decisions", "outcomes", "user_corrections"]
                    .iter()
                    .any(|t| step.contains(&format!(" {t}")));
                assert!(
                    !table || step.starts_with("SEARCH "),
                    "{step} in {plan:?}\n{sql}"
                );
            }
        }
    }
}
