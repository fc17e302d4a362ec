//! Evaluate runs in the PostgreSQL store, as `runs.rs` reads and writes them in SQLite: the
//! latest run and the live counts `tools health` adds to it, a recommendation and its re-asks
//! (`evaluate show`), a person's status (`--accept`, `--reject`). The counts of decisions
//! recorded since a run are made in the server (`GROUP BY`); outcomes and corrections are
//! read row by row, as in SQLite, because the tallies keep their texts.

use std::collections::BTreeMap;

use postgres::types::ToSql;

use crate::StoreError;
use crate::aggregate::OUTCOME_COLUMNS;
use crate::pg::PgStore;
use crate::pg_scan::{PG_REASK_TABLE, correction_fields, outcome_fields};
use crate::pg_text::ToPgText;
use crate::runs::{
    Counted, EvalRun, HighWater, LatestRun, PolicyStamp, PreviousRun, ReferralCounts, SHOWN_REASKS,
    StoredReask, StoredRecommendation, apply_state,
};
use metagate_core::events::AxisTable;
use metagate_core::evolution::confidence::severity;
use metagate_core::evolution::digest::PastRecommendation;
use metagate_core::evolution::fold::{Reading, add_correction, add_outcome};
use metagate_core::evolution::health::{OpenRecommendation, OpenRecommendations};
use metagate_core::evolution::{Aggregate, Recommendation, Tallies, Tally, Window};
use metagate_core::policy::thresholds::Thresholds;

type Params<'a> = [&'a (dyn ToSql + Sync)];

/// Decisions recorded after the run ($1 its high-water mark) dated in the window ($2, $3).
const DECISIONS_AFTER: &str = "SELECT tool, method, verdict, category, count(*), max(ts_ms) \
     FROM decisions WHERE id > $1 AND ts_ms >= $2 AND ts_ms < $3 AND tool IS NOT NULL \
     GROUP BY tool, method, verdict, category";

/// Decisions the run's scan read ($3 its high-water mark) dated at or after its window's end
/// ($1), before $2.
const DECISIONS_AHEAD: &str = "SELECT tool, method, verdict, category, count(*), max(ts_ms) \
     FROM decisions WHERE ts_ms >= $1 AND ts_ms < $2 AND id <= $3 AND tool IS NOT NULL \
     GROUP BY tool, method, verdict, category";

// Rows in the order SQLite reads them: by row id after the run, by time ahead of it.
const OUTCOMES_AFTER: &str = "outcomes WHERE id > $1 AND ts_ms >= $2 AND ts_ms < $3 ORDER BY id";

const OUTCOMES_AHEAD: &str =
    "outcomes WHERE ts_ms >= $1 AND ts_ms < $2 AND id <= $3 ORDER BY ts_ms, id";

// Re-asks `evaluate` stored are in the runs' own counts: only explicit corrections are live.
const CORRECTIONS_AFTER: &str = "user_corrections \
     WHERE id > $1 AND ts_ms >= $2 AND ts_ms < $3 AND reask_ask_id IS NULL ORDER BY id";

const CORRECTIONS_AHEAD: &str = "user_corrections \
     WHERE ts_ms >= $1 AND ts_ms < $2 AND id <= $3 AND reask_ask_id IS NULL \
     ORDER BY tool COLLATE \"C\", ts_ms, id";

impl PgStore {
    /// See [`crate::runs::latest`].
    pub(crate) fn latest_run(&mut self, until_ms: i64) -> Result<Option<LatestRun>, StoreError> {
        self.read_latest_run(until_ms).map_err(|e| self.err(e))
    }

