//! Checks an argument's `kind` switches on: `path`, `shell`, `url`, `regex`, `git_ref`.

use std::borrow::Cow;

use serde_json::Value;

use super::{Checker, Inquiry, blocked, internal};
use crate::error::{Category, ToolError};
use crate::policy::rules::HostPattern;
use crate::policy::{ArgKind, Policy, toml_key};
use metagate_checks::host::{embedded_addresses, url_host};
use metagate_checks::path::{self, Access, PathError};
use metagate_checks::shell;
use metagate_wire::args::ArgValue;

/// An argument whose kind switches checks on.
pub(super) struct ArgToCheck<'v, 'a> {
    pub(crate) name: &'v str,
    pub(crate) kind: ArgKind,
    /// What the tool does with it, for `path` arguments.
    pub(crate) access: Access,
    pub(crate) value: &'v ArgValue<'a>,
}

/// What to tell a model that sent `language` (`Python`, `JavaScript`) as a shell command: the
/// runtime the tool declares for it, when one of its arguments offers one.
fn runtime_suggestion(policy: &Policy, tool: &str, language: &str) -> String {
    let wanted: &[&str] = match language {
        "Python" => &["python", "python3"],
        _ => &["nodejs", "node", "javascript"],
    };
    let runtime = policy.tool(tool).and_then(|t| {
        t.args.iter().find_map(|(arg, spec)| {
            let allowed = spec.one_of.as_ref()?;
            let value = allowed
                .iter()
                .filter_map(Value::as_str)
                .find(|v| wanted.contains(v))?;
            Some(format!("\"{arg}\": \"{value}\""))
        })
    });
    match runtime {
        Some(runtime) => {
            format!("The code looks like {language}, not a shell command: send it with {runtime}")
        }
        None => format!(
            "The code looks like {language}, not a shell command: run it where {language} runs, \
             or send a command bash can read"
        ),
    }
}

