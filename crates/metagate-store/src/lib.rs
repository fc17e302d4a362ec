//! The SQLite file metagate keeps its telemetry in: where it lives, how it is opened (pragmas
//! first, then migrations compiled into the binary), and the errors a person can act on.

pub mod aggregate;
pub mod any;
mod columns;
pub mod copy;
pub mod decisions;
pub mod grants;
pub mod location;
#[cfg(feature = "postgres")]
pub mod pg;
#[cfg(feature = "postgres")]
pub mod pg_runs;
#[cfg(feature = "postgres")]
pub mod pg_scan;
#[cfg(feature = "postgres")]
pub mod pg_telemetry;
#[cfg(feature = "postgres")]
pub mod pg_text;
pub mod prune;
pub mod runs;
pub mod shard;
#[cfg(any(test, feature = "synth"))]
pub mod synth;
pub mod telemetry;

#[cfg(test)]
#[path = "../../../tests/support/skips.rs"]
mod skips;

/// For the tests: a new database of the test PostgreSQL server, or `None` where this build has
/// no PostgreSQL client or this machine no server (the skip is recorded: see `skips.rs`).
#[cfg(test)]
pub(crate) fn test_database() -> Option<String> {
    #[cfg(feature = "postgres")]
    return pg::test_server::available().then(pg::test_server::fresh_database);
    #[cfg(not(feature = "postgres"))]
    {
        let why = "this build has no PostgreSQL client (the `postgres` feature is off)";
        skips::skip(&skips::POSTGRES_FEATURE, why);
        None
    }
}

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

/// The migrations, in order; the schema version is how many have run (`PRAGMA user_version`).
pub const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_telemetry.sql"),
    include_str!("migrations/0002_grants.sql"),
    include_str!("migrations/0003_evaluate.sql"),
    include_str!("migrations/0004_evaluate_evidence.sql"),
    include_str!("migrations/0005_call_ids.sql"),
    include_str!("migrations/0006_provenance.sql"),
    include_str!("migrations/0007_outcome_callers.sql"),
    include_str!("migrations/0008_grant_mac.sql"),
    include_str!("migrations/0009_kinds_in_rust.sql"),
];

/// The tables each migration creates, in [`MIGRATIONS`] order: a database claiming a schema
/// version must hold those of every migration up to it, or it is another program's (many
/// set `user_version` for their own ends).
pub(crate) const MIGRATION_TABLES: [&[&str]; MIGRATIONS.len()] = [
    &["decisions", "outcomes", "asks", "user_corrections"],
    &["grants", "grant_events"],
    &[
        "eval_runs",
        "eval_health",
        "eval_recommendations",
        "eval_run_recommendations",
        "eval_alias_pairs",
    ],
    // Columns and indexes only.
    &[],
    // A column of `decisions`, no table.
    &[],
    &["store_identity", "copied_ranges"],
    // Columns only.
    &[],
    // A column of `grants`, no table.
    &[],
    // `eval_recommendations` rebuilt, no new table.
    &[],
];

/// The schema version this metagate writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a writer waits for another process's write lock before giving up, by default
/// (the policy's `[telemetry] busy_timeout_ms` says otherwise).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The tables `db info` counts, in the order it shows them. The first [`EVENT_TABLES`] hold
/// what happened, with its time in `ts_ms`: they give the store's time span.
const TABLES: &[&str] = &[
    "decisions",
    "outcomes",
    "asks",
    "user_corrections",
    "grants",
    "grant_events",
    "eval_runs",
    "eval_recommendations",
];

/// How many of [`TABLES`] are event tables.
const EVENT_TABLES: usize = 4;

