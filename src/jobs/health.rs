//! The `tools health` job: what `evaluate` over now would count, without storing a run. The
//! latest stored run's tallies, aged, plus live counts of everything recorded after it.

use serde_json::{Map, Value};

use crate::domain::evolution::health::{self, Sort};
use crate::domain::evolution::{Tallies, Window, tools_json};
use crate::domain::policy::Policy;
use crate::store::runs::{self, Counted};
use crate::store::{Store, StoreError};

/// The stored run a health report builds on.
pub struct BaseRun {
    pub id: i64,
    pub window_from_ms: i64,
    pub window_to_ms: i64,
    pub ran_at_ms: i64,
    /// Tallies the run stored that cannot be read back: (tool, method, why). They are left out,
    /// and only their live counts are shown.
    pub unreadable: Vec<(String, String, String)>,
}

/// Per tool and method, what the store says as of now.
pub struct HealthReport {
    /// The run the counts build on, if one ended by now.
    pub base: Option<BaseRun>,
    /// Whether the store holds any run (when `base` is none, all of them end after now).
    pub any_run: bool,
    pub tallies: Tallies,
}

/// Reads the health of every tool from `store`, as of `now_ms`.
pub fn read(store: &Store, policy: &Policy, now_ms: i64) -> Result<HealthReport, StoreError> {
    let t = policy.thresholds();
    let fail = |e| store.err(e);
    // What `evaluate` over now would count: the run's window, and everything after it up to
    // now (an event dated ahead counts once its time comes).
    let until_ms = now_ms.saturating_add(1);
    let run = runs::latest(store.conn_ref(), until_ms).map_err(fail)?;
    let (counted, from_ms) = match &run {
        Some(r) => (Counted::of(r), r.window_from_ms),
        None => (Counted::NOTHING, i64::MIN),
    };
    let window = Window::new(from_ms, until_ms, now_ms, &t);
    let live = runs::live(store.conn_ref(), &counted, &window, &t).map_err(fail)?;
    let any_run = run.is_some() || runs::any_run(store.conn_ref()).map_err(fail)?;
    let (base, tallies) = match run {
        // The run weighed evidence as of its window's end, or when it ran if sooner.
        Some(r) => {
            let age = now_ms.saturating_sub(r.ran_at_ms.min(r.window_to_ms));
            let base = BaseRun {
                id: r.id,
                window_from_ms: r.window_from_ms,
                window_to_ms: r.window_to_ms,
                ran_at_ms: r.ran_at_ms,
                unreadable: r.unreadable,
            };
            (Some(base), health::combine(r.tallies, age, live, &t))
        }
        None => (None, live),
    };
    Ok(HealthReport {
        base,
        any_run,
        tallies,
    })
}

impl HealthReport {
    /// `tools health --format json`: tools in `sort` order, the first `top` of them.
    pub fn to_json(&self, policy: &Policy, sort: Sort, top: usize, now_ms: i64) -> Value {
        let t = policy.thresholds();
        let mut order: Vec<String> = Vec::new();
        for (tool, _, _) in health::rows(&self.tallies, sort, now_ms, &t) {
            if !order.contains(&tool) {
                order.push(tool);
            }
        }
        order.truncate(top);
        let all = tools_json(&self.tallies, &t);
        let mut doc = Map::new();
        for tool in order {
            if let Some(v) = all.get(&tool) {
                doc.insert(tool, v.clone());
            }
        }
        Value::Object(doc)
    }
}
