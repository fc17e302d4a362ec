//! Interpreters (a script file passes, code given any other way does not) and awk.

use super::command::{Arg, Step};
use super::programs::{
    PYTHON_CODE_MODULES, not_written, reads_descriptor, refusal, unknown_option,
};
use super::{Finding, shown, unsupported};

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

pub(super) const PYTHON: InterpreterSpec = InterpreterSpec {
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
pub(super) const PERL: InterpreterSpec = InterpreterSpec {
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
pub(super) const RUBY: InterpreterSpec = InterpreterSpec {
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
pub(super) const NODE: InterpreterSpec = InterpreterSpec {
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

impl Interpreter {
    pub(super) fn new(spec: &'static InterpreterSpec) -> Interpreter {
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

    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
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

    pub(super) fn finish(&mut self) -> Option<Finding> {
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
    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
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

    pub(super) fn finish(&mut self) -> Option<Finding> {
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
