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
