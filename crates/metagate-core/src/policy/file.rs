//! The policy file as written: TOML tables deserialized as they stand, layered over the
//! built-in policy, and errors located back to a key and a line.

use std::ops::Range;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

pub use metagate_checks::path::Access;

/// A whole policy file. Every table is optional; `extends` says what it is layered on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) extends: Option<Extends>,
    #[serde(default)]
    pub(crate) gate: GateFile,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) tools: IndexMap<String, ToolFile>,
    /// What a caller may do, by what it says it is doing (`--intent`).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) intents: IndexMap<String, IntentFile>,
    /// Per-caller overrides (`--caller`).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) callers: IndexMap<String, CallerFile>,
    /// Where `path` arguments may point.
    #[serde(default)]
    pub(crate) paths: PathsFile,
    /// What `shell` arguments may contain.
    #[serde(default)]
    pub(crate) shell: ShellFile,
    /// Where `url` arguments may point.
    #[serde(default)]
    pub(crate) urls: UrlsFile,
    /// Rates, quotas and the loop breaker, counted from the telemetry store.
    #[serde(default)]
    pub(crate) limits: LimitsFile,
    /// The telemetry store.
    #[serde(default)]
    pub(crate) telemetry: TelemetryFile,
    /// Where the store is, when `--db` and `$METAGATE_DB` do not say.
    #[serde(default, skip_serializing_if = "StoreFile::is_empty")]
    pub(crate) store: StoreFile,
    /// Capabilities that need an operator's grant (`metagate permit`).
    #[serde(default, skip_serializing_if = "PermitFile::is_empty")]
    pub(crate) permit: PermitFile,
    /// How `record` normalizes boundary axes.
    #[serde(default, skip_serializing_if = "AxesFile::is_empty")]
    pub(crate) axes: AxesFile,
    /// The boundary `metagate run` runs commands in.
    #[serde(default, skip_serializing_if = "super::run::RunFile::is_empty")]
    pub(crate) run: super::run::RunFile,
    /// What `metagate mcp` takes from the policy: HTTP callers, origins, sampling.
    #[serde(default, skip_serializing_if = "super::mcp::McpFile::is_empty")]
    pub(crate) mcp: super::mcp::McpFile,
    /// Tool definition files to import (`[[import]]`).
    #[serde(default, rename = "import", skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportFile>,
    /// Thresholds of the out-of-band pass (`evaluate`, `tools health`).
    #[serde(default)]
    pub(crate) evaluate: super::thresholds::EvaluateFile,
}

/// One `[[import]]`: a tools file, its format (recognized when absent), and whether the
/// schema's `default`s are filled in (they are annotations otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportFile {
    /// Relative paths are relative to the policy file's folder.
    pub path: String,
    /// How to read the file (OpenAI, Anthropic, MCP or metagate's own); guessed when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ToolsFormat>,
    /// Whether the schema's defaults fill missing arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_defaults: Option<bool>,
}

/// `[intents.NAME]`: the tools a caller doing NAME may use. A tool passes when its name is in
/// `allow` (or `allow` holds `"*"`) or its capability is in `allow_capabilities`, and it is in
/// neither `forbid` nor `forbid_capabilities` (`forbid = ["*"]` forbids everything not allowed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IntentFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) allow: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) allow_capabilities: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) forbid: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) forbid_capabilities: Vec<String>,
}

/// `[callers.NAME]`: overrides for one caller. Entries name tools or capabilities; a denied
/// entry wins over an allowed one; `allow`, when given, is the only list the caller may use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallerFile {
    /// The intent this caller works under when `--intent` does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) intent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) allow: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) deny: Vec<String>,
    /// This caller's own rate (instead of `[limits] per_caller`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) limits: Option<RateFile>,
}

/// `[paths]`: the root `path` arguments must stay in, and globs checked deny-first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PathsFile {
    /// Relative to the policy file's folder (the working folder for the built-in policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deny: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) allow: Option<Vec<String>>,
}

/// `[shell]`: constructs and commands denied in `shell` arguments, and, when given, the
/// only programs they may run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deny: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deny_commands: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) allow_commands: Option<Vec<String>>,
}

