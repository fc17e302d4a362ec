//! What to do about a telemetry store that cannot be used: the error names the file and what
//! the system said; the hint after it names the ways out, which depend on the fault and on
//! whether the command can run without a store at all.

use std::path::Path;

use metagate_store::StoreError;

/// The hint for the first store error in `err`'s chain, when there is one the message itself
/// does not already answer. `optional_in` names the command when it can run without a store
/// (`--no-telemetry`).
pub fn for_error(err: &anyhow::Error, optional_in: Option<&str>) -> Option<String> {
    let store_error = err.chain().find_map(|e| e.downcast_ref::<StoreError>())?;
    let elsewhere = "name another store (--db FILE, or METAGATE_DB=FILE)";
    let without = optional_in.map_or_else(String::new, |command| {
        format!(", or record nothing ({command} --no-telemetry)")
    });
    let fix = match store_error {
        StoreError::Io { path, source } => match in_the_way(path) {
            Some(Blocked::Missing(folder)) => format!(
                "the folder {} does not exist and could not be made ({}): create it, \
                 {elsewhere}{without}",
                folder.display(),
                io_reason(source)
            ),
            Some(Blocked::NotAFolder(file)) => format!(
                "{} is a file, not a folder: {elsewhere}{without}",
                file.display()
            ),
            None => format!("{elsewhere}{without}"),
        },
        StoreError::ReadOnly(path) => format!(
            "give this user write access to {} and its folder, {elsewhere}{without}",
            path.display()
        ),
        StoreError::Full(_) => format!("free space on that disk, {elsewhere}{without}"),
        StoreError::WriteFailed { .. } | StoreError::NoWal { .. } => {
            format!("{elsewhere}{without}")
        }
        StoreError::Locked { .. } | StoreError::PgLocked { .. } => format!(
            "wait for the other process, raise telemetry.busy_timeout_ms in the policy, \
             {elsewhere}{without}"
        ),
        StoreError::Unreachable { .. } | StoreError::PgRefused { .. } => format!(
            "check that the server is up and this role may write there, {elsewhere}{without}"
        ),
        _ => return None,
    };
    Some(format!("metagate: hint: {fix}"))
}

/// What stands between the store's file and its folder.
enum Blocked<'a> {
    /// The store's folder, some of which does not exist.
    Missing(&'a Path),
    /// A file where a folder above the store should be.
    NotAFolder(&'a Path),
}

/// Why the store's folder is not there: the nearest path above the file that exists is a
/// file, or the folder (or one above it) is missing.
fn in_the_way(path: &Path) -> Option<Blocked<'_>> {
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    let existing = folder.ancestors().find(|dir| dir.exists());
    match existing {
        Some(dir) if dir == folder && dir.is_dir() => None,
        Some(dir) if !dir.is_dir() => Some(Blocked::NotAFolder(dir)),
        _ => Some(Blocked::Missing(folder)),
    }
}

/// What the system said, without Rust's `(os error N)`.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
