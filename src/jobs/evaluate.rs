//! The `evaluate` job: read every shard of telemetry, merge what they hold, weigh it into
//! recommendations and proposed aliases, and store the run in the first shard.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::domain::events::format_time;
use crate::domain::evolution::{
    Aggregate, ProposedAlias, Recommendation, Window, alias_json, parse_moment, policy_patch,
    propose_aliases, recommend, recommendation_json, tools_json,
};
use crate::domain::policy::Policy;
use crate::store::runs::{self, HighWater};
use crate::store::{Store, StoreError, aggregate};

/// Why the job could not run.
#[derive(Debug)]
pub enum EvaluateError {
    /// One store given twice (under two names, or a link).
    SameStore { first: PathBuf, again: PathBuf },
    /// `--since`/`--until` that cannot be read, or an empty window.
    Window(String),
    /// The policy patch would land on a file metagate is using.
    PatchTarget(String),
    /// The patch could not be written.
    Patch {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A shard could not be read.
    Read { path: PathBuf, source: StoreError },
    /// A store could not be opened or written.
    Store(StoreError),
}

impl fmt::Display for EvaluateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvaluateError::SameStore { first, again } => write!(
                f,
                "--db {} and --db {} are the same store: give each store once",
                first.display(),
                again.display()
            ),
            EvaluateError::Window(why) | EvaluateError::PatchTarget(why) => f.write_str(why),
            EvaluateError::Patch { path, .. } => {
                write!(f, "cannot write the policy patch {}", path.display())
            }
            EvaluateError::Read { path, .. } => {
                write!(f, "cannot read the telemetry in {}", path.display())
            }
            EvaluateError::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for EvaluateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EvaluateError::Patch { source, .. } => Some(source),
            EvaluateError::Read { source, .. } => Some(source),
            // The store's error stands for itself: its causes are this error's.
            EvaluateError::Store(e) => e.source(),
            _ => None,
        }
    }
}

impl From<StoreError> for EvaluateError {
    fn from(e: StoreError) -> EvaluateError {
        EvaluateError::Store(e)
    }
}

/// The stores an evaluation reads, each once; the run is stored in the first.
pub struct Shards {
    paths: Vec<PathBuf>,
}

impl Shards {
    /// Refuses one file under two names (a symlink, a hard link): its events would be counted
    /// twice.
    pub fn new(paths: Vec<PathBuf>) -> Result<Shards, EvaluateError> {
        let real: Vec<FileId> = paths
            .iter()
            .map(|p| FileId::of(p).unwrap_or_else(|| FileId::Path(p.clone())))
            .collect();
        for (i, r) in real.iter().enumerate() {
            if let Some(j) = real[..i].iter().position(|earlier| earlier == r) {
                return Err(EvaluateError::SameStore {
                    first: paths[j].clone(),
                    again: paths[i].clone(),
                });
            }
        }
        Ok(Shards { paths })
    }

    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The store the run is kept in.
    pub fn first(&self) -> &Path {
        &self.paths[0]
    }
}

/// The window `--since` and `--until` name, as of `now_ms`.
pub fn window(
    since: &str,
    until: Option<&str>,
    now_ms: i64,
    policy: &Policy,
) -> Result<Window, EvaluateError> {
    let from_ms =
        parse_moment(since, now_ms).map_err(|e| EvaluateError::Window(format!("--since: {e}")))?;
    let until_ms = match until {
        Some(u) => {
            parse_moment(u, now_ms).map_err(|e| EvaluateError::Window(format!("--until: {e}")))?
        }
        // Exclusive: an event recorded at this very millisecond is in.
        None => now_ms + 1,
    };
    if from_ms >= until_ms {
        return Err(EvaluateError::Window(format!(
            "the window is empty: --since {} is not before --until {}",
            format_time(from_ms),
            format_time(until_ms)
        )));
    }
    Ok(Window::new(
        from_ms,
        until_ms,
        now_ms.min(until_ms),
        &policy.thresholds(),
    ))
}

/// What one evaluation found.
pub struct Evaluation {
    pub window: Window,
    pub aggregate: Aggregate,
    pub aliases: Vec<ProposedAlias>,
    pub recommendations: Vec<Recommendation>,
    /// Where the first shard's reading ended: the stored run counts up to there.
    high_water: HighWater,
    /// The shards as given, for the report.
    pub shards: Vec<String>,
}

