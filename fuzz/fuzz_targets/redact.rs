//! cargo-fuzz target `redact`: see `fuzz/entries.rs` for what it checks.
#![no_main]

#[path = "../entries.rs"]
mod entries;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entries::redact(data));
