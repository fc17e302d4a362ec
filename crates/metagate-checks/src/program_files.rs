//! The files command words run, found as bash finds them (a path from the working folder,
//! or the first executable file of that name on `PATH`) and resolved: every link followed
//! (`editor` → `/etc/alternatives/editor` → `vim.basic`), and a forwarding script read as
//! what it hands its arguments to ([`shell::read_forwarder`]). The shell check, which reads
//! no file, gets these answers through [`shell::World::program`].

use std::cell::RefCell;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::shell::{self, Resolved};

/// Command names remembered: past this many, the memory starts again.
const MAX_REMEMBERED: usize = 4096;

/// Where commands are looked up, and what was found.
#[derive(Debug)]
pub struct ProgramFiles {
    /// `PATH`'s folders, in order (an empty entry is the working folder).
    search: Vec<PathBuf>,
    cwd: PathBuf,
    found: RefCell<FxHashMap<Box<[u8]>, Option<Resolved>>>,
}

/// A clone starts with nothing remembered.
impl Clone for ProgramFiles {
    fn clone(&self) -> ProgramFiles {
        ProgramFiles {
            search: self.search.clone(),
            cwd: self.cwd.clone(),
            found: RefCell::default(),
        }
    }
}

impl ProgramFiles {
    /// Commands looked up in `path_var` (`PATH`), relative paths taken from `cwd`.
    pub fn new(path_var: Option<&OsStr>, cwd: &Path) -> ProgramFiles {
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
        ProgramFiles {
            search,
            cwd: cwd.to_path_buf(),
            found: RefCell::default(),
        }
    }

    /// The file running `command` runs, resolved; None when there is none (bash would say
    /// "command not found") or it cannot be read.
    pub fn resolve(&self, command: &[u8]) -> Option<Resolved> {
        if command.is_empty() {
            return None;
        }
        if let Some(known) = self.found.borrow().get(command) {
            return known.clone();
        }
        let found = self.find(command).and_then(|file| resolve_file(&file));
        let mut remembered = self.found.borrow_mut();
        if remembered.len() >= MAX_REMEMBERED {
            remembered.clear();
        }
        remembered.insert(command.into(), found.clone());
        found
    }

    fn find(&self, command: &[u8]) -> Option<PathBuf> {
        let name = OsStr::from_bytes(command);
        if command.contains(&b'/') {
            return Some(self.cwd.join(name));
        }
        self.search.iter().find_map(|dir| {
            let candidate = dir.join(name);
            let meta = std::fs::metadata(&candidate).ok()?;
            (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(candidate)
        })
    }
}

/// `file` with its links followed, and what it hands on to when it is a forwarding script.
fn resolve_file(file: &Path) -> Option<Resolved> {
    let real = std::fs::canonicalize(file).ok()?;
    let name = real.file_name()?.as_bytes().into();
    let mut head = Vec::with_capacity(256);
    let forwards = std::fs::File::open(&real).ok().and_then(|f| {
        f.take(shell::SCRIPT_HEAD_BYTES as u64)
            .read_to_end(&mut head)
            .ok()?;
        shell::read_forwarder(&head)
    });
    Some(Resolved { name, forwards })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn executable(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn links_and_forwarding_scripts_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let alternatives = dir.path().join("alternatives");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&alternatives).unwrap();
        executable(&bin.join("vim.basic"), "\x7fELF");
        symlink(bin.join("vim.basic"), alternatives.join("editor")).unwrap();
        symlink(alternatives.join("editor"), bin.join("editor")).unwrap();
        executable(
            &bin.join("command"),
            "#!/usr/bin/sh\nbuiltin command \"$@\"\n",
        );
        std::fs::write(bin.join("plain"), "not executable").unwrap();
        let files = ProgramFiles::new(Some(bin.as_os_str()), dir.path());
        let editor = files.resolve(b"editor").unwrap();
        assert_eq!(&*editor.name, b"vim.basic");
        assert_eq!(editor.forwards, None);
        let command = files.resolve(b"command").unwrap();
        assert_eq!(
            command.forwards,
            Some(shell::Forward {
                builtin: true,
                name: (*b"command").into()
            })
        );
        assert_eq!(files.resolve(b"plain"), None);
        assert_eq!(files.resolve(b"missing"), None);
        assert_eq!(&*files.resolve(b"bin/editor").unwrap().name, b"vim.basic");
    }
}
