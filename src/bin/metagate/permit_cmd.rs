//! `metagate permit`: grant, list and revoke time-boxed capability grants. The questions of
//! the interactive flow are the library's (`metagate::permit`); this file asks them with
//! dialoguer, draws ids from the OS, and prints.

use std::io::{IsTerminal, Write};

use anyhow::{Context as _, Result, bail};
use dialoguer::console::Term;
use metagate::permit::{
    self, GrantFlags, Offer, PromptError, Refusal, Request, event_json, expires_in, grant_json,
};
use metagate_checks::path::RealFs;
use metagate_core::events::format_time;
use metagate_core::grants::{self, Grant, GrantId, ScopeEntry, human_duration};
use metagate_core::policy::Policy;
use metagate_store::StoreError;
use metagate_store::grants::Revoked;
use metagate_store::location::Location;
use metagate_wire::display::{one_line, plural};
use serde_json::json;

use crate::cli::{Format, PermitArgs, PermitCommand, PermitGrantArgs};
use crate::exit::Status;
use crate::prompt::Dialoguer;
use crate::runtime::Env;

/// Bad input: the message goes to stderr and the exit status is 2.
fn usage(message: String) -> Result<Status> {
    say!("metagate: error: {message}");
    Ok(Status::Failure)
}

pub fn run(args: PermitArgs, policy: &Policy, env: &Env) -> Result<Status> {
    let now = env.clock()();
    match args.command {
        None => interactive(policy, env, now),
        Some(PermitCommand::Grant(g)) => grant(&g, policy, env, now),
        Some(PermitCommand::List { all, format }) => list(all, format, env, now),
        Some(PermitCommand::Revoke { id, all }) => revoke(id.as_deref(), all, env, now),
    }
}

/// Who is granting or revoking: the OS user, as the environment names it, else as the user
/// database names this process's uid (a service, `sudo -u`, `env -i` leave `$USER` unset),
/// else the uid itself.
fn actor() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(user_of_uid)
}

#[cfg(unix)]
fn user_of_uid() -> String {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(user)) if !user.name.is_empty() => user.name,
        _ => format!("uid {uid}"),
    }
}

#[cfg(not(unix))]
fn user_of_uid() -> String {
    "unknown".to_string()
}

fn new_id() -> Result<GrantId> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot draw random bytes from the OS: {e}"))?;
    Ok(GrantId::from_bytes(bytes))
}

fn grant(g: &PermitGrantArgs, policy: &Policy, env: &Env, now: i64) -> Result<Status> {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return usage(format!("cannot read the working folder: {e}")),
    };
    let flags = GrantFlags {
        capability: &g.capability,
        duration: &g.duration,
        scope: &g.scope,
        session: g.session.as_deref(),
        reason: g.reason.as_deref(),
    };
    let request = match Request::from_flags(&flags, policy, &cwd, &RealFs) {
        Ok(r) => r,
        Err(e) => return usage(e.0),
    };
    if !policy.rules.permit_require.contains(&request.capability) {
        say!(
            "metagate: warning: the policy does not require a grant for {} ([permit] require); this grant changes nothing until it does",
            request.capability
        );
    }
    let made = store_grant(&request, env, now)?;
    shown(&made, print_grant(&made, g.format, now))
}

/// Once stored, a grant is live whatever happens to its printing, and the command did what it
/// was asked: a failure to print it (a full disk) is a warning on stderr that names the grant,
/// so that it can be found and revoked, and the exit status stays 0 (an exit 2, "cannot run",
/// would read as "nothing granted", and a retry would grant twice). A closed pipe ends quietly,
/// as everywhere.
fn shown(g: &Grant, printed: Result<()>) -> Result<Status> {
    if let Err(e) = printed
        && !crate::exit::is_broken_pipe(&e)
    {
        say!(
            "metagate: warning: grant {} ({}) is stored and live until {}, but it could not be shown: {e:#}; `metagate permit list` shows it, `metagate permit revoke {}` ends it",
            g.id,
            one_line(&g.capability),
            format_time(g.expires_at_ms),
            g.id
        );
    }
    Ok(Status::Success)
}

fn store_grant(r: &Request, env: &Env, now: i64) -> Result<Grant> {
    let key = env.grant_key(true)?.expect("a key is made when missing");
    let g = r.grant(new_id()?, now, actor(), &key);
    let mut store = env.open_store()?;
    store.insert_grant(&g)?;
    Ok(g)
}

