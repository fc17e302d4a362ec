//! `metagate lint`: the inputs, the terminal and the exit status; the library decides.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use metagate::gate::{Context, Gate, Options};
use metagate::lint::{
    self, CODES, Event, Failure, Format, Linter, Renderer, Severity, SourceRoot, Summary,
};
use metagate_checks::path::CachedFs;
use metagate_core::enforce::Scope;
use metagate_core::policy::Policy;

use crate::cli::{DenyLevel, LintArgs, LintFormat};
use crate::exit::Status;
use crate::runtime::Env;

/// Inputs at least this large get a progress bar (on a terminal).
const PROGRESS_FROM: u64 = 8 << 20;
/// Output is written in chunks of about this size.
const CHUNK: usize = 64 * 1024;

/// One input: a file, or stdin.
enum Input {
    File(PathBuf),
    Stdin,
    /// A path that could not be walked, with why.
    Unreadable(PathBuf, String),
}

impl Input {
    fn name(&self) -> String {
        match self {
            Input::File(p) | Input::Unreadable(p, _) => p.display().to_string(),
            Input::Stdin => "<stdin>".to_string(),
        }
    }
}

pub fn explain(code: &str) -> Result<Status> {
    let mut out = String::new();
    if code.eq_ignore_ascii_case("all") {
        for c in CODES {
            out.push_str(&format!(
                "{}  {:<7}  {:<21}  {}\n",
                c.code,
                c.severity.as_str(),
                c.name,
                c.summary
            ));
        }
    } else {
        let Some(c) = lint::codes::find(code) else {
            let known: Vec<&str> = CODES.iter().map(|c| c.code).collect();
            bail!(
                "unknown diagnostic code {code:?} (--explain); the codes are {} (or `all`)",
                known.join(", ")
            );
        };
        out.push_str(&format!(
            "{} ({}, {}): {}\n\n{}\n",
            c.code,
            c.name,
            c.severity.as_str(),
            c.summary,
            c.explanation
        ));
    }
    crate::output::stdout().write_all(out.as_bytes())?;
    Ok(Status::Success)
}

pub fn run(args: &LintArgs, policy: &Policy, env: &Env) -> Result<Status> {
    let ignore = args
        .ignore
        .iter()
        .map(|c| {
            lint::codes::find(c).with_context(|| format!("--ignore: unknown diagnostic code {c:?}"))
        })
        .collect::<Result<Vec<_>>>()?;
    crate::runtime::check_intent(policy, args.intent.as_deref(), false)?;
    let checker = env.checker(policy, &args.tools)?;
    let fs = CachedFs::new(Instant::now, Duration::from_secs(1));
    let context = Context {
        session: None,
        caller: args.caller.clone(),
        intent: args.intent.clone(),
    };
    let gate = Gate {
        policy,
        options: Options {
            quiet: true,
            ..Options::default()
        },
        checker: Some(&checker),
        context: &context,
        fs: &fs,
        scope: Scope { runtime: false },
    };
    let linter = Linter::new(gate, env.clock()(), ignore);

    // A path that is not there is a mistake in the command (a typo, a glob that matched
    // nothing), not an input to report on: nothing is linted, as nothing was meant.
    for path in args.paths.iter().filter(|p| p.as_os_str() != "-") {
        if let Err(e) = std::fs::symlink_metadata(path)
            && e.kind() == io::ErrorKind::NotFound
        {
            bail!("{}: no such file or folder", path.display());
        }
    }
    if policy.origin.is_none() {
        // In CI most of all: a repository without a metagate.toml is linted, and says so.
        say!("metagate: lint: no metagate.toml found: checking with the built-in policy");
    }
    let inputs = collect(&args.paths);
    let format = match args.format {
        LintFormat::Human => Format::Human,
        LintFormat::Json => Format::Json,
        LintFormat::Sarif => Format::Sarif,
        LintFormat::Github => Format::Github,
    };
    let mut out = crate::output::stdout();
    let color = format == Format::Human
        && out.is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut renderer = Renderer::new(format, color);
    if matches!(format, Format::Sarif | Format::Github) {
        let cwd = std::env::current_dir().context("cannot read the working folder")?;
        renderer = renderer.with_root(SourceRoot::new(repository_root(&cwd), cwd));
    }
    let mut summary = Summary::default();
    let mut buf = Vec::with_capacity(2 * CHUNK);
    let progress = progress_bar(&inputs);
    renderer.start(&mut buf);

    for input in &inputs {
        let name = input.name();
        summary.files += 1;
        let mut on_event = |event: Event<'_>| -> io::Result<()> {
            summary.count(&event);
            if let Event::Failure(f) = &event {
                report_failure(f, &progress);
            }
            renderer.event(&event, &mut buf);
            if buf.len() >= CHUNK {
                out.write_all(&buf)?;
                buf.clear();
            }
            Ok(())
        };
        let text = match read(input) {
            Ok(text) => text,
            Err(failure) => {
                on_event(Event::Failure(Failure {
                    file: &name,
                    line: failure.0,
                    column: failure.1,
                    message: failure.2,
                }))?;
                continue;
            }
        };
        let done_before = progress.position();
        linter.lint_text(&name, &text, &mut on_event, &mut |done| {
            progress.set_position(done_before + done as u64);
        })?;
    }
    progress.finish_and_clear();
    renderer.finish(&summary, &mut buf);
    out.write_all(&buf)?;
    out.flush()?;

    let deny = match args.deny {
        DenyLevel::Error => Severity::Error,
        DenyLevel::Warning => Severity::Warning,
    };
    Ok(if summary.failures > 0 {
        Status::Failure
    } else if summary.denied(deny) && !args.exit_zero {
        Status::Rejected
    } else {
        Status::Success
    })
}

