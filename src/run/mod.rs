//! The `run` job: a call decided as `gate` decides it and, when it passes, its command run
//! inside a boundary the kernel enforces (docs/run.md). The decision goes through the gate's
//! own path (`gate::decide_settled`), is recorded before the command starts, and the
//! command's outcome is recorded after it, naming the decision, as `record` would store it.
//!
//! The parts: what the boundary is (the policy's `[run]`, as data in
//! `metagate_core::policy::run`), what the kernel can enforce ([`Kernel`]), how it is told
//! (`boundary`: the Landlock ruleset and the mounts; `filter`: the seccomp filters; `pids`:
//! the process bound's cgroup; `confine`: entering them), running the command to its end
//! ([`process`]), and the answer in the call's envelope ([`answer`]).
//!
//! Landlock, seccomp and the namespaces are Linux's: on another system the boundary's modules
//! are not built, and [`Runner::new`] refuses, saying so.

pub mod answer;
#[cfg(target_os = "linux")]
pub mod boundary;
#[cfg(target_os = "linux")]
mod confine;
#[cfg(target_os = "linux")]
pub mod filter;
mod kernel;
#[cfg(target_os = "linux")]
mod pids;
pub mod process;

pub use kernel::Kernel;

use std::io::{self, Write};
#[cfg(target_os = "linux")]
use std::path::Path;
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::time::Duration;
use std::time::Instant;

use indexmap::IndexMap;
use metagate_core::error::{Category, ToolError};
use metagate_core::events::{Event, Outcome};
use metagate_core::policy::run::{Boundary, command_args};

use crate::gate::{self, Answer, Decision, Gate, NoSink, Sink, TelemetrySink, Verdict};
use answer::{Answered, Outcome as Done};
#[cfg(target_os = "linux")]
use boundary::Plan;

/// How `run` confines commands, as its caller (the binary) set it up.
pub struct Setup {
    /// The boundary, from the policy and this run's own files.
    pub boundary: Boundary,
    /// `runtime` value → program and first arguments.
    pub interpreters: IndexMap<String, Vec<String>>,
    /// `[run] unconfined`: run without Landlock where the kernel has none.
    pub unconfined_allowed: bool,
    /// The kernel's boundary applied (false only for the tests' switch, in debug builds).
    pub confined: bool,
    /// Where the command's own temporary folder is made.
    pub temp_base: PathBuf,
}

/// Where decisions go: the store, or nowhere (`--no-telemetry`).
pub enum Recording {
    /// Recorded in the telemetry store, outcomes beside them.
    Store(Box<TelemetrySink>),
    /// Not recorded.
    Off(NoSink),
}

impl Recording {
    fn sink(&mut self) -> &mut dyn Sink {
        match self {
            Recording::Store(s) => s.as_mut(),
            Recording::Off(s) => s,
        }
    }
}

/// Why `run` cannot run commands at all.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Runs calls' commands in the boundary.
pub struct Runner {
    setup: Setup,
    kernel: Kernel,
    /// The process bound's cgroup, where one can be made.
    #[cfg(target_os = "linux")]
    pids: Option<pids::PidsGroup>,
    /// The seccomp filters, compiled once (none for the tests' switch).
    #[cfg(target_os = "linux")]
    filters: Vec<seccompiler::BpfProgram>,
    /// What the operator is told once: a bound this system cannot enforce.
    warnings: Vec<String>,
    /// No runner exists on a system without Landlock: [`Runner::new`] refuses there.
    #[cfg(not(target_os = "linux"))]
    unbuildable: std::convert::Infallible,
}

impl Runner {
    /// A runner, or why commands cannot be run here: on a system other than Linux, always.
    #[cfg(not(target_os = "linux"))]
    pub fn new(_: Setup) -> Result<Runner, Refused> {
        Err(Refused(Kernel::unsupported()))
    }

