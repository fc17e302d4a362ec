//! Counts by the hour and by caller for one tool and method: what change points are found in
//! (`changes`), what a finding blames a caller with, and the latest failures a finding shows
//! as its evidence. Memory is bounded by the hours of the window, [`MAX_CALLERS`] callers and
//! [`MAX_SAMPLES`] samples, never by the number of events.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::tally::HOUR_MS;

/// The counts of one hour: gate decisions, outcomes, successes, the tool's own failures,
/// and low-utility signals (its `low_utility` referrals and users' corrections).
pub type Bucket = [u32; 5];

/// Indexes into a [`Bucket`].
pub mod at {
    /// Gate decisions.
    pub const DECISIONS: usize = 0;
    /// Recorded outcomes.
    pub const OUTCOMES: usize = 1;
    /// Successful outcomes.
    pub const OK: usize = 2;
    /// The tool's own failures.
    pub const FAILURES: usize = 3;
    /// Low-utility referrals and user corrections.
    pub const SIGNALS: usize = 4;
}

/// At most this many callers are told apart per tool and method; the rest count together
/// under [`OTHER_CALLERS`].
pub const MAX_CALLERS: usize = 16;

/// Where the callers past [`MAX_CALLERS`] are counted.
pub const OTHER_CALLERS: &str = "(other callers)";

/// At most this many of the latest failures are kept as samples.
pub const MAX_SAMPLES: usize = 24;

/// At most this many error clusters are counted per caller.
const CALLER_CLUSTERS: usize = 8;

/// Hour start (ms since the epoch) → counts.
pub type Hours = BTreeMap<i64, Bucket>;

/// The hour `ts_ms` falls in, as its start.
pub fn hour_of(ts_ms: i64) -> i64 {
    ts_ms.div_euclid(HOUR_MS) * HOUR_MS
}

/// Adds `n` to one count of the hour `ts_ms` falls in.
pub fn bump(hours: &mut Hours, ts_ms: i64, which: usize, n: u32) {
    let hour = hour_of(ts_ms);
    match hours.get_mut(&hour) {
        Some(b) => b[which] = b[which].saturating_add(n),
        None => {
            let mut b = Bucket::default();
            b[which] = n;
            hours.insert(hour, b);
        }
    }
}

/// Adds every hour of `from` to `into`.
pub fn merge_hours(into: &mut Hours, from: &Hours) {
    for (hour, b) in from {
        let mine = into.entry(*hour).or_default();
        for (m, t) in mine.iter_mut().zip(b) {
            *m = m.saturating_add(*t);
        }
    }
}

/// Calls seen in a bucket: the gate's decisions, or the outcomes when more were recorded.
pub fn calls_of(b: &Bucket) -> u64 {
    u64::from(b[at::DECISIONS].max(b[at::OUTCOMES]))
}

/// What one caller did with one tool and method.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallerTally {
    /// Totals over the window, as a [`Bucket`] counts them.
    pub totals: [u64; 5],
    /// By the hour; not stored with a run (only the scan's findings need it).
    #[serde(skip)]
    pub hours: Hours,
    /// Error cluster → failures, the first few clusters.
    pub errors: BTreeMap<String, u64>,
}

impl CallerTally {
    fn add(&mut self, ts_ms: i64, which: usize, n: u32) {
        self.totals[which] += u64::from(n);
        bump(&mut self.hours, ts_ms, which, n);
    }

    fn merge(&mut self, o: &CallerTally) {
        for (m, t) in self.totals.iter_mut().zip(o.totals) {
            *m += t;
        }
        merge_hours(&mut self.hours, &o.hours);
        for (k, v) in &o.errors {
            count_cluster(&mut self.errors, k, *v);
        }
    }

    /// The failures of this caller among its judged outcomes.
    pub fn failure_rate(&self) -> Option<f64> {
        let judged = self.totals[at::FAILURES] + self.totals[at::OK];
        (judged > 0).then(|| self.totals[at::FAILURES] as f64 / judged as f64)
    }

    /// Its most frequent error cluster.
    pub fn dominant_error(&self) -> Option<&str> {
        dominant(&self.errors)
    }
}

fn count_cluster(into: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    if let Some(c) = into.get_mut(key) {
        *c += n;
    } else if into.len() < CALLER_CLUSTERS {
        into.insert(key.to_string(), n);
    }
}

