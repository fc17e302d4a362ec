//! Running one command to its end: its output read (and cut) as it comes, its time bounded,
//! and, once it has ended, everything it started ended too. `run` is the subreaper of what
//! the command starts, so a job sent to the background (or made a daemon with `setsid`) is
//! handed to `run` when its parent ends, and is killed before `run` answers: nothing the
//! command started outlives it.

use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// One stream's output: the first bytes, up to the bound, and how many there were in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The bytes kept.
    pub kept: Vec<u8>,
    /// Every byte written.
    pub total: u64,
}

impl Captured {
    /// Whether some of it was cut.
    pub fn cut(&self) -> bool {
        self.total > self.kept.len() as u64
    }
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// It ran past its time and was killed.
    pub timed_out: bool,
    /// What it wrote on stdout.
    pub stdout: Captured,
    /// What it wrote on stderr.
    pub stderr: Captured,
    /// How long it ran.
    pub took: Duration,
    /// Processes it left running, killed when it ended.
    pub killed_leftovers: usize,
}

/// Makes this process the subreaper of what it starts (once). Linux's: elsewhere `run`
/// refuses before anything is started.
pub fn become_subreaper() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_child_subreaper(true);
    });
}

fn reader(mut stream: impl Read + Send + 'static, bound: u64) -> JoinHandle<Captured> {
    std::thread::spawn(move || {
        let mut out = Captured::default();
        let mut buf = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    out.total += n as u64;
                    let room = bound.saturating_sub(out.kept.len() as u64) as usize;
                    out.kept.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        out
    })
}

/// Starts `command` (already confined) through `spawn`, with stdin from /dev/null, and waits
/// for it and its output; `timeout` past its start, it and everything it started are killed.
/// Once it has ended, what it left running is killed too (unless `confined` is false: the
/// tests' switch).
pub fn run(
    mut command: Command,
    timeout: Duration,
    output_bound: u64,
    confined: bool,
    spawn: &dyn Fn(Command) -> io::Result<Child>,
) -> io::Result<Ended> {
    become_subreaper();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let started = Instant::now();
    let mut child = spawn(command)?;
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(0));
    let out = reader(child.stdout.take().expect("piped"), output_bound);
    let err = reader(child.stderr.take().expect("piped"), output_bound);
    let (done, timer) = mpsc::channel::<()>();
    let alarm = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = timer.recv_timeout(timeout) {
            let _ = killpg(pid, Signal::SIGKILL);
            let _ = kill(pid, Signal::SIGKILL);
            return true;
        }
        false
    });
    let status = wait(&mut child);
    let _ = done.send(());
    let timed_out = alarm.join().unwrap_or(false);
    let took = started.elapsed();
    let killed_leftovers = if confined { end_leftovers(pid) } else { 0 };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let status = status?;
    Ok(Ended {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout,
        stderr,
        took,
        killed_leftovers,
    })
}

fn wait(child: &mut Child) -> io::Result<ExitStatus> {
    loop {
        match child.wait() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Kills what the command left: its process group, then every child of this process (what
/// was handed to it as subreaper, in any group), until none is left; reaps them. Returns how
/// many there were.
fn end_leftovers(group: Pid) -> usize {
    let mut killed = 0;
    if killpg(group, Signal::SIGKILL).is_ok() {
        killed += 1;
    }
    loop {
        let children = children_of(nix::unistd::getpid());
        reap();
        if children.is_empty() {
            return killed;
        }
        for c in &children {
            let _ = kill(*c, Signal::SIGKILL);
        }
        killed += children.len();
        // Each killed process's children are handed to this one: look again.
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Reaps every child that has ended, without waiting.
fn reap() {
    while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            break;
        }
    }
}

/// The live children of `parent`, read from /proc (`ppid` in each process's `stat`).
fn children_of(parent: Pid) -> Vec<Pid> {
    // Cheap first: with no child left at all, waitid says so without reading /proc.
    if let Err(nix::errno::Errno::ECHILD) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces and parentheses; read after the last.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let state = fields.next();
        let ppid = fields.next().and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(parent.as_raw()) && state != Some("Z") {
            out.push(Pid::from_raw(pid));
        }
    }
    out
}
