//! What each fuzz target does with its input, shared by the cargo-fuzz targets
//! (`fuzz/fuzz_targets/*.rs`) and by the test that replays the kept corpus under `cargo test`
//! (`tests/cli/fuzz_corpus.rs`), so that an input that once crashed a target is fed to the
//! very same code on every test run. Each entry takes any bytes; a panic (an assertion here,
//! or one inside metagate) is a finding.
//!
//! Besides "no panic", the entries check what the contracts promise of every input: `gate`
//! answers each document with exactly one JSON line, and each stream line with one; the
//! lenient reader returns an object that reads back as itself; a path the check passes is a
//! clean relative path; a policy that compiles prints as one that compiles to the same.

#![allow(dead_code)]

use std::cell::RefCell;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use metagate::gate::{self, Context, Gate, NoSink, Options};
use metagate::lint::render::{Format, Renderer};
use metagate::lint::{Event, Linter, Summary};
use metagate::mcp::calls::{Action, CallGate, CheckerSetup};
use metagate::mcp::framing::{self, Kind, RequestId};
use metagate::mcp::outcomes::{self, Ending, InFlight};
use metagate::mcp::registry::{PolicyInputs, Registry};
use metagate_checks::path::{self, Access, PathRules, RealFs};
use metagate_core::enforce::{Checker, Scope, Setup};
use metagate_core::events::{self, AxisTable};
use metagate_core::policy::{Policy, ReadError, Source, import};
use metagate_wire::repair;

/// The policy the `gate` and `lint_trace` targets decide with: the built-in tools, and one
/// tool for each argument kind, so that every check is reached.
const POLICY: &str = r#"
[tools.read_file]
capability = "file_access"
aliases = { file = "path" }
[tools.read_file.args.path]
type = "string"
required = true
kind = "path"
access = "read"

[tools.write_file]
capability = "file_access"
[tools.write_file.args.path]
type = ["string", "array"]
required = true
kind = "path"
[tools.write_file.args.content]
type = "string"

[tools.fetch]
[tools.fetch.args.url]
type = "string"
kind = "url"

[tools.grep]
[tools.grep.args.pattern]
type = "string"
kind = "regex"
[tools.grep.args.count]
type = "integer"
[tools.grep.args.ratio]
type = "number"
[tools.grep.args.deep]
type = "boolean"

[tools.checkout]
[tools.checkout.args.ref]
type = "string"
kind = "git_ref"

[tools.run]
[tools.run.args.mode]
type = "string"
enum = ["sh", "dry"]
values = { shell = "sh" }
[tools.run.args.command]
type = "any"
kind = "shell"
kind_when = { mode = ["sh"] }

[paths]
root = "."
deny = ["**/.env", "**/secrets/**"]
"#;

/// A folder with the policy file, a store, a symlink out of the root and one that loops,
/// made once per process (libFuzzer runs one input after another in one process).
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    policy: Policy,
    checker: Checker,
    read_rules: PathRules,
    write_rules: PathRules,
    policy_file: PathBuf,
    protected: Vec<PathBuf>,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir
        .path()
        .canonicalize()
        .expect("the temporary folder resolves");
    let policy_file = root.join("metagate.toml");
    std::fs::write(&policy_file, POLICY).expect("the policy is written");
    for folder in ["src", "state/metagate", "secrets", "docs/sub"] {
        std::fs::create_dir_all(root.join(folder)).expect("a folder is made");
    }
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("a file is written");
    std::fs::write(root.join("state/metagate/metagate.db"), "").expect("a store is written");
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        let _ = symlink("/etc", root.join("out"));
        let _ = symlink("loop", root.join("loop"));
        let _ = symlink("state", root.join("docs/state"));
        let _ = symlink("../src", root.join("docs/src"));
    }
    let policy = Policy::from_source(
        Source {
            name: "metagate.toml",
            text: POLICY,
        },
        Some(policy_file.clone()),
    )
    .expect("the fuzzing policy compiles");
    let protected = vec![policy_file.clone(), root.join("state/metagate/metagate.db")];
    let checker = Checker::new(
        &policy,
        &Setup {
            cwd: &root,
            protected: protected.clone(),
            home: Some(root.clone()),
            own_binary: None,
            programs: None,
            grant_key: None,
        },
    );
    let rules = PathRules::new(
        &root,
        &["**/.env".to_string(), "**/secrets/**".to_string()],
        &[],
        &RealFs,
    )
    .expect("the rules compile")
    .protecting(&protected, &RealFs);
    World {
        _dir: dir,
        root,
        policy,
        checker,
        read_rules: rules.clone().for_access(Access::Read),
        write_rules: rules,
        policy_file,
        protected,
    }
}