/// The key with the largest count (ties: the first by name).
pub fn dominant(counts: &BTreeMap<String, u64>) -> Option<&str> {
    counts
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(k, _)| k.as_str())
}

/// Callers by name: [`MAX_CALLERS`] at most, the rest under [`OTHER_CALLERS`].
pub type Callers = BTreeMap<String, CallerTally>;

/// The tally of `caller` (`None`: ""), made when missing.
fn caller_entry<'c>(callers: &'c mut Callers, caller: Option<&str>) -> &'c mut CallerTally {
    let name = caller.unwrap_or("");
    if !callers.contains_key(name) {
        let name = if callers.len() >= MAX_CALLERS {
            OTHER_CALLERS
        } else {
            name
        };
        return callers.entry(name.to_string()).or_default();
    }
    callers.get_mut(name).expect("just checked")
}

/// Counts `n` events of one kind for a caller at `ts_ms`.
pub fn add_for_caller(
    callers: &mut Callers,
    caller: Option<&str>,
    ts_ms: i64,
    which: usize,
    n: u32,
) {
    caller_entry(callers, caller).add(ts_ms, which, n);
}

/// Counts one failure of a caller in `cluster`.
pub fn add_caller_error(callers: &mut Callers, caller: Option<&str>, cluster: &str) {
    count_cluster(&mut caller_entry(callers, caller).errors, cluster, 1);
}

/// Adds another tally's callers to these.
pub fn merge_callers(into: &mut Callers, from: &Callers) {
    for (name, c) in from {
        let mine = if into.contains_key(name) || into.len() < MAX_CALLERS {
            into.entry(name.clone()).or_default()
        } else {
            into.entry(OTHER_CALLERS.to_string()).or_default()
        };
        mine.merge(c);
    }
}

/// One failure kept as evidence: when, in which session, from which caller, with which error
/// cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// When it was recorded, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// Its session.
    pub session: String,
    /// The caller whose call it answered, when known.
    pub caller: Option<String>,
    /// Its error cluster (`category` U+001F `normalized message`).
    pub cluster: String,
}

/// Keeps `s` among the latest [`MAX_SAMPLES`] of `samples`.
pub fn keep_latest(samples: &mut Vec<Sample>, s: Sample) {
    if samples.len() < MAX_SAMPLES {
        samples.push(s);
        return;
    }
    let (oldest, at) = samples
        .iter()
        .enumerate()
        .map(|(i, x)| (x.ts_ms, i))
        .min()
        .expect("full");
    if s.ts_ms > oldest || (s.ts_ms == oldest && s.session > samples[at].session) {
        samples[at] = s;
    }
}

/// The sessions of `samples` that show the finding best: those of its dominant error and
/// dominant caller first, then those of either, then the rest; latest first within each;
/// each session once, at most `n`.
pub fn typical<'s>(
    samples: &'s [Sample],
    error: Option<&str>,
    caller: Option<&str>,
    n: usize,
) -> Vec<&'s Sample> {
    let score = |s: &Sample| {
        let e = error.is_some_and(|e| s.cluster == e);
        let c = caller.is_some_and(|c| s.caller.as_deref() == Some(c));
        u8::from(e) + u8::from(c)
    };
    let mut sorted: Vec<&Sample> = samples.iter().collect();
    sorted.sort_by(|a, b| {
        score(b)
            .cmp(&score(a))
            .then_with(|| b.ts_ms.cmp(&a.ts_ms))
            .then_with(|| a.session.cmp(&b.session))
    });
    let mut out: Vec<&Sample> = Vec::new();
    for s in sorted {
        if out.len() < n && !out.iter().any(|o| o.session == s.session) {
            out.push(s);
        }
    }
    out
}

/// A day in milliseconds.
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// One night's figures (a UTC day): what a chart and a sparkline show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Night {
    /// The day's start (UTC midnight), ms since the epoch.
    pub start_ms: i64,
    /// Calls seen that day.
    pub calls: u64,
    /// The tool's own failures among that day's judged outcomes, or none without any.
    pub failure_rate: Option<f64>,
    /// That day's successes against its failures and low-utility signals (each signal
    /// weighed as a user correction), without recency weights; none without any.
    pub utility: Option<f64>,
}

