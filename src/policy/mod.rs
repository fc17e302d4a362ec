//! The operator's policy checks (DESIGN.md §2.5): intents, per-caller overrides, what `path`,
//! `shell`, `url`, `regex` and `git_ref` arguments may hold, prerequisites, and limits.
//! Deterministic: the world (time, counts, the file system) comes in through [`Facts`] and
//! [`Fs`], so every check is testable in-process.

mod kinds;
mod limits;

use std::path::{Path, PathBuf};

use crate::args::Args;
use crate::error::{Category, ToolError};
use crate::pathcheck::{self, Fs, PathRules};
use crate::schema::file::Evidence;
use crate::schema::{FailMode, Policy};
use crate::shellcheck::{Protected, ShellRules};

pub use kinds::url_host;
pub use limits::{Count, CountKey, fingerprint};

/// Who is calling and why (`--session`, `--caller`, `--intent`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    pub session: Option<String>,
    pub caller: Option<String>,
    pub intent: Option<String>,
}

/// What the checks need to know about the world.
pub trait Facts {
    /// Milliseconds since the epoch.
    fn now_ms(&self) -> i64;
    /// Calls the gate let through (passed or corrected; rejections never count) that match
    /// `key` at or after `since_ms` (all of them when `None`). The count may stop at `cap`:
    /// a limit of `cap` needs to know no more, and `oldest_ms` is then the oldest of the
    /// `cap` most recent calls, when the window frees a slot.
    fn count(&mut self, key: &CountKey, since_ms: Option<i64>, cap: u64) -> Result<Count, String>;
    /// Whether `tool` completed in `session`, as `evidence` says.
    fn completed(&mut self, session: &str, tool: &str, evidence: Evidence) -> Result<bool, String>;
    /// The grants for `capability` that may cover a call now (unrevoked and unexpired, and a
    /// few recent others so a refusal can say why); the checker decides which one covers it.
    /// Without a store there are none to look up, and every call needing one is refused.
    fn grants(&mut self, _capability: &str) -> Result<Vec<crate::permit::Grant>, String> {
        Err(crate::permit::check::NO_STORE.to_string())
    }
    /// What the grant check decided for the call being checked (audited with its decision).
    fn grant_checked(&mut self, _check: crate::permit::check::GrantCheck) {}
}

/// The world when there is no telemetry store: limits and prerequisites cannot be counted.
pub struct NoFacts(pub i64);

impl Facts for NoFacts {
    fn now_ms(&self) -> i64 {
        self.0
    }
    fn count(&mut self, _: &CountKey, _: Option<i64>, _: u64) -> Result<Count, String> {
        Err("limits are counted in the telemetry store, and telemetry is off".to_string())
    }
    fn completed(&mut self, _: &str, _: &str, _: Evidence) -> Result<bool, String> {
        Err("prerequisites are looked up in the telemetry store, and telemetry is off".to_string())
    }
}

/// Which checks run: `lint` checks calls without telemetry, limits or prerequisites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    pub runtime: bool,
}

/// The policy checks, set up once per run.
pub struct Checker {
    paths: Result<PathRules, String>,
    /// The protected files inside the root, as `pathcheck::check` names them.
    protected_inside: Vec<String>,
    shell_protected: Protected,
    shell_constructs: Vec<String>,
    shell_commands: Vec<String>,
}

/// What the checker needs from the run: where the working folder is, and the files the
/// gate must protect (its own policy file and database).
pub struct Setup<'a> {
    pub cwd: &'a Path,
    pub protected: Vec<PathBuf>,
    /// The home folder `~` and `$HOME` stand for in shell commands.
    pub home: Option<PathBuf>,
    pub fs: &'a dyn Fs,
}

