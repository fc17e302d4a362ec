//! Tool definitions as users already have them: an OpenAI `tools` array, an MCP `tools/list`
//! result, an Anthropic `tools` array. Each tool's input schema is compiled once into a JSON
//! Schema validator, and its top-level properties become declared arguments, so the
//! correction rules (names, case, near misses, coercion, enums, requirements) run on them
//! before the schema judges the call.

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

pub use super::file::ToolsFormat;
use super::file::{ArgFile, ArgType, ToolFile, TypeSpec};

mod decoding;
mod sanitize;

pub(crate) use decoding::decoding_risks;
pub use decoding::{DecodingRisk, RiskLevel};

/// One tool read from a tools file.
#[derive(Debug, Clone)]
pub struct Imported {
    pub(crate) name: String,
    description: Option<String>,
    /// The input schema, with the contradictions [`sanitize`] repairs repaired.
    schema: Value,
    /// Whether `schema` is valid JSON Schema the gate can validate calls with; when it is not,
    /// calls are checked by their declared arguments' names and types only.
    validate: bool,
    /// Per argument, spellings of enum values the schema wrote in another type (`"1"` for 1),
    /// accepted as value aliases.
    pub(crate) spellings: sanitize::EnumSpellings,
}

/// What a tools file holds: its tools, and what had to be repaired or left out to read them.
#[derive(Debug, Clone, Default)]
pub struct ToolsRead {
    /// The tools read, in file order.
    pub tools: Vec<Imported>,
    pub(crate) warnings: Vec<ImportError>,
}

/// A problem with a tools file: which file, which tool (when one is at fault), what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    pub(crate) file: String,
    pub(crate) tool: Option<String>,
    pub(crate) message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool {
            Some(tool) => write!(f, "{}: tool {tool:?}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ImportError {}

/// A compiled input schema, shared by every clone of the policy.
#[derive(Clone)]
pub struct CompiledSchema(pub(crate) Arc<jsonschema::Validator>);

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CompiledSchema")
    }
}

impl CompiledSchema {
    /// Every way `instance` breaks the schema, each as `(pointer, message, is_type_error)`.
    pub(crate) fn problems(&self, instance: &Value) -> Vec<(String, String, bool)> {
        self.0
            .iter_errors(instance)
            .map(|e| {
                let is_type = matches!(
                    e.kind(),
                    jsonschema::error::ValidationErrorKind::Type { .. }
                );
                (e.instance_path().to_string(), e.to_string(), is_type)
            })
            .collect()
    }
}

/// What kind of rule a value broke, as far as `evaluate` tells them apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FaultKind {
    /// A required property is missing (its name).
    Required(String),
    Type,
    Enum,
    Other,
}

/// One way an instance breaks a schema: where (the first property of its path, and how deep
/// the path goes), what kind of rule, and the validator's message with its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaFault {
    pub(crate) arg: Option<String>,
    pub(crate) depth: usize,
    pub(crate) kind: FaultKind,
    pub(crate) message: String,
}

impl CompiledSchema {
    /// Every way `instance` breaks the schema, as [`SchemaFault`]s.
    pub(crate) fn faults(&self, instance: &Value) -> Vec<SchemaFault> {
        use jsonschema::error::ValidationErrorKind as K;
        self.0
            .iter_errors(instance)
            .map(|e| {
                let path = e.instance_path();
                let mut segments = path.segments();
                let arg = segments.next().map(|s| s.to_string());
                let depth = usize::from(arg.is_some()) + segments.count();
                let kind = match e.kind() {
                    K::Required { property } => FaultKind::Required(match property {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    }),
                    K::Type { .. } => FaultKind::Type,
                    K::Enum { .. } | K::Constant { .. } => FaultKind::Enum,
                    _ => FaultKind::Other,
                };
                let at = path.as_str();
                let message = if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                };
                SchemaFault {
                    arg,
                    depth,
                    kind,
                    message,
                }
            })
            .collect()
    }
}

