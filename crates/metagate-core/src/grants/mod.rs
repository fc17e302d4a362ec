//! Grants (docs/grants.md): an operator's time-boxed yes for one capability, optionally bound
//! to a session and scoped to paths or hosts. This module is pure: it says whether a grant is
//! live and covers a call, reads durations and scopes, strips grant-like fields from calls, and
//! runs the interactive flow behind [`flow::Prompter`]. The store keeps grants ([`store`]).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::policy::Policy;

pub mod seal;
use metagate_checks::host;

/// How long a grant lasts when nobody says (sudo's timestamp default).
pub const DEFAULT_DURATION_MS: i64 = 5 * 60 * 1000;
/// The longest a grant may last: a grant is a "yes for now", not a standing permission.
const MAX_DURATION_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// How long a "this session only" grant lasts at most.
pub const SESSION_DURATION_MS: i64 = 12 * 60 * 60 * 1000;

/// Why what an operator typed for a grant (an id, a `--scope`, a `--for` duration), or a scope
/// entry read back from the store, cannot be used: a sentence that says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantParseError(String);

impl fmt::Display for GrantParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GrantParseError {}

/// A grant id: 128 random bits, shown as `mg_` and 32 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GrantId(String);

impl GrantId {
    /// The id for 16 random bytes (the caller draws them from the OS).
    pub fn from_bytes(bytes: [u8; 16]) -> GrantId {
        let mut s = String::with_capacity(35);
        s.push_str("mg_");
        for b in bytes {
            s.push_str(&format!("{b:02x}"));
        }
        GrantId(s)
    }

    /// Reads an id as an operator types it (surrounding spaces and upper-case hex are fine).
    pub fn parse(text: &str) -> Result<GrantId, GrantParseError> {
        let t = text.trim().to_ascii_lowercase();
        match t.strip_prefix("mg_") {
            Some(hex) if hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(GrantId(t))
            }
            _ => Err(GrantParseError(format!(
                "{text:?} is not a grant id (mg_ followed by 32 hex digits; see `metagate permit list`)"
            ))),
        }
    }

    /// An id read back from the store: rows are only written with ids that parse, and a
    /// forged one is still shown as it is stored.
    pub fn from_stored(text: String) -> GrantId {
        GrantId::parse(&text).unwrap_or(GrantId(text))
    }

    /// The id as shown and stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GrantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether a whole string is a grant id.
pub(crate) fn looks_like_grant_id(text: &str) -> bool {
    let t = text.trim();
    t.len() == 35
        && t.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("mg_"))
        && GrantId::parse(t).is_ok()
}

/// What a scope entry admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeEntry {
    /// A file or folder, absolute and resolved (symlinks and `..`): it covers itself and
    /// everything under it, compared by path components.
    Path(PathBuf),
    /// A host, lower case without a trailing dot: it covers exactly that host
    /// (`*.example.com` covers its subdomains, not `example.com` itself).
    Host(String),
    /// A glob over resolved absolute paths, its literal folder resolved like a path:
    /// `*` and `?` stay within one component, `**` crosses them.
    Glob(String),
}

impl ScopeEntry {
    /// As stored and shown: `/abs/path` or `host:name`.
    pub fn to_text(&self) -> String {
        match self {
            ScopeEntry::Path(p) => p.display().to_string(),
            ScopeEntry::Host(h) => format!("host:{h}"),
            ScopeEntry::Glob(g) => g.clone(),
        }
    }

    /// As stored: the kind is spelled out (`path:`, `host:`, `glob:`), since a folder's name
    /// may hold `[`, `*` or `{` and must never be read back as a glob.
    pub fn to_stored(&self) -> String {
        match self {
            ScopeEntry::Path(p) => format!("path:{}", p.display()),
            ScopeEntry::Host(h) => format!("host:{h}"),
            ScopeEntry::Glob(g) => format!("glob:{g}"),
        }
    }

