//! The relay between in-process fakes of a client and a server, on real pipes.

use std::io::{BufRead, BufReader, PipeReader, PipeWriter, Write, pipe};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::gate::Options;
use crate::mcp::{Bounds, CheckerSetup, PolicyInputs};
use metagate_core::enforce::Context;

/// The fake client's ends and what metagate said.
struct Session {
    to_relay: PipeWriter,
    from_relay: BufReader<PipeReader>,
    relay: Relay,
    said: Arc<Mutex<Vec<String>>>,
}

/// The fake server's ends.
struct Server {
    from_relay: BufReader<PipeReader>,
    to_relay: PipeWriter,
}

fn start(policy: Option<&str>, bounds: Bounds) -> (Session, Server) {
    let (client_in_r, client_in_w) = pipe().unwrap();
    let (client_out_r, client_out_w) = pipe().unwrap();
    let (server_in_r, server_in_w) = pipe().unwrap();
    let (server_out_r, server_out_w) = pipe().unwrap();
    let said = Arc::new(Mutex::new(Vec::new()));
    let diag: Diag = {
        let said = Arc::clone(&said);
        Arc::new(move |line: &str| said.lock().unwrap().push(line.to_string()))
    };
    let inputs = PolicyInputs {
        name: "p.toml".into(),
        text: policy.map(str::to_string),
        origin: None,
        read: Arc::new(|p: &std::path::Path| {
            Err(metagate_core::policy::ReadError::new(
                p,
                std::io::ErrorKind::NotFound.into(),
            ))
        }),
    };
    let base = inputs.build(&[]).unwrap().0;
    let config = Config {
        policy: inputs,
        base,
        context: Context::default(),
        options: Options::default(),
        checker: CheckerSetup {
            cwd: std::env::temp_dir(),
            ..CheckerSetup::default()
        },
        telemetry: None,
        clock: Arc::new(|| 0),
        diag,
        bounds,
        list_timeout: Duration::from_secs(5),
    };
    let relay = Relay::start(
        config,
        Streams {
            client_in: Box::new(client_in_r),
            client_out: Box::new(client_out_w),
            server_in: Box::new(server_in_w),
            server_out: Box::new(server_out_r),
        },
    );
    (
        Session {
            to_relay: client_in_w,
            from_relay: BufReader::new(client_out_r),
            relay,
            said,
        },
        Server {
            from_relay: BufReader::new(server_in_r),
            to_relay: server_out_w,
        },
    )
}

fn send(to: &mut PipeWriter, message: &Value) {
    writeln!(to, "{message}").unwrap();
}

fn receive(from: &mut BufReader<PipeReader>) -> Value {
    let mut line = String::new();
    assert!(
        from.read_line(&mut line).unwrap() > 0,
        "the relay closed the pipe"
    );
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// Runs `work` in a thread and fails the test when it takes longer than `limit`: a relay that
/// deadlocks fails, rather than hanging the suite.
fn within<T: Send + 'static>(limit: Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, finished): (_, Receiver<T>) = channel();
    std::thread::spawn(move || {
        let _ = done.send(work());
    });
    finished
        .recv_timeout(limit)
        .expect("the relay is stuck: nothing moved within the time limit")
}

fn echo_tool() -> Value {
    json!({"name": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}, "count": {"type": "integer"}}, "required": ["message"]}})
}

/// Answers metagate's own `tools/list` (whose answer the client never sees).
fn answer_listing(server: &mut Server, tools: Value) {
    let request = receive(&mut server.from_relay);
    assert_eq!(request["method"], "tools/list");
    send(
        &mut server.to_relay,
        &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": tools}}),
    );
}

