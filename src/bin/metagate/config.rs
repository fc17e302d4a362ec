//! Finding and reading the policy file (DESIGN.md §2.5's lookup order) and the tool
//! definitions it imports.

use std::env;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use metagate::domain::policy::{LookupEnv, Policy, PolicyLocation, Source, locate_policy};

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

/// Policy and tool files are read whole; nothing this size is a policy (`/dev/zero` is not).
const MAX_POLICY_BYTES: u64 = 16 << 20;

/// Reads a policy or tools file, refusing one larger than [`MAX_POLICY_BYTES`].
fn read_capped(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_POLICY_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_POLICY_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not a policy file",
            MAX_POLICY_BYTES >> 20
        )));
    }
    Ok(text)
}

/// The policy for this run, with the tool definitions given by `--tools`.
pub fn load_policy(flag: Option<&Path>, tools: &[PathBuf]) -> Result<Policy> {
    // Set but empty (`METAGATE_POLICY=$UNSET`) is a mistake: read as unset it would fall back
    // to the built-in policy, without the restrictions the operator meant to set.
    if flag.is_none() && env::var_os("METAGATE_POLICY").is_some_and(|v| v.is_empty()) {
        anyhow::bail!(
            "METAGATE_POLICY is set but empty: name a policy file, or unset it for the usual lookup"
        );
    }
    match policy_location(flag) {
        PolicyLocation::Builtin if tools.is_empty() => Ok(Policy::builtin()),
        PolicyLocation::Builtin => load(None, tools),
        PolicyLocation::Given(path) | PolicyLocation::Found(path) => load(Some(&path), tools),
    }
}

/// Says on stderr what the tool definitions had to be read around (unless `quiet`): the
/// gate still checks those tools as far as it can.
pub fn warn_about_imports(policy: &Policy, quiet: bool) {
    if quiet {
        return;
    }
    for w in &policy.import_warnings {
        say!("metagate: warning: {w}");
    }
}

/// One policy file, as `policy check` sees it.
pub fn load_policy_file(path: &Path) -> Result<Policy> {
    load(Some(path), &[])
}

fn load(path: Option<&Path>, tools: &[PathBuf]) -> Result<Policy> {
    let read = |p: &Path| read_capped(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let text = match path {
        Some(p) => Some(
            read_capped(p).with_context(|| format!("cannot read policy file {}", p.display()))?,
        ),
        None => None,
    };
    let name = path.map_or_else(
        || "the built-in policy".to_string(),
        |p| p.display().to_string(),
    );
    let source = text.as_deref().map(|text| Source { name: &name, text });
    // The origin goes into suggested commands (`permit grant --policy …`), which an operator
    // may run from another folder: absolute.
    let origin = path.map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    Policy::load(source, origin, tools, &read).map_err(|errors| {
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
