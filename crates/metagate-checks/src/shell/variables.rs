//! Which variables a command may set: not those that change where commands are found,
//! what a shell runs on start-up or at a prompt, how bash reads later commands, or which
//! program another program runs.
//!
//! This is the one list the check keeps: a program may read any variable, and no list can
//! name them all. The lists below cover bash itself completely (every variable its manual
//! gives a meaning to) and the programs the check models; `[shell] allow_commands` is the
//! boundary for the rest.

use super::lex::{is_name_char, is_name_start};
use super::{Finding, shown, unsupported};

/// Variables bash itself gives a meaning to (bash(1), "Shell Variables"), and those of the
/// start-up files and prompts of `sh` and the other shells: setting any of them changes
/// what bash does next. `IFS`, `CDPATH`, `HOME`, `PWD`, `OLDPWD`, `LANG`, `TERM` and a few
/// others only change what words expand to, which the check does not depend on.
const SHELL: &[&str] = &[
    "BASHOPTS",
    "BASHPID",
    "CHILD_MAX",
    "COMPREPLY",
    "DIRSTACK",
    "EMACS",
    "ENV",
    "EPOCHREALTIME",
    "EPOCHSECONDS",
    "EUID",
    "EXECIGNORE",
    "FCEDIT",
    "FIGNORE",
    "FUNCNAME",
    "FUNCNEST",
    "GLOBIGNORE",
    "GLOBSORT",
    "GROUPS",
    "HISTCMD",
    "HISTCONTROL",
    "HISTFILE",
    "HISTFILESIZE",
    "HISTIGNORE",
    "HISTSIZE",
    "HISTTIMEFORMAT",
    "HOSTFILE",
    "IGNOREEOF",
    "INPUTRC",
    "INSIDE_EMACS",
    "LINENO",
    "MAIL",
    "MAILCHECK",
    "MAILPATH",
    "OPTARG",
    "OPTERR",
    "OPTIND",
    "PATH",
    "PIPESTATUS",
    "POSIXLY_CORRECT",
    "PPID",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "PROMPT_DIRTRIM",
    "RANDOM",
    "READLINE_ARGUMENT",
    "READLINE_LINE",
    "READLINE_MARK",
    "READLINE_POINT",
    "REPLY",
    "SECONDS",
    "SHELL",
    "SHELLOPTS",
    "SHLVL",
    "SRANDOM",
    "TIMEFORMAT",
    "TMOUT",
    "UID",
    "ZDOTDIR",
];

/// Prefixes of variables that belong to bash, to the dynamic linker, or to programs that
/// run what they name.
const PREFIXES: &[&str] = &[
    "BASH",
    "COMP_",
    "HIST",
    "LD_",
    "DYLD_",
    "LESS",
    "SUDO_",
    "PERL",
    "RUBY",
    "NODE_PATH",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONBREAKPOINT",
    "PYTHONINSPECT",
    "PYTHONEXECUTABLE",
    "MAKE",
    "MFLAGS",
    "GNUMAKEFLAGS",
    "GCONV_",
    "MANOPT",
];

/// Parts of a name that say it names a program to run.
const PARTS: &[&str] = &[
    "COMMAND",
    "_CMD",
    "CMD_",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "ASKPASS",
    "BROWSER",
    "SHELL",
    "PROGRAM",
    "WRAPPER",
    "RUNNER",
    "LINKER",
    "HOOK",
    "PRELOAD",
    "AUDIT",
    "DEBUGGER",
    "TERMINAL",
    "EXEC",
    "OPTIONS",
    "_OPTS",
    "STARTUP",
    "RUSTC",
    "RUSTDOC",
    "RUSTFLAGS",
    "CREDENTIAL",
];

/// Variables of make's implicit rules and of compilers' drivers, each naming a program.
const PROGRAMS: &[&str] = &[
    "AR",
    "AS",
    "CC",
    "CO",
    "CPP",
    "CTANGLE",
    "CWEAVE",
    "CXX",
    "FC",
    "F77",
    "GET",
    "LD",
    "LEX",
    "LINT",
    "M2C",
    "NM",
    "OBJCOPY",
    "OBJDUMP",
    "PC",
    "RANLIB",
    "RM",
    "STRIP",
    "TANGLE",
    "TEX",
    "TEXI2DVI",
    "WEAVE",
    "YACC",
    "YFLAGS",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "CPPFLAGS",
    "PKG_CONFIG",
];

/// Git's variables a command may set: names and dates, and where the repository is.
/// Every other `GIT_*` may name a program or inject configuration.
const GIT_ALLOWED: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OPTIONAL_LOCKS",
    "GIT_LFS_SKIP_SMUDGE",
    "GIT_FLUSH",
    "GIT_TRACE",
    "GIT_MERGE_AUTOEDIT",
];

/// Whether a command may set `name` (as a shell assignment, through `env`, `export`,
/// `declare`, a `for` loop, or `make NAME=…`).
pub(super) fn check_name(name: &[u8]) -> Result<(), Finding> {
    let readable =
        name.first().is_some_and(|b| is_name_start(*b)) && name.iter().all(|b| is_name_char(*b));
    if !readable {
        return Err(unsupported(
            format!("setting `{}`", shown(name, 40)),
            "it is not a plain variable name (bash exports functions under such names)",
        ));
    }
    // Names are ASCII here.
    let text = std::str::from_utf8(name).unwrap_or_default();
    let upper = text.to_ascii_uppercase();
    let refused = SHELL.contains(&text)
        || PROGRAMS.contains(&text)
        || PREFIXES.iter().any(|p| text.starts_with(p))
        || PARTS.iter().any(|p| upper.contains(p))
        || (text.starts_with("GIT_") && !GIT_ALLOWED.contains(&text));
    if refused {
        return Err(unsupported(
            format!("setting `{text}`"),
            "it changes which programs run or how the shell reads commands",
        ));
    }
    Ok(())
}