#[test]
fn calls_are_corrected_or_answered_and_the_rest_passes_as_it_came() {
    within(Duration::from_secs(30), || {
        let policy = "[tools.echo.aliases]\nmsg = \"message\"\n[tools.echo.args.message]\nkind = \"shell\"\n";
        let (mut client, mut server) = start(Some(policy), Bounds::default());
        // A corrected call: the server sees the corrected arguments, the id and `_meta` kept.
        send(
            &mut client.to_relay,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"msg": "hi", "count": "2"}, "_meta": {"progressToken": "p"}}}),
        );
        answer_listing(&mut server, json!([echo_tool()]));
        let call = receive(&mut server.from_relay);
        assert_eq!(call["id"], 1);
        assert_eq!(
            call["params"]["arguments"],
            json!({"message": "hi", "count": 2})
        );
        assert_eq!(call["params"]["_meta"]["progressToken"], "p");
        // Progress and the answer go back as they came.
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}});
        send(&mut server.to_relay, &progress);
        assert_eq!(receive(&mut client.from_relay), progress);
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi hi"}]}});
        send(&mut server.to_relay, &answer);
        assert_eq!(receive(&mut client.from_relay), answer);
        // A refused call is answered to the client and never reaches the server.
        send(
            &mut client.to_relay,
            &json!({"jsonrpc": "2.0", "id": "r", "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "$(reboot)"}}}),
        );
        let refused = receive(&mut client.from_relay);
        assert_eq!(refused["id"], "r");
        assert_eq!(refused["result"]["isError"], true);
        let text = refused["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("[tool_error]\ncategory: policy_blocked"),
            "{text}"
        );
        // Not JSON: a JSON-RPC error, nothing forwarded.
        writeln!(client.to_relay, "{{\"jsonrpc\": \"2.0\", \"id\": 3, ").unwrap();
        let error = receive(&mut client.from_relay);
        assert_eq!(
            (error["id"].clone(), error["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        send(
            &mut client.to_relay,
            &json!({"jsonrpc": "2.0", "id": "metagate:x", "method": "ping"}),
        );
        assert_eq!(receive(&mut client.from_relay)["error"]["code"], -32600);
        // A server-to-client request and the client's answer pass both ways.
        let ask = json!({"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {"messages": []}});
        send(&mut server.to_relay, &ask);
        assert_eq!(receive(&mut client.from_relay), ask);
        let reply = json!({"jsonrpc": "2.0", "id": 0, "result": {"role": "assistant"}});
        send(&mut client.to_relay, &reply);
        assert_eq!(
            receive(&mut server.from_relay),
            reply,
            "the first message the server gets after the call"
        );
        // A server's message metagate cannot read is the server's: passed on, with a warning.
        writeln!(server.to_relay, "{{not json").unwrap();
        let mut line = String::new();
        client.from_relay.read_line(&mut line).unwrap();
        assert_eq!(line, "{not json\n");
        let said = client.said.lock().unwrap().join("\n");
        assert!(said.contains("cannot read"), "{said}");
        assert!(said.contains("(arg_alias)"), "{said}");
    });
}

#[test]
fn the_session_ends_in_order_when_the_client_leaves() {
    within(Duration::from_secs(30), || {
        let (client, mut server) = start(None, Bounds::default());
        let Session {
            mut to_relay,
            relay,
            ..
        } = client;
        send(
            &mut to_relay,
            &json!({"jsonrpc": "2.0", "method": "notifications/x"}),
        );
        drop(to_relay);
        assert_eq!(receive(&mut server.from_relay)["method"], "notifications/x");
        let mut rest = String::new();
        assert_eq!(
            server.from_relay.read_line(&mut rest).unwrap(),
            0,
            "the server's input is closed"
        );
        assert_eq!(relay.next_end(Duration::from_secs(5)), Some(End::Client));
        drop(server.to_relay);
        relay.finish(Duration::from_secs(5));
    });
}

/// One side stops reading while the other floods it: what waits for the stalled side stays
/// bounded, and the messages the stalled side itself sends still go through. Once it reads
/// again, everything arrives, in order.
fn one_side_stops_reading(client_stalls: bool) {
    let bounds = Bounds {
        messages: 64,
        bytes: 256 * 1024,
    };
    within(Duration::from_secs(60), move || {
        let (client, server) = start(None, bounds);
        // The stalled side: who floods it, and its own reader; the other direction: who the
        // stalled side talks to, and how that side reads it.
        let (mut flooder, mut stalled, mut talker, mut listener) = if client_stalls {
            (
                server.to_relay,
                client.from_relay,
                client.to_relay,
                server.from_relay,
            )
        } else {
            (
                client.to_relay,
                server.from_relay,
                server.to_relay,
                client.from_relay,
            )
        };
        let padding = "x".repeat(4096);
        let flood = 2000; // 8 MB: many times what the pipes and the queue hold
        let writer = std::thread::spawn(move || {
            for i in 0..flood {
                send(
                    &mut flooder,
                    &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": i, "data": padding}}),
                );
            }
            flooder
        });
        for i in 0..500 {
            send(
                &mut talker,
                &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"n": i}}),
            );
        }
        for i in 0..500 {
            assert_eq!(receive(&mut listener)["params"]["n"], i);
        }
        assert!(
            !writer.is_finished(),
            "the flood is held back by the side not reading"
        );
        let (to_client, to_server) = client.relay.most_queued();
        let held = if client_stalls { to_client } else { to_server };
        assert!(held <= bounds.bytes + 8192, "the queue held {held} bytes");
        for i in 0..flood {
            assert_eq!(receive(&mut stalled)["params"]["n"], i);
        }
        writer.join().unwrap();
    });
}

#[test]
fn a_client_that_stops_reading_holds_back_only_what_is_sent_to_it() {
    one_side_stops_reading(true);
}

#[test]
fn a_server_that_stops_reading_holds_back_only_what_is_sent_to_it() {
    one_side_stops_reading(false);
}
