//! Bash's builtins: each is passed only in the forms read here, and those that run text as
//! code, or assign to names that may hold array subscripts, are refused.
//!
//! An array subscript is arithmetic, and bash's arithmetic runs command substitutions:
//! `test -v 'a[$(id)]'`, `printf -v 'a[$(id)]'`, `read 'a[$(id)]'` and `unset 'a[$(id)]'`
//! all run `id`. So a builtin that takes a variable name sees only names written out, and
//! never a `[`.

use super::command::{Arg, Inner, Step};
use super::lex::{is_name_char, is_name_start};
use super::{Finding, shown, unsupported};

/// How a builtin is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Any words: nothing in them is evaluated (`echo`, `cd`, `:`).
    AnyWords,
    /// Words written out, none of the options listed.
    Written { refused_options: &'static [u8] },
    /// Words written out, none holding a `[` (a job or process number is read as one,
    /// and arithmetic might see a subscript).
    Numbers { refused_options: &'static [u8] },
    /// `test` and `[`: written out, no `-v` or `-R`.
    Test,
    /// `printf`: no `-v`; the format written out.
    Printf,
    /// `export`, `readonly`, `declare`, `typeset`, `local`.
    Declaration { options: &'static [u8] },
    /// `unset`: plain names only.
    Unset,
    /// `set`: the options listed in [`SET_OPTIONS`].
    Set,
    /// `shopt`: the options listed in [`SHOPT_OPTIONS`].
    Shopt,
    /// `command`: looks a name up (`-v`, `-V`), or runs it.
    Command,
    /// `builtin NAME`: runs the builtin.
    Builtin,
    /// `exec`: runs a program in the shell's place, or only redirects.
    Exec,
    /// Refused: it runs text as code, or assigns to names that may hold subscripts.
    Refused { reason: &'static str },
}

const REFUSED_CODE: &str = "it runs text as shell code the check cannot read";
const REFUSED_NAMES: &str =
    "it assigns to a name that may hold an array subscript, which bash evaluates as arithmetic";

/// Bash's builtins, by how each is read: the one list [`lookup`] answers from.
const BUILTINS: &[(&[&[u8]], Kind)] = &[
    (
        &[b":", b"true", b"false", b"echo", b"cd", b"pwd"],
        Kind::AnyWords,
    ),
    // `kill` reads its signal and processes as plain numbers and names (`legal_number`,
    // `decode_signal`), never as arithmetic; deny entries read them by meaning.
    (&[b"kill"], Kind::AnyWords),
    (
        &[
            b"type", b"times", b"help", b"logout", b"suspend", b"unalias",
        ],
        Kind::Written {
            refused_options: b"",
        },
    ),
    (
        &[
            b"umask",
            b"ulimit",
            b"exit",
            b"return",
            b"shift",
            b"break",
            b"continue",
            b"dirs",
            b"pushd",
            b"popd",
            b"bg",
            b"fg",
            b"disown",
            b"caller",
        ],
        Kind::Numbers {
            refused_options: b"",
        },
    ),
    (
        &[b"hash"],
        Kind::Written {
            refused_options: b"p",
        },
    ),
    (
        &[b"jobs"],
        Kind::Numbers {
            refused_options: b"x",
        },
    ),
    (
        &[b"wait"],
        Kind::Numbers {
            refused_options: b"p",
        },
    ),
    (&[b"test", b"["], Kind::Test),
    (&[b"printf"], Kind::Printf),
    (&[b"export"], Kind::Declaration { options: b"p" }),
    (&[b"readonly"], Kind::Declaration { options: b"p" }),
    (
        &[b"declare", b"typeset"],
        Kind::Declaration { options: b"pxrglu" },
    ),
    (&[b"local"], Kind::Declaration { options: b"" }),
    (&[b"unset"], Kind::Unset),
    (&[b"set"], Kind::Set),
    (&[b"shopt"], Kind::Shopt),
    (&[b"command"], Kind::Command),
    (&[b"builtin"], Kind::Builtin),
    (&[b"exec"], Kind::Exec),
    (
        &[b"eval", b"source", b"."],
        Kind::Refused {
            reason: REFUSED_CODE,
        },
    ),
    (
        &[b"fc"],
        Kind::Refused {
            reason: "it runs commands again from the history, after editing them",
        },
    ),
    (
        &[b"history"],
        Kind::Refused {
            reason: "history is what `fc` and `!` run again; the check does not model it",
        },
    ),
    (
        &[b"trap"],
        Kind::Refused {
            reason: "it runs code when a signal arrives",
        },
    ),
    (
        &[b"let"],
        Kind::Refused {
            reason: "it evaluates arithmetic, whose array subscripts can run commands",
        },
    ),
    (
        &[b"enable"],
        Kind::Refused {
            reason: "it switches builtins on and off, or loads new ones",
        },
    ),
    (
        &[b"alias"],
        Kind::Refused {
            reason: "an alias changes what later commands mean",
        },
    ),
    (
        &[b"bind"],
        Kind::Refused {
            reason: "`bind -x` runs commands",
        },
    ),
    (
        &[b"complete", b"compgen", b"compopt"],
        Kind::Refused {
            reason: "completions run functions and commands",
        },
    ),
    (
        &[b"read", b"mapfile", b"readarray", b"getopts"],
        Kind::Refused {
            reason: REFUSED_NAMES,
        },
    ),
];

/// The builtin called `name`, if bash has one. Every command word is looked up, so the list
/// is a hash table built once rather than a chain of comparisons.
pub(super) fn lookup(name: &[u8]) -> Option<Kind> {
    static TABLE: std::sync::OnceLock<rustc_hash::FxHashMap<&'static [u8], Kind>> =
        std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            BUILTINS
                .iter()
                .flat_map(|(names, kind)| names.iter().map(move |name| (*name, *kind)))
                .collect()
        })
        .get(name)
        .copied()
}

/// `set` options a command may turn on or off: none that changes how later commands are
/// read (`-k`, `+o interactive-comments`, history) or that runs code (`-T` with traps).
const SET_LETTERS: &[u8] = b"abefhmnuvxBCP";
const SET_OPTIONS: &[&[u8]] = &[
    b"allexport",
    b"braceexpand",
    b"errexit",
    b"hashall",
    b"monitor",
    b"noclobber",
    b"noexec",
    b"noglob",
    b"notify",
    b"nounset",
    b"physical",
    b"pipefail",
    b"verbose",
    b"xtrace",
];

/// `shopt` options a command may set: those that only change what globs match.
const SHOPT_OPTIONS: &[&[u8]] = &[
    b"dotglob",
    b"failglob",
    b"globasciiranges",
    b"globstar",
    b"nocaseglob",
    b"nocasematch",
    b"nullglob",
    b"lastpipe",
    b"xpg_echo",
    b"checkwinsize",
];

/// A builtin being read.
#[derive(Debug)]
pub(super) struct Builtin {
    kind: Kind,
    name: &'static str,
    /// Past `--`: no more options.
    operands: bool,
    /// `printf`: the format was read. `set`: a `-o` waits for its option's name.
    /// `command`: a lookup (`-v`, `-V`). `exec`: `-a` waits for its name.
    flag: bool,
    /// `shopt`: `-s` or `-u` was given (the names set options).
    setting: bool,
    /// `test`: how its words stand.
    test: TestWords,
}

/// Where `test` stands: bash reads a word as an operator by its place among the others,
/// so a word not written out passes only where it can be nothing but an operand.
#[derive(Debug, Default)]
struct TestWords {
    count: usize,
    first_is_not: bool,
    /// The last word was an operator whose operand comes next.
    after_operator: bool,
    /// A word not written out waits for a binary operator after it.
    pending: bool,
    /// The last word was `]` (which `[` does not count).
    closing: bool,
}

/// Binary operators of `test`.
fn is_binary_test(word: &[u8]) -> bool {
    matches!(
        word,
        b"=" | b"=="
            | b"!="
            | b"<"
            | b">"
            | b"-eq"
            | b"-ne"
            | b"-lt"
            | b"-le"
            | b"-gt"
            | b"-ge"
            | b"-nt"
            | b"-ot"
            | b"-ef"
    )
}

/// Unary operators of `test` that only look at their operand (not `-v` or `-R`).
fn is_unary_test(word: &[u8]) -> bool {
    word.len() == 2 && word[0] == b'-' && b"abcdefghknoprstuwxzGLNOS".contains(&word[1])
}

/// The builtins [`lookup`] models, by their own spelling: the names shown in messages.
pub(super) const MODELLED: &[&str] = &[
    ":", "true", "false", "echo", "cd", "pwd", "type", "times", "help", "logout", "suspend",
    "unalias", "umask", "ulimit", "exit", "return", "shift", "break", "continue", "dirs", "pushd",
    "popd", "bg", "fg", "disown", "caller", "kill", "hash", "jobs", "wait", "test", "[", "printf",
    "export", "readonly", "declare", "typeset", "local", "unset", "set", "shopt", "command",
    "builtin", "exec",
];

fn static_name(name: &[u8]) -> &'static str {
    MODELLED
        .iter()
        .find(|known| known.as_bytes() == name)
        .copied()
        .unwrap_or("this builtin")
}

