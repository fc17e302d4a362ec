//! The operator's policy checks (docs/policy-checks.md): intents, per-caller overrides, what `path`,
//! `shell`, `url`, `regex` and `git_ref` arguments may hold, prerequisites, and limits.
//! Deterministic: the world (time, counts, the file system) comes in through [`Facts`] and
//! [`Fs`], so every check is testable in-process.

mod facts;
pub mod grants;
mod kinds;
mod limits;

use crate::grants::seal::GrantKey;
use std::cell::{OnceCell, RefCell};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::error::{Category, ToolError};
use crate::policy::{FailMode, Policy};
use metagate_checks::own_binary::OwnBinary;
use metagate_checks::path::{Access, Fs, PathRules, RuleError};
use metagate_checks::program_files::ProgramFiles;
use metagate_checks::shell::{self, CommandList, CommandPattern, Protected, ShellRules};
use metagate_wire::args::Args;

pub use facts::{Counts, Facts, GrantLookup, NoFacts, Unanswerable};
pub(crate) use kinds::texts;
pub use limits::{Count, CountKey, fingerprint};

/// Who is calling and why (`--session`, `--caller`, `--intent`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The agent's session, for per-session limits and grants.
    pub session: Option<String>,
    /// Who calls, for `[callers]` rules and limits.
    pub caller: Option<String>,
    /// What the agent is doing, for `[intents]` rules.
    pub intent: Option<String>,
}

/// Which checks run: `lint` checks calls without telemetry, limits or prerequisites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// Whether the checks that need the world (grants, limits, prerequisites) run, or only the policy's own.
    pub runtime: bool,
}

/// One call to check: the tool, its corrected arguments, and who is calling.
pub struct CallToCheck<'c, 'a> {
    /// The tool's name, as corrected.
    pub tool: &'c str,
    /// Its arguments, as corrected.
    pub args: &'c Args<'a>,
    /// Who calls and why.
    pub context: &'c Context,
}

/// What the checks of one call may consult, and what they report back.
pub struct Inquiry<'i> {
    /// The counts and grants the checks may ask about.
    pub facts: &'i mut dyn Facts,
    /// The file system path arguments are resolved against.
    pub fs: &'i dyn Fs,
    /// Milliseconds since the epoch, for limits and grants.
    pub now_ms: i64,
    /// Which checks run.
    pub scope: Scope,
    /// One line per check, when `--explain` asked for them.
    pub explain: &'i mut Option<Vec<String>>,
    /// What the grant check decided, for the audit trail (`used` or `denied`).
    pub grant_check: Option<grants::GrantCheck>,
}

impl Inquiry<'_> {
    /// Notes a check's decision; the line is only formatted when someone asked for it.
    fn note(&mut self, line: std::fmt::Arguments<'_>) {
        if let Some(lines) = self.explain.as_mut() {
            lines.push(line.to_string());
        }
    }
}

/// The policy checks, set up once per run.
pub struct Checker {
    /// What path checks start from; the rules are built on the first path argument, as
    /// compiling the globs costs several times what the rest of a one-call run does.
    path_setup: PathSetup,
    paths: OnceCell<Result<PathRules, PathRulesError>>,
    /// The same rules for arguments the policy declares `access = "read"`.
    read_paths: OnceCell<Result<PathRules, PathRulesError>>,
    /// The home folder the shell check reads `~` and `$HOME` as; with the protected paths of
    /// [`PathSetup`], what the shell check's [`Protected`] is built from, on the first shell
    /// argument (its automaton is the dearest thing a one-call run would otherwise build).
    home: Option<PathBuf>,
    shell_protected: OnceCell<Protected>,
    shell_constructs: Vec<String>,
    shell_denied: CommandList,
    shell_allowed: Option<Vec<CommandPattern>>,
    own_binary: Option<OwnBinary>,
    programs: Option<ProgramFiles>,
    /// The key grant rows must be sealed with; none: no row is a grant.
    pub(crate) grant_key: Option<GrantKey>,
    plans: RefCell<Plans>,
}

/// What the checks need for one tool, worked out on its first call. All of it depends only
/// on the policy, the context and the tool's name, which a run keeps: a stream checks the
/// same few tools under one context over and over, and most need nothing past this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    /// The intent and the caller admit the tool.
    admitted: bool,
    /// Some argument of the tool has a kind to check.
    kinds: bool,
    /// A grant, a prerequisite or a limit applies (checked only at run time).
    runtime: bool,
    /// Where the tool sits in `policy.tools`: found once, not again on every call.
    index: Option<usize>,
}