thread_local! {
    static WORLD: RefCell<Option<World>> = const { RefCell::new(None) };
}

fn with_world<T>(f: impl FnOnce(&World) -> T) -> T {
    WORLD.with(|cell| {
        let mut slot = cell.borrow_mut();
        f(slot.get_or_insert_with(world))
    })
}

static CONTEXT: Context = Context {
    session: None,
    caller: None,
    intent: None,
};

/// Gate input: any bytes are one document answered with exactly one JSON line (plain and
/// `--report`), and a stream of lines is answered with one JSON line per line.
pub fn gate(data: &[u8]) {
    with_world(|world| {
        let plain = Options {
            quiet: false,
            ..Options::default()
        };
        let report = Options {
            report: true,
            explain: true,
            ..Options::default()
        };
        for options in [plain, report] {
            let gate = Gate {
                policy: &world.policy,
                options,
                checker: Some(&world.checker),
                context: &CONTEXT,
                fs: &RealFs,
                scope: Scope { runtime: true },
            };
            let mut err = Vec::new();
            let (line, _) =
                gate::answer_one(&gate, data, &mut NoSink::at(0), &mut err, &Instant::now)
                    .expect("writing to memory cannot fail");
            assert_one_answer(&line, true);
            std::str::from_utf8(&err).expect("notes are UTF-8");
        }
        let gate = Gate {
            policy: &world.policy,
            options: Options {
                quiet: true,
                ..Options::default()
            },
            checker: Some(&world.checker),
            context: &CONTEXT,
            fs: &RealFs,
            scope: Scope { runtime: true },
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        let stats = gate::stream(
            &gate,
            &mut BufReader::new(data),
            &mut out,
            &mut err,
            &mut NoSink::at(0),
            &Instant::now,
        )
        .expect("reading and writing memory cannot fail");
        let lines_in = data.split(|&b| b == b'\n').count() - usize::from(data.ends_with(b"\n"));
        let lines_in = if data.is_empty() { 0 } else { lines_in };
        assert_eq!(stats.lines as usize, lines_in, "one decision per line");
        let answers: Vec<&[u8]> = out.split_inclusive(|&b| b == b'\n').collect();
        assert_eq!(answers.len(), lines_in, "one answer per line");
        for answer in answers {
            assert_one_answer(answer, false);
        }
    });
}

fn assert_one_json_line(line: &[u8]) {
    assert!(line.ends_with(b"\n"), "an answer ends its line");
    let body = &line[..line.len() - 1];
    assert!(!body.contains(&b'\n'), "an answer is one line");
    serde_json::from_slice::<serde_json::Value>(body).unwrap_or_else(|e| {
        panic!(
            "the answer is JSON ({e}): {}",
            String::from_utf8_lossy(body)
        )
    });
}

/// An answer is one line of JSON, or a text in a dialect answered in kind (the calls written
/// back in the text they came in: as many lines as the text had, in a document; one in a
/// stream's line), which reads again as calls in that dialect.
fn assert_one_answer(line: &[u8], document: bool) {
    assert!(line.ends_with(b"\n"), "an answer ends its line");
    let body = &line[..line.len() - 1];
    if serde_json::from_slice::<serde_json::Value>(body).is_err()
        && let Ok(text) = std::str::from_utf8(body)
        && let Some(reading) = metagate_wire::dialects::read(text)
    {
        assert!(reading.is_ok(), "an answer in kind reads again: {text:?}");
        assert!(
            document || !body.contains(&b'\n'),
            "a stream's answer is one line"
        );
        return;
    }
    assert_one_json_line(line);
}

/// The lenient reader: what it reads is an object, and that object written out as JSON
/// reads back as itself with nothing repaired.
pub fn repair(data: &[u8]) {
    if let Ok(parsed) = repair::parse(data) {
        assert!(parsed.value.is_object(), "the reader returns an object");
        let again = serde_json::to_vec(&parsed.value).expect("a value serializes");
        let reread = repair::parse(&again).expect("strict JSON reads");
        assert_eq!(reread.value, parsed.value, "JSON out reads back as itself");
        assert!(reread.repairs.is_empty(), "strict JSON needs no repair");
    }
}

/// The path check, reading and writing: what passes is a clean path inside the root, and
/// whatever may be written may be read.
pub fn path(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    with_world(|world| {
        let written = path::check(raw, &world.write_rules, &RealFs);
        let read = path::check(raw, &world.read_rules, &RealFs);
        if let Ok(relative) = &written {
            assert!(read.is_ok(), "{raw:?}: writable but not readable: {read:?}");
            assert_eq!(read.as_ref().ok(), Some(relative), "{raw:?}: two readings");
        }
        for relative in [&written, &read].into_iter().flatten() {
            assert_clean(&world.root, relative);
        }
    });
}

fn assert_clean(root: &Path, relative: &str) {
    if relative == "." {
        return;
    }
    assert!(!relative.starts_with('/'), "{relative:?} is relative");
    for component in relative.split('/') {
        assert!(
            !matches!(component, "" | "." | ".."),
            "{relative:?} is clean"
        );
    }
    assert!(root.join(relative).starts_with(root));
}

/// Policy TOML: no panic, and a policy that compiles is shown (`policy show`) as TOML that
/// compiles to the same effective policy.
pub fn policy_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(policy) = Policy::from_source(
        Source {
            name: "p.toml",
            text,
        },
        None,
    ) else {
        return;
    };
    let shown = policy.to_toml();
    let again = Policy::from_source(
        Source {
            name: "shown.toml",
            text: &shown,
        },
        None,
    )
    .unwrap_or_else(|e| panic!("what `policy show` prints compiles: {e}\n{shown}"));
    assert_eq!(
        again.file, policy.file,
        "`policy show` prints the same policy"
    );
}

