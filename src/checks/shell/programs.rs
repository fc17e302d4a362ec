//! Programs that run other commands or code: followed where the check models them
//! (`env`, `nice`, `timeout`, `xargs`, `find -exec`, …), refused where it cannot read what
//! they run (shells, `python3 -c`, `awk` with `system`, `ssh`, …), unless `allow_commands`
//! names them. Every other program is ordinary: its words are its own business.

use super::command::{Arg, Inner, Step};
use super::git::Git;
use super::sed::Sed;
use super::{Finding, shown, unsupported};

/// Shells: whatever they are given, they read code the check does not see (a script, a
/// string, standard input, start-up files named by the environment).
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "ksh93",
    "mksh",
    "pdksh",
    "oksh",
    "ash",
    "yash",
    "posh",
    "rbash",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "toybox",
    "elvish",
    "nu",
    "xonsh",
    "pwsh",
    "powershell",
    "rc",
    "es",
];

/// Programs that run code in a language of their own, however they are called.
const CODE: &[&str] = &[
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "R",
    "julia",
    "tclsh",
    "wish",
    "expect",
    "irb",
    "jshell",
    "ghci",
    "runghc",
    "guile",
    "racket",
    "sbcl",
    "clisp",
    "ocaml",
    "swift",
    "osascript",
    "gdb",
    "lldb",
    "ed",
    "ex",
    "vi",
    "vim",
    "nvim",
    "view",
    "emacs",
    "jq-repl",
    "ipython",
    "jupyter",
    "pwsh",
    "scala",
    "groovy",
    "kotlin",
    "erl",
    "elixir",
    "iex",
    "php-cgi",
    "node-repl",
];

/// Programs that run a command they are given, in ways the check does not model.
const RUNNERS: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "pkexec",
    "run0",
    "sudoedit",
    "runuser",
    "sg",
    "newgrp",
    "login",
    "chroot",
    "nsenter",
    "unshare",
    "setpriv",
    "capsh",
    "systemd-run",
    "machinectl",
    "firejail",
    "bwrap",
    "flatpak-spawn",
    "chrt",
    "taskset",
    "numactl",
    "prlimit",
    "cgexec",
    "flock",
    "unbuffer",
    "strace",
    "ltrace",
    "valgrind",
    "perf",
    "watch",
    "parallel",
    "entr",
    "fakeroot",
    "proxychains",
    "proxychains4",
    "torsocks",
    "dbus-launch",
    "dbus-run-session",
    "xvfb-run",
    "catchsegv",
    "ssh-agent",
    "caffeinate",
    "at",
    "batch",
    "crontab",
    "script",
    "tmux",
    "screen",
    "byobu",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "ionice",
    "start-stop-daemon",
    "daemonize",
    "xterm",
    "xdg-open",
    "open",
    "nvidia-smi-exec",
    "lxc-attach",
    "docker-exec",
    "kubectl-exec",
    "pexec",
    "rlwrap",
    "socat",
    "nc",
    "ncat",
    "netcat",
    "telnet",
    "busybox-sh",
    "time-run",
    "cpulimit",
    "nocache",
    "eatmydata",
    "faketime",
    "stdbuf-run",
    "run-parts",
    "inotifywait-run",
    "systemd-cat",
    "logsave",
    "chpst",
    "softlimit",
    "setuidgid",
    "envuidgid",
    "envdir",
    "setlock",
    "tini",
    "dumb-init",
    "gosu",
    "su-exec",
    "setarch",
    "ld.so",
    "ld-linux.so.2",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
    "ld-musl-x86_64.so.1",
    "uvx",
    "bunx",
    "pnpx",
    "npx",
    "nix-shell",
    "dotenv",
    "env-cmd",
    "cross-env",
    "concurrently",
    "nodemon",
    "watchexec",
    "linux32",
    "linux64",
    "i386",
    "x86_64",
    "uname26",
    "mispipe",
    "pipexec",
    "sem",
    "vipe",
    "ifne",
    "chronic",
    "ts-run",
];

/// Programs whose subcommands run any command they are given (`uv run CMD`,
/// `pyenv exec CMD`, `npm exec CMD`).
const SUBCOMMAND_RUNNERS: &[(&str, &[&str])] = &[
    ("uv", &["run", "tool"]),
    ("poetry", &["run"]),
    ("pipenv", &["run"]),
    ("pdm", &["run"]),
    ("hatch", &["run", "shell"]),
    ("conda", &["run"]),
    ("mamba", &["run"]),
    ("micromamba", &["run"]),
    ("bundle", &["exec"]),
    ("bundler", &["exec"]),
    ("rbenv", &["exec"]),
    ("pyenv", &["exec"]),
    ("nodenv", &["exec"]),
    ("goenv", &["exec"]),
    ("jenv", &["exec"]),
    ("asdf", &["exec"]),
    ("mise", &["exec", "x"]),
    ("rtx", &["exec", "x"]),
    ("direnv", &["exec"]),
    ("nix", &["develop", "shell", "run"]),
    ("devbox", &["run", "shell"]),
    ("pixi", &["run", "exec"]),
    ("rye", &["run"]),
    ("pipx", &["run"]),
    ("npm", &["exec", "x"]),
    ("pnpm", &["exec", "dlx"]),
    ("yarn", &["exec", "dlx"]),
    ("bun", &["x"]),
];

