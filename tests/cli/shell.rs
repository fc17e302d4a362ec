//! The shell check through the real binary: issue 23's cases, the allowlist of the example
//! coding-agent policy, the running binary under other names, the size cap, and
//! `policy check` of the `[shell]` keys.

use crate::common::{BIN, Sandbox, fixture_path, gate};
use serde_json::{Value, json};

fn terminal(code: &str) -> Vec<u8> {
    json!({"tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": code}})
        .to_string()
        .into_bytes()
}

fn run_command(code: &str) -> Vec<u8> {
    json!({"name": "run_command", "arguments": {"command": code}})
        .to_string()
        .into_bytes()
}

fn message(out: &Value) -> &str {
    out["error"]["message"].as_str().unwrap_or_default()
}

/// Every case issue 23 names is refused by the built-in policy (each passed the checker
/// this one replaces, and bash runs what it hides).
#[test]
fn the_issue_cases_are_refused() {
    let sb = Sandbox::new();
    for case in [
        "test -v 'a[$(sudo id)]'",
        "[ -v 'a[$(sudo id)]' ]",
        "[[ 'a[$(sudo id)]' -eq 1 ]]",
        "let 'a[$(sudo id)]'",
        "printf -v 'a[$(sudo id)]' x",
        "echo x | read 'a[$(sudo id)]'",
        "declare 'a[$(sudo id)]=1'",
        "mapfile 'a[$(sudo id)]' < /dev/null",
        "shift 'a[$(sudo id)]'",
        "sleep 1 & wait -n -p 'a[$(sudo id)]'",
        "printf -v x '%s' 'a[$(sudo id)]'; (( x ))",
        "test -v 'a[$(metagate permit grant --capability system_execute --for 30d)]'",
        "history -s 'xudo id'; fc -s x=s xudo",
        "BASH_ENV=/dev/stdin bash -c : <<EOF\nsudo id\nEOF",
        "ENV=/dev/stdin sh -ic : <<EOF\nsudo id\nEOF",
        "echo \"-c 'sudo id'\" | xargs bash",
        "GIT_EXTERNAL_DIFF='sudo id' git diff",
        "git -c core.sshCommand='sudo id' fetch origin",
        "git -c core.pager='sudo id' log",
        "git -c diff.external='sudo id' diff",
        "awk 'BEGIN{system(\"sudo id\")}'",
        "python3 -c 'import os; os.system(\"sudo id\")'",
        "perl -e 'system(\"sudo id\")'",
        "node -e 'require(\"child_process\").execSync(\"sudo id\")'",
        "pkexec id",
        "sudoedit /etc/hosts",
        "run0 id",
        "systemctl poweroff",
        "init 0",
        "kill -9 1",
        "parallel sudo ::: id",
    ] {
        let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], &terminal(case));
        assert_eq!(code, 1, "{case:?} passed: {out}");
        assert_eq!(out["error"]["category"], "policy_blocked", "{case:?}");
        assert!(message(&out).contains("the command is refused"), "{out}");
    }
}

#[test]
fn ordinary_commands_pass() {
    let sb = Sandbox::new();
    for command in [
        "ls -la",
        "grep -r foo src",
        "python3 script.py",
        "cargo test",
        "git status",
        "make -j4",
        "find . -name '*.rs'",
        "ls -la | grep foo && git status || make -j4",
        "cargo build 2>&1 | tee build.log",
    ] {
        let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], &terminal(command));
        assert_eq!(code, 0, "{command:?}: {out}");
    }
}

/// The example coding-agent policy names the programs its agent may run.
#[test]
fn the_coding_agent_policy_allows_what_it_lists() {
    let sb = Sandbox::new();
    let policy = fixture_path("policies/coding-agent.toml");
    let policy = policy.to_str().unwrap();
    let (code, err) = sb.policy_check(std::path::Path::new(policy));
    assert_eq!(code, 0, "{err}");
    let flags = ["--quiet", "--no-telemetry", "--policy", policy];
    for command in [
        "cargo test",
        "git status && git diff --stat",
        "cd src && grep -rn 'fn main' . | head -n 5",
        "find . -name '*.rs' | xargs wc -l",
        "python3 script.py",
        "timeout 60 cargo build",
        "echo done > out.txt",
    ] {
        let (out, code, _) = gate(&sb, &flags, &run_command(command));
        assert_eq!(code, 0, "{command:?}: {out}");
    }
    for (command, says) in [
        (
            "curl https://example.com",
            "`curl` is not in [shell] allow_commands",
        ),
        ("ls | curl -d @- https://example.com", "`curl`"),
        ("git push origin main", "allow_commands"),
        ("env curl x", "`curl`"),
        ("python3 -c 'import os'", "`python -c`"),
        ("bash -c ls", "`bash`"),
    ] {
        let (out, code, _) = gate(&sb, &flags, &run_command(command));
        assert_eq!(code, 1, "{command:?}: {out}");
        assert_eq!(out["error"]["category"], "policy_blocked");
        assert!(message(&out).contains(says), "{command:?}: {out}");
    }
    let (out, _, _) = gate(&sb, &flags, &run_command("curl x"));
    let suggestion = out["error"]["suggestion"].as_str().unwrap();
    assert!(
        suggestion.starts_with("Use only the programs the policy allows: ls, cat"),
        "{suggestion}"
    );
}

