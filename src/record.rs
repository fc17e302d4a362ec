//! The `record` job: JSON Lines of events in, rows in the telemetry store out. A bad line is
//! named (source and line number) and skipped; good lines are never lost. With `strict`, one
//! bad line keeps every line out.

use std::io::{self, BufReader, Read, Write};

use metagate_core::events::{self, AxisTable, Event};
use metagate_store::StoreError;
use metagate_store::any::AnyStore;
use metagate_wire::lines::{MAX_LINE, read_line_capped, strip_newline};

/// Events stored per transaction outside strict mode, so a long input does not hold the
/// store's write lock (and keep `gate` waiting) for its whole length.
const BATCH: usize = 10_000;

/// How much of an input is read at once.
const BUFFER: usize = 256 * 1024;

/// One input: a name for messages (a path, or `<stdin>`) and its bytes.
pub struct Input<'a> {
    /// The name diagnostics give the input (a path, or `-`).
    pub name: String,
    /// Where the events are read from.
    pub reader: Box<dyn Read + 'a>,
    /// Whether a read may wait for more to be written (a pipe, a FIFO, a terminal, a
    /// socket): outside strict mode, what was read is stored before such a read, so an agent
    /// that keeps `record -` open as a coprocess has each event in the store (where `gate`'s
    /// prerequisites look) as soon as it is written, and loses none when it is stopped. A
    /// regular file never waits: its events are stored in batches.
    pub waits: bool,
}

/// What a run read, stored and skipped.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Good events read, by type.
    pub outcomes: usize,
    /// Asks stored.
    pub asks: usize,
    /// Corrections stored.
    pub corrections: usize,
    /// Lines refused.
    pub bad_lines: usize,
    /// `strict` and a bad line: nothing was stored.
    pub discarded: bool,
    /// Events committed to the store so far.
    pub stored: usize,
    /// The input and line number of the last event committed: every good line up to it is in
    /// the store, none after it.
    pub stored_through: Option<(String, usize)>,
}

