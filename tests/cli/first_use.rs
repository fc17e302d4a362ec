//! A new user's first ten minutes: where their experiments go, what a store error tells them
//! to do, who a grant is by when `$USER` is unset, and what a misspelt command suggests.

use std::process::Output;

use serde_json::Value;

use crate::common::Sandbox;

const CALL: &str = "{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"hi\"}}\n";

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The note that the default store was made, and how to keep experiments out of it.
const CREATED: &str = "metagate: note: created the telemetry store";

/// The first command that makes the default store says so, once, with the ways to keep
/// experiments out; a store named by `--db` or `$METAGATE_DB` is the user's choice and is
/// not announced.
#[test]
fn the_default_store_is_announced_once_when_made() {
    for first in [&["gate"][..], &["gate", "--jsonl"], &["record"]] {
        let sb = Sandbox::new();
        let input = if first[0] == "record" { "" } else { CALL };
        let out = sb.cmd().args(first).write_stdin(input).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{first:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.matches(CREATED).count(), 1, "{first:?}: {err}");
        let note: Vec<&str> = err
            .lines()
            .skip_while(|l| !l.starts_with(CREATED))
            .take_while(|l| l.starts_with(CREATED) || l.starts_with("  "))
            .collect();
        let path = sb.db().display().to_string();
        assert!(note.iter().any(|l| l.trim() == path), "{first:?}: {err}");
        let words = note.join(" ");
        for says in [
            "--no-telemetry",
            "METAGATE_DB=FILE",
            "--db FILE",
            "evaluate",
        ] {
            assert!(words.contains(says), "{first:?}: {says}: {err}");
        }
        assert!(
            note.iter()
                .all(|l| l.chars().count() <= 80 || l.trim() == path),
            "{first:?}: {err}"
        );
        assert!(sb.db().is_file());
        // Once: the store is there now.
        let again = sb.cmd().arg("gate").write_stdin(CALL).output().unwrap();
        assert!(!stderr(&again).contains(CREATED), "{}", stderr(&again));
    }
    let sb = Sandbox::new();
    let named = sb.path().join("mine.db");
    let out = sb
        .cmd()
        .arg("--db")
        .arg(&named)
        .arg("gate")
        .write_stdin(CALL)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains(CREATED), "{}", stderr(&out));
    let from_env = sb.path().join("env.db");
    let out = sb
        .cmd()
        .env("METAGATE_DB", &from_env)
        .arg("gate")
        .write_stdin(CALL)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains(CREATED), "{}", stderr(&out));
    assert!(named.is_file() && from_env.is_file() && !sb.db().exists());
    // Without telemetry nothing is made, and nothing is said.
    let out = sb
        .cmd()
        .args(["gate", "--no-telemetry"])
        .write_stdin(CALL)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains(CREATED) && !sb.db().exists());
}

/// A store whose folder cannot be made ends the run (exit 2) with the error, then a hint
/// naming the ways out: create the folder (or, where a file is in the way, say so), another
/// store, or (where the command can run without one) `--no-telemetry`.
#[test]
fn a_store_that_cannot_be_made_names_the_fixes() {
    let sb = Sandbox::new();
    let file = sb.file("a-file", "not a folder\n");
    let mut places = vec![(
        file.join("sub").join("x.db"),
        format!("{} is a file, not a folder: ", file.display()),
    )];
    // A folder no one can make, as root too.
    if std::path::Path::new("/proc/self").is_dir() {
        places.push((
            "/proc/nope/x.db".into(),
            "the folder /proc/nope does not exist and could not be made (No such file or \
             directory): create it, "
                .to_string(),
        ));
    }
    for (db, why) in places {
        for (command, without) in [("gate", true), ("record", false)] {
            let out = sb
                .cmd()
                .arg("--db")
                .arg(&db)
                .arg(command)
                .write_stdin(CALL)
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{command}: {err}");
            assert!(out.stdout.is_empty(), "{command}");
            let hint: Vec<&str> = err
                .lines()
                .skip_while(|l| !l.starts_with("metagate: hint: "))
                .collect();
            assert!(!hint.is_empty(), "{command}: {err}");
            assert!(hint.iter().all(|l| l.chars().count() <= 80), "{err}");
            let hint = hint.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
            assert!(
                hint.starts_with(&format!("metagate: hint: {why}")),
                "{hint}"
            );
            for says in ["--db FILE", "METAGATE_DB=FILE"] {
                assert!(hint.contains(says), "{command}: {says}: {hint}");
            }
            assert_eq!(
                hint.contains(&format!("{command} --no-telemetry")),
                without,
                "{command}: {hint}"
            );
        }
    }
}

/// `granted_by` is the user's name even when the environment does not say it (a service,
/// `env -i`): the user database's name for the uid, as `id -un` prints it.
#[test]
fn a_grant_is_by_the_uids_name_when_user_is_unset() {
    let Ok(id) = std::process::Command::new("id").arg("-un").output() else {
        crate::skips::skip(&crate::skips::ROOT, "no `id` to name this user");
        return;
    };
    let name = String::from_utf8(id.stdout).unwrap().trim().to_string();
    let sb = Sandbox::new();
    let policy = sb.file(
        "p.toml",
        "[tools.deploy]\ncapability = \"deploy\"\n[permit]\nrequire = [\"deploy\"]\n",
    );
    // The sandbox's environment is cleared: no USER, no LOGNAME.
    let out = sb
        .cmd()
        .arg("--policy")
        .arg(&policy)
        .args([
            "permit",
            "grant",
            "--capability",
            "deploy",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let grant: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(grant["granted_by"], name.as_str(), "{grant}");
    assert_ne!(grant["granted_by"], "unknown");
}

/// A misspelt command is pointed at the commands help shows, never at the hidden
/// `generate`.
#[test]
fn a_misspelt_command_suggests_only_shown_commands() {
    let sb = Sandbox::new();
    for (typed, suggests) in [("gaet", Some("'gate'")), ("generat", None)] {
        let out = sb.cmd().arg(typed).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(!err.contains("'generate'"), "{typed}: {err}");
        match suggests {
            Some(name) => assert!(
                err.contains(&format!("tip: a similar subcommand exists: {name}")),
                "{err}"
            ),
            None => assert!(!err.contains("tip:") && !err.contains("\n\n\n"), "{err}"),
        }
    }
}
