//! metagate's own files (its policy and its store) and the variables naming them: a command
//! that names one is refused, however it spells it.
//!
//! Files are matched case-insensitively by name as a whole path component (also the
//! store's `-wal`, `-shm` and `-journal` companions), by folder, and by folder relative to
//! a home folder, after quote removal, `$'…'` decoding, `~` and `$HOME` expansion and path
//! normalisation; a glob is matched as a pattern. A protected variable named anywhere
//! (`$METAGATE_DB`, `printenv METAGATE_DB`) is a finding.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::Finding;
use super::lex::{Mark, MarkKind, is_name_char};
use crate::needles::Needles;

/// The longest glob matched against the protected files.
const MAX_PATTERN: usize = 4096;

/// One element of a word read as a pattern.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Piece {
    Byte(u8),
    /// `*`: any run of bytes other than `/`.
    AnyRun,
    /// `?` or `[…]`: one byte other than `/`.
    AnyOne,
}

/// A protected file, in the forms it is looked for.
struct Target {
    display: String,
    /// The whole path, normalised and lower-case.
    full: Vec<u8>,
    /// The folder (empty when it is too short to tell apart, or a home folder).
    dir: Vec<u8>,
    /// The folder below a home folder (`.local/state/metagate`).
    tail: Vec<u8>,
    /// The file's name and its SQLite companions.
    names: Vec<Vec<u8>>,
    /// The folder is metagate's own (named `metagate`): everything in it is protected. Any
    /// other folder (a project's, holding `./metagate.toml`) is protected only as a whole.
    own_dir: bool,
}

/// The files a command must never touch and the variables naming them, prepared once for
/// many commands.
pub struct Protected {
    targets: Vec<Target>,
    vars: Vec<Vec<u8>>,
    homes: Vec<Vec<u8>>,
    /// The same, lower-cased, each with whether [`normalize`] leaves it as it is.
    lower_homes: Vec<(Vec<u8>, bool)>,
    /// Every name, folder, tail and variable, as one automaton: most words hold none of
    /// them, and one step a byte tells so (None: it could not be built, so every word is
    /// searched in full).
    screen: Option<Needles>,
}

fn infer_home(p: &[u8]) -> Option<Vec<u8>> {
    for prefix in [&b"/home/"[..], b"/Users/"] {
        if let Some(rest) = p.strip_prefix(prefix) {
            let user = rest.split(|b| *b == b'/').next().unwrap_or_default();
            if !user.is_empty() {
                let mut h = prefix.to_vec();
                h.extend_from_slice(user);
                return Some(h);
            }
        }
    }
    for root in [&b"/root"[..], b"/var/root"] {
        if p.starts_with(root) && p.get(root.len()) == Some(&b'/') {
            return Some(root.to_vec());
        }
    }
    None
}

impl Protected {
    /// `paths` are absolute; `vars` are variable names such as "METAGATE_DB"; `home` is the
    /// home folder `~` and `$HOME` stand for (other homes are inferred from the paths).
    pub(crate) fn new(paths: &[PathBuf], vars: &[String], home: Option<&Path>) -> Protected {
        Protected::with_binary(paths, vars, home, None)
    }

