//! The gate's grant check: a tool whose capability the policy names in `[permit] require`
//! passes only while a live grant covers the call. Runs after the argument-kind checks (so
//! paths usually are known to resolve inside the root; those that do not are covered by no
//! scoped grant) and before prerequisites and limits.

use super::{CallToCheck, Checker, Inquiry, Unanswerable};
use crate::error::{Category, ToolError};
use crate::grants::{
    GrantId, Need, Refusal, ScopeEntry, Unresolved, find, grant_command, needs_grant,
};
use crate::policy::{ArgKind, Policy};
use metagate_checks::host::{host_problem, url_host};
use metagate_checks::path::{self, Fs};
use metagate_wire::args::Args;

/// What the grant check decided about a call, for the audit trail (`used` or `denied`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantCheck {
    /// A live grant admitted the call.
    Used {
        /// The grant that did.
        grant: GrantId,
        /// The capability it allows.
        capability: String,
        /// The tool called.
        tool: String,
    },
    /// No live grant covers the call.
    Denied {
        /// The capability the tool needs.
        capability: String,
        /// The tool called.
        tool: String,
        /// Why no grant covers it, for the rejection.
        reason: String,
        /// The grant that came nearest, when there was one.
        grant: Option<GrantId>,
    },
}

/// Why the call is refused when grants cannot be looked up, after "needs an operator's grant
/// for capability …: ". No grant can allow the call then, so the refusal says what keeps the
/// gate from seeing grants instead of suggesting one.
fn unavailable_reason(why: &Unanswerable) -> String {
    match why {
        Unanswerable::TelemetryOff => {
            "grants are kept in the telemetry store, and telemetry is off (--no-telemetry)"
                .to_string()
        }
        // Why is the operator's, on stderr: it names the store.
        Unanswerable::Store(_) => "grants cannot be read from the telemetry store".to_string(),
    }
}

/// What the operator must do first when grants cannot be looked up.
fn unavailable_suggestion(why: &Unanswerable, capability: &str) -> String {
    match why {
        Unanswerable::TelemetryOff => format!(
            "Do not retry: this gate runs with --no-telemetry and cannot see grants, so no grant can allow this call; the operator must run the gate with telemetry on for {capability} to be allowed"
        ),
        Unanswerable::Store(_) => format!(
            "Do not retry: this gate cannot read grants from its telemetry store, so no grant can allow this call until the operator repairs the store (see `metagate db info`) for {capability} to be allowed"
        ),
    }
}

