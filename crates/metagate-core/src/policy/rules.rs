//! The operator's rules, compiled from the policy file: intents, per-caller overrides, what
//! `path`, `shell` and `url` arguments may hold, limits, and prerequisites.

use std::fmt;
use std::path::PathBuf;

use indexmap::IndexMap;

use super::file::{PolicyFile, PrereqEvidence, RateFile};

/// Shell constructs denied when the policy does not say: command and process substitution,
/// backticks, here-strings.
pub(crate) const DEFAULT_SHELL_CONSTRUCTS: [&str; 5] = ["$(", "`", "<(", ">(", "<<<"];

/// Commands denied when the policy does not say: privilege changes, `eval`, and commands
/// that stop or destroy a machine. An entry may name the first arguments too.
pub(crate) const DEFAULT_SHELL_COMMANDS: [&str; 27] = [
    "sudo",
    "su",
    "doas",
    "pkexec",
    "sudoedit",
    "run0",
    "eval",
    "mkfs",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "systemctl poweroff",
    "systemctl reboot",
    "systemctl halt",
    "systemctl kexec",
    "init 0",
    "init 6",
    "telinit 0",
    "telinit 6",
    "kill -9 1",
    "kill -9 -1",
    "kill -KILL 1",
    "kill -KILL -1",
    "kill -s KILL 1",
    "kill -s KILL -1",
    "parallel sudo",
];

/// URL schemes allowed when the policy does not say.
pub(crate) const DEFAULT_URL_SCHEMES: [&str; 2] = ["http", "https"];

/// Hosts denied when the policy does not say: cloud metadata endpoints, which hand out
/// credentials to whatever asks from inside the machine. The link-local address AWS, GCP,
/// Azure, OpenStack, DigitalOcean and others answer on, and AWS's IPv6 one; ECS tasks'
/// (`169.254.170.2`); Alibaba's (`100.100.100.200`); Oracle's older one (`192.0.0.192`); and
/// the names that lead there: GCP's (`metadata.google.internal`, `metadata.goog`, and the
/// short `metadata` its resolver completes), Azure's, AWS's (`instance-data`, completed to
/// `instance-data.ec2.internal`), Tencent's. Any spelling of an address matches, and so
/// does a name or IPv6 address that carries one ([`metagate_checks::host::embedded_addresses`]).
pub(crate) const DEFAULT_DENY_HOSTS: [&str; 12] = [
    "169.254.169.254",
    "[fd00:ec2::254]",
    "169.254.170.2",
    "100.100.100.200",
    "192.0.0.192",
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "metadata.azure.com",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.tencentyun.com",
];

/// Calls per minute and per hour (either may be unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rate {
    pub(crate) per_minute: Option<u64>,
    pub(crate) per_hour: Option<u64>,
}

impl Rate {
    fn from_file(r: &RateFile) -> Rate {
        Rate {
            per_minute: r.per_minute,
            per_hour: r.per_hour,
        }
    }

    pub(crate) fn is_unlimited(&self) -> bool {
        self.per_minute.is_none() && self.per_hour.is_none()
    }
}

/// The rule of an intent or a caller that refused a tool, shown as its place in the policy
/// (`intents.review.forbid`): the reason a rejection names, not a fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefusingRule {
    /// `intents.<intent>.forbid` lists the tool (or `*`).
    IntentForbid(String),
    /// `intents.<intent>.forbid_capabilities` lists the tool's capability.
    IntentForbidCapabilities(String),
    /// `intents.<intent>.allow` (and `allow_capabilities`) leave the tool out.
    IntentAllow(String),
    /// `callers.<caller>.deny` names the tool or its capability.
    CallerDeny(String),
    /// `callers.<caller>.allow` is set and leaves the tool out.
    CallerAllow(String),
}

impl fmt::Display for RefusingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusingRule::IntentForbid(intent) => write!(f, "intents.{intent}.forbid"),
            RefusingRule::IntentForbidCapabilities(intent) => {
                write!(f, "intents.{intent}.forbid_capabilities")
            }
            RefusingRule::IntentAllow(intent) => write!(f, "intents.{intent}.allow"),
            RefusingRule::CallerDeny(caller) => write!(f, "callers.{caller}.deny"),
            RefusingRule::CallerAllow(caller) => write!(f, "callers.{caller}.allow"),
        }
    }
}

