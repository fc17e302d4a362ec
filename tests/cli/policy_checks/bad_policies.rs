//! Bad policies (exit 2, naming the key and line), `policy show`, and the checks that keep
//! arguments away from metagate's own files, read kinds inside arrays and objects, and deny
//! hosts in every spelling.

use super::*;

#[test]
fn bad_policies_exit_2_naming_key_and_line() {
    let sb = Sandbox::new();
    let cases = [
        (
            "[intents.a]\nallow = [\"x\"]\n[callers.bob]\nintent = \"b\"\n",
            "callers.bob.intent",
            4,
        ),
        ("[paths]\ndeny = [\"src/[\"]\n", "paths.deny", 2),
        (
            "[limits]\nper_caller = { per_minute = 0 }\n",
            "limits.per_caller",
            2,
        ),
        (
            "[limits]\nper_caller = { per_minute = -5 }\n",
            "limits.per_caller",
            2,
        ),
        ("[limits]\nsession_quota = 1.5\n", "limits.session_quota", 2),
        ("[limits]\nloop = { repeat = 1 }\n", "limits.loop.repeat", 2),
        (
            "[tools.a]\nrequires = [\"b\"]\n[tools.b]\nrequires = [\"a\"]\n",
            "tools.a.requires",
            2,
        ),
    ];
    for (text, key, line) in cases {
        let file = sb.file("bad.toml", text);
        for args in [
            vec!["policy", "check", file.to_str().unwrap()],
            vec!["gate", "--policy", file.to_str().unwrap()],
        ] {
            let out = sb.cmd().args(&args).write_stdin("{}").output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{text}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(
                err.contains(&format!("bad.toml:{line}:")) && err.contains(key),
                "{text} → {err}"
            );
        }
    }
    // A tool an intent names that no schema knows is a warning, not an error.
    let file = sb.file("warn.toml", "[intents.a]\nallow = [\"passthrough_tool\"]\n");
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 0);
    assert!(
        err.contains("warning") && err.contains("warn.toml:2:") && err.contains("passthrough_tool"),
        "{err}"
    );
    // Every separate cycle is reported, each at its own line, so one run shows all to fix.
    let file = sb.file(
        "cycles.toml",
        "[tools.a]\nrequires = [\"b\"]\n[tools.b]\nrequires = [\"a\"]\n\
         [tools.x]\nrequires = [\"y\"]\n[tools.y]\nrequires = [\"x\"]\n",
    );
    let (code, err) = sb.policy_check(&file);
    assert_eq!(code, 2);
    assert!(
        err.contains("cycles.toml:2:") && err.contains("a → b → a"),
        "{err}"
    );
    assert!(
        err.contains("cycles.toml:6:") && err.contains("x → y → x"),
        "{err}"
    );
}