/// Where the root is, its globs, and metagate's own files (absolute).
struct PathSetup {
    root: PathBuf,
    deny: Vec<String>,
    allow: Vec<String>,
    protected: Vec<PathBuf>,
}

/// What SQLite keeps beside a database file (`PRAGMA journal_mode` WAL, or rollback).
const SQLITE_COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

impl PathSetup {
    /// The rules, refusing metagate's own files, their SQLite companions (a policy file has
    /// none, but a name is cheap) and the folders on the way to them.
    fn build(&self, fs: &dyn Fs) -> Result<PathRules, PathRulesError> {
        let rules =
            PathRules::new(&self.root, &self.deny, &self.allow, fs).map_err(PathRulesError)?;
        let mut files = Vec::with_capacity(self.protected.len() * 4);
        for file in &self.protected {
            files.push(file.clone());
            for suffix in SQLITE_COMPANIONS {
                let mut companion = file.clone().into_os_string();
                companion.push(suffix);
                files.push(companion.into());
            }
        }
        Ok(rules.protecting(&files, fs))
    }
}

/// Why the policy's path rules could not be built (a `[paths]` glob, or the root itself): every
/// path argument is then a check that could not run, failing as `on_internal_error` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathRulesError(RuleError);

impl std::fmt::Display for PathRulesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[paths] {}: {}", self.0.glob, self.0.message)
    }
}

impl std::error::Error for PathRulesError {}

/// Plans for the policy and context they were made under.
#[derive(Default)]
struct Plans {
    /// The policy's address: plans are forgotten if the checker is handed another policy.
    policy: usize,
    context: Context,
    tools: FxHashMap<Box<str>, Plan>,
}

/// Tool names come from the model: past this many, the plans start again.
const MAX_PLANS: usize = 4096;

/// The intent calls are checked under: `--intent`, else the caller's own.
fn intent_of<'p>(
    policy: &'p Policy,
    context: &Context,
) -> Option<&'p crate::policy::rules::Intent> {
    let name = context.intent.as_deref().or_else(|| {
        context
            .caller
            .as_deref()
            .and_then(|c| policy.rules.caller_intents.get(c))
            .map(String::as_str)
    })?;
    policy.rules.intents.get(name)
}

/// Whether the intent and the caller of `context` admit `tool` (the rest of the checks aside):
/// what a tool list shown to that caller may hold.
pub fn admits(policy: &Policy, tool: &str, context: &Context) -> bool {
    let capability = policy.tool(tool).and_then(|t| t.capability.as_deref());
    let intent_admits =
        intent_of(policy, context).is_none_or(|i| i.admits(tool, capability).is_ok());
    let caller_admits = context
        .caller
        .as_deref()
        .and_then(|c| policy.rules.callers.get(c))
        .is_none_or(|c| c.admits(tool, capability).is_ok());
    intent_admits && caller_admits
}

/// What the checker needs from the run: where the working folder is, and the files the
/// gate must protect: every file metagate reads as configuration or state, wherever a run
/// may find it (`metagate::own_files` lists them); relative ones are taken from `cwd`.
pub struct Setup<'a> {
    /// The folder relative paths and the policy's root are taken from.
    pub cwd: &'a Path,
    /// metagate's own files (policy, store), which no path argument may name.
    pub protected: Vec<PathBuf>,
    /// The home folder `~` and `$HOME` stand for in shell commands.
    pub home: Option<PathBuf>,
    /// The running binary: shell commands may not run it under any name.
    pub own_binary: Option<OwnBinary>,
    /// Where shell commands' programs are found and resolved (links, forwarding scripts);
    /// None: they are read by their names alone.
    pub programs: Option<ProgramFiles>,
    /// The key grant rows are sealed with (none yet: no row is a grant).
    pub grant_key: Option<GrantKey>,
}

/// The policy's denied commands and `metagate` itself, whatever the policy says: its
/// commands make grants and write its store and policy, so a model that may run commands
/// would otherwise grant itself what the operator has not (`metagate permit grant …`).
/// Entries that do not read (`policy check` names them) are left out.
fn with_own_command(words: &[String]) -> Vec<CommandPattern> {
    words
        .iter()
        .map(String::as_str)
        .chain(["metagate"])
        .filter_map(|w| CommandPattern::parse(w).ok())
        .collect()
}

