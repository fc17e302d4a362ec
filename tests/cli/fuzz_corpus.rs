//! Replays the fuzzers' kept inputs under `cargo test`: every file of `fuzz/seeds/TARGET/` (the
//! starting inputs), `fuzz/corpus/TARGET/` (what the campaigns found, minimized) and
//! `fuzz/regressions/TARGET/` (inputs that once crashed or hung a target, each fixed) is fed
//! to the same entry point the cargo-fuzz target calls (`fuzz/entries.rs`), so an input
//! found once stays fixed without nightly or libFuzzer.
//! docs/fuzzing.md says how the corpus is grown and kept small.

#[path = "../../fuzz/entries.rs"]
mod entries;

use std::path::Path;

/// What a target does with one input.
type Entry = fn(&[u8]);

/// Every target and its entry point, as `fuzz/fuzz_targets/` names them.
const TARGETS: &[(&str, Entry)] = &[
    ("gate", entries::gate),
    ("repair", entries::repair),
    ("path", entries::path),
    ("policy_toml", entries::policy_toml),
    ("record_events", entries::record_events),
    ("lint_trace", entries::lint_trace),
    ("tools_import", entries::tools_import),
    ("mcp", entries::mcp),
    ("redact", entries::redact),
    ("shell", entries::shell),
];

#[test]
fn every_kept_fuzz_input_is_handled() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut fed = 0;
    for (target, entry) in TARGETS {
        let mut files = Vec::new();
        for kept in ["seeds", "corpus", "regressions"] {
            let folder = fuzz.join(kept).join(target);
            let Ok(listing) = std::fs::read_dir(&folder) else {
                continue;
            };
            files.extend(listing.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
        }
        assert!(!files.is_empty(), "no kept inputs for the {target} target");
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            // A panic names the file: the input to fix, and to keep in regressions/. (A hang
            // shows as this test not ending; the campaigns time inputs out at 10 s.)
            let outcome = std::panic::catch_unwind(|| entry(&data));
            assert!(outcome.is_ok(), "{target}: {} panics", file.display());
            fed += 1;
        }
    }
    assert!(fed >= TARGETS.len(), "{fed} inputs fed");
}
