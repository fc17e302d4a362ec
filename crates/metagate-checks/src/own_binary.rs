//! The running metagate binary, known by its file identity, so that a shell command cannot
//! run it under another name: a hard link or a symlink to it (the same device and inode), or
//! a copy (a file of the same size and the same bytes: a command that found the binary
//! without naming it, `find / -name metag* -exec cp {} x \;`, can copy it).

use std::cell::RefCell;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

/// Command names remembered: past this many, the memory starts again.
const MAX_REMEMBERED: usize = 4096;

/// The binary and where a shell looks commands up.
#[derive(Debug)]
pub struct OwnBinary {
    path: PathBuf,
    device: u64,
    inode: u64,
    size: u64,
    /// `PATH`'s folders, in order (an empty entry is the working folder).
    search: Vec<PathBuf>,
    cwd: PathBuf,
    /// Names looked up on the path, and whether they are the binary: a stream checks the same
    /// few commands over and over.
    names: RefCell<FxHashMap<Box<[u8]>, bool>>,
}

/// A clone starts with nothing remembered.
impl Clone for OwnBinary {
    fn clone(&self) -> OwnBinary {
        OwnBinary {
            path: self.path.clone(),
            device: self.device,
            inode: self.inode,
            size: self.size,
            search: self.search.clone(),
            cwd: self.cwd.clone(),
            names: RefCell::default(),
        }
    }
}

impl OwnBinary {
    /// `exe` is the running binary (`std::env::current_exe`), `path_var` the `PATH` commands
    /// are looked up in, `cwd` the folder relative command paths start from. None when the
    /// binary cannot be read.
    pub fn new(exe: &Path, path_var: Option<&OsStr>, cwd: &Path) -> Option<OwnBinary> {
        let meta = std::fs::metadata(exe).ok()?;
        let search = path_var
            .map(|p| {
                p.as_bytes()
                    .split(|b| *b == b':')
                    .map(|dir| {
                        if dir.is_empty() {
                            cwd.to_path_buf()
                        } else {
                            cwd.join(OsStr::from_bytes(dir))
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(OwnBinary {
            path: std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf()),
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.len(),
            search,
            cwd: cwd.to_path_buf(),
            names: RefCell::default(),
        })
    }

    /// The binary's path, resolved.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn same_file(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| self.same_as(path, &m))
    }

    /// Whether the file at `path`, described by `meta`, is the binary or a copy of it. Only a
    /// file of exactly the binary's size is read, so other programs cost one `stat`.
    fn same_as(&self, path: &Path, meta: &std::fs::Metadata) -> bool {
        if meta.dev() == self.device && meta.ino() == self.inode {
            return true;
        }
        meta.is_file() && meta.len() == self.size && same_bytes(&self.path, path)
    }

    /// Whether running `command` (a path, or a name looked up on the path as bash does:
    /// the first executable file of that name) runs this binary.
    pub fn is(&self, command: &[u8]) -> bool {
        if command.is_empty() {
            return false;
        }
        if command.contains(&b'/') {
            return self.same_file(&self.cwd.join(OsStr::from_bytes(command)));
        }
        if let Some(known) = self.names.borrow().get(command) {
            return *known;
        }
        let found = self.search.iter().find_map(|dir| {
            let candidate = dir.join(OsStr::from_bytes(command));
            let meta = std::fs::metadata(&candidate).ok()?;
            (meta.is_file() && meta.mode() & 0o111 != 0).then_some((candidate, meta))
        });
        let is = found.is_some_and(|(path, m)| self.same_as(&path, &m));
        let mut names = self.names.borrow_mut();
        if names.len() >= MAX_REMEMBERED {
            names.clear();
        }
        names.insert(command.into(), is);
        is
    }
}

/// Whether two files hold the same bytes; a file that cannot be read is taken for the same
/// (the check then refuses: it cannot tell).
fn same_bytes(a: &Path, b: &Path) -> bool {
    let (Ok(mut a), Ok(mut b)) = (File::open(a), File::open(b)) else {
        return true;
    };
    let mut left = vec![0; 64 * 1024];
    let mut right = vec![0; 64 * 1024];
    loop {
        let n = match a.read(&mut left) {
            Ok(n) => n,
            Err(_) => return true,
        };
        if n == 0 {
            return b.read(&mut right[..1]).is_ok_and(|m| m == 0);
        }
        if b.read_exact(&mut right[..n]).is_err() {
            return true;
        }
        if left[..n] != right[..n] {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_the_binary_and_another_file_of_its_size_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("exe");
        std::fs::write(&exe, b"#!/bin/sh\necho a\n").unwrap();
        std::fs::write(dir.path().join("copy"), b"#!/bin/sh\necho a\n").unwrap();
        std::fs::write(dir.path().join("other"), b"#!/bin/sh\necho b\n").unwrap();
        std::fs::write(dir.path().join("longer"), b"#!/bin/sh\necho a\n\n").unwrap();
        std::os::unix::fs::symlink(&exe, dir.path().join("link")).unwrap();
        let own = OwnBinary::new(&exe, None, dir.path()).unwrap();
        assert!(own.is(b"./exe"));
        assert!(own.is(b"./copy"));
        assert!(own.is(b"./link"));
        assert!(!own.is(b"./other"));
        assert!(!own.is(b"./longer"));
        assert!(!own.is(b"./missing"));
    }
}
