//! Where code scanning and annotations take a trace's path from: the repository's root, not
//! the folder lint ran in. `traces/a.jsonl` named from inside `traces/` as `./a.jsonl`, or by
//! its absolute path, is still `traces/a.jsonl` to GitHub. Pure path arithmetic: the binary
//! finds the root and the working folder.

use std::path::{Component, Path, PathBuf};

/// The SARIF `uriBaseId` the root goes by (SARIF 2.1.0 §3.14.14 names `%SRCROOT%` as the
/// conventional one for the sources' root).
pub const SRCROOT: &str = "%SRCROOT%";

/// The repository's root and the working folder lint's inputs were named from.
#[derive(Debug, Clone)]
pub struct SourceRoot {
    root: PathBuf,
    cwd: PathBuf,
}

impl SourceRoot {
    /// `root` and `cwd` as absolute paths (`cwd` names relative inputs).
    pub fn new(root: PathBuf, cwd: PathBuf) -> SourceRoot {
        SourceRoot {
            root: normal(&root),
            cwd: normal(&cwd),
        }
    }

    /// The root, absolute.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `file` as lint names it, made absolute against the working folder, `.` and `..` taken
    /// out. None for a name that is no path (`<stdin>`).
    pub fn absolute(&self, file: &str) -> Option<PathBuf> {
        if file == "<stdin>" {
            return None;
        }
        let path = Path::new(file);
        Some(normal(&if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }))
    }

    /// `file` relative to the root with `/` between its parts, when it is inside the root.
    pub fn relative(&self, file: &str) -> Option<String> {
        let full = self.absolute(file)?;
        let inside = full.strip_prefix(&self.root).ok()?;
        let parts: Vec<String> = inside
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

/// `path` without `.` components, each `..` taking the part before it away (as far as the
/// root). Lexical, as a name the user typed is read: no link is followed.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_named_from_the_root_wherever_lint_ran() {
        let at = |cwd: &str| SourceRoot::new("/repo".into(), cwd.into());
        let cases = [
            ("/repo", "traces/a.jsonl", Some("traces/a.jsonl")),
            ("/repo/traces", "./a.jsonl", Some("traces/a.jsonl")),
            ("/repo/traces", "a.jsonl", Some("traces/a.jsonl")),
            ("/elsewhere", "/repo/traces/a.jsonl", Some("traces/a.jsonl")),
            ("/repo/traces/deep", "../a.jsonl", Some("traces/a.jsonl")),
            (
                "/repo",
                "./traces/../traces/x y.json",
                Some("traces/x y.json"),
            ),
            ("/repo", "../other/a.jsonl", None),
            ("/repo", "/tmp/a.jsonl", None),
            ("/repo", "<stdin>", None),
            // A sibling whose name starts like the root's is not inside it.
            ("/repo", "/repository/a.jsonl", None),
        ];
        for (cwd, file, want) in cases {
            assert_eq!(at(cwd).relative(file).as_deref(), want, "{cwd} {file}");
        }
        assert_eq!(
            at("/repo/t").absolute("../x.json"),
            Some(PathBuf::from("/repo/x.json"))
        );
    }
}