/// The model for builtin `name` of kind `kind`, or its refusal.
pub(super) fn model(kind: Kind, name: &[u8]) -> Result<Builtin, Finding> {
    if let Kind::Refused { reason } = kind {
        return Err(unsupported(format!("`{}`", shown(name, 20)), reason));
    }
    Ok(Builtin {
        kind,
        name: static_name(name),
        operands: false,
        flag: false,
        setting: false,
        test: TestWords::default(),
    })
}

fn not_written(name: &str) -> Finding {
    unsupported(
        format!("a word of `{name}` that is not written out"),
        "bash would decide only when it runs whether it is an option or a name",
    )
}

fn refuse(finding: Finding) -> Step {
    Step::Refuse {
        finding,
        liftable: false,
    }
}

fn is_plain_name(word: &[u8]) -> bool {
    word.first().is_some_and(|b| is_name_start(*b)) && word.iter().all(|b| is_name_char(*b))
}

impl Builtin {
    pub(crate) fn arg(&mut self, arg: &Arg<'_>, index: usize) -> Step {
        match self.kind {
            Kind::AnyWords => Step::Next,
            Kind::Refused { .. } => Step::Next,
            Kind::Written { refused_options } | Kind::Numbers { refused_options } => {
                let Some(v) = arg.value else {
                    return refuse(not_written(self.name));
                };
                if matches!(self.kind, Kind::Numbers { .. }) && v.contains(&b'[') {
                    return refuse(unsupported(
                        format!("`{} {}`", self.name, shown(v, 30)),
                        "bash may read it as arithmetic, whose array subscripts can run commands",
                    ));
                }
                if !self.operands && v == b"--" {
                    self.operands = true;
                } else if !self.operands
                    && v.len() > 1
                    && v[0] == b'-'
                    && v[1..].iter().any(|b| refused_options.contains(b))
                {
                    return refuse(unsupported(
                        format!("`{} {}`", self.name, shown(v, 20)),
                        "it runs a command or assigns to a name the check does not follow",
                    ));
                }
                Step::Next
            }
            Kind::Test => self.test(arg),
            Kind::Printf => {
                if self.flag {
                    return Step::Next;
                }
                match arg.value {
                    None => refuse(not_written("printf")),
                    Some(b"--") if !self.operands => {
                        self.operands = true;
                        Step::Next
                    }
                    Some(v) if v.starts_with(b"-v") && !self.operands => refuse(unsupported(
                        "`printf -v`",
                        "it assigns to a name that may hold an array subscript, which bash evaluates",
                    )),
                    Some(v) if v.first() == Some(&b'-') && v.len() > 1 && !self.operands => {
                        refuse(unsupported(
                            format!("the `printf` option `{}`", shown(v, 20)),
                            "the check does not model it",
                        ))
                    }
                    Some(_) => {
                        self.flag = true;
                        Step::Next
                    }
                }
            }
            Kind::Declaration { options } => self.declaration(arg, options),
            Kind::Unset => match arg.value {
                None => refuse(not_written("unset")),
                Some(b"-v" | b"-f" | b"-n" | b"--") => Step::Next,
                Some(v) if is_plain_name(v) => Step::Next,
                Some(v) => refuse(unsupported(
                    format!("`unset {}`", shown(v, 30)),
                    "only plain variable names are modelled: a subscript is arithmetic, which can run commands",
                )),
            },
            Kind::Set => self.set(arg),
            Kind::Shopt => self.shopt(arg),
            Kind::Command => self.command(arg),
            Kind::Builtin => match arg.value {
                None => refuse(not_written("builtin")),
                Some(_) => Step::Runs(Inner {
                    builtin_only: true,
                    ..Inner::default()
                }),
            },
            Kind::Exec => self.exec(arg, index),
        }
    }

