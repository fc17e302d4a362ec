//! Turns gitleaks' secret patterns (third_party/gitleaks/gitleaks.toml) into static rule data.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let gitleaks = "third_party/gitleaks/gitleaks.toml";
    println!("cargo::rerun-if-changed={gitleaks}");
    let text = std::fs::read_to_string(gitleaks).expect("read the gitleaks rules");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("gitleaks_rules.rs"), gitleaks_rules(&text))
        .expect("write the generated gitleaks rules");
}

/// `static RULES: &[RuleData]` and `static GLOBAL_ALLOWLISTS: &[AllowlistData]` (types in
/// src/redact/gitleaks.rs). Rules scoped to file paths are left out (metagate scans
/// arguments, not files), and so are the parts of allowlists that only paths or commits can
/// satisfy. A key this code does not know stops the build, so an update of the file that
/// changes its meaning is noticed.
fn gitleaks_rules(text: &str) -> String {
    let config: toml::Table = toml::from_str(text).expect("gitleaks.toml parses");
    let mut code = String::from("static RULES: &[RuleData] = &[\n");
    for rule in config["rules"]
        .as_array()
        .expect("gitleaks.toml: rules is an array")
    {
        let rule = rule.as_table().expect("gitleaks.toml: a rule is a table");
        let id = rule["id"]
            .as_str()
            .expect("gitleaks.toml: a rule has an id");
        for key in rule.keys() {
            assert!(
                matches!(
                    key.as_str(),
                    "id" | "description"
                        | "regex"
                        | "entropy"
                        | "keywords"
                        | "allowlists"
                        | "path"
                        | "secretGroup"
                        | "tags"
                ),
                "gitleaks.toml: rule {id}: unknown key {key:?}"
            );
        }
        let Some(pattern) = rule.get("regex").and_then(|r| r.as_str()) else {
            continue;
        };
        if rule.contains_key("path") {
            continue;
        }
        let entropy = rule.get("entropy").map_or(0.0, |e| {
            e.as_float()
                .or_else(|| e.as_integer().map(|i| i as f64))
                .expect("gitleaks.toml: entropy is a number")
        });
        let group = rule.get("secretGroup").map_or(0, |g| {
            g.as_integer()
                .expect("gitleaks.toml: secretGroup is an integer")
        });
        let _ = write!(
            code,
            "RuleData {{ id: {id:?}, pattern: {pattern:?}, entropy: {entropy:?}, secret_group: {group}, keywords: &["
        );
        for keyword in strings(rule.get("keywords"), id) {
            let _ = write!(code, "{:?}, ", keyword.to_ascii_lowercase());
        }
        code.push_str("], allowlists: &[");
        let lists = rule.get("allowlists").and_then(|a| a.as_array());
        for list in lists.into_iter().flatten() {
            emit_allowlist(list, id, &mut code);
        }
        code.push_str("] },\n");
    }
    code.push_str("];\nstatic GLOBAL_ALLOWLISTS: &[AllowlistData] = &[\n");
    let global = config.get("allowlist").into_iter().chain(
        config
            .get("allowlists")
            .and_then(|a| a.as_array())
            .into_iter()
            .flatten(),
    );
    for list in global {
        emit_allowlist(list, "global", &mut code);
    }
    code.push_str("];\n");
    code
}

fn strings<'a>(value: Option<&'a toml::Value>, rule: &str) -> Vec<&'a str> {
    value
        .map(|v| {
            v.as_array()
                .unwrap_or_else(|| panic!("gitleaks.toml: {rule}: expected an array"))
                .iter()
                .map(|s| {
                    s.as_str()
                        .unwrap_or_else(|| panic!("gitleaks.toml: {rule}: expected strings"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn emit_allowlist(list: &toml::Value, rule: &str, code: &mut String) {
    let list = list
        .as_table()
        .unwrap_or_else(|| panic!("gitleaks.toml: {rule}: an allowlist is a table"));
    for key in list.keys() {
        assert!(
            matches!(
                key.as_str(),
                "description"
                    | "condition"
                    | "regexTarget"
                    | "regexes"
                    | "stopwords"
                    | "paths"
                    | "commits"
            ),
            "gitleaks.toml: {rule}: unknown allowlist key {key:?}"
        );
    }
    let all = match list.get("condition").and_then(|c| c.as_str()) {
        None | Some("OR") => false,
        Some("AND") => true,
        Some(other) => panic!("gitleaks.toml: {rule}: unknown allowlist condition {other:?}"),
    };
    let by_path = list.contains_key("paths") || list.contains_key("commits");
    let regexes = strings(list.get("regexes"), rule);
    let stopwords = strings(list.get("stopwords"), rule);
    // An `AND` list that needs a path or a commit never applies to an argument, and an `OR`
    // list applies through its regexes and stopwords only.
    if (all && by_path) || (regexes.is_empty() && stopwords.is_empty()) {
        return;
    }
    let target = match list.get("regexTarget").and_then(|t| t.as_str()) {
        None | Some("secret") => "Secret",
        Some("match") => "Match",
        Some("line") => "Line",
        Some(other) => panic!("gitleaks.toml: {rule}: unknown regexTarget {other:?}"),
    };
    let _ = write!(
        code,
        "AllowlistData {{ target: Target::{target}, all: {all}, regexes: &{regexes:?}, stopwords: &["
    );
    for word in stopwords {
        let _ = write!(code, "{:?}, ", word.to_lowercase());
    }
    code.push_str("] }, ");
}
