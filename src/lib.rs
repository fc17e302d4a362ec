//! metagate: a deterministic gate between an LLM agent and its tools.
//!
//! The library holds every decision; the `metagate` binary only talks to the terminal.
//! Layers, each depending only on the ones below it (DESIGN.md §1):
//!
//! - leaves: [`args`] (arguments read lazily), [`call`] (envelopes), [`repair`] (lenient JSON), [`scan`] (strict JSON split
//!   into raw fields), [`lines`] (input lines of bounded length), [`error`] (taxonomy), [`correction`] (what was changed), [`display`]
//!   (stored text made safe for a terminal line),
//!   [`redact`] (secrets out), [`pathcheck`] and [`shellcheck`] (what paths and commands may do,
//!   both screening with `needles`);
//! - domain: [`schema`] (tool registry and policy file), [`correct`] (the pipeline),
//!   [`events`] (what `record` appends), [`policy`] (the operator's checks);
//! - storage: [`store`] (the SQLite file), [`telemetry`] (writing decisions and events);
//! - grants: [`permit`] (time-boxed capability grants: coverage, store, interactive flow);
//! - jobs: [`gate`], [`lint`], [`record`], [`evaluate`].

pub mod args;
pub mod call;
pub mod correction;
pub mod display;
pub mod error;
pub mod lines;
mod needles;
pub mod pathcheck;
pub mod redact;
pub mod repair;
pub mod scan;
pub mod shellcheck;

pub mod checks;

pub mod correct;
pub mod events;
pub mod policy;
pub mod schema;

pub mod store;
pub mod telemetry;

pub mod evaluate;
pub mod gate;
pub mod lint;
pub mod permit;
pub mod record;
