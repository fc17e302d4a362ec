//! The flags of `metagate lint`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

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
