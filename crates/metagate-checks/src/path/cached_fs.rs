//! A file system that remembers its answers for a short while, for streams of calls.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap, FxHashSet};

use super::{Fs, PathError};

/// [`RealFs`](super::RealFs) with a short memory, for streams that check many paths: each
/// answer is kept for at most `ttl`, and the whole memory is dropped when it expires or grows
/// past `CachedFs::CAPACITY` entries.
///
/// `std::fs::canonicalize` reads every component of a path again; here a path whose parent is
/// already known to be canonical costs one `lstat` (and nothing when seen within `ttl`). A
/// folder asked about `CachedFs::LIST_AFTER` times is read whole instead (when it holds at
/// most `CachedFs::MAX_LISTED` names), so new names in it cost no system call: an agent
/// writing `notes-1.md`, `notes-2.md`… would otherwise pay an `lstat` of a name the kernel
/// has never seen for each. The answers can be up to `ttl` old, which widens the window the
/// module documentation's TOCTOU note describes by that much.
pub struct CachedFs<C: Fn() -> Instant> {
    clock: C,
    ttl: Duration,
    pub(super) memory: RefCell<Memory>,
    /// Set while [`Fs::checked`] runs a check: the clock was read when it began, and one
    /// check takes microseconds, so the answers it asks for are not timed again.
    checking: Cell<bool>,
}

#[derive(Default)]
pub(super) struct Memory {
    since: Option<Instant>,
    /// Counts the times the memory was emptied, so a check can tell whether the answers it
    /// was made from are still here.
    generation: u64,
    // Keyed by the path's bytes: hashing a `Path` walks its components, several times slower.
    canonical: FxHashMap<OsString, Result<PathBuf, io::ErrorKind>>,
    links: FxHashMap<OsString, Result<PathBuf, io::ErrorKind>>,
    /// What is known of the folders names were looked up in (canonical folders only).
    pub(super) folders: FxHashMap<OsString, Folder>,
    /// Names kept in the listings of `folders`.
    listed: usize,
    /// Whole checks of raw paths, by the number of the rules they were made under (the last
    /// [`Memory::RULE_SETS`] sets: a run checks reading and writing arguments under two),
    /// made from the answers above: an agent names the same few files again and again.
    /// `Ok(None)`: the raw path itself.
    checks: Vec<(u64, Checks)>,
}

/// Answers of whole checks under one set of rules, by raw path.
type Checks = FxHashMap<String, Result<Option<String>, PathError>>;

/// A canonical folder, as far as looking names up in it goes.
pub(super) enum Folder {
    /// Names in it looked up one `lstat` at a time so far.
    Asked(u32),
    /// Read whole: the names in it that are symlinks, or whose type the listing did not
    /// tell. Any other name, there or not, is no symlink.
    Listed(FxHashSet<OsString>),
    /// Too big to keep, or unreadable: names in it are looked up one at a time.
    Unlisted,
}

impl Memory {
    /// Sets of rules whose checks are remembered at once.
    const RULE_SETS: usize = 4;

    fn len(&self) -> usize {
        self.canonical.len()
            + self.links.len()
            + self.folders.len()
            + self.listed
            + self
                .checks
                .iter()
                .map(|(_, checks)| checks.len())
                .sum::<usize>()
    }

    fn forget(&mut self) {
        self.canonical.clear();
        self.links.clear();
        self.folders.clear();
        self.listed = 0;
        self.checks.clear();
        self.generation += 1;
    }

    /// The checks remembered under the rules numbered `rules`, made room for when new.
    fn checks_under(&mut self, rules: u64) -> &mut Checks {
        let at = match self.checks.iter().position(|(id, _)| *id == rules) {
            Some(at) => at,
            None => {
                if self.checks.len() >= Self::RULE_SETS {
                    self.checks.remove(0);
                }
                self.checks.push((rules, Checks::default()));
                self.checks.len() - 1
            }
        };
        &mut self.checks[at].1
    }
}

