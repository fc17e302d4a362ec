//! Issue 39's cases for the shell check, as tables and generated spellings: programs by what
//! they resolve to, `kill` and `systemctl` by meaning, writes into `.git`, containers.

use super::tests::{Setup, default_check, expect_pass, expect_refused};
use super::*;

/// Issue 39's cases for the shell check: each ran a denied program, a denied `kill` or
/// `systemctl`, wrote into `.git`, or ran a command in a container unchecked.
const ISSUE_39_CASES: &[&str] = &[
    "editor -es -c '!sudo id' -c 'qa!'",
    "vim.basic -es -c '!sudo id' -c 'qa!'",
    "vimdiff -es -c '!sudo id' -c 'qa!'",
    "sensible-editor x",
    "tclsh8.6 x.tcl",
    "perl5.36-x86_64-linux-gnu -e 'exec q(sudo), q(id)'",
    "python3.11-dbg -c 'import os'",
    "exec command sudo id",
    "env command sudo id",
    "find . -exec command sudo id \\;",
    "/usr/bin/command sudo id",
    "py -c 'import os'",
    "kill -SIGKILL -1",
    "kill -s 9 -1",
    "kill -n 9 -1",
    "kill -sKILL -1",
    "kill -kill -1",
    "kill -9 -- -1",
    "kill -9 ' -1'",
    "kill -9 -01",
    "kill -KILL 999999 -1",
    "/bin/kill -SIGKILL -1",
    "env kill -s KILL -1",
    "systemctl --no-block poweroff",
    "systemctl -q reboot",
    "systemctl start poweroff.target",
    "systemctl isolate runlevel6.target",
    "cp fsm.cfg .git/config && git status --short",
    "cp hook .git/hooks/pre-commit && git commit -m x",
    "echo '[core] fsmonitor = x' >> .git/config",
    "tee .git/info/attributes < a",
    "cd .git/hooks && cp ../../hook pre-commit",
    "cp hook .gi?/hooks/pre-commit",
    "git -c core.fsmonitor=x status",
    "git -c core.hooksPath=h commit",
    "git -c core.sshCommand=x fetch",
    "git -c core.pager=x log",
    "GIT_SSH_COMMAND=x git fetch",
    "GIT_EXTERNAL_DIFF=x git diff",
    "kubectl exec x -- sudo id",
    "kubectl exec -it x -- sudo id",
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
    "docker compose -f dev.yml run --rm web sh",
    "docker-compose exec -T web sudo id",
    "docker compose run -v /:/host web id",
    "kubectl debug node/n -it --image=busybox",
    "ssh host sudo id",
    "nsenter -t 1 -m sh",
    "chroot / sudo id",
];

/// Ordinary commands of the same shapes, which still pass.
const ISSUE_39_ORDINARY: &[&str] = &[
    "kill %1",
    "kill -TERM $pid",
    "kill -9 %1",
    "kill -HUP 1234",
    "kill -l",
    "systemctl status nginx",
    "systemctl restart nginx",
    "systemctl status \"$unit\"",
    "git status",
    "git -c color.ui=always log",
    "cp a.txt b.txt",
    "cp -r src backup",
    "cat .git/config",
    "ls .git",
    "echo x > .gitignore",
    "cp ci.yml .github/workflows/ci.yml",
    "docker ps",
    "docker run --rm alpine echo hi",
    "docker run --rm -v data:/data -v ./src:/src alpine ls /src",
    "docker exec -it c ls",
    "kubectl get pods",
    "kubectl exec x -- ls",
    "docker compose up -d",
    "docker compose exec web ls",
    "docker compose logs -f web",
    "vim --version",
    "ls -l",
    "python3 -V",
];

#[test]
fn issue_39_cases_are_refused() {
    for case in ISSUE_39_CASES {
        let refused = default_check(case);
        assert!(refused.is_some(), "{case:?} passed");
    }
}

#[test]
fn issue_39_cases_are_refused_in_the_allowlist_mode_too() {
    let allowed = [
        "cp",
        "cd",
        "tee",
        "git",
        "echo",
        "kubectl",
        "docker",
        "podman",
        "find",
        "env",
        "kill",
        "/bin/kill",
        "systemctl",
    ];
    let setup = Setup::new(Some(&allowed));
    for case in ISSUE_39_CASES {
        assert!(setup.check(case).is_some(), "{case:?} passed the allowlist");
    }
}

#[test]
fn issue_39_ordinary_commands_pass() {
    for case in ISSUE_39_ORDINARY {
        expect_pass(case);
    }
    // Only a lone `--version` or `--help` runs no code.
    for case in [
        "vim",
        "vim --version x",
        "bash --help -c x",
        "tclsh8.6 --version x",
    ] {
        expect_refused(case);
    }
}

mod issue_39_properties {
    use super::*;
    use proptest::prelude::*;

    /// Spellings of `SIGKILL` that bash's `kill` and `/bin/kill` accept.
    fn kill_signal() -> impl Strategy<Value = Vec<String>> {
        let name = prop_oneof![
            Just("KILL"),
            Just("kill"),
            Just("Kill"),
            Just("SIGKILL"),
            Just("sigkill"),
            Just("9"),
            Just("09"),
            Just(" 9")
        ];
        (0..5usize, name).prop_map(|(form, n)| match form {
            0 => vec![format!("-{}", n.trim_start())],
            1 => vec!["-s".to_string(), n.to_string()],
            2 => vec!["-n".to_string(), n.to_string()],
            3 if n.trim().bytes().all(|b| b.is_ascii_digit()) => vec![format!("-n{}", n.trim())],
            3 | 4 => vec![format!("--signal={}", n.trim())],
            _ => unreachable!(),
        })
    }

