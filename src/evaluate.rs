//! The `evaluate` job: read every shard of telemetry, merge what they hold, weigh it into
//! recommendations and proposed aliases, and store the run in the first shard.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use metagate_core::events::format_time;
use metagate_core::evolution::digest::{self, Digest, ToolChange, ToolFigures};
use metagate_core::evolution::recommend::alias_subject;
use metagate_core::evolution::series::{self, Night};
use metagate_core::evolution::tool_total;
use metagate_core::evolution::{
    Aggregate, PatchBase, ProposedAlias, Recommendation, Window, alias_json, assess,
    attach_sessions, parse_moment, policy_patch, propose_aliases, recommendation_id,
    recommendation_json, tools_json,
};
use metagate_core::policy::Policy;
use metagate_core::policy::thresholds::Thresholds;
use metagate_store::any::AnyStore;
use metagate_store::location::Location;
use metagate_store::runs::{self, HighWater, PolicyStamp, PreviousRun};
use metagate_store::shard::{ReaskStage, ShardReader};
use metagate_store::{Options, StoreError};

/// The version of `evaluate --format json`'s shape: 2 added the digest, the policy, evidence
/// objects and error clusters (1 had none of them and no version key).
const SCHEMA_VERSION: u32 = 2;

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Why the job could not run.
#[derive(Debug)]
pub enum EvaluateError {
    /// One store given twice (under two names, or a link).
    SameStore {
        /// The store as first given.
        first: String,
        /// The same store given again.
        again: String,
    },
    /// `--since`/`--until` that cannot be read, or an empty window.
    Window(String),
    /// The policy patch would land on a file metagate is using.
    PatchTarget(String),
    /// The patch could not be written.
    Patch {
        /// The patch file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A shard could not be read.
    Read {
        /// The shard, as given.
        place: String,
        /// What the store said.
        source: StoreError,
    },
    /// A store could not be opened or written.
    Store(StoreError),
}

impl fmt::Display for EvaluateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvaluateError::SameStore { first, again } => write!(
                f,
                "--db {first} and --db {again} are the same store: give each store once"
            ),
            EvaluateError::Window(why) | EvaluateError::PatchTarget(why) => f.write_str(why),
            EvaluateError::Patch { path, .. } => {
                write!(f, "cannot write the policy patch {}", path.display())
            }
            EvaluateError::Read { place, .. } => {
                write!(f, "cannot read the telemetry in {place}")
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
    locations: Vec<Location>,
}

impl Shards {
    /// Refuses one store under two names (a symlink, a hard link, one URL twice): its events
    /// would be counted twice.
    pub fn new(locations: Vec<Location>) -> Result<Shards, EvaluateError> {
        let real: Vec<FileId> = locations.iter().map(FileId::of_location).collect();
        for (i, r) in real.iter().enumerate() {
            if let Some(j) = real[..i].iter().position(|earlier| earlier == r) {
                return Err(EvaluateError::SameStore {
                    first: locations[j].to_string(),
                    again: locations[i].to_string(),
                });
            }
        }
        Ok(Shards { locations })
    }

    /// The stores, in the order given.
    pub fn locations(&self) -> &[Location] {
        &self.locations
    }