impl<C: Fn() -> Instant> CachedFs<C> {
    /// Entries kept before the memory is dropped, whatever their age: enough for the files
    /// an agent works on within `ttl`, few enough for the tables to stay in cache.
    pub(super) const CAPACITY: usize = 1 << 13;
    /// Names looked up in one folder before the folder is read whole.
    pub(super) const LIST_AFTER: u32 = 8;
    /// Names a folder may hold and still be read whole.
    pub(super) const MAX_LISTED: usize = 1 << 10;

    /// Wraps the real file system; `clock` tells how old an answer is, `ttl` how long it is kept.
    pub fn new(clock: C, ttl: Duration) -> CachedFs<C> {
        CachedFs {
            clock,
            ttl,
            memory: RefCell::default(),
            checking: Cell::new(false),
        }
    }

    /// The memory, emptied first when it is too old or too big.
    fn memory(&self) -> std::cell::RefMut<'_, Memory> {
        let mut memory = self.memory.borrow_mut();
        if !self.checking.get() {
            let now = (self.clock)();
            let expired = memory
                .since
                .is_none_or(|since| now.saturating_duration_since(since) >= self.ttl);
            if expired {
                memory.forget();
                memory.since = Some(now);
            }
        }
        if memory.len() > Self::CAPACITY {
            memory.forget();
        }
        memory
    }
}

impl Memory {
    /// `canonicalize(parent/name)` with one `lstat`, when `parent` is known to be canonical
    /// and `parent/name` is not a symlink; `None` when that cannot be told so cheaply.
    fn shortcut(&mut self, path: &Path) -> Option<Result<PathBuf, io::ErrorKind>> {
        let parent = path.parent()?;
        path.file_name()?;
        match self.canonical.get(parent.as_os_str()) {
            Some(Ok(known)) if known == parent => self.lstat(path),
            _ => None,
        }
    }

    /// `canonicalize(path)` with one `lstat`, for a `path` whose parent is canonical: itself
    /// when it is no symlink, `NotFound` when it does not exist, `None` otherwise.
    fn lstat(&mut self, path: &Path) -> Option<Result<PathBuf, io::ErrorKind>> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_symlink() => {
                self.links
                    .insert(path.into(), Err(io::ErrorKind::InvalidInput));
                Some(Ok(path.to_path_buf()))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.links.insert(path.into(), Err(io::ErrorKind::NotFound));
                Some(Err(io::ErrorKind::NotFound))
            }
            _ => None,
        }
    }

    /// Whether `path`, a name in the canonical folder `parent`, is no symlink (existing or
    /// not): from the folder's listing once it has been asked about often enough, else from
    /// one `lstat`.
    fn no_link_in(&mut self, parent: &Path, path: &Path, list_after: u32, max: usize) -> bool {
        let Some(name) = path.file_name() else {
            return false;
        };
        match self.folders.get_mut(parent.as_os_str()) {
            None => {
                self.folders.insert(parent.into(), Folder::Asked(1));
            }
            Some(folder) => {
                if let Folder::Asked(asked) = folder {
                    *asked += 1;
                    if *asked >= list_after {
                        *folder = list(parent, max);
                        if let Folder::Listed(links) = folder {
                            self.listed += links.len();
                        }
                    }
                }
                if let Folder::Listed(links) = folder {
                    return !links.contains(name);
                }
            }
        }
        matches!(self.lstat(path), Some(Ok(_) | Err(io::ErrorKind::NotFound)))
    }
}

/// Reads `folder` whole, keeping the names that are symlinks or of a type not told.
fn list(folder: &Path, max: usize) -> Folder {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Folder::Unlisted;
    };
    let mut links = FxHashSet::default();
    for (count, entry) in entries.enumerate() {
        let Ok(entry) = entry else {
            return Folder::Unlisted;
        };
        if count >= max {
            return Folder::Unlisted;
        }
        if !entry.file_type().is_ok_and(|t| !t.is_symlink()) {
            links.insert(entry.file_name());
        }
    }
    Folder::Listed(links)
}

fn remembered(answer: &Result<PathBuf, io::ErrorKind>) -> io::Result<PathBuf> {
    answer.clone().map_err(io::Error::from)
}

