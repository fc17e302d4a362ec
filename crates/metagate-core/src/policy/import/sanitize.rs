//! Tool definitions as sloppy as the ones in the wild, read as far as they can be. The APIs
//! accept them, so one contradiction must not take fifty tools down: each is repaired in the
//! copy of the schema the gate checks with, and said as a warning naming the tool and the key.
//!
//! What is repaired:
//! - an `enum` whose values are not of the declared `type` (`"type": "integer"` with
//!   `"enum": ["1", "2", "dontcare"]`, `"type": "boolean"` with `["True", "False"]`): a value
//!   that reads exactly as the declared type becomes that type's value (either spelling is
//!   accepted, and the declared type's value goes out); any other value widens the type;
//! - Python's type names (`str`, `int`, `float`, `bool`, `dict`, `list`, `tuple`, `any`) and
//!   other type names JSON Schema does not have;
//! - `required` naming properties that are not declared, or not a list of names;
//!   `"required": true` on a property;
//! - a `default` that is not of the declared type.

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// One repair: where in the schema (a JSON pointer) and what was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repair {
    pub(crate) pointer: String,
    pub(crate) message: String,
}

/// Value aliases found while repairing enums: per top-level property, a spelling the model may
/// send and the declared type's value it stands for (`"1"` → `1`).
pub(crate) type EnumSpellings = IndexMap<String, IndexMap<String, Value>>;

/// Repairs `schema` in place; returns what was done and the enum spellings to accept.
pub(crate) fn sanitize(schema: &mut Value) -> (Vec<Repair>, EnumSpellings) {
    let mut repairs = Vec::new();
    let mut spellings = EnumSpellings::new();
    repair_object_schema(schema, "", &mut repairs, Some(&mut spellings));
    (repairs, spellings)
}

/// Repairs a schema describing an object (its properties, then each property's own schema).
/// `spellings` collects enum spellings for the top level only: nested properties are left to
/// the schema validator, which has no aliases.
fn repair_object_schema(
    schema: &mut Value,
    at: &str,
    repairs: &mut Vec<Repair>,
    mut spellings: Option<&mut EnumSpellings>,
) {
    let Value::Object(map) = schema else { return };
    repair_type(map, at, repairs);
    let declared: Vec<String> = map
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut required_here: Vec<String> = Vec::new();
    if let Some(props) = map.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, prop) in props.iter_mut() {
            let place = format!("{at}/properties/{}", escape(name));
            if let Value::Object(p) = prop
                && let Some(flag) = p.get("required").and_then(Value::as_bool)
            {
                p.remove("required");
                repairs.push(Repair {
                    pointer: format!("{place}/required"),
                    message: format!(
                        "`required: {flag}` on a property is not JSON Schema: read as {} in the object's `required` list",
                        if flag { "listed" } else { "not listed" }
                    ),
                });
                if flag {
                    required_here.push(name.clone());
                }
            }
            let found = repair_property(prop, &place, repairs);
            if let Some(s) = spellings.as_deref_mut()
                && !found.is_empty()
            {
                s.insert(name.clone(), found);
            }
            if prop.get("type").and_then(Value::as_str) == Some("object") {
                repair_object_schema(prop, &place, repairs, None);
            }
            if let Some(items) = prop.get_mut("items")
                && items.is_object()
            {
                let items_at = format!("{place}/items");
                repair_type_value(items, &items_at, repairs);
                if items.get("type").and_then(Value::as_str) == Some("object") {
                    repair_object_schema(items, &items_at, repairs, None);
                }
            }
        }
    }
    repair_required(map, at, &declared, required_here, repairs);
}

/// A property's own schema: its type names, its enum, its default. Returns the enum
/// spellings it found.
fn repair_property(
    prop: &mut Value,
    at: &str,
    repairs: &mut Vec<Repair>,
) -> IndexMap<String, Value> {
    let Value::Object(p) = prop else {
        return IndexMap::new();
    };
    repair_type(p, at, repairs);
    let types = declared_types(p);
    let mut spellings = IndexMap::new();
    if let (Some(types), Some(Value::Array(values))) = (&types, p.get_mut("enum")) {
        let mut read_as: Vec<(String, Value)> = Vec::new();
        let mut widened: Vec<&'static str> = Vec::new();
        for v in values.iter_mut() {
            if types.iter().any(|t| is_of(v, t)) {
                continue;
            }
            match v.as_str().and_then(|s| read_exactly(s, types)) {
                Some(typed) => {
                    let spelling = v.as_str().unwrap_or_default().to_string();
                    read_as.push((spelling.clone(), typed.clone()));
                    spellings.insert(spelling, typed.clone());
                    *v = typed;
                }
                None => {
                    let t = json_type(v);
                    if !widened.contains(&t) {
                        widened.push(t);
                    }
                }
            }
        }
        let declared = types.join(", ");
        if !read_as.is_empty() {
            let shown: Vec<String> = read_as
                .iter()
                .map(|(s, v)| format!("{s:?} as {v}"))
                .collect();
            repairs.push(Repair {
                pointer: format!("{at}/enum"),
                message: format!(
                    "enum values are not of type {declared}: read {} (either spelling is accepted, the {declared} goes out)",
                    shown.join(", ")
                ),
            });
        }
        if !widened.is_empty() {
            let mut all: Vec<String> = types.clone();
            all.extend(widened.iter().map(|t| t.to_string()));
            all.dedup();
            repairs.push(Repair {
                pointer: format!("{at}/type"),
                message: format!(
                    "enum values of type {} contradict `type: {declared}`: the type is read as [{}]",
                    widened.join(", "),
                    all.join(", ")
                ),
            });
            p.insert(
                "type".into(),
                Value::Array(all.into_iter().map(Value::String).collect()),
            );
        }
    }
    if let (Some(types), Some(default)) = (declared_types(p), p.get("default"))
        && !types.iter().any(|t| is_of(default, t))
    {
        repairs.push(Repair {
            pointer: format!("{at}/default"),
            message: format!(
                "the default {default} is not of type {}: left out",
                types.join(", ")
            ),
        });
        p.remove("default");
    }
    spellings
}

