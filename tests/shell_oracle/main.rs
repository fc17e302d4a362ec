//! The shell check against real bash: a differential oracle.
//!
//! Commands generated from a grammar of bash constructs ([`grammar`]) go through the
//! shell check twice: in the default mode, where the canary `mgcanary` is a denied
//! command, and in the allowlist mode, where `allow_commands` does not list it. A command
//! either mode passes then runs in real `bash --norc --noprofile -c` in a throwaway folder
//! ([`sandbox`]) whose `PATH` shim records whether the canary ran. A **bypass** is a
//! command a mode passed where the canary ran.
//!
//! `cargo test --test shell_oracle` runs a fixed-seed sample. A longer run, with the
//! network cut off (`unshare -n`): `scripts/shell-oracle 1000000` (docs/shell.md).

mod grammar;
mod sandbox;

use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use grammar::{CANARY, Grammar, Places};
use metagate_checks::program_files::ProgramFiles;
use metagate_checks::shell::{
    self, CommandList, CommandPattern, Protected, Refusal, ShellRules, World,
};
use sandbox::Sandbox;

/// Programs the allowlist mode lists: the vocabulary of the generated commands, less the
/// canary and less every interpreter that would run a file the command wrote (allowing
/// `python3` allows every script it is given).
const ALLOWED: &[&str] = &[
    "cat",
    "ls",
    "grep",
    "wc",
    "env",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "setsid",
    "xargs",
    "find",
    "git",
    "sed",
    "awk",
    "mawk",
    "sort",
    "tar",
    "chmod",
    "cp",
    "/usr/bin/time",
    "time",
    "printf",
    "echo",
    "true",
    "pwd",
];

const DENIED: &[&str] = &[
    "sudo", "su", "doas", "pkexec", "sudoedit", "run0", "eval", "mkfs", "shutdown", "reboot",
    "halt", "poweroff", "metagate",
];

/// Redirections may write inside the sandbox (and to `/dev/null`): the path rules here.
struct SandboxWorld {
    root: PathBuf,
    work: PathBuf,
    /// Programs found on the sandbox's `PATH`, as bash finds them.
    programs: ProgramFiles,
}

impl SandboxWorld {
    fn new(root: &Path, work: &Path) -> SandboxWorld {
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            root.join("home/bin").display()
        );
        SandboxWorld {
            root: root.to_path_buf(),
            work: work.to_path_buf(),
            programs: ProgramFiles::new(Some(std::ffi::OsStr::new(&path)), work),
        }
    }
}

fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl World for SandboxWorld {
    fn redirect(&self, path: &str) -> Result<(), Refusal> {
        if lexical(&self.work.join(path)).starts_with(&self.root) {
            Ok(())
        } else {
            Err(Refusal("it is outside the sandbox".to_string()))
        }
    }
    fn is_own_binary(&self, _command: &[u8]) -> bool {
        false
    }
    fn program(&self, command: &[u8]) -> Option<shell::Resolved> {
        self.programs.resolve(command)
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    generated: u64,
    passed_default: u64,
    passed_allowlist: u64,
    ran: u64,
    bypass_default: u64,
    bypass_allowlist: u64,
    late: u64,
    /// Refused commands run anyway, to show the canary is live in what is refused.
    refused_run: u64,
    refused_canary: u64,
    slowest_check: Duration,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.generated += o.generated;
        self.passed_default += o.passed_default;
        self.passed_allowlist += o.passed_allowlist;
        self.ran += o.ran;
        self.bypass_default += o.bypass_default;
        self.bypass_allowlist += o.bypass_allowlist;
        self.late += o.late;
        self.refused_run += o.refused_run;
        self.refused_canary += o.refused_canary;
        self.slowest_check = self.slowest_check.max(o.slowest_check);
    }
}

struct Report {
    tally: Tally,
    bypasses: Vec<String>,
    elapsed: Duration,
}

