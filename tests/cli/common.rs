//! Shared helpers: the real binary, run in a temporary home with its own config and state.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};
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
        let out = self.policy_check_output(file);
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// `metagate policy check FILE`, run.
    pub fn policy_check_output(&self, file: &Path) -> std::process::Output {
        self.cmd()
            .args(["policy", "check"])
            .arg(file)
            .output()
            .unwrap()
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

/// The backends to run on here: SQLite always; PostgreSQL where its server can start, its
/// absence recorded as a skip otherwise (`tests/support/skips.rs`). `for backend in BACKENDS`.
pub const BACKENDS: Backends = Backends;

/// See [`BACKENDS`].
pub struct Backends;

impl IntoIterator for Backends {
    type Item = Backend;
    type IntoIter = std::vec::IntoIter<Backend>;

    fn into_iter(self) -> Self::IntoIter {
        let mut here = vec![Backend::Sqlite];
        if postgres_server::available() {
            here.push(Backend::Postgres);
        }
        here.into_iter()
    }
}

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

/// The rows `sql` reads from the store `db` (a file or a URL), each column as JSON. The SQL
/// must mean the same in both dialects (quote `"user"`, which PostgreSQL reserves).
pub fn store_rows(db: &(impl AsRef<Path> + ?Sized), sql: &str) -> Vec<Vec<Value>> {
    let db = db.as_ref().to_str().expect("a store named in UTF-8");
    read_store(db, sql, rusqlite::OpenFlags::default())
        .unwrap_or_else(|e| panic!("{db}: {sql}: {e}"))
}

/// `store_rows`, or why the store could not answer (not there yet, no tables yet); an SQLite
/// file is opened read-only, so that asking does not make it.
pub fn try_store_rows(db: &str, sql: &str) -> Result<Vec<Vec<Value>>, String> {
    read_store(db, sql, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
}

fn read_store(db: &str, sql: &str, flags: rusqlite::OpenFlags) -> Result<Vec<Vec<Value>>, String> {
    if db.starts_with("postgres://") || db.starts_with("postgresql://") {
        return postgres_rows(db, sql);
    }
    let conn = rusqlite::Connection::open_with_flags(db, flags).map_err(|e| e.to_string())?;
    let mut stmt = conn.prepare(sql).map_err(|e| e.to_string())?;
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        (0..n)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => Value::Null,
                    rusqlite::types::ValueRef::Integer(x) => json!(x),
                    rusqlite::types::ValueRef::Real(x) => json!(x),
                    rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                    rusqlite::types::ValueRef::Blob(_) => json!("<blob>"),
                })
            })
            .collect()
    })
    .and_then(|rows| rows.collect())
    .map_err(|e| e.to_string())
}

fn postgres_rows(url: &str, sql: &str) -> Result<Vec<Vec<Value>>, String> {
    use postgres::types::Type;
    let mut client = postgres::Client::connect(url, postgres::NoTls).map_err(|e| e.to_string())?;
    let rows = client.query(sql, &[]).map_err(|e| e.to_string())?;
    Ok(rows
        .iter()
        .map(|row| {
            row.columns()
                .iter()
                .enumerate()
                .map(|(i, column)| match *column.type_() {
                    Type::INT8 => json!(row.get::<_, Option<i64>>(i)),
                    Type::INT4 => json!(row.get::<_, Option<i32>>(i)),
                    Type::INT2 => json!(row.get::<_, Option<i16>>(i)),
                    Type::FLOAT8 => json!(row.get::<_, Option<f64>>(i)),
                    Type::FLOAT4 => json!(row.get::<_, Option<f32>>(i)),
                    Type::BOOL => json!(row.get::<_, Option<bool>>(i)),
                    Type::BYTEA => match row.get::<_, Option<Vec<u8>>>(i) {
                        Some(_) => json!("<blob>"),
                        None => Value::Null,
                    },
                    Type::TEXT | Type::VARCHAR | Type::NAME => {
                        json!(row.get::<_, Option<String>>(i))
                    }
                    ref other => panic!("{sql}: no JSON form for a column of type {other}"),
                })
                .collect()
        })
        .collect())
}

/// Runs the statements `sql` in the store `db` (a file or a URL), as another writer would: SQL
/// that means the same in both dialects.
pub fn store_execute(db: &str, sql: &str) {
    if db.starts_with("postgres://") || db.starts_with("postgresql://") {
        let mut client = postgres::Client::connect(db, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot reach {db}: {e}"));
        client
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    } else {
        rusqlite::Connection::open(db)
            .and_then(|conn| conn.execute_batch(sql))
            .unwrap_or_else(|e| panic!("{db}: {sql}: {e}"));
    }
}

/// `SELECT count(*) FROM table` in the store `db`.
pub fn store_count(db: &(impl AsRef<Path> + ?Sized), table: &str) -> i64 {
    store_rows(db, &format!("SELECT count(*) FROM {table}"))[0][0]
        .as_i64()
        .unwrap()
}

/// Whether the store `db` is as `new_store` made it: no file, or a database with no tables.
pub fn store_is_untouched(db: &str) -> bool {
    if db.starts_with("postgres://") {
        return store_count(
            db,
            "information_schema.tables WHERE table_schema = 'public'",
        ) == 0;
    }
    !Path::new(db).exists()
}

/// Waits up to 10 s for `sql` (a count) to reach `want` in the store `db`; returns the last
/// count read.
pub fn wait_for_count(db: &str, sql: &str, want: i64) -> i64 {
    let mut seen = -1;
    for _ in 0..200 {
        // The store may not be there yet, or not have its tables.
        if let Ok(read) = try_store_rows(db, sql) {
            seen = read[0][0].as_i64().unwrap();
            if seen == want {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    seen
}

/// A command kept running that answers each line it reads with one line (`gate --jsonl`):
/// a line in, its answer out, while the process lives on.
pub struct LineStream {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl LineStream {
    /// Starts `command` with its three streams piped.
    pub fn spawn(mut command: std::process::Command) -> LineStream {
        use std::process::Stdio;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        LineStream {
            stdin: child.stdin.take(),
            stdout: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
        }
    }

    /// Writes `text` as it is.
    pub fn write(&mut self, text: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("still open");
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `line` (a newline is added) and reads its answer, as JSON.
    pub fn ask(&mut self, line: &str) -> Value {
        self.write(&format!("{line}\n"));
        self.next()
    }

    /// Reads the next line it writes, as JSON.
    pub fn next(&mut self) -> Value {
        use std::io::BufRead;
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
    }

    /// Closes its input and waits for it to end: its output holds what it wrote after the
    /// last answer read.
    pub fn finish(mut self) -> std::process::Output {
        use std::io::Read;
        drop(self.stdin.take());
        // Read beside the wait, which reads stderr: either pipe may fill while the other waits.
        let mut stdout = self.stdout;
        let rest = std::thread::spawn(move || {
            let mut rest = Vec::new();
            stdout.read_to_end(&mut rest).unwrap();
            rest
        });
        let mut out = self.child.wait_with_output().unwrap();
        out.stdout = rest.join().unwrap();
        out
    }
}
