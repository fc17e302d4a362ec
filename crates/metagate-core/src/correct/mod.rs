//! The correction pipeline (docs/corrections.md, "Rules"): everything that can be fixed without guessing is
//! fixed and reported; everything else is a rejection naming what was wrong.
//!
//! Order: strip → argument aliases → case style → near misses → value aliases → enum case →
//! type coercion → defaults → requirements → unknown arguments.
//!
//! The pipeline reads values only where a rule needs them ([`Args`]), so a call that is fine
//! as sent costs a scan, not a parse.

pub mod bare_argument;
mod grant_fields;

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde_json::{Number, Value};

use crate::error::{Category, ToolError};
use crate::policy::{
    Arg, ArgType, CompiledSchema, NamePattern, Policy, Tool, UnknownArgs, UnknownTools,
    condition_holds, fold_name,
};
use metagate_wire::args::{ArgValue, Args, IntegerFit, JsonType, fits_f64, is_i64_integer};
use metagate_wire::correction::{Correction, Kind, arg_pointer};

/// What the pipeline did to a call that it did not reject.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    /// What the pipeline changed, in order, for the report and the stderr lines.
    pub corrections: Vec<Correction>,
    /// What it kept but thinks odd (unknown arguments kept, a value left as sent).
    pub warnings: Vec<String>,
}

impl Report {
    fn fix(&mut self, kind: Kind, path: String, from: Value, to: Value) {
        self.corrections.push(Correction::new(kind, path, from, to));
    }
}

/// The warning [`run`] gives an unknown tool it passes.
fn unknown_tool_warning(tool_name: &str) -> String {
    format!("unknown tool {tool_name:?}: passed through unchecked")
}

/// Runs the pipeline over one call's arguments, in place.
#[cfg(test)]
fn run(
    policy: &Policy,
    tool_name: &str,
    method: Option<&str>,
    args: &mut Args<'_>,
    report: &mut Report,
) -> Result<(), Box<ToolError>> {
    run_for(
        policy,
        tool_name,
        policy.tool(tool_name),
        method,
        args,
        report,
    )
}

/// [`run`] for a tool already looked up (`found`: `policy.tool(tool_name)`).
pub fn run_for(
    policy: &Policy,
    tool_name: &str,
    found: Option<&Tool>,
    method: Option<&str>,
    args: &mut Args<'_>,
    report: &mut Report,
) -> Result<(), Box<ToolError>> {
    strip(&policy.gate.strip, args, report);
    grant_fields::strip_grant_fields(policy, tool_name, args, report);
    let Some(tool) = found else {
        return match policy.gate.unknown_tools {
            UnknownTools::Pass => {
                report.warnings.push(unknown_tool_warning(tool_name));
                Ok(())
            }
            UnknownTools::Reject => Err(Box::new(tool_not_found(policy, tool_name))),
        };
    };
    let mut problems = Problems::default();
    let shadowed = rename_args(tool, policy.gate.fuzzy_names, args, report, &mut problems);
    // One pass over the arguments: fix each declared one, note which are present and filled,
    // and collect the rest.
    let mut seen = Seen::new(tool.args.len());
    let mut unknown: Vec<String> = Vec::new();
    for i in 0..args.len() {
        match tool.args.get_full(args.key_at(i)) {
            Some((index, name, spec)) => {
                fix_value(name, spec, args, i, report, &mut problems);
                seen.mark(index, args.value_at(i).is_blank());
            }
            None if tool.args.is_empty() || shadowed.iter().any(|s| s == args.key_at(i)) => {}
            None => unknown.push(args.key_at(i).to_string()),
        }
    }
    for (index, (name, spec)) in tool.args.iter().enumerate() {
        if seen.present(index) {
            continue;
        }
        if let Some(default) = &spec.default {
            args.push(name.clone(), default.clone());
            report.fix(
                Kind::Default,
                arg_pointer(name),
                Value::Null,
                default.clone(),
            );
            seen.mark(index, ArgValue::Value(default.clone()).is_blank());
        }
    }
    // `skills_tool:load` with `"method": "list"`: two readings of the method.
    if let (Some(method), Some(arg)) = (method, tool.method_arg.as_deref())
        && let Some(given) = args.get(arg).and_then(ArgValue::as_str)
        && given.trim() != method
    {
        problems.ambiguous.push((
            arg.to_string(),
            vec![method.to_string(), given.into_owned()],
        ));
    }
    for (index, (name, spec)) in tool.args.iter().enumerate() {
        if !spec.required || !seen.missing(index) {
            continue;
        }
        if !spec.unless.is_empty() && condition_holds(&spec.unless, args) {
            continue;
        }
        if method.is_some() && tool.method_arg.as_deref() == Some(name.as_str()) {
            continue;
        }
        if problems.ambiguous.iter().any(|(a, _)| a == name) {
            continue;
        }
        problems.missing.push(name.clone());
    }
    lone_unknown_for_missing(tool, &mut unknown, args, report, &mut problems);
    unknown_args(tool, unknown, args, report, &mut problems);
    problems.into_result(tool)?;
    match &tool.schema {
        Some(schema) => check_schema(tool, schema, args),
        None => Ok(()),
    }
}

