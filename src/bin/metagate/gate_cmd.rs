//! `metagate gate`.

use std::io::{self, BufReader, BufWriter, Write};
use std::time::Instant;

use anyhow::{Context, Result};
use metagate::gate::{self, NoSink, Options, Verdict};
use metagate::schema::Policy;

use crate::cli::GateArgs;
use crate::exit::Status;

pub fn run(args: &GateArgs, policy: &Policy) -> Result<Status> {
    let options = Options {
        emit: args.emit.map(Into::into),
        report: args.report,
        quiet: args.quiet,
    };
    if args.jsonl {
        let mut reader = BufReader::with_capacity(256 * 1024, io::stdin().lock());
        let mut out = BufWriter::with_capacity(256 * 1024, io::stdout().lock());
        let mut err = io::stderr().lock();
        gate::stream(
            policy,
            &options,
            &mut reader,
            &mut out,
            &mut err,
            &mut NoSink,
            &Instant::now,
        )?;
        return Ok(Status::Success);
    }
    let input = gate::read_document(&mut io::stdin().lock()).context("cannot read stdin")?;
    let decision = gate::decide(policy, &input, &options);
    let mut line = Vec::with_capacity(input.len() + 64);
    gate::render(&decision, &options, &mut line);
    line.push(b'\n');
    if !args.quiet {
        let mut notes = Vec::new();
        gate::notes(&decision, None, &mut notes);
        let _ = io::stderr().write_all(&notes);
    }
    let mut stdout = io::stdout().lock();
    stdout.write_all(&line)?;
    stdout.flush()?;
    Ok(match decision.verdict {
        Verdict::Rejected => Status::Rejected,
        Verdict::Pass | Verdict::Corrected => Status::Success,
    })
}
