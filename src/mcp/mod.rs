//! The `mcp` job: metagate between an MCP client and an MCP server on stdio. Every message is
//! relayed as it came, each as soon as it is complete, except that every `tools/call` is
//! decided by the gate first: corrected arguments go on, a refused call is answered to the
//! client as a tool error and never reaches the server. The registry the gate decides with is
//! the server's own tool list under the policy file; what became of each forwarded call is
//! recorded as an outcome of its decision.
//!
//! - [`framing`]: one JSON-RPC message per line, read just far enough to route it;
//! - [`queue`]: the bounded queue in front of each side;
//! - [`guard`]: what the relay refuses to pass whatever the gate says;
//! - [`registry`]: the server's tools, listed by metagate itself, under the policy;
//! - [`calls`]: the gate's decision on one `tools/call`;
//! - [`clients`]: the configuration snippets MCP clients start the proxy from;
//! - [`outcomes`]: answers read as outcomes and written to the store;
//! - [`relay`]: the threads that move messages between the two sides;
//! - `http` (feature `http`): the Streamable HTTP front, many sessions in one process.

pub mod calls;
pub mod clients;
pub mod framing;
mod guard;
#[cfg(feature = "http")]
pub mod http;
pub mod outcomes;
mod queue;
pub mod registry;
mod relay;

use std::sync::Arc;
use std::time::Duration;

use crate::gate::Options;
use metagate_core::enforce::Context;
use metagate_core::policy::Policy;
use metagate_store::StoreError;
use metagate_store::any::AnyStore;

pub use calls::CheckerSetup;
pub use queue::Bounds;
pub use registry::PolicyInputs;
pub use relay::{End, Relay, Streams};

/// Where the relay's diagnostics go: one line each, without its newline.
pub type Diag = Arc<dyn Fn(&str) + Send + Sync>;

/// Says `text` through `diag` as it takes it: one line at a time, none with a control
/// character left. A listing's failure lists each policy error on a line of its own, and
/// carries the server's tool names and messages, which must not move the operator's terminal.
pub(crate) fn say(diag: &Diag, text: &str) {
    for line in text.lines() {
        diag(&metagate_wire::display::one_line(line));
    }
}
/// Milliseconds since the epoch.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;
/// Opens the telemetry store (each thread that writes opens its own connection).
pub type OpenStore = Arc<dyn Fn() -> Result<AnyStore, StoreError> + Send + Sync>;

/// How long a `tools/call` waits for metagate's own listing of the server's tools.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything a relay decides and records with.
pub struct Config {
    /// What the registry is built from, with each listing of the server's tools.
    pub policy: PolicyInputs,
    /// The policy before any listing (`policy` built without server tools).
    pub base: Policy,
    /// Who calls and why, for every call of the session.
    pub context: Context,
    /// `quiet` and `explain` are read; calls go out in the envelope they came in.
    pub options: Options,
    /// What the path and shell checks start from.
    pub checker: CheckerSetup,
    /// Opens the store; `None` with telemetry off.
    pub telemetry: Option<OpenStore>,
    /// Milliseconds since the epoch.
    pub clock: Clock,
    /// Where diagnostics go.
    pub diag: Diag,
    /// How much the queues may hold.
    pub bounds: Bounds,
    /// How long to wait for the server's tool list.
    pub list_timeout: Duration,
}
