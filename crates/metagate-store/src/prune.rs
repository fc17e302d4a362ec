//! `db prune`: retention. Events dated before a cutoff are deleted, and so are evaluate runs
//! whose windows ended by then, except what a stored run still needs: the latest run (which
//! `tools health` and the next run's digest build on) with every event of its window, and
//! every recommendation a person accepted or rejected (a rejection keeps its recommendation
//! muted). Grants and their audit trail are never touched. Rows go in batches, each in a
//! transaction of its own, so a `gate` writing meanwhile waits for one batch at most.

use crate::StoreError;
use crate::any::AnyStore;

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
fn latest_run(store: &mut AnyStore) -> Result<Option<(i64, i64)>, StoreError> {
    let row = store.query_ints(
        "SELECT id, window_from_ms FROM eval_runs ORDER BY ran_at_ms DESC, id DESC LIMIT 1",
        &[],
    )?;
    Ok(row.map(|r| (r[0].unwrap_or(0), r[1].unwrap_or(0))))
}

/// Deletes (or, `dry_run`, counts) the events before `before_ms`, but none a stored evaluate
/// run still covers, then the runs whose window ended by then and the proposals no run names.
/// The same statements on both backends (`$1`, `$2` in order: SQLite reads them as it reads
/// `?1`, `?2`).
pub fn prune(store: &mut AnyStore, before_ms: i64, dry_run: bool) -> Result<Pruned, StoreError> {
    let latest = latest_run(store)?;
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
                &format!("SELECT count(*) FROM {table} WHERE ts_ms < $1"),
                &[cutoff],
            )?
        } else {
            in_batches(
                store,
                &format!(
                    "DELETE FROM {table} WHERE id IN \
                     (SELECT id FROM {table} WHERE ts_ms < $1 LIMIT {BATCH})"
                ),
                cutoff,
            )?
        };
        done.rows.push((table.to_string(), n));
    }
    let latest_id = latest.map_or(-1, |(id, _)| id);
    let runs = "FROM eval_runs WHERE window_to_ms <= $1 AND id <> $2";
    let orphans = "FROM eval_recommendations WHERE status = 'proposed' \
         AND id NOT IN (SELECT rec_id FROM eval_run_recommendations)";
    if dry_run {
        done.runs = count(
            store,
            &format!("SELECT count(*) {runs}"),
            &[cutoff, latest_id],
        )?;
        done.recommendations = count(
            store,
            &format!(
                "SELECT count(*) FROM eval_recommendations WHERE status = 'proposed' AND id NOT IN \
                 (SELECT rec_id FROM eval_run_recommendations WHERE run_id NOT IN (SELECT id {runs}))"
            ),
            &[cutoff, latest_id],
        )?;
    } else {
        done.runs = store.execute_ints(&format!("DELETE {runs}"), &[cutoff, latest_id])?;
        done.recommendations = store.execute_ints(&format!("DELETE {orphans}"), &[])?;
    }
    Ok(done)
}

fn count(store: &mut AnyStore, sql: &str, args: &[i64]) -> Result<u64, StoreError> {
    let row = store.query_ints(sql, args)?;
    Ok(row.and_then(|r| r[0]).unwrap_or(0).max(0) as u64)
}

fn in_batches(store: &mut AnyStore, sql: &str, cutoff: i64) -> Result<u64, StoreError> {
    let mut total = 0u64;
    loop {
        let n = store.execute_ints(sql, &[cutoff])?;
        total += n;
        if (n as i64) < BATCH {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::location::Location;

    #[test]
    fn prune_keeps_the_latest_runs_window_and_decided_recommendations() {
        let dir = tempfile::tempdir().unwrap();
        let postgres = crate::test_database().map(|url| Location::postgres(&url));
        for location in [Location::File(dir.path().join("p.db"))]
            .into_iter()
            .chain(postgres)
        {
            let mut store = AnyStore::open(&location, crate::Options::default()).unwrap();
            for ts in [10, 20, 30, 40] {
                store
                    .execute_ints(
                        "INSERT INTO outcomes (ts_ms, tool, status) VALUES ($1, 't', 'ok')",
                        &[ts],
                    )
                    .unwrap();
            }
            for sql in [
                "INSERT INTO eval_runs (id, window_from_ms, window_to_ms, ran_at_ms, events) VALUES (1, 0, 15, 15, 1)",
                "INSERT INTO eval_runs (id, window_from_ms, window_to_ms, ran_at_ms, events) VALUES (2, 25, 45, 45, 2)",
                "INSERT INTO eval_recommendations (id, tool, kind, confidence, summary, first_seen_ms, last_seen_ms, status) \
                   VALUES ('a', 't', 'demote', 1, 's', 1, 1, 'proposed'), ('b', 't', 'demote', 1, 's', 1, 1, 'rejected')",
                "INSERT INTO eval_run_recommendations (run_id, rec_id) VALUES (1, 'a'), (1, 'b')",
            ] {
                store.execute_ints(sql, &[]).unwrap();
            }
            let dry = prune(&mut store, 35, true).unwrap();
            // The latest run's window starts at 25: events from then on are kept.
            assert_eq!(dry.cutoff_ms, 25);
            assert_eq!(dry.kept_for_run, Some(2));
            assert_eq!(dry.rows[1], ("outcomes".to_string(), 2));
            assert_eq!((dry.runs, dry.recommendations), (1, 1));
            let outcomes =
                |s: &mut AnyStore| count(s, "SELECT count(*) FROM outcomes", &[]).unwrap();
            assert_eq!(outcomes(&mut store), 4, "a dry run deletes nothing");
            let done = prune(&mut store, 35, false).unwrap();
            assert_eq!(done, dry, "{location}");
            assert_eq!(outcomes(&mut store), 2);
            let mut left = |sql| count(&mut store, sql, &[]).unwrap();
            assert_eq!(
                (
                    left("SELECT count(*) FROM eval_recommendations"),
                    left("SELECT count(*) FROM eval_recommendations WHERE id = 'b'")
                ),
                (1, 1),
                "the rejected one stays: it keeps its recommendation muted"
            );
        }
    }
}