impl Checker {
    pub fn new(policy: &Policy, setup: &Setup<'_>) -> Checker {
        let p = &policy.rules.paths;
        // `--policy policy.toml` gives a relative origin; rules need absolute paths.
        let absolute = |path: &Path| setup.cwd.join(path);
        let base = p
            .base
            .as_deref()
            .map_or_else(|| setup.cwd.to_path_buf(), absolute);
        let root = base.join(&p.root);
        let paths = PathRules::new(&root, &p.deny, &p.allow, setup.fs)
            .map_err(|e| format!("[paths] {}: {}", e.glob, e.message));
        let protected: Vec<PathBuf> = setup.protected.iter().map(|p| absolute(p)).collect();
        // Resolved the way path arguments are, so every spelling of them is recognized.
        let protected_inside = match &paths {
            Ok(rules) => protected
                .iter()
                .filter_map(|p| p.to_str())
                .filter_map(|p| pathcheck::check(p, rules, setup.fs).ok())
                .collect(),
            Err(_) => Vec::new(),
        };
        let vars = ["METAGATE_DB".to_string(), "METAGATE_POLICY".to_string()];
        Checker {
            paths,
            protected_inside,
            shell_protected: Protected::new(&protected, &vars, setup.home.as_deref()),
            shell_constructs: policy.rules.shell.constructs.clone(),
            shell_commands: policy.rules.shell.commands.clone(),
        }
    }

    /// The intent a call is checked under: `--intent`, else the caller's own.
    pub fn intent<'p>(
        &self,
        policy: &'p Policy,
        context: &Context,
    ) -> Option<&'p crate::schema::rules::Intent> {
        let name = context.intent.as_deref().or_else(|| {
            context
                .caller
                .as_deref()
                .and_then(|c| policy.rules.caller_intents.get(c))
                .map(String::as_str)
        })?;
        policy.rules.intents.get(name)
    }

    /// Runs every check on a corrected call. `explain` receives one line per check.
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &self,
        policy: &Policy,
        tool: &str,
        args: &Args<'_>,
        context: &Context,
        facts: &mut dyn Facts,
        fs: &dyn Fs,
        scope: Scope,
        explain: &mut Option<Vec<String>>,
    ) -> Result<(), Box<ToolError>> {
        // Lines are only formatted when someone asked for them.
        let mut note = |line: std::fmt::Arguments<'_>| {
            if let Some(lines) = explain.as_mut() {
                lines.push(line.to_string());
            }
        };
        let spec = policy.tool(tool);
        let capability = spec.and_then(|t| t.capability.as_deref());
        // Intent.
        match self.intent(policy, context) {
            Some(intent) => match intent.admits(tool, capability) {
                Ok(()) => note(format_args!("intent {}: admits {tool}", intent.name)),
                Err(rule) => {
                    note(format_args!(
                        "intent {}: refuses {tool} ({rule})",
                        intent.name
                    ));
                    let allowed = intent.allowed_list();
                    let listed = if allowed.is_empty() {
                        "no tools".to_string()
                    } else {
                        allowed.join(", ")
                    };
                    return Err(Box::new(
                        blocked(
                            tool,
                            format!(
                                "{tool} is not allowed while doing {} (it allows {listed})",
                                intent.name
                            ),
                            if allowed.is_empty() {
                                format!("Answer without tools: {} allows none", intent.name)
                            } else {
                                format!("Use one of the tools {} allows: {listed}", intent.name)
                            },
                            &rule,
                        )
                        .detail("intent", intent.name.clone())
                        .detail("allowed", allowed),
                    ));
                }
            },
            None => note(format_args!("intent: none given, no intent check")),
        }
        // Caller.
        if let Some(caller) = context
            .caller
            .as_deref()
            .and_then(|c| policy.rules.callers.get(c))
        {
            match caller.admits(tool, capability) {
                Ok(()) => note(format_args!("caller {}: admits {tool}", caller.name)),
                Err(rule) => {
                    note(format_args!(
                        "caller {}: refuses {tool} ({rule})",
                        caller.name
                    ));
                    return Err(Box::new(
                        blocked(
                            tool,
                            format!("caller {} may not use {tool} ({rule})", caller.name),
                            "Use another tool: this one is not available to this caller"
                                .to_string(),
                            &rule,
                        )
                        .detail("caller", caller.name.clone()),
                    ));
                }
            }
        }
        // Argument kinds.
        if let Some(t) = spec {
            for (name, spec) in &t.args {
                let Some(kind) = spec.kind else { continue };
                if !spec.kind_when.is_empty()
                    && !crate::schema::condition_holds(&spec.kind_when, args)
                {
                    note(format_args!(
                        "{name} ({}): not this time (kind_when does not hold)",
                        kind.as_str()
                    ));
                    continue;
                }
                let Some(value) = args.get(name) else {
                    continue;
                };
                kinds::check(self, policy, tool, name, kind, value, fs, &mut note)?;
            }
        }
        if !scope.runtime {
            return Ok(());
        }
        // Grants.
        crate::permit::check::check(self, policy, tool, args, context, facts, fs, &mut note)?;
        // Prerequisites.
        if let Some(required) = policy.rules.requires.get(tool) {
            let Some(session) = context.session.as_deref() else {
                note(format_args!(
                    "prerequisites: {tool} requires {}, and there is no session",
                    required.join(", ")
                ));
                return Err(Box::new(blocked(
                    tool,
                    format!(
                        "{tool} requires {} first, and without a session metagate cannot tell whether it happened",
                        required.join(", ")
                    ),
                    "Run metagate gate with --session (or METAGATE_SESSION)".to_string(),
                    &format!("tools.{tool}.requires"),
                )));
            };
            for r in required {
                let done = facts
                    .completed(session, r, policy.rules.evidence)
                    .or_else(|e| internal(policy, tool, &e).map(|()| true))?;
                note(format_args!(
                    "prerequisite {r} in session {session}: {}",
                    if done { "met" } else { "not met" }
                ));
                if !done {
                    return Err(Box::new(
                        blocked(
                            tool,
                            format!("{tool} requires {r} to have completed in this session first"),
                            format!("Call {r} first, then {tool}"),
                            &format!("tools.{tool}.requires"),
                        )
                        .detail("requires", r.clone()),
                    ));
                }
            }
        }
        // Limits.
        limits::check(policy, tool, args, context, facts, &mut note)
    }
}

