use std::path::{Path, PathBuf};

use super::*;

const CONSTRUCTS: &[&str] = &["$(", "`", "<(", ">(", "<<<"];
const DENIED: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "eval",
    "mkfs",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "pkexec",
    "sudoedit",
    "run0",
    "systemctl poweroff",
    "init 0",
    "kill -9 1",
    "parallel sudo",
    "metagate",
];
const PROTECTED: &[&str] = &[
    "/home/u/.local/state/metagate/metagate.db",
    "/home/u/.config/metagate/metagate.toml",
];
const VARS: &[&str] = &["METAGATE_DB", "METAGATE_POLICY"];

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A world where `./mg`, `/opt/mg` and `mg` on the path are the metagate binary, and
/// redirections may not write under `/etc`.
struct TestWorld;

impl World for TestWorld {
    fn redirect(&self, path: &str) -> Result<(), String> {
        if path.starts_with("/etc") || path.contains(".env") {
            Err("it is outside the root or denied ([paths])".to_string())
        } else {
            Ok(())
        }
    }
    fn is_own_binary(&self, command: &[u8]) -> bool {
        matches!(command, b"./mg" | b"/opt/mg" | b"mg")
    }
}

struct Setup {
    constructs: Vec<String>,
    denied: Vec<CommandPattern>,
    allowed: Option<Vec<CommandPattern>>,
    protected: Protected,
}

impl Setup {
    fn new(allowed: Option<&[&str]>) -> Setup {
        let paths: Vec<PathBuf> = PROTECTED.iter().map(PathBuf::from).collect();
        Setup {
            constructs: strings(CONSTRUCTS),
            denied: patterns(DENIED).unwrap(),
            allowed: allowed.map(|a| patterns(a).unwrap()),
            protected: Protected::new(&paths, &strings(VARS), Some(Path::new("/home/u"))),
        }
    }

    fn check(&self, command: &str) -> Option<Finding> {
        let rules = ShellRules {
            constructs: &self.constructs,
            denied: &self.denied,
            allowed: self.allowed.as_deref(),
            protected: &self.protected,
            world: &TestWorld,
        };
        check(command, &rules)
    }
}

fn default_check(command: &str) -> Option<Finding> {
    Setup::new(None).check(command)
}

#[track_caller]
fn expect_pass(command: &str) {
    if let Some(f) = default_check(command) {
        panic!("{command:?} was refused: {}", f.rule());
    }
}

#[track_caller]
fn expect_refused(command: &str) -> Finding {
    match default_check(command) {
        Some(f) => f,
        None => panic!("{command:?} passed"),
    }
}

/// Every case issue 23 names: each passed the denylist reader this check replaces, and
/// bash runs what it hides.
pub(super) const ISSUE_CASES: &[&str] = &[
    "test -v 'a[$(sudo id)]'",
    "[ -v 'a[$(sudo id)]' ]",
    "[[ -v 'a[$(sudo id)]' ]]",
    "[[ 'a[$(sudo id)]' -eq 1 ]]",
    "let 'a[$(sudo id)]'",
    "printf -v 'a[$(sudo id)]' x",
    "echo x | read 'a[$(sudo id)]'",
    "declare 'a[$(sudo id)]=1'",
    "export 'a[$(sudo id)]=1'",
    "mapfile 'a[$(sudo id)]' < /dev/null",
    "getopts a 'a[$(sudo id)]' -a",
    "shift 'a[$(sudo id)]'",
    "return 'a[$(sudo id)]'",
    "exit 'a[$(sudo id)]'",
    "x=1; echo ${x:'a[$(sudo id)]'}",
    "sleep 1 & wait -n -p 'a[$(sudo id)]'",
    "printf -v x '%s' 'a[$(sudo id)]'; (( x ))",
    "test -v 'a[$(metagate permit grant --capability system_execute --for 30d --reason x)]'",
    "history -s 'xudo id'; fc -s x=s xudo",
    "BASH_ENV=/dev/stdin bash -c : <<EOF\nsudo id\nEOF",
    "BASH_ENV=/proc/self/fd/0 bash -c : <<EOF\nsudo id\nEOF",
    "env BASH_ENV=/dev/stdin bash -c : <<EOF\nsudo id\nEOF",
    "export BASH_ENV=/dev/stdin; bash -c : <<EOF\nsudo id\nEOF",
    "ENV=/dev/stdin sh -ic : <<EOF\nsudo id\nEOF",
    "ENV=/dev/stdin dash -i -c : <<EOF\nsudo id\nEOF",
    "echo \"-c 'sudo id'\" | xargs bash",
    "GIT_EXTERNAL_DIFF='sudo id' git diff",
    "git -c core.sshCommand='sudo id' fetch origin",
    "git -c core.pager='sudo id' log",
    "git -c diff.external='sudo id' diff",
    "awk 'BEGIN{system(\"sudo id\")}'",
    "python3 -c 'import os; os.system(\"sudo id\")'",
    "perl -e 'system(\"sudo id\")'",
    "node -e 'require(\"child_process\").execSync(\"sudo id\")'",
    "./mg permit grant --capability system_execute",
    "pkexec id",
    "sudoedit /etc/hosts",
    "run0 id",
    "systemctl poweroff",
    "init 0",
    "kill -9 1",
    "parallel sudo ::: id",
];