/// `[urls]`: schemes and hosts `url` arguments may use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UrlsFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) schemes: Option<Vec<String>>,
    /// When non-empty, the only hosts allowed (`example.com`, `*.example.com`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hosts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deny_hosts: Option<Vec<String>>,
}

/// `[limits]`: counted from the telemetry store, so they hold across processes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) per_caller: Option<RateFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) per_tool: Option<RateFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_quota: Option<u64>,
    #[serde(default, rename = "loop", skip_serializing_if = "Option::is_none")]
    pub(crate) loop_breaker: Option<LoopFile>,
}

/// Calls per minute and per hour.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RateFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) per_minute: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) per_hour: Option<u64>,
}

/// The loop breaker: the `repeat`-th identical call (same tool, same arguments) within
/// `window_secs` is rejected. Defaults: the third within 60 s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoopFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) repeat: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) window_secs: Option<u64>,
}

/// What proves a prerequisite was met in a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrereqEvidence {
    /// A successful outcome of the prerequisite tool, from `record`.
    #[default]
    Outcome,
    /// An outcome, or a call to it the gate let through.
    Decision,
}

/// `[telemetry]`: how the store is used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TelemetryFile {
    /// How long to wait for another process's write lock, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) busy_timeout_ms: Option<u64>,
    /// `[telemetry.otlp]`: export over OpenTelemetry's protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) otlp: Option<OtlpFile>,
}

/// `[telemetry.otlp]`: where decisions, runs and MCP requests are exported as spans (the
/// standard `OTEL_*` variables win over it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtlpFile {
    /// The collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` is added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// `service.name`, as `OTEL_SERVICE_NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// More resource attributes, as `OTEL_RESOURCE_ATTRIBUTES`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub resource_attributes: IndexMap<String, String>,
    /// How long one export, and the flush at exit, may take, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// How many spans may wait to be sent; past it they are dropped and counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_queue: Option<usize>,
}

/// `[store]`: where the store is (after `--db` and `$METAGATE_DB`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreFile {
    /// A `postgres://USER@HOST/DB` URL: the fleet's shared store (docs/postgres.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
}

impl StoreFile {
    /// Whether the section says nothing (and is left out of `policy show`).
    pub(crate) fn is_empty(&self) -> bool {
        self.url.is_none()
    }
}

/// `[permit]`: the capabilities whose tools pass only while a live grant covers the call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PermitFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) require: Option<Vec<String>>,
}

impl PermitFile {
    fn is_empty(&self) -> bool {
        self.require.is_none()
    }
}

/// `[axes]`: synonyms collapsed when boundary axes are recorded (`fetch = "transport"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AxesFile {
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) synonyms: IndexMap<String, String>,
}

impl AxesFile {
    fn is_empty(&self) -> bool {
        self.synonyms.is_empty()
    }
}

/// What a policy file is layered on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Extends {
    /// The built-in Agent Zero policy (the default).
    Builtin,
    /// Nothing: the file is the whole policy.
    None,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GateFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unknown_tools: Option<UnknownTools>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unknown_args: Option<UnknownArgs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) on_internal_error: Option<FailMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) strip: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fuzzy_names: Option<bool>,
    /// What satisfies a tool's `requires`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prerequisite_evidence: Option<PrereqEvidence>,
}

/// What happens to a call naming a tool the policy does not know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownTools {
    /// Unknown tools go through unchecked.
    #[default]
    Pass,
    /// Unknown tools are rejected.
    Reject,
}

/// What happens to an argument that no declared argument, alias or near miss explains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownArgs {
    /// Unknown arguments are kept.
    #[default]
    Keep,
    /// Unknown arguments are dropped.
    Drop,
    /// Unknown arguments make the call rejected.
    Reject,
}

/// What a check that fails internally decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailMode {
    /// A check that cannot run rejects the call.
    #[default]
    Reject,
    /// A check that cannot run lets the call through.
    Pass,
}

