//! What the file a command word runs turns out to be, as the caller's file system tells
//! ([`World::program`](super::World::program)): the name the program has once its links are
//! followed (`editor` → `/etc/alternatives/editor` → `vim.basic`), and, for a script that
//! only hands its arguments on (Fedora's `/usr/bin/command` is `builtin command "$@"`), what
//! it hands them to. The check reads a command as what runs, not as what it is called.

/// The file a command word runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The file's name once every link is followed (`vim.basic` for `editor`).
    pub name: Box<[u8]>,
    /// The script's command, when the file is a script that only hands its arguments on.
    pub forwards: Option<Forward>,
}

/// The command a forwarding script runs with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forward {
    /// Run as the shell's builtin (`builtin NAME "$@"`), or as a program (`exec NAME "$@"`).
    pub builtin: bool,
    /// The builtin's or program's name as the script writes it.
    pub name: Box<[u8]>,
}

/// The longest script head [`read_forwarder`] reads: a forwarding script is one line.
pub const SCRIPT_HEAD_BYTES: usize = 4096;

/// The command a script hands its arguments to, when the script (`text`, from its `#!` line
/// on) is nothing but a shell's `#!` line, comments, blank lines and one line
/// `[exec|builtin|command] NAME "$@"`. Anything else is no forwarder: a script of its own,
/// which runs what it runs whatever its arguments say.
pub fn read_forwarder(text: &[u8]) -> Option<Forward> {
    let text = &text[..text.len().min(SCRIPT_HEAD_BYTES)];
    let rest = text.strip_prefix(b"#!")?;
    let (shebang, body) = match memchr::memchr(b'\n', rest) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &b""[..]),
    };
    if !is_shell_line(shebang) {
        return None;
    }
    let mut command = None;
    for line in body.split(|b| *b == b'\n') {
        let line = trim(line);
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        if command.is_some() {
            return None;
        }
        command = Some(line);
    }
    let words: Vec<&[u8]> = command?
        .split(|b| *b == b' ' || *b == b'\t')
        .filter(|w| !w.is_empty())
        .collect();
    let (builtin, name, args) = match words.as_slice() {
        [b"builtin", name, args @ ..] => (true, *name, args),
        [b"exec" | b"command", name, args @ ..] => (false, *name, args),
        [name, args @ ..] => (false, *name, args),
        [] => return None,
    };
    let plain = |w: &[u8]| {
        !w.is_empty()
            && w.iter()
                .all(|b| b.is_ascii_alphanumeric() || b"._-/+".contains(b))
    };
    if !plain(name) || !matches!(args, [b"\"$@\"" | b"${1+\"$@\"}"]) {
        return None;
    }
    Some(Forward {
        builtin,
        name: name.into(),
    })
}

/// Whether a `#!` line names a POSIX shell (`/bin/sh`, `/usr/bin/env bash`).
fn is_shell_line(line: &[u8]) -> bool {
    let mut words = line
        .split(|b| *b == b' ' || *b == b'\t')
        .filter(|w| !w.is_empty());
    let Some(first) = words.next() else {
        return false;
    };
    let program = match first.rsplit(|b| *b == b'/').next() {
        Some(b"env") => words.next().unwrap_or_default(),
        Some(name) => name,
        None => return false,
    };
    matches!(
        program,
        b"sh" | b"bash" | b"dash" | b"ksh" | b"mksh" | b"ash" | b"zsh"
    )
}

fn trim(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |at| at + 1);
    &line[start..end.max(start)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarding_scripts_are_read_as_what_they_run() {
        type Case = (&'static [u8], Option<(bool, &'static [u8])>);
        let cases: &[Case] = &[
            (
                b"#!/usr/bin/sh\nbuiltin command \"$@\"\n",
                Some((true, b"command")),
            ),
            (
                b"#!/bin/sh\n# bash's builtin\n\nbuiltin cd \"$@\"",
                Some((true, b"cd")),
            ),
            (
                b"#!/usr/bin/env bash\nexec /usr/bin/vim \"$@\"\n",
                Some((false, b"/usr/bin/vim")),
            ),
            (b"#!/bin/sh\nvim ${1+\"$@\"}\n", Some((false, b"vim"))),
            (b"#!/bin/sh\nbuiltin command \"$@\"\necho done\n", None),
            (b"#!/bin/sh\nbuiltin command \"$1\"\n", None),
            (b"#!/usr/bin/python3\nbuiltin command \"$@\"\n", None),
            (b"#!/bin/sh\nexec $EDITOR \"$@\"\n", None),
            (b"builtin command \"$@\"\n", None),
            (b"#!", None),
            (b"", None),
        ];
        for (text, want) in cases {
            let got = read_forwarder(text).map(|f| (f.builtin, f.name.to_vec()));
            let want = want.map(|(b, n)| (b, n.to_vec()));
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(text));
        }
    }
}
