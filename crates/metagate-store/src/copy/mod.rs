//! `metagate db copy FROM TO`: the rows of one store into another, SQLite or PostgreSQL either
//! way, in one of two modes.
//!
//! - **Replica** (the default): every row, with its ids, so that a copy reads exactly as the
//!   original does (evaluate's evidence and high-water marks name rows by id). A row already in
//!   the target under its key is left as it is, so copying again copies only what the source
//!   gained since. A target holding *other* rows under the same keys (another store's history)
//!   is refused, naming the first such row, before anything of that table is written.
//! - **Merge** (`--merge`): one store's history added to another's that has its own, as a
//!   host's joins a fleet's. Each history row the target has not seen gets a new id there,
//!   after every id the target holds, and the references to it are rewritten. Evaluate's runs
//!   and recommendations are not merged (see [`Merged::Not`]).
//!
//! Both modes record where each history row came from (`provenance`), so a row is recognised
//! wherever it arrives again, merged or copied, and never added twice.

mod cells;
mod provenance;
#[cfg(test)]
mod schema_tests;
mod tables;
mod writer;

use std::collections::HashMap;
use std::fmt::Write as _;

use cells::{Cell, Row, column_list, describe, same_row, select};
use provenance::{Ledger, runs};
use tables::{Conflict, Merged, TABLES, Table};
use writer::{in_transaction, mapped};

use crate::StoreError;
use crate::any::AnyStore;

/// How many rows are read and written at once: a store of any size is copied in bounded
/// memory.
const BATCH: usize = 5000;

/// How a copy treats the target's own rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The target becomes a copy of the source: ids kept, another history refused.
    Replica,
    /// The source's history joins the target's under new ids.
    Merge,
}

/// What a copy did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// The mode it ran in.
    pub mode: Mode,
    /// (table, rows in the source, rows added to the target), in copy order.
    pub tables: Vec<(String, u64, u64)>,
    /// The tables a merge leaves out, whatever the source holds in them.
    pub not_merged: Vec<String>,
}

/// Both stores' identities and their runs of copied history rows, one ledger per table.
struct Origins {
    source: String,
    target: String,
    source_runs: HashMap<&'static str, Ledger>,
    target_runs: HashMap<&'static str, Ledger>,
}

impl Origins {
    fn read(from: &mut AnyStore, to: &mut AnyStore) -> Result<Origins, StoreError> {
        let mut origins = Origins {
            source: provenance::identity(from)?,
            target: provenance::identity(to)?,
            source_runs: HashMap::new(),
            target_runs: HashMap::new(),
        };
        for table in TABLES {
            if let Merged::Renumbered { .. } = table.merged {
                let source = provenance::ledger(from, table.name)?;
                origins.source_runs.insert(table.name, source);
                let target = provenance::ledger(to, table.name)?;
                origins.target_runs.insert(table.name, target);
            }
        }
        Ok(origins)
    }

    /// The origin of the source's row `id` of `table`.
    fn origin(&self, table: &str, id: i64) -> (&str, i64) {
        match self.source_runs.get(table) {
            Some(ledger) => ledger.origin_of(&self.source, id),
            None => (&self.source, id),
        }
    }

    /// The target's id for the source's row `id` of `table`, when the target has that row:
    /// its own, or one a copy brought.
    fn target_id(&self, table: &str, id: i64) -> Option<i64> {
        let (origin, origin_id) = self.origin(table, id);
        if origin == self.target {
            return Some(origin_id);
        }
        self.target_runs.get(table)?.local_of(origin, origin_id)
    }
}

