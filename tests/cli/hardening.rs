//! Issue 24's hostile cases through the real binary in a temporary home: paths the kernel
//! resolves per process or a tool reads after trimming, metadata endpoints and URLs that
//! parsers read differently, and shell commands aimed at metagate's own store and policy.
//! Before issue 24, most path rows passed (or, under the grant, were refused only as outside
//! its scope) and most URL rows passed; the rows already refused then stay as regressions.
//! Ordinary paths and URLs still pass.

use serde_json::{Value, json};

use crate::common::{BACKENDS, Backend, Sandbox, new_store, new_store_named, store_rows};

/// A reading and a writing file tool behind `file_access`, and a URL tool.
pub(crate) const POLICY: &str = r#"
extends = "none"

[tools.file_read]
capability = "file_access"
[tools.file_read.args.path]
type = "string"
required = true
kind = "path"
access = "read"

[tools.file_write]
capability = "file_access"
[tools.file_write.args.path]
type = "string"
required = true
kind = "path"

[tools.fetch]
[tools.fetch.args.url]
type = "string"
required = true
kind = "url"

[permit]
require = ["file_access"]

[paths]
root = "."
"#;

const NOW: &str = "2026-11-20T10:00:00Z";

/// `metagate --db DB --policy policy.toml --now NOW ARGS…` on `stdin`: (stdout as JSON,
/// status).
pub(crate) fn run(sb: &Sandbox, db: &str, args: &[&str], stdin: &str) -> (Value, i32) {
    let out = sb
        .cmd()
        .args(["--db", db, "--policy", "policy.toml", "--now", NOW])
        .args(args)
        .write_stdin(stdin.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} / {}", String::from_utf8_lossy(&out.stderr)));
    (value, out.status.code().unwrap())
}

fn gate(sb: &Sandbox, db: &str, tool: &str, args: Value) -> (Value, i32) {
    let call = json!({ "name": tool, "arguments": args }).to_string();
    run(sb, db, &["gate", "--quiet"], &call)
}

fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.file("policy.toml", POLICY);
    sb.file("docs/a.txt", "x");
    sb.file("docs/my notes.md", "x");
    sb
}

#[test]
fn per_process_links_and_untrimmed_paths_are_refused_even_under_a_scoped_grant() {
    for backend in BACKENDS {
        let sb = sandbox();
        let db = new_store(backend, &sb);
        let (grant, code) = run(
            &sb,
            &db,
            &[
                "permit",
                "grant",
                "--format",
                "json",
                "--capability",
                "file_access",
                "--scope",
                "./docs",
            ],
            "",
        );
        assert_eq!(code, 0, "{backend:?}: {grant}");
        let root = sb.path().canonicalize().unwrap();
        let through_root = format!("/proc/self/root{}/docs/a.txt", root.display());
        let refused = [
            "/proc/self/cwd/docs/a.txt",
            "/proc/thread-self/cwd/docs/a.txt",
            "/proc/self/cwd",
            &through_root,
            "/proc/1/cwd/docs/a.txt",
            "/proc/self/task/1/cwd/docs/a.txt",
            "/proc/self/fd/0",
            "/proc/1/root/etc/passwd",
            "/dev/fd/0",
            "/dev/stdin",
            " ../x",
            "  docs/../../x",
            "docs/.. ",
            "docs/a.txt ",
            "\tdocs/a.txt",
            "\u{a0}docs/a.txt",
            "\u{3000}docs/a.txt",
            "\u{feff}docs/a.txt",
        ];
        let allowed = ["docs/a.txt", "docs/my notes.md", "./docs/a.txt"];
        for tool in ["file_read", "file_write"] {
            for path in refused {
                let (out, code) = gate(&sb, &db, tool, json!({ "path": path }));
                assert_eq!(code, 1, "{backend:?} {tool} {path:?}: {out}");
                assert_eq!(
                    out["error"]["category"], "policy_blocked",
                    "{backend:?} {tool} {path:?}: {out}"
                );
            }
            // Inside the grant's scope, and whitespace inside a name, still pass: the grant
            // is read back from the store.
            for path in allowed {
                let (out, code) = gate(&sb, &db, tool, json!({ "path": path }));
                assert_eq!(code, 0, "{backend:?} {tool} {path:?}: {out}");
            }
        }
        let verdicts = store_rows(
            &db,
            "SELECT verdict, count(*) FROM decisions GROUP BY verdict ORDER BY verdict",
        );
        assert_eq!(
            verdicts,
            [
                vec![json!("pass"), json!(2 * allowed.len())],
                vec![json!("rejected"), json!(2 * refused.len())],
            ],
            "{backend:?}"
        );
    }
}