/// `record` events: each line parses or is refused with a message, never a panic.
pub fn record_events(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let axes = AxisTable::new([("fetch", "transport"), ("parse", "extraction")]);
    for line in text.lines() {
        if let Err(message) = events::parse(line, 1_700_000_000_000, &axes) {
            assert!(!message.to_string().is_empty(), "a refusal says why");
        }
    }
}

/// `lint` traces, rendered in every format: no panic, and the JSON and SARIF reports are JSON.
pub fn lint_trace(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    with_world(|world| {
        let gate = Gate {
            policy: &world.policy,
            options: Options {
                quiet: true,
                ..Options::default()
            },
            checker: Some(&world.checker),
            context: &CONTEXT,
            fs: &RealFs,
            scope: Scope { runtime: false },
        };
        let linter = Linter::new(gate, 0, Vec::new());
        let formats = [Format::Human, Format::Json, Format::Sarif, Format::Github];
        let mut renderers: Vec<Renderer> =
            formats.iter().map(|&f| Renderer::new(f, false)).collect();
        let mut outs = vec![Vec::new(); formats.len()];
        for (renderer, out) in renderers.iter_mut().zip(&mut outs) {
            renderer.start(out);
        }
        let mut summary = Summary::default();
        let result: Result<(), ()> = linter.lint_text(
            "trace.jsonl",
            text,
            &mut |event: Event<'_>| {
                summary.count(&event);
                for (renderer, out) in renderers.iter_mut().zip(&mut outs) {
                    renderer.event(&event, out);
                }
                Ok(())
            },
            &mut |_| {},
        );
        result.expect("the sink never fails");
        for (renderer, out) in renderers.iter_mut().zip(&mut outs) {
            renderer.finish(&summary, out);
        }
        for (format, out) in formats.iter().zip(&outs) {
            if matches!(format, Format::Json | Format::Sarif) {
                serde_json::from_slice::<serde_json::Value>(out).unwrap_or_else(|e| {
                    panic!("{format:?} is JSON ({e}): {}", String::from_utf8_lossy(out))
                });
            }
        }
    });
}

/// `--tools` files: read as each format and recognized; a file that imports compiles into a
/// policy.
pub fn tools_import(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let formats = [
        None,
        Some(import::ToolsFormat::Openai),
        Some(import::ToolsFormat::Mcp),
        Some(import::ToolsFormat::Anthropic),
    ];
    for format in formats {
        if let Ok(tools) = import::parse_tools("tools.json", text, format) {
            for tool in &tools.tools {
                let _ = import::compile(tool, "tools.json");
                let _ = import::tool_file(tool, true);
            }
        }
    }
    let _ = Policy::load(None, None, &[PathBuf::from("tools.json")], &|_: &Path| {
        Ok(text.to_string())
    });
}

