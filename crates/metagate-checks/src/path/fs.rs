//! The file system the check reads, passed in so that it stays testable.

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};

use super::PathError;

/// The file system, passed in so the checks are testable.
pub trait Fs {
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
}