/// Why the store could not be used, in words that say what to do.
#[derive(Debug)]
pub enum StoreError {
    /// No path could be worked out (no `--db`, `$METAGATE_DB`, `$XDG_STATE_HOME` or `$HOME`).
    NoPath,
    /// `db info` and readers were pointed at a file that does not exist.
    Missing(PathBuf),
    /// The path names a folder, not the store's file.
    Folder(PathBuf),
    /// The path names a device, a pipe or a socket.
    NotAFile(PathBuf),
    /// The file is not an SQLite database.
    NotADatabase(PathBuf),
    /// An SQLite database with tables of its own and no metagate schema: never migrated into.
    Foreign(PathBuf),
    /// A newer metagate wrote the store.
    Newer {
        /// The store's file, which the message names.
        path: PathBuf,
        /// The schema version found.
        found: i64,
    },
    /// Another process holds the write lock.
    Locked {
        /// The store's file, which the message names.
        path: PathBuf,
        /// How long metagate waited.
        waited: Duration,
    },
    /// The store cannot be written.
    ReadOnly(PathBuf),
    /// Read-only, in a folder that cannot be written, with changes still in its `-wal` file.
    UnfoldedLog(PathBuf),
    /// The disk is full.
    Full(PathBuf),
    /// A write failed below SQLite (an I/O error, a file size limit).
    WriteFailed {
        /// The store's file, which the message names.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// SQLite could not turn write-ahead logging on.
    NoWal {
        /// The store's file, which the message names.
        path: PathBuf,
        /// The journal mode it kept.
        mode: String,
    },
    /// A file system error.
    Io {
        /// The store's file, which the message names.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// Any other SQLite error.
    Sqlite {
        /// The store's file, which the message names.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// A recommendation of a kind evaluate does not make: refused before anything is written,
    /// since the schema leaves the kinds to the code.
    UnknownKind(String),
    /// A `postgres://` URL the client cannot read.
    BadUrl {
        /// The URL, without its password.
        url: String,
        /// What the client said.
        why: String,
    },
    /// The PostgreSQL server could not be reached (or the connection was lost), after
    /// retrying for `waited`.
    Unreachable {
        /// The URL, without its password.
        url: String,
        /// How long metagate tried (zero: the connection was lost in use).
        waited: Duration,
        /// What the client said.
        why: String,
    },
    /// The server refused a write (a read-only server or transaction, no privilege).
    PgRefused {
        /// The URL, without its password.
        url: String,
        /// What the server said.
        why: String,
    },
    /// Another process held the decisions lock longer than the busy timeout.
    PgLocked {
        /// The URL, without its password.
        url: String,
        /// How long metagate waited.
        waited: Duration,
    },
    /// A newer metagate set the PostgreSQL store up.
    PgNewer {
        /// The URL, without its password.
        url: String,
        /// The schema version found.
        found: i64,
    },
    /// The database holds tables of metagate's names without metagate's schema version.
    PgForeign {
        /// The URL, without its password.
        url: String,
    },
    /// Any other error the server reported.
    Postgres {
        /// The URL, without its password.
        url: String,
        /// What the server said.
        why: String,
    },
    /// `db copy --merge`: a row the target is recorded to hold already differs there.
    CopyOriginClash {
        /// The table.
        table: &'static str,
        /// The row's id in the source.
        source_id: String,
        /// The id the target holds it under.
        target_id: i64,
    },
    /// `db copy`: the target holds another row under a key the source uses.
    CopyConflict {
        /// The table.
        table: &'static str,
        /// The key, as the message shows it.
        key: String,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::NoPath => write!(
                f,
                "no place for the telemetry store: pass --db FILE or set METAGATE_DB (or XDG_STATE_HOME or HOME)"
            ),
            StoreError::Missing(p) => write!(f, "there is no telemetry store at {}", p.display()),
            StoreError::Folder(p) => write!(
                f,
                "{} is a folder: the store is a file (for example {})",
                p.display(),
                p.join("metagate.db").display()
            ),
            StoreError::NotAFile(p) => write!(
                f,
                "{} is not a regular file (a device, a pipe or a socket): the store is a file; use another --db",
                p.display()
            ),
            StoreError::NotADatabase(p) => {
                write!(
                    f,
                    "{} is not a metagate store: the file is not an SQLite database",
                    p.display()
                )
            }
            StoreError::Foreign(p) => write!(
                f,
                "{} is not a metagate store: it is an SQLite database holding other tables (left untouched); use another --db",
                p.display()
            ),
            StoreError::Newer { path, found } => write!(
                f,
                "{} was written by a newer metagate (schema version {found}; this metagate knows up to {SCHEMA_VERSION}): upgrade metagate or use another --db",
                path.display()
            ),
            StoreError::Locked { path, waited } => write!(
                f,
                "{} is locked by another process and stayed locked for {} ms (telemetry.busy_timeout_ms)",
                path.display(),
                waited.as_millis()
            ),
            StoreError::ReadOnly(p) => write!(
                f,
                "{} cannot be written (read-only file or folder)",
                p.display()
            ),
            StoreError::UnfoldedLog(p) => write!(
                f,
                "{p} cannot be read here: its folder cannot be written, and its write-ahead log {p}-wal holds changes not yet in the file; open it once where it can be written (`metagate db info` does) to fold them in",
                p = p.display()
            ),
            StoreError::Full(p) => write!(f, "{} cannot grow: the disk is full", p.display()),
            StoreError::WriteFailed { path, source } => write!(
                f,
                "{} could not be written ({source}): is the disk full, or the file too large?",
                path.display()
            ),
            StoreError::NoWal { path, mode } => write!(
                f,
                "{} cannot use write-ahead logging (journal mode stayed {mode:?}); is it on a network file system?",
                path.display()
            ),
            StoreError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            StoreError::Sqlite { path, source } => write!(f, "{}: {source}", path.display()),
            StoreError::BadUrl { url, why } => {
                write!(
                    f,
                    "{url} is not a PostgreSQL URL this metagate can use: {why}"
                )
            }
            StoreError::Unreachable { url, waited, why } if waited.is_zero() => {
                write!(f, "the PostgreSQL store {url} cannot be reached: {why}")
            }
            StoreError::Unreachable { url, waited, why } => write!(
                f,
                "the PostgreSQL store {url} cannot be reached ({why}); tried for {} ms (telemetry.busy_timeout_ms)",
                waited.as_millis()
            ),
            StoreError::UnknownKind(kind) => write!(
                f,
                "a recommendation of unknown kind {kind:?} was not stored (the kinds are {})",
                metagate_core::evolution::KINDS.join(", ")
            ),
            StoreError::PgRefused { url, why } => {
                write!(f, "the PostgreSQL store {url} refused the write: {why}")
            }
            StoreError::PgLocked { url, waited } => write!(
                f,
                "the PostgreSQL store {url}: another process held the decisions lock for more than {} ms (telemetry.busy_timeout_ms)",
                waited.as_millis()
            ),
            StoreError::PgNewer { url, found } => write!(
                f,
                "{url} was written by a newer metagate (schema version {found}; this metagate knows up to {SCHEMA_VERSION}): upgrade metagate or use another --db"
            ),
            StoreError::PgForeign { url } => write!(
                f,
                "{url} is not a metagate store: it holds tables of metagate's names (decisions, grants, …) but no metagate_schema table (left untouched); use another database or schema"
            ),
            StoreError::Postgres { url, why } => write!(f, "the PostgreSQL store {url}: {why}"),
            StoreError::CopyOriginClash {
                table,
                source_id,
                target_id,
            } => write!(
                f,
                "row {source_id} of {table} in the source and row {target_id} in the target claim the same origin but differ: the two stores share an identity, as when one began as a file copy of the other rather than a db copy, so they cannot be merged (nothing more of {table} was written)"
            ),
            StoreError::CopyConflict { table, key } => write!(
                f,
                "the target already holds another row of {table} under the key ({key}): it holds another store's history: use db copy --merge to add this store's history to it under new ids (nothing of {table} was written)"
            ),
        }
    }
}

impl std::error::Error for StoreError {
    // Every message already says its cause: giving it again as the source had `{:#}` print
    // it twice ("no such table: decisions: no such table: decisions: …").
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        None
    }
}

impl StoreError {
    /// A PostgreSQL URL given to a metagate built without its client (the `postgres` feature,
    /// off by default): what to install instead.
    #[cfg(not(feature = "postgres"))]
    pub fn without_postgres(url: &location::PgUrl) -> StoreError {
        StoreError::Postgres {
            url: url.to_string(),
            why: "this metagate was built without PostgreSQL support; install one with it: \
                  cargo install --locked metagate --features postgres (docs/postgres.md)"
                .to_string(),
        }
    }

