//! `metagate db copy FROM TO`: every row of one store into another, SQLite or PostgreSQL either
//! way, with its ids, so that a copy reads exactly as the original does (evaluate's evidence
//! names rows by id).
//!
//! Idempotent: a row already in the target under its key is left as it is (grants and
//! recommendations, whose revocation and status change after they are made, take the
//! source's values), so copying again copies only what the source gained since. A target
//! holding *other* rows under the same keys (another store's history) is refused, naming the
//! first such row, before anything of that table is written: merging two histories would
//! need new ids and references rewritten, which this copy does not do.

use std::borrow::Cow;
use std::fmt::Write as _;

use postgres::types::ToSql;
use rusqlite::types::Value as SqliteValue;

use crate::store::any::AnyStore;
use crate::store::pg::PgStore;
use crate::store::pg_text::as_stored;
use crate::store::{Store, StoreError};

/// How a column's values are typed in PostgreSQL (SQLite takes each as it comes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Real,
    Text,
}

use Kind::{Int, Real, Text};

/// One table: its columns (the key's first), how many make the key, and whether a row
/// already copied takes the source's values again.
struct Table {
    name: &'static str,
    columns: &'static [(&'static str, Kind)],
    key: usize,
    updated: bool,
}

/// Every table of the schema, parents before the rows that name them.
const TABLES: &[Table] = &[
    Table {
        name: "decisions",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("caller", Text),
            ("intent", Text),
            ("tool", Text),
            ("method", Text),
            ("shape", Text),
            ("verdict", Text),
            ("category", Text),
            ("corrections", Text),
            ("warnings", Text),
            ("args", Text),
            ("fingerprint", Int),
            ("latency_us", Int),
            ("call_id", Text),
        ],
        key: 1,
        updated: false,
    },
    Table {
        name: "outcomes",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("tool", Text),
            ("method", Text),
            ("status", Text),
            ("error_type", Text),
            ("error_message", Text),
            ("boundary_axes", Text),
            ("boundary_axes_raw", Text),
            ("observed_task_shape", Text),
            ("suggested_split", Text),
            ("evidence", Text),
            ("metadata", Text),
        ],
        key: 1,
        updated: false,
    },
    Table {
        name: "asks",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("\"user\"", Text),
            ("text", Text),
            ("capabilities", Text),
        ],
        key: 1,
        updated: false,
    },
    Table {
        name: "user_corrections",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("tool", Text),
            ("method", Text),
            ("note", Text),
            ("reask_ask_id", Int),
            ("corrects_ask_id", Int),
            ("blamed_outcome_id", Int),
            ("blamed_decision_id", Int),
            ("found_by_run", Int),
        ],
        key: 1,
        updated: false,
    },
    Table {
        name: "grants",
        columns: &[
            ("id", Text),
            ("capability", Text),
            ("scope", Text),
            ("session", Text),
            ("granted_at_ms", Int),
            ("expires_at_ms", Int),
            ("revoked_at_ms", Int),
            ("granted_by", Text),
            ("reason", Text),
        ],
        key: 1,
        updated: true,
    },
    Table {
        name: "grant_events",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("event", Text),
            ("grant_id", Text),
            ("capability", Text),
            ("tool", Text),
            ("session", Text),
            ("decision_id", Int),
            ("actor", Text),
            ("detail", Text),
        ],
        key: 1,
        updated: false,
    },
    Table {
        name: "eval_runs",
        columns: &[
            ("id", Int),
            ("window_from_ms", Int),
            ("window_to_ms", Int),
            ("ran_at_ms", Int),
            ("events", Int),
            ("shards", Text),
            ("decisions_hw", Int),
            ("outcomes_hw", Int),
            ("corrections_hw", Int),
            ("unlinked_corrections", Int),
            ("policy_file", Text),
            ("policy_hash", Text),
            ("unattributed_reasks", Int),
        ],
        key: 1,
        updated: false,
    },
    Table {
        name: "eval_recommendations",
        columns: &[
            ("id", Text),
            ("tool", Text),
            ("method", Text),
            ("kind", Text),
            ("subject", Text),
            ("confidence", Real),
            ("summary", Text),
            ("axes", Text),
            ("evidence", Text),
            ("status", Text),
            ("first_seen_ms", Int),
            ("last_seen_ms", Int),
            ("evidence_count", Real),
            ("rejected_count", Real),
            ("brief", Text),
        ],
        key: 1,
        updated: true,
    },
    Table {
        name: "eval_health",
        columns: &[
            ("run_id", Int),
            ("tool", Text),
            ("method", Text),
            ("calls", Int),
            ("utility", Real),
            ("cohesion_warning", Int),
            ("degraded", Int),
            ("tally", Text),
        ],
        key: 3,
        updated: false,
    },
    Table {
        name: "eval_run_recommendations",
        columns: &[
            ("run_id", Int),
            ("rec_id", Text),
            ("confidence", Real),
            ("evidence_count", Real),
            ("muted", Int),
        ],
        key: 2,
        updated: false,
    },
    Table {
        name: "eval_alias_pairs",
        columns: &[
            ("run_id", Int),
            ("tool", Text),
            ("from_arg", Text),
            ("to_arg", Text),
            ("count", Int),
        ],
        key: 4,
        updated: false,
    },
];

