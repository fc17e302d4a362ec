//! `metagate generate`: the checked-in completions and man pages.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, GenerateArgs};
use crate::exit::Status;

pub fn run(args: &GenerateArgs) -> Result<Status> {
    let completions = args.out.join("completions");
    let man = args.out.join("man");
    for dir in [&completions, &man] {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::PowerShell,
        Shell::Elvish,
    ] {
        let mut cmd = Cli::command();
        clap_complete::generate_to(shell, &mut cmd, "metagate", &completions)
            .with_context(|| format!("cannot write {shell} completions"))?;
    }
    write_man(&man)?;
    say!(
        "metagate: wrote {} and {}",
        completions.display(),
        man.display()
    );
    Ok(Status::Success)
}

fn write_man(dir: &Path) -> Result<()> {
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("cannot write man pages to {}", dir.display()))
}