/// Python's modules that read code from their arguments or from standard input.
const PYTHON_CODE_MODULES: &[&str] = &[
    "timeit", "code", "pdb", "IPython", "idlelib", "asyncio", "runpy", "cProfile", "profile",
    "trace",
];

fn refusal(finding: Finding, liftable: bool) -> Step {
    Step::Refuse { finding, liftable }
}

fn not_written(program: &str) -> Finding {
    unsupported(
        format!("a word of `{program}` that is not written out"),
        "bash would decide only when it runs what the program does with it",
    )
}

fn unknown_option(program: &str, option: &[u8]) -> Finding {
    unsupported(
        format!("the `{program}` option `{}`", shown(option, 30)),
        "the check does not model it",
    )
}

/// Whether `name` is an interpreter of the Python family (`python`, `python3.12`, `pypy3`).
fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// Names `name` may be found under with a version suffix (`perl5.36`, `node18`).
fn family(name: &str, base: &str) -> bool {
    name.strip_prefix(base)
        .is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

#[derive(Clone, Copy)]
enum Refused {
    Shell,
    Code,
    Runner,
}

/// Which list names `name`: one table built once, as every command word is looked up.
fn refused_kind(name: &str) -> Option<Refused> {
    static TABLE: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, Refused>> =
        std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            let mut table = rustc_hash::FxHashMap::default();
            for (list, kind) in [
                (RUNNERS, Refused::Runner),
                (CODE, Refused::Code),
                (SHELLS, Refused::Shell),
            ] {
                for name in list {
                    table.insert(*name, kind);
                }
            }
            table
        })
        .get(name)
        .copied()
}

/// The model of the program `base` (the command word's last component), and a refusal at
/// the command word itself when the program cannot be read at all.
pub(super) fn model(base: &[u8], _word: &[u8]) -> (Program, Option<(Finding, bool)>) {
    let Ok(name) = std::str::from_utf8(base) else {
        return (Program::Ordinary, None);
    };
    let refused = |reason: &str| {
        (
            Program::Ordinary,
            Some((unsupported(format!("`{name}`"), reason), true)),
        )
    };
    match refused_kind(name) {
        Some(Refused::Shell) => {
            return refused("a shell runs code the check does not see; run the commands directly");
        }
        Some(Refused::Code) => {
            return refused("it runs code in another language, which the check cannot read");
        }
        Some(Refused::Runner) => {
            return refused("it runs commands it is given, in ways the check does not model");
        }
        None => {}
    }
    let program = match name {
        "env" => Program::Env(Env::default()),
        "nice" => Program::Wrapper(Wrapper::new(&NICE)),
        "nohup" => Program::Wrapper(Wrapper::new(&NOHUP)),
        "timeout" => Program::Wrapper(Wrapper::new(&TIMEOUT)),
        "stdbuf" => Program::Wrapper(Wrapper::new(&STDBUF)),
        "setsid" => Program::Wrapper(Wrapper::new(&SETSID)),
        "time" => Program::Wrapper(Wrapper::new(&TIME)),
        "xargs" => Program::Xargs(Xargs::default()),
        "find" => Program::Find(Find::default()),
        "git" => Program::Git(Git::default()),
        "sed" | "gsed" => Program::Sed(Sed::default()),
        "awk" | "gawk" | "mawk" | "nawk" | "original-awk" => Program::Awk(Awk::default()),
        "make" | "gmake" => Program::Guarded(Guarded::new(&MAKE)),
        "tar" | "gtar" | "bsdtar" => Program::Guarded(Guarded::new(&TAR)),
        "sort" => Program::Guarded(Guarded::new(&SORT)),
        "apt" | "apt-get" => Program::Guarded(Guarded::new(&APT)),
        "less" | "more" | "man" => Program::Guarded(Guarded::new(&PAGERS)),
        _ if SUBCOMMAND_RUNNERS.iter().any(|(p, _)| *p == name) => {
            let subcommands = SUBCOMMAND_RUNNERS
                .iter()
                .find(|(p, _)| *p == name)
                .map_or(&[][..], |(_, s)| *s);
            let name = SUBCOMMAND_RUNNERS
                .iter()
                .find(|(p, _)| *p == name)
                .map_or("", |(p, _)| *p);
            Program::Subcommands(Subcommands { name, subcommands })
        }
        _ if is_python(name) => Program::Interpreter(Interpreter::new(&PYTHON)),
        _ if family(name, "perl") => Program::Interpreter(Interpreter::new(&PERL)),
        _ if family(name, "ruby") => Program::Interpreter(Interpreter::new(&RUBY)),
        _ if family(name, "node") || name == "nodejs" => {
            Program::Interpreter(Interpreter::new(&NODE))
        }
        _ => Program::Ordinary,
    };
    (program, None)
}