/// Reads a tools file. `format` forces one format; otherwise it is recognized. Only a file
/// that holds no tool definitions at all is an error: a tool that contradicts itself or uses
/// JSON Schema the gate does not model is read as far as it can be, with a warning naming it
/// and the key.
pub fn parse_tools(
    file: &str,
    text: &str,
    format: Option<ToolsFormat>,
) -> Result<ToolsRead, ImportError> {
    let error = |tool: Option<&str>, message: String| ImportError {
        file: file.to_string(),
        tool: tool.map(str::to_string),
        message,
    };
    let doc: Value =
        serde_json::from_str(text).map_err(|e| error(None, format!("not JSON: {e}")))?;
    let format = match format {
        Some(f) => f,
        None => detect(&doc).ok_or_else(|| {
            error(
                None,
                "not an OpenAI tools array, an MCP tools/list result or an Anthropic tools array"
                    .to_string(),
            )
        })?,
    };
    let items: &[Value] = match (format, &doc) {
        (ToolsFormat::Mcp, Value::Object(o)) => o
            .get("tools")
            .or_else(|| o.get("result").and_then(|r| r.get("tools")))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| {
                error(
                    None,
                    "an MCP tools/list result has a `tools` array".to_string(),
                )
            })?,
        (ToolsFormat::Openai | ToolsFormat::Anthropic, Value::Array(items)) => items,
        (f, _) => {
            return Err(error(
                None,
                format!("a {} tools file is a JSON array", f.as_str()),
            ));
        }
    };
    let mut read = ToolsRead::default();
    let mut warn = |tool: &str, message: String| {
        read.warnings.push(error(Some(tool), message));
    };
    let mut tools: Vec<Imported> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let (holder, schema_key) = match format {
            ToolsFormat::Openai => match item.get("function") {
                Some(f) if f.is_object() => (f, "parameters"),
                _ => (item, "parameters"),
            },
            ToolsFormat::Mcp => (item, "inputSchema"),
            ToolsFormat::Anthropic => (item, "input_schema"),
        };
        let Some(name) = holder
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
        else {
            warn(
                &format!("entry {}", i + 1),
                "has no `name`: left out".to_string(),
            );
            continue;
        };
        if tools.iter().any(|t| t.name == name) {
            warn(
                name,
                "is defined twice in this file: the first definition is used".to_string(),
            );
            continue;
        }
        let mut schema = holder
            .get(schema_key)
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        let unchecked =
            |why: String| format!("{why}: the tool is known, and its arguments are not checked");
        if !schema.is_object() {
            warn(
                name,
                unchecked(format!("`{schema_key}` is not a JSON Schema object")),
            );
            schema = serde_json::json!({});
        }
        let (repairs, mut spellings) = sanitize::sanitize(&mut schema);
        for r in repairs {
            warn(name, format!("{schema_key}{}: {}", r.pointer, r.message));
        }
        if let Some(t) = schema.get("type")
            && t != "object"
        {
            warn(
                name,
                unchecked(format!("`{schema_key}` must describe an object, not {t}")),
            );
            schema = serde_json::json!({});
            spellings.clear();
        }
        let validate = match jsonschema::meta::validate(&schema) {
            Ok(()) => true,
            Err(e) => {
                warn(
                    name,
                    format!(
                        "`{schema_key}` is not valid JSON Schema ({e}): calls are checked by their arguments' names and types only"
                    ),
                );
                false
            }
        };
        tools.push(Imported {
            name: name.to_string(),
            description: holder
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            schema,
            validate,
            spellings,
        });
    }
    read.tools = tools;
    Ok(read)
}

/// One tool's pre-flight report: what had to be read around, and what may break constrained
/// decoding.
#[derive(Debug, Clone)]
pub struct ToolCheck {
    /// The tool's name.
    pub name: String,
    /// What makes its schema unusable.
    pub problems: Vec<String>,
    /// What a model could get wrong in it.
    pub risks: Vec<DecodingRisk>,
}

/// Every tool of a tools file, checked before any model meets it (`metagate tools check`).
/// Entries left out (no name) come last, under the name `entry N`.
pub fn check_tools(
    file: &str,
    text: &str,
    format: Option<ToolsFormat>,
) -> Result<Vec<ToolCheck>, ImportError> {
    let read = parse_tools(file, text, format)?;
    let mut checks: Vec<ToolCheck> = read
        .tools
        .iter()
        .map(|t| ToolCheck {
            name: t.name.clone(),
            problems: Vec::new(),
            risks: decoding_risks(&t.schema),
        })
        .collect();
    for w in read.warnings {
        let name = w.tool.unwrap_or_default();
        match checks.iter_mut().find(|c| c.name == name) {
            Some(c) => c.problems.push(w.message),
            None => checks.push(ToolCheck {
                name,
                problems: vec![w.message],
                risks: Vec::new(),
            }),
        }
    }
    Ok(checks)
}