    /// Names an SQLite failure by what it means for the person running metagate.
    pub fn from_sqlite(path: &Path, e: rusqlite::Error) -> StoreError {
        let path = path.to_path_buf();
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => StoreError::NotADatabase(path),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked {
                path,
                waited: BUSY_TIMEOUT_IN_USE.with(|t| t.get()),
            },
            Some(ErrorCode::ReadOnly) => StoreError::ReadOnly(path),
            Some(ErrorCode::DiskFull) => StoreError::Full(path),
            Some(ErrorCode::SystemIoFailure) => StoreError::WriteFailed { path, source: e },
            Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => StoreError::ReadOnly(path),
            _ => StoreError::Sqlite { path, source: e },
        }
    }
}

/// Where the store is: `--db`, `$METAGATE_DB`, else `$XDG_STATE_HOME/metagate/metagate.db`
/// (`~/.local/state/metagate/metagate.db`). Pure: the environment is passed in.
pub fn locate(
    flag: Option<&Path>,
    env_db: Option<&Path>,
    xdg_state_home: Option<&Path>,
    home: Option<&Path>,
) -> Option<PathBuf> {
    if let Some(p) = flag.or(env_db.filter(|p| !p.as_os_str().is_empty())) {
        return Some(p.to_path_buf());
    }
    let state = xdg_state_home
        .filter(|p| p.is_absolute())
        .map(Path::to_path_buf)
        .or_else(|| home.map(|h| h.join(".local").join("state")))?;
    Some(state.join("metagate").join("metagate.db"))
}

