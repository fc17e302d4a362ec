//! The shell check: a command passes only when every part of it lies in the subset of bash
//! this module models completely. Everything else is refused, and the refusal names what it
//! met (`command substitution `$(…)``, `` `eval` ``, `` `python3 -c` ``, …).
//!
//! A denylist over bash keeps leaking, because bash evaluates text in more places than any
//! list names (array subscripts inside `test -v`, `printf -v`, `read`; `fc`; start-up files
//! named by `BASH_ENV`). So the reading here is the other way round:
//!
//! * [`lex`] reads bash's tokens with bash's rules for quotes, escapes, line continuations,
//!   comments and here-documents, and refuses every expansion but plain parameters
//!   (`$X`, `${X}`, `${X:-word}` with a literal word);
//! * [`parse`] accepts lists, pipelines, subshells, groups, `if`, `while`, `until` and
//!   `for … in`, and refuses every other compound command;
//! * [`command`] reads each simple command word by word: the command name must be written
//!   out, assignments may not touch variables that change what runs ([`variables`]),
//!   builtins are passed only in the forms [`builtins`] models, and programs that run other
//!   commands or code are followed or refused by [`programs`] ([`wrappers`],
//!   [`interpreters`], [`guarded`]), [`git`] and [`sed`];
//! * [`protected`] keeps commands away from metagate's own files.
//!
//! The check is pure: the file system comes in through [`World`] (where a redirection may
//! write, whether a command is the running metagate binary). It never panics, reads its
//! input once (linear time), and keeps no more than a few bytes per byte of input.
//!
//! Everything here is tested against real bash by the differential oracle in
//! `tests/shell_oracle.rs`.

mod builtins;
mod command;
mod containers;
mod dotgit;
mod git;
mod guarded;
mod interpreters;
mod lex;
mod meaning;
mod parse;
mod programs;
mod protected;
mod resolved;
mod sed;
mod variables;
mod wrappers;

#[cfg(test)]
mod hardening_tests;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashMap;

pub use protected::Protected;
pub use resolved::{Forward, Resolved, SCRIPT_HEAD_BYTES, read_forwarder};

/// The longest command the check reads, in bytes: longer ones are refused as
/// `invalid_parameters` before any reading. Agents' commands are far shorter; a file this
/// large belongs in a file, not in a command line.
pub const MAX_COMMAND_BYTES: usize = 1 << 20;

/// How deeply commands may nest (subshells, groups, `if`, loops, commands run by `env`,
/// `xargs`, `find -exec`, …) before the check refuses rather than recursing further.
const MAX_DEPTH: usize = 100;

/// Characters of a command shown in [`Finding::Word`].
const SHOWN_CHARS: usize = 80;

/// A command word, optionally with its first arguments, as `[shell] allow_commands` and
/// `deny_commands` write them: `ls`, `git status`, `python3 -c`, `kill -9 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPattern {
    words: Vec<Box<[u8]>>,
    written: String,
}

impl CommandPattern {
    /// Reads an entry: plain words separated by blanks. Quotes, backslashes and the other
    /// characters bash gives a meaning to are refused, so that what the operator wrote is
    /// exactly what a command has to say.
    pub fn parse(entry: &str) -> Result<CommandPattern, PatternError> {
        let words: Vec<Box<[u8]>> = entry
            .split_ascii_whitespace()
            .map(|w| w.as_bytes().into())
            .collect();
        if words.is_empty() {
            return Err(PatternError::Empty);
        }
        if let Some(bad) = entry
            .bytes()
            .find(|b| b"'\"\\$`;&|<>(){}*?[]#~!".contains(b) || b.is_ascii_control() && *b != b'\t')
        {
            return Err(PatternError::Special {
                entry: entry.to_string(),
                character: char::from(bad),
            });
        }
        Ok(CommandPattern {
            words,
            written: words_joined(entry),
        })
    }

    /// The entry as written, blanks collapsed.
    pub fn as_str(&self) -> &str {
        &self.written
    }

    pub(crate) fn words(&self) -> &[Box<[u8]>] {
        &self.words
    }
}

fn words_joined(entry: &str) -> String {
    entry.split_ascii_whitespace().collect::<Vec<_>>().join(" ")
}

/// Deny entries (`[shell] deny_commands`), and which of them each command word names. Every
/// command word is held against the whole list, so the entries are found by their command
/// word in a hash table rather than one by one.
#[derive(Debug, Clone, Default)]
pub struct CommandList {
    patterns: Vec<CommandPattern>,
    by_word: FxHashMap<Box<[u8]>, Vec<usize>>,
}

