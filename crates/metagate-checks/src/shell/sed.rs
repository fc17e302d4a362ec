//! sed: GNU sed runs commands with its `e` command and the `e` flag of `s`. A script
//! passes when it is read here command by command and has neither; a script this reader
//! does not understand is refused.

use super::command::{Arg, Step};
use super::{Finding, shown, unsupported};

#[derive(Default)]
pub(super) struct Sed {
    /// The next word is the value of an option (`-e` wants a script, `-f` a file).
    next: NextWord,
    /// A script was given with `-e` or `-f`: operands are all files.
    scripted: bool,
    /// What reading the first operand as the script said.
    first_operand: Option<Result<(), Finding>>,
    /// Past `--`.
    operands_only: bool,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum NextWord {
    #[default]
    Any,
    Script,
    File,
    Value,
}

fn refuse(finding: Finding) -> Step {
    Step::Refuse {
        finding,
        liftable: true,
    }
}

fn not_understood(script: &[u8], what: &str) -> Finding {
    unsupported(
        format!("the sed script `{}`", shown(script, 40)),
        format!("{what}; the check passes sed scripts it reads completely"),
    )
}

const LONG_FLAGS: &[&str] = &[
    "quiet",
    "silent",
    "debug",
    "posix",
    "sandbox",
    "follow-symlinks",
    "null-data",
    "zero-terminated",
    "separate",
    "unbuffered",
    "regexp-extended",
    "binary",
    "help",
    "version",
    "in-place",
];

impl Sed {
    pub(crate) fn arg(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            if arg.may_be_option && !self.operands_only || self.next != NextWord::Any {
                return refuse(unsupported(
                    "a word of `sed` that is not written out",
                    "bash would decide only when it runs whether it is a script",
                ));
            }
            if self.first_operand.is_none() {
                self.first_operand = Some(Err(unsupported(
                    "a sed script that is not written out",
                    "bash would decide only when it runs what it does",
                )));
            }
            return Step::Next;
        };
        match std::mem::take(&mut self.next) {
            NextWord::Script => return self.script(v),
            NextWord::File => return self.file(v),
            NextWord::Value => return Step::Next,
            NextWord::Any => {}
        }
        if self.operands_only || v.len() < 2 || v[0] != b'-' {
            if self.first_operand.is_none() {
                self.first_operand = Some(check_script(v));
            }
            return Step::Next;
        }
        if v == b"--" {
            self.operands_only = true;
            return Step::Next;
        }
        if let Some(long) = v.strip_prefix(b"--") {
            let (name, value) = match memchr::memchr(b'=', long) {
                Some(eq) => (&long[..eq], Some(&long[eq + 1..])),
                None => (long, None),
            };
            let name = std::str::from_utf8(name).unwrap_or_default();
            return match (name, value) {
                ("expression", Some(script)) => self.script(script),
                ("expression", None) => {
                    self.next = NextWord::Script;
                    Step::Next
                }
                ("file", Some(file)) => self.file(file),
                ("file", None) => {
                    self.next = NextWord::File;
                    Step::Next
                }
                ("line-length", None) => {
                    self.next = NextWord::Value;
                    Step::Next
                }
                ("line-length" | "in-place", Some(_)) => Step::Next,
                (_, None) if LONG_FLAGS.contains(&name) => Step::Next,
                _ => refuse(unsupported(
                    format!("the sed option `{}`", shown(v, 30)),
                    "the check does not model it",
                )),
            };
        }
        for (i, b) in v[1..].iter().enumerate() {
            let rest = &v[i + 2..];
            match b {
                b'n' | b'E' | b'r' | b's' | b'u' | b'z' | b'b' => {}
                b'i' => return Step::Next,
                b'l' => {
                    if rest.is_empty() {
                        self.next = NextWord::Value;
                    }
                    return Step::Next;
                }
                b'e' => {
                    if rest.is_empty() {
                        self.next = NextWord::Script;
                        return Step::Next;
                    }
                    return self.script(rest);
                }
                b'f' => {
                    if rest.is_empty() {
                        self.next = NextWord::File;
                        return Step::Next;
                    }
                    return self.file(rest);
                }
                _ => {
                    return refuse(unsupported(
                        format!("the sed option `{}`", shown(v, 30)),
                        "the check does not model it",
                    ));
                }
            }
        }
        Step::Next
    }