/// A program being read.
pub(super) enum Program {
    Ordinary,
    Env(Env),
    Wrapper(Wrapper),
    Xargs(Xargs),
    Find(Find),
    Git(Git),
    Sed(Sed),
    Awk(Awk),
    Interpreter(Interpreter),
    Guarded(Guarded),
    Subcommands(Subcommands),
}

impl Program {
    pub fn arg(&mut self, arg: &Arg<'_>, index: usize) -> Step {
        match self {
            Program::Ordinary => Step::Next,
            Program::Env(p) => p.arg(arg),
            Program::Wrapper(p) => p.arg(arg),
            Program::Xargs(p) => p.arg(arg),
            Program::Find(p) => p.arg(arg),
            Program::Git(p) => p.arg(arg, index),
            Program::Sed(p) => p.arg(arg),
            Program::Awk(p) => p.arg(arg),
            Program::Interpreter(p) => p.arg(arg),
            Program::Guarded(p) => p.arg(arg, index),
            Program::Subcommands(p) => p.arg(arg),
        }
    }

    pub fn finish(&mut self) -> Option<Finding> {
        match self {
            Program::Sed(p) => p.finish(),
            Program::Awk(p) => p.finish(),
            Program::Interpreter(p) => p.finish(),
            Program::Wrapper(p) => p.finish(),
            Program::Git(p) => p.finish(),
            Program::Xargs(p) => p.finish(),
            Program::Env(p) => p.finish(),
            _ => None,
        }
    }

    /// `find`: the command of an `-exec` ended.
    pub fn exec_ended(&mut self) {
        if let Program::Find(f) = self {
            f.in_exec = false;
        }
    }
}

// ---------------------------------------------------------------------------
// Wrappers: options, operands, then a command.

/// The options of a program that runs the command after them.
pub(super) struct WrapperSpec {
    name: &'static str,
    /// Short options that take a value (attached or as the next word).
    short_values: &'static [u8],
    short_flags: &'static [u8],
    /// Long options that take a value (`--name=value` or `--name value`).
    long_values: &'static [&'static str],
    long_flags: &'static [&'static str],
    /// Operands before the command (the duration of `timeout`).
    operands: usize,
    /// `-5`, `-10`: a number as an option (`nice`).
    numeric_options: bool,
}

