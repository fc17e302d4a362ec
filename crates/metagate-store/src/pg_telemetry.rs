//! What `gate`, `record` and `permit` read and write in the PostgreSQL store: the same rows and
//! questions as `telemetry.rs` and `grants.rs` ask of SQLite.

use postgres::types::ToSql;

use crate::StoreError;
use crate::grants::{GrantEvent, Revoked, RevokedAll, event_name, scope_from_text};
use crate::pg::{DECISIONS_LOCK, PgStore};
use crate::pg_text::{PgKey, PgText, ToPgText};
use crate::telemetry::DecisionRow;
use metagate_core::enforce::{Count, CountKey};
use metagate_core::events::Event;
use metagate_core::grants::{Grant, GrantId};
use metagate_core::policy::file::PrereqEvidence;

type Params<'a> = Vec<&'a (dyn ToSql + Sync)>;

impl PgStore {
    /// Opens the transaction a group of decisions commits in, and takes the decisions lock in
    /// it (waiting up to the busy timeout): counts read after this see every group committed
    /// before, and no other process counts until this one commits or rolls back.
    pub(crate) fn lock_decisions(&mut self) -> Result<(), StoreError> {
        let begun = self.client().batch_execute("BEGIN").and_then(|()| {
            self.client()
                .execute("SELECT pg_advisory_xact_lock($1)", &[&DECISIONS_LOCK])
                .map(drop)
        });
        begun.map_err(|e| {
            let _ = self.client().batch_execute("ROLLBACK");
            self.err(e)
        })
    }

    /// Writes a group of decisions (and their grant events, each with the index of its
    /// decision) in the transaction [`PgStore::lock_decisions`] opened, or in one of their
    /// own; returns the id of the last decision.
    pub(crate) fn commit_decisions(
        &mut self,
        rows: &[DecisionRow],
        grant_events: Vec<(usize, GrantEvent)>,
        locked: bool,
    ) -> Result<Option<i64>, StoreError> {
        let written = (|| {
            // One statement, needing no transaction of its own, when it is the whole group.
            let own_transaction = !locked && !grant_events.is_empty();
            if own_transaction {
                self.client().batch_execute("BEGIN")?;
            }
            let ids = self.insert_decisions(rows)?;
            for (row, mut event) in grant_events {
                event.decision_id = ids.get(row).copied();
                self.insert_grant_event(&event)?;
            }
            if locked || own_transaction {
                self.client().batch_execute("COMMIT")?;
            }
            Ok(ids.last().copied())
        })();
        written.map_err(|e: postgres::Error| {
            // Nothing of the group stays, and the lock is let go.
            let _ = self.client().batch_execute("ROLLBACK");
            self.err(e)
        })
    }

