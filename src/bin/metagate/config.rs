//! Finding and reading the policy file (DESIGN.md §2.5's lookup order).

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

pub fn load_policy(flag: Option<&Path>) -> Result<Policy> {
    match policy_location(flag) {
        PolicyLocation::Builtin => Ok(Policy::builtin()),
        PolicyLocation::Given(path) | PolicyLocation::Found(path) => load_policy_file(&path),
    }
}

pub fn load_policy_file(path: &Path) -> Result<Policy> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read policy file {}", path.display()))?;
    let name = path.display().to_string();
    Policy::from_source(
        Source {
            name: &name,
            text: &text,
        },
        Some(path.to_path_buf()),
    )
    .map_err(|errors| {
        let lines: Vec<String> = errors.0.iter().map(|e| format!("  {e}")).collect();
        anyhow!("policy file {name} is invalid:\n{}", lines.join("\n"))
    })
}
