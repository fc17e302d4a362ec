//! Path-argument checks: keep tool paths inside the operator's root folder and away from
//! denied files.
//!
//! Unix semantics only (`/` is the only separator; there are no drive prefixes).
//!
//! # What [`check`] does
//!
//! 1. **Refuse before resolving**: empty, NUL, backslash, percent-encoded `.`/`/`/`\`/NUL
//!    (and overlong UTF-8: the leads `%c0`/`%c1`, and `%e0`/`%f0` before a byte that makes
//!    the form overlong, as in `%e0%80%ae`), any number of `%25` layers deep, a leading `~`, a
//!    leading URI scheme (`file:`), more than [`MAX_PATH_BYTES`] bytes or a component over
//!    [`MAX_COMPONENT_BYTES`] bytes.
//! 2. **Resolve two ways**, and require *both* results to pass every rule:
//!    * the *kernel view*: walk the original components one at a time, the way `open(2)` does.
//!      Each existing prefix is canonicalized through [`Fs::canonicalize`] (following symlinks),
//!      and a `..` is applied to that canonical form, so `link/../x` lands next to the link's
//!      *target*, as the kernel would. A symlink that does not resolve (dangling, or a loop) is
//!      read with [`Fs::read_link`] and its target spliced in front of the remaining components
//!      (at most [`MAX_SYMLINK_HOPS`] times), because creating a file through a dangling link
//!      creates its target. Once a component does not exist, the rest is appended lexically
//!      (`..` pops it again).
//!    * the *lexical view*: the joined path is normalized lexically first (`.` dropped, `..`
//!      pops, never above `/`), then resolved the same way (which for a `..`-free path is the
//!      longest existing prefix, canonicalized, plus the non-existing tail). This is what a tool
//!      that normalizes paths as strings (Python `os.path.normpath`, Node `path.resolve`) opens.
//!
//!    The two differ only when a symlink is followed by `..`; then the path must be safe under
//!    both readings. This is deliberately conservative: a path that is fine for the kernel but
//!    lexically climbs out of the root is refused.
//! 3. **Containment by components** ([`Path::starts_with`]), against the canonical root: the
//!    root `/srv/app` does not admit `/srv/app2`. The root itself is allowed (as `.`).
//! 4. **Deny globs, then allow globs**, on the resolved path relative to the root (see
//!    [`PathRules::new`] for the glob dialect).
//!
//! On success the *kernel-view* path is returned, relative to the root, `/`-separated, free of
//! `.`, `..` and symlinks. Pass that (joined to [`PathRules::root`]) to the tool rather than the
//! raw argument.
//!
//! # Limits
//!
//! This is a check, not a sandbox: between the check and the tool's `open` someone with write
//! access inside the root can swap a directory for a symlink (TOCTOU). Where that matters, open
//! with `openat2(RESOLVE_BENEATH)` or run the tool in a mount namespace as well.

use crate::checks::needles::Needles;
use crate::wire::display::escape_controls;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

/// Longest accepted path argument, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest accepted path component, in bytes (Linux `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;
/// Symlink hops followed by hand (for links [`Fs::canonicalize`] cannot resolve) before
/// giving up, as Linux does (`ELOOP`).
pub const MAX_SYMLINK_HOPS: usize = 40;

/// The default deny globs: files a code-reading agent should never open by default.
///
/// Globs without a `/` match a file (or directory) name at any depth; matching is
/// case-insensitive; a match on a directory also denies everything under it. The first glob
/// that matches is the one reported.
///
/// * `.env*` — dotenv files hold API keys and database passwords, under every name tools and
///   people give them: `.env.local`, `.env-local`, `.env_prod`, `.env2`, the editor backup
///   `.env~`, and direnv's `.envrc` (which `export`s secrets into the shell). Also
///   `.env.example`: templates are sometimes filled in, and globs cannot express exceptions;
///   drop it from your list if needed.
/// * `**/.git/**/config` — remote URLs may embed access tokens (`https://user:token@…`), in
///   the repository's `.git/config` and in its submodules' `.git/modules/*/config` alike.
/// * `.git-credentials` — git's plaintext credential store.
/// * `**/secret/**`, `**/secrets/**` — anything in a folder named `secret`/`secrets`, and the
///   folder itself (listing it leaks file names). Only whole components: `secretary.md` and
///   `secret_santa.rs` pass.
/// * `secrets.{json,yaml,yml,toml,env,ini,txt}` — Rails/Streamlit/Kubernetes-style secrets
///   files (but not `secrets.rs`/`secrets.py` source modules).
/// * `client_secret*.json` — Google OAuth client secrets.
/// * `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`, `*.ppk`, `*.p8` — private
///   keys and key stores, PuTTY's and PKCS#8's (Apple's `AuthKey_….p8`) among them (`*.pem`
///   also catches public certificates: conservative).
/// * `id_rsa*`, `id_dsa*`, `id_ecdsa*`, `id_ed25519*`, `**/.ssh/identity` — SSH private keys
///   (`identity` is SSH 1's default name, still read by `ssh -i`). This also denies the
///   `.pub` halves: they are harmless but useless to a code-reading agent, and excluding them
///   would need negation, which a deny list does not have. Other `*.pub` files pass.
/// * `*private*key`, `*private*keys`, `*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}`
///   — `private_key`, `private_keys/`, `private_key.json`, `my-private-key.txt`,
///   `privatekey.asc` (`private_key.pem` is `*.pem`'s).
/// * `*passwords` — password lists and folders of them (`passwords`, `passwords/`).
/// * `*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}` — password files in data
///   formats, `passwords.txt` among them.
///
/// The last three are restricted to bare names and data or key formats on purpose: plain
/// `*private*key*` or `*password*` would deny source such as `private_key.rs`,
/// `PrivateKeyParser.java`, `passwords.rs` or `test_passwords.py`, which an agent reading
/// code needs.
/// * `*.kdbx` — KeePass databases.
/// * `.htpasswd` — web server password hashes.
/// * `.netrc`, `_netrc` — login/password per host (curl, ftp, git over https).
/// * `.pgpass` — PostgreSQL passwords.
/// * `credentials.json` — cloud SDK/service-account credentials.
/// * `**/.aws/credentials` — AWS access keys.
pub const DEFAULT_DENY: &[&str] = &[
    ".env*",
    "**/.git/**/config",
    ".git-credentials",
    "**/secret/**",
    "**/secrets/**",
    "secrets.{json,yaml,yml,toml,env,ini,txt}",
    "client_secret*.json",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.p8",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "**/.ssh/identity",
    "*private*key",
    "*private*keys",
    "*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}",
    "*passwords",
    "*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}",
    "*.kdbx",
    ".htpasswd",
    ".netrc",
    "_netrc",
    ".pgpass",
    "credentials.json",
    "**/.aws/credentials",
];

/// [`DEFAULT_DENY`] as owned strings, for [`PathRules::new`].
pub fn default_deny() -> Vec<String> {
    DEFAULT_DENY.iter().map(|g| (*g).to_string()).collect()
}

/// A rule that could not be compiled: an invalid glob, or a root that is not absolute or
/// cannot be resolved (then `glob` is the root as given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    pub glob: String,
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid rule `{}`: {}", self.glob, self.message)
    }
}

impl std::error::Error for RuleError {}

/// Why a path is refused. Each names the rule that matched, for the rejection message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    Empty,
    Nul,
    /// Percent-encoded `.`/`/`/`\`/NUL (`%2e`, `%2f`, `%5c`, `%00`, any case, also
    /// double-encoded `%252e`), or overlong UTF-8 (`%c0`, `%c1`, `%e0%80`…`%e0%9f`,
    /// `%f0%80`…`%f0%8f`).
    Encoded {
        sequence: String,
    },
    /// A backslash: Windows separators are not paths here.
    Backslash,
    /// Longer than 4096 bytes, or a component longer than 255.
    TooLong,
    /// `~` expansion is the shell's business; a path starting with `~` is refused.
    Tilde,
    /// Starts with a URI scheme of two letters or more (`file:///etc/passwd`, `file:/x`):
    /// a tool that takes URIs opens what it names, not `root/file:/…`. One letter is left
    /// alone: `C:/x` is a relative name here (and `C:\x` is refused for its backslash).
    Scheme {
        scheme: String,
    },
    /// Resolves outside the root (after `..` and symlinks); `resolved` is what it resolved to.
    Outside {
        root: PathBuf,
        resolved: PathBuf,
    },
    /// Matches a deny glob (`glob` as written).
    Denied {
        glob: String,
        relative: String,
    },
    /// Allow globs are set and none matches.
    NotAllowed {
        relative: String,
    },
    /// Symlinks that loop or nest more than [`MAX_SYMLINK_HOPS`] deep; `path` is the link.
    SymlinkLoop {
        path: PathBuf,
    },
    /// Resolves inside the root to a name that is not UTF-8 (possible through a symlink).
    NotUtf8 {
        resolved: PathBuf,
    },
}

