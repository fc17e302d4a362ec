//! Programs that run other commands or code: followed where the check models them
//! (`env`, `nice`, `timeout`, `xargs`, `find -exec`, …), refused where it cannot read what
//! they run (shells, `python3 -c`, `awk` with `system`, `ssh`, …), unless `allow_commands`
//! names them. Every other program is ordinary: its words are its own business.

use super::command::{Arg, Step};
use super::containers::{self, Container};
use super::git::Git;
use super::guarded::{APT, Guarded, MAKE, PAGERS, SORT, Subcommands, TAR};
use super::interpreters::{Awk, Interpreter, NODE, PERL, PYTHON, RUBY};
use super::sed::Sed;
use super::wrappers::{Env, Find, NICE, NOHUP, SETSID, STDBUF, TIME, TIMEOUT, Wrapper, Xargs};
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
    "gdb-multiarch",
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
    "editor",
    "vimdiff",
    "rvim",
    "rview",
    "gvim",
    "gview",
    "gvimdiff",
    "evim",
    "eview",
    "vimx",
    "nvi",
    "elvis",
    "vile",
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
    "sudo-rs",
    "su-rs",
    "lxc-execute",
    "docker-machine",
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
    ("lxc", &["exec", "shell", "console"]),
    ("incus", &["exec", "shell", "console"]),
    ("crictl", &["exec", "run", "runp", "attach"]),
    ("ctr", &["run", "exec", "task"]),
    ("vagrant", &["ssh", "winrm"]),
    ("multipass", &["exec", "shell"]),
];

/// Python's modules that read code from their arguments or from standard input.
pub(super) const PYTHON_CODE_MODULES: &[&str] = &[
    "timeit", "code", "pdb", "IPython", "idlelib", "asyncio", "runpy", "cProfile", "profile",
    "trace",
];

pub(super) fn refusal(finding: Finding, liftable: bool) -> Step {
    Step::Refuse { finding, liftable }
}

pub(super) fn not_written(program: &str) -> Finding {
    unsupported(
        format!("a word of `{program}` that is not written out"),
        "bash would decide only when it runs what the program does with it",
    )
}

pub(super) fn unknown_option(program: &str, option: &[u8]) -> Finding {
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

/// Whether `name` is an interpreter that [`model`] reads (Python, Perl, Ruby, Node.js), under
/// one of the names its packages install.
fn is_interpreter(name: &str) -> bool {
    is_python(name)
        || ["perl", "ruby", "node"]
            .iter()
            .any(|base| family(name, base))
        || name == "nodejs"
}

/// The program `name` is a build of: itself when a list or [`is_interpreter`] knows it, or
/// else the shell, editor or interpreter it names followed by a version or variant suffix
/// (`tclsh8.6`, `perl5.36-x86_64-linux-gnu`, `python3.11-dbg`, `vim.basic`, `luajit-2.1`):
/// a known name, then a digit, a `.`, or a `-`/`_` before a digit. Distributions name their
/// builds so; a list of them would always miss the next one. Names that only end in
/// `editor` (`sensible-editor`, `select-editor`) run whichever editor is chosen: `editor`.
pub(super) fn program_name(name: &str) -> &str {
    if refused_kind(name).is_some() || is_interpreter(name) {
        return name;
    }
    if name.ends_with("-editor") {
        return "editor";
    }
    let bytes = name.as_bytes();
    for (at, &b) in bytes.iter().enumerate().skip(1) {
        let cut = b.is_ascii_digit()
            || b == b'.'
            || (matches!(b, b'-' | b'_') && bytes.get(at + 1).is_some_and(u8::is_ascii_digit));
        if !cut {
            continue;
        }
        let stem = &name[..at];
        let known = matches!(refused_kind(stem), Some(Refused::Shell | Refused::Code))
            || is_interpreter(stem);
        if known {
            return stem;
        }
    }
    name
}

/// Programs that run another program chosen by the name they are called by (`busybox`'s
/// `cat` is `cat`): the file a command resolves to says nothing about what runs.
pub(super) fn is_multi_call(name: &[u8]) -> bool {
    matches!(name, b"busybox" | b"toybox" | b"coreutils" | b"box64")
}

/// Whether the model of the program `base` is one the check reads or refuses, rather than an
/// ordinary program whose words are its own.
pub(super) fn is_ordinary(program: &Program) -> bool {
    matches!(program, Program::Ordinary)
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
    let name = program_name(name);
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
    if let Some(engine) = containers::engine(name) {
        return (Program::Container(engine), None);
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
    Container(Container),
}

impl Program {
    pub(crate) fn arg(&mut self, arg: &Arg<'_>, index: usize) -> Step {
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
            Program::Container(p) => p.arg(arg),
        }
    }

    pub(crate) fn finish(&mut self) -> Option<Finding> {
        match self {
            Program::Sed(p) => p.finish(),
            Program::Awk(p) => p.finish(),
            Program::Interpreter(p) => p.finish(),
            Program::Wrapper(p) => p.finish(),
            Program::Git(p) => p.finish(),
            Program::Xargs(p) => p.finish(),
            Program::Env(p) => p.finish(),
            Program::Container(p) => p.finish(),
            _ => None,
        }
    }

    /// `find`: the command of an `-exec` ended.
    pub(crate) fn exec_ended(&mut self) {
        if let Program::Find(f) = self {
            f.in_exec = false;
        }
    }
}

/// Paths from which a program would read standard input, or another open descriptor.
pub(super) fn reads_descriptor(path: &[u8]) -> bool {
    path == b"-"
        || path
            .split(|b| *b == b'/')
            .any(|c| c == b"dev" || c == b"proc")
}