    /// [`Protected::new`], and the running binary, protected by its whole path (its name
    /// alone, `metagate`, is also a project's and a crate's).
    pub fn with_binary(
        paths: &[PathBuf],
        vars: &[String],
        home: Option<&Path>,
        binary: Option<&Path>,
    ) -> Protected {
        let mut homes: Vec<Vec<u8>> = Vec::new();
        if let Some(h) = home {
            let h = normalize(h.to_string_lossy().as_bytes()).into_owned();
            if h.first() == Some(&b'/') && h.len() > 1 {
                homes.push(h);
            }
        }
        for p in paths {
            if let Some(h) = infer_home(&normalize(p.to_string_lossy().as_bytes()))
                && !homes.contains(&h)
            {
                homes.push(h);
            }
        }
        let lower_homes: Vec<Vec<u8>> = homes.iter().map(|h| h.to_ascii_lowercase()).collect();
        let mut targets = Vec::new();
        for p in paths {
            let display = p.to_string_lossy().to_string();
            let full = normalize(display.as_bytes()).to_ascii_lowercase();
            if full.is_empty() || full == b"/" {
                continue;
            }
            let (dir, name) = match full.iter().rposition(|b| *b == b'/') {
                Some(k) => (full[..k].to_vec(), full[k + 1..].to_vec()),
                None => (Vec::new(), full.clone()),
            };
            let components = dir.split(|b| *b == b'/').filter(|c| !c.is_empty()).count();
            let dir = if components >= 2 && !lower_homes.contains(&dir) {
                dir
            } else {
                Vec::new()
            };
            let mut tail = Vec::new();
            for h in &lower_homes {
                if let Some(rest) = dir.strip_prefix(h.as_slice())
                    && let Some(rest) = rest.strip_prefix(b"/")
                    && rest.contains(&b'/')
                {
                    tail = rest.to_vec();
                }
            }
            let names = if name.is_empty() {
                Vec::new()
            } else {
                ["", "-wal", "-shm", "-journal"]
                    .iter()
                    .map(|s| [name.as_slice(), s.as_bytes()].concat())
                    .collect()
            };
            let own_dir = dir.rsplit(|b| *b == b'/').next() == Some(b"metagate");
            targets.push(Target {
                display,
                full,
                dir,
                tail,
                names,
                own_dir,
            });
        }
        if let Some(binary) = binary {
            let display = binary.to_string_lossy().to_string();
            let full = normalize(display.as_bytes()).to_ascii_lowercase();
            if full.len() > 1 {
                targets.push(Target {
                    display,
                    dir: full.clone(),
                    full,
                    tail: Vec::new(),
                    names: Vec::new(),
                    own_dir: false,
                });
            }
        }
        let vars: Vec<Vec<u8>> = vars
            .iter()
            .filter(|v| !v.is_empty())
            .map(|v| v.as_bytes().to_vec())
            .collect();
        let needles: Vec<&[u8]> = targets
            .iter()
            .flat_map(|t| t.names.iter().chain([&t.dir, &t.tail]))
            .chain(&vars)
            .filter(|n| !n.is_empty())
            .map(Vec::as_slice)
            .collect();
        let screen = Needles::new(&needles);
        Protected {
            targets,
            vars,
            lower_homes: lower_homes
                .into_iter()
                .map(|h| {
                    let normal = is_normal(&h);
                    (h, normal)
                })
                .collect(),
            homes,
            screen,
        }
    }

    /// Nothing is protected.
    pub fn none() -> Protected {
        Protected::new(&[], &[], None)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.targets.is_empty() && self.vars.is_empty()
    }

    /// Whether a name, folder, tail or variable could occur in `hay` (with quotes and
    /// backslashes skipped when `unquote`).
    fn may_occur(&self, hay: &[u8], unquote: bool) -> bool {
        self.screen.as_ref().is_none_or(|s| s.occurs(hay, unquote))
    }

    fn may_occur_joined(&self, first: &[u8], second: &[u8]) -> bool {
        self.screen
            .as_ref()
            .is_none_or(|s| s.occurs_joined(first, second))
    }

    /// The first target (in order) `hay` names, ignoring case: its name (or a companion's)
    /// as a whole path component, its folder or tail as a whole path (or, for metagate's own
    /// folder, anything in it).
    fn target_in(&self, hay: &[u8]) -> Option<&Target> {
        self.targets.iter().find(|t| {
            t.names.iter().any(|n| occurs_whole(hay, n, true))
                || [&t.dir, &t.tail]
                    .into_iter()
                    .any(|n| occurs_whole(hay, n, t.own_dir))
        })
    }

