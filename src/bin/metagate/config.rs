//! Finding and reading the policy file (DESIGN.md §2.5's lookup order) and the tool
//! definitions it imports.

use std::env;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use metagate::schema::{LookupEnv, Policy, PolicyLocation, Source, locate_policy};

/// Where the policy for this run comes from.
pub fn policy_location(flag: Option<&Path>) -> PolicyLocation {
    let env_policy = env::var_os("METAGATE_POLICY").map(PathBuf::from);
    let xdg = env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = env::var_os("HOME").map(PathBuf::from);
    let cwd = env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    locate_policy(&LookupEnv {
        flag,
        env_policy: env_policy.as_deref(),
        cwd: &cwd,
        xdg_config_home: xdg.as_deref(),
        home: home.as_deref(),
        exists: &|p: &Path| p.is_file(),
    })
}

/// The policy for this run, with the tool definitions given by `--tools`.
pub fn load_policy(flag: Option<&Path>, tools: &[PathBuf]) -> Result<Policy> {
    match policy_location(flag) {
        PolicyLocation::Builtin if tools.is_empty() => Ok(Policy::builtin()),
        PolicyLocation::Builtin => load(None, tools),
        PolicyLocation::Given(path) | PolicyLocation::Found(path) => load(Some(&path), tools),
    }
}

/// One policy file, as `policy check` sees it.
pub fn load_policy_file(path: &Path) -> Result<Policy> {
    load(Some(path), &[])
}

fn load(path: Option<&Path>, tools: &[PathBuf]) -> Result<Policy> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let text = match path {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read policy file {}", p.display()))?,
        ),
        None => None,
    };
    let name = path.map_or_else(
        || "the built-in policy".to_string(),
        |p| p.display().to_string(),
    );
    let source = text.as_deref().map(|text| Source { name: &name, text });
    Policy::load(source, path.map(Path::to_path_buf), tools, &read).map_err(|errors| {
        let lines: Vec<String> = errors.0.iter().map(|e| format!("  {e}")).collect();
        // Each line names its file; the heading names everything that went into the policy.
        let mut what = match path {
            Some(_) => format!("policy {name}"),
            None => name.clone(),
        };
        if !tools.is_empty() {
            let files: Vec<String> = tools.iter().map(|t| t.display().to_string()).collect();
            what.push_str(&format!(" with --tools {}", files.join(", ")));
        }
        anyhow!("{what} is invalid:\n{}", lines.join("\n"))
    })
}
