//! Turns the built-in policy (src/policy/builtin.toml) into compact JSON, so a `gate` process
//! reads its policy with serde_json rather than parsing TOML text or building a TOML table at
//! start (a test checks that the JSON deserializes to what the TOML text does).

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let source = "src/policy/builtin.toml";
    println!("cargo::rerun-if-changed={source}");
    let text = std::fs::read_to_string(source).expect("read the built-in policy");
    let table: toml::Table = toml::from_str(&text).expect("the built-in policy parses");
    let mut json = String::new();
    emit_table(&table, &mut json);
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("builtin.json"), json).expect("write the built-in policy as JSON");
}

fn emit_table(table: &toml::Table, json: &mut String) {
    json.push('{');
    for (i, (key, value)) in table.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        emit_string(key, json);
        json.push(':');
        emit_value(value, json);
    }
    json.push('}');
}

fn emit_value(value: &toml::Value, json: &mut String) {
    match value {
        toml::Value::String(s) => emit_string(s, json),
        toml::Value::Integer(i) => {
            let _ = write!(json, "{i}");
        }
        toml::Value::Float(f) => {
            assert!(f.is_finite(), "the built-in policy holds no inf or nan");
            let _ = write!(json, "{f:?}");
        }
        toml::Value::Boolean(b) => {
            let _ = write!(json, "{b}");
        }
        toml::Value::Array(items) => {
            json.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    json.push(',');
                }
                emit_value(item, json);
            }
            json.push(']');
        }
        toml::Value::Table(t) => emit_table(t, json),
        toml::Value::Datetime(_) => panic!("the built-in policy holds no dates"),
    }
}

fn emit_string(s: &str, json: &mut String) {
    json.push('"');
    for c in s.chars() {
        match c {
            '"' => json.push_str("\\\""),
            '\\' => json.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(json, "\\u{:04x}", u32::from(c));
            }
            c => json.push(c),
        }
    }
    json.push('"');
}
