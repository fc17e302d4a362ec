//! One simple command, read word by word: assignments, the command word, its arguments,
//! and the commands it runs in turn (`env X=1 nice cmd`, `xargs cmd`, `find -exec cmd ;`).
//!
//! Each command is a [`Frame`]: the command word decides its [`Model`] (a builtin as
//! [`builtins`] reads it, a program as [`programs`] reads it), and the model reads the
//! words that follow. Words are never kept beyond the few that `allow_commands` and
//! `deny_commands` entries compare, so a command of any length takes constant memory.

use super::builtins::{self, Builtin};
use super::lex::WordShape;
use super::meaning::{self, Meanings};
use super::programs::{self, Program};
use super::{Finding, MAX_DEPTH, SHOWN_CHARS, ShellRules, shown, unsupported};

type Read<T> = Result<T, Finding>;

/// A word as the command it belongs to sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Arg<'w> {
    /// The word bash passes, when it is written out (nothing left to expand).
    pub(crate) value: Option<&'w [u8]>,
    /// Bash may pass it on starting with `-`.
    pub(crate) may_be_option: bool,
    /// Bash may pass it on as several words, or as none.
    pub(crate) may_split: bool,
}

impl Arg<'_> {
    /// More words the check never sees (those `xargs` adds).
    fn unknown() -> Arg<'static> {
        Arg {
            value: None,
            may_be_option: true,
            may_split: true,
        }
    }
}

/// What a command's model makes of one of its words.
pub(super) enum Step {
    /// Read on.
    Next,
    /// This word is the name of a command the program runs.
    Runs(Inner),
    /// The rest is the program's own business (a script's arguments): no more checks.
    Rest,
    /// This word names a file the program may run as a program (a script with another
    /// interpreter's `#!` line): denied commands apply to it; the rest is the program's.
    Launches,
    /// Refused. `liftable`: an `allow_commands` entry naming the command through this word
    /// lets it pass (`python3 -c` for `-c`).
    Refuse { finding: Finding, liftable: bool },
}

/// How a program runs the command it is given.
#[derive(Default)]
pub(super) struct Inner {
    /// Run by a program, not by the shell: a builtin's name is a program of that name.
    pub(crate) by_program: bool,
    /// Only a builtin may be named (`builtin NAME`).
    pub(crate) builtin_only: bool,
    /// The program adds words the check never sees (`xargs`).
    pub(crate) tail: bool,
    /// Text the program replaces in the words (`xargs -I R`, find's `{}`).
    pub(crate) replace: Option<Box<[u8]>>,
    /// The command ends at a `;`, or a `+` after `{}` (`find -exec`).
    pub(crate) until_terminator: bool,
}

/// How a command's words are read.
pub(super) enum Model {
    Builtin(Builtin),
    Program(Program),
    /// Nothing more to check.
    Done,
}

impl Model {
    fn arg(&mut self, arg: &Arg<'_>, index: usize) -> Step {
        match self {
            Model::Builtin(b) => b.arg(arg, index),
            Model::Program(p) => p.arg(arg, index),
            Model::Done => Step::Next,
        }
    }

    fn finish(&mut self) -> Option<Finding> {
        match self {
            Model::Builtin(b) => b.finish(),
            Model::Program(p) => p.finish(),
            Model::Done => None,
        }
    }
}

/// A text a program replaces in its words, and whether what replaces it may start with `-`.
#[derive(Clone)]
struct Substitution {
    text: Box<[u8]>,
    by_find: bool,
}

/// Where entries of `allow_commands` or `deny_commands` stand for a command.
#[derive(Default)]
struct Entries {
    /// Entries still matching the words read so far.
    open: Vec<usize>,
    /// The longest entry matched whole (allow), 0 when none.
    matched: usize,
}

/// One command being read.
struct Frame {
    by_program: bool,
    builtin_only: bool,
    tail: bool,
    substitutions: Vec<Substitution>,
    until_terminator: bool,
    command: Option<Command>,
}