/// Python's and other languages' type names, read as JSON Schema's.
fn repair_type(map: &mut Map<String, Value>, at: &str, repairs: &mut Vec<Repair>) {
    if let Some(t) = map.get_mut("type") {
        repair_type_in(t, at, repairs);
        if t.as_array().is_some_and(Vec::is_empty) {
            map.remove("type");
        }
    }
}

fn repair_type_value(schema: &mut Value, at: &str, repairs: &mut Vec<Repair>) {
    if let Value::Object(map) = schema {
        repair_type(map, at, repairs);
    }
}

fn repair_type_in(t: &mut Value, at: &str, repairs: &mut Vec<Repair>) {
    const JSON_TYPES: [&str; 7] = [
        "string", "integer", "number", "boolean", "object", "array", "null",
    ];
    let mapped = |name: &str| -> Option<Option<&'static str>> {
        if JSON_TYPES.contains(&name) {
            return None;
        }
        Some(match name.to_ascii_lowercase().as_str() {
            "str" | "string" | "text" => Some("string"),
            "int" | "integer" | "long" => Some("integer"),
            "float" | "double" | "number" | "decimal" => Some("number"),
            "bool" | "boolean" => Some("boolean"),
            "dict" | "object" | "map" => Some("object"),
            "list" | "tuple" | "array" | "set" => Some("array"),
            "none" | "null" => Some("null"),
            _ => None,
        })
    };
    let mut note = |from: &str, to: Option<&str>| {
        repairs.push(Repair {
            pointer: format!("{at}/type"),
            message: match to {
                Some(to) => format!("type {from:?} is not a JSON Schema type: read as {to:?}"),
                None => format!("type {from:?} is not a JSON Schema type: any value is accepted"),
            },
        });
    };
    match &mut *t {
        Value::String(name) => {
            if let Some(to) = mapped(name) {
                note(name, to);
                *t = match to {
                    Some(to) => Value::String(to.to_string()),
                    None => Value::Array(Vec::new()),
                };
            }
        }
        Value::Array(names) => {
            let mut out = Vec::with_capacity(names.len());
            for n in names.iter() {
                match n.as_str() {
                    Some(name) => match mapped(name) {
                        None => out.push(n.clone()),
                        Some(Some(to)) => {
                            note(name, Some(to));
                            out.push(Value::String(to.to_string()));
                        }
                        // One unknown type in a list admits anything: no type at all.
                        Some(None) => {
                            note(name, None);
                            *t = Value::Array(Vec::new());
                            return;
                        }
                    },
                    None => {
                        note(&n.to_string(), None);
                        *t = Value::Array(Vec::new());
                        return;
                    }
                }
            }
            out.dedup();
            *t = Value::Array(out);
        }
        _ => {
            let shown = t.to_string();
            note(&shown, None);
            *t = Value::Array(Vec::new());
        }
    }
}

/// `required` holds only declared properties, as a list of names.
fn repair_required(
    map: &mut Map<String, Value>,
    at: &str,
    declared: &[String],
    mut extra: Vec<String>,
    repairs: &mut Vec<Repair>,
) {
    let mut names: Vec<String> = Vec::new();
    match map.get("required") {
        None => {}
        Some(Value::Array(list)) => {
            for item in list {
                match item.as_str() {
                    Some(n) if declared.iter().any(|d| d == n) || declared.is_empty() => {
                        names.push(n.to_string())
                    }
                    Some(n) => repairs.push(Repair {
                        pointer: format!("{at}/required"),
                        message: format!(
                            "requires {n:?}, which is not among the properties: left out"
                        ),
                    }),
                    None => repairs.push(Repair {
                        pointer: format!("{at}/required"),
                        message: format!("{item} is not a property name: left out"),
                    }),
                }
            }
        }
        Some(other) => repairs.push(Repair {
            pointer: format!("{at}/required"),
            message: format!("`required` must list property names, not {other}: left out"),
        }),
    }
    names.append(&mut extra);
    names.dedup();
    if names.is_empty() {
        map.remove("required");
    } else {
        map.insert(
            "required".into(),
            Value::Array(names.into_iter().map(Value::String).collect()),
        );
    }
}

/// The type names a schema declares, when it declares any.
fn declared_types(p: &Map<String, Value>) -> Option<Vec<String>> {
    match p.get("type")? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(list) => {
            let names: Vec<String> = list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            (!names.is_empty()).then_some(names)
        }
        _ => None,
    }
}

fn is_of(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => false,
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `text` read as a value of one of `types`, when it is exactly one (`"5"` as 5, `"True"` as
/// true); never lossy (`"5.5"` is no integer).
fn read_exactly(text: &str, types: &[String]) -> Option<Value> {
    let t = text.trim();
    for ty in types {
        let v = match ty.as_str() {
            "integer" => t.parse::<i64>().ok().map(Value::from),
            "number" => t
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .and_then(|_| serde_json::from_str::<serde_json::Number>(t).ok())
                .map(Value::Number),
            "boolean" => match t.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => matches!(t, "null" | "None").then_some(Value::Null),
            _ => None,
        };
        if v.is_some() {
            return v;
        }
    }
    None
}

/// A property name as a JSON pointer writes it.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
