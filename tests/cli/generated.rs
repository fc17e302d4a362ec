//! The checked-in completions and man pages match what `cargo xtask generate` writes from the
//! binary's command line now.

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
    xtask::generate(sb.path()).unwrap();
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
            "{dir}/ is stale ({stale:?}); regenerate: cargo xtask generate (docs/development.md)"
        );
    }
}

/// What help leaves out, completions leave out too: the test clock; every command help shows
/// is still offered, and the generators are no command of the binary.
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

/// Man pages name each option's value in the synopsis, give the exit status its own section,
/// and carry the version; `lint` shows its paths as required.
#[test]
fn man_pages_read_as_man_pages() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = files(&repo.join("man"));
    assert!(pages.len() > 10);
    let version = env!("CARGO_PKG_VERSION");
    for (name, page) in &pages {
        let page = String::from_utf8_lossy(page);
        let synopsis = page
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .and_then(|rest| rest.split("\n.SH ").next())
            .unwrap_or_else(|| panic!("{name}: no synopsis"));
        assert!(
            synopsis.contains(r"[\-\-policy FILE]") && synopsis.contains(r"[\-\-db FILE|URL...]"),
            "{name}: {synopsis}"
        );
        assert!(!page.contains(".SH EXTRA"), "{name}");
        assert!(page.contains(&format!(".SH VERSION\nv{version}")), "{name}");
        assert_eq!(page.matches(".ds Aq").count(), 2, "{name}: one preamble");
    }
    for name in [
        "metagate.1",
        "metagate-gate.1",
        "metagate-lint.1",
        "metagate-evaluate.1",
    ] {
        let page = String::from_utf8_lossy(&pages[name]);
        let status = page
            .split(".SH \"EXIT STATUS\"\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{name}: no EXIT STATUS"));
        assert!(status.starts_with('0'), "{name}: {status}");
    }
    let lint = String::from_utf8_lossy(&pages["metagate-lint.1"]);
    assert!(lint.contains(r"<PATH>..."), "{lint}");
}

/// Each man page ends with EXAMPLES, and each example is a command this binary has (its words
/// up to the first flag or value run with `--help`); every generated file opens with how to
/// install it and where regenerating it is written down.
#[test]
fn man_pages_have_examples_and_every_file_says_how_to_install_it() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sb = Sandbox::new();
    for (name, page) in files(&repo.join("man")) {
        let page = String::from_utf8(page).unwrap();
        let head: Vec<&str> = page.lines().take(2).collect();
        assert!(
            head[0].starts_with(".\\\" ") && head[0].contains("docs/development.md"),
            "{name}: {head:?}"
        );
        assert!(
            head[1].contains("Install: install -Dm644 man/*.1"),
            "{name}: {head:?}"
        );
        let examples = page
            .split(".SH EXAMPLES\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{name}: no EXAMPLES"))
            .split("\n.SH ")
            .next()
            .unwrap();
        let commands: Vec<String> = examples
            .split(".nf\n")
            .skip(1)
            .map(|rest| rest.split("\n.fi").next().unwrap().replace("\\-", "-"))
            .collect();
        assert!(!commands.is_empty(), "{name}");
        let page_command = name.trim_end_matches(".1").replace('-', " ");
        for command in &commands {
            // `echo … | metagate gate`: the metagate part.
            let at = command
                .find("metagate ")
                .unwrap_or_else(|| panic!("{name}: {command}"));
            let words: Vec<&str> = command[at..]
                .split_whitespace()
                .skip(1)
                .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
                .collect();
            let words = match command[at..].split_whitespace().nth(1) {
                // Global flags first (`metagate --policy P evaluate`): the words after them.
                Some("--policy" | "--db") => command[at..]
                    .split_whitespace()
                    .skip(3)
                    .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
                    .collect(),
                _ => words,
            };
            let out = sb.cmd().args(&words).arg("--help").output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{name}: {command}");
            // An example on a command's page runs that command (or one below it).
            let ran = format!("metagate {}", words.join(" "));
            assert!(
                ran.starts_with(&page_command) || page_command == "metagate",
                "{name}: {command}"
            );
        }
    }
    for (name, text) in files(&repo.join("completions")) {
        let text = String::from_utf8(text).unwrap();
        let head: Vec<&str> = text.lines().take(3).collect();
        assert!(
            head.iter().any(|l| l.starts_with("# Install: ")),
            "{name}: {head:?}"
        );
        assert!(
            head.iter().any(|l| l.contains("docs/development.md")),
            "{name}: {head:?}"
        );
        if name == "_metagate" {
            assert_eq!(head[0], "#compdef metagate", "zsh reads it first");
        }
    }
}
