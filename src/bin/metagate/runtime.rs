//! What every command may need from the world: the clock and where the store is.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use metagate::gate::Context as CallContext;
use metagate::mcp::{CheckerSetup, Clock, OpenStore};
use metagate::own_files::{Whereabouts, own_files};
use metagate_checks::own_binary::OwnBinary;
use metagate_checks::program_files::ProgramFiles;
use metagate_core::enforce::{Checker, Setup};
use metagate_core::events::parse_time;
use metagate_core::grants::seal::{GrantKey, KEY_BYTES};
use metagate_core::policy::Policy;
use metagate_store::StoreError;
use metagate_store::any::AnyStore;
use metagate_store::location::Location;

/// The file that holds the key a PostgreSQL store's grant rows are sealed with, in the
/// state folder.
pub const GRANT_KEY_FILE: &str = "grant.key";

/// What an SQLite store's grant key file adds to the store's name.
pub const GRANT_KEY_SUFFIX: &str = "-key";

pub struct Env {
    db_flag: Option<PathBuf>,
    policy_flag: Option<PathBuf>,
    store_options: metagate_store::Options,
    /// `[store] url`, used when neither `--db` nor `$METAGATE_DB` names the store.
    policy_store_url: Option<String>,
    /// A fixed now (the hidden `--now`), for tests that control time.
    fixed_now_ms: Option<i64>,
}

impl Env {
    pub fn new(db: Option<&Path>, policy: Option<&Path>, now: Option<&str>) -> Result<Env> {
        let fixed_now_ms = now
            .map(|t| parse_time(t).map_err(anyhow::Error::new))
            .transpose()
            .context("--now")?;
        Ok(Env {
            db_flag: db.map(Path::to_path_buf),
            policy_flag: policy.map(Path::to_path_buf),
            store_options: metagate_store::Options::default(),
            policy_store_url: None,
            fixed_now_ms,
        })
    }

    /// Takes the store settings from the policy.
    pub fn with_policy(mut self, policy: &Policy) -> Env {
        self.store_options.busy_timeout = policy.busy_timeout();
        self.policy_store_url = policy.store_url().map(str::to_string);
        self
    }

    /// A clock to hand to the library.
    pub fn clock(&self) -> Box<dyn Fn() -> i64> {
        match self.fixed_now_ms {
            Some(ms) => Box::new(move || ms),
            None => Box::new(wall_clock_ms),
        }
    }

    /// The policy checks as `gate` and `lint` run them: relative to the working folder, with
    /// metagate's own files protected (so the same call gets the same verdict in both): every
    /// policy file and store a run may read, and the tool definitions this one read (`tools`).
    pub fn checker(&self, policy: &Policy, tools: &[PathBuf]) -> Result<Checker> {
        let setup = self.checker_setup(policy, tools)?;
        Ok(Checker::new(
            policy,
            &Setup {
                cwd: &setup.cwd,
                protected: setup.protected,
                home: setup.home,
                own_binary: setup.own_binary,
                programs: setup.programs,
                grant_key: setup.grant_key,
            },
        ))
    }

    /// What [`Env::checker`] builds the checks from, for a job that builds them again.
    pub fn checker_setup(&self, policy: &Policy, tools: &[PathBuf]) -> Result<CheckerSetup> {
        let cwd = std::env::current_dir().context("cannot read the working folder")?;
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        let (home, xdg_config_home, xdg_state_home) =
            (var("HOME"), var("XDG_CONFIG_HOME"), var("XDG_STATE_HOME"));
        let (env_policy, env_db) = (var("METAGATE_POLICY"), var("METAGATE_DB"));
        let mut protected = own_files(
            &Whereabouts {
                cwd: &cwd,
                home: home.as_deref(),
                xdg_config_home: xdg_config_home.as_deref(),
                xdg_state_home: xdg_state_home.as_deref(),
                policy_flag: self.policy_flag.as_deref(),
                env_policy: env_policy.as_deref(),
                db_flag: self.db_flag.as_deref(),
                env_db: env_db.as_deref(),
            },
            policy,
            tools,
        );
        let path_var = std::env::var_os("PATH");
        let own_binary = std::env::current_exe()
            .ok()
            .and_then(|exe| OwnBinary::new(&exe, path_var.as_deref(), &cwd));
        let programs = Some(ProgramFiles::new(path_var.as_deref(), &cwd));
        // An unreadable key is no key: no row is then a grant (`permit list` says why).
        let grant_key = self.grant_key(false).ok().flatten();
        protected.extend(self.own_state_files());
        protected.extend(self.grant_key_places());
        Ok(CheckerSetup {
            cwd,
            protected,
            home,
            own_binary,
            programs,
            grant_key,
        })
    }

    /// metagate's own state files that are no store: the grant keys, where each run may look
    /// for them (`$XDG_STATE_HOME/metagate/grant.key`, `~/.local/state/metagate/grant.key`).
    pub fn own_state_files(&self) -> Vec<PathBuf> {
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        let mut files = Vec::new();
        if let Some(xdg) = var("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
            files.push(xdg.join("metagate").join(GRANT_KEY_FILE));
        }
        if let Some(home) = var("HOME") {
            files.push(home.join(".local/state/metagate").join(GRANT_KEY_FILE));
        }
        files
    }

