//! The completions and man pages, written from the binary's command line.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;

use crate::binary::cli::Cli;

/// Writes `out/completions/` (bash, zsh, fish, PowerShell, elvish) and `out/man/` (a page per
/// command); returns the two folders.
pub fn generate(out: &Path) -> Result<(PathBuf, PathBuf)> {
    let completions = out.join("completions");
    let man = out.join("man");
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
        let path = clap_complete::generate_to(shell, &mut cmd, "metagate", &completions)
            .with_context(|| format!("cannot write {shell} completions"))?;
        with_header(&path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    write_man(&man)?;
    Ok((completions, man))
}

/// Opens a completion script with its header (after zsh's `#compdef` line, which must come
/// first).
fn with_header(path: &Path) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let Some(header) = crate::man_examples::completion_header(&name) else {
        return Ok(());
    };
    let text = fs::read_to_string(path)?;
    let text = match text.strip_prefix("#compdef metagate\n") {
        Some(rest) => format!("#compdef metagate\n{header}{rest}"),
        None => format!("{header}{text}"),
    };
    fs::write(path, text)
}

/// `cmd` without its hidden arguments and subcommands. clap_complete offers everything it
/// is given, hidden or not (clap-rs/clap#1335); a completion should not offer the test clock
/// (`--now`), which help leaves out. clap has no way to remove an argument, so
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

/// One man page per command, as clap_mangen writes them but for three things: the synopsis
/// names each option's value (`[--policy FILE]`, where clap_mangen writes `[--policy]`), the
/// exit status (each command's `after_help`) is under EXIT STATUS rather than EXTRA, and every
/// page carries the version.
fn write_man(dir: &Path) -> Result<()> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    write_pages(&cmd, dir).with_context(|| format!("cannot write man pages to {}", dir.display()))
}

fn write_pages(cmd: &clap::Command, dir: &Path) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let page = cmd
        .clone()
        .version(env!("CARGO_PKG_VERSION"))
        .override_usage(synopsis(cmd));
    let man = clap_mangen::Man::new(page.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if page.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if page.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    // After help holds the exit status, and may end with an example the EXAMPLES section
    // gives.
    if let Some(text) = cmd.get_after_help() {
        let text = text.to_string();
        let status = text.split("\n\nExample").next().unwrap_or_default();
        if let Some(status) = status.strip_prefix("Exit status: ") {
            out.extend_from_slice(b".SH \"EXIT STATUS\"\n");
            out.extend_from_slice(roff_text(status).as_bytes());
        }
    }
    let name = man.get_filename();
    let examples = crate::man_examples::for_page(name.trim_end_matches(".1"));
    if !examples.is_empty() {
        out.extend_from_slice(b".SH EXAMPLES\n");
        for (what, command) in examples {
            out.extend_from_slice(b".PP\n");
            out.extend_from_slice(roff_text(what).as_bytes());
            out.extend_from_slice(b".PP\n.RS 4\n.nf\n");
            out.extend_from_slice(roff_text(command).as_bytes());
            out.extend_from_slice(b".fi\n.RE\n");
        }
    }
    man.render_version_section(&mut out)?;
    let mut page = crate::man_examples::man_header(&name).into_bytes();
    page.extend_from_slice(&once_each_preamble(&out));
    fs::write(dir.join(name), page)
}

/// Each section rendered on its own starts with the page's preamble (two lines defining the
/// apostrophe string); the page needs it once, at the top.
fn once_each_preamble(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(page);
    let mut seen = Vec::new();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let preamble = line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq");
        if preamble && seen.contains(&line) {
            continue;
        }
        if preamble {
            seen.push(line);
        }
        out.push_str(line);
    }
    out.into_bytes()
}

/// The synopsis: the command's name, every option it shows with its value's name, then its
/// arguments (or, where the command sets its own usage, each of its forms with `[OPTIONS]`
/// spelled out).
fn synopsis(cmd: &clap::Command) -> String {
    let name = cmd
        .get_bin_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string();
    let mut options = Vec::new();
    for arg in cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
    {
        let flag = match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!("-{short}|--{long}"),
            (None, Some(long)) => format!("--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, None) => continue,
        };
        let value = arg.get_action().takes_values().then(|| value_name(arg));
        let mut text = match value {
            Some(value) => format!("{flag} {value}"),
            None => flag,
        };
        if matches!(arg.get_action(), clap::ArgAction::Append) {
            text.push_str("...");
        }
        options.push(if arg.is_required_set() {
            text
        } else {
            format!("[{text}]")
        });
    }
    let options = options.join(" ");
    if let Some(usage) = cmd.get_overridden_usage() {
        return usage
            .to_string()
            .lines()
            .map(|form| form.trim().replace("[OPTIONS]", &options))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let mut line = format!("{name} {options}");
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let many = matches!(arg.get_action(), clap::ArgAction::Append)
            || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        let value = value_name(arg);
        let dots = if many { "..." } else { "" };
        if arg.is_required_set() {
            line.push_str(&format!(" <{value}>{dots}"));
        } else {
            line.push_str(&format!(" [{value}]{dots}"));
        }
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        line.push_str(if cmd.is_subcommand_required_set() {
            " <COMMAND>"
        } else {
            " [COMMAND]"
        });
    }
    line
}

fn value_name(arg: &clap::Arg) -> String {
    arg.get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| arg.get_id().as_str().to_uppercase())
}

/// `text` as a roff paragraph: backslashes escaped, no line starting as a request.
fn roff_text(text: &str) -> String {
    let mut out = String::new();
    for line in text.replace('\\', "\\e").replace('-', "\\-").lines() {
        if line.starts_with('.') || line.starts_with('\'') {
            out.push_str("\\&");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
