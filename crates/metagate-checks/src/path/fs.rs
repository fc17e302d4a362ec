//! The file system the check reads, passed in so that it stays testable.

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};

use super::PathError;

/// A regular file's identity and how many names (hard links) it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLinks {
    /// The device it is on.
    pub dev: u64,
    /// Its inode on that device.
    pub ino: u64,
    /// How many names it has.
    pub nlink: u64,
}

/// [`Fs::file_links`] as `std::fs` answers it.
pub fn real_file_links(path: &Path) -> io::Result<Option<FileLinks>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => Ok(Some(FileLinks {
                dev: m.dev(),
                ino: m.ino(),
                nlink: m.nlink(),
            })),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(None)
    }
}

/// The file system, passed in so the checks are testable.
pub trait Fs {
    /// The identity and link count of the regular file `path` resolves to; None when it is
    /// missing or not a regular file. A file with more than one name may be reached under a
    /// name no rule looked at (a hard link inside the root to the policy, the store or
    /// `~/.bashrc`).
    fn file_links(&self, path: &Path) -> io::Result<Option<FileLinks>>;
    /// `std::fs::canonicalize`: resolves symlinks, fails when the path does not exist.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// `std::fs::read_link`: the target of a symlink, without following it; fails when `path`
    /// is not a symlink. Used only for links `canonicalize` cannot resolve (dangling or
    /// looping), so that a dangling link pointing outside the root is caught.
    fn read_link(&self, path: &Path) -> io::Result<PathBuf>;
    /// [`Fs::canonicalize`], answering `None` when `path` already is canonical (the common
    /// case, which then costs no copy).
    fn canonical_form(&self, path: &Path) -> io::Result<Option<PathBuf>> {
        let canonical = self.canonicalize(path)?;
        Ok((canonical != path).then_some(canonical))
    }
    /// Whether the kernel resolves `path` (a clean absolute path, `parent` its parent) to
    /// itself, told from what this file system remembers about the parent: the parent is
    /// canonical and `path` is no symlink, or the parent is missing (and no symlink), so `path`
    /// is too. False when that takes more than one `lstat` to tell; [`check`](super::check)
    /// then walks the path component by component.
    fn resolves_to_itself(&self, _parent: &Path, _path: &Path) -> bool {
        false
    }
    /// [`check`](super::check)'s answer for `raw` under the rules numbered `rules`: `check`
    /// computes it, unless this file system remembers it. [`CachedFs`](super::CachedFs)
    /// remembers answers exactly as long as the file-system answers they were made from.
    fn checked<'a>(
        &self,
        _rules: u64,
        _raw: &'a str,
        check: &mut dyn FnMut() -> Result<Cow<'a, str>, PathError>,
    ) -> Result<Cow<'a, str>, PathError> {
        check()
    }
}

/// [`Fs`] backed by `std::fs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl Fs for RealFs {
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::read_link(path)
    }

    fn file_links(&self, path: &Path) -> io::Result<Option<FileLinks>> {
        real_file_links(path)
    }
}
