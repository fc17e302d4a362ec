//! `metagate policy show|check|which` and the policy lookup order.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture, gate};

#[test]
fn show_prints_the_effective_policy_with_defaults() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["policy", "show"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let gate = doc["gate"].as_table().unwrap();
    for key in [
        "unknown_tools",
        "unknown_args",
        "on_internal_error",
        "strip",
        "fuzzy_names",
    ] {
        assert!(gate.contains_key(key), "missing default {key}");
    }
    assert_eq!(doc["extends"].as_str(), Some("builtin"));
    assert_eq!(doc["permit"]["require"].as_array().map(Vec::len), Some(0));
    let tools = doc["tools"].as_table().unwrap();
    assert_eq!(tools.len(), 8);
    // What show prints is itself a valid policy.
    let file = sb.file("shown.toml", &text);
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 0, "{err}");
    // Saved in another folder, it still means the same: paths relative to the policy's folder
    // (imports, the path root) are written absolute.
    sb.file("conf/tools.json", &fixture("tools/openai.json"));
    let policy = sb.file(
        "conf/metagate.toml",
        "[[import]]\npath = \"tools.json\"\n[paths]\nroot = \"data\"\n",
    );
    let out = sb
        .cmd()
        .arg("--policy")
        .arg(&policy)
        .args(["policy", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let conf = policy.parent().unwrap();
    assert_eq!(doc["paths"]["root"].as_str(), conf.join("data").to_str());
    assert_eq!(
        doc["import"][0]["path"].as_str(),
        conf.join("tools.json").to_str()
    );
    let elsewhere = sb.file("elsewhere/shown.toml", &text);
    let (code, err) = sb.policy_check(&elsewhere);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn check_reports_errors_with_key_and_line() {
    let sb = Sandbox::new();
    let file = sb.file("p.toml", "[gate]\nunknown_args = \"explode\"\n");
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 2);
    assert!(err.contains("p.toml:2:"), "{err}");
    assert!(err.contains("gate.unknown_args"), "{err}");

    let file = sb.file(
        "q.toml",
        "[tools.t]\naliases = { x = \"nope\" }\n\n[tools.t.args.a]\ntype = \"string\"\nenum = [\"one\", 2]\n",
    );
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 2);
    assert!(
        err.contains("q.toml:2:") && err.contains("tools.t.aliases.x"),
        "{err}"
    );
    assert!(
        err.contains("q.toml:6:") && err.contains("tools.t.args.a.enum"),
        "{err}"
    );

    // Every problem, not only the first type or value error: each with its line, in order.
    let file = sb.file(
        "r.toml",
        "[gate]\nunknown_tools = \"maybe\"\non_internal_error = \"sometimes\"\n[tools.u.args.b]\ntype = \"string\"\nrequired = \"yes\"\n[tools.t]\naliases = { x = \"nope\" }\n[tools.t.args.a]\ntype = \"string\"\n",
    );
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 2);
    let lines: Vec<&str> = err
        .lines()
        .filter_map(|l| l.trim().strip_prefix(file.to_str().unwrap()))
        .collect();
    let places: Vec<&str> = lines.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(places, [":2:17:", ":3:21:", ":6:12:", ":8:13:"], "{err}");

    let file = sb.file(
        "ok.toml",
        "[tools.t.args.a]\ntype = \"string\"\nrequired = true\n",
    );
    assert_eq!(sb.policy_check(&file).0, 0);
}