    /// Reads [`ScopeEntry::to_stored`] back, or says why it cannot: a stored path or glob is
    /// absolute, a host is a host name. An entry that cannot be read is never guessed at (an
    /// empty path would lie "above" every path).
    pub fn from_stored(text: &str) -> Result<ScopeEntry, GrantParseError> {
        let entry = if let Some(p) = text.strip_prefix("path:") {
            ScopeEntry::Path(PathBuf::from(p))
        } else if let Some(g) = text.strip_prefix("glob:") {
            ScopeEntry::Glob(g.to_string())
        } else {
            ScopeEntry::from_text(text)
        };
        match &entry {
            ScopeEntry::Path(p) if !p.is_absolute() => Err(GrantParseError(format!(
                "scope entry {text:?} is not an absolute path"
            ))),
            ScopeEntry::Glob(g)
                if !g.starts_with('/')
                    || globset::GlobBuilder::new(g)
                        .literal_separator(true)
                        .build()
                        .is_err() =>
            {
                Err(GrantParseError(format!(
                    "scope entry {text:?} is not a glob over absolute paths"
                )))
            }
            // As written by `insert`: the syntax, not today's refusals (`*.com` granted before
            // they existed still reads, and is shown for what it is).
            ScopeEntry::Host(h) if host::host_syntax(h).as_deref() != Ok(h.as_str()) => Err(
                GrantParseError(format!("scope entry {text:?} is not a host name")),
            ),
            _ => Ok(entry),
        }
    }

    /// Reads the shown form back, telling a glob by its wildcards.
    pub(crate) fn from_text(text: &str) -> ScopeEntry {
        match text.strip_prefix("host:") {
            Some(h) => ScopeEntry::Host(h.to_string()),
            None if has_glob(text) => ScopeEntry::Glob(text.to_string()),
            None => ScopeEntry::Path(PathBuf::from(text)),
        }
    }

    /// As `--scope` takes it again, for the suggestion in a rejection: a path whose name
    /// holds glob characters is spelled `path:…`, or `--scope` would read it as a pattern.
    fn to_flag(&self) -> String {
        match self {
            ScopeEntry::Path(p) if has_glob(&p.to_string_lossy()) => {
                format!("path:{}", p.display())
            }
            _ => self.to_text(),
        }
    }
}

/// A `--scope` value as the operator wrote it, before paths are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeInput {
    /// A file, a folder, or a glob when it holds wildcards and names nothing that exists.
    Path(String),
    /// `path:…`: a file or folder whatever characters its name holds.
    Literal(String),
    /// A host, or a wildcard over a parent name, in the spelling calls are compared in.
    Host(String),
}

/// Reads one `--scope` value: `host:NAME` or a URL (`https://NAME/…`) is a host; `path:…` is
/// a path, never a glob; anything
/// with a `/`, or `.`, `..`, `~…` is a path; a bare name with a dot (`example.com`) is a host.
/// A bare name without one (`src`, `localhost`) could be either, and is refused with both
/// spellings.
pub fn parse_scope(text: &str) -> Result<ScopeInput, GrantParseError> {
    scope_input(text).map_err(GrantParseError)
}

/// [`parse_scope`], its refusal a sentence still to be wrapped.
fn scope_input(text: &str) -> Result<ScopeInput, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("a scope cannot be empty".to_string());
    }
    if let Some(h) = t.strip_prefix("host:") {
        return host::host_pattern(h)
            .map(ScopeInput::Host)
            .map_err(|e| e.to_string());
    }
    if let Some(p) = t.strip_prefix("path:") {
        return match p.trim() {
            "" => Err("scope \"path:\" names no file or folder".to_string()),
            p => Ok(ScopeInput::Literal(p.to_string())),
        };
    }
    if t.contains("://") {
        return host::url_host(t)
            .map(|(_, host)| ScopeInput::Host(host.into_owned()))
            .map_err(|e| format!("scope {t:?}: {e}"));
    }
    if t.contains('/') || t == "." || t == ".." || t.starts_with('~') {
        return Ok(ScopeInput::Path(t.to_string()));
    }
    // A host name (refused with its own reason when it is a wildcard over a public suffix).
    if t.contains('.') && host::host_syntax(t).is_ok() {
        return host::host_pattern(t)
            .map(ScopeInput::Host)
            .map_err(|e| e.to_string());
    }
    // `example.com:8443`: a host scope has no port, and the hint must be one that works.
    if let Some((name, _)) = host::split_port(t)
        && host::host_syntax(name).is_ok()
    {
        return Err(format!(
            "scope {t:?}: a host scope covers every port of its host; write host:{name} for the host, or ./{t} for a folder of that name"
        ));
    }
    // With glob characters, `./{t}` would be read as a pattern: the literal spelling first.
    if has_glob(t) {
        return Err(format!(
            "scope {t:?} could be a folder or a host: write path:./{t} for the folder or file of that name, ./{t} for a pattern, or host:{t} for a host"
        ));
    }
    Err(format!(
        "scope {t:?} could be a folder or a host: write ./{t} for a folder or host:{t} for a host"
    ))
}

