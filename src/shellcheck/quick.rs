//! A first look that lets the commands agents send most go without the full reader.
//!
//! Most commands are plain words, perhaps quoted, joined by `|`, `||`, `&&` or `;`:
//! `grep -rn 'fn main' src | head -n 5`. For text of that shape the full reader's answer
//! depends only on the command word of each simple command, the letters of each word and
//! the raw text, so [`plainly_allowed`] can see that it would find nothing without
//! building words, frames and command lists. It only ever says "allowed"; anything it is
//! not sure of — an expansion, a redirection, a glob, a newline, an assignment, a command
//! that runs other commands, a word or construct the policy denies — is left to the full
//! reader, which reports findings.
//!
//! The one finding reported here is the commonest refusal, a plain `$(…)` under a policy
//! listing `$(` first: [`plainly_refused`] gives it only where the full reader would give
//! the same finding in the same words (the tests assert both screens against the reader).
//!
//! Why each shortcut matches the full reader:
//! * Constructs are searched in the raw text, unless the reader could not find them in text
//!   of this shape ([`could_match`]). The reader searches either the raw text or texts whose
//!   pieces are runs of the raw text (quotes break pieces and no backslash is admitted
//!   outside single quotes), so a construct absent from the raw text is absent from those.
//! * Without globs, `~`, `$` and backslashes a word is only its letters; the reader checks
//!   those letters (lower-cased, normalised) against the protected files, and the whole
//!   text with quotes removed before that. A word's letters are a run of that text, so
//!   only words that normalisation changes (`a//b`, `x/../y`, `src/`) need their own look.
//! * The reader finds command words after reserved words, assignments and wrappers, and
//!   reads further commands out of shells, `eval`, `find -exec`, `trap`, `alias` and
//!   `source`. Those are all handed to it; what is left has exactly one command word per
//!   simple command, the first word, compared here as the reader compares it.

use std::sync::OnceLock;

use rustc_hash::FxHashSet;

use super::{
    ASSIGNERS, Finding, K, NAMES_VARS, RESERVED_SKIP, RUNS_BY_OPTION, SHELLS, ShellRules, State,
    WRAPPERS, Word, contains, is_name_char, is_name_start, normalize,
};

/// Longer commands go to the full reader (which also keeps its own work budget).
const MAX_LEN: usize = 1024;

/// Command words besides wrappers and shells whose arguments the full reader reads as
/// commands (`State::roles`); a name added there belongs here too.
pub(super) const READS_COMMANDS: &[&str] = &[
    "eval", "find", "fd", "fdfind", "trap", "alias", "source", ".",
];

/// Words that open, close or steer compound commands, besides [`RESERVED_SKIP`].
const RESERVED_MORE: &[&str] = &[
    "case", "esac", "for", "select", "in", "function", "time", "{", "}", "[[", "]]",
];

/// How a byte may appear in the text this screen accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Letters, digits and `-_./,:+@%=`: a word byte outside quotes.
    Word,
    Blank,
    SingleQuote,
    DoubleQuote,
    /// `|`, `&`, `;`.
    Operator,
    /// Anything else: expansions, redirections, globs, newlines, comments, non-ASCII.
    Other,
}

const fn class(b: u8) -> Class {
    match b {
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => Class::Word,
        b'-' | b'_' | b'.' | b'/' | b',' | b':' | b'+' | b'@' | b'%' | b'=' => Class::Word,
        b' ' | b'\t' => Class::Blank,
        b'\'' => Class::SingleQuote,
        b'"' => Class::DoubleQuote,
        b'|' | b'&' | b';' => Class::Operator,
        _ => Class::Other,
    }
}

const CLASSES: [Class; 256] = {
    let mut t = [Class::Other; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = class(b as u8);
        b += 1;
    }
    t
};

/// Bytes that stay literal inside double quotes (no `$`, `` ` ``, `\`, `!`).
fn dq_literal(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'$' | b'`' | b'\\' | b'!')
}

/// Bytes kept inside single quotes here (printable ASCII).
fn sq_literal(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'\''
}

/// Whether a construct could be found in a text this screen accepts, where the full reader
/// looks for it. It looks for constructs with `\\` or NUL in the raw text; for those with
/// `$` or `` ` `` in the text outside single quotes, which here holds neither; for the
/// others in the unquoted text, which here holds only word bytes, blanks and operators.
fn could_match(construct: &[u8]) -> bool {
    if construct.is_empty() {
        return false;
    }
    if construct.iter().any(|b| matches!(b, b'\\' | 0)) {
        return true;
    }
    construct.iter().all(|&b| {
        matches!(
            CLASSES[b as usize],
            Class::Word | Class::Blank | Class::Operator
        )
    })
}

