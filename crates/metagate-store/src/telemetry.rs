//! Writing telemetry: gate decisions, committed in groups, and recorded events.

use rusqlite::params;

use crate::any::AnyStore;
use crate::{Store, StoreError};
use metagate_core::enforce::{Count, CountKey};
use metagate_core::events::Event;
use metagate_core::policy::file::PrereqEvidence;

/// One decision row, every text already redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRow {
    /// When the call was decided, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The session, if any.
    pub session: Option<String>,
    /// The caller, if any.
    pub caller: Option<String>,
    /// The intent, if any.
    pub intent: Option<String>,
    /// The tool, when the call named one.
    pub tool: Option<String>,
    /// The method, if any.
    pub method: Option<String>,
    /// The envelope the call came in.
    pub shape: Option<&'static str>,
    /// `pass`, `corrected` or `rejected`.
    pub verdict: &'static str,
    /// The error category, when rejected.
    pub category: Option<&'static str>,
    /// JSON array of corrections.
    pub corrections: String,
    /// JSON array of warning sentences.
    pub warnings: String,
    /// JSON object of the arguments as decided.
    pub args: Option<String>,
    /// Identifies the same tool with the same arguments (the loop breaker's key).
    pub fingerprint: Option<i64>,
    /// How long the decision took, in microseconds.
    pub latency_us: i64,
    /// The call's id as its document gave it.
    pub call_id: Option<String>,
}

const INSERT_DECISION: &str = concat!(
    "INSERT INTO decisions (",
    crate::columns::decision_columns!(),
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
);

/// Writes decision rows in groups: [`DecisionBatch::push`] holds them, [`DecisionBatch::commit`]
/// writes them all in one transaction.
pub(crate) struct DecisionBatch {
    store: AnyStore,
    pending: Vec<DecisionRow>,
    /// Grant audit events, each with the index of the pending row (decision) it belongs to.
    grant_events: Vec<(usize, crate::grants::GrantEvent)>,
    /// Whether [`DecisionBatch::lock`] opened the write transaction the next commit ends.
    locked: bool,
    /// The row id of the last decision committed: what an outcome recorded later names.
    last_decision_id: Option<i64>,
}

impl DecisionBatch {
    pub(crate) fn new(store: impl Into<AnyStore>) -> DecisionBatch {
        DecisionBatch {
            store: store.into(),
            pending: Vec::new(),
            grant_events: Vec::new(),
            locked: false,
            last_decision_id: None,
        }
    }

    /// Takes the store's write lock (waiting up to the busy timeout) and holds it until the
    /// next [`DecisionBatch::commit`], which writes in that same transaction. Limits read their
    /// counts under it: two processes counting at once would both see the count before
    /// either call, and both let their call through.
    pub(crate) fn lock(&mut self) -> Result<(), StoreError> {
        if !self.locked {
            match &mut self.store {
                AnyStore::Sqlite(store) => store
                    .conn_ref()
                    .execute_batch("BEGIN IMMEDIATE")
                    .map_err(|e| store.err(e))?,
                #[cfg(feature = "postgres")]
                AnyStore::Postgres(pg) => pg.lock_decisions()?,
            }
            self.locked = true;
        }
        Ok(())
    }

    pub(crate) fn push(&mut self, row: DecisionRow) {
        self.pending.push(row);
    }

    /// Attaches a grant audit event to the row pushed last: it is written with that decision,
    /// in the same transaction, naming its id.
    pub(crate) fn push_grant_event(&mut self, event: crate::grants::GrantEvent) {
        if let Some(last) = self.pending.len().checked_sub(1) {
            self.grant_events.push((last, event));
        }
    }

    /// Makes every pushed row durable, or none of them, and lets go of the write lock.
    pub(crate) fn commit(&mut self) -> Result<usize, StoreError> {
        if self.pending.is_empty() && !self.locked {
            return Ok(0);
        }
        let locked = std::mem::take(&mut self.locked);
        let (n, last) = match &mut self.store {
            AnyStore::Sqlite(_) => self.commit_sqlite(locked)?,
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(pg) => {
                let rows = std::mem::take(&mut self.pending);
                let events = std::mem::take(&mut self.grant_events);
                (rows.len(), pg.commit_decisions(&rows, events, locked)?)
            }
        };
        if last.is_some() {
            self.last_decision_id = last;
        }
        Ok(n)
    }

