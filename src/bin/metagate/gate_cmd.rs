//! `metagate gate`.

use std::io::{self, BufReader, BufWriter, Write};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use metagate::checks::path::CachedFs;
use metagate::domain::enforce::Scope;
use metagate::domain::policy::Policy;
use metagate::jobs::gate::{self, Context, NoSink, Options, Run, Sink, TelemetrySink, Verdict};

use crate::cli::GateArgs;
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(args: &GateArgs, policy: &Policy, env: &Env) -> Result<Status> {
    let options = Options {
        emit: args.emit.map(Into::into),
        report: args.report,
        quiet: args.quiet,
        explain: args.explain,
    };
    crate::runtime::check_intent(policy, args.intent.as_deref(), args.quiet)?;
    // A blank ID would be recorded and counted as a session (or caller) of its own, one that
    // `permit grant --session` refuses to name: refused here as there.
    for (value, flag, var) in [
        (&args.session, "--session", "METAGATE_SESSION"),
        (&args.caller, "--caller", "METAGATE_CALLER"),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            anyhow::bail!("{flag} (or {var}) is empty: give an ID, or leave it unset");
        }
    }
    let context = Context {
        session: args.session.clone(),
        caller: args.caller.clone(),
        intent: args.intent.clone(),
    };
    let checker = env.checker(policy, &args.tools)?;
    // One second of memory: a stream checking the same folders pays for them once a second.
    let fs = CachedFs::new(Instant::now, Duration::from_secs(1));
    let run = Run {
        policy,
        options,
        checker: Some(&checker),
        context: &context,
        fs: &fs,
        scope: Scope { runtime: true },
    };
    // Set-up faults end the run here, before a line is read: a store that cannot be used, or
    // rules that need one when there is none, are the operator's to fix. Answered per call,
    // they would reach the model as a rejection it can do nothing about.
    let mut sink: Box<dyn Sink> = if args.no_telemetry {
        refuse_rules_without_store(policy, &context)?;
        Box::new(NoSink::at(env.clock()()))
    } else {
        let store = env
            .open_store()
            .context("cannot use the telemetry store (gate records every decision in it)")?;
        let sink = TelemetrySink::new(
            store,
            context.clone(),
            env.clock(),
            policy.rules.counts(),
            policy.rules.limits.loop_breaker.is_some(),
        )
        .context("cannot use the telemetry store (gate records every decision in it)")?;
        Box::new(sink)
    };
    crate::output::say_when_waiting(
        "gate",
        if args.jsonl {
            "tool calls, one per line,"
        } else {
            "a tool call"
        },
    );
    if args.jsonl {
        let mut reader = BufReader::with_capacity(4 << 20, io::stdin().lock());
        let mut out = BufWriter::with_capacity(256 * 1024, io::stdout().lock());
        let mut err = io::stderr().lock();
        gate::stream(
            &run,
            &mut reader,
            &mut out,
            &mut err,
            sink.as_mut(),
            &Instant::now,
        )?;
        return Ok(Status::Success);
    }
    let input = gate::read_document(&mut io::stdin().lock()).context("cannot read stdin")?;
    let mut err = io::stderr().lock();
    let (line, verdict) = gate::answer_one(&run, &input, sink.as_mut(), &mut err, &Instant::now)?;
    let mut stdout = crate::output::stdout();
    stdout.write_all(&line)?;
    stdout.flush()?;
    Ok(match verdict {
        Verdict::Rejected => Status::Rejected,
        Verdict::Pass | Verdict::Corrected => Status::Success,
    })
}

/// Limits, prerequisites and grants are read from the telemetry store. Without one they could
/// only be skipped (the operator's rules silently off) or fail every call they apply to (a
/// rejection the model cannot act on, retried in vain): refused before the first call
/// instead, naming the keys, since the conflict is the operator's set-up and known at start.
fn refuse_rules_without_store(policy: &Policy, context: &Context) -> Result<()> {
    let rules = policy
        .rules
        .read_from_the_store(context.caller.as_deref(), context.session.as_deref());
    if rules.is_empty() {
        return Ok(());
    }
    // Named as the operator would write it: relative to the working folder when inside it.
    let cwd = std::env::current_dir().unwrap_or_default();
    let source = policy.origin.as_ref().map_or_else(
        || "the built-in policy".to_string(),
        |p| format!("policy {}", p.strip_prefix(&cwd).unwrap_or(p).display()),
    );
    anyhow::bail!(
        "--no-telemetry, but {source} sets {} (read from the telemetry store at each call): \
         run gate with telemetry on, or with a policy without them",
        rules.join(", ")
    )
}
