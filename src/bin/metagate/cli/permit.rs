//! The flags of `metagate permit`: grant, list and revoke.

use clap::{Args, Subcommand};

use super::Format;

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
