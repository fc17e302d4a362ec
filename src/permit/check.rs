//! The gate's grant check: a tool whose capability the policy names in `[permit] require`
//! passes only while a live grant covers the call. Runs after the argument-kind checks (so
//! paths usually are known to resolve inside the root; those that do not are covered by no
//! scoped grant) and before prerequisites and limits.

use super::{GrantId, Need, Refusal, ScopeEntry, Unresolved, find, grant_command, needs_grant};
use crate::args::Args;
use crate::error::{Category, ToolError};
use crate::pathcheck::{self, Fs};
use crate::policy::{Checker, Context, Facts, url_host};
use crate::schema::{ArgKind, Policy};

/// What the grant check decided about a call, for the audit trail (`used` or `denied`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantCheck {
    Used {
        grant: GrantId,
        capability: String,
        tool: String,
    },
    Denied {
        capability: String,
        tool: String,
        reason: String,
        /// The grant that came nearest, when there was one.
        grant: Option<GrantId>,
    },
}

/// Why grants could not be looked up. Either way no grant can allow the call, so the refusal
/// says what keeps the gate from seeing grants instead of suggesting one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// `gate --no-telemetry`: there is no store to look in.
    TelemetryOff,
    /// The store could not be opened, or the grants in it could not be read.
    Store(String),
}

impl Unavailable {
    /// Why the call is refused, after "needs an operator's grant for capability …: ".
    fn reason(&self) -> String {
        match self {
            Unavailable::TelemetryOff => {
                "grants are kept in the telemetry store, and telemetry is off (--no-telemetry)"
                    .to_string()
            }
            Unavailable::Store(e) => format!("grants cannot be read from the telemetry store: {e}"),
        }
    }

    /// What the operator must do first.
    fn suggestion(&self, capability: &str) -> String {
        match self {
            Unavailable::TelemetryOff => format!(
                "Do not retry: this gate runs with --no-telemetry and cannot see grants, so no grant can allow this call; the operator must run the gate with telemetry on for {capability} to be allowed"
            ),
            Unavailable::Store(_) => format!(
                "Do not retry: this gate cannot read grants from its telemetry store, so no grant can allow this call until the operator repairs the store (see `metagate db info`) for {capability} to be allowed"
            ),
        }
    }
}