    /// Inserts decision rows in one statement (one round trip for a whole group); returns
    /// their ids in row order.
    fn insert_decisions(&mut self, rows: &[DecisionRow]) -> Result<Vec<i64>, postgres::Error> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        const INSERT: &str = concat!(
            "INSERT INTO decisions (",
            decision_columns!(),
            ") SELECT ",
            decision_columns!(),
            " FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
              $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], \
              $13::bigint[], $14::bigint[], $15::text[]) WITH ORDINALITY AS u(",
            decision_columns!(),
            ", n) ORDER BY n RETURNING id"
        );
        let text = |f: fn(&DecisionRow) -> Option<&str>| -> Vec<PgText<'_>> {
            rows.iter().map(|r| PgText(f(r))).collect()
        };
        // The indexed ones, bounded (see `pg_text.rs`).
        let key = |f: fn(&DecisionRow) -> Option<&str>| -> Vec<PgKey<'_>> {
            rows.iter().map(|r| PgKey(f(r))).collect()
        };
        let ts: Vec<i64> = rows.iter().map(|r| r.ts_ms).collect();
        let session = text(|r| r.session.as_deref());
        let caller = key(|r| r.caller.as_deref());
        let intent = text(|r| r.intent.as_deref());
        let tool = key(|r| r.tool.as_deref());
        let method = key(|r| r.method.as_deref());
        let shape = text(|r| r.shape);
        let verdict = text(|r| Some(r.verdict));
        let category = text(|r| r.category);
        let corrections = text(|r| Some(r.corrections.as_str()));
        let warnings = text(|r| Some(r.warnings.as_str()));
        let args = text(|r| r.args.as_deref());
        let fingerprint: Vec<Option<i64>> = rows.iter().map(|r| r.fingerprint).collect();
        let latency: Vec<i64> = rows.iter().map(|r| r.latency_us).collect();
        let call_id = text(|r| r.call_id.as_deref());
        let statement = self.prepared(INSERT)?;
        let params: Params<'_> = vec![
            &ts,
            &session,
            &caller,
            &intent,
            &tool,
            &method,
            &shape,
            &verdict,
            &category,
            &corrections,
            &warnings,
            &args,
            &fingerprint,
            &latency,
            &call_id,
        ];
        let mut ids: Vec<i64> = self
            .client()
            .query(&statement, &params)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        // Identities are drawn in the order the rows are inserted, which is `n`'s.
        ids.sort_unstable();
        Ok(ids)
    }

    fn insert_grant_event(&mut self, e: &GrantEvent) -> Result<(), postgres::Error> {
        let statement = self.prepared(concat!(
            "INSERT INTO grant_events (",
            grant_event_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))?;
        self.client().execute(
            &statement,
            &[
                &e.ts_ms,
                &e.event.pg_text(),
                &e.grant_id.pg_text(),
                &e.capability.pg_key(),
                &e.tool.pg_key(),
                &e.session.pg_text(),
                &e.decision_id,
                &e.actor.pg_text(),
                &e.detail.pg_text(),
            ],
        )?;
        Ok(())
    }

    /// Appends events in one transaction: all of them or none.
    pub(crate) fn insert_events(&mut self, events: &[Event]) -> Result<(), StoreError> {
        self.in_transaction(|store| store.insert_events_into("", events))
    }

    /// Makes an empty stage for `record --strict`: temporary tables shaped as the event
    /// tables, this connection's only, so filling them takes no lock on the store.
    pub(crate) fn stage(&mut self) -> Result<(), StoreError> {
        let mut sql = String::new();
        for (table, _) in EVENT_TABLES {
            sql.push_str(&format!(
                "DROP TABLE IF EXISTS pg_temp.staged_{table}; \
                 CREATE TEMP TABLE staged_{table} (LIKE {table} INCLUDING DEFAULTS INCLUDING IDENTITY);"
            ));
        }
        self.client().batch_execute(&sql).map_err(|e| self.err(e))
    }

    /// Appends events to the stage.
    pub(crate) fn stage_events(&mut self, events: &[Event]) -> Result<(), StoreError> {
        self.in_transaction(|store| store.insert_events_into("pg_temp.staged_", events))
    }

    /// Copies every staged event into the store, in the order staged, in one transaction.
    pub(crate) fn store_staged(&mut self) -> Result<(), StoreError> {
        self.in_transaction(|store| {
            for (table, columns) in EVENT_TABLES {
                store.client().execute(
                    &format!(
                        "INSERT INTO {table} ({columns}) \
                         SELECT {columns} FROM pg_temp.staged_{table} ORDER BY id"
                    ),
                    &[],
                )?;
            }
            Ok(())
        })
    }

    /// Removes the stage.
    pub(crate) fn unstage(&mut self) -> Result<(), StoreError> {
        let sql: String = EVENT_TABLES
            .iter()
            .map(|(table, _)| format!("DROP TABLE IF EXISTS pg_temp.staged_{table};"))
            .collect();
        self.client().batch_execute(&sql).map_err(|e| self.err(e))
    }

    fn insert_events_into(
        &mut self,
        prefix: &str,
        events: &[Event],
    ) -> Result<(), postgres::Error> {
        let outcome = self.client().prepare(&format!(
            "INSERT INTO {prefix}outcomes ({OUTCOME}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
               coalesce($14, (SELECT caller FROM decisions WHERE id = $15), \
                 (SELECT caller FROM decisions WHERE $16::text IS NOT NULL AND session = $2 AND call_id = $16 \
                  ORDER BY ts_ms DESC, id DESC LIMIT 1)))"
        ))?;
        let ask = self.client().prepare(&format!(
            "INSERT INTO {prefix}asks ({ASK}) VALUES ($1, $2, $3, $4, $5)"
        ))?;
        let correction = self.client().prepare(&format!(
            "INSERT INTO {prefix}user_corrections ({CORRECTION}) VALUES ($1, $2, $3, $4, $5)"
        ))?;
        let json = |v: &[String]| serde_json::to_string(v).expect("strings serialize");
        for event in events {
            match event {
                Event::Outcome(o) => {
                    let status = if o.ok { "ok" } else { "error" };
                    let (axes, raw) = (json(&o.axes), json(&o.axes_raw));
                    let metadata = o.metadata.as_ref().map(|m| m.to_string());
                    self.client().execute(
                        &outcome,
                        &[
                            &o.ts_ms,
                            &o.session.pg_text(),
                            &o.tool.pg_key(),
                            &o.method.pg_key(),
                            &status.pg_text(),
                            &o.error_type.pg_key(),
                            &o.error_message.pg_text(),
                            &axes.pg_text(),
                            &raw.pg_text(),
                            &o.observed_task_shape.pg_text(),
                            &o.suggested_split.pg_text(),
                            &o.evidence.pg_text(),
                            &metadata.pg_text(),
                            &o.caller.pg_key(),
                            &o.decision_id,
                            &o.call_id.pg_key(),
                        ],
                    )
                }
                Event::Ask(a) => {
                    let capabilities = json(&a.capabilities);
                    self.client().execute(
                        &ask,
                        &[
                            &a.ts_ms,
                            &a.session.pg_text(),
                            &a.user.pg_text(),
                            &a.text.pg_text(),
                            &capabilities.pg_text(),
                        ],
                    )
                }
                Event::Correction(c) => self.client().execute(
                    &correction,
                    &[
                        &c.ts_ms,
                        &c.session.pg_text(),
                        &c.tool.pg_key(),
                        &c.method.pg_key(),
                        &c.note.pg_text(),
                    ],
                ),
            }?;
        }
        Ok(())
    }

    /// Runs `work` in one transaction, committed when it succeeds and rolled back when not.
    fn in_transaction<T>(
        &mut self,
        work: impl FnOnce(&mut PgStore) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let done = self
            .client()
            .batch_execute("BEGIN")
            .and_then(|()| work(self))
            .and_then(|out| self.client().batch_execute("COMMIT").map(|()| out));
        done.map_err(|e| {
            let _ = self.client().batch_execute("ROLLBACK");
            self.err(e)
        })
    }

    /// Calls let through that match `key` at or after `since_ms`, the `cap` most recent at
    /// most (as `telemetry::count` counts them in SQLite).
    pub(crate) fn count(
        &mut self,
        key: &CountKey,
        since_ms: Option<i64>,
        cap: u64,
    ) -> Result<Count, StoreError> {
        macro_rules! capped {
            ($filter:literal) => {
                concat!(
                    "SELECT count(*), min(ts_ms) FROM (SELECT ts_ms FROM decisions WHERE ",
                    $filter,
                    " AND ts_ms >= $2 AND verdict <> 'rejected' ORDER BY ts_ms DESC LIMIT $3) AS d"
                )
            };
        }
        let since = since_ms.unwrap_or(i64::MIN);
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        // Looked up as they were stored (see `pg_text.rs`): a caller or tool as a key.
        let (text, bound);
        let (sql, first, scope): (
            &'static str,
            &(dyn ToSql + Sync),
            Option<Box<dyn ToSql + Sync + '_>>,
        ) = match key {
            CountKey::Caller(c) => {
                bound = c.pg_key();
                (capped!("caller = $1"), &bound, None)
            }
            CountKey::Tool(t) => {
                bound = t.pg_key();
                (capped!("tool = $1"), &bound, None)
            }
            CountKey::Session(s) => {
                text = s.pg_text();
                (capped!("session = $1"), &text, None)
            }
            CountKey::Fingerprint {
                fingerprint,
                session,
                caller,
            } => match (session, caller) {
                (Some(s), _) => (
                    capped!("fingerprint = $1 AND session = $4"),
                    fingerprint,
                    Some(Box::new(s.pg_text())),
                ),
                (None, Some(c)) => (
                    capped!("fingerprint = $1 AND caller = $4"),
                    fingerprint,
                    Some(Box::new(c.pg_key())),
                ),
                (None, None) => (
                    capped!("fingerprint = $1 AND session IS NULL AND caller IS NULL"),
                    fingerprint,
                    None,
                ),
            },
        };
        let counted = (|| {
            let statement = self.prepared(sql)?;
            let mut params: Params<'_> = vec![first, &since, &cap];
            if let Some(scope) = &scope {
                params.push(scope.as_ref());
            }
            let row = self.client().query_one(&statement, &params)?;
            Ok(Count {
                n: row.try_get::<_, i64>(0)?.max(0) as u64,
                oldest_ms: row.try_get(1)?,
            })
        })();
        counted.map_err(|e| self.err(e))
    }

    /// Whether `tool` completed in `session` (see `telemetry::completed`).
    pub(crate) fn completed(
        &mut self,
        session: &str,
        tool: &str,
        evidence: PrereqEvidence,
    ) -> Result<bool, StoreError> {
        let asked = (|| {
            let outcome = self.prepared(
                "SELECT EXISTS (SELECT 1 FROM outcomes WHERE session = $1 AND tool = $2 AND status = 'ok')",
            )?;
            let found: bool = self
                .client()
                .query_one(&outcome, &[&session.pg_text(), &tool.pg_key()])?
                .try_get(0)?;
            if found || evidence == PrereqEvidence::Outcome {
                return Ok(found);
            }
            let decision = self.prepared(
                "SELECT EXISTS (SELECT 1 FROM decisions WHERE session = $1 AND tool = $2 AND verdict <> 'rejected')",
            )?;
            self.client()
                .query_one(&decision, &[&session.pg_text(), &tool.pg_key()])?
                .try_get(0)
        })();
        asked.map_err(|e| self.err(e))
    }

    /// The grants that may cover a call for `capability` (see `grants::candidates`).
    pub(crate) fn grant_candidates(
        &mut self,
        capability: &str,
        now_ms: i64,
    ) -> Result<Vec<Grant>, StoreError> {
        const SQL: &str = "SELECT id, capability, scope, session, granted_at_ms, expires_at_ms, \
             revoked_at_ms, granted_by, reason, mac FROM grants WHERE capability = $1 \
             AND ((revoked_at_ms IS NULL AND expires_at_ms > $2) \
               OR id IN (SELECT id FROM grants WHERE capability = $1 ORDER BY granted_at_ms DESC LIMIT 3)) \
             ORDER BY granted_at_ms DESC";
        let found = (|| -> Result<Vec<Grant>, postgres::Error> {
            let statement = self.prepared(SQL)?;
            let rows = self
                .client()
                .query(&statement, &[&capability.pg_key(), &now_ms])?;
            rows.iter().map(grant_of).collect()
        })();
        found.map_err(|e| self.err(e))
    }

    /// Grants, newest first (see `grants::list`).
    pub(crate) fn grants(&mut self, all: bool, now_ms: i64) -> Result<Vec<Grant>, StoreError> {
        let rows = if all {
            self.client().query(
                &format!("SELECT {GRANT} FROM grants ORDER BY granted_at_ms DESC, id"),
                &[],
            )
        } else {
            self.client().query(
                &format!(
                    "SELECT {GRANT} FROM grants WHERE revoked_at_ms IS NULL AND expires_at_ms > $1 \
                     ORDER BY granted_at_ms DESC, id"
                ),
                &[&now_ms],
            )
        };
        rows.and_then(|rows| rows.iter().map(grant_of).collect())
            .map_err(|e| self.err(e))
    }

    /// The grants' audit trail, oldest first.
    pub(crate) fn grant_events(&mut self) -> Result<Vec<GrantEvent>, StoreError> {
        let rows = self.client().query(
            "SELECT ts_ms, event, grant_id, capability, tool, session, decision_id, actor, detail \
             FROM grant_events ORDER BY ts_ms, id",
            &[],
        );
        let rows = rows.map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                Ok(GrantEvent {
                    ts_ms: r.try_get(0)?,
                    event: event_name(r.try_get::<_, &str>(1)?),
                    grant_id: r.try_get(2)?,
                    capability: r.try_get(3)?,
                    tool: r.try_get(4)?,
                    session: r.try_get(5)?,
                    decision_id: r.try_get(6)?,
                    actor: r.try_get(7)?,
                    detail: r.try_get(8)?,
                })
            })
            .collect::<Result<_, postgres::Error>>()
            .map_err(|e| self.err(e))
    }

    /// Stores a new grant and its `granted` event.
    pub(crate) fn insert_grant(&mut self, g: &Grant) -> Result<(), StoreError> {
        let scope: Vec<String> = g.scope.iter().map(|s| s.to_stored()).collect();
        let scope = serde_json::to_string(&scope).expect("strings serialize");
        self.in_transaction(|store| {
            store.client().execute(
                &format!(
                    "INSERT INTO grants ({GRANT}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
                ),
                &[
                    &g.id.as_str().pg_text(),
                    &g.capability.pg_key(),
                    &scope.pg_text(),
                    &g.session.pg_text(),
                    &g.granted_at_ms,
                    &g.expires_at_ms,
                    &g.revoked_at_ms,
                    &g.granted_by.pg_text(),
                    &g.reason.pg_text(),
                    &g.mac.pg_text(),
                ],
            )?;
            store.insert_grant_event(&GrantEvent::granted(g))
        })
    }

    /// Revokes one grant (see `grants::revoke`); the row is locked while it is read and
    /// changed, so two operators revoking it at once record one revocation.
    pub(crate) fn revoke_grant(
        &mut self,
        id: &GrantId,
        now_ms: i64,
        actor: Option<&str>,
    ) -> Result<Revoked, StoreError> {
        self.in_transaction(|store| {
            let found = store.client().query_opt(
                &format!("SELECT {GRANT} FROM grants WHERE id = $1 FOR UPDATE"),
                &[&id.as_str().pg_text()],
            )?;
            let Some(mut g) = found.as_ref().map(grant_of).transpose()? else {
                return Ok(Revoked::Unknown);
            };
            if g.revoked_at_ms.is_some() {
                return Ok(Revoked::Already(g));
            }
            store.revoke_in(&g, now_ms, actor)?;
            g.revoked_at_ms = Some(now_ms);
            Ok(Revoked::Done(g))
        })
    }

    /// Revokes every grant not yet revoked (see `grants::revoke_all`).
    pub(crate) fn revoke_all_grants(
        &mut self,
        now_ms: i64,
        actor: Option<&str>,
    ) -> Result<RevokedAll, StoreError> {
        self.in_transaction(|store| {
            let rows = store.client().query(
                &format!(
                    "SELECT {GRANT} FROM grants WHERE revoked_at_ms IS NULL \
                     ORDER BY granted_at_ms, id FOR UPDATE"
                ),
                &[],
            )?;
            let mut done = RevokedAll::default();
            for g in rows.iter().map(grant_of) {
                let g = g?;
                store.revoke_in(&g, now_ms, actor)?;
                if g.expires_at_ms > now_ms {
                    done.live.push(g);
                } else {
                    done.expired.push(g);
                }
            }
            Ok(done)
        })
    }

    fn revoke_in(
        &mut self,
        g: &Grant,
        now_ms: i64,
        actor: Option<&str>,
    ) -> Result<(), postgres::Error> {
        self.client().execute(
            "UPDATE grants SET revoked_at_ms = $2, mac = NULL WHERE id = $1 AND revoked_at_ms IS NULL",
            &[&g.id.as_str().pg_text(), &now_ms],
        )?;
        self.insert_grant_event(&GrantEvent::revoked(g, now_ms, actor))
    }
}

fn grant_of(r: &postgres::Row) -> Result<Grant, postgres::Error> {
    let (scope, unreadable) = match scope_from_text(r.try_get(2)?) {
        Ok(scope) => (scope, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    Ok(Grant {
        id: GrantId::from_stored(r.try_get(0)?),
        capability: r.try_get(1)?,
        scope,
        unreadable,
        session: r.try_get(3)?,
        granted_at_ms: r.try_get(4)?,
        expires_at_ms: r.try_get(5)?,
        revoked_at_ms: r.try_get(6)?,
        granted_by: r.try_get(7)?,
        reason: r.try_get(8)?,
        mac: r.try_get(9)?,
        forged: false,
    })
}

use crate::columns::{
    ASK, CORRECTION, EVENT_TABLES, GRANT, OUTCOME, decision_columns, grant_event_columns,
};
