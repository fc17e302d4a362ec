//! The gate's decisions on their way into the store, and the facts the policy checks read from
//! it: counts of calls let through (those of the group not yet committed included), whether a
//! prerequisite completed, and the grants for a capability. A group of calls asks the store
//! once per question, under the write lock the group's commit releases, so two processes
//! counting at the same moment cannot both let a call through.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::domain::enforce::{Count, CountKey, Counts, GrantLookup, Unanswerable};
use crate::domain::grants::Grant;
use crate::domain::policy::file::Evidence;
use crate::store::grants::GrantEvent;
use crate::store::telemetry::{self, DecisionRow, Recorder};
use crate::store::{Store, StoreError};

/// Decisions waiting for their group's commit, and what the checks have read since the last one.
pub struct DecisionLog {
    /// The store's recorder, or why the store could not be opened (every question and commit
    /// then fails with it).
    recorder: Result<Recorder, String>,
    /// Whether limits are counted (then calls recorded but not yet committed count too).
    counting: bool,
    /// Calls let through since the last commit, by what they count toward.
    pending: HashMap<CountKey, Count>,
    /// Counts read from the store since the last commit, by key and window length: a group of
    /// lines asks the store once per key, not once per line.
    read: HashMap<(CountKey, Option<i64>), Count>,
    /// Grants read from the store since the last commit, by capability: a group of lines asks
    /// once per capability. A grant made or revoked by another process counts from the next
    /// group on; expiry is judged per call.
    grants_read: HashMap<String, Vec<Grant>>,
    /// The store's path made absolute, for [`GrantLookup::grant_store`].
    store_path: Option<PathBuf>,
}

impl DecisionLog {
    /// `counting`: the policy sets limits; `loop_breaker`: one of them is the loop breaker,
    /// which needs its index.
    pub fn new(
        store: Result<Store, StoreError>,
        counting: bool,
        loop_breaker: bool,
    ) -> DecisionLog {
        let store = store.and_then(|mut s| {
            if counting {
                s.ensure_limit_indexes(loop_breaker)?;
            }
            Ok(s)
        });
        let store_path = store
            .as_ref()
            .ok()
            .map(|s| std::path::absolute(s.path()).unwrap_or_else(|_| s.path().to_path_buf()));
        DecisionLog {
            store_path,
            recorder: store.map(Recorder::new).map_err(|e| e.to_string()),
            counting,
            pending: HashMap::new(),
            read: HashMap::new(),
            grants_read: HashMap::new(),
        }
    }

    /// The store, when it opened.
    pub fn store(&mut self) -> Option<&mut Store> {
        self.recorder.as_mut().ok().map(Recorder::store_mut)
    }

    /// The row id of the last decision committed, if any was.
    pub fn last_decision_id(&self) -> Option<i64> {
        self.recorder
            .as_ref()
            .ok()
            .and_then(Recorder::last_decision_id)
    }

    /// Whether the store opened (decisions are only kept when it did).
    pub fn is_open(&self) -> bool {
        self.recorder.is_ok()
    }

    /// Holds a decision's row (and its grant audit event) for the next commit.
    pub fn push(&mut self, row: DecisionRow, grant_event: Option<GrantEvent>) {
        if self.counting {
            self.count_pending(&row);
        }
        if let Ok(recorder) = &mut self.recorder {
            recorder.push(row);
            if let Some(e) = grant_event {
                recorder.push_grant_event(e);
            }
        }
    }

    /// Makes every pushed decision durable (or none), forgets what was read, and lets go of
    /// the write lock.
    pub fn commit(&mut self) -> Result<usize, String> {
        self.pending.clear();
        self.read.clear();
        self.grants_read.clear();
        match &mut self.recorder {
            Ok(recorder) => recorder.commit().map_err(|e| e.to_string()),
            Err(reason) => Err(reason.clone()),
        }
    }

    fn count_pending(&mut self, row: &DecisionRow) {
        if row.verdict == "rejected" {
            return;
        }
        let mut keys = Vec::with_capacity(4);
        if let Some(c) = &row.caller {
            keys.push(CountKey::Caller(c.clone()));
        }
        if let Some(t) = &row.tool {
            keys.push(CountKey::Tool(t.clone()));
        }
        if let Some(s) = &row.session {
            keys.push(CountKey::Session(s.clone()));
        }
        if let Some(f) = row.fingerprint {
            keys.push(CountKey::Fingerprint {
                fingerprint: f,
                session: row.session.clone(),
                caller: row.caller.clone(),
            });
        }
        for key in keys {
            let c = self.pending.entry(key).or_default();
            c.n += 1;
            c.oldest_ms = Some(c.oldest_ms.map_or(row.ts_ms, |o| o.min(row.ts_ms)));
        }
    }
}

impl Counts for DecisionLog {
    fn count(
        &mut self,
        key: &CountKey,
        since_ms: Option<i64>,
        now_ms: i64,
        cap: u64,
    ) -> Result<Count, Unanswerable> {
        let window = since_ms.map(|s| now_ms - s);
        let stored = match self.read.get(&(key.clone(), window)) {
            Some(c) => *c,
            None => {
                let recorder = match &mut self.recorder {
                    Ok(r) => r,
                    Err(reason) => return Err(Unanswerable::Store(reason.clone())),
                };
                // Counted under the write lock, held until this group's rows are committed:
                // a process counting at the same moment waits, then sees these calls.
                recorder
                    .lock()
                    .map_err(|e| Unanswerable::Store(e.to_string()))?;
                let c = telemetry::count(recorder.store(), key, since_ms, cap)
                    .map_err(|e| Unanswerable::Store(e.to_string()))?;
                self.read.insert((key.clone(), window), c);
                c
            }
        };
        let pending = self.pending.get(key).copied().unwrap_or_default();
        let in_window = pending
            .oldest_ms
            .is_some_and(|o| since_ms.is_none_or(|s| o >= s));
        let pending_n = if in_window { pending.n } else { 0 };
        let oldest = match (stored.oldest_ms, pending.oldest_ms.filter(|_| in_window)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Ok(Count {
            n: stored.n + pending_n,
            oldest_ms: oldest,
        })
    }

    fn completed(
        &mut self,
        session: &str,
        tool: &str,
        evidence: Evidence,
    ) -> Result<bool, Unanswerable> {
        let store = match &self.recorder {
            Ok(r) => r.store(),
            Err(reason) => return Err(Unanswerable::Store(reason.clone())),
        };
        telemetry::completed(store, session, tool, evidence)
            .map_err(|e| Unanswerable::Store(e.to_string()))
    }
}

impl GrantLookup for DecisionLog {
    fn grants(&mut self, capability: &str, now_ms: i64) -> Result<Vec<Grant>, Unanswerable> {
        if let Some(g) = self.grants_read.get(capability) {
            return Ok(g.clone());
        }
        let grants = match &self.recorder {
            Ok(r) => crate::store::grants::candidates(r.store().conn_ref(), capability, now_ms)
                .map_err(|e| Unanswerable::Store(r.store().err(e).to_string()))?,
            Err(reason) => return Err(Unanswerable::Store(reason.clone())),
        };
        self.grants_read
            .insert(capability.to_string(), grants.clone());
        Ok(grants)
    }

    fn grant_store(&self) -> Option<&Path> {
        self.store_path.as_deref()
    }
}
