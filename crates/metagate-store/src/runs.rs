//! Evaluate runs in the store: saved idempotently (one run per window, replaced when run
//! again), recommendations keeping their id and status across runs, and read back for `tools
//! health` with live counts of what was recorded since.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::aggregate::{REASK_TABLE, Rows, add_corrections, add_outcomes};
use crate::{Store, StoreError};
use metagate_core::events::AxisTable;
use metagate_core::evolution::digest::PastRecommendation;
use metagate_core::evolution::fold::Reading;
use metagate_core::evolution::health::{OpenRecommendation, OpenRecommendations};
use metagate_core::evolution::{Aggregate, ProposedAlias, Recommendation, Tallies, Tally, Window};
use metagate_core::policy::thresholds::Thresholds;

/// What one run found, ready to be stored.
pub struct EvalRun<'a> {
    /// The window evaluated.
    pub window: &'a Window,
    /// When the run was made, in milliseconds since the epoch.
    pub ran_at_ms: i64,
    /// The stores read, by path.
    pub shards: &'a [String],
    /// What was counted.
    pub aggregate: &'a Aggregate,
    /// What is recommended; ids and status are set when stored.
    pub recommendations: &'a mut [Recommendation],
    /// The argument aliases proposed.
    pub aliases: &'a [ProposedAlias],
    /// The thresholds used.
    pub thresholds: &'a Thresholds,
    /// Where the scan of the store the run is saved in ended ([`super::scan::scan`]).
    pub high_water: HighWater,
    /// Which policy the run was made under.
    pub policy: &'a PolicyStamp,
    /// Whether the re-asks the scan detected wait in [`REASK_TABLE`] on the store's
    /// connection, to be stored with the run.
    pub reasks: bool,
}

/// The policy a run used: its file (none for the built-in policy) and a hash of everything
/// that went into it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyStamp {
    /// The policy file's path, if not the built-in policy.
    pub file: Option<String>,
    /// The policy's fingerprint.
    pub hash: String,
}

/// The largest row ids of the telemetry tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HighWater {
    pub(crate) decisions: i64,
    /// The highest outcome row id counted.
    pub outcomes: i64,
    pub(crate) corrections: i64,
}

pub(crate) fn high_water(conn: &Connection) -> rusqlite::Result<HighWater> {
    let max = |table: &str| -> rusqlite::Result<i64> {
        conn.query_row(
            &format!("SELECT coalesce(max(rowid), 0) FROM {table}"),
            [],
            |r| r.get(0),
        )
    };
    // Explicit corrections only: the re-asks runs store are appended after them and are in
    // the runs' own counts, so a run over the same window again ends where the first did.
    let corrections = if has_column(conn, "user_corrections", "reask_ask_id")? {
        conn.query_row(
            "SELECT coalesce(max(id), 0) FROM user_corrections INDEXED BY user_corrections_explicit \
             WHERE reask_ask_id IS NULL",
            [],
            |r| r.get(0),
        )?
    } else {
        max("user_corrections")?
    };
    Ok(HighWater {
        decisions: max("decisions")?,
        outcomes: max("outcomes")?,
        corrections,
    })
}

/// Stores a run, replacing an earlier run over the same window; recommendations already known
/// keep their status (and `run.recommendations` are given it). Returns the run's id.
pub fn save(store: &mut Store, run: EvalRun<'_>) -> Result<i64, StoreError> {
    known_kinds(run.recommendations)?;
    store.immediate(|tx| save_in(tx, run))
}

/// Refuses a run holding a recommendation of a kind evaluate does not make: the code, not a
/// CHECK in the schema, holds the list (`metagate_core::evolution::KINDS`).
pub(crate) fn known_kinds(recommendations: &[Recommendation]) -> Result<(), StoreError> {
    match recommendations
        .iter()
        .find(|r| !metagate_core::evolution::KINDS.contains(&r.kind))
    {
        Some(r) => Err(StoreError::UnknownKind(r.kind.to_owned())),
        None => Ok(()),
    }
}

