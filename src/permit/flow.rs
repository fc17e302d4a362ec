//! The interactive `metagate permit`: which capability, what scope, how long, why; then a
//! confirmation. The questions go through [`Prompter`], so tests script the answers and the
//! binary asks them with dialoguer at a terminal.

use super::{DEFAULT_DURATION_MS, SESSION_DURATION_MS, ScopeEntry, human_duration, parse_duration};

/// Why a prompt gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// The operator pressed Escape or Ctrl-C, or input ended.
    Cancelled,
    /// The terminal failed.
    Io(String),
}

/// Asks a person. Every method returns the answer or why there is none.
pub trait Prompter {
    /// Picks one of `items`; returns its index.
    fn select(
        &mut self,
        prompt: &str,
        items: &[String],
        default: usize,
    ) -> Result<usize, PromptError>;
    /// Reads a line; `check` refuses answers (the prompt asks again with its message).
    fn input(
        &mut self,
        prompt: &str,
        default: Option<&str>,
        check: &mut dyn FnMut(&str) -> Result<(), String>,
    ) -> Result<String, PromptError>;
    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool, PromptError>;
}

/// What the operator asked for, ready to become a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub capability: String,
    pub scope: Vec<ScopeEntry>,
    pub session: Option<String>,
    pub duration_ms: i64,
    pub reason: Option<String>,
}

/// What the flow offers.
pub struct Offer<'a> {
    /// The capabilities needing a grant, each with the tools it unlocks.
    pub capabilities: &'a [(String, Vec<String>)],
    /// Whether a capability's tools name paths or hosts a scope could check.
    pub scopable: &'a dyn Fn(&str) -> bool,
    /// Reads and resolves one scope value (paths inside the policy root) for a capability,
    /// refusing one its tools could never match.
    pub resolve_scope: &'a dyn Fn(&str, &str) -> Result<ScopeEntry, String>,
    /// The session to offer for "this session only" (`$METAGATE_SESSION`).
    pub session: Option<&'a str>,
}

/// The duration choices, in order.
pub const DURATIONS: &[&str] = &[
    "5 minutes",
    "15 minutes",
    "1 hour",
    "this session only (12 hours at most)",
    "custom",
];

/// Runs the questions. `Ok(None)`: the operator said no at the confirmation.
pub fn run(p: &mut dyn Prompter, offer: &Offer<'_>) -> Result<Option<Request>, PromptError> {
    let items: Vec<String> = offer
        .capabilities
        .iter()
        .map(|(c, tools)| {
            if tools.is_empty() {
                c.clone()
            } else {
                format!("{c} (unlocks {})", tools.join(", "))
            }
        })
        .collect();
    let pick = p.select("Capability to allow", &items, 0)?;
    let capability = offer.capabilities[pick].0.clone();
    let mut scope = Vec::new();
    if (offer.scopable)(&capability) {
        let text = p.input(
            "Scope: folders, files, globs or hosts, separated by spaces (empty: everything)",
            Some(""),
            &mut |t| {
                t.split_whitespace()
                    .try_for_each(|s| (offer.resolve_scope)(&capability, s).map(|_| ()))
            },
        )?;
        for s in text.split_whitespace() {
            scope.push((offer.resolve_scope)(&capability, s).map_err(PromptError::Io)?);
        }
    }
    let items: Vec<String> = DURATIONS.iter().map(|d| d.to_string()).collect();
    let (duration_ms, session) = match p.select("For how long", &items, 0)? {
        0 => (DEFAULT_DURATION_MS, None),
        1 => (15 * 60 * 1000, None),
        2 => (60 * 60 * 1000, None),
        3 => {
            let s = p.input("Session ID", offer.session, &mut |t| {
                if t.trim().is_empty() {
                    Err("a session ID is needed".to_string())
                } else {
                    Ok(())
                }
            })?;
            (SESSION_DURATION_MS, Some(s.trim().to_string()))
        }
        _ => {
            let t = p.input("Duration (90s, 15m, 2h)", None, &mut |t| {
                parse_duration(t).map(|_| ())
            })?;
            (parse_duration(&t).map_err(PromptError::Io)?, None)
        }
    };
    let reason = p.input("Reason (optional)", Some(""), &mut |_| Ok(()))?;
    let reason = Some(reason.trim().to_string()).filter(|r| !r.is_empty());
    let request = Request {
        capability,
        scope,
        session,
        duration_ms,
        reason,
    };
    let ok = p.confirm(&format!("Allow {}?", summary(&request)), true)?;
    Ok(ok.then_some(request))
}

/// One line saying what a request allows.
pub fn summary(r: &Request) -> String {
    let mut s = format!("{} for {}", r.capability, human_duration(r.duration_ms));
    if !r.scope.is_empty() {
        let scope: Vec<String> = r.scope.iter().map(ScopeEntry::to_text).collect();
        s.push_str(&format!(", scope {}", scope.join(" ")));
    }
    if let Some(sess) = &r.session {
        s.push_str(&format!(", session {sess}"));
    }
    s
}
