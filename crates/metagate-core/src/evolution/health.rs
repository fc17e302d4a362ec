//! What `tools health` shows: the latest run's rollup plus live counts since, sorted for a
//! table, and the bounded `<known_tools>` block a Tool Builder prompt embeds (seed 001 phases 4
//! and 5: health, degraded methods and the open recommendations, each in one line).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::{Tallies, Tally, recency_weight, tool_total};
use crate::policy::thresholds::Thresholds;

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
fn rank_score(m: &Tally, now_ms: i64, t: &Thresholds) -> f64 {
    let utility = m.utility().unwrap_or(0.5);
    let recency = m
        .last_ms
        .map_or(0.0, |last| recency_weight(now_ms - last, t.half_life_ms));
    utility * recency
}

const OPEN: &str = "<known_tools>\n";
const CLOSE: &str = "</known_tools>\n";

/// At most this many recommendations are carried per tool, each at most this long.
const BRIEFS_PER_TOOL: usize = 2;
const BRIEF_CHARS: usize = 80;

/// A recommendation still open (proposed or accepted, not muted), as `<known_tools>` carries
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenRecommendation {
    /// The recommendation kind.
    pub kind: String,
    /// The method, if it is about one.
    pub method: Option<String>,
    /// One line for the `<known_tools>` block.
    pub brief: String,
    /// How strongly it is recommended, for ordering.
    pub severity: f64,
}

/// Tool → its open recommendations.
pub type OpenRecommendations = BTreeMap<String, Vec<OpenRecommendation>>;

/// One tool as `<known_tools>` weighs it: its name, its total, its methods (each with whether
/// it is degraded) and its open recommendations.
type Entry<'a> = (
    &'a String,
    Tally,
    Vec<(&'a str, bool)>,
    &'a Vec<OpenRecommendation>,
);

/// The `<known_tools>` block: one line per tool, at most `top` entries, never longer than
/// `budget` characters (when not even its tags fit, nothing). Which tools are kept: those that
/// need attention (degraded, a cohesion warning or an open recommendation), most severe first,
/// then the rest by use, so the budget drops the healthiest, least-used tools first. The kept
/// ones are listed ranked (degraded last; utility × recency). Fields with nothing to say are
/// left out rather than printed empty.
pub fn known_tools(
    tallies: &Tallies,
    open: &OpenRecommendations,
    top: usize,
    budget: usize,
    now_ms: i64,
    t: &Thresholds,
) -> String {
    let none = Vec::new();
    let tools: Vec<Entry<'_>> = tallies
        .iter()
        .map(|(tool, methods)| {
            let names = methods
                .iter()
                .filter(|(m, _)| !m.is_empty())
                .map(|(m, tally)| (m.as_str(), tally.degraded(t)))
                .collect();
            let recs = open.get(tool).unwrap_or(&none);
            (tool, tool_total(methods), names, recs)
        })
        .collect();
    let mut used = OPEN.chars().count() + CLOSE.chars().count();
    if used > budget {
        return String::new();
    }
    let attention = |i: usize| -> Option<f64> {
        let (_, m, methods, recs) = &tools[i];
        let worst = recs.iter().map(|r| r.severity).fold(0.0f64, f64::max);
        let flagged = m.degraded(t) || m.cohesion_warning(t) || methods.iter().any(|(_, d)| *d);
        (flagged || !recs.is_empty()).then_some(worst + if m.degraded(t) { 1.0 } else { 0.0 })
    };
    let mut priority: Vec<usize> = (0..tools.len()).collect();
    priority.sort_by(|&a, &b| {
        match (attention(a), attention(b)) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
        .then_with(|| tools[b].1.calls_seen().cmp(&tools[a].1.calls_seen()))
        .then_with(|| tools[a].0.cmp(tools[b].0))
    });
    let mut kept: Vec<(usize, String)> = Vec::new();
    for i in priority {
        if kept.len() >= top {
            break;
        }
        let (tool, tally, methods, recs) = &tools[i];
        let line = entry(tool, tally, methods, recs, t);
        let n = line.chars().count();
        if used + n > budget {
            continue;
        }
        used += n;
        kept.push((i, line));
    }
    kept.sort_by(|(a, _), (b, _)| {
        compare(&tools[*a].1, &tools[*b].1, Sort::Rank, now_ms, t)
            .then_with(|| tools[*a].0.cmp(tools[*b].0))
    });
    let mut out = String::from(OPEN);
    for (_, line) in kept {
        out.push_str(&line);
    }
    out.push_str(CLOSE);
    out
}

fn entry(
    tool: &str,
    m: &Tally,
    methods: &[(&str, bool)],
    recs: &[OpenRecommendation],
    t: &Thresholds,
) -> String {
    let mut fields: Vec<String> = Vec::new();
    if !methods.is_empty() {
        let methods: Vec<String> = methods
            .iter()
            .map(|(m, degraded)| {
                if *degraded {
                    format!("{} (degraded)", inert(m))
                } else {
                    inert(m)
                }
            })
            .collect();
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
    let mut briefs: Vec<&OpenRecommendation> = recs.iter().collect();
    briefs.sort_by(|a, b| b.severity.total_cmp(&a.severity));
    let briefs: Vec<String> = briefs
        .into_iter()
        .take(BRIEFS_PER_TOOL)
        .map(|r| {
            let text = super::tally::shorten(&r.brief, BRIEF_CHARS);
            match &r.method {
                Some(method) => format!("{} ({})", inert(&text), inert(method)),
                None => inert(&text),
            }
        })
        .collect();
    if !briefs.is_empty() {
        fields.push(format!("recommended: {}", briefs.join(" | ")));
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
            c if metagate_wire::display::unsafe_on_screen(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// How many nights a `tools health` sparkline shows.
pub const SPARK_NIGHTS: usize = 14;

/// One line per tool, at most 80 columns: its failure rate and utility over the last
/// [`SPARK_NIGHTS`] UTC days to `now_ms`, oldest first, as sparklines (`·` for a day with
/// nothing to judge), and the latest day's figures.
pub fn sparklines(tallies: &Tallies, now_ms: i64, t: &Thresholds) -> Vec<String> {
    let from = now_ms - (SPARK_NIGHTS as i64 - 1) * super::series::DAY_MS;
    tallies
        .iter()
        .map(|(tool, methods)| {
            let total = super::tool_total(methods);
            let nights =
                super::series::nights(&total.hours, from, now_ms + 1, t.user_correction_weight());
            let failure = super::series::sparkline(nights.iter().map(|n| n.failure_rate));
            let utility = super::series::sparkline(nights.iter().map(|n| n.utility));
            let last = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
            let latest = nights.iter().rev().find(|n| n.calls > 0);
            let name = inert(tool);
            let name: String = if name.chars().count() > 18 {
                name.chars().take(17).chain(['…']).collect()
            } else {
                name
            };
            format!(
                "{name:<18} failure {failure} {:>4}  utility {utility} {:>4}",
                last(latest.and_then(|n| n.failure_rate)),
                last(latest.and_then(|n| n.utility)),
            )
        })
        .collect()
}