/// True when the full reader would find nothing in `text`; false means "ask it".
pub(super) fn plainly_allowed(text: &[u8], rules: &ShellRules<'_>) -> bool {
    // An expansion goes to the reader (or [`plainly_refused`]): tell before the protected
    // files are looked for.
    if text.is_empty() || text.len() > MAX_LEN || memchr::memchr(b'$', text).is_some() {
        return false;
    }
    if rules
        .constructs
        .iter()
        .any(|c| could_match(c.as_bytes()) && contains(text, c.as_bytes()))
    {
        return false;
    }
    let st = State::new(rules, text.len());
    if st.protected_text(text).is_err() {
        return false;
    }
    let mut word = Vec::new();
    let mut pos = 0;
    // Whether the next word starts a simple command, and whether one must follow.
    let mut at_command = true;
    while pos < text.len() {
        match CLASSES[text[pos] as usize] {
            Class::Blank => pos += 1,
            Class::Operator => {
                if at_command {
                    return false;
                }
                let Some(len) = operator_len(text, pos) else {
                    return false;
                };
                pos += len;
                at_command = true;
            }
            Class::Other => return false,
            Class::Word | Class::SingleQuote | Class::DoubleQuote => {
                let Some((letters, end, quoted)) = read_word(text, pos, &mut word) else {
                    return false;
                };
                if !plain_word(letters, quoted, &st)
                    || (at_command && !plain_command(letters, rules))
                {
                    return false;
                }
                pos = end;
                at_command = false;
            }
        }
    }
    !at_command
}

/// The finding the full reader reports for a command of plain words, `~` words, operators
/// and `$(…)` substitutions, when the policy lists `$(` first among its constructs: `$(`.
/// The reader reads the whole command before it looks for constructs, so only a protected
/// file found on the way could come first; that is looked for here as the reader looks
/// (the whole text, then each `~` word as it expands, and words normalising changes), and
/// on any doubt this says None: ask the reader.
pub(super) fn plainly_refused(text: &[u8], rules: &ShellRules<'_>) -> Option<Finding> {
    let first = rules.constructs.first()?;
    if first != "$(" || text.len() > MAX_LEN || memchr::memchr(b'$', text).is_none() {
        return None;
    }
    let mut st = State::new(rules, text.len());
    st.protected_text(text).ok()?;
    // Whether a command word is due, for the text and for each open substitution.
    let mut at_command = true;
    let mut outer: Vec<bool> = Vec::new();
    let mut seen = false;
    let mut pos = 0;
    while pos < text.len() {
        let b = text[pos];
        match b {
            b' ' | b'\t' => pos += 1,
            b'$' => {
                // `$((` is arithmetic, read otherwise.
                if text.get(pos + 1) != Some(&b'(') || text.get(pos + 2) == Some(&b'(') {
                    return None;
                }
                outer.push(at_command);
                at_command = true;
                seen = true;
                pos += 2;
            }
            b')' => {
                outer.pop()?;
                if at_command {
                    return None;
                }
                at_command = false;
                pos += 1;
            }
            b'|' | b'&' | b';' => {
                if at_command {
                    return None;
                }
                pos += operator_len(text, pos)?;
                at_command = true;
            }
            b'~' => {
                // A whole word (`~/x`, `~user/x`), checked with its home folders expanded.
                if pos > 0 && !matches!(text[pos - 1], b' ' | b'\t' | b'|' | b'&' | b';' | b'(') {
                    return None;
                }
                let end = word_end(text, pos + 1);
                if !matches!(
                    text.get(end),
                    None | Some(b' ' | b'\t' | b'|' | b'&' | b';' | b')')
                ) {
                    return None;
                }
                let mut word = Word {
                    e: Vec::with_capacity(end - pos),
                    ..Word::default()
                };
                for &c in &text[pos..end] {
                    word.lit(c, K::Unq);
                }
                st.protected_word(&word).ok()?;
                at_command = false;
                pos = end;
            }
            _ if CLASSES[b as usize] == Class::Word => {
                let end = word_end(text, pos);
                // Glued to `~` or `$(…)` a slash could meet another once joined: not here.
                if text.get(end) == Some(&b'~')
                    || (pos > 0 && text[pos - 1] == b')' && text[pos] == b'/')
                    || (text[pos..end].ends_with(b"/") && text.get(end) == Some(&b'$'))
                    || !plain_word(&text[pos..end], false, &st)
                {
                    return None;
                }
                at_command = false;
                pos = end;
            }
            _ => return None,
        }
    }
    (seen && outer.is_empty() && !at_command).then(|| Finding::Construct {
        construct: first.clone(),
    })
}

/// The length of the list operator at `pos` this screen reads (`||`, `&&`, `|`, `;`); None
/// for any other (a lone `&` runs the command in the background).
fn operator_len(text: &[u8], pos: usize) -> Option<usize> {
    match &text[pos..text.len().min(pos + 2)] {
        b"||" | b"&&" => Some(2),
        [b'|' | b';', ..] => Some(1),
        _ => None,
    }
}

/// Where the run of word bytes from `pos` ends.
fn word_end(text: &[u8], pos: usize) -> usize {
    text[pos..]
        .iter()
        .position(|&b| CLASSES[b as usize] != Class::Word)
        .map_or(text.len(), |k| pos + k)
}