#[test]
fn metadata_endpoints_and_urls_parsers_read_differently_are_refused_by_default() {
    let sb = sandbox();
    // No store behaviour here: the sandbox's own file stands in for any store.
    let db = sb.db().display().to_string();
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.170.2/v2/credentials",
        "http://100.100.100.200/latest/meta-data/",
        "http://instance-data/latest/",
        "http://instance-data.ec2.internal/",
        "http://metadata/computeMetadata/v1/",
        "http://metadata.goog/computeMetadata/v1/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[::169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://169.254.169.254.nip.io/",
        "http://169-254-169-254.sslip.io/",
        "http://a9fea9fe.nip.io/",
        "http://x#@169.254.169.254/",
        "http://x?@169.254.169.254/",
        "http://x\\@169.254.169.254/",
        "http://example.com@169.254.169.254/",
        "http://169.254.169.254%2f@example.com/",
    ] {
        let (out, code) = gate(&sb, &db, "fetch", json!({ "url": url }));
        assert_eq!(code, 1, "{url}: {out}");
        assert_eq!(out["error"]["category"], "policy_blocked", "{url}: {out}");
    }
    for url in [
        "https://example.com/a?b=c#frag",
        "https://www.npmjs.com/package/@types/node",
        "https://docs.rs/regex/latest/regex/",
        "http://169.254.1.1/",
        "https://nip.io/",
        "https://metadata.example.com/",
    ] {
        let (out, code) = gate(&sb, &db, "fetch", json!({ "url": url }));
        assert_eq!(code, 0, "{url}: {out}");
    }
}

/// With the built-in policy and `--db` naming another store, commands aimed at the policy files
/// the next run would load and at the default store are refused: with a PostgreSQL store too,
/// where the default file is the store a run without `--db` would use.
#[test]
fn shell_commands_aimed_at_the_policy_or_a_store_not_in_use_are_refused() {
    for backend in BACKENDS {
        let sb = Sandbox::new();
        let elsewhere = new_store_named(backend, &sb, "elsewhere/run.db");
        let shell = |code: &str| {
            let call = json!({
                "tool_name": "code_execution_tool",
                "tool_args": { "runtime": "terminal", "code": code },
            });
            let out = sb
                .cmd()
                .args(["--db", &elsewhere, "gate", "--quiet"])
                .write_stdin(call.to_string())
                .output()
                .unwrap();
            let stdout = String::from_utf8(out.stdout).unwrap();
            let value: Value =
                serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
            (value, out.status.code().unwrap())
        };
        let mut refused = vec![
            "printf '[shell]\\ndeny = []\\n' > metagate.toml",
            "printf '[shell]\\ndeny = []\\n' > ~/.config/metagate/metagate.toml",
            "mkdir -p ~/.config/metagate && cp /tmp/p.toml ~/.config/metagate/metagate.toml",
            "sqlite3 ~/.local/state/metagate/metagate.db 'delete from grants'",
            "sqlite3 $HOME/.local/state/metagate/metagate.db 'delete from grants'",
            "rm -f ~/.local/state/metagate/metagate.db-wal",
            "rm -rf ~/.local/state/metagate",
            "mv ./state/metagate /tmp/gone",
            // The folders above them (issue 24): the files go with the folder.
            "rm -rf ~/.local/state",
            "cd ~/.local/state && rm -r metagate",
            "rm -rf ~",
            "rm -rf /",
            "mv ~/.config ~/config.old",
        ];
        // The store `--db` names is a file only on SQLite.
        if backend == Backend::Sqlite {
            refused.extend(["rm elsewhere/run.db", "rm -rf elsewhere"]);
        }
        for code in &refused {
            let (out, status) = shell(code);
            assert_eq!(status, 1, "{backend:?} {code}: {out}");
            assert_eq!(
                out["error"]["category"], "policy_blocked",
                "{backend:?} {code}: {out}"
            );
        }
        let allowed = [
            "ls -la",
            "cat README.md",
            "echo hi > notes.txt",
            "grep -r foo src",
            "rm -rf target",
            "rm -f build/*.o",
        ];
        for code in allowed {
            let (out, status) = shell(code);
            assert_eq!(status, 0, "{backend:?} {code}: {out}");
        }
        // Every call was recorded in the store `--db` names, none in the default file.
        let rejected = store_rows(
            &elsewhere,
            "SELECT count(*) FROM decisions WHERE verdict = 'rejected' AND category = 'policy_blocked'",
        );
        assert_eq!(rejected[0][0], json!(refused.len()), "{backend:?}");
        let let_through = store_rows(
            &elsewhere,
            "SELECT count(*) FROM decisions WHERE verdict <> 'rejected'",
        );
        assert_eq!(let_through[0][0], json!(allowed.len()), "{backend:?}");
        assert!(!sb.db().exists(), "{backend:?}: the default store was made");
    }
}