/// Every place [`locate`] puts the store when neither `--db` nor `$METAGATE_DB` names one:
/// under `$XDG_STATE_HOME` (when absolute) and under `~/.local/state`, both, since a run in
/// another environment uses the other.
pub fn default_locations(xdg_state_home: Option<&Path>, home: Option<&Path>) -> Vec<PathBuf> {
    let states = [
        xdg_state_home
            .filter(|p| p.is_absolute())
            .map(Path::to_path_buf),
        home.map(|h| h.join(".local").join("state")),
    ];
    let mut found: Vec<PathBuf> = states
        .into_iter()
        .flatten()
        .map(|state| state.join("metagate").join("metagate.db"))
        .collect();
    found.dedup();
    found
}

thread_local! {
    /// The busy timeout of the store last opened on this thread, for the message of a
    /// lock that outlasted it.
    static BUSY_TIMEOUT_IN_USE: std::cell::Cell<Duration> = const { std::cell::Cell::new(BUSY_TIMEOUT) };
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// How long to wait for another writer.
    pub busy_timeout: Duration,
    /// Each commit waits for the disk (SQLite's `synchronous = FULL`). Without it a commit is
    /// still atomic and seen at once by every other connection, and survives metagate being
    /// killed, but the last ones may be lost when the machine itself stops (`NORMAL`): for a
    /// writer that commits one call at a time and cannot wait a disk sync on each.
    pub durable: bool,
    /// The process writes a few rows and exits (`gate` answering one call). Closing the last
    /// connection would otherwise copy the log into the database and delete it: two more disk
    /// syncs, and the next process pays two more to make a new log (its header and the
    /// folder). The log is left for the next writer instead, and kept short
    /// ([`SHORT_LIVED_LOG_BYTES`]), since a process that finds no other connection reads the
    /// whole log back at its first read. Durability is the same: a commit is on disk in the
    /// log once it returns, and SQLite reads the log back after any stop.
    pub short_lived: bool,
}

/// The log a [`Options::short_lived`] writer leaves at close, at most: with a few pages a
/// decision, one call in some twenty to fifty pays for copying it in (two disk syncs more),
/// and what a process starting alone reads back stays small.
const SHORT_LIVED_LOG_BYTES: u64 = 256 * 1024;

impl Default for Options {
    fn default() -> Self {
        Options {
            busy_timeout: BUSY_TIMEOUT,
            durable: true,
            short_lived: false,
        }
    }
}

/// An open store, migrated to [`SCHEMA_VERSION`].
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Opened [`Options::short_lived`]: the log is left at close unless it grew long.
    short_lived: bool,
}

impl Drop for Store {
    /// A short-lived writer leaves the log for the next one, unless it holds more than
    /// [`SHORT_LIVED_LOG_BYTES`]: then it is copied into the database and emptied now (a
    /// process that starts alone reads the whole log back, and SQLite only starts a log over
    /// once it knows every frame was copied, which a process reading it back does not).
    /// Committed decisions are on disk either way; a failure here loses nothing.
    fn drop(&mut self) {
        if !self.short_lived {
            return;
        }
        let mut log = self.path.clone().into_os_string();
        log.push("-wal");
        if std::fs::metadata(&log).is_ok_and(|m| m.len() > SHORT_LIVED_LOG_BYTES) {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }
}

impl Store {
    /// Opens the store for writing, creating its folder and file (mode 0600) when missing.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, Options::default())
    }