#[test]
fn issue_cases_are_refused() {
    for case in ISSUE_CASES {
        let finding = expect_refused(case);
        assert!(!finding.is_too_large(), "{case}");
    }
}

/// Ordinary work passes, alone, in pipelines and in lists.
pub(super) const ORDINARY: &[&str] = &[
    "ls -la",
    "grep -r foo src",
    "python3 script.py",
    "cargo test",
    "git status",
    "make -j4",
    "find . -name '*.rs'",
    "ls -la | grep foo | wc -l",
    "cargo build && cargo test",
    "git status && git diff --stat",
    "make -j4 || echo failed",
    "find . -name '*.rs' | xargs wc -l",
    "cd src && ls",
    "python3 script.py --n 5 > out.txt 2>&1",
    "grep -rn 'fn main' src | head -n 5",
    "git log --oneline -n 10",
    "echo done",
    "echo \"Done!\"",
    "echo $HOME ${USER} ${LANG:-C}",
    "ls *.rs src/*.rs",
    "mkdir -p build/{debug,release}",
    "cat <<'EOF' > notes.txt\n$(not run) `nor this`\nEOF",
    "cat <<EOF\nhello $USER\nEOF",
    "if [ -f Cargo.toml ]; then cargo build; else echo none; fi",
    "for f in *.rs; do wc -l \"$f\"; done",
    "while false; do :; done",
    "( cd src && ls ) | sort",
    "{ echo a; echo b; } > out.txt",
    "export RUST_LOG=debug; cargo run",
    "RUST_BACKTRACE=1 cargo test -- --nocapture",
    "sed -i 's/foo/bar/g' src/main.rs",
    "awk '{print $1}' file.txt",
    "find . -name '*.tmp' -exec rm {} +",
    "find . -type f -exec grep -l foo {} \\;",
    "timeout 10 cargo test",
    "env LANG=C sort file.txt",
    "nohup python3 server.py > server.log 2>&1 &",
    "git commit -m 'fix: a (b)'",
    "python3 -m pytest -x tests/",
    "node build.js",
    "[ -d target ] || mkdir target",
    "test -n \"$x\" || echo empty",
    "printf '%s\\n' a b",
    "command -v cargo",
    "set -euo pipefail; ls",
    "ls \\\n  -la",
    "echo a # a comment with $(stuff)",
    "docker ps --format '{{.Names}}'",
    "curl -s https://example.com | head",
    "xargs -I {} echo {} < list.txt",
    "git -c color.ui=always log -1",
    "git config user.name 'A B'",
    "tar czf out.tgz src",
    "echo $'tab\\there'",
    "! grep -q x file",
    "time -p ls",
];

#[test]
fn ordinary_commands_pass() {
    for command in ORDINARY {
        expect_pass(command);
    }
}

/// The old denylist reader passed every case of the issue (run while it still existed).
#[test]
fn issue_cases_passed_the_old_checker() {
    use crate::shellcheck as old;
    let constructs = strings(CONSTRUCTS);
    let words = strings(&[
        "sudo", "su", "doas", "eval", "mkfs", "shutdown", "reboot", "halt", "poweroff", "metagate",
    ]);
    let paths: Vec<PathBuf> = PROTECTED.iter().map(PathBuf::from).collect();
    let protected = old::Protected::new(&paths, &strings(VARS), Some(Path::new("/home/u")));
    let rules = old::ShellRules {
        constructs: &constructs,
        words: &words,
        protected: &protected,
    };
    let mut refused = Vec::new();
    for case in ISSUE_CASES {
        match old::check(case, &rules) {
            None => println!("old passes: {case:?}"),
            Some(f) => refused.push(format!("{case:?}: {}", f.rule())),
        }
    }
    for r in &refused {
        println!("old refuses: {r}");
    }
    assert!(refused.is_empty(), "{refused:#?}");
}
