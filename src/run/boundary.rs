//! The boundary as the kernel takes it: a Landlock ruleset, the mounts of a private mount
//! namespace, and the names to sweep afterwards, made from the policy's [`Boundary`].
//!
//! Landlock only allows: a rule grants rights on a file or a folder and everything under it,
//! and nothing can take a right back below. So "read everything but these files" is built as
//! its complement: along the way from `/` to each hidden file, every other entry of each
//! folder is allowed, and the folders on the way get only the right to be listed. A hidden file
//! inside a folder the command may write cannot be kept out that way (the folder's rule covers
//! it): such a file is covered, in a mount namespace of the command's own, by an empty
//! read-only file, and the folders between it and the writable folder are pinned (a mount
//! point cannot be moved or removed). A hidden file that does not exist yet, inside a writable
//! folder, can be created: `run` removes it once the command and everything it started have
//! ended (see [`Plan::sweep`]).

use std::collections::HashMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use metagate_core::policy::run::Boundary;

use super::kernel::Kernel;

/// The newest Landlock ABI asked for; older kernels enforce what they have (and `run` says
/// what that is, see [`Kernel`]).
const ABI_WANTED: ABI = ABI::V10;

/// Device files every program may write: writes to them go nowhere.
const SINKS: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// A mount of the command's mount namespace. In it everything is read-only but the
/// [`Mount::Writable`] folders and the pins: Landlock does not decide a file's mode, owner,
/// times or extended attributes (`chmod`, `chown`, `touch -d`, `setfattr`), a read-only mount
/// does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mount {
    /// A folder the command may write: a mount of its own, left writable.
    Writable(PathBuf),
    /// A folder mounted on itself, so that it cannot be moved or removed (left writable).
    Pin(PathBuf),
    /// An empty read-only file mounted over a hidden file.
    Cover(PathBuf),
}

/// Whether this process can give a command a mount namespace: root can; another user needs
/// a user namespace, which the system may not allow.
pub fn mount_namespaces() -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    read("/proc/sys/user/max_user_namespaces").is_some_and(|n| n != "0")
        && read("/proc/sys/kernel/unprivileged_userns_clone").is_none_or(|n| n != "0")
        && read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").is_none_or(|n| n != "1")
}

/// The boundary, ready for the kernel.
pub struct Plan {
    /// The Landlock ruleset (none when running unconfined).
    pub ruleset: Option<RulesetCreated>,
    /// The mounts of the command's namespace (none: no mount namespace).
    pub mounts: Vec<Mount>,
    /// Hidden names inside writable folders that did not exist: removed if the command made
    /// them.
    pub sweep: Vec<PathBuf>,
    /// Folders `[run] write` names that do not exist, so were not allowed.
    pub missing: Vec<PathBuf>,
}

/// Why the boundary cannot be built.
#[derive(Debug)]
pub struct PlanError(pub String);

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlanError {}

/// `path` resolved as far as it exists, the rest appended as written (`..` in the rest is
/// dropped with the name before it).
pub fn resolve_existing(path: &Path) -> PathBuf {
    Resolver::default().resolve_existing(path)
}

/// Canonical paths, each folder asked of the file system once: the hidden paths of one plan
/// share most of their folders, and resolving each from `/` took hundreds of `readlink` calls
/// per command.
#[derive(Default)]
struct Resolver {
    known: HashMap<PathBuf, Option<PathBuf>>,
}

impl Resolver {
    /// What `fs::canonicalize` answers (none for an error), built on the parent's answer when
    /// the last name is a plain name that is not a symbolic link.
    fn canonical(&mut self, path: &Path) -> Option<PathBuf> {
        if let Some(known) = self.known.get(path) {
            return known.clone();
        }
        let found = match (path.parent(), path.components().next_back()) {
            (Some(parent), Some(Component::Normal(name))) if !parent.as_os_str().is_empty() => {
                self.canonical(parent).and_then(|mut real| {
                    real.push(name);
                    match fs::symlink_metadata(&real) {
                        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(&real).ok(),
                        Ok(_) => Some(real),
                        Err(_) => None,
                    }
                })
            }
            _ => fs::canonicalize(path).ok(),
        };
        self.known.insert(path.to_path_buf(), found.clone());
        found
    }