    /// [`Store::open`] with options.
    pub fn open_with(path: &Path, options: Options) -> Result<Store, StoreError> {
        file_kind(path)?;
        create_private(path)?;
        // Before SQLite, which would fall back to reading a file it may not write, after
        // making `-wal`/`-shm` files beside it that lock the store's owner out.
        if !writable(path) {
            return Err(StoreError::ReadOnly(path.to_path_buf()));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::from_sqlite(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            short_lived: false,
        };
        // Before any pragma: switching to WAL would already change a foreign database. The
        // busy timeout only tells this connection to wait: another process may be setting up
        // the same new file, holding its lock for a moment.
        BUSY_TIMEOUT_IN_USE.with(|t| t.set(options.busy_timeout));
        store
            .conn
            .busy_timeout(options.busy_timeout)
            .map_err(|e| StoreError::from_sqlite(path, e))?;
        store.refuse_foreign()?;
        store.set_pragmas(options)?;
        store.migrate()?;
        // SQLite may still open the file for reading only (a read-only mount), without a word,
        // and a current store needs no migration to find out: the first write would. "Opened
        // for writing" is a promise `gate` starts on (a store it cannot write is a set-up
        // fault).
        if store
            .conn
            .is_readonly(rusqlite::MAIN_DB)
            .map_err(|e| StoreError::from_sqlite(path, e))?
        {
            return Err(StoreError::ReadOnly(path.to_path_buf()));
        }
        Ok(store)
    }

    /// Opens an existing store; it is an error when the file is missing. Used by readers
    /// (`db info`, `evaluate`, `tools health`) so that asking about a store never creates one.
    /// A store this process cannot write is opened read-only ([`open_read_only`]): reading
    /// works, and a write says the store cannot be written.
    pub fn open_existing(path: &Path, options: Options) -> Result<Store, StoreError> {
        existing_file(path)?;
        // Not even tried for writing: SQLite would fall back to reading, but only after it
        // made `-wal`/`-shm` files beside the store, this process's and with the store's mode
        // of the moment, which then lock the store's owner out of it.
        if !writable(path) {
            return Store::open_read_only(path, options);
        }
        match Store::open_with(path, options) {
            Err(StoreError::ReadOnly(_)) => Store::open_read_only(path, options),
            opened => opened,
        }
    }

    fn open_read_only(path: &Path, options: Options) -> Result<Store, StoreError> {
        let store = Store {
            conn: open_read_only(path, options.busy_timeout)?,
            path: path.to_path_buf(),
            short_lived: false,
        };
        let fail = |e| StoreError::from_sqlite(path, e);
        store.refuse_foreign()?;
        match user_version(&store.conn).map_err(fail)? {
            SCHEMA_VERSION => Ok(store),
            found if found > SCHEMA_VERSION => Err(StoreError::Newer {
                path: path.to_path_buf(),
                found,
            }),
            // An older (or empty) store must be migrated first, which takes writing.
            _ => Err(StoreError::ReadOnly(path.to_path_buf())),
        }
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SQLite connection, for the store's own modules and tests.
    pub fn conn(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The SQLite connection, read only.
    pub fn conn_ref(&self) -> &Connection {
        &self.conn
    }

    /// Runs `work` in one IMMEDIATE transaction (the write lock taken up front, so two
    /// writers never both read and then fail to upgrade) and commits it; any error rolls
    /// everything back.
    pub fn immediate<T>(
        &mut self,
        work: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let fail = |e| StoreError::from_sqlite(&self.path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let out = work(&tx).map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(out)
    }

    /// Maps an SQLite error on this store to a [`StoreError`].
    pub fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::from_sqlite(&self.path, e)
    }

    fn set_pragmas(&mut self, options: Options) -> Result<(), StoreError> {
        let path = self.path.clone();
        let fail = |e| StoreError::from_sqlite(&path, e);
        let mode = self.journal_mode_wal(options.busy_timeout).map_err(fail)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::NoWal { path, mode });
        }
        // Unless the opener says otherwise, every decision is durable before its line is
        // written: FULL syncs the log on each commit, and commits are grouped, so this costs
        // one sync per group.
        let synchronous = if options.durable { "FULL" } else { "NORMAL" };
        // A short-lived writer copies the log in at close, when it grew long (see `Drop`).
        let checkpoint_pages = if options.short_lived { 0 } else { 16384 };
        self.conn
            .execute_batch(&format!("PRAGMA synchronous = {synchronous}; PRAGMA foreign_keys = ON; PRAGMA cache_size = -16384; PRAGMA wal_autocheckpoint = {checkpoint_pages};"))
            .map_err(fail)?;
        if options.short_lived {
            self.short_lived = true;
            self.conn
                .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
                .map_err(fail)?;
        }
        Ok(())
    }

    /// Switches the store to WAL and returns the journal mode it is in. Switching needs the
    /// file to itself, and SQLite answers "busy" at once rather than call the busy handler
    /// when another process has it open (two processes setting up one new store), so this
    /// tries again until the busy timeout has passed.
    fn journal_mode_wal(&self, busy_timeout: Duration) -> rusqlite::Result<String> {
        let deadline = std::time::Instant::now() + busy_timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            {
                Err(e)
                    if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                        && std::time::Instant::now() + pause < deadline =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                answer => return answer,
            }
        }
    }