impl Checker {
    /// Builds the checks for one run; path rules and the shell automaton wait for their first use.
    pub fn new(policy: &Policy, setup: &Setup<'_>) -> Checker {
        let p = &policy.rules.paths;
        // `--policy policy.toml` gives a relative origin; rules need absolute paths.
        let absolute = |path: &Path| setup.cwd.join(path);
        let base = p
            .base
            .as_deref()
            .map_or_else(|| setup.cwd.to_path_buf(), absolute);
        let protected: Vec<PathBuf> = setup.protected.iter().map(|p| absolute(p)).collect();
        let own_binary = setup.own_binary.clone();
        Checker {
            home: setup.home.clone(),
            shell_protected: OnceCell::new(),
            path_setup: PathSetup {
                root: base.join(&p.root),
                deny: p.deny.clone(),
                allow: p.allow.clone(),
                protected,
            },
            paths: OnceCell::new(),
            read_paths: OnceCell::new(),
            shell_constructs: policy.rules.shell.constructs.clone(),
            shell_denied: with_own_command(&policy.rules.shell.commands).into(),
            shell_allowed: policy.rules.shell.allowed.as_ref().map(|a| {
                a.iter()
                    .filter_map(|e| CommandPattern::parse(e).ok())
                    .collect()
            }),
            own_binary,
            programs: setup.programs.clone(),
            grant_key: setup.grant_key.clone(),
            plans: RefCell::default(),
        }
    }

    /// The plan for `tool` under `context`, from memory when this run made it before.
    fn plan(&self, policy: &Policy, tool: &str, context: &Context) -> Plan {
        let mut plans = self.plans.borrow_mut();
        let address = std::ptr::from_ref(policy) as usize;
        if plans.policy != address || plans.context != *context {
            plans.policy = address;
            plans.context = context.clone();
            plans.tools.clear();
        }
        if let Some(plan) = plans.tools.get(tool) {
            return *plan;
        }
        let plan = self.make_plan(policy, tool, context);
        if plans.tools.len() >= MAX_PLANS {
            plans.tools.clear();
        }
        plans.tools.insert(tool.into(), plan);
        plan
    }

    fn make_plan(&self, policy: &Policy, tool: &str, context: &Context) -> Plan {
        let index = policy.tools.get_index_of(tool);
        let spec = index.map(|i| &policy.tools[i]);
        Plan {
            admitted: admits(policy, tool, context),
            kinds: spec.is_some_and(|t| t.args.values().any(|a| a.kind.is_some())),
            runtime: crate::grants::needs_grant(policy, tool).is_some()
                || policy.rules.requires.contains_key(tool)
                || limits::apply(policy, tool, context),
            index,
        }
    }

