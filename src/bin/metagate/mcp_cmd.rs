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
    crate::start_export(&base, "mcp");
    let env = env.with_policy(&base);
    if let Some(client) = args.print_config {
        return print_config(client, args, &inputs, &env);
    }
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
    // A client starts the proxy with an environment of its own: which store and policy this
    // run took is said, so that a split store is seen at once.
    say!(
        "metagate: mcp: store {}, policy {}",
        if telemetry.is_some() {
            env.location()
                .map_or_else(|e| format!("unknown ({e})"), |l| l.to_string())
        } else {
            "none (--no-telemetry)".to_string()
        },
        inputs
            .origin
            .as_ref()
            .map_or_else(|| inputs.name.clone(), |path| path.display().to_string())
    );
    // The boundary is built before the relay starts, from the policy the server is started
    // under; the guard keeps its temporary folder for the session.
    #[cfg(feature = "http")]
    if args.listen.is_some() && (args.sandbox || base.run_rules().sandbox_mcp) {
        anyhow::bail!(
            "--listen does not run its servers inside the boundary yet: leave out --sandbox and [run] sandbox_mcp"
        );
    }
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
    #[cfg(feature = "http")]
    {
        use metagate::mcp::http::session::Backend;
        let backend = match &args.upstream {
            Some(url) => Backend::Upstream(url.clone()),
            None => Backend::Command(args.server.clone()),
        };
        if let Some(listen) = args.listen {
            return listen_http(listen, config, backend);
        }
        if let Backend::Upstream(url) = backend {
            return relay_upstream(&url, config);
        }
    }
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
    let runner = crate::run_cmd::runner(policy, boundary)?;
    for w in runner.warnings() {
        say!(
            "metagate: mcp: sandbox: {}",
            metagate_wire::display::one_line(w)
        );
    }
    Ok(runner)
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

/// `--print-config CLIENT`: the snippet that starts this proxy as it is configured now, with
/// the store and the policy named, on stdout; where it goes, on stderr.
fn print_config(
    client: crate::cli::McpClient,
    args: &McpArgs,
    inputs: &mcp::PolicyInputs,
    env: &Env,
) -> Result<Status> {
    use crate::cli::McpClient;
    use mcp::clients::{Client, Launch};
    use metagate_store::location::Location;
    let client = match client {
        McpClient::ClaudeDesktop => Client::ClaudeDesktop,
        McpClient::Cursor => Client::Cursor,
        McpClient::Vscode => Client::VsCode,
        McpClient::Zed => Client::Zed,
    };
    let text = |s: &std::ffi::OsStr| {
        s.to_str().map(str::to_string).with_context(|| {
            format!(
                "{} is not UTF-8, which a JSON configuration cannot hold",
                s.to_string_lossy()
            )
        })
    };
    let mut words = Vec::new();
    if !args.no_telemetry {
        let location = env.location().context("cannot tell where the store is")?;
        let db = match &location {
            Location::File(path) => text(std::path::absolute(path)?.as_os_str())?,
            Location::Postgres(url) => {
                say!("metagate: note: the snippet holds the store's URL with its password");
                url.secret_text().to_string()
            }
        };
        words.extend(["--db".to_string(), db]);
    }
    match &inputs.origin {
        Some(path) => words.extend(["--policy".to_string(), text(path.as_os_str())?]),
        None => say!(
            "metagate: warning: no policy file is in force here, so the snippet names none; the client, started in another folder, may find another one (give --policy FILE)"
        ),
    }
    words.push("mcp".into());
    let flag = |words: &mut Vec<String>, name: &str, value: &Option<String>| {
        if let Some(value) = value {
            words.extend([format!("--{name}"), value.clone()]);
        }
    };
    flag(&mut words, "session", &args.session);
    flag(&mut words, "caller", &args.caller);
    flag(&mut words, "intent", &args.intent);
    for (on, name) in [
        (args.no_telemetry, "--no-telemetry"),
        (args.explain, "--explain"),
        (args.quiet, "--quiet"),
        (args.sandbox, "--sandbox"),
    ] {
        if on {
            words.push(name.to_string());
        }
    }
    words.push("--".into());
    let mut server = Vec::with_capacity(args.server.len());
    for (i, word) in args.server.iter().enumerate() {
        // The client's PATH and working folder are not this shell's: the program is named
        // by its absolute path.
        // A relative path to a file (a script) is read from the client's folder otherwise.
        let word = if i == 0 {
            absolute_program(word)
        } else if std::path::Path::new(word).is_relative() && std::path::Path::new(word).exists() {
            std::path::absolute(word).map_or_else(|_| word.clone(), Into::into)
        } else {
            word.clone()
        };
        server.push(text(&word)?);
    }
    let name = mcp::clients::server_name(
        &args
            .server
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
    );
    words.extend(server);
    let program = std::env::current_exe().context("cannot tell where metagate is")?;
    let launch = Launch {
        name,
        program: text(program.as_os_str())?,
        args: words,
    };
    let snippet = serde_json::to_string_pretty(&client.snippet(&launch))?;
    {
        let mut out = crate::output::stdout();
        writeln!(out, "{snippet}")?;
        out.flush()?;
    }
    let files: Vec<String> = client
        .files()
        .iter()
        .map(|(platform, file)| format!("{platform}: {file}"))
        .collect();
    say!(
        "metagate: merge this into the client's configuration file; {}",
        files.join("; ")
    );
    Ok(Status::Success)
}

