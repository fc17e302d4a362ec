//! Rates, the session quota and the loop breaker, counted from the calls the gate let
//! through (rejections never count: only first attempts do).

use serde_json::{Value, json};

use super::{CallToCheck, Context, Inquiry, internal};
use crate::error::{Category, ToolError};
use crate::events::format_time;
use crate::policy::rules::Rate;
use crate::policy::toml_key;
use crate::policy::{Policy, Tool};
use metagate_wire::args::{ArgValue, Args};
use metagate_wire::scan;

/// Argument values longer than this are fingerprinted by their text as sent.
const CANONICAL_UP_TO: usize = 64 * 1024;

/// What a count is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CountKey {
    /// Every call of one caller.
    Caller(String),
    /// Every call of one tool.
    Tool(String),
    /// Every call in one session.
    Session(String),
    /// The same tool with the same arguments, in the same session (or, without one, for the
    /// same caller, or anywhere).
    Fingerprint {
        /// A hash of the tool and its arguments.
        fingerprint: i64,
        /// The session it was called in, if any.
        session: Option<String>,
        /// The caller, when there is no session.
        caller: Option<String>,
    },
}

/// How many calls matched, and when the oldest of them was (when a window frees a slot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// How many calls the window holds.
    pub n: u64,
    /// When the oldest of them was made, to say when the limit frees up.
    pub oldest_ms: Option<i64>,
}

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 3_600_000;

/// Whether any limit counts calls of `tool` under `context`: when none does, [`check`]
/// counts nothing, refuses nothing and notes nothing.
pub(super) fn apply(policy: &Policy, tool: &str, context: &Context) -> bool {
    let limits = &policy.rules.limits;
    let per_caller = context
        .caller
        .as_deref()
        .map_or(limits.per_caller, |c| caller_rate(policy, c));
    !per_caller.is_unlimited()
        || !tool_rate(policy, tool).is_unlimited()
        || limits.session_quota.is_some()
        || limits.loop_breaker.is_some()
}

/// The caller's own rate, else `[limits] per_caller`.
fn caller_rate(policy: &Policy, caller: &str) -> Rate {
    policy
        .rules
        .callers
        .get(caller)
        .and_then(|c| c.rate)
        .unwrap_or(policy.rules.limits.per_caller)
}

/// The tool's own rate, else `[limits] per_tool`.
fn tool_rate(policy: &Policy, tool: &str) -> Rate {
    policy
        .rules
        .tool_rates
        .get(tool)
        .copied()
        .unwrap_or(policy.rules.limits.per_tool)
}