/// Whether a path holds glob syntax.
fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// Whether a glob over absolute paths matches `path` (a glob that does not parse matches
/// nothing: it never widens a grant).
fn glob_matches(glob: &str, path: &Path) -> bool {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(path))
}

/// Reads a duration: `90s`, `5m`, `15m`, `1h`, `1h30m`, `2 hours`. Zero, negative, over
/// [`MAX_DURATION_MS`] and unreadable durations are errors that say what to write.
pub fn parse_duration(text: &str) -> Result<i64, GrantParseError> {
    duration_ms(text).map_err(GrantParseError)
}

/// [`parse_duration`], its refusal a sentence still to be wrapped.
fn duration_ms(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let hint = "write a positive duration such as 90s, 5m, 15m or 1h";
    if t.is_empty() {
        return Err(format!("the duration is empty: {hint}"));
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("duration {t:?} has no unit: {hint}"));
    }
    // A span, not a duration, so that days read too (as 24 hours: grants are not calendar
    // appointments).
    let too_long = || format!("duration {t:?} is longer than the 30 days a grant may last");
    let span: jiff::Span = t.parse().map_err(|_| {
        // A number too large to read as a span is longer than any grant, not unreadable.
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 9 {
            too_long()
        } else {
            format!("cannot read duration {t:?}: {hint}")
        }
    })?;
    if span.is_negative() {
        return Err(format!("duration {t:?} is negative: {hint}"));
    }
    let total = span
        .total((
            jiff::Unit::Millisecond,
            jiff::SpanRelativeTo::days_are_24_hours(),
        ))
        .map_err(|_| format!("cannot read duration {t:?}: {hint}"))?;
    let ms = if total >= i64::MAX as f64 {
        i64::MAX
    } else {
        total.floor() as i64
    };
    if ms <= 0 {
        return Err(format!("duration {t:?} is zero: {hint}"));
    }
    if ms < 1000 {
        return Err(format!("duration {t:?} is shorter than a second: {hint}"));
    }
    if ms > MAX_DURATION_MS {
        return Err(too_long());
    }
    Ok(ms)
}

/// Writes a duration the way people read it: `4m 59s`, `1h 5m`, `2d 3h`.
pub fn human_duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    let (d, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    let parts = [(d, "d"), (h, "h"), (m, "m"), (sec, "s")];
    let first = parts.iter().position(|(n, _)| *n > 0).unwrap_or(3);
    parts[first..]
        .iter()
        .take(2)
        .filter(|(n, _)| *n > 0 || first == 3)
        .map(|(n, u)| format!("{n}{u}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One grant, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The grant's id.
    pub id: GrantId,
    /// The capability it allows.
    pub capability: String,
    /// Empty: the whole capability (unless `unreadable`).
    pub scope: Vec<ScopeEntry>,
    /// Why the stored scope could not be read, when it could not: such a grant covers nothing
    /// (an unreadable scope must never read as "everything").
    pub unreadable: Option<String>,
    /// The session it is bound to, if any.
    pub session: Option<String>,
    /// When it was granted, in milliseconds since the epoch.
    pub granted_at_ms: i64,
    /// When it stops covering calls.
    pub expires_at_ms: i64,
    /// When it was revoked, if it was.
    pub revoked_at_ms: Option<i64>,
    /// Who granted it (the operator's user name), if known.
    pub granted_by: Option<String>,
    /// Why, as the operator said.
    pub reason: Option<String>,
    /// The row's seal as stored ([`seal`]); none on a revoked row.
    pub mac: Option<String>,
    /// The row carries no valid seal ([`seal::mark_forged`]): it is not a grant.
    pub forged: bool,
}

/// A grant's state at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Covers calls now.
    Live,
    /// Its time is up.
    Expired,
    /// The operator revoked it.
    Revoked,
    /// Its granted_at lies in the future: the clock moved back, or the row was forged.
    NotYet,
    /// The row carries no valid seal: metagate did not make it, and it is no grant.
    Forged,
}

impl Status {
    /// The word `permit list` shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::Expired => "expired",
            Status::Revoked => "revoked",
            Status::NotYet => "not yet valid",
            Status::Forged => "not a grant (no valid MAC)",
        }
    }
}

