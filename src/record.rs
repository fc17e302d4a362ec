//! The `record` job: JSON Lines of events in, rows in the telemetry store out. A bad line is
//! named (source and line number) and skipped; good lines are never lost. With `strict`, one
//! bad line keeps every line out.

use std::io::{self, BufRead, Write};

use rusqlite::TransactionBehavior;

use crate::events::{self, AxisTable, Event};
use crate::lines::{MAX_LINE, read_line_capped, strip_newline};
use crate::store::{Store, StoreError};
use crate::telemetry;

/// Events stored per transaction outside strict mode, so a long input does not hold the
/// store's write lock (and keep `gate` waiting) for its whole length.
const BATCH: usize = 10_000;

/// One input: a name for messages (a path, or `-` for stdin) and its lines.
pub struct Input<'a> {
    pub name: String,
    pub reader: Box<dyn BufRead + 'a>,
}

/// What a run stored and skipped.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub outcomes: usize,
    pub asks: usize,
    pub corrections: usize,
    pub bad_lines: usize,
    /// `strict` and a bad line: nothing was stored.
    pub discarded: bool,
}

impl Summary {
    pub fn stored(&self) -> usize {
        if self.discarded {
            0
        } else {
            self.outcomes + self.asks + self.corrections
        }
    }
}

#[derive(Debug)]
pub enum RecordError {
    /// An input could not be read (not a bad line: the file itself).
    Read {
        name: String,
        source: io::Error,
    },
    Store(StoreError),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Read { name, source } => write!(f, "cannot read {name}: {source}"),
            RecordError::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RecordError {}

impl From<StoreError> for RecordError {
    fn from(e: StoreError) -> Self {
        RecordError::Store(e)
    }
}

/// Reads every input and stores its events. Each bad line and warning is one line on `diag`
/// (`name:line: message`); a line longer than [`MAX_LINE`] is a bad line, read past without
/// being kept.
pub fn record(
    store: &mut Store,
    inputs: Vec<Input<'_>>,
    strict: bool,
    axes: &AxisTable,
    now_ms: &dyn Fn() -> i64,
    diag: &mut dyn Write,
) -> Result<Summary, RecordError> {
    let mut summary = Summary::default();
    let path = store.path().to_path_buf();
    let fail = |e| RecordError::Store(StoreError::from_sqlite(&path, e));
    if strict {
        // One transaction for everything: a bad line anywhere rolls it all back.
        let tx = store
            .conn()
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        read_all(inputs, axes, now_ms, diag, &mut summary, &mut |batch| {
            telemetry::insert_events_in(&tx, batch).map_err(fail)
        })?;
        if summary.bad_lines > 0 {
            tx.rollback().map_err(fail)?;
            summary.discarded = true;
        } else {
            tx.commit().map_err(fail)?;
        }
    } else {
        read_all(inputs, axes, now_ms, diag, &mut summary, &mut |batch| {
            Ok(telemetry::insert_events(store, batch)?)
        })?;
    }
    Ok(summary)
}

/// Reads every line of every input, handing good events to `store_batch` in batches.
fn read_all(
    inputs: Vec<Input<'_>>,
    axes: &AxisTable,
    now_ms: &dyn Fn() -> i64,
    diag: &mut dyn Write,
    summary: &mut Summary,
    store_batch: &mut dyn FnMut(&[Event]) -> Result<(), RecordError>,
) -> Result<(), RecordError> {
    let mut batch: Vec<Event> = Vec::new();
    for Input { name, mut reader } in inputs {
        // Bytes, not a `String`: a line that is not UTF-8 is one bad line, not a failed read
        // of the whole input.
        let mut bytes = Vec::new();
        let mut number = 0usize;
        loop {
            bytes.clear();
            let n = match read_line_capped(&mut reader, &mut bytes, MAX_LINE) {
                Ok(n) => n,
                Err(source) => {
                    // The lines read so far are good: stored before giving up on the input.
                    store_batch(&batch)?;
                    return Err(RecordError::Read { name, source });
                }
            };
            if n == 0 {
                break;
            }
            number += 1;
            if strip_newline(&bytes).len() > MAX_LINE {
                summary.bad_lines += 1;
                let _ = writeln!(
                    diag,
                    "metagate: record: {name}:{number}: longer than the {} MiB metagate reads as one event; line skipped",
                    MAX_LINE >> 20
                );
                continue;
            }
            let line = match std::str::from_utf8(&bytes) {
                Ok(line) => line,
                Err(e) => {
                    summary.bad_lines += 1;
                    let _ = writeln!(
                        diag,
                        "metagate: record: {name}:{number}: not UTF-8 (byte {} of the line); line skipped",
                        e.valid_up_to() + 1
                    );
                    continue;
                }
            };
            // A byte order mark (Windows editors write one) opens the file, not the event.
            let line = if number == 1 {
                line.strip_prefix('\u{feff}').unwrap_or(line)
            } else {
                line
            };
            if line.trim().is_empty() {
                continue;
            }
            match events::parse(line, now_ms(), axes) {
                Ok((event, warnings)) => {
                    for w in warnings {
                        let _ = writeln!(diag, "metagate: record: {name}:{number}: warning: {w}");
                    }
                    match &event {
                        Event::Outcome(_) => summary.outcomes += 1,
                        Event::Ask(_) => summary.asks += 1,
                        Event::Correction(_) => summary.corrections += 1,
                    }
                    batch.push(event);
                }
                Err(message) => {
                    summary.bad_lines += 1;
                    let _ = writeln!(
                        diag,
                        "metagate: record: {name}:{number}: {message}; line skipped"
                    );
                }
            }
            if batch.len() >= BATCH {
                store_batch(&batch)?;
                batch.clear();
            }
        }
    }
    if !batch.is_empty() {
        store_batch(&batch)?;
    }
    Ok(())
}