/// Gives text-dialect `<parameter>` values that were read as JSON (see
/// [`metagate_wire::repair::Parsed::texts`]) back their text where the tool declares the argument a
/// string and no other type that reading fits: `<parameter name="id">12345</parameter>`
/// is the string `"12345"` to a tool whose `id` is a string, and the number 12345 to one
/// whose `id` is an integer. Names are matched as the correction rules will rename them
/// (declared, alias, other case style). Not a correction: the model wrote text, and this
/// is how that text reads for this tool. Returns the names given back their text.
pub fn keep_param_texts(
    policy: &Policy,
    tool_name: &str,
    args: &mut Args<'_>,
    texts: Vec<(String, String)>,
) -> Vec<String> {
    let mut kept = Vec::new();
    let Some(tool) = policy.tool(tool_name) else {
        return kept;
    };
    for (key, text) in texts {
        let declared = tool
            .args
            .get(&key)
            .or_else(|| tool.aliases.get(&key).and_then(|d| tool.args.get(d)))
            .or_else(|| {
                tool.folded
                    .get(&fold_name(&key))
                    .and_then(|d| tool.args.get(d))
            });
        let (Some(spec), Some(i)) = (declared, args.position(&key)) else {
            continue;
        };
        if spec.types.contains(&ArgType::String) && !type_fits(spec, args.value_at(i)) {
            args.set_at(i, Value::String(text));
            kept.push(key);
        }
    }
    kept
}

/// The last rule: an imported tool's JSON Schema judges the corrected arguments.
fn check_schema(
    tool: &Tool,
    schema: &CompiledSchema,
    args: &Args<'_>,
) -> Result<(), Box<ToolError>> {
    let problems = schema.problems(&Value::Object(args.to_map()));
    if problems.is_empty() {
        return Ok(());
    }
    let only_types = problems.iter().all(|(_, _, is_type)| *is_type);
    let category = if only_types {
        Category::TypeMismatch
    } else {
        Category::InvalidParameters
    };
    let sentences: Vec<String> = problems
        .iter()
        .map(|(path, message, _)| {
            if path.is_empty() {
                message.clone()
            } else {
                format!("{path}: {message}")
            }
        })
        .collect();
    let mut error = ToolError::new(
        category,
        format!(
            "{} arguments do not match its schema: {}",
            tool.name,
            sentences.join("; ")
        ),
    )
    .tool(tool.name.clone())
    .suggest(format!(
        "Fix the arguments to match {}'s input schema, then call {} again",
        tool.name, tool.name
    ));
    error.details.insert(
        "schema_errors",
        problems
            .iter()
            .map(|(path, message, _)| serde_json::json!({"path": path, "message": message}))
            .collect(),
    );
    Err(Box::new(error))
}

/// Which declared arguments a call holds, and which of those are blank, by declared index:
/// bit sets for the usual handful of arguments, without allocating.
struct Seen {
    present: Bits,
    blank: Bits,
}

