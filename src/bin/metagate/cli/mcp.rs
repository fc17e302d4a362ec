//! The flags of `metagate mcp`.

use std::ffi::OsString;

use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Do not record decisions and tool outcomes in the telemetry store
    #[arg(long)]
    pub no_telemetry: bool,

    /// Write every stage of each tools/call decision on stderr: envelope, corrections, each
    /// policy check with the rule it applied, the verdict
    #[arg(long)]
    pub explain: bool,

    /// Do not write a line on stderr per correction, warning or refusal
    #[arg(long, short)]
    pub quiet: bool,

    /// Session the calls belong to (recorded with each decision and outcome)
    #[arg(long, env = "METAGATE_SESSION", value_name = "ID")]
    pub session: Option<String>,

    /// Who is calling: an agent, persona or user (recorded with each decision)
    #[arg(long, env = "METAGATE_CALLER", value_name = "NAME")]
    pub caller: Option<String>,

    /// What the caller is doing: one of the policy's intents. Tools it does not allow are
    /// left out of tools/list, and refused if called
    #[arg(long, env = "METAGATE_INTENT", value_name = "NAME")]
    pub intent: Option<String>,

    /// Run the server inside the boundary `metagate run` runs commands in (the policy's
    /// [run]: it writes only under the path root and [run] write, reads none of metagate's
    /// own files, reaches no network unless [run] network = true); [run] sandbox_mcp = true
    /// does too
    #[arg(long)]
    pub sandbox: bool,

    /// Serve MCP's Streamable HTTP transport on ADDR (HOST:PORT; port 0 picks one, said on
    /// stderr) instead of stdio: each HTTP session runs its own SERVER_COMMAND and is a
    /// metagate session of its own, its caller the bearer token's ([mcp] tokens in the
    /// policy); a request without a known token gets 401 unless [mcp]
    /// unauthenticated_loopback = true lets loopback requests in as --caller
    #[cfg(feature = "http")]
    #[arg(long, value_name = "ADDR", conflicts_with = "print_config")]
    pub listen: Option<std::net::SocketAddr>,

    /// Relay to the MCP server at URL (http://…, its Streamable HTTP endpoint) instead of
    /// running SERVER_COMMAND; with --listen, each session gets an upstream session of its own
    #[cfg(feature = "http")]
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "print_config", "sandbox"])]
    pub upstream: Option<String>,

    /// Write the snippet that starts this proxy, as it is configured now (--db, --policy and
    /// the server command made absolute), into CLIENT's MCP configuration; the file it goes in
    /// on each platform is said on stderr
    #[arg(long, value_enum, value_name = "CLIENT")]
    pub print_config: Option<McpClient>,

    /// The MCP server to run and its arguments: the first word that is not one of metagate's
    /// options starts it (everything after it is the server's); `--` before it also works
    #[arg(
        trailing_var_arg = true,
        required_unless_present = "upstream",
        num_args = 1..,
        value_name = "SERVER_COMMAND"
    )]
    pub server: Vec<OsString>,
}

/// The MCP clients whose configuration `--print-config` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpClient {
    /// Claude Desktop's claude_desktop_config.json (`mcpServers`)
    ClaudeDesktop,
    /// Cursor's mcp.json (`mcpServers`)
    Cursor,
    /// VS Code's mcp.json (`servers`, type stdio)
    Vscode,
    /// Zed's settings.json (`context_servers`)
    Zed,
}