    fn test(&mut self, arg: &Arg<'_>) -> Step {
        let t = &mut self.test;
        t.count += 1;
        let Some(v) = arg.value else {
            if arg.may_split {
                return refuse(not_written(self.name));
            }
            if t.pending {
                return refuse(not_written(self.name));
            }
            t.pending = !t.after_operator;
            t.after_operator = false;
            t.closing = false;
            return Step::Next;
        };
        if matches!(v, b"-v" | b"-R") {
            return refuse(unsupported(
                format!("`{} {}`", self.name, shown(v, 4)),
                "it evaluates the array subscript of the name it is given, which can run commands",
            ));
        }
        if t.count == 1 && v == b"!" {
            t.first_is_not = true;
        }
        let binary = is_binary_test(v);
        if t.pending && !binary && !(self.name == "[" && v == b"]") {
            return refuse(not_written(self.name));
        }
        if binary {
            t.pending = false;
        }
        t.closing = v == b"]";
        t.after_operator = binary || is_unary_test(v);
        Step::Next
    }

    fn declaration(&mut self, arg: &Arg<'_>, options: &[u8]) -> Step {
        let name = self.name;
        let Some(v) = arg.value else {
            return refuse(not_written(name));
        };
        if !self.operands && v == b"--" {
            self.operands = true;
            return Step::Next;
        }
        if !self.operands && matches!(v.first(), Some(b'-' | b'+')) && v.len() > 1 {
            if v[1..].iter().all(|b| options.contains(b)) {
                return Step::Next;
            }
            return refuse(unsupported(
                format!("`{name} {}`", shown(v, 20)),
                "only plain variables are modelled: `-i`, `-n`, `-a`, `-A`, `-f` and the like make later values code or arithmetic",
            ));
        }
        let var = match memchr::memchr(b'=', v) {
            Some(eq) => v[..eq].strip_suffix(b"+").unwrap_or(&v[..eq]),
            None => v,
        };
        if !is_plain_name(var) {
            return refuse(unsupported(
                format!("`{name} {}`", shown(v, 30)),
                "only plain variable names are modelled: a subscript is arithmetic, which can run commands",
            ));
        }
        match super::variables::check_name(var) {
            Ok(()) => Step::Next,
            Err(f) => refuse(f),
        }
    }

