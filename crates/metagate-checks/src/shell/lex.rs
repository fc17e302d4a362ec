//! Bash's tokens: words, operators, new lines and here-document bodies, read with bash's
//! rules for quotes, escapes, line continuations and comments.
//!
//! A word comes out as its letters (quotes removed, escapes and `$'…'` decoded) and a
//! [`WordShape`] saying what bash may still do to it: expand a parameter, a glob, braces or
//! a `~`. Every other expansion is refused here, by name.

use super::{Finding, unreadable, unsupported};

/// A redirection operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RedirectOp {
    /// `<`
    Input,
    /// `>`
    Output,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<<` and `<<-`
    HereDoc { strip_tabs: bool },
    /// `<<<`
    HereString,
    /// `<&`
    DupInput,
    /// `>&`
    DupOutput,
    /// `&>`
    OutputBoth,
    /// `&>>`
    AppendBoth,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Operator {
    /// `;`
    Semicolon,
    /// `&`
    Background,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `|`
    Pipe,
    /// `|&`
    PipeBoth,
    /// `(`, and whether it follows a word with nothing between (`f()`, `a=(`).
    OpenParen { glued: bool },
    /// `)`
    CloseParen,
    /// A redirection, with the descriptor written before it (`2>`).
    Redirect { fd: Option<u32>, op: RedirectOp },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Token {
    Word(WordShape),
    Operator(Operator),
    Newline,
    End,
}

/// What bash may still do to a word after quote removal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct WordShape {
    /// Where the word is in the source.
    pub(crate) start: usize,
    end: usize,
    /// Some part was quoted or escaped (a quoted `if` is no reserved word).
    pub(crate) quoted: bool,
    /// A parameter expansion (`$X`, `"${X}"`, …) anywhere in it.
    expansion: bool,
    /// A parameter expansion outside double quotes: bash splits and globs its value.
    splits: bool,
    /// An unquoted `*`, `?` or `[…]`.
    glob: bool,
    /// Unquoted braces bash may expand (`{a,b}`, `{1..3}`).
    brace: bool,
    /// An unquoted `~` in front.
    pub(crate) tilde: bool,
    /// The word starts with `NAME=` or `NAME+=`, unquoted: the index of `=` in the letters.
    pub(crate) assignment: Option<usize>,
    /// The word starts with `NAME[`, unquoted, and holds an unquoted `=` (an array element
    /// assignment where bash expects assignments).
    pub(crate) subscript_assignment: bool,
    /// The first letter, when it is a literal one (quoted or not); None when the word starts
    /// with an expansion, a glob, braces or `~` (or is empty).
    first_literal: Option<u8>,
}

impl WordShape {
    /// The letters are exactly what bash passes on: nothing is left to expand.
    pub(crate) fn is_static(&self) -> bool {
        !(self.expansion || self.glob || self.brace || self.tilde)
    }

    /// Whether the word may come out as several words, or as none.
    pub(crate) fn may_split(&self) -> bool {
        self.splits || self.glob || self.brace
    }

    /// Whether bash may pass this word on starting with `-` (an option, to most programs).
    pub(crate) fn may_be_option(&self, letters: &[u8]) -> bool {
        if self.is_static() {
            return letters.first() == Some(&b'-');
        }
        self.first_literal.is_none_or(|b| b == b'-')
    }
}

/// Where in a word's letters bash still acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MarkKind {
    /// An unquoted `*`.
    Star,
    /// An unquoted `?`.
    Question,
    /// An unquoted `[`.
    Bracket,
    /// A parameter expansion, kept in the letters as written (`$HOME`, `${X:-a}`).
    Expansion,
    /// A leading unquoted `~`.
    Tilde,
    /// An unquoted `{`, `,` or `}` of a word bash may brace-expand.
    BraceOpen,
    BraceComma,
    BraceClose,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mark {
    pub(crate) at: usize,
    pub(crate) len: usize,
    pub(crate) kind: MarkKind,
}

/// A here-document waiting for the end of its line.
struct PendingHereDoc {
    delimiter: Vec<u8>,
    quoted: bool,
    strip_tabs: bool,
}

/// The texts `[shell] deny` constructs are looked for in: the code as bash reads it, with
/// each quoted part as one NUL byte; and the same with the inside of double quotes and of
/// unquoted here-documents, where `$` constructs still act.
#[derive(Default)]
pub(super) struct Views {
    pub(crate) code: Vec<u8>,
    pub(crate) dollar: Vec<u8>,
}

/// How a word's letters are being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Unquoted,
    DoubleQuoted,
    HereDoc,
}

/// Tracks whether a word begins with `NAME=`, `NAME+=` or `NAME[`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AssignState {
    /// Still reading unquoted name characters; how many so far.
    Name(usize),
    /// `NAME+` read; `=` must follow.
    Plus,
    /// `NAME[` read.
    Subscript,
    /// Decided.
    Done,
}

type Read<T> = Result<T, Finding>;

pub(super) struct Lexer<'s> {
    src: &'s [u8],
    pos: usize,
    /// The letters of the last word read.
    pub(crate) text: Vec<u8>,
    /// Where bash still acts in them.
    pub(crate) marks: Vec<Mark>,
    pending: Vec<PendingHereDoc>,
    /// Where the last token ended, to tell a glued `(`.
    last_end: usize,
    /// Where the last token started.
    token_start: usize,
    /// Here-document bodies read so far (source ranges), where a line may start with `^`.
    bodies: Vec<(usize, usize)>,
    pub(crate) views: Option<Views>,
    /// Off in the test that holds [`Lexer::plain_word`] to the full reading.
    #[cfg(test)]
    plain_words: bool,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Characters that end a word when unquoted.
fn is_meta(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

pub(super) fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

pub(super) fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Bash's special parameters that `$` takes one character of.
fn is_special_parameter(b: u8) -> bool {
    matches!(
        b,
        b'?' | b'$' | b'#' | b'@' | b'*' | b'-' | b'!' | b'0'..=b'9'
    )
}

/// Letters bash gives no meaning to anywhere in an unquoted word: no quote, escape,
/// expansion, glob, brace, tilde, comment, history or operator, nor any byte past ASCII.
/// `=` and `+` matter only at the end of a leading name ([`plain_assignment`]).
const PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut b = 0;
    while b < 128 {
        plain[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let mut i = 0;
    let others = b"_./,:+@%=-";
    while i < others.len() {
        plain[others[i] as usize] = true;
        i += 1;
    }
    plain
};

/// Where `=` is in a word of [`PLAIN`] letters that starts with `NAME=` or `NAME+=`.
fn plain_assignment(letters: &[u8]) -> Option<usize> {
    let name = letters.iter().take_while(|b| is_name_char(**b)).count();
    if name == 0 || !is_name_start(letters[0]) {
        return None;
    }
    match &letters[name..] {
        [b'=', ..] => Some(name),
        [b'+', b'=', ..] => Some(name + 1),
        _ => None,
    }
}

/// Letters allowed in the literal word of `${X:-word}`: none that bash would expand, quote
/// or split.
fn is_default_letter(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_./,:@%+=-".contains(&b)
}

impl<'s> Lexer<'s> {
    pub(crate) fn new(src: &'s [u8], views: bool) -> Lexer<'s> {
        Lexer {
            src,
            pos: 0,
            // No word is longer than the command: one allocation, never grown.
            text: Vec::with_capacity(src.len()),
            marks: Vec::new(),
            pending: Vec::new(),
            last_end: usize::MAX,
            token_start: 0,
            bodies: Vec::new(),
            views: views.then(Views::default),
            #[cfg(test)]
            plain_words: true,
        }
    }

    pub(crate) fn source(&self) -> &'s [u8] {
        self.src
    }

    /// Where the last token read starts.
    pub(crate) fn token_start(&self) -> usize {
        self.token_start
    }

    /// The byte bash reads at `at`, skipping line continuations (`\` and a new line), and
    /// where it is.
    fn logical(&self, mut at: usize) -> (Option<u8>, usize) {
        while self.src.get(at) == Some(&b'\\') && self.src.get(at + 1) == Some(&b'\n') {
            at += 2;
        }
        (self.src.get(at).copied(), at)
    }

    /// The next byte, line continuations skipped.
    fn peek(&mut self) -> Option<u8> {
        let (b, at) = self.logical(self.pos);
        self.pos = at;
        b
    }

    /// The byte after the one [`Lexer::peek`] returned, line continuations skipped.
    fn peek_second(&self) -> Option<u8> {
        self.logical(self.pos + 1).0
    }

    /// The byte after that.
    fn peek_third(&self) -> Option<u8> {
        let (_, second) = self.logical(self.pos + 1);
        self.logical(second + 1).0
    }

    /// Consumes the byte [`Lexer::peek`] returned.
    fn bump(&mut self) {
        self.pos += 1;
    }

    fn code(&mut self, b: u8) {
        if let Some(v) = &mut self.views {
            v.code.push(b);
            v.dollar.push(b);
        }
    }

    fn dollar_only(&mut self, b: u8) {
        if let Some(v) = &mut self.views {
            v.dollar.push(b);
        }
    }

    /// A letter of an expansion: code outside quotes, `$` text inside them.
    fn view(&mut self, context: Context, b: u8) {
        match context {
            Context::Unquoted => self.code(b),
            Context::DoubleQuoted | Context::HereDoc => self.dollar_only(b),
        }
    }

    fn quoted_part(&mut self) {
        if let Some(v) = &mut self.views {
            v.code.push(0);
            v.dollar.push(0);
        }
    }

    /// A new line read inside a quoted part: where a here-document starts would then depend
    /// on reading the line as bash does, which this check does not try.
    fn newline_in_quotes(&self) -> Read<()> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(unsupported(
                "a quoted new line on a line with a here-document",
                "the check cannot tell where the here-document starts",
            ))
        }
    }

    /// The next token.
    pub(crate) fn next(&mut self) -> Read<Token> {
        loop {
            match self.peek() {
                Some(b) if is_blank(b) => {
                    self.bump();
                    self.code(b);
                }
                Some(b'#') => {
                    // A comment runs to the end of the line, continuations and all.
                    while self.src.get(self.pos).is_some_and(|b| *b != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        let start = self.pos;
        self.token_start = start;
        let glued = start == self.last_end;
        let token = match self.peek() {
            None => {
                if !self.pending.is_empty() {
                    // Bash reads an unterminated here-document to the end: here, nothing.
                    self.pending.clear();
                }
                self.finish()?;
                Token::End
            }
            Some(b'\n') => {
                self.bump();
                self.code(b'\n');
                self.read_here_documents()?;
                Token::Newline
            }
            Some(b) if is_meta(b) => Token::Operator(self.operator(b, glued)?),
            Some(_) => self.word_or_redirect()?,
        };
        self.last_end = self.pos;
        Ok(token)
    }

    /// Checks what needs the whole input: lines starting with `^`.
    fn finish(&mut self) -> Read<()> {
        let src = self.src;
        let starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', src).map(|at| at + 1));
        for at in starts {
            if src.get(at) == Some(&b'^')
                && !self
                    .bodies
                    .iter()
                    .any(|(from, to)| (*from..*to).contains(&at))
            {
                return Err(unsupported(
                    "a line starting with `^`",
                    "an interactive shell reads it as history substitution",
                ));
            }
        }
        Ok(())
    }

    fn operator(&mut self, b: u8, glued: bool) -> Read<Operator> {
        let second = self.peek_second();
        let redirect = |op| Operator::Redirect { fd: None, op };
        let (op, len) = match (b, second) {
            (b';', Some(b';' | b'&')) => {
                return Err(unsupported(
                    "`;;` and `;&`",
                    "they belong to `case`, which the check does not model",
                ));
            }
            (b';', _) => (Operator::Semicolon, 1),
            (b'&', Some(b'&')) => (Operator::And, 2),
            (b'&', Some(b'>')) => {
                if self.peek_third() == Some(b'>') {
                    (redirect(RedirectOp::AppendBoth), 3)
                } else {
                    (redirect(RedirectOp::OutputBoth), 2)
                }
            }
            (b'&', _) => (Operator::Background, 1),
            (b'|', Some(b'|')) => (Operator::Or, 2),
            (b'|', Some(b'&')) => (Operator::PipeBoth, 2),
            (b'|', _) => (Operator::Pipe, 1),
            (b'(', Some(b'(')) => {
                return Err(unsupported(
                    "the arithmetic command `((…))`",
                    "arithmetic evaluates array subscripts, which can run commands",
                ));
            }
            (b'(', _) => (Operator::OpenParen { glued }, 1),
            (b')', _) => (Operator::CloseParen, 1),
            (b'<' | b'>', _) => return self.redirection(None),
            _ => return Err(unreadable(format!("unexpected {:?}", char::from(b)))),
        };
        for _ in 0..len {
            let b = self.peek().unwrap_or_default();
            self.bump();
            self.code(b);
        }
        Ok(op)
    }

    /// A redirection operator at the current `<` or `>`, `fd` written before it.
    fn redirection(&mut self, fd: Option<u32>) -> Read<Operator> {
        let first = self.peek().unwrap_or_default();
        let second = self.peek_second();
        let third = self.peek_third();
        let (op, len) = match (first, second, third) {
            (b'<' | b'>', Some(b'('), _) => {
                return Err(unsupported(
                    "process substitution `<(…)`/`>(…)`",
                    "the check cannot know what it runs",
                ));
            }
            (b'<', Some(b'<'), Some(b'<')) => (RedirectOp::HereString, 3),
            (b'<', Some(b'<'), Some(b'-')) => (RedirectOp::HereDoc { strip_tabs: true }, 3),
            (b'<', Some(b'<'), _) => (RedirectOp::HereDoc { strip_tabs: false }, 2),
            (b'<', Some(b'&'), _) => (RedirectOp::DupInput, 2),
            (b'<', Some(b'>'), _) => (RedirectOp::ReadWrite, 2),
            (b'<', _, _) => (RedirectOp::Input, 1),
            (b'>', Some(b'>'), _) => (RedirectOp::Append, 2),
            (b'>', Some(b'|'), _) => (RedirectOp::Clobber, 2),
            (b'>', Some(b'&'), _) => (RedirectOp::DupOutput, 2),
            _ => (RedirectOp::Output, 1),
        };
        for _ in 0..len {
            let b = self.peek().unwrap_or_default();
            self.bump();
            self.code(b);
        }
        Ok(Operator::Redirect { fd, op })
    }

    /// A word, or a descriptor number and the redirection it belongs to (`2>`).
    fn word_or_redirect(&mut self) -> Read<Token> {
        let shape = self.word()?;
        if matches!(self.peek(), Some(b'<' | b'>')) {
            let digits = !shape.quoted
                && shape.is_static()
                && !self.text.is_empty()
                && self.text.iter().all(u8::is_ascii_digit);
            if digits {
                let fd = std::str::from_utf8(&self.text)
                    .ok()
                    .and_then(|d| d.parse::<u32>().ok())
                    .filter(|fd| *fd <= 255)
                    .ok_or_else(|| unreadable("a file descriptor number out of range"))?;
                return Ok(Token::Operator(self.redirection(Some(fd))?));
            }
            let named = !shape.quoted
                && self.text.first() == Some(&b'{')
                && self.text.last() == Some(&b'}')
                && self.text.len() > 2;
            if named {
                return Err(unsupported(
                    "a named file descriptor `{name}>`",
                    "it assigns a variable the check does not follow",
                ));
            }
        }
        Ok(Token::Word(shape))
    }

    /// Reads one word at the current position into [`Lexer::text`] and [`Lexer::marks`].
    fn word(&mut self) -> Read<WordShape> {
        #[cfg(test)]
        if !self.plain_words {
            return self.full_word();
        }
        match self.plain_word() {
            Some(shape) => Ok(shape),
            None => self.full_word(),
        }
    }

    /// [`Lexer::word`] letter by letter, for every word.
    fn full_word(&mut self) -> Read<WordShape> {
        self.text.clear();
        self.marks.clear();
        let mut shape = WordShape {
            start: self.pos,
            ..WordShape::default()
        };
        let mut assign = AssignState::Name(0);
        // Brace expansion needs `{`, then `,` or `..`, then `}`, all unquoted.
        let mut brace_open = false;
        let mut brace_separated = false;
        let mut bracket_open = false;
        let mut braces: Vec<Mark> = Vec::new();
        let mut first = true;
        while let Some(b) = self.peek() {
            if is_meta(b) {
                break;
            }
            // Whether the word starts with an assignment, before the letter is taken.
            assign = match (assign, b) {
                (AssignState::Name(n), _) if n > 0 && b == b'=' => {
                    shape.assignment = Some(self.text.len());
                    AssignState::Done
                }
                (AssignState::Name(n), b'+') if n > 0 => AssignState::Plus,
                (AssignState::Plus, b'=') => {
                    shape.assignment = Some(self.text.len());
                    AssignState::Done
                }
                (AssignState::Name(n), b'[') if n > 0 => AssignState::Subscript,
                (AssignState::Subscript, b'=') => {
                    shape.subscript_assignment = true;
                    AssignState::Done
                }
                (AssignState::Subscript, _) => AssignState::Subscript,
                (AssignState::Name(0), c) if is_name_start(c) => AssignState::Name(1),
                (AssignState::Name(n), c) if n > 0 && is_name_char(c) => AssignState::Name(n + 1),
                _ => AssignState::Done,
            };
            match b {
                b'\\' => {
                    self.bump();
                    shape.quoted = true;
                    self.quoted_part();
                    match self.src.get(self.pos) {
                        // Bash keeps a backslash at the very end.
                        None => self.text.push(b'\\'),
                        Some(&c) => {
                            self.pos += 1;
                            self.text.push(c);
                        }
                    }
                }
                b'\'' => {
                    self.bump();
                    shape.quoted = true;
                    self.quoted_part();
                    self.single_quoted()?;
                }
                b'"' => {
                    self.bump();
                    shape.quoted = true;
                    self.quoted_part();
                    self.dollar_only(b'"');
                    self.double_quoted(&mut shape)?;
                    self.dollar_only(b'"');
                }
                b'$' => {
                    self.bump();
                    self.code(b'$');
                    self.dollar(Context::Unquoted, &mut shape)?;
                }
                b'`' => return Err(backticks()),
                _ => {
                    self.bump();
                    self.code(b);
                    let brace = match b {
                        b'{' => Some(MarkKind::BraceOpen),
                        b',' => Some(MarkKind::BraceComma),
                        b'}' => Some(MarkKind::BraceClose),
                        _ => None,
                    };
                    if let Some(kind) = brace {
                        braces.push(Mark {
                            at: self.text.len(),
                            len: 1,
                            kind,
                        });
                    }
                    self.unquoted_letter(
                        b,
                        first,
                        &mut shape,
                        &mut brace_open,
                        &mut brace_separated,
                        &mut bracket_open,
                    )?;
                }
            }
            first = false;
        }
        shape.end = self.pos;
        if shape.brace {
            self.marks.extend(braces);
            self.marks.sort_by_key(|m| m.at);
        }
        shape.first_literal = self.text.first().copied().filter(|b| {
            let marked = self
                .marks
                .first()
                .is_some_and(|m| m.at == 0 && (m.kind != MarkKind::Bracket || shape.glob));
            !(marked || shape.brace && *b == b'{')
        });
        Ok(shape)
    }

    /// The word at the current position when it is plain letters only ([`PLAIN`]) and
    /// ends where bash ends a word: most words of agents' commands (`ls`, `-la`, `src/`,
    /// `--n=5`), read in one step. None leaves the position alone for the full reading,
    /// which gives any such word the same letters and shape.
    fn plain_word(&mut self) -> Option<WordShape> {
        let start = self.pos;
        let rest = &self.src[start..];
        let len = rest
            .iter()
            .position(|b| !PLAIN[usize::from(*b)])
            .unwrap_or(rest.len());
        // `(` is left out: after `+` or `@` it opens an extended glob.
        let ends = matches!(
            rest.get(len),
            None | Some(b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b')' | b'<' | b'>')
        );
        if len == 0 || !ends {
            return None;
        }
        let letters = &rest[..len];
        self.text.clear();
        self.marks.clear();
        self.text.extend_from_slice(letters);
        if let Some(v) = &mut self.views {
            v.code.extend_from_slice(letters);
            v.dollar.extend_from_slice(letters);
        }
        self.pos = start + len;
        Some(WordShape {
            start,
            end: self.pos,
            assignment: plain_assignment(letters),
            first_literal: Some(letters[0]),
            ..WordShape::default()
        })
    }

    /// An unquoted letter other than a quote, `\`, `$` or `` ` ``.
    fn unquoted_letter(
        &mut self,
        b: u8,
        first: bool,
        shape: &mut WordShape,
        brace_open: &mut bool,
        brace_separated: &mut bool,
        bracket_open: &mut bool,
    ) -> Read<()> {
        let at = self.text.len();
        let next = self.peek();
        match b {
            b'*' | b'?' | b'+' | b'@' | b'!' if next == Some(b'(') => {
                return Err(unsupported(
                    "an extended glob `?(…)`, `*(…)`, `+(…)`, `@(…)`, `!(…)`",
                    "the check does not model extended patterns",
                ));
            }
            b'*' => {
                shape.glob = true;
                self.marks.push(Mark {
                    at,
                    len: 1,
                    kind: MarkKind::Star,
                });
            }
            b'?' => {
                shape.glob = true;
                self.marks.push(Mark {
                    at,
                    len: 1,
                    kind: MarkKind::Question,
                });
            }
            b'[' => {
                *bracket_open = true;
                self.marks.push(Mark {
                    at,
                    len: 1,
                    kind: MarkKind::Bracket,
                });
            }
            b']' if *bracket_open => shape.glob = true,
            b'{' => *brace_open = true,
            b',' if *brace_open => *brace_separated = true,
            b'.' if *brace_open && next == Some(b'.') => *brace_separated = true,
            b'}' if *brace_separated => shape.brace = true,
            b'~' if first => {
                shape.tilde = true;
                self.marks.push(Mark {
                    at,
                    len: 1,
                    kind: MarkKind::Tilde,
                });
            }
            b'!' => history(next, false)?,
            b'\r' => {
                return Err(unsupported(
                    "a carriage return outside quotes",
                    "a terminal reads it as the end of a line",
                ));
            }
            _ => {}
        }
        self.text.push(b);
        Ok(())
    }

    /// `'…'`, after the opening quote.
    fn single_quoted(&mut self) -> Read<()> {
        let rest = &self.src[self.pos..];
        let Some(len) = memchr::memchr(b'\'', rest) else {
            return Err(unreadable("unterminated single quote"));
        };
        if memchr::memchr(b'\n', &rest[..len]).is_some() {
            self.newline_in_quotes()?;
        }
        self.text.extend_from_slice(&rest[..len]);
        self.pos += len + 1;
        Ok(())
    }

    /// `"…"`, after the opening quote.
    fn double_quoted(&mut self, shape: &mut WordShape) -> Read<()> {
        loop {
            let Some(b) = self.peek() else {
                return Err(unreadable("unterminated double quote"));
            };
            self.bump();
            match b {
                b'"' => return Ok(()),
                b'\\' => match self.src.get(self.pos) {
                    Some(&c) if matches!(c, b'$' | b'`' | b'"' | b'\\') => {
                        self.pos += 1;
                        self.text.push(c);
                    }
                    _ => self.text.push(b'\\'),
                },
                b'$' => {
                    self.dollar_only(b'$');
                    self.dollar(Context::DoubleQuoted, shape)?;
                }
                b'`' => return Err(backticks()),
                b'!' => {
                    history(self.peek(), true)?;
                    self.text.push(b);
                }
                b'\n' => {
                    self.newline_in_quotes()?;
                    self.text.push(b);
                }
                _ => {
                    self.dollar_only(b);
                    self.text.push(b);
                }
            }
        }
    }

    /// What follows a `$` (consumed).
    fn dollar(&mut self, context: Context, shape: &mut WordShape) -> Read<()> {
        let start = self.text.len();
        let next = self.peek();
        match next {
            Some(b'(') => {
                return Err(if self.peek_second() == Some(b'(') {
                    unsupported(
                        "arithmetic expansion `$((…))`",
                        "arithmetic evaluates array subscripts, which can run commands",
                    )
                } else {
                    unsupported(
                        "command substitution `$(…)`",
                        "the check cannot know what it runs",
                    )
                });
            }
            Some(b'[') => {
                return Err(unsupported(
                    "arithmetic expansion `$[…]`",
                    "arithmetic evaluates array subscripts, which can run commands",
                ));
            }
            Some(b'\'') if context == Context::Unquoted => {
                self.bump();
                shape.quoted = true;
                self.quoted_part();
                return self.ansi_c_quoted();
            }
            Some(b'"') if context == Context::Unquoted => {
                return Err(unsupported(
                    "locale translation `$\"…\"`",
                    "its text depends on message catalogs the check cannot read",
                ));
            }
            Some(b'{') => {
                self.bump();
                self.view(context, b'{');
                self.text.extend_from_slice(b"${");
                self.braced_parameter(context)?;
            }
            Some(c) if is_name_start(c) => {
                self.text.push(b'$');
                while let Some(c) = self.peek().filter(|c| is_name_char(*c)) {
                    self.bump();
                    self.view(context, c);
                    self.text.push(c);
                }
            }
            Some(c) if is_special_parameter(c) => {
                self.bump();
                self.view(context, c);
                self.text.push(b'$');
                self.text.push(c);
            }
            _ => {
                // A `$` bash leaves as it is.
                self.text.push(b'$');
                return Ok(());
            }
        }
        shape.expansion = true;
        if context == Context::Unquoted {
            shape.splits = true;
        }
        self.marks.push(Mark {
            at: start,
            len: self.text.len() - start,
            kind: MarkKind::Expansion,
        });
        Ok(())
    }

    /// `${…}` after the `${`: a name, then `}` or `:-word}` / `-word}` with a literal word.
    fn braced_parameter(&mut self, context: Context) -> Read<()> {
        let mut name_len = 0;
        match self.peek() {
            Some(c) if is_name_start(c) => {
                while let Some(c) = self.peek().filter(|c| is_name_char(*c)) {
                    self.bump();
                    self.view(context, c);
                    self.text.push(c);
                    name_len += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
                    self.bump();
                    self.view(context, c);
                    self.text.push(c);
                    name_len += 1;
                }
            }
            Some(c @ (b'?' | b'$' | b'@' | b'*' | b'-')) if self.peek_second() == Some(b'}') => {
                self.bump();
                self.view(context, c);
                self.text.push(c);
                name_len = 1;
            }
            Some(b'!') => {
                return Err(unsupported(
                    "indirect expansion `${!…}`",
                    "it expands a name held in a variable, and evaluates its subscripts",
                ));
            }
            Some(b'#') => {
                return Err(unsupported(
                    "the length expansion `${#…}`",
                    "only `$X`, `${X}` and `${X:-word}` are modelled",
                ));
            }
            _ => {}
        }
        if name_len == 0 {
            return Err(unsupported(
                "this parameter expansion `${…}`",
                "only `$X`, `${X}` and `${X:-word}` are modelled",
            ));
        }
        match self.peek() {
            Some(b'}') => {}
            Some(b':') if self.peek_second() == Some(b'-') => {
                for b in [b':', b'-'] {
                    self.peek();
                    self.bump();
                    self.view(context, b);
                    self.text.push(b);
                }
                self.default_word(context)?;
            }
            Some(b'-') => {
                self.bump();
                self.view(context, b'-');
                self.text.push(b'-');
                self.default_word(context)?;
            }
            Some(b'[') => {
                return Err(unsupported(
                    "an array subscript `${a[…]}`",
                    "bash evaluates subscripts as arithmetic, which can run commands",
                ));
            }
            Some(b':') => {
                return Err(unsupported(
                    "the substring expansion `${X:offset}` (or `:=`, `:+`, `:?`)",
                    "offsets are arithmetic, which can run commands; only `${X:-word}` is modelled",
                ));
            }
            Some(b'@') => {
                return Err(unsupported(
                    "the transformation `${X@…}`",
                    "`@P` runs prompt expansion, which can run commands",
                ));
            }
            _ => {
                return Err(unsupported(
                    "this parameter expansion `${X…}`",
                    "only `$X`, `${X}` and `${X:-word}` with a literal word are modelled",
                ));
            }
        }
        // The closing brace.
        if self.peek() != Some(b'}') {
            return Err(unreadable("a `${` without its `}`"));
        }
        self.bump();
        self.view(context, b'}');
        self.text.push(b'}');
        Ok(())
    }

    /// The word of `${X:-word}`: literal letters only, up to the `}`.
    fn default_word(&mut self, context: Context) -> Read<()> {
        while let Some(b) = self.peek() {
            if b == b'}' {
                return Ok(());
            }
            if !is_default_letter(b) {
                return Err(unsupported(
                    "a `${X:-word}` whose word is not plain letters",
                    "only letters, digits and `_./,:@%+=-` are modelled there",
                ));
            }
            self.bump();
            self.view(context, b);
            self.text.push(b);
        }
        Err(unreadable("a `${` without its `}`"))
    }

    /// `$'…'` after the opening quote, its escapes decoded.
    fn ansi_c_quoted(&mut self) -> Read<()> {
        loop {
            let Some(&b) = self.src.get(self.pos) else {
                return Err(unreadable("unterminated `$'…'` quote"));
            };
            self.pos += 1;
            match b {
                b'\'' => return Ok(()),
                b'\\' => {
                    let Some(&e) = self.src.get(self.pos) else {
                        return Err(unreadable("unterminated `$'…'` quote"));
                    };
                    self.pos += 1;
                    let decoded = match e {
                        b'a' => 7,
                        b'b' => 8,
                        b'e' | b'E' => 27,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'v' => 11,
                        b'\\' | b'\'' | b'"' | b'?' => e,
                        b'x' => {
                            let digits = self.src[self.pos..]
                                .iter()
                                .take(2)
                                .take_while(|c| c.is_ascii_hexdigit())
                                .count();
                            if digits == 0 {
                                return Err(unsupported(
                                    "`\\x` without hex digits in `$'…'`",
                                    "the check does not model it",
                                ));
                            }
                            let value = hex_value(&self.src[self.pos..self.pos + digits]);
                            self.pos += digits;
                            value
                        }
                        b'0'..=b'7' => {
                            let digits = 1 + self.src[self.pos..]
                                .iter()
                                .take(2)
                                .take_while(|c| (b'0'..=b'7').contains(c))
                                .count();
                            let from = self.pos - 1;
                            let value = self.src[from..from + digits]
                                .iter()
                                .fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
                            self.pos = from + digits;
                            // `\400` and up wrap around in bash.
                            (value & 0xff) as u8
                        }
                        b'\n' => {
                            return Err(unsupported(
                                "a line continuation inside `$'…'`",
                                "the check does not model it",
                            ));
                        }
                        b'u' | b'U' | b'c' => {
                            return Err(unsupported(
                                format!("the escape `\\{}` in `$'…'`", char::from(e)),
                                "its value depends on the locale or is not modelled",
                            ));
                        }
                        // Bash keeps other escapes as they are.
                        _ => {
                            self.text.push(b'\\');
                            e
                        }
                    };
                    if decoded == 0 {
                        return Err(unsupported(
                            "a NUL byte made by `$'…'`",
                            "bash cuts the word there",
                        ));
                    }
                    self.text.push(decoded);
                }
                b'\n' => {
                    self.newline_in_quotes()?;
                    self.text.push(b);
                }
                _ => self.text.push(b),
            }
        }
    }

    /// Registers a here-document whose delimiter is the word just read.
    pub(crate) fn here_document(&mut self, shape: &WordShape, strip_tabs: bool) -> Read<()> {
        let delimiter = self.text.clone();
        let plain = !delimiter.is_empty()
            && delimiter
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(b));
        if !shape.is_static() || !plain {
            return Err(unsupported(
                "this here-document delimiter",
                "only letters, digits, `_`, `.` and `-`, quoted or not, are modelled",
            ));
        }
        let raw = &self.src[shape.start..shape.end];
        if raw.starts_with(b"$") || raw.windows(2).any(|w| w == b"$'" || w == b"$\"") {
            return Err(unsupported(
                "this here-document delimiter",
                "only letters, digits, `_`, `.` and `-`, quoted or not, are modelled",
            ));
        }
        self.pending.push(PendingHereDoc {
            delimiter,
            quoted: shape.quoted,
            strip_tabs,
        });
        Ok(())
    }

    /// The bodies of the here-documents of the line that just ended.
    fn read_here_documents(&mut self) -> Read<()> {
        let pending = std::mem::take(&mut self.pending);
        for doc in pending {
            let body_start = self.pos;
            let mut closed = false;
            while self.pos < self.src.len() {
                let line_start = self.pos;
                let line_end = memchr::memchr(b'\n', &self.src[line_start..])
                    .map_or(self.src.len(), |n| line_start + n);
                let mut line = &self.src[line_start..line_end];
                self.pos = (line_end + 1).min(self.src.len());
                if doc.strip_tabs {
                    let tabs = line.iter().take_while(|b| **b == b'\t').count();
                    line = &line[tabs..];
                }
                if line == doc.delimiter.as_slice() {
                    closed = true;
                    self.bodies.push((body_start, line_start));
                    break;
                }
                if !doc.quoted {
                    self.unquoted_body_line(line_start, line_end)?;
                }
            }
            if !closed {
                self.bodies.push((body_start, self.src.len()));
            }
        }
        Ok(())
    }

    /// A line of an unquoted here-document: parameters are expanded, and `\` escapes `$`,
    /// `` ` ``, `\` and a new line.
    fn unquoted_body_line(&mut self, from: usize, to: usize) -> Read<()> {
        let saved_text = std::mem::take(&mut self.text);
        let saved_marks = std::mem::take(&mut self.marks);
        let end_pos = self.pos;
        self.pos = from;
        let mut shape = WordShape::default();
        let mut result = Ok(());
        while self.pos < to {
            let b = self.src[self.pos];
            self.pos += 1;
            match b {
                b'\\' => {
                    if self.pos >= to {
                        result = Err(unsupported(
                            "a line continuation inside an unquoted here-document",
                            "the check does not model it",
                        ));
                        break;
                    }
                    self.pos += 1;
                }
                b'$' => {
                    self.dollar_only(b'$');
                    // Only this line: a continuation here was refused above.
                    let limit = self.src;
                    self.src = &limit[..to];
                    let r = self.dollar(Context::HereDoc, &mut shape);
                    self.src = limit;
                    if let Err(e) = r {
                        result = Err(e);
                        break;
                    }
                }
                b'`' => {
                    result = Err(backticks());
                    break;
                }
                _ => self.dollar_only(b),
            }
        }
        self.dollar_only(b'\n');
        self.pos = end_pos;
        self.text = saved_text;
        self.marks = saved_marks;
        result
    }
}

fn hex_value(digits: &[u8]) -> u8 {
    digits.iter().fold(0u8, |v, d| {
        let d = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => d - b'A' + 10,
        };
        v.wrapping_mul(16).wrapping_add(d)
    })
}