impl Grant {
    /// Revoked wins over everything, then a future granted_at, then expiry (at `expires_at`
    /// the grant is over).
    pub fn status(&self, now_ms: i64) -> Status {
        if self.revoked_at_ms.is_some() {
            Status::Revoked
        } else if self.forged {
            Status::Forged
        } else if self.granted_at_ms > now_ms {
            Status::NotYet
        } else if now_ms >= self.expires_at_ms {
            Status::Expired
        } else {
            Status::Live
        }
    }
}

/// What a call asks of a grant: its session, and every path and host its `path` and `url`
/// arguments name (paths resolved, absolute).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Need<'a> {
    pub(crate) capability: &'a str,
    pub(crate) session: Option<&'a str>,
    pub(crate) paths: Vec<PathBuf>,
    pub(crate) hosts: Vec<String>,
    /// Paths and URLs that could not be resolved (outside the root, refused by the path check,
    /// no root to resolve them in, no host to read): no scoped grant covers them.
    pub(crate) unresolved: Vec<Unresolved>,
}

/// A `path` or `url` argument's text that could not be resolved, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unresolved {
    /// `path` or `URL`.
    pub(crate) what: &'static str,
    pub(crate) text: String,
    /// On one line: control characters escaped.
    pub(crate) why: String,
}

/// Why one grant does not cover a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Miss {
    OtherCapability,
    Revoked(i64),
    Expired(i64),
    NotYet(i64),
    OtherSession {
        bound: String,
        call: Option<String>,
    },
    /// The grant's stored scope cannot be read: it covers nothing.
    Unreadable(String),
    /// The grant is scoped and the call names no path or host to check it against.
    NothingToScope,
    PathOutside(PathBuf),
    HostOutside(String),
    /// The grant is scoped, and a path or URL of the call could not be resolved: compared as
    /// written it could lie anywhere (`docs/../../etc`), so no scope covers it.
    Unresolved(Unresolved),
}

impl Miss {
    /// The sentence a rejection gives, `{id}` standing for the grant.
    pub(crate) fn describe(&self, id: &GrantId) -> String {
        match self {
            Miss::OtherCapability => format!("grant {id} is for another capability"),
            Miss::Revoked(_) => format!("grant {id} was revoked"),
            Miss::Expired(_) => format!("grant {id} has expired"),
            Miss::NotYet(_) => format!(
                "grant {id} starts in the future (the clock moved back?), so it is not live"
            ),
            Miss::OtherSession { bound, call } => match call {
                Some(c) => format!("grant {id} is bound to session {bound:?}, not {c:?}"),
                None => format!(
                    "grant {id} is bound to session {bound:?}, and this call has no session"
                ),
            },
            Miss::Unreadable(why) => {
                format!("grant {id} is unreadable ({why}), so it covers nothing")
            }
            Miss::NothingToScope => format!(
                "grant {id} is scoped, and this call names no path or host to check it against"
            ),
            // Quoted and escaped: a path is the model's text, and must not add lines.
            Miss::PathOutside(p) => {
                format!(
                    "grant {id} does not cover the path {:?}",
                    p.display().to_string()
                )
            }
            Miss::HostOutside(h) => format!("grant {id} does not cover the host {h}"),
            Miss::Unresolved(u) => format!(
                "grant {id} is scoped, and the {} {:?} cannot be resolved ({}), so no scope covers it",
                u.what, u.text, u.why
            ),
        }
    }
}