/// Appends `path` as `Path::display` shows it, without formatting machinery for UTF-8 paths.
pub fn push_path(out: &mut String, path: &Path) {
    match path.to_str() {
        Some(text) => out.push_str(text),
        None => out.push_str(&path.display().to_string()),
    }
}

impl PathError {
    /// Short text naming the rule that refused the path.
    pub fn rule(&self) -> String {
        match self {
            PathError::Empty => "empty path".to_string(),
            PathError::Nul => "path contains a NUL byte".to_string(),
            PathError::Encoded { sequence } => format!(
                "percent-encoded sequence `{sequence}` (encoded `.`, `/`, `\\`, NUL and overlong UTF-8 are refused)"
            ),
            PathError::Backslash => {
                "path contains a backslash (`\\` is not a separator here)".to_string()
            }
            PathError::TooLong => format!(
                "path longer than {MAX_PATH_BYTES} bytes or a component longer than {MAX_COMPONENT_BYTES}"
            ),
            PathError::Tilde => "path starts with `~` (no home-directory expansion)".to_string(),
            PathError::Scheme { scheme } => format!(
                "path starts with the URI scheme `{scheme}:` (a tool that takes URIs would open what it names; give a plain path)"
            ),
            // What the path resolved to is the model's text: its control characters are
            // escaped, so that it cannot add lines to a rejection's feedback.
            PathError::Outside { root, resolved } => {
                let room = root.as_os_str().len() + resolved.as_os_str().len();
                let mut text = String::with_capacity(room + 32);
                text.push_str("outside the root ");
                push_path(&mut text, root);
                text.push_str(" (resolves to ");
                let mut shown = String::with_capacity(resolved.as_os_str().len());
                push_path(&mut shown, resolved);
                text.push_str(&escape_controls(&shown));
                text.push(')');
                text
            }
            PathError::Denied { glob, relative } => {
                format!("matches deny rule `{glob}` ({})", escape_controls(relative))
            }
            PathError::NotAllowed { relative } => {
                format!("matches no allow rule ({})", escape_controls(relative))
            }
            PathError::SymlinkLoop { path } => {
                format!(
                    "too many levels of symlinks at {}",
                    escape_controls(&path.display().to_string())
                )
            }
            PathError::NotUtf8 { resolved } => {
                format!(
                    "resolves to a name that is not UTF-8 ({})",
                    escape_controls(&resolved.display().to_string())
                )
            }
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rule())
    }
}

impl std::error::Error for PathError {}

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
    /// itself, told from what this file system remembers about the parent: the parent is canonical and `path` is no symlink, or the
    /// parent is missing (and no symlink), so `path` is too. False when that takes more than
    /// one `lstat` to tell; [`check`] then walks the path component by component.
    fn resolves_to_itself(&self, _parent: &Path, _path: &Path) -> bool {
        false
    }
    /// [`check`]'s answer for `raw` under the rules numbered `rules`: `check` computes it,
    /// unless this file system remembers it. [`CachedFs`] remembers answers exactly as long as
    /// the file-system answers they were made from.
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

/// [`RealFs`] with a short memory, for streams that check many paths: each answer is kept
/// for at most `ttl`, and the whole memory is dropped when it expires or grows past
/// [`CachedFs::CAPACITY`] entries.
///
/// `std::fs::canonicalize` reads every component of a path again; here a path whose parent is
/// already known to be canonical costs one `lstat` (and nothing when seen within `ttl`). A
/// folder asked about [`CachedFs::LIST_AFTER`] times is read whole instead (when it holds at
/// most [`CachedFs::MAX_LISTED`] names), so new names in it cost no system call: an agent
/// writing `notes-1.md`, `notes-2.md`… would otherwise pay an `lstat` of a name the kernel
/// has never seen for each. The answers can be up to `ttl` old, which widens the window the
/// module documentation's TOCTOU note describes by that much.
pub struct CachedFs<C: Fn() -> Instant> {
    clock: C,
    ttl: Duration,
    memory: RefCell<Memory>,
    /// Set while [`Fs::checked`] runs a check: the clock was read when it began, and one
    /// check takes microseconds, so the answers it asks for are not timed again.
    checking: Cell<bool>,
}

#[derive(Default)]
struct Memory {
    since: Option<Instant>,
    /// Counts the times the memory was emptied, so a check can tell whether the answers it
    /// was made from are still here.
    generation: u64,
    // Keyed by the path's bytes: hashing a `Path` walks its components, several times slower.
    canonical: FxHashMap<OsString, Result<PathBuf, io::ErrorKind>>,
    links: FxHashMap<OsString, Result<PathBuf, io::ErrorKind>>,
    /// What is known of the folders names were looked up in (canonical folders only).
    folders: FxHashMap<OsString, Folder>,
    /// Names kept in the listings of `folders`.
    listed: usize,
    /// Whole checks of raw paths under the rules numbered `checks_for`, made from the answers
    /// above: an agent names the same few files again and again. `Ok(None)`: the raw path
    /// itself.
    checks: FxHashMap<String, Result<Option<String>, PathError>>,
    checks_for: Option<u64>,
}

/// A canonical folder, as far as looking names up in it goes.
enum Folder {
    /// Names in it looked up one `lstat` at a time so far.
    Asked(u32),
    /// Read whole: the names in it that are symlinks, or whose type the listing did not
    /// tell. Any other name, there or not, is no symlink.
    Listed(FxHashSet<OsString>),
    /// Too big to keep, or unreadable: names in it are looked up one at a time.
    Unlisted,
}

impl Memory {
    fn len(&self) -> usize {
        self.canonical.len()
            + self.links.len()
            + self.folders.len()
            + self.listed
            + self.checks.len()
    }

    fn forget(&mut self) {
        self.canonical.clear();
        self.links.clear();
        self.folders.clear();
        self.listed = 0;
        self.checks.clear();
        self.generation += 1;
    }
}

impl<C: Fn() -> Instant> CachedFs<C> {
    /// Entries kept before the memory is dropped, whatever their age: enough for the files
    /// an agent works on within `ttl`, few enough for the tables to stay in cache.
    pub const CAPACITY: usize = 1 << 13;
    /// Names looked up in one folder before the folder is read whole.
    pub const LIST_AFTER: u32 = 8;
    /// Names a folder may hold and still be read whole.
    pub const MAX_LISTED: usize = 1 << 10;

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
            if memory.checks_for == Some(rules)
                && let Some(answer) = memory.checks.get(raw)
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
            if memory.checks_for != Some(rules) {
                memory.checks.clear();
                memory.checks_for = Some(rules);
            }
            let kept = match &answer {
                Ok(Cow::Borrowed(_)) => Ok(None),
                Ok(Cow::Owned(relative)) => Ok(Some(relative.clone())),
                Err(e) => Err(e.clone()),
            };
            memory.checks.insert(raw.to_string(), kept);
        }
        answer
    }
}

/// A list of globs as written, compiled. One written glob may compile to several.
#[derive(Debug, Clone)]
struct GlobList {
    written: Vec<String>,
    set: GlobSet,
    /// `owner[i]` is the index in `written` of compiled glob `i`.
    owner: Vec<usize>,
    /// A literal each compiled glob requires (ignoring ASCII case), when every one has one:
    /// an ASCII path holding none of them matches no glob, which one automaton tells in a
    /// single pass instead of running the glob set (most paths an agent names match nothing).
    required: Option<Needles>,
}

