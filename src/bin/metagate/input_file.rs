//! Opening the files metagate is told to read (`lint`, `record`, `--policy`, its imports,
//! `--tools`): regular files only, each read within a bound. A FIFO would be waited on for
//! ever (its open blocks until a writer comes), and a device such as `/dev/zero` never ends.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading when it is a regular file (a symbolic link to one counts), else
/// says what it is. Opened without blocking, so that a FIFO is refused, not waited on.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {}, not a regular file",
            path.display(),
            kind_of(kind)
        ),
    ))
}

fn kind_of(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

/// Reads all of `reader`, refusing more than `cap` bytes (`what` names it in the error).
pub fn read_capped(reader: impl Read, cap: u64, what: &str) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the {} MiB metagate reads as {what}", cap >> 20),
        ));
    }
    Ok(bytes)
}

/// The first line of `bytes` longer than `cap`: its number, from 1.
pub fn overlong_line(bytes: &[u8], cap: usize) -> Option<usize> {
    bytes
        .split(|&b| b == b'\n')
        .position(|line| line.len() > cap)
        .map(|i| i + 1)
}
