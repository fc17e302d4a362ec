//! The tool registry: the policy file compiled into what the correction pipeline reads.

pub mod file;
pub mod import;
mod lookup;
pub mod mcp;
pub(crate) mod rules;
pub mod run;
pub mod thresholds;
pub mod tool_names;

use std::fmt;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap};
use serde_json::Value;

use crate::events::AxisTable;
use metagate_wire::args::{ArgValue, Args, fits_f64, is_i64_integer};

pub use file::{
    Access, ArgKind, ArgType, Extends, FailMode, ImportFile, OtlpFile, PolicyFile, UnknownArgs,
    UnknownTools,
};
use file::{ArgFile, ToolFile, key_at, line_col, locate};
pub(crate) use import::CompiledSchema;
pub use lookup::{
    LookupEnv, PolicyLocation, Reason, Search, locate_policy, look_up_policy, policy_lookup_chain,
};
use rules::Rules;

/// `[telemetry] busy_timeout_ms` when the policy does not say.
const DEFAULT_BUSY_TIMEOUT_MS: u64 = 10_000;

/// The built-in policy's text, compiled into the binary.
#[cfg(test)]
const BUILTIN_TOML: &str = include_str!("builtin.toml");

/// A policy ready for the gate: the effective file (for `policy show`) and the compiled tools.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where the policy came from: `None` for the built-in one.
    pub origin: Option<PathBuf>,
    /// The effective policy, the built-in layer included and every default filled in.
    pub file: PolicyFile,
    /// The `[gate]` settings.
    pub gate: GateSettings,
    /// The tools by name, in the policy's order.
    pub tools: IndexMap<String, Tool, FxBuildHasher>,
    /// Intents, callers, argument kinds, limits and prerequisites.
    pub rules: Rules,
    /// What `policy check` warns about (the policy works, but may not mean what it says).
    pub warnings: Vec<PolicyError>,
    /// What tool definitions (`[[import]]`, `--tools`) had to be read around: contradictions
    /// repaired, JSON Schema left unchecked, tools left out. Each names its file and tool.
    pub import_warnings: Vec<PolicyError>,
    /// Folded tool name (see [`fold_name`]) → the one tool it folds from; None where two do.
    folded_tools: FxHashMap<String, Option<String>>,
    /// Bit n set when a folded tool name is n bytes long (n < 64; bit 63 for longer ones): most
    /// unknown names are told apart by length without folding them.
    folded_lengths: u64,
    /// A hash (FNV-1a) of the tool files imported, their paths and texts: with the effective
    /// file, what [`Policy::fingerprint`] covers.
    import_digest: u64,
}

/// The `[gate]` table, defaults filled in.
#[derive(Debug, Clone)]
pub struct GateSettings {
    pub(crate) unknown_tools: UnknownTools,
    unknown_args: UnknownArgs,
    /// What a check that cannot run does to the call.
    pub on_internal_error: FailMode,
    pub(crate) strip: Vec<NamePattern>,
    pub(crate) fuzzy_names: bool,
}

/// An argument name, or a prefix when written with a trailing `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NamePattern {
    Exact(String),
    Prefix(String),
}

impl NamePattern {
    fn parse(text: &str) -> NamePattern {
        match text.strip_suffix('*') {
            Some(prefix) => NamePattern::Prefix(prefix.to_string()),
            None => NamePattern::Exact(text.to_string()),
        }
    }

    pub(crate) fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Exact(n) => n == name,
            NamePattern::Prefix(p) => name.starts_with(p.as_str()),
        }
    }
}

/// One tool the gate knows.
#[derive(Debug, Clone)]
pub struct Tool {
    pub(crate) name: String,
    /// The capability grants and intents name it by.
    pub capability: Option<String>,
    /// The policy's description of the tool (kept, not read by any check).
    pub description: Option<String>,
    /// The argument a `tool:method` name suffix supplies.
    pub(crate) method_arg: Option<String>,
    pub(crate) unknown_args: UnknownArgs,
    /// Wrong name → declared name, exactly as written.
    pub aliases: FxHashMap<String, String>,
    /// Folded name (see [`fold_name`]) → declared name, for declared names and aliases alike.
    pub(crate) folded: FxHashMap<String, String>,
    /// Its arguments by name, in the policy's order.
    pub args: IndexMap<String, Arg, FxBuildHasher>,
    /// The input schema of an imported definition, checked after the correction rules.
    pub schema: Option<CompiledSchema>,
}

/// One argument of a tool.
#[derive(Debug, Clone, Default)]
pub struct Arg {
    /// Accepted JSON types; empty accepts any.
    pub(crate) types: Vec<ArgType>,
    /// Whether a call must give it.
    pub required: bool,
    pub(crate) nullable: bool,
    /// The requirement is lifted when one of these arguments holds one of the values.
    pub(crate) unless: Vec<(String, Vec<Value>)>,
    pub(crate) one_of: Option<Vec<Value>>,
    /// Folded wrong value (trimmed, lowercase) → right value.
    pub(crate) values: FxHashMap<String, Value>,
    pub(crate) default: Option<Value>,
    /// The check its value goes through, if any.
    pub kind: Option<ArgKind>,
    /// The kind applies only when one of these arguments holds one of the values.
    pub(crate) kind_when: Vec<(String, Vec<Value>)>,
    /// What the tool does with a `path` argument (`write` unless the policy says `read`).
    pub(crate) access: Access,
    /// The policy's description of the argument (kept, not read by any check).
    pub description: Option<String>,
}

