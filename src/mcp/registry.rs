//! The tool registry the gate decides with: the server's own `tools/list` (every page), read
//! as `--tools` reads an MCP tools file, layered under the policy file's entries for those
//! names. metagate lists the tools itself, with requests of its own the client never sees:
//! once the session is set up, again whenever the server says its list changed, and again
//! when a listing failed. A `tools/call` waits while a listing runs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Diag;
use super::framing::{Kind, Message, RequestId};
use super::guard::Listed;
use metagate_core::enforce::{Context, admits};
use metagate_core::policy::{Policy, PolicyErrors, ReadError, Source};

/// The name the server's tool list goes by in messages, as a tools file's path would.
const SERVER_TOOLS: &str = "<the server's tools/list>";

/// The prefix of the ids of metagate's own requests to the server. A client request using it
/// is refused, so an answer is never taken for the wrong one.
pub(crate) const OWN_ID_PREFIX: &str = "metagate:";

/// The `_meta` keys a stateless (2026-07-28) client puts on every request, which metagate's
/// own requests copy from the client's.
const SESSION_META: [&str; 3] = [
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
];

/// Reads a file a policy names (its `[[import]]`s); given by the binary, which owns files.
pub type ReadFile = Arc<dyn Fn(&Path) -> Result<String, ReadError> + Send + Sync>;

/// What a policy is built from: the policy file (none: the built-in policy) and how to read
/// what it imports.
#[derive(Clone)]
pub struct PolicyInputs {
    /// The name errors give the policy file.
    pub name: String,
    /// The policy file's text; none for the built-in policy.
    pub text: Option<String>,
    /// Where the policy file is, for suggested commands.
    pub origin: Option<PathBuf>,
    /// How to read the files the policy imports.
    pub read: ReadFile,
}

impl PolicyInputs {
    /// The policy with `server_tools` (the items of a `tools/list` result) imported under the
    /// file's entries, and a warning for each tool read around (a broken schema, a name given
    /// twice): one bad tool does not take the others' checks away.
    pub fn build(&self, server_tools: &[Value]) -> Result<(Policy, Vec<String>), PolicyErrors> {
        let listed = (!server_tools.is_empty())
            .then(|| serde_json::json!({ "tools": server_tools }).to_string());
        let extra: Vec<PathBuf> = listed.iter().map(|_| PathBuf::from(SERVER_TOOLS)).collect();
        let read = |p: &Path| match &listed {
            Some(text) if p == Path::new(SERVER_TOOLS) => Ok(text.clone()),
            _ => (self.read)(p),
        };
        let source = self.text.as_deref().map(|text| Source {
            name: &self.name,
            text,
        });
        Policy::load(source, self.origin.clone(), &extra, &read).map(|p| {
            let warnings = p.import_warnings.iter().map(ToString::to_string).collect();
            (p, warnings)
        })
    }
}

/// Where the registry stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    /// Not listed yet: the policy alone.
    Unlisted,
    /// The server's tools as last listed (or the server has no tools to list).
    Current,
    /// The last listing failed; the next call tries again.
    Failed(String),
}

/// A listing under way.
struct Listing {
    /// The id of the page request waiting for its answer.
    id: RequestId,
    tools: Vec<Value>,
    /// How much came in, bounded (see [`super::guard`]).
    listed: Listed,
    /// The server said its list changed while this listing ran: list again after it.
    again: bool,
    started: Instant,
}

struct State {
    policy: Arc<Policy>,
    status: Status,
    listing: Option<Listing>,
    sent: u64,
    /// The `_meta` metagate's requests carry (see [`SESSION_META`]), as JSON text.
    meta: Option<String>,
    /// Whether the server said it has tools (`initialize`); unknown until it answers.
    server_has_tools: Option<bool>,
}

/// What a `tools/call` waiting for the registry gets.
pub enum Ready {
    /// The policy to decide with.
    Policy(Arc<Policy>),
    /// No listing could be had: why.
    Failed(String),
}

/// The policy as of the server's latest tool list, shared by the relay's threads.
pub struct Registry {
    inputs: PolicyInputs,
    state: Mutex<State>,
    changed: Condvar,
    context: Context,
    diag: Diag,
}