/// Copies `from` into `to` in `mode` (see the module's comment).
pub fn copy(from: &mut AnyStore, to: &mut AnyStore, mode: Mode) -> Result<Copied, StoreError> {
    let mut origins = Origins::read(from, to)?;
    let mut copied = Copied {
        mode,
        tables: Vec::new(),
        not_merged: Vec::new(),
    };
    for table in TABLES {
        let only = match (mode, table.merged) {
            (Mode::Merge, Merged::Not) => {
                let held = count(from, table.name)?;
                copied.tables.push((table.name.to_string(), held, 0));
                copied.not_merged.push(table.name.to_string());
                continue;
            }
            (Mode::Merge, Merged::Renumbered { only, .. }) => only,
            _ => None,
        };
        let mut read = 0;
        let mut added = 0;
        let mut after: Option<Row> = None;
        loop {
            let rows = read_batch(from, table, after.as_ref(), only)?;
            if rows.is_empty() {
                break;
            }
            read += rows.len() as u64;
            // Compared and written as the target holds text; the source is paged by its own.
            let held = cells::as_held(to, table, &rows);
            added += match (mode, table.merged) {
                (Mode::Merge, Merged::Renumbered { refs, .. }) => {
                    merge_batch(to, table, refs, &held, &mut origins)?
                }
                _ => keep_batch(to, table, &held, &mut origins)?,
            };
            after = rows.last().map(|r| r[..table.key].to_vec());
        }
        copied.tables.push((table.name.to_string(), read, added));
    }
    #[cfg(feature = "postgres")]
    if let AnyStore::Postgres(pg) = to {
        if mode == Mode::Replica {
            pg.catch_up_identities()?;
        }
        // The planner's statistics, which autovacuum gathers only a while later: evaluate run
        // on a store just filled would plan its joins blind (a million-row store measured 73 s
        // before its tables were analyzed, 3 s after).
        let written: Vec<&str> = copied
            .tables
            .iter()
            .filter(|(_, _, added)| *added > 0)
            .map(|(name, _, _)| name.as_str())
            .collect();
        if !written.is_empty() {
            let analyzed = pg
                .client()
                .batch_execute(&format!("ANALYZE {}", written.join(", ")));
            analyzed.map_err(|e| pg.err(e))?;
        }
    }
    Ok(copied)
}