    fn script(&mut self, script: &[u8]) -> Step {
        self.scripted = true;
        match check_script(script) {
            Ok(()) => Step::Next,
            Err(f) => refuse(f),
        }
    }

    fn file(&mut self, _file: &[u8]) -> Step {
        self.scripted = true;
        refuse(unsupported(
            "`sed -f`",
            "the script is in a file the check cannot read",
        ))
    }

    pub(crate) fn finish(&mut self) -> Option<Finding> {
        if self.next == NextWord::Script || self.next == NextWord::File {
            return Some(unsupported(
                "`sed -e` or `-f` without its value",
                "the check does not model it",
            ));
        }
        if self.scripted {
            return None;
        }
        match self.first_operand.take() {
            Some(Ok(())) => None,
            Some(Err(f)) => Some(f),
            None => Some(unsupported(
                "`sed` without a script",
                "the check does not model it",
            )),
        }
    }
}

/// Reads a sed script; `Err` when it runs commands or is not understood.
pub(super) fn check_script(script: &[u8]) -> Result<(), Finding> {
    Reader { s: script, at: 0 }.script()
}

struct Reader<'s> {
    s: &'s [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn fail(&self, what: &str) -> Finding {
        not_understood(self.s, what)
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    fn script(&mut self) -> Result<(), Finding> {
        loop {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b';')) {
                self.at += 1;
            }
            let Some(b) = self.peek() else {
                return Ok(());
            };
            if b == b'#' {
                self.skip_line();
                continue;
            }
            self.command()?;
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|b| b != b'\n') {
            self.at += 1;
        }
    }

    /// After a command: blanks, then its end.
    fn end_of_command(&mut self) -> Result<(), Finding> {
        self.skip_blanks();
        match self.peek() {
            None | Some(b';' | b'\n' | b'}' | b'#') => Ok(()),
            Some(_) => Err(self.fail("unexpected characters after a command")),
        }
    }

    fn command(&mut self) -> Result<(), Finding> {
        if self.address()? {
            self.skip_blanks();
            if self.peek() == Some(b',') {
                self.at += 1;
                self.skip_blanks();
                match self.peek() {
                    Some(b'+' | b'~') => {
                        self.at += 1;
                        self.digits();
                    }
                    _ => {
                        if !self.address()? {
                            return Err(self.fail("a `,` without a second address"));
                        }
                    }
                }
            }
        }
        self.skip_blanks();
        while self.peek() == Some(b'!') {
            self.at += 1;
            self.skip_blanks();
        }
        let Some(c) = self.peek() else {
            return Err(self.fail("an address without a command"));
        };
        self.at += 1;
        match c {
            b'{' | b'}' => Ok(()),
            b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p' | b'P' | b'x'
            | b'z' | b'F' => self.end_of_command(),
            b'l' | b'q' | b'Q' => {
                self.skip_blanks();
                self.digits();
                self.end_of_command()
            }
            b':' | b'b' | b't' | b'T' | b'v' => {
                self.skip_blanks();
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b';' | b'\n' | b' ' | b'\t' | b'}'))
                {
                    self.at += 1;
                }
                self.end_of_command()
            }
            b'r' | b'R' | b'w' | b'W' => {
                self.skip_line();
                Ok(())
            }
            b'a' | b'i' | b'c' => {
                self.text();
                Ok(())
            }
            b's' => self.substitute(),
            b'y' => {
                let delimiter = self.delimiter()?;
                self.part(delimiter, false)?;
                self.part(delimiter, false)?;
                self.end_of_command()
            }
            b'e' => Err(unsupported("the sed command `e`", "it runs a command")),
            _ => Err(self.fail(&format!("the command `{}` is not modelled", char::from(c)))),
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    /// An address, if one starts here.
    fn address(&mut self) -> Result<bool, Finding> {
        match self.peek() {
            Some(b'0'..=b'9') => {
                self.digits();
                if self.peek() == Some(b'~') {
                    self.at += 1;
                    self.digits();
                }
                Ok(true)
            }
            Some(b'$') => {
                self.at += 1;
                Ok(true)
            }
            Some(b'/') => {
                self.at += 1;
                self.part(b'/', true)?;
                self.regex_flags();
                Ok(true)
            }
            Some(b'\\') => {
                self.at += 1;
                let delimiter = self.delimiter()?;
                self.part(delimiter, true)?;
                self.regex_flags();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some(b'I' | b'M')) {
            self.at += 1;
        }
    }

    fn delimiter(&mut self) -> Result<u8, Finding> {
        match self.peek() {
            Some(d) if d != b'\n' && d != b'\\' => {
                self.at += 1;
                Ok(d)
            }
            _ => Err(self.fail("a missing or unusual delimiter")),
        }
    }

    /// A regex or replacement up to `delimiter` (consumed). In a regex, a bracket
    /// expression holding the delimiter is refused: where it ends is not modelled.
    fn part(&mut self, delimiter: u8, regex: bool) -> Result<(), Finding> {
        loop {
            let Some(b) = self.peek() else {
                return Err(self.fail("an unterminated regex or replacement"));
            };
            self.at += 1;
            match b {
                _ if b == delimiter => return Ok(()),
                b'\\' => {
                    if self.peek().is_none() {
                        return Err(self.fail("a `\\` at the end"));
                    }
                    self.at += 1;
                }
                b'\n' if regex => return Err(self.fail("a new line inside a regex")),
                b'[' if regex => self.bracket(delimiter)?,
                _ => {}
            }
        }
    }

    /// A bracket expression after its `[`.
    fn bracket(&mut self, delimiter: u8) -> Result<(), Finding> {
        let start = self.at;
        if self.peek() == Some(b'^') {
            self.at += 1;
        }
        if self.peek() == Some(b']') {
            self.at += 1;
        }
        loop {
            let Some(b) = self.peek() else {
                self.at = start;
                return Ok(());
            };
            self.at += 1;
            match b {
                b']' => return Ok(()),
                b'[' if matches!(self.peek(), Some(b':' | b'.' | b'=')) => {
                    let kind = self.peek().unwrap_or_default();
                    self.at += 1;
                    while self.peek().is_some()
                        && !(self.peek() == Some(kind) && self.s.get(self.at + 1) == Some(&b']'))
                    {
                        self.at += 1;
                    }
                    self.at += 2;
                }
                b'\n' => return Err(self.fail("a new line inside a bracket expression")),
                _ if b == delimiter => {
                    return Err(self.fail("the delimiter inside a bracket expression"));
                }
                _ => {}
            }
        }
    }

    fn substitute(&mut self) -> Result<(), Finding> {
        let delimiter = self.delimiter()?;
        self.part(delimiter, true)?;
        self.part(delimiter, false)?;
        loop {
            match self.peek() {
                Some(b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'0'..=b'9') => self.at += 1,
                Some(b'e') => {
                    return Err(unsupported(
                        "the `e` flag of the sed command `s`",
                        "it runs the pattern space as a command",
                    ));
                }
                Some(b'w') => {
                    self.skip_line();
                    return Ok(());
                }
                _ => return self.end_of_command(),
            }
        }
    }

    /// The text of `a`, `i` or `c`: to the end of the line, and on over lines that end
    /// with a `\`.
    fn text(&mut self) {
        loop {
            let mut escaped = false;
            while let Some(b) = self.peek() {
                if b == b'\n' && !escaped {
                    break;
                }
                escaped = b == b'\\' && !escaped;
                self.at += 1;
            }
            if self.peek() == Some(b'\n') && escaped {
                self.at += 1;
                continue;
            }
            return;
        }
    }
}