/// The longest run of letters, digits, `.`, `_` and `-` that every path `pattern` matches
/// must contain, outside classes and alternatives; None when there is none to be sure of.
fn required_literal(pattern: &str) -> Option<&str> {
    if pattern.contains('\\') {
        return None;
    }
    let bytes = pattern.as_bytes();
    let literal = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let (mut best, mut run_start, mut i) = ((0, 0), 0, 0);
    while i < bytes.len() {
        let b = bytes[i];
        if literal(b) {
            i += 1;
            if i - run_start > best.1 - best.0 {
                best = (run_start, i);
            }
            continue;
        }
        // What a class or an alternative matches is not required: skip past its end.
        let close = match b {
            b'[' => Some(b']'),
            b'{' => Some(b'}'),
            _ => None,
        };
        i += 1;
        if let Some(close) = close {
            // `[]…]`, `[!]…]` and `[^]…]` hold a literal `]` first.
            if close == b']' {
                if matches!(bytes.get(i), Some(b'!' | b'^')) {
                    i += 1;
                }
                if bytes.get(i) == Some(&b']') {
                    i += 1;
                }
            }
            i = bytes[i..]
                .iter()
                .position(|&c| c == close)
                .map_or(bytes.len(), |k| i + k + 1);
        }
        run_start = i;
    }
    (best.1 > best.0).then(|| &pattern[best.0..best.1])
}

impl GlobList {
    fn new(globs: &[String]) -> Result<GlobList, RuleError> {
        let mut builder = GlobSetBuilder::new();
        let mut owner = Vec::new();
        let mut literals = Some(Vec::new());
        for (index, glob) in globs.iter().enumerate() {
            let error = |message: String| RuleError {
                glob: glob.clone(),
                message,
            };
            for pattern in expand_glob(glob).map_err(error)? {
                // `pattern/**` too, so that matching the whole path once also finds a match on
                // any folder above it (what `first_match` promises).
                for pattern in [format!("{pattern}/**"), pattern] {
                    let compiled = GlobBuilder::new(&pattern)
                        .case_insensitive(true)
                        .literal_separator(true)
                        .build()
                        .map_err(|e| error(e.kind().to_string()))?;
                    builder.add(compiled);
                    owner.push(index);
                    literals = literals.and_then(|mut all: Vec<String>| {
                        all.push(required_literal(&pattern)?.to_string());
                        Some(all)
                    });
                }
            }
        }
        let set = builder.build().map_err(|e| RuleError {
            glob: e.glob().unwrap_or_default().to_string(),
            message: e.kind().to_string(),
        })?;
        let required = literals
            .filter(|all| !all.is_empty())
            .and_then(|all| Needles::new(&all));
        Ok(GlobList {
            written: globs.to_vec(),
            set,
            owner,
            required,
        })
    }

    fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// The first glob (in written order) matching `relative` or one of its parent
    /// directories (gitignore: a matched directory covers everything under it).
    fn first_match(&self, relative: &str) -> Option<&str> {
        // Globs ignore case beyond ASCII (`K` for the Kelvin sign), so only ASCII paths skip.
        if let Some(required) = &self.required
            && relative.is_ascii()
            && !required.occurs(relative.as_bytes(), false)
        {
            return None;
        }
        let candidate = globset::Candidate::new(relative);
        if !self.set.is_match_candidate(&candidate) {
            return None;
        }
        let best = self
            .set
            .matches_candidate(&candidate)
            .into_iter()
            .filter_map(|i| self.owner.get(i).copied())
            .min()?;
        self.written.get(best).map(String::as_str)
    }
}

/// Translates one gitignore-ish glob into globset patterns (matched with `literal_separator`,
/// so `*` never crosses `/`):
///
/// * a leading `/` anchors the glob at the root and is dropped; a trailing `/` is dropped (a
///   directory match covers its contents anyway);
/// * a glob with no `/` left matches a name at any depth: `**/` is prepended;
/// * a glob ending in `/**` also matches the directory itself (`**/secrets/**` denies
///   `a/secrets` as well as `a/secrets/db.txt`).
fn expand_glob(glob: &str) -> Result<Vec<String>, String> {
    if glob.is_empty() {
        return Err("empty glob".to_string());
    }
    let anchored = glob.starts_with('/');
    let body = glob.trim_start_matches('/').trim_end_matches('/');
    if body.is_empty() {
        return Err("glob names only the root".to_string());
    }
    let base = if !anchored && !body.contains('/') {
        format!("**/{body}")
    } else {
        body.to_string()
    };
    let mut patterns = vec![base.clone()];
    if let Some(dir) = base.strip_suffix("/**")
        && !dir.is_empty()
        && dir != "**"
    {
        patterns.push(dir.to_string());
    }
    Ok(patterns)
}

/// Compiled path rules.
#[derive(Debug, Clone)]
pub struct PathRules {
    /// Tells these rules from any others, for answers remembered by [`Fs::checked`].
    id: u64,
    root: PathBuf,
    deny: GlobList,
    allow: GlobList,
}

impl PathRules {
    /// `root` must be absolute; it is canonicalized through `fs` (it must exist; it should be
    /// a directory, which is not checked). `deny` and `allow` are globs relative to the root
    /// (gitignore-ish: `**/secrets/**`, `*.pem`, `.env*`), matched case-insensitively against
    /// the path relative to the root, with `/` as the only separator; a glob without a `/`
    /// matches a name at any depth (like gitignore), a leading `/` anchors it at the root, and
    /// a glob ending in `/**` also matches the directory itself. A glob matching a directory
    /// also matches everything under it, for deny and allow alike. The root itself is matched
    /// as `.` (so with allow globs set, the root is refused unless one matches `.`). An invalid
    /// glob is an error naming it.
    pub fn new(
        root: &Path,
        deny: &[String],
        allow: &[String],
        fs: &dyn Fs,
    ) -> Result<PathRules, RuleError> {
        let root_error = |message: String| RuleError {
            glob: root.display().to_string(),
            message,
        };
        if !root.is_absolute() {
            return Err(root_error("root must be an absolute path".to_string()));
        }
        let canonical = fs
            .canonicalize(root)
            .map_err(|e| root_error(format!("root cannot be resolved: {e}")))?;
        let root = clean_absolute(canonical)
            .ok_or_else(|| root_error("root resolves to a relative path".to_string()))?;
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Ok(PathRules {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            root,
            deny: GlobList::new(deny)?,
            allow: GlobList::new(allow)?,
        })
    }

    /// [`PathRules::new`] with [`DEFAULT_DENY`] and no allow globs.
    pub fn with_default_deny(root: &Path, fs: &dyn Fs) -> Result<PathRules, RuleError> {
        PathRules::new(root, &default_deny(), &[], fs)
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The deny globs as written.
    pub fn deny_globs(&self) -> &[String] {
        &self.deny.written
    }

    /// The allow globs as written.
    pub fn allow_globs(&self) -> &[String] {
        &self.allow.written
    }

    /// Containment: the `/`-separated path of `resolved` relative to the root.
    fn relative(&self, resolved: &Path) -> Result<String, PathError> {
        let outside = || PathError::Outside {
            root: self.root.clone(),
            resolved: resolved.to_path_buf(),
        };
        // Both are clean absolute paths, so containment by components is a byte prefix that
        // ends at a separator.
        let root = self.root.as_os_str().as_encoded_bytes();
        let path = resolved.as_os_str().as_encoded_bytes();
        let rest = match path.strip_prefix(root) {
            Some([]) => return Ok(".".to_string()),
            Some(rest) if root == b"/" => rest,
            Some([b'/', rest @ ..]) => rest,
            _ => return Err(outside()),
        };
        match std::str::from_utf8(rest) {
            Ok(rest) => Ok(rest.to_string()),
            Err(_) => Err(PathError::NotUtf8 {
                resolved: resolved.to_path_buf(),
            }),
        }
    }

    /// Deny first, then allow.
    fn judge(&self, relative: &str) -> Result<(), PathError> {
        if let Some(glob) = self.deny.first_match(relative) {
            return Err(PathError::Denied {
                glob: glob.to_string(),
                relative: relative.to_string(),
            });
        }
        if !self.allow.is_empty() && self.allow.first_match(relative).is_none() {
            return Err(PathError::NotAllowed {
                relative: relative.to_string(),
            });
        }
        Ok(())
    }
}

/// Checks one path argument: Ok with the path relative to the root (as `/`-separated text,
/// `.` for the root itself) when it may be used. See the module documentation for the steps.
/// Borrowed when that is `raw` itself, as it is for most paths (`src/main.rs`).
pub fn check<'a>(raw: &'a str, rules: &PathRules, fs: &dyn Fs) -> Result<Cow<'a, str>, PathError> {
    fs.checked(rules.id, raw, &mut || check_afresh(raw, rules, fs))
}

