use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::mcp::framing::read;

fn inputs(text: Option<&str>) -> PolicyInputs {
    PolicyInputs {
        name: "p.toml".into(),
        text: text.map(str::to_string),
        origin: None,
        read: Arc::new(|p: &Path| Err(ReadError::new(p, std::io::ErrorKind::NotFound.into()))),
    }
}

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}})
}

fn registry(policy: Option<&str>, context: Context) -> (Registry, Arc<Mutex<Vec<String>>>) {
    let said = Arc::new(Mutex::new(Vec::new()));
    let diag: Diag = {
        let said = Arc::clone(&said);
        Arc::new(move |line: &str| said.lock().unwrap().push(line.to_string()))
    };
    let inputs = inputs(policy);
    let base = inputs.build(&[]).unwrap().0;
    (Registry::new(inputs, base, context, diag), said)
}

/// The request line's JSON.
fn sent(line: &[u8]) -> Value {
    serde_json::from_slice(line).unwrap()
}

/// An answer to request `request` with `result`.
fn answer(registry: &Registry, request: &Value, result: Value) -> Option<Vec<u8>> {
    let line = json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string();
    registry.answer(&read(line.as_bytes()).unwrap())
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

#[test]
fn the_servers_tools_sit_under_the_policy_files_entries() {
    let policy = "[tools.read.aliases]\npth = \"path\"\n[tools.read.args.path]\nkind = \"path\"\n";
    let broken = json!({"name": "broken", "inputSchema": {"type": "object", "properties": {"a": {"type": "strin"}}}});
    let (policy, warnings) = inputs(Some(policy))
        .build(&[tool("read"), broken, tool("read")])
        .unwrap();
    let read = policy.tool("read").unwrap();
    assert!(read.schema.is_some(), "the server's schema is checked");
    assert_eq!(read.aliases.get("pth").map(String::as_str), Some("path"));
    assert_eq!(
        read.args["path"].kind,
        Some(metagate_core::policy::ArgKind::Path)
    );
    assert!(read.args["path"].required, "from the server's schema");
    // A broken schema is read around: the tool is known, its argument taken at any type.
    assert!(policy.tool("broken").is_some());
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("broken") && warnings[0].contains("\"strin\""));
    assert!(warnings[1].contains("twice"), "{warnings:?}");
}

#[test]
fn every_page_is_listed_before_calls_go_on() {
    let (registry, _) = registry(None, Context::default());
    registry.initialized(Some(
        &serde_json::value::to_raw_value(&json!({"capabilities": {"tools": {}}})).unwrap(),
    ));
    let first = sent(&registry.session_ready().unwrap());
    assert_eq!(first["method"], "tools/list");
    assert!(Registry::is_own(&RequestId::Text(
        first["id"].as_str().unwrap().into()
    )));
    assert!(first.get("params").is_none());
    assert!(
        registry.before_call(None).is_none(),
        "one listing at a time"
    );
    let second = answer(
        &registry,
        &first,
        json!({"tools": [tool("a")], "nextCursor": "p2"}),
    )
    .unwrap();
    let second = sent(&second);
    assert_eq!(second["params"]["cursor"], "p2");
    assert_ne!(second["id"], first["id"]);
    assert!(
        answer(&registry, &first, json!({"tools": [tool("z")]})).is_none(),
        "an answer to a page already read is ignored"
    );
    let waiter = std::thread::scope(|s| {
        let waiting = s.spawn(|| registry.wait(soon()));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!waiting.is_finished(), "a call waits for the listing");
        assert!(answer(&registry, &second, json!({"tools": [tool("b")]})).is_none());
        waiting.join().unwrap()
    });
    let Ready::Policy(policy) = waiter else {
        panic!("the listing ended")
    };
    assert!(policy.tool("a").is_some() && policy.tool("b").is_some());
    assert!(
        registry.before_call(None).is_none(),
        "current: nothing to list"
    );
}

#[test]
fn a_change_while_listing_lists_again() {
    let (registry, _) = registry(None, Context::default());
    let first = sent(&registry.before_call(None).unwrap());
    assert!(registry.list_changed().is_none());
    let again = answer(&registry, &first, json!({"tools": [tool("a")]})).unwrap();
    let again = sent(&again);
    assert_eq!(again["method"], "tools/list");
    assert!(answer(&registry, &again, json!({"tools": [tool("a"), tool("b")]})).is_none());
    assert!(registry.policy().tool("b").is_some());
    assert!(sent(&registry.list_changed().unwrap())["id"].is_string());
}