impl<C: Fn() -> Instant> Fs for CachedFs<C> {
    fn resolves_to_itself(&self, parent: &Path, path: &Path) -> bool {
        let mut memory = self.memory();
        match memory.canonical.get(parent.as_os_str()) {
            Some(Ok(known)) if known == parent => {}
            // Remembered missing and read as no link: nothing below it exists either.
            Some(Err(io::ErrorKind::NotFound)) => {
                return matches!(
                    memory.links.get(parent.as_os_str()),
                    Some(Err(io::ErrorKind::NotFound))
                );
            }
            _ => return false,
        }
        match memory.links.get(path.as_os_str()) {
            // Read before as no symlink: one that exists, or none at all.
            Some(answer) => {
                return matches!(
                    answer,
                    Err(io::ErrorKind::InvalidInput | io::ErrorKind::NotFound)
                );
            }
            None if memory.canonical.contains_key(path.as_os_str()) => return false,
            None => {}
        }
        memory.no_link_in(parent, path, Self::LIST_AFTER, Self::MAX_LISTED)
    }

    fn canonical_form(&self, path: &Path) -> io::Result<Option<PathBuf>> {
        if let Some(answer) = self.memory().canonical.get(path.as_os_str()) {
            return match answer {
                Ok(canonical) if canonical == path => Ok(None),
                other => remembered(other).map(Some),
            };
        }
        let canonical = self.canonicalize(path)?;
        Ok((canonical != path).then_some(canonical))
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let mut memory = self.memory();
        if let Some(answer) = memory.canonical.get(path.as_os_str()) {
            return remembered(answer);
        }
        let answer = memory
            .shortcut(path)
            .unwrap_or_else(|| std::fs::canonicalize(path).map_err(|e| e.kind()));
        // A canonical path and every folder above it are their own canonical forms.
        if let Ok(canonical) = &answer {
            for known in canonical.ancestors() {
                if memory.canonical.contains_key(known.as_os_str()) {
                    break;
                }
                memory
                    .canonical
                    .insert(known.into(), Ok(known.to_path_buf()));
            }
        }
        memory.canonical.insert(path.into(), answer.clone());
        remembered(&answer)
    }

    // Not remembered: a link made since the last call must be seen at the next.
    fn file_links(&self, path: &Path) -> io::Result<Option<super::FileLinks>> {
        super::fs::real_file_links(path)
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        let mut memory = self.memory();
        if let Some(answer) = memory.links.get(path.as_os_str()) {
            return remembered(answer);
        }
        let answer = std::fs::read_link(path).map_err(|e| e.kind());
        memory.links.insert(path.into(), answer.clone());
        remembered(&answer)
    }

    fn checked<'a>(
        &self,
        rules: u64,
        raw: &'a str,
        check: &mut dyn FnMut() -> Result<Cow<'a, str>, PathError>,
    ) -> Result<Cow<'a, str>, PathError> {
        // Left set only by a check that panicked.
        self.checking.set(false);
        let generation = {
            let memory = self.memory();
            if let Some(answer) = memory
                .checks
                .iter()
                .find(|(id, _)| *id == rules)
                .and_then(|(_, checks)| checks.get(raw))
            {
                return match answer {
                    Ok(None) => Ok(Cow::Borrowed(raw)),
                    Ok(Some(relative)) => Ok(Cow::Owned(relative.clone())),
                    Err(e) => Err(e.clone()),
                };
            }
            memory.generation
        };
        self.checking.set(true);
        let answer = check();
        self.checking.set(false);
        // Kept only when every answer the check used is still remembered: the memory was
        // not emptied while it ran.
        let mut memory = self.memory.borrow_mut();
        if memory.generation == generation {
            let kept = match &answer {
                Ok(Cow::Borrowed(_)) => Ok(None),
                Ok(Cow::Owned(relative)) => Ok(Some(relative.clone())),
                Err(e) => Err(e.clone()),
            };
            memory.checks_under(rules).insert(raw.to_string(), kept);
        }
        answer
    }
}