    /// The intent a call is checked under: `--intent`, else the caller's own.
    fn intent<'p>(
        &self,
        policy: &'p Policy,
        context: &Context,
    ) -> Option<&'p crate::policy::rules::Intent> {
        intent_of(policy, context)
    }

    /// Runs every check on a corrected call; each check notes its decision in `inquiry`.
    pub fn check(
        &self,
        policy: &Policy,
        call: &CallToCheck<'_, '_>,
        inquiry: &mut Inquiry<'_>,
    ) -> Result<(), Box<ToolError>> {
        let CallToCheck {
            tool,
            args,
            context,
        } = *call;
        // With nobody asking for each step, a tool the plan says needs nothing more is done.
        let plan = inquiry
            .explain
            .is_none()
            .then(|| self.plan(policy, tool, context));
        if let Some(plan) = plan
            && plan.admitted
            && !plan.kinds
            && !(inquiry.scope.runtime && plan.runtime)
        {
            return Ok(());
        }
        let spec = match plan {
            Some(p) => p.index.map(|i| &policy.tools[i]),
            None => policy.tool(tool),
        };
        let capability = spec.and_then(|t| t.capability.as_deref());
        // Intent and caller, unless the plan has already seen them admit the tool.
        if !plan.is_some_and(|p| p.admitted) {
            self.admit(policy, tool, capability, context, inquiry)?;
        }
        // Argument kinds.
        if let Some(t) = spec {
            for (name, spec) in &t.args {
                let Some(kind) = spec.kind else { continue };
                if !spec.kind_when.is_empty()
                    && !crate::policy::condition_holds(&spec.kind_when, args)
                {
                    inquiry.note(format_args!(
                        "{name} ({}): not this time (kind_when does not hold)",
                        kind.as_str()
                    ));
                    continue;
                }
                let Some(value) = args.get(name) else {
                    continue;
                };
                let arg = kinds::ArgToCheck {
                    name,
                    kind,
                    access: spec.access,
                    value,
                };
                kinds::check(self, policy, tool, &arg, inquiry)?;
            }
        }
        if !inquiry.scope.runtime || plan.is_some_and(|p| !p.runtime) {
            return Ok(());
        }
        grants::check(self, policy, call, inquiry)?;
        // Prerequisites.
        if let Some(required) = policy.rules.requires.get(tool) {
            let Some(session) = context.session.as_deref() else {
                inquiry.note(format_args!(
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
                let done = inquiry
                    .facts
                    .completed(session, r, policy.rules.evidence)
                    .or_else(|e| {
                        internal(policy, tool, &e.reason("prerequisites are looked up"))
                            .map(|()| true)
                    })?;
                inquiry.note(format_args!(
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
        limits::check(policy, call, inquiry)
    }

    /// The intent and caller checks: whether they admit `tool`, noting each decision.
    fn admit(
        &self,
        policy: &Policy,
        tool: &str,
        capability: Option<&str>,
        context: &Context,
        inquiry: &mut Inquiry<'_>,
    ) -> Result<(), Box<ToolError>> {
        match self.intent(policy, context) {
            Some(intent) => match intent.admits(tool, capability) {
                Ok(()) => inquiry.note(format_args!("intent {}: admits {tool}", intent.name)),
                Err(rule) => {
                    inquiry.note(format_args!(
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
                            &rule.to_string(),
                        )
                        .detail("intent", intent.name.clone())
                        .detail("allowed", allowed),
                    ));
                }
            },
            None => inquiry.note(format_args!("intent: none given, no intent check")),
        }
        // Caller.
        if let Some(caller) = context
            .caller
            .as_deref()
            .and_then(|c| policy.rules.callers.get(c))
        {
            match caller.admits(tool, capability) {
                Ok(()) => inquiry.note(format_args!("caller {}: admits {tool}", caller.name)),
                Err(rule) => {
                    inquiry.note(format_args!(
                        "caller {}: refuses {tool} ({rule})",
                        caller.name
                    ));
                    return Err(Box::new(
                        blocked(
                            tool,
                            format!("caller {} may not use {tool} ({rule})", caller.name),
                            "Use another tool: this one is not available to this caller"
                                .to_string(),
                            &rule.to_string(),
                        )
                        .detail("caller", caller.name.clone()),
                    ));
                }
            }
        }
        Ok(())
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
    /// The path rules for an argument the tool does `access` with, built on first use with
    /// the file system the check runs against.
    pub(crate) fn paths(&self, fs: &dyn Fs, access: Access) -> &Result<PathRules, PathRulesError> {
        let writing = self.paths.get_or_init(|| self.path_setup.build(fs));
        match access {
            Access::Write => writing,
            Access::Read => self.read_paths.get_or_init(|| {
                writing
                    .as_ref()
                    .map(|rules| rules.clone().for_access(Access::Read))
                    .map_err(Clone::clone)
            }),
        }
    }

    pub(crate) fn shell_rules<'a>(&'a self, world: &'a dyn shell::World) -> ShellRules<'a> {
        ShellRules {
            constructs: &self.shell_constructs,
            denied: &self.shell_denied,
            allowed: self.shell_allowed.as_deref(),
            protected: self.shell_protected.get_or_init(|| {
                let vars = ["METAGATE_DB".to_string(), "METAGATE_POLICY".to_string()];
                Protected::with_binary(
                    &self.path_setup.protected,
                    &vars,
                    self.home.as_deref(),
                    self.own_binary.as_ref().map(OwnBinary::path),
                )
            }),
            world,
        }
    }

    /// What a model told that a command is not allowed should do instead.
    pub(crate) fn allowed_suggestion(&self) -> String {
        const SHOWN: usize = 24;
        let all: Vec<&str> = self
            .shell_allowed
            .iter()
            .flatten()
            .map(CommandPattern::as_str)
            .collect();
        if all.is_empty() {
            return "No program may run here: answer without running commands".to_string();
        }
        let mut text = format!(
            "Use only the programs the policy allows: {}",
            all[..all.len().min(SHOWN)].join(", ")
        );
        if all.len() > SHOWN {
            text.push_str(&format!(" and {} more", all.len() - SHOWN));
        }
        text
    }

    /// The file `command` runs, resolved, when the run says where programs are.
    pub(crate) fn program(&self, command: &[u8]) -> Option<shell::Resolved> {
        self.programs.as_ref()?.resolve(command)
    }

    /// Whether running `command` would run the metagate binary itself.
    pub(crate) fn is_own_binary(&self, command: &[u8]) -> bool {
        self.own_binary.as_ref().is_some_and(|b| b.is(command))
    }
}

/// The policy written as `text` and its checker, rooted in the temporary folder with nothing
/// protected: the set-up the checks' own tests share.
/// The key [`test_checker`] checks grant seals with.
#[cfg(test)]
pub(crate) const TEST_KEY: GrantKey = GrantKey::from_bytes([9; 32]);

#[cfg(test)]
pub(crate) fn test_checker(text: &str) -> (Policy, Checker) {
    let source = crate::policy::Source {
        name: "p.toml",
        text,
    };
    let policy = Policy::from_source(source, None).unwrap();
    let cwd = std::env::temp_dir();
    let setup = Setup {
        cwd: &cwd,
        protected: vec![],
        home: None,
        own_binary: None,
        programs: None,
        grant_key: Some(TEST_KEY),
    };
    let checker = Checker::new(&policy, &setup);
    (policy, checker)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Source;
    use metagate_checks::path::RealFs;

    const POLICY: &str = r#"
extends = "none"
[tools.look]
capability = "browser_control"
[tools.counted]
limits = { per_minute = 5 }
[tools.run]
capability = "system_execute"
[tools.run.args.command]
type = "string"
kind = "shell"
[tools.after]
requires = ["look"]
[intents.browsing]
allow = ["look", "after"]
[intents.running]
allow = ["run"]
forbid = ["look"]
[callers.guest]
deny = ["system_execute"]
[callers.host]
intent = "running"
limits = { per_hour = 100 }
"#;

    /// The plans a checker keeps never change a verdict: every call, in an order that
    /// switches context, scope and tool, gets what a fresh checker with `--explain` (which
    /// never uses them) gives it.
    #[test]
    fn remembered_plans_decide_as_the_full_checks() {
        let policy = Policy::from_source(
            Source {
                name: "p.toml",
                text: POLICY,
            },
            None,
        )
        .unwrap();
        let cwd = std::env::temp_dir();
        let setup = Setup {
            cwd: &cwd,
            protected: vec![],
            home: None,
            own_binary: None,
            programs: None,
            grant_key: None,
        };
        let checker = Checker::new(&policy, &setup);
        let context = |intent: Option<&str>, caller: Option<&str>| Context {
            session: Some("s".into()),
            caller: caller.map(str::to_string),
            intent: intent.map(str::to_string),
        };
        let contexts = [
            context(None, None),
            context(Some("browsing"), None),
            context(Some("running"), None),
            context(None, Some("guest")),
            context(None, Some("host")),
            context(Some("browsing"), Some("guest")),
        ];
        let args =
            Args::from_map(serde_json::from_str(r#"{"command":"ls -la; echo $(id)"}"#).unwrap());
        let verdict = |checker: &Checker, tool: &str, ctx: &Context, runtime: bool, explain| {
            let mut explain = explain;
            let mut inquiry = Inquiry {
                facts: &mut NoFacts,
                fs: &RealFs,
                now_ms: 0,
                scope: Scope { runtime },
                explain: &mut explain,
                grant_check: None,
            };
            let call = CallToCheck {
                tool,
                args: &args,
                context: ctx,
            };
            checker
                .check(&policy, &call, &mut inquiry)
                .map_err(|e| (e.category, e.message))
        };
        let mut refused = 0;
        for round in 0..3 {
            for (i, ctx) in contexts.iter().enumerate() {
                for tool in ["look", "run", "after", "counted", "unknown"] {
                    let runtime = (round + i) % 2 == 0;
                    let fresh = Checker::new(&policy, &setup);
                    let expected = verdict(&fresh, tool, ctx, runtime, Some(Vec::new()));
                    let got = verdict(&checker, tool, ctx, runtime, None);
                    assert_eq!(got, expected, "{tool} under {ctx:?}, runtime {runtime}");
                    refused += usize::from(got.is_err());
                }
            }
        }
        // The table exercises refusals and passes alike.
        assert!((25..75).contains(&refused), "{refused} of 90 refused");
    }
}