    /// The first variable `hay` names as a whole identifier.
    fn var_in(&self, hay: &[u8]) -> Option<&[u8]> {
        let names = |v: &[u8]| {
            memchr::memchr_iter(v[0], hay).any(|at| {
                hay[at..].starts_with(v)
                    && !(at > 0 && is_name_char(hay[at - 1]))
                    && !hay.get(at + v.len()).is_some_and(|b| is_name_char(*b))
            })
        };
        self.vars.iter().map(Vec::as_slice).find(|v| names(v))
    }

    /// A word of a command that removes or moves what it names (`rm`, `mv`, …): refused when
    /// it names, or may name, a folder holding one of metagate's own files (`~/.local/state`,
    /// `~`, `/`, the project folder). Removing the folder removes the file, and with the store
    /// go the limits, the loop breaker and the grant audit. The working folder of the command
    /// is not known here, so a relative word is refused when it is only `.` and `..` or when
    /// one of its parts could be a folder on the way to such a file.
    pub(super) fn removal(&self, letters: &[u8], tilde: bool) -> Result<(), Finding> {
        if self.targets.is_empty() || letters.first() == Some(&b'-') {
            return Ok(());
        }
        // The policy and the store: what is lost with their folder. The running binary (no
        // names) is refused by its whole path elsewhere, and its folders (`target`, `bin`)
        // are everyday things to clean.
        let mut state = self.targets.iter().filter(|t| !t.names.is_empty());
        let lower = letters.to_ascii_lowercase();
        let mut absolute: Vec<Vec<u8>> = Vec::new();
        let home_rest = if tilde && matches!(lower.get(1), None | Some(b'/')) {
            Some(&lower[1..])
        } else {
            ["$home", "${home}"]
                .iter()
                .find_map(|v| lower.strip_prefix(v.as_bytes()))
                .filter(|rest| matches!(rest.first(), None | Some(b'/')))
        };
        if let Some(rest) = home_rest {
            for (home, _) in &self.lower_homes {
                let mut p = home.clone();
                p.extend_from_slice(rest);
                absolute.push(p);
            }
        } else if lower.first() == Some(&b'/') {
            absolute.push(lower.clone());
        }
        if !absolute.is_empty() {
            for path in &absolute {
                if let Some(t) = state.clone().find(|t| holds(path, &t.full)) {
                    return Err(self.hit(t));
                }
            }
            return Ok(());
        }
        // Relative: the command's own folder is unknown.
        let parts: Vec<&[u8]> = lower
            .split(|b| *b == b'/')
            .filter(|p| !p.is_empty())
            .collect();
        if parts.iter().all(|p| *p == b"." || *p == b"..")
            && let Some(t) = state.next()
        {
            return Err(self.hit(t));
        }
        for t in state {
            let on_the_way = t.full.split(|b| *b == b'/').rev().skip(1);
            for folder in on_the_way.filter(|f| !f.is_empty()) {
                if parts.iter().any(|p| component_matches(p, folder)) {
                    return Err(self.hit(t));
                }
            }
        }
        Ok(())
    }

    fn hit(&self, t: &Target) -> Finding {
        Finding::Protected {
            path: t.display.clone(),
        }
    }

    fn vars_in(&self, hay: &[u8]) -> Result<(), Finding> {
        match self.var_in(hay) {
            Some(v) => Err(Finding::Protected {
                path: format!("${}", String::from_utf8_lossy(v)),
            }),
            None => Ok(()),
        }
    }

