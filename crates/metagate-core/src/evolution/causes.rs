//! Why the gate rejected a call, argument by argument, from the arguments it recorded: what
//! `review_schema` builds on. The names are read as the gate reads them (declared names,
//! aliases, another case style), so a call the correction rules would have fixed is not
//! counted against its schema.

use serde_json::{Map, Value};

use crate::correct::{coerce, value_fits};
use crate::policy::import::FaultKind;
use crate::policy::{Tool, fold_name};
use metagate_wire::args::ArgValue;

/// How an argument made a call fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Cause {
    /// A required argument absent, null or blank.
    Missing,
    /// A value of a type the argument does not take (and cannot be read as).
    WrongType,
    /// An object or array whose inside breaks the schema (a nested field missing or of the
    /// wrong type, items of the wrong shape).
    NestedShape,
    /// A value outside the argument's allowed values.
    Enum,
    /// A value of the right type breaking another constraint (a bound, a pattern, a format).
    InvalidValue,
}

impl Cause {
    pub(crate) const ALL: [Cause; 5] = [
        Cause::Missing,
        Cause::WrongType,
        Cause::NestedShape,
        Cause::Enum,
        Cause::InvalidValue,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Cause::Missing => "missing",
            Cause::WrongType => "wrong_type",
            Cause::NestedShape => "nested_shape",
            Cause::Enum => "enum",
            Cause::InvalidValue => "invalid_value",
        }
    }

    /// What a tool's author can do about this cause.
    pub(crate) fn suggestion(self) -> &'static str {
        match self {
            Cause::Missing => {
                "say in its description when it is needed, give it a default, or make it optional"
            }
            Cause::WrongType => {
                "state its type in the description with an example value, or accept the type models send"
            }
            Cause::NestedShape => {
                "document its inner fields with an example, or flatten it into top-level arguments"
            }
            Cause::Enum => {
                "list the allowed values in its description, or add the values models send as value aliases"
            }
            Cause::InvalidValue => {
                "state its constraints (bounds, pattern, format) in its description"
            }
        }
    }
}

/// One argument's part in a rejection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgFault {
    pub(crate) arg: String,
    pub(crate) cause: Cause,
    /// A short description of what was sent (none for a missing argument).
    pub(crate) example: Option<String>,
}

/// Values in examples are cut to this many characters.
const EXAMPLE_CHARS: usize = 60;

/// `args` as the gate reads them: each value under the declared name it stands for (declared,
/// an alias, another case style), unknown names left out, borrowed.
fn resolve<'a>(tool: &'a Tool, args: &'a Map<String, Value>) -> Vec<(&'a str, &'a Value)> {
    let mut out: Vec<(&str, &Value)> = Vec::with_capacity(args.len());
    for (key, value) in args {
        let declared = match tool.args.get_key_value(key) {
            Some((name, _)) => Some(name.as_str()),
            None => match tool.aliases.get(key) {
                Some(to) => Some(to.as_str()),
                None => tool.folded.get(&fold_name(key)).map(String::as_str),
            },
        };
        if let Some(name) = declared
            && !out.iter().any(|(n, _)| *n == name)
        {
            out.push((name, value));
        }
    }
    out
}

fn is_blank(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        _ => false,
    }
}

/// A value in a few characters: `string "tomorrow 10am"`, `array ["ana@example.com"]`.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let text = value.to_string();
    let cut: String = text.chars().take(EXAMPLE_CHARS).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{kind} {cut}{more}")
}