    fn refuse_foreign(&self) -> Result<(), StoreError> {
        schema_version(&self.conn, &self.path).map(drop)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let fail = |e| StoreError::from_sqlite(&path, e);
        let version = user_version(&self.conn).map_err(fail)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path,
                found: version,
            });
        }
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        // Another process may be migrating the same new file: take the write lock, then look
        // again.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let version = user_version(&tx).map_err(fail)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path,
                found: version,
            });
        }
        for sql in &MIGRATIONS[usize::try_from(version).unwrap_or(0)..] {
            tx.execute_batch(sql).map_err(fail)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(fail)?;
        tx.commit().map_err(fail)
    }

    /// The indexes limits count with: partial, over the calls the gate let through, so that
    /// counting the last N of them never walks past the rejections a runaway loop piles up.
    /// Not part of the schema, since every index slows every insert: created when a policy
    /// sets limits (`loop_breaker`: the fingerprint one too, whose inserts land at random
    /// places and cost a busy stream the most).
    fn ensure_limit_indexes(&mut self, loop_breaker: bool) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = limit_indexes_sql(loop_breaker);
        self.conn
            .execute_batch(&sql)
            .map_err(|e| StoreError::from_sqlite(&path, e))
    }

    /// What `db info` shows.
    pub fn info(&self) -> Result<StoreInfo, StoreError> {
        let fail = |e| StoreError::from_sqlite(&self.path, e);
        let mut tables = Vec::new();
        let mut first: Option<i64> = None;
        let mut last: Option<i64> = None;
        for (i, table) in TABLES.iter().enumerate() {
            let span = if i < EVENT_TABLES {
                "min(ts_ms), max(ts_ms)"
            } else {
                "NULL, NULL"
            };
            let (count, lo, hi): (i64, Option<i64>, Option<i64>) = self
                .conn
                .query_row(&format!("SELECT count(*), {span} FROM {table}"), [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .map_err(fail)?;
            tables.push((table.to_string(), count));
            widen_span(&mut first, &mut last, lo, hi);
        }
        let size = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        Ok(StoreInfo {
            path: self.path.clone(),
            schema_version: user_version(&self.conn).map_err(fail)?,
            size_bytes: size,
            tables,
            first_ms: first,
            last_ms: last,
        })
    }
}

/// The statements making the indexes limits count with, the same in both dialects.
pub(crate) fn limit_indexes_sql(loop_breaker: bool) -> String {
    let mut sql = String::from(
        "CREATE INDEX IF NOT EXISTS decisions_counted_by_caller ON decisions (caller, ts_ms) \
           WHERE verdict <> 'rejected' AND caller IS NOT NULL;
         CREATE INDEX IF NOT EXISTS decisions_counted_by_tool ON decisions (tool, ts_ms) \
           WHERE verdict <> 'rejected';
         CREATE INDEX IF NOT EXISTS decisions_counted_by_session ON decisions (session, ts_ms) \
           WHERE verdict <> 'rejected' AND session IS NOT NULL;",
    );
    if loop_breaker {
        sql.push_str(
            "CREATE INDEX IF NOT EXISTS decisions_counted_by_fingerprint \
               ON decisions (fingerprint, ts_ms) \
               WHERE verdict <> 'rejected' AND fingerprint IS NOT NULL;",
        );
    }
    sql
}

/// `db info`'s time span (`first`, `last`) widened to take in one table's (`lo`, `hi`).
pub(crate) fn widen_span(
    first: &mut Option<i64>,
    last: &mut Option<i64>,
    lo: Option<i64>,
    hi: Option<i64>,
) {
    *first = match (*first, lo) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    *last = match (*last, hi) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
}

/// That `path` names a file: a folder or nothing there is an error saying which.
fn existing_file(path: &Path) -> Result<(), StoreError> {
    if !path.exists() {
        return Err(StoreError::Missing(path.to_path_buf()));
    }
    file_kind(path)
}

/// A folder, a device, a pipe or a socket cannot be the store: refused before anything opens
/// it (opening a pipe would wait for a writer).
fn file_kind(path: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(StoreError::Folder(path.to_path_buf())),
        Ok(m) if !m.is_file() => Err(StoreError::NotAFile(path.to_path_buf())),
        _ => Ok(()),
    }
}

/// Whether this process may write the file (opening it to write changes nothing).
fn writable(path: &Path) -> bool {
    std::fs::OpenOptions::new().write(true).open(path).is_ok()
}