    /// Where the key the store's grants are sealed with lives: beside an SQLite store, as its
    /// companion `-key` (so a command naming the store with `--db`, from anywhere, finds
    /// it); for a PostgreSQL store, in this user's state folder ([`Env::own_state_files`]).
    pub fn grant_key_places(&self) -> Vec<PathBuf> {
        match self.location() {
            Ok(Location::File(store)) => {
                let mut name = store.into_os_string();
                name.push(GRANT_KEY_SUFFIX);
                vec![PathBuf::from(name)]
            }
            Ok(Location::Postgres(_)) => self.own_state_files(),
            Err(_) => Vec::new(),
        }
    }

    /// The key grant rows are sealed with, from the first of [`Env::grant_key_places`] that
    /// holds one; when there is none and `create`, a new one (32 random bytes) in the first
    /// place, made readable by this user only. None: no key (so no row is a grant).
    pub fn grant_key(&self, create: bool) -> Result<Option<GrantKey>> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt;
        let places = self.grant_key_places();
        for place in &places {
            match std::fs::read(place) {
                Ok(bytes) => {
                    return GrantKey::from_slice(&bytes).map(Some).with_context(|| {
                        format!(
                            "{} is not a grant key ({} bytes, not {KEY_BYTES}): grants cannot be \
                             checked; remove it and grant again",
                            place.display(),
                            bytes.len()
                        )
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot read the grant key {}", place.display()));
                }
            }
        }
        let Some(place) = places.first().filter(|_| create) else {
            return Ok(None);
        };
        let mut bytes = [0u8; KEY_BYTES];
        getrandom::fill(&mut bytes)
            .map_err(|e| anyhow::anyhow!("no randomness for a grant key: {e}"))?;
        if let Some(dir) = place.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot make {}", dir.display()))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(place)
            .with_context(|| format!("cannot make the grant key {}", place.display()))?;
        file.write_all(&bytes)
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write the grant key {}", place.display()))?;
        Ok(Some(GrantKey::from_bytes(bytes)))
    }

    /// [`Env::clock`] for a job's threads.
    pub fn shared_clock(&self) -> Clock {
        match self.fixed_now_ms {
            Some(ms) => Arc::new(move || ms),
            None => Arc::new(wall_clock_ms),
        }
    }

    /// Opens the store for writing, as often as a job's threads need a connection of their own.
    /// Not `durable`: see [`metagate_store::Options::durable`].
    pub fn store_opener(&self, durable: bool) -> OpenStore {
        let location = self.location();
        let options = metagate_store::Options {
            durable,
            ..self.store_options
        };
        let new_default = Mutex::new(self.new_default_store());
        Arc::new(move || match &location {
            Ok(location) => {
                let store = AnyStore::open(location, options)?;
                if let Some(path) = new_default.lock().map(|mut p| p.take()).unwrap_or(None) {
                    say_created(&path);
                }
                Ok(store)
            }
            Err(_) => Err(StoreError::NoPath),
        })
    }

    /// The default store's file when this run is about to create it: no `--db`,
    /// `$METAGATE_DB` or `[store] url` names another, and there is no file yet.
    fn new_default_store(&self) -> Option<PathBuf> {
        let env_db = std::env::var_os("METAGATE_DB").filter(|v| !v.is_empty());
        if self.db_flag.is_some() || env_db.is_some() || self.policy_store_url.is_some() {
            return None;
        }
        let path = self.db_path().ok()?;
        (!path.exists()).then_some(path)
    }

    /// Opens the store for writing with `options`, saying so once when that made the
    /// default store.
    fn open_announced(&self, options: metagate_store::Options) -> Result<AnyStore, StoreError> {
        let new_default = self.new_default_store();
        let store = AnyStore::open(&self.location()?, options)?;
        if let Some(path) = new_default {
            say_created(&path);
        }
        Ok(store)
    }

    /// Where the store is, in the documented order: `--db`, `$METAGATE_DB`, the policy's
    /// `[store] url`, else the file under `$XDG_STATE_HOME` (or `~/.local/state`).
    pub fn location(&self) -> Result<Location, StoreError> {
        let env_db = std::env::var_os("METAGATE_DB").filter(|v| !v.is_empty());
        if let Some(written) = self.db_flag.as_deref().or(env_db.as_deref().map(Path::new)) {
            return Ok(Location::of(written));
        }
        if let Some(url) = &self.policy_store_url {
            return Ok(Location::postgres(url));
        }
        self.db_path().map(Location::File)
    }

    /// Where the default SQLite file is, in the documented order.
    pub fn db_path(&self) -> Result<PathBuf, StoreError> {
        let env_db = std::env::var_os("METAGATE_DB").map(PathBuf::from);
        let xdg = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        metagate_store::locate(
            self.db_flag.as_deref(),
            env_db.as_deref(),
            xdg.as_deref(),
            home.as_deref(),
        )
        .ok_or(StoreError::NoPath)
    }

    /// The store, opened for writing (an SQLite file is created when missing).
    pub fn open_store(&self) -> Result<AnyStore, StoreError> {
        self.open_announced(self.store_options)
    }

    /// [`Env::open_store`] for a process that writes a few rows and exits: see
    /// [`metagate_store::Options::short_lived`].
    pub fn open_store_short_lived(&self) -> Result<AnyStore, StoreError> {
        let options = metagate_store::Options {
            short_lived: true,
            ..self.store_options
        };
        self.open_announced(options)
    }

    /// [`Env::open_store`] (or, `short_lived`, [`Env::open_store_short_lived`]) for a job that
    /// commits twice per call, as `run` does, whose commits do not wait for the disk: see
    /// [`metagate_store::Options::durable`].
    pub fn open_store_not_durable(&self, short_lived: bool) -> Result<AnyStore, StoreError> {
        let options = metagate_store::Options {
            durable: false,
            short_lived,
            ..self.store_options
        };
        self.open_announced(options)
    }

    /// The store, which must exist.
    pub fn open_existing_store(&self) -> Result<AnyStore, StoreError> {
        AnyStore::open_existing(&self.location()?, self.store_options)
    }

    /// The store at `location` (not the one `--db` names), opened for writing.
    pub fn open_at(&self, location: &Location) -> Result<AnyStore, StoreError> {
        AnyStore::open(location, self.store_options)
    }

    /// The store at `location`, which must exist.
    pub fn open_existing_at(&self, location: &Location) -> Result<AnyStore, StoreError> {
        AnyStore::open_existing(location, self.store_options)
    }

    /// How stores are opened: how long one another process holds is waited for
    /// (`telemetry.busy_timeout_ms`), and how durable a commit is.
    pub fn store_options(&self) -> metagate_store::Options {
        self.store_options
    }
}

/// A new user's first experiments land in the default store, and `evaluate` counts them with
/// what the agent does later: said once, when the store is made, with the ways to keep them out.
fn say_created(path: &Path) {
    let text = format!(
        "metagate: note: created the telemetry store {}\nWhat gate and mcp decide and what \
         record reads is kept there, and evaluate counts it. To keep experiments out of it, \
         run them with --no-telemetry (gate, mcp) or with another store (METAGATE_DB=FILE or \
         --db FILE).",
        path.display()
    );
    say!("{}", crate::output::wrap_for_stderr(&text));
}

fn wall_clock_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A misspelt intent must not switch the intent check off, so a policy with intents refuses
/// names it does not define. A policy without intents has nothing to check: the intent is only
/// context (recorded by `gate`).
pub fn check_intent(policy: &Policy, intent: Option<&str>, quiet: bool) -> Result<()> {
    let Some(intent) = intent else {
        return Ok(());
    };
    let intents = &policy.rules.intents;
    if intents.is_empty() {
        if !quiet {
            say!("metagate: note: the policy defines no intents; intent {intent:?} is not checked");
        }
    } else if !intents.contains_key(intent) {
        let defined: Vec<&str> = intents.keys().map(String::as_str).collect();
        bail!(
            "unknown intent {intent:?} (--intent or METAGATE_INTENT); the policy defines: {}",
            defined.join(", ")
        );
    }
    Ok(())
}

/// Who is calling and why. A blank ID would be recorded and counted as a session (or caller)
/// of its own, one that `permit grant --session` refuses to name: refused here as there.
pub fn call_context(
    session: Option<&str>,
    caller: Option<&str>,
    intent: Option<&str>,
) -> Result<CallContext> {
    for (value, flag, var) in [
        (session, "--session", "METAGATE_SESSION"),
        (caller, "--caller", "METAGATE_CALLER"),
    ] {
        if value.is_some_and(|v| v.trim().is_empty()) {
            bail!("{flag} (or {var}) is empty: give an ID, or leave it unset");
        }
    }
    Ok(CallContext {
        session: session.map(str::to_string),
        caller: caller.map(str::to_string),
        intent: intent.map(str::to_string),
    })
}

/// Limits, prerequisites and grants are read from the telemetry store. Without one they could
/// only be skipped (the operator's rules silently off) or fail every call they apply to (a
/// rejection the model cannot act on, retried in vain): refused before the first call
/// instead, naming the keys, since the conflict is the operator's set-up and known at start.
pub fn refuse_rules_without_store(
    command: &str,
    policy: &Policy,
    context: &CallContext,
) -> Result<()> {
    let rules = policy
        .rules
        .read_from_the_store(context.caller.as_deref(), context.session.as_deref());
    if rules.is_empty() {
        return Ok(());
    }
    // Named as the operator would write it: relative to the working folder when inside it.
    let cwd = std::env::current_dir().unwrap_or_default();
    let source = policy.origin.as_ref().map_or_else(
        || "the built-in policy".to_string(),
        |p| format!("policy {}", p.strip_prefix(&cwd).unwrap_or(p).display()),
    );
    bail!(
        "--no-telemetry, but {source} sets {} (read from the telemetry store at each call): \
         run {command} with telemetry on, or with a policy without them",
        rules.join(", ")
    )
}