fn backticks() -> Finding {
    unsupported(
        "command substitution with backticks",
        "the check cannot know what it runs",
    )
}

/// A `!` read outside single quotes: an interactive shell expands history there unless a
/// blank, a new line, `=` or the end follows (or, in double quotes, the closing quote).
fn history(next: Option<u8>, double_quoted: bool) -> Read<()> {
    match next {
        None | Some(b' ' | b'\t' | b'\n' | b'=') => Ok(()),
        Some(b'"') if double_quoted => Ok(()),
        _ => Err(unsupported(
            "history expansion `!…`",
            "an interactive shell would change the command after it was checked; quote the `!` with single quotes",
        )),
    }
}

#[cfg(test)]
mod plain_word_tests {
    use super::{Lexer, Token};
    use proptest::prelude::*;

    /// Every token with the letters and marks of each word (or the finding that stopped the
    /// reading), and the views.
    type Reading = (Vec<String>, Option<(Vec<u8>, Vec<u8>)>);

    fn reading(src: &[u8], plain_words: bool) -> Reading {
        let mut lexer = Lexer::new(src, true);
        lexer.plain_words = plain_words;
        let mut out = Vec::new();
        loop {
            match lexer.next() {
                Ok(Token::End) => break,
                Ok(token) => out.push(format!(
                    "{token:?} {:?} {:?} at {}",
                    lexer.text,
                    lexer.marks,
                    lexer.token_start()
                )),
                Err(finding) => {
                    out.push(format!("{finding:?}"));
                    break;
                }
            }
        }
        let views = lexer.views.map(|v| (v.code, v.dollar));
        (out, views)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// The one-step reading of plain words changes nothing: over words that mix plain
        /// letters with every letter bash gives a meaning, both readings agree token by
        /// token.
        #[test]
        fn plain_words_read_as_the_full_reading_does(
            letters in proptest::collection::vec(
                prop_oneof![
                    6 => proptest::sample::select(b"aZ09_./,:+@%=-".to_vec()),
                    3 => proptest::sample::select(b" \t\n;&|()<>".to_vec()),
                    2 => proptest::sample::select(b"\\'\"$`*?[]{}~#!^\r\x80\xff".to_vec()),
                ],
                0..24,
            )
        ) {
            prop_assert_eq!(reading(&letters, true), reading(&letters, false));
        }
    }

    #[test]
    fn words_at_the_edges_of_plain_read_as_the_full_reading_does() {
        for src in [
            "ls -la /tmp/1",
            "A=1 B+=2 c",
            "x+(y)",
            "a@(b)",
            "--n=5;echo",
            "a\\\nb",
        ] {
            assert_eq!(
                reading(src.as_bytes(), true),
                reading(src.as_bytes(), false),
                "{src}"
            );
        }
    }
}