fn blocked(tool: &str, message: String, suggestion: String, rule: &str) -> ToolError {
    ToolError::new(Category::PolicyBlocked, message)
        .tool(tool)
        .suggest(suggestion)
        .detail("rule", rule)
}

/// A check that could not run: fail closed (a rejection) or open (`Ok`), as the policy says.
pub(crate) fn internal(policy: &Policy, tool: &str, reason: &str) -> Result<(), Box<ToolError>> {
    match policy.gate.on_internal_error {
        FailMode::Pass => Ok(()),
        FailMode::Reject => Err(Box::new(
            ToolError::new(
                Category::ServerError,
                format!(
                    "metagate could not check this call, and its policy fails closed: {reason}"
                ),
            )
            .tool(tool)
            .suggest(
                "Try again later; if it keeps failing, the operator must look at metagate's setup",
            ),
        )),
    }
}

impl Checker {
    pub(crate) fn paths(&self) -> &Result<PathRules, String> {
        &self.paths
    }

    pub(crate) fn shell_rules(&self) -> ShellRules<'_> {
        ShellRules {
            constructs: &self.shell_constructs,
            words: &self.shell_commands,
            protected: &self.shell_protected,
        }
    }

    /// Whether `relative` (as `pathcheck::check` returned it) is one of metagate's own files
    /// or an SQLite companion of one.
    pub(crate) fn is_protected(&self, relative: &str) -> bool {
        self.protected_inside.iter().any(|p| {
            relative
                .strip_prefix(p.as_str())
                .is_some_and(|rest| ["", "-wal", "-shm", "-journal"].contains(&rest))
        })
    }
}