/// Whether `grant` covers what the call needs at `now_ms`.
fn covers(grant: &Grant, need: &Need<'_>, now_ms: i64) -> Result<(), Miss> {
    if grant.capability != need.capability {
        return Err(Miss::OtherCapability);
    }
    match grant.status(now_ms) {
        Status::Live => {}
        Status::Revoked => return Err(Miss::Revoked(grant.revoked_at_ms.unwrap_or(0))),
        Status::Expired => return Err(Miss::Expired(grant.expires_at_ms)),
        Status::NotYet => return Err(Miss::NotYet(grant.granted_at_ms)),
        Status::Forged => {
            return Err(Miss::Unreadable(seal::NOT_SEALED.to_string()));
        }
    }
    if let Some(bound) = &grant.session
        && need.session != Some(bound.as_str())
    {
        return Err(Miss::OtherSession {
            bound: bound.clone(),
            call: need.session.map(str::to_string),
        });
    }
    if let Some(why) = &grant.unreadable {
        return Err(Miss::Unreadable(why.clone()));
    }
    if grant.scope.is_empty() {
        return Ok(());
    }
    if let Some(u) = need.unresolved.first() {
        return Err(Miss::Unresolved(u.clone()));
    }
    if need.paths.is_empty() && need.hosts.is_empty() {
        return Err(Miss::NothingToScope);
    }
    for p in &need.paths {
        let inside = grant.scope.iter().any(|s| match s {
            // Path::starts_with compares whole components: /home/a does not cover /home/ab.
            ScopeEntry::Path(root) => p.starts_with(root),
            ScopeEntry::Glob(g) => glob_matches(g, p),
            ScopeEntry::Host(_) => false,
        });
        if !inside {
            return Err(Miss::PathOutside(p.clone()));
        }
    }
    for h in &need.hosts {
        let h = h.trim_end_matches('.').to_ascii_lowercase();
        let inside = grant.scope.iter().any(|s| match s {
            ScopeEntry::Host(pattern) => host::pattern_matches(pattern, &h),
            ScopeEntry::Path(_) | ScopeEntry::Glob(_) => false,
        });
        if !inside {
            return Err(Miss::HostOutside(h));
        }
    }
    Ok(())
}

/// Why no grant covers a call, as far as the call may be told: a model in one session never
/// learns another session's ID or grant ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// There is no grant for the capability at all.
    NoGrant,
    /// The nearest grant the call's session could use (bound to it, or to no session): the
    /// most recently granted one, and why it misses.
    Near(GrantId, Miss),
    /// Every grant for the capability is bound to another session.
    OtherSessions,
}

/// The first grant that covers the call, or why none does. The reason comes from a grant the
/// call's own session could use (bound to it or to none; the most recently granted of them),
/// never from one bound to another session, which is only said to exist.
pub(crate) fn find<'g>(
    grants: &'g [Grant],
    need: &Need<'_>,
    now_ms: i64,
) -> Result<&'g Grant, Refusal> {
    let mut nearest: Option<(&Grant, Miss)> = None;
    let mut others = false;
    for g in grants {
        match covers(g, need, now_ms) {
            Ok(()) => return Ok(g),
            Err(Miss::OtherCapability) => {}
            Err(_) if g.session.is_some() && g.session.as_deref() != need.session => {
                others = true;
            }
            Err(m) => {
                if nearest
                    .as_ref()
                    .is_none_or(|(n, _)| g.granted_at_ms > n.granted_at_ms)
                {
                    nearest = Some((g, m));
                }
            }
        }
    }
    Err(match nearest {
        Some((g, m)) => Refusal::Near(g.id.clone(), m),
        None if others => Refusal::OtherSessions,
        None => Refusal::NoGrant,
    })
}