    /// Spellings of process -1 among other processes.
    fn minus_one() -> impl Strategy<Value = Vec<String>> {
        let one = prop_oneof![
            Just("-1"),
            Just("-01"),
            Just("' -1'"),
            Just("'-1 '"),
            Just("-0001")
        ];
        (
            proptest::collection::vec(1000u32..99999, 0..3),
            one,
            any::<bool>(),
        )
            .prop_map(|(others, one, dashes)| {
                let mut words: Vec<String> = Vec::new();
                if dashes {
                    words.push("--".to_string());
                }
                words.extend(others.iter().map(u32::to_string));
                words.push(one.to_string());
                words
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Every spelling of `kill -9 -1`, by the builtin, `/bin/kill` or through `env`, is
        /// refused; the same with `TERM` passes.
        #[test]
        fn every_spelling_of_kill_9_minus_1_is_refused(
            signal in kill_signal(),
            pids in minus_one(),
            runner in prop_oneof![Just(""), Just("/bin/"), Just("env "), Just("command ")],
        ) {
            let command = format!("{runner}kill {} {}", signal.join(" "), pids.join(" "));
            prop_assert!(default_check(&command).is_some(), "{} passed", command);
            let term = format!("{runner}kill -TERM {}", pids.join(" "));
            prop_assert!(default_check(&term).is_none(), "{} refused", term);
        }

        /// `systemctl`'s flags anywhere, the verb or its target: refused.
        #[test]
        fn systemctl_poweroff_is_refused_wherever_it_stands(
            before in proptest::collection::vec(prop_oneof![Just("--no-block"), Just("-q"), Just("--force"), Just("-i"), Just("--no-wall")], 0..3),
            after in proptest::collection::vec(prop_oneof![Just("--no-block"), Just("-q"), Just("--force")], 0..2),
            form in prop_oneof![Just("poweroff"), Just("start poweroff.target"), Just("isolate runlevel0.target"), Just("reboot"), Just("start systemd-reboot.service")],
        ) {
            let command = format!("systemctl {} {form} {}", before.join(" "), after.join(" "));
            prop_assert!(default_check(&command).is_some(), "{} passed", command);
            let status = format!("systemctl {} status nginx {}", before.join(" "), after.join(" "));
            prop_assert!(default_check(&status).is_none(), "{} refused", status);
        }
    }
}

mod resolved_properties {
    use super::*;
    use proptest::prelude::*;

    /// Every command word resolves to the script `script` (read with [`read_forwarder`]).
    struct ScriptWorld(Option<Forward>);

    impl World for ScriptWorld {
        fn redirect(&self, _path: &str) -> Result<(), Refusal> {
            Ok(())
        }
        fn is_own_binary(&self, _command: &[u8]) -> bool {
            false
        }
        fn program(&self, command: &[u8]) -> Option<Resolved> {
            Some(Resolved {
                name: command
                    .rsplit(|b| *b == b'/')
                    .next()
                    .unwrap_or(command)
                    .into(),
                forwards: self.0.clone(),
            })
        }
    }

    const WORDS: &[&str] = &[
        "kill",
        "-9",
        "-1",
        "-s",
        "KILL",
        "--",
        "systemctl",
        "poweroff",
        "start",
        "poweroff.target",
        "docker",
        "run",
        "exec",
        "-v",
        "/:/h",
        "--privileged",
        "alpine",
        "kubectl",
        "compose",
        "cp",
        "x",
        ".git/config",
        "cd",
        ".git",
        "env",
        "command",
        "sudo",
        "vim.basic",
        "tclsh8.6",
        "--version",
        "$x",
        "\"$x\"",
        "'-1'",
        ";",
        "|",
        "&&",
        "\\;",
        "find",
        ".",
        "-exec",
        "{}",
        "xargs",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Whatever the words and the script, the check answers in both modes (no panic),
        /// the same twice; and a script forwarding to `command` makes `x sudo id` refused.
        #[test]
        fn commands_read_with_resolved_programs_are_answered(
            words in proptest::collection::vec(proptest::sample::select(WORDS), 0..14),
            script in proptest::collection::vec(any::<u8>(), 0..80),
            forwarding in proptest::sample::select(&["builtin command", "exec command", "command", "builtin cd", "exec vim", "sudo"][..]),
        ) {
            let mut text = b"#!/bin/sh\n".to_vec();
            text.extend_from_slice(forwarding.as_bytes());
            text.extend_from_slice(b" \"$@\"\n");
            for head in [&script[..], &text[..]] {
                let world = ScriptWorld(read_forwarder(head));
                let base = Setup::new(None);
                let allowed = patterns(&["kill", "docker", "cp", "git"]).unwrap();
                for allowed in [None, Some(&allowed[..])] {
                    let rules = ShellRules {
                        constructs: &base.constructs,
                        denied: &base.denied,
                        allowed,
                        protected: &base.protected,
                        world: &world,
                    };
                    let command = words.join(" ");
                    prop_assert_eq!(check(&command, &rules), check(&command, &rules));
                    if world.0.as_ref().is_some_and(|f| &f.name[..] == b"command") {
                        prop_assert!(check("x sudo id", &rules).is_some());
                    }
                }
            }
        }
    }
}