/// One value, as both stores hold it.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

type Row = Vec<Cell>;

/// How many rows are read and written at once: a store of any size is copied in bounded
/// memory.
const BATCH: usize = 5000;

/// What a copy did: per table, the rows the source holds and those it added to the target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copied {
    /// (table, rows in the source, rows added to the target), in copy order.
    pub tables: Vec<(String, u64, u64)>,
}

/// Copies every row of `from` into `to` (see the module's comment).
pub fn copy(from: &mut AnyStore, to: &mut AnyStore) -> Result<Copied, StoreError> {
    let mut copied = Copied::default();
    for table in TABLES {
        let mut read = 0;
        let mut added = 0;
        let mut after: Option<Row> = None;
        loop {
            let rows = read_batch(from, table, after.as_ref())?;
            if rows.is_empty() {
                break;
            }
            read += rows.len() as u64;
            added += write_batch(to, table, &rows)?;
            after = rows.last().map(|r| r[..table.key].to_vec());
        }
        copied.tables.push((table.name.to_string(), read, added));
    }
    if let AnyStore::Postgres(pg) = to {
        pg.catch_up_identities()?;
    }
    Ok(copied)
}

/// The next rows of `table` after the key `after`, in key order.
fn read_batch(
    store: &mut AnyStore,
    table: &Table,
    after: Option<&Row>,
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
        let mut sql = format!("SELECT {columns} FROM {}", table.name);
        if after.is_some() {
            let marks: Vec<String> = (1..=table.key).map(|i| placeholder(sqlite, i)).collect();
            let _ = write!(sql, " WHERE ({keys}) > ({})", marks.join(", "));
        }
        let _ = write!(sql, " ORDER BY {keys} LIMIT {BATCH}");
        sql
    };
    let key_values = after.cloned().unwrap_or_default();
    select(store, table, &sql(true), &sql(false), &key_values)
}

/// Writes `rows` into `table` of `store`, in one transaction: refused when a row of the same
/// key holds something else (unless the table is `updated`); returns how many were new.
fn write_batch(store: &mut AnyStore, table: &Table, rows: &[Row]) -> Result<u64, StoreError> {
    let columns = column_list(table);
    let keys: Vec<&str> = table.columns[..table.key].iter().map(|c| c.0).collect();
    let rows = &*as_held(store, rows);
    let existing = existing_rows(store, table, rows)?;
    let mut new = 0;
    for row in rows {
        match existing.iter().find(|e| e[..table.key] == row[..table.key]) {
            None => new += 1,
            Some(held) if table.updated || same_row(held, row) => {}
            Some(held) => {
                return Err(StoreError::CopyConflict {
                    table: table.name,
                    key: describe(&held[..table.key]),
                });
            }
        }
    }
    let updates: Vec<String> = table.columns[table.key..]
        .iter()
        .map(|(c, _)| format!("{c} = excluded.{c}"))
        .collect();
    let on_conflict = if table.updated {
        format!(
            "ON CONFLICT ({}) DO UPDATE SET {}",
            keys.join(", "),
            updates.join(", ")
        )
    } else {
        format!("ON CONFLICT ({}) DO NOTHING", keys.join(", "))
    };
    match store {
        AnyStore::Sqlite(s) => {
            let marks: Vec<String> = (1..=table.columns.len()).map(|i| format!("?{i}")).collect();
            let sql = format!(
                "INSERT INTO {} ({columns}) VALUES ({}) {on_conflict}",
                table.name,
                marks.join(", ")
            );
            s.immediate(|tx| {
                let mut insert = tx.prepare(&sql)?;
                for row in rows {
                    let values: Vec<SqliteValue> = row.iter().map(to_sqlite).collect();
                    insert.execute(rusqlite::params_from_iter(values.iter()))?;
                }
                Ok(())
            })?;
        }
        AnyStore::Postgres(pg) => write_pg(pg, table, rows, &columns, &on_conflict)?,
    }
    Ok(new)
}

