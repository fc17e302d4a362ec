//! Why the gate rejected a call, argument by argument, from the arguments it recorded: what
//! `review_schema` builds on. The names are read as the gate reads them (declared names,
//! aliases, another case style), so a call the correction rules would have fixed is not
//! counted against its schema.

use serde_json::{Map, Value};

use crate::domain::correct::{coerce, type_fits};
use crate::domain::policy::import::FaultKind;
use crate::domain::policy::{Tool, fold_name};
use crate::wire::args::ArgValue;

/// How an argument made a call fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
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
    pub const ALL: [Cause; 5] = [
        Cause::Missing,
        Cause::WrongType,
        Cause::NestedShape,
        Cause::Enum,
        Cause::InvalidValue,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Missing => "missing",
            Cause::WrongType => "wrong_type",
            Cause::NestedShape => "nested_shape",
            Cause::Enum => "enum",
            Cause::InvalidValue => "invalid_value",
        }
    }

    pub fn from_name(name: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// What a tool's author can do about this cause.
    pub fn suggestion(self) -> &'static str {
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
    pub arg: String,
    pub cause: Cause,
    /// A short description of what was sent (none for a missing argument).
    pub example: Option<String>,
}

/// Values in examples are cut to this many characters.
const EXAMPLE_CHARS: usize = 60;

/// `args` as the gate reads them: each name under the declared name it stands for (declared,
/// an alias, another case style), with unknown names left out. `method` supplies the tool's
/// method argument when the call named one.
fn resolve<'a>(tool: &Tool, args: &'a Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in args {
        let declared = if tool.args.contains_key(key) {
            Some(key.as_str())
        } else if let Some(to) = tool.aliases.get(key) {
            Some(to.as_str())
        } else {
            tool.folded.get(&fold_name(key)).map(String::as_str)
        };
        if let Some(name) = declared
            && !out.contains_key(name)
        {
            out.insert(name.to_string(), value.clone());
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
pub fn describe(value: &Value) -> String {
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
    let mut corrected = Map::new();
    for (name, spec) in &tool.args {
        let value = resolved.get(name);
        if is_blank(value) {
            let lifted = spec.unless.iter().any(|(other, wanted)| {
                resolved
                    .get(other)
                    .is_some_and(|v| wanted.iter().any(|w| loosely_equal(v, w)))
            });
            let supplied = method.is_some() && tool.method_arg.as_deref() == Some(name.as_str());
            if spec.required && spec.default.is_none() && !lifted && !supplied {
                push(name, Cause::Missing, None);
            }
            if let Some(v) = value {
                corrected.insert(name.clone(), v.clone());
            }
            continue;
        }
        let value = value.expect("not blank");
        let as_arg = ArgValue::Value(value.clone());
        let fitted = if type_fits(spec, &as_arg) {
            Some(value.clone())
        } else {
            coerce(spec, &as_arg)
        };
        let Some(fitted) = fitted else {
            push(name, Cause::WrongType, Some(describe(value)));
            continue;
        };
        if let Some(allowed) = &spec.one_of {
            let folded = fitted
                .as_str()
                .and_then(|s| spec.values.get(&s.trim().to_lowercase()))
                .cloned()
                .unwrap_or_else(|| fitted.clone());
            let null_ok = spec.nullable && folded.is_null();
            if !null_ok && !allowed.iter().any(|a| loosely_equal(&folded, a)) {
                push(name, Cause::Enum, Some(describe(value)));
                continue;
            }
        }
        corrected.insert(name.clone(), fitted);
    }
    if let Some(schema) = &tool.schema {
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