const NICE: WrapperSpec = WrapperSpec {
    name: "nice",
    short_values: b"n",
    short_flags: b"",
    long_values: &["adjustment"],
    long_flags: &["help", "version"],
    operands: 0,
    numeric_options: true,
};
const NOHUP: WrapperSpec = WrapperSpec {
    name: "nohup",
    short_values: b"",
    short_flags: b"",
    long_values: &[],
    long_flags: &["help", "version"],
    operands: 0,
    numeric_options: false,
};
const TIMEOUT: WrapperSpec = WrapperSpec {
    name: "timeout",
    short_values: b"sk",
    short_flags: b"vp",
    long_values: &["signal", "kill-after"],
    long_flags: &[
        "preserve-status",
        "foreground",
        "verbose",
        "help",
        "version",
    ],
    operands: 1,
    numeric_options: false,
};
const STDBUF: WrapperSpec = WrapperSpec {
    name: "stdbuf",
    short_values: b"ioe",
    short_flags: b"",
    long_values: &["input", "output", "error"],
    long_flags: &["help", "version"],
    operands: 0,
    numeric_options: false,
};
const SETSID: WrapperSpec = WrapperSpec {
    name: "setsid",
    short_values: b"",
    short_flags: b"cfw",
    long_values: &[],
    long_flags: &["ctty", "fork", "wait", "help", "version"],
    operands: 0,
    numeric_options: false,
};
const TIME: WrapperSpec = WrapperSpec {
    name: "time",
    short_values: b"fo",
    short_flags: b"apvq",
    long_values: &["format", "output"],
    long_flags: &[
        "append",
        "portability",
        "verbose",
        "quiet",
        "help",
        "version",
    ],
    operands: 0,
    numeric_options: false,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum WrapperStage {
    Options,
    /// An option's value comes next.
    Value,
    Operands(usize),
}

pub(super) struct Wrapper {
    spec: &'static WrapperSpec,
    stage: WrapperStage,
}

/// What an option word of a wrapper is.
enum OptionWord {
    /// Complete in itself.
    Whole,
    /// Its value is the next word.
    WantsValue,
    /// Not an option this program has.
    Unknown,
}

fn read_option(spec: &WrapperSpec, v: &[u8]) -> OptionWord {
    if let Some(long) = v.strip_prefix(b"--") {
        let (name, has_value) = match memchr::memchr(b'=', long) {
            Some(eq) => (&long[..eq], true),
            None => (long, false),
        };
        let name = std::str::from_utf8(name).unwrap_or_default();
        if spec.long_values.contains(&name) {
            return if has_value {
                OptionWord::Whole
            } else {
                OptionWord::WantsValue
            };
        }
        if spec.long_flags.contains(&name) && !has_value {
            return OptionWord::Whole;
        }
        return OptionWord::Unknown;
    }
    if spec.numeric_options && v[1..].iter().all(u8::is_ascii_digit) {
        return OptionWord::Whole;
    }
    for (i, b) in v[1..].iter().enumerate() {
        if spec.short_values.contains(b) {
            return if i + 2 < v.len() {
                OptionWord::Whole
            } else {
                OptionWord::WantsValue
            };
        }
        if !spec.short_flags.contains(b) {
            return OptionWord::Unknown;
        }
    }
    OptionWord::Whole
}

impl Wrapper {
    fn new(spec: &'static WrapperSpec) -> Wrapper {
        Wrapper {
            spec,
            stage: WrapperStage::Options,
        }
    }

    fn arg(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refusal(not_written(self.spec.name), false);
        };
        match self.stage {
            WrapperStage::Value => {
                self.stage = WrapperStage::Options;
                Step::Next
            }
            WrapperStage::Options if v == b"--" => {
                self.stage = WrapperStage::Operands(self.spec.operands);
                Step::Next
            }
            WrapperStage::Options if v.len() > 1 && v[0] == b'-' => {
                match read_option(self.spec, v) {
                    OptionWord::Whole => Step::Next,
                    OptionWord::WantsValue => {
                        self.stage = WrapperStage::Value;
                        Step::Next
                    }
                    OptionWord::Unknown => refusal(unknown_option(self.spec.name, v), false),
                }
            }
            WrapperStage::Options | WrapperStage::Operands(_) => {
                let left = match self.stage {
                    WrapperStage::Operands(n) => n,
                    _ => self.spec.operands,
                };
                if left > 0 {
                    self.stage = WrapperStage::Operands(left - 1);
                    return Step::Next;
                }
                Step::Runs(Inner {
                    by_program: true,
                    ..Inner::default()
                })
            }
        }
    }

    fn finish(&mut self) -> Option<Finding> {
        None
    }
}

// ---------------------------------------------------------------------------
// env

#[derive(Default)]
pub(super) struct Env {
    /// An option's value comes next.
    value: bool,
    /// Past the options: assignments, then the command.
    assignments: bool,
}

const ENV_VALUES: &[&str] = &["unset", "chdir"];
const ENV_FLAGS: &[&str] = &[
    "ignore-environment",
    "null",
    "debug",
    "list-signal-handling",
    "help",
    "version",
];
const ENV_OPTIONAL: &[&str] = &["block-signal", "default-signal", "ignore-signal"];

impl Env {
    fn arg(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refusal(not_written("env"), false);
        };
        if self.value {
            self.value = false;
            return Step::Next;
        }
        if !self.assignments {
            if v == b"--" || v == b"-" {
                self.assignments = true;
                return Step::Next;
            }
            if let Some(long) = v.strip_prefix(b"--") {
                let (name, has_value) = match memchr::memchr(b'=', long) {
                    Some(eq) => (&long[..eq], true),
                    None => (long, false),
                };
                let name = std::str::from_utf8(name).unwrap_or_default();
                if name == "split-string" {
                    return refusal(split_string(), true);
                }
                if ENV_VALUES.contains(&name) {
                    self.value = !has_value;
                    return Step::Next;
                }
                if ENV_FLAGS.contains(&name) && !has_value || ENV_OPTIONAL.contains(&name) {
                    return Step::Next;
                }
                return refusal(unknown_option("env", v), false);
            }
            if v.len() > 1 && v[0] == b'-' {
                for (i, b) in v[1..].iter().enumerate() {
                    match b {
                        b'i' | b'0' | b'v' => {}
                        b'u' | b'C' => {
                            self.value = i + 2 == v.len();
                            return Step::Next;
                        }
                        b'S' => return refusal(split_string(), true),
                        _ => return refusal(unknown_option("env", v), false),
                    }
                }
                return Step::Next;
            }
            self.assignments = true;
        }
        if let Some(eq) = memchr::memchr(b'=', v) {
            return match super::variables::check_name(&v[..eq]) {
                Ok(()) => Step::Next,
                Err(f) => refusal(f, false),
            };
        }
        Step::Runs(Inner {
            by_program: true,
            ..Inner::default()
        })
    }

    fn finish(&mut self) -> Option<Finding> {
        None
    }
}

