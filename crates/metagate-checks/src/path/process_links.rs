//! Paths the kernel resolves differently in each process: metagate checks a path in its own
//! process, and the tool opens it in another, so for these the check would judge the wrong
//! file.
//!
//! `/proc/self/cwd` is metagate's working folder when metagate resolves it and the tool's when
//! the tool opens it; `/proc/self/root` is the process's root (another one in a container or a
//! chroot); `/proc/<pid>/fd/N` is whatever that process holds open (metagate's own store among
//! them). Their targets are not even paths the kernel walks: an `fd` link opens the very file
//! that process opened, deleted or not, and its text may read `pipe:[123]`. So they are refused
//! by name, wherever the walk meets them: written out, reached through `..`, or as the target
//! of a symlink (which [`resolve`](super::resolve::resolve) follows one hop at a time for this).
//!
//! Limits: procfs is recognized at `/proc`; one mounted elsewhere is not known.

use std::path::{Component, Path};

/// Links in `/proc/<pid>/` and `/proc/<pid>/task/<tid>/` whose targets are the process's own.
const PER_PROCESS: [&str; 6] = ["cwd", "root", "exe", "fd", "map_files", "ns"];

/// Whether `path` (absolute, `.`-free; its last component just walked) is a per-process link
/// or an alias of a process's own folder: `/proc/self`, `/proc/thread-self`,
/// `/proc/*/{cwd,root,exe,fd,map_files,ns}` and the same under `/proc/*/task/*/`, `/dev/fd`
/// and `/dev/stdin`, `/dev/stdout`, `/dev/stderr` (links into `/proc/self/fd`).
pub(super) fn is_process_link(path: &Path) -> bool {
    if !may_be_process_link(path.as_os_str().as_encoded_bytes()) {
        return false;
    }
    let mut names = [None; 6];
    let mut count = 0;
    for component in path.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(name) if count < names.len() => {
                names[count] = name.to_str();
                count += 1;
            }
            _ => return false,
        }
    }
    let per_process = |name: Option<&str>| name.is_some_and(|n| PER_PROCESS.contains(&n));
    match (count, names) {
        (2, [Some("dev"), Some("fd" | "stdin" | "stdout" | "stderr"), ..]) => true,
        (2, [Some("proc"), Some("self" | "thread-self"), ..]) => true,
        (3, [Some("proc"), Some(_), link, ..]) => per_process(link),
        (5, [Some("proc"), Some(_), Some("task"), Some(_), link, _]) => per_process(link),
        _ => false,
    }
}

/// The cheap screen: only paths in `/proc` or `/dev` can be one (`bytes` is an absolute path).
pub(super) fn may_be_process_link(bytes: &[u8]) -> bool {
    bytes.starts_with(b"/proc/") || bytes.starts_with(b"/dev/")
}
