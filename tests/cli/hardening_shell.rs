//! Issue 39's shell cases through the real binary, in both modes (the built-in policy's
//! deny lists, and an `allow_commands` list naming every program the cases use but the
//! denied ones): denied programs under other names (links followed through the alternatives
//! system, version suffixes, a forwarding script like Fedora's `/usr/bin/command`), `kill`
//! and `systemctl` spelled every way they accept, writes into `.git`, `git` settings and
//! variables that run programs, and commands run in containers and pods. Every case passed
//! the binary before issue 39 in the default mode except those marked as regressions; the
//! ordinary commands of the same shapes still pass (`kill -TERM $pid` and `vim --version`
//! were refused before).

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Sandbox;

/// Refused in both modes. The names under `bin/` are the sandbox's own links ([`programs`]).
const REFUSED: &[&str] = &[
    // Programs by the file they resolve to.
    "editor -es -c '!sudo id' -c 'qa!'",
    "vimdiff -es -c '!sudo id' -c 'qa!'",
    "vim.basic -es -c '!sudo id' -c 'qa!'",
    "notes -es -c '!sudo id' -c 'qa!'",
    "sensible-editor -es -c '!sudo id'",
    "tclsh8.6 script.tcl",
    "perl5.36-x86_64-linux-gnu -e 'exec q(sudo), q(id)'",
    "python3.11-dbg -c 'import os'",
    "exec command sudo id",
    "env command sudo id",
    "find . -exec command sudo id \\;",
    "bin/command sudo id",
    // kill, by meaning.
    "kill -SIGKILL -1",
    "kill -s 9 -1",
    "kill -n 9 -1",
    "kill -sKILL -1",
    "kill -kill -1",
    "kill -9 -- -1",
    "kill -9 ' -1'",
    "kill -9 -01",
    "kill -KILL 999999 -1",
    "/bin/kill --signal=KILL -1",
    "env kill -s SIGKILL 1",
    // systemctl and init, verbs and targets anywhere.
    "systemctl --no-block poweroff",
    "systemctl -q reboot",
    "systemctl start poweroff.target",
    "systemctl isolate runlevel6.target",
    "telinit --no-wall 0",
    // Writes into .git.
    "cp fsm.cfg .git/config && git status --short",
    "cp hook .git/hooks/pre-commit && git commit -m x",
    // A regression: the path rules refused this redirection before.
    "cat fsm.cfg >> .git/config",
    "tee .git/info/attributes < attrs",
    "cd .git/hooks && cp ../../hook pre-commit",
    "cp hook ./.gi?/hooks/pre-commit",
    // git settings and variables that run programs (regressions: refused before too).
    "git -c core.fsmonitor=./x status",
    "git -c core.hooksPath=h commit -m x",
    "git -c core.sshCommand=x fetch",
    "git -c core.pager=x log",
    "GIT_SSH_COMMAND=x git fetch",
    "GIT_EXTERNAL_DIFF=x git diff",
    // Containers and pods.
    "kubectl exec x -- sudo id",
    "kubectl -n prod exec -it x -- sudo id",
    "docker exec c sudo id",
    "docker exec -it c sh",
    "docker run alpine sudo id",
    "docker run --privileged alpine id",
    "docker run -v /:/host alpine id",
    "docker run --pid=host alpine id",
    "docker run --cap-add SYS_ADMIN alpine id",
    "docker run --mount type=bind,source=/,target=/h alpine id",
    "podman run --rm --network host alpine id",
    "docker container run -it alpine sh",
    "docker compose exec web sudo id",
    "docker compose run -v /:/host web id",
    "kubectl debug node/n -it --image=busybox",
    // Remote and namespace runners (regressions: refused whole before too).
    "ssh host sudo id",
    "nsenter -t 1 -m sh",
    "chroot / sudo id",
];

