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
        let mut cmd = visible(Cli::command());
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

/// `cmd` without its hidden arguments and subcommands. clap_complete offers everything it
/// is given, hidden or not (clap-rs/clap#1335); a completion should not offer the test clock
/// (`--now`) or `generate`, which help leaves out. clap has no way to remove an argument, so
/// the command is put together again from what it shows.
fn visible(cmd: clap::Command) -> clap::Command {
    let mut shown = clap::Command::new(cmd.get_name().to_string());
    if let Some(about) = cmd.get_about() {
        shown = shown.about(about.clone());
    }
    if let Some(about) = cmd.get_long_about() {
        shown = shown.long_about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        shown = shown.version(version.to_string());
    }
    shown
        .args(cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned())
        .subcommands(
            cmd.get_subcommands()
                .filter(|s| !s.is_hide_set())
                .cloned()
                .map(visible),
        )
}

fn write_man(dir: &Path) -> Result<()> {
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("cannot write man pages to {}", dir.display()))
}
