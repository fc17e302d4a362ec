//! The flags of `metagate run`.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Read one call per line and answer each with one line (after its command ended), until
    /// end of input
    #[arg(long)]
    pub jsonl: bool,

    /// Do not write a line on stderr per correction, warning or rejection
    #[arg(long, short)]
    pub quiet: bool,

    /// Write every stage of each decision on stderr, and what the kernel enforces
    #[arg(long)]
    pub explain: bool,

    /// Import tool definitions (repeatable), as gate does
    #[arg(long = "tools", value_name = "FILE")]
    pub tools: Vec<PathBuf>,

    /// Do not record decisions and outcomes in the telemetry store
    #[arg(long)]
    pub no_telemetry: bool,

    /// Session the calls belong to (recorded with each decision and outcome)
    #[arg(long, env = "METAGATE_SESSION", value_name = "ID")]
    pub session: Option<String>,

    /// Who is calling (recorded with each decision)
    #[arg(long, env = "METAGATE_CALLER", value_name = "NAME")]
    pub caller: Option<String>,

    /// What the caller is doing: one of the policy's intents
    #[arg(long, env = "METAGATE_INTENT", value_name = "NAME")]
    pub intent: Option<String>,

    /// Seconds a command may run before it and everything it started are killed
    /// [default: [run] timeout_secs, else 120]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,

    /// Address space per process, in MiB [default: [run] memory_mb, else 16384]
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub memory: Option<u64>,

    /// Processes at once [default: [run] processes, else 1024]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub processes: Option<u64>,

    /// KiB of stdout and of stderr kept, each; the rest is cut [default: [run] output_kb,
    /// else 1024]
    #[arg(long, value_name = "KIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub output: Option<u64>,

    /// Let the command reach the network (the policy's [run] network = true does too)
    #[arg(long)]
    pub network: bool,
}
