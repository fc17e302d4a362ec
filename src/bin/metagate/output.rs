//! Standard output for the commands' answers.
//!
//! A failed write says it was standard output that failed ("cannot write to standard
//! output: No space left on device"), where the bare error would leave the user to guess
//! which file was full. The error keeps its kind, so a closed pipe still ends quietly
//! ([`crate::exit::is_broken_pipe`]). `println!` is not used for answers: it panics when
//! the write fails.

use std::io::{self, IsTerminal, StdoutLock, Write};

pub struct Stdout(StdoutLock<'static>);

/// Standard output, locked for the caller's writes.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

impl Stdout {
    pub fn is_terminal(&self) -> bool {
        self.0.is_terminal()
    }
}

fn named(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write to standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(named)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// A table for people, in the style every command's tables share. Print it through [`fit`].
pub fn table() -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::UTF8_BORDERS_ONLY);
    table
}

/// The widest a table is drawn, whatever the terminal: lines past this are hard to follow
/// across, and a wide cell (a recommendation's summary) wraps instead.
pub const MAX_TABLE_WIDTH: u16 = 140;

/// Where stderr's notes are wrapped: they are read at any terminal, often an 80-column one.
const STDERR_WIDTH: usize = 80;

/// `table` made to fit: at most [`MAX_TABLE_WIDTH`] columns, and on a terminal narrower than
/// that (`$COLUMNS` when set, else what the terminal says) the terminal's width. A table
/// wider than its width has its padding tightened and its wide columns wrapped. Piped, the
/// width is [`MAX_TABLE_WIDTH`], so what a script reads does not depend on who ran it.
pub fn fit(mut table: comfy_table::Table) -> comfy_table::Table {
    use comfy_table::ContentArrangement;
    let width = if io::stdout().is_terminal() {
        columns()
            .or_else(|| table.width())
            .map_or(MAX_TABLE_WIDTH, |w| w.min(MAX_TABLE_WIDTH))
    } else {
        table.force_no_tty();
        MAX_TABLE_WIDTH
    };
    let natural = table
        .lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0);
    if natural <= usize::from(width) {
        return table;
    }
    // A heading wider than its column's values goes one word per line, leaving the width to
    // the values.
    let mut values = vec![0usize; table.column_count()];
    for row in table.row_iter() {
        for (widest, cell) in values.iter_mut().zip(row.cell_iter()) {
            let width = cell.content().lines().map(|l| l.chars().count()).max();
            *widest = (*widest).max(width.unwrap_or(0));
        }
    }
    let heading: Option<Vec<String>> = table.header().map(|row| {
        row.cell_iter()
            .zip(&values)
            .map(|(cell, &widest)| match cell.content() {
                text if text.chars().count() > widest => text.replace(' ', "\n"),
                text => text,
            })
            .collect()
    });
    if let Some(heading) = heading {
        table.set_header(heading);
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 1));
    }
    // Left to itself, the arrangement wraps every column a little (an id, a tool name cut in
    // two); the narrow columns keep their width instead and only the widest ones wrap.
    let keep = unwrapped_columns(&table.column_max_content_widths(), usize::from(width));
    for (column, keep) in table.column_iter_mut().zip(keep) {
        if keep {
            column.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
    table
        .set_width(width)
        .set_content_arrangement(ContentArrangement::Dynamic);
    table
}

/// The narrowest a wrapped column is made: narrower, a summary reads a word a line.
const MIN_WRAPPED: usize = 24;

/// Which columns of these content widths keep their width in a table `width` wide (two
/// border characters, one of padding per column): the narrowest first, as long as
/// [`MIN_WRAPPED`] is left for the columns that wrap.
fn unwrapped_columns(widths: &[u16], width: usize) -> Vec<bool> {
    let mut keep = vec![false; widths.len()];
    let mut order: Vec<usize> = (0..widths.len()).collect();
    order.sort_by_key(|&i| widths[i]);
    let mut used = 2;
    for (kept, &i) in order.iter().enumerate() {
        let reserve = if kept + 1 == order.len() {
            0
        } else {
            MIN_WRAPPED + 1
        };
        if used + usize::from(widths[i]) + 1 + reserve > width {
            break;
        }
        used += usize::from(widths[i]) + 1;
        keep[i] = true;
    }
    keep
}

/// `$COLUMNS`, when it holds a width.
fn columns() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0)
}

