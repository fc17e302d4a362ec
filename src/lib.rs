//! metagate's jobs: what each command does, over the layer crates beneath it.
//!
//! The crates, each depending only on the ones below it (see `ARCHITECTURE.md`):
//!
//! - `metagate-wire`: reading and writing calls, repair;
//! - `metagate-checks`: what argument values may hold (paths, shell commands, hosts, secrets);
//! - `metagate-core`: the policy model, the correction pipeline, the operator's checks, grants,
//!   events and the evolution pass;
//! - `metagate-store`: the SQLite file and the PostgreSQL store, and every SQL statement;
//! - this crate: gate, lint, mcp, record, evaluate, health and the grant flow, and the
//!   `metagate` binary, which talks to the terminal.

pub mod evaluate;
pub mod evaluate_html;
pub mod gate;
pub mod health;
pub mod lint;
pub mod mcp;
pub mod own_files;
pub mod permit;
pub mod record;
pub mod run;
