//! The 2024-11-05 HTTP+SSE transport, which older clients still speak: `GET /sse` opens a
//! session and its one stream, whose first event (`endpoint`) names where to POST; each
//! `POST /messages?session_id=ID` carries one message and is answered 202, every answer
//! coming on the stream. The session is the same as a Streamable HTTP one: its relay, its
//! server, its caller.

use std::sync::Arc;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use super::{Reply, State, events, one_message, plain, start_session};

pub(super) async fn handle(
    state: &Arc<State>,
    request: Request<Incoming>,
    caller: Option<String>,
) -> Response<Reply> {
    match (request.method(), request.uri().path()) {
        (&Method::GET, "/sse") => {
            let session = match start_session(state, caller) {
                Ok(session) => session,
                Err(why) => {
                    (state.front.diag)(&format!("metagate: error: cannot start a session: {why}"));
                    return plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "metagate: the MCP server could not be started",
                    );
                }
            };
            let endpoint = Bytes::from(format!(
                "event: endpoint\ndata: /messages?session_id={}\n\n",
                session.id
            ));
            match session.outbox.stream_from(Some(endpoint)) {
                Some(stream) => events(stream, &session.id),
                None => plain(StatusCode::CONFLICT, "metagate: the stream is open already"),
            }
        }
        (&Method::POST, "/messages") => {
            let id = request
                .uri()
                .query()
                .unwrap_or_default()
                .split('&')
                .find_map(|pair| pair.strip_prefix("session_id="))
                .map(str::to_string);
            let session = id.and_then(|id| state.sessions().get(&id).cloned());
            let Some(session) = session.filter(|s| s.caller == caller && !s.is_over()) else {
                return plain(StatusCode::NOT_FOUND, "metagate: no such session");
            };
            let body = match one_message(request).await {
                Ok(body) => body,
                Err(refused) => return refused,
            };
            if !session.send(&body) {
                return plain(StatusCode::NOT_FOUND, "metagate: the session is over");
            }
            plain(StatusCode::ACCEPTED, "Accepted")
        }
        _ => plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "metagate: GET /sse, then POST /messages?session_id=ID",
        ),
    }
}
