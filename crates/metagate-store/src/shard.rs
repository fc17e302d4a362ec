//! One store an evaluation reads, of either kind: an SQLite file opened read-only
//! (`aggregate.rs`) or a PostgreSQL database (`pg_scan.rs`); and where the re-asks a scan
//! finds wait until the run is stored ([`ReaskStage`]), on the connection that stores it.

use std::path::PathBuf;

use rusqlite::Connection;

use crate::aggregate::{self, ReaskSink};
use crate::any::AnyStore;
use crate::location::Location;
#[cfg(feature = "postgres")]
use crate::pg::PgStore;
#[cfg(feature = "postgres")]
use crate::pg_scan::{PgReaskSink, Progress};
use crate::runs::{self, EvalRun, HighWater, PreviousRun};
use crate::{Options, StoreError};
use metagate_core::evolution::{Aggregate, Recommendation, Window};
use metagate_core::policy::Policy;
use metagate_core::policy::thresholds::Thresholds;

/// A store open for an evaluation to read.
pub enum ShardReader {
    /// An SQLite file, read-only.
    Sqlite {
        /// The file.
        path: PathBuf,
        /// Its read-only connection.
        conn: Connection,
    },
    #[cfg(feature = "postgres")]
    /// A PostgreSQL database.
    Postgres(Box<PgStore>),
}

impl ShardReader {
    /// Opens a store to read it. An SQLite file is never created nor migrated (`None` when it
    /// holds no telemetry yet); a PostgreSQL database is connected to as every command does.
    pub fn open(location: &Location, options: Options) -> Result<Option<ShardReader>, StoreError> {
        match location {
            Location::File(path) => Ok(aggregate::open_read_only(path, options.busy_timeout)?.map(
                |conn| ShardReader::Sqlite {
                    path: path.clone(),
                    conn,
                },
            )),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Ok(Some(ShardReader::Postgres(Box::new(PgStore::connect(
                url, options,
            )?)))),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::without_postgres(url)),
        }
    }

    /// An upper bound of the rows a scan reads, for a progress bar.
    pub fn estimate(&mut self) -> Result<u64, StoreError> {
        match self {
            ShardReader::Sqlite { path, conn } => {
                aggregate::row_estimate(conn).map_err(|e| StoreError::from_sqlite(path, e))
            }
            #[cfg(feature = "postgres")]
            ShardReader::Postgres(pg) => pg.row_estimate(),
        }
    }

    /// Reads the store's telemetry in `window` from one snapshot, and where that snapshot
    /// ends. `reasks`, given for the store the run is kept in, hears the re-asks found.
    #[allow(clippy::too_many_arguments)]
    pub fn scan(
        &mut self,
        policy: &Policy,
        window: &Window,
        t: &Thresholds,
        done_before: u64,
        total: u64,
        progress: &mut dyn FnMut(u64, u64),
        reasks: Option<&mut ReaskStage<'_>>,
    ) -> Result<(Aggregate, HighWater), StoreError> {
        match self {
            ShardReader::Sqlite { path, conn } => {
                let sink = match reasks {
                    Some(ReaskStage::Sqlite(sink)) => Some(sink),
                    _ => None,
                };
                aggregate::scan(conn, policy, window, t, done_before, total, progress, sink)
                    .map_err(|e| StoreError::from_sqlite(path, e))
            }
            #[cfg(feature = "postgres")]
            ShardReader::Postgres(pg) => {
                let sink = match reasks {
                    Some(ReaskStage::Postgres(sink)) => Some(sink),
                    _ => None,
                };
                let mut progress = Progress {
                    seen: done_before,
                    total,
                    report: progress,
                };
                let scanned = pg.scan(policy, window, t, &mut progress, sink);
                scanned.map_err(|e| pg.err(e))
            }
        }
    }

    /// Gives each recommendation what the store knows of it (see [`runs::known_states`]).
    pub fn known_states(&mut self, recs: &mut [Recommendation]) -> Result<(), StoreError> {
        match self {
            ShardReader::Sqlite { path, conn } => {
                runs::known_states(conn, recs).map_err(|e| StoreError::from_sqlite(path, e))
            }
            #[cfg(feature = "postgres")]
            ShardReader::Postgres(pg) => pg.known_states(recs),
        }
    }

    /// The run a new run over `window` is compared with (see [`runs::previous`]).
    pub fn previous(
        &mut self,
        window: &Window,
        until_ms: i64,
    ) -> Result<Option<PreviousRun>, StoreError> {
        match self {
            ShardReader::Sqlite { path, conn } => {
                runs::previous(conn, window, until_ms).map_err(|e| StoreError::from_sqlite(path, e))
            }
            #[cfg(feature = "postgres")]
            ShardReader::Postgres(pg) => pg.previous_run(window, until_ms),
        }
    }
}

/// Where the re-asks a scan detects wait until the run is stored: a temporary table on the
/// connection of the store that keeps the run, of its kind.
pub enum ReaskStage<'c> {
    /// On an SQLite connection.
    Sqlite(ReaskSink<'c>),
    #[cfg(feature = "postgres")]
    /// On a PostgreSQL connection.
    Postgres(PgReaskSink<'c>),
}

impl<'c> ReaskStage<'c> {
    /// An empty stage on `store`'s connection.
    pub fn new(store: &'c mut AnyStore) -> Result<ReaskStage<'c>, StoreError> {
        match store {
            AnyStore::Sqlite(s) => ReaskSink::new(s.conn_ref())
                .map(ReaskStage::Sqlite)
                .map_err(|e| s.err(e)),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => PgReaskSink::new(pg).map(ReaskStage::Postgres),
        }
    }

    /// The re-asks staged so far.
    pub fn count(&self) -> u64 {
        match self {
            ReaskStage::Sqlite(sink) => sink.count,
            #[cfg(feature = "postgres")]
            ReaskStage::Postgres(sink) => sink.count,
        }
    }
}

impl AnyStore {
    /// Stores a run (see [`runs::save`]).
    pub fn save_run(&mut self, run: EvalRun<'_>) -> Result<i64, StoreError> {
        match self {
            AnyStore::Sqlite(store) => runs::save(store, run),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => pg.save_run(run),
        }
    }
}