/// Runs `count` generated commands from `seed` on `threads` threads.
fn run(seed: u64, count: u64, threads: u64) -> Report {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let bypasses = Mutex::new(Vec::new());
    let total = Mutex::new(Tally::default());
    let show = std::env::var_os("SHELL_ORACLE_SHOW").is_some();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let root = dir.path().join(format!("w{t}"));
            let (bypasses, total) = (&bypasses, &total);
            let share = count / threads + u64::from(t < count % threads);
            scope.spawn(move || {
                let tally = worker(
                    &root,
                    seed ^ (t.wrapping_mul(0x1000_0000_01b3)),
                    share,
                    show,
                    bypasses,
                );
                total.lock().unwrap().add(&tally);
            });
        }
    });
    Report {
        tally: *total.lock().unwrap(),
        bypasses: bypasses.into_inner().unwrap(),
        elapsed: started.elapsed(),
    }
}

fn worker(root: &Path, seed: u64, count: u64, show: bool, bypasses: &Mutex<Vec<String>>) -> Tally {
    std::fs::create_dir_all(root).unwrap();
    let root = root.canonicalize().unwrap();
    let sandbox = Sandbox::new(&root);
    let places = Places { bin: sandbox.bin() };
    let mut grammar = Grammar::new(seed, &places);
    let world = SandboxWorld::new(sandbox.root(), sandbox.work());
    let constructs: Vec<String> = Vec::new();
    let protected = Protected::none();
    let mut denied_default: Vec<CommandPattern> = shell::patterns(DENIED).unwrap();
    denied_default.push(CommandPattern::parse(CANARY).unwrap());
    let denied_default = CommandList::from(denied_default);
    let denied_allowlist = CommandList::from(shell::patterns(DENIED).unwrap());
    let allowed = shell::patterns(ALLOWED).unwrap();
    let default_rules = ShellRules {
        constructs: &constructs,
        denied: &denied_default,
        allowed: None,
        protected: &protected,
        world: &world,
    };
    let allowlist_rules = ShellRules {
        constructs: &constructs,
        denied: &denied_allowlist,
        allowed: Some(&allowed),
        protected: &protected,
        world: &world,
    };
    let mut tally = Tally::default();
    // Every run whose canary may still turn up late, however late (a process a command left
    // behind): each pass with its verdicts, the text of the recent ones, and each refused
    // command run for liveness.
    let mut passes: std::collections::HashMap<u64, (bool, bool)> = Default::default();
    let mut recent: std::collections::VecDeque<(u64, String)> = Default::default();
    let mut refused_runs: std::collections::HashSet<u64> = Default::default();
    let progress = count >= 100_000;
    for n in 0..count {
        if progress && n > 0 && n % 50_000 == 0 {
            eprintln!(
                "shell oracle: a worker at {n} of {count}: {} passed (default), {} (allowlist), {} bypasses",
                tally.passed_default,
                tally.passed_allowlist,
                tally.bypass_default + tally.bypass_allowlist
            );
        }
        let generated = grammar.command();
        let text = &generated.text;
        tally.generated += 1;
        let timer = Instant::now();
        let default = shell::check(text, &default_rules);
        let allowlist = shell::check(text, &allowlist_rules);
        tally.slowest_check = tally.slowest_check.max(timer.elapsed() / 2);
        let passed_default = default.is_none() && !generated.allowlist_only;
        let passed_allowlist = allowlist.is_none();
        tally.passed_default += u64::from(passed_default);
        tally.passed_allowlist += u64::from(passed_allowlist);
        if show {
            println!(
                "{:?}\n  default: {}\n  allowlist: {}",
                text,
                default.as_ref().map_or("pass".to_string(), |f| f.rule()),
                allowlist.as_ref().map_or("pass".to_string(), |f| f.rule()),
            );
        }
        let id = tally.generated;
        let passed = passed_default || passed_allowlist;
        // One refused command in eight runs too: the canary must be live in them.
        if !passed && id % 8 != 0 {
            continue;
        }
        let ran = sandbox.run(text, id);
        if passed {
            tally.ran += 1;
            passes.insert(id, (passed_default, passed_allowlist));
            recent.push_back((id, text.clone()));
            if recent.len() > 64 {
                recent.pop_front();
            }
        } else {
            tally.refused_run += 1;
            refused_runs.insert(id);
        }
        let mut marks = ran.marks;
        marks.sort_unstable();
        marks.dedup();
        for mark in marks {
            let Some(mark) = mark else {
                tally.late += 1;
                bypasses.lock().unwrap().push(format!(
                    "a canary ran without its run number, during {text:?}"
                ));
                continue;
            };
            if mark != id {
                tally.late += 1;
            }
            if refused_runs.contains(&mark) {
                tally.refused_canary += 1;
                continue;
            }
            let Some((by_default, by_allowlist)) = passes.get(&mark) else {
                bypasses
                    .lock()
                    .unwrap()
                    .push(format!("a canary of run {mark} ran during {text:?}"));
                continue;
            };
            let mut modes = Vec::new();
            if *by_default {
                tally.bypass_default += 1;
                modes.push("default");
            }
            if *by_allowlist {
                tally.bypass_allowlist += 1;
                modes.push("allowlist");
            }
            let passed_text = recent
                .iter()
                .find(|(r, _)| *r == mark)
                .map_or(format!("run {mark}"), |(_, t)| format!("{t:?}"));
            let bypass = format!("{} mode passed {passed_text}", modes.join(" and "));
            eprintln!("shell oracle: BYPASS: {bypass}");
            bypasses.lock().unwrap().push(bypass);
        }
    }
    tally
}