/// One `[tools.<name>]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) capability: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) method_arg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unknown_args: Option<UnknownArgs>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) aliases: IndexMap<String, String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) args: IndexMap<String, ArgFile>,
    /// Tools the same session must have completed first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) requires: Option<Vec<String>>,
    /// This tool's own rate (instead of `[limits] per_tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) limits: Option<RateFile>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArgFile {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub(crate) ty: Option<TypeSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nullable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unless: Option<IndexMap<String, Vec<toml::Value>>>,
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub(crate) one_of: Option<Vec<toml::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) values: Option<IndexMap<String, toml::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) default: Option<toml::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<ArgKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind_when: Option<IndexMap<String, Vec<toml::Value>>>,
    /// For `kind = "path"`: whether the tool only reads the path (`"read"`) or may write,
    /// move or delete it (`"write"`, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) access: Option<Access>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
}

/// `type = "string"` or `type = ["string", "null"]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum TypeSpec {
    One(ArgType),
    Many(Vec<ArgType>),
}

/// Read by hand: derived, a misspelt type would only say that no variant of an untagged enum
/// matched, and not which name is wrong or which names are right.
impl<'de> Deserialize<'de> for TypeSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Names {
            One(String),
            Many(Vec<String>),
        }
        let read = |name: &str| {
            ArgType::ALL
                .into_iter()
                .find(|t| t.as_str() == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = ArgType::ALL.iter().map(|t| t.as_str()).collect();
                    D::Error::custom(format!(
                        "unknown type {name:?} (types: {})",
                        names.join(", ")
                    ))
                })
        };
        match Names::deserialize(d).map_err(|_| {
            D::Error::custom(
                "`type` is a type name or a list of them: \"string\", [\"string\", \"null\"]",
            )
        })? {
            Names::One(name) => read(&name).map(TypeSpec::One),
            Names::Many(names) => names
                .iter()
                .map(|n| read(n))
                .collect::<Result<_, _>>()
                .map(TypeSpec::Many),
        }
    }
}

impl TypeSpec {
    pub(crate) fn types(&self) -> Vec<ArgType> {
        match self {
            TypeSpec::One(t) => vec![*t],
            TypeSpec::Many(ts) => ts.clone(),
        }
    }
}

/// The JSON type an argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgType {
    /// A JSON string.
    String,
    /// A JSON number without a fraction.
    Integer,
    /// Any JSON number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
    /// `null`.
    Null,
    /// Any JSON value.
    Any,
}

impl ArgType {
    const ALL: [ArgType; 8] = [
        ArgType::String,
        ArgType::Integer,
        ArgType::Number,
        ArgType::Boolean,
        ArgType::Object,
        ArgType::Array,
        ArgType::Null,
        ArgType::Any,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Integer => "integer",
            ArgType::Number => "number",
            ArgType::Boolean => "boolean",
            ArgType::Object => "object",
            ArgType::Array => "array",
            ArgType::Null => "null",
            ArgType::Any => "any",
        }
    }
}

/// What an argument holds, switching on the checks that kind needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgKind {
    /// A file path, checked against `[paths]`.
    Path,
    /// A shell command, checked by the shell check.
    Shell,
    /// A URL, checked against `[urls]`.
    Url,
    /// A regular expression, checked to compile.
    Regex,
    /// A git ref, checked to be no option in disguise.
    GitRef,
}

impl ArgKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ArgKind::Path => "path",
            ArgKind::Shell => "shell",
            ArgKind::Url => "url",
            ArgKind::Regex => "regex",
            ArgKind::GitRef => "git_ref",
        }
    }
}