    fn set(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refuse(not_written("set"));
        };
        if self.flag {
            self.flag = false;
            return if SET_OPTIONS.contains(&v) {
                Step::Next
            } else {
                refuse(unsupported(
                    format!("`set -o {}`", shown(v, 30)),
                    "only options that do not change how later commands are read are modelled",
                ))
            };
        }
        if self.operands {
            return Step::Next;
        }
        match v {
            b"--" | b"-" => {
                self.operands = true;
                Step::Next
            }
            b"-o" | b"+o" => {
                self.flag = true;
                Step::Next
            }
            _ if matches!(v.first(), Some(b'-' | b'+')) => {
                // `-euo pipefail`: a trailing `o` takes the next word.
                let (letters, takes_name) = match v[1..].strip_suffix(b"o") {
                    Some(rest) => (rest, true),
                    None => (&v[1..], false),
                };
                if letters.iter().all(|b| SET_LETTERS.contains(b)) {
                    self.flag = takes_name;
                    Step::Next
                } else {
                    refuse(unsupported(
                        format!("`set {}`", shown(v, 20)),
                        "only options that do not change how later commands are read are modelled",
                    ))
                }
            }
            // Positional parameters.
            _ => {
                self.operands = true;
                Step::Next
            }
        }
    }

    fn shopt(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refuse(not_written("shopt"));
        };
        match v {
            b"-s" | b"-u" => {
                self.setting = true;
                Step::Next
            }
            b"-p" | b"-q" => Step::Next,
            _ if v.first() == Some(&b'-') => refuse(unsupported(
                format!("`shopt {}`", shown(v, 20)),
                "the check does not model it",
            )),
            _ if !self.setting || SHOPT_OPTIONS.contains(&v) => Step::Next,
            _ => refuse(unsupported(
                format!("`shopt -s {}`", shown(v, 30)),
                "only options that change what globs match are modelled",
            )),
        }
    }

    fn command(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refuse(not_written("command"));
        };
        if self.flag {
            // A lookup: names only.
            return Step::Next;
        }
        if !self.operands && v.len() > 1 && v[0] == b'-' {
            if v == b"--" {
                self.operands = true;
                return Step::Next;
            }
            if v[1..].iter().all(|b| b"pvV".contains(b)) {
                self.flag = v.contains(&b'v') || v.contains(&b'V');
                return Step::Next;
            }
            return refuse(unsupported(
                format!("`command {}`", shown(v, 20)),
                "the check does not model it",
            ));
        }
        Step::Runs(Inner::default())
    }

    fn exec(&mut self, arg: &Arg<'_>, _index: usize) -> Step {
        let Some(v) = arg.value else {
            return refuse(not_written("exec"));
        };
        if self.flag {
            self.flag = false;
            return Step::Next;
        }
        if !self.operands && v.len() > 1 && v[0] == b'-' {
            match v {
                b"--" => self.operands = true,
                b"-a" => self.flag = true,
                _ if v[1..].iter().all(|b| b"cl".contains(b)) => {}
                _ => {
                    return refuse(unsupported(
                        format!("`exec {}`", shown(v, 20)),
                        "the check does not model it",
                    ));
                }
            }
            return Step::Next;
        }
        Step::Runs(Inner {
            by_program: true,
            ..Inner::default()
        })
    }

    pub(crate) fn finish(&mut self) -> Option<Finding> {
        let t = &self.test;
        if self.kind == Kind::Test && t.pending {
            let count = t.count - usize::from(self.name == "[" && t.closing);
            // `test "$x"` and `test ! "$x"` only ask whether it is empty.
            if !(count == 1 || (count == 2 && t.first_is_not)) {
                return Some(not_written(self.name));
            }
        }
        None
    }
}
