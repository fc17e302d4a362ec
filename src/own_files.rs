//! Every file metagate reads as configuration or state, wherever a run may find it: what the
//! policy checks protect from the tools they gate (docs/policy-checks.md, "metagate's own
//! files"). A model that could write the policy would loosen it for the next run; one that
//! could delete the store would start limits, the loop breaker and the grant audit over.

use std::path::{Path, PathBuf};

use metagate_core::policy::{LookupEnv, Policy, policy_lookup_chain};

/// Where this run looks for its files: the flags and the environment, passed in so that the
/// list is a pure function of them.
#[derive(Debug, Clone, Copy)]
pub struct Whereabouts<'a> {
    /// The working folder.
    pub cwd: &'a Path,
    /// `$HOME`, if set.
    pub home: Option<&'a Path>,
    /// `$XDG_CONFIG_HOME`, if set.
    pub xdg_config_home: Option<&'a Path>,
    /// `$XDG_STATE_HOME`, if set.
    pub xdg_state_home: Option<&'a Path>,
    /// `--policy`.
    pub policy_flag: Option<&'a Path>,
    /// `$METAGATE_POLICY`.
    pub env_policy: Option<&'a Path>,
    /// `--db`.
    pub db_flag: Option<&'a Path>,
    /// `$METAGATE_DB`.
    pub env_db: Option<&'a Path>,
}

/// metagate's own files, absolute (relative ones taken from `cwd`), each once: the policy files
/// of the whole lookup chain, existing or not (the `metagate.toml` of every folder the walk up
/// from `cwd` reads among them); the policy this run loaded and the tool
/// definitions it imports (`[[import]]`) or was given (`tools`, `--tools`); and every store a
/// run may use, the one given by `--db` or `$METAGATE_DB` and the default ones. A store's SQLite
/// companions (`-wal`, `-shm`, `-journal`) are the checks' to add; so are the folders that hold
/// these files.
pub fn own_files(at: &Whereabouts<'_>, policy: &Policy, tools: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = policy_lookup_chain(&LookupEnv {
        flag: at.policy_flag,
        env_policy: at.env_policy,
        cwd: at.cwd,
        xdg_config_home: at.xdg_config_home,
        home: at.home,
        exists: &|_| true,
    });
    files.extend(policy.origin.iter().cloned());
    files.extend(policy.imported_files());
    files.extend(tools.iter().cloned());
    let given_stores = [at.db_flag, at.env_db.filter(|p| !p.as_os_str().is_empty())];
    files.extend(given_stores.into_iter().flatten().map(Path::to_path_buf));
    files.extend(metagate_store::default_locations(
        at.xdg_state_home,
        at.home,
    ));
    let mut seen = Vec::with_capacity(files.len());
    for file in files {
        let file = at.cwd.join(file);
        if !seen.contains(&file) {
            seen.push(file);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagate_core::policy::file::ImportFile;
    use metagate_core::policy::{PolicyLocation, locate_policy};

    /// Every file of the lookup chain and every store, given or default, existing or not; and
    /// what `locate_policy` and `store::locate` pick is always among them.
    #[test]
    fn the_list_covers_every_lookup() {
        let mut policy = Policy::builtin();
        policy.origin = Some(PathBuf::from("/etc/mg/p.toml"));
        policy.file.imports.push(ImportFile {
            path: "tools/openai.json".into(),
            format: None,
            fill_defaults: None,
        });
        let at = Whereabouts {
            cwd: Path::new("/w"),
            home: Some(Path::new("/h")),
            xdg_config_home: Some(Path::new("/cfg")),
            xdg_state_home: Some(Path::new("/st")),
            policy_flag: Some(Path::new("given.toml")),
            env_policy: Some(Path::new("/e/env.toml")),
            db_flag: Some(Path::new("run.db")),
            env_db: Some(Path::new("/e/env.db")),
        };
        let files = own_files(&at, &policy, &[PathBuf::from("more/tools.json")]);
        let expected: Vec<PathBuf> = [
            "/w/given.toml",
            "/e/env.toml",
            "/w/metagate.toml",
            "/metagate.toml",
            "/cfg/metagate/metagate.toml",
            "/h/.config/metagate/metagate.toml",
            "/etc/mg/p.toml",
            "/etc/mg/tools/openai.json",
            "/w/more/tools.json",
            "/w/run.db",
            "/e/env.db",
            "/st/metagate/metagate.db",
            "/h/.local/state/metagate/metagate.db",
        ]
        .map(PathBuf::from)
        .into();
        assert_eq!(files, expected);

        // Without flags or variables: whichever file a run would pick is listed.
        let bare = Whereabouts {
            policy_flag: None,
            env_policy: None,
            db_flag: None,
            env_db: None,
            ..at
        };
        let files = own_files(&bare, &Policy::builtin(), &[]);
        for xdg_state_home in [bare.xdg_state_home, None] {
            let picked = metagate_store::locate(None, None, xdg_state_home, bare.home).unwrap();
            assert!(files.contains(&picked), "{picked:?}");
        }
        for existing in [
            "/w/metagate.toml",
            "/metagate.toml",
            "/cfg/metagate/metagate.toml",
        ] {
            let picked = locate_policy(&LookupEnv {
                flag: None,
                env_policy: None,
                cwd: bare.cwd,
                xdg_config_home: bare.xdg_config_home,
                home: bare.home,
                exists: &|p: &Path| p == Path::new(existing),
            });
            assert_eq!(picked, PolicyLocation::Found(existing.into()));
        }
        let home_config = locate_policy(&LookupEnv {
            flag: None,
            env_policy: None,
            cwd: bare.cwd,
            xdg_config_home: None,
            home: bare.home,
            exists: &|p: &Path| p.starts_with("/h"),
        });
        let PolicyLocation::Found(picked) = home_config else {
            panic!("{home_config:?}");
        };
        assert!(files.contains(&picked), "{picked:?}");
    }
}