/// A run that failed, and what it had stored before it did (without `strict`, the batches
/// committed before the failure stay: a retry of the whole input stores them again).
#[derive(Debug)]
pub struct Failed {
    /// What stopped the run.
    pub error: RecordError,
    /// What was stored before it stopped.
    pub summary: Summary,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for Failed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// Why `record` stopped.
#[derive(Debug)]
pub enum RecordError {
    /// An input could not be read (not a bad line: the file itself).
    Read {
        /// The input's name.
        name: String,
        /// What the system said.
        source: io::Error,
    },
    /// The store failed.
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
/// being kept. A failure returns what was stored before it.
pub fn record(
    store: &mut AnyStore,
    inputs: Vec<Input<'_>>,
    strict: bool,
    axes: &AxisTable,
    now_ms: &dyn Fn() -> i64,
    diag: &mut dyn Write,
) -> Result<Summary, Box<Failed>> {
    let mut summary = Summary::default();
    match run(store, inputs, strict, axes, now_ms, diag, &mut summary) {
        Ok(()) => Ok(summary),
        Err(error) => Err(Box::new(Failed { error, summary })),
    }
}

fn run(
    store: &mut AnyStore,
    inputs: Vec<Input<'_>>,
    strict: bool,
    axes: &AxisTable,
    now_ms: &dyn Fn() -> i64,
    diag: &mut dyn Write,
    summary: &mut Summary,
) -> Result<(), RecordError> {
    if strict {
        // All or nothing, and every line read and checked before the store is written: the
        // events wait in a stage outside the store, and the store's write lock is held only
        // to copy them in, in one transaction, never while waiting for input (which would
        // keep every `gate` and writer out for as long as the input takes to come).
        store.stage()?;
        let mut staged = Summary::default();
        let read = read_all(
            inputs,
            axes,
            now_ms,
            diag,
            &mut staged,
            false,
            &mut |batch| Ok(store.stage_events(batch)?),
        );
        let stored = read.and_then(|()| {
            if staged.bad_lines > 0 {
                staged.discarded = true;
                staged.stored = 0;
                staged.stored_through = None;
                Ok(())
            } else {
                Ok(store.store_staged()?)
            }
        });
        // The stage is temporary: deleted with the connection anyway.
        let _ = store.unstage();
        stored?;
        *summary = staged;
    } else {
        read_all(inputs, axes, now_ms, diag, summary, true, &mut |batch| {
            Ok(store.insert_events(batch)?)
        })?;
    }
    Ok(())
}

/// Events read and not stored yet, and where the last of them came from.
struct Batch {
    events: Vec<Event>,
    /// Index of the input and line number of the last event.
    last: (usize, usize),
}

impl Batch {
    /// Hands the events to `store_batch` and notes them in `summary` as stored.
    fn store(
        &mut self,
        names: &[String],
        summary: &mut Summary,
        store_batch: &mut dyn FnMut(&[Event]) -> Result<(), RecordError>,
    ) -> Result<(), RecordError> {
        if self.events.is_empty() {
            return Ok(());
        }
        store_batch(&self.events)?;
        summary.stored += self.events.len();
        let (input, line) = self.last;
        summary.stored_through = Some((names[input].clone(), line));
        self.events.clear();
        Ok(())
    }
}

/// Reads every line of every input, handing good events to `store_batch` in batches: of
/// [`BATCH`] events, and with `before_waiting`, whatever was read before a read that may wait
/// (as `gate --jsonl` commits a group before it waits for more calls).
fn read_all(
    inputs: Vec<Input<'_>>,
    axes: &AxisTable,
    now_ms: &dyn Fn() -> i64,
    diag: &mut dyn Write,
    summary: &mut Summary,
    before_waiting: bool,
    store_batch: &mut dyn FnMut(&[Event]) -> Result<(), RecordError>,
) -> Result<(), RecordError> {
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let mut batch = Batch {
        events: Vec::new(),
        last: (0, 0),
    };
    // Bytes, not a `String`: a line that is not UTF-8 is one bad line, not a failed read of
    // the whole input.
    let mut bytes = Vec::new();
    // Error types outside the taxonomy warned about (once each).
    let mut unknown_types: Vec<String> = Vec::new();
    for (
        index,
        Input {
            name,
            reader,
            waits,
        },
    ) in inputs.into_iter().enumerate()
    {
        let mut reader = BufReader::with_capacity(BUFFER, reader);
        let mut number = 0usize;
        loop {
            if before_waiting
                && waits
                && !batch.events.is_empty()
                && memchr::memchr(b'\n', reader.buffer()).is_none()
            {
                batch.store(&names, summary, store_batch)?;
            }
            bytes.clear();
            let n = match read_line_capped(&mut reader, &mut bytes, MAX_LINE) {
                Ok(n) => n,
                Err(source) => {
                    // The lines read so far are good: stored before giving up on the input.
                    batch.store(&names, summary, store_batch)?;
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
                    if let Event::Outcome(o) = &event
                        && let Some(t) = o.error_type.as_deref()
                        && !events::known_error_type(t)
                        && !unknown_types.iter().any(|u| u == t)
                    {
                        let _ = writeln!(
                            diag,
                            "metagate: record: {name}:{number}: warning: error_type {} is not one metagate knows (the taxonomy's categories, wrong_tool_boundary, low_utility): stored as given, and counted by evaluate as the tool's own failure (said once per name)",
                            metagate_wire::display::one_line(&format!("{t:?}"))
                        );
                        unknown_types.push(t.to_string());
                    }
                    match &event {
                        Event::Outcome(_) => summary.outcomes += 1,
                        Event::Ask(_) => summary.asks += 1,
                        Event::Correction(_) => summary.corrections += 1,
                    }
                    batch.events.push(event);
                    batch.last = (index, number);
                }
                Err(message) => {
                    summary.bad_lines += 1;
                    let _ = writeln!(
                        diag,
                        "metagate: record: {name}:{number}: {message}; line skipped"
                    );
                }
            }
            if batch.events.len() >= BATCH {
                batch.store(&names, summary, store_batch)?;
            }
        }
    }
    batch.store(&names, summary, store_batch)
}
