//! Deny and allow globs: the gitignore-ish dialect of [`PathRules::new`](super::PathRules::new),
//! compiled into one set, with a literal screen in front of it.

use std::fmt;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::RuleError;
use crate::needles::Needles;

/// A list of globs as written, compiled. One written glob may compile to several.
#[derive(Debug, Clone)]
pub(super) struct GlobList {
    pub(super) written: Vec<String>,
    pub(super) set: GlobSet,
    /// `owner[i]` is the index in `written` of compiled glob `i`.
    pub(super) owner: Vec<usize>,
    /// A literal each compiled glob requires (ignoring ASCII case), when every one has one:
    /// an ASCII path holding none of them matches no glob, which one automaton tells in a
    /// single pass instead of running the glob set (most paths an agent names match nothing).
    pub(super) required: Option<Needles>,
}

/// The longest run of letters, digits, `.`, `_` and `-` that every path `pattern` matches
/// must contain, outside classes and alternatives; None when there is none to be sure of.
pub(super) fn required_literal(pattern: &str) -> Option<&str> {
    if pattern.contains('\\') {
        return None;
    }
    let bytes = pattern.as_bytes();
    let literal = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let (mut best, mut run_start, mut i) = ((0, 0), 0, 0);
    while i < bytes.len() {
        let b = bytes[i];
        if literal(b) {
            i += 1;
            if i - run_start > best.1 - best.0 {
                best = (run_start, i);
            }
            continue;
        }
        // What a class or an alternative matches is not required: skip past its end.
        let close = match b {
            b'[' => Some(b']'),
            b'{' => Some(b'}'),
            _ => None,
        };
        i += 1;
        if let Some(close) = close {
            // `[]…]`, `[!]…]` and `[^]…]` hold a literal `]` first.
            if close == b']' {
                if matches!(bytes.get(i), Some(b'!' | b'^')) {
                    i += 1;
                }
                if bytes.get(i) == Some(&b']') {
                    i += 1;
                }
            }
            i = bytes[i..]
                .iter()
                .position(|&c| c == close)
                .map_or(bytes.len(), |k| i + k + 1);
        }
        run_start = i;
    }
    (best.1 > best.0).then(|| &pattern[best.0..best.1])
}

impl GlobList {
    pub(super) fn new(globs: &[String]) -> Result<GlobList, RuleError> {
        let mut builder = GlobSetBuilder::new();
        let mut owner = Vec::new();
        let mut literals = Some(Vec::new());
        for (index, glob) in globs.iter().enumerate() {
            let error = |message: String| RuleError {
                glob: glob.clone(),
                message,
            };
            for pattern in expand_glob(glob).map_err(|e| error(e.to_string()))? {
                // `pattern/**` too, so that matching the whole path once also finds a match on
                // any folder above it (what `first_match` promises).
                for pattern in [format!("{pattern}/**"), pattern] {
                    let compiled = GlobBuilder::new(&pattern)
                        .case_insensitive(true)
                        .literal_separator(true)
                        .build()
                        .map_err(|e| error(e.kind().to_string()))?;
                    builder.add(compiled);
                    owner.push(index);
                    literals = literals.and_then(|mut all: Vec<String>| {
                        all.push(required_literal(&pattern)?.to_string());
                        Some(all)
                    });
                }
            }
        }
        let set = builder.build().map_err(|e| RuleError {
            glob: e.glob().unwrap_or_default().to_string(),
            message: e.kind().to_string(),
        })?;
        let required = literals
            .filter(|all| !all.is_empty())
            .and_then(|all| Needles::new(&all));
        Ok(GlobList {
            written: globs.to_vec(),
            set,
            owner,
            required,
        })
    }

    pub(super) fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// The first glob (in written order) matching `relative` or one of its parent
    /// directories (gitignore: a matched directory covers everything under it).
    pub(super) fn first_match(&self, relative: &str) -> Option<&str> {
        // Globs ignore case beyond ASCII (`K` for the Kelvin sign), so only ASCII paths skip.
        if let Some(required) = &self.required
            && relative.is_ascii()
            && !required.occurs(relative.as_bytes(), false)
        {
            return None;
        }
        let candidate = globset::Candidate::new(relative);
        if !self.set.is_match_candidate(&candidate) {
            return None;
        }
        let best = self
            .set
            .matches_candidate(&candidate)
            .into_iter()
            .filter_map(|i| self.owner.get(i).copied())
            .min()?;
        self.written.get(best).map(String::as_str)
    }
}

/// A glob that names nothing [`expand_glob`] can translate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UnusableGlob {
    Empty,
    /// Only slashes: the root is matched as `.`, never by a glob of `/`.
    OnlyRoot,
}

impl fmt::Display for UnusableGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnusableGlob::Empty => "empty glob",
            UnusableGlob::OnlyRoot => "glob names only the root",
        })
    }
}

/// Translates one gitignore-ish glob into globset patterns (matched with `literal_separator`,
/// so `*` never crosses `/`):
///
/// * a leading `/` anchors the glob at the root and is dropped; a trailing `/` is dropped (a
///   directory match covers its contents anyway);
/// * a glob with no `/` left matches a name at any depth: `**/` is prepended;
/// * a glob ending in `/**` also matches the directory itself (`**/secrets/**` denies
///   `a/secrets` as well as `a/secrets/db.txt`).
pub(super) fn expand_glob(glob: &str) -> Result<Vec<String>, UnusableGlob> {
    if glob.is_empty() {
        return Err(UnusableGlob::Empty);
    }
    let anchored = glob.starts_with('/');
    let body = glob.trim_start_matches('/').trim_end_matches('/');
    if body.is_empty() {
        return Err(UnusableGlob::OnlyRoot);
    }
    let base = if !anchored && !body.contains('/') {
        format!("**/{body}")
    } else {
        body.to_string()
    };
    let mut patterns = vec![base.clone()];
    if let Some(dir) = base.strip_suffix("/**")
        && !dir.is_empty()
        && dir != "**"
    {
        patterns.push(dir.to_string());
    }
    Ok(patterns)
}
