//! Finding and reading the policy file (the lookup order of docs/policy.md, "Where it is found") and the tool
//! definitions it imports.

use std::env;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
use metagate::mcp::PolicyInputs;
use metagate::mcp::registry::ReadFile;
use metagate_core::policy::{
    LookupEnv, Policy, PolicyErrors, PolicyLocation, ReadError, Reason, Search, Source,
    look_up_policy,
};

/// Where the policy for this run comes from, and why.
pub fn policy_search(flag: Option<&Path>) -> Search {
    let env_policy = env::var_os("METAGATE_POLICY").map(PathBuf::from);
    let xdg = env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = env::var_os("HOME").map(PathBuf::from);
    let cwd = env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    look_up_policy(&LookupEnv {
        flag,
        env_policy: env_policy.as_deref(),
        cwd: &cwd,
        xdg_config_home: xdg.as_deref(),
        home: home.as_deref(),
        exists: &|p: &Path| p.is_file(),
    })
}

/// Where the policy for this run comes from.
pub fn policy_location(flag: Option<&Path>) -> PolicyLocation {
    policy_search(flag).location
}

/// Why `search` picked what it did, in words: what `policy which` and `gate --explain` say.
pub fn reason_text(search: &Search) -> String {
    let cwd = env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    match (&search.location, search.reason) {
        (_, Reason::Flag) => "given by --policy".to_string(),
        (_, Reason::EnvVar) => "given by $METAGATE_POLICY".to_string(),
        (PolicyLocation::Found(path), Reason::Folder) => {
            match path.parent().filter(|folder| *folder != cwd) {
                Some(folder) => format!(
                    "the nearest metagate.toml: found in {}, above the working folder {}",
                    folder.display(),
                    cwd.display()
                ),
                None => "found in the working folder".to_string(),
            }
        }
        (_, Reason::UserConfig) => format!(
            "the user's policy file: no metagate.toml in the working folder {} or above it",
            cwd.display()
        ),
        _ => {
            "the built-in policy: no --policy or $METAGATE_POLICY, and no metagate.toml here, above, or in the user's config folder"
                .to_string()
        }
    }
}

/// `metagate: explain: policy: …`: the policy in force and why, as `gate --explain` starts.
pub fn explain_source(flag: Option<&Path>) -> String {
    let search = policy_search(flag);
    let what = match &search.location {
        PolicyLocation::Given(p) | PolicyLocation::Found(p) => p.display().to_string(),
        PolicyLocation::Builtin => "built-in".to_string(),
    };
    format!("{what} ({})", reason_text(&search))
}