/// Checks every string the argument holds: a string, or every string inside an array or an
/// object, however deep (see [`texts`]).
pub(super) fn check(
    checker: &Checker,
    policy: &Policy,
    tool: &str,
    arg: &ArgToCheck<'_, '_>,
    inquiry: &mut Inquiry<'_>,
) -> Result<(), Box<ToolError>> {
    let ArgToCheck {
        name,
        kind,
        access,
        value,
    } = *arg;
    let fs = inquiry.fs;
    let mut note = |line: std::fmt::Arguments<'_>| inquiry.note(line);
    // Most arguments are one string, read without building a JSON value (or a list).
    let one;
    let single: [&str; 1];
    let whole;
    let held: Vec<Cow<'_, str>>;
    let listed: Vec<&str>;
    let strings: &[&str] = match value.as_str() {
        Some(s) => {
            one = s;
            single = [&*one];
            &single
        }
        None => {
            whole = value.to_value();
            held = texts(&whole);
            listed = held.iter().map(|s| &**s).collect();
            &listed
        }
    };
    for &s in strings {
        match kind {
            ArgKind::Path => {
                let rules = match checker.paths(fs, access) {
                    Ok(r) => r,
                    Err(e) => return internal(policy, tool, &e.to_string()),
                };
                match path::check(s, rules, fs) {
                    Ok(relative) => note(format_args!(
                        "{name} (path): {s:?} resolves to {relative:?} inside the root"
                    )),
                    Err(e) => {
                        let readable = matches!(e, PathError::Protected { .. })
                            && access == Access::Write
                            && matches!(checker.paths(fs, Access::Read), Ok(read) if path::check(s, read, fs).is_ok());
                        return Err(Box::new(path_refused(
                            tool, name, s, &e, rules, readable, &mut note,
                        )));
                    }
                }
            }
            ArgKind::Shell => {
                let world = ShellWorld { checker, fs };
                match shell::check(s, &checker.shell_rules(&world)) {
                    None => note(format_args!("{name} (shell): passes")),
                    Some(finding) if finding.is_too_large() => {
                        let rule = finding.rule();
                        note(format_args!("{name} (shell): refused: {rule}"));
                        return Err(Box::new(
                            ToolError::new(
                                Category::InvalidParameters,
                                [name, ": ", &rule].concat(),
                            )
                            .tool(tool)
                            .suggest(format!(
                                "Send a command of at most {} bytes; put long text in a file first",
                                shell::MAX_COMMAND_BYTES
                            ))
                            .detail("argument", name),
                        ));
                    }
                    Some(shell::Finding::Unreadable { reason }) => {
                        // Not bash (a syntax error, often code of another language sent to
                        // the terminal): the model's mistake, which a rewrite can fix.
                        note(format_args!("{name} (shell): refused: {reason}"));
                        let suggestion = match shell::other_language(s) {
                            Some(language) => runtime_suggestion(policy, tool, language),
                            None => "Send a command bash can read".to_string(),
                        };
                        return Err(Box::new(
                            ToolError::new(
                                Category::InvalidParameters,
                                [name, ": bash cannot run this: ", reason.as_str()].concat(),
                            )
                            .tool(tool)
                            .suggest(suggestion)
                            .detail("argument", name),
                        ));
                    }
                    Some(finding) => {
                        let rule = finding.rule();
                        note(format_args!("{name} (shell): refused: {rule}"));
                        let suggestion = match &finding {
                            shell::Finding::NotAllowed { .. } => checker.allowed_suggestion(),
                            _ => "Rewrite the command without it; run the steps as separate plain commands".to_string(),
                        };
                        return Err(Box::new(
                            blocked(
                                tool,
                                [name, ": the command is refused: ", &rule].concat(),
                                suggestion,
                                &rule,
                            )
                            .detail("argument", name),
                        ));
                    }
                }
            }
            ArgKind::Url => {
                let rules = &policy.rules.urls;
                let verdict = match url_host(s) {
                    Err(e) => Err(e.to_string()),
                    Ok((scheme, host)) => {
                        if !rules.schemes.is_empty() && !rules.schemes.iter().any(|s| *s == scheme)
                        {
                            // `url_host` admits only ASCII letters, digits, `+-.` in schemes.
                            let mut rule = String::from("scheme \"");
                            rule.push_str(&scheme);
                            rule.push_str("\" is not allowed (urls.schemes: ");
                            rule.push_str(&rules.schemes.join(", "));
                            rule.push(')');
                            Err(rule)
                        } else if let Some(p) = rules.deny_hosts.iter().find(|p| p.matches(&host)) {
                            Err(format!("host {host} is denied (urls.deny_hosts: {})", p.0))
                        } else if let Some((address, p)) = denied_inside(&host, &rules.deny_hosts) {
                            Err(format!(
                                "host {host} names the denied address {address} (urls.deny_hosts: {})",
                                p.0
                            ))
                        } else if !rules.hosts.is_empty()
                            && !rules.hosts.iter().any(|p| p.matches(&host))
                        {
                            Err(format!("host {host} is not in urls.hosts"))
                        } else {
                            Ok(host)
                        }
                    }
                };
                match verdict {
                    Ok(host) => note(format_args!("{name} (url): host {host} allowed")),
                    Err(rule) => {
                        note(format_args!("{name} (url): refused: {rule}"));
                        return Err(Box::new(
                            blocked(
                                tool,
                                refused(name, "URL", s, &rule),
                                "Use a URL the policy allows".to_string(),
                                &rule,
                            )
                            .detail("argument", name),
                        ));
                    }
                }
            }
            ArgKind::Regex => match regex::RegexBuilder::new(s).size_limit(1 << 20).build() {
                Ok(_) => note(format_args!("{name} (regex): compiles")),
                Err(e) => {
                    let first = e
                        .to_string()
                        .lines()
                        .last()
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                    note(format_args!("{name} (regex): does not compile: {first}"));
                    return Err(Box::new(ToolError::new(
                        Category::InvalidParameters,
                        format!("{name} is not a valid regular expression: {first}"),
                    )
                    .tool(tool)
                    .suggest(format!("Send {name} as a valid regular expression (escape special characters with \\\\)"))
                    .detail("argument", name)));
                }
            },
            ArgKind::GitRef => {
                match git_ref_problem(s) {
                    None => note(format_args!("{name} (git_ref): valid")),
                    Some(problem) => {
                        note(format_args!("{name} (git_ref): {problem}"));
                        return Err(Box::new(ToolError::new(
                        Category::InvalidParameters,
                        format!("{name} is not a valid git reference: {problem}"),
                    )
                    .tool(tool)
                    .suggest(
                        "Use a branch, tag or commit name of letters, digits, -, _, / and ."
                            .to_string(),
                    )
                    .detail("argument", name)));
                    }
                }
            }
        }
    }
    Ok(())
}

