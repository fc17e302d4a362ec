//! `metagate lint` over the traces in `fixtures/traces/`: diagnostics as parsed JSON, exit
//! codes, every format, and the SARIF structure code-scanning services require.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_path};

struct Lint {
    stdout: String,
    stderr: String,
    code: i32,
}

fn lint(sb: &Sandbox, args: &[&str], stdin: &str) -> Lint {
    let out = sb
        .cmd()
        .arg("lint")
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap();
    Lint {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

fn traces(rel: &str) -> String {
    fixture_path(&format!("traces/{rel}"))
        .to_str()
        .unwrap()
        .to_string()
}

fn json(sb: &Sandbox, args: &[&str]) -> (Value, i32, String) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = lint(sb, &all, "");
    let doc = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} (stderr {})", out.stdout, out.stderr));
    (doc, out.code, out.stderr)
}

/// (file name, line, column, code) of every diagnostic.
fn found(doc: &Value) -> BTreeSet<(String, u64, u64, String)> {
    doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = d["file"].as_str().unwrap();
            let name = file.rsplit(['/', '\\']).next().unwrap().to_string();
            (
                name,
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn set(items: &[(&str, u64, u64, &str)]) -> BTreeSet<(String, u64, u64, String)> {
    items
        .iter()
        .map(|(f, l, c, code)| (f.to_string(), *l, *c, code.to_string()))
        .collect()
}

/// A call nested deeper than the gate reads is the gate's MG001, as a file or as a line, and
/// not a trace "of an unknown shape".
#[test]
fn a_call_too_deep_to_read_is_the_gates_malformed_call() {
    let sb = Sandbox::new();
    let deep = format!(
        "{{\"tool_name\":\"response\",\"tool_args\":{{\"text\":\"hi\",\"x\":{}{}}}}}\n",
        "[".repeat(127),
        "]".repeat(127)
    );
    let fine = "{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"hi\"}}\n";
    let one = sb.file("deep.json", &deep);
    let lines = sb.file("deep.jsonl", &format!("{fine}{deep}"));
    let (doc, code, err) = json(&sb, &[one.to_str().unwrap(), lines.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        found(&doc),
        set(&[("deep.json", 1, 1, "MG001"), ("deep.jsonl", 2, 1, "MG001")]),
        "{doc}"
    );
    assert_eq!(doc["failures"], json!([]), "{doc}");
}

#[test]
fn clean_traces_of_every_shape_have_no_findings() {
    let sb = Sandbox::new();
    let (doc, code, stderr) = json(&sb, &[&traces("clean")]);
    assert_eq!(code, 0, "{doc} {stderr}");
    assert_eq!(doc["diagnostics"], Value::Array(vec![]));
    assert_eq!(doc["failures"], Value::Array(vec![]));
    assert_eq!(doc["summary"]["files"], 5);
    assert_eq!(
        doc["summary"]["calls"], 16,
        "every call of every shape is read"
    );
    // Warnings do not fail a clean trace either.
    let (_, code, _) = json(&sb, &["--deny", "warning", &traces("clean")]);
    assert_eq!(code, 0);
}

#[test]
fn broken_traces_report_each_call_where_it_is() {
    let sb = Sandbox::new();
    let (doc, code, _) = json(&sb, &[&traces("broken")]);
    assert_eq!(code, 1, "{doc}");
    let want = set(&[
        // Agent Zero messages: the model's own text, repaired or unreadable.
        ("agent-zero-messages.jsonl", 2, 22, "MG101"),
        ("agent-zero-messages.jsonl", 3, 22, "MG001"),
        // An Anthropic tool_use block, on its own line inside the transcript.
        ("anthropic.json", 7, 7, "MG104"),
        // JSON Lines of envelopes.
        ("envelopes.jsonl", 1, 1, "MG107"),
        ("envelopes.jsonl", 2, 1, "MG003"),
        ("envelopes.jsonl", 3, 1, "MG109"),
        ("envelopes.jsonl", 4, 1, "MG104"),
        // An OpenAI transcript: the tool_calls item.
        ("openai-chat.json", 7, 9, "MG003"),
    ]);
    assert_eq!(found(&doc), want);
    assert_eq!(doc["summary"]["errors"], 3);
    assert_eq!(doc["summary"]["calls"], 8);

    let diags = doc["diagnostics"].as_array().unwrap();
    let missing = diags
        .iter()
        .find(|d| d["file"].as_str().unwrap().ends_with("envelopes.jsonl") && d["line"] == 2)
        .unwrap();
    assert_eq!(missing["severity"], "error");
    assert_eq!(missing["category"], "invalid_parameters");
    assert_eq!(missing["tool"], "code_execution_tool");
    assert!(missing["message"].as_str().unwrap().contains("code"));
    assert!(missing["suggestion"].as_str().unwrap().contains("code"));
    assert_eq!(missing["fix"], Value::Null);

    let alias = diags
        .iter()
        .find(|d| d["code"] == "MG107")
        .expect("value alias");
    assert_eq!(alias["severity"], "warning");
    assert_eq!(alias["fix"]["kind"], "value_alias");
    assert_eq!(alias["fix"]["path"], "/runtime");
    assert_eq!(alias["fix"]["from"], "bash");
    assert_eq!(alias["fix"]["to"], "terminal");
}

#[test]
fn deny_and_exit_zero_decide_the_status() {
    let sb = Sandbox::new();
    let warnings_only = sb.file(
        "w.jsonl",
        "{\"tool_name\":\"response\",\"tool_args\":{\"message\":\"hi\"}}\n",
    );
    let w = warnings_only.to_str().unwrap();
    assert_eq!(lint(&sb, &[w], "").code, 0, "warnings pass by default");
    assert_eq!(lint(&sb, &["--deny", "warning", w], "").code, 1);
    assert_eq!(
        lint(&sb, &["--deny", "warning", "--ignore", "MG104", w], "").code,
        0,
        "an ignored code is no finding"
    );
    assert_eq!(lint(&sb, &[&traces("broken")], "").code, 1);
    assert_eq!(lint(&sb, &["--exit-zero", &traces("broken")], "").code, 0);
    let bad = lint(&sb, &["--exit-zero", &traces("bad")], "");
    assert_eq!(bad.code, 2, "--exit-zero never hides a failure");
    let unknown = lint(&sb, &["--ignore", "MG999", w], "");
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("MG999"), "{}", unknown.stderr);
}

#[test]
fn bad_inputs_are_reported_with_file_and_line_and_the_rest_is_linted() {
    let sb = Sandbox::new();
    let (doc, code, stderr) = json(&sb, &[&traces("bad"), &traces("broken/envelopes.jsonl")]);
    assert_eq!(code, 2, "{doc}");
    let failures: BTreeSet<(String, u64)> = doc["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap();
            (
                file.rsplit('/').next().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: BTreeSet<(String, u64)> = [
        ("agent-zero-odd.jsonl", 1),
        ("agent-zero-odd.jsonl", 2),
        ("truncated.json", 5),
        ("unknown-shape.json", 1),
    ]
    .iter()
    .map(|(f, l)| (f.to_string(), *l))
    .collect();
    assert_eq!(failures, want);
    // The good file among the bad ones, and the file after them, were still linted.
    assert_eq!(doc["summary"]["calls"], 3 + 4);
    assert_eq!(doc["summary"]["errors"], 1);
    assert!(
        stderr.contains("truncated.json:5:1: not valid JSON"),
        "{stderr}"
    );
    // The summary counts the parts that failed (lines and files), not "inputs".
    let human = lint(&sb, &[&traces("bad")], "");
    assert!(
        human.stdout.contains("4 parts could not be read"),
        "{}",
        human.stdout
    );
}

/// A line of a trace that is not JSON (a note, a log line) is a finding of its own, a
/// warning: it neither fails the run nor hides the calls around it.
#[test]
fn a_line_that_is_not_json_is_a_finding() {
    let sb = Sandbox::new();
    let trace = sb.file(
        "t.jsonl",
        "# run 12, model qwen3\n{\"tool_name\":\"response\",\"tool_args\":{\"message\":\"a\"}}\nINFO tool finished\n",
    );
    let (doc, code, _) = json(&sb, &[trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["failures"], json!([]), "{doc}");
    let found: Vec<(u64, &str)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["line"].as_u64().unwrap(), d["code"].as_str().unwrap()))
        .collect();
    assert_eq!(found, [(1, "MG112"), (2, "MG104"), (3, "MG112")], "{doc}");
    let denied = lint(&sb, &[trace.to_str().unwrap(), "--deny", "warning"], "");
    assert_eq!(denied.code, 1);
    let ignored = lint(&sb, &[trace.to_str().unwrap(), "--ignore", "MG112"], "");
    assert!(!ignored.stdout.contains("MG112"), "{}", ignored.stdout);
}

/// A path that does not exist is an error in the command, before anything is linted; `-`
/// is stdin, and no path at all is a usage error naming PATH as required.
#[test]
fn a_path_that_is_not_there_is_an_error() {
    let sb = Sandbox::new();
    let missing = sb.path().join("no-such-trace.jsonl");
    let out = lint(
        &sb,
        &[&traces("broken/envelopes.jsonl"), missing.to_str().unwrap()],
        "",
    );
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr
            .contains(&format!("{}: no such file or folder", missing.display())),
        "{}",
        out.stderr
    );
    let none = lint(&sb, &[], "");
    assert_eq!(none.code, 2);
    assert!(
        none.stderr
            .contains("Usage: metagate lint [OPTIONS] <PATH>..."),
        "{}",
        none.stderr
    );
}

#[test]
fn a_file_that_is_no_trace_stops_after_a_bounded_number_of_failures() {
    let sb = Sandbox::new();
    let prose = sb.file("prose.jsonl", &"just some words\n".repeat(100));
    let (doc, code, _) = json(&sb, &[prose.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(doc["diagnostics"].as_array().unwrap().len(), 20);
    let failures = doc["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0]["message"]
            .as_str()
            .unwrap()
            .contains("the rest of it was skipped")
    );
}

#[test]
fn stdin_and_not_utf8() {
    let sb = Sandbox::new();
    let out = lint(
        &sb,
        &["--format", "json", "-"],
        "{\"tool_name\":\"code_execution_tool\",\"tool_args\":{\"runtime\":\"python\"}}\n",
    );
    assert_eq!(out.code, 1);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["diagnostics"][0]["file"], "<stdin>");
    assert_eq!(doc["diagnostics"][0]["code"], "MG003");

    let latin1 = sb.path().join("latin1.jsonl");
    std::fs::write(&latin1, b"{\"a\":1}\n{\"tool_name\":\"caf\xe9\"}\n").unwrap();
    let (doc, code, _) = json(&sb, &[latin1.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(doc["failures"][0]["line"], 2);
    assert_eq!(doc["failures"][0]["message"], "not UTF-8 text");
}

#[test]
fn the_policy_and_tool_imports_apply_but_runtime_checks_do_not() {
    let sb = Sandbox::new();
    let policy = fixture_path("policies/sirthaddeus.toml");
    let trace = sb.file(
        "t.jsonl",
        concat!(
            "{\"name\":\"system_execute\",\"arguments\":{\"command\":\"sudo ls\"}}\n",
            "{\"name\":\"no_such_tool\",\"arguments\":{}}\n",
            "{\"name\":\"system_execute\",\"arguments\":{\"cmd\":\"ls -la\"}}\n",
        ),
    );
    let (doc, code, _) = json(
        &sb,
        &[
            "--policy",
            policy.to_str().unwrap(),
            trace.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{doc}");
    assert_eq!(
        found(&doc),
        set(&[
            ("t.jsonl", 1, 1, "MG005"),
            ("t.jsonl", 2, 1, "MG002"),
            ("t.jsonl", 3, 1, "MG104"),
        ])
    );

    // Imported tool definitions, checked against their JSON Schema as gate checks them.
    let weather = sb.file(
        "weather.jsonl",
        &format!(
            "{}\n{}\n",
            std::fs::read_to_string(fixture_path("calls/imported-weather.json"))
                .unwrap()
                .trim(),
            "{\"name\":\"get_weather\",\"arguments\":{\"location\":\"Oslo\",\"days\":\"soon\"}}"
        ),
    );
    let tools = fixture_path("tools/openai.json");
    let (doc, code, _) = json(
        &sb,
        &[
            "--tools",
            tools.to_str().unwrap(),
            weather.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{doc}");
    let codes: BTreeSet<String> = found(&doc).into_iter().map(|f| f.3).collect();
    assert!(
        codes.contains("MG105") || codes.contains("MG106"),
        "{codes:?}"
    );
    assert!(codes.contains("MG109"), "{codes:?}");
    assert!(
        codes.contains("MG004") || codes.contains("MG003"),
        "{codes:?}"
    );

    // Prerequisites and limits depend on what happened at run time: lint does not check them.
    let runtime = sb.file(
        "runtime.toml",
        "[tools.read_file]\n[tools.edit_file]\nrequires = [\"read_file\"]\n",
    );
    let edits = sb.file(
        "edits.jsonl",
        &"{\"name\":\"edit_file\",\"arguments\":{\"path\":\"a\"}}\n".repeat(3),
    );
    let (doc, code, _) = json(
        &sb,
        &[
            "--policy",
            runtime.to_str().unwrap(),
            edits.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["summary"]["calls"], 3);
}

#[test]
fn intent_and_caller_are_checked_as_gate_checks_them() {
    let sb = Sandbox::new();
    let policy = fixture_path("policies/sirthaddeus.toml");
    let policy = policy.to_str().unwrap();
    let trace = sb.file(
        "t.jsonl",
        concat!(
            "{\"name\":\"web_search\",\"arguments\":{\"query\":\"rust\"}}\n",
            "{\"name\":\"file_read\",\"arguments\":{\"path\":\"notes.md\"}}\n",
            "{\"name\":\"system_execute\",\"arguments\":{\"command\":\"ls\"}}\n",
        ),
    );
    let trace = trace.to_str().unwrap();
    // (flags, the lines refused with MG005, a word each refusal's message holds)
    let cases: &[(&[&str], &[u64], &str)] = &[
        (&[], &[], ""),
        (&["--intent", "lookup_search"], &[2, 3], "lookup_search"),
        (&["--intent", "file_task"], &[1, 3], "file_task"),
        (&["--intent", "chat_only"], &[1, 2, 3], "chat_only"),
        (&["--caller", "helper-ai"], &[3], "helper-ai"),
        (&["--caller", "teacher-ai"], &[3], "teacher-ai"),
        // The caller's deny list and the intent both apply.
        (
            &["--caller", "helper-ai", "--intent", "system_task"],
            &[1, 2, 3],
            "",
        ),
    ];
    for (flags, refused, word) in cases {
        let mut args = vec!["--policy", policy];
        args.extend_from_slice(flags);
        args.push(trace);
        let (doc, code, _) = json(&sb, &args);
        let lines: Vec<u64> = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "MG005")
            .map(|d| {
                let message = d["message"].as_str().unwrap();
                assert!(message.contains(word), "{flags:?}: {message}");
                d["line"].as_u64().unwrap()
            })
            .collect();
        assert_eq!(lines, *refused, "{flags:?}: {doc}");
        assert_eq!(code, i32::from(!refused.is_empty()), "{flags:?}: {doc}");
    }
    // A misspelt intent is an error, not an intent check switched off.
    let out = lint(&sb, &["--policy", policy, "--intent", "lookup", trace], "");
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("unknown intent \"lookup\""),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("lookup_search"), "{}", out.stderr);
}

#[test]
fn human_format_is_compiler_style_without_colour_in_a_pipe() {
    let sb = Sandbox::new();
    let out = lint(&sb, &[&traces("broken/envelopes.jsonl")], "");
    assert_eq!(out.code, 1);
    let file = traces("broken/envelopes.jsonl");
    assert!(
        out.stdout
            .contains(&format!("{file}:2:1: error[MG003]: code_execution_tool: ")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("{file}:1:1: warning[MG107]: "))
    );
    assert!(out.stdout.contains("\n  help: "));
    assert!(
        out.stdout
            .ends_with("Found 1 error and 3 warnings: 4 calls in 1 file\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('\x1b'), "no colour in a pipe");
    // Only the note that no policy file was found: no progress bar off a terminal.
    assert!(
        out.stderr
            .lines()
            .all(|l| l
                == "metagate: lint: no metagate.toml found: checking with the built-in policy"),
        "no progress bar off a terminal: {}",
        out.stderr
    );
}

/// Splits `::command props::message` into its parts, undoing the escapes.
fn workflow_command(line: &str) -> (String, Vec<(String, String)>, String) {
    let unescape = |s: &str| {
        s.replace("%0A", "\n")
            .replace("%0D", "\r")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let rest = line.strip_prefix("::").expect("starts with ::");
    let (head, message) = rest.split_once("::").expect("has a message");
    let (command, props) = head.split_once(' ').unwrap_or((head, ""));
    let props = props
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').expect("key=value");
            (k.to_string(), unescape(v))
        })
        .collect();
    (command.to_string(), props, unescape(message))
}

#[test]
fn github_format_is_workflow_commands_with_escaped_properties() {
    let sb = Sandbox::new();
    // A name with the characters the format must escape in a property.
    let trace = sb.file(
        "a:b,c%d.jsonl",
        "{\"tool_name\":\"code_execution_tool\",\"tool_args\":{\"runtime\":\"python\"}}\n\
         {\"tool_name\":\"response\",\"tool_args\":{\"message\":\"hi\"}}\n",
    );
    let out = lint(&sb, &["--format", "github", trace.to_str().unwrap()], "");
    assert_eq!(out.code, 1);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    for line in &lines {
        let (_, props, _) = workflow_command(line);
        assert!(!line.contains("a:b"), "the colon must be escaped: {line}");
        // Named from the root, here the working folder (no repository above it).
        let file = &props.iter().find(|(k, _)| k == "file").unwrap().1;
        assert_eq!(file, "a:b,c%d.jsonl");
    }
    let (command, props, message) = workflow_command(lines[0]);
    assert_eq!(command, "error");
    let get = |k: &str| props.iter().find(|(p, _)| p == k).unwrap().1.clone();
    assert_eq!(get("line"), "1");
    assert_eq!(get("col"), "1");
    assert_eq!(get("title"), "MG003 invalid-parameters");
    assert!(
        message.contains("\nhelp: "),
        "the suggestion is on its own line: {message:?}"
    );
    let (command, props, _) = workflow_command(lines[1]);
    assert_eq!(command, "warning");
    assert_eq!(props.iter().find(|(k, _)| k == "line").unwrap().1, "2");

    let bad = lint(
        &sb,
        &["--format", "github", &traces("bad/truncated.json")],
        "",
    );
    assert_eq!(bad.code, 2);
    let (command, props, _) = workflow_command(bad.stdout.lines().next().unwrap());
    assert_eq!(command, "error");
    assert!(props.contains(&("line".to_string(), "5".to_string())));
}

/// Code scanning and annotations place a finding by its path from the repository's root: the
/// same `traces/a.jsonl` whether lint ran at the root, inside `traces/`, in a sibling folder,
/// or was given an absolute path; SARIF says what the paths are relative to
/// (`originalUriBaseIds`), and that base joined with each URI is the file.
#[test]
fn sarif_and_github_name_files_from_the_repository_root() {
    let sb = Sandbox::new();
    let repo = sb.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("scripts")).unwrap();
    let trace = sb.file(
        "repo/traces/a.jsonl",
        &std::fs::read_to_string(traces("broken/envelopes.jsonl")).unwrap(),
    );
    let absolute = repo.join("traces").display().to_string();
    let runs: [(&str, &str); 4] = [
        ("", "traces/"),
        ("traces", "."),
        ("traces", &absolute),
        ("scripts", "../traces/a.jsonl"),
    ];
    for (folder, arg) in runs {
        let run = |format: &str| {
            let out = sb
                .cmd()
                .current_dir(repo.join(folder))
                .args(["lint", "--exit-zero", "--format", format, arg])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{folder} {arg}");
            String::from_utf8(out.stdout).unwrap()
        };
        let doc: Value = serde_json::from_str(&run("sarif")).unwrap();
        let run0 = &doc["runs"][0];
        let base = run0["originalUriBaseIds"]["%SRCROOT%"]["uri"]
            .as_str()
            .unwrap();
        let base = url::Url::parse(base).unwrap();
        assert_eq!(base.to_file_path().unwrap(), repo, "{folder} {arg}");
        let results = run0["results"].as_array().unwrap();
        assert!(!results.is_empty());
        for r in results {
            let artifact = &r["locations"][0]["physicalLocation"]["artifactLocation"];
            assert_eq!(artifact["uri"], "traces/a.jsonl", "{folder} {arg}");
            assert_eq!(artifact["uriBaseId"], "%SRCROOT%");
            let file = base.join(artifact["uri"].as_str().unwrap()).unwrap();
            assert_eq!(file.to_file_path().unwrap(), trace);
        }
        for line in run("github").lines() {
            let (_, props, _) = workflow_command(line);
            let file = &props.iter().find(|(k, _)| k == "file").unwrap().1;
            assert_eq!(file, "traces/a.jsonl", "{folder} {arg}");
        }
    }
    // A file outside the root is named by its absolute URI, with no base.
    let outside = sb.file(
        "elsewhere/b.jsonl",
        "{\"tool_name\":\"response\",\"tool_args\":{\"message\":\"hi\"}}\n",
    );
    let out = sb
        .cmd()
        .current_dir(&repo)
        .args(["lint", "--exit-zero", "--format", "sarif"])
        .arg(&outside)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let artifact =
        &doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert!(artifact.get("uriBaseId").is_none(), "{artifact}");
    let uri = url::Url::parse(artifact["uri"].as_str().unwrap()).unwrap();
    assert_eq!(uri.to_file_path().unwrap(), outside);
}

/// A repository without a `metagate.toml` is linted under the built-in policy, and lint says
/// so on stderr: a CI step is not failed (exit 2) for want of a policy file. With one at the
/// root, lint finds it from a subfolder and says nothing of the kind.
#[test]
fn without_a_policy_file_lint_says_it_uses_the_built_in_policy() {
    let sb = Sandbox::new();
    let repo = sb.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    sb.file(
        "repo/traces/a.jsonl",
        &std::fs::read_to_string(traces("clean/envelopes.jsonl")).unwrap(),
    );
    let run = || {
        sb.cmd()
            .current_dir(repo.join("traces"))
            .args(["lint", "--format", "sarif", "."])
            .output()
            .unwrap()
    };
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("metagate: lint: no metagate.toml found: checking with the built-in policy"),
        "{err}"
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap();
    sb.file(
        "repo/metagate.toml",
        "[tools.response.aliases]\nsay = \"text\"\n",
    );
    let out = run();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sarif_has_the_structure_code_scanning_requires() {
    let sb = Sandbox::new();
    let out = lint(
        &sb,
        &[
            "--format",
            "sarif",
            &traces("broken"),
            &traces("bad/truncated.json"),
        ],
        "",
    );
    assert_eq!(out.code, 2);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    assert!(doc["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run["tool"]["driver"]["name"], "metagate");
    assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "one rule per code");
    for rule in rules {
        assert!(rule["shortDescription"]["text"].is_string());
        assert!(rule["fullDescription"]["text"].is_string());
        let level = rule["defaultConfiguration"]["level"].as_str().unwrap();
        assert!(level == "error" || level == "warning");
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 10);
    for r in results {
        let id = r["ruleId"].as_str().unwrap();
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(ids[index], id, "ruleIndex points at the rule");
        let level = r["level"].as_str().unwrap();
        assert_eq!(
            level,
            rules[index]["defaultConfiguration"]["level"]
                .as_str()
                .unwrap()
        );
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        let locations = r["locations"].as_array().unwrap();
        assert_eq!(locations.len(), 1);
        let physical = &locations[0]["physicalLocation"];
        let uri = physical["artifactLocation"]["uri"].as_str().unwrap();
        assert!(uri.ends_with(".json") || uri.ends_with(".jsonl"), "{uri}");
        assert!(physical["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(physical["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(
        notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        5
    );
}

#[test]
fn explain_documents_every_code() {
    let sb = Sandbox::new();
    let all = lint(&sb, &["--explain", "all"], "");
    assert_eq!(all.code, 0);
    let codes: Vec<&str> = all
        .stdout
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(codes.len() >= 18);
    for code in codes {
        let one = lint(&sb, &["--explain", code], "");
        assert_eq!(one.code, 0);
        assert!(one.stdout.starts_with(code), "{}", one.stdout);
        assert!(one.stdout.lines().count() >= 3);
    }
    let by_name = lint(&sb, &["--explain", "value-alias"], "");
    assert!(by_name.stdout.starts_with("MG107"));
    let unknown = lint(&sb, &["--explain", "MG999"], "");
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("MG001"),
        "lists the codes: {}",
        unknown.stderr
    );
    let no_paths = lint(&sb, &[], "");
    assert_eq!(no_paths.code, 2, "paths are required");
}

/// A tool name holding terminal control sequences or line breaks cannot split a finding or
/// reach the terminal raw.
#[test]
fn human_format_keeps_trace_text_on_one_inert_line() {
    let sb = Sandbox::new();
    let call = r#"{"tool_name":"a\u001b]0;title\u0007\u001b[2Jb\r\nx","tool_args":{}}"#;
    let out = lint(&sb, &["-"], &format!("{call}\n"));
    // A control character in a tool name is refused (issue 39): the finding, its help, the
    // summary, each one line.
    assert_eq!(out.code, 1, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(
        lines[0].starts_with("<stdin>:1:1: error[MG005]"),
        "{}",
        lines[0]
    );
    assert!(
        !out.stdout.contains(['\u{1b}', '\u{7}', '\r']),
        "{:?}",
        out.stdout
    );
}

/// A folder's walk reads regular files only: a pipe named like a trace would block forever.
#[cfg(unix)]
#[test]
fn a_pipe_named_like_a_trace_is_not_waited_on() {
    let sb = Sandbox::new();
    let dir = sb.path().join("traces");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("a.jsonl"),
        "{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"hi\"}}\n",
    )
    .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("p.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    let out = sb
        .cmd()
        .args(["lint", "--format", "json"])
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["files"], 1, "{doc}");
}

/// A JSON Lines trace whose first call was cut off is still JSON Lines (it was once taken for
/// one broken document, and nothing in it was linted); a byte order mark is not JSON.
#[test]
fn a_cut_off_first_line_and_a_byte_order_mark_do_not_stop_the_lint() {
    let sb = Sandbox::new();
    let cut = sb.file(
        "cut.jsonl",
        concat!(
            r#"{"tool_name":"response","tool_args":{"text":"hello""#,
            "\n",
            r#"{"tool_name":"code_execution_tool","tool_args":{"runtime":"python"}}"#,
            "\n",
        ),
    );
    let bom = sb.file(
        "bom.json",
        "\u{feff}[\n {\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"code_execution_tool\",\"arguments\":\"{\\\"runtime\\\":\\\"python\\\"}\"}}]}\n]\n",
    );
    let bom_lines = sb.file(
        "bom.jsonl",
        "\u{feff}{\"tool_name\":\"code_execution_tool\",\"tool_args\":{\"runtime\":\"python\"}}\n",
    );
    let (doc, code, stderr) = json(
        &sb,
        &[
            cut.to_str().unwrap(),
            bom.to_str().unwrap(),
            bom_lines.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        found(&doc),
        set(&[
            ("cut.jsonl", 1, 1, "MG101"),
            ("cut.jsonl", 2, 1, "MG003"),
            ("bom.json", 2, 36, "MG003"),
            ("bom.jsonl", 1, 1, "MG003"),
        ]),
        "{doc}"
    );
}