impl PolicyFile {
    /// Layers `over` on `self`: scalars of `over` win, maps are merged key by key (an
    /// argument table merges field by field), lists are replaced.
    pub(crate) fn layer(mut self, over: PolicyFile) -> PolicyFile {
        self.extends = over.extends.or(self.extends);
        let g = over.gate;
        self.gate = GateFile {
            unknown_tools: g.unknown_tools.or(self.gate.unknown_tools),
            unknown_args: g.unknown_args.or(self.gate.unknown_args),
            on_internal_error: g.on_internal_error.or(self.gate.on_internal_error),
            strip: g.strip.or(self.gate.strip),
            fuzzy_names: g.fuzzy_names.or(self.gate.fuzzy_names),
            prerequisite_evidence: g.prerequisite_evidence.or(self.gate.prerequisite_evidence),
        };
        self.intents.extend(over.intents);
        self.callers.extend(over.callers);
        let p = over.paths;
        self.paths = PathsFile {
            root: p.root.or(self.paths.root.take()),
            deny: p.deny.or(self.paths.deny.take()),
            allow: p.allow.or(self.paths.allow.take()),
        };
        let sh = over.shell;
        self.shell = ShellFile {
            deny: sh.deny.or(self.shell.deny.take()),
            deny_commands: sh.deny_commands.or(self.shell.deny_commands.take()),
            allow_commands: sh.allow_commands.or(self.shell.allow_commands.take()),
        };
        let u = over.urls;
        self.urls = UrlsFile {
            schemes: u.schemes.or(self.urls.schemes.take()),
            hosts: u.hosts.or(self.urls.hosts.take()),
            deny_hosts: u.deny_hosts.or(self.urls.deny_hosts.take()),
        };
        let l = over.limits;
        self.limits = LimitsFile {
            per_caller: l.per_caller.or(self.limits.per_caller.take()),
            per_tool: l.per_tool.or(self.limits.per_tool.take()),
            session_quota: l.session_quota.or(self.limits.session_quota),
            loop_breaker: l.loop_breaker.or(self.limits.loop_breaker.take()),
        };
        for (name, tool) in over.tools {
            match self.tools.get_mut(&name) {
                Some(base) => base.layer(tool),
                None => {
                    self.tools.insert(name, tool);
                }
            }
        }
        self.telemetry.busy_timeout_ms = over
            .telemetry
            .busy_timeout_ms
            .or(self.telemetry.busy_timeout_ms);
        // The table is taken whole from the layer that has one: a collector's address and
        // its limits belong together.
        if over.telemetry.otlp.is_some() {
            self.telemetry.otlp = over.telemetry.otlp;
        }
        self.store.url = over.store.url.or(self.store.url.take());
        self.permit.require = over.permit.require.or(self.permit.require.take());
        self.axes.synonyms.extend(over.axes.synonyms);
        self.run.layer(over.run);
        self.mcp.layer(over.mcp);
        self.imports.extend(over.imports);
        self.evaluate.layer(over.evaluate);
        self
    }
}

impl ToolFile {
    fn layer(&mut self, over: ToolFile) {
        self.capability = over.capability.or(self.capability.take());
        self.description = over.description.or(self.description.take());
        self.method_arg = over.method_arg.or(self.method_arg.take());
        self.unknown_args = over.unknown_args.or(self.unknown_args);
        self.requires = over.requires.or(self.requires.take());
        self.limits = over.limits.or(self.limits.take());
        self.aliases.extend(over.aliases);
        for (name, arg) in over.args {
            match self.args.get_mut(&name) {
                Some(base) => base.layer(arg),
                None => {
                    self.args.insert(name, arg);
                }
            }
        }
    }
}

impl ArgFile {
    fn layer(&mut self, over: ArgFile) {
        self.ty = over.ty.or(self.ty.take());
        self.required = over.required.or(self.required);
        self.nullable = over.nullable.or(self.nullable);
        self.unless = over.unless.or(self.unless.take());
        self.one_of = over.one_of.or(self.one_of.take());
        self.values = match (self.values.take(), over.values) {
            (Some(mut base), Some(over)) => {
                base.extend(over);
                Some(base)
            }
            (base, over) => over.or(base),
        };
        self.default = over.default.or(self.default.take());
        self.kind = over.kind.or(self.kind);
        self.kind_when = over.kind_when.or(self.kind_when.take());
        self.access = over.access.or(self.access);
        self.description = over.description.or(self.description.take());
    }
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line, column)
}

/// The byte offset where the value of `path` (or its nearest existing parent) is written.
/// A segment after an array is an index into it (`["import", "1", "path"]`).
pub(crate) fn locate(text: &str, path: &[String]) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut table = root.get_ref();
    let mut found = None;
    let mut segments = path.iter();
    while let Some(segment) = segments.next() {
        let (key, mut value) = table.get_key_value(segment.as_str())?;
        found = Some(key.span().start);
        while let DeValue::Array(items) = value.get_ref() {
            let Some(item) = segments
                .clone()
                .next()
                .and_then(|s| s.parse::<usize>().ok())
                .and_then(|i| items.get(i))
            else {
                break;
            };
            segments.next();
            found = Some(item.span().start);
            value = item;
        }
        match value.get_ref() {
            DeValue::Table(t) => table = t,
            _ => break,
        }
    }
    found
}