    /// The whole command, its quotes and backslashes (and line continuations) removed:
    /// names that no single word holds (in a comment, across a here-document) still count.
    pub(super) fn check_text(&self, text: &[u8]) -> Result<(), Finding> {
        if self.is_empty() {
            return Ok(());
        }
        let joined: Cow<'_, [u8]> = if super::parse::has_continuation(text) {
            Cow::Owned(
                text.split(|b| *b == b'\n')
                    .fold(Vec::new(), |mut out, line| {
                        match line.strip_suffix(b"\\") {
                            Some(l) => out.extend_from_slice(l),
                            None => {
                                out.extend_from_slice(line);
                                out.push(b'\n');
                            }
                        }
                        out
                    }),
            )
        } else {
            Cow::Borrowed(text)
        };
        if !self.may_occur(&joined, true) {
            return Ok(());
        }
        let stripped = unquoted(&joined);
        self.vars_in(&stripped)?;
        match self.target_in(&stripped) {
            Some(t) => Err(self.hit(t)),
            None => Ok(()),
        }
    }

    /// One word: its letters as the lexer read them (expansions kept as written), and
    /// where bash still acts on them.
    pub(super) fn check_word(&self, letters: &[u8], marks: &[Mark]) -> Result<(), Finding> {
        if self.is_empty() {
            return Ok(());
        }
        if marks.is_empty() {
            // Only its letters: the word as a path, normalised.
            let normal = normalize(letters);
            if !self.may_occur(&normal, false) {
                return Ok(());
            }
            self.vars_in(letters)?;
            return self.literal(&normal.to_ascii_lowercase());
        }
        if marks.iter().any(|m| m.kind == MarkKind::BraceOpen) {
            let mut budget = MAX_BRACE_WORDS;
            for (letters, marks) in expand_braces(letters, marks, &mut budget) {
                self.check_word(&letters, &marks)?;
            }
            return Ok(());
        }
        let tilde = marks.first().is_some_and(|m| m.kind == MarkKind::Tilde);
        self.vars_in(letters)?;
        let mut lower = letters.to_ascii_lowercase();
        let globbing = marks.iter().any(|m| m.kind != MarkKind::Tilde);
        if tilde && !globbing && matches!(lower.get(1), None | Some(b'/')) {
            self.literal(&normalize(&lower))?;
            let rest = &lower[1..];
            let rest_normal = is_normal(rest) && rest != b"/";
            for (home, home_normal) in &self.lower_homes {
                if *home_normal && rest_normal && !self.may_occur_joined(home, rest) {
                    continue;
                }
                let mut expanded = Vec::with_capacity(home.len() + rest.len());
                expanded.extend_from_slice(home);
                expanded.extend_from_slice(rest);
                self.literal(&normalize(&expanded))?;
            }
            return Ok(());
        }
        // A pattern: globs as wildcards, expansions as their text (for `$HOME`).
        let mut pattern: Vec<Piece> = Vec::with_capacity(lower.len());
        let mut expanded: Vec<bool> = Vec::with_capacity(lower.len());
        let mut i = 0;
        let mut marks_iter = marks.iter().peekable();
        while i < lower.len() {
            let mark = marks_iter.peek().filter(|m| m.at == i).copied();
            match mark {
                Some(m) => {
                    marks_iter.next();
                    match m.kind {
                        MarkKind::Star => {
                            pattern.push(Piece::AnyRun);
                            expanded.push(false);
                            i += 1;
                        }
                        MarkKind::Question => {
                            pattern.push(Piece::AnyOne);
                            expanded.push(false);
                            i += 1;
                        }
                        MarkKind::Bracket => {
                            let close = (i + 2..lower.len())
                                .find(|&j| lower[j] == b']')
                                .filter(|&j| !lower[i..j].contains(&b'/'));
                            match close {
                                Some(j) => {
                                    pattern.push(Piece::AnyOne);
                                    i = j + 1;
                                }
                                None => {
                                    pattern.push(Piece::Byte(b'['));
                                    i += 1;
                                }
                            }
                            expanded.push(false);
                        }
                        MarkKind::Expansion => {
                            for &b in &lower[i..(i + m.len).min(lower.len())] {
                                pattern.push(Piece::Byte(b));
                                expanded.push(true);
                            }
                            i += m.len.max(1);
                        }
                        MarkKind::Tilde => {
                            pattern.push(Piece::Byte(b'~'));
                            expanded.push(false);
                            i += 1;
                        }
                        MarkKind::BraceOpen | MarkKind::BraceComma | MarkKind::BraceClose => {
                            pattern.push(Piece::Byte(lower[i]));
                            expanded.push(false);
                            i += 1;
                        }
                    }
                }
                None => {
                    pattern.push(Piece::Byte(lower[i]));
                    expanded.push(false);
                    i += 1;
                }
            }
        }
        lower.clear();
        let mut variants = vec![pattern.clone()];
        // An expansion may be empty or end in `/`: names are matched as whole components,
        // so what follows one also starts a component (`"$d"metagate.db`).
        if expanded.contains(&true) {
            let mut cut = Vec::with_capacity(pattern.len());
            for (k, piece) in pattern.iter().enumerate() {
                if !expanded[k] {
                    cut.push(*piece);
                } else if k == 0 || !expanded[k - 1] {
                    cut.push(Piece::Byte(b'/'));
                }
            }
            variants.push(cut);
        }
        variants.extend(self.home_candidates(&pattern, tilde));
        for v in &variants {
            self.pattern(v)?;
        }
        Ok(())
    }

    /// `pattern` with a leading `~`/`~user` and every `$HOME`/`${HOME}` replaced by each
    /// home folder that could be meant.
    fn home_candidates(&self, pattern: &[Piece], tilde: bool) -> Vec<Vec<Piece>> {
        let bytes = |s: &[u8]| -> Vec<Piece> {
            s.iter()
                .map(|b| Piece::Byte(b.to_ascii_lowercase()))
                .collect()
        };
        let mut out = Vec::new();
        let has_home = contains(&pattern_bytes(pattern), b"$home");
        if !tilde && !has_home {
            return out;
        }
        let user_end = if tilde {
            pattern
                .iter()
                .position(|p| *p == Piece::Byte(b'/'))
                .unwrap_or(pattern.len())
        } else {
            0
        };
        let user: Vec<u8> = if tilde {
            pattern_bytes(&pattern[1..user_end])
        } else {
            Vec::new()
        };
        let mut homes: Vec<Vec<u8>> = Vec::new();
        if user.is_empty() {
            homes.extend(self.homes.iter().cloned());
        } else {
            for h in &self.homes {
                if h.rsplit(|b| *b == b'/')
                    .next()
                    .map(|l| l.to_ascii_lowercase())
                    == Some(user.clone())
                {
                    homes.push(h.clone());
                }
            }
            homes.push([&b"/home/"[..], &user].concat());
            homes.push([&b"/users/"[..], &user].concat());
            if user == b"root" {
                homes.push(b"/root".to_vec());
            }
        }
        for h in homes {
            let home = bytes(&h);
            let mut v: Vec<Piece> = if tilde {
                let mut v = home.clone();
                v.extend_from_slice(&pattern[user_end..]);
                v
            } else {
                pattern.to_vec()
            };
            for needle in [&b"${home}"[..], b"$home"] {
                let mut k = 0;
                while k + needle.len() <= v.len() {
                    let matches = v[k..k + needle.len()]
                        .iter()
                        .zip(needle)
                        .all(|(p, b)| *p == Piece::Byte(*b));
                    let bounded = needle.len() == 7
                        || !matches!(v.get(k + needle.len()), Some(Piece::Byte(b)) if is_name_char(*b));
                    if matches && bounded {
                        v.splice(k..k + needle.len(), home.iter().copied());
                        k += home.len();
                    } else {
                        k += 1;
                    }
                }
            }
            out.push(v);
        }
        out
    }

    /// A normalised, lower-case word without globs.
    fn literal(&self, bytes: &[u8]) -> Result<(), Finding> {
        if !self.may_occur(bytes, false) {
            return Ok(());
        }
        match self.target_in(bytes) {
            Some(t) => Err(self.hit(t)),
            None => Ok(()),
        }
    }

    fn pattern(&self, pattern: &[Piece]) -> Result<(), Finding> {
        let glob = pattern.iter().any(|p| !matches!(p, Piece::Byte(_)));
        if !glob {
            return self.literal(&normalize(&pattern_bytes(pattern)));
        }
        // Matching costs the pattern's length times each file's: bounded, so the check
        // stays linear in the command.
        if pattern.len() > MAX_PATTERN {
            return Err(super::unsupported(
                format!("a glob longer than {MAX_PATTERN} bytes"),
                "the check does not match patterns that long against metagate's own files",
            ));
        }
        let letters = pattern
            .iter()
            .filter(|p| matches!(p, Piece::Byte(b) if b.is_ascii_alphanumeric()))
            .count();
        let all = vec![true; pattern.len() + 1];
        let mut component_starts = vec![false; pattern.len() + 1];
        component_starts[0] = true;
        for (k, p) in pattern.iter().enumerate() {
            if *p == Piece::Byte(b'/') {
                component_starts[k + 1] = true;
            }
        }
        let dir_end = |set: &[bool]| {
            set.iter()
                .enumerate()
                .any(|(s, on)| *on && (s == pattern.len() || pattern[s] == Piece::Byte(b'/')))
        };
        for t in &self.targets {
            // A folder other than metagate's own is matched only as a whole.
            let dir_hit = |set: &[bool]| {
                if t.own_dir {
                    dir_end(set)
                } else {
                    set.iter()
                        .enumerate()
                        .any(|(s, on)| *on && pattern[s..].iter().all(|p| *p == Piece::Byte(b'/')))
                }
            };
            let full = run(pattern, all.clone(), &t.full);
            let mut found = full[pattern.len()]
                || (!t.dir.is_empty() && dir_hit(&run(pattern, all.clone(), &t.dir)));
            if !found && letters >= 3 {
                found = (!t.tail.is_empty()
                    && dir_hit(&run(pattern, component_starts.clone(), &t.tail)))
                    || t.names
                        .iter()
                        .any(|n| run(pattern, component_starts.clone(), n)[pattern.len()]);
            }
            if found {
                return Err(self.hit(t));
            }
        }
        Ok(())
    }
}

