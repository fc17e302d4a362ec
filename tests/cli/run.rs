//! `metagate run`: the adversarial corpus (fixtures/run/attacks/, one class per file) run by
//! real bash through `run` in a scratch sandbox, one test per class that holds the boundary to
//! its promise, and the same class with the boundary switched off (the debug build's
//! `METAGATE_RUN_TEST_UNCONFINED`) seen to break it; then ordinary work under `run`, the
//! answer's envelopes, the recorded outcome and the bounds.
//!
//! Every attack runs inside the sandbox's own folder: $HOME is a scratch home, the path root
//! its `work` folder, $MG_OUT a folder beside it. With the boundary off the commands do what
//! they say there, and nowhere else.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{BIN, fixture_path};

const STORE_MARKER: &str = "secret-marker-store-8d2e";
const POLICY_MARKER: &str = "secret-marker-policy-5f1c9";
const ROOT_MARKER: &str = "secret-marker-root-77aa";

/// The sandbox a class runs in.
struct Scratch {
    _dir: tempfile::TempDir,
    top: PathBuf,
    home: PathBuf,
    work: PathBuf,
    out: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let (home, work, out) = (top.join("home"), top.join("work"), top.join("outside"));
        for d in [&work, &out.join("empty"), &home.join(".config/app")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "# bashrc\n").unwrap();
        std::fs::write(home.join(".profile"), "# profile\n").unwrap();
        std::fs::write(out.join("canary.txt"), "canary\n").unwrap();
        std::fs::write(work.join("README"), "a project\n").unwrap();
        std::fs::copy(fixture_path("run/corpus.toml"), work.join("metagate.toml")).unwrap();
        let s = Scratch {
            _dir: dir,
            top,
            home,
            work,
            out,
        };
        // The store, with a grant whose reason is a marker; the grant key beside it.
        let out = s
            .metagate(&[
                "permit",
                "grant",
                "--capability",
                "system_execute",
                "--for",
                "1h",
                "--reason",
                STORE_MARKER,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(s.store().exists() && s.key().exists());
        s
    }

    fn store(&self) -> PathBuf {
        self.home.join(".local/state/metagate/metagate.db")
    }

    fn key(&self) -> PathBuf {
        self.home.join(".local/state/metagate/metagate.db-key")
    }

    fn policy(&self) -> PathBuf {
        self.work.join("metagate.toml")
    }

    fn env(&self, c: &mut Command) {
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("MG_OUT", &self.out)
            .current_dir(&self.work);
    }

    /// `metagate ARGS` with the policy of the corpus, in the sandbox.
    fn metagate(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        self.env(&mut c);
        c.arg("--policy").arg(self.policy()).args(args);
        c
    }

    /// The marker-bearing file only root may read, and the privilege canaries in the root.
    fn canaries(&self) {
        let secret = self.top.join("rootonly");
        std::fs::write(&secret, format!("{ROOT_MARKER}\n")).unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        for (name, program) in [
            ("suid-id", "id"),
            ("suid-bash", "bash"),
            ("suid-env", "env"),
        ] {
            let path = self.work.join(name);
            std::fs::copy(which(program), &path).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o4755)).unwrap();
        }
        let capcat = self.work.join("capcat");
        std::fs::copy(which("cat"), &capcat).unwrap();
        let set = Command::new("setcap")
            .args(["cap_dac_read_search+ep"])
            .arg(&capcat)
            .status();
        assert!(set.is_ok_and(|s| s.success()), "setcap");
    }

    /// Gives the sandbox to `nobody`, leaving root's canaries root's.
    fn give_to_nobody(&self) {
        fn give(p: &Path, keep: &[&str]) {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if keep.contains(&name) {
                return;
            }
            std::os::unix::fs::lchown(p, Some(65534), Some(65534)).unwrap();
            if p.is_dir() && !p.is_symlink() {
                for e in std::fs::read_dir(p).unwrap() {
                    give(&e.unwrap().path(), keep);
                }
            }
        }
        give(
            &self.top,
            &["suid-id", "suid-bash", "suid-env", "capcat", "rootonly"],
        );
        std::fs::set_permissions(&self.top, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn which(program: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin"] {
        let p = Path::new(dir).join(program);
        if p.exists() {
            return p;
        }
    }
    panic!("{program} is not installed");
}

fn root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The commands of a class, one per line, comments left out.
fn commands(class: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixture_path(&format!("run/attacks/{class}.txt"))).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn call(code: &str) -> String {
    json!({"tool_name": "code_execution_tool", "tool_args": {"runtime": "unchecked", "code": code}})
        .to_string()
}

/// How a class is run.
#[derive(Default)]
struct How {
    unconfined: bool,
    as_nobody: bool,
    /// Descriptors 7 (store), 8 (key), 9 (a canary outside the root) left open for `run`.
    descriptors: bool,
    env: Vec<(String, String)>,
}

/// Runs every command of `class` through `run --jsonl --no-telemetry` (the store stays as it
/// was, so any change to it is the command's); returns the answers.
fn run_class(s: &Scratch, class: &str, how: &How) -> Vec<Value> {
    let cmds = commands(class);
    let input: String = cmds.iter().map(|c| call(c) + "\n").collect();
    let mut c = if how.descriptors {
        // The caller's open descriptors, made by a shell that then becomes metagate.
        let mut c = Command::new("bash");
        c.arg("-c")
            .arg("exec 7<>\"$1\" 8<>\"$2\" 9<>\"$3\"; shift 3; exec \"$@\"")
            .arg("descriptors")
            .arg(s.store())
            .arg(s.key())
            .arg(s.out.join("canary.txt"))
            .arg(BIN);
        c
    } else if how.as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    s.env(&mut c);
    c.arg("--policy").arg(s.policy()).args([
        "run",
        "--jsonl",
        "--no-telemetry",
        "-q",
        "--timeout",
        "10",
    ]);
    if how.unconfined {
        c.env("METAGATE_RUN_TEST_UNCONFINED", "1");
    }
    for (k, v) in &how.env {
        c.env(k, v);
    }
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(
        answers.len(),
        cmds.len(),
        "{class}: one answer per command; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    answers
}

/// Every file and folder under `dir` (symbolic links as their targets' names), with its
/// content, kind and mode.
fn snapshot(dir: &Path, skip: &[&Path], into: &mut BTreeMap<PathBuf, String>) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode();
    if meta.is_symlink() {
        let target = std::fs::read_link(dir).unwrap_or_default();
        into.insert(
            dir.to_path_buf(),
            format!("link {mode:o} {}", target.display()),
        );
    } else if meta.is_dir() {
        into.insert(dir.to_path_buf(), format!("dir {mode:o}"));
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let p = e.path();
                if !skip.contains(&p.as_path()) {
                    snapshot(&p, skip, into);
                }
            }
        }
    } else {
        let bytes = std::fs::read(dir).unwrap_or_default();
        let digest: u64 = bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
        });
        into.insert(
            dir.to_path_buf(),
            format!("file {mode:o} {} {digest:x} {}", bytes.len(), meta.mtime()),
        );
    }
}

