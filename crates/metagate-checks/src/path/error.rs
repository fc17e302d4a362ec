//! Why a path or a rule is refused, and how that reads in a rejection.

use std::fmt;
use std::path::{Path, PathBuf};

use super::precheck::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES};
use metagate_wire::display::escape_controls;

/// A rule that could not be compiled: an invalid glob, or a root that is not absolute or
/// cannot be resolved (then `glob` is the root as given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The glob as written, or the root when the root itself is at fault.
    pub glob: String,
    /// What is wrong with it.
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
    /// An empty string: no path at all.
    Empty,
    /// Holds a NUL byte, which would cut the path short where a tool passes it to the system.
    Nul,
    /// Percent-encoded `.`/`/`/`\`/NUL (`%2e`, `%2f`, `%5c`, `%00`, any case, also
    /// double-encoded `%252e`), or overlong UTF-8 (`%c0`, `%c1`, `%e0%80`…`%e0%9f`,
    /// `%f0%80`…`%f0%8f`).
    Encoded {
        /// The encoded sequence as found.
        sequence: String,
    },
    /// A backslash: Windows separators are not paths here.
    Backslash,
    /// Longer than 4096 bytes, or a component longer than 255.
    TooLong,
    /// `~` expansion is the shell's business; a path starting with `~` is refused.
    Tilde,
    /// So is `$` expansion (a shell's, Python's `os.path.expandvars`): `$HOME/.local/state`,
    /// `${XDG_STATE_HOME}/…`, `$1/x` (unset: `/x`) name another path to a tool that expands
    /// them. Past the start, a variable holding an absolute path stays below what comes before
    /// it (`a/$HOME` is `a//home/u`).
    Dollar,
    /// Starts with a URI scheme of two letters or more (`file:///etc/passwd`, `file:/x`):
    /// a tool that takes URIs opens what it names, not `root/file:/…`. One letter is left
    /// alone: `C:/x` is a relative name here (and `C:\x` is refused for its backslash).
    Scheme {
        /// The scheme as written.
        scheme: String,
    },
    /// Resolves outside the root (after `..` and symlinks); `resolved` is what it resolved to.
    Outside {
        /// The root the path must stay under.
        root: PathBuf,
        /// Where the path resolved to.
        resolved: PathBuf,
    },
    /// Matches a deny glob (`glob` as written).
    Denied {
        /// The deny glob as written.
        glob: String,
        /// The path relative to the root.
        relative: String,
    },
    /// Allow globs are set and none matches.
    NotAllowed {
        /// The path relative to the root.
        relative: String,
    },
    /// Symlinks that loop or nest more than 40 (`MAX_SYMLINK_HOPS`) deep; `path` is the link.
    SymlinkLoop {
        /// The link that loops.
        path: PathBuf,
    },
    /// Starts or ends with whitespace (as Rust, Python, JavaScript and Go trim it): a tool
    /// that trims its arguments would open another path than the one checked (`" ../x"`).
    OuterWhitespace,
    /// Walks through a link the kernel resolves per process (`/proc/self`, `/proc/<pid>/cwd`,
    /// `…/root`, `…/fd`, `/dev/fd`); `path` is where the walk met it. See `process_links.rs`.
    ProcessLink {
        /// Where the walk met the link.
        path: PathBuf,
    },
    /// Names a file [`PathRules::protecting`](super::PathRules::protecting) protects
    /// (`protected`), a folder on the way to it, or a place below it.
    Protected {
        /// The path relative to the root.
        relative: String,
        /// The protected file it names, relative to the root.
        protected: String,
    },
    /// A regular file with `links` names, refused to a tool that writes: the write would
    /// reach every other name of it, wherever they are.
    HardLink {
        /// The path relative to the root.
        relative: String,
        /// How many names the file has.
        links: u64,
    },
    /// Resolves inside the root to a name that is not UTF-8 (possible through a symlink).
    NotUtf8 {
        /// Where the path resolved to.
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
            PathError::Dollar => {
                "path starts with `$` (no variable expansion; write `./$…` for a name that starts with it)"
                    .to_string()
            }
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
            PathError::OuterWhitespace => {
                "path starts or ends with whitespace (a tool that trims it would open another path)"
                    .to_string()
            }
            PathError::ProcessLink { path } => format!(
                "goes through {}, which each process resolves to its own files (/proc/self, /proc/<pid>/cwd, root, fd, /dev/fd): metagate cannot check what the tool would open",
                escape_controls(&path.display().to_string())
            ),
            PathError::Protected {
                relative,
                protected,
            } => {
                if relative == protected {
                    format!("names a protected file ({})", escape_controls(relative))
                } else {
                    format!(
                        "names {}, on the way to the protected file {} or below it",
                        escape_controls(relative),
                        escape_controls(protected)
                    )
                }
            }
            PathError::HardLink { relative, links } => format!(
                "names a file with {links} hard links ({}): writing it would write every other name of it, which no rule here can see",
                escape_controls(relative)
            ),
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