fn split_string() -> Finding {
    unsupported(
        "`env -S`",
        "it splits a string into a command the check does not read",
    )
}

// ---------------------------------------------------------------------------
// xargs

#[derive(Default)]
pub(super) struct Xargs {
    value: bool,
    /// The next word is the replace string of `-I`.
    replace_next: bool,
    replace: Option<Box<[u8]>>,
}

const XARGS_SHORT_VALUES: &[u8] = b"adELnPs";
const XARGS_SHORT_FLAGS: &[u8] = b"0prtxo";
const XARGS_LONG_VALUES: &[&str] = &[
    "arg-file",
    "delimiter",
    "max-args",
    "max-procs",
    "max-chars",
];
const XARGS_LONG_FLAGS: &[&str] = &[
    "null",
    "interactive",
    "no-run-if-empty",
    "verbose",
    "exit",
    "open-tty",
    "show-limits",
    "help",
    "version",
];

impl Xargs {
    fn arg(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refusal(not_written("xargs"), false);
        };
        if self.value {
            self.value = false;
            return Step::Next;
        }
        if self.replace_next {
            self.replace_next = false;
            self.replace = Some(v.into());
            return Step::Next;
        }
        if let Some(long) = v.strip_prefix(b"--") {
            if long.is_empty() {
                return Step::Next;
            }
            let (name, value) = match memchr::memchr(b'=', long) {
                Some(eq) => (&long[..eq], Some(&long[eq + 1..])),
                None => (long, None),
            };
            let name = std::str::from_utf8(name).unwrap_or_default();
            return match name {
                "replace" => {
                    self.replace = Some(value.unwrap_or(b"{}").into());
                    Step::Next
                }
                "eof" | "max-lines" => Step::Next,
                _ if XARGS_LONG_VALUES.contains(&name) => {
                    self.value = value.is_none();
                    Step::Next
                }
                _ if XARGS_LONG_FLAGS.contains(&name) && value.is_none() => Step::Next,
                _ => refusal(unknown_option("xargs", v), false),
            };
        }
        if v.len() > 1 && v[0] == b'-' {
            for (i, b) in v[1..].iter().enumerate() {
                let rest = &v[i + 2..];
                match b {
                    b'I' => {
                        if rest.is_empty() {
                            self.replace_next = true;
                        } else {
                            self.replace = Some(rest.into());
                        }
                        return Step::Next;
                    }
                    b'i' => {
                        self.replace = Some(if rest.is_empty() { b"{}" } else { rest }.into());
                        return Step::Next;
                    }
                    b'e' | b'l' => return Step::Next,
                    _ if XARGS_SHORT_VALUES.contains(b) => {
                        self.value = rest.is_empty();
                        return Step::Next;
                    }
                    _ if XARGS_SHORT_FLAGS.contains(b) => {}
                    _ => return refusal(unknown_option("xargs", v), false),
                }
            }
            return Step::Next;
        }
        Step::Runs(Inner {
            by_program: true,
            tail: true,
            replace: self.replace.take(),
            ..Inner::default()
        })
    }

    fn finish(&mut self) -> Option<Finding> {
        None
    }
}

// ---------------------------------------------------------------------------
// find

#[derive(Default)]
pub(super) struct Find {
    in_exec: bool,
    /// The next word is the command of an `-exec`.
    exec_next: bool,
}

impl Find {
    fn arg(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refusal(not_written("find"), false);
        };
        if self.exec_next {
            self.exec_next = false;
            self.in_exec = true;
            return Step::Runs(Inner {
                by_program: true,
                replace: Some((*b"{}").into()),
                until_terminator: true,
                ..Inner::default()
            });
        }
        if matches!(v, b"-exec" | b"-execdir" | b"-ok" | b"-okdir") {
            self.exec_next = true;
        }
        Step::Next
    }
}

// ---------------------------------------------------------------------------
// Interpreters: a script file passes, code given any other way does not.

