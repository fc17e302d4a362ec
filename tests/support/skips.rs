//! Tests that need software this machine lacks (PostgreSQL, the MCP servers and SDK, chromium,
//! tmux, …) skip, and say so where a person running `cargo test` sees it: libtest captures what
//! a passing test prints, so each skip is recorded here and, when the test process ends, one
//! summary goes to standard error (written with `io::stderr()` itself, which the capture does not
//! reach): which suites, why, how many tests, and the one command that enables them.
//!
//! Where a skip would hide a gap (`.ci/run`), `METAGATE_REQUIRE_ALL` (or the suite's own
//! `METAGATE_REQUIRE_*`) turns every skip into the test's failure. Shared by the command-line
//! tests (`tests/cli/main.rs`) and the store's unit tests (`crates/metagate-store/src/lib.rs`).

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::{Mutex, Once};

/// A group of tests that need one thing.
pub struct Suite {
    /// What the tests are, as the summary names them.
    pub name: &'static str,
    /// The variable that makes this suite's skips failures (beside `METAGATE_REQUIRE_ALL`).
    pub variable: &'static str,
    /// The one command that makes the suite run here.
    pub enable: &'static str,
}

/// The store tests' PostgreSQL backend: Debian's server, started per test process
/// (`tests/support/postgres.rs`).
pub const POSTGRES: Suite = Suite {
    name: "the PostgreSQL backend of the store tests",
    variable: "METAGATE_REQUIRE_POSTGRES",
    enable: "apt-get install postgresql (or METAGATE_PG_BIN=<its bin folder>)",
};

/// The same, in a build without the `postgres` feature.
pub const POSTGRES_FEATURE: Suite = Suite {
    name: "the PostgreSQL backend of the store tests",
    variable: "METAGATE_REQUIRE_POSTGRES",
    enable: "cargo test --all-features",
};

/// `metagate mcp` against the real npm servers and the Python MCP SDK's client.
pub const MCP: Suite = Suite {
    name: "metagate mcp end to end",
    variable: "METAGATE_REQUIRE_MCP_DEPS",
    enable: "scripts/mcp-deps.sh",
};

/// The HTML report rendered in headless chromium.
pub const CHROMIUM: Suite = Suite {
    name: "the HTML report in headless chromium",
    variable: "METAGATE_REQUIRE_CHROMIUM",
    enable: "apt-get install chromium fonts-dejavu-core",
};

/// Ordinary work under `metagate run` (pytest, npm, git, a C compiler).
pub const RUN_DEPS: Suite = Suite {
    name: "ordinary work under metagate run",
    variable: "METAGATE_REQUIRE_RUN_DEPS",
    enable: "python3 -m pip install pytest (and apt-get install git npm gcc)",
};

/// The interactive flows at a real pseudo-terminal.
pub const TERMINAL: Suite = Suite {
    name: "the interactive flows at a pseudo-terminal",
    variable: "METAGATE_REQUIRE_TERMINAL",
    enable: "apt-get install tmux bsdutils",
};

/// What only root can set up (another user's files, the privilege canaries).
pub const ROOT: Suite = Suite {
    name: "the checks that need root (another user, setpriv)",
    variable: "METAGATE_REQUIRE_ROOT",
    enable: "run the tests as root, with util-linux's setpriv (as .ci/run does)",
};

/// Per suite name: why, the command, and the tests that skipped.
type Skipped = BTreeMap<&'static str, (String, &'static str, &'static str, BTreeSet<String>)>;

static SKIPPED: Mutex<Skipped> = Mutex::new(BTreeMap::new());
static AT_EXIT: Once = Once::new();

/// Whether skips of `suite` must fail here.
pub fn required(suite: &Suite) -> bool {
    std::env::var_os("METAGATE_REQUIRE_ALL").is_some() || std::env::var_os(suite.variable).is_some()
}

/// Records that the running test leaves `suite`'s part out because of `why`; panics instead
/// where the suite is required.
pub fn skip(suite: &Suite, why: &str) {
    assert!(
        !required(suite),
        "{}: {why} ({} or METAGATE_REQUIRE_ALL is set; to enable: {})",
        suite.name,
        suite.variable,
        suite.enable
    );
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let mut skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    skipped
        .entry(suite.name)
        .or_insert_with(|| {
            (
                why.to_string(),
                suite.enable,
                suite.variable,
                BTreeSet::new(),
            )
        })
        .3
        .insert(test);
    drop(skipped);
    AT_EXIT.call_once(|| {
        // SAFETY: `summary` is an `extern "C" fn()` that neither unwinds (it catches nothing
        // that could panic: a poisoned lock is taken as it is, a failed write ignored) nor
        // calls `exit`; `atexit` only stores its address.
        #[allow(unsafe_code)]
        unsafe {
            libc::atexit(summary);
        }
    });
}

/// The summary, as the process ends (after libtest's own result line).
extern "C" fn summary() {
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    if skipped.is_empty() {
        return;
    }
    let mut text = String::from(
        "\nSKIPPED here (these tests passed without running their part; .ci/run installs \
         everything and sets METAGATE_REQUIRE_ALL, where a skip fails):\n",
    );
    for (name, (why, enable, variable, tests)) in skipped.iter() {
        let first = tests.iter().next().map(String::as_str).unwrap_or_default();
        let more = match tests.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        text.push_str(&format!(
            "  {name}: {n} test{s} ({first}{more})\n    why: {why}\n    enable: {enable}  \
             ({variable}=1 makes this a failure)\n",
            n = tests.len(),
            s = if tests.len() == 1 { "" } else { "s" },
        ));
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}