    /// The store the run is kept in.
    pub fn first(&self) -> &Location {
        &self.locations[0]
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
    /// The window evaluated.
    pub window: Window,
    /// What was counted in it.
    pub aggregate: Aggregate,
    aliases: Vec<ProposedAlias>,
    /// Most severe first, muted ones included ([`Recommendation::muted`]).
    pub recommendations: Vec<Recommendation>,
    /// Where the first shard's reading ended: the stored run counts up to there.
    high_water: HighWater,
    /// The shards as given, for the report.
    shards: Vec<String>,
    /// The policy the run used.
    pub policy: PolicyStamp,
    /// The run this one is compared with, and what changed since.
    pub previous: Option<PreviousRun>,
    /// What changed since the last run.
    pub digest: Digest,
    /// Re-asks the scan of the first shard detected, waiting to be stored with the run.
    pub reasks_detected: u64,
    /// Findings under this confidence never page (`--confidence-floor`, else the policy's).
    pub floor: f64,
}

/// The policy stamp of `policy`: its file and fingerprint.
fn policy_stamp(policy: &Policy) -> PolicyStamp {
    PolicyStamp {
        file: policy.origin.as_ref().map(|p| p.display().to_string()),
        hash: policy.fingerprint(),
    }
}

/// Reads every shard (an SQLite file read-only) and weighs what they hold. `progress` hears
/// rows read so far and the estimated total. The re-asks detected in the first shard go to
/// `reasks` when given (the connection that will store the run).
pub fn evaluate(
    shards: &Shards,
    policy: &Policy,
    window: Window,
    options: Options,
    progress: &mut dyn FnMut(u64, u64),
    mut reasks: Option<&mut ReaskStage<'_>>,
) -> Result<Evaluation, EvaluateError> {
    let t = policy.thresholds();
    let mut readers = Vec::new();
    let mut agg = Aggregate::default();
    for (i, location) in shards.locations().iter().enumerate() {
        match ShardReader::open(location, options)? {
            Some(reader) => readers.push((i, reader)),
            None => agg.empty_stores.push(location.to_string()),
        }
    }
    let mut estimates = Vec::new();
    for (_, reader) in readers.iter_mut() {
        estimates.push(reader.estimate()?);
    }
    let total = estimates.iter().sum();
    let mut done = 0;
    let mut high_water = HighWater::default();
    for ((i, reader), estimate) in readers.iter_mut().zip(estimates) {
        let first = *i == 0;
        let sink = if first { reasks.as_deref_mut() } else { None };
        let (part, hw) = reader
            .scan(policy, &window, &t, done, total, progress, sink)
            .map_err(|source| EvaluateError::Read {
                place: shards.locations()[*i].to_string(),
                source,
            })?;
        done += estimate;
        if first {
            high_water = hw;
        }
        agg.merge(part);
    }
    let mut aliases = propose_aliases(&agg.alias_pairs, &t);
    attach_sessions(&mut aliases, &agg.alias_sessions);
    let recommendations = assess(&agg, &aliases, &window, &t);
    Ok(Evaluation {
        window,
        aggregate: agg,
        aliases,
        recommendations,
        high_water,
        shards: shards.locations().iter().map(Location::to_string).collect(),
        policy: policy_stamp(policy),
        previous: None,
        digest: Digest::default(),
        reasks_detected: reasks.map_or(0, |r| r.count()),
        floor: t.confidence_floor(),
    })
}

impl Evaluation {
    /// Exports the run (docs/otel.md): each shown finding a `gen_ai.evaluation.result` event,
    /// each tool's failure rate, utility and re-asks for the window, on one `evaluate` span.
    /// Summaries are redacted as a store's text is.
    pub fn export_spans(&self) {
        if !crate::otel::on() {
            return;
        }
        let redacted =
            |s: &str| metagate_checks::redact::redact_text(s).unwrap_or_else(|| s.to_string());
        let mut span = crate::otel::Evaluation::start(self.window.from_ms, self.window.until_ms);
        for r in self.shown(false) {
            span.finding(r.kind, &r.tool, &r.id, r.confidence, &redacted(&r.summary));
        }
        let figures = metagate_core::evolution::digest::figures(&self.aggregate.tallies);
        for (tool, methods) in &self.aggregate.tallies {
            let reasks = metagate_core::evolution::output::tool_total(methods).reasks();
            let f = figures.get(tool).copied().unwrap_or_default();
            span.tool(tool, f.calls, f.failure_rate, f.utility, reasks);
        }
        span.end();
    }

    /// Reads, without writing, what the first shard knows: each recommendation's status (a
    /// person's, and whether a rejection still mutes it) and first sighting, and the previous
    /// run, which the digest compares with. Called before anything is written, so a patch
    /// leaves muted aliases out.
    pub fn compare_with_stored(
        &mut self,
        shards: &Shards,
        options: Options,
        now_ms: i64,
    ) -> Result<(), EvaluateError> {
        if let Some(mut reader) = ShardReader::open(shards.first(), options)? {
            reader.known_states(&mut self.recommendations)?;
            self.previous = reader.previous(&self.window, now_ms)?;
        }
        let now = digest::figures(&self.aggregate.tallies);
        let before = self.previous.as_ref().map(|p| digest::figures(&p.tallies));
        let past = self.previous.as_ref().map(|p| p.recommendations.as_slice());
        self.digest = digest::compare(
            &mut self.recommendations,
            past,
            &now,
            before.as_ref(),
            self.floor,
        );
        Ok(())
    }

    /// The previous run's policy, when it differs from this run's.
    pub fn policy_changed(&self) -> Option<&PolicyStamp> {
        let before = self.previous.as_ref()?.policy.as_ref()?;
        (before.hash != self.policy.hash).then_some(before)
    }

    /// The proposed aliases a patch may carry: those whose `learn_alias` recommendation is not
    /// muted.
    pub fn patch_aliases(&self) -> Vec<ProposedAlias> {
        self.aliases
            .iter()
            .filter(|a| {
                let id = recommendation_id(&a.tool, None, "learn_alias", &alias_subject(a));
                !self.recommendations.iter().any(|r| r.id == id && r.muted())
            })
            .cloned()
            .collect()
    }

    /// The recommendations shown: all of them with `all`, else those not muted.
    pub fn shown(&self, all: bool) -> impl Iterator<Item = &Recommendation> {
        self.recommendations
            .iter()
            .filter(move |r| all || !r.muted())
    }

    /// Stores the run in `store` (the first shard), replacing a run over the same window;
    /// the recommendations keep the statuses stored for them, and the re-asks the scan left
    /// on `store`'s connection are stored as user corrections. Returns the run's id.
    pub fn save(
        &mut self,
        store: &mut AnyStore,
        ran_at_ms: i64,
        policy: &Policy,
    ) -> Result<i64, StoreError> {
        let policy_stamp = self.policy.clone();
        store.save_run(runs::EvalRun {
            window: &self.window,
            ran_at_ms,
            shards: &self.shards,
            aggregate: &self.aggregate,
            recommendations: &mut self.recommendations,
            aliases: &self.aliases,
            thresholds: &policy.thresholds(),
            high_water: self.high_water,
            policy: &policy_stamp,
            reasks: true,
        })
    }