    /// A runner, or why commands cannot be run here: a kernel without Landlock is refused
    /// unless the policy allows running unconfined (fail closed).
    #[cfg(target_os = "linux")]
    pub fn new(setup: Setup) -> Result<Runner, Refused> {
        let kernel = Kernel::probe();
        if setup.confined && !kernel.has_landlock() && !setup.unconfined_allowed {
            return Err(Refused(
                "this kernel has no Landlock (it is not built in, or not enabled: see \
                 /sys/kernel/security/lsm), so run cannot keep commands inside the boundary; \
                 it refuses to run them (set [run] unconfined = true in the policy to run \
                 them without it)"
                    .to_string(),
            ));
        }
        let filters = if setup.confined {
            filter::filters(setup.boundary.network, setup.boundary.unix_sockets)
                .map_err(|e| Refused(format!("cannot build the seccomp filters: {e}")))?
        } else {
            Vec::new()
        };
        let processes = setup.boundary.bounds.processes;
        let (pids, warnings) = match pids::PidsGroup::new(processes) {
            Ok(group) => (Some(group), Vec::new()),
            // RLIMIT_NPROC bounds everyone else, counted per user.
            Err(_) if !nix::unistd::geteuid().is_root() => (None, Vec::new()),
            Err(why) => (
                None,
                vec![format!(
                    "the processes bound ({processes}) is not enforced: the kernel does not                      apply RLIMIT_NPROC to root, and no pids cgroup can be made here ({why})"
                )],
            ),
        };
        Ok(Runner {
            setup,
            kernel,
            pids,
            filters,
            warnings,
        })
    }

    /// What the kernel enforces here.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// What the operator should be told once, before any command runs: a bound this system
    /// does not enforce.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Decides one document and, when it passes, runs its command; returns the answer line
    /// (without a newline) and what happened.
    pub fn answer<E: Write>(
        &self,
        run: &Gate<'_>,
        input: &[u8],
        recording: &mut Recording,
        err: &mut E,
        clock: &dyn Fn() -> Instant,
        now_ms: &dyn Fn() -> i64,
    ) -> io::Result<(Vec<u8>, Answered)> {
        let (answer, verdict, unrecorded) =
            gate::decide_settled(run, input, recording.sink(), err, clock);
        let decision = match &answer {
            Answer::One(d) => d,
            Answer::Message(m) => {
                let n = m.calls.len();
                let e = ToolError::new(
                    Category::MalformedCall,
                    format!(
                        "the document holds {n} calls, and run runs one call's command at a time"
                    ),
                )
                .suggest("send each call to run on its own");
                return Ok(refusal(None, &e));
            }
        };
        if unrecorded {
            return Ok(refusal(Some(decision), &gate::unrecorded()));
        }
        if verdict == Verdict::Rejected {
            let e = decision
                .error
                .clone()
                .expect("a rejected call has an error");
            return Ok(refusal(Some(decision), &e));
        }
        let argv = match self.command_of(run, decision) {
            Ok(argv) => argv,
            Err(e) => return Ok(refusal(Some(decision), &e)),
        };
        let decision_id = match recording {
            Recording::Store(s) => s.last_decision_id(),
            Recording::Off(_) => None,
        };
        let done = self.execute(&argv)?;
        for note in &done.notes {
            let _ = writeln!(
                err,
                "metagate: run: {}",
                metagate_wire::display::one_line(note)
            );
        }
        if let Recording::Store(sink) = recording {
            let outcome = outcome(decision, run, &done, decision_id, now_ms());
            if let Err(e) = sink
                .store()
                .insert_events(&[Event::Outcome(Box::new(outcome))])
            {
                let _ = writeln!(
                    err,
                    "metagate: error: telemetry: {e}; the command's outcome is not recorded"
                );
            }
        }
        Ok(answer::ran(decision, &done))
    }

    /// The program, its arguments and the code, for a call that passed.
    fn command_of(&self, run: &Gate<'_>, d: &Decision<'_>) -> Result<Vec<String>, Box<ToolError>> {
        let call = d.call.as_ref().expect("a call that passed was read");
        let tool = call.tool();
        let declared = run.policy.tool(tool).and_then(command_args);
        let Some(args) = declared else {
            return Err(Box::new(
                ToolError::new(
                    Category::InvalidParameters,
                    format!(
                        "{tool} has no argument declared kind = \"shell\": run runs the commands \
                     of shell tools only"
                    ),
                )
                .suggest("Run this tool yourself; send run only calls of a shell tool"),
            ));
        };
        let text = |name: &str| {
            call.args
                .get(name)
                .and_then(|v| v.as_str().map(|s| s.into_owned()))
        };
        let runtime = args
            .runtime
            .and_then(text)
            .unwrap_or_else(|| "terminal".to_string());
        let Some(interpreter) = self.setup.interpreters.get(&runtime) else {
            let known: Vec<&str> = self.setup.interpreters.keys().map(String::as_str).collect();
            return Err(Box::new(
                ToolError::new(
                    Category::InvalidParameters,
                    format!("runtime {runtime:?} has no interpreter to run code with"),
                )
                .suggest(format!("Use one of: {}", known.join(", "))),
            ));
        };
        let Some(code) = text(args.code) else {
            return Err(Box::new(ToolError::new(
                Category::InvalidParameters,
                format!("{tool}: {} holds no code to run", args.code),
            )));
        };
        let mut argv = interpreter.clone();
        argv.push(code);
        Ok(argv)
    }

