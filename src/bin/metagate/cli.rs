//! The command line, as clap sees it. Also the source of the generated completions and man pages.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use metagate::wire::call::Shape;

#[derive(Debug, Parser)]
#[command(
    name = "metagate",
    version,
    about = "A deterministic gate between an LLM agent and its tools",
    long_about = "A deterministic gate between an LLM agent and its tools.\n\n\
        metagate fixes tool calls that can be fixed without guessing (wrong argument names, \
        wrong values, wrong types, broken JSON), rejects the rest with an error the model can \
        act on, and writes the call back in the envelope it came in.",
    after_help = "Exit status: 0 success, 1 the call was rejected (or findings), 2 metagate itself failed."
)]
pub struct Cli {
    /// Policy file [default: $METAGATE_POLICY, ./metagate.toml,
    /// $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]
    #[arg(long, global = true, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db];
    /// `evaluate` takes it more than once to merge shards
    #[arg(long, global = true, value_name = "FILE", action = ArgAction::Append)]
    pub db: Vec<PathBuf>,

    /// Use this time as now (RFC 3339); for tests that need a clock they control
    #[arg(long, global = true, hide = true, value_name = "TIME")]
    pub now: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Correct or reject a tool call read on stdin
    #[command(
        long_about = "Correct or reject a tool call read on stdin.\n\n\
            Reads one call (or, with --jsonl, one call per line) in any envelope: Agent Zero, \
            OpenAI chat tool_calls item, OpenAI Responses function_call, Anthropic tool_use, \
            MCP tools/call, Gemini functionCall, or plain {name, arguments}. Writes the \
            corrected call in the same envelope, or a rejection \
            {\"error\": {…}, \"feedback\": \"…\"} the agent can add to the model's history.",
        after_help = "Exit status: 0 the call passed or was corrected, 1 it was rejected, \
            2 metagate could not run. With --jsonl: 0 at end of input, rejections in-band."
    )]
    Gate(GateArgs),
    /// Append tool outcomes and user turns to the telemetry store
    #[command(
        long_about = "Append tool outcomes and user turns to the telemetry store.\n\n\
            Reads JSON Lines of events from the files given (`-` or none: stdin): \
            {\"type\":\"outcome\",…}, {\"type\":\"ask\",…} and {\"type\":\"correction\",…}. \
            A bad line is reported with its line number and skipped; the good lines are kept.",
        after_help = "Exit status: 0 every line was stored, 1 some lines were bad (with --strict: \
            nothing was stored), 2 the store or an input could not be used (stderr first says \
            how much was stored before, through which line)."
    )]
    Record(RecordArgs),
    /// Check recorded tool-call traces with the gate's rules, for CI
    #[command(
        long_about = "Check recorded tool-call traces with the gate's rules, for CI.\n\n\
            Reads JSON Lines of calls in any envelope gate accepts (also Agent Zero messages \
            {\"ai\": true, \"content\": …} holding the call), OpenAI chat transcripts (an array \
            of messages, an object with `messages`, or JSON Lines of them; the calls are the \
            `tool_calls` of assistant messages) and Anthropic transcripts (`tool_use` blocks). \
            Each call is checked with the same policy, tool imports and correction rules as \
            gate. Telemetry, limits, prerequisites and grants are not consulted: they depend on \
            what happens at run time, which a trace does not hold. A call the gate would reject \
            is an error (MG0xx), one it would correct is a warning (MG1xx); \
            `--explain all` lists the codes.",
        after_help = "Exit status: 0 no findings at or above --deny, 1 findings at or above \
            --deny, 2 lint itself failed (an input it could not read or make sense of: reported \
            with file and line, the other inputs are still linted)."
    )]
    Lint(LintArgs),
    /// Show or check policy files
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Look at the telemetry store
    Db {
        #[command(subcommand)]
        command: DbCommand,
    },
    /// The out-of-band pass: tool health, user corrections, recommendations, learned aliases
    #[command(
        long_about = "The out-of-band pass over the telemetry store: tool health, user corrections, \
            recommendations, learned aliases.\n\n\
            Reads every --db given (shards from several agent hosts are merged; none: the default \
            store), counts calls, corrections, rejections and outcomes per tool and method in the \
            window, detects same-topic re-asks as user corrections, scores utility and cohesion, \
            and proposes recommendations (never changes). Unless --dry-run, the run is stored in \
            the first --db, replacing an earlier run over the same window.",
        after_help = "Exit status: 0 the pass ran (an empty report when there was nothing to read), \
            1 --accept/--reject named an unknown recommendation, 2 a store could not be read."
    )]
    Evaluate(EvaluateArgs),
    /// Look at tools: health and cohesion, for people and prompts
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Grant, list and revoke time-boxed capability grants that gate enforces
    #[command(
        long_about = "Grant, list and revoke time-boxed capability grants that gate enforces.\n\n\
            The policy's [permit] require names the capabilities whose tools pass only while a \
            live grant covers the call. Without a subcommand, asks at a terminal: which \
            capability, what scope, for how long, why.",
        after_help = "Exit status: 0 done, 1 nothing granted or nothing to revoke, \
            2 bad input (unknown capability or id, bad duration or scope, no terminal)."
    )]
    Permit(PermitArgs),
    /// Write shell completions and man pages (for packagers and the repository)
    #[command(hide = true)]
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct PermitArgs {
    #[command(subcommand)]
    pub command: Option<PermitCommand>,
}