    /// `evaluate --format json` (documented key by key in `docs/evaluate.md`): `run` is the
    /// stored run's id, `stored_in` its store; muted recommendations only with `all`.
    pub fn to_json(
        &self,
        policy: &Policy,
        run: Option<i64>,
        stored_in: &Location,
        all: bool,
    ) -> Value {
        let t = policy.thresholds();
        let shown: Vec<Value> = self.shown(all).map(recommendation_json).collect();
        let muted: Vec<&str> = self
            .recommendations
            .iter()
            .filter(|r| r.muted())
            .map(|r| r.id.as_str())
            .collect();
        json!({
            "schema_version": SCHEMA_VERSION,
            "window": {
                "from": format_time(self.window.from_ms),
                "until": format_time(self.window.until_ms),
                "recent_from": format_time(self.window.recent_from_ms),
            },
            "policy": {
                "file": self.policy.file,
                "hash": self.policy.hash,
                "changed_since_last_run": self.policy_changed().is_some(),
                "previous": self.previous.as_ref().and_then(|p| p.policy.as_ref()).map(|p| json!({"file": p.file, "hash": p.hash})),
            },
            "since_last_run": self.since_json(),
            "events": self.aggregate.events,
            "tools": self.tools_with_nights(&t),
            "recommendations": shown,
            "muted": muted,
            "proposed_aliases": self.aliases.iter().map(alias_json).collect::<Vec<_>>(),
            "user_corrections_unlinked": self.aggregate.unlinked_corrections,
            "reasks_unattributed": self.aggregate.unattributed_reasks,
            "run": run,
            "stored_in": run.map(|_| stored_in.to_string()),
            "shards": self.shards,
        })
    }

    /// Each tool's nights in the window (a UTC day each), what the charts draw.
    pub fn nights(&self, t: &Thresholds) -> Vec<(String, Vec<Night>)> {
        self.aggregate
            .tallies
            .iter()
            .map(|(tool, methods)| {
                let total = tool_total(methods);
                let nights = series::nights(
                    &total.hours,
                    self.window.from_ms,
                    self.window.until_ms,
                    t.user_correction_weight(),
                );
                (tool.clone(), nights)
            })
            .collect()
    }

    /// `tools` of the JSON report, each with its `nights`.
    fn tools_with_nights(&self, t: &Thresholds) -> Value {
        let mut tools = tools_json(&self.aggregate.tallies, t);
        for (tool, nights) in self.nights(t) {
            let list: Vec<Value> = nights
                .iter()
                .map(|n| {
                    json!({
                        "night": format_time(n.start_ms)[..10].to_string(),
                        "calls": n.calls,
                        "failure_rate": n.failure_rate.map(round2),
                        "utility": n.utility.map(round2),
                    })
                })
                .collect();
            if let Some(entry) = tools.get_mut(&tool) {
                entry["nights"] = Value::Array(list);
            }
        }
        tools
    }

    fn since_json(&self) -> Value {
        let d = &self.digest;
        let figures = |f: Option<ToolFigures>| {
            f.map(
                |f| json!({"calls": f.calls, "failure_rate": f.failure_rate, "utility": f.utility}),
            )
        };
        let tools: serde_json::Map<String, Value> = d
            .tools
            .iter()
            .map(|c: &ToolChange| {
                (
                    c.tool.clone(),
                    json!({"before": figures(c.before), "now": figures(c.now)}),
                )
            })
            .collect();
        json!({
            "previous_run": self.previous.as_ref().map(|p| json!({
                "id": p.id,
                "window": {"from": format_time(p.window_from_ms), "until": format_time(p.window_to_ms)},
                "ran_at": format_time(p.ran_at_ms),
            })),
            "new": d.new,
            "reopened": d.reopened,
            "worse": d.worse,
            "better": d.better,
            "resolved": d.resolved.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            "below_floor": d.below_floor,
            "confidence_floor": self.floor,
            "tools": tools,
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
    for store in shards.locations() {
        let Location::File(store) = store else {
            continue;
        };
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

/// Writes the proposed aliases as a policy fragment (usable alone: it carries the policy's
/// imports) to a new file beside `path`, then renames it over `path`: a link there is
/// replaced rather than written through, so no name can lead the patch into a file in use,
/// and a reader never sees half a patch.
pub fn write_patch(
    path: &Path,
    aliases: &[ProposedAlias],
    policy: &Policy,
) -> Result<(), EvaluateError> {
    let text = policy_patch(aliases, &PatchBase::of(policy));
    write_replacing(path, text.as_bytes()).map_err(|source| EvaluateError::Patch {
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
    Url(String),
}

impl FileId {
    /// A store's identity: a file's (its name when it is not there), a URL's text.
    fn of_location(location: &Location) -> FileId {
        match location {
            Location::File(path) => FileId::of(path).unwrap_or_else(|| FileId::Path(path.clone())),
            Location::Postgres(url) => FileId::Url(url.secret_text().to_string()),
        }
    }

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
