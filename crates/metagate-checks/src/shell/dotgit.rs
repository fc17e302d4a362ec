//! Writes into a git repository's own folder (`.git/config`, `.git/hooks/…`, `.git/info/…`,
//! or a bare `NAME.git`): its settings and hooks run programs the next time git runs
//! (`core.fsmonitor` on `git status`, `pre-commit` on `git commit`), so a command may not
//! write there, in either mode: by a redirection, by a program that writes the files it
//! names (`cp`, `mv`, `tee`, `ln`, …), or by moving into the folder first (`cd .git`).

use super::{Finding, shown, unsupported};

/// Programs that create, replace or change the files their arguments name.
const WRITERS: &[&[u8]] = &[
    b"cp",
    b"mv",
    b"ln",
    b"link",
    b"install",
    b"tee",
    b"dd",
    b"rsync",
    b"tar",
    b"gtar",
    b"bsdtar",
    b"unzip",
    b"7z",
    b"7za",
    b"cpio",
    b"patch",
    b"touch",
    b"truncate",
    b"mkdir",
    b"mkfifo",
    b"mknod",
    b"chmod",
    b"chown",
    b"chgrp",
    b"setfacl",
    b"sed",
    b"gsed",
    b"awk",
    b"gawk",
    b"curl",
    b"wget",
    b"sort",
    b"uniq",
    b"split",
    b"csplit",
    b"xxd",
    b"iconv",
    b"shuf",
    b"gzip",
    b"gunzip",
    b"bzip2",
    b"bunzip2",
    b"xz",
    b"unxz",
    b"zstd",
    b"unzstd",
    b"zip",
    b"ar",
    b"base64",
    b"pax",
];

/// Whether the words of program `base` (or builtin `cd`, `pushd`) are held against this
/// rule. git itself is not: it writes its folders as git does, and what would make it run a
/// program (`--template`, settings) is refused by its own reading.
pub(super) fn watches(base: &[u8]) -> bool {
    WRITERS.contains(&base) || matches!(base, b"cd" | b"pushd")
}

/// Refused when `word` (as written, quotes removed; `exact` when bash passes it unchanged)
/// names a path inside a git folder, as a whole or after an `=` (`of=.git/config`,
/// `--output=.git/x`). An address (`https://host/repo.git`) names no local folder.
pub(super) fn check_word(word: &[u8], exact: bool) -> Result<(), Finding> {
    if memchr::memmem::find(word, b"://").is_some() {
        return Ok(());
    }
    let after = word
        .iter()
        .position(|b| *b == b'=')
        .map_or(&b""[..], |eq| &word[eq + 1..]);
    let hit = word
        .split(|b| *b == b'/')
        .chain(after.split(|b| *b == b'/'))
        .any(|c| names_git_folder(c, exact));
    if hit { Err(refused(word)) } else { Ok(()) }
}

/// Refused when a redirection's target names a path inside a git folder.
pub(super) fn check_target(path: &[u8], exact: bool) -> Result<(), Finding> {
    if path
        .split(|b| *b == b'/')
        .any(|c| names_git_folder(c, exact))
    {
        return Err(refused(path));
    }
    Ok(())
}

fn refused(word: &[u8]) -> Finding {
    unsupported(
        format!("a write into the git folder `{}`", shown(word, 60)),
        "git runs the programs its settings and hooks name (`core.fsmonitor`, `hooks/pre-commit`); the check refuses every write into a `.git` folder",
    )
}

/// Whether a path component is, or may become (a glob, braces), `.git` or a bare `NAME.git`.
fn names_git_folder(component: &[u8], exact: bool) -> bool {
    if component.ends_with(b".git") && component.len() >= 4 {
        return true;
    }
    if exact {
        return false;
    }
    let mut budget = 64;
    brace_forms_may_end_in_git(component, &mut budget)
}

/// Whether a form of `word` after brace expansion (`{.git,x}`) may end in `.git`; true
/// once more than `budget` forms would have to be looked at.
fn brace_forms_may_end_in_git(word: &[u8], budget: &mut usize) -> bool {
    if *budget == 0 {
        return true;
    }
    *budget -= 1;
    let Some(open) = word.iter().position(|b| *b == b'{') else {
        return may_end_in_git(word);
    };
    let mut depth = 0usize;
    let mut close = None;
    let mut commas = vec![];
    for (at, &b) in word.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(at);
                    break;
                }
            }
            b',' if depth == 1 => commas.push(at),
            _ => {}
        }
    }
    let Some(close) = close else {
        return may_end_in_git(word);
    };
    let (prefix, suffix) = (&word[..open], &word[close + 1..]);
    let mut starts = vec![open + 1];
    starts.extend(commas.iter().map(|c| c + 1));
    let mut ends = commas.clone();
    ends.push(close);
    if commas.is_empty() {
        // `{x}` is no expansion: the braces stay.
        let literal: Vec<u8> = [prefix, &word[open..=close], suffix].concat();
        return may_end_in_git(&literal) || literal.ends_with(b".git");
    }
    starts.iter().zip(&ends).any(|(&s, &e)| {
        let form: Vec<u8> = [prefix, &word[s..e], suffix].concat();
        form.ends_with(b".git") || brace_forms_may_end_in_git(&form, budget)
    })
}

/// Whether a glob may match a name ending in `.git`: read from its end, each of `t`, `i`,
/// `g`, `.` must be matched by itself, `?`, a `[…]` class, or the glob must reach a `*`
/// first (which may absorb the rest). A `]` is taken to match (conservatively).
fn may_end_in_git(pattern: &[u8]) -> bool {
    let mut rest = pattern;
    for want in [b't', b'i', b'g', b'.'] {
        let Some((&last, before)) = rest.split_last() else {
            return false;
        };
        match last {
            b'*' | b']' => return true,
            b'?' => {}
            c if c == want => {}
            _ => return false,
        }
        rest = before;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_into_git_folders_are_found() {
        for (base, word, exact) in [
            (&b"cp"[..], &b".git/config"[..], true),
            (b"cp", b"./.git/hooks/pre-commit", true),
            (b"cp", b"sub/.git/info/attributes", true),
            (b"cp", b"repo.git/config", true),
            (b"dd", b"of=.git/config", true),
            (b"cp", b".gi?/config", false),
            (b"cp", b".[g]it/config", false),
            (b"cp", b"*/hooks", false),
            (b"cp", b"{.git,x}/config", false),
            (b"cp", b"{.g,x}it/config", false),
            (b"cp", b"{a,{b,.gi}t}/config", false),
            (b"cd", b".git", true),
        ] {
            assert!(
                watches(base) && check_word(word, exact).is_err(),
                "{}",
                String::from_utf8_lossy(word)
            );
        }
        for (base, word, exact) in [
            (&b"cp"[..], &b"a.txt"[..], true),
            (b"cp", b"*.txt", false),
            (b"cp", b".github/workflows/ci.yml", true),
            (b"cp", b".gitignore", true),
            (b"curl", b"https://example.com/a/b.git", true),
            (b"cd", b"src", true),
            (b"mkdir", b"build/{debug,release}", false),
        ] {
            assert!(
                watches(base) && check_word(word, exact).is_ok(),
                "{}",
                String::from_utf8_lossy(word)
            );
        }
        assert!(check_target(b".git/config", true).is_err());
        assert!(check_target(b"out.txt", true).is_ok());
    }
}