fn print(report: &Report) {
    let t = &report.tally;
    let percent = |n: u64| 100.0 * n as f64 / t.generated.max(1) as f64;
    println!(
        "shell oracle: {} commands in {:.1} s\n  passed, default mode:   {} ({:.1}%)\n  passed, allowlist mode: {} ({:.1}%)\n  passed and run in bash: {}\n  refused, run anyway:    {} (the canary ran in {})\n  bypasses, default:      {}\n  bypasses, allowlist:    {}\n  late canaries:          {}\n  slowest check:          {:?}",
        t.generated,
        report.elapsed.as_secs_f64(),
        t.passed_default,
        percent(t.passed_default),
        t.passed_allowlist,
        percent(t.passed_allowlist),
        t.ran,
        t.refused_run,
        t.refused_canary,
        t.bypass_default,
        t.bypass_allowlist,
        t.late,
        t.slowest_check,
    );
    for b in report.bypasses.iter().take(40) {
        println!("  BYPASS: {b}");
    }
}

/// Threads: `SHELL_ORACLE_THREADS`, else `per_core` a core (the work is mostly waiting
/// for bash to start and end).
fn threads(per_core: u64) -> u64 {
    std::env::var("SHELL_ORACLE_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| {
            per_core * std::thread::available_parallelism().map_or(2, |n| n.get() as u64)
        })
}

/// The ordinary commands the generator mixes in pass both modes as they are written.
#[test]
fn benign_forms_pass() {
    let dir = tempfile::tempdir().unwrap();
    let world = SandboxWorld::new(dir.path(), &dir.path().join("home/work"));
    let protected = Protected::none();
    let mut denied = shell::patterns(DENIED).unwrap();
    denied.push(CommandPattern::parse(CANARY).unwrap());
    let denied = CommandList::from(denied);
    let allowed = shell::patterns(ALLOWED).unwrap();
    let mut refused = Vec::new();
    for allow in [None, Some(allowed.as_slice())] {
        let rules = ShellRules {
            constructs: &[],
            denied: &denied,
            allowed: allow,
            protected: &protected,
            world: &world,
        };
        for form in grammar::BENIGN {
            // The allowlist mode lists no interpreter.
            if allow.is_some() && form.starts_with("python3") {
                continue;
            }
            if let Some(f) = shell::check(form, &rules) {
                refused.push(format!("{form:?}: {}", f.rule()));
            }
        }
    }
    assert_eq!(refused, Vec::<String>::new());
}

