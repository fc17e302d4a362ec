//! The operator's rules compiled once: the canonical root, the deny globs and the allow globs.

use std::path::{Path, PathBuf};

use super::globs::GlobList;
use super::protected::Protected;
use super::resolve::clean_absolute;
use super::{Fs, PathError, RuleError};

/// Compiled path rules.
#[derive(Debug, Clone)]
pub struct PathRules {
    /// Tells these rules from any others, for answers remembered by
    /// [`Fs::checked`](super::Fs::checked).
    pub(super) id: u64,
    pub(super) root: PathBuf,
    deny: GlobList,
    allow: GlobList,
    /// Set by [`PathRules::protecting`]; none by default.
    pub(super) protected: Protected,
    /// What the tool does with the path, as far as protected files go (set by
    /// [`PathRules::for_access`]; [`Access::Write`] by default).
    pub(super) access: Access,
}

/// What a tool does with a path argument, as the policy declares it (`access = "read"`).
/// It only changes what is refused near metagate's own files: a folder on the way to one
/// may be read (listed, searched) but not written (deleted, moved, created into). The gate
/// cannot see what a tool does with a path, so an undeclared one is taken to write.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Reads the path: a protected file (or a place below it) is refused, its folders are not.
    Read,
    /// Writes, moves, deletes or creates it: a protected file and every folder on the way to
    /// one are refused.
    #[default]
    Write,
}

impl Access {
    /// The name the policy writes (`read` or `write`).
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// A number no other rules have had in this process.
pub(super) fn next_id() -> u64 {
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
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
        Ok(PathRules {
            id: next_id(),
            root,
            deny: GlobList::new(deny)?,
            allow: GlobList::new(allow)?,
            protected: Protected::default(),
            access: Access::Write,
        })
    }

    /// These rules for a tool that does `access` with its path (see [`Access`]).
    pub fn for_access(mut self, access: Access) -> PathRules {
        if self.access != access {
            self.access = access;
            // Answers remembered for the rules as they were no longer hold.
            self.id = next_id();
        }
        self
    }

    /// What the tool does with the path, as these rules take it.
    #[cfg(test)]
    pub(crate) fn access(&self) -> Access {
        self.access
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Containment: the `/`-separated path of `resolved` relative to the root.
    pub(super) fn relative(&self, resolved: &Path) -> Result<String, PathError> {
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

    /// Hard links of the resolved file `full` (`relative` to the root): one of the protected
    /// files under another name is refused to every tool, a file of several names to a tool
    /// that writes. A file that cannot be looked at is left to the tool's own error.
    pub(super) fn judge_links(
        &self,
        full: &Path,
        relative: &str,
        fs: &dyn Fs,
    ) -> Result<(), PathError> {
        let Ok(Some(links)) = fs.file_links(full) else {
            return Ok(());
        };
        if let Some(protected) = self.protected.same_file(links) {
            return Err(PathError::Protected {
                relative: relative.to_string(),
                protected: protected.to_string(),
            });
        }
        if links.nlink > 1 && self.access == Access::Write {
            return Err(PathError::HardLink {
                relative: relative.to_string(),
                links: links.nlink,
            });
        }
        Ok(())
    }

    /// Deny first, then allow, then the protected files (their folders only when writing).
    pub(super) fn judge(&self, relative: &str) -> Result<(), PathError> {
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
        if let Some(protected) = self.protected.reached_by(relative, self.access) {
            return Err(PathError::Protected {
                relative: relative.to_string(),
                protected: protected.to_string(),
            });
        }
        Ok(())
    }
}