    fn read_latest_run(&mut self, until_ms: i64) -> Result<Option<LatestRun>, postgres::Error> {
        let found = self.client().query_opt(
            "SELECT id, window_from_ms, window_to_ms, ran_at_ms, decisions_hw, outcomes_hw, corrections_hw \
             FROM eval_runs WHERE window_to_ms <= $1 ORDER BY ran_at_ms DESC, id DESC LIMIT 1",
            &[&until_ms],
        )?;
        let Some(r) = found else {
            return Ok(None);
        };
        let mut run = LatestRun {
            id: r.try_get(0)?,
            window_from_ms: r.try_get(1)?,
            window_to_ms: r.try_get(2)?,
            ran_at_ms: r.try_get(3)?,
            high_water: HighWater {
                decisions: r.try_get(4)?,
                outcomes: r.try_get(5)?,
                corrections: r.try_get(6)?,
            },
            ..LatestRun::default()
        };
        let rows = self.client().query(
            "SELECT tool, method, tally FROM eval_health WHERE run_id = $1",
            &[&run.id],
        )?;
        for r in rows {
            let tool: String = r.try_get(0)?;
            let method: String = r.try_get(1)?;
            match serde_json::from_str::<Tally>(r.try_get(2)?) {
                Ok(tally) => {
                    run.tallies.entry(tool).or_default().insert(method, tally);
                }
                Err(e) => run.unreadable.push((tool, method, e.to_string())),
            }
        }
        run.open_recommendations = self.open_recommendations(run.id)?;
        Ok(Some(run))
    }

    /// The recommendations of run `run_id` still open (see `runs.rs`).
    fn open_recommendations(
        &mut self,
        run_id: i64,
    ) -> Result<OpenRecommendations, postgres::Error> {
        let rows = self.client().query(
            "SELECT r.tool, r.method, r.kind, coalesce(r.brief, r.summary), coalesce(l.confidence, r.confidence) \
             FROM eval_run_recommendations l JOIN eval_recommendations r ON r.id = l.rec_id \
             WHERE l.run_id = $1 AND r.status <> 'rejected' AND l.muted = 0 \
             ORDER BY r.tool COLLATE \"C\", r.kind COLLATE \"C\", r.id COLLATE \"C\"",
            &[&run_id],
        )?;
        let mut open: OpenRecommendations = BTreeMap::new();
        for r in rows {
            let kind: String = r.try_get(2)?;
            let confidence: f64 = r.try_get(4)?;
            let severity = severity(&kind, confidence);
            open.entry(r.try_get(0)?)
                .or_default()
                .push(OpenRecommendation {
                    method: r.try_get(1)?,
                    kind,
                    brief: r.try_get(3)?,
                    severity,
                });
        }
        Ok(open)
    }

    /// Whether the store holds any evaluate run at all.
    pub(crate) fn any_run(&mut self) -> Result<bool, StoreError> {
        let found = self
            .client()
            .query_one("SELECT EXISTS (SELECT 1 FROM eval_runs)", &[]);
        found.and_then(|r| r.try_get(0)).map_err(|e| self.err(e))
    }

    /// See [`crate::runs::live`].
    pub(crate) fn live(
        &mut self,
        counted: &Counted,
        window: &Window,
        t: &Thresholds,
        axes: &AxisTable,
    ) -> Result<Tallies, StoreError> {
        self.read_live(counted, window, t, axes)
            .map_err(|e| self.err(e))
    }