/// What lies outside the path root (the whole sandbox but `work`), and metagate's own files
/// wherever they are (the policy lies in the root).
fn outside_and_own(s: &Scratch) -> BTreeMap<PathBuf, String> {
    let mut map = BTreeMap::new();
    snapshot(&s.top, &[s.work.as_path()], &mut map);
    snapshot(&s.policy(), &[], &mut map);
    // The lookup chain's files that do not exist: they must not come to.
    for p in [
        s.home.join(".config/metagate/metagate.toml"),
        s.top.join("metagate.toml"),
    ] {
        map.entry(p.clone()).or_insert_with(|| "absent".into());
        if !p.exists() {
            map.insert(p, "absent".into());
        }
    }
    map
}

fn changes(before: &BTreeMap<PathBuf, String>, after: &BTreeMap<PathBuf, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (p, was) in before {
        match after.get(p) {
            Some(now) if now == was => {}
            Some(now) => out.push(format!("{}: {was} → {now}", p.display())),
            None if was == "absent" => {}
            None => out.push(format!("{}: removed", p.display())),
        }
    }
    for (p, now) in after {
        if !before.contains_key(p) {
            out.push(format!("{}: new ({now})", p.display()));
        }
    }
    out
}

fn stdout_of(answer: &Value) -> String {
    answer["run"]["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_string()
        + answer["tool_result"].as_str().unwrap_or_default()
}

/// The files of the path root that hold one of `markers`.
fn leaked_into_root(s: &Scratch, markers: &[&[u8]]) -> Vec<String> {
    let mut map = BTreeMap::new();
    snapshot(&s.work, &[s.policy().as_path()], &mut map);
    let mut out = Vec::new();
    for p in map.keys() {
        if p.is_file() && !p.is_symlink() {
            let bytes = std::fs::read(p).unwrap_or_default();
            for m in markers {
                if bytes.windows(m.len()).any(|w| w == *m) {
                    out.push(p.display().to_string());
                }
            }
        }
    }
    out
}

// ---- own files, reads, escapes --------------------------------------------------------------

/// Runs a class and returns what broke the promise that nothing outside the root (and none of
/// metagate's files) changes.
fn writes_outside(class: &str, unconfined: bool) -> Vec<String> {
    let s = Scratch::new();
    let before = outside_and_own(&s);
    run_class(
        &s,
        class,
        &How {
            unconfined,
            ..How::default()
        },
    );
    changes(&before, &outside_and_own(&s))
}

#[test]
fn own_files_are_never_changed() {
    let broken = writes_outside("own_files", false);
    assert!(broken.is_empty(), "{broken:#?}");
}

#[test]
fn own_files_change_without_the_boundary() {
    assert!(!writes_outside("own_files", true).is_empty());
}

#[test]
fn nothing_is_written_outside_the_allowed_folders() {
    let broken = writes_outside("escape", false);
    assert!(broken.is_empty(), "{broken:#?}");
}

#[test]
fn writes_land_outside_without_the_boundary() {
    assert!(!writes_outside("escape", true).is_empty());
}

fn reads(unconfined: bool) -> Vec<String> {
    let s = Scratch::new();
    let key = std::fs::read(s.key()).unwrap();
    let key_hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let answers = run_class(
        &s,
        "reads",
        &How {
            unconfined,
            ..How::default()
        },
    );
    let mut leaks = Vec::new();
    for (cmd, a) in commands("reads").iter().zip(&answers) {
        let text = stdout_of(a);
        for m in [STORE_MARKER, POLICY_MARKER, &key_hex] {
            if text.contains(m) {
                leaks.push(format!("{cmd}: {m}"));
            }
        }
    }
    leaks.extend(leaked_into_root(
        &s,
        &[STORE_MARKER.as_bytes(), POLICY_MARKER.as_bytes(), &key],
    ));
    leaks
}

#[test]
fn own_files_are_never_read() {
    let leaks = reads(false);
    assert!(leaks.is_empty(), "{leaks:#?}");
}

#[test]
fn own_files_are_read_without_the_boundary() {
    assert!(!reads(true).is_empty());
}

// ---- privileges -----------------------------------------------------------------------------

/// As `nobody`, with root's setuid and file-capability canaries: what shows a privilege gained.
fn privileges(unconfined: bool) -> Option<Vec<String>> {
    if !root() {
        crate::skips::skip(
            &crate::skips::ROOT,
            "the privilege canaries need root to make",
        );
        return None;
    }
    let s = Scratch::new();
    s.canaries();
    s.give_to_nobody();
    let answers = run_class(
        &s,
        "privileges",
        &How {
            unconfined,
            as_nobody: true,
            ..How::default()
        },
    );
    let mut gained = Vec::new();
    for (cmd, a) in commands("privileges").iter().zip(&answers) {
        let text = stdout_of(a);
        if text.contains("euid=0") || text.contains("uid=0(") || text.contains(ROOT_MARKER) {
            gained.push(cmd.clone());
        }
    }
    Some(gained)
}

#[test]
fn no_privilege_is_gained() {
    if let Some(gained) = privileges(false) {
        assert!(gained.is_empty(), "{gained:#?}");
    }
}

#[test]
fn privileges_are_gained_without_the_boundary() {
    if let Some(gained) = privileges(true) {
        assert!(!gained.is_empty());
    }
}

/// Run by root, the command holds no capability at all: none effective, permitted or in its
/// bounding set (so no setuid program or `exec` gives any back).
#[test]
fn root_keeps_no_capability() {
    if !root() {
        crate::skips::skip(&crate::skips::ROOT, "not running as root");
        return;
    }
    for (unconfined, want_none) in [(false, true), (true, false)] {
        let s = Scratch::new();
        let mut c = s.metagate(&["run", "--no-telemetry", "-q"]);
        if unconfined {
            c.env("METAGATE_RUN_TEST_UNCONFINED", "1");
        }
        let out = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(
                    call("grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status").as_bytes(),
                )?;
                child.wait_with_output()
            })
            .unwrap();
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = answer["run"]["stdout"].as_str().unwrap().to_string();
        let none = text.lines().all(|l| l.ends_with("0000000000000000"));
        assert_eq!(none, want_none, "unconfined {unconfined}: {text}");
    }
}