    fn resolve_existing(&mut self, path: &Path) -> PathBuf {
        let parts: Vec<Component<'_>> = path.components().collect();
        for cut in (1..=parts.len()).rev() {
            let head: PathBuf = parts[..cut].iter().collect();
            let Some(mut out) = self.canonical(&head) else {
                continue;
            };
            for part in &parts[cut..] {
                match part {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other),
                }
            }
            return out;
        }
        path.to_path_buf()
    }
}

/// Builds the plan for `boundary`; `extra_write` are folders of `run`'s own (the command's
/// temporary folder).
pub fn plan(
    boundary: &Boundary,
    extra_write: &[PathBuf],
    kernel: Kernel,
) -> Result<Plan, PlanError> {
    let mut missing = Vec::new();
    let mut write: Vec<PathBuf> = Vec::new();
    for w in boundary.write.iter().chain(extra_write) {
        match fs::canonicalize(w) {
            Ok(real) if real.is_dir() => write.push(real),
            Ok(real) => {
                return Err(PlanError(format!(
                    "{} is not a folder: the command may only be given folders to write",
                    real.display()
                )));
            }
            Err(_) if std::ptr::eq(w, &boundary.write[0]) => {
                return Err(PlanError(format!(
                    "the path root {} does not exist",
                    w.display()
                )));
            }
            Err(_) => missing.push(w.clone()),
        }
    }
    let inside_write = |p: &Path| write.iter().any(|w| p.starts_with(w));
    let namespaces = mount_namespaces();
    let mut mounts = Vec::new();
    let mut sweep = Vec::new();
    let mut hidden_outside: Vec<PathBuf> = Vec::new();
    let mut resolver = Resolver::default();
    for h in &boundary.hidden {
        let real = resolver.resolve_existing(h);
        let exists = fs::symlink_metadata(&real).is_ok();
        match (exists, inside_write(&real)) {
            (true, true) if !namespaces => {
                return Err(PlanError(format!(
                    "{} is one of metagate's own files and lies inside a folder the command may \
                     write, and this system gives run no mount namespace to keep it out of \
                     reach (Landlock cannot take a right back below a folder): move it out of \
                     the path root and [run] write, or allow user namespaces",
                    real.display()
                )));
            }
            (true, true) => {
                let folder = write
                    .iter()
                    .filter(|w| real.starts_with(w))
                    .max_by_key(|w| w.components().count())
                    .expect("inside a writable folder");
                let mut between = real.parent();
                while let Some(dir) = between {
                    if !dir.starts_with(folder) || dir == folder.as_path() {
                        break;
                    }
                    mounts.push(Mount::Pin(dir.to_path_buf()));
                    between = dir.parent();
                }
                mounts.push(Mount::Cover(real));
            }
            (false, true) => sweep.push(real),
            (true, false) => hidden_outside.push(real),

            // Outside every writable folder and not there: it cannot be made, nor read.
            (false, false) => {}
        }
    }
    if namespaces {
        mounts.extend(write.iter().cloned().map(Mount::Writable));
    }
    mounts.sort_by_key(|m| match m {
        Mount::Writable(p) => (0, p.components().count()),
        Mount::Pin(p) => (1, p.components().count()),
        Mount::Cover(p) => (2, p.components().count()),
    });
    mounts.dedup();
    let ruleset = if kernel.has_landlock() {
        Some(ruleset(boundary, &write, &hidden_outside).map_err(|e| PlanError(e.to_string()))?)
    } else {
        None
    };
    Ok(Plan {
        ruleset,
        mounts,
        sweep,
        missing,
    })
}

fn read_rights() -> BitFlags<AccessFs> {
    AccessFs::from_read(ABI_WANTED)
}

fn all_rights() -> BitFlags<AccessFs> {
    AccessFs::from_all(ABI_WANTED)
}

/// One rule: `rights` on `path` (a file gets the rights a file can have).
fn rule(path: &Path, rights: BitFlags<AccessFs>) -> Option<PathBeneath<PathFd>> {
    let meta = fs::metadata(path).ok()?;
    let rights = if meta.is_dir() {
        rights
    } else {
        rights & AccessFs::from_file(ABI_WANTED)
    };
    let fd = PathFd::new(path).ok()?;
    Some(PathBeneath::new(fd, rights))
}