/// The letters of the word at `pos`, with its quotes removed (into `buffer` when it has
/// any), where it ends, and whether it had quotes. None when the word holds anything but
/// literal letters.
fn read_word<'t>(
    text: &'t [u8],
    start: usize,
    buffer: &'t mut Vec<u8>,
) -> Option<(&'t [u8], usize, bool)> {
    let mut pos = start;
    while let Some(&b) = text.get(pos) {
        match CLASSES[b as usize] {
            Class::Word => pos += 1,
            Class::SingleQuote | Class::DoubleQuote => break,
            Class::Blank | Class::Operator => return Some((&text[start..pos], pos, false)),
            Class::Other => return None,
        }
    }
    if pos == text.len() {
        return Some((&text[start..pos], pos, false));
    }
    // A quote: from here on the letters are copied without their quotes.
    buffer.clear();
    buffer.extend_from_slice(&text[start..pos]);
    while let Some(&b) = text.get(pos) {
        match CLASSES[b as usize] {
            Class::Word => {
                buffer.push(b);
                pos += 1;
            }
            Class::SingleQuote | Class::DoubleQuote => {
                let literal = if b == b'\'' { sq_literal } else { dq_literal };
                pos += 1;
                loop {
                    let &c = text.get(pos)?;
                    pos += 1;
                    if c == b {
                        break;
                    }
                    if !literal(c) {
                        return None;
                    }
                    buffer.push(c);
                }
            }
            Class::Blank | Class::Operator => break,
            Class::Other => return None,
        }
    }
    Some((buffer.as_slice(), pos, true))
}

/// A word the full reader takes as only its letters: no assignment (whose value some
/// variables run), no glob or expansion (quoted ones included: they change how the reader
/// matches protected files), and protected files checked where normalising changes it.
fn plain_word(letters: &[u8], quoted: bool, st: &State<'_>) -> bool {
    // Outside quotes these bytes are not word bytes: only quoted letters can hold them.
    if quoted
        && letters
            .iter()
            .any(|b| matches!(b, b'*' | b'?' | b'[' | b'~' | b'$' | b'\\' | b'{'))
    {
        return false;
    }
    if looks_like_assignment(letters) {
        return false;
    }
    // Words are short: a plain loop costs less than memchr's set-up.
    if st.prot.is_empty() || !letters.contains(&b'/') {
        return true;
    }
    let renormalised = letters.ends_with(b"/")
        || letters
            .windows(2)
            .any(|w| w[0] == b'/' && matches!(w[1], b'/' | b'.'));
    if renormalised {
        let lower = letters.to_ascii_lowercase();
        return st.protected_literal(&normalize(&lower)).is_ok();
    }
    true
}

/// `NAME=…` or `NAME+=…`.
fn looks_like_assignment(letters: &[u8]) -> bool {
    if !letters.first().is_some_and(|b| is_name_start(*b)) {
        return false;
    }
    let end = letters
        .iter()
        .position(|b| !is_name_char(*b))
        .unwrap_or(letters.len());
    matches!(&letters[end..], [b'=', ..] | [b'+', b'=', ..])
}

/// Every word [`plain_command`] leaves to the full reader whatever the policy says: reserved
/// words, shells, wrappers and the other commands that run commands.
fn special_words() -> &'static FxHashSet<&'static [u8]> {
    static WORDS: OnceLock<FxHashSet<&'static [u8]>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let mut words: FxHashSet<&'static [u8]> = RESERVED_SKIP.iter().copied().collect();
        // Besides these, `State::roles` reads assignments of special variables and options
        // that run commands by name.
        let by_option = RUNS_BY_OPTION.iter().map(|(name, _)| name);
        let names = RESERVED_MORE
            .iter()
            .chain(SHELLS)
            .chain(READS_COMMANDS)
            .chain(ASSIGNERS)
            .chain(NAMES_VARS)
            .chain(by_option)
            .copied()
            .chain(WRAPPERS.iter().map(|w| w.name));
        words.extend(names.map(str::as_bytes));
        words
    })
}

/// A command word that runs nothing else and that the policy does not deny.
fn plain_command(letters: &[u8], rules: &ShellRules<'_>) -> bool {
    let name = match letters.iter().rposition(|b| *b == b'/') {
        Some(k) => &letters[k + 1..],
        None => letters,
    };
    // Reserved words are matched as the whole word, commands by their basename.
    let special = special_words();
    if name.is_empty() || special.contains(name) || (name != letters && special.contains(letters)) {
        return false;
    }
    // A denied word denies its dotted family too (`mkfs` denies `mkfs.ext4`).
    !rules.words.iter().any(|w| {
        let w = w.as_bytes();
        // The first byte alone rules out most denied words without a call to compare.
        w.first() == name.first()
            && name.starts_with(w)
            && (name.len() == w.len() || name[w.len()] == b'.')
    })
}
