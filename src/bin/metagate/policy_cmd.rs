//! `metagate policy show|check`.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::cli::{PolicyCommand, TextFormat};
use crate::config;
use crate::exit::Status;
use metagate_core::policy::Reason;
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
        PolicyCommand::Check { file } => {
            let policy = config::load_policy_file(&file)?;
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
            writeln!(
                crate::output::stdout(),
                "{}: ok ({}, {}, {})",
                file.display(),
                plural(policy.tools.len(), "tool", "tools"),
                plural(policy.rules.intents.len(), "intent", "intents"),
                plural(
                    policy.warnings.len()
                        + policy.import_warnings.len()
                        + usize::from(missing_root),
                    "warning",
                    "warnings"
                )
            )?;
            Ok(Status::Success)
        }
    }
}
