//! `metagate gate`.

use std::io::{self, BufReader, BufWriter, Write};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use metagate::gate::{self, Gate, NoSink, Options, Sink, TelemetrySink, Verdict};
use metagate_checks::path::CachedFs;
use metagate_core::enforce::Scope;
use metagate_core::policy::Policy;

use crate::cli::GateArgs;
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(args: &GateArgs, policy: &Policy, env: &Env) -> Result<Status> {
    let options = Options {
        emit: args.emit,
        report: args.report,
        quiet: args.quiet,
        explain: args.explain,
    };
    crate::runtime::check_intent(policy, args.intent.as_deref(), args.quiet)?;
    let context = crate::runtime::call_context(
        args.session.as_deref(),
        args.caller.as_deref(),
        args.intent.as_deref(),
    )?;
    let checker = env.checker(policy, &args.tools)?;
    // One second of memory: a stream checking the same folders pays for them once a second.
    let fs = CachedFs::new(Instant::now, Duration::from_secs(1));
    let gate = Gate {
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
        crate::runtime::refuse_rules_without_store("gate", policy, &context)?;
        Box::new(NoSink::at(env.clock()()))
    } else {
        // One document is one decision: the process ends after one commit.
        let store = if args.jsonl {
            env.open_store()
        } else {
            env.open_store_short_lived()
        }
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
            &gate,
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
    let (line, verdict) = gate::answer_one(&gate, &input, sink.as_mut(), &mut err, &Instant::now)?;
    let mut stdout = crate::output::stdout();
    stdout.write_all(&line)?;
    stdout.flush()?;
    Ok(match verdict {
        Verdict::Rejected => Status::Rejected,
        Verdict::Pass | Verdict::Corrected => Status::Success,
    })
}