/// The tools one intent admits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Intent {
    pub(crate) name: String,
    allow: Vec<String>,
    allow_capabilities: Vec<String>,
    forbid: Vec<String>,
    forbid_capabilities: Vec<String>,
}

impl Intent {
    /// Whether the intent admits a tool with this capability; when not, the rule that refused.
    pub(crate) fn admits(&self, tool: &str, capability: Option<&str>) -> Result<(), RefusingRule> {
        let listed = |list: &[String]| list.iter().any(|t| t == "*" || t == tool);
        let cap_listed = |list: &[String]| capability.is_some_and(|c| list.iter().any(|x| x == c));
        if listed(&self.forbid) {
            return Err(RefusingRule::IntentForbid(self.name.clone()));
        }
        if cap_listed(&self.forbid_capabilities) {
            return Err(RefusingRule::IntentForbidCapabilities(self.name.clone()));
        }
        if listed(&self.allow) || cap_listed(&self.allow_capabilities) {
            Ok(())
        } else {
            Err(RefusingRule::IntentAllow(self.name.clone()))
        }
    }

    /// What the intent allows, for a rejection's message.
    pub(crate) fn allowed_list(&self) -> Vec<String> {
        let mut out: Vec<String> = self.allow.clone();
        out.extend(
            self.allow_capabilities
                .iter()
                .map(|c| format!("capability {c}")),
        );
        out
    }
}

/// Overrides for one caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Caller {
    pub(crate) name: String,
    /// When set, the only tools or capabilities the caller may use.
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    pub(crate) rate: Option<Rate>,
}

impl Caller {
    /// Whether the caller may use the tool; when not, the rule that refused. Deny wins.
    pub(crate) fn admits(&self, tool: &str, capability: Option<&str>) -> Result<(), RefusingRule> {
        let hit = |list: &[String]| {
            list.iter()
                .any(|e| e == "*" || e == tool || Some(e.as_str()) == capability)
        };
        if hit(&self.deny) {
            return Err(RefusingRule::CallerDeny(self.name.clone()));
        }
        match &self.allow {
            Some(list) if !hit(list) => Err(RefusingRule::CallerAllow(self.name.clone())),
            _ => Ok(()),
        }
    }
}

/// Where `path` arguments may point: the root as written and the folder it is relative to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathRulesConfig {
    pub root: String,
    /// The policy file's folder; `None` for the built-in policy (the working folder).
    pub base: Option<PathBuf>,
    pub(crate) deny: Vec<String>,
    pub(crate) allow: Vec<String>,
}

/// A host rule: `example.com` (that host only) or `*.example.com` (its subdomains).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPattern(pub(crate) String);