pub(super) fn check(
    policy: &Policy,
    call: &CallToCheck<'_, '_>,
    inquiry: &mut Inquiry<'_>,
) -> Result<(), Box<ToolError>> {
    let CallToCheck {
        tool,
        args,
        context,
    } = *call;
    let limits = &policy.rules.limits;
    let now = inquiry.now_ms;
    if let Some(caller) = &context.caller {
        let rate = caller_rate(policy, caller);
        if !rate.is_unlimited() {
            let key = CountKey::Caller(caller.clone());
            rate_check(policy, tool, "per_caller", &key, rate, inquiry)?;
        }
    } else if !limits.per_caller.is_unlimited() {
        inquiry.note(format_args!(
            "limits per caller: no caller given, not counted"
        ));
    }
    let tool_rate = tool_rate(policy, tool);
    if !tool_rate.is_unlimited() {
        let key = CountKey::Tool(tool.to_string());
        rate_check(policy, tool, "per_tool", &key, tool_rate, inquiry)?;
    }
    if let Some(quota) = limits.session_quota {
        match &context.session {
            Some(session) => {
                let key = CountKey::Session(session.clone());
                let count = match inquiry.facts.count(&key, None, now, quota) {
                    Ok(c) => c,
                    Err(e) => return internal(policy, tool, &e.reason("limits are counted")),
                };
                inquiry.note(format_args!(
                    "session quota {}: {}/{quota}",
                    session, count.n
                ));
                if count.n >= quota {
                    return Err(Box::new(limited(
                        tool,
                        format!("session {session} has used its quota of {quota} calls"),
                        "Start a new session, or ask the operator to raise the quota".to_string(),
                        LimitReached {
                            limit: "session_quota",
                            rule: "limits.session_quota".to_string(),
                            max: quota,
                            count: count.n,
                            resets_ms: None,
                            now: None,
                        },
                    )));
                }
            }
            None => inquiry.note(format_args!("session quota: no session given, not counted")),
        }
    }
    if let Some(lb) = limits.loop_breaker {
        let key = CountKey::Fingerprint {
            fingerprint: fingerprint(tool, policy.tool(tool), args),
            session: context.session.clone(),
            caller: context.caller.clone(),
        };
        let count = match inquiry
            .facts
            .count(&key, Some(now - lb.window_ms + 1), now, lb.repeat)
        {
            Ok(c) => c,
            Err(e) => return internal(policy, tool, &e.reason("limits are counted")),
        };
        let secs = lb.window_ms / 1000;
        inquiry.note(format_args!(
            "loop breaker: {} identical calls in the last {secs} s (the {} is refused)",
            count.n,
            ordinal(lb.repeat)
        ));
        if count.n + 1 >= lb.repeat {
            return Err(Box::new(limited(
                tool,
                format!(
                    "this is the {} identical call to {tool} within {secs} s: it looks like a loop",
                    ordinal(count.n + 1)
                ),
                "Do not repeat the same call: change the arguments, try another tool, or answer with what you have"
                    .to_string(),
                LimitReached {
                    limit: "loop",
                    rule: "limits.loop".to_string(),
                    max: lb.repeat - 1,
                    count: count.n,
                    resets_ms: count.oldest_ms.map(|o| o + lb.window_ms),
                    now: Some(now),
                },
            )));
        }
    }
    Ok(())
}

fn rate_check(
    policy: &Policy,
    tool: &str,
    scope: &str,
    key: &CountKey,
    rate: Rate,
    inquiry: &mut Inquiry<'_>,
) -> Result<(), Box<ToolError>> {
    let now = inquiry.now_ms;
    let (kind, name) = match key {
        CountKey::Caller(c) => ("caller ", c.as_str()),
        CountKey::Tool(t) => ("tool ", t.as_str()),
        _ => ("", scope),
    };
    // The policy key that set this rate: the caller's or tool's own, else `[limits]`'s.
    let own = match key {
        CountKey::Caller(c) => policy
            .rules
            .callers
            .get(c)
            .is_some_and(|c| c.rate.is_some())
            .then(|| format!("callers.{}.limits", toml_key(c))),
        CountKey::Tool(t) => policy
            .rules
            .tool_rates
            .contains_key(t)
            .then(|| format!("tools.{}.limits", toml_key(t))),
        _ => None,
    };
    let table = own.unwrap_or_else(|| format!("limits.{scope}"));
    for (max, window, unit) in [
        (rate.per_minute, MINUTE_MS, "minute"),
        (rate.per_hour, HOUR_MS, "hour"),
    ] {
        let Some(max) = max else { continue };
        let count = match inquiry.facts.count(key, Some(now - window + 1), now, max) {
            Ok(c) => c,
            Err(e) => return internal(policy, tool, &e.reason("limits are counted")),
        };
        inquiry.note(format_args!(
            "limit {scope} per {unit} ({kind}{name}): {}/{max}",
            count.n
        ));
        if count.n >= max {
            let resets = count.oldest_ms.map(|o| o + window);
            return Err(Box::new(limited(
                tool,
                format!("{kind}{name} reached its limit of {max} calls per {unit}"),
                match resets {
                    Some(r) => format!("Wait until {} before calling again", format_time(r)),
                    None => "Wait before calling again".to_string(),
                },
                LimitReached {
                    limit: &format!("{scope}_per_{unit}"),
                    rule: format!("{table}.per_{unit}"),
                    max,
                    count: count.n,
                    resets_ms: resets,
                    now: Some(now),
                },
            )));
        }
    }
    Ok(())
}

/// A limit a call reached: which, where the policy sets it, and when it frees a slot.
struct LimitReached<'l> {
    /// The limit's name in `details.limit` (`per_caller_per_minute`, `loop`, …).
    limit: &'l str,
    /// The policy key that set it.
    rule: String,
    max: u64,
    count: u64,
    resets_ms: Option<i64>,
    now: Option<i64>,
}

