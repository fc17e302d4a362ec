//! The files written from metagate's command line rather than by hand: the shell completions
//! in `completions/` and the man pages in `man/`. `cargo xtask generate` writes them;
//! `tests/cli/generated.rs` checks that the committed ones are current. The command line is
//! the binary's own (`src/bin/metagate/cli.rs`, compiled here too), so the generators stay
//! out of the binary.

mod generate;
mod man_examples;

/// The binary's command line, as clap sees it (its fields are the binary's to read).
#[path = "../../src/bin/metagate"]
#[allow(dead_code, unused_imports, missing_docs)]
mod binary {
    pub mod cli;
}

pub use generate::generate;
