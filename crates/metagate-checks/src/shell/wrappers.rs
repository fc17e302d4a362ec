//! Programs that run the command after their options: `env`, `nice`, `nohup`, `timeout`,
//! `stdbuf`, `setsid`, `time`, `xargs`, and `find -exec`.

use super::command::{Arg, Inner, Step};
use super::programs::{not_written, refusal, unknown_option};
use super::{Finding, unsupported};

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

pub(super) const NICE: WrapperSpec = WrapperSpec {
    name: "nice",
    short_values: b"n",
    short_flags: b"",
    long_values: &["adjustment"],
    long_flags: &["help", "version"],
    operands: 0,
    numeric_options: true,
};
pub(super) const NOHUP: WrapperSpec = WrapperSpec {
    name: "nohup",
    short_values: b"",
    short_flags: b"",
    long_values: &[],
    long_flags: &["help", "version"],
    operands: 0,
    numeric_options: false,
};
pub(super) const TIMEOUT: WrapperSpec = WrapperSpec {
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
pub(super) const STDBUF: WrapperSpec = WrapperSpec {
    name: "stdbuf",
    short_values: b"ioe",
    short_flags: b"",
    long_values: &["input", "output", "error"],
    long_flags: &["help", "version"],
    operands: 0,
    numeric_options: false,
};
pub(super) const SETSID: WrapperSpec = WrapperSpec {
    name: "setsid",
    short_values: b"",
    short_flags: b"cfw",
    long_values: &[],
    long_flags: &["ctty", "fork", "wait", "help", "version"],
    operands: 0,
    numeric_options: false,
};
pub(super) const TIME: WrapperSpec = WrapperSpec {
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
    pub(super) fn new(spec: &'static WrapperSpec) -> Wrapper {
        Wrapper {
            spec,
            stage: WrapperStage::Options,
        }
    }

    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
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

    pub(super) fn finish(&mut self) -> Option<Finding> {
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
    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
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

    pub(super) fn finish(&mut self) -> Option<Finding> {
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
    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
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

    pub(super) fn finish(&mut self) -> Option<Finding> {
        None
    }
}

// ---------------------------------------------------------------------------
// find

#[derive(Default)]
pub(super) struct Find {
    pub(super) in_exec: bool,
    /// The next word is the command of an `-exec`.
    exec_next: bool,
}

impl Find {
    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
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
