//! A store of either kind: the SQLite file or the shared PostgreSQL database. Every job that
//! writes or reads one store (`gate`, `record`, `permit`, `mcp`, `db`, `tools health`,
//! `evaluate show`) holds an [`AnyStore`] and never learns which it is; `evaluate` reads its
//! shards through [`crate::shard::ShardReader`].

use std::path::PathBuf;

use crate::grants::{self, GrantEvent, Revoked, RevokedAll};
use crate::location::Location;
#[cfg(feature = "postgres")]
use crate::pg::PgStore;
use crate::runs::{self, Counted, LatestRun, ReferralCounts, StoredReask, StoredRecommendation};
use crate::{Options, Store, StoreError, StoreInfo, telemetry};
use metagate_core::enforce::{Count, CountKey};
use metagate_core::events::{AxisTable, Event};
use metagate_core::evolution::{Tallies, Window};
use metagate_core::grants::{Grant, GrantId};
use metagate_core::policy::file::PrereqEvidence;
use metagate_core::policy::thresholds::Thresholds;

/// An open store of either kind.
pub enum AnyStore {
    /// An SQLite file.
    Sqlite(Store),
    #[cfg(feature = "postgres")]
    /// A PostgreSQL database.
    Postgres(Box<PgStore>),
}

impl AnyStore {
    /// Opens the store for writing: an SQLite file is created when missing; a PostgreSQL
    /// database must exist, and its tables are created or migrated.
    pub fn open(location: &Location, options: Options) -> Result<AnyStore, StoreError> {
        match location {
            Location::File(path) => Store::open_with(path, options).map(AnyStore::Sqlite),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => {
                PgStore::connect(url, options).map(|s| AnyStore::Postgres(Box::new(s)))
            }
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::without_postgres(url)),
        }
    }

    /// Opens a store that must exist (readers: asking never creates a file). A PostgreSQL
    /// database is opened as for writing: the database itself is the operator's to make.
    pub fn open_existing(location: &Location, options: Options) -> Result<AnyStore, StoreError> {
        match location {
            Location::File(path) => Store::open_existing(path, options).map(AnyStore::Sqlite),
            Location::Postgres(_) => AnyStore::open(location, options),
        }
    }

    /// Where the store is, as messages and suggestions name it (a URL without its password).
    pub fn place(&self) -> PathBuf {
        match self {
            AnyStore::Sqlite(store) => store.path().to_path_buf(),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => PathBuf::from(pg.url().to_string()),
        }
    }

    /// [`AnyStore::place`], a file's made absolute: what a `permit --db` suggestion names.
    pub fn absolute_place(&self) -> PathBuf {
        match self {
            AnyStore::Sqlite(store) => {
                std::path::absolute(store.path()).unwrap_or_else(|_| store.path().to_path_buf())
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(_) => self.place(),
        }
    }

    /// What `db info` shows.
    pub fn info(&mut self) -> Result<StoreInfo, StoreError> {
        match self {
            AnyStore::Sqlite(store) => store.info(),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.info(),
        }
    }

    /// See [`Store::ensure_limit_indexes`].
    pub fn ensure_limit_indexes(&mut self, loop_breaker: bool) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(store) => store.ensure_limit_indexes(loop_breaker),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.ensure_limit_indexes(loop_breaker),
        }
    }

    /// Appends events in one transaction: all of them or none.
    pub fn insert_events(&mut self, events: &[Event]) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(store) => telemetry::insert_events(store, events),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.insert_events(events),
        }
    }

    /// Makes an empty stage for events, outside the store (see [`telemetry::stage`]).
    pub fn stage(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(store) => telemetry::stage(store.conn_ref()).map_err(|e| store.err(e)),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.stage(),
        }
    }

    /// Appends events to the stage.
    pub fn stage_events(&mut self, events: &[Event]) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(store) => {
                telemetry::stage_events(store.conn_ref(), events).map_err(|e| store.err(e))
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.stage_events(events),
        }
    }

    /// Copies the staged events into the store in one transaction.
    pub fn store_staged(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(store) => store.immediate(|tx| telemetry::store_staged(tx)),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.store_staged(),
        }
    }

    /// Removes the stage.
    pub fn unstage(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(store) => {
                telemetry::unstage(store.conn_ref()).map_err(|e| store.err(e))
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.unstage(),
        }
    }

    /// See [`telemetry::count`].
    pub fn count(
        &mut self,
        key: &CountKey,
        since_ms: Option<i64>,
        cap: u64,
    ) -> Result<Count, StoreError> {
        match self {
            AnyStore::Sqlite(store) => telemetry::count(store, key, since_ms, cap),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.count(key, since_ms, cap),
        }
    }

    /// See [`telemetry::completed`].
    pub fn completed(
        &mut self,
        session: &str,
        tool: &str,
        evidence: PrereqEvidence,
    ) -> Result<bool, StoreError> {
        match self {
            AnyStore::Sqlite(store) => telemetry::completed(store, session, tool, evidence),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.completed(session, tool, evidence),
        }
    }

    /// See [`grants::candidates`].
    pub fn grant_candidates(
        &mut self,
        capability: &str,
        now_ms: i64,
    ) -> Result<Vec<Grant>, StoreError> {
        match self {
            AnyStore::Sqlite(store) => {
                grants::candidates(store.conn_ref(), capability, now_ms).map_err(|e| store.err(e))
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.grant_candidates(capability, now_ms),
        }
    }

    /// See [`grants::insert`].
    pub fn insert_grant(&mut self, g: &Grant) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(store) => grants::insert(store, g),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.insert_grant(g),
        }
    }

    /// See [`grants::list`].
    pub fn grants(&mut self, all: bool, now_ms: i64) -> Result<Vec<Grant>, StoreError> {
        match self {
            AnyStore::Sqlite(store) => grants::list(store, all, now_ms),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.grants(all, now_ms),
        }
    }

    /// See [`grants::events`].
    pub fn grant_events(&mut self) -> Result<Vec<GrantEvent>, StoreError> {
        match self {
            AnyStore::Sqlite(store) => grants::events(store),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.grant_events(),
        }
    }

    /// See [`grants::revoke`].
    pub fn revoke_grant(
        &mut self,
        id: &GrantId,
        now_ms: i64,
        actor: Option<&str>,
    ) -> Result<Revoked, StoreError> {
        match self {
            AnyStore::Sqlite(store) => grants::revoke(store, id, now_ms, actor),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.revoke_grant(id, now_ms, actor),
        }
    }

    /// See [`grants::revoke_all`].
    pub fn revoke_all_grants(
        &mut self,
        now_ms: i64,
        actor: Option<&str>,
    ) -> Result<RevokedAll, StoreError> {
        match self {
            AnyStore::Sqlite(store) => grants::revoke_all(store, now_ms, actor),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.revoke_all_grants(now_ms, actor),
        }
    }
}