impl Arg {
    pub(crate) fn accepts_any_type(&self) -> bool {
        self.types.is_empty() || self.types.contains(&ArgType::Any)
    }

    pub(crate) fn type_names(&self) -> String {
        self.types
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

/// How names are compared for case style: lowercase, without `_`, `-`, `.` or spaces, so
/// `userId`, `user_id`, `UserId` and `user-id` fold to the same name.
/// The bit of [`Policy::folded_lengths`] for a length.
fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

pub(crate) fn fold_name(name: &str) -> String {
    if name.is_ascii() {
        return name
            .bytes()
            .filter(|b| !matches!(b, b'_' | b'-' | b'.' | b' '))
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `value` satisfies a condition list such as `unless = { runtime = ["output"] }`.
/// Strings compare trimmed and case-insensitively, as the seed's gate does.
pub(crate) fn condition_holds(conditions: &[(String, Vec<Value>)], args: &Args<'_>) -> bool {
    conditions.iter().any(|(arg, wanted)| {
        args.get(arg)
            .is_some_and(|v| wanted.iter().any(|w| loosely_equal(v, w)))
    })
}

fn loosely_equal(a: &ArgValue<'_>, b: &Value) -> bool {
    match (a.as_str(), b) {
        (Some(x), Value::String(y)) => x.trim().eq_ignore_ascii_case(y.trim()),
        _ => a.equals(b),
    }
}

/// One problem with a policy file, located by key and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    file: String,
    key: String,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let (Some(line), Some(col)) = (self.line, self.column) {
            write!(f, ":{line}:{col}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem found in a policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyErrors(pub Vec<PolicyError>);

impl fmt::Display for PolicyErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PolicyErrors {}

/// Why a file a policy names (an `[[import]]`, a `--tools` file) could not be read, as the
/// reader handed to [`Policy::load`] found it: the library reads no file itself.
#[derive(Debug)]
pub struct ReadError {
    path: PathBuf,
    cause: std::io::Error,
}

impl ReadError {
    /// The file that could not be read, and what the system said.
    pub fn new(path: &Path, cause: std::io::Error) -> ReadError {
        ReadError {
            path: path.to_path_buf(),
            cause,
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read {}: {}", self.path.display(), self.cause)
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// A policy file's text and the name to use for it in errors.
pub struct Source<'a> {
    /// The name errors give the file.
    pub name: &'a str,
    /// The file's text.
    pub text: &'a str,
}

impl Policy {
    /// The built-in policy.
    pub fn builtin() -> Policy {
        Policy::compile(None, builtin_file(), None).expect("the built-in policy is valid")
    }

    /// Parses and compiles a policy file, layered on the built-in policy unless it says
    /// `extends = "none"`. A file with `[[import]]`s needs [`Policy::load`].
    pub fn from_source(
        source: Source<'_>,
        origin: Option<PathBuf>,
    ) -> Result<Policy, PolicyErrors> {
        Policy::load(Some(source), origin, &[], &|p: &Path| {
            Err(ReadError::new(
                p,
                std::io::Error::other("no files are read here"),
            ))
        })
    }

    /// The whole load: the policy file (or the built-in policy when there is none), the tool
    /// definitions it imports and those given with `--tools`, read through `read` (the library
    /// touches no files itself). Imported tools sit between the built-in policy and the file,
    /// so the file's entries for a tool add aliases and value aliases on top of its schema.
    pub fn load(
        source: Option<Source<'_>>,
        origin: Option<PathBuf>,
        extra_tools: &[PathBuf],
        read: &dyn Fn(&Path) -> Result<String, ReadError>,
    ) -> Result<Policy, PolicyErrors> {
        let parsed = match &source {
            Some(s) => parse_file(s),
            None => ReadFile {
                file: Some(PolicyFile::default()),
                errors: Vec::new(),
                blanked_lines: Vec::new(),
            },
        };
        let Some(user) = parsed.file else {
            return Err(PolicyErrors(parsed.errors));
        };
        // Every problem is reported at once: those found reading the file, then those found
        // compiling what was left of it.
        let shape_errors = parsed.errors;
        let blanked = parsed.blanked_lines;
        let all = |later: PolicyErrors| {
            let mut errors = shape_errors.clone();
            errors.extend(
                later
                    .0
                    .into_iter()
                    .filter(|e| !e.line.is_some_and(|l| blanked.contains(&l))),
            );
            if !shape_errors.is_empty() {
                // In the order they are written in.
                errors.sort_by_key(|e| (e.line.unwrap_or(usize::MAX), e.column));
            }
            PolicyErrors(errors)
        };
        let base = match user.extends.unwrap_or(Extends::Builtin) {
            Extends::Builtin => builtin_file(),
            Extends::None => PolicyFile::default(),
        };
        let folder = origin
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let mut wanted: Vec<Wanted> = user
            .imports
            .iter()
            .enumerate()
            .map(|(index, i)| {
                let p = Path::new(&i.path);
                let full = match &folder {
                    Some(dir) if p.is_relative() => dir.join(p),
                    _ => p.to_path_buf(),
                };
                (full, i.clone(), Some(index))
            })
            .collect();
        for p in extra_tools {
            let entry = ImportFile {
                path: p.display().to_string(),
                format: None,
                fill_defaults: None,
            };
            wanted.push((p.clone(), entry, None));
        }
        let Imports {
            layer,
            schemas,
            warnings: import_warnings,
            digest: import_digest,
        } = import_all(&wanted, source.as_ref(), read).map_err(&all)?;
        let effective = base.layer(layer).layer(user);
        let mut policy = Policy::compile(origin, effective, source.as_ref()).map_err(&all)?;
        if !shape_errors.is_empty() {
            return Err(PolicyErrors(shape_errors));
        }
        policy.import_warnings = import_warnings;
        policy.import_digest = import_digest;
        for (name, schema) in schemas {
            if let Some(tool) = policy.tools.get_mut(&name) {
                tool.schema = Some(schema);
            }
        }
        Ok(policy)
    }

    fn compile(
        origin: Option<PathBuf>,
        mut file: PolicyFile,
        source: Option<&Source<'_>>,
    ) -> Result<Policy, PolicyErrors> {
        let mut problems = Problems::default();
        fill_gate_defaults(&mut file);
        let g = &file.gate;
        let strip: Vec<NamePattern> = g
            .strip
            .iter()
            .flatten()
            .map(|s| NamePattern::parse(s))
            .collect();
        for (i, pattern) in g.strip.iter().flatten().enumerate() {
            if pattern.trim_end_matches('*').is_empty() {
                problems.push(
                    &["gate", "strip"],
                    format!("entry {} is empty: it would strip every argument", i + 1),
                );
            }
        }
        let gate = GateSettings {
            unknown_tools: g.unknown_tools.unwrap_or_default(),
            unknown_args: g.unknown_args.unwrap_or_default(),
            on_internal_error: g.on_internal_error.unwrap_or_default(),
            strip,
            fuzzy_names: g.fuzzy_names.unwrap_or(true),
        };
        let mut tools = IndexMap::with_capacity_and_hasher(file.tools.len(), FxBuildHasher);
        for (name, tool) in &file.tools {
            tools.insert(
                name.clone(),
                compile_tool(name, tool, gate.unknown_args, &mut problems),
            );
        }
        for (from, to) in &file.axes.synonyms {
            if from.trim().is_empty() || to.trim().is_empty() {
                problems.push(
                    &["axes", "synonyms", from.as_str()],
                    "an axis name cannot be empty".to_string(),
                );
            }
        }
        if let Some(url) = &file.store.url {
            let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
            if !matches!(scheme.as_deref(), Some("postgres" | "postgresql")) {
                problems.push(
                    &["store", "url"],
                    "must be a postgres://USER@HOST/DB URL (an SQLite file is given with --db or METAGATE_DB)".to_string(),
                );
            }
        }
        for (path, message) in mcp::McpRules::compile(&file.mcp).1 {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            problems.push(&path, message);
        }
        for (path, message) in run::RunRules::compile(&file.run).1 {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            problems.push(&path, message);
        }
        if file.telemetry.busy_timeout_ms == Some(0) {
            problems.push(
                &["telemetry", "busy_timeout_ms"],
                "must be a positive number of milliseconds".to_string(),
            );
        }
        if let Some(otlp) = &file.telemetry.otlp {
            if let Some(endpoint) = &otlp.endpoint
                && !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
            {
                problems.push(
                    &["telemetry", "otlp", "endpoint"],
                    "must be an http:// or https:// URL (OTLP over HTTP)".to_string(),
                );
            }
            if otlp.timeout_ms == Some(0) {
                problems.push(
                    &["telemetry", "otlp", "timeout_ms"],
                    "must be a positive number of milliseconds".to_string(),
                );
            }
            if otlp.max_queue == Some(0) {
                problems.push(
                    &["telemetry", "otlp", "max_queue"],
                    "must be a positive number of spans".to_string(),
                );
            }
        }
        let base = origin
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let (rules, rule_problems) = rules::compile(&file, base);
        let mut warnings = Problems::default();
        for p in rule_problems {
            let target = if p.warning {
                &mut warnings
            } else {
                &mut problems
            };
            target.0.push((p.path, p.message));
        }
        if problems.0.is_empty() {
            let mut folded_tools: FxHashMap<String, Option<String>> = FxHashMap::default();
            for name in tools.keys() {
                folded_tools
                    .entry(fold_name(name))
                    .and_modify(|one| *one = None)
                    .or_insert_with(|| Some(name.clone()));
            }
            let folded_lengths = folded_tools
                .keys()
                .fold(0, |bits, name| bits | length_bit(name.len()));
            Ok(Policy {
                origin,
                file,
                gate,
                tools,
                rules,
                warnings: warnings.located(source).0,
                import_warnings: Vec::new(),
                folded_tools,
                folded_lengths,
                import_digest: 0,
            })
        } else {
            Err(problems.located(source))
        }
    }

    /// The tool of that name, as the policy spells it.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    /// Whether the policy is layered on the built-in one (Agent Zero's tools), which a file
    /// does unless it says `extends = "none"`.
    pub fn extends_builtin(&self) -> bool {
        self.file.extends != Some(Extends::None)
    }

    /// The one declared tool an unknown name means when spaces, case and separators are set
    /// aside (`Code_Execution_Tool `, `code-execution-tool`), as argument names are matched;
    /// None when no tool, or more than one, folds to it.
    pub fn tool_named_like(&self, name: &str) -> Option<&str> {
        if name.is_ascii() {
            let len = name
                .bytes()
                .filter(|b| !matches!(b, b'_' | b'-' | b'.' | b' '))
                .count();
            if self.folded_lengths & length_bit(len) == 0 {
                return None;
            }
        }
        self.folded_tools.get(&fold_name(name))?.as_deref()
    }

    /// How `record` normalizes boundary axes (built when asked: only `record` needs it).
    pub fn axis_table(&self) -> AxisTable {
        AxisTable::new(
            self.file
                .axes
                .synonyms
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
    }

    /// The store's URL, when the policy names one (`[store] url`).
    pub fn store_url(&self) -> Option<&str> {
        self.file.store.url.as_deref()
    }

    /// `[mcp]`: HTTP callers, origins and sampling, defaults filled in.
    pub fn mcp_rules(&self) -> mcp::McpRules {
        mcp::McpRules::compile(&self.file.mcp).0
    }

    /// `[run]`: the boundary `metagate run` runs commands in, defaults filled in.
    pub fn run_rules(&self) -> run::RunRules {
        run::RunRules::compile(&self.file.run).0
    }

    /// How long a telemetry writer waits for another process's write lock.
    pub fn busy_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(
            self.file
                .telemetry
                .busy_timeout_ms
                .unwrap_or(DEFAULT_BUSY_TIMEOUT_MS),
        )
    }

    /// `[telemetry.otlp]`, when the policy has one.
    pub fn otlp(&self) -> Option<&file::OtlpFile> {
        self.file.telemetry.otlp.as_ref()
    }

    /// The thresholds of `evaluate` and `tools health`.
    pub fn thresholds(&self) -> thresholds::Thresholds {
        self.file.evaluate.thresholds()
    }

    /// The tool definition files the policy's `[[import]]`s read, relative ones taken from
    /// the policy file's folder (as [`Policy::load`] reads them).
    pub fn imported_files(&self) -> Vec<PathBuf> {
        let folder = self.origin.as_deref().and_then(Path::parent);
        self.file
            .imports
            .iter()
            .map(|import| match folder {
                Some(dir) => dir.join(&import.path),
                None => PathBuf::from(&import.path),
            })
            .collect()
    }

    /// The effective policy as TOML, saved anywhere meaning the same: paths written relative
    /// to the policy file's folder (imports, the path root) are written absolute.
    /// What tells this policy from another for `evaluate`: a hash of the effective policy (as
    /// `policy show` prints it, the built-in layer and every default included) and of the
    /// tool files it imports, as `fnv1a64:` and 16 hex digits. Two runs under policies with
    /// the same fingerprint judged by the same rules.
    pub fn fingerprint(&self) -> String {
        let mut h = Fnv::new();
        h.write(self.to_toml().as_bytes());
        h.write(&self.import_digest.to_le_bytes());
        format!("fnv1a64:{:016x}", h.finish())
    }

    /// The effective policy as a TOML file, for `policy show`.
    pub fn to_toml(&self) -> String {
        let mut file = self.file.clone();
        if let Some(folder) = self.origin.as_deref().and_then(Path::parent) {
            let absolute = |p: &str| -> String {
                let path = Path::new(p);
                if p == "." {
                    folder.display().to_string()
                } else if path.is_relative() {
                    folder.join(path).display().to_string()
                } else {
                    p.to_string()
                }
            };
            for import in &mut file.imports {
                import.path = absolute(&import.path);
            }
            if let Some(root) = &mut file.paths.root {
                *root = absolute(root);
            }
        }
        toml::to_string_pretty(&file).expect("a policy always serializes")
    }
}

/// A policy file read, with every shape error it holds (not only the first); the file is what
/// is left once the entries holding them are blanked, when that reads. Errors later found on
/// the lines blanked come from the blanking, and are to be dropped.
struct ReadFile {
    file: Option<PolicyFile>,
    errors: Vec<PolicyError>,
    blanked_lines: Vec<usize>,
}

fn parse_file(source: &Source<'_>) -> ReadFile {
    let salvaged = file::parse_every_error(source.text);
    let errors = salvaged
        .errors
        .into_iter()
        .map(|(e, offset)| {
            let (key, line, column) = match offset {
                Some(offset) => {
                    let (line, column) = line_col(source.text, offset);
                    (
                        key_at(source.text, offset).join("."),
                        Some(line),
                        Some(column),
                    )
                }
                None => (String::new(), None, None),
            };
            PolicyError {
                file: source.name.to_string(),
                key,
                line,
                column,
                message: e.message().to_string(),
            }
        })
        .collect();
    ReadFile {
        file: salvaged.file,
        errors,
        blanked_lines: salvaged.blanked_lines,
    }
}

/// Reads and compiles every tools file: a policy layer of their tools, and each tool's
/// compiled schema. A tool defined by two files is an error naming both.
/// A tools file to import: where it is, its `[[import]]` entry, and that entry's place among
/// the policy's `[[import]]`s (None for `--tools`).
type Wanted = (PathBuf, ImportFile, Option<usize>);

/// What the tools files bring: the tools as a policy layer, their compiled schemas, what had
/// to be read around, and a hash of the files' paths and texts.
struct Imports {
    layer: PolicyFile,
    schemas: Vec<(String, CompiledSchema)>,
    warnings: Vec<PolicyError>,
    digest: u64,
}

fn import_all(
    wanted: &[Wanted],
    source: Option<&Source<'_>>,
    read: &dyn Fn(&Path) -> Result<String, ReadError>,
) -> Result<Imports, PolicyErrors> {
    let mut digest = Fnv::new();
    let mut layer = PolicyFile::default();
    let mut schemas = Vec::new();
    let mut from: IndexMap<String, String> = IndexMap::new();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let fail = |file: &str, tool: Option<&str>, message: String| PolicyError {
        file: file.to_string(),
        key: tool.map(|t| format!("tool {t:?}")).unwrap_or_default(),
        line: None,
        column: None,
        message,
    };
    for (path, entry, index) in wanted {
        let name = path.display().to_string();
        let text = match read(path) {
            Ok(t) => {
                digest.write(path.display().to_string().as_bytes());
                digest.write(t.as_bytes());
                t
            }
            // A file that cannot be read is the policy's mistake: point at its `path`.
            Err(e) => match (index, source) {
                (Some(i), Some(s)) => {
                    let key = ["import".to_string(), i.to_string(), "path".to_string()];
                    let at = locate(s.text, &key).map(|o| line_col(s.text, o));
                    errors.push(PolicyError {
                        file: s.name.to_string(),
                        key: "import.path".to_string(),
                        line: at.map(|(l, _)| l),
                        column: at.map(|(_, c)| c),
                        message: e.to_string(),
                    });
                    continue;
                }
                _ => {
                    errors.push(fail(&name, None, e.to_string()));
                    continue;
                }
            },
        };
        let read = match import::parse_tools(&name, &text, entry.format) {
            Ok(t) => t,
            Err(e) => {
                errors.push(fail(&e.file, e.tool.as_deref(), e.message));
                continue;
            }
        };
        warnings.extend(
            read.warnings
                .into_iter()
                .map(|w| fail(&w.file, w.tool.as_deref(), w.message)),
        );
        for tool in read.tools {
            if let Some(first) = from.get(&tool.name) {
                warnings.push(fail(
                    &name,
                    Some(&tool.name),
                    format!("also defined in {first}: the definition there is used"),
                ));
                continue;
            }
            match import::compile(&tool, &name) {
                Ok(Some(compiled)) => schemas.push((tool.name.clone(), compiled)),
                Ok(None) => {}
                Err(e) => warnings.push(fail(
                    &e.file,
                    e.tool.as_deref(),
                    format!(
                        "{}: calls are checked by their arguments' names and types only",
                        e.message
                    ),
                )),
            }
            from.insert(tool.name.clone(), name.clone());
            layer.tools.insert(
                tool.name.clone(),
                import::tool_file(&tool, entry.fill_defaults.unwrap_or(false)),
            );
        }
    }
    if errors.is_empty() {
        Ok(Imports {
            layer,
            schemas,
            warnings,
            digest: digest.finish(),
        })
    } else {
        Err(PolicyErrors(errors))
    }
}

/// FNV-1a, 64 bits: stable across builds and platforms, for telling two policies apart (not
/// for security).
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for b in bytes.iter().chain([&0xff]) {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// The built-in policy as compact JSON, written by `build.rs` from [`BUILTIN_TOML`]: serde_json
/// reads it in a fraction of what parsing the TOML (or building a TOML table) took at start.
const BUILTIN_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/builtin.json"));

fn builtin_file() -> PolicyFile {
    serde_json::from_str(BUILTIN_JSON).expect("the built-in policy deserializes")
}

fn fill_gate_defaults(file: &mut PolicyFile) {
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    file.extends.get_or_insert(Extends::Builtin);
    file.permit.require.get_or_insert_with(Vec::new);
    file.gate.prerequisite_evidence.get_or_insert_default();
    file.paths.root.get_or_insert_with(|| ".".to_string());
    file.paths
        .deny
        .get_or_insert_with(|| strings(metagate_checks::path::DEFAULT_DENY));
    file.paths.allow.get_or_insert_with(Vec::new);
    file.shell
        .deny
        .get_or_insert_with(|| strings(&rules::DEFAULT_SHELL_CONSTRUCTS));
    file.shell
        .deny_commands
        .get_or_insert_with(|| strings(&rules::DEFAULT_SHELL_COMMANDS));
    file.urls
        .schemes
        .get_or_insert_with(|| strings(&rules::DEFAULT_URL_SCHEMES));
    file.urls.hosts.get_or_insert_with(Vec::new);
    file.urls
        .deny_hosts
        .get_or_insert_with(|| strings(&rules::DEFAULT_DENY_HOSTS));
    file.telemetry
        .busy_timeout_ms
        .get_or_insert(DEFAULT_BUSY_TIMEOUT_MS);
    let g = &mut file.gate;
    g.unknown_tools.get_or_insert_default();
    g.unknown_args.get_or_insert_default();
    g.on_internal_error.get_or_insert_default();
    g.strip.get_or_insert_with(Vec::new);
    g.fuzzy_names.get_or_insert(true);
    file.evaluate.fill_defaults();
}

/// Problems with their key paths, located in the source text at the end.
#[derive(Default)]
struct Problems(Vec<(Vec<String>, String)>);

impl Problems {
    fn push<S: AsRef<str>>(&mut self, path: &[S], message: String) {
        self.0.push((
            path.iter().map(|s| s.as_ref().to_string()).collect(),
            message,
        ));
    }

    fn located(self, source: Option<&Source<'_>>) -> PolicyErrors {
        let name = source.map_or("<built-in policy>", |s| s.name);
        PolicyErrors(
            self.0
                .into_iter()
                .map(|(path, message)| {
                    let at =
                        source.and_then(|s| locate(s.text, &path).map(|o| line_col(s.text, o)));
                    PolicyError {
                        file: name.to_string(),
                        key: path.join("."),
                        line: at.map(|(l, _)| l),
                        column: at.map(|(_, c)| c),
                        message,
                    }
                })
                .collect(),
        )
    }
}

fn compile_tool(
    name: &str,
    tool: &ToolFile,
    default_unknown: UnknownArgs,
    problems: &mut Problems,
) -> Tool {
    let mut args = IndexMap::with_capacity_and_hasher(tool.args.len(), FxBuildHasher);
    for (arg_name, arg) in &tool.args {
        args.insert(
            arg_name.clone(),
            compile_arg(name, arg_name, arg, tool, problems),
        );
    }
    let mut folded = FxHashMap::default();
    for declared in tool.args.keys() {
        if let Some(other) = folded.insert(fold_name(declared), declared.clone()) {
            problems.push(
                &["tools", name, "args", declared],
                format!("{declared:?} and {other:?} differ only in case or separators"),
            );
        }
    }
    let mut aliases = FxHashMap::default();
    for (alias, target) in &tool.aliases {
        let at = ["tools", name, "aliases", alias.as_str()];
        if !tool.args.is_empty() && !tool.args.contains_key(target) {
            problems.push(
                &at,
                format!("alias target {target:?} is not a declared argument of {name}"),
            );
        }
        if tool.args.contains_key(alias) {
            problems.push(
                &at,
                format!("{alias:?} is a declared argument and cannot also be an alias"),
            );
        }
        aliases.insert(alias.clone(), target.clone());
        let key = fold_name(alias);
        match folded.get(&key) {
            Some(existing) if existing != target && !tool.args.contains_key(alias) => {
                problems.push(
                    &at,
                    format!("alias {alias:?} folds to the same name as {existing:?} but points at {target:?}"),
                );
            }
            _ => {
                folded.entry(key).or_insert_with(|| target.clone());
            }
        }
    }
    if let Some(m) = &tool.method_arg
        && !tool.args.is_empty()
        && !tool.args.contains_key(m)
    {
        problems.push(
            &["tools", name, "method_arg"],
            format!("{m:?} is not a declared argument"),
        );
    }
    Tool {
        name: name.to_string(),
        capability: tool.capability.clone(),
        description: tool.description.clone(),
        method_arg: tool.method_arg.clone(),
        unknown_args: tool.unknown_args.unwrap_or(default_unknown),
        aliases,
        folded,
        args,
        schema: None,
    }
}

fn compile_arg(
    tool: &str,
    name: &str,
    arg: &ArgFile,
    owner: &ToolFile,
    problems: &mut Problems,
) -> Arg {
    let at = |key: &str| -> Vec<String> {
        ["tools", tool, "args", name, key]
            .map(str::to_string)
            .to_vec()
    };
    let types = arg.ty.as_ref().map(|t| t.types()).unwrap_or_default();
    let nullable = arg.nullable.unwrap_or(false) || types.contains(&ArgType::Null);
    let mut out = Arg {
        types,
        required: arg.required.unwrap_or(false),
        nullable,
        description: arg.description.clone(),
        kind: arg.kind,
        access: arg.access.unwrap_or_default(),
        ..Arg::default()
    };
    if let Some(access) = arg.access
        && arg.kind != Some(ArgKind::Path)
    {
        problems.push(
            &at("access"),
            format!(
                "access = {:?} is for kind = \"path\" arguments only (this one's kind is {})",
                access.as_str(),
                arg.kind.map_or("not set", ArgKind::as_str)
            ),
        );
    }
    let convert = |path: Vec<String>, v: &toml::Value, problems: &mut Problems| -> Option<Value> {
        match json_of(v) {
            Ok(j) => Some(j),
            Err(m) => {
                problems.push(&path, m);
                None
            }
        }
    };
    let conditions =
        |key: &str, map: &Option<IndexMap<String, Vec<toml::Value>>>, problems: &mut Problems| {
            let mut list = Vec::new();
            for (other, values) in map.iter().flatten() {
                let mut p = at(key);
                p.push(other.clone());
                if !owner.args.contains_key(other) {
                    problems.push(
                        &p,
                        format!("{other:?} is not a declared argument of {tool}"),
                    );
                }
                if other == name {
                    problems.push(&p, "an argument cannot depend on itself".to_string());
                }
                let vs: Vec<Value> = values
                    .iter()
                    .filter_map(|v| convert(p.clone(), v, problems))
                    .collect();
                list.push((other.clone(), vs));
            }
            list
        };
    out.unless = conditions("unless", &arg.unless, problems);
    out.kind_when = conditions("kind_when", &arg.kind_when, problems);
    if !out.kind_when.is_empty() && out.kind.is_none() {
        problems.push(&at("kind_when"), "kind_when without kind".to_string());
    }
    if let Some(list) = &arg.one_of {
        let mut vs = Vec::with_capacity(list.len());
        for v in list {
            if let Some(j) = convert(at("enum"), v, problems) {
                if !type_matches(&out, &j) {
                    problems.push(
                        &at("enum"),
                        format!("enum value {j} is not of type {}", out.type_names()),
                    );
                }
                vs.push(j);
            }
        }
        if vs.is_empty() {
            problems.push(
                &at("enum"),
                "enum is empty: no value could pass".to_string(),
            );
        }
        out.one_of = Some(vs);
    }
    for (wrong, right) in arg.values.iter().flatten() {
        let mut p = at("values");
        p.push(wrong.clone());
        let Some(j) = convert(p.clone(), right, problems) else {
            continue;
        };
        if let Some(allowed) = &out.one_of
            && !allowed.contains(&j)
        {
            problems.push(&p, format!("value alias target {j} is not in the enum"));
        }
        if !type_matches(&out, &j) {
            problems.push(
                &p,
                format!("value alias target {j} is not of type {}", out.type_names()),
            );
        }
        let folded = wrong.trim().to_lowercase();
        if out.values.insert(folded, j).is_some() {
            problems.push(
                &p,
                format!(
                    "{wrong:?} is listed twice (values compare trimmed and case-insensitively)"
                ),
            );
        }
    }
    if let Some(d) = &arg.default
        && let Some(j) = convert(at("default"), d, problems)
    {
        if !type_matches(&out, &j) {
            problems.push(
                &at("default"),
                format!("default {j} is not of type {}", out.type_names()),
            );
        }
        if let Some(allowed) = &out.one_of
            && !allowed.contains(&j)
        {
            problems.push(&at("default"), format!("default {j} is not in the enum"));
        }
        out.default = Some(j);
    }
    out
}

/// Whether a JSON value has one of the argument's declared types (no coercion).
fn type_matches(arg: &Arg, v: &Value) -> bool {
    if arg.accepts_any_type() {
        return true;
    }
    arg.types.iter().any(|t| value_is(*t, v)) || (v.is_null() && arg.nullable)
}

fn value_is(t: ArgType, v: &Value) -> bool {
    match (t, v) {
        (ArgType::Any, _) => true,
        (ArgType::String, Value::String(_)) => true,
        (ArgType::Boolean, Value::Bool(_)) => true,
        (ArgType::Object, Value::Object(_)) => true,
        (ArgType::Array, Value::Array(_)) => true,
        (ArgType::Null, Value::Null) => true,
        (ArgType::Number, Value::Number(n)) => fits_f64(n),
        (ArgType::Integer, Value::Number(n)) => is_i64_integer(n),
        _ => false,
    }
}

fn json_of(v: &toml::Value) -> Result<Value, String> {
    match v {
        toml::Value::Datetime(_) => {
            Err("dates and times are not JSON values; quote them".to_string())
        }
        toml::Value::Array(items) => items
            .iter()
            .map(json_of)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        toml::Value::Table(t) => t
            .iter()
            .map(|(k, v)| json_of(v).map(|j| (k.clone(), j)))
            .collect::<Result<_, _>>()
            .map(Value::Object),
        toml::Value::String(s) => Ok(Value::String(s.clone())),
        toml::Value::Integer(i) => Ok(Value::from(*i)),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| format!("{f} is not a JSON number")),
        toml::Value::Boolean(b) => Ok(Value::Bool(*b)),
    }
}

/// A TOML basic string on one line: fit for a key as for a value (a multi-line string, which
/// the toml crate writes for text with line breaks, is not allowed as a key).
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML key: bare when it can be, else a one-line basic string.
pub(crate) fn toml_key(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        s.to_string()
    } else {
        toml_string(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(text: &str) -> Result<Policy, PolicyErrors> {
        Policy::from_source(
            Source {
                name: "p.toml",
                text,
            },
            None,
        )
    }

    /// `[telemetry.otlp]` is read whole, and a value export could not use is refused where
    /// it stands.
    #[test]
    fn the_otlp_table_is_read_and_checked() {
        let p = load(
            "[telemetry.otlp]\nendpoint = \"http://c:4318\"\nservice_name = \"s\"\nresource_attributes = { a = \"b\" }\ntimeout_ms = 5\nmax_queue = 9\n",
        )
        .unwrap();
        let otlp = p.otlp().unwrap();
        assert_eq!(
            (otlp.endpoint.as_deref(), otlp.service_name.as_deref()),
            (Some("http://c:4318"), Some("s"))
        );
        assert_eq!((otlp.timeout_ms, otlp.max_queue), (Some(5), Some(9)));
        assert_eq!(otlp.resource_attributes["a"], "b");
        assert!(Policy::builtin().otlp().is_none());
        for (text, key) in [
            ("endpoint = \"collector:4318\"", "endpoint"),
            ("timeout_ms = 0", "timeout_ms"),
            ("max_queue = 0", "max_queue"),
        ] {
            let errors = load(&format!("[telemetry.otlp]\n{text}\n")).unwrap_err();
            let shown = errors.to_string();
            assert!(shown.contains(&format!("telemetry.otlp.{key}")), "{shown}");
        }
        assert!(load("[telemetry.otlp]\nendpont = \"http://x\"\n").is_err());
    }

    #[test]
    fn builtin_covers_the_eight_tools() {
        let p = Policy::builtin();
        let names: Vec<_> = p.tools.keys().cloned().collect();
        assert_eq!(
            names,
            [
                "code_execution_tool",
                "response",
                "call_subordinate",
                "memory_load",
                "memory_save",
                "search_engine",
                "browser_agent",
                "skills_tool"
            ]
        );
        let cet = p.tool("code_execution_tool").unwrap();
        assert_eq!(cet.args["runtime"].values.len(), 11);
        assert_eq!(cet.args["session"].default, Some(json!(0)));
        assert_eq!(cet.args["reset"].default, Some(json!(false)));
        assert_eq!(
            cet.args["code"].unless,
            vec![("runtime".to_string(), vec![json!("output")])]
        );
    }

    #[test]
    fn generated_builtin_matches_the_toml_text() {
        let parsed: PolicyFile = toml::from_str(BUILTIN_TOML).unwrap();
        assert_eq!(builtin_file(), parsed);
    }

    #[test]
    fn builtin_round_trips_through_show() {
        let p = Policy::builtin();
        let again = load(&p.to_toml()).unwrap();
        assert_eq!(again.file, p.file);
    }

    #[test]
    fn a_file_extends_the_builtin_unless_it_says_none() {
        let p = load("[tools.mine.args.x]\ntype = \"string\"\n").unwrap();
        assert!(p.tool("response").is_some() && p.tool("mine").is_some());
        let p = load("extends = \"none\"\n[tools.mine.args.x]\ntype = \"string\"\n").unwrap();
        assert!(p.tool("response").is_none());
    }

    #[test]
    fn syntax_and_shape_errors_name_key_and_line() {
        let e = load("[gate]\nunknown_tools = \"maybe\"\n").unwrap_err();
        let e = &e.0[0];
        assert_eq!((e.line, e.key.as_str()), (Some(2), "gate.unknown_tools"));
        assert!(
            e.message.contains("maybe") || e.message.contains("variant"),
            "{e}"
        );

        let e = load("[gate]\nunknown_tool = \"pass\"\n").unwrap_err();
        assert_eq!(e.0[0].line, Some(2), "{e}");

        let e = load("[tools.t]\ncapability = \"x\"\n\n[tools.t.args.a]\ntype = \"strin\"\n")
            .unwrap_err();
        assert_eq!(e.0[0].line, Some(5), "{e}");

        let e = load("x = [").unwrap_err();
        assert_eq!(e.0[0].line, Some(1));
    }

    /// Every shape error is reported, with the problems of what is left, in file order;
    /// nothing is reported that only the reading past an error made.
    #[test]
    fn every_problem_is_reported_not_only_the_first() {
        let text = "[gate]\nunknown_tools = \"maybe\"\non_internal_error = 3\n\n[tools.t]\naliases = { x = \"nope\", y = 5 }\n\n[tools.t.args.a]\ntype = \"strin\"\nrequired = \"yes\"\nvalues = [\n  \"a\",\n  2,\n]\n[tools.u.args.b]\nnope = 1\n";
        let errors = load(text).unwrap_err().0;
        let found: Vec<(Option<usize>, &str)> =
            errors.iter().map(|e| (e.line, e.key.as_str())).collect();
        assert_eq!(
            found,
            [
                (Some(2), "gate.unknown_tools"),
                (Some(3), "gate.on_internal_error"),
                (Some(6), "tools.t.aliases.y"),
                (Some(9), "tools.t.args.a.type"),
                (Some(10), "tools.t.args.a.required"),
                (Some(11), "tools.t.args.a.values"),
                (Some(16), "tools.u.args.b.nope"),
            ],
            "{errors:#?}"
        );
        // A syntax error is reported alone: what follows it may read otherwise.
        let errors = load("a = [\n[gate]\nunknown_tools = \"maybe\"\n")
            .unwrap_err()
            .0;
        assert_eq!(errors.len(), 1, "{errors:#?}");
    }

    #[test]
    fn semantic_errors_name_key_and_line() {
        let text = "[tools.t]\naliases = { b = \"nope\" }\n\n[tools.t.args.a]\ntype = \"integer\"\ndefault = \"x\"\nenum = [1, 2]\nvalues = { one = 3 }\nunless = { ghost = [1] }\n";
        let errs = load(text).unwrap_err().0;
        let keys: Vec<_> = errs.iter().map(|e| (e.key.as_str(), e.line)).collect();
        assert!(keys.contains(&("tools.t.aliases.b", Some(2))), "{keys:?}");
        assert!(
            keys.contains(&("tools.t.args.a.default", Some(6))),
            "{keys:?}"
        );
        assert!(
            keys.contains(&("tools.t.args.a.values.one", Some(8))),
            "{keys:?}"
        );
        assert!(
            keys.contains(&("tools.t.args.a.unless.ghost", Some(9))),
            "{keys:?}"
        );
    }

    #[test]
    fn fold_name_unifies_case_styles() {
        for n in ["userId", "user_id", "UserId", "user-id", "USER_ID"] {
            assert_eq!(fold_name(n), "userid");
        }
    }
}
