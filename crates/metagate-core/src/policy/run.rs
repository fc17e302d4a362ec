//! `[run]`: the boundary `metagate run` (and `metagate mcp --sandbox`) runs commands in, as
//! data. This module decides what the boundary is (which folders may be written, which paths
//! are hidden, whether the network is on, the bounds); the operating system's side of it, the
//! rulesets and filters that enforce it, lives with the `run` job. Pure: the working folder, the
//! home folder and metagate's own files are passed in.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Which arguments of a tool hold the command `run` runs: the one declared `kind = "shell"`,
/// and the argument its `kind_when` reads (Agent Zero's `runtime`), which picks the
/// interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandArgs<'p> {
    /// The argument holding the code.
    pub code: &'p str,
    /// The argument naming the runtime, if the tool has one.
    pub runtime: Option<&'p str>,
}

/// The command arguments of `tool`, if it has a `shell` argument.
pub fn command_args(tool: &super::Tool) -> Option<CommandArgs<'_>> {
    let (code, arg) = tool
        .args
        .iter()
        .find(|(_, a)| a.kind == Some(super::ArgKind::Shell))?;
    Some(CommandArgs {
        code: code.as_str(),
        runtime: arg.kind_when.first().map(|(name, _)| name.as_str()),
    })
}

/// `[run]` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFile {
    /// Folders the command may write besides the path root (`~/` is the home folder, a
    /// relative folder is the policy file's folder's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) write: Option<Vec<String>>,
    /// Files and folders the command may not read, besides metagate's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deny_read: Option<Vec<String>>,
    /// Whether the command may reach the network (TCP, UDP, raw sockets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) network: Option<bool>,
    /// Whether the command may open Unix sockets by path (`/run/docker.sock` and the like).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unix_sockets: Option<bool>,
    /// Wall-clock seconds before the command and everything it started are killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timeout_secs: Option<u64>,
    /// Address space per process, in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory_mb: Option<u64>,
    /// Processes the command may have at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) processes: Option<u64>,
    /// Bytes of stdout and of stderr kept each, in KiB; the rest is counted and cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output_kb: Option<u64>,
    /// Run without the kernel's boundary where the kernel has no Landlock (fail open: off by
    /// default, so `run` refuses instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unconfined: Option<bool>,
    /// `metagate mcp` runs its server inside the boundary (as `--sandbox` does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sandbox_mcp: Option<bool>,
    /// The program and its first arguments for each `runtime` value; the code is the last
    /// argument.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) interpreters: IndexMap<String, Vec<String>>,
}

impl RunFile {
    /// Whether the section says nothing (and is left out of `policy show`).
    pub(crate) fn is_empty(&self) -> bool {
        self == &RunFile::default()
    }

    /// Layers `over` on `self`: scalars of `over` win, lists are replaced, interpreters merged.
    pub(crate) fn layer(&mut self, over: RunFile) {
        self.write = over.write.or(self.write.take());
        self.deny_read = over.deny_read.or(self.deny_read.take());
        self.network = over.network.or(self.network);
        self.unix_sockets = over.unix_sockets.or(self.unix_sockets);
        self.timeout_secs = over.timeout_secs.or(self.timeout_secs);
        self.memory_mb = over.memory_mb.or(self.memory_mb);
        self.processes = over.processes.or(self.processes);
        self.output_kb = over.output_kb.or(self.output_kb);
        self.unconfined = over.unconfined.or(self.unconfined);
        self.sandbox_mcp = over.sandbox_mcp.or(self.sandbox_mcp);
        self.interpreters.extend(over.interpreters);
    }
}

/// How long a command may run when the policy does not say.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Address space per process when the policy does not say (V8 and the JVM reserve much more
/// than they use, so this is generous).
pub const DEFAULT_MEMORY_MB: u64 = 16 * 1024;
/// Processes at once when the policy does not say.
pub const DEFAULT_PROCESSES: u64 = 1024;
/// Output kept per stream when the policy does not say.
pub const DEFAULT_OUTPUT_KB: u64 = 1024;

/// The bounds a command runs under, each settable (`[run]` keys, `run` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Wall-clock seconds.
    pub timeout_secs: u64,
    /// Address space per process, in MiB.
    pub memory_mb: u64,
    /// Processes at once.
    pub processes: u64,
    /// Bytes kept of stdout and of stderr, each.
    pub output_bytes: u64,
}

