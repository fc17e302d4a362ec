//! The process bound where `RLIMIT_NPROC` cannot keep it: the kernel does not apply that limit
//! to root (nor to a process holding `CAP_SYS_RESOURCE` or `CAP_SYS_ADMIN`), and counts it per
//! user, not per command. A pids cgroup of the runner's own (`pids.max`, the cgroup v2 or v1
//! pids controller) bounds the tasks of the command and everything it starts, whoever runs it.
//! The command cannot leave it: every cgroup file is outside the folders it may write
//! (Landlock), on a mount that is read-only in its namespace, and it holds no capability.
//!
//! The cgroup is made once per runner, reused by each command in turn (each has ended, and
//! everything it started, before the next starts), and removed when the runner ends.
//!
//! Joining a cgroup waits for an RCU grace period (the kernel's threadgroup lock): up to
//! milliseconds on a busy machine, which a command would pay before it starts. In cgroup v1,
//! where a process's threads may lie in different cgroups, one thread of `run`'s own joins
//! once and forks every command ([`Spawner`]): a process starts in its parent thread's
//! cgroup, so no command migrates, and `pids.max` is the bound plus that thread. Elsewhere
//! (cgroup v2, or a server `mcp --sandbox` starts) the command's process joins before `exec`.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A pids cgroup bounding each command's tasks.
pub struct PidsGroup {
    /// Dropped (its thread ended) before the cgroup is removed.
    spawner: Option<Spawner>,
    dir: PathBuf,
    procs: OwnedFd,
}

type Request = (Command, mpsc::Sender<io::Result<Child>>);

/// A thread inside the cgroup that starts commands there.
pub struct Spawner {
    requests: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
}

