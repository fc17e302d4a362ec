//! metagate at a terminal: tables that fit its width, and what a person sees that a pipe
//! does not. A pseudo-terminal comes from `script` (util-linux); without it these tests say
//! they were skipped.

use std::process::{Command, Stdio};

use crate::common::{BIN, Sandbox, fixture_path};

/// Whether `script` can give a command a pseudo-terminal here.
fn have_script() -> bool {
    Command::new("script")
        .args(["-qec", "true", "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Quotes `word` for `sh`.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// What `metagate ARGS` writes on stdout at a terminal of `columns` columns (stderr dropped),
/// run in the sandbox with `env` added, one string per line.
fn at_terminal(sb: &Sandbox, columns: u16, env: &[(&str, &str)], args: &[&str]) -> Vec<String> {
    in_terminal(sb, columns, env, args, "2>/dev/null </dev/null", 0)
}

/// `metagate ARGS REDIRECTIONS` run by `sh` in a pseudo-terminal: what the terminal shows,
/// one string per line, and the exit status `expected`.
fn in_terminal(
    sb: &Sandbox,
    columns: u16,
    env: &[(&str, &str)],
    args: &[&str],
    redirections: &str,
    expected: i32,
) -> Vec<String> {
    let command: Vec<String> = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(quoted)
        .collect();
    let script = format!(
        "stty cols {columns} rows 50; exec {} {redirections}",
        command.join(" ")
    );
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &script, "/dev/null"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", sb.path())
        .env("XDG_CONFIG_HOME", sb.path().join("config"))
        .env("XDG_STATE_HOME", sb.path().join("state"))
        .env("TERM", "xterm")
        .current_dir(sb.path())
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(expected),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect()
}

fn widest(lines: &[String]) -> usize {
    lines.iter().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// A store with every table's rows in it: calls, outcomes, an evaluate run with
/// recommendations, and grants with long scopes.
fn busy_store(sb: &Sandbox) -> String {
    let ok = |out: std::process::Output| {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let telemetry = fixture_path("telemetry");
    let mut record = sb.cmd();
    record.arg("record");
    for f in ["movie-list.jsonl", "boundary.jsonl", "control-chars.jsonl"] {
        record.arg(telemetry.join(f));
    }
    ok(record.output().unwrap());
    for calls in [
        fixture_path("calls/mixed.jsonl"),
        telemetry.join("alias-calls.jsonl"),
    ] {
        ok(sb
            .cmd()
            .args(["gate", "--jsonl", "-q"])
            .pipe_stdin(calls)
            .unwrap()
            .output()
            .unwrap());
    }
    ok(sb.cmd().arg("evaluate").output().unwrap());
    let policy = sb
        .file(
            "grants.toml",
            "[tools.file_read]\ncapability = \"file_access\"\n[tools.file_read.args.path]\ntype = \"string\"\nkind = \"path\"\n[paths]\nroot = \".\"\n[permit]\nrequire = [\"file_access\"]\n",
        )
        .display()
        .to_string();
    let deep = sb
        .path()
        .join("work/a/rather/long/folder/name/for/a/scope/to/show");
    std::fs::create_dir_all(&deep).unwrap();
    ok(sb
        .cmd()
        .args([
            "--policy",
            &policy,
            "permit",
            "grant",
            "--capability",
            "file_access",
        ])
        .arg("--scope")
        .arg(&deep)
        .args([
            "--for",
            "1h",
            "--session",
            "a-session-with-a-long-name-0123456789",
        ])
        .args([
            "--reason",
            "a reason long enough to need more than one line of any table",
        ])
        .output()
        .unwrap());
    policy
}

/// On a terminal of 80 columns no line of `tools health`, `evaluate`, `permit list` or
/// `db info` is wider than 80; `$COLUMNS` sets the width where it is given; piped, the tables
/// keep their natural width up to 140 columns.
#[test]
fn tables_fit_an_80_column_terminal() {
    if !have_script() {
        crate::skips::skip(
            &crate::skips::TERMINAL,
            "no `script` to make a pseudo-terminal",
        );
        return;
    }
    let sb = Sandbox::new();
    let policy = busy_store(&sb);
    let commands: [&[&str]; 5] = [
        &["tools", "health"],
        &["evaluate", "--dry-run"],
        &["--policy", &policy, "permit", "list"],
        &["--policy", &policy, "permit", "list", "--all"],
        &["db", "info"],
    ];
    for args in commands {
        let lines = at_terminal(&sb, 80, &[], args);
        assert!(lines.len() > 3, "{args:?}: {lines:#?}");
        assert!(widest(&lines) <= 80, "{args:?}:\n{}", lines.join("\n"));
        let lines = at_terminal(&sb, 200, &[("COLUMNS", "60")], args);
        assert!(widest(&lines) <= 60, "{args:?}:\n{}", lines.join("\n"));
    }
    // Piped, the health table is as wide as its rows make it, as before.
    let piped = sb.cmd().args(["tools", "health"]).output().unwrap();
    let lines: Vec<String> = String::from_utf8(piped.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(widest(&lines) > 80, "{}", lines.join("\n"));
    // JSON is JSON, terminal or not.
    let json = at_terminal(&sb, 80, &[], &["tools", "health", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.join("\n")).unwrap();
    assert!(doc.is_object());
}

/// On a wide terminal (230 columns) a table is at most 140 columns wide, and a long cell
/// (a recommendation's summary) wraps whole instead of being cut ("consider spli…"); the
/// narrow columns (ids, kinds) are never broken. Piped, the same.
#[test]
fn tables_are_capped_and_wrap_what_is_long() {
    if !have_script() {
        crate::skips::skip(
            &crate::skips::TERMINAL,
            "no `script` to make a pseudo-terminal",
        );
        return;
    }
    let sb = Sandbox::new();
    busy_store(&sb);
    // The window of the scenarios' dates, where their recommendations are.
    let args = [
        "evaluate",
        "--dry-run",
        "--since",
        "2026-11-19T18:00:00Z",
        "--until",
        "2026-11-20T18:00:00Z",
    ];
    let shown = at_terminal(&sb, 230, &[], &args);
    let piped = sb.cmd().args(args).output().unwrap();
    let piped: Vec<String> = String::from_utf8(piped.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let json = sb
        .cmd()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let recommendations = doc["recommendations"].as_array().unwrap();
    assert!(!recommendations.is_empty(), "{doc}");
    // Piped, prose lines are left whole; tables are capped all the same.
    let piped_tables: Vec<String> = piped
        .iter()
        .filter(|l| l.starts_with(['┌', '│', '╞', '└']))
        .cloned()
        .collect();
    assert!(widest(&piped_tables) <= 140, "{}", piped.join("\n"));
    for (lines, at_terminal) in [(&shown, true), (&piped, false)] {
        let text = lines.join("\n");
        assert!(!at_terminal || widest(lines) <= 140, "{text}");
        assert!(!text.contains('…'), "{text}");
        // Borders and the wrapping aside, each summary is there whole, each id on one line.
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect();
        let words = words.join(" ");
        for r in recommendations {
            let summary: Vec<&str> = r["summary"].as_str().unwrap().split_whitespace().collect();
            assert!(
                words.contains(&summary.join(" ")),
                "{}\n{text}",
                r["summary"]
            );
            let id = r["id"].as_str().unwrap();
            assert!(lines.iter().any(|l| l.contains(id)), "{id}\n{text}");
        }
    }
}

/// `gate` and `record` run by hand at a terminal, with nothing piped in, say what they are
/// waiting for; with their input piped in they say nothing of the kind.
#[test]
fn reading_from_a_terminal_says_so() {
    if !have_script() {
        crate::skips::skip(
            &crate::skips::TERMINAL,
            "no `script` to make a pseudo-terminal",
        );
        return;
    }
    let sb = Sandbox::new();
    // `script` ends the input (Ctrl-D) when its own stdin, /dev/null, ends.
    for (args, expected, says) in [
        (
            &["gate", "--no-telemetry"][..],
            1,
            "metagate: gate: reading a tool call from standard input; end it with Ctrl-D",
        ),
        (
            &["gate", "--no-telemetry", "--jsonl"],
            0,
            "metagate: gate: reading tool calls, one per line, from standard input",
        ),
        (
            &["record"],
            0,
            "metagate: record: reading events (JSON Lines) from standard input",
        ),
    ] {
        let shown = in_terminal(&sb, 200, &[], args, "", expected).join("\n");
        assert!(shown.contains(says), "{args:?}: {shown}");
        let piped = sb.cmd().args(args).write_stdin("").output().unwrap();
        let err = String::from_utf8_lossy(&piped.stderr);
        assert!(!err.contains("from standard input;"), "{args:?}: {err}");
    }
}
