//! The command line, as clap sees it. Also the source of the generated completions and man pages.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use metagate::call::Shape;

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

    /// Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]
    #[arg(long, global = true, value_name = "FILE")]
    pub db: Option<PathBuf>,

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
            nothing was stored), 2 the store or an input could not be used."
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
    /// Write shell completions and man pages (for packagers and the repository)
    #[command(hide = true)]
    Generate(GenerateArgs),
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