fn save_in(tx: &rusqlite::Transaction<'_>, run: EvalRun<'_>) -> rusqlite::Result<i64> {
    let hw = run.high_water;
    let shards = serde_json::to_string(run.shards).expect("strings serialize");
    let id: i64 = tx
        .query_row(
            "INSERT INTO eval_runs (window_from_ms, window_to_ms, ran_at_ms, events, shards, \
               decisions_hw, outcomes_hw, corrections_hw, unlinked_corrections, policy_file, policy_hash, \
               unattributed_reasks) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) \
             ON CONFLICT (window_from_ms, window_to_ms) DO UPDATE SET \
               ran_at_ms = excluded.ran_at_ms, events = excluded.events, shards = excluded.shards, \
               decisions_hw = excluded.decisions_hw, outcomes_hw = excluded.outcomes_hw, \
               corrections_hw = excluded.corrections_hw, unlinked_corrections = excluded.unlinked_corrections, \
               policy_file = excluded.policy_file, policy_hash = excluded.policy_hash, \
               unattributed_reasks = excluded.unattributed_reasks \
             RETURNING id",
            params![
                run.window.from_ms,
                run.window.until_ms,
                run.ran_at_ms,
                run.aggregate.events as i64,
                shards,
                hw.decisions,
                hw.outcomes,
                hw.corrections,
                run.aggregate.unlinked_corrections as i64,
                run.policy.file,
                run.policy.hash,
                run.aggregate.unattributed_reasks as i64,
            ],
            |r| r.get(0),
        )?;
    for table in [
        "eval_health",
        "eval_run_recommendations",
        "eval_alias_pairs",
    ] {
        tx.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [id])?;
    }
    {
        let t = run.thresholds;
        let mut health = tx
            .prepare(
                "INSERT INTO eval_health (run_id, tool, method, calls, utility, cohesion_warning, degraded, tally) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
        for (tool, methods) in &run.aggregate.tallies {
            for (method, tally) in methods {
                // Stored with its recent hours even when there were none: a tally without
                // them is one from before they were kept.
                let mut tally = tally.clone();
                tally.recent_by_hour.get_or_insert_with(BTreeMap::new);
                health.execute(params![
                    id,
                    tool,
                    method,
                    tally.calls as i64,
                    tally.utility(),
                    tally.cohesion_warning(t),
                    tally.degraded(t),
                    serde_json::to_string(&tally).expect("a tally serializes"),
                ])?;
            }
        }
        let mut known = tx.prepare(
            "SELECT status, rejected_count, first_seen_ms, rejected_rate FROM eval_recommendations WHERE id = ?1",
        )?;
        let mut upsert = tx.prepare(
            "INSERT INTO eval_recommendations (id, tool, method, kind, subject, confidence, summary, axes, evidence, \
               first_seen_ms, last_seen_ms, evidence_count, brief, status, rejected_count, evidence_rate, rejected_rate) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12, ?13, ?14, ?15, ?16) \
             ON CONFLICT (id) DO UPDATE SET confidence = excluded.confidence, summary = excluded.summary, \
               axes = excluded.axes, evidence = excluded.evidence, evidence_count = excluded.evidence_count, \
               brief = excluded.brief, status = excluded.status, rejected_count = excluded.rejected_count, \
               evidence_rate = excluded.evidence_rate, rejected_rate = excluded.rejected_rate, \
               last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)",
        )?;
        let mut link = tx.prepare(
            "INSERT OR IGNORE INTO eval_run_recommendations (run_id, rec_id, confidence, evidence_count, muted) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let json = |v: &[String]| serde_json::to_string(v).expect("strings serialize");
        for r in run.recommendations.iter_mut() {
            let state: Option<(String, Option<f64>, i64, Option<f64>)> = known
                .query_row([&r.id], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                })
                .optional()?;
            if let Some((status, rejected_count, first_seen, rejected_rate)) = state {
                apply_state(r, status, rejected_count, first_seen, rejected_rate);
            } else {
                r.first_seen_ms = Some(run.ran_at_ms);
            }
            // Muted recommendations are stored as they are; one whose evidence grew past its
            // rejection is proposed again (the count it was rejected at is kept).
            let stored_status = if r.reopened() {
                "proposed"
            } else {
                r.status.as_str()
            };
            upsert.execute(params![
                r.id,
                r.tool,
                r.method,
                r.kind,
                r.subject,
                r.confidence,
                r.summary,
                json(&r.axes),
                r.evidence.to_json().to_string(),
                r.first_seen_ms.unwrap_or(run.ran_at_ms),
                r.count,
                r.brief,
                stored_status,
                r.rejected_count,
                r.rate,
                r.rejected_rate,
            ])?;
            link.execute(params![id, r.id, r.confidence, r.count, r.muted()])?;
            if r.reopened() {
                r.status = stored_status.to_string();
            }
        }
        let mut pair = tx
            .prepare(
                "INSERT INTO eval_alias_pairs (run_id, tool, from_arg, to_arg, count) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
        for ((tool, from, to), n) in &run.aggregate.alias_pairs {
            pair.execute(params![id, tool, from, to, *n as i64])?;
        }
    }
    if run.reasks {
        store_reasks(tx, id)?;
    }
    Ok(id)
}

/// Applies what the store knows of a recommendation (a person's status, the evidence it was
/// rejected at, when it was first seen) to the one a run just made. A recommendation rejected
/// before rejections kept their evidence is muted at what it rests on now.
pub(crate) fn apply_state(
    r: &mut Recommendation,
    status: String,
    rejected_count: Option<f64>,
    first_seen_ms: i64,
    rejected_rate: Option<f64>,
) {
    r.rejected_count = match (status.as_str(), rejected_count) {
        ("rejected", None) => Some(r.count),
        (_, kept) => kept,
    };
    r.rejected_rate = rejected_rate;
    r.status = status;
    r.first_seen_ms = Some(first_seen_ms);
}

/// Stores the re-asks the scan left in [`REASK_TABLE`] as user corrections, each once (by the
/// ask that corrected). A row already stored is left as it is unless its blame changed. A
/// re-ask once stored stays, with the run that found it, even if a later run under other
/// thresholds would not count it (runs count what they detect, never the stored rows).
fn store_reasks(tx: &rusqlite::Transaction<'_>, run_id: i64) -> rusqlite::Result<()> {
    tx.execute(
        &format!(
            "INSERT INTO main.user_corrections (ts_ms, session, tool, method, note, reask_ask_id, corrects_ask_id, \
               blamed_outcome_id, blamed_decision_id, found_by_run) \
             SELECT ts_ms, session, tool, method, note, reask_ask_id, corrects_ask_id, blamed_outcome_id, \
               blamed_decision_id, ?1 FROM {REASK_TABLE} WHERE true \
             ON CONFLICT (reask_ask_id) WHERE reask_ask_id IS NOT NULL DO UPDATE SET \
               tool = excluded.tool, method = excluded.method, corrects_ask_id = excluded.corrects_ask_id, \
               blamed_outcome_id = excluded.blamed_outcome_id, blamed_decision_id = excluded.blamed_decision_id, \
               found_by_run = excluded.found_by_run \
             WHERE tool IS NOT excluded.tool OR method IS NOT excluded.method \
               OR corrects_ask_id IS NOT excluded.corrects_ask_id \
               OR blamed_outcome_id IS NOT excluded.blamed_outcome_id \
               OR blamed_decision_id IS NOT excluded.blamed_decision_id"
        ),
        [run_id],
    )?;
    tx.execute_batch(&format!("DROP TABLE IF EXISTS {REASK_TABLE}"))
}

/// What the store knows of each recommendation (a person's status, the evidence it was
/// rejected at, when it was first seen), read without writing: a run knows which of its
/// recommendations are muted before anything is stored.
pub fn known_states(conn: &Connection, recs: &mut [Recommendation]) -> rusqlite::Result<()> {
    if !has_tables(conn)? {
        return Ok(());
    }
    let column = |name: &'static str| -> rusqlite::Result<&'static str> {
        Ok(if has_column(conn, "eval_recommendations", name)? {
            name
        } else {
            "NULL"
        })
    };
    let (rejected_count, rejected_rate) = (column("rejected_count")?, column("rejected_rate")?);
    let mut st = conn.prepare(&format!(
        "SELECT status, {rejected_count}, first_seen_ms, {rejected_rate} FROM eval_recommendations WHERE id = ?1"
    ))?;
    for r in recs {
        if let Some((status, count, first_seen, rate)) = st
            .query_row([&r.id], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .optional()?
        {
            apply_state(r, status, count, first_seen, rate);
        }
    }
    Ok(())
}

/// Whether `table` has `column` (a read-only store of an older metagate may not).
pub(crate) fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)",
        params![table, column],
        |r| r.get(0),
    )
}