pub(super) struct InterpreterSpec {
    name: &'static str,
    /// Options whose value (attached or next) is code; also single letters in a bundle.
    code: &'static [&'static str],
    /// Letters that may be bundled and take no value.
    flags: &'static [u8],
    /// Letters whose value is attached or the next word (harmless values).
    values: &'static [u8],
    /// Letters whose value is the rest of the word, if any (never the next word).
    rest_values: &'static [u8],
    /// Letters followed by digits, if any, after which more letters may follow (`-l0n`).
    digit_values: &'static [u8],
    /// Letters that take the one character after them (`ruby -Ku`).
    char_values: &'static [u8],
    /// Long options without a value that only print and exit.
    exits: &'static [&'static str],
    /// Letters that only print and exit.
    exit_letters: &'static [u8],
    /// The letter that runs a module (`python -m`).
    module: Option<u8>,
    /// A script whose `#!` line names another program is run by that program: the script
    /// is a command, as far as denied commands go.
    follows_shebang: bool,
}

const PYTHON: InterpreterSpec = InterpreterSpec {
    name: "python",
    code: &["-c", "-i"],
    flags: b"bBdEIOPqRsSuvx",
    values: b"WX",
    rest_values: b"",
    digit_values: b"",
    char_values: b"",
    exits: &[
        "--version",
        "--help",
        "--help-env",
        "--help-xoptions",
        "--help-all",
    ],
    exit_letters: b"hV",
    module: Some(b'm'),
    follows_shebang: false,
};
const PERL: InterpreterSpec = InterpreterSpec {
    name: "perl",
    code: &["-e", "-E", "-M", "-m", "-d", "-D", "-x"],
    flags: b"acnpsStTuUwWX",
    values: b"",
    rest_values: b"IFi",
    digit_values: b"l0",
    char_values: b"",
    exits: &["--version", "--help"],
    exit_letters: b"vVh",
    module: None,
    follows_shebang: true,
};
const RUBY: InterpreterSpec = InterpreterSpec {
    name: "ruby",
    code: &["-e", "-r", "-x", "-i"],
    flags: b"acdlnpsSwWy",
    values: b"",
    rest_values: b"ICEF",
    digit_values: b"0",
    char_values: b"K",
    exits: &["--version", "--help", "--copyright"],
    exit_letters: b"vh",
    module: None,
    follows_shebang: true,
};
const NODE: InterpreterSpec = InterpreterSpec {
    name: "node",
    code: &[
        "-e",
        "--eval",
        "-p",
        "--print",
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "-i",
        "--interactive",
    ],
    flags: b"c",
    values: b"",
    rest_values: b"",
    digit_values: b"",
    char_values: b"",
    exits: &["--version", "--help", "--v8-options"],
    exit_letters: b"vh",
    module: None,
    follows_shebang: false,
};

pub(super) struct Interpreter {
    spec: &'static InterpreterSpec,
    value: bool,
    module: bool,
    /// A script, a module or an option that exits was given: nothing is read from stdin.
    settled: bool,
}

/// Paths from which a program would read standard input, or another open descriptor.
pub(super) fn reads_descriptor(path: &[u8]) -> bool {
    path == b"-"
        || path
            .split(|b| *b == b'/')
            .any(|c| c == b"dev" || c == b"proc")
}

impl Interpreter {
    fn new(spec: &'static InterpreterSpec) -> Interpreter {
        Interpreter {
            spec,
            value: false,
            module: false,
            settled: false,
        }
    }

    fn code_refusal(&self, option: &[u8]) -> Step {
        refusal(
            unsupported(
                format!("`{} {}`", self.spec.name, shown(option, 20)),
                "it runs code the check cannot read",
            ),
            true,
        )
    }