/// A misspelt type names itself, its key and line, and the types there are.
#[test]
fn an_unknown_type_is_named_with_the_types_there_are() {
    let sb = Sandbox::new();
    for (text, line, key, wrong) in [
        (
            "[tools.t.args.a]\ntype = \"strin\"\n",
            2,
            "tools.t.args.a.type",
            "\"strin\"",
        ),
        (
            "[tools.t.args.b]\n\ntype = [\"string\", \"nul\"]\n",
            3,
            "tools.t.args.b.type",
            "\"nul\"",
        ),
    ] {
        let file = sb.file("t.toml", text);
        let (code, err) = sb.policy_check(&file);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("t.toml:{line}:")), "{err}");
        assert!(err.contains(key), "{err}");
        assert!(err.contains(&format!("unknown type {wrong}")), "{err}");
        assert!(
            err.contains("(types: string, integer, number, boolean"),
            "{err}"
        );
    }
    let file = sb.file("n.toml", "[tools.t.args.c]\ntype = 5\n");
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 2);
    assert!(err.contains("a type name or a list of them"), "{err}");
    // The mirror image: every type name, alone and in a list, is read.
    let file = sb.file(
        "all.toml",
        "[tools.t.args.a]\ntype = \"any\"\n[tools.t.args.b]\ntype = [\"string\", \"integer\", \"number\", \"boolean\", \"object\", \"array\", \"null\"]\n",
    );
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn lookup_order_flag_env_local_xdg() {
    let sb = Sandbox::new();
    let reject = "[gate]\nunknown_tools = \"reject\"\n";
    let input = fixture("calls/unknown-tool.json");
    // Nothing on disk: the built-in policy passes unknown tools.
    let (_, code, _) = gate(&sb, &["--quiet"], input.as_bytes());
    assert_eq!(code, 0);
    // XDG config file.
    sb.file("config/metagate/metagate.toml", reject);
    let (_, code, _) = gate(&sb, &["--quiet"], input.as_bytes());
    assert_eq!(code, 1);
    // ./metagate.toml wins over XDG.
    sb.file("metagate.toml", "[gate]\nunknown_tools = \"pass\"\n");
    let (_, code, _) = gate(&sb, &["--quiet"], input.as_bytes());
    assert_eq!(code, 0);
    // $METAGATE_POLICY wins over ./metagate.toml.
    let env_policy = sb.file("env.toml", reject);
    let out = sb
        .cmd()
        .env("METAGATE_POLICY", &env_policy)
        .args(["gate", "--quiet"])
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // --policy wins over everything.
    let flag = sb.file("flag.toml", "[gate]\nunknown_tools = \"pass\"\n");
    let out = sb
        .cmd()
        .env("METAGATE_POLICY", &env_policy)
        .args(["gate", "--quiet", "--policy"])
        .arg(&flag)
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// `metagate ARGS` run in `folder` (inside the sandbox, its HOME).
fn run_in(sb: &Sandbox, folder: &Path, args: &[&str], input: &str) -> Output {
    std::fs::create_dir_all(folder).unwrap();
    sb.cmd()
        .current_dir(folder)
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap()
}

/// `policy which --format json`, run in `folder`.
fn which(sb: &Sandbox, folder: &Path) -> Value {
    let out = run_in(sb, folder, &["policy", "which", "--format", "json"], "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// An agent loop started in a subfolder of a project holding `metagate.toml` runs under that
/// policy, as git finds its repository: the nearest file from the working folder up wins, and
/// `policy which` and `gate --explain` name it.
#[test]
fn gate_in_a_subfolder_uses_the_metagate_toml_above_it() {
    let sb = Sandbox::new();
    let policy = sb.file(
        "proj/metagate.toml",
        "[gate]\nunknown_tools = \"reject\"\n[tools.write.args.path]\ntype = \"string\"\nkind = \"path\"\n\n[paths]\nroot = \".\"\n",
    );
    let deep = sb.path().join("proj/src/deep");
    let unknown = fixture("calls/unknown-tool.json");
    let out = run_in(&sb, &deep, &["gate", "--quiet"], &unknown);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["category"], "tool_not_found", "{v}");
    let doc = which(&sb, &deep);
    assert_eq!(doc["path"], json!(policy.display().to_string()));
    assert_eq!(doc["source"], "folder");
    assert!(doc["why"].as_str().unwrap().contains("nearest"), "{doc}");
    assert_eq!(doc["looked_for"].as_array().unwrap().len(), 2, "{doc}");
    let out = run_in(&sb, &deep, &["gate", "--quiet", "--explain"], &unknown);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!("metagate: explain: policy: {}", policy.display())),
        "{err}"
    );
    // A nearer file wins.
    let nearer = sb.file(
        "proj/src/metagate.toml",
        "[gate]\nunknown_tools = \"pass\"\n",
    );
    let out = run_in(&sb, &deep, &["gate", "--quiet"], &unknown);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        which(&sb, &deep)["path"],
        json!(nearer.display().to_string())
    );
    std::fs::remove_file(&nearer).unwrap();
    // Every file the walk would read is metagate's own, protected from path arguments (here
    // relative to the policy's root, `proj`), those not written yet too.
    for path in [
        "metagate.toml",
        "src/metagate.toml",
        "src/deep/metagate.toml",
    ] {
        let call = json!({"name": "write", "arguments": {"path": path}}).to_string();
        let out = run_in(&sb, &deep, &["gate", "--quiet"], &call);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["error"]["details"]["rule"], "metagate's own files are protected",
            "{path}: {v}"
        );
    }
}