fn detect(doc: &Value) -> Option<ToolsFormat> {
    match doc {
        Value::Object(o) => {
            let tools = o
                .get("tools")
                .or_else(|| o.get("result").and_then(|r| r.get("tools")));
            tools.filter(|t| t.is_array()).map(|_| ToolsFormat::Mcp)
        }
        Value::Array(items) => {
            let first = items.first()?;
            if first.get("input_schema").is_some() {
                Some(ToolsFormat::Anthropic)
            } else if first.get("function").is_some()
                || first.get("parameters").is_some()
                || first.get("type").and_then(Value::as_str) == Some("function")
            {
                Some(ToolsFormat::Openai)
            } else if first.get("inputSchema").is_some() {
                Some(ToolsFormat::Mcp)
            } else {
                None
            }
        }
        _ => None,
    }
    .or_else(|| match doc {
        // An MCP tools array without its envelope.
        Value::Array(items)
            if items.iter().all(|i| i.get("inputSchema").is_some()) && !items.is_empty() =>
        {
            Some(ToolsFormat::Mcp)
        }
        Value::Array(items) if items.is_empty() => Some(ToolsFormat::Openai),
        _ => None,
    })
}

/// Compiles a tool's input schema once (`None` when it is not valid JSON Schema).
pub fn compile(imported: &Imported, file: &str) -> Result<Option<CompiledSchema>, ImportError> {
    if !imported.validate {
        return Ok(None);
    }
    jsonschema::validator_for(&imported.schema)
        .map(|v| Some(CompiledSchema(Arc::new(v))))
        .map_err(|e| ImportError {
            file: file.to_string(),
            tool: Some(imported.name.clone()),
            message: format!("invalid JSON Schema: {e}"),
        })
}

/// The declared arguments the correction rules run on: one per top-level property, with its
/// type, enum and whether it is required. A schema `default` is an annotation and is only
/// copied when `fill_defaults` asks for it.
pub fn tool_file(imported: &Imported, fill_defaults: bool) -> ToolFile {
    let required: Vec<&str> = imported
        .schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = IndexMap::new();
    if let Some(props) = imported.schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let types = prop.get("type").map(type_spec).unwrap_or_default();
            let enum_values = prop.get("enum").and_then(Value::as_array);
            let nullable = types.contains(&ArgType::Null)
                || enum_values.is_some_and(|e| e.iter().any(Value::is_null));
            let one_of = enum_values.map(|e| e.iter().filter_map(toml_of).collect::<Vec<_>>());
            let arg = ArgFile {
                ty: match types.as_slice() {
                    [] => None,
                    [one] => Some(TypeSpec::One(*one)),
                    many => Some(TypeSpec::Many(many.to_vec())),
                },
                required: required.contains(&name.as_str()).then_some(true),
                nullable: nullable.then_some(true),
                one_of: one_of.filter(|o| !o.is_empty()),
                default: prop
                    .get("default")
                    .filter(|_| fill_defaults)
                    .and_then(toml_of),
                description: prop
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                values: imported.spellings.get(name).map(|spellings| {
                    spellings
                        .iter()
                        .filter_map(|(spelling, v)| toml_of(v).map(|t| (spelling.clone(), t)))
                        .collect()
                }),
                ..ArgFile::default()
            };
            args.insert(name.clone(), arg);
        }
    }
    ToolFile {
        description: imported.description.clone(),
        args,
        ..ToolFile::default()
    }
}

fn type_spec(t: &Value) -> Vec<ArgType> {
    let one = |s: &str| match s {
        "string" => Some(ArgType::String),
        "integer" => Some(ArgType::Integer),
        "number" => Some(ArgType::Number),
        "boolean" => Some(ArgType::Boolean),
        "object" => Some(ArgType::Object),
        "array" => Some(ArgType::Array),
        "null" => Some(ArgType::Null),
        _ => None,
    };
    match t {
        Value::String(s) => one(s).into_iter().collect(),
        Value::Array(list) => {
            let types: Vec<ArgType> = list
                .iter()
                .filter_map(Value::as_str)
                .filter_map(one)
                .collect();
            // A type list naming something unknown is left to the schema.
            if types.len() == list.len() {
                types
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

/// A JSON value as TOML, for the derived argument table; TOML has no null, so nulls (and
/// values holding them) are left to the schema.
fn toml_of(v: &Value) -> Option<toml::Value> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(items) => {
            toml::Value::Array(items.iter().map(toml_of).collect::<Option<_>>()?)
        }
        Value::Object(map) => toml::Value::Table(
            map.iter()
                .map(|(k, v)| toml_of(v).map(|t| (k.clone(), t)))
                .collect::<Option<_>>()?,
        ),
    })
}

#[cfg(test)]
mod tests;