/// Checks the grant a call needs, if it needs one.
pub(crate) fn check(
    checker: &Checker,
    policy: &Policy,
    call: &CallToCheck<'_, '_>,
    inquiry: &mut Inquiry<'_>,
) -> Result<(), Box<ToolError>> {
    let CallToCheck {
        tool,
        args,
        context,
    } = *call;
    let Some(capability) = needs_grant(policy, tool) else {
        return Ok(());
    };
    let need = Need {
        capability,
        session: context.session.as_deref(),
        ..need_of(checker, policy, tool, args, inquiry.fs)
    };
    let now = inquiry.now_ms;
    let mut unavailable = None;
    // A row without a valid seal is no grant: it is marked so before any is looked at.
    let fetched = inquiry.facts.grants(capability, now).map(|mut grants| {
        crate::grants::seal::mark_forged(&mut grants, checker.grant_key.as_ref());
        grants
    });
    let (reason, nearest) = match fetched {
        Err(e) => {
            let reason = unavailable_reason(&e);
            unavailable = Some(e);
            (reason, None)
        }
        Ok(grants) => match find(&grants, &need, now) {
            Ok(g) => {
                inquiry.note(format_args!(
                    "grant: {capability} for {tool} covered by {}",
                    g.id
                ));
                inquiry.grant_check = Some(GrantCheck::Used {
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
    inquiry.note(format_args!(
        "grant: {capability} for {tool} refused: {reason}"
    ));
    inquiry.grant_check = Some(GrantCheck::Denied {
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
        (Some(why), _) => e.suggest(unavailable_suggestion(&why, capability)),
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
                inquiry.facts.grant_store(),
            );
            // The command is the operator's: an agent told it, with a shell tool, would run it.
            e.suggest(format!(
                "Do not retry: a person must allow this first. Ask the operator for a grant of capability {capability}{}",
                scope_words(&scope)
            ))
            .for_operator(command)
        }
    };
    if let Some(id) = nearest {
        e = e.detail("grant", id.to_string());
    }
    Err(Box::new(e))
}

/// ` for PATH, HOST` when the call names paths or hosts: what the grant must cover.
fn scope_words(scope: &[ScopeEntry]) -> String {
    if scope.is_empty() {
        return String::new();
    }
    let named: Vec<String> = scope.iter().map(ScopeEntry::to_text).collect();
    // The paths are the model's text: one line, whatever they hold.
    let named = metagate_wire::display::escape_controls(&named.join(", ")).into_owned();
    format!(" covering {named}")
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
        for s in crate::enforce::texts(&value) {
            let s = &*s;
            // Why may hold the model's text (what a path resolved to): on one line.
            let unresolved = |what, why: String| Unresolved {
                what,
                text: s.to_string(),
                why: metagate_wire::display::escape_controls(&why).into_owned(),
            };
            match kind {
                ArgKind::Path => match checker.paths(fs, spec.access) {
                    Ok(rules) => match path::check(s, rules, fs) {
                        Ok(rel) if rel == "." => need.paths.push(rules.root().to_path_buf()),
                        Ok(rel) => {
                            let full = rules.root().join(&*rel);
                            // A file of several names is also each other name, which may lie
                            // outside any scope: no scope covers it.
                            match fs.file_links(&full) {
                                Ok(Some(l)) if l.nlink > 1 => need.unresolved.push(unresolved(
                                    "path",
                                    format!(
                                        "it names a file with {} hard links, whose other names no scope can see",
                                        l.nlink
                                    ),
                                )),
                                _ => need.paths.push(full),
                            }
                        }
                        Err(e) => need.unresolved.push(unresolved("path", e.rule())),
                    },
                    Err(e) => need.unresolved.push(unresolved("path", e.to_string())),
                },
                _ => match url_host(s) {
                    Ok((_, host)) => match host_problem(&host) {
                        None => need.hosts.push(host.into_owned()),
                        Some(why) => need.unresolved.push(unresolved("URL", why)),
                    },
                    Err(e) => need.unresolved.push(unresolved("URL", e.to_string())),
                },
            }
        }
    }
    need
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::{Grant, GrantId, ScopeEntry};

    const MIN: i64 = 60_000;

    fn grant(scope: &[&str], session: Option<&str>) -> Grant {
        Grant {
            id: GrantId::from_bytes([7; 16]),
            capability: "system_execute".into(),
            scope: scope.iter().map(|s| ScopeEntry::from_text(s)).collect(),
            unreadable: None,
            session: session.map(str::to_string),
            granted_at_ms: 1000 * MIN,
            expires_at_ms: 1005 * MIN,
            revoked_at_ms: None,
            granted_by: Some("op".into()),
            reason: None,
            mac: None,
            forged: false,
        }
    }

    /// The checker in-process: a runtime check needs a grant and takes it from the facts; `lint`'s
    /// scope (`runtime: false`) skips grants as it skips limits.
    #[test]
    fn checker_consults_grants_only_at_runtime() {
        use crate::enforce::{
            CallToCheck, Context, Count, CountKey, Counts, Facts, GrantLookup, Inquiry, NoFacts,
            Scope, test_checker,
        };
        use crate::error::Category;
        use metagate_checks::path::RealFs;
        use metagate_wire::args::Args;

        struct Granted(Vec<Grant>);
        impl Counts for Granted {
            fn count(
                &mut self,
                _: &CountKey,
                _: Option<i64>,
                _: i64,
                _: u64,
            ) -> Result<Count, Unanswerable> {
                Ok(Count::default())
            }
            fn completed(
                &mut self,
                _: &str,
                _: &str,
                _: crate::policy::file::PrereqEvidence,
            ) -> Result<bool, Unanswerable> {
                Ok(true)
            }
        }
        impl GrantLookup for Granted {
            fn grants(&mut self, capability: &str, _: i64) -> Result<Vec<Grant>, Unanswerable> {
                Ok(self
                    .0
                    .iter()
                    .filter(|g| g.capability == capability)
                    .cloned()
                    .collect())
            }
            fn grant_store(&self) -> Option<&std::path::Path> {
                None
            }
        }

        let text = "extends = \"none\"\n[tools.x]\ncapability = \"system_execute\"\n[tools.x.args.command]\ntype = \"string\"\n[permit]\nrequire = [\"system_execute\"]\n";
        let (policy, checker) = test_checker(text);
        let args = Args::from_map(serde_json::from_str(r#"{"command":"ls"}"#).unwrap());
        let ctx = Context::default();
        let run = |facts: &mut dyn Facts, runtime: bool| {
            let mut explain = None;
            let mut inquiry = Inquiry {
                facts,
                fs: &RealFs,
                now_ms: 1001 * MIN,
                scope: Scope { runtime },
                explain: &mut explain,
                grant_check: None,
            };
            let call = CallToCheck {
                tool: "x",
                args: &args,
                context: &ctx,
            };
            let verdict = checker.check(&policy, &call, &mut inquiry);
            (verdict, inquiry.grant_check)
        };
        // lint: no grant, no store, still fine.
        assert!(run(&mut NoFacts, false).0.is_ok());
        // gate without a store: refused, never assumed.
        let e = run(&mut NoFacts, true).0.unwrap_err();
        assert_eq!(e.category, Category::ConfirmationRequired);
        assert!(!e.retryable());
        assert!(e.message.contains("telemetry is off"), "{}", e.message);
        // A row without a valid seal is no grant: refused.
        let (verdict, _) = run(&mut Granted(vec![grant(&[], None)]), true);
        let e = verdict.unwrap_err();
        assert_eq!(e.category, Category::ConfirmationRequired);
        assert!(e.message.contains("no valid seal"), "{}", e.message);
        // With a live grant, sealed, it passes, and the check reports which grant it used.
        let mut sealed = grant(&[], None);
        sealed.mac = Some(crate::grants::seal::seal(
            &sealed,
            &crate::enforce::TEST_KEY,
        ));
        let (verdict, check) = run(&mut Granted(vec![sealed]), true);
        assert!(verdict.is_ok());
        assert!(
            matches!(check, Some(GrantCheck::Used { ref grant, .. }) if grant.as_str() == GrantId::from_bytes([7; 16]).as_str())
        );
        // Another capability's grant does not count, and the denial is reported.
        let mut other = grant(&[], None);
        other.capability = "file_access".into();
        let (verdict, check) = run(&mut Granted(vec![other]), true);
        assert_eq!(
            verdict.unwrap_err().category,
            Category::ConfirmationRequired
        );
        assert!(matches!(
            check,
            Some(GrantCheck::Denied { grant: None, .. })
        ));
    }
}