/// `metagate mcp`: the first line is what the server lists (the `result` of its `tools/list`),
/// taken in as metagate's own listing; every other line is a message from the client. Each
/// `tools/call` is decided under that registry and gets exactly one JSON line: the call,
/// forwarded under its own id, or the client's answer; a line that is no message gets a
/// JSON-RPC error; an answer is read as a call's outcome; a `tools/list`
/// answer filtered for the caller stays one JSON line.
pub fn mcp(data: &[u8]) {
    let (listing, client) = match data.iter().position(|&b| b == b'\n') {
        Some(end) => (&data[..end], &data[end + 1..]),
        None => (data, &b""[..]),
    };
    with_world(|world| {
        let inputs = PolicyInputs {
            name: "metagate.toml".into(),
            text: Some(POLICY.into()),
            origin: Some(world.policy_file.clone()),
            read: Arc::new(|p: &Path| Err(ReadError::new(p, std::io::ErrorKind::NotFound.into()))),
        };
        let context = metagate_core::enforce::Context {
            session: Some("s1".into()),
            caller: Some("fuzz".into()),
            intent: None,
        };
        let diag: metagate::mcp::Diag = Arc::new(|line: &str| {
            assert!(!line.contains('\n'), "a diagnostic is one line: {line:?}");
        });
        let registry = Registry::new(
            inputs,
            world.policy.clone(),
            context.clone(),
            Arc::clone(&diag),
        );
        let request = registry.session_ready().expect("the first listing starts");
        let id = own_request_id(&request);
        let answer = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}}",
            id.to_json(),
            String::from_utf8_lossy(listing)
        );
        match framing::read(answer.as_bytes()) {
            Ok(message) => {
                if let Some(next_page) = registry.answer(&message) {
                    own_request_id(&next_page);
                    registry.server_gone();
                }
            }
            Err(_) => registry.server_gone(),
        }
        let mut gate = CallGate::new(
            &world.policy,
            CheckerSetup {
                cwd: world.root.clone(),
                protected: world.protected.clone(),
                home: Some(world.root.clone()),
                own_binary: None,
                programs: None,
                grant_key: None,
            },
            Options {
                quiet: false,
                explain: true,
                ..Options::default()
            },
            context,
            None,
            Arc::new(|| 1_700_000_000_000),
            diag,
        );
        for line in client.split(|&b| b == b'\n') {
            if framing::is_blank(line) {
                continue;
            }
            let message = match framing::read(line) {
                Ok(message) => message,
                Err(invalid) => {
                    let (code, id, text) = invalid.answer();
                    assert_one_json_line(&framing::error_line(id, code, text));
                    continue;
                }
            };
            match &message.kind {
                Kind::Request { id, method } if method == "tools/call" => {
                    let ready = registry.wait(Instant::now());
                    let current = registry.policy();
                    match gate.decide_request(ready, &current, line, id, message.params) {
                        Action::Answer(answer) => {
                            assert_one_json_line(&answer);
                            assert_answers(&answer, id);
                        }
                        Action::Forward {
                            line: call,
                            call: in_flight,
                        } => {
                            assert_one_json_line(&call);
                            let forwarded = framing::read(&call[..call.len() - 1])
                                .expect("a forwarded call is a message");
                            assert!(
                                matches!(&forwarded.kind, Kind::Request { id: sent, method }
                                    if sent == id && method == "tools/call"),
                                "a call goes on as the same tools/call"
                            );
                            let _ = outcomes::outcome(&in_flight, &Ending::ServerGone, 0);
                        }
                    }
                }
                Kind::Request { .. } | Kind::Notification { .. } => {
                    let _ = outcomes::task_of(message.params);
                    let _ = RequestId::cancelled_by(message.params);
                }
                Kind::Response { .. } => {
                    let call = InFlight {
                        decision_id: None,
                        tool: "read_file".into(),
                        method: None,
                        session: None,
                        sent: Instant::now(),
                        trace: metagate::otel::McpCall::none(),
                    };
                    let outcome = outcomes::outcome(&call, &Ending::Answered(&message), 0);
                    if outcome.ok {
                        assert!(outcome.error_type.is_none(), "a success has no error type");
                        assert!(outcome.error_message.is_none(), "a success has no error");
                    }
                    let _ = outcomes::started_task(&message);
                    if let Some(shown) = registry.shown(line) {
                        assert_one_json_line(&shown);
                    }
                }
                Kind::Batch(_) => {}
            }
        }
    });
}