fn limited(
    tool: &str,
    message: String,
    suggestion: String,
    reached: LimitReached<'_>,
) -> ToolError {
    let LimitReached {
        limit,
        rule,
        max,
        count,
        resets_ms,
        now,
    } = reached;
    let mut e = ToolError::new(Category::RateLimited, message)
        .tool(tool)
        .suggest(suggestion)
        .detail("rule", rule)
        .detail("limit", limit)
        .detail("max", max)
        .detail("count", count);
    e.details.insert(
        "resets_at",
        resets_ms.map_or(Value::Null, |r| json!(format_time(r))),
    );
    if let (Some(r), Some(n)) = (resets_ms, now) {
        e.details.insert("retry_after_ms", json!((r - n).max(0)));
    }
    e
}

fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Identifies calls that do the same thing, however they are spelled (FNV-1a, stored as
/// SQLite's signed integer): the tool and its arguments after correction, in any key order
/// (objects inside too); strings with outer whitespace trimmed and inner runs of it read as
/// one space; numbers by value (`5`, `5.0` and `50e-1` are one); and, when the tool declares
/// its arguments (`spec`), only the declared ones, so that an extra argument the tool does not
/// read (a nonce) does not make a repeated call new. A model stuck in a loop varies exactly
/// these; the call itself goes out as it came. A value over [`CANONICAL_UP_TO`] bytes is
/// taken as it was sent.
pub fn fingerprint(tool: &str, spec: Option<&Tool>, args: &Args<'_>) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(tool.as_bytes());
    feed(&[0]);
    // A tool that declares no arguments says nothing about which ones it reads: all count.
    let declared = spec.map(|t| &t.args).filter(|a| !a.is_empty());
    let mut fields: Vec<(&str, &ArgValue<'_>)> = args
        .iter()
        .filter(|(key, _)| declared.is_none_or(|d| d.contains_key(*key)))
        .collect();
    fields.sort_unstable_by_key(|(key, _)| *key);
    let mut value = Vec::with_capacity(64);
    for (key, arg) in fields {
        feed(key.as_bytes());
        feed(b"=");
        match arg {
            // A value this long is taken as it was sent: a call of many megabytes is not read
            // into values (many times its size) to be told from the last one, and a loop
            // repeats its text exactly.
            ArgValue::Raw(text) if text.len() > CANONICAL_UP_TO => feed(text.as_bytes()),
            _ => {
                value.clear();
                write_canonical(&arg.to_value(), &mut value);
                feed(&value);
            }
        }
        feed(&[0]);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// Compact JSON with every object's keys in order, strings with their whitespace folded and
/// numbers in one spelling, so none of these changes a fingerprint.
fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                scan::write_string(k, out);
                out.push(b':');
                write_canonical(&map[k.as_str()], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::String(s) => {
            let mut folded = String::with_capacity(s.len());
            for word in s.split_whitespace() {
                if !folded.is_empty() {
                    folded.push(' ');
                }
                folded.push_str(word);
            }
            scan::write_string(&folded, out);
        }
        Value::Number(n) => write_number(&n.to_string(), out),
        other => scan::write_value(other, out),
    }
}

/// A JSON number by its value: `[-]DIGITSeEXP` with no leading or trailing zero in the
/// digits (`0` for zero, whatever its sign). Exact at any precision: `5`, `5.0`, `0.5e1` and
/// `500e-2` are all `5e0`; 2^53 + 1 is not 2^53. An exponent too long to add up is kept as
/// written.
fn write_number(text: &str, out: &mut Vec<u8>) {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
        None => (unsigned, "0"),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let Ok(exponent) = exponent.parse::<i128>() else {
        out.extend_from_slice(text.as_bytes());
        return;
    };
    let digits = [whole.as_bytes(), fraction.as_bytes()].concat();
    let Some(first) = digits.iter().position(|&d| d != b'0') else {
        out.push(b'0');
        return;
    };
    let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
    let trailing_zeros = (digits.len() - 1 - last) as i128;
    let exponent = exponent - fraction.len() as i128 + trailing_zeros;
    if negative {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[first..=last]);
    out.push(b'e');
    out.extend_from_slice(exponent.to_string().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Args<'_> {
        Args::from_text(text).unwrap()
    }

    /// A tool that declares `query` (a string), `count` (a number) and `tags` (a list).
    fn search_tool() -> Policy {
        Policy::from_source(
            crate::policy::Source {
                name: "p.toml",
                text: "extends = \"none\"\n\
                       [tools.search.args.query]\ntype = \"string\"\n\
                       [tools.search.args.count]\ntype = \"number\"\n\
                       [tools.search.args.tags]\ntype = \"array\"\n\
                       [tools.search.args.filter]\ntype = \"object\"\n\
                       [tools.bare]\n",
            },
            None,
        )
        .unwrap()
    }

    /// Calls that do the same thing, spelled differently: one fingerprint. Every row but the
    /// first (key order) had two before (issue 24, item 5).
    #[test]
    fn calls_that_do_the_same_thing_have_one_fingerprint() {
        let policy = search_tool();
        let search = policy.tool("search");
        let same: &[(&str, &str, &str)] = &[
            (
                "key order",
                r#"{"query":"a","count":5}"#,
                r#"{"count":5,"query":"a"}"#,
            ),
            (
                "trailing space",
                r#"{"query":"rust"}"#,
                r#"{"query":"rust "}"#,
            ),
            (
                "leading space",
                r#"{"query":"rust"}"#,
                r#"{"query":"  rust"}"#,
            ),
            (
                "doubled space",
                r#"{"query":"rust lang"}"#,
                r#"{"query":"rust  lang"}"#,
            ),
            (
                "tab and newline",
                r#"{"query":"rust lang"}"#,
                r#"{"query":"\trust\n lang\r\n"}"#,
            ),
            (
                "no-break space",
                r#"{"query":"rust lang"}"#,
                r#"{"query":"rust\u00a0lang\u3000"}"#,
            ),
            ("5 and 5.0", r#"{"count":5}"#, r#"{"count":5.0}"#),
            ("5 and 5e0", r#"{"count":5}"#, r#"{"count":5e0}"#),
            ("5 and 50e-1", r#"{"count":5}"#, r#"{"count":50E-1}"#),
            ("0.5 and 5e-1", r#"{"count":0.5}"#, r#"{"count":5e-1}"#),
            ("1.5 and 1.50", r#"{"count":1.5}"#, r#"{"count":1.50}"#),
            ("100 and 1e2", r#"{"count":100}"#, r#"{"count":1e+2}"#),
            ("0 and -0.0", r#"{"count":0}"#, r#"{"count":-0.0}"#),
            (
                "undeclared argument",
                r#"{"query":"a"}"#,
                r#"{"query":"a","nonce":1}"#,
            ),
            (
                "two undeclared",
                r#"{"query":"a"}"#,
                r#"{"query":"a","x":"y","_t":[1]}"#,
            ),
            (
                "inside a list",
                r#"{"tags":["a b",2]}"#,
                r#"{"tags":[" a  b ",2.0]}"#,
            ),
            (
                "inside an object",
                r#"{"filter":{"k":"v","n":1}}"#,
                r#"{"filter":{"n":1.0,"k":"v "}}"#,
            ),
        ];
        for (what, a, b) in same {
            assert_eq!(
                fingerprint("search", search, &args(a)),
                fingerprint("search", search, &args(b)),
                "{what}: {a} / {b}"
            );
        }
    }

    /// Calls that do different things keep different fingerprints.
    #[test]
    fn calls_that_do_different_things_differ() {
        let policy = search_tool();
        let search = policy.tool("search");
        let differ: &[(&str, &str, &str)] = &[
            ("another value", r#"{"query":"a"}"#, r#"{"query":"b"}"#),
            (
                "a space inside a word",
                r#"{"query":"ab"}"#,
                r#"{"query":"a b"}"#,
            ),
            ("letter case", r#"{"query":"Rust"}"#, r#"{"query":"rust"}"#),
            ("5 and 6", r#"{"count":5}"#, r#"{"count":6}"#),
            ("1.5 and 15", r#"{"count":1.5}"#, r#"{"count":15}"#),
            ("5 and 50", r#"{"count":5}"#, r#"{"count":50}"#),
            ("-5 and 5", r#"{"count":-5}"#, r#"{"count":5}"#),
            (
                "beyond f64 precision",
                r#"{"count":9007199254740993}"#,
                r#"{"count":9007199254740992}"#,
            ),
            (
                "a number and its text",
                r#"{"count":5}"#,
                r#"{"count":"5"}"#,
            ),
            (
                "absent and null",
                r#"{"query":"a"}"#,
                r#"{"query":"a","count":null}"#,
            ),
            (
                "a declared argument more",
                r#"{"query":"a"}"#,
                r#"{"query":"a","count":1}"#,
            ),
            (
                "list order",
                r#"{"tags":["a","b"]}"#,
                r#"{"tags":["b","a"]}"#,
            ),
            (
                "a value moved to another key",
                r#"{"query":"a"}"#,
                r#"{"tags":"a"}"#,
            ),
        ];
        for (what, a, b) in differ {
            assert_ne!(
                fingerprint("search", search, &args(a)),
                fingerprint("search", search, &args(b)),
                "{what}: {a} / {b}"
            );
        }
        let call = args(r#"{"query":"a"}"#);
        assert_ne!(
            fingerprint("search", search, &call),
            fingerprint("other", search, &call)
        );
        // A tool that declares no arguments, or none known: every argument counts.
        for spec in [policy.tool("bare"), None] {
            assert_ne!(
                fingerprint("bare", spec, &args(r#"{"a":1}"#)),
                fingerprint("bare", spec, &args(r#"{"a":1,"b":2}"#))
            );
            assert_eq!(
                fingerprint("bare", spec, &args(r#"{"a":"x "}"#)),
                fingerprint("bare", spec, &args(r#"{"a":"x"}"#))
            );
        }
    }

    #[test]
    fn numbers_are_written_by_value() {
        let cases = [
            ("0", "0"),
            ("-0", "0"),
            ("0.000", "0"),
            ("0e99", "0"),
            ("5", "5e0"),
            ("5.0", "5e0"),
            ("-5.10", "-51e-1"),
            ("120", "12e1"),
            ("0.012", "12e-3"),
            ("1.2E+3", "12e2"),
            (
                "1e99999999999999999999999999999999999999999",
                "1e99999999999999999999999999999999999999999",
            ),
        ];
        for (text, want) in cases {
            let mut out = Vec::new();
            write_number(text, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn fingerprints_ignore_key_order_only() {
        let args = |text| Args::from_text(text).unwrap();
        let a = args(r#"{"x":1,"y":{"b":2,"a":1}}"#);
        let b = args(r#"{"y":{"a":1,"b":2},"x":1}"#);
        let c = args(r#"{"x":2,"y":{"a":1,"b":2}}"#);
        assert_eq!(fingerprint("t", None, &a), fingerprint("t", None, &b));
        assert_ne!(fingerprint("t", None, &a), fingerprint("t", None, &c));
        assert_ne!(fingerprint("t", None, &a), fingerprint("u", None, &a));
        // Read values and values as sent fingerprint alike.
        let map: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"y":{"a":1,"b":2},"x":1}"#).unwrap();
        assert_eq!(
            fingerprint("t", None, &Args::from_map(map)),
            fingerprint("t", None, &a)
        );
        // A value past the limit is taken as sent: the same text, the same fingerprint.
        let long = format!(r#"{{"text":"{}","n":1}}"#, "x".repeat(CANONICAL_UP_TO));
        let again = long.clone();
        let other = format!(r#"{{"text":"{}y","n":1}}"#, "x".repeat(CANONICAL_UP_TO));
        assert_eq!(
            fingerprint("t", None, &args(&long)),
            fingerprint("t", None, &args(&again))
        );
        assert_ne!(
            fingerprint("t", None, &args(&long)),
            fingerprint("t", None, &args(&other))
        );
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 102]
            .iter()
            .map(|n| ordinal(*n))
            .collect();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "102nd"
            ]
        );
    }
}
