//! `metagate record`.

use std::fs::File;
use std::io;
use std::path::Path;

use anyhow::Result;
use metagate::record::{self, Input, RecordError};
use metagate_core::policy::Policy;
use metagate_wire::display::plural;

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
        // Regular files only: a FIFO or a device (`/dev/zero`) has no end to wait for; events
        // that come as they happen come on stdin.
        let file = crate::input_file::open_regular(path).map_err(|source| RecordError::Read {
            name: path.display().to_string(),
            source,
        })?;
        inputs.push(Input {
            name: path.display().to_string(),
            waits: may_wait(&file),
            reader: Box::new(file),
        });
    }
    let mut store = env.open_store()?;
    if stdin_only || args.files.iter().any(|p| p == Path::new("-")) {
        crate::output::say_when_waiting("record", "events (JSON Lines)");
    }
    let mut err = io::stderr().lock();
    let clock = env.clock();
    let axes = policy.axis_table();
    let summary = match record::record(&mut store, inputs, args.strict, &axes, &*clock, &mut err) {
        Ok(summary) => summary,
        Err(failed) => {
            // Said before the error itself: what a retry of the same input would store again.
            let record::Failed {
                error,
                summary: stored,
            } = *failed;
            match &stored.stored_through {
                Some((name, line)) => say!(
                    "metagate: record: {} stored in {} before the error below: every good line through {name}:{line}; none after it (a retry of the whole input stores those {} again)",
                    plural(stored.stored, "event was", "events were"),
                    store.place().display(),
                    stored.stored
                ),
                None => say!("metagate: record: nothing was stored before the error below"),
            }
            return Err(error.into());
        }
    };
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
            store.place().display(),
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
        reader: Box::new(io::stdin()),
        waits: stdin_may_wait(),
    }
}

/// Whether reading `file` may wait for a writer: anything but a regular file (a FIFO, a
/// terminal, a socket, a device).
fn may_wait(file: &File) -> bool {
    file.metadata().map_or(true, |m| !m.is_file())
}

#[cfg(unix)]
fn stdin_may_wait() -> bool {
    use std::os::fd::AsFd;
    io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_or(true, |fd| may_wait(&File::from(fd)))
}

/// Elsewhere stdin is taken to be a pipe: its events are stored as they come.
#[cfg(not(unix))]
fn stdin_may_wait() -> bool {
    true
}

fn bad_lines(n: usize) -> String {
    plural(n, "bad line", "bad lines")
}
