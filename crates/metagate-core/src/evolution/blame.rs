//! Which tool a re-ask blames. Several tools often answer between two asks of a session (a
//! calculator and a summarizer for "summarize this and total the figures"); the user who asks
//! again is unhappy with one of them, and it is never fair to blame them all.
//!
//! Each tool that answered between the asks is scored:
//!
//! - **capabilities**: the share of the two asks' capabilities its words cover (its name, its
//!   method, and the capability the policy gives it), from 0 to 1;
//! - **complaint**: 1 when the later ask's text names it (`the summary is wrong` names
//!   `summarizer`);
//! - **its own signal**: ½ when it said so itself between the asks (a failure or a
//!   `low_utility` referral).
//!
//! Words match when equal, or when they share a stem: the shorter (of four letters or more)
//! begins the longer (`fetch` and `fetcher`, `calc` and `calculator`), or they begin with the
//! same five letters or more, leaving at most three of the shorter (`summary` and
//! `summarizer`; not `author` and `authentication`). The highest score is blamed; a tie goes to
//! the tool that answered last (the answer the user saw last). When nothing points anywhere,
//! a tool that answered alone is blamed, and among several none is: the re-ask is counted as
//! unattributed.

/// Where the call a re-ask blames is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRef {
    /// A row of `outcomes`.
    Outcome(i64),
    /// A row of `decisions`.
    Decision(i64),
}

/// A tool that answered between two asks of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The tool that ran.
    pub tool: String,
    /// Its method, if it has several.
    pub method: Option<String>,
    /// Its last call between the asks.
    pub call: CallRef,
    /// When it last ran before the re-ask, in milliseconds since the epoch.
    pub last_ms: i64,
    /// It reported a failure of its own or a `low_utility` referral between the asks.
    pub flagged: bool,
    /// It reported a failure of its own (not a referral) between the asks: a re-ask after it
    /// is a cause for fixing the tool, not for tightening what it accepts.
    pub failed: bool,
}

impl Candidate {
    /// The row id of its call (outcome or decision).
    pub fn call_id(&self) -> i64 {
        match self.call {
            CallRef::Outcome(id) | CallRef::Decision(id) => id,
        }
    }
}

/// Words too common in a complaint to name a tool.
const STOP_WORDS: [&str; 40] = [
    "about", "again", "also", "answer", "could", "does", "done", "from", "give", "have", "here",
    "into", "just", "like", "look", "looks", "make", "more", "please", "result", "results",
    "retry", "should", "show", "than", "that", "them", "then", "there", "these", "they", "this",
    "those", "tool", "were", "what", "which", "will", "with", "wrong",
];

/// The lowercase words of a name or a text: runs of letters and digits, of three characters
/// or more.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Whether two lowercase words are one, or share a stem (see the module's documentation).
fn same_stem(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (la, lb) = (a.chars().count(), b.chars().count());
    let shorter = la.min(lb);
    if shorter < 4 {
        return false;
    }
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    common == shorter || (common >= 5 && common + 3 >= shorter)
}

/// How well a tool's words (`tool_words`) fit two asks' capabilities and the complaint.
fn score(
    tool_words: &[String],
    capabilities: &[String],
    complaint: Option<&str>,
    flagged: bool,
) -> f64 {
    let covers = |word: &str| tool_words.iter().any(|t| same_stem(t, word));
    let mut caps: Vec<&String> = capabilities.iter().collect();
    caps.sort();
    caps.dedup();
    let matched = caps
        .iter()
        .filter(|cap| words(cap).iter().any(|w| covers(w)))
        .count();
    let mut total = if caps.is_empty() {
        0.0
    } else {
        matched as f64 / caps.len() as f64
    };
    if complaint.is_some_and(|text| words(text).iter().any(|w| covers(w))) {
        total += 1.0;
    }
    if flagged {
        total += 0.5;
    }
    total
}

/// The words a tool is known by: its name, its method and its capability.
fn tool_words(tool: &str, method: Option<&str>, capability: Option<&str>) -> Vec<String> {
    let mut all = words(tool);
    all.extend(method.map(words).unwrap_or_default());
    all.extend(capability.map(words).unwrap_or_default());
    all
}

/// The index of the candidate a re-ask blames, if any (see the module's documentation).
/// `capability_of` gives the capability the policy declares for a tool.
pub fn blame(
    candidates: &[Candidate],
    capabilities: &[String],
    complaint: Option<&str>,
    capability_of: &dyn Fn(&str) -> Option<String>,
) -> Option<usize> {
    let scored: Vec<f64> = candidates
        .iter()
        .map(|c| {
            let words = tool_words(
                &c.tool,
                c.method.as_deref(),
                capability_of(&c.tool).as_deref(),
            );
            score(&words, capabilities, complaint, c.flagged)
        })
        .collect();
    let best = scored.iter().copied().fold(0.0f64, f64::max);
    if best <= 0.0 {
        return (candidates.len() == 1).then_some(0);
    }
    (0..candidates.len())
        .filter(|&i| scored[i] >= best - 1e-9)
        .max_by_key(|&i| (candidates[i].last_ms, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(tool: &str, last_ms: i64, flagged: bool) -> Candidate {
        Candidate {
            tool: tool.to_string(),
            method: None,
            call: CallRef::Outcome(last_ms),
            last_ms,
            flagged,
            failed: false,
        }
    }

    fn caps(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn stems_match_only_when_close() {
        assert!(same_stem("summary", "summarizer"));
        assert!(same_stem("fetch", "fetcher"));
        assert!(same_stem("calc", "calculator"));
        assert!(!same_stem("compute", "calculator"));
        assert!(!same_stem("web", "website"));
        assert!(!same_stem("authentication", "author"));
        assert_eq!(words("That summary is WRONG: again!"), ["summary"]);
    }

    #[test]
    fn the_tool_the_complaint_names_is_blamed_not_every_tool_between() {
        let none = |_: &str| None;
        let both = [cand("calculator", 20, false), cand("summarizer", 10, false)];
        let asked = caps(&["summarize", "compute"]);
        let blamed = blame(&both, &asked, Some("that summary misses the point"), &none);
        assert_eq!(blamed, Some(1));
        // The capabilities alone point at the summarizer too.
        assert_eq!(blame(&both, &asked, None, &none), Some(1));
        // Its own low-utility signal points at a tool.
        let quiet = [cand("alpha", 20, false), cand("beta", 10, true)];
        assert_eq!(blame(&quiet, &caps(&["x"]), None, &none), Some(1));
        // Nothing points anywhere: one tool alone is blamed, two are not.
        assert_eq!(blame(&quiet[..1], &caps(&["x"]), None, &none), Some(0));
        let two = [cand("alpha", 20, false), cand("beta", 10, false)];
        assert_eq!(blame(&two, &caps(&["x"]), Some("no!"), &none), None);
        // A tie goes to the tool that answered last.
        let tie = [
            cand("web_fetcher", 10, false),
            cand("fetch_cache", 30, false),
        ];
        assert_eq!(blame(&tie, &caps(&["http_fetch"]), None, &none), Some(1));
        // The policy's capability counts as the tool's words.
        let declared = |t: &str| (t == "alpha").then(|| "http_fetch".to_string());
        assert_eq!(
            blame(&two, &caps(&["http_fetch"]), None, &declared),
            Some(0)
        );
    }
}