/// Every `key = value` of a TOML text, tables included, as (dotted path, the key's bytes, the
/// value's bytes, whether the value is a table); None when the text is not TOML.
type Entry = (Vec<String>, Range<usize>, Range<usize>, bool);

fn entries(text: &str) -> Option<Vec<Entry>> {
    use toml::de::{DeTable, DeValue};
    fn flatten(table: &DeTable<'_>, prefix: &mut Vec<String>, out: &mut Vec<Entry>) {
        for (key, value) in table.iter() {
            prefix.push(key.get_ref().to_string());
            let inner = match value.get_ref() {
                DeValue::Table(t) => Some(t),
                _ => None,
            };
            out.push((prefix.clone(), key.span(), value.span(), inner.is_some()));
            if let Some(t) = inner {
                flatten(t, prefix, out);
            }
            prefix.pop();
        }
    }
    let root = DeTable::parse(text).ok()?;
    let mut out = Vec::new();
    flatten(root.get_ref(), &mut Vec::new(), &mut out);
    Some(out)
}

/// The innermost entry whose key or value holds byte `offset`.
fn entry_at(entries: &[Entry], offset: usize) -> Option<&Entry> {
    entries
        .iter()
        .filter(|(_, k, v, _)| v.contains(&offset) || k.contains(&offset))
        .min_by_key(|(_, k, v, _)| {
            if v.contains(&offset) {
                v.len()
            } else {
                k.len()
            }
        })
}

/// The dotted key path whose value holds byte `offset`, for errors that only know a span:
/// the innermost entry whose value contains it, else the last key written before it.
pub(crate) fn key_at(text: &str, offset: usize) -> Vec<String> {
    let Some(entries) = entries(text) else {
        return Vec::new();
    };
    let before = || {
        entries
            .iter()
            .filter(|(_, k, _, _)| k.start <= offset)
            .max_by_key(|(path, k, _, _)| (k.start, path.len()))
    };
    entry_at(&entries, offset)
        .or_else(before)
        .map(|(path, ..)| path.clone())
        .unwrap_or_default()
}

/// The three formats a tools file can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolsFormat {
    /// `[{"type":"function","function":{"name","description","parameters"}}]` (also the
    /// Responses API's flat `{"type":"function","name","parameters"}`).
    Openai,
    /// `{"tools":[{"name","description","inputSchema"}]}`, bare or as a JSON-RPC `result`.
    Mcp,
    /// `[{"name","description","input_schema"}]`.
    Anthropic,
}

impl ToolsFormat {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ToolsFormat::Openai => "openai",
            ToolsFormat::Mcp => "mcp",
            ToolsFormat::Anthropic => "anthropic",
        }
    }
}

/// A policy file read past its shape errors: what was left of it once each entry holding one
/// was blanked, and those errors, each with its byte offset (when it has one).
pub(crate) struct Salvaged {
    /// None when the text could not be read even so.
    pub(crate) file: Option<PolicyFile>,
    pub(crate) errors: Vec<(toml::de::Error, Option<usize>)>,
    /// The lines (from 1) of the entries blanked: an error found later on one of them comes
    /// from the blanking, not from the file.
    pub(crate) blanked_lines: Vec<usize>,
}

/// `text` with the entry holding byte `offset` blanked (spaces, its line breaks kept): the
/// innermost one, else the one around it (an entry of an inline table cannot go alone where
/// a comma would be left behind), so long as what is left is TOML. Never a table's heading:
/// its entries would then read as another table's.
fn blank_entry(text: &str, offset: usize) -> Option<String> {
    let entries = entries(text)?;
    let (path, ..) = entry_at(&entries, offset)?;
    for depth in (1..=path.len()).rev() {
        let Some((_, key, value, _)) = entries.iter().find(|(p, ..)| p[..] == path[..depth]) else {
            continue;
        };
        let range = key.start..value.end.max(key.end);
        let written = &text[range.clone()];
        if written.starts_with('[') || written.contains("\n[") {
            return None;
        }
        let mut blanked = text.to_string();
        // Byte for byte, so that every later error's offset is one in the file as written.
        let spaces: String = written
            .bytes()
            .map(|b| if b == b'\n' { '\n' } else { ' ' })
            .collect();
        blanked.replace_range(range, &spaces);
        if toml::de::DeTable::parse(&blanked).is_ok() {
            return Some(blanked);
        }
    }
    None
}

