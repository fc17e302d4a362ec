//! The `tools health` job: what `evaluate` over now would count, without storing a run. The
//! latest stored run's tallies, aged, plus live counts of everything recorded after it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use metagate_core::evolution::health::{self, OpenRecommendations, Sort};
use metagate_core::evolution::tally::HOUR_MS;
use metagate_core::evolution::{Tallies, Window, tools_json};
use metagate_core::policy::Policy;
use metagate_store::StoreError;
use metagate_store::any::AnyStore;
use metagate_store::runs::{self, Counted};

/// The stored run a health report builds on.
pub struct BaseRun {
    /// The stored run's id.
    pub id: i64,
    /// Its window's start, in milliseconds since the epoch.
    pub window_from_ms: i64,
    /// Its window's end.
    pub window_to_ms: i64,
    /// When it ran.
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
    /// The counts per tool.
    pub tallies: Tallies,
    /// The base run's recommendations still open, for `<known_tools>`.
    pub open: OpenRecommendations,
}

/// Reads the health of every tool from `store`, as of `now_ms`.
pub fn read(
    store: &mut AnyStore,
    policy: &Policy,
    now_ms: i64,
) -> Result<HealthReport, StoreError> {
    let t = policy.thresholds();
    // What `evaluate` over now would count: the run's window, and everything after it up to
    // now (an event dated ahead counts once its time comes).
    let until_ms = now_ms.saturating_add(1);
    let run = store.latest_run(until_ms)?;
    let (counted, from_ms) = match &run {
        Some(r) => (Counted::of(r), r.window_from_ms),
        None => (Counted::NOTHING, i64::MIN),
    };
    let window = Window::new(from_ms, until_ms, now_ms, &t);
    let axes = policy.axis_table();
    let live = store.live(&counted, &window, &t, &axes)?;
    let any_run = run.is_some() || store.any_run()?;
    let open = run
        .as_ref()
        .map(|r| r.open_recommendations.clone())
        .unwrap_or_default();
    let (base, tallies) = match run {
        // The run weighed evidence as of its window's end, or when it ran if sooner.
        Some(mut r) => {
            let age = now_ms.saturating_sub(r.ran_at_ms.min(r.window_to_ms));
            let recent = recent_from_run(store, &r, window.recent_from_ms)?;
            for (tool, methods) in r.tallies.iter_mut() {
                for (method, tally) in methods.iter_mut() {
                    let [boundary, low] = recent
                        .get(&(tool.clone(), method.clone()))
                        .copied()
                        .unwrap_or_default();
                    tally.boundary_recent = boundary;
                    tally.low_utility_recent = low;
                }
            }
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
        open,
    })
}

/// The run's part of the recent counts, which are over the hours ending now whatever the run
/// covered: the whole hours the run kept ([`metagate_core::evolution::Tally::recent_by_hour`])
/// from the first hour starting in the recent part, and the rows of the part hour before it,
/// read through the referrals' index (those the run counted: up to its high-water mark, before
/// its window's end). A tally stored before the hours were kept is counted from the rows too.
fn recent_from_run(
    store: &mut AnyStore,
    run: &runs::LatestRun,
    recent_from_ms: i64,
) -> Result<BTreeMap<(String, String), [u64; 2]>, StoreError> {
    let first_hour = recent_from_ms.div_euclid(HOUR_MS) * HOUR_MS;
    let first_whole_hour = if first_hour == recent_from_ms {
        first_hour
    } else {
        first_hour + HOUR_MS
    };
    let kept = run
        .tallies
        .values()
        .flat_map(|m| m.values())
        .all(|t| t.recent_by_hour.is_some());
    // Without the hours, every recent row of the run's window is read.
    let rows_until = if kept {
        first_whole_hour.min(run.window_to_ms)
    } else {
        run.window_to_ms
    };
    let mut out: BTreeMap<(String, String), [u64; 2]> = BTreeMap::new();
    if kept {
        for (tool, methods) in &run.tallies {
            for (method, tally) in methods {
                let n = tally.recent_since(first_whole_hour).unwrap_or_default();
                out.insert((tool.clone(), method.clone()), n);
            }
        }
    }
    if recent_from_ms < rows_until {
        let rows = store.recent_referrals(recent_from_ms, rows_until, run.high_water.outcomes)?;
        for (key, (boundary, low)) in rows {
            let n = out.entry(key).or_default();
            n[0] += boundary;
            n[1] += low;
        }
    }
    Ok(out)
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
