//! The README as a newcomer reads it: short enough to read, a row in its commands table for
//! every command the binary has (a new command without one fails here), and the nightly lines
//! it tells them to install doing what it says.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{BIN, Sandbox};

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The README's length that still reads in one sitting.
const MAX_README_LINES: usize = 350;

#[test]
fn the_readme_stays_short() {
    let lines = readme().lines().count();
    assert!(
        lines <= MAX_README_LINES,
        "README.md has {lines} lines (at most {MAX_README_LINES}): move detail to docs/"
    );
}

/// The names under `Commands:` in `metagate ARGS --help`, `help` aside.
fn subcommands(args: &[&str]) -> Vec<String> {
    let sb = Sandbox::new();
    let out = sb.cmd().args(args).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let help = String::from_utf8(out.stdout).unwrap();
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command and subcommand `--help` lists, as `gate` or `db prune`.
fn binary_commands() -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for command in subcommands(&[]) {
        for sub in subcommands(&[&command]) {
            all.insert(format!("{command} {sub}"));
        }
        all.insert(command);
    }
    all
}

/// The commands the first cell of each row of the README's commands table names: each code
/// span is `metagate COMMAND [SUB]…` or, after the first, `COMMAND [SUB]…`, where the words
/// after the command that name its subcommands may be alternatives (`[grant\|list\|revoke]`).
fn readme_commands(readme: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let section = readme
        .split("\n## Commands and documentation\n")
        .nth(1)
        .expect("README.md has a \"Commands and documentation\" section");
    let section = section.split("\n## ").next().unwrap();
    let mut named = BTreeSet::new();
    let mut rows = 0;
    for row in section.lines().filter(|l| l.starts_with("| `metagate ")) {
        rows += 1;
        let cell = row.replace("\\|", "\u{1}");
        let first = cell.split('|').nth(1).unwrap();
        for span in first.split('`').skip(1).step_by(2) {
            let span = span.strip_prefix("metagate ").unwrap_or(span);
            let mut words = span.split_whitespace();
            let Some(command) = words.next() else {
                continue;
            };
            named.insert(command.to_string());
            for word in words {
                for alternative in word.split(['[', ']', '\u{1}', ',']) {
                    let sub = format!("{command} {alternative}");
                    if known.contains(&sub) {
                        named.insert(sub);
                    }
                }
            }
        }
    }
    assert!(rows > 5, "no commands table found in README.md");
    named
}

/// The README's commands table names every command and subcommand the binary's help lists.
#[test]
fn the_readme_names_every_command() {
    let known = binary_commands();
    for expected in ["gate", "mcp", "db prune", "policy which", "tools check"] {
        assert!(known.contains(expected), "{expected}: {known:?}");
    }
    let named = readme_commands(&readme(), &known);
    let missing: Vec<&String> = known.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "README.md's commands table has no row naming {missing:?}: add one (`metagate COMMAND` \
         in the first cell, what it does, the docs page)"
    );
    let unknown: Vec<&String> = named
        .iter()
        .filter(|n| !n.contains(' ') && !known.contains(*n))
        .collect();
    assert!(
        unknown.is_empty(),
        "README.md names commands the binary lacks: {unknown:?}"
    );
}

/// The table reader is not fooled: a command left out of a table is found missing.
#[test]
fn a_command_without_a_row_is_found_missing() {
    let known = binary_commands();
    let without_db = readme()
        .lines()
        .filter(|l| !l.starts_with("| `metagate db prune"))
        .collect::<Vec<_>>()
        .join("\n");
    let named = readme_commands(&without_db, &known);
    assert!(!named.contains("db prune"));
    assert!(named.contains("db info") && named.contains("permit revoke"));
}

/// The lines of the README's block that starts with `first_line`.
fn block_after(readme: &str, first_line: &str) -> Vec<String> {
    let at = readme
        .find(first_line)
        .unwrap_or_else(|| panic!("README.md has no {first_line:?}"));
    readme[at..]
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .map(str::to_string)
        .collect()
}