    #[cfg_attr(not(feature = "postgres"), allow(irrefutable_let_patterns))]
    fn commit_sqlite(&mut self, locked: bool) -> Result<(usize, Option<i64>), StoreError> {
        let AnyStore::Sqlite(store) = &self.store else {
            unreachable!("called for an SQLite store only");
        };
        let path = store.path().to_path_buf();
        let fail = |e| StoreError::from_sqlite(&path, e);
        if !locked {
            store
                .conn_ref()
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(fail)?;
        }
        let written = self.write_pending().and_then(|(n, last)| {
            self.sqlite().execute_batch("COMMIT")?;
            Ok((n, last))
        });
        written.map_err(|e| {
            // Nothing of the group stays, and the lock is let go: a failed ROLLBACK (the
            // transaction already ended) leaves nothing to undo.
            let _ = self.sqlite().execute_batch("ROLLBACK");
            fail(e)
        })
    }

    /// The SQLite connection (only called once the store is known to be SQLite).
    fn sqlite(&self) -> &rusqlite::Connection {
        match &self.store {
            AnyStore::Sqlite(store) => store.conn_ref(),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(_) => unreachable!("called for an SQLite store only"),
        }
    }

    /// The row id of the last decision committed, if any was.
    pub(crate) fn last_decision_id(&self) -> Option<i64> {
        self.last_decision_id
    }

    /// Inserts the pending rows (and their grant events) in the open transaction; returns how
    /// many, and the id of the last.
    fn write_pending(&mut self) -> rusqlite::Result<(usize, Option<i64>)> {
        let rows = std::mem::take(&mut self.pending);
        let mut grant_events = std::mem::take(&mut self.grant_events)
            .into_iter()
            .peekable();
        let tx = self.sqlite();
        let mut last = None;
        {
            let mut insert = tx.prepare_cached(INSERT_DECISION)?;
            for (i, r) in rows.iter().enumerate() {
                insert.execute(params![
                    r.ts_ms,
                    r.session,
                    r.caller,
                    r.intent,
                    r.tool,
                    r.method,
                    r.shape,
                    r.verdict,
                    r.category,
                    r.corrections,
                    r.warnings,
                    r.args,
                    r.fingerprint,
                    r.latency_us,
                    r.call_id,
                ])?;
                let id = tx.last_insert_rowid();
                last = Some(id);
                while let Some((_, mut event)) = grant_events.next_if(|(row, _)| *row == i) {
                    event.decision_id = Some(id);
                    crate::grants::insert_event(tx, &event)?;
                }
            }
        }
        Ok((rows.len(), last))
    }

    pub(crate) fn store_mut(&mut self) -> &mut AnyStore {
        &mut self.store
    }
}

/// Appends events in one transaction: all of them or none.
pub fn insert_events(store: &mut Store, events: &[Event]) -> Result<(), StoreError> {
    store.immediate(|tx| insert_events_in(tx, events))
}

/// Appends events inside a transaction the caller holds.
fn insert_events_in(tx: &rusqlite::Connection, events: &[Event]) -> rusqlite::Result<()> {
    insert_events_into(tx, STORE, events)
}

/// The store's event tables.
const STORE: &str = "main.";

/// The tables [`stage`] makes: the event tables' shape, in SQLite's temporary database (a
/// file of its own, deleted when the connection closes), never the store.
const STAGE: &str = "temp.staged_";

use crate::columns::{ASK, CORRECTION, EVENT_TABLES, OUTCOME};

/// The caller an outcome is stored with: the one it names, else its decision's (named by row
/// id, or by the call's id within the session), so evaluate can blame a caller without a join.
const OUTCOME_CALLER: &str = "coalesce(?14, \
     (SELECT caller FROM main.decisions WHERE id = ?15), \
     (SELECT caller FROM main.decisions INDEXED BY decisions_by_session \
      WHERE ?16 IS NOT NULL AND session = ?2 AND call_id = ?16 ORDER BY ts_ms DESC, id DESC LIMIT 1))";

/// Makes an empty stage for events on `conn`: tables shaped as the event tables, outside the
/// store, so filling them takes no lock on it (and, kept in a temporary file rather than
/// memory, whatever their size). A stage left from before is emptied.
pub fn stage(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA temp_store = FILE")?;
    for (table, _) in EVENT_TABLES {
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS {STAGE}{table}; \
             CREATE TEMP TABLE staged_{table} AS SELECT * FROM main.{table} WHERE 0;"
        ))?;
    }
    Ok(())
}

/// Appends events to the stage, in one transaction of the temporary database only.
pub fn stage_events(conn: &rusqlite::Connection, events: &[Event]) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    insert_events_into(&tx, STAGE, events)?;
    tx.commit()
}

/// Copies every staged event into the store, in the order staged, inside a transaction the
/// caller holds.
pub fn store_staged(tx: &rusqlite::Connection) -> rusqlite::Result<()> {
    for (table, columns) in EVENT_TABLES {
        tx.execute(
            &format!(
                "INSERT INTO {STORE}{table} ({columns}) \
                 SELECT {columns} FROM {STAGE}{table} ORDER BY rowid"
            ),
            [],
        )?;
    }
    Ok(())
}

