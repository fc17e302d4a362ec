//! Where the rows of a store came from: each store has a random identity, made by its first
//! migration, and a row's origin is the store that first wrote it and the id it had there.
//! `db copy` records the origin of every history row it brings in, as runs of consecutive ids,
//! so a row that travels on (a host's history merged into a fleet store, the fleet store
//! copied on, merged back) is known wherever it arrives and never added twice.

use std::collections::{BTreeMap, HashMap};

use crate::StoreError;
use crate::any::AnyStore;

/// Rows `origin_from..=origin_to` of the store `origin` are the rows from `local_from` on here,
/// in the same order, one id apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) origin: String,
    pub(super) origin_from: i64,
    pub(super) origin_to: i64,
    pub(super) local_from: i64,
}

impl Run {
    fn local_to(&self) -> i64 {
        self.local_from + (self.origin_to - self.origin_from)
    }
}

/// `(origin, origin id, local id)` triples, in the order given, joined into runs wherever
/// both ids go on one apart under the same origin.
pub(super) fn runs<'a>(rows: impl IntoIterator<Item = (&'a str, i64, i64)>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (origin, origin_id, local_id) in rows {
        if let Some(last) = runs.last_mut()
            && last.origin == origin
            && last.origin_to.checked_add(1) == Some(origin_id)
            && last.local_to().checked_add(1) == Some(local_id)
        {
            last.origin_to = origin_id;
            continue;
        }
        runs.push(Run {
            origin: origin.to_string(),
            origin_from: origin_id,
            origin_to: origin_id,
            local_from: local_id,
        });
    }
    runs
}

/// One table's runs in one store, looked up either way.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    runs: Vec<Run>,
    by_local: BTreeMap<i64, usize>,
    by_origin: HashMap<String, BTreeMap<i64, usize>>,
}

impl Ledger {
    pub(super) fn add(&mut self, run: Run) {
        let at = self.runs.len();
        self.by_local.insert(run.local_from, at);
        self.by_origin
            .entry(run.origin.clone())
            .or_default()
            .insert(run.origin_from, at);
        self.runs.push(run);
    }

    /// The origin of this store's row `id`: a run's, or this store itself (`own`).
    pub(super) fn origin_of<'a>(&'a self, own: &'a str, id: i64) -> (&'a str, i64) {
        let held = self.by_local.range(..=id).next_back();
        match held.map(|(_, &at)| &self.runs[at]) {
            Some(run) if id <= run.local_to() => {
                (&run.origin, run.origin_from + (id - run.local_from))
            }
            _ => (own, id),
        }
    }

    /// The id here of row `id` of the store `origin`, when a copy brought it.
    pub(super) fn local_of(&self, origin: &str, id: i64) -> Option<i64> {
        let (_, &at) = self.by_origin.get(origin)?.range(..=id).next_back()?;
        let run = &self.runs[at];
        (id <= run.origin_to).then(|| run.local_from + (id - run.origin_from))
    }
}

/// The store's identity.
pub(super) fn identity(store: &mut AnyStore) -> Result<String, StoreError> {
    const SQL: &str = "SELECT id FROM store_identity";
    match store {
        AnyStore::Sqlite(s) => {
            let read = s.conn_ref().query_row(SQL, [], |r| r.get(0));
            read.map_err(|e| s.err(e))
        }
        #[cfg(feature = "postgres")]
        AnyStore::Postgres(pg) => {
            let read = pg.client().query_one(SQL, &[]);
            read.and_then(|r| r.try_get(0)).map_err(|e| pg.err(e))
        }
    }
}

/// Every run recorded for `table` in the store.
pub(super) fn ledger(store: &mut AnyStore, table: &str) -> Result<Ledger, StoreError> {
    let mut ledger = Ledger::default();
    let sql = |mark: &str| {
        format!(
            "SELECT origin, origin_from, origin_to, local_from FROM copied_ranges \
             WHERE tbl = {mark} ORDER BY local_from"
        )
    };
    match store {
        AnyStore::Sqlite(s) => {
            let read = || -> rusqlite::Result<Vec<Run>> {
                let mut statement = s.conn_ref().prepare(&sql("?1"))?;
                let rows = statement.query_map([table], |r| {
                    Ok(Run {
                        origin: r.get(0)?,
                        origin_from: r.get(1)?,
                        origin_to: r.get(2)?,
                        local_from: r.get(3)?,
                    })
                })?;
                rows.collect()
            };
            read()
                .map_err(|e| s.err(e))?
                .into_iter()
                .for_each(|run| ledger.add(run));
        }
        #[cfg(feature = "postgres")]
        AnyStore::Postgres(pg) => {
            let mut read = || -> Result<Vec<Run>, postgres::Error> {
                let rows = pg.client().query(&sql("$1"), &[&table])?;
                rows.iter()
                    .map(|r| {
                        Ok(Run {
                            origin: r.try_get(0)?,
                            origin_from: r.try_get(1)?,
                            origin_to: r.try_get(2)?,
                            local_from: r.try_get(3)?,
                        })
                    })
                    .collect()
            };
            read()
                .map_err(|e| pg.err(e))?
                .into_iter()
                .for_each(|run| ledger.add(run));
        }
    }
    Ok(ledger)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn consecutive_ids_of_one_origin_make_one_run() {
        let joined = runs([
            ("a", 1, 10),
            ("a", 2, 11),
            ("a", 4, 12),
            ("b", 5, 13),
            ("b", 6, 14),
        ]);
        let spans: Vec<(&str, i64, i64, i64)> = joined
            .iter()
            .map(|r| (r.origin.as_str(), r.origin_from, r.origin_to, r.local_from))
            .collect();
        assert_eq!(spans, [("a", 1, 2, 10), ("a", 4, 4, 12), ("b", 5, 6, 13)]);
    }

    #[test]
    fn a_row_outside_every_run_is_the_stores_own() {
        let mut ledger = Ledger::default();
        runs([("a", 1, 10), ("a", 2, 11)])
            .into_iter()
            .for_each(|r| ledger.add(r));
        assert_eq!(ledger.origin_of("me", 9), ("me", 9));
        assert_eq!(ledger.origin_of("me", 11), ("a", 2));
        assert_eq!(ledger.origin_of("me", 12), ("me", 12));
        assert_eq!(ledger.local_of("a", 3), None);
        assert_eq!(ledger.local_of("b", 1), None);
    }

    proptest! {
        /// Joined into runs and looked up, every triple reads back both ways, and an id no
        /// triple names is found in no run.
        #[test]
        fn runs_read_back_as_the_rows_they_join(
            steps in prop::collection::vec((0..3usize, 1..3i64, 1..3i64), 1..200),
        ) {
            let origins = ["a", "b", "c"];
            let mut triples = Vec::new();
            let mut next = [0i64; 3];
            let mut local = 0i64;
            for (o, origin_step, local_step) in steps {
                next[o] += origin_step;
                local += local_step;
                triples.push((origins[o], next[o], local));
            }
            let mut ledger = Ledger::default();
            runs(triples.iter().copied()).into_iter().for_each(|r| ledger.add(r));
            for &(origin, id, at) in &triples {
                prop_assert_eq!(ledger.origin_of("me", at), (origin, id));
                prop_assert_eq!(ledger.local_of(origin, id), Some(at));
            }
            for gap in 1..=local {
                if !triples.iter().any(|t| t.2 == gap) {
                    prop_assert_eq!(ledger.origin_of("me", gap), ("me", gap));
                }
            }
        }
    }
}
