//! Shared helpers: the real binary, run in a temporary home with its own config and state.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

use crate::postgres_server;

pub const BIN: &str = env!("CARGO_BIN_EXE_metagate");

/// A temporary HOME, XDG config and state, and working directory.
pub struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path().join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn db(&self) -> PathBuf {
        self.path()
            .join("state")
            .join("metagate")
            .join("metagate.db")
    }

    /// The binary with an environment that cannot see the developer's own files.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        self.configure(c.env_clear());
        c
    }

    /// `metagate policy check FILE`: its exit status and what it wrote on stderr.
    pub fn policy_check(&self, file: &Path) -> (i32, String) {
        let out = self
            .cmd()
            .args(["policy", "check"])
            .arg(file)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// The same environment for a `std::process::Command`.
    pub fn std_cmd(&self) -> std::process::Command {
        self.program(BIN)
    }

    /// Another program, with the environment the binary gets.
    pub fn program(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut c = std::process::Command::new(program);
        c.env_clear();
        for (k, v) in self.vars() {
            c.env(k, v);
        }
        c.current_dir(self.path());
        c
    }

    fn vars(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("PATH", std::env::var_os("PATH").unwrap_or_default().into()),
            ("HOME", self.path().to_path_buf()),
            ("XDG_CONFIG_HOME", self.path().join("config")),
            ("XDG_STATE_HOME", self.path().join("state")),
        ]
    }

    fn configure<'a>(&self, c: &'a mut Command) -> &'a mut Command {
        for (k, v) in self.vars() {
            c.env(k, v);
        }
        c.current_dir(self.path())
    }
}

pub fn fixture_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

pub fn fixture(rel: &str) -> String {
    std::fs::read_to_string(fixture_path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Runs `metagate gate ARGS` on `input`; returns the parsed stdout, exit code and stderr.
pub fn gate(sb: &Sandbox, args: &[&str], input: &[u8]) -> (Value, i32, String) {
    let out = sb
        .cmd()
        .arg("gate")
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stdout.matches('\n').count(),
        1,
        "exactly one line on stdout, got {stdout:?} (stderr {stderr})"
    );
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (v, out.status.code().unwrap(), stderr)
}

/// Runs `metagate gate --jsonl ARGS` on `input`; returns one parsed value per output line.
pub fn gate_lines(sb: &Sandbox, args: &[&str], input: &[u8]) -> Vec<Value> {
    let out = sb
        .cmd()
        .args(["gate", "--jsonl", "--quiet"])
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The kinds of the corrections in a `--report` envelope.
pub fn correction_kinds(report: &Value) -> Vec<String> {
    report["corrections"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|c| c["kind"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A command running metagate as someone permissions apply to: this user when it is not
/// root, else `nobody` through `setpriv` (the sandbox then given to `nobody`), since root
/// writes anywhere. None when neither can be arranged.
#[cfg(target_os = "linux")]
pub fn unprivileged(sb: &Sandbox) -> Option<std::process::Command> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .unwrap();
    if euid != "0" {
        return Some(sb.std_cmd());
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    fn give(p: &Path) {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
        if p.is_dir() {
            for e in std::fs::read_dir(p).unwrap() {
                give(&e.unwrap().path());
            }
        }
    }
    give(sb.path());
    let mut c = std::process::Command::new(setpriv);
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
    c.env_clear().current_dir(sb.path());
    for (k, v) in [
        ("HOME", sb.path().to_path_buf()),
        ("PATH", "/usr/bin:/bin".into()),
    ] {
        c.env(k, v);
    }
    Some(c)
}

/// A finished command's stdout, exit status and stderr, as text.
pub fn texts(out: std::process::Output) -> (String, i32, String) {
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The two kinds of store every store-exercising test runs on (issue 30): an SQLite file, and
/// a database of the test process's PostgreSQL server (`tests/support/postgres.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

/// A new, empty store of `backend`, as `--db` names it: a file in `dir`, or a new database.
pub fn new_store(backend: Backend, dir: &Sandbox) -> String {
    new_store_named(backend, dir, "shared.db")
}

/// `new_store`, an SQLite one in the file `file_name` of `dir` (for a second store beside it).
pub fn new_store_named(backend: Backend, dir: &Sandbox, file_name: &str) -> String {
    match backend {
        Backend::Sqlite => dir.path().join(file_name).display().to_string(),
        Backend::Postgres => postgres_server::fresh_database(),
    }
}