/// The days from the one `from_ms` falls in to the one before `until_ms`, each with its figures.
pub fn nights(hours: &Hours, from_ms: i64, until_ms: i64, signal_weight: f64) -> Vec<Night> {
    let first = from_ms.div_euclid(DAY_MS) * DAY_MS;
    let last = (until_ms - 1).div_euclid(DAY_MS) * DAY_MS;
    let mut out = Vec::new();
    let mut day = first;
    while day <= last && out.len() < 400 {
        let mut b = [0u64; 5];
        for (_, h) in hours.range(day..day + DAY_MS) {
            for (t, v) in b.iter_mut().zip(h) {
                *t += u64::from(*v);
            }
        }
        let judged = b[at::FAILURES] + b[at::OK];
        let bad = b[at::FAILURES] as f64 + b[at::SIGNALS] as f64 * signal_weight;
        let total = b[at::OK] as f64 + bad;
        out.push(Night {
            start_ms: day,
            calls: b[at::DECISIONS].max(b[at::OUTCOMES]),
            failure_rate: (judged > 0).then(|| b[at::FAILURES] as f64 / judged as f64),
            utility: (total > 0.0).then(|| b[at::OK] as f64 / total),
        });
        day += DAY_MS;
    }
    out
}

/// Values in [0, 1] as a sparkline, one character each: `▁` to `█`, `·` for none.
pub fn sparkline(values: impl Iterator<Item = Option<f64>>) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    values
        .map(|v| match v {
            Some(v) => BARS[((v.clamp(0.0, 1.0) * 7.0).round()) as usize],
            None => '·',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nights_and_their_sparkline() {
        let mut h = Hours::new();
        let day = DAY_MS;
        bump(&mut h, 10, at::OK, 9);
        bump(&mut h, 20, at::FAILURES, 1);
        bump(&mut h, day + 5, at::FAILURES, 4);
        bump(&mut h, 3 * day + 5, at::OK, 1);
        bump(&mut h, 3 * day + 6, at::SIGNALS, 1);
        let n = nights(&h, 5, 4 * day, 3.0);
        assert_eq!(n.len(), 4);
        assert_eq!(n[0].failure_rate, Some(0.1));
        assert_eq!(n[1].failure_rate, Some(1.0));
        assert_eq!(n[2].failure_rate, None);
        assert_eq!(n[3].utility, Some(0.25));
        let line = sparkline(n.iter().map(|n| n.failure_rate));
        assert_eq!(line, "▂█·▁");
    }

    #[test]
    fn hours_are_counted_and_merged() {
        let mut h = Hours::new();
        bump(&mut h, 10, at::OK, 1);
        bump(&mut h, HOUR_MS - 1, at::OK, 2);
        bump(&mut h, HOUR_MS, at::FAILURES, 1);
        bump(&mut h, -1, at::FAILURES, 1);
        assert_eq!(h[&0][at::OK], 3);
        assert_eq!(h[&HOUR_MS][at::FAILURES], 1);
        assert_eq!(h[&-HOUR_MS][at::FAILURES], 1);
        let mut into = Hours::new();
        merge_hours(&mut into, &h);
        merge_hours(&mut into, &h);
        assert_eq!(into[&0][at::OK], 6);
    }

    #[test]
    fn callers_past_the_limit_count_together() {
        let mut c = Callers::new();
        for i in 0..MAX_CALLERS + 5 {
            add_for_caller(&mut c, Some(&format!("c{i}")), 0, at::FAILURES, 1);
        }
        assert_eq!(c.len(), MAX_CALLERS + 1);
        assert_eq!(c[OTHER_CALLERS].totals[at::FAILURES], 5);
    }

    #[test]
    fn the_latest_and_most_typical_samples_come_first() {
        let mut samples = Vec::new();
        for i in 0..(MAX_SAMPLES as i64 + 10) {
            keep_latest(
                &mut samples,
                Sample {
                    ts_ms: i,
                    session: format!("s{i}"),
                    caller: Some(if i % 2 == 0 { "bad" } else { "good" }.to_string()),
                    cluster: if i % 3 == 0 { "e1" } else { "e2" }.to_string(),
                },
            );
        }
        assert_eq!(samples.len(), MAX_SAMPLES);
        assert!(samples.iter().all(|s| s.ts_ms >= 10));
        let picked = typical(&samples, Some("e1"), Some("bad"), 3);
        assert!(
            picked
                .iter()
                .all(|s| s.cluster == "e1" && s.caller.as_deref() == Some("bad"))
        );
        assert_eq!(picked[0].ts_ms, 30);
        assert!(picked.windows(2).all(|w| w[0].ts_ms > w[1].ts_ms));
    }
}
