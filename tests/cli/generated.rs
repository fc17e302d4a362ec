//! The checked-in completions and man pages match what the binary generates.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::Sandbox;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_file())
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        std::fs::read(&p).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn completions_and_man_pages_are_current() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["generate", "--out"])
        .arg(sb.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["completions", "man"] {
        let fresh = files(&sb.path().join(dir));
        let checked_in = files(&repo.join(dir));
        assert!(!fresh.is_empty());
        let stale: Vec<&String> = fresh
            .keys()
            .chain(checked_in.keys())
            .filter(|name| fresh.get(*name) != checked_in.get(*name))
            .collect();
        assert!(
            stale.is_empty(),
            "{dir}/ is stale ({stale:?}); regenerate with: cargo run -- generate --out ."
        );
    }
}

/// What help leaves out, completions leave out too: the test clock and `generate`; every
/// command help shows is still offered.
#[test]
fn completions_offer_only_what_help_shows() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, text) in files(&repo.join("completions")) {
        let text = String::from_utf8(text).unwrap();
        assert!(!text.contains("--now"), "{name} offers --now");
        assert!(!text.contains("generate"), "{name} offers generate");
        for command in [
            "gate", "record", "lint", "evaluate", "health", "grant", "--intent",
        ] {
            assert!(text.contains(command), "{name} lacks {command}");
        }
    }
}
