//! `metagate run`: the policy's boundary built from this run's files and flags, then the
//! library's runner over one call or a stream of them.

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use metagate::gate::{Gate, NoSink, Options, TelemetrySink};
use metagate::run::answer::Answered;
use metagate::run::{Recording, Runner, Setup};
use metagate_checks::path::CachedFs;
use metagate_core::enforce::Scope;
use metagate_core::policy::Policy;
use metagate_core::policy::run::{Boundary, Places};

use crate::cli::RunArgs;
use crate::exit::Status;
use crate::runtime::Env;

/// The tests' switch: in a debug build, `METAGATE_RUN_TEST_UNCONFINED=1` runs commands
/// without the kernel's boundary (bounds kept), so that each test of the boundary can be seen
/// to fail without it. A release build has no such switch, and no policy key sets it.
fn boundary_switched_off() -> bool {
    cfg!(debug_assertions)
        && std::env::var_os("METAGATE_RUN_TEST_UNCONFINED").is_some_and(|v| v == "1")
}

/// The boundary for this run: the path root and `[run] write` to write, metagate's own files
/// (this run's, as the path check protects them, and the grant key) and `[run] deny_read`
/// hidden, the bounds from the policy with the flags on top.
pub fn boundary(
    policy: &Policy,
    env: &Env,
    tools: &[PathBuf],
    args: Option<&RunArgs>,
) -> Result<Boundary> {
    let mut rules = policy.run_rules();
    if let Some(a) = args {
        let b = &mut rules.bounds;
        b.timeout_secs = a.timeout.unwrap_or(b.timeout_secs);
        b.memory_mb = a.memory.unwrap_or(b.memory_mb);
        b.processes = a.processes.unwrap_or(b.processes);
        b.output_bytes = a
            .output
            .map_or(b.output_bytes, |kb| kb.saturating_mul(1024));
        rules.network |= a.network;
    }
    let setup = env.checker_setup(policy, tools)?;
    let own = setup.protected.clone();
    let paths = &policy.rules.paths;
    let root = paths
        .base
        .as_deref()
        .map_or_else(|| setup.cwd.clone(), |b| setup.cwd.join(b))
        .join(&paths.root);
    Ok(Boundary::new(
        &rules,
        &root,
        &own,
        &Places {
            cwd: &setup.cwd,
            base: paths.base.as_deref(),
            home: setup.home.as_deref(),
        },
    ))
}

/// A runner for `policy`'s boundary.
pub fn runner(policy: &Policy, boundary: Boundary) -> Result<Runner> {
    let confined = !boundary_switched_off();
    if !confined {
        say!(
            "metagate: run: the boundary is off (METAGATE_RUN_TEST_UNCONFINED, a debug build's test switch)"
        );
    }
    let rules = policy.run_rules();
    Ok(Runner::new(Setup {
        boundary,
        interpreters: rules.interpreters,
        unconfined_allowed: rules.unconfined,
        confined,
        temp_base: std::env::temp_dir(),
    })?)
}

pub fn run(args: &RunArgs, policy: &Policy, env: &Env) -> Result<Status> {
    let options = Options {
        quiet: args.quiet,
        explain: args.explain,
        ..Options::default()
    };
    crate::runtime::check_intent(policy, args.intent.as_deref(), args.quiet)?;
    let context = crate::runtime::call_context(
        args.session.as_deref(),
        args.caller.as_deref(),
        args.intent.as_deref(),
    )?;
    let boundary = boundary(policy, env, &args.tools, Some(args))?;
    let runner = runner(policy, boundary)?;
    for w in runner.warnings() {
        say!("metagate: run: {}", metagate_wire::display::one_line(w));
    }
    if args.explain {
        let k = runner.kernel();
        say!(
            "metagate: explain: run: Landlock ABI {}{}",
            k.landlock_abi,
            if k.has_tcp_rules() {
                " (TCP rules)"
            } else {
                " (no TCP rules: seccomp alone keeps the network off)"
            }
        );
    }
    let checker = env.checker(policy, &args.tools)?;
    let fs = CachedFs::new(Instant::now, Duration::from_secs(1));
    let run = Gate {
        policy,
        options,
        checker: Some(&checker),
        context: &context,
        fs: &fs,
        scope: Scope { runtime: true },
    };
    let mut recording = if args.no_telemetry {
        crate::runtime::refuse_rules_without_store("run", policy, &context)?;
        Recording::Off(NoSink::at(env.clock()()))
    } else {
        // Each call commits twice, its decision before the command and its outcome after:
        // neither waits for the disk, as mcp's do not (docs/run.md, "What is recorded").
        let store = env.open_store_not_durable(!args.jsonl).context(
            "cannot use the telemetry store (run records every decision and outcome in it)",
        )?;
        let sink = TelemetrySink::new(
            store,
            context.clone(),
            env.clock(),
            policy.rules.counts(),
            policy.rules.limits.loop_breaker.is_some(),
        )
        .context("cannot use the telemetry store (run records every decision and outcome in it)")?;
        Recording::Store(Box::new(sink))
    };
    let clock = env.clock();
    let mut err = io::stderr();
    crate::output::say_when_waiting(
        "run",
        if args.jsonl {
            "tool calls, one per line,"
        } else {
            "a tool call"
        },
    );
    if args.jsonl {
        let mut reader = BufReader::with_capacity(1 << 20, io::stdin().lock());
        let mut out = io::stdout().lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader
                .read_until(b'\n', &mut line)
                .context("cannot read stdin")?
                == 0
            {
                return Ok(Status::Success);
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            let (answer, _) = runner
                .answer(
                    &run,
                    &line,
                    &mut recording,
                    &mut err,
                    &Instant::now,
                    &*clock,
                )
                .context("cannot run the command")?;
            out.write_all(&answer)?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
    }
    let input =
        metagate::gate::read_document(&mut io::stdin().lock()).context("cannot read stdin")?;
    let (answer, answered) = runner
        .answer(
            &run,
            &input,
            &mut recording,
            &mut err,
            &Instant::now,
            &*clock,
        )
        .context("cannot run the command")?;
    let mut stdout = crate::output::stdout();
    stdout.write_all(&answer)?;
    stdout.write_all(b"\n")?;
    stdout.flush()?;
    Ok(match answered {
        Answered::Ran(Some(0)) => Status::Success,
        Answered::Ran(_) => Status::Passed(3),
        Answered::Refused => Status::Rejected,
    })
}