/// The id of one of metagate's own requests to the server, which is one JSON line.
fn own_request_id(request: &[u8]) -> RequestId {
    assert_one_json_line(request);
    match framing::read(&request[..request.len() - 1]).map(|m| m.kind) {
        Ok(Kind::Request { id, .. }) if Registry::is_own(&id) => id,
        other => panic!("metagate's own request is a request with its own id: {other:?}"),
    }
}

/// A refusal answers the request it refuses.
fn assert_answers(answer: &[u8], id: &RequestId) {
    let value: serde_json::Value =
        serde_json::from_slice(answer).expect("checked to be JSON above");
    let expected: serde_json::Value = serde_json::from_str(&id.to_json()).expect("an id is JSON");
    assert_eq!(value["id"], expected, "the answer carries the call's id");
    assert_eq!(
        value["result"]["isError"], true,
        "a refusal is a tool error"
    );
}

/// Redaction of any text, and of any JSON value the text is: no panic, and what comes out is
/// redacted for good (a second pass finds nothing more), keys included, none lost.
pub fn redact(data: &[u8]) {
    use metagate_checks::redact::{redact_text, redact_value};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(once) = redact_text(text) {
        // A second pass may find a span again (the prose rule reads `is [REDACTED],`), but
        // must change nothing.
        let twice = redact_text(&once).unwrap_or_else(|| once.clone());
        assert_eq!(twice, once, "redacted twice: {text:?}");
    }
    if let Ok(mut value) = serde_json::from_str::<serde_json::Value>(text) {
        let keys = value.as_object().map(serde_json::Map::len);
        redact_value(&mut value);
        let kept = value.as_object().map(serde_json::Map::len);
        assert_eq!(kept, keys, "a key was lost");
        let mut again = value.clone();
        redact_value(&mut again);
        assert_eq!(again, value, "redacted twice: {text:?}");
    }
}

/// The shell check's readers of issue 39: a forwarding script's head
/// ([`shell::read_forwarder`]), and commands read with what their programs resolve to. The
/// input is a command, then (after the first NUL) the head of the script every command word
/// resolves to. A forwarder's name is a plain word; a command word whose file forwards to
/// `command` or `exec` runs `sudo` in `x sudo id`, which is refused; the check answers the
/// same twice, in both modes.
pub fn shell(data: &[u8]) {
    use metagate_checks::shell::{
        self, CommandList, Protected, Refusal, Resolved, ShellRules, World,
    };
    let (command, script) = match memchr_nul(data) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &b""[..]),
    };
    let forward = shell::read_forwarder(script);
    if let Some(f) = &forward {
        assert!(!f.name.is_empty() && !f.name.iter().any(|b| b.is_ascii_whitespace()));
        assert!(script.starts_with(b"#!"));
    }
    struct ScriptWorld(Option<shell::Forward>);
    impl World for ScriptWorld {
        fn redirect(&self, _path: &str) -> Result<(), Refusal> {
            Ok(())
        }
        fn is_own_binary(&self, _command: &[u8]) -> bool {
            false
        }
        fn program(&self, command: &[u8]) -> Option<Resolved> {
            let name = command.rsplit(|b| *b == b'/').next().unwrap_or(command);
            Some(Resolved {
                name: name.into(),
                forwards: self.0.clone(),
            })
        }
    }
    let world = ScriptWorld(forward.clone());
    let denied: CommandList = shell::patterns(&[
        "sudo",
        "kill -9 -1",
        "kill -KILL 1",
        "systemctl poweroff",
        "init 0",
        "mkfs",
    ])
    .unwrap()
    .into();
    let allowed = shell::patterns(&["ls", "cat", "kill", "git", "docker", "cp"]).unwrap();
    let protected = Protected::none();
    let text = String::from_utf8_lossy(command);
    for allowed in [None, Some(&allowed[..])] {
        let rules = ShellRules {
            constructs: &[],
            denied: &denied,
            allowed,
            protected: &protected,
            world: &world,
        };
        let first = shell::check(&text, &rules);
        assert_eq!(first, shell::check(&text, &rules), "{text:?}: two answers");
        let runs_its_arguments = forward.as_ref().is_some_and(|f| {
            matches!(&f.name[..], b"command" | b"exec") || f.name.ends_with(b"sudo")
        });
        if runs_its_arguments {
            assert!(
                shell::check("x sudo id", &rules).is_some(),
                "a script forwarding to {:?} ran sudo",
                String::from_utf8_lossy(&forward.as_ref().unwrap().name)
            );
        }
    }
}

fn memchr_nul(data: &[u8]) -> Option<usize> {
    data.iter().position(|b| *b == 0)
}