    /// Makes `command` enter the boundary when it starts; `cpu_bound` bounds its CPU time by
    /// the time bound (a server that runs for a session is not). The guard keeps the
    /// command's temporary folder until it is dropped, and sweeps afterwards.
    #[cfg(not(target_os = "linux"))]
    pub fn confine(&self, _: &mut std::process::Command, _: bool) -> io::Result<Confined> {
        match self.unbuildable {}
    }

    /// Runs `argv` in the boundary and reports how it ended.
    #[cfg(not(target_os = "linux"))]
    pub fn execute(&self, _: &[String]) -> io::Result<Done> {
        match self.unbuildable {}
    }

    /// Makes `command` enter the boundary when it starts; `cpu_bound` bounds its CPU time by
    /// the time bound (a server that runs for a session is not). The guard keeps the
    /// command's temporary folder until it is dropped, and sweeps afterwards.
    #[cfg(target_os = "linux")]
    pub fn confine(
        &self,
        command: &mut std::process::Command,
        cpu_bound: bool,
    ) -> io::Result<Confined> {
        self.confine_joining(command, cpu_bound, true)
    }

    /// [`Runner::confine`]; `join` false when the command is started by the pids cgroup's
    /// spawner, so starts inside it.
    #[cfg(target_os = "linux")]
    fn confine_joining(
        &self,
        command: &mut std::process::Command,
        cpu_bound: bool,
        join: bool,
    ) -> io::Result<Confined> {
        let temp = TempFolder::new(&self.setup.temp_base)?;
        let mut notes = Vec::new();
        let confined = self.setup.confined && self.kernel.has_landlock();
        if self.setup.confined && !confined {
            notes.push(
                "the kernel has no Landlock: the command ran without the boundary ([run] \
                 unconfined = true)"
                    .to_string(),
            );
        }
        let plan = if self.setup.confined {
            boundary::plan(
                &self.setup.boundary,
                std::slice::from_ref(&temp.path),
                self.kernel,
            )
            .map_err(|e| io::Error::other(e.0))?
        } else {
            Plan {
                ruleset: None,
                mounts: Vec::new(),
                sweep: Vec::new(),
                missing: Vec::new(),
            }
        };
        for m in &plan.missing {
            notes.push(format!(
                "{} ([run] write) does not exist, so the command may not write there",
                m.display()
            ));
        }
        let filters = self.filters.clone();
        let bounds = self.setup.boundary.bounds;
        let cover = temp.cover()?;
        let handoff = if plan.mounts.is_empty() {
            None
        } else {
            Some(confine::Handoff::new()?)
        };
        let confinement = confine::Confinement::new(
            &confine::Limits {
                memory_bytes: bounds.memory_mb.saturating_mul(1 << 20),
                processes: bounds.processes,
                cpu_secs: cpu_bound.then(|| bounds.timeout_secs.saturating_add(1)),
            },
            &plan.mounts,
            &cover,
            plan.ruleset,
            filters,
            self.setup.confined,
            confine::Outside {
                handoff: handoff.as_ref(),
                cgroup_procs: self
                    .pids
                    .as_ref()
                    .filter(|_| join)
                    .map(pids::PidsGroup::procs),
            },
        )?;
        command.env("TMPDIR", &temp.path);
        confinement.install(command);
        Ok(Confined {
            _temp: temp,
            sweep: plan.sweep,
            notes,
            handoff,
        })
    }

    /// Runs `argv` in the boundary and reports how it ended.
    #[cfg(target_os = "linux")]
    pub fn execute(&self, argv: &[String]) -> io::Result<Done> {
        let (program, rest) = argv.split_first().expect("an interpreter names a program");
        let mut command = std::process::Command::new(program);
        command.args(rest);
        let spawner = self.pids.as_ref().and_then(pids::PidsGroup::spawner);
        let mut guard = self.confine_joining(&mut command, true, spawner.is_none())?;
        let bounds = self.setup.boundary.bounds;
        let ended = process::run(
            command,
            Duration::from_secs(bounds.timeout_secs),
            bounds.output_bytes,
            self.setup.confined,
            &|c| match spawner {
                Some(s) => s.spawn(c),
                None => {
                    let mut c = c;
                    c.spawn()
                }
            },
        )
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run {program}: {e}")))?;
        let swept = guard.sweep();
        Ok(Done {
            ended,
            swept,
            notes: std::mem::take(&mut guard.notes),
            timeout_secs: bounds.timeout_secs,
        })
    }
}