/// `[run]` read and checked, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRules {
    /// Folders writable besides the root, as written.
    pub write: Vec<String>,
    /// Paths hidden besides metagate's own, as written.
    pub deny_read: Vec<String>,
    /// Network on.
    pub network: bool,
    /// Unix sockets by path on.
    pub unix_sockets: bool,
    /// The bounds.
    pub bounds: Bounds,
    /// Running without Landlock allowed.
    pub unconfined: bool,
    /// `mcp` sandboxes its server.
    pub sandbox_mcp: bool,
    /// `runtime` value → program and first arguments.
    pub interpreters: IndexMap<String, Vec<String>>,
}

/// The interpreters `run` knows without a policy: Agent Zero's runtimes.
fn default_interpreters() -> IndexMap<String, Vec<String>> {
    [
        ("terminal", ["bash", "-c"]),
        ("python", ["python3", "-c"]),
        ("nodejs", ["node", "-e"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
    .collect()
}

impl RunRules {
    /// Reads `[run]`; each problem is a key path and a sentence.
    pub(crate) fn compile(file: &RunFile) -> (RunRules, Vec<(Vec<String>, String)>) {
        let mut problems = Vec::new();
        let mut positive = |key: &str, value: Option<u64>, default: u64| match value {
            Some(0) => {
                problems.push((
                    vec!["run".to_string(), key.to_string()],
                    "must be a positive number".to_string(),
                ));
                default
            }
            Some(v) => v,
            None => default,
        };
        let bounds = Bounds {
            timeout_secs: positive("timeout_secs", file.timeout_secs, DEFAULT_TIMEOUT_SECS),
            memory_mb: positive("memory_mb", file.memory_mb, DEFAULT_MEMORY_MB),
            processes: positive("processes", file.processes, DEFAULT_PROCESSES),
            output_bytes: positive("output_kb", file.output_kb, DEFAULT_OUTPUT_KB)
                .saturating_mul(1024),
        };
        let mut interpreters = default_interpreters();
        for (runtime, argv) in &file.interpreters {
            if argv.first().is_none_or(|p| p.trim().is_empty()) {
                problems.push((
                    vec!["run".into(), "interpreters".into(), runtime.clone()],
                    "names no program: write the program and its first arguments, e.g. [\"bash\", \"-c\"]".into(),
                ));
                continue;
            }
            interpreters.insert(runtime.clone(), argv.clone());
        }
        for (key, list) in [("write", &file.write), ("deny_read", &file.deny_read)] {
            for entry in list.iter().flatten() {
                if entry.trim().is_empty() || entry.contains('\0') {
                    problems.push((
                        vec!["run".into(), key.into()],
                        format!("{entry:?} names no folder"),
                    ));
                }
            }
        }
        let rules = RunRules {
            write: file.write.clone().unwrap_or_default(),
            deny_read: file.deny_read.clone().unwrap_or_default(),
            network: file.network.unwrap_or(false),
            unix_sockets: file.unix_sockets.unwrap_or(false),
            bounds,
            unconfined: file.unconfined.unwrap_or(false),
            sandbox_mcp: file.sandbox_mcp.unwrap_or(false),
            interpreters,
        };
        (rules, problems)
    }
}

/// Where the boundary's paths are read from: relative entries from the policy file's folder
/// (the working folder for the built-in policy), `~/` from the home folder.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// The working folder.
    pub cwd: &'a Path,
    /// The policy file's folder, if the policy came from a file.
    pub base: Option<&'a Path>,
    /// `$HOME`.
    pub home: Option<&'a Path>,
}

impl Places<'_> {
    /// An entry of `write` or `deny_read` as an absolute path (not resolved: the boundary
    /// resolves it when it opens it).
    pub fn absolute(&self, entry: &str) -> Option<PathBuf> {
        let entry = entry.trim();
        if entry == "~" {
            return self.home.map(Path::to_path_buf);
        }
        if let Some(rest) = entry.strip_prefix("~/") {
            return self.home.map(|h| h.join(rest));
        }
        if entry.starts_with('~') {
            // `~user` is another user's home: not read.
            return None;
        }
        let base = self
            .base
            .map_or_else(|| self.cwd.to_path_buf(), |b| self.cwd.join(b));
        Some(base.join(entry))
    }
}

/// The boundary one command runs in: what it may write, what it may not read, the network,
/// the bounds. The kernel enforces it; this only says what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    /// Folders (and files) the command may write, create and delete in: the path root and
    /// `[run] write`.
    pub write: Vec<PathBuf>,
    /// Paths the command may neither read nor change: metagate's own files (the policy lookup
    /// chain, every store and its companions, the grant key) and `[run] deny_read`.
    pub hidden: Vec<PathBuf>,
    /// Network on.
    pub network: bool,
    /// Unix sockets by path on.
    pub unix_sockets: bool,
    /// The bounds.
    pub bounds: Bounds,
}