/// The walk stops at `$HOME` when it starts inside it: a file above it (another user's
/// folder, the system's) is not read. The user's own file is then next.
#[test]
fn the_walk_stops_at_home() {
    let sb = Sandbox::new();
    sb.file("metagate.toml", "[gate]\nunknown_tools = \"reject\"\n");
    let home = sb.path().join("home");
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let out = sb
        .cmd()
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .current_dir(&proj)
        .args(["policy", "which", "--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["source"], "builtin", "{doc}");
    let looked: Vec<&str> = doc["looked_for"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let expected = [
        proj.join("metagate.toml"),
        home.join("metagate.toml"),
        home.join(".config/metagate/metagate.toml"),
    ];
    assert_eq!(looked, expected.map(|p| p.display().to_string()));
}

/// A `metagate.toml` metagate finds by looking is taken only from a file this user (or root)
/// owns: one another user left in a folder above would set the gate's rules. Named with
/// `--policy`, it is used.
#[cfg(unix)]
#[test]
fn a_found_policy_of_another_user_is_refused() {
    let sb = Sandbox::new();
    let policy = sb.file("proj/metagate.toml", "[gate]\nunknown_tools = \"reject\"\n");
    if std::os::unix::fs::chown(&policy, Some(4242), None).is_err() {
        crate::skips::skip(&crate::skips::ROOT, "cannot give a file to another user");
        return;
    }
    let sub = sb.path().join("proj/sub");
    let unknown = fixture("calls/unknown-tool.json");
    let out = run_in(&sb, &sub, &["gate", "--quiet"], &unknown);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.contains("belongs to another user"), "{err}");
    let named = policy.display().to_string();
    let out = run_in(
        &sb,
        &sub,
        &["--policy", &named, "gate", "--quiet"],
        &unknown,
    );
    assert_eq!(out.status.code(), Some(1));
}

/// Settings that would quietly change what is checked are refused, exit 2: an empty
/// `$METAGATE_POLICY` (read as unset, the permissive built-in policy would apply), a blank
/// session or caller (counted as one of their own), an endless policy file.
#[test]
fn empty_settings_and_endless_policies_are_refused() {
    let sb = Sandbox::new();
    sb.file("metagate.toml", "[gate]\nunknown_tools = \"reject\"\n");
    /// Environment variables, flags, and the message expected.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a str);
    let cases: &[Case<'_>] = &[
        (
            &[("METAGATE_POLICY", "")],
            &[],
            "METAGATE_POLICY is set but empty",
        ),
        (
            &[("METAGATE_SESSION", "")],
            &[],
            "--session (or METAGATE_SESSION) is empty",
        ),
        (
            &[],
            &["--session", " "],
            "--session (or METAGATE_SESSION) is empty",
        ),
        (
            &[("METAGATE_CALLER", "")],
            &[],
            "--caller (or METAGATE_CALLER) is empty",
        ),
        (
            &[],
            &["--policy", "/dev/zero"],
            "is a device, not a regular file",
        ),
    ];
    for (vars, flags, message) in cases {
        let mut cmd = sb.cmd();
        for (k, v) in *vars {
            cmd.env(k, v);
        }
        let out = cmd
            .args(["gate", "--no-telemetry"])
            .args(*flags)
            .write_stdin(fixture("calls/unknown-tool.json"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{vars:?} {flags:?}: {err}");
        assert!(err.contains(message), "{vars:?} {flags:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_policy_adds_aliases_on_top_of_the_builtin() {
    let sb = Sandbox::new();
    let file = sb.file(
        "p.toml",
        "[tools.response.aliases]\nsay = \"text\"\n\n[tools.code_execution_tool.args.runtime.values]\nfish = \"terminal\"\n",
    );
    let p = file.to_str().unwrap();
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"tool_name":"response","tool_args":{"say":"hi"}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out["tool_args"]["text"], "hi");
    let (out, code, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"fish","code":"ls"}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out["tool_args"]["runtime"], "terminal");
    // The built-in aliases are still there.
    let (out, _, _) = gate(
        &sb,
        &["--quiet", "--policy", p],
        br#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"bash","code":"ls"}}"#,
    );
    assert_eq!(out["tool_args"]["runtime"], "terminal");
}

/// The "Every key" block of docs/policy.md is a policy `policy check` accepts as written (it
/// once opened `[gate]` twice, gave a number as a string's default and a method argument no
/// tool declared), with only the warnings its examples ask for.
#[test]
fn the_docs_every_key_block_is_a_valid_policy() {
    let sb = Sandbox::new();
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policy.md")).unwrap();
    let after = &page[page.find("\n## Every key\n").expect("the block")..];
    let fence = "```toml file=every-key.toml\n";
    let start = after.find(fence).unwrap() + fence.len();
    let block = &after[start..start + after[start..].find("```").unwrap()];
    let file = sb.file("every-key.toml", block);
    sb.file("fixtures/tools/openai.json", &fixture("tools/openai.json"));
    let (code, stderr) = sb.policy_check(&file);
    assert_eq!(code, 0, "{stderr}");
    // run_tests passes through unchecked.
    assert_eq!(stderr.matches("warning").count(), 1, "{stderr}");
}

/// Names nothing in the policy knows are warnings wherever they are listed; a URL scheme that
/// is not one is an error.
#[test]
fn unknown_names_warn_and_bad_schemes_fail() {
    let sb = Sandbox::new();
    let names = sb.file(
        "names.toml",
        "[callers.c]\nallow = [\"no_such_tool\"]\ndeny = [\"system_execute\"]\n\n[intents.x]\nallow_capabilities = [\"no_such_cap\"]\n",
    );
    let (code, stderr) = sb.policy_check(&names);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("callers.c.allow: \"no_such_tool\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("intents.x.allow_capabilities: \"no_such_cap\""),
        "{stderr}"
    );
    // A capability a tool declares is known (code_execution_tool: system_execute).
    assert!(!stderr.contains("callers.c.deny"), "{stderr}");
    let urls = sb.file("urls.toml", "[urls]\nschemes = [\"ht tp\", \"https\"]\n");
    let (code, stderr) = sb.policy_check(&urls);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("urls.toml:2:1: urls.schemes: \"ht tp\" is not a URL scheme"),
        "{stderr}"
    );
}

/// A root that is not a folder is a sound policy that refuses every path: a warning.
#[test]
fn a_path_root_that_is_not_a_folder_is_a_warning() {
    let sb = Sandbox::new();
    let file = sb.file("root.toml", "[paths]\nroot = \"no-such-folder\"\n");
    let (code, stderr) = sb.policy_check(&file);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("no-such-folder is not a folder here"),
        "{stderr}"
    );
    std::fs::create_dir(sb.path().join("no-such-folder")).unwrap();
    let (code, stderr) = sb.policy_check(&file);
    assert_eq!(code, 0);
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// `policy check` counts the tools it knows by where they come from: a file layered on the
/// built-in policy has Agent Zero's tools too, and says so; one with `extends = "none"` has
/// only its own.
#[test]
fn policy_check_counts_the_built_in_tools_apart() {
    let sb = Sandbox::new();
    let run = |text: &str| {
        let file = sb.file("p.toml", text);
        let out = sb.policy_check_output(&file);
        assert_eq!(out.status.code(), Some(0));
        let line = String::from_utf8(out.stdout).unwrap();
        line.strip_prefix(&format!("{}: ok (", file.display()))
            .unwrap_or_else(|| panic!("{line}"))
            .trim_end()
            .to_string()
    };
    let layered = run("[tools.mine.args.x]\ntype = \"string\"\n");
    let (count, rest) = layered.split_once(" tools: ").unwrap();
    let built_in: usize = rest.split(' ').next().unwrap().parse().unwrap();
    assert!(built_in >= 8, "{layered}");
    assert_eq!(count.parse::<usize>().unwrap(), built_in + 1, "{layered}");
    assert!(
        rest.ends_with(" built in (Agent Zero's), 1 from the file; 0 intents, 0 warnings)"),
        "{layered}"
    );
    assert_eq!(
        run("extends = \"none\"\n[tools.mine.args.x]\ntype = \"string\"\n"),
        "1 tool, 0 intents, 0 warnings)"
    );
}

/// A server `policy check` cannot start, or that ends before it lists its tools, is an error
/// naming it (exit 2), never a policy checked without the tools it meant.
#[test]
fn policy_check_with_a_server_that_cannot_list_is_exit_2() {
    let sb = Sandbox::new();
    let file = sb.file("p.toml", "extends = \"none\"\n");
    for (server, says) in [
        (
            &["./no-such-server"][..],
            "cannot start the MCP server ./no-such-server",
        ),
        // Gone before or after it was written to: either way it is said.
        (&["true"], "the MCP server true "),
        (
            &[
                "sh",
                "-c",
                "read line; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"no\"}}'",
            ],
            "the MCP server sh refused initialize: no",
        ),
    ] {
        let out = sb
            .cmd()
            .args(["policy", "check"])
            .arg(&file)
            .arg("--")
            .args(server)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{server:?}: {err}");
        assert!(out.stdout.is_empty(), "{server:?}");
        assert!(err.contains(says), "{server:?}: {err}");
    }
}