impl CommandList {
    /// The list of `patterns`, indexed by command word.
    pub fn new(patterns: Vec<CommandPattern>) -> CommandList {
        let mut by_word: FxHashMap<Box<[u8]>, Vec<usize>> = FxHashMap::default();
        for (e, pattern) in patterns.iter().enumerate() {
            by_word.entry(pattern.words[0].clone()).or_default().push(e);
        }
        CommandList { patterns, by_word }
    }

    /// The entries, in the order written.
    pub fn patterns(&self) -> &[CommandPattern] {
        &self.patterns
    }

    /// The entries whose command word names the program `base`, in the order written: the
    /// word itself, or a variant of it (`mkfs` names `mkfs.ext4`).
    pub(crate) fn naming(&self, base: &[u8]) -> Cow<'_, [usize]> {
        let mut found: Cow<'_, [usize]> = Cow::Borrowed(&[]);
        // Command names are short: a plain scan finds the dots sooner than a vector search.
        let dots = (0..base.len()).filter(|&at| base[at] == b'.');
        for end in dots.chain(std::iter::once(base.len())) {
            let Some(entries) = self.by_word.get(&base[..end]) else {
                continue;
            };
            found = if found.is_empty() {
                Cow::Borrowed(entries)
            } else {
                let mut all = found.into_owned();
                all.extend_from_slice(entries);
                all.sort_unstable();
                Cow::Owned(all)
            };
        }
        found
    }
}

impl From<Vec<CommandPattern>> for CommandList {
    fn from(patterns: Vec<CommandPattern>) -> CommandList {
        CommandList::new(patterns)
    }
}

/// Why a `[shell]` command entry cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    /// Blank: a pattern of no words would match every command.
    Empty,
    /// Holds a character bash gives a meaning to (a quote, `$`, `;`, a glob, a control
    /// character), so what bash runs could differ from what the entry says.
    Special {
        /// The entry as written.
        entry: String,
        /// The first such character.
        character: char,
    },
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Empty => f.write_str("an entry is empty: it would match every command"),
            PatternError::Special { entry, character } => write!(
                f,
                "{entry:?} holds {character:?}: write a command word and its first arguments as plain words"
            ),
        }
    }
}

impl std::error::Error for PatternError {}

/// Reads entries, naming the first that cannot be read.
pub fn patterns<S: AsRef<str>>(entries: &[S]) -> Result<Vec<CommandPattern>, PatternError> {
    entries
        .iter()
        .map(|e| CommandPattern::parse(e.as_ref()))
        .collect()
}

/// What the check needs to know about the world. The check itself reads no file: the caller
/// answers these questions (and may remember the answers).
pub trait World {
    /// Whether a redirection may open `path` (as written, after quote removal);
    /// `Err` names the rule that refuses it.
    fn redirect(&self, path: &str) -> Result<(), Refusal>;
    /// Whether running `command` (a command word as written, after quote removal: a path,
    /// or a name looked up on `PATH`) would run the metagate binary itself, under any name.
    fn is_own_binary(&self, command: &[u8]) -> bool;
    /// The file running `command` (as [`World::is_own_binary`] takes it) would run, when
    /// the caller can tell: a command is checked as what it runs, not only as what it is
    /// called (`editor` is `vim.basic`). None: nothing is known beyond the name.
    fn program(&self, _command: &[u8]) -> Option<Resolved> {
        None
    }
}

/// Why the world refuses a redirection: the rule that refuses it, worded for the model's
/// rejection. A reason the check passes on in its finding, not a fault of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A world where every redirection may open its path and no command is metagate.
#[cfg(test)]
struct OpenWorld;

#[cfg(test)]
impl World for OpenWorld {
    fn redirect(&self, _path: &str) -> Result<(), Refusal> {
        Ok(())
    }
    fn is_own_binary(&self, _command: &[u8]) -> bool {
        false
    }
}

/// What the policy says about shell commands.
pub struct ShellRules<'a> {
    /// Constructs denied wherever they take effect (`[shell] deny`), e.g. `<<<`. Those the
    /// check refuses anyway (`$(`, `` ` ``, `<(`, `>(`) are refused under their own names.
    pub constructs: &'a [String],
    /// Commands denied (`[shell] deny_commands`, and metagate itself).
    pub denied: &'a CommandList,
    /// When given (`[shell] allow_commands`), the only programs that may run.
    pub allowed: Option<&'a [CommandPattern]>,
    /// Files that must never be touched, prepared once with [`Protected::new`].
    pub protected: &'a Protected,
    /// What the check asks of the file system and the running binary.
    pub world: &'a dyn World,
}

