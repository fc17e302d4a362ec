//! Bash's grammar, for the part the check models: lists (`;`, `&`, `&&`, `||`, new lines),
//! pipelines (`|`, `|&`, `!`, `time`), subshells `( … )`, groups `{ …; }`, `if`, `while`,
//! `until` and `for NAME in …`, each with redirections. Every other compound command is
//! refused by name; every simple command is read by [`CommandReader`].

use super::command::CommandReader;
use super::lex::{Lexer, Operator, RedirectOp, Token, WordShape};
use super::{Finding, MAX_DEPTH, ShellRules, shown, unreadable, unsupported};

type Read<T> = Result<T, Finding>;

/// Words bash reads as reserved where a command starts.
const RESERVED: &[&[u8]] = &[
    b"if",
    b"then",
    b"else",
    b"elif",
    b"fi",
    b"do",
    b"done",
    b"case",
    b"esac",
    b"while",
    b"until",
    b"for",
    b"select",
    b"function",
    b"time",
    b"{",
    b"}",
    b"!",
    b"[[",
    b"coproc",
];

/// Checks `src` as bash would read it.
pub(super) fn check(src: &[u8], rules: &ShellRules<'_>) -> Read<()> {
    if let Some(&b) = src
        .iter()
        .find(|b| (**b < 0x20 && !matches!(b, b'\t' | b'\n')) || **b == 0x7f)
    {
        return Err(unsupported(
            format!("the control character U+{b:04X}"),
            "a terminal acts on it before the shell reads the command",
        ));
    }
    rules.protected.check_text(src)?;
    let mut parser = Parser {
        lexer: Lexer::new(src, constructs_may_occur(src, rules.constructs)),
        rules,
        peeked: None,
        depth: 0,
        token_start: 0,
    };
    parser.program()?;
    if let Some(views) = &parser.lexer.views {
        for construct in rules.constructs {
            let c = construct.as_bytes();
            if c.is_empty() {
                continue;
            }
            let hay: &[u8] = if c.contains(&b'\\') || c.contains(&b'\n') {
                src
            } else if c.contains(&b'$') || c.contains(&b'`') {
                &views.dollar
            } else {
                &views.code
            };
            if memchr::memmem::find(hay, c).is_some() {
                return Err(Finding::Construct {
                    construct: construct.clone(),
                });
            }
        }
    }
    Ok(())
}

/// Whether some denied construct could occur in the command as bash reads it (line
/// continuations removed): only then are the texts it is looked for in kept.
fn constructs_may_occur(src: &[u8], constructs: &[String]) -> bool {
    if constructs.is_empty() {
        return false;
    }
    // Most commands hold none of the bytes a construct starts with (`$`, `` ` ``, `<`,
    // `>` by default), and joining lines only removes bytes: one pass answers for them.
    let mut starts = [false; 256];
    for c in constructs {
        if c.contains('\\') || c.contains('\n') {
            return true;
        }
        if let Some(first) = c.as_bytes().first() {
            starts[usize::from(*first)] = true;
        }
    }
    if !src.iter().any(|b| starts[usize::from(*b)]) {
        return false;
    }
    let joined: std::borrow::Cow<'_, [u8]> = if has_continuation(src) {
        let mut out = Vec::with_capacity(src.len());
        let mut i = 0;
        while i < src.len() {
            if src[i] == b'\\' && src.get(i + 1) == Some(&b'\n') {
                i += 2;
            } else {
                out.push(src[i]);
                i += 1;
            }
        }
        out.into()
    } else {
        src.into()
    };
    constructs.iter().any(|c| {
        let c = c.as_bytes();
        !c.is_empty()
            && (c.contains(&b'\\')
                || c.contains(&b'\n')
                || memchr::memmem::find(&joined, c).is_some())
    })
}

struct Parser<'s, 'r> {
    lexer: Lexer<'s>,
    rules: &'r ShellRules<'r>,
    peeked: Option<(Token, usize)>,
    depth: usize,
    /// Where the last token taken starts.
    token_start: usize,
}

fn describe(token: Token) -> &'static str {
    match token {
        Token::Word(_) => "a word",
        Token::Newline => "a new line",
        Token::End => "the end",
        Token::Operator(op) => match op {
            Operator::Semicolon => "`;`",
            Operator::Background => "`&`",
            Operator::And => "`&&`",
            Operator::Or => "`||`",
            Operator::Pipe => "`|`",
            Operator::PipeBoth => "`|&`",
            Operator::OpenParen { .. } => "`(`",
            Operator::CloseParen => "`)`",
            Operator::Redirect { .. } => "a redirection",
        },
    }
}