struct Command {
    model: Model,
    /// Words after the command word read so far.
    index: usize,
    /// An allow entry names the command through the argument that gives it code.
    trusted: bool,
    /// A refusal an allow entry may still lift, and the word it was made at.
    pending: Option<(Finding, usize)>,
    /// Subject to `allow_commands` (a program, not a builtin the check models).
    needs_entry: bool,
    /// A program that removes or moves the files it names (`rm`, `mv`, …).
    removes: bool,
    /// A program that writes the files it names, or `cd`: no word may lead into `.git`.
    writes: bool,
    allowed: Entries,
    denied: Entries,
    /// Deny entries matched by what the command means (`kill -9 -1`).
    meanings: Meanings,
    /// The refusal of a program that runs code, waiting to see whether the command only
    /// asks for its version or help (`vim --version`), which runs none.
    deferred: Option<Finding>,
}

/// Programs that remove or move the files their arguments name: a folder holding one of
/// metagate's own files is refused as an argument of theirs.
const REMOVERS: &[&[u8]] = &[
    b"rm",
    b"rmdir",
    b"mv",
    b"shred",
    b"unlink",
    b"srm",
    b"trash",
    b"trash-put",
    b"wipe",
];

/// Reads one simple command.
pub(super) struct CommandReader<'r> {
    rules: &'r ShellRules<'r>,
    src: &'r [u8],
    /// Where the simple command starts in the source, for messages.
    start: usize,
    frames: Vec<Frame>,
    /// Frames waiting for a `find -exec` terminator.
    open_execs: usize,
    /// The last word was `{}` (a `+` after it ends `find -exec`).
    after_braces: bool,
    depth: usize,
}

/// Builtins that run commands: read as the builtin even when a program runs them by name.
fn runs_as_builtin(name: &[u8]) -> bool {
    matches!(
        name,
        b"command" | b"builtin" | b"exec" | b"eval" | b"source" | b"fc" | b"trap" | b"enable"
    )
}

fn basename(word: &[u8]) -> &[u8] {
    match memchr::memrchr(b'/', word) {
        Some(at) => &word[at + 1..],
        None => word,
    }
}

/// Words bash reads as reserved where a command starts, refused after assignments and
/// redirections (bash refuses them there too).
fn is_reserved(word: &[u8]) -> bool {
    matches!(
        word,
        b"if"
            | b"then"
            | b"else"
            | b"elif"
            | b"fi"
            | b"do"
            | b"done"
            | b"case"
            | b"esac"
            | b"while"
            | b"until"
            | b"for"
            | b"select"
            | b"function"
            | b"time"
            | b"{"
            | b"}"
            | b"[["
            | b"coproc"
    )
}

impl<'r> CommandReader<'r> {
    pub(crate) fn new(
        rules: &'r ShellRules<'r>,
        src: &'r [u8],
        start: usize,
        depth: usize,
    ) -> Self {
        CommandReader {
            rules,
            src,
            start,
            frames: vec![Frame {
                by_program: false,
                builtin_only: false,
                tail: false,
                substitutions: Vec::new(),
                until_terminator: false,
                command: None,
            }],
            open_execs: 0,
            after_braces: false,
            depth,
        }
    }

    /// The simple command as written, for messages.
    fn shown_command(&self) -> String {
        let rest = &self.src[self.start.min(self.src.len())..];
        let end = rest
            .iter()
            .position(|b| matches!(b, b'\n' | b';' | b'|' | b'&'))
            .unwrap_or(rest.len());
        shown(&rest[..end.min(SHOWN_CHARS * 4)], SHOWN_CHARS)
    }

    fn denied(&self, entry: usize) -> Finding {
        Finding::Word {
            word: self.rules.denied.patterns()[entry].as_str().to_string(),
            command: self.shown_command(),
        }
    }

