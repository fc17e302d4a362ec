//! The configuration snippets MCP clients start `metagate mcp` from. A client starts its
//! servers with a small environment of its own (no `METAGATE_DB`, no `XDG_STATE_HOME`, another
//! working folder), so a snippet names the store and the policy itself: the proxy then writes
//! to the store `evaluate` reads, whatever the client passes on.

use serde_json::{Map, Value, json};

/// An MCP client whose configuration metagate writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Desktop: `claude_desktop_config.json`, servers under `mcpServers`.
    ClaudeDesktop,
    /// Cursor: `mcp.json`, servers under `mcpServers`.
    Cursor,
    /// VS Code: `mcp.json`, servers under `servers`, each with a `type`.
    VsCode,
    /// Zed: `settings.json`, servers under `context_servers`.
    Zed,
}

/// What the snippet starts.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The name the server is listed under in the client.
    pub name: String,
    /// The metagate binary, as an absolute path (the client's `PATH` may not hold it).
    pub program: String,
    /// metagate's arguments, `--db` and `--policy` first, then `mcp`, its flags and the
    /// server's command.
    pub args: Vec<String>,
}

impl Client {
    /// Where the client reads its servers from, on each platform: `(platform, file)`.
    pub fn files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Client::ClaudeDesktop => &[
                (
                    "macOS",
                    "~/Library/Application Support/Claude/claude_desktop_config.json",
                ),
                ("Windows", r"%APPDATA%\Claude\claude_desktop_config.json"),
                ("Linux", "~/.config/Claude/claude_desktop_config.json"),
            ],
            Client::Cursor => &[
                (
                    "macOS",
                    "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
                ),
                (
                    "Windows",
                    r"%USERPROFILE%\.cursor\mcp.json (or .cursor\mcp.json in a project)",
                ),
                (
                    "Linux",
                    "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
                ),
            ],
            Client::VsCode => &[
                (
                    "macOS",
                    "~/Library/Application Support/Code/User/mcp.json (or .vscode/mcp.json in a workspace)",
                ),
                (
                    "Windows",
                    r"%APPDATA%\Code\User\mcp.json (or .vscode\mcp.json in a workspace)",
                ),
                (
                    "Linux",
                    "~/.config/Code/User/mcp.json (or .vscode/mcp.json in a workspace)",
                ),
            ],
            Client::Zed => &[
                ("macOS", "~/.config/zed/settings.json"),
                ("Windows", r"%APPDATA%\Zed\settings.json"),
                ("Linux", "~/.config/zed/settings.json"),
            ],
        }
    }

    /// The snippet: a JSON object to merge into the client's file.
    pub fn snippet(self, launch: &Launch) -> Value {
        let mut server = Map::new();
        if self == Client::VsCode {
            server.insert("type".into(), "stdio".into());
        }
        server.insert("command".into(), launch.program.clone().into());
        server.insert("args".into(), json!(launch.args));
        server.insert("env".into(), json!({}));
        let key = match self {
            Client::ClaudeDesktop | Client::Cursor => "mcpServers",
            Client::VsCode => "servers",
            Client::Zed => "context_servers",
        };
        json!({ key: { launch.name.clone(): Value::Object(server) } })
    }
}

/// The name a client lists the server under: its program's file name without a
/// `mcp-server-`/`server-` prefix or an extension, `metagate` before it.
pub fn server_name(command: &[String]) -> String {
    let program = command
        .iter()
        .find(|word| {
            !word.starts_with('-') && !matches!(word.as_str(), "npx" | "node" | "uvx" | "python3")
        })
        .or(command.first())
        .map_or("server", String::as_str);
    let file = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let stem = file.split('.').next().unwrap_or(file);
    let short = stem
        .trim_start_matches("mcp-server-")
        .trim_start_matches("server-");
    let clean: String = short
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if clean.is_empty() {
        "metagate".to_string()
    } else {
        format!("metagate-{clean}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_gets_its_own_key_and_the_whole_command() {
        let launch = Launch {
            name: "metagate-everything".into(),
            program: "/usr/bin/metagate".into(),
            args: [
                "--db", "/s/m.db", "--policy", "/p.toml", "mcp", "--", "npx", "x",
            ]
            .map(String::from)
            .to_vec(),
        };
        for (client, key) in [
            (Client::ClaudeDesktop, "mcpServers"),
            (Client::Cursor, "mcpServers"),
            (Client::VsCode, "servers"),
            (Client::Zed, "context_servers"),
        ] {
            let snippet = client.snippet(&launch);
            let server = &snippet[key]["metagate-everything"];
            assert_eq!(server["command"], "/usr/bin/metagate", "{client:?}");
            assert_eq!(server["args"][1], "/s/m.db");
            assert_eq!(server["args"][3], "/p.toml");
            assert_eq!(
                server["type"].as_str(),
                (client == Client::VsCode).then_some("stdio")
            );
            assert_eq!(client.files().len(), 3);
        }
    }

    #[test]
    fn server_names_are_short_and_safe() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            server_name(&words("/x/node_modules/.bin/mcp-server-everything")),
            "metagate-everything"
        );
        assert_eq!(server_name(&words("node srv/my-app.js")), "metagate-my-app");
        assert_eq!(
            server_name(&words("npx -y @scope/server-git")),
            "metagate-git"
        );
    }
}