/// Why the gate rejected a call to `tool` with `args`, argument by argument: each argument
/// and cause once, in the order found.
pub fn rejection_causes(
    tool: &Tool,
    method: Option<&str>,
    args: &Map<String, Value>,
) -> Vec<ArgFault> {
    let resolved = resolve(tool, args);
    let get = |name: &str| resolved.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    let mut faults: Vec<ArgFault> = Vec::new();
    let mut push = |arg: &str, cause: Cause, example: Option<String>| {
        if !faults.iter().any(|f| f.arg == arg && f.cause == cause) {
            faults.push(ArgFault {
                arg: arg.to_string(),
                cause,
                example,
            });
        }
    };
    // What the schema judges, built only for a tool that has one: each value as the gate
    // left it (coerced, its enum case fixed), a value at fault as it came, so the schema
    // finds the same fault rather than a missing argument.
    let mut corrected = tool.schema.as_ref().map(|_| Map::new());
    for (name, spec) in &tool.args {
        let value = get(name);
        if is_blank(value) {
            let lifted = spec.unless.iter().any(|(other, wanted)| {
                get(other).is_some_and(|v| wanted.iter().any(|w| loosely_equal(v, w)))
            });
            let supplied = method.is_some() && tool.method_arg.as_deref() == Some(name.as_str());
            if spec.required && spec.default.is_none() && !lifted && !supplied {
                push(name, Cause::Missing, None);
            }
            if let (Some(v), Some(c)) = (value, corrected.as_mut()) {
                c.insert(name.clone(), v.clone());
            }
            continue;
        }
        let value = value.expect("not blank");
        let fitted = if value_fits(spec, value) {
            None
        } else if value.is_string() {
            match coerce(spec, &ArgValue::Value(value.clone())) {
                Some(v) => Some(v),
                None => {
                    push(name, Cause::WrongType, Some(describe(value)));
                    if let Some(c) = corrected.as_mut() {
                        c.insert(name.clone(), value.clone());
                    }
                    continue;
                }
            }
        } else {
            push(name, Cause::WrongType, Some(describe(value)));
            if let Some(c) = corrected.as_mut() {
                c.insert(name.clone(), value.clone());
            }
            continue;
        };
        let fitted = fitted.as_ref().unwrap_or(value);
        let mut kept = fitted;
        if let Some(allowed) = &spec.one_of {
            let aliased = fitted
                .as_str()
                .and_then(|s| spec.values.get(&s.trim().to_lowercase()));
            if let Some(to) = aliased {
                kept = to;
            }
            let null_ok = spec.nullable && kept.is_null();
            if !null_ok && !allowed.iter().any(|a| loosely_equal(kept, a)) {
                push(name, Cause::Enum, Some(describe(value)));
                kept = value;
            }
        }
        if let Some(c) = corrected.as_mut() {
            c.insert(name.clone(), kept.clone());
        }
    }
    if let (Some(schema), Some(corrected)) = (&tool.schema, corrected) {
        let instance = Value::Object(corrected);
        for fault in schema.faults(&instance) {
            let (arg, cause) = match (fault.arg.as_deref(), &fault.kind, fault.depth) {
                (None, FaultKind::Required(property), _) => (property.clone(), Cause::Missing),
                (None, _, _) => continue,
                (Some(arg), FaultKind::Type, 1) => (arg.to_string(), Cause::WrongType),
                (Some(arg), FaultKind::Enum, 1) => (arg.to_string(), Cause::Enum),
                (Some(arg), FaultKind::Other, 1) => (arg.to_string(), Cause::InvalidValue),
                (Some(arg), _, _) => (arg.to_string(), Cause::NestedShape),
            };
            let example = match cause {
                Cause::Missing => None,
                Cause::NestedShape => Some(fault.message.clone()),
                _ => instance.get(&arg).map(describe),
            };
            push(&arg, cause, example);
        }
    }
    faults
}

/// Strings equal when trimmed and compared without case; other values when equal.
fn loosely_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.trim().eq_ignore_ascii_case(y.trim()),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Policy, Source};

    fn obj(text: &str) -> Map<String, Value> {
        match serde_json::from_str(text).unwrap() {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn causes(tool: &Tool, args: &str) -> Vec<(String, &'static str)> {
        rejection_causes(tool, None, &obj(args))
            .into_iter()
            .map(|f| (f.arg, f.cause.as_str()))
            .collect()
    }

    fn pairs(list: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        list.iter().map(|(a, c)| (a.to_string(), *c)).collect()
    }

    #[test]
    fn declared_arguments_are_read_as_the_gate_reads_them() {
        let policy = Policy::builtin();
        let tool = policy.tool("code_execution_tool").unwrap();
        assert_eq!(
            causes(tool, r#"{"runtime":"python"}"#),
            pairs(&[("code", "missing")])
        );
        // An alias and a value alias are what the gate corrects, not faults.
        assert_eq!(causes(tool, r#"{"language":"bash","cmd":"ls"}"#), []);
        assert_eq!(
            causes(tool, r#"{"runtime":"cobol","code":"x"}"#),
            pairs(&[("runtime", "enum")])
        );
        assert_eq!(
            causes(tool, r#"{"runtime":"output","code":["ls"]}"#),
            pairs(&[("code", "wrong_type")])
        );
    }

    #[test]
    fn a_schema_tells_wrong_types_from_wrong_nested_shapes() {
        let tools = r#"[{"type":"function","function":{"name":"cal","parameters":{"type":"object",
            "properties":{"when":{"type":"object","properties":{"start":{"type":"string"},"tz":{"type":"string"}},"required":["start","tz"]},
            "span":{"type":"string"},"people":{"type":"array","items":{"type":"object"}}},
            "required":["when","span"]}}}]"#;
        let source = Source {
            name: "p.toml",
            text: "[[import]]\npath = \"cal.json\"\n",
        };
        let read = |_: &std::path::Path| Ok(tools.to_string());
        let policy = Policy::load(Some(source), None, &[], &read).unwrap();
        let tool = policy.tool("cal").unwrap();
        assert_eq!(
            causes(tool, r#"{"when":"tomorrow","span":"1h"}"#),
            pairs(&[("when", "wrong_type")])
        );
        assert_eq!(
            causes(
                tool,
                r#"{"when":{"start":"x"},"span":"1h","people":["ana"]}"#
            ),
            pairs(&[("when", "nested_shape"), ("people", "nested_shape")])
        );
        assert_eq!(
            causes(tool, r#"{"when":{"start":"x","tz":"UTC"}}"#),
            pairs(&[("span", "missing")])
        );
        let faults = rejection_causes(tool, None, &obj(r#"{"when":"soon","span":"1h"}"#));
        assert_eq!(faults[0].example.as_deref(), Some("string \"soon\""));
    }
}