    fn read_live(
        &mut self,
        counted: &Counted,
        window: &Window,
        t: &Thresholds,
        axes: &AxisTable,
    ) -> Result<Tallies, postgres::Error> {
        let read = Reading { window, t, axes };
        let mut agg = Aggregate::default();
        let hw = counted.high_water;
        let (from, until) = (window.from_ms, window.until_ms);
        // The part of the window after the run's, when there is one.
        let ahead_from = counted.until_ms.max(from);
        let ahead = ahead_from < until;
        let mut add_decisions = |client: &mut postgres::Client,
                                 sql: &str,
                                 args: &Params<'_>|
         -> Result<(), postgres::Error> {
            for r in client.query(sql, args)? {
                let n: i64 = r.try_get(4)?;
                agg.tally(r.try_get(0)?, r.try_get(1)?).add_decisions(
                    n.max(0) as u64,
                    r.try_get(5)?,
                    r.try_get(2)?,
                    r.try_get(3)?,
                );
            }
            Ok(())
        };
        add_decisions(
            self.client(),
            DECISIONS_AFTER,
            &[&hw.decisions, &from, &until],
        )?;
        if ahead && hw.decisions > 0 {
            add_decisions(
                self.client(),
                DECISIONS_AHEAD,
                &[&ahead_from, &until, &hw.decisions],
            )?;
        }
        self.add_outcomes(
            OUTCOMES_AFTER,
            &[&hw.outcomes, &from, &until],
            &read,
            &mut agg,
        )?;
        self.add_corrections(
            CORRECTIONS_AFTER,
            &[&hw.corrections, &from, &until],
            &read,
            &mut agg,
        )?;
        if ahead && hw.outcomes > 0 {
            self.add_outcomes(
                OUTCOMES_AHEAD,
                &[&ahead_from, &until, &hw.outcomes],
                &read,
                &mut agg,
            )?;
        }
        if ahead && hw.corrections > 0 {
            self.add_corrections(
                CORRECTIONS_AHEAD,
                &[&ahead_from, &until, &hw.corrections],
                &read,
                &mut agg,
            )?;
        }
        agg.finish();
        Ok(agg.tallies)
    }

    /// Adds the outcomes `SELECT OUTCOME_COLUMNS FROM {from}` finds.
    fn add_outcomes(
        &mut self,
        from: &str,
        args: &Params<'_>,
        read: &Reading<'_>,
        agg: &mut Aggregate,
    ) -> Result<(), postgres::Error> {
        let sql = format!("SELECT {OUTCOME_COLUMNS} FROM {from}");
        for r in self.client().query(&sql, args)? {
            add_outcome(outcome_fields(&r)?, read, agg);
        }
        Ok(())
    }

    /// Adds the explicit user corrections `FROM {from}` holds.
    fn add_corrections(
        &mut self,
        from: &str,
        args: &Params<'_>,
        read: &Reading<'_>,
        agg: &mut Aggregate,
    ) -> Result<(), postgres::Error> {
        let sql = format!("SELECT ts_ms, tool, method, session, note FROM {from}");
        for r in self.client().query(&sql, args)? {
            add_correction(correction_fields(&r)?, read, agg);
        }
        Ok(())
    }

    /// See [`crate::runs::recent_referrals`].
    pub(crate) fn recent_referrals(
        &mut self,
        from_ms: i64,
        until_ms: i64,
        up_to: i64,
    ) -> Result<ReferralCounts, StoreError> {
        let rows = self.client().query(
            "SELECT tool, method, count(*) FILTER (WHERE error_type = 'wrong_tool_boundary'), \
               count(*) FILTER (WHERE error_type = 'low_utility') \
             FROM outcomes \
             WHERE (error_type = 'wrong_tool_boundary' OR error_type = 'low_utility') \
               AND ts_ms >= $1 AND ts_ms < $2 AND id <= $3 \
             GROUP BY tool, method",
            &[&from_ms, &until_ms, &up_to],
        );
        let rows = rows.map_err(|e| self.err(e))?;
        let read = || {
            let mut out = BTreeMap::new();
            for r in rows {
                let method: Option<String> = r.try_get(1)?;
                let boundary: i64 = r.try_get(2)?;
                let low: i64 = r.try_get(3)?;
                out.insert(
                    (r.try_get(0)?, method.unwrap_or_default()),
                    (boundary.max(0) as u64, low.max(0) as u64),
                );
            }
            Ok(out)
        };
        read().map_err(|e| self.err(e))
    }

    /// See [`crate::runs::show`].
    pub(crate) fn show_recommendation(
        &mut self,
        id: &str,
    ) -> Result<Option<(StoredRecommendation, Vec<StoredReask>)>, StoreError> {
        self.read_recommendation(id).map_err(|e| self.err(e))
    }

