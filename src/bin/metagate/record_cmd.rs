//! `metagate record`.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;

use anyhow::Result;
use metagate::display::plural;
use metagate::record::{self, Input, RecordError};
use metagate::schema::Policy;

use crate::cli::RecordArgs;
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(args: &RecordArgs, policy: &Policy, env: &Env) -> Result<Status> {
    // Every file is opened before the store: a missing one stops the run with no store made.
    let mut inputs = Vec::new();
    let stdin_only = args.files.is_empty();
    if stdin_only {
        inputs.push(stdin_input());
    }
    for path in &args.files {
        if path == Path::new("-") {
            inputs.push(stdin_input());
            continue;
        }
        let file = File::open(path).map_err(|source| RecordError::Read {
            name: path.display().to_string(),
            source,
        })?;
        // A folder opens on Unix and fails only when read, by then with a store made.
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(RecordError::Read {
                name: path.display().to_string(),
                source: io::Error::new(io::ErrorKind::IsADirectory, "it is a folder"),
            }
            .into());
        }
        inputs.push(Input {
            name: path.display().to_string(),
            reader: Box::new(BufReader::new(file)),
        });
    }
    let mut store = env.open_store()?;
    let mut err = io::stderr().lock();
    let clock = env.clock();
    let axes = policy.axis_table();
    let summary = record::record(&mut store, inputs, args.strict, &axes, &*clock, &mut err)?;
    if summary.discarded {
        say!(
            "metagate: record: {}; nothing stored (--strict)",
            bad_lines(summary.bad_lines)
        );
    } else {
        say!(
            "metagate: record: stored {}, {}, {} in {}{}",
            plural(summary.outcomes, "outcome", "outcomes"),
            plural(summary.asks, "ask", "asks"),
            plural(summary.corrections, "correction", "corrections"),
            store.path().display(),
            if summary.bad_lines > 0 {
                format!("; skipped {}", bad_lines(summary.bad_lines))
            } else {
                String::new()
            }
        );
    }
    Ok(if summary.bad_lines > 0 {
        Status::Rejected
    } else {
        Status::Success
    })
}

fn stdin_input() -> Input<'static> {
    Input {
        name: "<stdin>".to_string(),
        reader: Box::new(BufReader::new(io::stdin())),
    }
}

fn bad_lines(n: usize) -> String {
    plural(n, "bad line", "bad lines")
}
