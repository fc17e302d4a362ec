//! MCP's stdio framing and the JSON-RPC 2.0 messages it carries: one message per line, each
//! read just far enough to route it (its kind, id and method). A message's bytes go on as they
//! came; only the parts routing needs are looked at.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The longest message read: the longest line the gate reads as one call.
pub const MAX_MESSAGE: usize = metagate_wire::lines::MAX_LINE;

/// JSON-RPC's error codes that metagate answers with.
const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// A request id as both sides compare it: a string by its value, a number by its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A numeric id, as written.
    Number(String),
    /// A string id.
    Text(String),
}

impl RequestId {
    /// The id in a JSON value: a string or an integer (MCP allows no other).
    fn read(raw: &RawValue) -> Option<RequestId> {
        let text = raw.get();
        if text.starts_with('"') {
            return serde_json::from_str::<String>(text)
                .ok()
                .map(RequestId::Text);
        }
        let digits = text.strip_prefix('-').unwrap_or(text);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| RequestId::Number(text.to_string()))
    }

    /// The id as JSON.
    pub fn to_json(&self) -> String {
        match self {
            RequestId::Number(n) => n.clone(),
            RequestId::Text(s) => serde_json::to_string(s).expect("strings serialize"),
        }
    }

    /// The id in `params.requestId` of a `notifications/cancelled`.
    pub fn cancelled_by(params: Option<&RawValue>) -> Option<RequestId> {
        #[derive(Deserialize)]
        struct Cancel<'a> {
            #[serde(rename = "requestId", borrow)]
            request_id: Option<&'a RawValue>,
        }
        let cancel: Cancel<'_> = serde_json::from_str(params?.get()).ok()?;
        RequestId::read(cancel.request_id?)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// What a message is.
#[derive(Debug, Clone)]
pub enum Kind<'a> {
    /// A call the server must answer.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: Cow<'a, str>,
    },
    /// A message that wants no answer.
    Notification {
        /// Its method.
        method: Cow<'a, str>,
    },
    /// An answer; `id` is `None` for an error about a request that could not be read.
    Response {
        /// The request it answers.
        id: Option<RequestId>,
        /// Whether it is an error.
        failed: bool,
    },
    /// A JSON-RPC batch (an array of messages), which MCP dropped in its 2025-06-18 revision.
    Batch(Vec<&'a RawValue>),
}

/// One message, read.
#[derive(Debug, Clone)]
pub struct Message<'a> {
    /// What the message is.
    pub kind: Kind<'a>,
    /// Its `params`, unread.
    pub params: Option<&'a RawValue>,
    pub(crate) result: Option<&'a RawValue>,
    pub(crate) error: Option<&'a RawValue>,
}

/// Why a line is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// Not JSON (or a key given twice, which readers take differently).
    Parse(String),
    /// JSON, but not a JSON-RPC 2.0 message; the id, when one could be read.
    Request {
        /// The request's id, when it could be read.
        id: Option<RequestId>,
        /// What is wrong.
        message: String,
    },
}

impl Invalid {
    /// The JSON-RPC error answering it: its code, the id to answer and the message.
    pub fn answer(&self) -> (i64, Option<&RequestId>, &str) {
        match self {
            Invalid::Parse(m) => (PARSE_ERROR, None, m),
            Invalid::Request { id, message } => (INVALID_REQUEST, id.as_ref(), message),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::Parse(m) | Invalid::Request { message: m, .. } => f.write_str(m),
        }
    }
}

/// A field as it was written, `null` included (an `Option` would read `null` as absent).
#[derive(Default)]
struct Slot<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Slot<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| Slot(Some(raw)))
    }
}

/// The fields of a message routing reads; the others are kept in the bytes. A field given
/// twice is an error (serde's), as two readers may each take a different one.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(default, borrow)]
    jsonrpc: Slot<'a>,
    #[serde(default, borrow)]
    id: Slot<'a>,
    #[serde(default, borrow)]
    method: Slot<'a>,
    #[serde(default, borrow)]
    params: Slot<'a>,
    #[serde(default, borrow)]
    result: Slot<'a>,
    #[serde(default, borrow)]
    error: Slot<'a>,
}