    fn read_recommendation(
        &mut self,
        id: &str,
    ) -> Result<Option<(StoredRecommendation, Vec<StoredReask>)>, postgres::Error> {
        let found = self.client().query_opt(
            "SELECT id, tool, method, kind, subject, confidence, summary, brief, axes, evidence, status, \
               first_seen_ms, last_seen_ms, evidence_count, rejected_count, \
               (SELECT max(run_id) FROM eval_run_recommendations WHERE rec_id = id) \
             FROM eval_recommendations WHERE id = $1",
            &[&id.pg_text()],
        )?;
        let Some(r) = found else {
            return Ok(None);
        };
        let rec = StoredRecommendation {
            id: r.try_get(0)?,
            tool: r.try_get(1)?,
            method: r.try_get(2)?,
            kind: r.try_get(3)?,
            subject: r.try_get(4)?,
            confidence: r.try_get(5)?,
            summary: r.try_get(6)?,
            brief: r.try_get(7)?,
            axes: serde_json::from_str(r.try_get(8)?).unwrap_or_default(),
            evidence: serde_json::from_str(r.try_get(9)?).unwrap_or_default(),
            status: r.try_get(10)?,
            first_seen_ms: r.try_get(11)?,
            last_seen_ms: r.try_get(12)?,
            evidence_count: r.try_get(13)?,
            rejected_count: r.try_get(14)?,
            last_run: r.try_get(15)?,
        };
        let rows = self.client().query(
            "SELECT c.ts_ms, c.session, c.note, c.corrects_ask_id, a.text, c.blamed_outcome_id, c.blamed_decision_id \
             FROM user_corrections c LEFT JOIN asks a ON a.id = c.corrects_ask_id \
             WHERE c.reask_ask_id IS NOT NULL AND c.tool = $1 AND c.method IS NOT DISTINCT FROM $2 \
             ORDER BY c.ts_ms DESC, c.id DESC LIMIT $3",
            &[
                &rec.tool.pg_key(),
                &rec.method.pg_key(),
                &(SHOWN_REASKS as i64),
            ],
        )?;
        let reasks = rows
            .iter()
            .map(|r| {
                Ok(StoredReask {
                    ts_ms: r.try_get(0)?,
                    session: r.try_get(1)?,
                    complaint: r.try_get(2)?,
                    corrects_ask_id: r.try_get(3)?,
                    corrected_text: r.try_get(4)?,
                    blamed_outcome_id: r.try_get(5)?,
                    blamed_decision_id: r.try_get(6)?,
                })
            })
            .collect::<Result<_, postgres::Error>>()?;
        Ok(Some((rec, reasks)))
    }

