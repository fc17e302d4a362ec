//! Issue 24's hostile cases through the real binary in a temporary home: paths the kernel
//! resolves per process or a tool reads after trimming, metadata endpoints and URLs that
//! parsers read differently, and shell commands aimed at metagate's own store and policy.
//! Before issue 24, most path rows passed (or, under the grant, were refused only as outside
//! its scope) and most URL rows passed; the rows already refused then stay as regressions.
//! Ordinary paths and URLs still pass.

use serde_json::{Value, json};

use crate::common::Sandbox;

/// A reading and a writing file tool behind `file_access`, and a URL tool.
const POLICY: &str = r#"
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

/// `metagate --policy policy.toml --now NOW ARGS…` on `stdin`: (stdout as JSON, status).
fn run(sb: &Sandbox, args: &[&str], stdin: &str) -> (Value, i32) {
    let out = sb
        .cmd()
        .args(["--policy", "policy.toml", "--now", NOW])
        .args(args)
        .write_stdin(stdin.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} / {}", String::from_utf8_lossy(&out.stderr)));
    (value, out.status.code().unwrap())
}

fn gate(sb: &Sandbox, tool: &str, args: Value) -> (Value, i32) {
    let call = json!({ "name": tool, "arguments": args }).to_string();
    run(sb, &["gate", "--quiet"], &call)
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
    let sb = sandbox();
    let (grant, code) = run(
        &sb,
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
    assert_eq!(code, 0, "{grant}");
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
    for tool in ["file_read", "file_write"] {
        for path in refused {
            let (out, code) = gate(&sb, tool, json!({ "path": path }));
            assert_eq!(code, 1, "{tool} {path:?}: {out}");
            assert_eq!(
                out["error"]["category"], "policy_blocked",
                "{tool} {path:?}: {out}"
            );
        }
        // Inside the grant's scope, and whitespace inside a name, still pass.
        for path in ["docs/a.txt", "docs/my notes.md", "./docs/a.txt"] {
            let (out, code) = gate(&sb, tool, json!({ "path": path }));
            assert_eq!(code, 0, "{tool} {path:?}: {out}");
        }
    }
}

#[test]
fn metadata_endpoints_and_urls_parsers_read_differently_are_refused_by_default() {
    let sb = sandbox();
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
        let (out, code) = gate(&sb, "fetch", json!({ "url": url }));
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
        let (out, code) = gate(&sb, "fetch", json!({ "url": url }));
        assert_eq!(code, 0, "{url}: {out}");
    }
}

/// With the built-in policy and `--db` pointing elsewhere, commands aimed at the policy files
/// the next run would load and at the default store are refused.
#[test]
fn shell_commands_aimed_at_the_policy_or_a_store_not_in_use_are_refused() {
    let sb = Sandbox::new();
    let elsewhere = sb.path().join("elsewhere/run.db").display().to_string();
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
    for code in [
        "printf '[shell]\\ndeny = []\\n' > metagate.toml",
        "printf '[shell]\\ndeny = []\\n' > ~/.config/metagate/metagate.toml",
        "mkdir -p ~/.config/metagate && cp /tmp/p.toml ~/.config/metagate/metagate.toml",
        "sqlite3 ~/.local/state/metagate/metagate.db 'delete from grants'",
        "sqlite3 $HOME/.local/state/metagate/metagate.db 'delete from grants'",
        "rm -f ~/.local/state/metagate/metagate.db-wal",
        "rm -rf ~/.local/state/metagate",
        "mv ./state/metagate /tmp/gone",
        "rm elsewhere/run.db",
        // The folders above them (issue 24): the files go with the folder.
        "rm -rf ~/.local/state",
        "cd ~/.local/state && rm -r metagate",
        "rm -rf ~",
        "rm -rf /",
        "rm -rf elsewhere",
        "mv ~/.config ~/config.old",
    ] {
        let (out, status) = shell(code);
        assert_eq!(status, 1, "{code}: {out}");
        assert_eq!(out["error"]["category"], "policy_blocked", "{code}: {out}");
    }
    for code in [
        "ls -la",
        "cat README.md",
        "echo hi > notes.txt",
        "grep -r foo src",
        "rm -rf target",
        "rm -f build/*.o",
    ] {
        let (out, status) = shell(code);
        assert_eq!(status, 0, "{code}: {out}");
    }
}
