//! Programs whose options or subcommands name commands: those are refused.

use super::command::{Arg, Step};
use super::programs::{not_written, reads_descriptor, refusal};
use super::{shown, unsupported};

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

pub(super) const MAKE: GuardSpec = GuardSpec {
    name: "make",
    long: &["eval"],
    short: b"E",
    assignments: true,
    plus_commands: false,
};
pub(super) const TAR: GuardSpec = GuardSpec {
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
pub(super) const SORT: GuardSpec = GuardSpec {
    name: "sort",
    long: &["compress-program"],
    short: b"",
    assignments: false,
    plus_commands: false,
};
pub(super) const APT: GuardSpec = GuardSpec {
    name: "apt-get",
    long: &["option", "config-file"],
    short: b"oc",
    assignments: false,
    plus_commands: false,
};
pub(super) const PAGERS: GuardSpec = GuardSpec {
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
    pub(super) fn new(spec: &'static GuardSpec) -> Guarded {
        Guarded {
            spec,
            operands: false,
        }
    }

    pub(super) fn arg(&mut self, arg: &Arg<'_>, index: usize) -> Step {
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
        if self.spec.assignments
            && !bundle
            && let Some(eq) = memchr::memchr(b'=', v)
            && let Err(f) = super::variables::check_name(&v[..eq])
        {
            return refusal(f, true);
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
    pub(super) name: &'static str,
    pub(super) subcommands: &'static [&'static str],
}

impl Subcommands {
    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
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