    /// The next word of the command.
    pub(crate) fn word(&mut self, shape: &WordShape, letters: &[u8]) -> Read<()> {
        if self.open_execs > 0 {
            if !shape.is_static() {
                return Err(unsupported(
                    "a word that is not written out inside `find -exec`",
                    "it could end the command early and start another",
                ));
            }
            if let Some(at) = self.terminating_frame(letters) {
                return self.close_exec(at);
            }
        }
        self.after_braces = shape.is_static() && letters == b"{}";
        let top = self.frames.len() - 1;
        let arg = self.arg_for(top, shape, letters);
        if let Some(command) = &self.frames[top].command {
            if command.removes {
                self.rules.protected.removal(letters, shape.tilde)?;
            }
            if command.writes {
                super::dotgit::check_word(letters, shape.is_static())?;
            }
            return self.argument(top, &arg);
        }
        if top == 0 {
            if shape.subscript_assignment {
                return Err(unsupported(
                    "an array element assignment `a[…]=`",
                    "bash evaluates the subscript as arithmetic, which can run commands",
                ));
            }
            if let Some(eq) = shape.assignment {
                let name = letters[..eq].strip_suffix(b"+").unwrap_or(&letters[..eq]);
                return super::variables::check_name(name);
            }
            if !shape.quoted && shape.is_static() && is_reserved(letters) {
                return Err(super::unreadable(format!(
                    "`{}` after an assignment or a redirection",
                    shown(letters, 20)
                )));
            }
        }
        self.start_command(top, &arg)
    }

    /// A word after the command word.
    fn argument(&mut self, top: usize, arg: &Arg<'_>) -> Read<()> {
        let rules = self.rules;
        let Some(command) = self.frames[top].command.as_mut() else {
            return Ok(());
        };
        command.index += 1;
        let index = command.index;
        if let Some(e) = command.meanings.arg(arg) {
            return Err(self.denied(e));
        }
        if let Some(finding) = command.deferred.take() {
            let asks = index == 1 && matches!(arg.value, Some(b"--version" | b"--help"));
            if !asks {
                return Err(finding);
            }
            command.deferred = Some(finding);
            command.model = Model::Done;
        }
        // Deny entries with arguments: `kill -9 1`.
        let mut refused = None;
        command.denied.open.retain(|&e| {
            let words = rules.denied.patterns()[e].words();
            if refused.is_some() {
                return false;
            }
            match arg.value {
                _ if index >= words.len() => false,
                None => {
                    refused = Some(e);
                    false
                }
                Some(v) if *v == *words[index] => {
                    if index + 1 == words.len() {
                        refused = Some(e);
                    }
                    index + 1 < words.len()
                }
                Some(_) => false,
            }
        });
        if let Some(e) = refused {
            return Err(self.denied(e));
        }
        let Some(command) = self.frames[top].command.as_mut() else {
            return Ok(());
        };
        if let Some(allowed) = rules.allowed {
            let entries = &mut command.allowed;
            entries.open.retain(|&e| {
                let words = allowed[e].words();
                match arg.value {
                    Some(v) if index < words.len() && *v == *words[index] => {
                        if index + 1 == words.len() {
                            entries.matched = entries.matched.max(words.len());
                            false
                        } else {
                            true
                        }
                    }
                    _ => false,
                }
            });
        }
        self.settle(top)?;
        let Some(command) = self.frames[top].command.as_mut() else {
            return Ok(());
        };
        if command.trusted || command.pending.is_some() {
            return Ok(());
        }
        match command.model.arg(arg, index) {
            Step::Next => Ok(()),
            Step::Rest => {
                command.model = Model::Done;
                Ok(())
            }
            Step::Launches => {
                command.model = Model::Done;
                self.launched(arg)
            }
            Step::Refuse { finding, liftable } => self.refuse(top, finding, index, liftable),
            Step::Runs(inner) => self.run_inner(top, inner, arg),
        }
    }

