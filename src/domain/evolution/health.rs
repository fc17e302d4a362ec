//! What `tools health` shows: the latest run's rollup plus live counts since, sorted for a
//! table, and the bounded `<known_tools>` block a Tool Builder prompt embeds (seed 001 phase 4).

use std::cmp::Ordering;

use super::{Tallies, Tally, recency_weight, tool_total};
use crate::domain::policy::thresholds::Thresholds;

/// The latest run's tallies with the live counts added. The run weighed its evidence as of its
/// own "now"; `run_age_ms` later, that evidence weighs what it would weigh now, so utility
/// is what `evaluate` would compute today.
pub fn combine(mut run: Tallies, run_age_ms: i64, live: Tallies, t: &Thresholds) -> Tallies {
    let aged = recency_weight(run_age_ms, t.half_life_ms);
    for tally in run.values_mut().flat_map(|methods| methods.values_mut()) {
        tally.good_w *= aged;
        tally.bad_w *= aged;
    }
    for (tool, methods) in live {
        let into = run.entry(tool).or_default();
        for (method, tally) in methods {
            into.entry(method).or_default().merge(&tally);
        }
    }
    run
}

/// How rows are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// Most calls first.
    Calls,
    /// Lowest utility first (unknown last).
    Utility,
    /// Most user corrections first.
    Corrections,
    /// Most boundary referrals first.
    Boundary,
    /// By tool and method name.
    Name,
    /// As `<known_tools>` ranks: degraded last, then utility × recency, highest first.
    Rank,
}

impl Sort {
    /// Every order: its name where a person chooses it, and what it means in a few words.
    pub const ALL: [(Sort, &'static str, &'static str); 6] = [
        (Sort::Calls, "calls", "Most calls first"),
        (Sort::Utility, "utility", "Lowest utility first"),
        (
            Sort::Corrections,
            "corrections",
            "Most user corrections first",
        ),
        (Sort::Boundary, "boundary", "Most boundary referrals first"),
        (Sort::Name, "name", "By name"),
        (Sort::Rank, "rank", "Degraded last, then utility x recency"),
    ];

    /// The order a name given by [`Sort::ALL`] stands for.
    pub fn from_name(name: &str) -> Option<Sort> {
        Sort::ALL
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(sort, _, _)| *sort)
    }
}

/// One row per tool and method (the method `""` when calls named none).
pub fn rows(
    tallies: &Tallies,
    sort: Sort,
    now_ms: i64,
    t: &Thresholds,
) -> Vec<(String, String, Tally)> {
    let mut rows: Vec<(String, String, Tally)> = tallies
        .iter()
        .flat_map(|(tool, methods)| {
            methods
                .iter()
                .map(move |(m, tally)| (tool.clone(), m.clone(), tally.clone()))
        })
        .collect();
    rows.sort_by(|a, b| {
        compare(&a.2, &b.2, sort, now_ms, t).then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1)))
    });
    rows
}

fn compare(a: &Tally, b: &Tally, sort: Sort, now_ms: i64, t: &Thresholds) -> Ordering {
    match sort {
        Sort::Calls => b.calls_seen().cmp(&a.calls_seen()),
        Sort::Utility => match (a.utility(), b.utility()) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        },
        Sort::Corrections => b.user_corrections().cmp(&a.user_corrections()),
        Sort::Boundary => b.boundary.cmp(&a.boundary),
        Sort::Name => Ordering::Equal,
        Sort::Rank => a
            .degraded(t)
            .cmp(&b.degraded(t))
            .then_with(|| rank_score(b, now_ms, t).total_cmp(&rank_score(a, now_ms, t))),
    }
}

/// Utility (½ when unknown) × how recently the tool was used.
pub fn rank_score(m: &Tally, now_ms: i64, t: &Thresholds) -> f64 {
    let utility = m.utility().unwrap_or(0.5);
    let recency = m
        .last_ms
        .map_or(0.0, |last| recency_weight(now_ms - last, t.half_life_ms));
    utility * recency
}

const OPEN: &str = "<known_tools>\n";
const CLOSE: &str = "</known_tools>\n";

/// The `<known_tools>` block: one line per tool, ranked (degraded last; utility × recency),
/// at most `top` entries, never longer than `budget` characters (an entry that does not fit
/// is left out, and so is the whole block when not even its tags fit). Fields with nothing to
/// say are left out rather than printed empty.
pub fn known_tools(
    tallies: &Tallies,
    top: usize,
    budget: usize,
    now_ms: i64,
    t: &Thresholds,
) -> String {
    let mut tools: Vec<(&String, Tally, Vec<&str>)> = tallies
        .iter()
        .map(|(tool, methods)| {
            let names = methods
                .keys()
                .filter(|m| !m.is_empty())
                .map(String::as_str)
                .collect();
            (tool, tool_total(methods), names)
        })
        .collect();
    tools.sort_by(|a, b| compare(&a.1, &b.1, Sort::Rank, now_ms, t).then_with(|| a.0.cmp(b.0)));
    let mut out = String::from(OPEN);
    let mut used = OPEN.chars().count() + CLOSE.chars().count();
    if used > budget {
        return String::new();
    }
    for (tool, tally, methods) in tools.into_iter().take(top) {
        let line = entry(tool, &tally, &methods, t);
        let n = line.chars().count();
        if used + n > budget {
            continue;
        }
        used += n;
        out.push_str(&line);
    }
    out.push_str(CLOSE);
    out
}

fn entry(tool: &str, m: &Tally, methods: &[&str], t: &Thresholds) -> String {
    let mut fields: Vec<String> = Vec::new();
    if !methods.is_empty() {
        let methods: Vec<String> = methods.iter().map(|m| inert(m)).collect();
        fields.push(format!("methods {}", methods.join(", ")));
    }
    if let Some(u) = m.utility() {
        fields.push(format!("utility {u:.2}"));
    }
    let mut recent = Vec::new();
    if m.boundary_recent > 0 {
        recent.push(format!("wrong_tool_boundary {}", m.boundary_recent));
    }
    if m.low_utility_recent > 0 {
        recent.push(format!("low_utility {}", m.low_utility_recent));
    }
    if !recent.is_empty() {
        fields.push(format!("recent {}", recent.join(", ")));
    }
    if m.user_corrections() > 0 {
        fields.push(format!("user corrections {}", m.user_corrections()));
    }
    if m.cohesion_warning(t) {
        let axes: Vec<String> = m
            .axes_ranked()
            .into_iter()
            .take(3)
            .map(|(a, _)| inert(&a))
            .collect();
        fields.push(format!("cohesion warning: {}", axes.join(", ")));
    }
    if m.degraded(t) {
        fields.push("degraded".to_string());
    }
    let tool = inert(tool);
    if fields.is_empty() {
        format!("- {tool}\n")
    } else {
        format!("- {tool}: {}\n", fields.join("; "))
    }
}

/// Names from the store as prompt text: recorded names are whatever an agent sent, so they
/// must not close the block (`</known_tools>`), open another, or break an entry's line.
fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if crate::wire::display::unsafe_on_screen(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