/// Ordinary commands of the same shapes: they pass the default mode.
const PASSED: &[&str] = &[
    "kill %1",
    "kill -TERM $pid",
    "kill -9 %1",
    "kill -HUP 1234",
    "systemctl status nginx",
    "systemctl restart nginx",
    "git status",
    "git -c color.ui=always log",
    "cat .git/config",
    "cp a.txt b.txt",
    "echo x > .gitignore",
    "docker ps",
    "docker run --rm alpine echo hi",
    "docker run --rm -v data:/data alpine ls /data",
    "kubectl get pods",
    "kubectl exec x -- ls",
    "docker compose up -d",
    "vim --version",
];

/// The allowlist mode's policy: every program the cases name, but the denied ones and the
/// editors (an operator who lists an editor lets it run code).
const ALLOWLIST: &str = r#"
[shell]
allow_commands = ["cp", "cd", "cat", "tee", "git", "echo", "kubectl", "docker", "podman",
  "find", "env", "kill", "/bin/kill", "systemctl", "telinit", "ls"]
"#;

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `bin/` folder first on `PATH`, laid out as Debian's alternatives and Fedora's bash
/// lay it out: `editor` and `vimdiff` lead to `vim.basic` through `alternatives/`, `notes`
/// is one more link to it, and `command` is Fedora's forwarding script.
fn programs(sb: &Sandbox) -> PathBuf {
    let bin = sb.path().join("bin");
    let alternatives = sb.path().join("alternatives");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&alternatives).unwrap();
    executable(&bin.join("vim.basic"), "\x7fELF not really\n");
    for name in ["editor", "vimdiff"] {
        symlink(bin.join("vim.basic"), alternatives.join(name)).unwrap();
        symlink(alternatives.join(name), bin.join(name)).unwrap();
    }
    symlink(bin.join("vim.basic"), bin.join("notes")).unwrap();
    executable(
        &bin.join("command"),
        "#!/usr/bin/sh\nbuiltin command \"$@\"\n",
    );
    bin
}

/// Every command through `gate --jsonl` at once: whether each was refused (as
/// `policy_blocked`).
fn refused(sb: &Sandbox, bin: &Path, policy: Option<&str>, commands: &[&str]) -> Vec<bool> {
    let input: String = commands
        .iter()
        .map(|c| {
            let call = json!({
                "tool_name": "code_execution_tool",
                "tool_args": { "runtime": "terminal", "code": c },
            });
            format!("{call}\n")
        })
        .collect();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut cmd = sb.cmd();
    cmd.env("PATH", path);
    if let Some(text) = policy {
        sb.file("allow.toml", text);
        cmd.args(["--policy", "allow.toml"]);
    }
    let out = cmd
        .args(["gate", "--jsonl", "--no-telemetry", "--quiet"])
        .write_stdin(input)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(
        lines.len(),
        commands.len(),
        "one answer per call: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines
        .iter()
        .zip(commands)
        .map(|(line, c)| match line.get("error") {
            Some(error) => {
                assert_eq!(error["category"], "policy_blocked", "{c}: {line}");
                true
            }
            None => false,
        })
        .collect()
}

#[test]
fn issue_39_shell_cases_are_refused_in_both_modes() {
    let sb = Sandbox::new();
    let bin = programs(&sb);
    for (mode, policy) in [("default", None), ("allowlist", Some(ALLOWLIST))] {
        let verdicts = refused(&sb, &bin, policy, REFUSED);
        let passed: Vec<&&str> = REFUSED
            .iter()
            .zip(&verdicts)
            .filter(|(_, refused)| !**refused)
            .map(|(c, _)| c)
            .collect();
        assert!(passed.is_empty(), "{mode} mode passed {passed:#?}");
    }
}

#[test]
fn ordinary_commands_of_the_same_shapes_pass() {
    let sb = Sandbox::new();
    let bin = programs(&sb);
    let verdicts = refused(&sb, &bin, None, PASSED);
    let refused: Vec<&&str> = PASSED
        .iter()
        .zip(&verdicts)
        .filter(|(_, refused)| **refused)
        .map(|(c, _)| c)
        .collect();
    assert!(refused.is_empty(), "refused {refused:#?}");
}