/// Reads a policy file reporting every shape error (a wrong type, an unknown value or key),
/// not only the first as serde stops at: after each, the `key = value` entry holding it is
/// blanked (its line breaks kept, so later errors keep their lines and columns) and the text
/// read again. It stops where blanking cannot help: a syntax error (reported alone, as
/// everything after it may read differently), an error about a whole table, no span.
pub(crate) fn parse_every_error(text: &str) -> Salvaged {
    const MOST: usize = 100;
    let mut text = text.to_string();
    let mut out = Salvaged {
        file: None,
        errors: Vec::new(),
        blanked_lines: Vec::new(),
    };
    for _ in 0..MOST {
        let error = match toml::from_str::<PolicyFile>(&text) {
            Ok(file) => {
                out.file = Some(file);
                return out;
            }
            Err(e) => e,
        };
        let offset = error.span().map(|s| s.start);
        out.errors.push((error, offset));
        let Some(blanked) = offset.and_then(|offset| blank_entry(&text, offset)) else {
            return out;
        };
        let changed = text
            .bytes()
            .zip(blanked.bytes())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, _)| i);
        let (first, last) = (changed.clone().min(), changed.max());
        if let (Some(first), Some(last)) = (first, last) {
            out.blanked_lines
                .extend(line_col(&text, first).0..=line_col(&text, last).0);
        }
        text = blanked;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        assert_eq!(line_col(text, text.find('=').unwrap()), (1, 3));
        let second_eq = text.rfind('=').unwrap();
        assert_eq!(line_col(text, second_eq), (2, 4));
    }

    #[test]
    fn locate_finds_nested_keys() {
        let text = "[gate]\nunknown_tools = \"pass\"\n\n[tools.x.args.a]\ntype = \"string\"\n";
        let at = locate(
            text,
            &[
                "tools".into(),
                "x".into(),
                "args".into(),
                "a".into(),
                "type".into(),
            ],
        )
        .unwrap();
        assert_eq!(line_col(text, at).0, 5);
        let at = locate(text, &["gate".into(), "unknown_tools".into()]).unwrap();
        assert_eq!(line_col(text, at), (2, 1));
        assert_eq!(
            key_at(text, text.find("\"string\"").unwrap()),
            ["tools", "x", "args", "a", "type"]
        );
        let text =
            "[[import]]\npath = \"a.json\"\n\n[[import]]\nformat = \"mcp\"\npath = \"b.json\"\n";
        let path = |i: &str| ["import".to_string(), i.to_string(), "path".to_string()];
        assert_eq!(line_col(text, locate(text, &path("0")).unwrap()), (2, 1));
        assert_eq!(line_col(text, locate(text, &path("1")).unwrap()), (6, 1));
        assert_eq!(
            locate(text, &path("2")).map(|o| line_col(text, o).0),
            Some(1)
        );
    }

    #[test]
    fn layering_merges_maps_and_overrides_scalars() {
        let base: PolicyFile = toml::from_str(
            "[tools.t]\ncapability = \"a\"\naliases = { x = \"y\" }\n[tools.t.args.y]\ntype = \"string\"\nrequired = true\nvalues = { p = \"q\" }\n",
        )
        .unwrap();
        let over: PolicyFile = toml::from_str(
            "[tools.t]\naliases = { z = \"y\" }\n[tools.t.args.y]\nvalues = { r = \"s\" }\n[tools.u]\n",
        )
        .unwrap();
        let merged = base.layer(over);
        let t = &merged.tools["t"];
        assert_eq!(t.capability.as_deref(), Some("a"));
        assert_eq!(t.aliases.len(), 2);
        assert_eq!(t.args["y"].required, Some(true));
        assert_eq!(t.args["y"].values.as_ref().unwrap().len(), 2);
        assert!(merged.tools.contains_key("u"));
    }
}
