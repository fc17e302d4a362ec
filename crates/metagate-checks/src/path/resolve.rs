//! Walking a path the way the kernel does, component by component, through symlinks.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::process_links::is_process_link;
use super::{Fs, PathError};

/// Symlink hops followed before giving up, as Linux does (`ELOOP`).
pub(super) const MAX_SYMLINK_HOPS: usize = 40;

/// One path component to walk.
#[derive(Debug)]
pub(super) enum Step {
    Root,
    Parent,
    Name(OsString),
}

/// The components of `path` to walk (`.` dropped).
pub(super) fn steps(path: &Path) -> Vec<Step> {
    path.components()
        .filter_map(|component| match component {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Parent),
            Component::Normal(name) => Some(Step::Name(name.to_os_string())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// `.` dropped, `..` pops (never above `/`). For absolute paths.
pub(super) fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// An absolute path, normalized; `None` for a relative one (an `Fs` must not return those).
pub(super) fn clean_absolute(path: PathBuf) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    // What `canonicalize` returns is already clean: keep it rather than rebuild it.
    let bytes = path.as_os_str().as_encoded_bytes();
    let tidy = bytes == b"/"
        || (!bytes.ends_with(b"/")
            && !bytes.ends_with(b"/.")
            && !bytes.ends_with(b"/..")
            && memchr::memmem::find(bytes, b"//").is_none()
            && memchr::memmem::find(bytes, b"/./").is_none()
            && memchr::memmem::find(bytes, b"/../").is_none());
    Some(if tidy { path } else { lexical_normalize(&path) })
}

/// Walks `steps` from `start` (an absolute, canonical directory) the way the kernel does.
///
/// `current` is canonical up to its last `missing` components, which do not exist (or could
/// not be resolved) and are kept as written; `..` pops, from the canonical form when nothing
/// is missing, so it follows symlinks the way the kernel does. Symlinks are followed one hop
/// at a time (their targets spliced in front of what is left to walk), so that every folder
/// the walk passes through is seen: a link to `/proc/self/cwd` is refused as that, not taken
/// for where it leads in metagate's own process.
pub(super) fn resolve(
    start: PathBuf,
    path_steps: Vec<Step>,
    root: &Path,
    fs: &dyn Fs,
) -> Result<PathBuf, PathError> {
    walk(start, path_steps, root, fs, &mut |_| {})
}

/// [`resolve`], telling `visit` each place the walk stands on after a name: every folder it
/// goes through (a symlink's target, not the link) and the end, the kernel's route to it.
pub(super) fn walk(
    start: PathBuf,
    path_steps: Vec<Step>,
    root: &Path,
    fs: &dyn Fs,
    visit: &mut impl FnMut(&Path),
) -> Result<PathBuf, PathError> {
    let mut pending: Vec<Step> = path_steps;
    pending.reverse();
    let mut current = start;
    let mut missing = 0usize;
    let mut hops = 0usize;
    while let Some(step) = pending.pop() {
        match step {
            Step::Root => {
                current = PathBuf::from("/");
                missing = 0;
            }
            Step::Parent => {
                // `missing/..`: the kernel refuses it, but a tool that creates parent folders
                // first (`mkdir -p`) creates `missing`, so it must be inside the root.
                if missing > 0 && !current.starts_with(root) {
                    return Err(PathError::Outside {
                        root: root.to_path_buf(),
                        resolved: current,
                    });
                }
                current.pop();
                missing = missing.saturating_sub(1);
            }
            Step::Name(name) => {
                current.push(&name);
                if is_process_link(&current) {
                    return Err(PathError::ProcessLink { path: current });
                }
                if missing > 0 {
                    missing += 1;
                    visit(&current);
                    continue;
                }
                // `current`'s parent is canonical: when `current` is not, it is a symlink.
                let canonical = match fs.canonical_form(&current) {
                    Ok(None) => {
                        visit(&current);
                        continue;
                    }
                    Ok(Some(canonical)) => clean_absolute(canonical),
                    Err(_) => None,
                };
                match fs.read_link(&current) {
                    // Followed by hand, resolving or not: a dangling link is followed too,
                    // since creating a file through it creates the target.
                    Ok(target) => {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            return Err(PathError::SymlinkLoop { path: current });
                        }
                        current.pop();
                        let mut spliced = steps(&target);
                        spliced.reverse();
                        pending.extend(spliced);
                    }
                    // Not a link after all (a file system that knows only canonical forms).
                    Err(_) => {
                        match canonical {
                            Some(canonical) => current = canonical,
                            None => missing = 1,
                        }
                        visit(&current);
                    }
                }
            }
        }
    }
    Ok(current)
}
