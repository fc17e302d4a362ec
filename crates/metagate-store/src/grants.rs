//! Grants in the telemetry store (migration `0002_grants.sql`): the `grants` table and the
//! `grant_events` audit trail (granted, revoked, used, denied). Every change is one
//! `IMMEDIATE` transaction, so two operators granting and revoking at once wait for each
//! other (the store's busy timeout) instead of losing a row.

use rusqlite::{Connection, OptionalExtension, params};

use crate::{Store, StoreError};
use metagate_core::grants::{Grant, GrantId, ScopeEntry};

/// One audit event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantEvent {
    /// When, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// `granted`, `revoked`, `used` or `denied`.
    pub event: &'static str,
    /// The grant, when one is involved.
    pub grant_id: Option<String>,
    /// The capability.
    pub capability: String,
    /// The tool called, when a call is involved.
    pub tool: Option<String>,
    /// The session, if any.
    pub session: Option<String>,
    /// The gate decision (`decisions.id`) a `used` or `denied` event belongs to.
    pub decision_id: Option<i64>,
    /// Who granted or revoked.
    pub actor: Option<String>,
    /// More about the event, as text.
    pub detail: Option<String>,
}

impl GrantEvent {
    /// The event that records `g` being made, by whom and why.
    pub(crate) fn granted(g: &Grant) -> GrantEvent {
        GrantEvent {
            ts_ms: g.granted_at_ms,
            event: "granted",
            grant_id: Some(g.id.to_string()),
            capability: g.capability.clone(),
            tool: None,
            session: g.session.clone(),
            decision_id: None,
            actor: g.granted_by.clone(),
            detail: g.reason.clone(),
        }
    }

    /// The event that records `g` revoked at `now_ms` by `actor`.
    pub(crate) fn revoked(g: &Grant, now_ms: i64, actor: Option<&str>) -> GrantEvent {
        GrantEvent {
            ts_ms: now_ms,
            event: "revoked",
            grant_id: Some(g.id.to_string()),
            capability: g.capability.clone(),
            tool: None,
            session: g.session.clone(),
            decision_id: None,
            actor: actor.map(str::to_string),
            detail: None,
        }
    }
}

use crate::columns::{GRANT as COLUMNS, grant_event_columns};

fn grant_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Grant> {
    let id: String = r.get(0)?;
    let (scope, unreadable) = match scope_of(r.get_ref(2)?) {
        Ok(scope) => (scope, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    Ok(Grant {
        id: GrantId::from_stored(id),
        capability: r.get(1)?,
        scope,
        unreadable,
        session: r.get(3)?,
        granted_at_ms: r.get(4)?,
        expires_at_ms: r.get(5)?,
        revoked_at_ms: r.get(6)?,
        granted_by: r.get(7)?,
        reason: r.get(8)?,
        mac: r.get(9)?,
        forged: false,
    })
}

/// A stored scope: a JSON array of [`ScopeEntry::to_stored`] strings. Anything else (another
/// format, a hand edit, a damaged row) is an error, and the grant then covers nothing: read
/// as empty it would cover the whole capability.
fn scope_of(value: rusqlite::types::ValueRef<'_>) -> Result<Vec<ScopeEntry>, String> {
    let rusqlite::types::ValueRef::Text(bytes) = value else {
        return Err("the stored scope is not text".to_string());
    };
    match std::str::from_utf8(bytes) {
        Ok(text) => scope_from_text(Some(text)),
        Err(_) => Err("the stored scope is not a JSON list of strings".to_string()),
    }
}

/// [`scope_of`] for a store that hands the scope over as text (`None`: not text, or not
/// UTF-8).
pub(crate) fn scope_from_text(text: Option<&str>) -> Result<Vec<ScopeEntry>, String> {
    let Some(text) = text else {
        return Err("the stored scope is not text".to_string());
    };
    let entries: Vec<String> =
        serde_json::from_str(text).map_err(|_| "the stored scope is not a JSON list of strings")?;
    entries
        .iter()
        .map(|s| ScopeEntry::from_stored(s).map_err(|e| e.to_string()))
        .collect()
}

/// A stored event's name as [`GrantEvent::event`] holds it.
pub(crate) fn event_name(stored: &str) -> &'static str {
    match stored {
        "granted" => "granted",
        "revoked" => "revoked",
        "used" => "used",
        _ => "denied",
    }
}

/// Stores a new grant and its `granted` event.
pub fn insert(store: &mut Store, g: &Grant) -> Result<(), StoreError> {
    store.immediate(|tx| {
        let scope: Vec<String> = g.scope.iter().map(ScopeEntry::to_stored).collect();
        tx.execute(
            &format!(
                "INSERT INTO grants ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
            ),
            params![
                g.id.as_str(),
                g.capability,
                serde_json::to_string(&scope).expect("strings serialize"),
                g.session,
                g.granted_at_ms,
                g.expires_at_ms,
                g.revoked_at_ms,
                g.granted_by,
                g.reason,
                g.mac,
            ],
        )?;
        insert_event(tx, &GrantEvent::granted(g))
    })
}

/// Appends one audit event inside a transaction the caller holds.
pub(crate) fn insert_event(conn: &Connection, e: &GrantEvent) -> rusqlite::Result<()> {
    conn.prepare_cached(concat!(
        "INSERT INTO grant_events (",
        grant_event_columns!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
    ))?
    .execute(params![
        e.ts_ms,
        e.event,
        e.grant_id,
        e.capability,
        e.tool,
        e.session,
        e.decision_id,
        e.actor,
        e.detail
    ])?;
    Ok(())
}

/// The grants that may cover a call for `capability` at `now_ms`: every unrevoked, unexpired
/// one, and the three most recent others (so a refusal can say "expired" or "revoked").
pub(crate) fn candidates(
    conn: &Connection,
    capability: &str,
    now_ms: i64,
) -> rusqlite::Result<Vec<Grant>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM grants WHERE capability = ?1 \
           AND ((revoked_at_ms IS NULL AND expires_at_ms > ?2) \
             OR id IN (SELECT id FROM grants WHERE capability = ?1 ORDER BY granted_at_ms DESC LIMIT 3)) \
         ORDER BY granted_at_ms DESC"
    ))?;
    stmt.query_map(params![capability, now_ms], grant_of)?
        .collect()
}

