//! Path-argument checks: keep tool paths inside the operator's root folder and away from
//! denied files.
//!
//! Unix semantics only (`/` is the only separator; there are no drive prefixes).
//!
//! # What [`check`] does
//!
//! 1. **Refuse before resolving**: empty, leading or trailing whitespace (a tool that trims
//!    it would open another path than the one checked), NUL, backslash, percent-encoded
//!    `.`/`/`/`\`/NUL (and overlong UTF-8: the leads `%c0`/`%c1`, and `%e0`/`%f0` before a
//!    byte that makes the form overlong, as in `%e0%80%ae`), any number of `%25` layers deep,
//!    a leading `~` or `$` (expansions), a leading URI scheme (`file:`), more than 4096 bytes (`PATH_MAX`) or a
//!    component over 255 (`NAME_MAX`).
//! 2. **Resolve two ways**, and require *both* results to pass every rule:
//!    * the *kernel view*: walk the original components one at a time, the way `open(2)` does.
//!      Each existing prefix is canonicalized through [`Fs::canonicalize`] (following symlinks),
//!      and a `..` is applied to that canonical form, so `link/../x` lands next to the link's
//!      *target*, as the kernel would. A symlink that does not resolve (dangling, or a loop) is
//!      read with [`Fs::read_link`] and its target spliced in front of the remaining components
//!      (at most 40 times, as Linux does), because creating a file through a dangling link
//!      creates its target; a symlink that resolves is followed the same way, one hop at a
//!      time. Once a component does not exist, the rest is appended lexically (`..` pops it
//!      again). A link the kernel resolves per process (`/proc/self`, `/proc/<pid>/cwd`,
//!      `…/root`, `…/fd`, `/dev/fd`) is refused wherever the walk meets it: metagate would
//!      resolve it in its own process, the tool opens it in another.
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
//!    [`PathRules::new`] for the glob dialect); **then protected files**: with
//!    [`PathRules::protecting`], a path that names one, a folder on the way to one, or a place
//!    below one is refused; with [`PathRules::for_access`]`(`[`Access::Read`]`)` the folders on
//!    the way are not.
//! 5. **Hard links**: a regular file with more than one name is refused to a tool that
//!    writes it (its other names may be anywhere on the device: `~/.bashrc`, another
//!    project), and to any tool when it is one of the protected files under another name
//!    (its device and inode are theirs).
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
//!
//! # Where things are
//!
//! This file holds [`check`], the one entry point, and its fast path. Step 1 is
//! `precheck.rs`; step 2's walk is `resolve.rs`, which asks `process_links.rs` about each
//! folder it enters; steps 3 and 4 are [`PathRules`] (`rules.rs`), whose globs are compiled in
//! `globs.rs` and whose protected files are walked in `protected.rs`. The file system comes in
//! through [`Fs`] (`fs.rs`), or [`CachedFs`] (`cached_fs.rs`) for a stream of calls; refusals
//! are [`PathError`]s (`error.rs`); the default deny list is [`DEFAULT_DENY`]
//! (`default_deny.rs`).

mod cached_fs;
mod default_deny;
mod error;
mod fs;
mod globs;
mod precheck;
mod process_links;
mod protected;
mod resolve;
mod rules;
#[cfg(all(test, unix))]
mod tests;

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

pub use cached_fs::CachedFs;
pub use default_deny::DEFAULT_DENY;
pub use error::{PathError, RuleError, push_path};
pub use fs::{FileLinks, Fs, RealFs, real_file_links};
pub use rules::{Access, PathRules};

use precheck::precheck;
use process_links::may_be_process_link;
use resolve::{lexical_normalize, resolve, steps};

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
        // Under `/proc` or `/dev` the walk looks for links that resolve per process.
        if !may_be_process_link(full.as_bytes())
            && fs.resolves_to_itself(Path::new(&full[..parent_end]), Path::new(&full))
        {
            rules.judge(raw)?;
            rules.judge_links(Path::new(&full), raw, fs)?;
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
    rules.judge_links(&kernel, &kernel_relative, fs)?;
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