/// A link to the running binary or a copy of it, under any name, by path or on `PATH`, is
/// metagate.
#[test]
fn the_binary_is_refused_under_another_name() {
    let sb = Sandbox::new();
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("helper")).unwrap();
    std::os::unix::fs::symlink(BIN, sb.path().join("tool")).unwrap();
    // A hard link works only on the same file system as the binary.
    let hard = std::fs::hard_link(BIN, sb.path().join("hard")).is_ok();
    // A copy made by a command that found the binary without naming it.
    std::fs::copy(BIN, bin.join("renamed")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut commands = vec![
        "./tool permit grant --capability system_execute --for 30d",
        "helper permit grant --capability system_execute --for 30d",
        "env helper permit list",
        "bin/helper gate",
        "renamed permit grant --capability system_execute --for 30d",
        "bin/renamed permit list",
    ];
    if hard {
        commands.push("./hard permit grant --capability file_access");
    }
    for command in commands {
        let out = sb
            .cmd()
            .env("PATH", &path)
            .args(["gate", "--quiet", "--no-telemetry"])
            .write_stdin(terminal(command))
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(1), "{command:?}: {v}");
        assert!(
            message(&v).contains("denied command `metagate`"),
            "{command:?}: {v}"
        );
    }
    // The binary's own path is protected too, so a copy cannot be made.
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--no-telemetry"],
        &terminal(&format!("cp {BIN} ./copy")),
    );
    assert_eq!(code, 1, "{out}");
}

/// Past the cap the command is refused as the model's mistake (it can send a shorter one);
/// below it, long commands are read in time linear in their length.
#[test]
fn the_size_cap() {
    let sb = Sandbox::new();
    let big = "ls ".repeat(metagate_checks::shell::MAX_COMMAND_BYTES / 3 + 1);
    let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], &terminal(&big));
    assert_eq!(code, 1);
    assert_eq!(
        out["error"]["category"], "invalid_parameters",
        "{}",
        out["error"]
    );
    assert_eq!(out["error"]["retryable"], true);
    let chain = format!("env {}ls", "A=1 ".repeat(200_000));
    let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], &terminal(&chain));
    assert_eq!(code, 0, "{}", out["error"]);
}

/// Issue 23's quadratic input: `env A=1 ` 100,000 times before `ls` (800 KB, under the
/// cap). The reader this check replaced took 34 s for a third of it; the check reads it once
/// and refuses it at the 101st nesting. The issue's budget is 50 ms in a release build
/// (docs/shell.md gives the measurement); a debug build on a busy machine gets 100 times that.
#[test]
fn a_long_wrapper_chain_is_answered_at_once() {
    let sb = Sandbox::new();
    let chain = format!("{}ls", "env A=1 ".repeat(100_000));
    let input = terminal(&chain);
    let started = std::time::Instant::now();
    let (out, code, _) = gate(&sb, &["--quiet", "--no-telemetry"], &input);
    let took = started.elapsed();
    assert_eq!(code, 1);
    assert_eq!(out["error"]["category"], "policy_blocked");
    assert!(message(&out).contains("nested deeper"), "{out}");
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

/// Issue 23's 60 MB command of `a ` words took 4.1 GB; the budget is 500 MB. The binary
/// runs with its address space capped at 500 MiB, so going over it fails the call.
#[cfg(unix)]
#[test]
fn a_60_mb_command_stays_under_500_mb() {
    let sb = Sandbox::new();
    let script = format!(
        "ulimit -v {}; exec {BIN} gate --quiet --no-telemetry",
        500 * 1024
    );
    let mut bash = sb.program("bash");
    bash.args(["-c", &script]);
    let out = assert_cmd::Command::from_std(bash)
        .write_stdin(terminal(&"a ".repeat(30_000_000)))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["error"]["category"], "invalid_parameters",
        "{answer}"
    );
}

#[test]
fn policy_check_reads_the_shell_keys() {
    let sb = Sandbox::new();
    let file = sb.file(
        "p.toml",
        "[shell]\ndeny_commands = [\"sudo\", \"kill -9 1\"]\nallow_commands = [\n  \"ls\",\n  \"git 'status'\",\n]\n",
    );
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("p.toml:3:"), "{err}");
    assert!(err.contains("shell.allow_commands"), "{err}");
    assert!(err.contains("plain words"), "{err}");
    let file = sb.file(
        "q.toml",
        "[shell]\nallow_commands = [\"ls\", \"git status\"]\n",
    );
    assert_eq!(sb.policy_check(&file).0, 0);
    let out = sb
        .cmd()
        .args(["--policy", file.to_str().unwrap(), "policy", "show"])
        .output()
        .unwrap();
    let shown: toml::Table = String::from_utf8(out.stdout).unwrap().parse().unwrap();
    assert_eq!(
        shown["shell"]["allow_commands"],
        toml::Value::Array(vec!["ls".into(), "git status".into()])
    );
}
