//! `db prune`: retention. Events dated before a cutoff are deleted, and so are evaluate runs
//! whose windows ended by then, except what a stored run still needs: the latest run (which
//! `tools health` and the next run's digest build on) with every event of its window, and
//! every recommendation a person accepted or rejected (a rejection keeps its recommendation
//! muted). Grants and their audit trail are never touched. Rows go in batches, each in a
//! transaction of its own, so a `gate` writing meanwhile waits for one batch at most.

use rusqlite::{OptionalExtension, params};

use crate::store::{Store, StoreError};

/// Rows deleted per transaction.
const BATCH: i64 = 20_000;

/// The event tables pruned, in the order they are pruned.
const EVENT_TABLES: [&str; 4] = ["decisions", "outcomes", "asks", "user_corrections"];

/// What a prune did, or would do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pruned {
    /// The cutoff asked for.
    pub requested_ms: i64,
    /// The cutoff used: the one asked for, or the start of the latest run's window when that
    /// is earlier.
    pub cutoff_ms: i64,
    /// The run whose window kept the cutoff back, if one did.
    pub kept_for_run: Option<i64>,
    /// Table → rows deleted (or that would be).
    pub rows: Vec<(String, u64)>,
    /// Evaluate runs deleted.
    pub runs: u64,
    /// Recommendations deleted.
    pub recommendations: u64,
}

/// The latest stored run: its id and the start of its window.
fn latest_run(conn: &rusqlite::Connection) -> rusqlite::Result<Option<(i64, i64)>> {
    if !crate::store::runs::has_tables(conn)? {
        return Ok(None);
    }
    conn.query_row(
        "SELECT id, window_from_ms FROM eval_runs ORDER BY ran_at_ms DESC, id DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
}

/// Deletes what is older than `before_ms` (see the module's documentation); with `dry_run`,
/// only counts it.
pub fn prune(store: &mut Store, before_ms: i64, dry_run: bool) -> Result<Pruned, StoreError> {
    let latest = latest_run(store.conn_ref()).map_err(|e| store.err(e))?;
    let (cutoff, kept_for_run) = match latest {
        Some((id, from)) if from < before_ms => (from, Some(id)),
        _ => (before_ms, None),
    };
    let mut done = Pruned {
        requested_ms: before_ms,
        cutoff_ms: cutoff,
        kept_for_run,
        ..Pruned::default()
    };
    for table in EVENT_TABLES {
        let n = if dry_run {
            count(
                store,
                &format!("SELECT count(*) FROM {table} WHERE ts_ms < ?1"),
                [cutoff],
            )?
        } else {
            in_batches(
                store,
                &format!(
                    "DELETE FROM {table} WHERE rowid IN \
                     (SELECT rowid FROM {table} WHERE ts_ms < ?1 LIMIT {BATCH})"
                ),
                cutoff,
            )?
        };
        done.rows.push((table.to_string(), n));
    }
    if crate::store::runs::has_tables(store.conn_ref()).map_err(|e| store.err(e))? {
        let latest_id = latest.map_or(-1, |(id, _)| id);
        let runs = "FROM eval_runs WHERE window_to_ms <= ?1 AND id <> ?2";
        // A recommendation no run is left to show, and no person decided on.
        let orphans = "FROM eval_recommendations WHERE status = 'proposed' \
             AND id NOT IN (SELECT rec_id FROM eval_run_recommendations)";
        if dry_run {
            done.runs = count(
                store,
                &format!("SELECT count(*) {runs}"),
                params![cutoff, latest_id],
            )?;
            done.recommendations = count(
                store,
                &format!(
                    "SELECT count(*) FROM eval_recommendations WHERE status = 'proposed' AND id NOT IN \
                     (SELECT rec_id FROM eval_run_recommendations WHERE run_id NOT IN (SELECT id {runs}))"
                ),
                params![cutoff, latest_id],
            )?;
        } else {
            done.runs = store.immediate(|tx| {
                // Each run's rows go with it (`ON DELETE CASCADE`).
                tx.execute(&format!("DELETE {runs}"), params![cutoff, latest_id])
                    .map(|n| n as u64)
            })?;
            done.recommendations = store.immediate(|tx| {
                tx.execute(&format!("DELETE {orphans}"), [])
                    .map(|n| n as u64)
            })?;
        }
    }
    Ok(done)
}

fn count(store: &Store, sql: &str, args: impl rusqlite::Params) -> Result<u64, StoreError> {
    store
        .conn_ref()
        .query_row(sql, args, |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
        .map_err(|e| store.err(e))
}

/// Runs a `DELETE … LIMIT`-shaped statement until it deletes nothing, one transaction each.
fn in_batches(store: &mut Store, sql: &str, cutoff: i64) -> Result<u64, StoreError> {
    let mut total = 0u64;
    loop {
        let n = store.immediate(|tx| tx.execute(sql, [cutoff]))?;
        total += n as u64;
        if (n as i64) < BATCH {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_keeps_the_latest_runs_window_and_decided_recommendations() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let conn = store.conn_ref();
        for ts in [10, 20, 30, 40] {
            conn.execute(
                "INSERT INTO outcomes (ts_ms, tool, status) VALUES (?1, 't', 'ok')",
                [ts],
            )
            .unwrap();
        }
        conn.execute_batch(
            "INSERT INTO eval_runs (id, window_from_ms, window_to_ms, ran_at_ms, events) VALUES (1, 0, 15, 15, 1);
             INSERT INTO eval_runs (id, window_from_ms, window_to_ms, ran_at_ms, events) VALUES (2, 25, 45, 45, 2);
             INSERT INTO eval_recommendations (id, tool, kind, confidence, summary, first_seen_ms, last_seen_ms, status)
               VALUES ('a', 't', 'demote', 1, 's', 1, 1, 'proposed'), ('b', 't', 'demote', 1, 's', 1, 1, 'rejected');
             INSERT INTO eval_run_recommendations (run_id, rec_id) VALUES (1, 'a'), (1, 'b');",
        )
        .unwrap();
        let dry = prune(&mut store, 35, true).unwrap();
        // The latest run's window starts at 25: events from then on are kept.
        assert_eq!(dry.cutoff_ms, 25);
        assert_eq!(dry.kept_for_run, Some(2));
        assert_eq!(dry.rows[1], ("outcomes".to_string(), 2));
        assert_eq!((dry.runs, dry.recommendations), (1, 1));
        let outcomes = |s: &Store| -> i64 {
            s.conn_ref()
                .query_row("SELECT count(*) FROM outcomes", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(outcomes(&store), 4, "a dry run deletes nothing");
        let done = prune(&mut store, 35, false).unwrap();
        assert_eq!(done, dry);
        assert_eq!(outcomes(&store), 2);
        let left: Vec<String> = store
            .conn_ref()
            .prepare("SELECT id FROM eval_recommendations ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            left,
            ["b"],
            "the rejected one stays: it keeps its recommendation muted"
        );
    }
}