/// Reads one message (a line without its line end).
pub fn read(line: &[u8]) -> Result<Message<'_>, Invalid> {
    let text = std::str::from_utf8(line)
        .map_err(|e| Invalid::Parse(format!("the message is not UTF-8: {e}")))?;
    if text.trim_start().starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(text)
            .map_err(|e| Invalid::Parse(format!("the message is not JSON: {e}")))?;
        return Ok(Message {
            kind: Kind::Batch(items),
            params: None,
            result: None,
            error: None,
        });
    }
    let fields: Fields<'_> = serde_json::from_str(text).map_err(|e| {
        if e.is_data() {
            // Valid JSON, but not an object (or a field given twice).
            Invalid::Request {
                id: None,
                message: format!("not a JSON-RPC message: {e}"),
            }
        } else {
            Invalid::Parse(format!("the message is not JSON: {e}"))
        }
    })?;
    let raw_id = fields.id.0;
    let id = raw_id.and_then(RequestId::read);
    let bad = |message: String| Invalid::Request {
        id: id.clone(),
        message,
    };
    if fields.jsonrpc.0.map(RawValue::get) != Some("\"2.0\"") {
        return Err(bad(
            "not a JSON-RPC 2.0 message: \"jsonrpc\" must be \"2.0\"".into(),
        ));
    }
    let kind = match fields.method.0 {
        Some(method) => {
            let method: Cow<'_, str> = serde_json::from_str(method.get())
                .map_err(|_| bad("\"method\" must be a string".into()))?;
            if fields.result.0.is_some() || fields.error.0.is_some() {
                return Err(bad(
                    "a request or notification has no \"result\" or \"error\"".into(),
                ));
            }
            match (raw_id, id.clone()) {
                (None, _) => Kind::Notification { method },
                (Some(_), Some(id)) => Kind::Request { id, method },
                (Some(raw), None) => {
                    return Err(bad(format!(
                        "a request id is a string or an integer, not {}",
                        raw.get()
                    )));
                }
            }
        }
        None => match (fields.result.0, fields.error.0) {
            (Some(_), None) | (None, Some(_)) if raw_id.is_some() => {
                let failed = fields.error.0.is_some();
                if id.is_none() && !(failed && raw_id.map(RawValue::get) == Some("null")) {
                    return Err(bad("a response's id is a string or an integer".into()));
                }
                Kind::Response {
                    id: id.clone(),
                    failed,
                }
            }
            _ => {
                return Err(bad(
                    "neither a request (\"method\") nor a response (\"id\" with one of \"result\" or \"error\")"
                        .into(),
                ));
            }
        },
    };
    Ok(Message {
        kind,
        params: fields.params.0,
        result: fields.result.0,
        error: fields.error.0,
    })
}

/// A JSON-RPC error answer, as one line with its newline.
pub fn error_line(id: Option<&RequestId>, code: i64, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + message.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        Some(id) => out.extend_from_slice(id.to_json().as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"error\":{\"code\":");
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    metagate_wire::scan::write_string(message, &mut out);
    out.extend_from_slice(b"}}\n");
    out
}

/// Whether a line holds nothing but white space (skipped: it is no message).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> Kind<'_> {
        read(line.as_bytes()).unwrap().kind
    }

    #[test]
    fn reads_the_four_kinds() {
        assert!(matches!(
            kind(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#),
            Kind::Request { id: RequestId::Number(n), method } if n == "7" && method == "tools/call"
        ));
        assert!(matches!(
            kind(r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#),
            Kind::Notification { method } if method == "notifications/initialized"
        ));
        assert!(matches!(
            kind(r#"{"result":{},"jsonrpc":"2.0","id":"a\u0062"}"#),
            Kind::Response { id: Some(RequestId::Text(t)), failed: false } if t == "ab"
        ));
        assert!(matches!(
            kind(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#),
            Kind::Response {
                id: None,
                failed: true
            }
        ));
        assert!(
            matches!(kind(r#"[{"jsonrpc":"2.0","method":"x"}]"#), Kind::Batch(items) if items.len() == 1)
        );
    }

    #[test]
    fn refuses_what_is_not_a_message() {
        let refused = |line: &str| read(line.as_bytes()).unwrap_err();
        assert!(matches!(refused("{\"jsonrpc\":"), Invalid::Parse(_)));
        assert!(matches!(refused("not json"), Invalid::Parse(_)));
        for line in [
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}"#,
            "7",
        ] {
            assert!(matches!(refused(line), Invalid::Request { .. }), "{line}");
        }
        let Invalid::Request { id, .. } = refused(r#"{"jsonrpc":"2.0","id":"x","method":1}"#)
        else {
            panic!()
        };
        assert_eq!(id, Some(RequestId::Text("x".into())));
    }

    #[test]
    fn error_lines_are_json_rpc() {
        let line = error_line(Some(&RequestId::Text("q\"".into())), -32600, "bad \"x\"");
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["id"], "q\"");
        assert_eq!(v["error"]["code"], -32600);
        assert_eq!(v["error"]["message"], "bad \"x\"");
        assert!(line.ends_with(b"}\n"));
    }

    #[test]
    fn cancellations_name_their_request() {
        let msg = read(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}"#).unwrap();
        assert_eq!(
            RequestId::cancelled_by(msg.params),
            Some(RequestId::Number("3".into()))
        );
    }
}