enum Bits {
    Small(u64),
    Large(Vec<bool>),
}

impl Bits {
    fn new(n: usize) -> Bits {
        if n <= 64 {
            Bits::Small(0)
        } else {
            Bits::Large(vec![false; n])
        }
    }

    fn set(&mut self, index: usize, on: bool) {
        match self {
            Bits::Small(bits) if on => *bits |= 1 << index,
            Bits::Small(bits) => *bits &= !(1 << index),
            Bits::Large(v) => v[index] = on,
        }
    }

    fn get(&self, index: usize) -> bool {
        match self {
            Bits::Small(bits) => bits & (1 << index) != 0,
            Bits::Large(v) => v[index],
        }
    }
}

impl Seen {
    fn new(n: usize) -> Seen {
        Seen {
            present: Bits::new(n),
            blank: Bits::new(n),
        }
    }

    fn mark(&mut self, index: usize, blank: bool) {
        self.present.set(index, true);
        self.blank.set(index, blank);
    }

    fn present(&self, index: usize) -> bool {
        self.present.get(index)
    }

    fn missing(&self, index: usize) -> bool {
        !self.present.get(index) || self.blank.get(index)
    }
}

fn strip(patterns: &[NamePattern], args: &mut Args<'_>, report: &mut Report) {
    if patterns.is_empty() || !args.keys().any(|k| patterns.iter().any(|p| p.matches(k))) {
        return;
    }
    args.retain(|key| {
        let strip = patterns.iter().any(|p| p.matches(key));
        if strip {
            report.fix(
                Kind::Strip,
                arg_pointer(key),
                Value::String(key.to_string()),
                Value::Null,
            );
        }
        !strip
    });
}

/// Renames wrong argument names; returns the names left alone because their canonical
/// argument was also present (they are reported once, not again as unknown).
fn rename_args(
    tool: &Tool,
    fuzzy: bool,
    args: &mut Args<'_>,
    report: &mut Report,
    problems: &mut Problems,
) -> Vec<String> {
    let mut shadowed = Vec::new();
    // Fast path: every name is declared.
    if args.keys().all(|k| tool.args.contains_key(k)) {
        return shadowed;
    }
    let mut renames: Vec<(usize, String, Kind)> = Vec::new();
    let mut claimed: FxHashMap<String, String> = FxHashMap::default();
    for (index, key) in args.keys().enumerate() {
        if tool.args.contains_key(key) {
            continue;
        }
        let found = match tool.aliases.get(key) {
            Some(target) => Some((target.clone(), Kind::ArgAlias)),
            None => {
                let folded = fold_name(key);
                match tool.folded.get(&folded) {
                    Some(target) if fold_name(target) == folded => {
                        Some((target.clone(), Kind::ArgCase))
                    }
                    Some(target) => Some((target.clone(), Kind::ArgAlias)),
                    None if fuzzy => {
                        let mut near = near_misses(tool, &folded);
                        // `fom_timezone` beside `to_timezone`: a reading already given under
                        // its own name is not this one's, so one reading may remain.
                        if near.len() > 1 {
                            near.retain(|name| args.get(name).is_none());
                        }
                        match near.as_slice() {
                            [] => None,
                            [one] => Some((one.clone(), Kind::ArgFuzzy)),
                            several => {
                                problems.ambiguous.push((key.to_string(), several.to_vec()));
                                continue;
                            }
                        }
                    }
                    None => None,
                }
            }
        };
        let Some((target, kind)) = found else {
            continue;
        };
        if let Some(given) = args.get(&target) {
            // Two values for one argument are two readings of the call, and the one left
            // under the other name would reach a tool that reads it unchecked (a second
            // path, past the path and grant checks). The same value twice is one reading.
            if args.value_at(index).equals(&given.to_value()) {
                report.warnings.push(format!(
                    "both {key:?} and {target:?} were given, with the same value; kept {target:?} and left {key:?} as it was"
                ));
                shadowed.push(key.to_string());
            } else {
                problems
                    .ambiguous
                    .push((target.clone(), vec![target.clone(), key.to_string()]));
            }
            continue;
        }
        if let Some(first) = claimed.get(&target) {
            problems
                .ambiguous
                .push((target.clone(), vec![first.clone(), key.to_string()]));
            continue;
        }
        claimed.insert(target.clone(), key.to_string());
        renames.push((index, target, kind));
    }
    // A name claimed twice was rejected above; undo its first claim as well.
    renames.retain(|(_, target, _)| !problems.ambiguous.iter().any(|(t, _)| t == target));
    for (index, to, kind) in renames {
        let from = args.key_at(index).to_string();
        args.rename_at(index, to.clone());
        report.fix(
            kind,
            arg_pointer(&from),
            Value::String(from),
            Value::String(to),
        );
    }
    shadowed
}