fn ruleset(
    boundary: &Boundary,
    write: &[PathBuf],
    hidden: &[PathBuf],
) -> Result<RulesetCreated, landlock::RulesetError> {
    // A kernel with Landlock at all enforces the file system part; newer rights (truncate,
    // device ioctls, Unix socket paths) and scopes where the kernel has them.
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all_rights())?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    if !boundary.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_WANTED))?;
    }
    let mut created = ruleset.create()?;
    for (path, list_only) in readable(hidden) {
        let rights = if list_only {
            BitFlags::from(AccessFs::ReadDir)
        } else {
            read_rights()
        };
        if let Some(r) = rule(&path, rights) {
            created = created.add_rule(r)?;
        }
    }
    for folder in write {
        if let Some(r) = rule(folder, all_rights()) {
            created = created.add_rule(r)?;
        }
    }
    for sink in SINKS {
        if let Some(r) = rule(Path::new(sink), all_rights()) {
            created = created.add_rule(r)?;
        }
    }
    Ok(created)
}

/// The hierarchies readable around `hidden`: `/` when nothing is hidden; otherwise, in each
/// folder on the way to a hidden path, every entry that is neither on the way nor hidden
/// (symbolic links skipped: a path through one is checked where it leads). The folders on the
/// way themselves come last, marked `true`: they may be listed only.
fn readable(hidden: &[PathBuf]) -> Vec<(PathBuf, bool)> {
    if hidden.is_empty() {
        return vec![(PathBuf::from("/"), false)];
    }
    let mut on_the_way: Vec<PathBuf> = Vec::new();
    for h in hidden {
        let mut p = h.parent();
        while let Some(dir) = p {
            if !on_the_way.iter().any(|d| d == dir) {
                on_the_way.push(dir.to_path_buf());
            }
            p = dir.parent();
        }
    }
    let blocked = |p: &Path| on_the_way.iter().any(|d| d == p) || hidden.iter().any(|h| h == p);
    let mut out = Vec::new();
    for dir in &on_the_way {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if blocked(&path) || entry.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            out.push((path, false));
        }
    }
    out.extend(on_the_way.into_iter().map(|dir| (dir, true)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_complement_leaves_out_the_way_and_the_hidden() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for d in ["a/b", "a/c", "d"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::write(root.join("a/b/secret"), "x").unwrap();
        fs::write(root.join("a/b/other"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a/b"), root.join("link")).unwrap();
        let got = readable(&[root.join("a/b/secret")]);
        for want in ["a/c", "d", "a/b/other"] {
            assert!(got.contains(&(root.join(want), false)), "{want}: {got:?}");
        }
        for never in ["a", "a/b", "a/b/secret", "link"] {
            assert!(
                !got.contains(&(root.join(never), false)),
                "{never}: {got:?}"
            );
        }
        for listed in ["a", "a/b"] {
            assert!(
                got.contains(&(root.join(listed), true)),
                "{listed}: {got:?}"
            );
        }
    }

    #[test]
    fn resolving_keeps_what_does_not_exist() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        assert_eq!(resolve_existing(&root.join("x/../y/z")), root.join("y/z"));
    }

    #[test]
    fn the_resolver_answers_as_canonicalize_does() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/f"), "x").unwrap();
        fs::write(root.join("file"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("to_a")).unwrap();
        std::os::unix::fs::symlink("b/f", root.join("a/rel")).unwrap();
        std::os::unix::fs::symlink("../a/b", root.join("a/up")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        let mut r = Resolver::default();
        for p in [
            "a",
            "a/b/f",
            "to_a/b/f",
            "to_a/rel",
            "a/up/f",
            "to_a/up/../b",
            "dangling",
            "dangling/x",
            "file/x",
            "missing/x",
            "a/./b",
            "a/b/../b/f",
            "to_a/../file",
        ] {
            let path = root.join(p);
            assert_eq!(r.canonical(&path), fs::canonicalize(&path).ok(), "{p}");
        }
    }
}