/// How many rows `table` of `store` holds.
fn count(store: &mut AnyStore, table: &str) -> Result<u64, StoreError> {
    let sql = format!("SELECT count(*) FROM {table}");
    let n: i64 = match store {
        AnyStore::Sqlite(s) => {
            let read = s.conn_ref().query_row(&sql, [], |r| r.get(0));
            read.map_err(|e| s.err(e))?
        }
        #[cfg(feature = "postgres")]
        AnyStore::Postgres(pg) => {
            let read = pg.client().query_one(&sql, &[]);
            read.and_then(|r| r.try_get(0)).map_err(|e| pg.err(e))?
        }
    };
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The next rows of `table` after the key `after`, in key order, those `only` selects.
fn read_batch(
    store: &mut AnyStore,
    table: &Table,
    after: Option<&Row>,
    only: Option<&str>,
) -> Result<Vec<Row>, StoreError> {
    let columns = column_list(table);
    let key: Vec<&str> = table.columns[..table.key].iter().map(|c| c.0).collect();
    let keys = key.join(", ");
    let placeholder = |sqlite: bool, i: usize| {
        if sqlite {
            format!("?{i}")
        } else {
            format!("${i}")
        }
    };
    let sql = |sqlite: bool| {
        let mut conditions: Vec<String> = only.iter().map(|c| (*c).to_string()).collect();
        if after.is_some() {
            let marks: Vec<String> = (1..=table.key).map(|i| placeholder(sqlite, i)).collect();
            conditions.push(format!("({keys}) > ({})", marks.join(", ")));
        }
        let mut sql = format!("SELECT {columns} FROM {}", table.name);
        if !conditions.is_empty() {
            let _ = write!(sql, " WHERE {}", conditions.join(" AND "));
        }
        let _ = write!(sql, " ORDER BY {keys} LIMIT {BATCH}");
        sql
    };
    let key_values = after.cloned().unwrap_or_default();
    select(store, table, &sql(true), &sql(false), &key_values)
}

/// Writes `rows` into `table` of `store` under their own keys, in one transaction with the
/// origins of the history rows among them: refused when a row of the same key holds something
/// else (unless the table's [`Conflict`] says how to join them); returns how many were new.
fn keep_batch(
    store: &mut AnyStore,
    table: &Table,
    rows: &[Row],
    origins: &mut Origins,
) -> Result<u64, StoreError> {
    let existing = existing_rows(store, table, rows)?;
    let mut new = Vec::new();
    for row in rows {
        match existing.iter().find(|e| e[..table.key] == row[..table.key]) {
            None => new.push(row),
            Some(held) if table.conflict != Conflict::Refuse || same_row(held, row) => {}
            Some(held) => {
                return Err(StoreError::CopyConflict {
                    table: table.name,
                    key: describe(&held[..table.key]),
                });
            }
        }
    }
    // Where the new history rows came from; a row coming home needs no record.
    let arrived = match table.merged {
        Merged::Renumbered { .. } => runs(new.iter().filter_map(|row| {
            let id = cells::as_int(&row[0])?;
            let (origin, origin_id) = origins.origin(table.name, id);
            (origin != origins.target).then_some((origin, origin_id, id))
        })),
        _ => Vec::new(),
    };
    let on_conflict = on_conflict(table);
    in_transaction(store, |w| {
        w.insert_rows(table, rows, &on_conflict)?;
        w.insert_runs(table.name, &arrived)
    })?;
    if let Some(ledger) = origins.target_runs.get_mut(table.name) {
        arrived.into_iter().for_each(|run| ledger.add(run));
    }
    Ok(new.len() as u64)
}

/// Adds the history rows of `rows` the target has not seen, under new ids, their references
/// (`refs`) rewritten to the target's ids; returns how many.
fn merge_batch(
    store: &mut AnyStore,
    table: &Table,
    refs: &[(&str, &'static str)],
    rows: &[Row],
    origins: &mut Origins,
) -> Result<u64, StoreError> {
    let refs: Vec<(usize, &str)> = refs.iter().map(|(c, t)| (table.position(c), *t)).collect();
    let mut fresh: Vec<(Row, i64)> = Vec::new();
    let mut known: Vec<(&Row, i64)> = Vec::new();
    for row in rows {
        let Some(id) = cells::as_int(&row[0]) else {
            continue;
        };
        if let Some(held) = origins.target_id(table.name, id) {
            known.push((row, held));
            continue;
        }
        let mut row = row.clone();
        for &(at, referenced) in &refs {
            row[at] = mapped(&row[at], |id| origins.target_id(referenced, id));
        }
        fresh.push((row, id));
    }
    same_as_held(store, table, &refs, &known)?;
    if fresh.is_empty() {
        return Ok(0);
    }
    let arrived = in_transaction(store, |w| {
        let ids = w.new_ids(table.name, fresh.len())?;
        let mut written = Vec::with_capacity(fresh.len());
        for ((row, _), &id) in fresh.iter_mut().zip(&ids) {
            row[0] = Cell::Int(id);
            written.push(std::mem::take(row));
        }
        let arrived = runs(fresh.iter().zip(&ids).map(|((_, source_id), &id)| {
            let (origin, origin_id) = origins.origin(table.name, *source_id);
            (origin, origin_id, id)
        }));
        w.insert_rows(table, &written, "")?;
        w.insert_runs(table.name, &arrived)?;
        Ok(arrived)
    })?;
    if let Some(ledger) = origins.target_runs.get_mut(table.name) {
        arrived.into_iter().for_each(|run| ledger.add(run));
    }
    Ok(fresh.len() as u64)
}

/// Checks that each row the target is recorded to hold already (`known`: the source's row and
/// the target's id for it) is that row there. Identities are random, so they differ unless a
/// store began as a file copy of another (`cp`, an image with a store in it); then two
/// different rows may claim one origin, and the merge is refused rather than drop one. A row
/// the target has pruned is no clash. References are left out: the target's are its own ids.
fn same_as_held(
    store: &mut AnyStore,
    table: &Table,
    refs: &[(usize, &str)],
    known: &[(&Row, i64)],
) -> Result<(), StoreError> {
    if known.is_empty() {
        return Ok(());
    }
    let ids: Vec<String> = known.iter().map(|(_, id)| id.to_string()).collect();
    let held = cells::rows_by_id(store, table, &ids.join(","))?;
    let held: HashMap<i64, &Row> = held
        .iter()
        .filter_map(|row| Some((cells::as_int(&row[0])?, row)))
        .collect();
    let compared = |row: &Row| -> Row {
        let skipped = |at: usize| at == 0 || refs.iter().any(|(r, _)| *r == at);
        let kept = row.iter().enumerate().filter(|(at, _)| !skipped(*at));
        kept.map(|(_, cell)| cell.clone()).collect()
    };
    for (row, id) in known {
        if let Some(there) = held.get(id)
            && !same_row(&compared(row), &compared(there))
        {
            return Err(StoreError::CopyOriginClash {
                table: table.name,
                source_id: describe(&row[..1]),
                target_id: *id,
            });
        }
    }
    Ok(())
}

/// How an insert of `table` ends when the key is taken (rows found taken by another row were
/// refused before).
fn on_conflict(table: &Table) -> String {
    let keys: Vec<&str> = table.columns[..table.key].iter().map(|c| c.0).collect();
    let keys = keys.join(", ");
    match table.conflict {
        Conflict::Refuse => format!("ON CONFLICT ({keys}) DO NOTHING"),
        Conflict::TakeSource => {
            let updates: Vec<String> = table.columns[table.key..]
                .iter()
                .map(|(c, _)| format!("{c} = excluded.{c}"))
                .collect();
            format!("ON CONFLICT ({keys}) DO UPDATE SET {}", updates.join(", "))
        }
        // The same grant everywhere but for its revocation, which is never undone.
        Conflict::EarliestRevocation => format!(
            "ON CONFLICT ({keys}) DO UPDATE SET revoked_at_ms = CASE \
               WHEN {t}.revoked_at_ms IS NULL THEN excluded.revoked_at_ms \
               WHEN excluded.revoked_at_ms IS NULL THEN {t}.revoked_at_ms \
               WHEN excluded.revoked_at_ms < {t}.revoked_at_ms THEN excluded.revoked_at_ms \
               ELSE {t}.revoked_at_ms END, \
             mac = CASE WHEN {t}.revoked_at_ms IS NULL AND excluded.revoked_at_ms IS NULL \
               THEN {t}.mac END",
            t = table.name
        ),
    }
}

/// The target's rows under the keys of `rows`.
fn existing_rows(
    store: &mut AnyStore,
    table: &Table,
    rows: &[Row],
) -> Result<Vec<Row>, StoreError> {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return Ok(Vec::new());
    };
    // The batch is in key order: the target's rows between its first and last key.
    let columns = column_list(table);
    let keys: Vec<&str> = table.columns[..table.key].iter().map(|c| c.0).collect();
    let keys = keys.join(", ");
    let bounds: Row = first[..table.key]
        .iter()
        .chain(&last[..table.key])
        .cloned()
        .collect();
    let marks = |sqlite: bool, from: usize| -> String {
        (from..from + table.key)
            .map(|i| {
                if sqlite {
                    format!("?{i}")
                } else {
                    format!("${i}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sql = |sqlite: bool| {
        format!(
            "SELECT {columns} FROM {} WHERE ({keys}) >= ({}) AND ({keys}) <= ({}) ORDER BY {keys}",
            table.name,
            marks(sqlite, 1),
            marks(sqlite, 1 + table.key)
        )
    };
    select(store, table, &sql(true), &sql(false), &bounds)
}

// Both tests copy into PostgreSQL.
#[cfg(all(test, feature = "postgres"))]
mod tests {
    use super::*;
    use crate::location::Location;
    use crate::telemetry::{DecisionBatch, DecisionRow};

    fn decision(ts_ms: i64, verdict: &'static str, caller: Option<String>) -> DecisionRow {
        DecisionRow {
            ts_ms,
            session: None,
            caller,
            intent: None,
            tool: Some("t".into()),
            method: None,
            shape: None,
            verdict,
            category: None,
            corrections: "[]".into(),
            warnings: "[]".into(),
            args: None,
            fingerprint: Some(ts_ms),
            latency_us: 1,
            call_id: None,
        }
    }

    /// More rows than a batch, each way: every row arrives once, and again adds nothing.
    #[test]
    fn a_store_larger_than_a_batch_is_copied_whole_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let open = |l: &Location| AnyStore::open(l, crate::Options::default()).unwrap();
        let sqlite = Location::File(dir.path().join("a.db"));
        let mut recorder = DecisionBatch::new(open(&sqlite));
        let n = 2 * BATCH + 7;
        for i in 0..n {
            recorder.push(decision(i as i64, "pass", Some(format!("c{}", i % 3))));
        }
        recorder.commit().unwrap();
        drop(recorder);
        let Some(url) = crate::test_database() else {
            return;
        };
        let postgres = Location::postgres(&url);
        let back = Location::File(dir.path().join("b.db"));
        let added = |from: &Location, to: &Location| -> u64 {
            let copied = copy(&mut open(from), &mut open(to), Mode::Replica).unwrap();
            copied.tables.iter().map(|(_, _, added)| added).sum()
        };
        assert_eq!(added(&sqlite, &postgres), n as u64);
        assert_eq!(added(&sqlite, &postgres), 0);
        assert_eq!(added(&postgres, &back), n as u64);
        assert_eq!(added(&postgres, &back), 0);
        let info = |l: &Location| open(l).info().unwrap();
        assert_eq!(info(&back).tables, info(&sqlite).tables);
        // The PostgreSQL copy's tables are analyzed, so the first evaluate plans with numbers.
        let AnyStore::Postgres(mut pg) = open(&postgres) else {
            unreachable!("a postgres:// location opens PostgreSQL");
        };
        let analyzed = pg
            .client()
            .query_one(
                "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'decisions'",
                &[],
            )
            .unwrap();
        assert!(analyzed.get::<_, bool>(0));
        drop(pg);
        // The PostgreSQL copy's next decision takes an id after the copied ones.
        let mut recorder = DecisionBatch::new(open(&postgres));
        recorder.push(decision(0, "rejected", None));
        recorder.commit().unwrap();
        assert_eq!(recorder.last_decision_id(), Some(n as i64 + 1));
    }

    /// PostgreSQL's text cannot hold U+0000: an SQLite store holding one is copied with U+FFFD
    /// in its place (as PostgreSQL stores it when written directly), and copying again adds
    /// nothing and finds no conflict.
    #[test]
    fn a_nul_in_sqlite_text_arrives_in_postgres_as_the_replacement_character() {
        let dir = tempfile::tempdir().unwrap();
        let open = |l: &Location| AnyStore::open(l, crate::Options::default()).unwrap();
        let sqlite = Location::File(dir.path().join("a.db"));
        let mut recorder = DecisionBatch::new(open(&sqlite));
        recorder.push(DecisionRow {
            tool: Some("a\0b".into()),
            ..decision(1, "pass", Some("x\0".into()))
        });
        recorder.commit().unwrap();
        drop(recorder);
        let Some(url) = crate::test_database() else {
            return;
        };
        let postgres = Location::postgres(&url);
        let added = |from: &Location, to: &Location| -> u64 {
            let copied = copy(&mut open(from), &mut open(to), Mode::Replica).unwrap();
            copied.tables.iter().map(|(_, _, added)| added).sum()
        };
        assert_eq!(added(&sqlite, &postgres), 1);
        assert_eq!(added(&sqlite, &postgres), 0);
        let AnyStore::Postgres(mut pg) = open(&postgres) else {
            unreachable!("a postgres:// location opens PostgreSQL");
        };
        let row = pg
            .client()
            .query_one("SELECT tool, caller FROM decisions", &[])
            .unwrap();
        let (tool, caller): (String, String) = (row.get(0), row.get(1));
        assert_eq!(
            (tool.as_str(), caller.as_str()),
            ("a\u{fffd}b", "x\u{fffd}")
        );
    }
}