/// Declared names within a small edit distance of `folded`, scaled to the declared name's
/// length: none under 4 characters, one edit up to 9, two from 10. The declared name decides,
/// so a letter dropped from a short name (`qury` for `query`, `pth` for `path`) is one edit
/// like any other.
fn near_misses(tool: &Tool, folded: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for name in tool.args.keys() {
        let target = fold_name(name);
        let len = target.chars().count();
        let allowed = match len {
            0..=3 => 0,
            4..=9 => 1,
            _ => 2,
        };
        if allowed > 0 && strsim::osa_distance(folded, &target) <= allowed && !found.contains(name)
        {
            found.push(name.clone());
        }
    }
    found
}

/// Trimmed and lowercased, without allocating when it already is.
fn fold_value(s: &str) -> Cow<'_, str> {
    let t = s.trim();
    if t.bytes().any(|b| b.is_ascii_uppercase()) || !t.is_ascii() {
        Cow::Owned(t.to_lowercase())
    } else {
        Cow::Borrowed(t)
    }
}

/// Value aliases, enum case, coercion and enum membership for the argument at `i`.
fn fix_value(
    name: &str,
    spec: &Arg,
    args: &mut Args<'_>,
    i: usize,
    report: &mut Report,
    problems: &mut Problems,
) {
    if !spec.values.is_empty() {
        let replacement = args.value_at(i).as_str().and_then(|s| {
            spec.values
                .get(fold_value(&s).as_ref())
                .filter(|right| !args.value_at(i).equals(right))
                .cloned()
        });
        if let Some(right) = replacement {
            let from = args.set_at(i, right.clone()).into_value();
            report.fix(Kind::ValueAlias, arg_pointer(name), from, right);
        }
    }
    if let Some(allowed) = &spec.one_of {
        let value = args.value_at(i);
        let fix = match value.as_str() {
            Some(s) if !allowed.iter().any(|a| a.as_str() == Some(s.as_ref())) => {
                let wanted = s.trim();
                let matches: Vec<&Value> = allowed
                    .iter()
                    .filter(|a| a.as_str().is_some_and(|a| a.eq_ignore_ascii_case(wanted)))
                    .collect();
                match matches.as_slice() {
                    [one] => Some((*one).clone()),
                    [] => None,
                    several => {
                        problems.ambiguous.push((
                            name.to_string(),
                            several
                                .iter()
                                .map(|v| v.as_str().unwrap_or_default().to_string())
                                .collect(),
                        ));
                        None
                    }
                }
            }
            _ => None,
        };
        if let Some(to) = fix {
            let from = args.set_at(i, to.clone()).into_value();
            report.fix(Kind::EnumCase, arg_pointer(name), from, to);
        }
    }
    if !type_fits(spec, args.value_at(i)) {
        match coerce(spec, args.value_at(i)) {
            Some(to) => {
                let from = args.set_at(i, to.clone()).into_value();
                report.fix(Kind::Coerce, arg_pointer(name), from, to);
            }
            // `"names": "Alice"` where an array is declared: the one value is its one element.
            None if wraps_in_array(spec, args.value_at(i)) => {
                let from = args.value_at(i).to_value();
                let to = Value::Array(vec![from.clone()]);
                args.set_at(i, to.clone());
                report.fix(Kind::Coerce, arg_pointer(name), from, to);
            }
            None => {
                problems.types.push(TypeProblem {
                    arg: name.to_string(),
                    expected: spec.type_names(),
                    got: describe_misfit(spec, args.value_at(i)),
                });
                return;
            }
        }
    }
    if let Some(allowed) = &spec.one_of {
        let value = args.value_at(i);
        let null_ok = spec.nullable && value.json_type() == JsonType::Null;
        if !null_ok && !allowed.iter().any(|a| value.equals(a)) {
            problems
                .not_allowed
                .push((name.to_string(), describe(value), allowed.clone()));
        }
    }
}