/// One statement for the batch: each column sent as an array and unnested.
fn write_pg(
    pg: &mut PgStore,
    table: &Table,
    rows: &[Row],
    columns: &str,
    on_conflict: &str,
) -> Result<(), StoreError> {
    let arrays: Vec<Box<dyn ToSql + Sync>> = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| -> Box<dyn ToSql + Sync> {
            match kind {
                Int => Box::new(
                    rows.iter()
                        .map(|r| as_int(&r[i]))
                        .collect::<Vec<Option<i64>>>(),
                ),
                Real => Box::new(
                    rows.iter()
                        .map(|r| as_real(&r[i]))
                        .collect::<Vec<Option<f64>>>(),
                ),
                Text => Box::new(
                    rows.iter()
                        .map(|r| as_text(&r[i]))
                        .collect::<Vec<Option<String>>>(),
                ),
            }
        })
        .collect();
    let unnest: Vec<String> = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| {
            let t = match kind {
                Int => "bigint",
                Real => "double precision",
                Text => "text",
            };
            format!("${}::{t}[]", i + 1)
        })
        .collect();
    let sql = format!(
        "INSERT INTO {} ({columns}) SELECT * FROM unnest({}) {on_conflict}",
        table.name,
        unnest.join(", ")
    );
    let params: Vec<&(dyn ToSql + Sync)> = arrays.iter().map(|a| a.as_ref()).collect();
    let done = pg.client().execute(&sql, &params);
    done.map(drop).map_err(|e| pg.err(e))
}

/// `rows` as `store` holds them, to be compared with its rows: PostgreSQL keeps a NUL as
/// U+FFFD (see `pg_text.rs`), and a row copied before is the same row, not another history.
fn as_held<'r>(store: &AnyStore, rows: &'r [Row]) -> Cow<'r, [Row]> {
    let nul = |c: &Cell| matches!(c, Cell::Text(t) if t.contains('\0'));
    if !matches!(store, AnyStore::Postgres(_)) || !rows.iter().flatten().any(nul) {
        return Cow::Borrowed(rows);
    }
    let held = |c: &Cell| match c {
        Cell::Text(t) => Cell::Text(as_stored(t).into_owned()),
        other => other.clone(),
    };
    Cow::Owned(rows.iter().map(|r| r.iter().map(held).collect()).collect())
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

/// The rows of `table` a query selects (in SQLite's spelling, or PostgreSQL's), with `values`
/// bound to its placeholders in order.
fn select(
    store: &mut AnyStore,
    table: &Table,
    sqlite_sql: &str,
    pg_sql: &str,
    values: &[Cell],
) -> Result<Vec<Row>, StoreError> {
    match store {
        AnyStore::Sqlite(s) => {
            let values: Vec<SqliteValue> = values.iter().map(to_sqlite).collect();
            read_sqlite(s, table, sqlite_sql, &values)
        }
        AnyStore::Postgres(pg) => {
            let values: Vec<Box<dyn ToSql + Sync>> = values.iter().map(to_pg).collect();
            let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
            let found = pg.client().query(pg_sql, &params);
            let rows = found.map_err(|e| pg.err(e))?;
            Ok(rows
                .iter()
                .map(|r| {
                    table
                        .columns
                        .iter()
                        .enumerate()
                        .map(|(i, (_, kind))| match kind {
                            Int => r.get::<_, Option<i64>>(i).map_or(Cell::Null, Cell::Int),
                            Real => r.get::<_, Option<f64>>(i).map_or(Cell::Null, Cell::Real),
                            Text => r.get::<_, Option<String>>(i).map_or(Cell::Null, Cell::Text),
                        })
                        .collect()
                })
                .collect())
        }
    }
}

fn read_sqlite(
    s: &Store,
    table: &Table,
    sql: &str,
    values: &[SqliteValue],
) -> Result<Vec<Row>, StoreError> {
    let run = || -> rusqlite::Result<Vec<Row>> {
        let mut statement = s.conn_ref().prepare(sql)?;
        let rows = statement.query_map(rusqlite::params_from_iter(values.iter()), |r| {
            (0..table.columns.len())
                .map(|i| Ok(from_sqlite(r.get::<_, SqliteValue>(i)?)))
                .collect()
        })?;
        rows.collect()
    };
    run().map_err(|e| s.err(e))
}

/// Whether two rows hold the same values, a number compared by value whatever its type (SQLite
/// may hold `1.0` where PostgreSQL holds `1`).
fn same_row(a: &Row, b: &Row) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Cell::Int(i), Cell::Real(r)) | (Cell::Real(r), Cell::Int(i)) => *i as f64 == *r,
        _ => x == y,
    })
}