fn print_grant(g: &Grant, format: Format, now: i64) -> Result<()> {
    let mut out = crate::output::stdout();
    match format {
        Format::Json => writeln!(out, "{}", grant_json(g, now))?,
        Format::Table => {
            let scope = if g.scope.is_empty() {
                String::new()
            } else {
                let s: Vec<String> = g.scope.iter().map(ScopeEntry::to_text).collect();
                format!(" within {}", s.join(" "))
            };
            let session = g
                .session
                .as_deref()
                .map(|s| format!(" in session {s}"))
                .unwrap_or_default();
            let line = format!(
                "granted {}: {}{scope}{session} until {} ({} from now)",
                g.id,
                g.capability,
                format_time(g.expires_at_ms),
                human_duration(g.expires_at_ms - now)
            );
            // Scope and session may be copied from a model's call: shown on one safe line.
            writeln!(out, "{}", metagate_wire::display::one_line(&line))?;
        }
    }
    out.flush()?;
    Ok(())
}

fn list(all: bool, format: Format, env: &Env, now: i64) -> Result<Status> {
    // Asking never creates a store: no store holds no grants.
    let (list, events) = match env.open_existing_store() {
        Ok(mut store) => (
            store.grants(all, now)?,
            if all {
                store.grant_events()?
            } else {
                Vec::new()
            },
        ),
        Err(StoreError::Missing(path)) => {
            // Said, so that a mistyped --db is not taken for a store without grants.
            say!(
                "metagate: permit list: there is no telemetry store at {} yet, so no grants",
                path.display()
            );
            (Vec::new(), Vec::new())
        }
        Err(e) => return Err(e.into()),
    };
    // A row without a valid seal is shown for what it is: not a grant.
    let mut list = list;
    metagate_core::grants::seal::mark_forged(&mut list, env.grant_key(false)?.as_ref());
    let mut out = crate::output::stdout();
    match format {
        Format::Json => {
            let mut doc =
                json!({ "grants": list.iter().map(|g| grant_json(g, now)).collect::<Vec<_>>() });
            if all {
                doc["events"] = events.iter().map(event_json).collect();
            }
            writeln!(out, "{doc}")?;
        }
        Format::Table => {
            if list.is_empty() {
                writeln!(out, "{}", if all { "no grants" } else { "no live grants" })?;
            } else {
                let mut table = crate::output::table();
                table.set_header(vec![
                    "id",
                    "capability",
                    "scope",
                    "session",
                    "expires in",
                    "status",
                ]);
                for g in &list {
                    // One entry per line of the cell, each on its own line whatever it holds.
                    let scope: Vec<String> = g
                        .scope
                        .iter()
                        .map(|s| one_line(&s.to_text()).into_owned())
                        .collect();
                    table.add_row(vec![
                        g.id.to_string(),
                        one_line(&g.capability).into_owned(),
                        if g.unreadable.is_some() {
                            "(unreadable: covers nothing)".to_string()
                        } else if scope.is_empty() {
                            "(all)".to_string()
                        } else {
                            scope.join("\n")
                        },
                        g.session
                            .as_deref()
                            .map_or_else(|| "(any)".to_string(), |s| one_line(s).into_owned()),
                        expires_in(g, now),
                        g.status(now).as_str().to_string(),
                    ]);
                }
                writeln!(out, "{}", crate::output::fit(table))?;
            }
            if all && !events.is_empty() {
                let mut table = crate::output::table();
                table.set_header(vec![
                    "time",
                    "event",
                    "grant",
                    "capability",
                    "tool",
                    "session",
                    "decision",
                    "by",
                    "detail",
                ]);
                for e in &events {
                    let o = |v: &Option<String>| {
                        v.as_deref()
                            .map(|s| one_line(s).into_owned())
                            .unwrap_or_default()
                    };
                    table.add_row(vec![
                        format_time(e.ts_ms),
                        e.event.to_string(),
                        o(&e.grant_id),
                        one_line(&e.capability).into_owned(),
                        o(&e.tool),
                        o(&e.session),
                        e.decision_id.map(|d| d.to_string()).unwrap_or_default(),
                        o(&e.actor),
                        o(&e.detail),
                    ]);
                }
                writeln!(out, "{}", crate::output::fit(table))?;
            }
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

fn revoke(id: Option<&str>, all: bool, env: &Env, now: i64) -> Result<Status> {
    let who = actor();
    if all {
        // No store holds no grants: nothing to make, nothing to revoke.
        let mut store = match env.open_existing_store() {
            Err(StoreError::Missing(path)) => {
                say!(
                    "metagate: nothing to revoke: there is no telemetry store at {}",
                    path.display()
                );
                return Ok(Status::Rejected);
            }
            opened => opened?,
        };
        let done = store.revoke_all_grants(now, Some(&who))?;
        // Expired grants are revoked too, so that they stay over if the clock moves back;
        // they are counted apart, as revoking them ends nothing that was live.
        let expired = match done.expired.len() {
            0 => String::new(),
            n => format!(
                " ({} marked revoked too, so that {} over if the clock moves back)",
                plural(n, "expired grant", "expired grants"),
                if n == 1 { "it stays" } else { "they stay" }
            ),
        };
        if done.live.is_empty() {
            say!("metagate: nothing to revoke: no grant is live{expired}");
            return Ok(Status::Rejected);
        }
        let mut out = crate::output::stdout();
        for g in &done.live {
            writeln!(out, "revoked {} ({})", g.id, g.capability)?;
        }
        writeln!(
            out,
            "revoked {}{expired}",
            plural(done.live.len(), "grant", "grants")
        )?;
        out.flush()?;
        return Ok(Status::Success);
    }
    let Some(text) = id else {
        return usage("name the grant to revoke, or pass --all".to_string());
    };
    let id = match GrantId::parse(text) {
        Ok(id) => id,
        Err(e) => return usage(e.to_string()),
    };
    let mut store = match env.open_existing_store() {
        Ok(s) => s,
        Err(StoreError::Missing(p)) => {
            return usage(format!(
                "no grant {id}: there is no store at {}",
                p.display()
            ));
        }
        Err(e) => return Err(e.into()),
    };
    match store.revoke_grant(&id, now, Some(&who))? {
        Revoked::Done(g) => {
            let mut out = crate::output::stdout();
            writeln!(out, "revoked {} ({})", g.id, g.capability)?;
            out.flush()?;
            Ok(Status::Success)
        }
        Revoked::Unknown => usage(format!("no grant {id} (see `metagate permit list --all`)")),
        Revoked::Already(g) => usage(format!(
            "grant {id} was already revoked at {}",
            format_time(g.revoked_at_ms.unwrap_or(0))
        )),
    }
}

/// The non-interactive equivalent, for when there is no terminal to ask at.
fn equivalent(policy: &Policy, env: &Env) -> String {
    let store = match env.location() {
        Ok(Location::File(p)) => Some(std::path::absolute(&p).unwrap_or(p)),
        Ok(Location::Postgres(url)) => Some(std::path::PathBuf::from(url.to_string())),
        Err(_) => None,
    };
    permit::equivalent_command(policy, store.as_deref())
}

fn interactive(policy: &Policy, env: &Env, now: i64) -> Result<Status> {
    let required = grants::required(policy);
    if required.is_empty() {
        return usage(
            "this policy requires no grants ([permit] require is empty), so there is nothing to allow"
                .to_string(),
        );
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return usage(format!(
            "`metagate permit` asks its questions at a terminal, and there is none; run instead:\n  {}",
            equivalent(policy, env)
        ));
    }
    // The prompts hide the cursor while a choice is made; Ctrl-C ended the program with it
    // still hidden in the operator's terminal. Whichever sees Ctrl-C first, this handler or
    // the prompt (as a cancelled answer), the cursor is shown again.
    ctrlc::set_handler(|| {
        let _ = Term::stderr().show_cursor();
        std::process::exit(130);
    })
    .context("cannot watch for Ctrl-C")?;
    let cwd = std::env::current_dir().context("cannot read the working folder")?;
    let scopable = |c: &str| grants::scopable(policy, c);
    let resolve = |cap: &str, s: &str| {
        let e = grants::resolve_scope(policy, &cwd, s, &RealFs)?;
        match grants::scope_mismatch(policy, cap, &e) {
            Some(why) => Err(Refusal(why)),
            None => Ok(e),
        }
    };
    let session = std::env::var("METAGATE_SESSION")
        .ok()
        .filter(|s| !s.is_empty());
    let offer = Offer {
        capabilities: &required,
        scopable: &scopable,
        resolve_scope: &resolve,
        session: session.as_deref(),
    };
    let mut prompter = Dialoguer(Term::stderr());
    let answered = permit::run(&mut prompter, &offer);
    let _ = prompter.0.show_cursor();
    match answered {
        Ok(Some(request)) => {
            let g = store_grant(&request, env, now)?;
            shown(&g, print_grant(&g, Format::Table, now))
        }
        Ok(None) | Err(PromptError::Cancelled) => {
            say!("metagate: nothing granted");
            Ok(Status::Rejected)
        }
        Err(PromptError::Io(e)) => bail!("the terminal failed: {e}"),
    }
}
