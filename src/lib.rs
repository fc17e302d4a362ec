//! metagate: a deterministic gate between an LLM agent and its tools.
//!
//! The library holds every decision; the `metagate` binary only talks to the terminal.
//! Layers, each depending only on the ones below it (see `ARCHITECTURE.md`):
//!
//! - [`wire`] and [`checks`] (layer 0): reading and writing calls; what argument values may hold
//!   (paths, shell commands, hosts);
//! - [`domain`] (layer 1): the policy model, the correction pipeline, the operator's checks,
//!   events and the evolution pass;
//! - [`store`] (layer 2): the SQLite file and every SQL statement;
//! - [`jobs`] (layer 3): gate, lint, record, and the interactive grant flow.

pub mod checks;
pub mod domain;
pub mod jobs;
pub mod store;
pub mod wire;
