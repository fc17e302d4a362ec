//! The flags of `metagate gate`.

use std::path::PathBuf;

use clap::Args;

use metagate_wire::call::Shape;

use super::shape_parser;

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Read one call per line and answer each with one line, until end of input
    #[arg(long)]
    pub jsonl: bool,

    /// With --jsonl: each line is a recorded call, {"call": CALL, "ts": TIME, "session": ID,
    /// "caller": NAME} (all but "call" optional), decided and recorded as made then, there, by
    /// that caller, so a recorded day replays through one process
    #[arg(long, requires = "jsonl")]
    pub replay: bool,

    /// Write a report envelope per call: verdict, call, corrections, warnings, error, feedback
    #[arg(long)]
    pub report: bool,

    /// Write calls in this envelope instead of the one they came in
    #[arg(long, value_name = "SHAPE", value_parser = shape_parser())]
    pub emit: Option<Shape>,

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
