//! Where the policy comes from, as git and ruff find their configuration: `--policy FILE`,
//! `$METAGATE_POLICY`, the nearest `metagate.toml` in the working folder or a parent of it, the
//! user's file under `$XDG_CONFIG_HOME` (else `~/.config`), else the built-in policy. Pure: the
//! environment, and a way to ask whether a file exists, are passed in.
//!
//! The walk up stops at `$HOME` when the working folder is inside it: above it are other
//! users' folders and the system's (`/home`, `/`), where a file another user left would loosen
//! the gate of everyone working below. Outside `$HOME` (a service's folder, `/srv/agent`) it
//! goes up to the filesystem root, as git's does.

use std::path::{Path, PathBuf};

/// Where the policy comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyLocation {
    /// `--policy FILE` or `$METAGATE_POLICY`: must exist.
    Given(PathBuf),
    /// A `metagate.toml` found in a folder, or the user's file, found on disk.
    Found(PathBuf),
    /// No policy file: the built-in policy.
    Builtin,
}

/// Why the policy in force is the one it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `--policy FILE`.
    Flag,
    /// `$METAGATE_POLICY`.
    EnvVar,
    /// The nearest `metagate.toml` in the working folder or a parent of it.
    Folder,
    /// The user's file, under `$XDG_CONFIG_HOME` or `~/.config`.
    UserConfig,
    /// Nothing given, and no file found.
    Builtin,
}

/// The outcome of a lookup: where the policy comes from, why, and the files looked for before
/// (all of them when none was found), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// Where the policy is.
    pub location: PolicyLocation,
    /// Why there.
    pub reason: Reason,
    /// Every place looked at, in order, for `policy path`.
    pub looked_for: Vec<PathBuf>,
}

/// What the lookup needs to know about the environment, passed in so the lookup stays pure.
pub struct LookupEnv<'a> {
    /// `--policy`, if given.
    pub flag: Option<&'a Path>,
    /// `$METAGATE_POLICY`, if set.
    pub env_policy: Option<&'a Path>,
    /// The working folder, where the search upwards starts.
    pub cwd: &'a Path,
    /// `$XDG_CONFIG_HOME`, if set.
    pub xdg_config_home: Option<&'a Path>,
    /// `$HOME`, if set.
    pub home: Option<&'a Path>,
    /// Whether a file exists, so tests need no real files.
    pub exists: &'a dyn Fn(&Path) -> bool,
}

impl LookupEnv<'_> {
    /// `$METAGATE_POLICY` when set to something (empty is refused by the binary).
    fn env_policy(&self) -> Option<&Path> {
        self.env_policy.filter(|p| !p.as_os_str().is_empty())
    }

    /// Each folder's `metagate.toml` the walk reads, nearest first.
    fn folder_files(&self) -> Vec<PathBuf> {
        let ceiling = self
            .home
            .filter(|h| h.is_absolute() && self.cwd.starts_with(h));
        let mut files = Vec::new();
        for folder in self.cwd.ancestors() {
            files.push(folder.join("metagate.toml"));
            if Some(folder) == ceiling {
                break;
            }
        }
        files
    }

    /// The user's files: under `$XDG_CONFIG_HOME` (when absolute) and under `~/.config`. The
    /// lookup reads the first of them; a run in another environment reads the other.
    fn user_files(&self) -> Vec<PathBuf> {
        let homes = [
            self.xdg_config_home
                .filter(|p| p.is_absolute())
                .map(Path::to_path_buf),
            self.home.map(|h| h.join(".config")),
        ];
        let mut files: Vec<PathBuf> = homes
            .into_iter()
            .flatten()
            .map(|dir| dir.join("metagate").join("metagate.toml"))
            .collect();
        files.dedup();
        files
    }
}

/// Where the policy comes from, and why.
pub fn look_up_policy(env: &LookupEnv<'_>) -> Search {
    let given = |path: &Path, reason| Search {
        location: PolicyLocation::Given(path.to_path_buf()),
        reason,
        looked_for: Vec::new(),
    };
    if let Some(p) = env.flag {
        return given(p, Reason::Flag);
    }
    if let Some(p) = env.env_policy() {
        return given(p, Reason::EnvVar);
    }
    let mut looked_for = Vec::new();
    let user_file = env.user_files().into_iter().next();
    let candidates = env
        .folder_files()
        .into_iter()
        .map(|f| (f, Reason::Folder))
        .chain(user_file.map(|f| (f, Reason::UserConfig)));
    for (file, reason) in candidates {
        if (env.exists)(&file) {
            return Search {
                location: PolicyLocation::Found(file),
                reason,
                looked_for,
            };
        }
        looked_for.push(file);
    }
    Search {
        location: PolicyLocation::Builtin,
        reason: Reason::Builtin,
        looked_for,
    }
}

/// Where the policy comes from.
pub fn locate_policy(env: &LookupEnv<'_>) -> PolicyLocation {
    look_up_policy(env).location
}

