//! One transaction of either store, in which a copy writes a batch of rows and the runs that
//! say where they came from: a batch is in the target whole, with its origins, or not at all.

#[cfg(feature = "postgres")]
use postgres::types::ToSql;
use rusqlite::TransactionBehavior;
use rusqlite::types::Value as SqliteValue;

use super::cells::{Cell, Row, as_int, column_list, to_sqlite};
#[cfg(feature = "postgres")]
use super::cells::{as_real, as_text};
use super::provenance::Run;
#[cfg(feature = "postgres")]
use super::tables::Kind::{Int, Real, Text};
use super::tables::Table;
use crate::StoreError;
use crate::any::AnyStore;

/// An error of the store being written, mapped to a [`StoreError`] once the transaction ends.
pub(super) enum DbError {
    Sqlite(rusqlite::Error),
    #[cfg(feature = "postgres")]
    Postgres(postgres::Error),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

#[cfg(feature = "postgres")]
impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> Self {
        DbError::Postgres(e)
    }
}

/// The open transaction.
pub(super) enum Writer<'a, 'c> {
    Sqlite(&'a rusqlite::Transaction<'c>),
    #[cfg(feature = "postgres")]
    Postgres(&'a mut postgres::Transaction<'c>),
}

/// Runs `work` in one transaction of `store` (SQLite's write lock taken up front) and commits
/// it; any error rolls everything back.
pub(super) fn in_transaction<T>(
    store: &mut AnyStore,
    work: impl FnOnce(&mut Writer<'_, '_>) -> Result<T, DbError>,
) -> Result<T, StoreError> {
    match store {
        AnyStore::Sqlite(s) => {
            let done = (|| {
                let tx = s
                    .conn()
                    .transaction_with_behavior(TransactionBehavior::Immediate)?;
                let out = work(&mut Writer::Sqlite(&tx))?;
                tx.commit()?;
                Ok(out)
            })();
            done.map_err(|e| match e {
                DbError::Sqlite(e) => s.err(e),
                // Only the SQLite writer runs here.
                #[cfg(feature = "postgres")]
                DbError::Postgres(e) => StoreError::Postgres {
                    url: s.path().display().to_string(),
                    why: e.to_string(),
                },
            })
        }
        #[cfg(feature = "postgres")]
        AnyStore::Postgres(pg) => {
            let done = (|| {
                let mut tx = pg.client().transaction()?;
                let out = work(&mut Writer::Postgres(&mut tx))?;
                tx.commit()?;
                Ok(out)
            })();
            done.map_err(|e| match e {
                DbError::Postgres(e) => pg.err(e),
                DbError::Sqlite(e) => StoreError::Postgres {
                    url: pg.url().to_string(),
                    why: e.to_string(),
                },
            })
        }
    }
}

impl Writer<'_, '_> {
    /// Inserts `rows` into `table`, ending the statement with `on_conflict` (empty: a key
    /// taken is an error).
    pub(super) fn insert_rows(
        &mut self,
        table: &Table,
        rows: &[Row],
        on_conflict: &str,
    ) -> Result<(), DbError> {
        let columns = column_list(table);
        match self {
            Writer::Sqlite(tx) => {
                let marks: Vec<String> =
                    (1..=table.columns.len()).map(|i| format!("?{i}")).collect();
                let sql = format!(
                    "INSERT INTO {} ({columns}) VALUES ({}) {on_conflict}",
                    table.name,
                    marks.join(", ")
                );
                let mut insert = tx.prepare(&sql)?;
                for row in rows {
                    let values: Vec<SqliteValue> = row.iter().map(to_sqlite).collect();
                    insert.execute(rusqlite::params_from_iter(values.iter()))?;
                }
            }
            #[cfg(feature = "postgres")]
            Writer::Postgres(tx) => {
                // One statement for the batch: each column sent as an array and unnested.
                let arrays: Vec<Box<dyn ToSql + Sync>> = (0..table.columns.len())
                    .map(|i| column_array(table, rows, i))
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
                tx.execute(&sql, &params)?;
            }
        }
        Ok(())
    }

    /// `n` ids no row of `table` holds, each larger than every id it holds or has handed out,
    /// in ascending order.
    pub(super) fn new_ids(&mut self, table: &str, n: usize) -> Result<Vec<i64>, DbError> {
        match self {
            Writer::Sqlite(tx) => {
                // The write lock is held: nobody takes one of these before the commit.
                let max: i64 = tx.query_row(
                    &format!("SELECT coalesce(max(id), 0) FROM {table}"),
                    [],
                    |r| r.get(0),
                )?;
                Ok((1..=n as i64).map(|i| max + i).collect())
            }
            #[cfg(feature = "postgres")]
            Writer::Postgres(tx) => {
                let n = n as i64;
                let rows = tx.query(
                    &format!(
                        "SELECT nextval(pg_get_serial_sequence('{table}', 'id')) \
                         FROM generate_series(1, $1::bigint)"
                    ),
                    &[&n],
                )?;
                let mut ids: Vec<i64> = rows
                    .iter()
                    .map(|r| r.try_get(0))
                    .collect::<Result<_, _>>()?;
                ids.sort_unstable();
                Ok(ids)
            }
        }
    }

    /// Records that the rows `runs` name came into `table` from their origin.
    pub(super) fn insert_runs(&mut self, table: &str, runs: &[Run]) -> Result<(), DbError> {
        let sql = |mark: char| {
            format!(
                "INSERT INTO copied_ranges (tbl, origin, origin_from, origin_to, local_from) \
                 VALUES ({mark}1, {mark}2, {mark}3, {mark}4, {mark}5)"
            )
        };
        match self {
            Writer::Sqlite(tx) => {
                let mut insert = tx.prepare(&sql('?'))?;
                for run in runs {
                    insert.execute(rusqlite::params![
                        table,
                        run.origin,
                        run.origin_from,
                        run.origin_to,
                        run.local_from
                    ])?;
                }
            }
            #[cfg(feature = "postgres")]
            Writer::Postgres(tx) => {
                let insert = tx.prepare(&sql('$'))?;
                for run in runs {
                    tx.execute(
                        &insert,
                        &[
                            &table,
                            &run.origin,
                            &run.origin_from,
                            &run.origin_to,
                            &run.local_from,
                        ],
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// Column `i` of `rows`, as PostgreSQL takes an array of the column's type.
#[cfg(feature = "postgres")]
fn column_array(table: &Table, rows: &[Row], i: usize) -> Box<dyn ToSql + Sync> {
    let cells = rows.iter().map(|r| &r[i]);
    match table.columns[i].1 {
        Int => Box::new(cells.map(as_int).collect::<Vec<Option<i64>>>()),
        Real => Box::new(cells.map(as_real).collect::<Vec<Option<f64>>>()),
        Text => Box::new(cells.map(as_text).collect::<Vec<Option<String>>>()),
    }
}

/// A reference column's value in the target: `map` of the id it holds, or NULL when it names a
/// row the target does not have.
pub(super) fn mapped(cell: &Cell, map: impl Fn(i64) -> Option<i64>) -> Cell {
    as_int(cell).and_then(map).map_or(Cell::Null, Cell::Int)
}