/// Whether a value that fits none of the declared types is one element of a declared array:
/// an array is declared, and the value is neither an array nor null.
fn wraps_in_array(spec: &Arg, value: &ArgValue<'_>) -> bool {
    spec.types.contains(&ArgType::Array)
        && !matches!(value.json_type(), JsonType::Array | JsonType::Null)
}

/// A lone unknown argument and a lone missing required one whose type it fits
/// (`"msg"` for `"message"`, `"file_path"` for `"path"`, `"tz"` for `"timezone"`): the
/// call holds its value under another name, and no other reading makes the call whole.
/// Renamed, and its value then fixed as the declared argument's would be.
fn lone_unknown_for_missing(
    tool: &Tool,
    unknown: &mut Vec<String>,
    args: &mut Args<'_>,
    report: &mut Report,
    problems: &mut Problems,
) {
    let ([key], [target]) = (unknown.as_slice(), problems.missing.as_slice()) else {
        return;
    };
    if !problems.ambiguous.is_empty() {
        return;
    }
    let (Some(spec), Some(i)) = (tool.args.get(target), args.position(key)) else {
        return;
    };
    let value = args.value_at(i);
    let fits_type =
        type_fits(spec, value) || coerce(spec, value).is_some() || wraps_in_array(spec, value);
    // An enum takes only its values (as sent, by case or by a value alias): `"skill_name":
    // "git"` is no `method` of `list` and `load`.
    let fits_enum = spec.one_of.as_ref().is_none_or(|allowed| {
        value.as_str().is_some_and(|s| {
            let folded = fold_value(&s);
            spec.values.contains_key(folded.as_ref())
                || allowed
                    .iter()
                    .any(|a| a.as_str().is_some_and(|a| a.eq_ignore_ascii_case(s.trim())))
        }) || allowed.iter().any(|a| value.equals(a))
    });
    // The method argument names what the tool does, which a name's `:method` suffix gives.
    let is_method = tool.method_arg.as_deref() == Some(target.as_str());
    if value.is_blank() || !fits_type || !fits_enum || is_method {
        return;
    }
    let (from, to) = (key.clone(), target.clone());
    args.rename_at(i, to.clone());
    report.fix(
        Kind::ArgFuzzy,
        arg_pointer(&from),
        Value::String(from),
        Value::String(to.clone()),
    );
    problems.missing.clear();
    unknown.clear();
    fix_value(&to, spec, args, i, report, problems);
}

/// Whether a value has one of the argument's declared types, as it stands.
fn type_fits(spec: &Arg, value: &ArgValue<'_>) -> bool {
    fits(
        spec,
        value.json_type(),
        || value.is_f64_number(),
        || value.is_i64_integer(),
    )
}

/// [`type_fits`] for a value already read (`evaluate` judging a recorded call).
pub(crate) fn value_fits(spec: &Arg, value: &Value) -> bool {
    let number = || matches!(value, Value::Number(n) if fits_f64(n));
    let integer = || matches!(value, Value::Number(n) if is_i64_integer(n));
    fits(spec, JsonType::of(value), number, integer)
}

/// Whether a value of JSON type `kind` fits, `number` and `integer` saying (when asked) whether
/// a number fits those types.
fn fits(spec: &Arg, kind: JsonType, number: impl Fn() -> bool, integer: impl Fn() -> bool) -> bool {
    if spec.accepts_any_type() {
        return true;
    }
    let has = |t: ArgType| spec.types.contains(&t);
    match kind {
        JsonType::String => has(ArgType::String),
        JsonType::Bool => has(ArgType::Boolean),
        JsonType::Object => has(ArgType::Object),
        JsonType::Array => has(ArgType::Array),
        JsonType::Null => has(ArgType::Null) || spec.nullable,
        JsonType::Number => {
            (has(ArgType::Number) && number()) || (has(ArgType::Integer) && integer())
        }
    }
}