/// A fixed-seed sample, small enough for every test run.
#[test]
fn sample_has_no_bypass() {
    let report = run(0x5eed_0023, 3000, threads(1));
    print(&report);
    let t = report.tally;
    assert_eq!(report.bypasses, Vec::<String>::new());
    // The oracle exercises bash, not only refusals.
    assert!(t.passed_default * 5 > t.generated, "too few commands pass");
    assert!(t.ran * 4 > t.generated, "too few commands ran");
}

/// The long run: `SHELL_ORACLE_COMMANDS` (default 1,000,000) from `SHELL_ORACLE_SEED`.
#[test]
#[ignore = "long: run with scripts/shell-oracle"]
fn long_run_has_no_bypass() {
    let count = std::env::var("SHELL_ORACLE_COMMANDS")
        .ok()
        .and_then(|c| c.replace('_', "").parse().ok())
        .unwrap_or(1_000_000);
    let seed = std::env::var("SHELL_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0023_0001);
    let report = run(seed, count, threads(2));
    print(&report);
    assert_eq!(report.bypasses, Vec::<String>::new());
}

/// Prints the commands a worker generates around the first holding `SHELL_ORACLE_FIND`:
/// where a bypass came from (`SHELL_ORACLE_SEED`, the long run's seed by default).
#[test]
#[ignore = "a tool: run by hand"]
fn print_stream() {
    let seed: u64 = std::env::var("SHELL_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0023_0001);
    let find = std::env::var("SHELL_ORACLE_FIND").unwrap_or_default();
    // Or the command a worker generated as run number `SHELL_ORACLE_AT` (counted from 1).
    let at: Option<u64> = std::env::var("SHELL_ORACLE_AT")
        .ok()
        .and_then(|a| a.parse().ok());
    let places = Places {
        bin: "/BIN".to_string(),
    };
    for t in 0..8u64 {
        let mut grammar = Grammar::new(seed ^ (t.wrapping_mul(0x1000_0000_01b3)), &places);
        let mut recent: std::collections::VecDeque<String> = Default::default();
        for n in 0..400_000u64 {
            let g = grammar.command();
            if at.is_some_and(|a| a == n + 1) || (!find.is_empty() && g.text.contains(&find)) {
                println!("worker {t}, command {n}: {:?}", g.text);
                for (k, r) in recent.iter().enumerate() {
                    println!("  before -{}: {r:?}", recent.len() - k);
                }
                break;
            }
            recent.push_back(g.text);
            if recent.len() > 4 {
                recent.pop_front();
            }
        }
    }
}

/// Reads the commands in the file `SHELL_ORACLE_RECHECK` (a JSON array of strings) and says
/// how each mode judges them: whether the command a report names was passed.
#[test]
#[ignore = "a tool: run by hand"]
fn recheck() {
    let Ok(file) = std::env::var("SHELL_ORACLE_RECHECK") else {
        return;
    };
    let texts: Vec<String> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let world = SandboxWorld::new(dir.path(), &dir.path().join("home/work"));
    let protected = Protected::none();
    let mut denied_default = shell::patterns(DENIED).unwrap();
    denied_default.push(CommandPattern::parse(CANARY).unwrap());
    let denied_default = CommandList::from(denied_default);
    let denied_allowlist = CommandList::from(shell::patterns(DENIED).unwrap());
    let allowed = shell::patterns(ALLOWED).unwrap();
    let mut passed = 0;
    for text in &texts {
        let verdict = |denied: &CommandList, allowed: Option<&[CommandPattern]>| {
            let rules = ShellRules {
                constructs: &[],
                denied,
                allowed,
                protected: &protected,
                world: &world,
            };
            shell::check(text, &rules).map_or("pass".to_string(), |f| f.rule())
        };
        let default = verdict(&denied_default, None);
        let allowlist = verdict(&denied_allowlist, Some(&allowed));
        if default == "pass" || allowlist == "pass" {
            passed += 1;
        }
        println!("{text:?}\n  default: {default}\n  allowlist: {allowlist}");
    }
    println!("{} commands, {passed} passed by a mode", texts.len());
}