/// The capabilities this policy requires a grant for, with the tools each unlocks.
pub fn required(policy: &Policy) -> Vec<(String, Vec<String>)> {
    policy
        .rules
        .permit_require
        .iter()
        .map(|c| (c.clone(), tools_for(policy, c)))
        .collect()
}

/// The tools whose capability is `capability`.
fn tools_for(policy: &Policy, capability: &str) -> Vec<String> {
    policy
        .tools
        .values()
        .filter(|t| t.capability.as_deref() == Some(capability))
        .map(|t| t.name.clone())
        .collect()
}

/// The capability of `tool` when the policy requires a grant for it.
pub(crate) fn needs_grant<'p>(policy: &'p Policy, tool: &str) -> Option<&'p str> {
    if policy.rules.permit_require.is_empty() {
        return None;
    }
    let cap = policy.tool(tool)?.capability.as_deref()?;
    policy
        .rules
        .permit_require
        .iter()
        .any(|c| c == cap)
        .then_some(cap)
}

/// Whether any tool with `capability` has a `path` or `url` argument a scope could check.
pub fn scopable(policy: &Policy, capability: &str) -> bool {
    takes(policy, capability, crate::policy::ArgKind::Path)
        || takes(policy, capability, crate::policy::ArgKind::Url)
}

/// Whether any tool with `capability` has an argument of `kind`.
fn takes(policy: &Policy, capability: &str, kind: crate::policy::ArgKind) -> bool {
    policy.tools.values().any(|t| {
        t.capability.as_deref() == Some(capability) && t.args.values().any(|a| a.kind == Some(kind))
    })
}

/// Why a scope entry could never match a call of `capability`, if it could not.
pub fn scope_mismatch(policy: &Policy, capability: &str, entry: &ScopeEntry) -> Option<String> {
    let (kind, what) = match entry {
        ScopeEntry::Path(_) | ScopeEntry::Glob(_) => (crate::policy::ArgKind::Path, "path"),
        ScopeEntry::Host(_) => (crate::policy::ArgKind::Url, "url"),
    };
    (!takes(policy, capability, kind)).then(|| {
        format!(
            "{} could never match: no tool with capability {capability} has a {what} argument",
            entry.to_text()
        )
    })
}

/// ` --policy FILE --db FILE` for the ones given, quoted for a shell: what a suggested command
/// needs to reach the policy and the store the gate uses.
pub fn setup_flags(policy_file: Option<&Path>, store: Option<&Path>) -> String {
    let mut flags = String::new();
    for (flag, path) in [("--policy", policy_file), ("--db", store)] {
        if let Some(p) = path {
            flags.push_str(&format!(" {flag} {}", shell_word(&p.display().to_string())));
        }
    }
    flags
}

