//! The running metagate binary, known by its file identity (device and inode), so that a
//! shell command cannot run it under another name: a renamed copy made by a hard link, or a
//! symlink to it. (A copy made by `cp` is another file: the shell check refuses commands
//! naming the binary's path, so one cannot be made without naming it.)

use std::cell::RefCell;
use std::ffi::OsStr;
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
        std::fs::metadata(path).is_ok_and(|m| m.dev() == self.device && m.ino() == self.inode)
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
            (meta.is_file() && meta.mode() & 0o111 != 0).then_some(meta)
        });
        let is = found.is_some_and(|m| m.dev() == self.device && m.ino() == self.inode);
        let mut names = self.names.borrow_mut();
        if names.len() >= MAX_REMEMBERED {
            names.clear();
        }
        names.insert(command.into(), is);
        is
    }
}