/// A policy metagate found by looking, rather than one the operator named, is taken only
/// from a file this user (or root) owns: walking up from the working folder may reach a
/// folder others can write (`/tmp`, a shared checkout), and a `metagate.toml` another user
/// left there would set the rules of the gate. git refuses another user's repository for the
/// same reason.
#[cfg(unix)]
fn refuse_anothers_file(path: &Path) -> Result<()> {
    let planted =
        planted(path).with_context(|| format!("cannot read policy file {}", path.display()))?;
    if let Some(why) = planted {
        anyhow::bail!(
            "{} was found by looking, and {why}: another user could set the gate's rules with \
             it. Pass --policy {} (or set METAGATE_POLICY) to use it, or remove it",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

/// Why another user could have put the policy at `path` (or the file it leads to) in place,
/// if one could: the link or the file is theirs, or a folder on the way to either is
/// writable by others (a sticky folder such as `/tmp` only lets each user change their own
/// entries, which the owner checks cover).
#[cfg(unix)]
fn planted(path: &Path) -> std::io::Result<Option<String>> {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    let my_group = nix::unistd::getegid().as_raw();
    let anothers = |uid: u32| uid != me && uid != 0;
    let absolute = std::path::absolute(path)?;
    let link = std::fs::symlink_metadata(&absolute)?;
    if link.file_type().is_symlink() && anothers(link.uid()) {
        return Ok(Some(format!(
            "it is a symbolic link of another user's (uid {})",
            link.uid()
        )));
    }
    let target = std::fs::canonicalize(&absolute)?;
    let file = std::fs::metadata(&target)?;
    if anothers(file.uid()) {
        return Ok(Some(format!(
            "{} belongs to another user (uid {})",
            target.display(),
            file.uid()
        )));
    }
    let folders = absolute
        .parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .chain(target.parent().into_iter().flat_map(Path::ancestors));
    for folder in folders {
        let meta = std::fs::metadata(folder)?;
        let mode = meta.mode();
        let sticky = mode & 0o1000 != 0;
        let why = if anothers(meta.uid()) {
            Some(format!("belongs to another user (uid {})", meta.uid()))
        } else if mode & 0o002 != 0 && !sticky {
            Some("is writable by every user".to_string())
        } else if mode & 0o020 != 0 && !sticky && meta.gid() != my_group && meta.gid() != 0 {
            Some(format!("is writable by the group {}", meta.gid()))
        } else {
            None
        };
        if let Some(why) = why {
            return Ok(Some(format!(
                "the folder {} on the way {why}",
                folder.display()
            )));
        }
    }
    Ok(None)
}

#[cfg(not(unix))]
fn refuse_anothers_file(_: &Path) -> Result<()> {
    Ok(())
}

/// Policy and tool files are read whole; nothing this size is a policy (`/dev/zero` is not).
const MAX_POLICY_BYTES: u64 = 16 << 20;

/// Reads a policy or tools file, refusing one larger than [`MAX_POLICY_BYTES`].
/// Only a regular file is read: a FIFO would be waited on for ever.
pub fn read_capped(path: &Path) -> std::io::Result<String> {
    let file = crate::input_file::open_regular(path)?;
    let bytes = crate::input_file::read_capped(file, MAX_POLICY_BYTES, "a policy file")?;
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// Set but empty (`METAGATE_POLICY=$UNSET`) is a mistake: read as unset it would fall back
/// to the built-in policy, without the restrictions the operator meant to set.
fn refuse_empty_env(flag: Option<&Path>) -> Result<()> {
    if flag.is_none() && env::var_os("METAGATE_POLICY").is_some_and(|v| v.is_empty()) {
        anyhow::bail!(
            "METAGATE_POLICY is set but empty: name a policy file, or unset it for the usual lookup"
        );
    }
    Ok(())
}

/// The policy for this run, with the tool definitions given by `--tools`.
pub fn load_policy(flag: Option<&Path>, tools: &[PathBuf]) -> Result<Policy> {
    refuse_empty_env(flag)?;
    match policy_location(flag) {
        PolicyLocation::Builtin if tools.is_empty() => Ok(Policy::builtin()),
        PolicyLocation::Builtin => load(None, tools),
        PolicyLocation::Given(path) => load(Some(&path), tools),
        PolicyLocation::Found(path) => {
            refuse_anothers_file(&path)?;
            load(Some(&path), tools)
        }
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
    let read = |p: &Path| read_capped(p).map_err(|e| ReadError::new(p, e));
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
    Policy::load(source, origin, tools, &read)
        .map_err(|errors| invalid(&name, path.is_some(), tools, &errors))
}

/// Every problem of a policy, under a heading that names everything that went into it.
fn invalid(name: &str, is_file: bool, tools: &[PathBuf], errors: &PolicyErrors) -> anyhow::Error {
    // Each line names its file.
    let lines: Vec<String> = errors.0.iter().map(|e| format!("  {e}")).collect();
    let mut what = if is_file {
        format!("policy {name}")
    } else {
        name.to_string()
    };
    if !tools.is_empty() {
        let files: Vec<String> = tools.iter().map(|t| t.display().to_string()).collect();
        what.push_str(&format!(" with --tools {}", files.join(", ")));
    }
    anyhow!("{what} is invalid:\n{}", lines.join("\n"))
}

/// What `metagate mcp` builds its policy from: the policy file's text (none: the built-in
/// policy) and how to read what it imports. The policy is built again from them with each
/// listing of the server's tools.
pub fn policy_inputs(flag: Option<&Path>) -> Result<PolicyInputs> {
    refuse_empty_env(flag)?;
    let read: ReadFile = Arc::new(|p: &Path| read_capped(p).map_err(|e| ReadError::new(p, e)));
    let path = match policy_location(flag) {
        PolicyLocation::Builtin => None,
        PolicyLocation::Given(path) => Some(path),
        PolicyLocation::Found(path) => {
            refuse_anothers_file(&path)?;
            Some(path)
        }
    };
    Ok(match path {
        None => PolicyInputs {
            name: "the built-in policy".to_string(),
            text: None,
            origin: None,
            read,
        },
        Some(path) => PolicyInputs {
            name: path.display().to_string(),
            text: Some(
                read_capped(&path)
                    .with_context(|| format!("cannot read policy file {}", path.display()))?,
            ),
            origin: Some(std::path::absolute(&path).unwrap_or_else(|_| path.clone())),
            read,
        },
    })
}

/// The policy `inputs` make with the server's `tools` (the items of its `tools/list`), as
/// `metagate mcp` builds it; what the tools had to be read around is in `import_warnings`.
pub fn server_policy(inputs: &PolicyInputs, tools: &[serde_json::Value]) -> Result<Policy> {
    inputs
        .build(tools)
        .map(|(policy, _)| policy)
        .map_err(|errors| invalid(&inputs.name, inputs.text.is_some(), &[], &errors))
}

/// The policy `inputs` make before the server has listed its tools.
pub fn base_policy(inputs: &PolicyInputs) -> Result<Policy> {
    inputs
        .build(&[])
        .map(|(policy, _)| policy)
        .map_err(|errors| invalid(&inputs.name, inputs.text.is_some(), &[], &errors))
}
