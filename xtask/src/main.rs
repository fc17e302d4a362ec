//! `cargo xtask generate [--out DIR]`: writes `completions/` and `man/` into DIR (the
//! repository's top folder when none is given).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let top = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["generate"] => top,
        ["generate", "--out", dir] => PathBuf::from(dir),
        _ => {
            eprintln!("usage: cargo xtask generate [--out DIR]");
            return ExitCode::from(2);
        }
    };
    match xtask::generate(&out) {
        Ok((completions, man)) => {
            eprintln!(
                "xtask: wrote {} and {}",
                completions.display(),
                man.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}