/// Why a command may not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A construct the operator denies (`[shell] deny`); `construct` as written there.
    Construct {
        /// The construct as written in the policy.
        construct: String,
    },
    /// A denied command: `word` is the entry of `deny_commands` (or `metagate`), `command`
    /// the simple command it was found in (trimmed, at most 80 characters).
    Word {
        /// The `deny_commands` entry that matched.
        word: String,
        /// The simple command it was found in.
        command: String,
    },
    /// A program that `allow_commands` does not list.
    NotAllowed {
        /// The program's name as written.
        command: String,
    },
    /// The command refers to a protected file (or a variable naming one).
    Protected {
        /// The protected path, as the command names it.
        path: String,
    },
    /// A part of bash outside the modelled subset, or code the check cannot read:
    /// `construct` names it, `reason` says why it is refused.
    Unsupported {
        /// What bash would have to do.
        construct: String,
        /// Why the check refuses it.
        reason: String,
    },
    /// The command is not valid bash as far as the check can tell (an unterminated quote,
    /// a `fi` without an `if`, …): bash would not run it as the check reads it.
    Unreadable {
        /// What bash would trip over.
        reason: String,
    },
    /// The command is longer than [`MAX_COMMAND_BYTES`].
    TooLarge {
        /// Its length in bytes.
        bytes: usize,
    },
}

impl Finding {
    /// A short text naming the rule that matched, for messages.
    pub fn rule(&self) -> String {
        match self {
            Finding::Construct { construct } => format!("denied construct `{construct}`"),
            Finding::Word { word, .. } => format!("denied command `{word}`"),
            Finding::NotAllowed { command } => {
                format!("`{command}` is not in [shell] allow_commands")
            }
            Finding::Protected { path } if path.starts_with('$') => {
                format!("refers to {path}, which names one of metagate's own files")
            }
            Finding::Protected { path } => format!("touches metagate's own file {path}"),
            Finding::Unsupported { construct, reason } => {
                format!("{construct} is not allowed: {reason}")
            }
            Finding::Unreadable { reason } => reason.clone(),
            Finding::TooLarge { bytes } => format!(
                "the command is {bytes} bytes long, over the {MAX_COMMAND_BYTES} bytes the shell check reads"
            ),
        }
    }

    /// Whether the command is refused for its size (`invalid_parameters`: the model can
    /// send a shorter one) rather than for what it does (`policy_blocked`).
    pub fn is_too_large(&self) -> bool {
        matches!(self, Finding::TooLarge { .. })
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rule())
    }
}

/// A refusal of something outside the subset.
pub(crate) fn unsupported(construct: impl Into<String>, reason: impl Into<String>) -> Finding {
    Finding::Unsupported {
        construct: construct.into(),
        reason: reason.into(),
    }
}

pub(crate) fn unreadable(reason: impl Into<String>) -> Finding {
    Finding::Unreadable {
        reason: reason.into(),
    }
}

/// Shown in messages: the bytes as text, control characters escaped, at most `max` chars.
pub(crate) fn shown(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for c in text.trim().chars().take(max) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The language `code` looks like when it is no shell command: `Python` for a call of one of
/// Python's builtins or an `import`, `def` or f-string; `JavaScript` for `console.`, `=>`,
/// `require(` or a `const`/`let` declaration. Only a hint for the model's feedback: nothing
/// passes or fails on it.
pub fn other_language(code: &str) -> Option<&'static str> {
    const PYTHON: [&str; 9] = [
        "print(", "import ", "def ", "len(", "range(", "f\"", "from ", "lambda ", "__name__",
    ];
    const JAVASCRIPT: [&str; 7] = [
        "console.",
        "=>",
        "require(",
        "const ",
        "let ",
        "function(",
        "document.",
    ];
    let code = code.trim_start();
    let starts_line = |pat: &str| {
        code.starts_with(pat)
            || code.contains(&format!("\n{pat}"))
            || code.contains(&format!("({pat}"))
    };
    if JAVASCRIPT.iter().any(|p| code.contains(p)) {
        return Some("JavaScript");
    }
    if PYTHON.iter().any(|p| starts_line(p)) {
        return Some("Python");
    }
    None
}

/// The first finding in `command`, or None when the command may run.
pub fn check(command: &str, rules: &ShellRules<'_>) -> Option<Finding> {
    if command.len() > MAX_COMMAND_BYTES {
        return Some(Finding::TooLarge {
            bytes: command.len(),
        });
    }
    parse::check(command.as_bytes(), rules).err()
}
