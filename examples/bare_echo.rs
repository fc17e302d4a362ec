//! The baseline for `gate`'s one-call start-up budget: a bare Rust binary that parses one JSON
//! document from stdin with serde_json and prints it. `cargo bench -- startup` times both.

use std::io::{Read, Write};

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let value: serde_json::Value = serde_json::from_str(&input).expect("one JSON document");
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &value).expect("stdout");
    out.write_all(b"\n").expect("stdout");
}
