//! A real PostgreSQL server for the tests: one per test process, started at the first test
//! that asks for it, each test in a database of its own. Shared by the library's store tests
//! (`crates/metagate-store/src/pg.rs` includes it) and the command-line tests (`tests/cli/main.rs`); its steps
//! (`server_folder`, `initdb`, `start_watched`) also start the TCP servers of `postgres_tls.rs`.
//!
//! The server runs from Debian's `postgresql` package (`.ci/run` installs it when missing)
//! in a temporary data folder, listening only on a Unix socket in that folder. `initdb`
//! refuses to run as root, so under root it runs as the `postgres` system user. A watchdog
//! shell, started with the server, waits on a pipe only this process holds: when the test
//! process ends, however it ends (the harness exiting, a panic, a kill), the pipe closes and
//! the watchdog stops the server and removes the folder. No static destructor is needed, and
//! none would run.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The server of this test process.
pub struct Server {
    /// The folder holding the data folder and the socket.
    root: PathBuf,
    /// The socket folder, as a URL's host names it.
    socket: PathBuf,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static DURABLE_SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static NEXT_DATABASE: AtomicUsize = AtomicUsize::new(0);

/// The server, started on first use. Panics with what to do when it cannot start: a store
/// test without its database is a failed test, never a skipped one.
pub fn server() -> &'static Server {
    match SERVER.get_or_init(|| start(false)) {
        Ok(server) => server,
        Err(why) => panic!("the test PostgreSQL server could not start: {why}"),
    }
}

/// A server that keeps PostgreSQL's durability settings (each commit synced to disk), for
/// benchmarks set beside SQLite's durable commits.
pub fn durable_server() -> &'static Server {
    match DURABLE_SERVER.get_or_init(|| start(true)) {
        Ok(server) => server,
        Err(why) => panic!("the benchmark PostgreSQL server could not start: {why}"),
    }
}

/// A URL naming a new, empty database on the test server.
pub fn fresh_database() -> String {
    server().fresh_database()
}