#[test]
fn policy_show_prints_the_rule_defaults() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["policy", "show"]).output().unwrap();
    let doc: toml::Table = toml::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap();
    assert_eq!(doc["paths"]["root"].as_str(), Some("."));
    assert!(
        doc["paths"]["deny"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g.as_str().unwrap().contains(".env"))
    );
    let constructs: Vec<&str> = doc["shell"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(constructs, ["$(", "`", "<(", ">(", "<<<"]);
    assert!(
        doc["shell"]["deny_commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v.as_str() == Some("sudo"))
    );
    assert_eq!(doc["urls"]["schemes"].as_array().unwrap().len(), 2);
    assert_eq!(
        doc["gate"]["prerequisite_evidence"].as_str(),
        Some("outcome")
    );
}

#[test]
fn path_arguments_cannot_reach_metagates_own_files() {
    let sb = Sandbox::new();
    let policy = sb.file(
        "ws/metagate.toml",
        "extends = \"none\"\n[tools.read.args.path]\ntype = \"string\"\nkind = \"path\"\n\n[paths]\nroot = \".\"\n",
    );
    let ws = policy.parent().unwrap().to_path_buf();
    sb.file("ws/notes.md", "x");
    let db = ws.join("state/metagate.db");
    std::os::unix::fs::symlink(ws.join("state"), ws.join("link")).unwrap();
    let (policy, db) = (policy.display().to_string(), db.display().to_string());
    let flags = ["--policy", policy.as_str(), "--db", db.as_str()];
    for path in [
        "metagate.toml",
        "./metagate.toml",
        "notes/../metagate.toml",
        "state/metagate.db",
        "state/metagate.db-wal",
        "state/metagate.db-journal",
        "link/metagate.db",
        db.as_str(),
    ] {
        let (out, code) = gate(&sb, &flags, &call("read", json!({ "path": path })));
        assert_eq!(code, 1, "{path}: {out}");
        assert_eq!(
            out["error"]["details"]["rule"], "metagate's own files are protected",
            "{path}"
        );
    }
    // Mirror images: their neighbours are ordinary files.
    for path in ["notes.md", "state/other.db", "metagate.toml.bak"] {
        let (out, code) = gate(&sb, &flags, &call("read", json!({ "path": path })));
        assert_eq!(code, 0, "{path}: {out}");
    }
}

/// `access = "read"` (issue 24): a tool that only reads may name the folders that hold
/// metagate's own files, never the files; one that may write (the default) may name neither,
/// and its refusal tells the operator about `access = "read"` when reading would have passed.
/// Each `listed` row was refused before reading was told from writing.
#[test]
fn a_reading_argument_may_name_the_folders_that_hold_metagates_own_files() {
    let sb = Sandbox::new();
    let policy = sb.file(
        "ws/metagate.toml",
        "extends = \"none\"\n\
         [tools.list.args.path]\ntype = \"string\"\nkind = \"path\"\naccess = \"read\"\n\
         [tools.remove.args.path]\ntype = \"string\"\nkind = \"path\"\n\
         [tools.move.args.from]\ntype = \"string\"\nkind = \"path\"\naccess = \"write\"\n\n\
         [paths]\nroot = \".\"\n",
    );
    let ws = policy.parent().unwrap().to_path_buf();
    sb.file("ws/notes.md", "x");
    sb.file("ws/state/other.db", "");
    std::os::unix::fs::symlink(ws.join("state"), ws.join("link")).unwrap();
    let db = ws.join("state/metagate.db").display().to_string();
    let policy = policy.display().to_string();
    let flags = ["--policy", policy.as_str(), "--db", db.as_str()];
    let run =
        |tool: &str, arg: &str, path: &str| gate(&sb, &flags, &call(tool, json!({ arg: path })));
    let listed = [
        ".",
        "./",
        "state",
        "link",
        "notes/../state",
        ws.to_str().unwrap(),
    ];
    for path in listed {
        let (out, code) = run("list", "path", path);
        assert_eq!(code, 0, "list {path}: {out}");
        for (tool, arg) in [("remove", "path"), ("move", "from")] {
            let (out, code) = run(tool, arg, path);
            assert_eq!(code, 1, "{tool} {path}: {out}");
            assert_eq!(
                out["error"]["details"]["rule"],
                "metagate's own files are protected"
            );
            let suggestion = out["error"]["suggestion"].as_str().unwrap();
            assert!(
                suggestion.contains("access = \"read\"")
                    && suggestion.contains(&format!("[tools.{tool}.args.{arg}]")),
                "{tool} {path}: {suggestion}"
            );
        }
    }
    let files = [
        "metagate.toml",
        "notes/../metagate.toml",
        "metagate.toml/x",
        "state/metagate.db",
        "state/metagate.db-wal",
        "state/metagate.db-shm",
        "state/metagate.db-journal",
        "link/metagate.db",
        db.as_str(),
    ];
    for path in files {
        for (tool, arg) in [("list", "path"), ("remove", "path"), ("move", "from")] {
            let (out, code) = run(tool, arg, path);
            assert_eq!(code, 1, "{tool} {path}: {out}");
            assert_eq!(
                out["error"]["details"]["rule"],
                "metagate's own files are protected"
            );
            // Reading it is refused too: the suggestion does not offer it.
            let suggestion = out["error"]["suggestion"].as_str().unwrap();
            assert!(
                !suggestion.contains("access"),
                "{tool} {path}: {suggestion}"
            );
        }
    }
    for path in ["notes.md", "state/other.db", "metagate.toml.bak"] {
        for (tool, arg) in [("list", "path"), ("remove", "path"), ("move", "from")] {
            let (out, code) = run(tool, arg, path);
            assert_eq!(code, 0, "{tool} {path}: {out}");
        }
    }
    // Reading changes nothing else: the root and the deny rules hold.
    for path in ["..", "../x", "/etc/passwd", ".env"] {
        let (out, code) = run("list", "path", path);
        assert_eq!(code, 1, "list {path}: {out}");
        assert_ne!(
            out["error"]["details"]["rule"],
            "metagate's own files are protected"
        );
    }
}

/// `access` is for `kind = "path"` arguments, and is `read` or `write`: `policy check` names
/// the key and the line otherwise.
#[test]
fn policy_check_names_a_misplaced_or_misspelt_access() {
    let sb = Sandbox::new();
    for (text, key, line, words) in [
        (
            "[tools.t.args.u]\ntype = \"string\"\nkind = \"url\"\naccess = \"read\"\n",
            "tools.t.args.u.access",
            4,
            "for kind = \"path\" arguments only",
        ),
        (
            "[tools.t.args.u]\ntype = \"string\"\naccess = \"write\"\n",
            "tools.t.args.u.access",
            3,
            "kind is not set",
        ),
        (
            "[tools.t.args.p]\ntype = \"string\"\nkind = \"path\"\naccess = \"reed\"\n",
            "tools.t.args.p.access",
            4,
            "reed",
        ),
    ] {
        let file = sb.file("p.toml", text);
        let out = sb.policy_check_output(&file);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("p.toml:{line}:")) && err.contains(key) && err.contains(words),
            "{text}: {err}"
        );
    }
    let ok = sb.file(
        "ok.toml",
        "[tools.t.args.p]\ntype = \"string\"\nkind = \"path\"\naccess = \"read\"\n",
    );
    sb.cmd()
        .args(["policy", "check"])
        .arg(&ok)
        .assert()
        .success();
}