// ---- network --------------------------------------------------------------------------------

/// Listeners on loopback (TCP and UDP, IPv4 and IPv6), a Unix socket and an abstract one, each
/// counting what reaches it.
struct Listeners {
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    env: Vec<(String, String)>,
}

impl Listeners {
    fn start(s: &Scratch) -> Listeners {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};
        let hits = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (tcp, udp) = loop {
            let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = tcp.local_addr().unwrap().port();
            if let Ok(udp) = UdpSocket::bind(("127.0.0.1", port)) {
                break (tcp, udp);
            }
        };
        let port = tcp.local_addr().unwrap().port();
        let unix_path = s.out.join("sock");
        let unix = UnixListener::bind(&unix_path).unwrap();
        let abstract_name = format!("metagate-run-test-{}-{port}", std::process::id());
        let abstract_listener =
            UnixListener::bind_addr(&SocketAddr::from_abstract_name(&abstract_name).unwrap())
                .unwrap();
        let mut streams: Vec<Box<dyn FnMut() -> bool + Send>> = Vec::new();
        tcp.set_nonblocking(true).unwrap();
        streams.push(Box::new(move || tcp.accept().is_ok()));
        if let Ok(tcp6) = TcpListener::bind(("::1", port)) {
            tcp6.set_nonblocking(true).unwrap();
            streams.push(Box::new(move || tcp6.accept().is_ok()));
        }
        udp.set_nonblocking(true).unwrap();
        streams.push(Box::new(move || udp.recv(&mut [0; 64]).is_ok()));
        if let Ok(udp6) = UdpSocket::bind(("::1", port)) {
            udp6.set_nonblocking(true).unwrap();
            streams.push(Box::new(move || udp6.recv(&mut [0; 64]).is_ok()));
        }
        unix.set_nonblocking(true).unwrap();
        streams.push(Box::new(move || unix.accept().is_ok()));
        abstract_listener.set_nonblocking(true).unwrap();
        streams.push(Box::new(move || abstract_listener.accept().is_ok()));
        let _ = std::fs::remove_file(s.out.join("dgram"));
        let dgram = UnixDatagram::bind(s.out.join("dgram")).unwrap();
        dgram.set_nonblocking(true).unwrap();
        streams.push(Box::new(move || dgram.recv(&mut [0; 64]).is_ok()));
        let (h, st) = (hits.clone(), stop.clone());
        std::thread::spawn(move || {
            while !st.load(Ordering::SeqCst) {
                for accept in &mut streams {
                    if accept() {
                        h.fetch_add(1, Ordering::SeqCst);
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Listeners {
            hits,
            stop,
            env: vec![
                ("MG_PORT".into(), port.to_string()),
                ("MG_UNIX".into(), unix_path.display().to_string()),
                ("MG_ABSTRACT".into(), abstract_name),
            ],
        }
    }

    fn finish(self) -> usize {
        std::thread::sleep(Duration::from_millis(100));
        self.stop.store(true, Ordering::SeqCst);
        self.hits.load(Ordering::SeqCst)
    }
}

fn network(unconfined: bool) -> usize {
    let s = Scratch::new();
    let listeners = Listeners::start(&s);
    run_class(
        &s,
        "network",
        &How {
            unconfined,
            env: listeners.env.clone(),
            ..How::default()
        },
    );
    listeners.finish()
}

#[test]
fn the_network_is_not_reached_when_it_is_off() {
    assert_eq!(network(false), 0);
}

#[test]
fn the_network_is_reached_without_the_boundary() {
    assert!(network(true) > 0);
}

// ---- what outlives the command, descriptors ---------------------------------------------------

fn late_files(unconfined: bool) -> Vec<String> {
    let s = Scratch::new();
    run_class(
        &s,
        "lifetime",
        &How {
            unconfined,
            ..How::default()
        },
    );
    std::thread::sleep(Duration::from_secs(3));
    std::fs::read_dir(&s.work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("late"))
        .collect()
}

#[test]
fn nothing_outlives_the_command() {
    let late = late_files(false);
    assert!(late.is_empty(), "{late:?}");
}

#[test]
fn background_jobs_outlive_it_without_the_boundary() {
    assert!(!late_files(true).is_empty());
}

fn descriptors(unconfined: bool) -> Vec<String> {
    let s = Scratch::new();
    let before = outside_and_own(&s);
    let key = std::fs::read(s.key()).unwrap();
    run_class(
        &s,
        "descriptors",
        &How {
            unconfined,
            descriptors: true,
            ..How::default()
        },
    );
    let mut broken = changes(&before, &outside_and_own(&s));
    broken.extend(leaked_into_root(&s, &[STORE_MARKER.as_bytes(), &key]));
    broken
}

#[test]
fn inherited_descriptors_reach_nothing() {
    let broken = descriptors(false);
    assert!(broken.is_empty(), "{broken:#?}");
}

#[test]
fn inherited_descriptors_are_used_without_the_boundary() {
    assert!(!descriptors(true).is_empty());
}

#[test]
fn the_corpus_has_three_hundred_commands() {
    let classes = [
        "own_files",
        "reads",
        "escape",
        "privileges",
        "network",
        "lifetime",
        "descriptors",
    ];
    let n: usize = classes.iter().map(|c| commands(c).len()).sum();
    assert!(n >= 300, "{n}");
}

// ---- reading a file and keeping the rest -----------------------------------------------------

#[test]
fn descriptors_read_helper_is_sound() {
    // The snapshot sees a change of content, a new file and a removed one.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a");
    std::fs::write(&f, "1").unwrap();
    let mut before = BTreeMap::new();
    snapshot(dir.path(), &[], &mut before);
    std::fs::write(&f, "2").unwrap();
    std::fs::write(dir.path().join("b"), "").unwrap();
    let mut after = BTreeMap::new();
    snapshot(dir.path(), &[], &mut after);
    assert_eq!(changes(&before, &after).len(), 2);
    let mut buf = String::new();
    std::fs::File::open(&f)
        .unwrap()
        .read_to_string(&mut buf)
        .unwrap();
    assert_eq!(buf, "2");
}

// ---- mcp --sandbox ---------------------------------------------------------------------------

/// `mcp --sandbox` starts the server inside the same boundary: a "server" that tries to write
/// outside the root, read the store and write inside the root manages only the last. Without
/// the flag it manages all three.
#[test]
fn mcp_sandbox_puts_the_server_inside_the_boundary() {
    for sandboxed in [true, false] {
        let s = Scratch::new();
        let script = s.top.join("server.sh");
        std::fs::write(
            &script,
            "echo pwned > \"$HOME/escaped\"\n\
             cat \"$HOME/.local/state/metagate/metagate.db\" > /dev/null && echo read > read.txt\n\
             echo ok > inroot.txt\n",
        )
        .unwrap();
        let mut args = vec!["mcp", "--no-telemetry"];
        if sandboxed {
            args.push("--sandbox");
        }
        args.extend(["--", "bash"]);
        let out = s
            .metagate(&args)
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(s.work.join("inroot.txt").exists(), "{sandboxed}: {stderr}");
        assert_eq!(s.home.join("escaped").exists(), !sandboxed, "{stderr}");
        assert_eq!(s.work.join("read.txt").exists(), !sandboxed, "{stderr}");
    }
}

// ---- ordinary work, answers, outcomes, bounds ------------------------------------------------

/// Runs one call (`runtime`, `code`) in the sandbox with telemetry on and `extra` flags;
/// returns the answer and the exit status.
fn one(
    s: &Scratch,
    runtime: &str,
    code: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Value, i32) {
    let mut args = vec!["run", "-q"];
    args.extend(extra);
    let mut c = s.metagate(&args);
    for (k, v) in env {
        c.env(k, v);
    }
    let call = json!({"tool_name": "code_execution_tool", "tool_args": {"runtime": runtime, "code": code}});
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(call.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} / {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap())
}

/// Whether a program runs here; a test that needs one that does not is skipped by name
/// (`.ci/run` installs them and sets METAGATE_REQUIRE_RUN_DEPS, where a missing one fails).
fn available(what: &str, check: &[&str]) -> bool {
    let ok = Command::new(check[0])
        .args(&check[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::skips::skip(&crate::skips::RUN_DEPS, &format!("{what} is not installed"));
    }
    ok
}

fn ran_ok(answer: &Value, code: i32, what: &str) -> String {
    assert_eq!(code, 0, "{what}: {answer}");
    assert_eq!(answer["run"]["exit_code"], 0, "{what}: {answer}");
    answer["run"]["stdout"].as_str().unwrap().to_string()
}

/// The toolchain the test itself was built with, for `cargo` under a scratch home.
fn cargo_env() -> Vec<(&'static str, String)> {
    ["CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k, v)))
        .chain(std::env::var("HOME").ok().into_iter().flat_map(|h| {
            [
                ("CARGO_HOME", format!("{h}/.cargo")),
                ("RUSTUP_HOME", format!("{h}/.rustup")),
            ]
        }))
        .fold(Vec::new(), |mut all, (k, v)| {
            if !all.iter().any(|(seen, _)| *seen == k) {
                all.push((k, v));
            }
            all
        })
}

#[test]
fn cargo_build_runs_inside_the_boundary() {
    if !available("cargo", &["cargo", "--version"]) {
        return;
    }
    let s = Scratch::new();
    let env = cargo_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (a, code) = one(
        &s,
        "terminal",
        "cargo new --vcs none -q hello && cd hello && cargo build -q --offline && ./target/debug/hello",
        &[],
        &env,
    );
    assert!(ran_ok(&a, code, "cargo build").contains("Hello, world!"));
}

#[test]
fn git_commit_in_the_root_runs() {
    let s = Scratch::new();
    let (a, code) = one(
        &s,
        "terminal",
        "git init -q repo && cd repo && echo x > f && git add f && git -c user.name=a -c user.email=a@example.com commit -qm first && git log --format=%s",
        &[],
        &[],
    );
    assert_eq!(ran_ok(&a, code, "git commit").trim(), "first");
}

#[test]
fn pytest_runs() {
    if !available("pytest", &["python3", "-m", "pytest", "--version"]) {
        return;
    }
    let s = Scratch::new();
    std::fs::write(
        s.work.join("test_one.py"),
        "def test_one():\n    assert 1 + 1 == 2\n",
    )
    .unwrap();
    let (a, code) = one(
        &s,
        "terminal",
        "python3 -m pytest -q -p no:cacheprovider test_one.py",
        &[],
        &[],
    );
    assert!(ran_ok(&a, code, "pytest").contains("1 passed"), "{a}");
}

#[test]
fn npm_test_runs() {
    if !available("npm", &["npm", "--version"]) {
        return;
    }
    let s = Scratch::new();
    std::fs::write(
        s.work.join("package.json"),
        r#"{"name": "t", "version": "1.0.0", "scripts": {"test": "node -e \"console.log('tests ' + (6 * 7))\""}}"#,
    )
    .unwrap();
    let (a, code) = one(&s, "terminal", "npm test", &[], &[]);
    assert!(ran_ok(&a, code, "npm test").contains("tests 42"), "{a}");
}

#[test]
fn system_folders_and_headers_are_read() {
    let s = Scratch::new();
    let (a, code) = one(&s, "terminal", "ls -la /usr", &[], &[]);
    assert!(ran_ok(&a, code, "ls").contains("bin"), "{a}");
    if Path::new("/usr/include/stdio.h").exists() {
        let (a, code) = one(
            &s,
            "terminal",
            "grep -c include /usr/include/stdio.h",
            &[],
            &[],
        );
        ran_ok(&a, code, "headers");
    }
}

/// The answer is the tool result in the call's own envelope, and the outcome is recorded as
/// `record` would, naming the decision.
#[test]
fn answers_come_in_the_calls_envelope_and_outcomes_are_recorded() {
    let s = Scratch::new();
    let (a, code) = one(&s, "python", "print('hi')\nraise SystemExit(3)", &[], &[]);
    assert_eq!(code, 3, "{a}");
    assert_eq!(a["tool_name"], "code_execution_tool");
    let text = a["tool_result"].as_str().unwrap();
    assert!(
        text.starts_with("hi\n") && text.ends_with("[exit status 3]"),
        "{text}"
    );
    let rows = crate::common::store_rows(
        &s.store(),
        "SELECT o.status, o.error_type, json_extract(o.metadata, '$.exit_code'), \
                json_extract(o.metadata, '$.decision_id') = d.id \
         FROM outcomes o JOIN decisions d ON d.tool = o.tool ORDER BY o.id DESC LIMIT 1",
    );
    assert_eq!(
        rows[0],
        [
            json!("error"),
            json!("permanent_failure"),
            json!(3),
            json!(1)
        ]
    );
    // OpenAI, Anthropic and MCP calls get their own results.
    for (call, pick) in [
        (
            json!({"id": "c1", "type": "function", "function": {"name": "code_execution_tool", "arguments": "{\"runtime\":\"terminal\",\"code\":\"echo ok\"}"}}),
            "/content",
        ),
        (
            json!({"type": "tool_use", "id": "t1", "name": "code_execution_tool", "input": {"runtime": "terminal", "code": "echo ok"}}),
            "/content",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "code_execution_tool", "arguments": {"runtime": "terminal", "code": "echo ok"}}}),
            "/result/content/0/text",
        ),
    ] {
        let mut child = s
            .metagate(&["run", "-q"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(call.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v.pointer(pick).and_then(Value::as_str),
            Some("ok\n[exit status 0]"),
            "{v}"
        );
    }
    // A refused call runs nothing and is answered as an error.
    let (a, code) = one(&s, "terminal", "echo $(id)", &[], &[]);
    assert_eq!(code, 1, "{a}");
    assert_eq!(a["error"], true);
}

#[test]
fn time_output_memory_and_processes_are_bounded() {
    let s = Scratch::new();
    let (a, code) = one(&s, "terminal", "sleep 30", &["--timeout", "1"], &[]);
    assert_eq!((code, &a["run"]["timed_out"]), (3, &json!(true)), "{a}");
    let (a, _) = one(
        &s,
        "terminal",
        "head -c 5000000 /dev/zero",
        &["--output", "4"],
        &[],
    );
    assert_eq!(a["run"]["stdout_bytes"], 5_000_000);
    assert_eq!(a["run"]["stdout_cut"], true);
    assert!(
        a["tool_result"]
            .as_str()
            .unwrap()
            .contains("[stdout cut: the first 4096 of 5000000 bytes kept]")
    );
    let (a, _) = one(
        &s,
        "python",
        "x = bytearray(1 << 30)\nprint('allocated')",
        &["--memory", "256"],
        &[],
    );
    assert!(
        a["run"]["stderr"].as_str().unwrap().contains("MemoryError"),
        "{a}"
    );
    // Processes: as an unprivileged user (root is exempt from the kernel's count).
    if root() {
        s.give_to_nobody();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        s.env(&mut c);
        c.arg("--policy").arg(s.policy()).args([
            "run",
            "-q",
            "--no-telemetry",
            "--processes",
            "20",
        ]);
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let code = "for i in $(seq 60); do sleep 5 & done 2>&1 | grep -c 'fork' ; true";
        child
            .stdin
            .take()
            .unwrap()
            .write_all(call(code).as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let refused: u64 = v["run"]["stdout"]
            .as_str()
            .unwrap()
            .trim()
            .parse()
            .unwrap_or(0);
        assert!(refused > 0, "{v}");
    }
}

/// The processes bound holds for root too, whom the kernel's `RLIMIT_NPROC` does not bind:
/// a pids cgroup bounds the command's tasks. A Python process forks children that wait until
/// a fork fails; under `--processes 8` at most 7 start (Python is the eighth), under 100 all
/// 40 do, which is what root got under the rlimit alone.
#[test]
fn root_is_bounded_in_processes_too() {
    if !root() {
        eprintln!(
            "\n*** SKIPPED root_is_bounded_in_processes_too: the tests do not run as root ***\n"
        );
        return;
    }
    let s = Scratch::new();
    let script = s.work.join("forks.py");
    std::fs::write(
        &script,
        "import os, time\nn = 0\nfor _ in range(40):\n    try:\n        pid = os.fork()\n    \
         except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n        \
         os._exit(0)\n    n += 1\nprint(n)\n",
    )
    .unwrap();
    let forks = |bound: &str| {
        let mut c = s.metagate(&["run", "-q", "--no-telemetry", "--processes", bound]);
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let code = format!("exec /usr/bin/python3 {}", script.display());
        child
            .stdin
            .take()
            .unwrap()
            .write_all(call(&code).as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let n: u64 = v["run"]["stdout"]
            .as_str()
            .and_then(|o| o.trim().parse().ok())
            .unwrap_or_else(|| panic!("{v}"));
        (n, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (bounded, err) = forks("8");
    if err.contains("is not enforced") {
        eprintln!(
            "\n*** SKIPPED root_is_bounded_in_processes_too: no pids cgroup here ({err}) ***\n"
        );
        return;
    }
    assert!(
        bounded <= 7,
        "{bounded} children under --processes 8; {err}"
    );
    let (free, err) = forks("100");
    assert_eq!(free, 40, "{err}");
}