fn check_afresh<'a>(
    raw: &'a str,
    rules: &PathRules,
    fs: &dyn Fs,
) -> Result<Cow<'a, str>, PathError> {
    precheck(raw)?;
    let root = &rules.root;
    // Most paths are plain names below the root (`src/main.rs`): when the file system can
    // tell that the kernel resolves `root/raw` to itself, both views are that path and `raw`
    // is already its relative form.
    if let Some(root_text) = root.to_str()
        && is_plain_relative(raw)
    {
        // `root/raw`, and where its parent ends (`Path::parent` would parse it again).
        let mut full = String::with_capacity(root_text.len() + 1 + raw.len());
        full.push_str(root_text);
        let at_top = root_text == "/";
        if !at_top {
            full.push('/');
        }
        let parent_end = match raw.rfind('/') {
            Some(k) => full.len() + k,
            None if at_top => 1,
            None => full.len() - 1,
        };
        full.push_str(raw);
        if fs.resolves_to_itself(Path::new(&full[..parent_end]), Path::new(&full)) {
            rules.judge(raw)?;
            return Ok(Cow::Borrowed(raw));
        }
    }
    let raw_path = Path::new(raw);

    // Kernel view: the original components, walked one at a time.
    let kernel = if raw_path.is_absolute() {
        resolve(PathBuf::from("/"), steps(raw_path), root, fs)?
    } else {
        resolve(root.clone(), steps(raw_path), root, fs)?
    };

    let kernel_relative = rules.relative(&kernel)?;
    rules.judge(&kernel_relative)?;
    // Without a `..` the two views walk the same components from the same canonical start.
    if !raw_path.components().any(|c| c == Component::ParentDir) {
        return Ok(Cow::Owned(kernel_relative));
    }

    // Lexical view: `..` applied to the text first, then symlinks resolved.
    let joined = lexical_normalize(&root.join(raw_path));
    let lexical = match joined.strip_prefix(root) {
        Ok(rest) => resolve(root.clone(), steps(rest), root, fs)?,
        Err(_) => resolve(PathBuf::from("/"), steps(&joined), root, fs)?,
    };
    let lexical_relative = rules.relative(&lexical)?;
    if lexical_relative != kernel_relative {
        rules.judge(&lexical_relative)?;
    }
    Ok(Cow::Owned(kernel_relative))
}

/// Refusals that need no file system.
fn precheck(raw: &str) -> Result<(), PathError> {
    if raw.is_empty() {
        return Err(PathError::Empty);
    }
    // Most paths hold none of the three bytes: one scan tells, and the refusals (in their
    // order) are looked for only when it finds one.
    if memchr::memchr3(b'\0', b'\\', b'%', raw.as_bytes()).is_some() {
        if raw.contains('\0') {
            return Err(PathError::Nul);
        }
        if raw.contains('\\') {
            return Err(PathError::Backslash);
        }
        if let Some(sequence) = find_encoded(raw) {
            return Err(PathError::Encoded { sequence });
        }
    }
    if raw.starts_with('~') {
        return Err(PathError::Tilde);
    }
    if let Some(scheme) = uri_scheme(raw) {
        return Err(PathError::Scheme {
            scheme: scheme.to_string(),
        });
    }
    if raw.len() > MAX_PATH_BYTES
        || (raw.len() > MAX_COMPONENT_BYTES
            && raw.split('/').any(|c| c.len() > MAX_COMPONENT_BYTES))
    {
        return Err(PathError::TooLong);
    }
    Ok(())
}

/// The scheme `raw` starts with (`^[A-Za-z][A-Za-z0-9+.-]*:`), when it has two characters
/// or more; a drive letter is not taken for one.
fn uri_scheme(raw: &str) -> Option<&str> {
    let end = raw
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    let scheme = &raw[..end];
    (raw.as_bytes()[end] == b':' && scheme.len() >= 2 && scheme.as_bytes()[0].is_ascii_alphabetic())
        .then_some(scheme)
}

/// Relative, and only names: no empty component, `.` or `..` (so `root/raw` is clean).
fn is_plain_relative(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut start = 0;
    loop {
        let end = memchr::memchr(b'/', &bytes[start..]).map_or(bytes.len(), |k| start + k);
        if matches!(&bytes[start..end], [] | [b'.'] | [b'.', b'.']) {
            return false;
        }
        if end == bytes.len() {
            return true;
        }
        start = end + 1;
    }
}

/// Finds `%` + any number of `25` + one of `2e 2f 5c 00 c0 c1` (hex, any case): an encoded
/// `.`, `/`, `\`, NUL or overlong UTF-8 lead, encoded once or more; or an `e0`/`f0` lead
/// followed by a byte that only an overlong form has ([`overlong_end`]).
fn find_encoded(raw: &str) -> Option<String> {
    const TARGETS: [u8; 6] = [0x2e, 0x2f, 0x5c, 0x00, 0xc0, 0xc1];
    let bytes = raw.as_bytes();
    for (start, &byte) in bytes.iter().enumerate() {
        if byte != b'%' {
            continue;
        }
        let mut at = start + 1;
        while let Some(value) = hex_at(bytes, at) {
            if value == 0x25 {
                at += 2;
            } else if TARGETS.contains(&value) {
                let end = at + 2;
                return Some(String::from_utf8_lossy(bytes.get(start..end)?).into_owned());
            } else if let Some(end) = overlong_end(bytes, value, at + 2) {
                return Some(String::from_utf8_lossy(&bytes[start..end]).into_owned());
            } else {
                break;
            }
        }
    }
    None
}

/// Where the encoded byte at `at` ends when, after the lead `lead`, it makes an overlong
/// form: `e0` then `80`…`9f` (three bytes for what fits in two: `%e0%80%ae` is `.`), `f0`
/// then `80`…`8f` (four for three). Lenient decoders read these as the short character.
fn overlong_end(bytes: &[u8], lead: u8, at: usize) -> Option<usize> {
    let last = match lead {
        0xe0 => 0x9f,
        0xf0 => 0x8f,
        _ => return None,
    };
    let (value, end) = encoded_byte(bytes, at)?;
    (0x80..=last).contains(&value).then_some(end)
}

/// The byte `%` + any number of `25` + two hex digits at `at` encodes, and where it ends.
fn encoded_byte(bytes: &[u8], at: usize) -> Option<(u8, usize)> {
    if bytes.get(at) != Some(&b'%') {
        return None;
    }
    let mut at = at + 1;
    loop {
        match hex_at(bytes, at)? {
            0x25 => at += 2,
            value => return Some((value, at + 2)),
        }
    }
}

fn hex_at(bytes: &[u8], at: usize) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let high = digit(*bytes.get(at)?)?;
    let low = digit(*bytes.get(at + 1)?)?;
    Some(high * 16 + low)
}

/// One path component to walk.
#[derive(Debug)]
enum Step {
    Root,
    Parent,
    Name(OsString),
}