/// Reads every shard read-only and weighs what they hold. `progress` hears rows read so far
/// and the estimated total.
pub fn evaluate(
    shards: &Shards,
    policy: &Policy,
    window: Window,
    busy_timeout: Duration,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Evaluation, EvaluateError> {
    let t = policy.thresholds();
    let mut conns = Vec::new();
    let mut agg = Aggregate::default();
    for path in shards.paths() {
        match aggregate::open_read_only(path, busy_timeout)? {
            Some(conn) => conns.push((path.clone(), conn)),
            None => agg.empty_stores.push(path.display().to_string()),
        }
    }
    let estimate = |path: &Path, conn: &rusqlite::Connection| {
        aggregate::row_estimate(conn).map_err(|e| StoreError::from_sqlite(path, e))
    };
    let mut total = 0;
    for (path, conn) in &conns {
        total += estimate(path, conn)?;
    }
    let mut done = 0;
    let mut high_water = HighWater::default();
    for (path, conn) in &conns {
        let (part, hw) = aggregate::scan(conn, policy, &window, &t, done, total, progress)
            .map_err(|e| EvaluateError::Read {
                path: path.clone(),
                source: StoreError::from_sqlite(path, e),
            })?;
        done += estimate(path, conn)?;
        if path == shards.first() {
            high_water = hw;
        }
        agg.merge(part);
    }
    let aliases = propose_aliases(&agg.alias_pairs, &t);
    let recommendations = recommend(&agg.tallies, &aliases, &t);
    Ok(Evaluation {
        window,
        aggregate: agg,
        aliases,
        recommendations,
        high_water,
        shards: shards
            .paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    })
}

impl Evaluation {
    /// A dry run stores nothing: the recommendations take the statuses the first shard
    /// already holds for them.
    pub fn read_statuses(
        &mut self,
        shards: &Shards,
        busy_timeout: Duration,
    ) -> Result<(), EvaluateError> {
        let path = shards.first();
        if let Some(conn) = aggregate::open_read_only(path, busy_timeout)? {
            runs::statuses(&conn, &mut self.recommendations)
                .map_err(|e| StoreError::from_sqlite(path, e))?;
        }
        Ok(())
    }

    /// Stores the run in `store` (the first shard), replacing a run over the same window;
    /// the recommendations keep the statuses stored for them. Returns the run's id.
    pub fn save(
        &mut self,
        store: &mut Store,
        ran_at_ms: i64,
        policy: &Policy,
    ) -> Result<i64, StoreError> {
        runs::save(
            store,
            runs::Run {
                window: &self.window,
                ran_at_ms,
                shards: &self.shards,
                aggregate: &self.aggregate,
                recommendations: &mut self.recommendations,
                aliases: &self.aliases,
                thresholds: &policy.thresholds(),
                high_water: self.high_water,
            },
        )
    }

    /// `evaluate --format json`: `run` is the stored run's id, `stored_in` its store.
    pub fn to_json(&self, policy: &Policy, run: Option<i64>, stored_in: &Path) -> Value {
        let t = policy.thresholds();
        json!({
            "window": {
                "from": format_time(self.window.from_ms),
                "until": format_time(self.window.until_ms),
                "recent_from": format_time(self.window.recent_from_ms),
            },
            "events": self.aggregate.events,
            "tools": tools_json(&self.aggregate.tallies, &t),
            "recommendations": self.recommendations.iter().map(recommendation_json).collect::<Vec<_>>(),
            "proposed_aliases": self.aliases.iter().map(alias_json).collect::<Vec<_>>(),
            "user_corrections_unlinked": self.aggregate.unlinked_corrections,
            "run": run,
            "stored_in": run.map(|_| stored_in.display().to_string()),
            "shards": self.shards,
        })
    }
}

/// The patch may not land on a file metagate is using: a store (with its SQLite companions)
/// or the policy file. Checked before the run, so a refused patch leaves nothing half done.
pub fn check_patch_target(
    patch: &Path,
    shards: &Shards,
    policy: &Policy,
) -> Result<(), EvaluateError> {
    let Some(target) = FileId::of(patch) else {
        // Not there yet: it cannot be one of the files in use (and a link to one that is
        // not there yet is replaced, not written through: [`write_patch`]).
        return Ok(());
    };
    for store in shards.paths() {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = store.as_os_str().to_owned();
            name.push(suffix);
            if FileId::of(Path::new(&name)).is_some_and(|own| own == target) {
                return Err(EvaluateError::PatchTarget(format!(
                    "--emit-policy-patch {} is the telemetry store {}: write the patch to a file of its own",
                    patch.display(),
                    name.to_string_lossy()
                )));
            }
        }
    }
    if let Some(origin) = &policy.origin
        && FileId::of(origin).is_some_and(|own| own == target)
    {
        return Err(EvaluateError::PatchTarget(format!(
            "--emit-policy-patch {} is the policy file in use: write the patch beside it, review it, then merge it",
            patch.display()
        )));
    }
    Ok(())
}

/// Writes the proposed aliases as a policy fragment to a new file beside `path`, then renames
/// it over `path`: a link there is replaced rather than written through, so no name can lead
/// the patch into a file in use, and a reader never sees half a patch.
pub fn write_patch(path: &Path, aliases: &[ProposedAlias]) -> Result<(), EvaluateError> {
    write_replacing(path, policy_patch(aliases).as_bytes()).map_err(|source| EvaluateError::Patch {
        path: path.to_path_buf(),
        source,
    })
}

fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// A file whatever name reaches it: its device and inode where there are such (a hard link
/// has a canonical path of its own), else its canonical path.
#[derive(Debug, PartialEq, Eq)]
enum FileId {
    #[cfg_attr(not(unix), allow(dead_code))]
    Inode(u64, u64),
    Path(PathBuf),
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(path)
                .ok()
                .map(|m| FileId::Inode(m.dev(), m.ino()))
        }
        #[cfg(not(unix))]
        {
            std::fs::canonicalize(path).ok().map(FileId::Path)
        }
    }
}