/// Whether this store has the evaluate tables (a read-only store of an older metagate may
/// not).
pub(crate) fn has_tables(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'eval_recommendations')",
        [],
        |r| r.get(0),
    )
}

/// Sets a recommendation's status; `Ok(None)` when no recommendation has that id, else the
/// recommendation's tool, kind and previous status.
pub fn set_status(
    store: &mut Store,
    id: &str,
    status: &str,
) -> Result<Option<(String, String, String)>, StoreError> {
    store.immediate(|tx| {
        let found: Option<(String, String, String)> = tx
            .query_row(
                "SELECT tool, kind, status FROM eval_recommendations WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        if found.is_some() {
            // A rejection remembers the evidence it was made at: the recommendation stays
            // muted until its evidence grows past it.
            tx.execute(
                "UPDATE eval_recommendations SET status = ?2, \
                   rejected_count = CASE WHEN ?2 = 'rejected' THEN evidence_count ELSE rejected_count END, \
                   rejected_rate = CASE WHEN ?2 = 'rejected' THEN evidence_rate ELSE rejected_rate END \
                 WHERE id = ?1",
                params![id, status],
            )?;
        }
        Ok(found)
    })
}

/// The latest run, as `tools health` reads it.
#[derive(Debug, Clone, Default)]
pub struct LatestRun {
    /// The run's id.
    pub id: i64,
    /// Its window's start, in milliseconds since the epoch.
    pub window_from_ms: i64,
    /// Its window's end.
    pub window_to_ms: i64,
    /// When it ran.
    pub ran_at_ms: i64,
    /// The rows it counted up to.
    pub high_water: HighWater,
    /// Its counts per tool.
    pub tallies: Tallies,
    /// Tool → the run's recommendations still open (proposed or accepted, not muted).
    pub open_recommendations: OpenRecommendations,
    /// Tallies stored by the run that cannot be read back (tool, method, why): left out of
    /// [`LatestRun::tallies`], for the caller to say so.
    pub unreadable: Vec<(String, String, String)>,
}