fn steps(path: &Path) -> Vec<Step> {
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
fn lexical_normalize(path: &Path) -> PathBuf {
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
fn clean_absolute(path: PathBuf) -> Option<PathBuf> {
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
/// is missing, so it follows symlinks the way the kernel does.
fn resolve(
    start: PathBuf,
    path_steps: Vec<Step>,
    root: &Path,
    fs: &dyn Fs,
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
                if missing > 0 {
                    missing += 1;
                    continue;
                }
                match fs.canonical_form(&current) {
                    Ok(None) => continue,
                    Ok(Some(canonical)) => {
                        if let Some(canonical) = clean_absolute(canonical) {
                            current = canonical;
                            continue;
                        }
                    }
                    Err(_) => {}
                }
                match fs.read_link(&current) {
                    // A symlink that does not resolve (dangling or looping): follow it by hand,
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
                    Err(_) => missing = 1,
                }
            }
        }
    }
    Ok(current)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, HashMap};
    use std::io::Write;
    use std::os::unix::fs::symlink;
    use tempfile::TempDir;

    /// Depth of the directory chain above `base`, so generated `..` chains (fewer than this)
    /// never leave the temporary directory, even when a check is wrong.
    const DEPTH: usize = 40;

    struct Fixture {
        _tmp: TempDir,
        /// The temporary directory (canonical).
        top: PathBuf,
        /// `top/d/d/…/d`, holding `root`, `root2` and `outside`.
        base: PathBuf,
        root: PathBuf,
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        let mut base = top.clone();
        for _ in 0..DEPTH {
            base.push("d");
        }
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("sub/dir")).unwrap();
        write(&root.join("src/main.rs"), "fn main() {}");
        write(&root.join("src/lib.rs"), "");
        write(&root.join("docs/a.md"), "");
        write(&root.join("README.md"), "");
        write(&root.join(".env"), "KEY=1");
        write(&root.join("a/secrets/db.txt"), "pw");
        write(&base.join("root2/x"), "sibling");
        write(&outside.join("secret.txt"), "outside");
        write(&outside.join("dir/f.txt"), "outside");
        symlink("../outside/secret.txt", root.join("link_out_file")).unwrap();
        symlink(outside.join("dir"), root.join("link_out_dir")).unwrap();
        symlink("src/main.rs", root.join("link_in")).unwrap();
        symlink("src", root.join("link_in_dir")).unwrap();
        symlink("sub/dir", root.join("link_sub")).unwrap();
        symlink("chain2", root.join("chain1")).unwrap();
        symlink("chain3", root.join("chain2")).unwrap();
        symlink("../outside/dir", root.join("chain3")).unwrap();
        symlink("../root2", root.join("link_root2")).unwrap();
        symlink("../outside/newfile", root.join("dangle_out")).unwrap();
        symlink("../outside/newdir/x", root.join("dangle_out_deep")).unwrap();
        symlink("src/new.rs", root.join("dangle_in")).unwrap();
        symlink("loop_b", root.join("loop_a")).unwrap();
        symlink("loop_a", root.join("loop_b")).unwrap();
        symlink(".env", root.join("innocent")).unwrap();
        Fixture {
            _tmp: tmp,
            top,
            base,
            root,
        }
    }

    fn rules(f: &Fixture, deny: &[String], allow: &[String]) -> PathRules {
        PathRules::new(&f.root, deny, allow, &RealFs).unwrap()
    }

    /// `mkdir -p` would create a missing folder before `..` climbs out of it: outside the
    /// root that is an escape, inside it is harmless.
    #[test]
    fn a_missing_folder_before_dotdot_must_be_inside() {
        let f = fixture();
        let r = rules(&f, &[], &[]);
        let outside = format!("{}/new/../root/src", f.base.display());
        assert!(
            matches!(check(&outside, &r, &RealFs), Err(PathError::Outside { .. })),
            "{outside}"
        );
        assert_eq!(
            check("new/../src/main.rs", &r, &RealFs).unwrap(),
            "src/main.rs"
        );
        assert_eq!(check("a/b/../../docs", &r, &RealFs).unwrap(), "docs");
    }

    /// Answers are kept for the time to live and no longer.
    /// A file system that remembers answers what the real one answers, whatever it has
    /// seen before: each pass checks every path under new rules (so no whole answer is
    /// reused) against a memory the earlier passes filled, in another order each time.
    #[test]
    fn cached_answers_are_the_real_answers() {
        let f = fixture();
        let mut corpus = escape_corpus(&f);
        corpus.extend(
            [
                "src/main.rs",
                "src/new.rs",
                "src/main.rs/x",
                "README.md",
                "docs/a.md",
                "docs/b.md",
                "new/dir/file.txt",
                "new/dir/other.txt",
                "new/x",
                "new",
                "link_in",
                "link_in/x",
                "link_in_dir/lib.rs",
                "link_in_dir/new.rs",
                "link_sub/x",
                "link_out_dir/new.txt",
                "link_out_dir/deeper/new.txt",
                "dangle_in",
                "dangle_in/x",
                "dangle_out/x",
                "loop_a/b",
                "innocent",
                "innocent/x",
                ".env",
                "a/secrets/db.txt",
                "a/secrets/new.txt",
                "a/b/c",
                "sub/dir/x",
                "sub/dir",
                "sub",
                "chain1/new.txt",
                "C:/x",
            ]
            .map(String::from),
        );
        let deny = default_deny();
        let real: Vec<_> = {
            let r = rules(&f, &deny, &[]);
            corpus.iter().map(|raw| check(raw, &r, &RealFs)).collect()
        };
        let now = Instant::now();
        let fs = CachedFs::new(|| now, Duration::from_secs(3600));
        let forward: Vec<usize> = (0..corpus.len()).collect();
        let backward: Vec<usize> = forward.iter().rev().copied().collect();
        let strided: Vec<usize> = forward.iter().map(|i| (i * 7) % corpus.len()).collect();
        for order in [&forward, &backward, &strided, &forward] {
            let r = rules(&f, &deny, &[]);
            for &i in order {
                assert_eq!(check(&corpus[i], &r, &fs), real[i], "{:?}", corpus[i]);
            }
        }
    }

    #[test]
    fn cached_fs_forgets_after_its_time() {
        let f = fixture();
        let r = rules(&f, &[], &[]);
        let now = std::cell::Cell::new(Instant::now());
        let fs = CachedFs::new(|| now.get(), Duration::from_secs(1));
        // Enough new names for the root (known through `README.md`) to be read whole: its
        // listing ages the same way.
        check("README.md", &r, &fs).unwrap();
        for i in 0..12 {
            check(&format!("new{i}"), &r, &fs).unwrap();
        }
        assert!(matches!(
            fs.memory.borrow().folders.get(f.root.as_os_str()),
            Some(Folder::Listed(_))
        ));
        assert_eq!(check("later", &r, &fs).unwrap(), "later");
        symlink(f.base.join("outside"), f.root.join("later")).unwrap();
        symlink(f.base.join("outside"), f.root.join("later2")).unwrap();
        assert_eq!(check("later2", &r, &fs).unwrap(), "later2");
        // Within the second the memory still says `later` does not exist.
        now.set(now.get() + Duration::from_millis(900));
        assert_eq!(check("later", &r, &fs).unwrap(), "later");
        now.set(now.get() + Duration::from_millis(200));
        for name in ["later", "later2"] {
            assert!(matches!(
                check(name, &r, &fs),
                Err(PathError::Outside { .. })
            ));
        }
    }

    /// A folder asked about often is read whole; its listing answers as `lstat` would, for
    /// names there and not, plain and symlinked (dangling, inside, outside, looping), and a
    /// folder too big to list is still asked name by name.
    #[test]
    fn listed_folders_answer_as_lstat_does() {
        type Cached = CachedFs<fn() -> Instant>;
        let f = fixture();
        let big = f.root.join("big");
        std::fs::create_dir(&big).unwrap();
        for i in 0..=Cached::MAX_LISTED {
            std::fs::write(big.join(format!("f{i}")), "").unwrap();
        }
        symlink("../../outside/secret.txt", big.join("zz_out")).unwrap();
        let deny = default_deny();
        let r = rules(&f, &deny, &[]);
        let fs: Cached = CachedFs::new(Instant::now, Duration::from_secs(3600));
        // Plain new names first, so each folder is listed before the links are asked for.
        let mut names: Vec<String> = Vec::new();
        for folder in ["", "src/", "big/"] {
            for i in 0..Cached::LIST_AFTER + 2 {
                names.push(format!("{folder}new{i}.txt"));
            }
        }
        names.extend(
            [
                "link_out_file",
                "link_out_dir",
                "link_in",
                "dangle_out",
                "dangle_in",
                "loop_a",
                "innocent",
                "chain1",
                "README.md",
                ".env",
                "src/main.rs",
                "big/f3",
                "big/zz_out",
                "sub",
                "sub/dir",
            ]
            .map(String::from),
        );
        for raw in &names {
            assert_eq!(check(raw, &r, &fs), check(raw, &r, &RealFs), "{raw:?}");
        }
        let memory = fs.memory.borrow();
        let listed = |folder: &Path| memory.folders.get(folder.as_os_str());
        assert!(matches!(listed(&f.root), Some(Folder::Listed(_))));
        assert!(matches!(
            listed(&f.root.join("src")),
            Some(Folder::Listed(_))
        ));
        assert!(matches!(listed(&big), Some(Folder::Unlisted)));
    }

    /// A remembered check answers for the rules it was made under only.
    #[test]
    fn cached_checks_belong_to_their_rules() {
        let f = fixture();
        let open = rules(&f, &[], &[]);
        let strict = rules(&f, &strings(&["*.rs"]), &[]);
        let fs = CachedFs::new(Instant::now, Duration::from_secs(60));
        for _ in 0..2 {
            assert_eq!(check("src/main.rs", &open, &fs).unwrap(), "src/main.rs");
            assert!(matches!(
                check("src/main.rs", &strict, &fs),
                Err(PathError::Denied { .. })
            ));
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    /// Paths that must never be admitted, for the fixture's root.
    fn escape_corpus(f: &Fixture) -> Vec<String> {
        let root = f.root.display().to_string();
        let base = f.base.display().to_string();
        let long = "a/".repeat(2500);
        let long_component = "b".repeat(300);
        vec![
            "../x".into(),
            "..".into(),
            "a/../../x".into(),
            "src/../../x".into(),
            "../../../../../../../../../../../../etc/passwd".into(),
            "a/b/c/../../../../x".into(),
            "/etc/passwd".into(),
            "/".into(),
            "/tmp".into(),
            base.clone(),
            format!("{base}/outside/secret.txt"),
            format!("{root}2"),
            format!("{root}2/x"),
            "../root2".into(),
            "../root2/x".into(),
            format!("{root}/../root2/x"),
            "link_out_file".into(),
            "link_out_dir".into(),
            "link_out_dir/f.txt".into(),
            "link_out_dir/new.txt".into(),
            "link_root2/x".into(),
            "chain1".into(),
            "chain1/f.txt".into(),
            "link_out_dir/../secret.txt".into(),
            "link_out_dir/../../x".into(),
            "link_sub/../../x".into(),
            "link_sub/../../../x".into(),
            "dangle_out".into(),
            "dangle_out_deep".into(),
            "loop_a".into(),
            "loop_a/x".into(),
            "./././../x".into(),
            "%2e%2e/x".into(),
            "%2E%2E/x".into(),
            "..%2fx".into(),
            "..%2Fx".into(),
            "%252e%252e/x".into(),
            "%25252e%25252e/x".into(),
            "%c0%ae%c0%ae/x".into(),
            "%e0%80%ae%e0%80%ae/x".into(),
            "%E0%80%AE%E0%80%AE/x".into(),
            "%25e0%2580%25ae%25e0%2580%25ae/x".into(),
            "%f0%80%80%ae%f0%80%80%ae/x".into(),
            "file:///etc/passwd".into(),
            "file:/etc/passwd".into(),
            "FILE:../x".into(),
            "git+ssh://host/x".into(),
            "%00".into(),
            "..\\x".into(),
            "C:\\x".into(),
            "\\\\server\\share".into(),
            "x\0y".into(),
            "\0".into(),
            long,
            format!("a/{long_component}/x"),
            "~/x".into(),
            "~".into(),
            "~root/x".into(),
            "src/../..".into(),
            "link_out_dir/..".into(),
            "sub/dir/../../..".into(),
            format!("{root}/.."),
            "".into(),
        ]
    }

    #[test]
    fn escape_corpus_yields_zero_escapes() {
        let f = fixture();
        let r = rules(&f, &[], &[]);
        let root = f.root.display().to_string();
        let corpus = escape_corpus(&f);
        for raw in &corpus {
            let result = check(raw, &r, &RealFs);
            assert!(result.is_err(), "escaped: {raw:?} -> {result:?}");
        }
        // A few specific reasons.
        let reason = |raw: &str| check(raw, &r, &RealFs).unwrap_err();
        assert!(matches!(reason("../root2/x"), PathError::Outside { .. }));
        assert!(matches!(
            reason("link_out_dir/../secret.txt"),
            PathError::Outside { .. }
        ));
        assert!(matches!(reason("dangle_out"), PathError::Outside { .. }));
        assert!(matches!(reason("loop_a"), PathError::SymlinkLoop { .. }));
        assert_eq!(
            reason("%252e%252e/x"),
            PathError::Encoded {
                sequence: "%252e".into()
            }
        );
        assert_eq!(reason("..\\x"), PathError::Backslash);
        assert_eq!(reason("~/x"), PathError::Tilde);
        assert_eq!(
            reason("%e0%80%ae%e0%80%ae/x"),
            PathError::Encoded {
                sequence: "%e0%80".into()
            }
        );
        assert_eq!(
            reason("file:///etc/passwd"),
            PathError::Scheme {
                scheme: "file".into()
            }
        );
        assert!(
            reason("file:/etc/passwd")
                .rule()
                .contains("URI scheme `file:`")
        );
        assert_eq!(reason(""), PathError::Empty);
        assert_eq!(reason("a\0"), PathError::Nul);
        assert_eq!(reason(&"a".repeat(5000)), PathError::TooLong);
        match reason(&format!("{root}2/x")) {
            PathError::Outside { resolved, .. } => assert_eq!(resolved, f.base.join("root2/x")),
            other => panic!("{other:?}"),
        }
        let text = reason("../x").rule();
        assert!(
            text.starts_with(&format!("outside the root {root} (resolves to ")),
            "{text}"
        );
    }

    #[test]
    fn mirror_images_pass() {
        let f = fixture();
        let r = rules(&f, &[], &[]);
        let root = f.root.display().to_string();
        let cases: Vec<(String, &str)> = vec![
            ("src/main.rs".into(), "src/main.rs"),
            ("./src/../src/main.rs".into(), "src/main.rs"),
            (".".into(), "."),
            ("./".into(), "."),
            (root.clone(), "."),
            (format!("{root}/"), "."),
            (format!("{root}/src/main.rs"), "src/main.rs"),
            (format!("{root}/../root/src/main.rs"), "src/main.rs"),
            ("src//main.rs".into(), "src/main.rs"),
            ("src/".into(), "src"),
            ("src/..".into(), "."),
            ("link_in".into(), "src/main.rs"),
            ("link_in_dir/lib.rs".into(), "src/lib.rs"),
            ("link_sub/../x".into(), "sub/x"),
            ("dangle_in".into(), "src/new.rs"),
            ("new/dir/file.txt".into(), "new/dir/file.txt"),
            ("new/../file.txt".into(), "file.txt"),
            ("100%done.txt".into(), "100%done.txt"),
            ("%41.txt".into(), "%41.txt"),
            ("a~b".into(), "a~b"),
            ("C:/x".into(), "C:/x"),
            // Not a scheme: a digit first, a `/` before the `:`, or a character beyond ASCII.
            ("2024:notes".into(), "2024:notes"),
            ("src/a:b".into(), "src/a:b"),
            ("é:x".into(), "é:x"),
            // Encoded UTF-8 that is not overlong: `%e0%a4%85` is `अ`.
            ("%e0%a4%85.txt".into(), "%e0%a4%85.txt"),
            ("%f0%9f%98%80".into(), "%f0%9f%98%80"),
        ];
        for (raw, expected) in &cases {
            assert_eq!(check(raw, &r, &RealFs).as_deref(), Ok(*expected), "{raw}");
        }
    }

    #[test]
    fn root_given_through_a_symlink_and_odd_names() {
        use std::os::unix::ffi::OsStrExt;
        let f = fixture();
        let alias = f.base.join("alias");
        symlink(&f.root, &alias).unwrap();
        let r = PathRules::new(&alias, &[], &[], &RealFs).unwrap();
        assert_eq!(r.root(), f.root);
        let via_alias = format!("{}/src/main.rs", alias.display());
        assert_eq!(check(&via_alias, &r, &RealFs).as_deref(), Ok("src/main.rs"));
        let outside_alias = format!("{}/../root2/x", alias.display());
        assert!(matches!(
            check(&outside_alias, &r, &RealFs),
            Err(PathError::Outside { .. })
        ));
        // A symlink to a name that is not UTF-8 cannot be reported as text: refused.
        let odd = f.root.join(std::ffi::OsStr::from_bytes(b"odd\xff"));
        std::fs::write(&odd, "").unwrap();
        symlink(&odd, f.root.join("weird")).unwrap();
        assert!(matches!(
            check("weird", &r, &RealFs),
            Err(PathError::NotUtf8 { .. })
        ));
    }

    #[test]
    fn required_literals() {
        for (pattern, literal) in [
            ("**/.env", Some(".env")),
            ("**/secrets/**", Some("secrets")),
            ("**/secrets.{json,yaml}", Some("secrets.")),
            ("**/*private*key*", Some("private")),
            ("**/.git/config", Some("config")),
            ("a[bc]d", Some("a")),
            ("[!]x]yz*", Some("yz")),
            ("[^]x]yz*", Some("yz")),
            ("{abc,def}/q*", Some("q")),
            ("**/*", None),
            ("**/*.{pem,key}", Some(".")),
            ("*{ab,cd}?", None),
            ("a\\*b", None),
        ] {
            assert_eq!(required_literal(pattern), literal, "{pattern}");
        }
    }

    fn glob_list_without_prefilter(globs: &[String]) -> GlobList {
        GlobList {
            required: None,
            ..GlobList::new(globs).unwrap()
        }
    }

    #[test]
    fn deny_corpus() {
        let f = fixture();
        let r = rules(&f, &default_deny(), &[]);
        let denied = [
            (".env", ".env*"),
            ("config/.env.local", ".env*"),
            ("CONFIG/.ENV", ".env*"),
            (".env.example", ".env*"),
            (".env~", ".env*"),
            (".env-local", ".env*"),
            (".env_prod", ".env*"),
            (".ENV2", ".env*"),
            ("a/.envrc", ".env*"),
            (".git/config", "**/.git/**/config"),
            ("vendor/x/.git/config", "**/.git/**/config"),
            (".git/modules/m/config", "**/.git/**/config"),
            (".GIT/modules/a/modules/b/CONFIG", "**/.git/**/config"),
            ("a/secrets/db.txt", "**/secrets/**"),
            ("a/secrets", "**/secrets/**"),
            ("secret/x", "**/secret/**"),
            (
                "config/secrets.yml",
                "secrets.{json,yaml,yml,toml,env,ini,txt}",
            ),
            ("keys/server.pem", "*.pem"),
            ("keys/SERVER.PEM", "*.pem"),
            ("tls/server.key", "*.key"),
            ("cert.p12", "*.p12"),
            ("home/.ssh/id_ed25519", "id_ed25519*"),
            ("home/.ssh/id_rsa", "id_rsa*"),
            ("home/.ssh/id_rsa.pub", "id_rsa*"),
            ("home/.ssh/identity", "**/.ssh/identity"),
            (".ssh/identity", "**/.ssh/identity"),
            ("keys/putty.ppk", "*.ppk"),
            ("keys/AuthKey_ABC.p8", "*.p8"),
            (
                "my_private_key.txt",
                "*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}",
            ),
            (
                "PrivateKey.ASC",
                "*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}",
            ),
            ("keys/private_key", "*private*key"),
            ("private_keys/a", "*private*keys"),
            ("keys/private_key.pem", "*.pem"),
            (
                "deploy/passwords.txt",
                "*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}",
            ),
            ("deploy/passwords", "*passwords"),
            ("passwords/db", "*passwords"),
            (
                "db_password.yml",
                "*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}",
            ),
            (".netrc", ".netrc"),
            (".htpasswd", ".htpasswd"),
            (".pgpass", ".pgpass"),
            (".git-credentials", ".git-credentials"),
            ("home/.aws/credentials", "**/.aws/credentials"),
            // Through a symlink: judged on what it resolves to.
            ("innocent", ".env*"),
        ];
        for (raw, glob) in denied {
            match check(raw, &r, &RealFs) {
                Err(PathError::Denied { glob: g, .. }) => assert_eq!(g, glob, "{raw}"),
                other => panic!("{raw}: {other:?}"),
            }
        }
        let err = check("keys/server.pem", &r, &RealFs).unwrap_err();
        assert_eq!(err.rule(), "matches deny rule `*.pem` (keys/server.pem)");

        for raw in [
            "README.md",
            "src/environment.rs",
            "docs/secretary.md",
            "src/secret_santa.rs",
            "src/secrets.rs",
            "src/keyboard.rs",
            "src/password.rs",
            "src/reset_password.py",
            "src/private_key.rs",
            "crypto/PrivateKeyParser.java",
            "src/passwords.rs",
            "tests/test_passwords.py",
            "keys/server.pub",
            "src/identity/mod.rs",
            ".gitmodules",
            ".github/config",
            ".",
            ".github/workflows/ci.yml",
            ".gitignore",
        ] {
            assert_eq!(check(raw, &r, &RealFs).as_deref(), Ok(raw), "{raw}");
        }
    }

    #[test]
    fn allow_list() {
        let f = fixture();
        let r = rules(&f, &default_deny(), &strings(&["src/**"]));
        assert_eq!(check("src/a.rs", &r, &RealFs).as_deref(), Ok("src/a.rs"));
        assert_eq!(check("src", &r, &RealFs).as_deref(), Ok("src"));
        assert_eq!(check("link_in", &r, &RealFs).as_deref(), Ok("src/main.rs"));
        assert_eq!(
            check("docs/a.md", &r, &RealFs),
            Err(PathError::NotAllowed {
                relative: "docs/a.md".into()
            })
        );
        assert!(matches!(
            check(".", &r, &RealFs),
            Err(PathError::NotAllowed { .. })
        ));
        assert_eq!(
            check("src/.env", &r, &RealFs),
            Err(PathError::Denied {
                glob: ".env*".into(),
                relative: "src/.env".into()
            })
        );
        // A directory name allows what is under it; `/` anchors.
        let r = rules(&f, &[], &strings(&["/docs", "*.rs"]));
        assert_eq!(check("docs/a.md", &r, &RealFs).as_deref(), Ok("docs/a.md"));
        assert!(check("x/docs/a.md", &r, &RealFs).is_err());
        assert_eq!(
            check("deep/x/y.RS", &r, &RealFs).as_deref(),
            Ok("deep/x/y.RS")
        );
    }

    #[test]
    fn rule_errors() {
        let f = fixture();
        let err = PathRules::new(&f.root, &strings(&["ok/**", "a["]), &[], &RealFs).unwrap_err();
        assert_eq!(err.glob, "a[");
        let err = PathRules::new(&f.root, &[], &strings(&[""]), &RealFs).unwrap_err();
        assert_eq!(err.glob, "");
        let err = PathRules::new(Path::new("relative/root"), &[], &[], &RealFs).unwrap_err();
        assert_eq!(err.glob, "relative/root");
        let missing = f.base.join("missing");
        let err = PathRules::new(&missing, &[], &[], &RealFs).unwrap_err();
        assert_eq!(err.glob, missing.display().to_string());
        for glob in DEFAULT_DENY {
            assert!(expand_glob(glob).is_ok(), "{glob}");
        }
        // The root is canonicalized.
        let r = PathRules::new(&f.root.join("src/.."), &[], &[], &RealFs).unwrap();
        assert_eq!(r.root(), f.root);
    }

    /// A fake file system: `canonical` maps existing paths to their canonical form, `links`
    /// holds symlink targets (for `read_link`).
    #[derive(Default)]
    struct FakeFs {
        canonical: HashMap<PathBuf, PathBuf>,
        links: HashMap<PathBuf, PathBuf>,
    }

    impl FakeFs {
        fn exists(mut self, path: &str, canonical: &str) -> Self {
            self.canonical.insert(path.into(), canonical.into());
            self
        }
        fn link(mut self, path: &str, target: &str) -> Self {
            self.links.insert(path.into(), target.into());
            self
        }
    }

    impl Fs for FakeFs {
        fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
            self.canonical
                .get(path)
                .cloned()
                .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
        }
        fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
            self.links
                .get(path)
                .cloned()
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
        }
    }

    #[test]
    fn fake_fs_link_then_dotdot_follows_the_target() {
        let fs = FakeFs::default()
            .exists("/srv/app", "/srv/app")
            .exists("/srv/app/link", "/other/d")
            .exists("/other", "/other")
            .exists("/srv/app/in", "/srv/app/a/b")
            .exists("/srv/app/a", "/srv/app/a");
        let r = PathRules::new(Path::new("/srv/app"), &[], &[], &fs).unwrap();
        // Lexically `/srv/app/x`; the kernel opens `/other/x`.
        assert_eq!(
            check("link/../x", &r, &fs),
            Err(PathError::Outside {
                root: "/srv/app".into(),
                resolved: "/other/x".into()
            })
        );
        assert_eq!(
            check("link/../x", &r, &fs).unwrap_err().rule(),
            "outside the root /srv/app (resolves to /other/x)"
        );
        // Kernel: /srv/app/a/b/.. = /srv/app/a, then x.
        assert_eq!(check("in/../x", &r, &fs).as_deref(), Ok("a/x"));
        // Kernel view inside (/srv/app/x), lexical view outside (/srv/x): refused.
        assert!(matches!(
            check("in/../../x", &r, &fs),
            Err(PathError::Outside { .. })
        ));
        // Prefix sibling.
        assert!(matches!(
            check("/srv/app2/x", &r, &fs),
            Err(PathError::Outside { .. })
        ));
    }

    #[test]
    fn fake_fs_dangling_links_and_odd_answers() {
        let fs = FakeFs::default()
            .exists("/r", "/r")
            .exists("/r/rel", "not/absolute")
            .link("/r/dangle", "/elsewhere/new")
            .link("/r/dangle_in", "sub/new")
            .link("/r/up", "../escape")
            .link("/r/l1", "/r/l2")
            .link("/r/l2", "/r/l1");
        let r = PathRules::new(Path::new("/r"), &[], &[], &fs).unwrap();
        assert!(matches!(
            check("dangle", &r, &fs),
            Err(PathError::Outside { .. })
        ));
        assert!(matches!(
            check("up", &r, &fs),
            Err(PathError::Outside { .. })
        ));
        assert_eq!(check("dangle_in/x", &r, &fs).as_deref(), Ok("sub/new/x"));
        assert!(matches!(
            check("l1", &r, &fs),
            Err(PathError::SymlinkLoop { .. })
        ));
        // A canonical form that is not absolute is ignored (treated as missing).
        assert_eq!(check("rel/x", &r, &fs).as_deref(), Ok("rel/x"));
        // A relative root answer is an error, not a panic.
        let odd = FakeFs::default().exists("/q", "q");
        assert!(PathRules::new(Path::new("/q"), &[], &[], &odd).is_err());
    }

    #[test]
    fn root_slash_and_errors_display() {
        let fs = FakeFs::default().exists("/", "/");
        let r = PathRules::new(Path::new("/"), &default_deny(), &[], &fs).unwrap();
        assert_eq!(check("/etc/hosts", &r, &fs).as_deref(), Ok("etc/hosts"));
        assert_eq!(check("../..", &r, &fs).as_deref(), Ok("."));
        for e in [
            PathError::Empty,
            PathError::Nul,
            PathError::Encoded {
                sequence: "%2e".into(),
            },
            PathError::Backslash,
            PathError::TooLong,
            PathError::Tilde,
            PathError::Scheme {
                scheme: "file".into(),
            },
            PathError::NotAllowed {
                relative: "x".into(),
            },
        ] {
            assert!(!e.to_string().is_empty());
        }
    }

    /// Every path under `top` outside `root`, with file sizes.
    fn snapshot(top: &Path, root: &Path) -> BTreeMap<PathBuf, u64> {
        let mut out = BTreeMap::new();
        let mut stack = vec![top.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.starts_with(root) {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path).unwrap();
                out.insert(path.clone(), meta.len());
                if meta.is_dir() {
                    stack.push(path);
                }
            }
        }
        out
    }

    /// Simulates a tool that creates parent directories and appends to `target`, after making
    /// sure (with the real kernel) that nothing can land outside `top`.
    fn simulate_write(f: &Fixture, target: &Path) -> Result<(), TestCaseError> {
        prop_assert!(
            lexical_normalize(target).starts_with(&f.top),
            "would write outside the sandbox: {}",
            target.display()
        );
        if let Some(existing) = target
            .ancestors()
            .find_map(|a| std::fs::canonicalize(a).ok())
        {
            prop_assert!(existing.starts_with(&f.root), "{}", target.display());
        }
        if let Some(parent) = target.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(target)
        {
            let _ = file.write_all(b"x");
        }
        if let Ok(landed) = std::fs::canonicalize(target) {
            prop_assert!(
                landed.starts_with(&f.root),
                "landed at {}",
                landed.display()
            );
        }
        Ok(())
    }

    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => Just("..".to_string()),
            1 => Just(".".to_string()),
            1 => Just(String::new()),
            6 => prop::sample::select(vec![
                "src", "main.rs", "new", "sub", "dir", "link_out_file", "link_out_dir",
                "link_in", "link_in_dir", "link_sub", "chain1", "link_root2", "dangle_out",
                "dangle_out_deep", "dangle_in", "loop_a", "root", "root2", "outside", "d",
                "secret.txt", "f.txt", "x", "%2e%2e", "%252e", "~", "..\\x", ".env",
            ])
            .prop_map(str::to_string),
            3 => "[a-z./\\\\%~]{0,6}",
        ]
    }

    /// A raw path and where it starts: 0 relative, 1 the root, 2 `base`, 3 the tempdir.
    fn raw_path() -> impl Strategy<Value = (u8, String)> {
        prop_oneof![
            (0u8..4, "[a-z./\\\\%~]{0,40}"),
            (0u8..4, prop::collection::vec(segment(), 0..10)).prop_map(|(s, v)| (s, v.join("/"))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The required-literal screen never changes which glob matches first.
        #[test]
        fn the_literal_screen_agrees_with_the_glob_set(
            pieces in prop::collection::vec(prop::sample::select(vec![
                "a", "/", ".", "-", "_", "env", ".ENV", "Secrets", "secret", "key", "Key",
                "private", "password", "s", ".pem", "id_rsa", "config", ".git", "yz", "q",
                "abc", "x", "]", "K", "\u{212a}", "\u{17f}", "é",
            ]), 0..8),
        ) {
            let mut globs = default_deny();
            globs.extend(["[^]x]yz*", "{abc,def}/q*", "a[bc]d", "/docs/*.md"].map(String::from));
            let screened = GlobList::new(&globs).unwrap();
            prop_assert!(screened.required.is_some());
            let plain = glob_list_without_prefilter(&globs);
            let path = pieces.concat();
            prop_assert_eq!(screened.first_match(&path), plain.first_match(&path), "{:?}", path);
        }

        /// For generated paths: `check` never panics, and when it says Ok, nothing a tool
        /// does with the raw argument (kernel or lexical reading) or with the returned path
        /// lands outside the root.
        #[test]
        fn never_escapes((start, tail) in raw_path()) {
            let f = fixture();
            let r = rules(&f, &[], &[]);
            let raw = match start {
                0 => tail,
                1 => format!("{}/{tail}", f.root.display()),
                2 => format!("{}/{tail}", f.base.display()),
                _ => format!("{}/{tail}", f.top.display()),
            };
            let result = check(&raw, &r, &RealFs);
            // The cached file system answers alike, asked cold and again warm.
            let cached = CachedFs::new(Instant::now, Duration::from_secs(60));
            for _ in 0..2 {
                prop_assert_eq!(format!("{:?}", check(&raw, &r, &cached)), format!("{result:?}"));
            }
            let Ok(relative) = result else { return Ok(()); };
            let rel = Path::new(&*relative);
            prop_assert!(rel.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)));
            let raw_target = f.root.join(&raw);
            if let Ok(kernel) = std::fs::canonicalize(&raw_target) {
                prop_assert!(kernel.starts_with(&f.root), "{raw:?} -> {}", kernel.display());
            }
            let before = snapshot(&f.top, &f.root);
            simulate_write(&f, &raw_target)?;
            simulate_write(&f, &lexical_normalize(&raw_target))?;
            simulate_write(&f, &f.root.join(rel))?;
            prop_assert_eq!(before, snapshot(&f.top, &f.root), "{:?} wrote outside", raw);
        }

        /// Arbitrary text never panics, and Ok is always a clean relative path.
        #[test]
        fn never_panics(raw in any::<String>(), raw2 in "[a-z./\\\\%~\u{0}-\u{1f}\u{e9}]{0,80}") {
            let fs = FakeFs::default().exists("/r", "/r").link("/r/l", "/x");
            let r = PathRules::new(Path::new("/r"), &default_deny(), &[], &fs).unwrap();
            for raw in [raw, raw2] {
                if let Ok(rel) = check(&raw, &r, &fs) {
                    prop_assert!(Path::new(&*rel).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)));
                    prop_assert!(rel == "." || !rel.starts_with('/'));
                }
            }
        }
    }
}
