//! The flags of `metagate evaluate` and `metagate tools health`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use metagate_core::evolution::digest::FailOn;
use metagate_core::evolution::health::Sort;

use super::Format;

#[derive(Debug, Args)]
pub struct EvaluateArgs {
    #[command(subcommand)]
    pub command: Option<EvaluateCommand>,

    /// Start of the window: a duration back from now (7d, 24h, 30m, 90s, 2w), a date
    /// (2026-11-25: its midnight, UTC) or an RFC 3339 time
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

    /// Write the proposed argument aliases as a policy fragment (usable alone: it carries the
    /// policy's imports; or merge its alias tables into your policy)
    #[arg(long, value_name = "FILE")]
    pub emit_policy_patch: Option<PathBuf>,

    /// Mark a recommendation accepted (by its id) instead of running the pass
    #[arg(long, value_name = "ID", conflicts_with_all = ["reject", "dry_run", "emit_policy_patch"])]
    pub accept: Option<String>,

    /// Mark a recommendation rejected (by its id) instead of running the pass: it is muted
    /// until its evidence grows past what it is now
    #[arg(long, value_name = "ID", conflicts_with_all = ["dry_run", "emit_policy_patch"])]
    pub reject: Option<String>,

    /// Show muted (rejected) recommendations too
    #[arg(long)]
    pub all: bool,

    /// Exit with status 1 when, since the previous stored run, a recommendation is new (new),
    /// new or worse (worse), or anything changed (any)
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Option<FailOnArg>,
}

#[derive(Debug, Subcommand)]
pub enum EvaluateCommand {
    /// One stored recommendation with its evidence (and the re-asks stored against its tool)
    Show {
        /// The recommendation's id (rec_…)
        id: String,

        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

/// What `--fail-on` alerts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// A new recommendation (or a rejected one whose evidence grew)
    New,
    /// A new recommendation, or one whose confidence rose
    Worse,
    /// Any change since the previous run: new, worse, better or resolved
    Any,
}

impl FailOnArg {
    pub fn condition(self) -> FailOn {
        match self {
            FailOnArg::New => FailOn::New,
            FailOnArg::Worse => FailOn::Worse,
            FailOnArg::Any => FailOn::Any,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion
    #[command(
        long_about = "One row per tool and method: calls, pass/corrected/rejected shares, boundary \
            and low-utility referrals, user corrections, utility, a cohesion warning and the top \
            boundary axes; what evaluate over now would count: the latest evaluate run whose window \
            ends by now, plus live counts of the events up to now it did not count.\n\n\
            The recent counts are over the last recent_hours ending now.\n\n\
            --format known-tools writes a <known_tools> block for a Tool Builder prompt: degraded \
            methods flagged, the open recommendations in one line each; at most --top entries, \
            never longer than --budget characters, the healthiest, least-used tools left out \
            first; listed ranked (degraded last, then utility x recency)."
    )]
    Health(HealthArgs),
    /// Check tool definitions before a model meets them: contradictions, JSON Schema the gate
    /// reads around, and constructs known to break constrained decoding (exit 1 when any is
    /// found; notes, constraints decoding leaves to the model, never fail it)
    Check(ToolsCheckArgs),
}

#[derive(Debug, Args)]
pub struct ToolsCheckArgs {
    /// Tools files: an OpenAI tools array, an MCP tools/list result, an Anthropic tools array
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
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
    #[arg(long, default_value = "calls", value_parser = sort_parser())]
    pub sort: Sort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HealthFormat {
    Table,
    Json,
    /// A <known_tools> block for a Tool Builder prompt
    KnownTools,
}

/// `--sort`: the orders the library knows, by name.
fn sort_parser() -> impl clap::builder::TypedValueParser<Value = Sort> {
    let names = Sort::ALL
        .iter()
        .map(|(_, name, help)| clap::builder::PossibleValue::new(*name).help(*help));
    clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(names), |name| {
        Sort::from_name(&name).expect("clap admits only the names of Sort::ALL")
    })
}