#[derive(Debug, Subcommand)]
pub enum PermitCommand {
    /// Allow a capability for a while
    Grant(PermitGrantArgs),
    /// Show grants: the live ones, or (--all) every one with the audit trail
    List {
        /// Every grant (expired and revoked too) and every granted, revoked, used and denied event
        #[arg(long)]
        all: bool,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// End a grant now, or (--all) every grant not yet revoked
    Revoke {
        /// The grant id (mg_…, as `permit list` shows it)
        #[arg(
            value_name = "ID",
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        id: Option<String>,
        /// Revoke every grant not yet revoked: live, dated later, and expired (so that none
        /// comes back if the clock moves back); prints how many were live
        #[arg(long)]
        all: bool,
    },
}

#[derive(Debug, Args)]
pub struct PermitGrantArgs {
    /// The capability to allow (one the policy's [permit] require names)
    #[arg(long, value_name = "CAPABILITY")]
    pub capability: String,
    /// Limit the grant to a file or folder (inside the policy's path root; path:NAME is never
    /// read as a glob), a path glob (./docs/*.md) or a host (example.com, *.example.com,
    /// host:NAME); repeatable
    #[arg(long, value_name = "PATH|HOST")]
    pub scope: Vec<String>,
    /// How long the grant lasts: 90s, 5m, 15m, 1h (at most 30d)
    #[arg(
        long = "for",
        value_name = "DURATION",
        default_value = "5m",
        allow_hyphen_values = true
    )]
    pub duration: String,
    /// Bind the grant to one session (gate --session / METAGATE_SESSION)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Why, for the audit trail
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Read one call per line and answer each with one line, until end of input
    #[arg(long)]
    pub jsonl: bool,

    /// Write a report envelope per call: verdict, call, corrections, warnings, error, feedback
    #[arg(long)]
    pub report: bool,

    /// Write calls in this envelope instead of the one they came in
    #[arg(long, value_name = "SHAPE")]
    pub emit: Option<EmitShape>,

    /// Do not write a line on stderr per correction, warning or rejection
    #[arg(long, short)]
    pub quiet: bool,

    /// Import tool definitions: an OpenAI tools array, an MCP tools/list result or an
    /// Anthropic tools array (repeatable)
    #[arg(long = "tools", value_name = "FILE")]
    pub tools: Vec<PathBuf>,

    /// Do not record decisions in the telemetry store
    #[arg(long)]
    pub no_telemetry: bool,

    /// Write every stage's decision on stderr: envelope, corrections, each policy check with
    /// the rule it applied, limits with counts, the verdict
    #[arg(long)]
    pub explain: bool,

    /// Session the calls belong to (recorded with each decision)
    #[arg(long, env = "METAGATE_SESSION", value_name = "ID")]
    pub session: Option<String>,

    /// Who is calling: an agent, persona or user (recorded with each decision)
    #[arg(long, env = "METAGATE_CALLER", value_name = "NAME")]
    pub caller: Option<String>,

    /// What the caller is doing: one of the policy's intents, which decides the tools it may
    /// use (recorded with each decision)
    #[arg(long, env = "METAGATE_INTENT", value_name = "NAME")]
    pub intent: Option<String>,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Trace files, or directories to walk for *.json, *.jsonl and *.ndjson files; `-` reads
    /// stdin
    #[arg(value_name = "PATH", required_unless_present = "explain")]
    pub paths: Vec<PathBuf>,

    /// Output format
    #[arg(long, value_enum, default_value_t = LintFormat::Human)]
    pub format: LintFormat,

    /// Fail (exit 1) on findings at or above this severity
    #[arg(long, value_enum, default_value_t = DenyLevel::Error, value_name = "SEVERITY")]
    pub deny: DenyLevel,

    /// Exit 0 even when there are findings (report-only jobs); failures still exit 2
    #[arg(long)]
    pub exit_zero: bool,

    /// Drop the findings of this code, e.g. MG110 (repeatable)
    #[arg(long, value_name = "CODE")]
    pub ignore: Vec<String>,

    /// Import tool definitions, as gate does (repeatable)
    #[arg(long = "tools", value_name = "FILE")]
    pub tools: Vec<PathBuf>,

    /// Explain a diagnostic code (MG003, or its name); `all` lists every code
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,

    /// Check every call as made by this caller: its allow and deny lists and its own intent
    #[arg(long, env = "METAGATE_CALLER", value_name = "NAME")]
    pub caller: Option<String>,

    /// Check every call under this intent of the policy, as `gate --intent` does
    #[arg(long, env = "METAGATE_INTENT", value_name = "NAME")]
    pub intent: Option<String>,
}