    /// See [`crate::runs::set_status`]: the row is locked while it changes.
    pub(crate) fn set_recommendation_status(
        &mut self,
        id: &str,
        status: &str,
    ) -> Result<Option<(String, String, String)>, StoreError> {
        let done = (|| {
            let mut tx = self.client().transaction()?;
            let found = tx.query_opt(
                "SELECT tool, kind, status FROM eval_recommendations WHERE id = $1 FOR UPDATE",
                &[&id.pg_text()],
            )?;
            let Some(r) = found else {
                return Ok(None);
            };
            // A rejection remembers the evidence it was made at, as in SQLite.
            tx.execute(
                "UPDATE eval_recommendations SET status = $2, \
                   rejected_count = CASE WHEN $2 = 'rejected' THEN evidence_count ELSE rejected_count END, \
                   rejected_rate = CASE WHEN $2 = 'rejected' THEN evidence_rate ELSE rejected_rate END \
                 WHERE id = $1",
                &[&id.pg_text(), &status.pg_text()],
            )?;
            tx.commit()?;
            Ok(Some((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        })();
        done.map_err(|e: postgres::Error| self.err(e))
    }
}

impl PgStore {
    /// See [`crate::runs::save`]: the same rows, in one transaction; the re-asks a
    /// [`crate::pg_scan::PgReaskSink`] staged on this connection are stored with it.
    pub(crate) fn save_run(&mut self, run: EvalRun<'_>) -> Result<i64, StoreError> {
        crate::runs::known_kinds(run.recommendations)?;
        let saved = (|| {
            let mut tx = self.client().transaction()?;
            let id = save_in(&mut tx, run)?;
            tx.commit()?;
            Ok(id)
        })();
        saved.map_err(|e: postgres::Error| self.err(e))
    }

    /// See [`crate::runs::known_states`].
    pub(crate) fn known_states(&mut self, recs: &mut [Recommendation]) -> Result<(), StoreError> {
        let read = (|| {
            let st = self.client().prepare(
                "SELECT status, rejected_count, first_seen_ms, rejected_rate FROM eval_recommendations WHERE id = $1",
            )?;
            for r in recs.iter_mut() {
                if let Some(row) = self.client().query_opt(&st, &[&r.id.pg_text()])? {
                    apply_state(
                        r,
                        row.try_get(0)?,
                        row.try_get(1)?,
                        row.try_get(2)?,
                        row.try_get(3)?,
                    );
                }
            }
            Ok(())
        })();
        read.map_err(|e: postgres::Error| self.err(e))
    }

    /// See [`crate::runs::previous`].
    pub(crate) fn previous_run(
        &mut self,
        window: &Window,
        until_ms: i64,
    ) -> Result<Option<PreviousRun>, StoreError> {
        self.read_previous_run(window, until_ms)
            .map_err(|e| self.err(e))
    }

    fn read_previous_run(
        &mut self,
        window: &Window,
        until_ms: i64,
    ) -> Result<Option<PreviousRun>, postgres::Error> {
        let found = self.client().query_opt(
            "SELECT id, window_from_ms, window_to_ms, ran_at_ms, policy_file, policy_hash FROM eval_runs \
             WHERE ran_at_ms <= $3 AND NOT (window_from_ms = $1 AND window_to_ms = $2) \
             ORDER BY ran_at_ms DESC, id DESC LIMIT 1",
            &[&window.from_ms, &window.until_ms, &until_ms],
        )?;
        let Some(r) = found else {
            return Ok(None);
        };
        let hash: Option<String> = r.try_get(5)?;
        let mut run = PreviousRun {
            id: r.try_get(0)?,
            window_from_ms: r.try_get(1)?,
            window_to_ms: r.try_get(2)?,
            ran_at_ms: r.try_get(3)?,
            policy: match hash {
                Some(hash) => Some(PolicyStamp {
                    file: r.try_get(4)?,
                    hash,
                }),
                None => None,
            },
            ..PreviousRun::default()
        };
        run.recommendations = self
            .client()
            .query(
                "SELECT r.id, r.tool, r.method, r.kind, r.summary, l.confidence, l.muted \
                 FROM eval_run_recommendations l JOIN eval_recommendations r ON r.id = l.rec_id \
                 WHERE l.run_id = $1 ORDER BY r.id COLLATE \"C\"",
                &[&run.id],
            )?
            .iter()
            .map(|r| {
                Ok(PastRecommendation {
                    id: r.try_get(0)?,
                    tool: r.try_get(1)?,
                    method: r.try_get(2)?,
                    kind: r.try_get(3)?,
                    summary: r.try_get(4)?,
                    confidence: r.try_get(5)?,
                    muted: r.try_get::<_, i64>(6)? != 0,
                })
            })
            .collect::<Result<_, postgres::Error>>()?;
        let rows = self.client().query(
            "SELECT tool, method, tally FROM eval_health WHERE run_id = $1",
            &[&run.id],
        )?;
        for r in rows {
            // A tally that cannot be read back leaves its tool out of the comparison.
            if let Ok(tally) = serde_json::from_str::<Tally>(r.try_get(2)?) {
                run.tallies
                    .entry(r.try_get(0)?)
                    .or_default()
                    .insert(r.try_get(1)?, tally);
            }
        }
        Ok(Some(run))
    }
}

fn save_in(tx: &mut postgres::Transaction<'_>, run: EvalRun<'_>) -> Result<i64, postgres::Error> {
    let hw = run.high_water;
    let shards = serde_json::to_string(run.shards).expect("strings serialize");
    let events = run.aggregate.events as i64;
    let unlinked = run.aggregate.unlinked_corrections as i64;
    let unattributed = run.aggregate.unattributed_reasks as i64;
    let id: i64 = tx
        .query_one(
            "INSERT INTO eval_runs (window_from_ms, window_to_ms, ran_at_ms, events, shards, \
               decisions_hw, outcomes_hw, corrections_hw, unlinked_corrections, policy_file, policy_hash, \
               unattributed_reasks) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (window_from_ms, window_to_ms) DO UPDATE SET \
               ran_at_ms = excluded.ran_at_ms, events = excluded.events, shards = excluded.shards, \
               decisions_hw = excluded.decisions_hw, outcomes_hw = excluded.outcomes_hw, \
               corrections_hw = excluded.corrections_hw, unlinked_corrections = excluded.unlinked_corrections, \
               policy_file = excluded.policy_file, policy_hash = excluded.policy_hash, \
               unattributed_reasks = excluded.unattributed_reasks \
             RETURNING id",
            &[
                &run.window.from_ms,
                &run.window.until_ms,
                &run.ran_at_ms,
                &events,
                &shards.pg_text(),
                &hw.decisions,
                &hw.outcomes,
                &hw.corrections,
                &unlinked,
                &run.policy.file.pg_text(),
                &run.policy.hash.pg_text(),
                &unattributed,
            ],
        )?
        .try_get(0)?;
    for table in [
        "eval_health",
        "eval_run_recommendations",
        "eval_alias_pairs",
    ] {
        tx.execute(&format!("DELETE FROM {table} WHERE run_id = $1"), &[&id])?;
    }
    let t = run.thresholds;
    let health = tx.prepare(
        "INSERT INTO eval_health (run_id, tool, method, calls, utility, cohesion_warning, degraded, tally) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )?;
    for (tool, methods) in &run.aggregate.tallies {
        for (method, tally) in methods {
            // Stored with its recent hours even when there were none (see `runs.rs`).
            let mut tally = tally.clone();
            tally.recent_by_hour.get_or_insert_with(BTreeMap::new);
            tx.execute(
                &health,
                &[
                    &id,
                    &tool.pg_key(),
                    &method.pg_key(),
                    &(tally.calls as i64),
                    &tally.utility(),
                    &i64::from(tally.cohesion_warning(t)),
                    &i64::from(tally.degraded(t)),
                    &serde_json::to_string(&tally)
                        .expect("a tally serializes")
                        .pg_text(),
                ],
            )?;
        }
    }
    let known = tx.prepare(
        "SELECT status, rejected_count, first_seen_ms, rejected_rate FROM eval_recommendations WHERE id = $1",
    )?;
    let upsert = tx.prepare(
        "INSERT INTO eval_recommendations (id, tool, method, kind, subject, confidence, summary, axes, evidence, \
           first_seen_ms, last_seen_ms, evidence_count, brief, status, rejected_count, evidence_rate, rejected_rate) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14, $15, $16) \
         ON CONFLICT (id) DO UPDATE SET confidence = excluded.confidence, summary = excluded.summary, \
           axes = excluded.axes, evidence = excluded.evidence, evidence_count = excluded.evidence_count, \
           brief = excluded.brief, status = excluded.status, rejected_count = excluded.rejected_count, \
               evidence_rate = excluded.evidence_rate, rejected_rate = excluded.rejected_rate, \
           last_seen_ms = greatest(eval_recommendations.last_seen_ms, excluded.last_seen_ms)",
    )?;
    let link = tx.prepare(
        "INSERT INTO eval_run_recommendations (run_id, rec_id, confidence, evidence_count, muted) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    )?;
    let json = |v: &[String]| serde_json::to_string(v).expect("strings serialize");
    for r in run.recommendations.iter_mut() {
        match tx.query_opt(&known, &[&r.id.pg_text()])? {
            Some(row) => apply_state(
                r,
                row.try_get(0)?,
                row.try_get(1)?,
                row.try_get(2)?,
                row.try_get(3)?,
            ),
            None => r.first_seen_ms = Some(run.ran_at_ms),
        }
        // As in `runs.rs`: one whose evidence grew past its rejection is proposed again.
        let stored_status = if r.reopened() {
            "proposed"
        } else {
            r.status.as_str()
        };
        tx.execute(
            &upsert,
            &[
                &r.id.pg_text(),
                &r.tool.pg_key(),
                &r.method.pg_key(),
                &r.kind.pg_text(),
                &r.subject.pg_text(),
                &r.confidence,
                &r.summary.pg_text(),
                &json(&r.axes).pg_text(),
                &r.evidence.to_json().to_string().pg_text(),
                &r.first_seen_ms.unwrap_or(run.ran_at_ms),
                &r.count,
                &r.brief.pg_text(),
                &stored_status.pg_text(),
                &r.rejected_count,
                &r.rate,
                &r.rejected_rate,
            ],
        )?;
        tx.execute(
            &link,
            &[
                &id,
                &r.id.pg_text(),
                &r.confidence,
                &r.count,
                &i64::from(r.muted()),
            ],
        )?;
        if r.reopened() {
            r.status = stored_status.to_string();
        }
    }
    let pair = tx.prepare(
        "INSERT INTO eval_alias_pairs (run_id, tool, from_arg, to_arg, count) VALUES ($1, $2, $3, $4, $5)",
    )?;
    for ((tool, from, to), n) in &run.aggregate.alias_pairs {
        tx.execute(
            &pair,
            &[
                &id,
                &tool.pg_key(),
                &from.pg_key(),
                &to.pg_key(),
                &(*n as i64),
            ],
        )?;
    }
    if run.reasks {
        tx.execute(
            &format!(
                "INSERT INTO user_corrections (ts_ms, session, tool, method, note, reask_ask_id, corrects_ask_id, \
                   blamed_outcome_id, blamed_decision_id, found_by_run) \
                 SELECT ts_ms, session, tool, method, note, reask_ask_id, corrects_ask_id, blamed_outcome_id, \
                   blamed_decision_id, $1 FROM {PG_REASK_TABLE} \
                 ON CONFLICT (reask_ask_id) WHERE reask_ask_id IS NOT NULL DO UPDATE SET \
                   tool = excluded.tool, method = excluded.method, corrects_ask_id = excluded.corrects_ask_id, \
                   blamed_outcome_id = excluded.blamed_outcome_id, blamed_decision_id = excluded.blamed_decision_id, \
                   found_by_run = excluded.found_by_run \
                 WHERE user_corrections.tool IS DISTINCT FROM excluded.tool \
                   OR user_corrections.method IS DISTINCT FROM excluded.method \
                   OR user_corrections.corrects_ask_id IS DISTINCT FROM excluded.corrects_ask_id \
                   OR user_corrections.blamed_outcome_id IS DISTINCT FROM excluded.blamed_outcome_id \
                   OR user_corrections.blamed_decision_id IS DISTINCT FROM excluded.blamed_decision_id"
            ),
            &[&id],
        )?;
        tx.batch_execute(&format!("DROP TABLE IF EXISTS {PG_REASK_TABLE}"))?;
    }
    Ok(id)
}