/// The cron line and the systemd unit the README gives run from `$HOME`, where no project's
/// `metagate.toml` is found: they name the agent's policy, so the report and the patch are
/// made under it, not under the built-in policy. Run here as cron and systemd would run them.
#[test]
fn the_nightly_lines_run_under_the_agents_policy() {
    let text = readme();
    let cron = text
        .lines()
        .find(|l| l.starts_with("15 3 * * * "))
        .expect("README.md's cron line");
    // Five schedule fields, then the command cron gives `sh`, with `\%` read as `%`.
    let command = cron.splitn(6, ' ').nth(5).unwrap().replace("\\%", "%");
    let service = block_after(&text, "# ~/.config/systemd/user/metagate-evaluate.service");
    let exec = service
        .iter()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("the service's ExecStart");
    // systemd's %h is the home folder; it runs the command without a shell.
    let exec = exec.replace("%h", "$HOME");
    for (how, line) in [("cron", command), ("systemd", exec)] {
        let sb = Sandbox::new();
        let home = sb.path().display().to_string();
        let bin = format!("{home}/.cargo/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(BIN, format!("{bin}/metagate")).unwrap();
        let policy = sb.file(
            "agent/metagate.toml",
            "[tools.response.aliases]\nsay = \"text\"\n",
        );
        // The store the agent's gate has been writing to all day.
        let made = sb.cmd().arg("record").write_stdin("").output().unwrap();
        assert_eq!(made.status.code(), Some(0));
        // The agent's folder is not where cron runs: only --policy finds its policy.
        let out = sb
            .program("sh")
            .args(["-c", &line])
            .env("HOME", sb.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{how}: {line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let patch = std::fs::read_to_string(sb.path().join("metagate-aliases.toml"))
            .unwrap_or_else(|e| panic!("{how}: no patch: {e}"));
        let header = patch.lines().next().unwrap();
        assert!(
            header.ends_with(&format!("under {}.", policy.display())),
            "{how}: {header}"
        );
        assert!(
            !patch.contains("under the built-in policy"),
            "{how}: {patch}"
        );
    }
}

/// The CI job docs/lint.md gives names no placeholder, builds metagate only when the cache of
/// the pinned version misses, and lints without `--policy metagate.toml` (which would end a
/// repository without one in exit 2: lint finds the policy, or says it uses the built-in one).
#[test]
fn the_ci_job_builds_once_per_version_and_needs_no_policy_file() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lint.md"))
        .unwrap();
    let job: Vec<String> = block_after(&page, "name: traces");
    let text = job.join("\n");
    for placeholder in ["METAGATE_GIT", "your-org", "example.com"] {
        assert!(!text.contains(placeholder), "{placeholder}: {text}");
    }
    // Each step as its lines: the one that builds must be skipped on a cache hit.
    let steps: Vec<String> = text.split("\n      - ").map(str::to_string).collect();
    let build: Vec<&String> = steps
        .iter()
        .filter(|s| s.contains("cargo install"))
        .collect();
    assert_eq!(build.len(), 1, "{text}");
    assert!(
        build[0].contains("if: steps.cache.outputs.cache-hit != 'true'"),
        "{}",
        build[0]
    );
    let cache = steps
        .iter()
        .find(|s| s.starts_with("uses: actions/cache@"))
        .expect("a cache step");
    assert!(cache.contains("path: ~/.cargo/bin/metagate") && cache.contains("key: metagate-"));
    let lints: Vec<&String> = steps
        .iter()
        .filter(|s| s.contains("metagate lint"))
        .collect();
    assert_eq!(lints.len(), 2, "{text}");
    assert!(lints.iter().all(|s| !s.contains("--policy")), "{text}");
}

/// docs/mcp.md's client snippets are valid JSON (a reader pastes them whole), and Claude
/// Desktop's cover the three systems it runs on: Linux, macOS and Windows (through WSL).
#[test]
fn the_desktop_client_snippets_parse_and_cover_each_system() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/mcp.md")).unwrap();
    let blocks: Vec<&str> = page
        .split("```json\n")
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap())
        .collect();
    let mut commands = Vec::new();
    for block in &blocks {
        let doc: serde_json::Value =
            serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}:\n{block}"));
        if let Some(servers) = doc["mcpServers"].as_object() {
            for server in servers.values() {
                commands.push(server["command"].as_str().unwrap().to_string());
            }
        }
    }
    for (system, command) in [
        ("Linux", "/home/me/.cargo/bin/metagate"),
        ("macOS", "/Users/me/.cargo/bin/metagate"),
        ("Windows", "C:\\Windows\\System32\\wsl.exe"),
    ] {
        assert!(
            commands.iter().any(|c| c == command),
            "{system}: {commands:?}"
        );
    }
}
