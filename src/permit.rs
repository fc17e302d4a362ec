//! The interactive `metagate permit`: which capability, what scope, how long, why; then a
//! confirmation. The questions go through [`Prompter`], so tests script the answers and the
//! binary asks them with dialoguer at a terminal.

use std::fmt;
use std::path::Path;

use serde_json::{Value, json};

use metagate_checks::path::Fs;
use metagate_core::events::format_time;
use metagate_core::grants::seal::{self, GrantKey};
use metagate_core::grants::{
    self, DEFAULT_DURATION_MS, Grant, GrantId, GrantParseError, SESSION_DURATION_MS, ScopeEntry,
    Status, human_duration, parse_duration,
};
use metagate_core::policy::Policy;
use metagate_store::grants::GrantEvent;

/// Why a prompt gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// The operator pressed Escape or Ctrl-C, or input ended.
    Cancelled,
    /// The terminal failed.
    Io(String),
}

/// Why the flow refuses an answer: shown under the prompt, which asks again. A message for the
/// operator, not a fault of the flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<GrantParseError> for Refusal {
    fn from(e: GrantParseError) -> Refusal {
        Refusal(e.to_string())
    }
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
        check: &mut dyn FnMut(&str) -> Result<(), Refusal>,
    ) -> Result<String, PromptError>;
    /// Asks a yes or no question.
    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool, PromptError>;
}

/// What the operator asked for, ready to become a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The capability to allow.
    pub capability: String,
    scope: Vec<ScopeEntry>,
    session: Option<String>,
    duration_ms: i64,
    reason: Option<String>,
}

/// What the flow offers.
pub struct Offer<'a> {
    /// The capabilities needing a grant, each with the tools it unlocks.
    pub capabilities: &'a [(String, Vec<String>)],
    /// Whether a capability's tools name paths or hosts a scope could check.
    pub scopable: &'a dyn Fn(&str) -> bool,
    /// Reads and resolves one scope value (paths inside the policy root) for a capability,
    /// refusing one its tools could never match.
    pub resolve_scope: &'a dyn Fn(&str, &str) -> Result<ScopeEntry, Refusal>,
    /// The session to offer for "this session only" (`$METAGATE_SESSION`).
    pub session: Option<&'a str>,
}

