//! `metagate gate`.

use std::io::{self, BufReader, BufWriter, Write};
use std::time::Instant;

use anyhow::{Context as _, Result};
use metagate::gate::{self, Context, NoSink, Options, Sink, TelemetrySink, Verdict};
use metagate::schema::Policy;

use crate::cli::GateArgs;
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(args: &GateArgs, policy: &Policy, env: &Env) -> Result<Status> {
    let options = Options {
        emit: args.emit.map(Into::into),
        report: args.report,
        quiet: args.quiet,
    };
    let mut sink: Box<dyn Sink> = if args.no_telemetry {
        Box::new(NoSink)
    } else {
        let context = Context {
            session: args.session.clone(),
            caller: args.caller.clone(),
            intent: args.intent.clone(),
        };
        Box::new(TelemetrySink::new(env.open_store(), context, env.clock()))
    };
    if args.jsonl {
        let mut reader = BufReader::with_capacity(4 << 20, io::stdin().lock());
        let mut out = BufWriter::with_capacity(256 * 1024, io::stdout().lock());
        let mut err = io::stderr().lock();
        gate::stream(
            policy,
            &options,
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
    let (line, verdict) = gate::answer_one(
        policy,
        &options,
        &input,
        sink.as_mut(),
        &mut err,
        &Instant::now,
    )?;
    let mut stdout = io::stdout().lock();
    stdout.write_all(&line)?;
    stdout.flush()?;
    Ok(match verdict {
        Verdict::Rejected => Status::Rejected,
        Verdict::Pass | Verdict::Corrected => Status::Success,
    })
}