impl AnyStore {
    /// See [`runs::latest`].
    pub fn latest_run(&mut self, until_ms: i64) -> Result<Option<LatestRun>, StoreError> {
        match self {
            AnyStore::Sqlite(store) => {
                runs::latest(store.conn_ref(), until_ms).map_err(|e| store.err(e))
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.latest_run(until_ms),
        }
    }

    /// See [`runs::any_run`].
    pub fn any_run(&mut self) -> Result<bool, StoreError> {
        match self {
            AnyStore::Sqlite(store) => runs::any_run(store.conn_ref()).map_err(|e| store.err(e)),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.any_run(),
        }
    }

    /// See [`runs::live`].
    pub fn live(
        &mut self,
        counted: &Counted,
        window: &Window,
        t: &Thresholds,
        axes: &AxisTable,
    ) -> Result<Tallies, StoreError> {
        match self {
            AnyStore::Sqlite(store) => {
                runs::live(store.conn_ref(), counted, window, t, axes).map_err(|e| store.err(e))
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.live(counted, window, t, axes),
        }
    }

    /// See [`runs::recent_referrals`].
    pub fn recent_referrals(
        &mut self,
        from_ms: i64,
        until_ms: i64,
        up_to: i64,
    ) -> Result<ReferralCounts, StoreError> {
        match self {
            AnyStore::Sqlite(store) => {
                runs::recent_referrals(store.conn_ref(), from_ms, until_ms, up_to)
                    .map_err(|e| store.err(e))
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.recent_referrals(from_ms, until_ms, up_to),
        }
    }

    /// See [`runs::show`].
    pub fn show_recommendation(
        &mut self,
        id: &str,
    ) -> Result<Option<(StoredRecommendation, Vec<StoredReask>)>, StoreError> {
        match self {
            AnyStore::Sqlite(store) => runs::show(store.conn_ref(), id).map_err(|e| store.err(e)),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.show_recommendation(id),
        }
    }

    /// See [`runs::set_status`].
    pub fn set_recommendation_status(
        &mut self,
        id: &str,
        status: &str,
    ) -> Result<Option<(String, String, String)>, StoreError> {
        match self {
            AnyStore::Sqlite(store) => runs::set_status(store, id, status),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.set_recommendation_status(id, status),
        }
    }
}

impl AnyStore {
    /// Runs one statement taking integer parameters, written `$1`, `$2`… in the order they
    /// first appear (SQLite numbers them so too), in a transaction of its own; returns the
    /// rows it changed.
    pub(crate) fn execute_ints(&mut self, sql: &str, params: &[i64]) -> Result<u64, StoreError> {
        match self {
            AnyStore::Sqlite(store) => store
                .immediate(|tx| tx.execute(sql, rusqlite::params_from_iter(params)))
                .map(|n| n as u64),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => {
                let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    params.iter().map(|p| p as _).collect();
                let done = pg.client().execute(sql, &params);
                done.map_err(|e| pg.err(e))
            }
        }
    }

    /// The first row of a query of integer columns with integer parameters (see
    /// [`AnyStore::execute_ints`]), `None` when there is none.
    pub(crate) fn query_ints(
        &mut self,
        sql: &str,
        params: &[i64],
    ) -> Result<Option<Vec<Option<i64>>>, StoreError> {
        match self {
            AnyStore::Sqlite(store) => {
                let found =
                    store
                        .conn_ref()
                        .query_row(sql, rusqlite::params_from_iter(params), |r| {
                            (0..r.as_ref().column_count())
                                .map(|i| r.get::<_, Option<i64>>(i))
                                .collect()
                        });
                match found {
                    Ok(row) => Ok(Some(row)),
                    Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
                    Err(e) => Err(store.err(e)),
                }
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => {
                let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    params.iter().map(|p| p as _).collect();
                let found = pg.client().query_opt(sql, &params).and_then(|row| {
                    row.map(|r| {
                        (0..r.len())
                            .map(|i| r.try_get::<_, Option<i64>>(i))
                            .collect()
                    })
                    .transpose()
                });
                found.map_err(|e| pg.err(e))
            }
        }
    }
}

impl From<Store> for AnyStore {
    fn from(store: Store) -> AnyStore {
        AnyStore::Sqlite(store)
    }
}

#[cfg(test)]
mod tests {
    //! The store's behaviour that `gate`, `record`, `permit` and `db info` rely on, checked on both
    //! backends by the same tests: each test runs once on a new SQLite file and once on a new
    //! database of the test PostgreSQL server (`tests/support/postgres.rs`).

    use super::*;
    use crate::decisions::DecisionLog;
    use crate::telemetry::{DecisionBatch, DecisionRow};
    use metagate_core::enforce::{Counts, GrantLookup};
    use metagate_core::events::{AxisTable, parse};
    use metagate_core::grants::ScopeEntry;

    #[derive(Debug, Clone)]
    enum Backend {
        Sqlite,
        /// A new database's URL.
        Postgres(String),
    }

    /// SQLite always; PostgreSQL where the test server can run (see `crate::test_database`).
    fn backends() -> Vec<Backend> {
        let postgres = crate::test_database().map(Backend::Postgres);
        [Backend::Sqlite].into_iter().chain(postgres).collect()
    }

    /// A new, empty store of `backend`, and a way to open it again (another process's view).
    struct Fresh {
        location: Location,
        _dir: tempfile::TempDir,
    }

    impl Fresh {
        fn new(backend: Backend) -> Fresh {
            let dir = tempfile::tempdir().unwrap();
            let location = match backend {
                Backend::Sqlite => Location::File(dir.path().join("t.db")),
                Backend::Postgres(url) => Location::postgres(&url),
            };
            Fresh {
                location,
                _dir: dir,
            }
        }

        fn open(&self) -> AnyStore {
            AnyStore::open(&self.location, Options::default()).unwrap()
        }
    }

    fn row(ts_ms: i64, caller: &str, verdict: &'static str) -> DecisionRow {
        DecisionRow {
            ts_ms,
            session: Some("s".into()),
            caller: Some(caller.into()),
            intent: None,
            tool: Some("t".into()),
            method: None,
            shape: Some("plain"),
            verdict,
            category: None,
            corrections: "[]".into(),
            warnings: "[]".into(),
            args: Some("{}".into()),
            fingerprint: Some(7),
            latency_us: 3,
            call_id: None,
        }
    }

    fn counts(store: &mut AnyStore) -> Vec<i64> {
        store
            .info()
            .unwrap()
            .tables
            .iter()
            .map(|(_, n)| *n)
            .collect()
    }

    #[test]
    fn a_new_store_is_migrated_once_and_empty() {
        for backend in backends() {
            let fresh = Fresh::new(backend.clone());
            let info = fresh.open().info().unwrap();
            assert_eq!(info.schema_version, crate::SCHEMA_VERSION, "{backend:?}");
            assert!(info.tables.iter().all(|(_, n)| *n == 0), "{backend:?}");
            assert_eq!((info.first_ms, info.last_ms), (None, None));
            // Opening again finds it current.
            assert_eq!(
                fresh.open().info().unwrap().schema_version,
                crate::SCHEMA_VERSION
            );
        }
    }

    #[test]
    fn decisions_are_committed_in_groups_with_their_ids() {
        for backend in backends() {
            let fresh = Fresh::new(backend.clone());
            let mut rec = DecisionBatch::new(fresh.open());
            for i in 0..10 {
                rec.push(row(i, "a", "pass"));
            }
            assert_eq!(rec.commit().unwrap(), 10, "{backend:?}");
            assert_eq!(rec.commit().unwrap(), 0);
            assert_eq!(rec.last_decision_id(), Some(10), "{backend:?}");
            let info = fresh.open().info().unwrap();
            assert_eq!(info.tables[0], ("decisions".to_string(), 10), "{backend:?}");
            assert_eq!((info.first_ms, info.last_ms), (Some(0), Some(9)));
        }
    }

    #[test]
    fn events_land_in_their_tables_and_strict_stages_keep_them_out_until_stored() {
        let axes = AxisTable::default();
        let events: Vec<metagate_core::events::Event> = [
            r#"{"type":"outcome","tool":"a","status":"ok","session":"s"}"#,
            r#"{"type":"ask","session":"s","user":"u","text":"hi"}"#,
            r#"{"type":"correction","tool":"a"}"#,
        ]
        .iter()
        .map(|l| parse(l, 5, &axes).unwrap().0)
        .collect();
        for backend in backends() {
            let fresh = Fresh::new(backend.clone());
            let mut store = fresh.open();
            store.insert_events(&events).unwrap();
            assert_eq!(counts(&mut store), [0, 1, 1, 1, 0, 0, 0, 0], "{backend:?}");
            store.stage().unwrap();
            store.stage_events(&events).unwrap();
            assert_eq!(
                counts(&mut fresh.open()),
                [0, 1, 1, 1, 0, 0, 0, 0],
                "{backend:?}"
            );
            store.store_staged().unwrap();
            store.unstage().unwrap();
            assert_eq!(
                counts(&mut fresh.open()),
                [0, 2, 2, 2, 0, 0, 0, 0],
                "{backend:?}"
            );
            assert!(
                store.completed("s", "a", PrereqEvidence::Outcome).unwrap(),
                "{backend:?}"
            );
            assert!(!store.completed("s", "b", PrereqEvidence::Decision).unwrap());
        }
    }

    /// The guarantee limits rest on: a group that counted holds the lock until it commits, so a
    /// second writer counting at the same moment waits, then sees the first one's calls.
    #[test]
    fn a_count_taken_under_the_lock_sees_every_group_committed_before() {
        for backend in backends() {
            let fresh = Fresh::new(backend.clone());
            let mut first = DecisionLog::new(fresh.open(), true, true).unwrap();
            let key = CountKey::Caller("a".into());
            assert_eq!(first.count(&key, Some(0), 100, 10).unwrap().n, 0);
            first.push(row(50, "a", "pass"), None);
            first.push(row(51, "a", "rejected"), None);
            // The pending call counts before its commit; the rejected one never does.
            assert_eq!(
                first.count(&key, Some(0), 100, 10).unwrap().n,
                1,
                "{backend:?}"
            );
            let location = fresh.location.clone();
            let second = std::thread::spawn(move || {
                let store = AnyStore::open(&location, Options::default()).unwrap();
                let mut second = DecisionLog::new(store, true, true).unwrap();
                let seen = second
                    .count(&CountKey::Caller("a".into()), Some(0), 100, 10)
                    .unwrap();
                second.commit().unwrap();
                seen.n
            });
            // The second writer is waiting for the lock this group holds.
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert!(
                !second.is_finished(),
                "{backend:?}: counted without the lock"
            );
            first.commit().unwrap();
            assert_eq!(second.join().unwrap(), 1, "{backend:?}");
            let loop_key = CountKey::Fingerprint {
                fingerprint: 7,
                session: Some("s".into()),
                caller: None,
            };
            assert_eq!(first.count(&loop_key, None, 100, 10).unwrap().n, 1);
            first.commit().unwrap();
        }
    }

    /// PostgreSQL's text cannot hold U+0000: it stores U+FFFD in its place, and every look-up
    /// replaces it alike, so what was written with a NUL is found and counted as it is in
    /// SQLite (a caller limited to 1 a minute sees its first call; the second is refused).
    #[test]
    fn text_holding_a_nul_is_written_and_found_again() {
        let nul_row = || DecisionRow {
            session: Some("s\0".into()),
            tool: Some("t\0".into()),
            ..row(50, "x\0", "pass")
        };
        for backend in backends() {
            let fresh = Fresh::new(backend.clone());
            let mut log = DecisionLog::new(fresh.open(), true, true).unwrap();
            let by_caller = CountKey::Caller("x\0".into());
            assert_eq!(log.count(&by_caller, Some(0), 100, 1).unwrap().n, 0);
            log.push(nul_row(), None);
            log.commit().unwrap();
            // Another process's view: counted from the store, not from the pending group.
            let mut log = DecisionLog::new(fresh.open(), true, true).unwrap();
            for key in [
                by_caller.clone(),
                CountKey::Tool("t\0".into()),
                CountKey::Session("s\0".into()),
                CountKey::Fingerprint {
                    fingerprint: 7,
                    session: Some("s\0".into()),
                    caller: None,
                },
            ] {
                assert_eq!(
                    log.count(&key, Some(0), 100, 1).unwrap().n,
                    1,
                    "{backend:?}: {key:?}"
                );
            }
            log.commit().unwrap();
            let mut store = fresh.open();
            let axes = AxisTable::default();
            let (outcome, _) = parse(
                r#"{"type":"outcome","tool":"u\u0000","status":"ok","session":"s\u0000","error_message":"m\u0000"}"#,
                5,
                &axes,
            )
            .unwrap();
            store.insert_events(&[outcome]).unwrap();
            assert!(
                store
                    .completed("s\0", "t\0", PrereqEvidence::Decision)
                    .unwrap(),
                "{backend:?}"
            );
            for evidence in [PrereqEvidence::Decision, PrereqEvidence::Outcome] {
                assert!(
                    store.completed("s\0", "u\0", evidence).unwrap(),
                    "{backend:?}: {evidence:?}"
                );
            }
            store
                .insert_grant(&Grant {
                    id: GrantId::from_bytes([1; 16]),
                    capability: "c\0".into(),
                    scope: Vec::new(),
                    unreadable: None,
                    session: Some("s\0".into()),
                    granted_at_ms: 0,
                    expires_at_ms: 1000,
                    revoked_at_ms: None,
                    granted_by: Some("op\0".into()),
                    reason: Some("why\0".into()),
                    mac: None,
                    forged: false,
                })
                .unwrap();
            assert_eq!(
                store.grant_candidates("c\0", 10).unwrap().len(),
                1,
                "{backend:?}"
            );
        }
    }

    #[test]
    fn grants_are_stored_found_listed_and_revoked() {
        for backend in backends() {
            let fresh = Fresh::new(backend.clone());
            let mut store = fresh.open();
            let grant = |n: u8, granted_at_ms: i64| Grant {
                id: GrantId::from_bytes([n; 16]),
                capability: "system_execute".into(),
                scope: vec![ScopeEntry::Host("example.com".into())],
                unreadable: None,
                session: Some("s".into()),
                granted_at_ms,
                expires_at_ms: granted_at_ms + 1000,
                revoked_at_ms: None,
                granted_by: Some("op".into()),
                reason: Some("why".into()),
                mac: Some(format!("{n:064}")),
                forged: false,
            };
            store.insert_grant(&grant(1, 100)).unwrap();
            store.insert_grant(&grant(2, 200)).unwrap();
            let mut log = DecisionLog::new(fresh.open(), false, false).unwrap();
            let found = log.grants("system_execute", 500).unwrap();
            assert_eq!(found.len(), 2, "{backend:?}");
            assert_eq!(found[0], grant(2, 200), "{backend:?}");
            assert_eq!(store.grants(false, 1150).unwrap().len(), 1, "{backend:?}");
            let one = GrantId::from_bytes([1; 16]);
            assert!(matches!(
                store.revoke_grant(&one, 300, Some("op")).unwrap(),
                Revoked::Done(_)
            ));
            assert!(matches!(
                store.revoke_grant(&one, 301, Some("op")).unwrap(),
                Revoked::Already(_)
            ));
            assert!(matches!(
                store
                    .revoke_grant(&GrantId::from_bytes([9; 16]), 301, None)
                    .unwrap(),
                Revoked::Unknown
            ));
            // The seal is kept as stored, and revoking clears it.
            let listed = store.grants(true, 350).unwrap();
            let seal_of = |n: u8| {
                listed
                    .iter()
                    .find(|g| g.id == GrantId::from_bytes([n; 16]))
                    .and_then(|g| g.mac.clone())
            };
            assert_eq!(seal_of(2), Some(format!("{:064}", 2)), "{backend:?}");
            assert_eq!(seal_of(1), None, "{backend:?}");
            let all = store.revoke_all_grants(400, None).unwrap();
            assert_eq!((all.live.len(), all.expired.len()), (1, 0), "{backend:?}");
            assert!(store.grants(false, 500).unwrap().is_empty());
            let events: Vec<&str> = store
                .grant_events()
                .unwrap()
                .iter()
                .map(|e| e.event)
                .collect();
            assert_eq!(
                events,
                ["granted", "granted", "revoked", "revoked"],
                "{backend:?}"
            );
        }
    }
}