/// What the shell check asks of the world: the path rules for redirections (which refuse
/// metagate's own files too), and the file identity of the running binary.
struct ShellWorld<'a> {
    checker: &'a Checker,
    fs: &'a dyn path::Fs,
}

impl shell::World for ShellWorld<'_> {
    fn redirect(&self, target: &str) -> Result<(), shell::Refusal> {
        let rules = self
            .checker
            .paths(self.fs, Access::Write)
            .as_ref()
            .map_err(|e| shell::Refusal(e.to_string()))?;
        path::check(target, rules, self.fs)
            .map(|_| ())
            .map_err(|e| shell::Refusal(e.rule()))
    }

    fn is_own_binary(&self, command: &[u8]) -> bool {
        self.checker.is_own_binary(command)
    }

    fn program(&self, command: &[u8]) -> Option<shell::Resolved> {
        self.checker.program(command)
    }
}

/// An address `host` carries or spells out (see [`embedded_addresses`]) that a deny rule
/// matches, and the rule.
fn denied_inside<'r>(host: &str, deny: &'r [HostPattern]) -> Option<(String, &'r HostPattern)> {
    if deny.is_empty() {
        return None;
    }
    embedded_addresses(host)
        .into_iter()
        .find_map(|address| Some((address.clone(), deny.iter().find(|p| p.matches(&address))?)))
}

/// The rejection of a path argument. `readable`: it names a folder on the way to one of
/// metagate's own files, which an argument declared `access = "read"` may name.
fn path_refused(
    tool: &str,
    name: &str,
    value: &str,
    error: &PathError,
    rules: &path::PathRules,
    readable: bool,
    note: &mut impl FnMut(std::fmt::Arguments<'_>),
) -> ToolError {
    let (rule, suggestion) = match error {
        // The model is told the rule, not which of the operator's files it met.
        PathError::Protected { .. } => {
            let rule = "metagate's own files are protected".to_string();
            let mut suggestion = String::from(
                "Leave metagate's policy files, its telemetry store and the folders that hold them alone",
            );
            if readable {
                suggestion.push_str(&format!(
                    " (this names a folder that holds them, which a tool that only reads may name: if {tool} only reads {name}, the operator can declare it with access = \"read\" in [tools.{}.args.{}])",
                    toml_key(tool),
                    toml_key(name)
                ));
            }
            (rule, suggestion)
        }
        e => {
            let mut text = String::with_capacity(rules.root().as_os_str().len() + 48);
            text.push_str("Use a path inside ");
            path::push_path(&mut text, rules.root());
            text.push_str(" that no deny rule matches");
            (e.rule(), text)
        }
    };
    note(format_args!("{name} (path): {value:?} refused: {rule}"));
    blocked(tool, refused(name, "path", value, &rule), suggestion, &rule).detail("argument", name)
}

/// Every text in `value` a tool could take for the argument: strings, numbers and booleans
/// (as JSON writes them), inside arrays and objects' values at any depth. A policy may put a
/// kind on an `array`, `object` or `any` argument, and a tool may read a path or a command
/// from anywhere in it, so nothing is skipped: a check that skipped what it cannot read would
/// let it through unchecked. Only `null` holds no text.
pub(crate) fn texts(value: &Value) -> Vec<Cow<'_, str>> {
    fn walk<'v>(value: &'v Value, out: &mut Vec<Cow<'v, str>>) {
        match value {
            Value::String(s) => out.push(Cow::Borrowed(s)),
            Value::Number(n) => out.push(Cow::Owned(n.to_string())),
            Value::Bool(b) => out.push(Cow::Borrowed(if *b { "true" } else { "false" })),
            Value::Null => {}
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
        }
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    out
}