/// The exact reading of a string as the declared type, if there is exactly one; never lossy.
pub(crate) fn coerce(spec: &Arg, value: &ArgValue<'_>) -> Option<Value> {
    let s = value.as_str()?;
    let text = s.trim();
    spec.types
        .iter()
        .find_map(|t| match t {
            ArgType::Integer => read_integer(text),
            ArgType::Number => read_number(text),
            ArgType::Boolean => {
                if text.eq_ignore_ascii_case("true") {
                    Some(Value::Bool(true))
                } else if text.eq_ignore_ascii_case("false") {
                    Some(Value::Bool(false))
                } else {
                    None
                }
            }
            ArgType::Null => (text == "null").then_some(Value::Null),
            ArgType::Object => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object),
            ArgType::Array => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_array),
            ArgType::String | ArgType::Any => None,
        })
        .or_else(|| (spec.nullable && text == "null").then_some(Value::Null))
}

fn read_integer(text: &str) -> Option<Value> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !canonical {
        return None;
    }
    let n: Number = text.parse().ok()?;
    is_i64_integer(&n).then_some(Value::Number(n))
}

fn read_number(text: &str) -> Option<Value> {
    // JSON's own number grammar: no `+`, no leading `.`, no `NaN` or `inf`.
    let n: Number = text.parse().ok()?;
    fits_f64(&n).then_some(Value::Number(n))
}

fn describe(v: &ArgValue<'_>) -> String {
    let kind = match v.json_type() {
        JsonType::Null => "null",
        JsonType::Bool => "a boolean",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    };
    match v.json_type() {
        JsonType::String => match v.as_str() {
            Some(s) if s.chars().count() <= 40 => format!("{kind} ({s:?})"),
            _ => kind.to_string(),
        },
        JsonType::Number => format!("{kind} ({})", number_for_message(v)),
        JsonType::Bool => format!("{kind} ({})", v.to_value()),
        _ => kind.to_string(),
    }
}

/// [`describe`] for a value that does not fit its declared type: a number the type would
/// take but for its size says so, since "must be a number, got a number" would not.
fn describe_misfit(spec: &Arg, value: &ArgValue<'_>) -> String {
    if value.json_type() == JsonType::Number {
        let has = |t: ArgType| spec.types.contains(&t);
        let range = if has(ArgType::Number) {
            Some("64-bit float")
        } else if has(ArgType::Integer) {
            (value.integer_fit() == Some(IntegerFit::OutsideI64)).then_some("64-bit integer")
        } else {
            None
        };
        if let Some(range) = range {
            return format!(
                "a number outside the {range} range ({})",
                number_for_message(value)
            );
        }
    }
    describe(value)
}

/// A number's text for a message: whole up to 40 characters, else its start and its length
/// (a model can send 100,000 digits; the message it gets back stays short).
fn number_for_message(value: &ArgValue<'_>) -> String {
    let text = match value {
        ArgValue::Raw(text) => Cow::Borrowed(text.as_ref()),
        ArgValue::Value(v) => Cow::Owned(v.to_string()),
    };
    if text.len() <= 40 {
        text.into_owned()
    } else {
        // A JSON number's text is ASCII: any byte is a character boundary.
        format!("{}…, {} characters", &text[..20], text.len())
    }
}

