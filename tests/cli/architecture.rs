//! What the compiler cannot see of the architecture: the crates' dependencies on each other point
//! down the layers (the compiler only refuses a cycle, not an arrow upward that makes none), and
//! every path `ARCHITECTURE.md` names exists.

use std::path::Path;

/// The layer crates, lowest first; a crate may depend only on crates before it.
const LAYERS: [&str; 5] = [
    "metagate-wire",
    "metagate-checks",
    "metagate-core",
    "metagate-store",
    "metagate",
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(krate: &str) -> toml::Table {
    let path = if krate == "metagate" {
        repo().join("Cargo.toml")
    } else {
        repo().join("crates").join(krate).join("Cargo.toml")
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The layer crates a manifest names in any of its dependency tables (normal, dev, build and
/// per-target ones).
fn layer_dependencies(table: &toml::Table) -> Vec<String> {
    let mut found = Vec::new();
    let mut visit = |deps: &toml::Table| {
        found.extend(
            deps.keys()
                .filter(|k| LAYERS.contains(&k.as_str()))
                .cloned(),
        );
    };
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(deps) = table.get(key).and_then(|d| d.as_table()) {
            visit(deps);
        }
    }
    if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
        for target in targets.values().filter_map(|t| t.as_table()) {
            for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                if let Some(deps) = target.get(key).and_then(|d| d.as_table()) {
                    visit(deps);
                }
            }
        }
    }
    found
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let mut problems = Vec::new();
    for (layer, krate) in LAYERS.iter().enumerate() {
        for dep in layer_dependencies(&manifest(krate)) {
            let below = LAYERS.iter().position(|l| *l == dep).unwrap();
            if below >= layer {
                problems.push(format!("{krate} depends on {dep}, which is not below it"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The generators (`xtask/`) stand beside the layers: they may use the crates below the binary,
/// and only the binary's tests use them, so nothing of them is in what ships.
#[test]
fn only_the_binarys_tests_use_the_generators() {
    let xtask = manifest_at(&repo().join("xtask/Cargo.toml"));
    assert!(!layer_dependencies(&xtask).contains(&"metagate".to_string()));
    for krate in LAYERS {
        let table = manifest(krate);
        for key in ["dependencies", "build-dependencies"] {
            let deps = table.get(key).and_then(|d| d.as_table());
            assert!(
                !deps.is_some_and(|d| d.contains_key("xtask")),
                "{krate}'s [{key}] names xtask: the generators would ship"
            );
        }
    }
}

fn manifest_at(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_crate_in_the_workspace_is_a_known_layer() {
    let crates = std::fs::read_dir(repo().join("crates")).unwrap();
    for entry in crates {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            LAYERS.contains(&name.as_str()),
            "crates/{name} is not in the layer list of this test (and of ARCHITECTURE.md)"
        );
    }
}

#[test]
fn every_path_architecture_md_names_exists() {
    let text = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    let mut named = 0;
    for quoted in text.split('`').skip(1).step_by(2) {
        let looks_like_path = [
            "src/",
            "crates/",
            "tests/",
            "scripts/",
            "fixtures/",
            "benches/",
            "xtask/",
            "docs/",
        ]
        .iter()
        .any(|top| quoted.starts_with(top));
        if !looks_like_path || quoted.contains(char::is_whitespace) {
            continue;
        }
        named += 1;
        let bare = quoted.trim_end_matches('/');
        let with_rs = format!("{bare}.rs");
        if !repo().join(bare).exists() && !repo().join(&with_rs).exists() {
            missing.push(quoted.to_owned());
        }
    }
    assert!(
        named > 20,
        "ARCHITECTURE.md names only {named} paths: is the pattern still right?"
    );
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:#?}"
    );
}

/// The contracts the code relies on are stated in this repository (ARCHITECTURE.md and docs/):
/// no source file points at a design document outside it.
#[test]
fn no_source_points_at_a_design_document_outside_the_repository() {
    let outside = concat!("DESIGN", ".md");
    let mut found = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = ["src", "crates", "tests", "xtask", "benches"]
        .iter()
        .map(|d| repo().join(d))
        .collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (n, line) in text.lines().enumerate() {
                    if line.contains(outside) {
                        found.push(format!("{}:{}", path.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "{outside} named at {found:#?}");
}
