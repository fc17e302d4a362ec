//! `metagate mcp`: the server process and the signals; the relay itself is the library's.

use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use metagate::gate::Options;
use metagate::mcp::{self, Bounds, Config, End, Relay, Streams};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::unistd::Pid;

use crate::cli::McpArgs;
use crate::exit::Status;
use crate::runtime::Env;

/// How long the server has to end by itself once its input is closed, and again after
/// SIGTERM, before the next step (the stdio transport's shutdown: close, SIGTERM, SIGKILL).
const GRACE: Duration = Duration::from_secs(2);

/// The signals passed on to the server.
const FORWARDED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// The server's pid while it may be signalled (0 once it has been waited for, so a pid the
/// system gave to another process since is never signalled).
static SERVER_PID: AtomicI32 = AtomicI32::new(0);

pub fn run(args: &McpArgs, policy_flag: Option<&std::path::Path>, env: Env) -> Result<Status> {
    let inputs = crate::config::policy_inputs(policy_flag)?;
    let base = crate::config::base_policy(&inputs)?;
    let env = env.with_policy(&base);
    crate::runtime::check_intent(&base, args.intent.as_deref(), args.quiet)?;
    let context = crate::runtime::call_context(
        args.session.as_deref(),
        args.caller.as_deref(),
        args.intent.as_deref(),
    )?;
    let telemetry = if args.no_telemetry {
        crate::runtime::refuse_rules_without_store("mcp", &base, &context)?;
        None
    } else {
        // Each call's decision is committed before the call goes on, one call at a time: a
        // disk sync on each costs milliseconds per call, the one sync per decision that
        // docs/telemetry.md ("What a decision's commit costs") promises.
        let open = env.store_opener(false);
        // A store that cannot be used is the operator's to fix, before the client connects.
        open().context("cannot open the telemetry store (--no-telemetry runs without it)")?;
        Some(open)
    };
    // The boundary is built before the relay starts, from the policy the server is started
    // under; the guard keeps its temporary folder for the session.
    let sandbox = if args.sandbox || base.run_rules().sandbox_mcp {
        Some(sandbox(&base, &env)?)
    } else {
        None
    };
    let config = Config {
        checker: env.checker_setup(&base, &[])?,
        policy: inputs,
        base,
        context,
        options: Options {
            quiet: args.quiet,
            explain: args.explain,
            ..Options::default()
        },
        telemetry,
        clock: env.shared_clock(),
        diag: Arc::new(|line: &str| {
            let _ = writeln!(std::io::stderr(), "{line}");
        }),
        bounds: Bounds::default(),
        list_timeout: mcp::LIST_TIMEOUT,
    };
    let mut guard = None;
    let mut server = spawn(&args.server, |command| {
        if let Some(runner) = &sandbox {
            guard = Some(
                runner
                    .confine(command, false)
                    .context("cannot put the MCP server inside the boundary")?,
            );
        }
        Ok(())
    })?;
    // Blocked before any other thread starts, so every thread inherits the mask and the
    // signals wait for the one thread that passes them on (the server, started before,
    // keeps the usual mask).
    let mut signals = SigSet::empty();
    for s in FORWARDED {
        signals.add(s);
    }
    signals
        .thread_block()
        .context("cannot block signals to pass them on")?;
    std::thread::Builder::new()
        .name("metagate-signals".into())
        .spawn(move || pass_on(&signals))
        .context("cannot start a thread")?;
    let streams = Streams {
        client_in: Box::new(std::fs::File::from(
            std::io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .context("stdin")?,
        )),
        client_out: Box::new(BufWriter::with_capacity(
            64 * 1024,
            std::fs::File::from(
                std::io::stdout()
                    .as_fd()
                    .try_clone_to_owned()
                    .context("stdout")?,
            ),
        )),
        server_in: Box::new(BufWriter::with_capacity(
            64 * 1024,
            server.stdin.take().expect("piped"),
        )),
        server_out: Box::new(server.stdout.take().expect("piped")),
    };
    let relay = Relay::start(config, streams);
    let status = supervise(&mut server, &relay)?;
    relay.finish(GRACE);
    if let Some(mut guard) = guard {
        guard.sweep();
        for note in &guard.notes {
            say!("metagate: mcp: {}", metagate_wire::display::one_line(note));
        }
    }
    Ok(Status::Passed(exit_code(status)))
}

/// Starts the server: its stdin and stdout are the relay's, its stderr is metagate's. It gets
/// a process group of its own, so a signal reaches it once, through metagate.
fn spawn(command: &[OsString], prepare: impl FnOnce(&mut Command) -> Result<()>) -> Result<Child> {
    use std::os::unix::process::CommandExt;
    let (program, args) = command.split_first().expect("clap requires a command");
    let mut command = Command::new(program);
    prepare(&mut command)?;
    let child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start the MCP server {}", program.to_string_lossy()))?;
    SERVER_PID.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
    Ok(child)
}

/// The boundary the server runs in: `run`'s, from the same policy (no flags: `[run]` says).
fn sandbox(policy: &metagate_core::policy::Policy, env: &Env) -> Result<metagate::run::Runner> {
    let boundary = crate::run_cmd::boundary(policy, env, &[], None)?;
    crate::run_cmd::runner(policy, boundary)
}

/// Passes each signal metagate gets on to the server, until the process ends.
fn pass_on(signals: &SigSet) {
    while let Ok(signal) = signals.wait() {
        let pid = SERVER_PID.load(Ordering::SeqCst);
        if pid > 0 {
            let _ = kill(Pid::from_raw(pid), signal);
        }
    }
}

/// Waits for the session to end: the server exiting, or a side closing, which ends the
/// server the way the stdio transport says.
fn supervise(server: &mut Child, relay: &Relay) -> Result<ExitStatus> {
    loop {
        if let Some(status) = reaped(server)? {
            return Ok(status);
        }
        match relay.next_end(Duration::from_millis(50)) {
            Some(End::Client | End::Server) => return shut_down(server, relay),
            None => {}
        }
    }
}

/// The stdio shutdown: the server's input closed, then SIGTERM, then SIGKILL, each after
/// [`GRACE`].
fn shut_down(server: &mut Child, relay: &Relay) -> Result<ExitStatus> {
    relay.close_server_input();
    if let Some(status) = wait_for(server, GRACE)? {
        return Ok(status);
    }
    let pid = SERVER_PID.load(Ordering::SeqCst);
    if pid > 0 {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    if let Some(status) = wait_for(server, GRACE)? {
        return Ok(status);
    }
    let _ = server.kill();
    let status = server.wait().context("cannot wait for the MCP server")?;
    SERVER_PID.store(0, Ordering::SeqCst);
    Ok(status)
}

fn wait_for(server: &mut Child, limit: Duration) -> Result<Option<ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = reaped(server)? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The server's status once it has exited (and is no longer to be signalled).
fn reaped(server: &mut Child) -> Result<Option<ExitStatus>> {
    let status = server
        .try_wait()
        .context("cannot wait for the MCP server")?;
    if status.is_some() {
        SERVER_PID.store(0, Ordering::SeqCst);
    }
    Ok(status)
}

/// The status metagate passes on: the server's, or 128 + the signal that ended it.
fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(255),
        (None, None) => 1,
    }
}
