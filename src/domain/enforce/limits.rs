//! Rates, the session quota and the loop breaker, counted from the calls the gate let
//! through (rejections never count: only first attempts do).

use serde_json::{Value, json};

use super::{CallToCheck, Context, Inquiry, internal};
use crate::domain::error::{Category, ToolError};
use crate::domain::events::format_time;
use crate::domain::policy::Policy;
use crate::domain::policy::rules::Rate;
use crate::domain::policy::toml_key;
use crate::wire::args::{ArgValue, Args};
use crate::wire::scan;

/// Argument values longer than this are fingerprinted by their text as sent.
pub const CANONICAL_UP_TO: usize = 64 * 1024;

/// What a count is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CountKey {
    Caller(String),
    Tool(String),
    Session(String),
    /// The same tool with the same arguments, in the same session (or, without one, for the
    /// same caller, or anywhere).
    Fingerprint {
        fingerprint: i64,
        session: Option<String>,
        caller: Option<String>,
    },
}

/// How many calls matched, and when the oldest of them was (when a window frees a slot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub n: u64,
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
            fingerprint: fingerprint(tool, args),
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

/// Identifies a tool called with the same arguments, in any order: FNV-1a over the tool and
/// each argument, the arguments taken in key order, objects inside with their keys in order
/// too (stored as SQLite's signed integer).
pub fn fingerprint(tool: &str, args: &Args<'_>) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(tool.as_bytes());
    feed(&[0]);
    let mut fields: Vec<(&str, &ArgValue<'_>)> = args.iter().collect();
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

/// Compact JSON with every object's keys in order, so key order never changes a fingerprint.
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
        other => scan::write_value(other, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_key_order_only() {
        let args = |text| Args::from_text(text).unwrap();
        let a = args(r#"{"x":1,"y":{"b":2,"a":1}}"#);
        let b = args(r#"{"y":{"a":1,"b":2},"x":1}"#);
        let c = args(r#"{"x":2,"y":{"a":1,"b":2}}"#);
        assert_eq!(fingerprint("t", &a), fingerprint("t", &b));
        assert_ne!(fingerprint("t", &a), fingerprint("t", &c));
        assert_ne!(fingerprint("t", &a), fingerprint("u", &a));
        // Read values and values as sent fingerprint alike.
        let map: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"y":{"a":1,"b":2},"x":1}"#).unwrap();
        assert_eq!(fingerprint("t", &Args::from_map(map)), fingerprint("t", &a));
        // A value past the limit is taken as sent: the same text, the same fingerprint.
        let long = format!(r#"{{"text":"{}","n":1}}"#, "x".repeat(CANONICAL_UP_TO));
        let again = long.clone();
        let other = format!(r#"{{"text":"{}y","n":1}}"#, "x".repeat(CANONICAL_UP_TO));
        assert_eq!(
            fingerprint("t", &args(&long)),
            fingerprint("t", &args(&again))
        );
        assert_ne!(
            fingerprint("t", &args(&long)),
            fingerprint("t", &args(&other))
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