/// Every file metagate reads as configuration or state, and every folder on the way to one
/// (issue 24), with the root at the home folder: the policy files of the whole lookup chain
/// whether they exist or not, every store (the default ones while `--db` points elsewhere, the
/// one `$METAGATE_DB` names), their SQLite companions, and `~` itself. Each row of `refused`
/// but the first four passed before.
#[test]
fn metagates_own_files_and_their_folders_are_protected_in_the_whole_lookup_chain() {
    let sb = Sandbox::new();
    let home = sb.path().to_path_buf();
    let policy = sb.file(
        "ws/paths.toml",
        &format!(
            "extends = \"none\"\n[tools.read.args.path]\ntype = \"string\"\nkind = \"path\"\n\n[paths]\nroot = {:?}\n",
            home.display().to_string()
        ),
    );
    sb.file("notes.md", "x");
    sb.file("state/metagate/metagate.db", "");
    sb.file("state/other-app/log.txt", "x");
    sb.file(".local/share/x", "x");
    std::os::unix::fs::symlink(home.join("state"), home.join("link")).unwrap();
    let db = home.join("elsewhere/run.db");
    let (policy, db) = (policy.display().to_string(), db.display().to_string());
    let home_text = home.display().to_string();
    let local_state = home.join(".local/state").display().to_string();
    let run = |path: &str| {
        let out = sb
            .cmd()
            .env("METAGATE_POLICY", home.join("env/policy.toml"))
            .env("METAGATE_DB", home.join("envdb/x.db"))
            .args(["--policy", &policy, "--db", &db, "gate", "--quiet"])
            .write_stdin(call("read", json!({ "path": path })).to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let v: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{e}: {stdout} / {}", String::from_utf8_lossy(&out.stderr)));
        (v, out.status.code().unwrap())
    };
    let refused = [
        // Refused before too: the policy in use and the store in use.
        "ws/paths.toml",
        "elsewhere/run.db",
        "elsewhere/run.db-wal",
        "elsewhere/run.db-journal",
        // `./metagate.toml`, the XDG config and `~/.config`'s, not written yet.
        "metagate.toml",
        "config/metagate/metagate.toml",
        ".config/metagate/metagate.toml",
        // `$METAGATE_POLICY` while `--policy` wins, and `$METAGATE_DB` while `--db` wins.
        "env/policy.toml",
        "envdb/x.db",
        "envdb/x.db-shm",
        // The default stores while `--db` points elsewhere, existing or not.
        "state/metagate/metagate.db",
        "state/metagate/metagate.db-wal",
        ".local/state/metagate/metagate.db",
        // The folders on the way: deleting or moving one takes the file with it.
        "state/metagate",
        "state",
        "link",
        "link/metagate",
        "notes/../state",
        ".local/state",
        &local_state,
        ".local",
        "config",
        "config/metagate",
        ".config",
        "ws",
        "elsewhere",
        "envdb",
        ".",
        &home_text,
    ];
    for path in refused {
        let (out, code) = run(path);
        assert_eq!(code, 1, "{path}: {out}");
        assert_eq!(
            out["error"]["details"]["rule"], "metagate's own files are protected",
            "{path}: {out}"
        );
    }
    // Ordinary files inside the root still pass, beside and below the protected folders.
    for path in [
        "notes.md",
        "state/other-app/log.txt",
        "state/metagate.db",
        ".local/share/x",
        "config/other.toml",
        "ws/other.toml",
        "elsewhere/other.db",
        "metagate.toml.bak",
    ] {
        let (out, code) = run(path);
        assert_eq!(code, 0, "{path}: {out}");
    }
}

#[test]
fn kinds_check_every_string_inside_arrays_and_objects() {
    let sb = Sandbox::new();
    let root = workspace(&sb);
    let text = format!(
        "extends = \"none\"\n[tools.read_many.args.paths]\ntype = \"array\"\nkind = \"path\"\n\
         [tools.run_any.args.command]\ntype = \"any\"\nkind = \"shell\"\n\
         [tools.run_steps.args.steps]\ntype = \"array\"\nkind = \"shell\"\n\
         [tools.fetch_any.args.url]\ntype = \"any\"\nkind = \"url\"\n\n\
         [paths]\nroot = {:?}\n",
        root.display().to_string()
    );
    let policy = sb.file("arrays.toml", &text).display().to_string();
    let flags = ["--no-telemetry", "--policy", policy.as_str()];
    for (tool, args) in [
        ("read_many", json!({"paths": ["../outside.txt"]})),
        ("read_many", json!({"paths": [["../outside.txt"]]})),
        (
            "read_many",
            json!({"paths": ["src/main.rs", {"path": "/etc/passwd"}]}),
        ),
        ("read_many", json!({"paths": [[[{"a": [".env"]}]]]})),
        ("run_steps", json!({"steps": ["ls", ["sudo id"]]})),
        ("run_any", json!({"command": {"cmd": "sudo id"}})),
        (
            "run_any",
            json!({"command": {"argv": ["ls", {"then": "echo $(id)"}]}}),
        ),
        (
            "fetch_any",
            json!({"url": {"href": "https://169.254.169.254/"}}),
        ),
    ] {
        let (out, code) = gate(&sb, &flags, &call(tool, args.clone()));
        assert_eq!(code, 1, "{tool} {args}: {out}");
        assert_eq!(out["error"]["category"], "policy_blocked", "{tool} {args}");
    }
    // Mirror images: the same shapes holding ordinary values pass.
    for (tool, args) in [
        (
            "read_many",
            json!({"paths": ["src/main.rs", ["src"], {"path": "src/main.rs"}]}),
        ),
        (
            "run_steps",
            json!({"steps": ["ls", ["git status", 3, true, null]]}),
        ),
        ("run_any", json!({"command": {"cmd": "ls -la"}})),
        ("fetch_any", json!({"url": ["https://example.com/"]})),
    ] {
        let (out, code) = gate(&sb, &flags, &call(tool, args.clone()));
        assert_eq!(code, 0, "{tool} {args}: {out}");
    }
}

#[test]
fn denied_hosts_are_denied_in_every_spelling() {
    let sb = Sandbox::new();
    let policy = sb.file(
        "urls.toml",
        "extends = \"none\"\n[tools.fetch.args.url]\ntype = \"string\"\nkind = \"url\"\n\n\
         [urls]\nschemes = [\"https\"]\n\
         deny_hosts = [\"169.254.169.254\", \"metadata.google.internal\", \"[FD00:EC2:0::254]\", \"0x7f.1\"]\n",
    );
    let flags = ["--no-telemetry", "--policy", policy.to_str().unwrap()];
    for url in [
        "https://169.254.169.254/",
        "https://2852039166/",
        "https://0xa9fea9fe/",
        "https://0251.0376.0251.0376/",
        "https://169.254.43518/",
        "https://[::ffff:169.254.169.254]/",
        "https://[fd00:ec2::254]/",
        "https://[fd00:ec2:0:0::254]/",
        "https://127.0.0.1/",
        "https://169\u{3002}254\u{3002}169\u{3002}254/",
        "https://\u{ff4d}\u{ff45}\u{ff54}\u{ff41}data.google.internal/",
        "https://metadata.google\u{ad}.internal/",
        "https://example.com\u{3000}/",
        "https://example.com:99999/",
        "https://example.com:80:80/",
        "https://[evil.com]/",
        "https://[]/",
    ] {
        let (out, code) = gate(&sb, &flags, &call("fetch", json!({ "url": url })));
        assert_eq!(code, 1, "{url}: {out}");
        assert_eq!(out["error"]["category"], "policy_blocked", "{url}");
    }
    let (out, _) = gate(
        &sb,
        &flags,
        &call("fetch", json!({"url": "https://b\u{fc}cher.de/"})),
    );
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("punycode"), "{message}");
    for url in [
        "https://example.com/",
        "https://xn--bcher-kva.de/",
        "https://169.254.169.253/",
        "https://example.com:8443/x",
        "https://[::1]:8080/",
    ] {
        let (out, code) = gate(&sb, &flags, &call("fetch", json!({ "url": url })));
        assert_eq!(code, 0, "{url}: {out}");
    }
}
