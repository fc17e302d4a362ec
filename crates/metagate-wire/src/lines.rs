//! Reading line-based input (JSON Lines) with a bound on each line's length, so one huge line,
//! or an input with no newline at all, cannot exhaust memory.

use std::io::{self, BufRead};

/// The longest line `gate` and `record` read as one call or event: 64 MiB.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// How far a line too long to keep is read past before the input is given up: no producer
/// of JSON Lines writes a line of a GiB, and an input without an end of line (`/dev/zero`)
/// would otherwise be read for ever.
pub const MAX_SKIP: usize = 1 << 30;

/// Reads one line into `line` (appended, its newline included) and returns how many bytes it
/// took in the input, 0 at the end. A line longer than `cap` is consumed to its end, but only
/// its first `cap + 1` bytes are kept: `line.len() > cap` once its newline is taken off says it
/// was too long. A line going on past [`MAX_SKIP`] bytes is an error (`InvalidData`).
pub fn read_line_capped<R: BufRead + ?Sized>(
    reader: &mut R,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(total);
        }
        let (used, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = (cap + 1).saturating_sub(line.len());
        line.extend_from_slice(&available[..used.min(room)]);
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
        if total > MAX_SKIP.max(cap) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "a line goes on past {} MiB without ending: not JSON Lines",
                    MAX_SKIP.max(cap) >> 20
                ),
            ));
        }
    }
}

/// A line without its line end (`\n` or `\r\n`).
pub fn strip_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_consumed_whole_and_kept_short() {
        let input = b"ab\nabcdefgh\r\nabcd\nxyz".to_vec();
        // A small buffer, so a line spans several reads.
        let mut reader = io::BufReader::with_capacity(3, &input[..]);
        let mut line = Vec::new();
        let mut read = |line: &mut Vec<u8>| {
            line.clear();
            read_line_capped(&mut reader, line, 4).unwrap()
        };
        assert_eq!(read(&mut line), 3);
        assert_eq!(strip_newline(&line), b"ab");
        assert_eq!(read(&mut line), 10);
        assert_eq!(line, b"abcde", "cap + 1 bytes kept");
        assert!(strip_newline(&line).len() > 4);
        assert_eq!(read(&mut line), 5);
        assert_eq!(
            strip_newline(&line),
            b"abcd",
            "exactly the cap is not too long"
        );
        assert_eq!(read(&mut line), 3);
        assert_eq!(line, b"xyz", "a last line without its newline");
        assert_eq!(read(&mut line), 0);
    }
}
