//! JSON Schema constructs known to break constrained decoding: the grammar converters of
//! llama.cpp, vLLM's and SGLang's back-ends (xgrammar, outlines) and strict structured outputs
//! either refuse them, ignore them (so the model may emit what the schema forbids) or build
//! grammars too large to use. `metagate tools check` reports them before a model meets them.

use serde_json::Value;

/// One construct and why it is a risk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodingRisk {
    /// Where in the schema (a JSON pointer).
    pub pointer: String,
    /// The keyword or construct.
    pub construct: String,
    /// What back-ends do with it.
    pub why: String,
    /// Whether it may break decoding, or only goes unenforced.
    pub level: RiskLevel,
}

/// How much a construct matters to constrained decoding. `metagate tools check` fails on a
/// risk, never on a note alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RiskLevel {
    /// Converters refuse it, or build a grammar too large or slow to use: decoding may fail.
    Risk,
    /// Decoding does not enforce it, so the model may emit a value it forbids: the schema still
    /// decodes, and the call is read as the schema says afterwards.
    Note,
}

impl RiskLevel {
    /// The name `--format json` gives the level.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Risk => "risk",
            RiskLevel::Note => "note",
        }
    }
}

use RiskLevel::{Note, Risk};

/// Nesting deeper than this makes grammars slow to build and easy to cut short.
const MAX_DEPTH: usize = 8;
/// Length and count bounds past these are unrolled into very large grammars.
const MAX_LENGTH_BOUND: u64 = 1000;
const MAX_ITEMS_BOUND: u64 = 100;
/// Enumerations past this size make grammars large.
const MAX_ENUM: usize = 256;

/// Every risky construct in `schema`.
pub(crate) fn decoding_risks(schema: &Value) -> Vec<DecodingRisk> {
    let mut risks = Vec::new();
    let mut seen_refs = Vec::new();
    walk(schema, schema, "", 0, &mut seen_refs, &mut risks);
    risks
}

fn risk(risks: &mut Vec<DecodingRisk>, level: RiskLevel, at: &str, construct: &str, why: &str) {
    risks.push(DecodingRisk {
        level,
        pointer: if at.is_empty() {
            "/".to_string()
        } else {
            at.to_string()
        },
        construct: construct.to_string(),
        why: why.to_string(),
    });
}

fn walk(
    root: &Value,
    schema: &Value,
    at: &str,
    depth: usize,
    refs: &mut Vec<String>,
    risks: &mut Vec<DecodingRisk>,
) {
    let Value::Object(map) = schema else { return };
    if depth == MAX_DEPTH + 1 {
        risk(
            risks,
            Risk,
            at,
            "nesting",
            "schemas nested this deep make grammars slow to build; some back-ends cut them short",
        );
    }
    for (keyword, level, why) in [
        (
            "not",
            Risk,
            "grammar converters (llama.cpp, xgrammar) cannot express `not`: it is ignored or refused",
        ),
        (
            "if",
            Risk,
            "conditional schemas (`if`/`then`/`else`) are not supported by grammar converters",
        ),
        (
            "dependentRequired",
            Note,
            "dependencies between properties are not enforced while decoding",
        ),
        (
            "dependentSchemas",
            Note,
            "dependencies between properties are not enforced while decoding",
        ),
        (
            "dependencies",
            Note,
            "dependencies between properties are not enforced while decoding",
        ),
        (
            "patternProperties",
            Risk,
            "property names by pattern are supported by few back-ends",
        ),
        (
            "contains",
            Note,
            "`contains` is not enforced while decoding",
        ),
        (
            "multipleOf",
            Note,
            "`multipleOf` is not enforced while decoding",
        ),
        (
            "propertyNames",
            Note,
            "`propertyNames` is not enforced while decoding",
        ),
        (
            "unevaluatedProperties",
            Risk,
            "`unevaluatedProperties` is not supported by grammar converters",
        ),
    ] {
        if map.contains_key(keyword) {
            risk(risks, level, &format!("{at}/{keyword}"), keyword, why);
        }
    }
    if map.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        risk(
            risks,
            Note,
            &format!("{at}/uniqueItems"),
            "uniqueItems",
            "unique items are not enforced while decoding: the model may repeat an item",
        );
    }
    if map.contains_key("oneOf") {
        risk(
            risks,
            Note,
            &format!("{at}/oneOf"),
            "oneOf",
            "`oneOf` is decoded as `anyOf`: a value matching two branches is not refused",
        );
    }
    if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
        let unsupported = ["(?=", "(?!", "(?<=", "(?<!"]
            .iter()
            .any(|l| pattern.contains(l))
            || (1..=9).any(|d| pattern.contains(&format!("\\{d}")))
            || pattern.contains("\\b");
        if unsupported {
            risk(
                risks,
                Risk,
                &format!("{at}/pattern"),
                "pattern",
                "lookaround, backreferences and word boundaries cannot be turned into a grammar",
            );
        }
    }
    for (keyword, bound) in [
        ("maxLength", MAX_LENGTH_BOUND),
        ("minLength", MAX_LENGTH_BOUND),
        ("maxItems", MAX_ITEMS_BOUND),
        ("minItems", MAX_ITEMS_BOUND),
    ] {
        if map
            .get(keyword)
            .and_then(Value::as_u64)
            .is_some_and(|n| n > bound)
        {
            risk(
                risks,
                Risk,
                &format!("{at}/{keyword}"),
                keyword,
                "bounds this large are unrolled into very large grammars",
            );
        }
    }
    if map
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.len() > MAX_ENUM)
    {
        risk(
            risks,
            Risk,
            &format!("{at}/enum"),
            "enum",
            "an enumeration this long makes a large grammar and a long prompt",
        );
    }
    if let Some(format) = map.get("format").and_then(Value::as_str)
        && !matches!(format, "date" | "time" | "date-time" | "uuid")
    {
        risk(
            risks,
            Note,
            &format!("{at}/format"),
            "format",
            "most back-ends enforce only the date, time, date-time and uuid formats while decoding; this one is left to the model",
        );
    }
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        if !reference.starts_with('#') {
            risk(
                risks,
                Risk,
                &format!("{at}/$ref"),
                "$ref",
                "references outside the schema are not fetched by grammar converters",
            );
        } else if refs.iter().any(|r| r == reference) {
            risk(
                risks,
                Risk,
                &format!("{at}/$ref"),
                "$ref",
                "a recursive reference: some back-ends expand it without end, others refuse it",
            );
        } else if let Some(target) = resolve(root, reference) {
            refs.push(reference.to_string());
            walk(root, target, &format!("{at}/$ref"), depth + 1, refs, risks);
            refs.pop();
        }
    }
    let children = ["properties", "$defs", "definitions"];
    for key in children {
        if let Some(Value::Object(props)) = map.get(key) {
            // Definitions are walked where they are referenced.
            if key != "properties" {
                continue;
            }
            for (name, sub) in props {
                let place = format!("{at}/{key}/{}", name.replace('~', "~0").replace('/', "~1"));
                walk(root, sub, &place, depth + 1, refs, risks);
            }
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = map.get(key).filter(|s| s.is_object()) {
            walk(root, sub, &format!("{at}/{key}"), depth + 1, refs, risks);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = map.get(key) {
            for (i, sub) in list.iter().enumerate() {
                walk(
                    root,
                    sub,
                    &format!("{at}/{key}/{i}"),
                    depth + 1,
                    refs,
                    risks,
                );
            }
        }
    }
}

/// The schema a local `#/…` reference points at.
fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    root.pointer(reference.strip_prefix('#')?)
}
