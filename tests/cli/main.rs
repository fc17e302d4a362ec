//! The integration tests, one binary linked once: each module drives the real `metagate` (or, for
//! `properties`, the library's gate) for one command or concern, with the shared sandbox and
//! runners in `common`.
//!
//! proptest keeps the failures it finds in `tests/proptest-regressions/<module>.txt`: its default
//! persistence looks for the folder holding `main.rs` (this one) and writes beside it.

mod common;
#[path = "../support/postgres.rs"]
mod postgres_server;
#[path = "../support/postgres_tls.rs"]
mod postgres_tls_server;
#[path = "../support/skips.rs"]
mod skips;

mod architecture;
mod dialects;
mod envelopes;
mod evaluate;
mod evaluate_fortnight;
mod evaluate_week;
mod first_use;
mod fleet;
mod fuzz_corpus;
mod gate;
mod generated;
mod hardening;
mod hardening_io;
mod hardening_shell;
mod lint;
mod mcp;
mod messages;
mod otel;
mod peer_repair;
mod permit;
mod pg_tls;
mod policy;
mod policy_checks;
mod properties;
mod readme;
mod repair;
mod repair_rules;
#[cfg(target_os = "linux")]
mod run;
mod setup;
mod shell;
mod telemetry;
mod terminal;
mod tools;
mod url_parsers;
