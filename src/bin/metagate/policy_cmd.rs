//! `metagate policy show|check`.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::cli::{PolicyCommand, TextFormat};
use crate::config;
use crate::exit::Status;
use crate::server_tools;
use metagate_core::policy::{Policy, Reason};
use metagate_wire::display::plural;

pub fn run(command: PolicyCommand, flag: Option<&Path>) -> Result<Status> {
    match command {
        PolicyCommand::Show => {
            let policy = config::load_policy(flag, &[])?;
            let origin = policy.origin.as_ref().map_or_else(
                || "the built-in policy".to_string(),
                |p| p.display().to_string(),
            );
            let mut out = crate::output::stdout();
            writeln!(out, "# effective policy, from {origin}")?;
            out.write_all(policy.to_toml().as_bytes())?;
            out.flush()?;
            Ok(Status::Success)
        }
        PolicyCommand::Which { format } => {
            // Loaded as every command loads it, so that a file that would be refused is
            // refused here too.
            let policy = config::load_policy(flag, &[])?;
            let search = config::policy_search(flag);
            let why = config::reason_text(&search);
            let path = policy.origin.as_ref().map(|p| p.display().to_string());
            let mut out = crate::output::stdout();
            match format {
                TextFormat::Json => {
                    let source = match search.reason {
                        Reason::Flag => "flag",
                        Reason::EnvVar => "env",
                        Reason::Folder => "folder",
                        Reason::UserConfig => "user_config",
                        Reason::Builtin => "builtin",
                    };
                    let looked_for: Vec<String> = search
                        .looked_for
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect();
                    let doc = serde_json::json!({
                        "path": path,
                        "source": source,
                        "why": why,
                        "looked_for": looked_for,
                    });
                    writeln!(out, "{doc}")?;
                }
                TextFormat::Text => {
                    writeln!(out, "{}", path.as_deref().unwrap_or("built-in"))?;
                    writeln!(out, "  {why}")?;
                    for file in &search.looked_for {
                        writeln!(out, "  not found: {}", file.display())?;
                    }
                }
            }
            out.flush()?;
            Ok(Status::Success)
        }
        PolicyCommand::Check { file, server } => check(&file, &server),
    }
}

/// `policy check FILE [-- SERVER_COMMAND]`: the file alone, or with the tools the server lists,
/// built as `metagate mcp` builds its registry.
fn check(file: &Path, server: &[OsString]) -> Result<Status> {
    let (policy, listed) = if server.is_empty() {
        (config::load_policy_file(file)?, Vec::new())
    } else {
        let tools = server_tools::list(server)?;
        let names: Vec<String> = tools
            .iter()
            .filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_string))
            .collect();
        let inputs = config::policy_inputs(Some(file))?;
        (config::server_policy(&inputs, &tools)?, names)
    };
    for w in policy.warnings.iter().chain(&policy.import_warnings) {
        say!("metagate: warning: {w}");
    }
    // The policy is sound, but the gate would refuse every path argument.
    let paths = &policy.rules.paths;
    let root = match &paths.base {
        Some(base) => base.join(&paths.root),
        None => Path::new(&paths.root).to_path_buf(),
    };
    let missing_root = !root.is_dir();
    if missing_root {
        say!(
            "metagate: warning: paths.root {} is not a folder here: every path argument will be refused until it is",
            root.display()
        );
    }
    let warnings = policy.warnings.len() + policy.import_warnings.len() + usize::from(missing_root);
    let from_server = if server.is_empty() {
        String::new()
    } else {
        " with the server's tools".to_string()
    };
    writeln!(
        crate::output::stdout(),
        "{}: ok{from_server} ({}{}, {})",
        file.display(),
        tool_count(&policy, &listed),
        plural(policy.rules.intents.len(), "intent", "intents"),
        plural(warnings, "warning", "warnings")
    )?;
    Ok(Status::Success)
}

/// How many tools the policy knows, and where they come from when not all from the file:
/// the server's list, Agent Zero's built-in tools (which a file has unless it says
/// `extends = "none"`), the file itself.
fn tool_count(policy: &Policy, listed: &[String]) -> String {
    let builtin = Policy::builtin();
    let (mut from_server, mut built_in, mut own) = (0, 0, 0);
    for name in policy.tools.keys() {
        if listed.contains(name) {
            from_server += 1;
        } else if policy.extends_builtin() && builtin.tools.contains_key(name) {
            built_in += 1;
        } else {
            own += 1;
        }
    }
    let total = plural(policy.tools.len(), "tool", "tools");
    let mut parts = Vec::new();
    if from_server > 0 {
        parts.push(format!("{from_server} from the server"));
    }
    if built_in > 0 {
        parts.push(format!("{built_in} built in (Agent Zero's)"));
    }
    if own > 0 && !parts.is_empty() {
        parts.push(format!("{own} from the file"));
    }
    // What follows is the intents: after a comma, or after a semicolon when the count is
    // itself a list.
    if parts.is_empty() {
        format!("{total}, ")
    } else {
        format!("{total}: {}; ", parts.join(", "))
    }
}