/// `{name}: the {what} "{value}" is refused: {rule}`, the value shortened.
fn refused(name: &str, what: &str, value: &str, rule: &str) -> String {
    let mut text = String::with_capacity(name.len() + what.len() + value.len() + rule.len() + 32);
    text.push_str(name);
    text.push_str(": the ");
    text.push_str(what);
    text.push(' ');
    push_shortened(&mut text, value);
    text.push_str(" is refused: ");
    text.push_str(rule);
    text
}

/// The first 120 characters of `s` as `{:?}` writes them, and `…` when there were more.
fn push_shortened(out: &mut String, s: &str) {
    use std::fmt::Write as _;
    // What `{:?}` writes, without its per-character escaping where nothing needs it.
    if s.len() <= 120
        && s.bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    let cut = s.char_indices().nth(120).map_or(s, |(at, _)| &s[..at]);
    let _ = write!(out, "{cut:?}");
    if cut.len() < s.len() {
        out.push('…');
    }
}

#[cfg(test)]
fn shorten(s: &str) -> String {
    let mut out = String::new();
    push_shortened(&mut out, s);
    out
}

/// What is wrong with a git reference (seed 003's characters; no `..`, no leading `-`).
fn git_ref_problem(r: &str) -> Option<&'static str> {
    if r.is_empty() {
        Some("it is empty")
    } else if r.starts_with('-') {
        Some("it starts with '-' (it would be read as an option)")
    } else if r.contains("..") {
        Some("it contains '..'")
    } else if !r
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'.'))
    {
        Some("it holds characters other than letters, digits, '-', '_', '/' and '.'")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The shortcut for plain text writes what `{:?}` writes.
        #[test]
        fn shorten_quotes_as_debug_does(s in "[ -~]{0,130}|\\PC{0,10}") {
            let cut: String = s.chars().take(120).collect();
            let expected = if cut.len() < s.len() {
                format!("{cut:?}…")
            } else {
                format!("{cut:?}")
            };
            prop_assert_eq!(shorten(&s), expected);
        }
    }

    #[test]
    fn texts_are_every_string_at_every_depth() {
        let value =
            serde_json::json!(["a", ["b", {"k": "c", "n": {"deep": ["d"]}}], 7, false, null]);
        let got: Vec<String> = texts(&value).into_iter().map(Cow::into_owned).collect();
        assert_eq!(got, ["a", "b", "c", "d", "7", "false"]);
        assert!(texts(&Value::Null).is_empty());
    }

    /// The verdict on `{"url": url}` for a tool whose `url` is of kind `url`, under the
    /// default `[urls]` rules.
    fn url_verdict(url: &str) -> Result<(), String> {
        use super::super::{CallToCheck, Context, Inquiry, NoFacts, Scope};
        use metagate_checks::path::RealFs;
        use metagate_wire::args::Args;
        let (policy, checker) = super::super::test_checker(
            "extends = \"none\"\n[tools.fetch.args.url]\ntype = \"string\"\nkind = \"url\"\n",
        );
        let args =
            Args::from_map(serde_json::from_value(serde_json::json!({ "url": url })).unwrap());
        let mut explain = None;
        let mut inquiry = Inquiry {
            facts: &mut NoFacts,
            fs: &RealFs,
            now_ms: 0,
            scope: Scope { runtime: false },
            explain: &mut explain,
            grant_check: None,
        };
        let context = Context::default();
        let call = CallToCheck {
            tool: "fetch",
            args: &args,
            context: &context,
        };
        checker
            .check(&policy, &call, &mut inquiry)
            .map_err(|e| e.message.clone())
    }

    /// Cloud metadata endpoints the default deny list lacked, names that spell out a denied
    /// address for a wildcard DNS service, IPv6 addresses that carry one, and URLs whose host
    /// parsers read differently (issue 24, item 4). Each of `newly_refused` passed before;
    /// `still_refused` are the other classic cases, refused before too, kept so they stay so.
    #[test]
    fn metadata_hosts_and_ambiguous_urls_are_refused() {
        let newly_refused = [
            // Endpoints missing from the default list.
            "http://169.254.170.2/v2/credentials/x",
            "http://100.100.100.200/latest/meta-data/",
            "http://192.0.0.192/",
            "http://instance-data/latest/meta-data/",
            "http://instance-data.ec2.internal/latest/",
            "http://metadata/computeMetadata/v1/",
            "http://METADATA./computeMetadata/v1/",
            "http://metadata.goog/computeMetadata/v1/",
            "http://metadata.tencentyun.com/latest/",
            // In other spellings.
            "http://0xa9.0xfe.0xaa.0x2/",
            "http://1684301000/",
            // IPv6 addresses that carry a denied IPv4 address.
            "http://[::169.254.169.254]/",
            "http://[::a9fe:a9fe]/",
            "http://[::ffff:0:169.254.169.254]/",
            "http://[64:ff9b::169.254.169.254]/",
            "http://[2002:a9fe:a9fe::1]/",
            "http://[2001:0:a9fe:a9fe::1]/",
            "http://[2001:0:4136:e378:8000:63bf:5601:5601]/",
            // Names a wildcard DNS service answers with a denied address.
            "http://169.254.169.254.nip.io/",
            "http://app.169.254.169.254.nip.io/latest/",
            "http://169-254-169-254.nip.io/",
            "http://app-169-254-169-254.sslip.io/",
            "http://169-254-169-254-app.traefik.me/",
            "http://a9fea9fe.nip.io/",
            "http://magic-a9fea9fe.nip.io/",
            "http://A9FEA9FE.nip.io/",
            "http://100.100.100.200.sslip.io/",
            "http://169.254.169.254.evil.example/",
            "http://fd00-ec2--254.sslip.io/",
            "http://www-fd00-ec2-0-0-0-0-0-254.sslip.io/",
            "http://--ffff-a9fe-a9fe.sslip.io/",
            // What parsers read differently: host `x` to some, the address to others.
            "http://x#@169.254.169.254/",
            "http://x?@169.254.169.254/",
            "http://x#@169.254.169.254",
            "http://example.com?a=b@169.254.169.254",
            "http://example.com#x@169.254.169.254/y",
            "http://example.com:80#@169.254.169.254/",
        ];
        let still_refused = [
            "http://a@b@169.254.169.254/",
            "http://169.254.169.254\\@example.com/",
            "http://example.com\\@169.254.169.254/",
            "http:\\\\169.254.169.254/",
            "http:/\\169.254.169.254/",
            "http:169.254.169.254/",
            "http:/169.254.169.254/",
            "http:///169.254.169.254/",
            "http://169.254.169.254\t/",
            "http://169.254.169\n.254/",
            "http://example.com%2f@169.254.169.254/",
            "http://[::ffff:a9fe:a9fe]%23@example.com/",
            "http://169.254.169.254:80:80/",
            "http://169.254.169.254%23.example.com/",
        ];
        for url in newly_refused.iter().chain(&still_refused) {
            assert!(url_verdict(url).is_err(), "{url:?} passes");
        }
        let passes = [
            "https://example.com/",
            "https://docs.rs/url/latest/url/",
            "http://localhost:8080/health",
            "https://192.168.1.10/admin",
            "https://api.github.com/repos/a/b?per_page=100",
            "https://example.com/?email=a@example.org",
            "https://medium.com/@someone/a-post",
            "https://www.npmjs.com/package/@scope/pkg",
            "https://example.com/#section@2",
            "https://10.0.0.1.nip.io/",
            "https://app-10-0-0-1.nip.io/",
            "https://metadata.example.com/",
            "https://my-metadata.io/",
            "https://instance-data-viewer.app/",
            "https://169.254.169.253/",
            "https://[2001:db8::1]/",
            "https://[::1]:8080/",
            "https://deadbeef.example/",
            "https://2021-10-01.example.com/",
            "https://v1-2-3-4.example.com/",
        ];
        for url in passes {
            assert_eq!(url_verdict(url), Ok(()), "{url:?}");
        }
    }

    #[test]
    fn git_refs() {
        for ok in ["main", "feature/x-1", "v1.2.3", "a_b", "0123abc"] {
            assert_eq!(git_ref_problem(ok), None, "{ok}");
        }
        for bad in [
            "", "-rf", "a..b", "x y", "a;b", "$(id)", "a~1", "HEAD@{1}", "a:b",
        ] {
            assert!(git_ref_problem(bad).is_some(), "{bad}");
        }
    }
}
