//! One value as both stores hold it, and reading rows of either.

use std::borrow::Cow;

#[cfg(feature = "postgres")]
use postgres::types::ToSql;
use rusqlite::types::Value as SqliteValue;

#[cfg(feature = "postgres")]
use super::tables::KEY_COLUMNS;
#[cfg(feature = "postgres")]
use super::tables::Kind::{Int, Real, Text};
use super::tables::Table;
use crate::any::AnyStore;
#[cfg(feature = "postgres")]
use crate::pg_text::{as_key, as_stored};
use crate::{Store, StoreError};

/// One value, as both stores hold it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

pub(super) type Row = Vec<Cell>;

/// The rows of `table` a query selects (in SQLite's spelling, or PostgreSQL's), with `values`
/// bound to its placeholders in order.
#[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
pub(super) fn select(
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
        #[cfg(feature = "postgres")]
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

pub(super) fn read_sqlite(
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

/// `rows` of `table` as `store` holds them, to be compared with its rows: PostgreSQL keeps a
/// NUL as U+FFFD and a long key bounded (see `pg_text.rs`), and a row copied before is the
/// same row, not another history.
#[cfg(not(feature = "postgres"))]
pub(super) fn as_held<'r>(_: &AnyStore, _: &Table, rows: &'r [Row]) -> Cow<'r, [Row]> {
    Cow::Borrowed(rows)
}

/// See the function of this name above.
#[cfg(feature = "postgres")]
pub(super) fn as_held<'r>(store: &AnyStore, table: &Table, rows: &'r [Row]) -> Cow<'r, [Row]> {
    if !matches!(store, AnyStore::Postgres(_)) {
        return Cow::Borrowed(rows);
    }
    let keys: Vec<bool> = table
        .columns
        .iter()
        .map(|(c, _)| KEY_COLUMNS.contains(c))
        .collect();
    let held = |at: usize, text: &'r str| {
        if keys[at] {
            as_key(text)
        } else {
            as_stored(text)
        }
    };
    let changed = |row: &'r Row| {
        row.iter().enumerate().any(|(at, c)| match c {
            Cell::Text(t) => matches!(held(at, t), Cow::Owned(_)),
            _ => false,
        })
    };
    if !rows.iter().any(changed) {
        return Cow::Borrowed(rows);
    }
    let row = |r: &'r Row| -> Row {
        r.iter()
            .enumerate()
            .map(|(at, c)| match c {
                Cell::Text(t) => Cell::Text(held(at, t).into_owned()),
                other => other.clone(),
            })
            .collect()
    };
    Cow::Owned(rows.iter().map(row).collect())
}

/// The rows of `table` whose ids are among `ids` (comma-separated: one parameter, however
/// many).
pub(super) fn rows_by_id(
    store: &mut AnyStore,
    table: &Table,
    ids: &str,
) -> Result<Vec<Row>, StoreError> {
    let columns = column_list(table);
    let sqlite = format!(
        "SELECT {columns} FROM {} WHERE id IN (SELECT value FROM json_each('[' || ?1 || ']'))",
        table.name
    );
    let pg = format!(
        "SELECT {columns} FROM {} WHERE id = ANY(string_to_array($1, ',')::bigint[])",
        table.name
    );
    select(store, table, &sqlite, &pg, &[Cell::Text(ids.to_string())])
}

/// Whether two rows hold the same values, a number compared by value whatever its type (SQLite
/// may hold `1.0` where PostgreSQL holds `1`).
pub(super) fn same_row(a: &Row, b: &Row) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Cell::Int(i), Cell::Real(r)) | (Cell::Real(r), Cell::Int(i)) => *i as f64 == *r,
        _ => x == y,
    })
}

pub(super) fn describe(key: &[Cell]) -> String {
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

pub(super) fn column_list(table: &Table) -> String {
    let names: Vec<&str> = table.columns.iter().map(|c| c.0).collect();
    names.join(", ")
}

pub(super) fn from_sqlite(v: SqliteValue) -> Cell {
    match v {
        SqliteValue::Null => Cell::Null,
        SqliteValue::Integer(i) => Cell::Int(i),
        SqliteValue::Real(r) => Cell::Real(r),
        SqliteValue::Text(t) => Cell::Text(t),
        SqliteValue::Blob(b) => Cell::Text(String::from_utf8_lossy(&b).into_owned()),
    }
}

pub(super) fn to_sqlite(c: &Cell) -> SqliteValue {
    match c {
        Cell::Null => SqliteValue::Null,
        Cell::Int(i) => SqliteValue::Integer(*i),
        Cell::Real(r) => SqliteValue::Real(*r),
        Cell::Text(t) => SqliteValue::Text(t.clone()),
    }
}

#[cfg(feature = "postgres")]
pub(super) fn to_pg(c: &Cell) -> Box<dyn ToSql + Sync> {
    match c {
        Cell::Null => Box::new(None::<String>),
        Cell::Int(i) => Box::new(*i),
        Cell::Real(r) => Box::new(*r),
        Cell::Text(t) => Box::new(as_stored(t).into_owned()),
    }
}

/// A value for a BIGINT column: SQLite may hold a whole number as a real, or as text.
pub(super) fn as_int(c: &Cell) -> Option<i64> {
    match c {
        Cell::Null => None,
        Cell::Int(i) => Some(*i),
        Cell::Real(r) => Some(*r as i64),
        Cell::Text(t) => t.trim().parse().ok(),
    }
}

#[cfg(feature = "postgres")]
pub(super) fn as_real(c: &Cell) -> Option<f64> {
    match c {
        Cell::Null => None,
        Cell::Int(i) => Some(*i as f64),
        Cell::Real(r) => Some(*r),
        Cell::Text(t) => t.trim().parse().ok(),
    }
}

/// A value for a TEXT column, as PostgreSQL holds it (a NUL as U+FFFD: see `pg_text.rs`).
#[cfg(feature = "postgres")]
pub(super) fn as_text(c: &Cell) -> Option<String> {
    match c {
        Cell::Null => None,
        Cell::Int(i) => Some(i.to_string()),
        Cell::Real(r) => Some(r.to_string()),
        Cell::Text(t) => Some(as_stored(t).into_owned()),
    }
}