/// How `lint` writes its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    /// Compiler-style lines and a summary (colour on a terminal)
    Human,
    /// One JSON document: diagnostics, failures, summary
    Json,
    /// SARIF 2.1.0, for code-scanning services
    Sarif,
    /// GitHub Actions workflow commands (annotations)
    Github,
}

/// The severities `--deny` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DenyLevel {
    /// Calls the gate would reject
    Error,
    /// Calls the gate would correct, and rejections
    Warning,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Files of JSON Lines events; `-` or none reads stdin
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// All or nothing: one bad line and no line is stored
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Path, schema version, rows per table and the time span the store covers
    Info {
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

/// How a report is written: a table for people, JSON for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// The envelope shapes, as `--emit` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EmitShape {
    /// {"tool_name", "tool_args"}
    AgentZero,
    /// OpenAI chat tool_calls item
    Openai,
    /// OpenAI Responses function_call item
    OpenaiResponses,
    /// Anthropic tool_use block
    Anthropic,
    /// MCP tools/call request
    Mcp,
    /// Gemini functionCall part
    Gemini,
    /// {"name", "arguments"}
    Plain,
}

impl From<EmitShape> for Shape {
    fn from(s: EmitShape) -> Shape {
        match s {
            EmitShape::AgentZero => Shape::AgentZero,
            EmitShape::Openai => Shape::OpenAiChat,
            EmitShape::OpenaiResponses => Shape::OpenAiResponses,
            EmitShape::Anthropic => Shape::Anthropic,
            EmitShape::Mcp => Shape::Mcp,
            EmitShape::Gemini => Shape::Gemini,
            EmitShape::Plain => Shape::Plain,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the effective policy as TOML, every default filled in
    Show,
    /// Validate a policy file; errors name the key and line (exit 2 when invalid)
    Check {
        /// The policy file to check
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Directory that receives completions/ and man/
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// Start of the window: a duration back from now (7d, 24h, 30m, 90s, 2w) or an RFC 3339 time
    #[arg(long, value_name = "WHEN", default_value = "7d")]
    pub since: String,

    /// End of the window (exclusive), as --since [default: now]
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Compute and report, but store nothing (every store's bytes stay as they are)
    #[arg(long)]
    pub dry_run: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Write the proposed argument aliases as a TOML fragment to merge into a policy
    #[arg(long, value_name = "FILE")]
    pub emit_policy_patch: Option<PathBuf>,

    /// Mark a recommendation accepted (by its id) instead of running the pass
    #[arg(long, value_name = "ID", conflicts_with_all = ["reject", "dry_run", "emit_policy_patch"])]
    pub accept: Option<String>,

    /// Mark a recommendation rejected (by its id) instead of running the pass
    #[arg(long, value_name = "ID", conflicts_with_all = ["dry_run", "emit_policy_patch"])]
    pub reject: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion
    #[command(
        long_about = "One row per tool and method: calls, pass/corrected/rejected shares, boundary \
            and low-utility referrals, user corrections, utility, a cohesion warning and the top \
            boundary axes; what evaluate over now would count: the latest evaluate run whose window \
            ends by now, plus live counts of the events up to now it did not count.\n\n\
            --format known-tools writes a <known_tools> block for a Tool Builder prompt: ranked \
            (degraded last, then utility x recency), at most --top entries, never longer than \
            --budget characters."
    )]
    Health(HealthArgs),
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = HealthFormat::Table)]
    pub format: HealthFormat,

    /// At most this many entries [default: 12 for known-tools, else all]
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    /// known-tools: the block is never longer than this many characters
    #[arg(long, value_name = "CHARS", default_value_t = 2000)]
    pub budget: usize,

    /// Row order (known-tools always ranks)
    #[arg(long, value_enum, default_value_t = HealthSort::Calls)]
    pub sort: HealthSort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HealthFormat {
    Table,
    Json,
    /// A <known_tools> block for a Tool Builder prompt
    KnownTools,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HealthSort {
    /// Most calls first
    Calls,
    /// Lowest utility first
    Utility,
    /// Most user corrections first
    Corrections,
    /// Most boundary referrals first
    Boundary,
    /// By name
    Name,
    /// Degraded last, then utility x recency
    Rank,
}