/// The folder code scanning and annotations name paths from: the nearest one at or above
/// `cwd` holding `.git` (a folder, or a file in a worktree or submodule), else `cwd`.
fn repository_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The inputs named on the command line, directories walked in name order.
fn collect(paths: &[PathBuf]) -> Vec<Input> {
    let mut inputs = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            walk(path, &mut inputs);
        } else {
            // A file, or a path that does not exist: reading it says which.
            inputs.push(Input::File(path.clone()));
        }
    }
    inputs
}

fn walk(dir: &Path, inputs: &mut Vec<Input>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            inputs.push(Input::Unreadable(
                dir.to_path_buf(),
                format!("cannot read the folder: {e}"),
            ));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        // Symbolic links to folders are not followed: a link loop must not hang CI.
        let is_link = path.symlink_metadata().is_ok_and(|m| m.is_symlink());
        if path.is_dir() {
            if !is_link {
                walk(&path, inputs);
            }
        } else if path
            .extension()
            .is_some_and(|e| e == "json" || e == "jsonl" || e == "ndjson")
            // A pipe or a device named like a trace would be waited on forever.
            && path.is_file()
        {
            inputs.push(Input::File(path));
        }
    }
}

/// The most `lint` reads of one input: a trace this size is many runs, to lint apart.
const MAX_LINT_BYTES: u64 = 256 << 20;
/// The longest line read, as `gate` and `record` read one.
const MAX_LINE: usize = metagate_wire::lines::MAX_LINE;

/// An input's text, or why it cannot be read: (line, column, message), line 0 for the whole.
fn read(input: &Input) -> Result<String, (usize, usize, String)> {
    let bytes = match input {
        Input::Unreadable(_, why) => return Err((0, 0, why.clone())),
        Input::File(path) => crate::input_file::open_regular(path)
            .and_then(|f| crate::input_file::read_capped(f, MAX_LINT_BYTES, "one input"))
            .map_err(|e| (0, 0, format!("cannot read the file: {e}")))?,
        Input::Stdin => {
            crate::input_file::read_capped(io::stdin().lock(), MAX_LINT_BYTES, "one input")
                .map_err(|e| (0, 0, format!("cannot read stdin: {e}")))?
        }
    };
    if let Some(line) = crate::input_file::overlong_line(&bytes, MAX_LINE) {
        return Err((
            line,
            0,
            format!(
                "the line is longer than the {} MiB metagate reads as one",
                MAX_LINE >> 20
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&valid[start..]).chars().count() + 1;
        (line, column, "not UTF-8 text".to_string())
    })
}

fn report_failure(f: &Failure<'_>, progress: &ProgressBar) {
    let place = if f.line > 0 {
        format!("{}:{}:{}", f.file, f.line, f.column)
    } else {
        f.file.to_string()
    };
    progress.suspend(|| say!("metagate: error: {place}: {}", f.message));
}

/// A bar over the inputs' bytes, on a terminal, when they are large.
fn progress_bar(inputs: &[Input]) -> ProgressBar {
    let total: u64 = inputs
        .iter()
        .map(|i| match i {
            Input::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Input::Stdin | Input::Unreadable(..) => 0,
        })
        .sum();
    if total < PROGRESS_FROM || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} linting {bytes}/{total_bytes} {wide_bar} {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
