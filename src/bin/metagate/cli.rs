//! The command line, as clap sees it. Also the source of the generated completions and man
//! pages: the `xtask` crate compiles this file too (`cargo xtask generate`).

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use metagate_wire::call::Shape;

mod evaluate;
mod gate;
mod lint;
mod mcp;
mod permit;
mod run;

pub use evaluate::{
    EvaluateArgs, EvaluateCommand, HealthArgs, HealthFormat, ReportFormat, ToolsCheckArgs,
    ToolsCommand,
};
pub use gate::GateArgs;
pub use lint::{DenyLevel, LintArgs, LintFormat};
pub use mcp::{McpArgs, McpClient};
pub use permit::{PermitArgs, PermitCommand, PermitGrantArgs};
pub use run::RunArgs;

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
    /// Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working
    /// folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml,
    /// else the built-in policy; `policy which` says which]
    #[arg(long, global = true, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet
    /// [default: $METAGATE_DB, else the policy's [store] url, else
    /// $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed,
    /// to merge shards
    #[arg(long, global = true, value_name = "FILE|URL", action = ArgAction::Append)]
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
    /// Gate every tool call between an MCP client and an MCP server (stdio)
    #[command(
        long_about = "Gate every tool call between an MCP client and an MCP server.\n\n\
            Runs SERVER_COMMAND as the MCP server and relays JSON-RPC between it (its stdin and \
            stdout) and the client (metagate's stdin and stdout), each message as soon as it is \
            complete. Every tools/call is decided first, with the server's own tools/list (every \
            page) as the tool registry and the policy file's entries for those tools on top: \
            corrected arguments go to the server; a refused call is answered to the client as a \
            tool error (isError) carrying metagate's feedback, and never reaches the server. Each \
            forwarded call's result is recorded as an outcome of its decision. The server's \
            stderr is metagate's; signals are passed on to it. At start metagate says on stderr \
            which store and policy it uses. In a client's configuration, put `metagate mcp` \
            before the server's command (the first word that is not an option starts the \
            server; `--` before it also works), or let --print-config CLIENT write the entry, \
            store and policy named.",
        after_help = "Exit status: the server's own (128 + the signal when a signal ended it); \
            2 metagate could not start (bad flags, an invalid policy, a store that cannot be \
            opened, a server command that cannot be run).\n\n\
            Example: metagate mcp --policy metagate.toml -- npx @modelcontextprotocol/server-filesystem /data"
    )]
    Mcp(McpArgs),
    /// Decide a shell tool's call as gate does, and run its command inside a boundary the
    /// kernel enforces
    #[command(
        long_about = "Decide a shell tool's call as gate does, and run its command inside a \
            boundary the kernel enforces.\n\n\
            Reads one call (or, with --jsonl, one call per line) in any envelope gate accepts. \
            A call that passes has its command (the argument declared kind = \"shell\", run with \
            the interpreter its runtime names: terminal bash, python python3, nodejs node) run \
            under Landlock, seccomp and no_new_privs: it may write only under the policy's path \
            root and [run] write, read everything but metagate's own files and [run] deny_read, \
            reach no network unless allowed, and is bounded in time, memory, processes and \
            output; nothing it starts outlives it. The answer is the tool result in the call's \
            envelope; the decision and the outcome are recorded. On a kernel without Landlock \
            run refuses unless the policy sets [run] unconfined = true. See docs/run.md.",
        after_help = "Exit status: 0 the command ran and exited 0, 1 the call was refused \
            (nothing ran), 2 metagate could not run (bad flags, no Landlock, a store that \
            cannot be used), 3 the command ran and failed (non-zero status, a signal, the time \
            bound). With --jsonl: 0 at end of input, outcomes in-band.\n\n\
            Example: echo '{\"tool_name\":\"code_execution_tool\",\"tool_args\":{\"runtime\":\"terminal\",\"code\":\"ls\"}}' | metagate run"
    )]
    Run(RunArgs),
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
            with file and line, the other inputs are still linted).",
        override_usage = "metagate lint [OPTIONS] <PATH>...\n       metagate lint --explain <CODE>"
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
            Reads every --db given, SQLite files and PostgreSQL URLs alike (shards from several \
            agent hosts are merged; none: the default store), counts calls, corrections, rejections and outcomes per tool and method in the \
            window, detects same-topic re-asks as user corrections, scores utility and cohesion, \
            and proposes recommendations (never changes). The report opens with what changed since \
            the previous stored run and names the policy used. Unless --dry-run, the run is stored \
            in the first --db, replacing an earlier run over the same window, with the re-asks it \
            detected (as user corrections).",
        after_help = "Exit status: 0 the pass ran (an empty report when there was nothing to read), \
            1 --fail-on's condition held, or --accept/--reject/show named an unknown \
            recommendation, 2 a store could not be read.",
        args_conflicts_with_subcommands = true
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
    /// Copy one store into another, SQLite or PostgreSQL either way, or merge its history in
    #[command(
        long_about = "Copy one store into another, SQLite or PostgreSQL either way (each a file \
            or a postgres://USER@HOST/DB URL). By default every row keeps its id, so that the \
            copy reads as the original does; copying again copies only what the source gained \
            since, and a target holding another store's rows under the same ids is refused. \
            With --merge the source's history (decisions, outcomes, asks, corrections, grants \
            and their events) joins the target's own under new ids, as a host's joins a fleet \
            store; evaluate's runs and recommendations are not merged (run evaluate on the \
            target). Either way a row already copied is never added again, however it travelled. \
            --db is not read: both stores are named here."
    )]
    Copy {
        /// The store to copy from (it must exist)
        #[arg(value_name = "FROM")]
        from: PathBuf,
        /// The store to copy into (an SQLite file is made when missing)
        #[arg(value_name = "TO")]
        to: PathBuf,
        /// Add the source's history to the target's own, under new ids
        #[arg(long)]
        merge: bool,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Path, schema version, rows per table and the time span the store covers
    Info {
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs
    #[command(
        long_about = "Delete the events (gate decisions, outcomes, asks, user corrections) dated \
            before --before, and the evaluate runs whose windows ended by then. Kept whatever \
            their age: the latest evaluate run and every event of its window (tools health and \
            the next run's digest build on them), and every recommendation a person accepted or \
            rejected. Grants and their audit trail are never touched. Rows are deleted in small \
            transactions, so a gate writing meanwhile is held up for one batch at most."
    )]
    Prune {
        /// The cutoff: a duration back from now (90d, 12w, 24h) or an RFC 3339 time
        #[arg(long, value_name = "WHEN")]
        before: String,
        /// Count what would be deleted, delete nothing
        #[arg(long)]
        dry_run: bool,
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

/// `--emit`: the envelope shapes the library knows, by name.
fn shape_parser() -> impl clap::builder::TypedValueParser<Value = Shape> {
    let names = Shape::ALL
        .iter()
        .map(|shape| clap::builder::PossibleValue::new(shape.as_str()).help(shape.looks_like()));
    clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(names), |name| {
        name.parse::<Shape>()
            .expect("clap admits only the names of Shape::ALL")
    })
}

/// How an answer is written: lines for people, JSON for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the effective policy as TOML, every default filled in
    Show,
    /// Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest
    /// metagate.toml here or above, the user's file, or the built-in policy)
    Which {
        /// Output format
        #[arg(long, value_enum, default_value_t = TextFormat::Text)]
        format: TextFormat,
    },
    /// Validate a policy file; errors name the key and line (exit 2 when invalid)
    #[command(
        long_about = "Validate a policy file; errors name the key and line (exit 2 when invalid).\n\n\
            Warnings name what the policy may not mean: an intent or a prerequisite naming a \
            tool it does not know, a path root that is not a folder. A policy written for an \
            MCP server (`metagate mcp`) names the server's tools, which come from the server at \
            run time: give the server's command after `--` and the server is started, asked \
            for its tools as `metagate mcp` asks, and the policy checked with them.",
        after_help = "Example: metagate policy check filesystem.toml -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes"
    )]
    Check {
        /// The policy file to check
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// An MCP server whose tools the policy is for, and its arguments, after `--`
        #[arg(last = true, value_name = "SERVER_COMMAND")]
        server: Vec<std::ffi::OsString>,
    },
}
