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

/// `table` made to fit the terminal: on a terminal narrower than the table (`$COLUMNS` when
/// set, else what the terminal says), its padding is tightened and its wide columns wrap.
/// Piped, or on a terminal wide enough, it keeps its natural shape, so what a script reads
/// does not depend on who ran it.
pub fn fit(mut table: comfy_table::Table) -> comfy_table::Table {
    use comfy_table::ContentArrangement;
    if !io::stdout().is_terminal() {
        table.force_no_tty();
        return table;
    }
    let Some(width) = columns().or_else(|| table.width()) else {
        return table;
    };
    let natural = table
        .lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0);
    if natural <= usize::from(width) {
        return table;
    }
    // A heading one word per line leaves the width to the values.
    let heading: Option<Vec<String>> = table.header().map(|row| {
        row.cell_iter()
            .map(|cell| cell.content().replace(' ', "\n"))
            .collect()
    });
    if let Some(heading) = heading {
        table.set_header(heading);
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 1));
    }
    table
        .set_width(width)
        .set_content_arrangement(ContentArrangement::Dynamic);
    table
}

/// `$COLUMNS`, when it holds a width.
fn columns() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0)
}

/// A line of prose for stdout, broken at its ` · ` separators (else at spaces) where a
/// terminal is narrower than it; piped, it is left whole, as [`fit`] leaves tables.
pub fn fit_line(line: &str) -> String {
    let width = match io::stdout().is_terminal() {
        true => columns()
            .or_else(|| comfy_table::Table::new().width())
            .map(usize::from),
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
    use super::wrap;

    #[test]
    fn a_line_breaks_at_its_separators_then_its_spaces() {
        assert_eq!(wrap("aaa · bbb · ccc", 9), "aaa · bbb\nccc");
        assert_eq!(wrap("aaa bbb ccc · d", 7), "aaa bbb\nccc · d");
        // A word longer than the line stays whole.
        assert_eq!(wrap("a /a/very/long/path b", 5), "a\n/a/very/long/path\nb");
        assert_eq!(wrap("short", 80), "short");
    }
}
