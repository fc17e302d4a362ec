//! The `metagate` binary: flags in, the library's decisions out, one exit status.

/// `eprintln!` that cannot panic: with stderr closed (`metagate … 2>&-`, a reader that went
/// away) a message is lost, but the exit status stays the one that was meant.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;
mod config;
mod db_cmd;
mod evaluate_cmd;
mod evaluate_report;
mod exit;
mod gate_cmd;
mod input_file;
mod lint_cmd;
mod mcp_cmd;
mod output;
mod permit_cmd;
mod policy_cmd;
mod prompt;
mod record_cmd;
mod run_cmd;
mod runtime;
mod server_tools;
mod stdout_at_start;
mod store_hint;
mod tools_check_cmd;
mod tools_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// A gate decides millions of small calls, each building and dropping a few short strings:
/// mimalloc's per-thread free lists cost about half of what the system allocator does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cli::{Cli, Command};
use exit::Status;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(mut e) => {
            without_hidden_suggestions(&mut e);
            let _ = e.print();
            return if e.use_stderr() {
                Status::Failure.into()
            } else {
                Status::Success.into()
            };
        }
    };
    // The commands that can run without a store, for the hint after a store's error.
    let store_optional = match &cli.command {
        Command::Gate(_) => Some("gate"),
        Command::Mcp(_) => Some("mcp"),
        _ => None,
    };
    let ran = run(cli);
    // After the command, whatever it ended with: the spans it made go out, within the flush
    // bound, before the process ends.
    if let Some(line) = metagate::otel::finish() {
        say!("{line}");
    }
    match ran {
        Ok(status) => status.into(),
        Err(err) if exit::is_broken_pipe(&err) => Status::Success.into(),
        Err(err) => {
            say!("metagate: error: {err:#}");
            if let Some(hint) = store_hint::for_error(&err, store_optional) {
                say!("{}", output::wrap_for_stderr(&hint));
            }
            Status::Failure.into()
        }
    }
}

/// clap suggests the nearest subcommands to a misspelt one, hidden ones included: those help
/// leaves out are left out here too (none is hidden today; a hidden one stays unsuggested).
fn without_hidden_suggestions(e: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue};
    fn hidden(cmd: &clap::Command, names: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() {
                names.push(sub.get_name().to_string());
            }
            hidden(sub, names);
        }
    }
    let Some(ContextValue::Strings(suggested)) = e.get(ContextKind::SuggestedSubcommand) else {
        return;
    };
    let mut names = Vec::new();
    hidden(&<Cli as clap::CommandFactory>::command(), &mut names);
    let shown: Vec<String> = suggested
        .iter()
        .filter(|s| !names.contains(s))
        .cloned()
        .collect();
    if shown.is_empty() {
        e.remove(ContextKind::SuggestedSubcommand);
        // An empty list of tips would still leave its blank line.
        if matches!(e.get(ContextKind::Suggested), Some(ContextValue::StyledStrs(tips)) if tips.is_empty())
        {
            e.remove(ContextKind::Suggested);
        }
    } else {
        e.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(shown),
        );
    }
}

/// Starts OpenTelemetry export for `command` when the `OTEL_*` variables or the policy's
/// `[telemetry.otlp]` ask for it (docs/otel.md); a failure to start is a warning, never the
/// command's failure.
pub(crate) fn start_export(policy: &metagate_core::policy::Policy, command: &'static str) {
    let var = |name: &str| std::env::var(name).ok();
    let settings = metagate::otel::Settings::read(policy.otlp(), &var);
    if let Some(line) = metagate::otel::start(settings, command, var("TRACEPARENT").as_deref()) {
        say!("{line}");
    }
}

fn run(cli: Cli) -> anyhow::Result<Status> {
    // An answer written to a standard output closed before the start would be lost without a
    // word. (One closed while it is written, a reader gone, ends quietly: that reader has
    // what it wanted.) `record` writes nothing there.
    let answers_on_stdout = !matches!(cli.command, Command::Record(_));
    if answers_on_stdout && stdout_at_start::was_closed() {
        anyhow::bail!("standard output is closed: the answer would be lost");
    }
    if cli.db.len() > 1 && !matches!(cli.command, Command::Evaluate(_)) {
        anyhow::bail!(
            "--db is given {} times; only evaluate reads more than one store",
            cli.db.len()
        );
    }
    let env = runtime::Env::new(
        cli.db.first().map(PathBuf::as_path),
        cli.policy.as_deref(),
        cli.now.as_deref(),
    )?;
    match cli.command {
        Command::Gate(args) => {
            let policy = config::load_policy(cli.policy.as_deref(), &args.tools)?;
            config::warn_about_imports(&policy, args.quiet);
            start_export(&policy, "gate");
            if args.explain {
                say!(
                    "metagate: explain: policy: {}",
                    metagate_wire::display::one_line(&config::explain_source(
                        cli.policy.as_deref()
                    ))
                );
            }
            gate_cmd::run(&args, &policy, &env.with_policy(&policy))
        }
        Command::Run(args) => {
            let policy = config::load_policy(cli.policy.as_deref(), &args.tools)?;
            config::warn_about_imports(&policy, args.quiet);
            start_export(&policy, "run");
            run_cmd::run(&args, &policy, &env.with_policy(&policy))
        }
        Command::Mcp(args) => mcp_cmd::run(&args, cli.policy.as_deref(), env),
        Command::Record(args) => {
            let policy = config::load_policy(cli.policy.as_deref(), &[])?;
            record_cmd::run(&args, &policy, &env.with_policy(&policy))
        }
        Command::Lint(args) => {
            if let Some(code) = &args.explain {
                return lint_cmd::explain(code);
            }
            let policy = config::load_policy(cli.policy.as_deref(), &args.tools)?;
            config::warn_about_imports(&policy, false);
            lint_cmd::run(&args, &policy, &env)
        }
        Command::Policy { command } => policy_cmd::run(command, cli.policy.as_deref()),
        Command::Db { command } => {
            let policy = config::load_policy(cli.policy.as_deref(), &[])?;
            db_cmd::run(command, &env.with_policy(&policy))
        }
        Command::Evaluate(args) => {
            let policy = config::load_policy(cli.policy.as_deref(), &[])?;
            start_export(&policy, "evaluate");
            evaluate_cmd::run(&args, &cli.db, &policy, &env.with_policy(&policy))
        }
        Command::Tools { command } => {
            let policy = config::load_policy(cli.policy.as_deref(), &[])?;
            tools_cmd::run(command, &policy, &env.with_policy(&policy))
        }
        Command::Permit(args) => {
            let policy = config::load_policy(cli.policy.as_deref(), &[])?;
            permit_cmd::run(args, &policy, &env.with_policy(&policy))
        }
    }
}