/// A line of prose for stdout, broken at its ` · ` separators (else at spaces) where it is
/// wider than the terminal (or than [`MAX_TABLE_WIDTH`], beside the tables); piped, it is
/// left whole for scripts to read.
pub fn fit_line(line: &str) -> String {
    let width = match io::stdout().is_terminal() {
        true => Some(usize::from(
            columns()
                .or_else(|| comfy_table::Table::new().width())
                .map_or(MAX_TABLE_WIDTH, |w| w.min(MAX_TABLE_WIDTH)),
        )),
        false => None,
    };
    match width {
        Some(width) if line.chars().count() > width => wrap(line, width),
        _ => line.to_string(),
    }
}

/// `line` in lines of at most `width` characters where its words allow: parts joined by
/// ` · ` stay whole when they fit, and go on a line of their own.
fn wrap(line: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for part in line.split(" · ") {
        let joined = if current.is_empty() {
            part.to_string()
        } else {
            format!("{current} · {part}")
        };
        if joined.chars().count() <= width {
            current = joined;
            continue;
        }
        if !current.is_empty() {
            lines.push(std::mem::take(&mut current));
        }
        for word in part.split(' ') {
            let joined = if current.is_empty() {
                word.to_string()
            } else {
                format!("{current} {word}")
            };
            if joined.chars().count() <= width || current.is_empty() {
                current = joined;
            } else {
                lines.push(std::mem::replace(&mut current, word.to_string()));
            }
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines.join("\n")
}

/// A note for stderr in lines of at most 80 columns where its words allow, the lines after
/// the first indented by two spaces; a `\n` in `text` starts a new line.
pub fn wrap_for_stderr(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for paragraph in text.split('\n') {
        let mut rest = paragraph.to_string();
        loop {
            let width = if lines.is_empty() {
                STDERR_WIDTH
            } else {
                STDERR_WIDTH - 2
            };
            let wrapped = wrap(&rest, width);
            let Some((first, after)) = wrapped.split_once('\n') else {
                lines.push(wrapped);
                break;
            };
            lines.push(first.to_string());
            rest = after.replace('\n', " ");
        }
    }
    lines.join("\n  ")
}

/// At a terminal, says on stderr that `command` waits for `what` on standard input: run by
/// hand with nothing piped in, it would otherwise wait in silence.
pub fn say_when_waiting(command: &str, what: &str) {
    if io::stdin().is_terminal() {
        say!(
            "metagate: {command}: reading {what} from standard input; end it with Ctrl-D (or pipe a file in: `metagate {command} < FILE`)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{unwrapped_columns, wrap, wrap_for_stderr};

    #[test]
    fn narrow_columns_keep_their_width_and_the_widest_wrap() {
        // id, kind, tool, confidence, summary in 120 columns: only the summary wraps.
        assert_eq!(
            unwrapped_columns(&[20, 18, 21, 10, 200], 120),
            [true, true, true, true, false]
        );
        // In 64 columns a column of 30 wraps too, so that 24 are left to wrap in.
        assert_eq!(unwrapped_columns(&[30, 8, 200], 64), [false, true, false]);
        // Everything fits: nothing wraps.
        assert_eq!(unwrapped_columns(&[3, 4], 80), [true, true]);
    }

    #[test]
    fn a_note_fits_80_columns_and_indents_what_follows() {
        let text = "metagate: note: ".to_string() + &"word ".repeat(60);
        let note = wrap_for_stderr(text.trim_end());
        let lines: Vec<&str> = note.lines().collect();
        assert!(lines.len() > 3, "{note}");
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{note}");
        assert!(lines[1..].iter().all(|l| l.starts_with("  word")), "{note}");
        assert_eq!(note.split_whitespace().count(), 62);
        assert_eq!(wrap_for_stderr("a\nb c"), "a\n  b c");
    }

    #[test]
    fn a_line_breaks_at_its_separators_then_its_spaces() {
        assert_eq!(wrap("aaa · bbb · ccc", 9), "aaa · bbb\nccc");
        assert_eq!(wrap("aaa bbb ccc · d", 7), "aaa bbb\nccc · d");
        // A word longer than the line stays whole.
        assert_eq!(wrap("a /a/very/long/path b", 5), "a\n/a/very/long/path\nb");
        assert_eq!(wrap("short", 80), "short");
    }
}