fn unknown_args(
    tool: &Tool,
    unknown: Vec<String>,
    args: &mut Args<'_>,
    report: &mut Report,
    problems: &mut Problems,
) {
    let unknown: Vec<String> = unknown
        .into_iter()
        .filter(|k| {
            !problems
                .ambiguous
                .iter()
                .any(|(a, c)| a == k || c.contains(k))
        })
        .collect();
    if unknown.is_empty() {
        return;
    }
    let declared = declared_list(tool);
    match tool.unknown_args {
        UnknownArgs::Keep => {
            // A required argument missing beside unknown ones: the feedback names them, as
            // the model may have sent the missing one under another name.
            if !problems.missing.is_empty() {
                problems.unknown_kept = unknown.clone();
            }
            // A warning per argument up to a point, then a count: a call of a million made-up
            // arguments must not become a million lines (on stderr, in --report, in the store).
            const NAMED: usize = 20;
            let more = unknown.len().saturating_sub(NAMED);
            for k in unknown.into_iter().take(NAMED) {
                report.warnings.push(format!(
                    "unknown argument {k:?} kept ({} declares: {declared})",
                    tool.name
                ));
            }
            if more > 0 {
                report.warnings.push(format!(
                    "{more} more unknown arguments kept ({} declares: {declared})",
                    tool.name
                ));
            }
        }
        UnknownArgs::Drop => {
            for k in unknown {
                args.remove(&k);
                report.fix(Kind::Strip, arg_pointer(&k), Value::String(k), Value::Null);
            }
        }
        UnknownArgs::Reject => problems.unknown = unknown,
    }
}

fn declared_list(tool: &Tool) -> String {
    tool.args.keys().cloned().collect::<Vec<_>>().join(", ")
}

struct TypeProblem {
    arg: String,
    expected: String,
    got: String,
}

#[derive(Default)]
struct Problems {
    missing: Vec<String>,
    types: Vec<TypeProblem>,
    not_allowed: Vec<(String, String, Vec<Value>)>,
    /// A name (or value) with two or more readings, and the readings.
    ambiguous: Vec<(String, Vec<String>)>,
    unknown: Vec<String>,
    /// Unknown arguments kept, named beside missing ones.
    unknown_kept: Vec<String>,
}

impl Problems {
    fn into_result(self, tool: &Tool) -> Result<(), Box<ToolError>> {
        if self.missing.is_empty()
            && self.types.is_empty()
            && self.not_allowed.is_empty()
            && self.ambiguous.is_empty()
            && self.unknown.is_empty()
        {
            return Ok(());
        }
        let name = &tool.name;
        let mut sentences = Vec::new();
        let mut suggestions = Vec::new();
        let mut details = crate::error::Details::new();
        if !self.missing.is_empty() {
            let noun = if self.missing.len() == 1 {
                " argument "
            } else {
                " arguments "
            };
            let mut sentence = String::with_capacity(64);
            sentence.push_str(name);
            sentence.push_str(" is missing required");
            sentence.push_str(noun);
            sentence.push_str(&quoted_list(&self.missing));
            if !self.unknown_kept.is_empty() {
                sentence.push_str(", and was sent ");
                sentence.push_str(&quoted_list(&self.unknown_kept));
                sentence.push_str(", which it does not take");
            }
            sentences.push(sentence);
            let mut suggestion = String::from("add ");
            for (i, m) in self.missing.iter().enumerate() {
                if i > 0 {
                    suggestion.push_str(", ");
                }
                describe_arg(tool, m, &mut suggestion);
            }
            suggestions.push(suggestion);
        }
        for (arg, readings) in &self.ambiguous {
            sentences.push(format!(
                "{arg:?} has more than one reading: {}",
                quoted_list(readings)
            ));
            suggestions.push(if tool.method_arg.as_deref() == Some(arg.as_str()) {
                format!("give the method once, as the name's `:method` suffix or as {arg:?}")
            } else {
                format!("use the exact argument names ({})", declared_list(tool))
            });
        }
        if !self.ambiguous.is_empty() {
            details.insert(
                "ambiguous",
                self.ambiguous
                    .iter()
                    .map(|(a, c)| serde_json::json!({"argument": a, "candidates": c}))
                    .collect(),
            );
        }
        for (arg, got, allowed) in &self.not_allowed {
            let allowed_text = allowed.iter().map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let allowed_text: Vec<String> = allowed_text.collect();
            sentences.push(format!(
                "{arg:?} is {got}, not one of: {}",
                allowed_text.join(", ")
            ));
            suggestions.push(format!(
                "set {arg:?} to one of: {}",
                allowed_text.join(", ")
            ));
        }
        if !self.not_allowed.is_empty() {
            details.insert(
                "not_allowed",
                self.not_allowed
                    .iter()
                    .map(|(a, _, allowed)| serde_json::json!({"argument": a, "allowed": allowed}))
                    .collect(),
            );
        }
        if !self.unknown.is_empty() {
            sentences.push(format!(
                "{name} does not take {}",
                quoted_list(&self.unknown)
            ));
            suggestions.push(format!(
                "use only the declared arguments ({})",
                declared_list(tool)
            ));
            details.insert("unknown", self.unknown.clone().into());
        }
        for p in &self.types {
            sentences.push(format!(
                "{:?} must be {}, got {}",
                p.arg,
                article(&p.expected),
                p.got
            ));
            suggestions.push(format!("send {:?} as {}", p.arg, article(&p.expected)));
        }
        if !self.types.is_empty() {
            details.insert(
                "type_errors",
                self.types
                    .iter()
                    .map(|p| serde_json::json!({"argument": p.arg, "expected": p.expected, "got": p.got}))
                    .collect(),
            );
        }
        let only_types = self.missing.is_empty()
            && self.not_allowed.is_empty()
            && self.ambiguous.is_empty()
            && self.unknown.is_empty();
        let category = if only_types {
            Category::TypeMismatch
        } else {
            Category::InvalidParameters
        };
        let mut suggestion = capitalize(&suggestions.join("; "));
        suggestion.push_str(", then call ");
        suggestion.push_str(name);
        suggestion.push_str(" again");
        let mut error = ToolError::new(category, sentences.join("; "))
            .tool(name.clone())
            .suggest(suggestion);
        error.missing = self.missing;
        error.details = details;
        Err(Box::new(error))
    }
}

