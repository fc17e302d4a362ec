//! The interactive `metagate permit`: which capability, what scope, how long, why; then a
//! confirmation. The questions go through [`Prompter`], so tests script the answers and the
//! binary asks them with dialoguer at a terminal.

use crate::domain::grants::{
    DEFAULT_DURATION_MS, SESSION_DURATION_MS, ScopeEntry, human_duration, parse_duration,
};

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

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::path::PathBuf;

    use super::*;
    use crate::domain::grants::{ScopeInput, parse_scope};

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
            check: &mut dyn FnMut(&str) -> Result<(), String>,
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
