//! The PostgreSQL store: one database shared by every metagate of a fleet (docs/postgres.md).
//! The same tables as the SQLite file, in PostgreSQL's dialect (`migrations/postgres/`), versioned the
//! same way (schema version N is the first N migrations) in a one-row `metagate_schema` table.
//!
//! Fleet-wide decisions take one transaction-scoped advisory lock (`pg_advisory_xact_lock`),
//! the counterpart of SQLite's write lock: a group of decisions that counts toward a limit
//! holds it from its first count to its commit, so two processes on two hosts counting at the
//! same moment are served one after the other, the second seeing the first's rows.

#[cfg(test)]
#[path = "../../../tests/support/postgres.rs"]
pub(crate) mod test_server;
#[cfg(test)]
#[path = "../../../tests/support/postgres_tls.rs"]
pub(crate) mod tls_test_server;
// The name the TLS test server finds the plain one by, here as in the command-line tests.
#[cfg(test)]
use test_server as postgres_server;

pub mod connect;
pub mod pgpass;

use std::cell::Cell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::{Client, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::location::PgUrl;
use crate::{MIGRATION_TABLES, Options, SCHEMA_VERSION, StoreError, StoreInfo, TABLES};

/// The migrations in PostgreSQL's dialect, one for each of [`crate::MIGRATIONS`].
pub const MIGRATIONS: [&str; crate::MIGRATIONS.len()] = [
    include_str!("migrations/postgres/0001_telemetry.sql"),
    include_str!("migrations/postgres/0002_grants.sql"),
    include_str!("migrations/postgres/0003_evaluate.sql"),
    include_str!("migrations/postgres/0004_evaluate_evidence.sql"),
    include_str!("migrations/postgres/0005_call_ids.sql"),
    include_str!("migrations/postgres/0006_provenance.sql"),
    include_str!("migrations/postgres/0007_outcome_callers.sql"),
    include_str!("migrations/postgres/0008_grant_mac.sql"),
    include_str!("migrations/postgres/0009_kinds_in_rust.sql"),
];

/// The advisory lock a group of decisions that counts holds until its commit (an arbitrary
/// number, "mg" and 1, that no other program is likely to take).
pub const DECISIONS_LOCK: i64 = 0x6d67_0001;

/// The advisory lock migrations hold, so that two processes setting up one new database wait
/// for each other instead of both creating its tables.
const MIGRATION_LOCK: i64 = 0x6d67_0002;

/// The indexes limits count with; the last is the loop breaker's.
const LIMIT_INDEXES: [&str; 4] = [
    "decisions_counted_by_caller",
    "decisions_counted_by_tool",
    "decisions_counted_by_session",
    "decisions_counted_by_fingerprint",
];

/// A connection to the shared store, migrated to [`SCHEMA_VERSION`].
pub struct PgStore {
    client: Client,
    /// How to open the connection again when it is lost: the client's configuration, and
    /// the TLS the URL's `sslmode` asks for.
    config: postgres::Config,
    tls: MakeRustlsConnect,
    /// What each connection runs first (its lock timeout and commit durability).
    session: String,
    url: PgUrl,
    busy_timeout: Duration,
    /// Statements prepared on this connection, by their text.
    prepared: HashMap<&'static str, Statement>,
    /// An error said the connection is gone before the client knows it: the client learns
    /// only at its next request (the server's goodbye is read, the socket's end is not), and
    /// that request would fail too. The next use opens a new connection instead.
    lost: Cell<bool>,
}

impl PgStore {
    /// Connects (retrying a server that cannot be reached yet until `busy_timeout` has
    /// passed), then creates or migrates the tables.
    pub(crate) fn connect(url: &PgUrl, options: Options) -> Result<PgStore, StoreError> {
        PgStore::connect_with(url, options, &connect::PasswordSources::of_process())
    }

    /// [`PgStore::connect`], the password looked for in `sources` when the URL has none.
    pub(crate) fn connect_with(
        url: &PgUrl,
        options: Options,
        sources: &connect::PasswordSources,
    ) -> Result<PgStore, StoreError> {
        let busy_timeout = options.busy_timeout;
        let mut prepared = connect::prepare(url, sources)?;
        for warning in &prepared.warnings {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "metagate: warning: {warning}");
        }
        if prepared.config.get_connect_timeout().is_none() {
            prepared
                .config
                .connect_timeout(busy_timeout.max(Duration::from_secs(1)));
        }
        let deadline = Instant::now() + busy_timeout;
        let mut pause = Duration::from_millis(10);
        let mut client = loop {
            let e = match open(&prepared.config, &prepared.tls) {
                Ok(client) => break client,
                Err(e) => e,
            };
            if let Some(why) = connect::lasting_failure(&e, &prepared) {
                return Err(StoreError::Postgres {
                    url: url.to_string(),
                    why,
                });
            }
            // Tried again until the deadline, and once at it.
            if !transient(&e) || Instant::now() >= deadline {
                return Err(StoreError::Unreachable {
                    url: url.to_string(),
                    waited: busy_timeout,
                    why: reason(&e),
                });
            }
            std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
            pause = (pause * 2).min(Duration::from_millis(500));
        };
        // A lock another process holds is waited for as long as SQLite's busy timeout says.
        // Not durable (see `Options::durable`): a commit returns before the server's log is
        // on disk, still atomic and seen at once by every other connection.
        let ms = busy_timeout.as_millis().max(1);
        let synchronous = if options.durable { "on" } else { "off" };
        let session = format!("SET lock_timeout = {ms}; SET synchronous_commit = {synchronous}");
        let set = client.batch_execute(&session);
        set.map_err(|e| PgStore::error_at(&url.to_string(), busy_timeout, e))?;
        let mut store = PgStore {
            client,
            config: prepared.config,
            tls: prepared.tls,
            session,
            url: url.clone(),
            busy_timeout,
            prepared: HashMap::new(),
            lost: Cell::new(false),
        };
        store.migrate()?;
        Ok(store)
    }

    /// The store's URL.
    pub fn url(&self) -> &PgUrl {
        &self.url
    }

    /// The connection, opened again first when the last one was lost (the server restarted,
    /// a failover, a proxy's idle timeout). One attempt, without waiting: while the server is
    /// down each use fails as it would have, so a stream's group in flight fails closed, and
    /// the next group tries again.
    pub(crate) fn client(&mut self) -> &mut Client {
        self.reconnect_when_lost();
        &mut self.client
    }

    fn reconnect_when_lost(&mut self) {
        if self.lost.take() || self.client.is_closed() {
            self.reconnect();
        }
    }

    /// Replaces a lost connection by a new one set up as the first was; keeps the lost one
    /// when that fails.
    fn reconnect(&mut self) {
        let Ok(mut client) = open(&self.config, &self.tls) else {
            return;
        };
        if client.batch_execute(&self.session).is_ok() {
            self.client = client;
            // Statements belong to the connection that prepared them.
            self.prepared.clear();
        }
    }

    /// A statement prepared once on this connection.
    pub(crate) fn prepared(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        self.reconnect_when_lost();
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.prepared.insert(sql, s.clone());
        Ok(s)
    }

    /// Names a PostgreSQL failure by what it means for the operator.
    pub(crate) fn err(&self, e: postgres::Error) -> StoreError {
        if connection_ended(&e) {
            self.lost.set(true);
        }
        PgStore::error_at(&self.url.to_string(), self.busy_timeout, e)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        // The common case in one round trip: the schema is there and current.
        match self
            .client
            .query_opt("SELECT version FROM metagate_schema", &[])
        {
            Ok(Some(row)) => {
                let version: i64 = row.try_get(0).map_err(|e| self.err(e))?;
                if version == SCHEMA_VERSION {
                    return Ok(());
                }
            }
            Ok(None) => {}
            Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => {}
            Err(e) => return Err(self.err(e)),
        }
        let url = self.url.to_string();
        let fail = |e| PgStore::error_at(&url, self.busy_timeout, e);
        let mut tx = self.client.transaction().map_err(fail)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(fail)?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS metagate_schema (version BIGINT NOT NULL)")
            .map_err(fail)?;
        let version: i64 = tx
            .query_opt("SELECT version FROM metagate_schema", &[])
            .map_err(fail)?
            .map_or(Ok(0), |r| r.try_get(0))
            .map_err(fail)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::PgNewer {
                url,
                found: version,
            });
        }
        if version == 0 {
            // Another program's tables of the same names: never migrated into. (Tables of
            // other names are no concern: a database may hold many programs' tables.)
            let ours: Vec<&str> = MIGRATION_TABLES
                .iter()
                .flat_map(|t| t.iter().copied())
                .collect();
            let clash: i64 = tx
                .query_one(
                    "SELECT count(*) FROM information_schema.tables \
                     WHERE table_schema = current_schema() AND table_name = ANY($1)",
                    &[&ours],
                )
                .and_then(|r| r.try_get(0))
                .map_err(fail)?;
            if clash > 0 {
                return Err(StoreError::PgForeign { url });
            }
        }
        for sql in &MIGRATIONS[usize::try_from(version).unwrap_or(0)..] {
            tx.batch_execute(sql).map_err(fail)?;
        }
        tx.execute("DELETE FROM metagate_schema", &[])
            .map_err(fail)?;
        tx.execute(
            "INSERT INTO metagate_schema (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)
    }

    /// [`PgStore::err`] for a store not yet built (its URL and busy timeout).
    fn error_at(url: &str, busy_timeout: Duration, e: postgres::Error) -> StoreError {
        let url = url.to_string();
        match e.code() {
            Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => StoreError::PgLocked {
                url,
                waited: busy_timeout,
            },
            Some(c)
                if *c == SqlState::READ_ONLY_SQL_TRANSACTION
                    || *c == SqlState::INSUFFICIENT_PRIVILEGE =>
            {
                StoreError::PgRefused {
                    url,
                    why: reason(&e),
                }
            }
            Some(_) => StoreError::Postgres {
                url,
                why: reason(&e),
            },
            None => StoreError::Unreachable {
                url,
                waited: Duration::ZERO,
                why: reason(&e),
            },
        }
    }

    /// The indexes limits count with, as [`crate::Store::ensure_limit_indexes`] makes
    /// them for SQLite.
    pub(crate) fn ensure_limit_indexes(&mut self, loop_breaker: bool) -> Result<(), StoreError> {
        // Asked first: creating an index, even one that exists, locks the table against
        // writers for a moment, and every `gate` of the fleet starts here.
        let wanted: &[&str] = if loop_breaker {
            &LIMIT_INDEXES
        } else {
            &LIMIT_INDEXES[..3]
        };
        let present: i64 = self
            .client
            .query_one(
                "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema()                  AND tablename = 'decisions' AND indexname = ANY($1)",
                &[&wanted],
            )
            .and_then(|r| r.try_get(0))
            .map_err(|e| self.err(e))?;
        if usize::try_from(present).is_ok_and(|n| n == wanted.len()) {
            return Ok(());
        }
        // Two processes creating the same index at once collide in the catalog ("duplicate
        // key"), IF NOT EXISTS notwithstanding: the migration lock orders them.
        let url = self.url.to_string();
        let fail = |e| PgStore::error_at(&url, self.busy_timeout, e);
        let mut tx = self.client.transaction().map_err(fail)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(fail)?;
        tx.batch_execute(&crate::limit_indexes_sql(loop_breaker))
            .map_err(fail)?;
        tx.commit().map_err(fail)
    }

    /// After rows were written with their own ids (`db copy`): each identity continues past
    /// the largest id its table holds, so the next row a `gate` writes takes a new one.
    pub(crate) fn catch_up_identities(&mut self) -> Result<(), StoreError> {
        for table in TABLES
            .iter()
            .copied()
            .filter(|t| *t != "grants" && *t != "eval_recommendations")
        {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                   coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"
            );
            self.client.execute(&sql, &[]).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// What `db info` shows. The size is that of metagate's tables and their indexes, not the
    /// database's (which may hold other programs' tables).
    pub(crate) fn info(&mut self) -> Result<StoreInfo, StoreError> {
        let mut tables = Vec::new();
        let mut first: Option<i64> = None;
        let mut last: Option<i64> = None;
        for (i, table) in TABLES.iter().enumerate() {
            let span = if i < crate::EVENT_TABLES {
                "min(ts_ms), max(ts_ms)"
            } else {
                "NULL::bigint, NULL::bigint"
            };
            let row = self
                .client
                .query_one(&format!("SELECT count(*), {span} FROM {table}"), &[])
                .map_err(|e| self.err(e))?;
            let read = || Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?));
            let (count, lo, hi): (i64, Option<i64>, Option<i64>) =
                read().map_err(|e| self.err(e))?;
            tables.push((table.to_string(), count));
            crate::widen_span(&mut first, &mut last, lo, hi);
        }
        let ours: Vec<&str> = MIGRATION_TABLES
            .iter()
            .flat_map(|t| t.iter().copied())
            .collect();
        let size: i64 = self
            .client
            .query_one(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c \
                 WHERE c.relname = ANY($1) AND c.relkind = 'r' \
                   AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
                &[&ours],
            )
            .and_then(|r| r.try_get(0))
            .map_err(|e| self.err(e))?;
        let version: i64 = self
            .client
            .query_one("SELECT version FROM metagate_schema", &[])
            .and_then(|r| r.try_get(0))
            .map_err(|e| self.err(e))?;
        Ok(StoreInfo {
            path: self.url.to_string().into(),
            schema_version: version,
            size_bytes: u64::try_from(size).unwrap_or(0),
            tables,
            first_ms: first,
            last_ms: last,
        })
    }
}

/// A new connection to the server `config` names.
fn open(config: &postgres::Config, tls: &MakeRustlsConnect) -> Result<Client, postgres::Error> {
    config.connect(tls.clone())
}

/// Whether `e` says the connection is over: the server ended it (a shutdown, a backend
/// terminated), or the socket failed or closed.
fn connection_ended(e: &postgres::Error) -> bool {
    let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    e.is_closed()
        || io
        || e.code().is_some_and(|c| {
            *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || c.code().starts_with("08")
        })
}

/// Whether a failure to connect may pass: the server not listening yet, starting or
/// shutting down, or out of connection slots. A wrong password or database does not.
fn transient(e: &postgres::Error) -> bool {
    match e.code() {
        None => true,
        Some(c) => {
            *c == SqlState::CANNOT_CONNECT_NOW
                || *c == SqlState::TOO_MANY_CONNECTIONS
                || *c == SqlState::ADMIN_SHUTDOWN
        }
    }
}

/// What the server or the connection said, without the crate's prefixes.
fn reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut why = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                why = format!("{why}: {s}");
                source = s.source();
            }
            why
        }
    }
}