/// A command inside the boundary: its temporary folder (removed when this is dropped) and
/// the names to sweep once it has ended.
pub struct Confined {
    #[cfg(target_os = "linux")]
    _temp: TempFolder,
    sweep: Vec<PathBuf>,
    /// What the operator is told.
    pub notes: Vec<String>,
    /// The command's mount namespace, once its process has handed it over.
    #[cfg(target_os = "linux")]
    handoff: Option<confine::Handoff>,
}

#[cfg(target_os = "linux")]
impl Drop for Confined {
    fn drop(&mut self) {
        if let Some(h) = self.handoff.take() {
            h.release();
        }
    }
}

impl Confined {
    /// Removes metagate's own files the command made where none were (the hidden names
    /// inside writable folders), once it and everything it started have ended; returns them,
    /// and notes each.
    pub fn sweep(&mut self) -> Vec<PathBuf> {
        let mut swept = Vec::new();
        for name in std::mem::take(&mut self.sweep) {
            if std::fs::symlink_metadata(&name).is_err() {
                continue;
            }
            let removed = if name.is_dir() && !name.is_symlink() {
                std::fs::remove_dir_all(&name)
            } else {
                std::fs::remove_file(&name)
            };
            match removed {
                Ok(()) => {
                    self.notes.push(format!(
                        "the command made {}, one of metagate's own files; removed",
                        name.display()
                    ));
                    swept.push(name);
                }
                Err(e) => self.notes.push(format!(
                    "the command made {}, one of metagate's own files, and it could not be \
                     removed: {e}",
                    name.display()
                )),
            }
        }
        swept
    }
}

/// A refused call's answer.
fn refusal(decision: Option<&Decision<'_>>, error: &ToolError) -> (Vec<u8>, Answered) {
    answer::refused(decision, error)
}

/// The outcome `record` would store for the command: `ok` on exit status 0; otherwise the
/// error type says how it ended (`timeout`, `permanent_failure` for an exit status or a
/// signal), tied to the decision.
fn outcome(
    d: &Decision<'_>,
    run: &Gate<'_>,
    done: &Done,
    decision_id: Option<i64>,
    now_ms: i64,
) -> Outcome {
    let e = &done.ended;
    let ok = e.code == Some(0) && !e.timed_out;
    let error_type = if ok {
        None
    } else if e.timed_out {
        Some(Category::Timeout)
    } else {
        Some(Category::PermanentFailure)
    };
    let error_message = (!ok).then(|| answer::ending(done));
    Outcome {
        ts_ms: now_ms,
        session: run.context.session.clone(),
        tool: d.tool().unwrap_or_default().to_string(),
        method: d.method().map(str::to_string),
        ok,
        error_type: error_type.map(|c| c.as_str().to_string()),
        error_message,
        axes: Vec::new(),
        axes_raw: Vec::new(),
        observed_task_shape: None,
        suggested_split: None,
        evidence: None,
        metadata: Some(serde_json::json!({
            "via": "metagate run",
            "decision_id": decision_id,
            "exit_code": e.code,
            "signal": e.signal,
            "timed_out": e.timed_out,
            "duration_ms": e.took.as_millis() as u64,
            "stdout_bytes": e.stdout.total,
            "stderr_bytes": e.stderr.total,
        })),
        caller: run.context.caller.clone(),
        decision_id,
        call_id: d.call_id().and_then(|id| match id {
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }),
    }
}

/// The command's own temporary folder (its `TMPDIR`, writable), removed afterwards.
#[cfg(target_os = "linux")]
struct TempFolder {
    path: PathBuf,
}

#[cfg(target_os = "linux")]
impl TempFolder {
    fn new(base: &Path) -> io::Result<TempFolder> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
        let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let path = base.join(format!("metagate-run-{name}"));
        std::fs::create_dir(&path)?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        }
        let inner = path.join("tmp");
        std::fs::create_dir(&inner)?;
        Ok(TempFolder { path: inner })
    }

    /// The empty read-only file mounted over hidden files, beside the temporary folder (not
    /// in it, where the command could write it).
    fn cover(&self) -> io::Result<PathBuf> {
        let cover = self.path.with_file_name("cover");
        std::fs::write(&cover, b"")?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cover, std::fs::Permissions::from_mode(0o444))?;
        Ok(cover)
    }
}

#[cfg(target_os = "linux")]
impl Drop for TempFolder {
    fn drop(&mut self) {
        if let Some(parent) = self.path.parent() {
            let _ = std::fs::remove_dir_all(parent);
        }
    }
}