impl<'s, 'r> Parser<'s, 'r> {
    fn peek(&mut self) -> Read<Token> {
        if let Some((t, _)) = self.peeked {
            return Ok(t);
        }
        let t = self.lexer.next()?;
        let start = match t {
            Token::Word(shape) => shape.start,
            _ => self.lexer.token_start(),
        };
        self.peeked = Some((t, start));
        Ok(t)
    }

    fn take(&mut self) -> Read<Token> {
        let t = self.peek()?;
        if let Some((_, start)) = self.peeked.take() {
            self.token_start = start;
        }
        Ok(t)
    }

    /// The reserved word `token` is, if it is one.
    fn reserved(&self, token: Token) -> Option<&'static [u8]> {
        let Token::Word(shape) = token else {
            return None;
        };
        if shape.quoted || !shape.is_static() {
            return None;
        }
        let text = self.lexer.text.as_slice();
        // No reserved word is longer than `function`.
        if text.len() > 8 {
            return None;
        }
        RESERVED.iter().find(|r| **r == text).copied()
    }

    fn unexpected(&self, token: Token) -> Finding {
        match self.reserved(token) {
            Some(word) => unreadable(format!("an unexpected `{}`", shown(word, 10))),
            None => unreadable(format!("unexpected {}", describe(token))),
        }
    }

    fn skip_newlines(&mut self) -> Read<()> {
        while self.peek()? == Token::Newline {
            self.take()?;
        }
        Ok(())
    }

    fn enter(&mut self) -> Read<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(unsupported(
                format!("commands nested deeper than {MAX_DEPTH} levels"),
                "the check does not follow them that far",
            ));
        }
        Ok(())
    }

    fn program(&mut self) -> Read<()> {
        self.list(&[], false)?;
        match self.take()? {
            Token::End => Ok(()),
            t => Err(self.unexpected(t)),
        }
    }

    fn ends_list(&self, token: Token, terminators: &[&[u8]], paren: bool) -> bool {
        match token {
            Token::End => true,
            Token::Operator(Operator::CloseParen) => paren,
            Token::Word(_) => self
                .reserved(token)
                .is_some_and(|w| terminators.contains(&w)),
            _ => false,
        }
    }

    /// A list of commands up to one of `terminators` (reserved words) or, with `paren`,
    /// a `)`; the terminator is left for the caller.
    fn list(&mut self, terminators: &[&[u8]], paren: bool) -> Read<()> {
        let mut any = false;
        loop {
            self.skip_newlines()?;
            let t = self.peek()?;
            if self.ends_list(t, terminators, paren) {
                break;
            }
            self.and_or()?;
            any = true;
            let t = self.peek()?;
            match t {
                Token::Operator(Operator::Semicolon | Operator::Background) | Token::Newline => {
                    self.take()?;
                }
                _ if self.ends_list(t, terminators, paren) => break,
                _ => return Err(self.unexpected(t)),
            }
        }
        if !any && (paren || !terminators.is_empty()) {
            return Err(unreadable("an empty list of commands"));
        }
        Ok(())
    }

    fn and_or(&mut self) -> Read<()> {
        self.pipeline()?;
        while matches!(self.peek()?, Token::Operator(Operator::And | Operator::Or)) {
            self.take()?;
            self.skip_newlines()?;
            self.pipeline()?;
        }
        Ok(())
    }

    fn pipeline(&mut self) -> Read<()> {
        loop {
            let t = self.peek()?;
            match self.reserved(t) {
                Some(b"!") => {
                    self.take()?;
                }
                Some(b"time") => {
                    self.take()?;
                    // `time [-p] [--] pipeline`, as bash reads the words unquoted.
                    let mut options: &[&[u8]] = &[b"-p", b"--"];
                    while let Token::Word(shape) = self.peek()? {
                        let text = self.lexer.text.as_slice();
                        let unquoted = !shape.quoted && shape.is_static();
                        match options.iter().position(|o| *o == text) {
                            Some(at) if unquoted => {
                                self.take()?;
                                options = &options[at + 1..];
                            }
                            _ if unquoted && (text == b"-p" || text == b"--") => {
                                return Err(unsupported(
                                    "`time` with these options",
                                    "the check does not model them",
                                ));
                            }
                            _ => break,
                        }
                    }
                }
                _ => break,
            }
        }
        self.command()?;
        while matches!(
            self.peek()?,
            Token::Operator(Operator::Pipe | Operator::PipeBoth)
        ) {
            self.take()?;
            self.skip_newlines()?;
            self.command()?;
        }
        Ok(())
    }

    fn expect(&mut self, word: &'static [u8]) -> Read<()> {
        let t = self.take()?;
        if self.reserved(t) == Some(word) {
            return Ok(());
        }
        Err(unreadable(format!(
            "a missing `{}` (found {})",
            shown(word, 10),
            describe(t)
        )))
    }

    fn command(&mut self) -> Read<()> {
        let t = self.peek()?;
        match t {
            Token::Operator(Operator::OpenParen { .. }) => {
                self.take()?;
                self.enter()?;
                self.list(&[], true)?;
                match self.take()? {
                    Token::Operator(Operator::CloseParen) => {}
                    t => return Err(self.unexpected(t)),
                }
                self.depth -= 1;
                self.redirections()
            }
            Token::Word(_) => match self.reserved(t) {
                None => self.simple_command(),
                Some(word) => self.compound(word),
            },
            Token::Operator(Operator::Redirect { .. }) => self.simple_command(),
            _ => Err(self.unexpected(t)),
        }
    }

    fn compound(&mut self, word: &'static [u8]) -> Read<()> {
        match word {
            b"{" => {
                self.take()?;
                self.enter()?;
                self.list(&[b"}"], false)?;
                self.expect(b"}")?;
            }
            b"if" => {
                self.take()?;
                self.enter()?;
                self.list(&[b"then"], false)?;
                self.expect(b"then")?;
                self.list(&[b"elif", b"else", b"fi"], false)?;
                loop {
                    let t = self.take()?;
                    match self.reserved(t) {
                        Some(b"elif") => {
                            self.list(&[b"then"], false)?;
                            self.expect(b"then")?;
                            self.list(&[b"elif", b"else", b"fi"], false)?;
                        }
                        Some(b"else") => {
                            self.list(&[b"fi"], false)?;
                            self.expect(b"fi")?;
                            break;
                        }
                        Some(b"fi") => break,
                        _ => return Err(unreadable("an `if` without its `fi`")),
                    }
                }
            }
            b"while" | b"until" => {
                self.take()?;
                self.enter()?;
                self.list(&[b"do"], false)?;
                self.expect(b"do")?;
                self.list(&[b"done"], false)?;
                self.expect(b"done")?;
            }
            b"for" => {
                self.take()?;
                self.enter()?;
                self.for_loop()?;
            }
            b"case" | b"esac" => {
                return Err(unsupported(
                    "`case … esac`",
                    "the check does not model it; use `if` and `[`",
                ));
            }
            b"select" => {
                return Err(unsupported(
                    "`select`",
                    "it reads a choice from standard input; the check does not model it",
                ));
            }
            b"function" => {
                return Err(function_definition());
            }
            b"coproc" => {
                return Err(unsupported(
                    "`coproc`",
                    "the check does not model coprocesses",
                ));
            }
            b"[[" => {
                return Err(unsupported(
                    "`[[ … ]]`",
                    "it evaluates arithmetic on its operands, whose array subscripts can run commands; use `[` or `test`",
                ));
            }
            _ => {
                let t = self.peek()?;
                return Err(self.unexpected(t));
            }
        }
        self.depth -= 1;
        self.redirections()
    }

    /// `for NAME in WORDS; do LIST; done` (or without `in`), after the `for`.
    fn for_loop(&mut self) -> Read<()> {
        let Token::Word(shape) = self.take()? else {
            return Err(unreadable("a `for` without a variable name"));
        };
        if !shape.is_static() || shape.quoted {
            return Err(unreadable(
                "a `for` whose variable name is not a plain name",
            ));
        }
        super::variables::check_name(&self.lexer.text)?;
        let t = self.peek()?;
        if self.reserved(t).is_none()
            && matches!(t, Token::Word(s) if !s.quoted && self.lexer.text == b"in")
        {
            self.take()?;
            loop {
                match self.take()? {
                    Token::Word(_) => {
                        self.rules
                            .protected
                            .check_word(&self.lexer.text, &self.lexer.marks)?;
                    }
                    Token::Operator(Operator::Semicolon) | Token::Newline => break,
                    t => return Err(self.unexpected(t)),
                }
            }
        } else if matches!(t, Token::Operator(Operator::Semicolon) | Token::Newline) {
            self.take()?;
        }
        self.skip_newlines()?;
        self.expect(b"do")?;
        self.list(&[b"done"], false)?;
        self.expect(b"done")
    }

    /// Redirections after a compound command.
    fn redirections(&mut self) -> Read<()> {
        while let Token::Operator(Operator::Redirect { fd, op }) = self.peek()? {
            self.take()?;
            self.redirection(fd, op)?;
        }
        Ok(())
    }

    fn simple_command(&mut self) -> Read<()> {
        self.peek()?;
        let start = self.peeked.map_or(0, |(_, s)| s);
        let src = self.lexer.source();
        let mut reader = CommandReader::new(self.rules, src, start, self.depth);
        let mut words = 0;
        let mut open_assignment = false;
        loop {
            match self.peek()? {
                Token::Word(shape) => {
                    self.take()?;
                    self.rules
                        .protected
                        .check_word(&self.lexer.text, &self.lexer.marks)?;
                    let len = self.lexer.text.len();
                    open_assignment = shape.assignment.is_some_and(|eq| eq + 1 == len);
                    reader.word(&shape, &self.lexer.text)?;
                    words += 1;
                }
                Token::Operator(Operator::Redirect { fd, op }) => {
                    self.take()?;
                    self.redirection(fd, op)?;
                    open_assignment = false;
                }
                Token::Operator(Operator::OpenParen { glued }) => {
                    let paren = self.peeked.map_or(0, |(_, s)| s);
                    return Err(if glued && open_assignment {
                        unsupported(
                            "an array assignment `a=(…)`",
                            "array subscripts are arithmetic, which can run commands",
                        )
                    } else if words == 1 && !closes_at_once(src, paren) {
                        // `print(sum(range(10)))`: bash reads `name (` as the start of a
                        // function definition, and anything but `)` next is its syntax error.
                        unreadable(format!(
                            "bash stops at a syntax error: `{}` is no command (a name and `(` \
                             start a function definition `name() {{ … }}`, and what follows \
                             the `(` is no `)`)",
                            shown(&src[start..src.len().min(paren + 1)], 40)
                        ))
                    } else if words == 1 {
                        function_definition()
                    } else {
                        unreadable("a `(` inside a command")
                    });
                }
                _ => break,
            }
        }
        reader.finish()
    }

    fn redirection(&mut self, fd: Option<u32>, op: RedirectOp) -> Read<()> {
        let Token::Word(shape) = self.take()? else {
            return Err(unreadable("a redirection without a file name"));
        };
        match op {
            RedirectOp::HereDoc { strip_tabs } => self.lexer.here_document(&shape, strip_tabs),
            RedirectOp::HereString => self
                .rules
                .protected
                .check_word(&self.lexer.text, &self.lexer.marks),
            RedirectOp::DupInput | RedirectOp::DupOutput => {
                if !shape.is_static() {
                    return Err(not_written_target());
                }
                let text = self.lexer.text.as_slice();
                let digits = text.strip_suffix(b"-").unwrap_or(text);
                if digits.iter().all(u8::is_ascii_digit) && (!digits.is_empty() || text == b"-") {
                    return Ok(());
                }
                if op == RedirectOp::DupOutput && fd.is_none_or(|f| f == 1) {
                    super::dotgit::check_target(text, shape.is_static())?;
                    return self.redirect_path(&shape);
                }
                Err(unreadable(
                    "a `<&` or `>&` to something other than a file descriptor",
                ))
            }
            RedirectOp::Input => self.redirect_path(&shape),
            _ => {
                super::dotgit::check_target(&self.lexer.text, shape.is_static())?;
                self.redirect_path(&shape)
            }
        }
    }

    fn redirect_path(&self, shape: &WordShape) -> Read<()> {
        if !shape.is_static() {
            return Err(not_written_target());
        }
        let text = self.lexer.text.as_slice();
        self.rules.protected.check_word(text, &self.lexer.marks)?;
        let Ok(path) = std::str::from_utf8(text) else {
            return Err(unsupported(
                "a redirection to a path that is not UTF-8",
                "the path rules read UTF-8 paths",
            ));
        };
        if path.is_empty() {
            return Err(unreadable("a redirection to an empty file name"));
        }
        if matches!(
            path,
            "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) || path
            .strip_prefix("/dev/fd/")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            return Ok(());
        }
        if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
            return Err(unsupported(
                format!("the network redirection `{}`", shown(text, 60)),
                "bash opens a connection for it",
            ));
        }
        self.rules
            .world
            .redirect(path)
            .map_err(|rule| unsupported(format!("a redirection to `{}`", shown(text, 80)), rule.0))
    }
}

/// Whether the `(` at `paren` is followed by `)`, blanks aside: `name ( )` is a function
/// definition's head, as bash reads it.
fn closes_at_once(src: &[u8], paren: usize) -> bool {
    src.get(paren + 1..)
        .and_then(|rest| rest.iter().find(|b| !matches!(b, b' ' | b'\t')))
        == Some(&b')')
}

fn function_definition() -> Finding {
    unsupported(
        "a function definition",
        "a function changes what a command name means for the commands after it",
    )
}

fn not_written_target() -> Finding {
    unsupported(
        "a redirection to a path that is not written out",
        "bash would decide only when it runs which file it opens",
    )
}

/// Whether `src` holds a line continuation (`\` and a new line).
pub(super) fn has_continuation(src: &[u8]) -> bool {
    memchr::memchr(b'\\', src).is_some() && memchr::memmem::find(src, b"\\\n").is_some()
}
