//! Re-asks (seed 001 phase 3): a later ask of the same session, soon after the earlier one and
//! about the same capabilities, is a user correcting what the tools answered in between.
//! Detected without any language model: time, session and capability overlap; phrase hints
//! (`this is wrong`) are weaker evidence only. Which tool a re-ask blames is [`super::blame`]'s.

use std::collections::BTreeSet;

use super::round2;
use crate::policy::thresholds::Thresholds;

/// One ask, as the re-ask detector sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct AskRow {
    /// Its row in `asks` (0 when it has none).
    pub id: i64,
    /// When the user asked, in milliseconds since the epoch.
    pub ts_ms: i64,
    /// The session it was asked in.
    pub session: String,
    /// What was asked, if recorded.
    pub text: Option<String>,
    /// The capabilities the ask names.
    pub capabilities: Vec<String>,
}

/// What an ask says about the one before it in the same session.
#[derive(Debug, Clone, PartialEq)]
pub struct Followup {
    /// The earlier ask's time: tool calls in `[earlier_ms, later_ms)` are linked.
    pub earlier_ms: i64,
    /// When the later ask came, in milliseconds since the epoch.
    pub later_ms: i64,
    /// The asks' rows: the one corrected and the one correcting it.
    pub earlier_id: i64,
    /// The stored row id of the later ask.
    pub later_id: i64,
    /// The capabilities either ask named.
    pub capabilities: Vec<String>,
    /// The later ask's text: what the user said about the answer.
    pub complaint: Option<String>,
    /// A same-topic re-ask within the window: a user correction.
    pub reask: bool,
    /// A phrase hint in the later ask (weaker evidence only).
    pub phrase: Option<String>,
}

/// `|earlier ∩ later| / |earlier|`, rounded to two decimals (so the default 0.67 means two of
/// three). Zero when the earlier ask named no capabilities.
pub fn capability_overlap(earlier: &[String], later: &[String]) -> f64 {
    let a: BTreeSet<&str> = earlier.iter().map(String::as_str).collect();
    if a.is_empty() {
        return 0.0;
    }
    let b: BTreeSet<&str> = later.iter().map(String::as_str).collect();
    round2(a.intersection(&b).count() as f64 / a.len() as f64)
}

/// Detects re-asks in a stream of asks ordered by session, then time. Only consecutive asks of
/// one session are compared, so an intervening ask of a different shape breaks the chain.
#[derive(Debug, Default)]
pub struct ReaskDetector {
    prev: Option<AskRow>,
}

impl ReaskDetector {
    /// Feeds the next ask of a session (in time order); a re-ask of an earlier one comes back.
    pub fn next(&mut self, ask: AskRow, t: &Thresholds) -> Option<Followup> {
        let prev = self.prev.replace(ask);
        let (prev, ask) = (prev?, self.prev.as_ref().expect("just set"));
        if prev.session != ask.session {
            return None;
        }
        let reask = ask.ts_ms - prev.ts_ms <= t.reask_window_ms
            && capability_overlap(&prev.capabilities, &ask.capabilities) >= t.reask_overlap;
        let phrase = ask.text.as_deref().and_then(|text| {
            let lower = text.to_lowercase();
            t.phrases
                .iter()
                .find(|p| lower.contains(&p.to_lowercase()))
                .cloned()
        });
        if !reask && phrase.is_none() {
            return None;
        }
        // The earlier ask is done with: its capabilities move into the follow-up.
        let mut capabilities = prev.capabilities;
        for c in &ask.capabilities {
            if !capabilities.contains(c) {
                capabilities.push(c.clone());
            }
        }
        Some(Followup {
            earlier_ms: prev.ts_ms,
            later_ms: ask.ts_ms,
            earlier_id: prev.id,
            later_id: ask.id,
            capabilities,
            complaint: ask.text.clone(),
            reask,
            phrase,
        })
    }
}