/// Every policy file a run may read, whether it exists or not: `--policy`, `$METAGATE_POLICY`,
/// the `metagate.toml` of every folder the walk reads, and the user's files under
/// `$XDG_CONFIG_HOME` and under `~/.config` (both: a run in another environment reads the
/// other). [`locate_policy`] takes the first of these that is given or exists; these are the
/// files the checks protect (`exists` is not asked).
pub fn policy_lookup_chain(env: &LookupEnv<'_>) -> Vec<PathBuf> {
    let mut chain: Vec<PathBuf> = [env.flag, env.env_policy()]
        .into_iter()
        .flatten()
        .map(|p| env.cwd.join(p))
        .collect();
    chain.extend(env.folder_files());
    chain.extend(env.user_files());
    let mut seen = Vec::with_capacity(chain.len());
    for file in chain {
        if !seen.contains(&file) {
            seen.push(file);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(cwd: &'a Path, exists: &'a dyn Fn(&Path) -> bool) -> LookupEnv<'a> {
        LookupEnv {
            flag: None,
            env_policy: None,
            cwd,
            xdg_config_home: Some(Path::new("/cfg")),
            home: Some(Path::new("/h")),
            exists,
        }
    }

    #[test]
    fn lookup_order() {
        let cwd = Path::new("/w");
        let yes = |_: &Path| true;
        let no = |_: &Path| false;
        let only_xdg = |p: &Path| p.starts_with("/cfg");
        let flag = Path::new("/f.toml");
        let envp = Path::new("/e.toml");
        let both = LookupEnv {
            flag: Some(flag),
            env_policy: Some(envp),
            ..env(cwd, &yes)
        };
        assert_eq!(locate_policy(&both), PolicyLocation::Given(flag.into()));
        assert_eq!(look_up_policy(&both).reason, Reason::Flag);
        let from_env = LookupEnv {
            env_policy: Some(envp),
            ..env(cwd, &yes)
        };
        assert_eq!(locate_policy(&from_env), PolicyLocation::Given(envp.into()));
        assert_eq!(look_up_policy(&from_env).reason, Reason::EnvVar);
        let found = look_up_policy(&env(cwd, &yes));
        assert_eq!(
            (found.location, found.reason),
            (
                PolicyLocation::Found("/w/metagate.toml".into()),
                Reason::Folder
            )
        );
        let user = look_up_policy(&env(cwd, &only_xdg));
        assert_eq!(
            (user.location, user.reason),
            (
                PolicyLocation::Found("/cfg/metagate/metagate.toml".into()),
                Reason::UserConfig
            )
        );
        assert_eq!(
            user.looked_for,
            [PathBuf::from("/w/metagate.toml"), "/metagate.toml".into()]
        );
        assert_eq!(locate_policy(&env(cwd, &no)), PolicyLocation::Builtin);
    }

    /// The nearest file wins; the walk stops at `$HOME` when it starts inside it, and goes up
    /// to the root when it does not.
    #[test]
    fn the_walk_goes_up_to_home_or_the_root() {
        let in_parent = |p: &Path| p == Path::new("/h/proj/metagate.toml");
        let found = look_up_policy(&env(Path::new("/h/proj/src/deep"), &in_parent));
        assert_eq!(
            found.location,
            PolicyLocation::Found("/h/proj/metagate.toml".into())
        );
        assert_eq!(
            found.looked_for,
            [
                PathBuf::from("/h/proj/src/deep/metagate.toml"),
                "/h/proj/src/metagate.toml".into()
            ]
        );
        let above_home = |p: &Path| p == Path::new("/metagate.toml");
        let none = look_up_policy(&env(Path::new("/h/proj"), &above_home));
        assert_eq!(none.location, PolicyLocation::Builtin);
        assert_eq!(
            none.looked_for,
            [
                PathBuf::from("/h/proj/metagate.toml"),
                "/h/metagate.toml".into(),
                "/cfg/metagate/metagate.toml".into()
            ]
        );
        let outside = look_up_policy(&env(Path::new("/srv/agent"), &above_home));
        assert_eq!(
            outside.location,
            PolicyLocation::Found("/metagate.toml".into())
        );
        // `/home2` is not inside `/h`: components, not string prefixes.
        let sibling = env(Path::new("/h2/x"), &above_home);
        assert_eq!(
            locate_policy(&sibling),
            PolicyLocation::Found("/metagate.toml".into())
        );
    }

    /// Whatever the lookup picks is in the chain the checks protect.
    #[test]
    fn the_chain_holds_every_file_the_lookup_may_pick() {
        let cwd = Path::new("/h/proj/src");
        let chain = policy_lookup_chain(&env(cwd, &|_| true));
        assert_eq!(
            chain,
            [
                PathBuf::from("/h/proj/src/metagate.toml"),
                "/h/proj/metagate.toml".into(),
                "/h/metagate.toml".into(),
                "/cfg/metagate/metagate.toml".into(),
                "/h/.config/metagate/metagate.toml".into(),
            ]
        );
        for file in &chain {
            let only = |p: &Path| p == file.as_path();
            // `~/.config` is read when `$XDG_CONFIG_HOME` is not set.
            let lookup = LookupEnv {
                xdg_config_home: None,
                ..env(cwd, &only)
            };
            let picked = [locate_policy(&env(cwd, &only)), locate_policy(&lookup)];
            assert!(
                picked.contains(&PolicyLocation::Found(file.clone())),
                "{file:?}"
            );
        }
    }
}