    /// A word a program runs as a command: a new frame, with the word as its command word.
    fn run_inner(&mut self, top: usize, inner: Inner, outer_arg: &Arg<'_>) -> Read<()> {
        if self.depth + self.frames.len() > MAX_DEPTH {
            return Err(unsupported(
                format!("commands nested deeper than {MAX_DEPTH} levels"),
                "the check does not follow them that far",
            ));
        }
        let parent = &self.frames[top];
        let mut substitutions = parent.substitutions.clone();
        if let Some(text) = inner.replace {
            substitutions.push(Substitution {
                text,
                by_find: inner.until_terminator,
            });
        }
        if inner.until_terminator {
            self.open_execs += 1;
        }
        self.frames.push(Frame {
            by_program: inner.by_program,
            builtin_only: inner.builtin_only,
            tail: parent.tail || inner.tail,
            substitutions,
            until_terminator: inner.until_terminator,
            command: None,
        });
        let new = self.frames.len() - 1;
        // The new frame's substitutions apply to its own command word.
        let arg = match outer_arg.value {
            Some(v)
                if self.frames[new]
                    .substitutions
                    .iter()
                    .any(|s| contains(v, &s.text)) =>
            {
                Arg::unknown()
            }
            _ => *outer_arg,
        };
        self.start_command(new, &arg)
    }