/// Removes the stage.
pub fn unstage(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    for (table, _) in EVENT_TABLES {
        conn.execute_batch(&format!("DROP TABLE IF EXISTS {STAGE}{table}"))?;
    }
    Ok(())
}

/// Appends events to the event tables whose names start with `prefix` (the store's, or the
/// stage's).
fn insert_events_into(
    conn: &rusqlite::Connection,
    prefix: &str,
    events: &[Event],
) -> rusqlite::Result<()> {
    let mut outcome = conn.prepare_cached(&format!(
        "INSERT INTO {prefix}outcomes ({OUTCOME}) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, {OUTCOME_CALLER})"
    ))?;
    let mut ask = conn.prepare_cached(&format!(
        "INSERT INTO {prefix}asks ({ASK}) VALUES (?1, ?2, ?3, ?4, ?5)"
    ))?;
    let mut correction = conn.prepare_cached(&format!(
        "INSERT INTO {prefix}user_corrections ({CORRECTION}) VALUES (?1, ?2, ?3, ?4, ?5)"
    ))?;
    let json = |v: &[String]| serde_json::to_string(v).expect("strings serialize");
    for event in events {
        match event {
            Event::Outcome(o) => outcome.execute(params![
                o.ts_ms,
                o.session,
                o.tool,
                o.method,
                if o.ok { "ok" } else { "error" },
                o.error_type,
                o.error_message,
                json(&o.axes),
                json(&o.axes_raw),
                o.observed_task_shape,
                o.suggested_split,
                o.evidence,
                o.metadata.as_ref().map(|m| m.to_string()),
                o.caller,
                o.decision_id,
                o.call_id,
            ]),
            Event::Ask(a) => ask.execute(params![
                a.ts_ms,
                a.session,
                a.user,
                a.text,
                json(&a.capabilities)
            ]),
            Event::Correction(c) => {
                correction.execute(params![c.ts_ms, c.session, c.tool, c.method, c.note])
            }
        }?;
    }
    Ok(())
}

/// Calls the gate let through (passed or corrected) that match `key`, at or after `since_ms`:
/// the `cap` most recent of them at most, since a limit of `cap` only needs to know whether it
/// is reached. That bounds each count by the limit instead of the history, and makes
/// `oldest_ms` the moment the window frees a slot.
pub(crate) fn count(
    store: &Store,
    key: &CountKey,
    since_ms: Option<i64>,
    cap: u64,
) -> Result<Count, StoreError> {
    // Each statement walks its index (see `Store::ensure_limit_indexes`) from the newest
    // row back.
    macro_rules! capped {
        ($index:literal, $filter:literal) => {
            concat!(
                "SELECT count(*), min(ts_ms) FROM (SELECT ts_ms FROM decisions INDEXED BY ",
                $index,
                " WHERE ",
                $filter,
                " AND ts_ms >= ?2 AND verdict <> 'rejected' ORDER BY ts_ms DESC LIMIT ?3)"
            )
        };
    }
    let since = since_ms.unwrap_or(i64::MIN);
    let cap = i64::try_from(cap).unwrap_or(i64::MAX);
    let conn = store.conn_ref();
    let row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<Count> {
        Ok(Count {
            n: r.get::<_, i64>(0)?.max(0) as u64,
            oldest_ms: r.get(1)?,
        })
    };
    let run = |sql: &str, value: &dyn rusqlite::ToSql| {
        conn.prepare_cached(sql)?
            .query_row(params![value, since, cap], row)
    };
    match key {
        CountKey::Caller(c) => run(capped!("decisions_counted_by_caller", "caller = ?1"), c),
        CountKey::Tool(t) => run(capped!("decisions_counted_by_tool", "tool = ?1"), t),
        CountKey::Session(s) => run(capped!("decisions_counted_by_session", "session = ?1"), s),
        CountKey::Fingerprint {
            fingerprint,
            session,
            caller,
        } => {
            // The same call in the same session, else for the same caller, else anywhere.
            let (sql, scope) = match (session, caller) {
                (Some(s), _) => (
                    capped!(
                        "decisions_counted_by_fingerprint",
                        "fingerprint = ?1 AND session = ?4"
                    ),
                    Some(s),
                ),
                (None, Some(c)) => (
                    capped!(
                        "decisions_counted_by_fingerprint",
                        "fingerprint = ?1 AND caller = ?4"
                    ),
                    Some(c),
                ),
                (None, None) => (
                    capped!(
                        "decisions_counted_by_fingerprint",
                        "fingerprint = ?1 AND ?4 IS NULL"
                    ),
                    None,
                ),
            };
            conn.prepare_cached(sql)
                .and_then(|mut st| st.query_row(params![fingerprint, since, cap, scope], row))
        }
    }
    .map_err(|e| store.err(e))
}