/// Words one word may expand to by brace expansion, as far as they are checked.
const MAX_BRACE_WORDS: usize = 64;

/// The words bash makes of `letters` by brace expansion, marks moved along. A group
/// `{a,b}` gives one word for each part; a sequence `{1..9}` (or anything past
/// `budget` words) stands as a `*`. Every result is free of brace marks.
fn expand_braces(letters: &[u8], marks: &[Mark], budget: &mut usize) -> Vec<(Vec<u8>, Vec<Mark>)> {
    let Some(open) = marks.iter().position(|m| m.kind == MarkKind::BraceOpen) else {
        return vec![(letters.to_vec(), marks.to_vec())];
    };
    let mut depth = 0usize;
    let mut close = None;
    let mut commas = Vec::new();
    for (k, m) in marks.iter().enumerate().skip(open) {
        match m.kind {
            MarkKind::BraceOpen => depth += 1,
            MarkKind::BraceComma if depth == 1 => commas.push(k),
            MarkKind::BraceClose => {
                depth -= 1;
                if depth == 0 {
                    close = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let without = |drop: &[usize]| -> Vec<Mark> {
        marks
            .iter()
            .enumerate()
            .filter(|(k, _)| !drop.contains(k))
            .map(|(_, m)| *m)
            .collect()
    };
    let Some(close) = close else {
        // No group: the braces are letters.
        let rest = without(&[open]);
        return expand_braces(letters, &rest, budget);
    };
    let (from, to) = (marks[open].at, marks[close].at);
    let sequence = commas.is_empty() && memchr::memmem::find(&letters[from..to], b"..").is_some();
    if commas.is_empty() && !sequence {
        let rest = without(&[open, close]);
        return expand_braces(letters, &rest, budget);
    }
    if sequence || *budget < commas.len() + 1 {
        // What the group makes is matched as a `*`.
        let mut out_letters = letters[..from].to_vec();
        out_letters.push(b'*');
        out_letters.extend_from_slice(&letters[to + 1..]);
        let shift = to + 1 - from - 1;
        let mut out_marks: Vec<Mark> = marks[..open].to_vec();
        out_marks.push(Mark {
            at: from,
            len: 1,
            kind: MarkKind::Star,
        });
        out_marks.extend(marks[close + 1..].iter().map(|m| Mark {
            at: m.at - shift,
            ..*m
        }));
        return expand_braces(&out_letters, &out_marks, budget);
    }
    *budget -= commas.len() + 1;
    let mut bounds = vec![open];
    bounds.extend(&commas);
    bounds.push(close);
    let mut out = Vec::new();
    for pair in bounds.windows(2) {
        let (a, b) = (marks[pair[0]].at + 1, marks[pair[1]].at);
        let mut word = letters[..from].to_vec();
        word.extend_from_slice(&letters[a..b]);
        word.extend_from_slice(&letters[to + 1..]);
        let mut word_marks: Vec<Mark> = marks[..open].to_vec();
        word_marks.extend(marks[pair[0] + 1..pair[1]].iter().map(|m| Mark {
            at: m.at - a + from,
            ..*m
        }));
        let tail_shift = (to + 1) as isize - (from + (b - a)) as isize;
        word_marks.extend(marks[close + 1..].iter().map(|m| Mark {
            at: (m.at as isize - tail_shift) as usize,
            ..*m
        }));
        out.extend(expand_braces(&word, &word_marks, budget));
    }
    out
}

fn pattern_bytes(pattern: &[Piece]) -> Vec<u8> {
    pattern
        .iter()
        .map(|p| match p {
            Piece::Byte(b) => *b,
            Piece::AnyRun => b'*',
            Piece::AnyOne => b'?',
        })
        .collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// A byte that continues a path component (globs included: `x*` is one component).
fn component_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80 || b"._-+~@%,*?[]".contains(&b)
}

/// Whether `needle` occurs in `hay`, ignoring ASCII case, starting a path component and
/// ending one; `inside`: or followed by `/` and more (a path inside it); otherwise only by
/// slashes.
fn occurs_whole(hay: &[u8], needle: &[u8], inside: bool) -> bool {
    if needle.is_empty() || hay.len() < needle.len() {
        return false;
    }
    let starts = |at: usize| at == 0 || !component_byte(hay[at - 1]) || needle[0] == b'/';
    let ends = |end: usize| {
        let rest = &hay[end..];
        if inside {
            return rest.first().is_none_or(|b| !component_byte(*b));
        }
        let slashes = rest.iter().take_while(|b| **b == b'/').count();
        rest.get(slashes)
            .is_none_or(|b| !component_byte(*b) && *b != b'/')
    };
    (0..=hay.len() - needle.len()).any(|at| {
        hay[at..at + needle.len()].eq_ignore_ascii_case(needle)
            && starts(at)
            && ends(at + needle.len())
    })
}

/// ε-closure: a `*` may match nothing.
fn close(pattern: &[Piece], set: &mut [bool]) {
    for s in 0..pattern.len() {
        if set[s] && pattern[s] == Piece::AnyRun {
            set[s + 1] = true;
        }
    }
}

/// Pattern states reachable after reading `text` from the `set` states.
fn run(pattern: &[Piece], mut set: Vec<bool>, text: &[u8]) -> Vec<bool> {
    close(pattern, &mut set);
    for &c in text {
        let mut next = vec![false; pattern.len() + 1];
        let mut alive = false;
        for s in 0..pattern.len() {
            if !set[s] {
                continue;
            }
            match pattern[s] {
                Piece::Byte(b) if b == c => next[s + 1] = true,
                Piece::AnyOne if c != b'/' => next[s + 1] = true,
                Piece::AnyRun if c != b'/' => next[s] = true,
                _ => continue,
            }
            alive = true;
        }
        if !alive {
            return next;
        }
        close(pattern, &mut next);
        set = next;
    }
    set
}

/// `text` without its quotes and backslashes.
fn unquoted(text: &[u8]) -> Cow<'_, [u8]> {
    let mut removed = memchr::memchr3_iter(b'\\', b'\'', b'"', text).peekable();
    if removed.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut owned = Vec::with_capacity(text.len());
    let mut start = 0;
    for at in removed {
        owned.extend_from_slice(&text[start..at]);
        start = at + 1;
    }
    owned.extend_from_slice(&text[start..]);
    Cow::Owned(owned)
}

/// Lexical path normalisation: `//` → `/`, `/./` → `/`, `a/../` → ``. Most paths are
/// already normal and come back as they are.
fn normalize(p: &[u8]) -> Cow<'_, [u8]> {
    if is_normal(p) {
        return Cow::Borrowed(p);
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    for (i, comp) in p.split(|b| *b == b'/').enumerate() {
        match comp {
            b"" if i > 0 => {}
            b"." if i > 0 => {}
            b".."
                if parts
                    .last()
                    .is_some_and(|l| !l.is_empty() && *l != b".." && *l != b".") =>
            {
                parts.pop();
            }
            _ => parts.push(comp),
        }
    }
    let mut out = parts.join(&b'/');
    if out.is_empty() && p.first() == Some(&b'/') {
        out.push(b'/');
    }
    Cow::Owned(out)
}

/// Whether [`normalize`] leaves `p` as it is: no slash is doubled or ends it (but `/`
/// itself), and none starts a `.` or `..` component.
fn is_normal(p: &[u8]) -> bool {
    (0..p.len())
        .filter(|&at| p[at] == b'/')
        .all(|at| match &p[at + 1..] {
            [] => at == 0,
            [b'/', ..] | [b'.'] | [b'.', b'/', ..] | [b'.', b'.'] | [b'.', b'.', b'/', ..] => false,
            _ => true,
        })
}

/// Whether the folder `path` (absolute, lower-case; a glob in it stands for anything from its
/// first wildcard on) holds `file`: `file` is below it.
fn holds(path: &[u8], file: &[u8]) -> bool {
    let literal_end = path
        .iter()
        .position(|b| matches!(b, b'*' | b'?' | b'['))
        .map(|at| path[..at].iter().rposition(|b| *b == b'/').unwrap_or(0) + 1);
    let path = normalize(&path[..literal_end.unwrap_or(path.len())]).into_owned();
    let folder = path.strip_suffix(b"/").unwrap_or(&path);
    if folder.is_empty() {
        return true;
    }
    file.len() > folder.len() && file.starts_with(folder) && file[folder.len()] == b'/'
}

/// Whether the word part `pattern` (`*`, `?` and `[…]` as bash reads them, else literal) may
/// name the folder `name`. A bare `*` does not name a dotted folder, as bash's globbing
/// leaves those out.
fn component_matches(pattern: &[u8], name: &[u8]) -> bool {
    if !pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
        return pattern == name;
    }
    if name.first() == Some(&b'.') && pattern.first() != Some(&b'.') {
        return false;
    }
    glob_matches(pattern, name)
}

fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|k| glob_matches(rest, &name[k..])),
        Some((b'?', rest)) => !name.is_empty() && glob_matches(rest, &name[1..]),
        // A bracket expression: any one byte (wider than bash, never narrower).
        Some((b'[', rest)) => match rest.iter().skip(1).position(|b| *b == b']') {
            Some(close) => !name.is_empty() && glob_matches(&rest[close + 2..], &name[1..]),
            None => name.first() == Some(&b'[') && glob_matches(rest, &name[1..]),
        },
        Some((b, rest)) => name.first() == Some(b) && glob_matches(rest, &name[1..]),
    }
}