impl HostPattern {
    pub(crate) fn matches(&self, host: &str) -> bool {
        match self.0.strip_prefix("*.") {
            Some(domain) => {
                host.len() > domain.len()
                    && host.ends_with(domain)
                    && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
            }
            None => self.0 == host,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UrlRules {
    pub(crate) schemes: Vec<String>,
    pub(crate) hosts: Vec<HostPattern>,
    pub(crate) deny_hosts: Vec<HostPattern>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ShellRulesConfig {
    pub(crate) constructs: Vec<String>,
    pub(crate) commands: Vec<String>,
    /// `allow_commands`: when given, the only programs shell commands may run.
    pub(crate) allowed: Option<Vec<String>>,
}

/// The loop breaker: the `repeat`-th identical call within `window_ms` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopBreaker {
    pub(crate) repeat: u64,
    pub(crate) window_ms: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    pub(crate) per_caller: Rate,
    pub(crate) per_tool: Rate,
    pub(crate) session_quota: Option<u64>,
    pub loop_breaker: Option<LoopBreaker>,
}

impl Limits {
    /// Whether any of these limits is set.
    fn any(&self) -> bool {
        !self.per_caller.is_unlimited()
            || !self.per_tool.is_unlimited()
            || self.session_quota.is_some()
            || self.loop_breaker.is_some()
    }
}

/// Rules by name, looked up on every call: hashed with Fx rather than SipHash.
type Named<V> = IndexMap<String, V, rustc_hash::FxBuildHasher>;

/// Every rule of the policy beyond the tools' own schemas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    pub intents: Named<Intent>,
    pub(crate) callers: Named<Caller>,
    pub paths: PathRulesConfig,
    pub(crate) shell: ShellRulesConfig,
    pub(crate) urls: UrlRules,
    pub limits: Limits,
    pub(crate) evidence: PrereqEvidence,
    /// Tool → the tools it requires.
    pub(crate) requires: Named<Vec<String>>,
    /// Tool → its own rate.
    pub(crate) tool_rates: Named<Rate>,
    /// Caller → its default intent.
    pub(crate) caller_intents: Named<String>,
    /// Capabilities whose tools pass only under a live grant (`[permit] require`).
    pub permit_require: Vec<String>,
}

impl Rules {
    /// Whether any limit is set anywhere (`[limits]`, a caller's or a tool's own): limits are
    /// counted in the telemetry store.
    pub fn counts(&self) -> bool {
        self.limits.any()
            || self
                .callers
                .values()
                .any(|c| c.rate.is_some_and(|r| !r.is_unlimited()))
            || self.tool_rates.values().any(|r| !r.is_unlimited())
    }

    /// The rules that read the telemetry store to decide a call of a run by `caller` in
    /// `session` (both fixed for a run), by their policy keys: limits count calls in it,
    /// prerequisites look up completed calls, grants are kept in it. Another caller's limit,
    /// a session quota or a prerequisite without a session, reads nothing.
    pub fn read_from_the_store(&self, caller: Option<&str>, session: Option<&str>) -> Vec<String> {
        let limits = &self.limits;
        let mut keys = Vec::new();
        if let Some(caller) = caller {
            match self.callers.get(caller).and_then(|c| c.rate) {
                Some(rate) if !rate.is_unlimited() => {
                    keys.push(format!("callers.{}.limits", super::toml_key(caller)));
                }
                Some(_) => {}
                None if !limits.per_caller.is_unlimited() => keys.push("limits.per_caller".into()),
                None => {}
            }
        }
        if !limits.per_tool.is_unlimited() {
            keys.push("limits.per_tool".into());
        }
        for (tool, rate) in &self.tool_rates {
            if !rate.is_unlimited() {
                keys.push(format!("tools.{}.limits", super::toml_key(tool)));
            }
        }
        if session.is_some() && limits.session_quota.is_some() {
            keys.push("limits.session_quota".into());
        }
        if limits.loop_breaker.is_some() {
            keys.push("limits.loop".into());
        }
        if session.is_some() {
            for tool in self.requires.keys() {
                keys.push(format!("tools.{}.requires", super::toml_key(tool)));
            }
        }
        if !self.permit_require.is_empty() {
            keys.push("permit.require".into());
        }
        keys
    }
}

/// A problem with the rules: its key path, what is wrong, and whether it is only a warning.
pub(crate) struct RuleProblem {
    pub(crate) path: Vec<String>,
    pub(crate) message: String,
    pub(crate) warning: bool,
}

fn problem(path: &[&str], message: String) -> RuleProblem {
    RuleProblem {
        path: path.iter().map(|s| s.to_string()).collect(),
        message,
        warning: false,
    }
}

fn warning(path: &[&str], message: String) -> RuleProblem {
    RuleProblem {
        warning: true,
        ..problem(path, message)
    }
}

/// Compiles and checks the rules; `base` is the policy file's folder.
pub(crate) fn compile(file: &PolicyFile, base: Option<PathBuf>) -> (Rules, Vec<RuleProblem>) {
    let mut problems = Vec::new();
    let known_tool = |t: &str| file.tools.contains_key(t);
    let known_capability = |c: &str| {
        file.tools
            .values()
            .any(|t| t.capability.as_deref() == Some(c))
    };
    let mut intents = Named::default();
    for (name, i) in &file.intents {
        for (list, key) in [(&i.allow, "allow"), (&i.forbid, "forbid")] {
            for t in list.iter().filter(|t| *t != "*" && !known_tool(t)) {
                problems.push(warning(
                    &["intents", name, key],
                    format!(
                        "{t:?} is not a tool this policy knows (fine if it passes through \
                         unchecked; an MCP server's tool: check with `policy check FILE -- \
                         SERVER_COMMAND`)"
                    ),
                ));
            }
        }
        for (list, key) in [
            (&i.allow_capabilities, "allow_capabilities"),
            (&i.forbid_capabilities, "forbid_capabilities"),
        ] {
            for c in list.iter().filter(|c| !known_capability(c)) {
                problems.push(warning(
                    &["intents", name, key],
                    format!("{c:?} is no tool's capability in this policy"),
                ));
            }
        }
        intents.insert(
            name.clone(),
            Intent {
                name: name.clone(),
                allow: i.allow.clone(),
                allow_capabilities: i.allow_capabilities.clone(),
                forbid: i.forbid.clone(),
                forbid_capabilities: i.forbid_capabilities.clone(),
            },
        );
    }
    let mut callers = Named::default();
    let mut caller_intents = Named::default();
    for (name, c) in &file.callers {
        let allow = c.allow.as_deref().unwrap_or_default();
        for (list, key) in [(allow, "allow"), (c.deny.as_slice(), "deny")] {
            for t in list
                .iter()
                .filter(|t| !known_tool(t) && !known_capability(t))
            {
                problems.push(warning(
                    &["callers", name, key],
                    format!("{t:?} is neither a tool nor a capability this policy knows"),
                ));
            }
        }
        let rate = c.limits.as_ref().map(Rate::from_file);
        if let Some(r) = &c.limits {
            check_rate(r, &["callers", name, "limits"], &mut problems);
        }
        if let Some(intent) = &c.intent {
            if file.intents.contains_key(intent) {
                caller_intents.insert(name.clone(), intent.clone());
            } else {
                problems.push(problem(
                    &["callers", name, "intent"],
                    format!(
                        "unknown intent {intent:?} (defined: {})",
                        names(file.intents.keys())
                    ),
                ));
            }
        }
        callers.insert(
            name.clone(),
            Caller {
                name: name.clone(),
                allow: c.allow.clone(),
                deny: c.deny.clone(),
                rate,
            },
        );
    }
    let paths = PathRulesConfig {
        root: file.paths.root.clone().unwrap_or_else(|| ".".to_string()),
        base,
        deny: file.paths.deny.clone().unwrap_or_default(),
        allow: file.paths.allow.clone().unwrap_or_default(),
    };
    for (list, key) in [(&paths.deny, "deny"), (&paths.allow, "allow")] {
        // The default deny list is known to parse (a test of the path check builds it), and
        // parsing its globs here was a tenth of a one-call run's start.
        let own = |g: &String| metagate_checks::path::DEFAULT_DENY.contains(&g.as_str());
        for g in list.iter().filter(|g| !own(g)) {
            if let Err(e) = globset::GlobBuilder::new(g).literal_separator(true).build() {
                problems.push(problem(
                    &["paths", key],
                    format!("glob {g:?} does not parse: {e}"),
                ));
            }
        }
    }
    if paths.root.trim().is_empty() {
        problems.push(problem(
            &["paths", "root"],
            "the root cannot be empty".to_string(),
        ));
    }
    let shell = ShellRulesConfig {
        constructs: file.shell.deny.clone().unwrap_or_default(),
        commands: file.shell.deny_commands.clone().unwrap_or_default(),
        allowed: file.shell.allow_commands.clone(),
    };
    if shell.constructs.iter().any(|c| c.trim().is_empty()) {
        problems.push(problem(
            &["shell", "deny"],
            "an entry is empty: it would match every command".to_string(),
        ));
    }
    for (list, key) in [
        (&shell.commands, "deny_commands"),
        (
            shell.allowed.as_ref().unwrap_or(&Vec::new()),
            "allow_commands",
        ),
    ] {
        for entry in list {
            if let Err(e) = metagate_checks::shell::CommandPattern::parse(entry) {
                problems.push(problem(&["shell", key], e.to_string()));
            }
        }
    }
    let host_list = |list: &Option<Vec<String>>, key: &str, problems: &mut Vec<RuleProblem>| {
        let mut out = Vec::new();
        for h in list.iter().flatten() {
            let mut h = h.trim().trim_end_matches('.').to_ascii_lowercase();
            let wild = h.starts_with("*.");
            let bare = if wild { &h[2..] } else { &h[..] };
            if bare.is_empty() || bare.contains(['*', '/', ' ', ':', '@']) && !bare.starts_with('[')
            {
                problems.push(problem(
                    &["urls", key],
                    format!("{h:?} is not a host (write example.com or *.example.com)"),
                ));
            } else {
                // In the spelling URLs' hosts are compared in (`[FD00:EC2:0::254]` is
                // `[fd00:ec2::254]`, `0xa9fea9fe` is `169.254.169.254`), or they never match.
                match metagate_checks::host::canonical_host(bare) {
                    Ok(canonical) if canonical != bare => {
                        h = [if wild { "*." } else { "" }, &canonical].concat();
                    }
                    Ok(_) => {}
                    Err(e) => problems.push(problem(&["urls", key], format!("{h:?}: {e}"))),
                }
            }
            out.push(HostPattern(h));
        }
        out
    };
    let schemes: Vec<String> = file
        .urls
        .schemes
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|s| {
            s.trim()
                .trim_end_matches("://")
                .trim_end_matches(':')
                .to_ascii_lowercase()
        })
        .collect();
    for scheme in &schemes {
        let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !valid {
            problems.push(problem(
                &["urls", "schemes"],
                format!(
                    "{scheme:?} is not a URL scheme (a letter, then letters, digits, `+`, `-`, `.`)"
                ),
            ));
        }
    }
    let urls = UrlRules {
        schemes,
        hosts: host_list(&file.urls.hosts, "hosts", &mut problems),
        deny_hosts: host_list(&file.urls.deny_hosts, "deny_hosts", &mut problems),
    };
    let l = &file.limits;
    for (r, key) in [(&l.per_caller, "per_caller"), (&l.per_tool, "per_tool")] {
        if let Some(r) = r {
            check_rate(r, &["limits", key], &mut problems);
        }
    }
    if l.session_quota == Some(0) {
        problems.push(problem(
            &["limits", "session_quota"],
            "must be a positive number".to_string(),
        ));
    }
    let loop_breaker = l.loop_breaker.as_ref().map(|lb| {
        let repeat = lb.repeat.unwrap_or(3);
        let window = lb.window_secs.unwrap_or(60);
        if repeat < 2 {
            problems.push(problem(
                &["limits", "loop", "repeat"],
                "must be at least 2 (1 would refuse every call)".to_string(),
            ));
        }
        if window == 0 {
            problems.push(problem(
                &["limits", "loop", "window_secs"],
                "must be a positive number".to_string(),
            ));
        }
        LoopBreaker {
            repeat,
            window_ms: i64::try_from(window.saturating_mul(1000)).unwrap_or(i64::MAX),
        }
    });
    let limits = Limits {
        per_caller: l
            .per_caller
            .as_ref()
            .map(Rate::from_file)
            .unwrap_or_default(),
        per_tool: l.per_tool.as_ref().map(Rate::from_file).unwrap_or_default(),
        session_quota: l.session_quota,
        loop_breaker,
    };
    let mut requires = Named::default();
    let mut tool_rates = Named::default();
    for (name, t) in &file.tools {
        if let Some(list) = &t.requires {
            for r in list.iter().filter(|r| !known_tool(r)) {
                problems.push(warning(
                    &["tools", name, "requires"],
                    format!("{r:?} is not a tool this policy knows"),
                ));
            }
            if !list.is_empty() {
                requires.insert(name.clone(), list.clone());
            }
        }
        if let Some(r) = &t.limits {
            check_rate(r, &["tools", name, "limits"], &mut problems);
            tool_rates.insert(name.clone(), Rate::from_file(r));
        }
    }
    for cycle in find_cycles(&requires) {
        problems.push(problem(
            &["tools", &cycle[0], "requires"],
            format!("prerequisites form a cycle: {}", cycle.join(" → ")),
        ));
    }
    for (key, message) in file.evaluate.check() {
        problems.push(problem(&["evaluate", key], message));
    }
    let permit_require = permit_rules(file, &mut problems);
    let rules = Rules {
        intents,
        callers,
        paths,
        shell,
        urls,
        limits,
        evidence: file.gate.prerequisite_evidence.unwrap_or_default(),
        requires,
        tool_rates,
        caller_intents,
        permit_require,
    };
    (rules, problems)
}

/// `[permit] require`: each entry must be a capability some tool of the policy declares.
fn permit_rules(file: &PolicyFile, problems: &mut Vec<RuleProblem>) -> Vec<String> {
    let declared: Vec<&str> = file
        .tools
        .values()
        .filter_map(|t| t.capability.as_deref())
        .collect();
    let mut out: Vec<String> = Vec::new();
    for c in file.permit.require.iter().flatten() {
        let c = c.trim();
        if c.is_empty() {
            problems.push(problem(
                &["permit", "require"],
                "an entry is empty: name a capability".to_string(),
            ));
        } else if !declared.contains(&c) {
            let mut known = declared.clone();
            known.sort_unstable();
            known.dedup();
            problems.push(problem(
                &["permit", "require"],
                format!(
                    "{c:?} is not a capability any tool of this policy has (capabilities: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        } else if out.iter().any(|o| o == c) {
            problems.push(warning(
                &["permit", "require"],
                format!("{c:?} is listed twice"),
            ));
        } else {
            out.push(c.to_string());
        }
    }
    out
}

fn names<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    let list: Vec<&str> = keys.map(String::as_str).collect();
    if list.is_empty() {
        "none".to_string()
    } else {
        list.join(", ")
    }
}

fn check_rate(r: &RateFile, at: &[&str], problems: &mut Vec<RuleProblem>) {
    for (v, key) in [(r.per_minute, "per_minute"), (r.per_hour, "per_hour")] {
        if v == Some(0) {
            let mut p: Vec<&str> = at.to_vec();
            p.push(key);
            problems.push(problem(&p, "must be a positive number".to_string()));
        }
    }
}

/// The cycles of the prerequisite graph: one for each group of tools that require each
/// other (a strongly connected component), as the tools along its shortest cycle through the
/// group's first tool, that tool repeated at the end. Groups come in the policy's order.
/// Iterative, so that no chain of prerequisites, however long, can exhaust the stack.
fn find_cycles(requires: &Named<Vec<String>>) -> Vec<Vec<String>> {
    // Every tool named, as a key or as a prerequisite, numbered in order of appearance.
    let mut ids: IndexMap<&str, ()> = IndexMap::new();
    for (name, list) in requires {
        ids.insert(name, ());
        for r in list {
            ids.insert(r, ());
        }
    }
    let id = |n: &str| ids.get_index_of(n).expect("every name is numbered");
    let edges: Vec<Vec<usize>> = (0..ids.len())
        .map(|i| {
            let name = ids.get_index(i).expect("in range").0;
            requires
                .get(*name)
                .into_iter()
                .flatten()
                .map(|r| id(r))
                .collect()
        })
        .collect();

    // Tarjan's algorithm, with an explicit stack of (node, next edge to follow).
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let (mut index, mut low, mut on_stack) = (vec![UNSEEN; n], vec![0; n], vec![false; n]);
    let (mut next_index, mut stack, mut component) = (0, Vec::new(), vec![UNSEEN; n]);
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        let mut work = vec![(root, 0)];
        while let Some(&mut (v, ref mut next)) = work.last_mut() {
            if *next == 0 && index[v] == UNSEEN {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(*next) {
                *next += 1;
                if index[w] == UNSEEN {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut group = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component[w] = groups.len();
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                groups.push(group);
            }
        }
    }

    // One parent table for all groups: a search only writes the entries of its own group.
    let mut parent = vec![UNSEEN; n];
    let mut cycles: Vec<Vec<String>> = groups
        .iter()
        .enumerate()
        .filter(|(_, group)| group.len() > 1 || edges[group[0]].contains(&group[0]))
        .filter_map(|(g, group)| {
            let start = *group.iter().min().expect("a group is never empty");
            // Breadth first inside the group, back to `start`: its shortest cycle.
            let mut queue = std::collections::VecDeque::from([start]);
            while let Some(v) = queue.pop_front() {
                for &w in &edges[v] {
                    if w == start {
                        let mut path = vec![v];
                        while let Some(&last) = path.last().filter(|&&l| l != start) {
                            path.push(parent[last]);
                        }
                        path.reverse();
                        path.push(start);
                        let name = |i: usize| ids.get_index(i).expect("in range").0.to_string();
                        return Some(path.into_iter().map(name).collect());
                    }
                    if component[w] == g && parent[w] == UNSEEN && w != start {
                        parent[w] = v;
                        queue.push_back(w);
                    }
                }
            }
            None
        })
        .collect();
    cycles.sort_by_key(|c| id(&c[0]));
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents_allow_by_name_or_capability_and_forbid_wins() {
        let i = Intent {
            name: "lookup_search".into(),
            allow: vec!["web_search".into()],
            allow_capabilities: vec!["browser_control".into()],
            forbid: vec!["screen_capture".into()],
            forbid_capabilities: vec![],
        };
        assert!(i.admits("web_search", None).is_ok());
        assert!(
            i.admits("browser_navigate", Some("browser_control"))
                .is_ok()
        );
        assert_eq!(
            i.admits("file_read", Some("file_access"))
                .unwrap_err()
                .to_string(),
            "intents.lookup_search.allow"
        );
        assert_eq!(
            i.admits("screen_capture", Some("browser_control"))
                .unwrap_err()
                .to_string(),
            "intents.lookup_search.forbid"
        );
        let chat = Intent {
            name: "chat_only".into(),
            forbid: vec!["*".into()],
            ..Intent::default()
        };
        assert!(chat.admits("response", None).is_err());
    }

    #[test]
    fn callers_deny_wins_over_allow() {
        let c = Caller {
            name: "teacher".into(),
            allow: Some(vec!["file_read".into(), "system_execute".into()]),
            deny: vec!["system_execute".into()],
            rate: None,
        };
        assert!(c.admits("file_read", None).is_ok());
        assert_eq!(
            c.admits("system_execute", None).unwrap_err().to_string(),
            "callers.teacher.deny"
        );
        assert_eq!(
            c.admits("web_search", None).unwrap_err().to_string(),
            "callers.teacher.allow"
        );
        let by_cap = Caller {
            name: "x".into(),
            deny: vec!["screen_read".into()],
            ..Caller::default()
        };
        assert!(
            by_cap
                .admits("screen_capture", Some("screen_read"))
                .is_err()
        );
    }

    #[test]
    fn host_patterns_match_whole_labels() {
        let sub = HostPattern("*.example.com".into());
        assert!(sub.matches("api.example.com"));
        assert!(!sub.matches("example.com"));
        assert!(!sub.matches("badexample.com"));
        assert!(HostPattern("example.com".into()).matches("example.com"));
    }

    /// Tools and what each requires.
    type Edges<'a> = &'a [(&'a str, &'a [&'a str])];

    fn graph(edges: Edges<'_>) -> Named<Vec<String>> {
        edges
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn every_group_of_tools_requiring_each_other_is_one_cycle() {
        let cases: &[(Edges<'_>, &[&[&str]])] = &[
            (&[("a", &["b"]), ("b", &["c"])], &[]),
            (
                &[("a", &["b"]), ("b", &["c"]), ("c", &["a"])],
                &[&["a", "b", "c", "a"]],
            ),
            (&[("a", &["a"])], &[&["a", "a"]]),
            // Two separate cycles: both reported, in the policy's order.
            (
                &[("x", &["y"]), ("a", &["b"]), ("y", &["x"]), ("b", &["a"])],
                &[&["x", "y", "x"], &["a", "b", "a"]],
            ),
            // One group with two loops through `a`: its shortest cycle, once.
            (
                &[
                    ("a", &["b", "c"]),
                    ("b", &["d"]),
                    ("d", &["a"]),
                    ("c", &["a"]),
                ],
                &[&["a", "c", "a"]],
            ),
            // A cycle reached through a tool outside it starts at its own first tool.
            (
                &[("top", &["p"]), ("p", &["q"]), ("q", &["p"])],
                &[&["p", "q", "p"]],
            ),
            // A diamond is not a cycle.
            (&[("a", &["b", "c"]), ("b", &["d"]), ("c", &["d"])], &[]),
        ];
        for (edges, want) in cases {
            let got = find_cycles(&graph(edges));
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|c| c.iter().map(|s| s.to_string()).collect())
                .collect();
            assert_eq!(got, want, "{edges:?}");
        }
    }

    #[test]
    fn a_long_chain_of_prerequisites_is_no_danger() {
        let n = 200_000;
        let mut r = Named::default();
        for i in 0..n {
            r.insert(format!("t{i}"), vec![format!("t{}", (i + 1) % n)]);
        }
        let cycles = find_cycles(&r);
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].len(), n + 1);
        r.insert(format!("t{}", n - 1), vec![]);
        assert!(find_cycles(&r).is_empty());
    }
}