/// The files beside a store that hold its pages (SQLite's) and its grant key (`-key`):
/// hidden like it.
pub const STORE_COMPANIONS: [&str; 4] = ["-wal", "-shm", "-journal", "-key"];

impl Boundary {
    /// The boundary for `rules` with the path root `root`, `own` being metagate's own files.
    /// Every entry comes out absolute and once.
    pub fn new(rules: &RunRules, root: &Path, own: &[PathBuf], at: &Places<'_>) -> Boundary {
        let mut write = vec![at.cwd.join(root)];
        write.extend(rules.write.iter().filter_map(|w| at.absolute(w)));
        let mut hidden = Vec::with_capacity(own.len() * 4 + rules.deny_read.len());
        for file in own {
            let file = at.cwd.join(file);
            for companion in STORE_COMPANIONS {
                let mut name = file.clone().into_os_string();
                name.push(companion);
                hidden.push(PathBuf::from(name));
            }
            hidden.push(file);
        }
        hidden.extend(rules.deny_read.iter().filter_map(|d| at.absolute(d)));
        Boundary {
            write: dedup(write),
            hidden: dedup(hidden),
            network: rules.network,
            unix_sockets: rules.unix_sockets,
            bounds: rules.bounds,
        }
    }
}

fn dedup(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for p in paths {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> (RunRules, Vec<(Vec<String>, String)>) {
        let file: RunFile = toml::from_str(text).unwrap();
        RunRules::compile(&file)
    }

    #[test]
    fn defaults_are_closed() {
        let (r, problems) = rules("");
        assert!(problems.is_empty());
        assert!(!r.network && !r.unix_sockets && !r.unconfined && !r.sandbox_mcp);
        assert_eq!(r.bounds.timeout_secs, DEFAULT_TIMEOUT_SECS);
        assert_eq!(r.bounds.output_bytes, DEFAULT_OUTPUT_KB * 1024);
        assert_eq!(r.interpreters["terminal"], ["bash", "-c"]);
        assert_eq!(r.interpreters["nodejs"], ["node", "-e"]);
    }

    #[test]
    fn zero_bounds_and_empty_programs_are_refused() {
        let (_, problems) = rules(
            "timeout_secs = 0\nmemory_mb = 0\ninterpreters = { ruby = [] }\nwrite = [\" \"]\n",
        );
        let keys: Vec<String> = problems.iter().map(|(k, _)| k.join(".")).collect();
        assert_eq!(
            keys,
            [
                "run.timeout_secs",
                "run.memory_mb",
                "run.interpreters.ruby",
                "run.write"
            ]
        );
    }

    #[test]
    fn the_boundary_hides_every_own_file_and_its_companions() {
        let (r, _) = rules("write = [\"~/.cache\", \"out\"]\ndeny_read = [\"~/.ssh\"]\n");
        let at = Places {
            cwd: Path::new("/w"),
            base: Some(Path::new("/p")),
            home: Some(Path::new("/h")),
        };
        let b = Boundary::new(
            &r,
            Path::new("."),
            &[PathBuf::from("/h/.local/state/metagate/metagate.db")],
            &at,
        );
        assert_eq!(
            b.write,
            [
                PathBuf::from("/w/."),
                PathBuf::from("/h/.cache"),
                PathBuf::from("/p/out")
            ]
        );
        let hidden: Vec<String> = b.hidden.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            hidden,
            [
                "/h/.local/state/metagate/metagate.db-wal",
                "/h/.local/state/metagate/metagate.db-shm",
                "/h/.local/state/metagate/metagate.db-journal",
                "/h/.local/state/metagate/metagate.db-key",
                "/h/.local/state/metagate/metagate.db",
                "/h/.ssh",
            ]
        );
        assert_eq!(at.absolute("~bob/x"), None);
    }
}