/// Whether `tool` completed in `session`: a successful outcome, or (with
/// [`PrereqEvidence::Decision`]) a call the gate let through.
pub(crate) fn completed(
    store: &Store,
    session: &str,
    tool: &str,
    evidence: PrereqEvidence,
) -> Result<bool, StoreError> {
    let conn = store.conn_ref();
    let fail = |e| store.err(e);
    let outcome: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM outcomes WHERE session = ?1 AND tool = ?2 AND status = 'ok')",
            params![session, tool],
            |r| r.get(0),
        )
        .map_err(fail)?;
    if outcome || evidence == PrereqEvidence::Outcome {
        return Ok(outcome);
    }
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM decisions WHERE session = ?1 AND tool = ?2 AND verdict <> 'rejected')",
        params![session, tool],
        |r| r.get(0),
    )
    .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagate_core::events::{AxisTable, parse};

    fn row(i: i64) -> DecisionRow {
        DecisionRow {
            ts_ms: i,
            session: Some("s".into()),
            caller: None,
            intent: None,
            tool: Some("t".into()),
            method: None,
            shape: Some("plain"),
            verdict: "pass",
            category: None,
            corrections: "[]".into(),
            warnings: "[]".into(),
            args: Some("{}".into()),
            fingerprint: None,
            latency_us: 3,
            call_id: None,
        }
    }

    #[test]
    fn rows_are_committed_in_groups() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = DecisionBatch::new(Store::open(&dir.path().join("t.db")).unwrap());
        for i in 0..10 {
            rec.push(row(i));
        }
        assert_eq!(rec.commit().unwrap(), 10);
        assert_eq!(rec.commit().unwrap(), 0);
        let info = rec.store_mut().info().unwrap();
        assert_eq!(info.tables[0], ("decisions".to_string(), 10));
        assert_eq!((info.first_ms, info.last_ms), (Some(0), Some(9)));
    }

    #[test]
    fn events_land_in_their_tables() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db")).unwrap();
        let axes = AxisTable::default();
        let events: Vec<Event> = [
            r#"{"type":"outcome","tool":"a","status":"ok"}"#,
            r#"{"type":"ask","session":"s","text":"hi"}"#,
            r#"{"type":"correction","tool":"a"}"#,
        ]
        .iter()
        .map(|l| parse(l, 5, &axes).unwrap().0)
        .collect();
        insert_events(&mut store, &events).unwrap();
        let counts: Vec<i64> = store
            .info()
            .unwrap()
            .tables
            .iter()
            .map(|(_, n)| *n)
            .collect();
        assert_eq!(counts, [0, 1, 1, 1, 0, 0, 0, 0]);
    }

    /// `record --strict` stages every event before it stores any: staging writes nothing
    /// to the store and takes no lock on it, and the copy keeps the order staged.
    #[test]
    fn staged_events_leave_the_store_alone_until_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let mut store = Store::open(&path).unwrap();
        let axes = AxisTable::default();
        let events: Vec<Event> = ["b", "a", "c"]
            .iter()
            .map(|tool| {
                let line = format!(r#"{{"type":"outcome","tool":"{tool}","status":"ok"}}"#);
                parse(&line, 5, &axes).unwrap().0
            })
            .chain([parse(r#"{"type":"ask","text":"hi"}"#, 5, &axes).unwrap().0])
            .collect();
        stage(store.conn_ref()).unwrap();
        stage_events(store.conn_ref(), &events[..2]).unwrap();
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
        stage_events(store.conn_ref(), &events[2..]).unwrap();
        let outcomes = |conn: &rusqlite::Connection| -> Vec<String> {
            let mut st = conn
                .prepare("SELECT tool FROM main.outcomes ORDER BY id")
                .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert!(outcomes(&other).is_empty());
        store.immediate(|tx| store_staged(tx)).unwrap();
        unstage(store.conn_ref()).unwrap();
        assert_eq!(outcomes(&other), ["b", "a", "c"]);
        let asks: i64 = other
            .query_row("SELECT count(*) FROM asks", [], |r| r.get(0))
            .unwrap();
        assert_eq!(asks, 1);
        // A second stage on the same connection starts empty.
        stage(store.conn_ref()).unwrap();
        store.immediate(|tx| store_staged(tx)).unwrap();
        assert_eq!(outcomes(&other).len(), 3);
    }
}