impl Spawner {
    /// A thread that joins the cgroup through `tasks` (cgroup v1's file of threads), or why
    /// it could not.
    fn start(tasks: &Path) -> Result<Spawner, String> {
        let file = fs::OpenOptions::new()
            .write(true)
            .open(tasks)
            .map_err(|e| format!("cannot open {}: {e}", tasks.display()))?;
        let (requests, inbox) = mpsc::channel::<Request>();
        let (joined, outcome) = mpsc::channel::<io::Result<()>>();
        let thread = std::thread::Builder::new()
            .name("run spawner".into())
            .spawn(move || {
                use std::io::Write as _;
                // "0" names the writing thread.
                let join = (&file).write_all(b"0");
                let ok = join.is_ok();
                let _ = joined.send(join);
                drop(file);
                if !ok {
                    return;
                }
                for (mut command, reply) in inbox {
                    let _ = reply.send(command.spawn());
                }
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        match outcome.recv() {
            Ok(Ok(())) => Ok(Spawner {
                requests: Some(requests),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(format!("cannot join {}: {e}", tasks.display()))
            }
            Err(_) => Err("the spawner thread ended".to_string()),
        }
    }

    /// Starts `command` from the thread inside the cgroup.
    pub fn spawn(&self, command: Command) -> io::Result<Child> {
        let (reply, answer) = mpsc::channel();
        let sent = self
            .requests
            .as_ref()
            .is_some_and(|r| r.send((command, reply)).is_ok());
        if !sent {
            return Err(io::Error::other("the spawner thread has ended"));
        }
        answer
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the spawner thread has ended")))
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl PidsGroup {
    /// A new cgroup under this process's own in the pids hierarchy, its `pids.max` set to
    /// `max`; or why none can be made here.
    pub fn new(max: u64) -> Result<PidsGroup, String> {
        let parent = own_pids_cgroup()?;
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
        let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let dir = parent.join(format!("metagate-run-{name}"));
        fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let made = (|| {
            let limit = dir.join("pids.max");
            if !limit.exists() {
                return Err(format!(
                    "{} has no pids controller (it is not enabled in {}'s cgroup.subtree_control)",
                    dir.display(),
                    parent.display()
                ));
            }
            let procs = dir.join("cgroup.procs");
            let file = fs::OpenOptions::new()
                .write(true)
                .open(&procs)
                .map_err(|e| format!("cannot open {}: {e}", procs.display()))?;
            let tasks = dir.join("tasks");
            let spawner = if tasks.exists() {
                Spawner::start(&tasks).ok()
            } else {
                None
            };
            // The spawner thread is one of the cgroup's tasks.
            let limit_value = max.saturating_add(u64::from(spawner.is_some()));
            fs::write(&limit, limit_value.to_string())
                .map_err(|e| format!("cannot write {}: {e}", limit.display()))?;
            Ok((OwnedFd::from(file), spawner))
        })();
        match made {
            Ok((procs, spawner)) => Ok(PidsGroup {
                spawner,
                dir,
                procs,
            }),
            Err(e) => {
                let _ = fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// The cgroup's `cgroup.procs`, open for writing: a process that writes `0` to it joins.
    pub fn procs(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// The thread that starts commands inside the cgroup, where there is one.
    pub fn spawner(&self) -> Option<&Spawner> {
        self.spawner.as_ref()
    }
}

impl Drop for PidsGroup {
    fn drop(&mut self) {
        self.spawner = None;
        // Empty by now: every command, and all it started, has been killed and reaped.
        let _ = fs::remove_dir(&self.dir);
    }
}

/// This process's cgroup folder in a hierarchy that has the pids controller: cgroup v2's when
/// its controllers include pids, otherwise cgroup v1's pids hierarchy.
fn own_pids_cgroup() -> Result<PathBuf, String> {
    let cgroups = fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let mounts = cgroup_mounts(&mountinfo);
    // `ID:CONTROLLERS:PATH`, PATH holding any byte but a newline.
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let unified = id == "0" && controllers.is_empty();
        let has_pids = controllers.split(',').any(|c| c == "pids");
        if !unified && !has_pids {
            continue;
        }
        for m in &mounts {
            if m.unified != unified || (!unified && !m.options.split(',').any(|o| o == "pids")) {
                continue;
            }
            let Some(dir) = inside(&m.point, &m.root, path) else {
                continue;
            };
            if unified && !listed(&dir.join("cgroup.controllers"), "pids") {
                continue;
            }
            return Ok(dir);
        }
    }
    Err("no cgroup hierarchy here has the pids controller".to_string())
}

/// A cgroup file system mounted here.
struct CgroupMount {
    /// The folder it is mounted on.
    point: PathBuf,
    /// The cgroup of the hierarchy the mount shows as its top.
    root: String,
    /// cgroup2 (else v1).
    unified: bool,
    /// The super block's options (v1: the controllers).
    options: String,
}

/// The cgroup mounts of `/proc/self/mountinfo`: `ID PARENT MAJ:MIN ROOT POINT OPTIONS
/// [OPTIONAL…] - TYPE SOURCE SUPER_OPTIONS`, with spaces in paths written as `\040`.
fn cgroup_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = before.split(' ').collect();
        let tail: Vec<&str> = after.split(' ').collect();
        let (Some(root), Some(point), Some(kind)) = (fields.get(3), fields.get(4), tail.first())
        else {
            continue;
        };
        let unified = match *kind {
            "cgroup2" => true,
            "cgroup" => false,
            _ => continue,
        };
        out.push(CgroupMount {
            point: PathBuf::from(unescape(point)),
            root: unescape(root),
            unified,
            options: tail.get(2).copied().unwrap_or_default().to_string(),
        });
    }
    out
}

/// `\NNN` octal escapes (the kernel writes space, tab, newline and backslash so) read back.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let digits = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        let value = digits.and_then(|d| {
            let n = d.iter().fold(0u32, |n, b| n * 8 + u32::from(b - b'0'));
            u8::try_from(n).ok()
        });
        match value {
            Some(n) if bytes[i] == b'\\' => {
                out.push(n);
                i += 4;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The folder of cgroup `path` on a mount whose top is cgroup `root`, when it shows it.
fn inside(point: &Path, root: &str, path: &str) -> Option<PathBuf> {
    let rest = if root == "/" {
        path
    } else {
        let rest = path.strip_prefix(root)?;
        if !rest.is_empty() && !rest.starts_with('/') {
            return None;
        }
        rest
    };
    let dir = point.join(rest.trim_start_matches('/'));
    dir.is_dir().then_some(dir)
}

/// Whether the space-separated list in `file` holds `word`.
fn listed(file: &Path, word: &str) -> bool {
    fs::read_to_string(file).is_ok_and(|s| s.split_whitespace().any(|w| w == word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_read_with_their_escapes() {
        let info = "30 25 0:26 / /sys/fs/cgroup/pids rw,relatime shared:12 - cgroup cgroup rw,pids\n\
                    31 25 0:27 /a\\040b /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                    32 25 0:28 / /proc rw - proc proc rw\n";
        let m = cgroup_mounts(info);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].point, Path::new("/sys/fs/cgroup/pids"));
        assert!(!m[0].unified);
        assert_eq!(m[0].options, "rw,pids");
        assert_eq!(m[1].root, "/a b");
        assert!(m[1].unified);
    }

    #[test]
    fn a_cgroup_path_is_placed_under_its_mount() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("x/y")).unwrap();
        assert_eq!(
            inside(tmp.path(), "/", "/x/y"),
            Some(tmp.path().join("x/y"))
        );
        assert_eq!(
            inside(tmp.path(), "/top", "/top/x/y"),
            Some(tmp.path().join("x/y"))
        );
        assert_eq!(inside(tmp.path(), "/top", "/topx/y"), None);
        assert_eq!(inside(tmp.path(), "/top", "/other"), None);
    }
}