#[test]
fn a_failed_listing_fails_the_calls_waiting_and_is_tried_again() {
    let (registry, said) = registry(None, Context::default());
    let first = sent(&registry.before_call(None).unwrap());
    let line =
        json!({"jsonrpc": "2.0", "id": first["id"], "error": {"code": -32601, "message": "no"}})
            .to_string();
    assert!(registry.answer(&read(line.as_bytes()).unwrap()).is_none());
    let Ready::Failed(why) = registry.wait(soon()) else {
        panic!("failed")
    };
    assert!(why.contains("-32601"), "{why}");
    assert!(said.lock().unwrap()[0].contains("-32601"));
    assert!(
        registry.before_call(None).is_some(),
        "the next call lists again"
    );
    let Ready::Failed(why) = registry.wait(Instant::now()) else {
        panic!("a listing that is not answered in time fails")
    };
    assert!(why.contains("has not answered"), "{why}");
}

#[test]
fn a_server_without_tools_has_nothing_to_list() {
    let (registry, _) = registry(None, Context::default());
    registry.initialized(Some(
        &serde_json::value::to_raw_value(&json!({"capabilities": {"prompts": {}}})).unwrap(),
    ));
    assert!(registry.session_ready().is_none());
    assert!(registry.before_call(None).is_none());
    assert!(matches!(registry.wait(soon()), Ready::Policy(_)));
}

#[test]
fn a_stateless_clients_session_keys_go_on_metagates_requests() {
    let (registry, _) = registry(None, Context::default());
    let params = serde_json::value::to_raw_value(&json!({
        "name": "a",
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": 4
        }
    }))
    .unwrap();
    let request = sent(&registry.before_call(Some(&params)).unwrap());
    let meta = &request["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta.get("progressToken").is_none());
}

#[test]
fn a_clients_list_shows_only_what_its_intent_admits() {
    let policy = "[intents.reading]\nallow = [\"read\"]\n";
    let context = Context {
        intent: Some("reading".into()),
        ..Context::default()
    };
    let (registry, _) = registry(Some(policy), context);
    let line = json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [tool("read"), tool("write")], "nextCursor": "x"}}).to_string();
    let shown: Value = serde_json::from_slice(&registry.shown(line.as_bytes()).unwrap()).unwrap();
    assert_eq!(shown["result"]["tools"].as_array().unwrap().len(), 1);
    assert_eq!(shown["result"]["tools"][0]["name"], "read");
    assert_eq!(
        (shown["id"].clone(), shown["result"]["nextCursor"].clone()),
        (json!(3), json!("x"))
    );
    let (unfiltered, _) = self::registry(None, Context::default());
    assert!(unfiltered.shown(line.as_bytes()).is_none());
}

/// What a listing brings the operator is said one line per problem, with the server's
/// control characters shown, never sent (the mcp fuzz target's crash-48f21e89: a failure
/// listing two policy errors was said as one text of two lines).
#[test]
fn a_listings_problems_are_said_one_clean_line_at_a_time() {
    let policy =
        "[tools.fetch.args.url]\ntype = \"string\"\n[tools.fetch.args.path]\ntype = \"string\"\n";
    let (registry, said) = registry(Some(policy), Context::default());
    let clean = |said: &[String]| {
        for line in said {
            assert!(!line.chars().any(char::is_control), "{line:?}");
        }
    };
    // A tool left out: a warning naming it.
    let request = sent(&registry.session_ready().unwrap());
    let broken = json!({"name": "x\u{1b}[2J", "inputSchema": {"type": "object", "properties": {"a": {"type": "strin"}}}});
    assert!(answer(&registry, &request, json!({"tools": [broken]})).is_none());
    assert!(matches!(registry.wait(soon()), Ready::Policy(_)));
    assert_eq!(said.lock().unwrap().len(), 1, "{said:?}");
    clean(&said.lock().unwrap());
    // Tools the policy cannot take: the listing fails, each error on its own line.
    said.lock().unwrap().clear();
    let request = sent(&registry.list_changed().unwrap());
    let clashing = json!({"name": "fetch", "inputSchema": {"type": "object", "properties": {
        "Url": {"type": "string"}, "Path": {"type": "string"}}}});
    assert!(answer(&registry, &request, json!({"tools": [clashing]})).is_none());
    assert!(matches!(registry.wait(soon()), Ready::Failed(_)));
    let said = said.lock().unwrap();
    assert!(
        said.len() >= 3,
        "a heading and one line per error: {said:?}"
    );
    assert!(said[0].starts_with("metagate: error: "), "{said:?}");
    clean(&said);
}