impl Server {
    /// A URL naming a new, empty database on this server.
    pub fn fresh_database(&self) -> String {
        let server = self;
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT_DATABASE.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = postgres::Client::connect(&server.url("postgres"), postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL server: {e}"));
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
        server.url(&name)
    }

    /// `postgres://postgres@<socket folder>/<database>`, the folder percent-encoded as the
    /// host.
    pub fn url(&self, database: &str) -> String {
        let host: String = self
            .socket
            .to_string_lossy()
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.' {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        format!("postgres://postgres@{host}/{database}")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// Whether a PostgreSQL server can be started here (its programs are installed). When not,
/// the running test's PostgreSQL part is recorded as skipped (`skips.rs`: said at the end of
/// the run, and a failure where `METAGATE_REQUIRE_POSTGRES` or `METAGATE_REQUIRE_ALL` is set).
pub fn available() -> bool {
    if !cfg!(feature = "postgres") {
        let why = "this build has no PostgreSQL client (the `postgres` feature is off)";
        crate::skips::skip(&crate::skips::POSTGRES_FEATURE, why);
        return false;
    }
    let found = binaries().and_then(|bin| {
        if ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|p| bin.join(p).is_file())
        {
            Ok(bin)
        } else {
            Err(format!(
                "no initdb, pg_ctl and postgres in {}",
                bin.display()
            ))
        }
    });
    match found {
        Ok(_) => true,
        Err(why) => {
            crate::skips::skip(&crate::skips::POSTGRES, &why);
            false
        }
    }
}

/// The folder of the newest PostgreSQL installed (`$METAGATE_PG_BIN` first).
pub fn binaries() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("METAGATE_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| no_postgres())?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(no_postgres)
}

fn no_postgres() -> String {
    "no PostgreSQL in /usr/lib/postgresql/*/bin (install Debian's `postgresql` package, as .ci/run does, or set METAGATE_PG_BIN)".to_string()
}

/// Runs a PostgreSQL program as the user the server runs as.
fn as_server_user(program: &Path) -> Command {
    if nix::unistd::geteuid().is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run(mut command: Command, what: &str) -> Result<(), String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn start(durable: bool) -> Result<Server, String> {
    let bin = binaries()?;
    let root = server_folder("metagate-pg-")?;
    let data = root.join("data");
    initdb(&bin, &data, &["--auth=trust"])?;
    // Only a socket, in our folder: nothing else on the machine can reach it, and two test
    // processes never share a port. fsync off for tests: a test server keeps nothing past its
    // run.
    let durability = if durable {
        ""
    } else {
        " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    };
    let options = format!(
        "-c listen_addresses='' -k {}{durability} -c max_connections=200",
        root.display()
    );
    start_watched(&bin, &root, &options)?;
    Ok(Server {
        socket: root.clone(),
        root,
    })
}

/// A new folder for a server's data, socket and log, owned by the user the server runs as.
/// Not under the test's own temp folders: the server outlives no test, but a folder removed
/// under it would take its socket away.
pub fn server_folder(prefix: &str) -> Result<PathBuf, String> {
    let root = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| format!("temp folder: {e}"))?
        .keep();
    give_to_server_user(&root)?;
    Ok(root)
}

/// Under root, makes `path` the `postgres` user's, whom the server runs as.
pub fn give_to_server_user(path: &Path) -> Result<(), String> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    let user = nix::unistd::User::from_name("postgres")
        .ok()
        .flatten()
        .ok_or("running as root and there is no `postgres` user to run the server as")?;
    std::os::unix::fs::chown(path, Some(user.uid.as_raw()), Some(user.gid.as_raw()))
        .map_err(|e| format!("chown {}: {e}", path.display()))
}

/// A new data folder, its superuser `postgres`, with `auth` (initdb's options) as its
/// authentication.
pub fn initdb(bin: &Path, data: &Path, auth: &[&str]) -> Result<(), String> {
    let mut initdb = as_server_user(&bin.join("initdb"));
    initdb
        .args(auth)
        .args(["--username=postgres", "--encoding=UTF8", "--locale=C", "-D"])
        .arg(data);
    run(initdb, "initdb")
}

/// Starts the server of `root/data` with `options`, logging to `root/log`, watched so that it
/// stops when this process ends.
pub fn start_watched(bin: &Path, root: &Path, options: &str) -> Result<(), String> {
    let data = root.join("data");
    let mut start = as_server_user(&bin.join("pg_ctl"));
    start
        .args(["start", "-w", "-t", "60", "-D"])
        .arg(&data)
        .args(["-l"])
        .arg(root.join("log"))
        .args(["-o", options]);
    // pg_ctl's server must not hold our pipes (it would keep `output()` waiting).
    start.stdout(Stdio::null()).stderr(Stdio::null());
    run(start, "pg_ctl start").map_err(|e| {
        let log = std::fs::read_to_string(root.join("log")).unwrap_or_default();
        format!("{e}\n{log}")
    })?;
    watch(bin, &data, root)
}

/// Starts the watchdog that stops the server when this process ends.
fn watch(bin: &Path, data: &Path, root: &Path) -> Result<(), String> {
    let pg_ctl = bin.join("pg_ctl");
    let stop = if nix::unistd::geteuid().is_root() {
        "runuser -u postgres -- \"$1\" stop -m immediate -D \"$2\""
    } else {
        "\"$1\" stop -m immediate -D \"$2\""
    };
    let script = format!("cat >/dev/null; {stop} >/dev/null 2>&1; rm -rf \"$3\"");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("watchdog")
        .arg(pg_ctl)
        .arg(data)
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("the watchdog: {e}"))?;
    // Never written and never closed while this process lives: its end is the signal.
    let pipe = child.stdin.take().expect("piped");
    std::mem::forget(pipe);
    std::mem::forget(child);
    let _ = std::io::stderr().flush();
    Ok(())
}
