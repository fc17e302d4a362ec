//! The gate's decisions on their way into the store, and the facts the policy checks read from
//! it: counts of calls let through (those of the group not yet committed included), whether a
//! prerequisite completed, and the grants for a capability. A group of calls asks the store
//! once per question, under the write lock the group's commit releases, so two processes
//! counting at the same moment cannot both let a call through.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::StoreError;
use crate::any::AnyStore;
use crate::grants::GrantEvent;
use crate::telemetry::{DecisionBatch, DecisionRow};
use metagate_core::enforce::{Count, CountKey, Counts, GrantLookup, Unanswerable};
use metagate_core::grants::Grant;
use metagate_core::policy::file::PrereqEvidence;

/// Decisions waiting for their group's commit, and what the checks have read since the last one.
pub struct DecisionLog {
    /// The store's recorder.
    recorder: DecisionBatch,
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
    /// Why questions failed since [`DecisionLog::take_failures`] last asked, each once: the
    /// checks tell the model only that the store could not be read.
    failures: Vec<String>,
}

impl DecisionLog {
    /// Decisions go into `store`, opened for writing: a store that cannot be opened is the
    /// operator's to fix before the first call, not a fault of each call. `counting`: the
    /// policy sets limits; `loop_breaker`: one of them is the loop breaker, which needs its
    /// index (made here, so that a store that cannot take it fails now too).
    pub fn new(
        store: impl Into<AnyStore>,
        counting: bool,
        loop_breaker: bool,
    ) -> Result<DecisionLog, StoreError> {
        let mut store = store.into();
        if counting {
            store.ensure_limit_indexes(loop_breaker)?;
        }
        let store_path = Some(store.absolute_place());
        Ok(DecisionLog {
            store_path,
            recorder: DecisionBatch::new(store),
            counting,
            pending: HashMap::new(),
            read: HashMap::new(),
            grants_read: HashMap::new(),
            failures: Vec::new(),
        })
    }

    /// Why questions to the store failed since the last call, for the operator.
    pub fn take_failures(&mut self) -> Vec<String> {
        std::mem::take(&mut self.failures)
    }

    /// `e` as the checks receive it, kept for [`DecisionLog::take_failures`].
    fn failed(&mut self, e: StoreError) -> Unanswerable {
        let why = e.to_string();
        if !self.failures.contains(&why) {
            self.failures.push(why.clone());
        }
        Unanswerable::Store(why)
    }

    /// The store.
    pub fn store(&mut self) -> &mut AnyStore {
        self.recorder.store_mut()
    }

    /// The row id of the last decision committed, if any was.
    pub fn last_decision_id(&self) -> Option<i64> {
        self.recorder.last_decision_id()
    }

    /// Holds a decision's row (and its grant audit event) for the next commit.
    pub fn push(&mut self, row: DecisionRow, grant_event: Option<GrantEvent>) {
        if self.counting {
            self.count_pending(&row);
        }
        self.recorder.push(row);
        if let Some(e) = grant_event {
            self.recorder.push_grant_event(e);
        }
    }

    /// Makes every pushed decision durable (or none), forgets what was read, and lets go of
    /// the write lock.
    pub fn commit(&mut self) -> Result<usize, StoreError> {
        self.pending.clear();
        self.read.clear();
        self.grants_read.clear();
        self.recorder.commit()
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
                // Counted under the write lock, held until this group's rows are committed:
                // a process counting at the same moment waits, then sees these calls.
                if let Err(e) = self.recorder.lock() {
                    return Err(self.failed(e));
                }
                let c = match self.recorder.store_mut().count(key, since_ms, cap) {
                    Ok(c) => c,
                    Err(e) => return Err(self.failed(e)),
                };
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
        evidence: PrereqEvidence,
    ) -> Result<bool, Unanswerable> {
        let answer = self.recorder.store_mut().completed(session, tool, evidence);
        answer.map_err(|e| self.failed(e))
    }
}

impl GrantLookup for DecisionLog {
    fn grants(&mut self, capability: &str, now_ms: i64) -> Result<Vec<Grant>, Unanswerable> {
        if let Some(g) = self.grants_read.get(capability) {
            return Ok(g.clone());
        }
        let grants = match self
            .recorder
            .store_mut()
            .grant_candidates(capability, now_ms)
        {
            Ok(grants) => grants,
            Err(e) => return Err(self.failed(e)),
        };
        self.grants_read
            .insert(capability.to_string(), grants.clone());
        Ok(grants)
    }

    fn grant_store(&self) -> Option<&Path> {
        self.store_path.as_deref()
    }
}