    fn arg(&mut self, arg: &Arg<'_>) -> Step {
        let name = self.spec.name;
        let Some(v) = arg.value else {
            return refusal(not_written(name), true);
        };
        if self.value {
            self.value = false;
            return Step::Next;
        }
        if self.module {
            let module = std::str::from_utf8(v).unwrap_or_default();
            if PYTHON_CODE_MODULES.contains(&module) || v.first() == Some(&b'-') {
                return refusal(
                    unsupported(
                        format!("`{name} -m {}`", shown(v, 20)),
                        "this module runs code it is given",
                    ),
                    true,
                );
            }
            return Step::Rest;
        }
        if v == b"--" {
            return Step::Next;
        }
        if v.len() > 1 && v[0] == b'-' {
            let code = |o: &str| {
                let o = o.as_bytes();
                v == o
                    || (o.len() == 2 && v.starts_with(o))
                    || (o.len() > 2 && v.starts_with(o) && v.get(o.len()) == Some(&b'='))
            };
            if self.spec.code.iter().any(|o| code(o)) {
                return self.code_refusal(v);
            }
            if self.spec.exits.iter().any(|o| o.as_bytes() == v) {
                self.settled = true;
                return Step::Rest;
            }
            if v.starts_with(b"--") {
                return refusal(unknown_option(name, v), true);
            }
            let mut at = 1;
            while let Some(&b) = v.get(at) {
                at += 1;
                let attached = at < v.len();
                if self
                    .spec
                    .code
                    .iter()
                    .any(|o| o.len() == 2 && o.as_bytes()[1] == b)
                {
                    return self.code_refusal(v);
                }
                if self.spec.module == Some(b) {
                    if attached {
                        let module = std::str::from_utf8(&v[at..]).unwrap_or_default();
                        if PYTHON_CODE_MODULES.contains(&module) {
                            return self.code_refusal(v);
                        }
                        return Step::Rest;
                    }
                    self.module = true;
                    return Step::Next;
                }
                if self.spec.exit_letters.contains(&b) {
                    self.settled = true;
                    return Step::Rest;
                }
                if self.spec.values.contains(&b) {
                    self.value = !attached;
                    return Step::Next;
                }
                if self.spec.rest_values.contains(&b) {
                    return Step::Next;
                }
                if self.spec.digit_values.contains(&b) {
                    while v.get(at).is_some_and(u8::is_ascii_digit) {
                        at += 1;
                    }
                    continue;
                }
                if self.spec.char_values.contains(&b) {
                    at += 1;
                    continue;
                }
                if !self.spec.flags.contains(&b) {
                    return refusal(unknown_option(name, v), true);
                }
            }
            return Step::Next;
        }
        if reads_descriptor(v) {
            return refusal(
                unsupported(
                    format!("`{name} {}`", shown(v, 30)),
                    "it reads code from standard input or another descriptor",
                ),
                true,
            );
        }
        self.settled = true;
        if self.spec.follows_shebang {
            return Step::Launches;
        }
        Step::Rest
    }

    fn finish(&mut self) -> Option<Finding> {
        if self.settled {
            return None;
        }
        Some(unsupported(
            format!("`{}` without a script", self.spec.name),
            "it reads code from standard input, which the check cannot read",
        ))
    }
}

// ---------------------------------------------------------------------------
// awk

#[derive(Default)]
pub(super) struct Awk {
    value: bool,
    /// A program was given (`-f`, or the first operand).
    program: bool,
}

/// What in an awk program runs a command: `system(…)`, a pipe to or from a command
/// (`|`, `|&`, but not `||`), and gawk's indirect calls (`@f()`), which can reach `system`.
fn awk_runs_commands(program: &[u8]) -> Option<&'static str> {
    if super::command::contains(program, b"system") {
        return Some("`system`");
    }
    if program.contains(&b'@') {
        return Some("an indirect call `@…`");
    }
    let mut i = 0;
    while i < program.len() {
        if program[i] == b'|' {
            if program.get(i + 1) == Some(&b'|') {
                i += 2;
                continue;
            }
            return Some("a pipe `|`");
        }
        i += 1;
    }
    None
}

impl Awk {
    fn arg(&mut self, arg: &Arg<'_>) -> Step {
        if self.program {
            // Operands: files and assignments, read as data.
            return Step::Rest;
        }
        let Some(v) = arg.value else {
            return refusal(not_written("awk"), true);
        };
        if self.value {
            self.value = false;
            return Step::Next;
        }
        match v {
            b"--" => return Step::Next,
            b"--version" | b"-V" | b"--help" => {
                self.program = true;
                return Step::Rest;
            }
            _ => {}
        }
        if v.len() > 1 && v[0] == b'-' {
            let (letter, attached) = (v[1], v.len() > 2);
            return match letter {
                b'F' | b'v' => {
                    self.value = !attached;
                    Step::Next
                }
                b'f' => refusal(
                    unsupported("`awk -f`", "the program is in a file the check cannot read"),
                    true,
                ),
                _ => refusal(unknown_option("awk", v), true),
            };
        }
        self.program = true;
        match awk_runs_commands(v) {
            Some(what) => refusal(
                unsupported(
                    format!("an awk program with {what}"),
                    "it runs commands the check cannot see",
                ),
                true,
            ),
            None => Step::Rest,
        }
    }

    fn finish(&mut self) -> Option<Finding> {
        if self.program {
            None
        } else {
            Some(unsupported(
                "`awk` without a program",
                "the check does not model it",
            ))
        }
    }
}

// ---------------------------------------------------------------------------
// Programs with options that name commands: those options are refused, and so is a word
// that is not written out and may be an option.

pub(super) struct GuardSpec {
    name: &'static str,
    /// Long options (without `--`) that name a command or read code; any abbreviation bash
    /// passes (`--to-com`) is refused too, as GNU programs accept them.
    long: &'static [&'static str],
    /// Short option letters that do (anywhere in a bundle of short options).
    short: &'static [u8],
    /// Operands of the form `NAME=value` set variables (make).
    assignments: bool,
    /// A word starting with `+` holds commands (less).
    plus_commands: bool,
}