/// `path` with `suffix` added to its name (`-wal`, `-shm`).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Opens an existing database read-only: nothing is changed or migrated, and nothing is
/// created beside a store this process may not write.
///
/// Reading a WAL database takes its `-shm` file, which SQLite makes when it is missing (or
/// fails to, in a folder this process may not write), as this process and with the store's
/// mode of the moment: made for a store its owner cannot be locked out of. Where no `-wal`
/// file holds changes, the database file alone is the whole store, and it is then read as
/// immutable (without those files); where one does, reading the file alone would miss them:
/// that takes its `-shm` too, else it is an error saying so.
fn open_read_only(path: &Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    BUSY_TIMEOUT_IN_USE.with(|t| t.set(busy_timeout));
    let fail = |e| StoreError::from_sqlite(path, e);
    // SQLite says "cannot open" for a file it may not read as for a folder it may not write.
    std::fs::File::open(path).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let changes_in_log = std::fs::metadata(sibling(path, "-wal")).is_ok_and(|m| m.len() > 0);
    let immutable = || -> Result<Connection, StoreError> {
        let conn =
            Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
                .map_err(fail)?;
        user_version(&conn).map_err(fail)?;
        Ok(conn)
    };
    if !writable(path) {
        let log = sibling(path, "-wal").exists();
        return match (log && sibling(path, "-shm").exists(), changes_in_log) {
            (false, false) => immutable(),
            (false, true) => Err(StoreError::UnfoldedLog(path.to_path_buf())),
            // Both files there (a writer may be at work): read through them, making nothing.
            (true, _) => {
                let conn = Connection::open_with_flags(path, flags).map_err(fail)?;
                conn.busy_timeout(busy_timeout).map_err(fail)?;
                user_version(&conn).map_err(fail)?;
                Ok(conn)
            }
        };
    }
    let conn = Connection::open_with_flags(path, flags).map_err(fail)?;
    // A writer may hold the file's lock for a moment: wait for it, as writers do.
    conn.busy_timeout(busy_timeout).map_err(fail)?;
    match user_version(&conn) {
        Ok(_) => Ok(conn),
        // SQLITE_READONLY_DIRECTORY: the `-shm` file could not be created.
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen)
            ) =>
        {
            drop(conn);
            if changes_in_log {
                return Err(StoreError::UnfoldedLog(path.to_path_buf()));
            }
            immutable()
        }
        Err(e) => Err(fail(e)),
    }
}

/// `file:PATH?immutable=1`, the path percent-encoded as SQLite's URI reader expects.
fn immutable_uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().replace('\\', "/").into_bytes();
    let mut uri = String::from("file:");
    for b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// The schema version of a metagate store (0 for an empty database, ours to set up), read
/// without changing anything. Another program's database is [`StoreError::Foreign`]: one
/// holding tables at version 0, or one whose version names tables it does not hold.
fn schema_version(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let fail = |e| StoreError::from_sqlite(path, e);
    // One read transaction, one snapshot: another process may be setting up the same new
    // file, and its tables and version appear together. (A `pragma_user_version` inside one
    // SELECT reads apart from it.)
    let tx = conn.unchecked_transaction().map_err(fail)?;
    let (objects, tables): (i64, String) = tx
        .query_row(
            "SELECT count(*), coalesce(group_concat(CASE type WHEN 'table' THEN name END, \
             char(0)), '') FROM sqlite_master",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(fail)?;
    let version = user_version(&tx).map_err(fail)?;
    tx.finish().map_err(fail)?;
    let foreign = || StoreError::Foreign(path.to_path_buf());
    if version == 0 {
        return if objects > 0 { Err(foreign()) } else { Ok(0) };
    }
    let tables: Vec<&str> = tables.split('\0').collect();
    // A newer store holds at least the first migration's tables.
    let claimed = usize::try_from(version.clamp(1, SCHEMA_VERSION)).unwrap_or(1);
    let holds = |name: &&str| tables.contains(name);
    if version < 0
        || !MIGRATION_TABLES[..claimed]
            .iter()
            .all(|m| m.iter().all(holds))
    {
        return Err(foreign());
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            path: path.to_path_buf(),
            found: version,
        });
    }
    Ok(version)
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Creates the store's folder (0700) and an empty file (0600) if they are missing, so the
/// file never exists with wider permissions, not even for a moment.
fn create_private(path: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(io)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(StoreError::ReadOnly(path.to_path_buf()))
        }
        Err(e) => Err(io(e)),
    }
}