fn describe(key: &[Cell]) -> String {
    let parts: Vec<String> = key
        .iter()
        .map(|c| match c {
            Cell::Null => "NULL".to_string(),
            Cell::Int(i) => i.to_string(),
            Cell::Real(r) => r.to_string(),
            Cell::Text(t) => format!("{t:?}"),
        })
        .collect();
    parts.join(", ")
}

fn column_list(table: &Table) -> String {
    let names: Vec<&str> = table.columns.iter().map(|c| c.0).collect();
    names.join(", ")
}

fn from_sqlite(v: SqliteValue) -> Cell {
    match v {
        SqliteValue::Null => Cell::Null,
        SqliteValue::Integer(i) => Cell::Int(i),
        SqliteValue::Real(r) => Cell::Real(r),
        SqliteValue::Text(t) => Cell::Text(t),
        SqliteValue::Blob(b) => Cell::Text(String::from_utf8_lossy(&b).into_owned()),
    }
}

fn to_sqlite(c: &Cell) -> SqliteValue {
    match c {
        Cell::Null => SqliteValue::Null,
        Cell::Int(i) => SqliteValue::Integer(*i),
        Cell::Real(r) => SqliteValue::Real(*r),
        Cell::Text(t) => SqliteValue::Text(t.clone()),
    }
}

fn to_pg(c: &Cell) -> Box<dyn ToSql + Sync> {
    match c {
        Cell::Null => Box::new(None::<String>),
        Cell::Int(i) => Box::new(*i),
        Cell::Real(r) => Box::new(*r),
        Cell::Text(t) => Box::new(as_stored(t).into_owned()),
    }
}

/// A value for a BIGINT column: SQLite may hold a whole number as a real, or as text.
fn as_int(c: &Cell) -> Option<i64> {
    match c {
        Cell::Null => None,
        Cell::Int(i) => Some(*i),
        Cell::Real(r) => Some(*r as i64),
        Cell::Text(t) => t.trim().parse().ok(),
    }
}

fn as_real(c: &Cell) -> Option<f64> {
    match c {
        Cell::Null => None,
        Cell::Int(i) => Some(*i as f64),
        Cell::Real(r) => Some(*r),
        Cell::Text(t) => t.trim().parse().ok(),
    }
}

/// A value for a TEXT column, as PostgreSQL holds it (a NUL as U+FFFD: see `pg_text.rs`).
fn as_text(c: &Cell) -> Option<String> {
    match c {
        Cell::Null => None,
        Cell::Int(i) => Some(i.to_string()),
        Cell::Real(r) => Some(r.to_string()),
        Cell::Text(t) => Some(as_stored(t).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::location::Location;
    use crate::store::pg::test_server;
    use crate::store::telemetry::{DecisionRow, Recorder};

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
        let open = |l: &Location| AnyStore::open(l, crate::store::Options::default()).unwrap();
        let sqlite = Location::File(dir.path().join("a.db"));
        let mut recorder = Recorder::new(open(&sqlite));
        let n = 2 * BATCH + 7;
        for i in 0..n {
            recorder.push(decision(i as i64, "pass", Some(format!("c{}", i % 3))));
        }
        recorder.commit().unwrap();
        drop(recorder);
        let postgres = Location::postgres(&test_server::fresh_database());
        let back = Location::File(dir.path().join("b.db"));
        let added = |from: &Location, to: &Location| -> u64 {
            let copied = copy(&mut open(from), &mut open(to)).unwrap();
            copied.tables.iter().map(|(_, _, added)| added).sum()
        };
        assert_eq!(added(&sqlite, &postgres), n as u64);
        assert_eq!(added(&sqlite, &postgres), 0);
        assert_eq!(added(&postgres, &back), n as u64);
        assert_eq!(added(&postgres, &back), 0);
        let info = |l: &Location| open(l).info().unwrap();
        assert_eq!(info(&back).tables, info(&sqlite).tables);
        // The PostgreSQL copy's next decision takes an id after the copied ones.
        let mut recorder = Recorder::new(open(&postgres));
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
        let open = |l: &Location| AnyStore::open(l, crate::store::Options::default()).unwrap();
        let sqlite = Location::File(dir.path().join("a.db"));
        let mut recorder = Recorder::new(open(&sqlite));
        recorder.push(DecisionRow {
            tool: Some("a\0b".into()),
            ..decision(1, "pass", Some("x\0".into()))
        });
        recorder.commit().unwrap();
        drop(recorder);
        let postgres = Location::postgres(&test_server::fresh_database());
        let added = |from: &Location, to: &Location| -> u64 {
            let copied = copy(&mut open(from), &mut open(to)).unwrap();
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