/// Quotes a word for a shell when it needs it, always on one line: a word holding a control
/// character (a newline in a path a model sent) is written `$'…'` with escapes, which bash,
/// zsh, ksh and POSIX.1-2024 shells read, rather than spread over lines a reader would take for
/// lines of the message around it.
fn shell_word(s: &str) -> String {
    use std::fmt::Write as _;
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b))
    {
        s.to_string()
    } else if s.chars().any(metagate_wire::display::unsafe_on_screen) {
        let mut out = String::with_capacity(s.len() + 16);
        out.push_str("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str(r"\\"),
                '\'' => out.push_str(r"\'"),
                '\n' => out.push_str(r"\n"),
                '\t' => out.push_str(r"\t"),
                '\r' => out.push_str(r"\r"),
                // Each byte as three octal digits: never read together with what follows.
                c if metagate_wire::display::unsafe_on_screen(c) => {
                    for b in c.encode_utf8(&mut [0; 4]).bytes() {
                        let _ = write!(out, "\\{b:03o}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// ` --flag VALUE`, quoted for a shell; `--flag=VALUE` when the value starts with `-`, which
/// would otherwise be read as a flag of its own (`--session -k3x`).
fn push_flag(cmd: &mut String, flag: &str, value: &str) {
    cmd.push(' ');
    cmd.push_str(flag);
    cmd.push(if value.starts_with('-') { '=' } else { ' ' });
    cmd.push_str(&shell_word(value));
}

/// The command that would allow a call: the capability, the session the call runs in, the
/// paths and hosts it names, the policy file when it is not the default one, and the store
/// the gate looks grants up in (an operator's own default store may be another).
pub(crate) fn grant_command(
    capability: &str,
    session: Option<&str>,
    scope: &[ScopeEntry],
    policy_file: Option<&Path>,
    store: Option<&Path>,
) -> String {
    let mut cmd = String::from("metagate");
    cmd.push_str(&setup_flags(policy_file, store));
    cmd.push_str(" permit grant");
    push_flag(&mut cmd, "--capability", capability);
    for s in scope {
        push_flag(&mut cmd, "--scope", &s.to_flag());
    }
    if let Some(s) = session {
        push_flag(&mut cmd, "--session", s);
    }
    cmd.push_str(" --for 5m");
    cmd
}

#[cfg(test)]
mod tests;

/// Resolves one `--scope` value: a host as it is, a path inside the policy's path root
/// (relative paths are relative to the root; `..` and symlinks resolved), which it must not
/// leave. `cwd` is where the policy's relative root is taken from, as `gate` does.
pub fn resolve_scope(
    policy: &Policy,
    cwd: &Path,
    text: &str,
    fs: &dyn metagate_checks::path::Fs,
) -> Result<ScopeEntry, GrantParseError> {
    resolved_scope(policy, cwd, text, fs).map_err(GrantParseError)
}

/// [`resolve_scope`], its refusal a sentence still to be wrapped.
fn resolved_scope(
    policy: &Policy,
    cwd: &Path,
    text: &str,
    fs: &dyn metagate_checks::path::Fs,
) -> Result<ScopeEntry, String> {
    let (p, literal) = match scope_input(text)? {
        ScopeInput::Host(h) => return Ok(ScopeEntry::Host(h)),
        ScopeInput::Path(p) => (p, false),
        ScopeInput::Literal(p) => (p, true),
    };
    let paths = &policy.rules.paths;
    let base = paths
        .base
        .as_deref()
        .map_or_else(|| cwd.to_path_buf(), |b| cwd.join(b));
    let rules = metagate_checks::path::PathRules::new(&base.join(&paths.root), &[], &[], fs)
        .map_err(|e| format!("the policy's path root {}: {}", e.glob, e.message))?;
    // A glob: its literal folder is resolved like any path, the pattern kept after it.
    // A name written `path:…`, or that exists as written (`rep[1]`), is that file or folder,
    // not a pattern.
    let exists = literal || fs.canonicalize(&base.join(&paths.root).join(&p)).is_ok();
    let (p, pattern) = match p.split('/').position(has_glob).filter(|_| !exists) {
        Some(i) => {
            let parts: Vec<&str> = p.split('/').collect();
            let folder = parts[..i].join("/");
            let folder = if folder.is_empty() && !p.starts_with('/') {
                ".".to_string()
            } else if folder.is_empty() {
                "/".to_string()
            } else {
                folder
            };
            (folder, Some(parts[i..].join("/")))
        }
        None => (p, None),
    };
    let resolved = match metagate_checks::path::check(&p, &rules, fs) {
        Ok(rel) if rel == "." => rules.root().to_path_buf(),
        Ok(rel) => rules.root().join(&*rel),
        Err(e) => {
            return Err(format!(
                "scope {p:?} cannot be granted: {} (the policy's path root is {})",
                e.rule(),
                rules.root().display()
            ));
        }
    };
    let Some(pattern) = pattern else {
        return Ok(ScopeEntry::Path(resolved));
    };
    if pattern.split('/').any(|c| c == "..") {
        return Err(format!(
            "scope glob {text:?}: `..` after the first wildcard could leave the folder"
        ));
    }
    // The folder is literal, whatever characters its name holds.
    let glob = format!(
        "{}/{pattern}",
        globset::escape(&resolved.display().to_string())
    );
    globset::GlobBuilder::new(&glob)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("scope glob {text:?} does not parse: {e}"))?;
    Ok(ScopeEntry::Glob(glob))
}