const MAKE: GuardSpec = GuardSpec {
    name: "make",
    long: &["eval"],
    short: b"E",
    assignments: true,
    plus_commands: false,
};
const TAR: GuardSpec = GuardSpec {
    name: "tar",
    long: &[
        "to-command",
        "use-compress-program",
        "checkpoint-action",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
        "index-file",
    ],
    short: b"IF",
    assignments: false,
    plus_commands: false,
};
const SORT: GuardSpec = GuardSpec {
    name: "sort",
    long: &["compress-program"],
    short: b"",
    assignments: false,
    plus_commands: false,
};
const APT: GuardSpec = GuardSpec {
    name: "apt-get",
    long: &["option", "config-file"],
    short: b"oc",
    assignments: false,
    plus_commands: false,
};
const PAGERS: GuardSpec = GuardSpec {
    name: "less",
    long: &[
        "pager",
        "html",
        "preprocessor",
        "lesskey-src",
        "lesskey-file",
    ],
    short: b"PHk",
    assignments: false,
    plus_commands: true,
};

pub(super) struct Guarded {
    spec: &'static GuardSpec,
    operands: bool,
}

impl Guarded {
    fn new(spec: &'static GuardSpec) -> Guarded {
        Guarded {
            spec,
            operands: false,
        }
    }

    fn arg(&mut self, arg: &Arg<'_>, index: usize) -> Step {
        let name = self.spec.name;
        let Some(v) = arg.value else {
            if arg.may_be_option && !self.operands {
                return refusal(not_written(name), true);
            }
            return Step::Next;
        };
        if self.operands {
            return Step::Next;
        }
        if v == b"--" {
            self.operands = true;
            return Step::Next;
        }
        if let Some(long) = v.strip_prefix(b"--") {
            let given = match memchr::memchr(b'=', long) {
                Some(eq) => &long[..eq],
                None => long,
            };
            let refused = self.spec.long.iter().any(|o| {
                let o = o.as_bytes();
                // `file=-`: the option with that value.
                if let Some(eq) = memchr::memchr(b'=', o) {
                    return long == o || (o[..eq].starts_with(given) && long.ends_with(&o[eq..]));
                }
                !given.is_empty() && o.starts_with(given)
            });
            if refused {
                return refusal(
                    unsupported(
                        format!("the `{name}` option `{}`", shown(v, 30)),
                        "it runs a command or reads code the check cannot see",
                    ),
                    true,
                );
            }
            return Step::Next;
        }
        let bundle = v.len() > 1 && v[0] == b'-';
        // tar's first word may be a bundle without `-` (`tar xIf …`).
        let old_style = index == 1 && name == "tar" && !bundle;
        if (bundle || old_style)
            && v.iter()
                .skip(usize::from(bundle))
                .any(|b| self.spec.short.contains(b))
        {
            if name == "make" && v == b"-f" {
                return Step::Next;
            }
            return refusal(
                unsupported(
                    format!("the `{name}` option `{}`", shown(v, 30)),
                    "it runs a command or reads code the check cannot see",
                ),
                true,
            );
        }
        if self.spec.assignments && !bundle {
            if let Some(eq) = memchr::memchr(b'=', v) {
                if let Err(f) = super::variables::check_name(&v[..eq]) {
                    return refusal(f, true);
                }
            }
        }
        if self.spec.assignments {
            // make: a makefile read from standard input or a descriptor.
            let file = v
                .strip_prefix(b"--file=")
                .or_else(|| v.strip_prefix(b"--makefile="))
                .or_else(|| v.strip_prefix(b"-f"))
                .unwrap_or(v);
            if !file.is_empty() && reads_descriptor(file) {
                return refusal(
                    unsupported(
                        "a makefile read from standard input or a descriptor",
                        "it holds commands the check cannot see",
                    ),
                    true,
                );
            }
        }
        if self.spec.plus_commands && v.first() == Some(&b'+') {
            return refusal(
                unsupported(
                    format!("`{name} {}`", shown(v, 30)),
                    "a `+` word gives the pager commands to run, which may run a shell",
                ),
                true,
            );
        }
        Step::Next
    }
}

// ---------------------------------------------------------------------------
// Programs with subcommands that run any command.

pub(super) struct Subcommands {
    name: &'static str,
    subcommands: &'static [&'static str],
}

impl Subcommands {
    fn arg(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refusal(not_written(self.name), true);
        };
        if self.subcommands.iter().any(|s| s.as_bytes() == v) {
            return refusal(
                unsupported(
                    format!("`{} {}`", self.name, shown(v, 20)),
                    "it runs any command it is given, in ways the check does not model",
                ),
                true,
            );
        }
        Step::Next
    }
}