/// `"code" (string)`, `"runtime" (string: one of terminal, python)`.
fn describe_arg(tool: &Tool, name: &str, out: &mut String) {
    out.push_str(&quote(name));
    let Some(arg) = tool.args.get(name).filter(|a| !a.accepts_any_type()) else {
        return;
    };
    out.push_str(" (");
    out.push_str(&arg.type_names());
    if let Some(allowed) = &arg.one_of {
        out.push_str(": one of ");
        for (i, v) in allowed.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            match v.as_str() {
                Some(s) => out.push_str(s),
                None => out.push_str(&v.to_string()),
            }
        }
    }
    out.push(')');
}

/// A name in double quotes, escaped as Rust's `{:?}` would only when it needs it.
fn quote(s: &str) -> String {
    if s.bytes()
        .any(|b| b == b'"' || b == b'\\' || b < 0x20 || b == 0x7f)
    {
        return format!("{s:?}");
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    out.push_str(s);
    out.push('"');
    out
}

fn quoted_list(items: &[String]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == items.len() { " and " } else { ", " });
        }
        out.push_str(&quote(item));
    }
    out
}

fn article(type_names: &str) -> String {
    let first = type_names.chars().next().unwrap_or('x');
    if "aeiou".contains(first) {
        format!("an {type_names}")
    } else {
        format!("a {type_names}")
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii() => {
            let mut out = String::with_capacity(s.len() + 24);
            out.push(c.to_ascii_uppercase());
            out.push_str(chars.as_str());
            out
        }
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn tool_not_found(policy: &Policy, name: &str) -> ToolError {
    let mut known: Vec<&String> = policy.tools.keys().collect();
    known.sort_by_key(|k| strsim::osa_distance(k, name));
    let list: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
    let mut e = ToolError::new(
        Category::ToolNotFound,
        format!("there is no tool named {name:?}"),
    )
    .tool(name)
    // Not retryable: this call can never succeed. Another call can, which the suggestion
    // says without asking the model to retry this one.
    .suggest(format!(
        "Do not call {name:?} again: no such tool exists. Use one of the available tools instead: {}",
        list.join(", ")
    ));
    e.details.insert("available", list.into());
    e
}

#[cfg(test)]
mod tests;