/// The run `tools health` builds on when `until_ms` (exclusive) is the end of now: the one
/// made last among those whose window ends by then. A window reaching past it (an `--until`
/// ahead, or a clock set back) counted events whose time has not come yet.
pub fn latest(conn: &Connection, until_ms: i64) -> rusqlite::Result<Option<LatestRun>> {
    if !has_tables(conn)? {
        return Ok(None);
    }
    let run = conn
        .query_row(
            "SELECT id, window_from_ms, window_to_ms, ran_at_ms, decisions_hw, outcomes_hw, corrections_hw \
             FROM eval_runs WHERE window_to_ms <= ?1 ORDER BY ran_at_ms DESC, id DESC LIMIT 1",
            [until_ms],
            |r| {
                Ok(LatestRun {
                    id: r.get(0)?,
                    window_from_ms: r.get(1)?,
                    window_to_ms: r.get(2)?,
                    ran_at_ms: r.get(3)?,
                    high_water: HighWater {
                        decisions: r.get(4)?,
                        outcomes: r.get(5)?,
                        corrections: r.get(6)?,
                    },
                    ..LatestRun::default()
                })
            },
        )
        .optional()?;
    let Some(mut run) = run else {
        return Ok(None);
    };
    let mut st = conn.prepare("SELECT tool, method, tally FROM eval_health WHERE run_id = ?1")?;
    let mut rows = st.query([run.id])?;
    while let Some(r) = rows.next()? {
        let tool: String = r.get(0)?;
        let method: String = r.get(1)?;
        match serde_json::from_str::<Tally>(r.get_ref(2)?.as_str()?) {
            Ok(tally) => {
                run.tallies.entry(tool).or_default().insert(method, tally);
            }
            Err(e) => run.unreadable.push((tool, method, e.to_string())),
        }
    }
    run.open_recommendations = open_recommendations(conn, run.id)?;
    Ok(Some(run))
}

/// The recommendations of run `run_id` still open: not rejected (a rejection after the run
/// counts), not muted when the run was made.
fn open_recommendations(conn: &Connection, run_id: i64) -> rusqlite::Result<OpenRecommendations> {
    let mut open = BTreeMap::new();
    let mut st = conn.prepare(
        "SELECT r.tool, r.method, r.kind, coalesce(r.brief, r.summary), coalesce(l.confidence, r.confidence) \
         FROM eval_run_recommendations l JOIN eval_recommendations r ON r.id = l.rec_id \
         WHERE l.run_id = ?1 AND r.status <> 'rejected' AND l.muted = 0 ORDER BY r.tool, r.kind, r.id",
    )?;
    let mut rows = st.query([run_id])?;
    while let Some(r) = rows.next()? {
        let kind: String = r.get(2)?;
        let confidence: f64 = r.get(4)?;
        let severity = metagate_core::evolution::confidence::severity(&kind, confidence);
        let entry: &mut Vec<OpenRecommendation> = open.entry(r.get(0)?).or_default();
        entry.push(OpenRecommendation {
            method: r.get(1)?,
            kind,
            brief: r.get(3)?,
            severity,
        });
    }
    Ok(open)
}

/// The run a new run over `window` is compared with: the one made last, at or before
/// `until_ms`, over another window (a run over the same window is the one being replaced).
#[derive(Debug, Clone, Default)]
pub struct PreviousRun {
    /// The run's id.
    pub id: i64,
    /// Its window's start, in milliseconds since the epoch.
    pub window_from_ms: i64,
    /// Its window's end.
    pub window_to_ms: i64,
    /// When it ran.
    pub ran_at_ms: i64,
    /// `None` for a run stored before runs kept their policy.
    pub policy: Option<PolicyStamp>,
    /// What it recommended.
    pub recommendations: Vec<PastRecommendation>,
    /// Its counts per tool.
    pub tallies: Tallies,
}