/// A store's vital signs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreInfo {
    /// Where the store is.
    pub path: PathBuf,
    /// Its schema version.
    pub schema_version: i64,
    /// Its size on disk.
    pub size_bytes: u64,
    /// Each table with its row count.
    pub tables: Vec<(String, i64)>,
    /// The oldest recorded time, if any.
    pub first_ms: Option<i64>,
    /// The newest recorded time, if any.
    pub last_ms: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_immutable_uri_names_the_same_file_whatever_its_name_holds() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["plain.db", "a b?c#d%e&f=g.db", "ü.db"] {
            let path = dir.path().join(name);
            Store::open(&path).unwrap();
            let conn = Connection::open_with_flags(
                immutable_uri(&path),
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
            )
            .unwrap();
            assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION, "{name}");
        }
        assert_eq!(
            immutable_uri(Path::new("/s/a b?.db")),
            "file:/s/a%20b%3F.db?immutable=1"
        );
    }

    #[test]
    fn locate_follows_the_documented_order() {
        let p = |s: &str| Some(PathBuf::from(s));
        let flag = Path::new("/f.db");
        let env = Path::new("/e.db");
        let xdg = Path::new("/state");
        let home = Path::new("/home/u");
        assert_eq!(
            locate(Some(flag), Some(env), Some(xdg), Some(home)),
            p("/f.db")
        );
        assert_eq!(locate(None, Some(env), Some(xdg), Some(home)), p("/e.db"));
        assert_eq!(
            locate(None, Some(Path::new("")), Some(xdg), Some(home)),
            p("/state/metagate/metagate.db")
        );
        assert_eq!(
            locate(None, None, None, Some(home)),
            p("/home/u/.local/state/metagate/metagate.db")
        );
        assert_eq!(
            locate(None, None, Some(Path::new("rel")), Some(home)),
            p("/home/u/.local/state/metagate/metagate.db")
        );
        assert_eq!(locate(None, None, None, None), None);
    }

    #[test]
    fn a_new_store_is_private_migrated_and_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep").join("m.db");
        let store = Store::open(&path).unwrap();
        let info = store.info().unwrap();
        assert_eq!(info.schema_version, SCHEMA_VERSION);
        assert!(info.tables.iter().all(|(_, n)| *n == 0));
        let mode: String = store
            .conn_ref()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let perm = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(perm, 0o600);
        }
        drop(store);
        // Opening again does not migrate twice.
        assert_eq!(
            Store::open(&path).unwrap().info().unwrap().schema_version,
            SCHEMA_VERSION
        );
    }

    #[test]
    fn refuses_what_it_cannot_use() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
        assert!(matches!(
            Store::open(&junk),
            Err(StoreError::NotADatabase(_))
        ));
        let newer = dir.path().join("newer.db");
        {
            let conn = Connection::open(&newer).unwrap();
            conn.execute_batch(&MIGRATIONS.concat()).unwrap();
            conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
                .unwrap();
        }
        let e = Store::open(&newer).err().unwrap();
        assert!(matches!(e, StoreError::Newer { .. }), "{e}");
        assert!(e.to_string().contains("newer metagate"));
        // Someone else's database: refused, and left exactly as it was.
        let foreign = dir.path().join("foreign.db");
        {
            let conn = Connection::open(&foreign).unwrap();
            conn.execute_batch("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('kept');")
                .unwrap();
        }
        let before = std::fs::read(&foreign).unwrap();
        let e = Store::open(&foreign).err().unwrap();
        assert!(matches!(e, StoreError::Foreign(_)), "{e}");
        assert!(e.to_string().contains("holding other tables"), "{e}");
        assert_eq!(std::fs::read(&foreign).unwrap(), before);
        // Many programs set `user_version` too: a version is ours only with its tables. One
        // (even one of ours missing a table) was migrated and switched to WAL.
        for version in 1..=SCHEMA_VERSION + 1 {
            let conn = Connection::open(&foreign).unwrap();
            conn.pragma_update(None, "user_version", version).unwrap();
            drop(conn);
            let before = std::fs::read(&foreign).unwrap();
            for e in [
                Store::open(&foreign).err().unwrap(),
                Store::open_existing(&foreign, Options::default())
                    .err()
                    .unwrap(),
            ] {
                assert!(matches!(e, StoreError::Foreign(_)), "{version}: {e}");
            }
            assert_eq!(std::fs::read(&foreign).unwrap(), before, "{version}");
        }
        let partial = dir.path().join("partial.db");
        {
            let conn = Connection::open(&partial).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 2).unwrap();
        }
        assert!(matches!(Store::open(&partial), Err(StoreError::Foreign(_))));
        // An empty SQLite file is a new store.
        let empty = dir.path().join("empty.db");
        drop(Connection::open(&empty).unwrap());
        assert_eq!(
            Store::open(&empty).unwrap().info().unwrap().schema_version,
            SCHEMA_VERSION
        );
        assert!(matches!(
            Store::open_existing(&dir.path().join("none.db"), Options::default()),
            Err(StoreError::Missing(_))
        ));
    }
}