/// Checks the grant a call needs, if it needs one.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    checker: &Checker,
    policy: &Policy,
    tool: &str,
    args: &Args<'_>,
    context: &Context,
    facts: &mut dyn Facts,
    fs: &dyn Fs,
    note: &mut dyn FnMut(std::fmt::Arguments<'_>),
) -> Result<(), Box<ToolError>> {
    let Some(capability) = needs_grant(policy, tool) else {
        return Ok(());
    };
    let need = Need {
        capability,
        session: context.session.as_deref(),
        ..need_of(checker, policy, tool, args, fs)
    };
    let now = facts.now_ms();
    let mut unavailable = None;
    let (reason, nearest) = match facts.grants(capability) {
        Err(e) => {
            let reason = e.reason();
            unavailable = Some(e);
            (reason, None)
        }
        Ok(grants) => match find(&grants, &need, now) {
            Ok(g) => {
                note(format_args!(
                    "grant: {capability} for {tool} covered by {}",
                    g.id
                ));
                facts.grant_checked(GrantCheck::Used {
                    grant: g.id.clone(),
                    capability: capability.to_string(),
                    tool: tool.to_string(),
                });
                return Ok(());
            }
            Err(Refusal::NoGrant) => (format!("there is no grant for {capability}"), None),
            Err(Refusal::Near(id, miss)) => (miss.describe(&id), Some(id)),
            // Which sessions, and which grants, are not this caller's business.
            Err(Refusal::OtherSessions) => (
                match need.session {
                    Some(s) => format!(
                        "no grant for {capability} is bound to this call's session {s:?} or to no session"
                    ),
                    None => format!(
                        "every grant for {capability} is bound to a session, and this call has no session"
                    ),
                },
                None,
            ),
        },
    };
    note(format_args!(
        "grant: {capability} for {tool} refused: {reason}"
    ));
    facts.grant_checked(GrantCheck::Denied {
        capability: capability.to_string(),
        tool: tool.to_string(),
        reason: reason.clone(),
        grant: nearest.clone(),
    });
    let mut e = ToolError::new(
        Category::ConfirmationRequired,
        format!("{tool} needs an operator's grant for capability {capability}: {reason}"),
    )
    .tool(tool)
    .detail("capability", capability)
    .detail("rule", "permit.require");
    e = match (unavailable, need.unresolved.first()) {
        // A grant the gate cannot see would change nothing: no command is suggested.
        (Some(why), _) => e.suggest(why.suggestion(capability)),
        // No scope could name it, and a command that cannot allow the call is not suggested.
        (None, Some(u)) => e.suggest(format!(
            "Do not retry: the {} {:?} cannot be resolved ({}), and no grant scoped to paths or hosts covers what cannot be resolved",
            u.what, u.text, u.why
        )),
        (None, None) => {
            let scope: Vec<ScopeEntry> = need
                .paths
                .iter()
                .cloned()
                .map(ScopeEntry::Path)
                .chain(need.hosts.iter().cloned().map(ScopeEntry::Host))
                .collect();
            let command = grant_command(
                capability,
                context.session.as_deref(),
                &scope,
                policy.origin.as_deref(),
                facts.grant_store(),
            );
            e.suggest(format!(
                "Do not retry: a person must allow this first. Ask the operator to run: {command}"
            ))
            .detail("command", command)
        }
    };
    if let Some(id) = nearest {
        e = e.detail("grant", id.to_string());
    }
    Err(Box::new(e))
}

/// The resolved paths and hosts a call's `path` and `url` arguments name. A path that does
/// not resolve inside the root (which the argument-kind check refuses, unless `kind_when`
/// skipped it or the root is missing and `on_internal_error = "pass"`), or a URL with no host
/// to read, is kept as unresolved: compared as written it could name anything
/// (`docs/../../etc/passwd` starts with `docs`), so no scoped grant covers it.
fn need_of<'a>(
    checker: &Checker,
    policy: &Policy,
    tool: &str,
    args: &Args<'_>,
    fs: &dyn Fs,
) -> Need<'a> {
    let mut need = Need::default();
    let Some(t) = policy.tool(tool) else {
        return need;
    };
    for (name, spec) in &t.args {
        let Some(kind @ (ArgKind::Path | ArgKind::Url)) = spec.kind else {
            continue;
        };
        let Some(value) = args.get(name) else {
            continue;
        };
        let value = value.to_value();
        // The same texts the kind check read, so a grant's scope covers every one of them.
        for s in crate::policy::texts(&value) {
            let s = &*s;
            // Why may hold the model's text (what a path resolved to): on one line.
            let unresolved = |what, why: String| Unresolved {
                what,
                text: s.to_string(),
                why: crate::display::escape_controls(&why).into_owned(),
            };
            match kind {
                ArgKind::Path => match checker.paths(fs) {
                    Ok(rules) => match pathcheck::check(s, rules, fs) {
                        Ok(rel) if rel == "." => need.paths.push(rules.root().to_path_buf()),
                        Ok(rel) => need.paths.push(rules.root().join(&*rel)),
                        Err(e) => need.unresolved.push(unresolved("path", e.rule())),
                    },
                    Err(e) => need.unresolved.push(unresolved("path", e.clone())),
                },
                _ => match url_host(s) {
                    Ok((_, host)) => match super::host_problem(&host) {
                        None => need.hosts.push(host.into_owned()),
                        Some(why) => need.unresolved.push(unresolved("URL", why)),
                    },
                    Err(e) => need.unresolved.push(unresolved("URL", e)),
                },
            }
        }
    }
    need
}