    /// The command word of frame `at`.
    fn start_command(&mut self, at: usize, arg: &Arg<'_>) -> Read<()> {
        let rules = self.rules;
        let Some(name) = arg.value else {
            return Err(unsupported(
                "a command name that is not written out (`$X`, a glob, braces, `~`)",
                "bash would decide what runs only when it runs; write the command name literally",
            ));
        };
        let base = basename(name);
        let frame = &self.frames[at];
        let by_shell = !frame.by_program;
        let builtin_only = frame.builtin_only;
        // A program given a name runs a file; POSIX wants bash's regular builtins to be
        // files as well (Fedora's `/usr/bin/command` is `builtin command "$@"`), so those
        // that run commands are read as the builtin wherever they run.
        let mut builtin = if !name.contains(&b'/') && (by_shell || runs_as_builtin(name)) {
            builtins::lookup(name)
        } else {
            None
        };
        let resolved = match builtin {
            None => rules
                .world
                .program(name)
                .filter(|r| !programs::is_multi_call(&r.name)),
            Some(_) => None,
        };
        let mut builtin_name = name;
        if let Some(forward) = resolved.as_ref().and_then(|r| r.forwards.as_ref())
            && (forward.builtin || runs_as_builtin(basename(&forward.name)))
        {
            let forwarded = if forward.builtin {
                &forward.name[..]
            } else {
                basename(&forward.name)
            };
            builtin = builtins::lookup(forwarded);
            builtin_name = forwarded;
            if builtin.is_none() {
                return Err(super::unreadable(format!(
                    "`{}` runs `builtin {}`, which is not a shell builtin",
                    shown(name, 40),
                    shown(&forward.name, 40)
                )));
            }
        }
        // What runs, by every name it has: as written, its file, what that file hands on to.
        let mut names: Vec<&[u8]> = vec![base];
        if let Some(r) = &resolved {
            names.push(basename(&r.name));
            if let Some(f) = &r.forwards {
                names.push(basename(&f.name));
            }
        }
        // Deny entries: by the command's name wherever it lives (`/usr/bin/sudo`).
        let mut denied = Entries::default();
        let mut by_meaning = Vec::new();
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                continue;
            }
            for &e in rules.denied.naming(n).iter() {
                let pattern = &rules.denied.patterns()[e];
                if pattern.words().len() == 1 {
                    return Err(self.denied(e));
                }
                if meaning::reads(pattern) {
                    by_meaning.push(e);
                } else if !denied.open.contains(&e) {
                    denied.open.push(e);
                }
            }
        }
        by_meaning.sort_unstable();
        by_meaning.dedup();
        let meanings = Meanings::new(
            by_meaning.iter().map(|&e| (e, &rules.denied.patterns()[e])),
            builtin.is_some(),
        );
        if builtin_only && builtin.is_none() {
            return Err(super::unreadable(format!(
                "`builtin {}`: not a shell builtin",
                shown(name, 40)
            )));
        }
        if builtin.is_none() && rules.world.is_own_binary(name) {
            return Err(Finding::Word {
                word: "metagate".to_string(),
                command: self.shown_command(),
            });
        }
        let (model, refusal) = match builtin {
            Some(kind) => match builtins::model(kind, builtin_name) {
                Ok(model) => (Model::Builtin(model), None),
                Err(finding) => return Err(finding),
            },
            None => {
                let (mut program, mut refusal) = programs::model(base, name);
                // The file's own names: a shell, an editor or an interpreter under another
                // name is read as what it is.
                for n in names.iter().skip(1) {
                    let (other, other_refusal) = programs::model(n, n);
                    if refusal.is_none() && other_refusal.is_some() {
                        refusal = other_refusal;
                    } else if programs::is_ordinary(&program) {
                        program = other;
                    }
                }
                (Model::Program(program), refusal)
            }
        };
        let needs_entry = matches!(model, Model::Program(_));
        let mut allowed = Entries::default();
        if let (Some(entries), true) = (rules.allowed, needs_entry) {
            for (e, entry) in entries.iter().enumerate() {
                if *entry.words()[0] == *name {
                    if entry.words().len() == 1 {
                        allowed.matched = 1;
                    } else {
                        allowed.open.push(e);
                    }
                }
            }
            if allowed.open.is_empty() && allowed.matched == 0 {
                return Err(Finding::NotAllowed {
                    command: shown(name, 40),
                });
            }
        }
        let removes = builtin.is_none() && REMOVERS.contains(&base);
        let writes = match builtin {
            Some(_) => super::dotgit::watches(builtin_name),
            None => names.iter().any(|n| super::dotgit::watches(n)),
        };
        self.frames[at].command = Some(Command {
            model,
            index: 0,
            trusted: false,
            pending: None,
            needs_entry,
            removes,
            writes,
            allowed,
            denied,
            meanings,
            deferred: None,
        });
        if let Some((finding, liftable)) = refusal {
            if rules.allowed.is_none()
                && let Some(command) = self.frames[at].command.as_mut()
            {
                command.deferred = Some(finding);
                return Ok(());
            }
            return self.refuse(at, finding, 0, liftable);
        }
        Ok(())
    }

    /// A file a program runs: refused when it is a denied command or the running binary.
    fn launched(&self, arg: &Arg<'_>) -> Read<()> {
        let Some(path) = arg.value else {
            return Ok(());
        };
        let base = basename(path);
        if let Some(&e) = self.rules.denied.naming(base).first() {
            return Err(self.denied(e));
        }
        // A script named without a `/` is in the working folder, not on `PATH`.
        let relative;
        let path = if path.contains(&b'/') {
            path
        } else {
            relative = [&b"./"[..], path].concat();
            &relative
        };
        if self.rules.world.is_own_binary(path) {
            return Err(Finding::Word {
                word: "metagate".to_string(),
                command: self.shown_command(),
            });
        }
        Ok(())
    }

    /// A refusal at word `index` of frame `at`: final, or pending while an allow entry
    /// may still name the command through that word.
    fn refuse(&mut self, at: usize, finding: Finding, index: usize, liftable: bool) -> Read<()> {
        let allow_list = self.rules.allowed.is_some();
        let Some(command) = self.frames[at].command.as_mut() else {
            return Err(finding);
        };
        if !(liftable && allow_list && command.needs_entry) {
            return Err(finding);
        }
        command.pending = Some((finding, index));
        self.settle(at)
    }

    /// Decides what the allow entries can decide: a command no entry names, a pending
    /// refusal an entry lifts or not.
    fn settle(&mut self, at: usize) -> Read<()> {
        if self.rules.allowed.is_none() {
            return Ok(());
        }
        let Some(command) = self.frames[at].command.as_mut() else {
            return Ok(());
        };
        if !command.allowed.open.is_empty() || !command.needs_entry {
            return Ok(());
        }
        if command.allowed.matched == 0 {
            return Err(Finding::NotAllowed {
                command: self.shown_command(),
            });
        }
        if let Some((finding, index)) = command.pending.take() {
            if command.allowed.matched > index {
                command.trusted = true;
            } else {
                return Err(finding);
            }
        }
        Ok(())
    }

    /// The outermost `find` whose `-exec` this word ends, if any.
    fn terminating_frame(&self, letters: &[u8]) -> Option<usize> {
        let ends = letters == b";" || (letters == b"+" && self.after_braces);
        if !ends {
            return None;
        }
        self.frames
            .iter()
            .position(|f| f.until_terminator)
            .map(|inner| inner.saturating_sub(1))
    }

    /// `find -exec … ;`: the commands inside end, `find` reads on.
    fn close_exec(&mut self, find: usize) -> Read<()> {
        self.after_braces = false;
        while self.frames.len() > find + 1 {
            self.finish_top()?;
        }
        if let Some(Command {
            model: Model::Program(p),
            ..
        }) = self.frames[find].command.as_mut()
        {
            p.exec_ended();
        }
        Ok(())
    }

    /// Ends the innermost frame.
    fn finish_top(&mut self) -> Read<()> {
        let Some(frame) = self.frames.last_mut() else {
            return Ok(());
        };
        if frame.until_terminator {
            self.open_execs = self.open_execs.saturating_sub(1);
        }
        // Finished where it lies, so that `settle` sees it: a frame holds a program's whole
        // model, too large to move out and back for every command.
        let Some(command) = frame.command.as_mut() else {
            self.frames.pop();
            return Ok(());
        };
        command.denied.open.clear();
        command.allowed.open.clear();
        if command.index == 0
            && let Some(finding) = command.deferred.take()
        {
            self.frames.pop();
            return Err(finding);
        }
        let finding = if command.trusted || command.pending.is_some() {
            None
        } else {
            command.model.finish()
        };
        let top = self.frames.len() - 1;
        let settled = self.settle(top);
        self.frames.pop();
        settled?;
        match finding {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    /// The end of the simple command.
    pub(crate) fn finish(mut self) -> Read<()> {
        // `xargs` adds words to the innermost command.
        if self.frames.iter().any(|f| f.tail) {
            let top = self.frames.len() - 1;
            if self.frames[top].command.is_some() {
                self.argument(top, &Arg::unknown())?;
            }
        }
        while !self.frames.is_empty() {
            if self.frames.len() > 1 && self.frames[self.frames.len() - 1].until_terminator {
                return Err(super::unreadable("a `find -exec` without its `;` or `+`"));
            }
            self.finish_top()?;
        }
        Ok(())
    }

    /// `letters` as frame `at` sees the word.
    fn arg_for<'w>(&self, at: usize, shape: &WordShape, letters: &'w [u8]) -> Arg<'w> {
        let static_word = shape.is_static();
        if static_word
            && let Some(s) = self.frames[at]
                .substitutions
                .iter()
                .find(|s| contains(letters, &s.text))
        {
            let leading = letters.starts_with(&s.text);
            return Arg {
                value: None,
                may_be_option: letters.first() == Some(&b'-') || (leading && !s.by_find),
                may_split: false,
            };
        }
        Arg {
            value: static_word.then_some(letters),
            may_be_option: shape.may_be_option(letters),
            may_split: shape.may_split(),
        }
    }
}

pub(super) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(hay, needle).is_some()
}
