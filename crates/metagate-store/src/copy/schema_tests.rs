//! The column lists the code writes, tied to the schema the migrations make: a migration that
//! adds a column fails here until every insert list and `db copy` account for it.

use super::tables::TABLES;
use crate::Store;
use crate::columns::{ASK, CORRECTION, DECISION, GRANT, GRANT_EVENT, OUTCOME, names};
use std::collections::BTreeSet;

/// The columns of `table` in a freshly migrated SQLite store, in order.
fn migrated_columns(store: &Store, table: &str) -> Vec<String> {
    let mut stmt = store
        .conn_ref()
        .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
        .unwrap();
    stmt.query_map([table], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Every table the migrations make, but SQLite's own.
fn migrated_tables(store: &Store) -> BTreeSet<String> {
    let mut stmt = store
        .conn_ref()
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn every_insert_list_fills_every_column_its_table_has() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("schema.db")).unwrap();
    // Per list: its table, and the columns other statements fill (named, so a new column is a
    // decision, never an oversight).
    let lists: [(&str, &str, &[&str]); 6] = [
        ("decisions", DECISION, &["id"]),
        ("outcomes", OUTCOME, &["id"]),
        ("asks", ASK, &["id"]),
        // evaluate's re-ask blame writes the rest (`runs.rs`, `pg_runs.rs`).
        (
            "user_corrections",
            CORRECTION,
            &[
                "id",
                "reask_ask_id",
                "corrects_ask_id",
                "blamed_decision_id",
                "blamed_outcome_id",
                "found_by_run",
            ],
        ),
        ("grants", GRANT, &[]),
        ("grant_events", GRANT_EVENT, &["id"]),
    ];
    for (table, list, others) in lists {
        let want: BTreeSet<String> = migrated_columns(&store, table).into_iter().collect();
        let mut got: BTreeSet<String> = names(list).into_iter().collect();
        let listed = got.len();
        got.extend(set(others));
        assert_eq!(got, want, "{table}: the insert list and the schema differ");
        assert_eq!(
            listed + others.len(),
            want.len(),
            "{table}: a column is both listed and filled elsewhere"
        );
    }
}

#[test]
fn db_copy_names_every_table_and_column_the_migrations_make() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("schema.db")).unwrap();
    // A store's own provenance, which a copy writes of itself rather than copies
    // (`provenance.rs`).
    let own = set(&["store_identity", "copied_ranges"]);
    let copied: BTreeSet<String> = TABLES.iter().map(|t| t.name.to_owned()).collect();
    let made: BTreeSet<String> = migrated_tables(&store).difference(&own).cloned().collect();
    assert_eq!(
        copied, made,
        "db copy's tables and the migrated ones differ"
    );
    for t in TABLES {
        // `"user"` is quoted there for PostgreSQL.
        let listed: Vec<&str> = t.columns.iter().map(|(c, _)| c.trim_matches('"')).collect();
        assert_eq!(
            listed,
            migrated_columns(&store, t.name),
            "{}: db copy's columns and the migrated ones differ (in order)",
            t.name
        );
    }
}