/// Grants, newest first: those not over at `now_ms` (live, or dated later: the clock may have
/// moved back, and they would come alive unseen), or (`all`) every one.
pub fn list(store: &Store, all: bool, now_ms: i64) -> Result<Vec<Grant>, StoreError> {
    let sql = if all {
        format!("SELECT {COLUMNS} FROM grants ORDER BY granted_at_ms DESC, id")
    } else {
        format!(
            "SELECT {COLUMNS} FROM grants WHERE revoked_at_ms IS NULL AND expires_at_ms > ?1 \
               ORDER BY granted_at_ms DESC, id"
        )
    };
    let conn = store.conn_ref();
    let run = || -> rusqlite::Result<Vec<Grant>> {
        let mut stmt = conn.prepare(&sql)?;
        if all {
            stmt.query_map([], grant_of)?.collect()
        } else {
            stmt.query_map([now_ms], grant_of)?.collect()
        }
    };
    run().map_err(|e| store.err(e))
}

/// The audit trail, oldest first.
pub fn events(store: &Store) -> Result<Vec<GrantEvent>, StoreError> {
    let conn = store.conn_ref();
    let run = || -> rusqlite::Result<Vec<GrantEvent>> {
        let mut stmt = conn.prepare(
            "SELECT ts_ms, event, grant_id, capability, tool, session, decision_id, actor, detail \
             FROM grant_events ORDER BY ts_ms, id",
        )?;
        stmt.query_map([], |r| {
            let event: String = r.get(1)?;
            Ok(GrantEvent {
                ts_ms: r.get(0)?,
                event: event_name(&event),
                grant_id: r.get(2)?,
                capability: r.get(3)?,
                tool: r.get(4)?,
                session: r.get(5)?,
                decision_id: r.get(6)?,
                actor: r.get(7)?,
                detail: r.get(8)?,
            })
        })?
        .collect()
    };
    run().map_err(|e| store.err(e))
}

/// What revoking one id did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revoked {
    /// The grant is revoked now.
    Done(Grant),
    /// No grant has that id.
    Unknown,
    /// The grant was revoked before.
    Already(Grant),
}

/// Revokes one grant (an expired one too: were the clock to move back, it stays over).
pub fn revoke(
    store: &mut Store,
    id: &GrantId,
    now_ms: i64,
    actor: Option<&str>,
) -> Result<Revoked, StoreError> {
    store.immediate(|tx| {
        let found = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM grants WHERE id = ?1"),
                [id.as_str()],
                grant_of,
            )
            .optional()?;
        let Some(mut g) = found else {
            return Ok(Revoked::Unknown);
        };
        if g.revoked_at_ms.is_some() {
            return Ok(Revoked::Already(g));
        }
        revoke_in(tx, &g, now_ms, actor)?;
        g.revoked_at_ms = Some(now_ms);
        Ok(Revoked::Done(g))
    })
}

fn revoke_in(tx: &Connection, g: &Grant, now_ms: i64, actor: Option<&str>) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE grants SET revoked_at_ms = ?2, mac = NULL WHERE id = ?1 AND revoked_at_ms IS NULL",
        params![g.id.as_str(), now_ms],
    )?;
    insert_event(tx, &GrantEvent::revoked(g, now_ms, actor))
}

/// What `revoke --all` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RevokedAll {
    /// Grants not over at `now_ms`: the live ones, and those dated later.
    pub live: Vec<Grant>,
    /// Grants already expired at `now_ms`, revoked too: were the clock to move back, they
    /// would otherwise come alive again.
    pub expired: Vec<Grant>,
}

/// Revokes every grant not yet revoked: the live ones, those dated later (which the clock
/// moving back would otherwise bring to life after this), and the expired ones (which it would
/// bring back), as a single `revoke` does.
pub fn revoke_all(
    store: &mut Store,
    now_ms: i64,
    actor: Option<&str>,
) -> Result<RevokedAll, StoreError> {
    store.immediate(|tx| {
        let unrevoked: Vec<Grant> = {
            let mut stmt = tx.prepare(&format!(
                "SELECT {COLUMNS} FROM grants WHERE revoked_at_ms IS NULL ORDER BY granted_at_ms, id"
            ))?;
            stmt.query_map([], grant_of)?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut done = RevokedAll::default();
        for g in unrevoked {
            revoke_in(tx, &g, now_ms, actor)?;
            if g.expires_at_ms > now_ms {
                done.live.push(g);
            } else {
                done.expired.push(g);
            }
        }
        Ok(done)
    })
}