/// The duration choices, in order.
const DURATIONS: &[&str] = &[
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
            scope.push(
                (offer.resolve_scope)(&capability, s)
                    .map_err(|e| PromptError::Io(e.to_string()))?,
            );
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
                    Err(Refusal("a session ID is needed".to_string()))
                } else {
                    Ok(())
                }
            })?;
            (SESSION_DURATION_MS, Some(s.trim().to_string()))
        }
        _ => {
            let t = p.input("Duration (90s, 15m, 2h)", None, &mut |t| {
                parse_duration(t).map(|_| ()).map_err(Refusal::from)
            })?;
            (
                parse_duration(&t).map_err(|e| PromptError::Io(e.to_string()))?,
                None,
            )
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
fn summary(r: &Request) -> String {
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

/// A grant asked for with flags (`metagate permit grant`), as typed.
pub struct GrantFlags<'a> {
    /// `--capability`, as typed.
    pub capability: &'a str,
    /// `--for`, as typed.
    pub duration: &'a str,
    /// `--scope` values, as typed.
    pub scope: &'a [String],
    /// `--session`, if given.
    pub session: Option<&'a str>,
    /// `--reason`, if given.
    pub reason: Option<&'a str>,
}

/// A request the operator must correct: the message names the flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidRequest(pub String);

impl fmt::Display for InvalidRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidRequest {}

impl Request {
    /// Checks the flags the way the interactive flow checks its answers; scopes resolve
    /// against `cwd`.
    pub fn from_flags(
        flags: &GrantFlags<'_>,
        policy: &Policy,
        cwd: &Path,
        fs: &dyn Fs,
    ) -> Result<Request, InvalidRequest> {
        let invalid = |m: String| InvalidRequest(m);
        let capability = flags.capability.trim();
        let known: Vec<String> = policy
            .tools
            .values()
            .filter_map(|t| t.capability.clone())
            .collect();
        if !known.iter().any(|k| k == capability) {
            let mut known = known;
            known.sort();
            known.dedup();
            return Err(invalid(format!(
                "unknown capability {capability:?}: no tool of the policy has it (capabilities: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
        let duration_ms =
            parse_duration(flags.duration).map_err(|e| invalid(format!("--for: {e}")))?;
        if !flags.scope.is_empty() && !grants::scopable(policy, capability) {
            return Err(invalid(format!(
                "--scope: no tool with capability {capability} has a path or url argument, so a scope could never be checked; grant it without --scope"
            )));
        }
        let scope = flags
            .scope
            .iter()
            .map(|s| {
                grants::resolve_scope(policy, cwd, s, fs)
                    .map_err(|e| invalid(format!("--scope: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(e) = scope
            .iter()
            .find_map(|e| grants::scope_mismatch(policy, capability, e))
        {
            return Err(invalid(format!("--scope: {e}")));
        }
        if let Some(s) = flags.session
            && s.trim().is_empty()
        {
            return Err(invalid("--session: the session ID is empty".to_string()));
        }
        Ok(Request {
            capability: capability.to_string(),
            scope,
            session: flags.session.map(str::to_string),
            duration_ms,
            reason: flags
                .reason
                .filter(|r| !r.trim().is_empty())
                .map(str::to_string),
        })
    }

    /// The grant this request makes at `now_ms`, with a fresh random `id`, by `granted_by`,
    /// sealed with `key`.
    pub fn grant(&self, id: GrantId, now_ms: i64, granted_by: String, key: &GrantKey) -> Grant {
        let mut g = Grant {
            id,
            capability: self.capability.clone(),
            scope: self.scope.clone(),
            unreadable: None,
            session: self.session.clone(),
            granted_at_ms: now_ms,
            expires_at_ms: now_ms.saturating_add(self.duration_ms),
            revoked_at_ms: None,
            granted_by: Some(granted_by),
            reason: self.reason.clone(),
            mac: None,
            forged: false,
        };
        g.mac = Some(seal::seal(&g, key));
        g
    }
}

/// A grant as `permit grant --format json` and `permit list --format json` show it.
pub fn grant_json(g: &Grant, now_ms: i64) -> Value {
    json!({
        "id": g.id.as_str(),
        "capability": g.capability,
        // An unreadable scope is no list: an empty one would read as the whole capability.
        "scope": match g.unreadable {
            None => json!(g.scope.iter().map(ScopeEntry::to_text).collect::<Vec<_>>()),
            Some(_) => Value::Null,
        },
        "scope_error": g.unreadable,
        "session": g.session,
        "granted_at": format_time(g.granted_at_ms),
        "expires_at": format_time(g.expires_at_ms),
        "revoked_at": g.revoked_at_ms.map(format_time),
        "granted_by": g.granted_by,
        "reason": g.reason,
        "status": g.status(now_ms).as_str(),
        "expires_in_ms": (g.status(now_ms) == Status::Live).then(|| g.expires_at_ms - now_ms),
    })
}

/// When a grant ends, in words, as `permit list` shows it.
pub fn expires_in(g: &Grant, now: i64) -> String {
    match g.status(now) {
        Status::Live => human_duration(g.expires_at_ms - now),
        Status::Expired => format!("{} ago", human_duration(now - g.expires_at_ms)),
        Status::Revoked | Status::Forged => "-".to_string(),
        Status::NotYet => format!("starts in {}", human_duration(g.granted_at_ms - now)),
    }
}

/// An audit event as `permit list --all --format json` shows it.
pub fn event_json(e: &GrantEvent) -> Value {
    json!({
        "ts": format_time(e.ts_ms),
        "event": e.event,
        "grant": e.grant_id,
        "capability": e.capability,
        "tool": e.tool,
        "session": e.session,
        "decision": e.decision_id,
        "actor": e.actor,
        "detail": e.detail,
    })
}

/// The non-interactive equivalent of the interactive flow, for when there is no terminal to
/// ask at; `store` is the store the gate uses.
pub fn equivalent_command(policy: &Policy, store: Option<&Path>) -> String {
    let caps: Vec<&str> = policy
        .rules
        .permit_require
        .iter()
        .map(String::as_str)
        .collect();
    let flags = grants::setup_flags(policy.origin.as_deref(), store);
    format!(
        "metagate{flags} permit grant --capability {} [--scope PATH|HOST]... [--for 5m] [--session ID] [--reason TEXT]",
        if caps.len() == 1 {
            caps[0].to_string()
        } else {
            format!("<{}>", caps.join("|"))
        }
    )
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::path::PathBuf;

    use super::*;
    use metagate_core::grants::{ScopeInput, parse_scope};

    /// Answers from a script, and records the prompts it saw.
    struct Script {
        answers: VecDeque<&'static str>,
        seen: Vec<String>,
    }

    impl Script {
        fn new(answers: &[&'static str]) -> Script {
            Script {
                answers: answers.iter().copied().collect(),
                seen: Vec::new(),
            }
        }
        fn next(&mut self, prompt: &str) -> Result<&'static str, PromptError> {
            self.seen.push(prompt.to_string());
            self.answers.pop_front().ok_or(PromptError::Cancelled)
        }
    }

    impl Prompter for Script {
        fn select(
            &mut self,
            prompt: &str,
            items: &[String],
            _: usize,
        ) -> Result<usize, PromptError> {
            let a = self.next(prompt)?;
            let i = items
                .iter()
                .position(|i| i.starts_with(a))
                .unwrap_or_else(|| panic!("{a} not in {items:?}"));
            self.seen.push(items.join(" | "));
            Ok(i)
        }
        fn input(
            &mut self,
            prompt: &str,
            default: Option<&str>,
            check: &mut dyn FnMut(&str) -> Result<(), Refusal>,
        ) -> Result<String, PromptError> {
            // Like a terminal: a refused answer is asked again.
            loop {
                let a = self.next(prompt)?;
                let a = if a.is_empty() {
                    default.unwrap_or("")
                } else {
                    a
                };
                match check(a) {
                    Ok(()) => return Ok(a.to_string()),
                    Err(e) => self.seen.push(format!("refused: {e}")),
                }
            }
        }
        fn confirm(&mut self, prompt: &str, _: bool) -> Result<bool, PromptError> {
            let a = self.next(prompt)?;
            Ok(a == "y")
        }
    }

    fn offer_run(answers: &[&'static str]) -> (Result<Option<Request>, PromptError>, Vec<String>) {
        let caps = vec![
            (
                "system_execute".to_string(),
                vec!["system_execute".to_string()],
            ),
            (
                "file_access".to_string(),
                vec!["file_read".to_string(), "file_list".to_string()],
            ),
        ];
        let scopable = |c: &str| c == "file_access";
        let resolve = |_: &str, s: &str| match parse_scope(s)? {
            ScopeInput::Path(p) | ScopeInput::Literal(p) => {
                Ok(ScopeEntry::Path(PathBuf::from("/w").join(p)))
            }
            ScopeInput::Host(h) => Ok(ScopeEntry::Host(h)),
        };
        let offer = Offer {
            capabilities: &caps,
            scopable: &scopable,
            resolve_scope: &resolve,
            session: Some("env-session"),
        };
        let mut p = Script::new(answers);
        let r = run(&mut p, &offer);
        (r, p.seen)
    }

    #[test]
    fn interactive_flow_defaults_to_five_minutes() {
        let (r, seen) = offer_run(&["system_execute", "5 minutes", "", "y"]);
        assert_eq!(
            r.unwrap().unwrap(),
            Request {
                capability: "system_execute".into(),
                scope: vec![],
                session: None,
                duration_ms: DEFAULT_DURATION_MS,
                reason: None
            }
        );
        // The capability list shows what each unlocks; no scope question for a capability
        // without path or host arguments.
        assert!(
            seen[1].contains("file_access (unlocks file_read, file_list)"),
            "{seen:?}"
        );
        assert!(!seen.iter().any(|s| s.starts_with("Scope")), "{seen:?}");
        assert!(
            seen.last()
                .unwrap()
                .contains("Allow system_execute for 5m?"),
            "{seen:?}"
        );
    }

    #[test]
    fn interactive_flow_scope_session_custom_and_refusals() {
        let (r, seen) = offer_run(&[
            "file_access",
            "src",
            "./src host:example.com",
            "this session",
            "",
            "deploy",
            "y",
        ]);
        let r = r.unwrap().unwrap();
        assert_eq!(
            r.scope,
            vec![
                ScopeEntry::Path("/w/./src".into()),
                ScopeEntry::Host("example.com".into())
            ]
        );
        assert_eq!(
            (r.session.as_deref(), r.duration_ms),
            (Some("env-session"), SESSION_DURATION_MS)
        );
        assert_eq!(r.reason.as_deref(), Some("deploy"));
        assert!(
            seen.iter()
                .any(|s| s.starts_with("refused:") && s.contains("./src")),
            "{seen:?}"
        );

        let (r, seen) = offer_run(&[
            "system_execute",
            "custom",
            "0m",
            "-5m",
            "90s",
            "why not",
            "y",
        ]);
        assert_eq!(r.unwrap().unwrap().duration_ms, 90_000);
        assert_eq!(
            seen.iter().filter(|s| s.starts_with("refused:")).count(),
            2,
            "{seen:?}"
        );

        let (r, _) = offer_run(&["system_execute", "1 hour", "", "n"]);
        assert_eq!(r.unwrap(), None);
        let (r, _) = offer_run(&["system_execute"]);
        assert_eq!(r.unwrap_err(), PromptError::Cancelled);
    }
}