impl Registry {
    /// A registry holding `base` (the policy built without the server's tools) until the
    /// server's tools are listed; `context` decides which tools a client's list shows.
    pub fn new(inputs: PolicyInputs, base: Policy, context: Context, diag: Diag) -> Registry {
        Registry {
            inputs,
            state: Mutex::new(State {
                policy: Arc::new(base),
                status: Status::Unlisted,
                listing: None,
                sent: 0,
                meta: None,
                server_has_tools: None,
            }),
            changed: Condvar::new(),
            context,
            diag,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The policy as it stands.
    pub fn policy(&self) -> Arc<Policy> {
        Arc::clone(&self.lock().policy)
    }

    /// Whether `id` is one of metagate's own request ids (see [`OWN_ID_PREFIX`]).
    pub fn is_own(id: &RequestId) -> bool {
        matches!(id, RequestId::Text(t) if t.starts_with(OWN_ID_PREFIX))
    }

    /// The server answered `initialize`: whether it has tools decides whether there is
    /// anything to list.
    pub(crate) fn initialized(&self, result: Option<&RawValue>) {
        #[derive(Deserialize)]
        struct Init<'a> {
            #[serde(borrow)]
            capabilities: Option<Caps<'a>>,
        }
        #[derive(Deserialize)]
        struct Caps<'a> {
            #[serde(borrow)]
            tools: Option<&'a RawValue>,
        }
        let has_tools = result
            .and_then(|r| serde_json::from_str::<Init<'_>>(r.get()).ok())
            .map(|i| i.capabilities.and_then(|c| c.tools).is_some());
        let mut state = self.lock();
        state.server_has_tools = has_tools;
        if has_tools == Some(false) {
            state.status = Status::Current;
            self.changed.notify_all();
        }
    }

    /// The client said the session is set up: the first listing, unless the server has no
    /// tools. Returns the request to send.
    pub fn session_ready(&self) -> Option<Vec<u8>> {
        let mut state = self.lock();
        if state.server_has_tools == Some(false) || state.status == Status::Current {
            return None;
        }
        self.begin(&mut state)
    }

    /// Before a `tools/call` is decided: the listing it needs, when the registry is not
    /// current and none runs. `params` are the call's, whose `_meta` a stateless client fills.
    pub(crate) fn before_call(&self, params: Option<&RawValue>) -> Option<Vec<u8>> {
        let mut state = self.lock();
        if let Some(meta) = session_meta(params) {
            state.meta = Some(meta);
        }
        if state.status == Status::Current || state.listing.is_some() {
            return None;
        }
        self.begin(&mut state)
    }

    /// Waits (until `deadline`) for a listing under way to end, then says what to decide with.
    pub fn wait(&self, deadline: Instant) -> Ready {
        let mut state = self.lock();
        while state.listing.is_some() {
            let now = Instant::now();
            if now >= deadline {
                let waited = state
                    .listing
                    .as_ref()
                    .map_or(0, |l| now.saturating_duration_since(l.started).as_millis());
                return Ready::Failed(format!(
                    "the server has not answered metagate's tools/list in {waited} ms"
                ));
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        match &state.status {
            Status::Failed(why) => Ready::Failed(why.clone()),
            Status::Unlisted | Status::Current => Ready::Policy(Arc::clone(&state.policy)),
        }
    }

    /// The server said its tool list changed: list again (after the listing under way, if
    /// one is). Returns the request to send.
    pub(crate) fn list_changed(&self) -> Option<Vec<u8>> {
        let mut state = self.lock();
        match &mut state.listing {
            Some(listing) => {
                listing.again = true;
                None
            }
            None => self.begin(&mut state),
        }
    }

    /// An answer to one of metagate's own requests: the next page's request, if any.
    pub fn answer(&self, message: &Message<'_>) -> Option<Vec<u8>> {
        let Kind::Response { id: Some(id), .. } = &message.kind else {
            return None;
        };
        let mut state = self.lock();
        if state.listing.as_ref().is_none_or(|l| l.id != *id) {
            return None; // an answer to a listing given up on
        }
        let size = message.result.map_or(0, |r| r.get().len());
        if let Err(why) = state
            .listing
            .as_mut()
            .expect("checked above")
            .listed
            .page_of(size)
        {
            return self.finish(&mut state, Err(why));
        }
        let page = message
            .result
            .ok_or_else(|| {
                let error = message.error.map_or("", RawValue::get);
                format!("the server answered metagate's tools/list with an error: {error}")
            })
            .and_then(|r| {
                serde_json::from_str::<Page>(r.get())
                    .map_err(|e| format!("the server's tools/list result is not one: {e}"))
            });
        let listing = state.listing.as_mut().expect("checked above");
        let cursor = match page {
            Ok(page) => {
                let counted = listing
                    .listed
                    .tools(page.tools.len(), page.next_cursor.is_some());
                if let Err(why) = counted {
                    return self.finish(&mut state, Err(why));
                }
                listing.tools.extend(page.tools);
                page.next_cursor
            }
            Err(why) => return self.finish(&mut state, Err(why)),
        };
        match cursor {
            Some(cursor) => {
                let (id, line) = self.request(&mut state, Some(&cursor));
                state.listing.as_mut().expect("checked above").id = id;
                Some(line)
            }
            None => {
                let listing = state.listing.as_mut().expect("checked above");
                let tools = std::mem::take(&mut listing.tools);
                self.finish(&mut state, Ok(tools))
            }
        }
    }

    /// The server is gone: nothing waits for a listing any more.
    pub fn server_gone(&self) {
        let mut state = self.lock();
        if state.listing.take().is_some() {
            state.status = Status::Failed("the server ended before it listed its tools".into());
        }
        self.changed.notify_all();
    }

    /// Ends the listing under way: the new policy, or why there is none. Starts the next
    /// listing when the list changed meanwhile.
    fn finish(&self, state: &mut State, tools: Result<Vec<Value>, String>) -> Option<Vec<u8>> {
        let again = state.listing.take().is_some_and(|l| l.again);
        let built = tools.and_then(|tools| {
            self.inputs
                .build(&tools)
                .map_err(|e| format!("the server's tools cannot be read with the policy:\n{e}"))
        });
        match built {
            Ok((policy, warnings)) => {
                for w in warnings {
                    super::say(&self.diag, &format!("metagate: warning: {w}"));
                }
                state.policy = Arc::new(policy);
                state.status = Status::Current;
            }
            Err(why) => {
                super::say(&self.diag, &format!("metagate: error: {why}"));
                state.status = Status::Failed(why);
            }
        }
        self.changed.notify_all();
        if again { self.begin(state) } else { None }
    }

    fn begin(&self, state: &mut State) -> Option<Vec<u8>> {
        let (id, line) = self.request(state, None);
        state.listing = Some(Listing {
            id,
            tools: Vec::new(),
            listed: Listed::default(),
            again: false,
            started: Instant::now(),
        });
        Some(line)
    }

    /// One `tools/list` request of metagate's own.
    fn request(&self, state: &mut State, cursor: Option<&str>) -> (RequestId, Vec<u8>) {
        state.sent += 1;
        let id = RequestId::Text(format!("{OWN_ID_PREFIX}tools/list:{}", state.sent));
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::String(cursor.to_string()));
        }
        if let Some(meta) = state
            .meta
            .as_deref()
            .and_then(|m| serde_json::from_str(m).ok())
        {
            params.insert("_meta".into(), meta);
        }
        let mut request = Map::new();
        request.insert("jsonrpc".into(), "2.0".into());
        request.insert(
            "id".into(),
            id.to_json().parse::<Value>().expect("an id is JSON"),
        );
        request.insert("method".into(), "tools/list".into());
        if !params.is_empty() {
            request.insert("params".into(), Value::Object(params));
        }
        let mut line = serde_json::to_vec(&Value::Object(request)).expect("JSON serializes");
        line.push(b'\n');
        (id, line)
    }

    /// A client's `tools/list` answer as the client may see it: without the tools its intent
    /// or caller does not admit. `None` when it goes on as it came.
    pub fn shown(&self, line: &[u8]) -> Option<Vec<u8>> {
        if self.context.intent.is_none() && self.context.caller.is_none() {
            return None;
        }
        let policy = self.policy();
        let mut answer: Value = serde_json::from_slice(line).ok()?;
        let tools = answer.get_mut("result")?.get_mut("tools")?.as_array_mut()?;
        let before = tools.len();
        tools.retain(|t| {
            t.get("name")
                .and_then(Value::as_str)
                .is_none_or(|name| admits(&policy, name, &self.context))
        });
        if tools.len() == before {
            return None;
        }
        let mut out = serde_json::to_vec(&answer).expect("JSON serializes");
        out.push(b'\n');
        Some(out)
    }
}

/// One page of a `tools/list` result.
#[derive(Deserialize)]
struct Page {
    tools: Vec<Value>,
    #[serde(rename = "nextCursor")]
    next_cursor: Option<String>,
}

/// The session keys of a request's `_meta` (see [`SESSION_META`]), as a JSON object's text.
pub(super) fn session_meta(params: Option<&RawValue>) -> Option<String> {
    let text = params?.get();
    // Most requests carry none: skip the parse.
    if !text.contains(SESSION_META[0]) {
        return None;
    }
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Map<String, Value>>,
    }
    let meta = serde_json::from_str::<Params>(text).ok()?.meta?;
    let kept: Map<String, Value> = meta
        .into_iter()
        .filter(|(k, _)| SESSION_META.contains(&k.as_str()))
        .collect();
    (!kept.is_empty()).then(|| Value::Object(kept).to_string())
}

#[cfg(test)]
mod tests;