/// The run before the one at `ran_at_ms`, for the digest.
pub fn previous(
    conn: &Connection,
    window: &Window,
    until_ms: i64,
) -> rusqlite::Result<Option<PreviousRun>> {
    if !has_tables(conn)? || !has_column(conn, "eval_runs", "policy_hash")? {
        return Ok(None);
    }
    let run = conn
        .query_row(
            "SELECT id, window_from_ms, window_to_ms, ran_at_ms, policy_file, policy_hash FROM eval_runs \
             WHERE ran_at_ms <= ?3 AND NOT (window_from_ms = ?1 AND window_to_ms = ?2) \
             ORDER BY ran_at_ms DESC, id DESC LIMIT 1",
            params![window.from_ms, window.until_ms, until_ms],
            |r| {
                let hash: Option<String> = r.get(5)?;
                Ok(PreviousRun {
                    id: r.get(0)?,
                    window_from_ms: r.get(1)?,
                    window_to_ms: r.get(2)?,
                    ran_at_ms: r.get(3)?,
                    policy: hash.map(|hash| PolicyStamp {
                        file: r.get(4).ok().flatten(),
                        hash,
                    }),
                    ..PreviousRun::default()
                })
            },
        )
        .optional()?;
    let Some(mut run) = run else {
        return Ok(None);
    };
    let mut st = conn.prepare(
        "SELECT r.id, r.tool, r.method, r.kind, r.summary, l.confidence, l.muted \
         FROM eval_run_recommendations l JOIN eval_recommendations r ON r.id = l.rec_id WHERE l.run_id = ?1",
    )?;
    run.recommendations = st
        .query_map([run.id], |r| {
            Ok(PastRecommendation {
                id: r.get(0)?,
                tool: r.get(1)?,
                method: r.get(2)?,
                kind: r.get(3)?,
                summary: r.get(4)?,
                confidence: r.get(5)?,
                muted: r.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut st = conn.prepare("SELECT tool, method, tally FROM eval_health WHERE run_id = ?1")?;
    let mut rows = st.query([run.id])?;
    while let Some(r) = rows.next()? {
        // A tally that cannot be read back leaves its tool out of the comparison.
        if let Ok(tally) = serde_json::from_str::<Tally>(r.get_ref(2)?.as_str()?) {
            run.tallies
                .entry(r.get(0)?)
                .or_default()
                .insert(r.get(1)?, tally);
        }
    }
    Ok(Some(run))
}

/// Whether the store holds any evaluate run at all.
pub fn any_run(conn: &Connection) -> rusqlite::Result<bool> {
    if !has_tables(conn)? {
        return Ok(false);
    }
    conn.query_row("SELECT EXISTS (SELECT 1 FROM eval_runs)", [], |r| r.get(0))
}

/// What a run counted: the rows its scan read (row ids up to its high-water marks) dated in
/// its window, which ends at `until_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub(crate) high_water: HighWater,
    pub(crate) until_ms: i64,
}

impl Counted {
    /// A store never evaluated: nothing counted yet.
    pub const NOTHING: Counted = Counted {
        high_water: HighWater {
            decisions: 0,
            outcomes: 0,
            corrections: 0,
        },
        until_ms: i64::MIN,
    };

    /// The counts a stored run holds.
    pub fn of(run: &LatestRun) -> Counted {
        Counted {
            high_water: run.high_water,
            until_ms: run.window_to_ms,
        }
    }
}

// The rows of `window` a run did not count come in two parts. Those recorded after its scan
// (row id past the high-water mark) are read by row id from the end of each table; `+ts_ms`
// keeps the planner off the time indexes, which would walk the whole window. Those its scan
// read but dated at or after its window's end (dated ahead when recorded, or a run with an
// `--until` before it was made) are found through an index that starts with the time, or with
// the tool: one seek per tool name, walking from name to name (`min(tool) … WHERE tool > name`)
// since SQLite has no skip-scan without statistics. Either way the cost follows the rows
// counted, never the size of the store.

/// Decisions recorded after the run: ?1 high-water mark, ?2 and ?3 the window.
const DECISIONS_AFTER: &str = "SELECT tool, method, verdict, category, count(*), max(ts_ms) FROM decisions \
     WHERE rowid > ?1 AND +ts_ms >= ?2 AND +ts_ms < ?3 AND tool IS NOT NULL \
     GROUP BY tool, method, verdict, category";

/// Decisions the run's scan read dated at or after its window: ?1 and ?2 the times, ?3 the
/// high-water mark.
const DECISIONS_AHEAD: &str = "WITH RECURSIVE names(name) AS ( \
       SELECT (SELECT min(tool) FROM decisions INDEXED BY decisions_by_tool) \
       UNION ALL \
       SELECT (SELECT min(tool) FROM decisions INDEXED BY decisions_by_tool WHERE tool > name) \
       FROM names WHERE name IS NOT NULL) \
     SELECT tool, method, verdict, category, count(*), max(ts_ms) \
     FROM names CROSS JOIN decisions INDEXED BY decisions_by_tool \
     WHERE tool = name AND ts_ms >= ?1 AND ts_ms < ?2 AND decisions.rowid <= ?3 \
     GROUP BY tool, method, verdict, category";

const OUTCOMES_AFTER: &str = "outcomes WHERE rowid > ?1 AND +ts_ms >= ?2 AND +ts_ms < ?3";

const OUTCOMES_AHEAD: &str =
    "outcomes INDEXED BY outcomes_by_ts WHERE ts_ms >= ?1 AND ts_ms < ?2 AND rowid <= ?3";

// Re-asks `evaluate` stored are in the runs' own counts: only explicit corrections are live.
const CORRECTIONS_AFTER: &str = "user_corrections INDEXED BY user_corrections_explicit \
     WHERE id > ?1 AND +ts_ms >= ?2 AND +ts_ms < ?3 AND reask_ask_id IS NULL";

const CORRECTION_NAMES: &str = "WITH RECURSIVE names(name) AS ( \
       SELECT (SELECT min(tool) FROM user_corrections INDEXED BY user_corrections_by_tool) \
       UNION ALL \
       SELECT (SELECT min(tool) FROM user_corrections INDEXED BY user_corrections_by_tool WHERE tool > name) \
       FROM names WHERE name IS NOT NULL) ";

const CORRECTIONS_AHEAD: &str = "names CROSS JOIN user_corrections INDEXED BY user_corrections_by_tool \
     WHERE tool = name AND ts_ms >= ?1 AND ts_ms < ?2 AND user_corrections.rowid <= ?3 \
       AND reask_ask_id IS NULL";

/// Counts of what `evaluate` over `window` would count and the run did not: every event dated
/// in the window (so none before its time comes), less those `counted`. With the run's own
/// counts that is each event of the window once.
pub fn live(
    conn: &Connection,
    counted: &Counted,
    window: &Window,
    t: &Thresholds,
    axes: &AxisTable,
) -> rusqlite::Result<Tallies> {
    let read = Reading { window, t, axes };
    let mut agg = Aggregate::default();
    let hw = counted.high_water;
    let (from, until) = (window.from_ms, window.until_ms);
    // The part of the window after the run's, when there is one.
    let ahead_from = counted.until_ms.max(from);
    let ahead = ahead_from < until;
    let mut add_decisions = |sql: &str, args: &[&dyn rusqlite::ToSql]| -> rusqlite::Result<()> {
        let mut st = conn.prepare(sql)?;
        let mut rows = st.query(args)?;
        while let Some(r) = rows.next()? {
            let tool: String = r.get(0)?;
            let method: Option<String> = r.get(1)?;
            let verdict: String = r.get(2)?;
            let category: Option<String> = r.get(3)?;
            let n: i64 = r.get(4)?;
            let last: i64 = r.get(5)?;
            let tally = agg.tally(&tool, method.as_deref());
            tally.add_decisions(n.max(0) as u64, last, &verdict, category.as_deref());
        }
        Ok(())
    };
    add_decisions(DECISIONS_AFTER, &[&hw.decisions, &from, &until])?;
    if ahead && hw.decisions > 0 {
        add_decisions(DECISIONS_AHEAD, &[&ahead_from, &until, &hw.decisions])?;
    }
    let outcomes_hw = [&ahead_from as &dyn rusqlite::ToSql, &until, &hw.outcomes];
    let corrections_hw = [&ahead_from as &dyn rusqlite::ToSql, &until, &hw.corrections];

    add_outcomes(
        conn,
        Rows::table(OUTCOMES_AFTER),
        &[&hw.outcomes, &from, &until],
        &read,
        &mut agg,
        &mut || {},
    )?;
    add_corrections(
        conn,
        Rows::table(CORRECTIONS_AFTER),
        &[&hw.corrections, &from, &until],
        &read,
        &mut agg,
        &mut || {},
    )?;
    if ahead && hw.outcomes > 0 {
        add_outcomes(
            conn,
            Rows::table(OUTCOMES_AHEAD),
            &outcomes_hw,
            &read,
            &mut agg,
            &mut || {},
        )?;
    }
    if ahead && hw.corrections > 0 {
        let rows = Rows {
            with: CORRECTION_NAMES,
            from: CORRECTIONS_AHEAD,
        };
        add_corrections(conn, rows, &corrections_hw, &read, &mut agg, &mut || {})?;
    }
    agg.finish();
    Ok(agg.tallies)
}

/// One recommendation as the store keeps it (`evaluate show`).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRecommendation {
    /// The recommendation's stable id.
    pub id: String,
    /// The tool it is about.
    pub tool: String,
    /// The method, if it is about one.
    pub method: Option<String>,
    /// The recommendation kind.
    pub kind: String,
    /// What it is about (an argument, an axis), as stored.
    pub subject: String,
    /// How sure evaluate was, from 0 to 1.
    pub confidence: f64,
    /// One line saying what to do.
    pub summary: String,
    /// The line for `<known_tools>`, if any.
    pub brief: Option<String>,
    /// The axes a referral named.
    pub axes: Vec<String>,
    /// The evidence object (an array of texts for a recommendation stored before evidence
    /// was an object).
    pub evidence: serde_json::Value,
    /// Open, muted or done.
    pub status: String,
    /// When it was first recommended, in milliseconds since the epoch.
    pub first_seen_ms: i64,
    /// When it was last recommended.
    pub last_seen_ms: i64,
    /// How much evidence it rested on.
    pub evidence_count: Option<f64>,
    /// How many rejections it rested on.
    pub rejected_count: Option<f64>,
    /// The latest run it was part of.
    pub last_run: Option<i64>,
}

/// A re-ask stored as a user correction of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReask {
    /// When the re-ask came, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The session, if any.
    pub session: Option<String>,
    /// What the user complained, redacted.
    pub complaint: Option<String>,
    /// The ask it corrects: its row and text.
    pub corrects_ask_id: Option<i64>,
    /// What the user asked instead, redacted.
    pub corrected_text: Option<String>,
    /// The outcome blamed, if any.
    pub blamed_outcome_id: Option<i64>,
    /// The decision blamed, if any.
    pub blamed_decision_id: Option<i64>,
}

/// At most this many re-asks are shown with a recommendation.
pub(crate) const SHOWN_REASKS: usize = 10;

/// A stored recommendation and the latest re-asks stored against its tool and method.
pub fn show(
    conn: &Connection,
    id: &str,
) -> rusqlite::Result<Option<(StoredRecommendation, Vec<StoredReask>)>> {
    if !has_tables(conn)? || !has_column(conn, "eval_recommendations", "brief")? {
        return Ok(None);
    }
    let found = conn
        .query_row(
            "SELECT id, tool, method, kind, subject, confidence, summary, brief, axes, evidence, status, \
               first_seen_ms, last_seen_ms, evidence_count, rejected_count, \
               (SELECT max(run_id) FROM eval_run_recommendations WHERE rec_id = id) \
             FROM eval_recommendations WHERE id = ?1",
            [id],
            |r| {
                let axes: String = r.get(8)?;
                let evidence: String = r.get(9)?;
                Ok(StoredRecommendation {
                    id: r.get(0)?,
                    tool: r.get(1)?,
                    method: r.get(2)?,
                    kind: r.get(3)?,
                    subject: r.get(4)?,
                    confidence: r.get(5)?,
                    summary: r.get(6)?,
                    brief: r.get(7)?,
                    axes: serde_json::from_str(&axes).unwrap_or_default(),
                    evidence: serde_json::from_str(&evidence).unwrap_or_default(),
                    status: r.get(10)?,
                    first_seen_ms: r.get(11)?,
                    last_seen_ms: r.get(12)?,
                    evidence_count: r.get(13)?,
                    rejected_count: r.get(14)?,
                    last_run: r.get(15)?,
                })
            },
        )
        .optional()?;
    let Some(rec) = found else {
        return Ok(None);
    };
    let mut st = conn.prepare(
        "SELECT c.ts_ms, c.session, c.note, c.corrects_ask_id, a.text, c.blamed_outcome_id, c.blamed_decision_id \
         FROM user_corrections c LEFT JOIN asks a ON a.id = c.corrects_ask_id \
         WHERE c.reask_ask_id IS NOT NULL AND c.tool = ?1 AND c.method IS ?2 \
         ORDER BY c.ts_ms DESC, c.id DESC LIMIT ?3",
    )?;
    let reasks = st
        .query_map(params![rec.tool, rec.method, SHOWN_REASKS as i64], |r| {
            Ok(StoredReask {
                ts_ms: r.get(0)?,
                session: r.get(1)?,
                complaint: r.get(2)?,
                corrects_ask_id: r.get(3)?,
                corrected_text: r.get(4)?,
                blamed_outcome_id: r.get(5)?,
                blamed_decision_id: r.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some((rec, reasks)))
}

/// The referrals dated in `[?1, ?2)` with a row id up to ?3, through the index that holds only
/// them.
const RECENT_REFERRALS: &str = "SELECT tool, method, \
       sum(error_type = 'wrong_tool_boundary'), sum(error_type = 'low_utility') \
     FROM outcomes INDEXED BY outcomes_referrals_by_ts \
     WHERE (error_type = 'wrong_tool_boundary' OR error_type = 'low_utility') AND ts_ms >= ?1 AND ts_ms < ?2 \
       AND rowid <= ?3 \
     GROUP BY tool, method";

/// (tool, method or `""`) → boundary and low-utility referrals.
pub type ReferralCounts = BTreeMap<(String, String), (u64, u64)>;

/// (tool, method or `""`) → boundary and low-utility referrals dated in `[from_ms,
/// until_ms)`, of those up to row id `up_to`: the part of `tools health`'s recent counts the
/// hours kept by a run do not give.
pub fn recent_referrals(
    conn: &Connection,
    from_ms: i64,
    until_ms: i64,
    up_to: i64,
) -> rusqlite::Result<ReferralCounts> {
    let mut st = conn.prepare(RECENT_REFERRALS)?;
    let mut rows = st.query(params![from_ms, until_ms, up_to])?;
    let mut out = BTreeMap::new();
    while let Some(r) = rows.next()? {
        let method: Option<String> = r.get(1)?;
        let boundary: i64 = r.get(2)?;
        let low: i64 = r.get(3)?;
        out.insert(
            (r.get(0)?, method.unwrap_or_default()),
            (boundary.max(0) as u64, low.max(0) as u64),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema takes any kind (a new one needs no table rebuild); the code refuses one
    /// evaluate does not make, naming it.
    #[test]
    fn kinds_are_checked_by_the_code_not_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        store
            .conn_ref()
            .execute(
                "INSERT INTO eval_recommendations (id, tool, kind, confidence, summary, \
                   first_seen_ms, last_seen_ms) VALUES ('r', 't', 'a_kind_from_tomorrow', 0.5, 's', 1, 1)",
                [],
            )
            .unwrap();
        let status_check = store.conn_ref().execute(
            "INSERT INTO eval_recommendations (id, tool, kind, confidence, summary, status, \
               first_seen_ms, last_seen_ms) VALUES ('q', 't', 'demote', 0.5, 's', 'maybe', 1, 1)",
            [],
        );
        assert!(status_check.is_err(), "the status keeps its CHECK");
        let rec = |kind| Recommendation {
            id: "x".into(),
            tool: "t".into(),
            method: None,
            kind,
            subject: String::new(),
            confidence: 0.5,
            count: 1.0,
            summary: String::new(),
            brief: String::new(),
            axes: Vec::new(),
            evidence: Default::default(),
            status: "proposed".into(),
            rejected_count: None,
            first_seen_ms: None,
            change: None,
            rate: 0.5,
            rejected_rate: None,
            mute_margin: 0.0,
            changed_at_ms: None,
        };
        for kind in metagate_core::evolution::KINDS {
            assert!(known_kinds(&[rec(kind)]).is_ok(), "{kind}");
        }
        let err = known_kinds(&[rec("demote"), rec("bogus")]).unwrap_err();
        assert!(err.to_string().contains("\"bogus\""), "{err}");
    }

    /// `tools health` has 200 ms on a store of 10,000,000 events: every live query must find
    /// its rows through the row id or an index, never by reading a table or an index whole.
    #[test]
    fn live_counts_never_scan_a_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let conn = store.conn_ref();
        let queries = [
            DECISIONS_AFTER.to_string(),
            DECISIONS_AHEAD.to_string(),
            format!("SELECT ts_ms FROM {OUTCOMES_AFTER}"),
            format!("SELECT ts_ms FROM {OUTCOMES_AHEAD}"),
            format!("SELECT ts_ms FROM {CORRECTIONS_AFTER}"),
            format!("{CORRECTION_NAMES}SELECT ts_ms, tool, method FROM {CORRECTIONS_AHEAD}"),
            RECENT_REFERRALS.to_string(),
        ];
        for sql in queries {
            let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let params: [&dyn rusqlite::ToSql; 3] = [&1_i64, &2_i64, &3_i64];
            let n = st.parameter_count();
            let plan: Vec<String> = st
                .query_map(&params[..n], |r| r.get::<_, String>(3))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for step in &plan {
                let table = ["decisions", "outcomes", "user_corrections"]
                    .iter()
                    .any(|t| step.contains(&format!(" {t}")));
                assert!(
                    !table || step.starts_with("SEARCH "),
                    "{step} in {plan:?}\n{sql}"
                );
            }
        }
    }
}
