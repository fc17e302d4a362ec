//! Turns the built-in policy (src/domain/policy/builtin.toml) into Rust code that builds the same
//! TOML table, so a `gate` process does not spend its start-up parsing TOML text.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let source = "src/domain/policy/builtin.toml";
    println!("cargo::rerun-if-changed={source}");
    let text = std::fs::read_to_string(source).expect("read the built-in policy");
    let table: toml::Table = toml::from_str(&text).expect("the built-in policy parses");
    let mut code = String::from("{\n");
    emit_table(&table, &mut code);
    code.push_str("}\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("builtin_table.rs");
    std::fs::write(out, code).expect("write the generated table");
}

fn emit_table(table: &toml::Table, code: &mut String) {
    code.push_str("let mut t = toml::Table::new();\n");
    for (key, value) in table {
        let _ = write!(code, "t.insert({key:?}.to_string(), ");
        emit_value(value, code);
        code.push_str(");\n");
    }
    code.push_str("t\n");
}

fn emit_value(value: &toml::Value, code: &mut String) {
    match value {
        toml::Value::String(s) => {
            let _ = write!(code, "toml::Value::String({s:?}.to_string())");
        }
        toml::Value::Integer(i) => {
            let _ = write!(code, "toml::Value::Integer({i})");
        }
        toml::Value::Float(f) => {
            let _ = write!(code, "toml::Value::Float({f:?})");
        }
        toml::Value::Boolean(b) => {
            let _ = write!(code, "toml::Value::Boolean({b})");
        }
        toml::Value::Array(items) => {
            code.push_str("toml::Value::Array(vec![");
            for item in items {
                emit_value(item, code);
                code.push_str(", ");
            }
            code.push_str("])");
        }
        toml::Value::Table(t) => {
            code.push_str("toml::Value::Table({\n");
            emit_table(t, code);
            code.push_str("})");
        }
        toml::Value::Datetime(_) => panic!("the built-in policy holds no dates"),
    }
}