/// `program` as an absolute path: a relative path from the working folder, a bare name from
/// `PATH`; as it was when neither finds it.
fn absolute_program(program: &std::ffi::OsStr) -> OsString {
    let path = std::path::Path::new(program);
    if path.components().count() > 1 {
        return std::path::absolute(path).map_or_else(|_| program.to_owned(), Into::into);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.is_file())
        .map_or_else(|| program.to_owned(), Into::into)
}

/// `--listen`: the Streamable HTTP front, each session with a relay and a server of its own,
/// until metagate is stopped.
#[cfg(feature = "http")]
fn listen_http(
    listen: std::net::SocketAddr,
    config: Config,
    backend: metagate::mcp::http::session::Backend,
) -> Result<Status> {
    use metagate::mcp::http::{Front, MakeConfig, serve};
    let rules = config.base.mcp_rules();
    let defaults = config.context.clone();
    let diag = Arc::clone(&config.diag);
    // Parts of the checker's set-up cache what they read (not `Sync`): each session's copy
    // is made under a lock.
    let config = std::sync::Mutex::new(config);
    let make: MakeConfig = Arc::new(move |context| {
        let config = config.lock().unwrap_or_else(|e| e.into_inner());
        Config {
            policy: config.policy.clone(),
            base: config.base.clone(),
            context,
            options: config.options,
            checker: config.checker.clone(),
            telemetry: config.telemetry.clone(),
            clock: Arc::clone(&config.clock),
            diag: Arc::clone(&config.diag),
            bounds: config.bounds,
            list_timeout: config.list_timeout,
        }
    });
    if rules.tokens.is_empty() && !rules.unauthenticated_loopback {
        say!(
            "metagate: warning: the policy maps no bearer token to a caller ([mcp] tokens) and lets no unauthenticated loopback request in: every request will get 401"
        );
    }
    let front = Front {
        listen,
        rules,
        defaults,
        backend,
        config: make,
        diag,
    };
    serve(front, |addr| {
        say!("metagate: mcp: listening on http://{addr}/mcp");
    })
    .with_context(|| format!("cannot serve HTTP on {listen}"))?;
    Ok(Status::Success)
}

/// `--upstream` on stdio: the client on metagate's stdin and stdout, the server over HTTP.
#[cfg(feature = "http")]
fn relay_upstream(url: &str, config: Config) -> Result<Status> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .thread_name("metagate-http")
        .build()
        .context("cannot start the HTTP client")?;
    let pipes = metagate::mcp::http::upstream::connect(url, runtime.handle())
        .with_context(|| format!("cannot reach the MCP server at {url}"))?;
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
        server_in: pipes.input,
        server_out: pipes.output,
    };
    let relay = Relay::start(config, streams);
    while relay.next_end(Duration::from_secs(1)).is_none() {}
    relay.close_server_input();
    relay.finish(GRACE);
    Ok(Status::Success)
}
