//! `metagate evaluate`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use metagate::evaluate::{self, Shards};
use metagate_core::policy::Policy;
use metagate_store::location::Location;
use metagate_store::shard::ReaskStage;
use metagate_wire::display::{one_line, plural};
use serde_json::json;

use crate::cli::{EvaluateArgs, EvaluateCommand, Format, ReportFormat};
use crate::evaluate_report as report;
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(args: &EvaluateArgs, dbs: &[PathBuf], policy: &Policy, env: &Env) -> Result<Status> {
    if let Some(EvaluateCommand::Show { id, format }) = &args.command {
        return show(id, *format, env);
    }
    // A person's status is set in the store `--db` names first, of either kind.
    if let Some(id) = args.accept.as_deref() {
        return set_status(id, "accepted", args.format.plain(), env);
    }
    if let Some(id) = args.reject.as_deref() {
        return set_status(id, "rejected", args.format.plain(), env);
    }
    // Shards of either kind, mixed as given; the run is kept in the first.
    let locations: Vec<Location> = if dbs.is_empty() {
        vec![env.location()?]
    } else {
        dbs.iter().map(|db| Location::of(db)).collect()
    };
    let shards = Shards::new(locations)?;
    if let Some(patch) = &args.emit_policy_patch {
        evaluate::check_patch_target(patch, &shards, policy)?;
    }
    let now_ms = (env.clock())();
    let window = evaluate::window(&args.since, args.until.as_deref(), now_ms, policy)?;
    // The store the run goes to, opened first: the re-asks the scan detects wait on its
    // connection (in a temporary table, not in the store) until the run is stored.
    let mut store = if args.dry_run {
        None
    } else {
        Some(env.open_existing_at(shards.first())?)
    };
    let mut sink = match store.as_mut() {
        Some(s) => Some(ReaskStage::new(s)?),
        None => None,
    };
    let bar = ProgressBar::with_draw_target(None, progress_target()).with_style(progress_style());
    let mut evaluation = evaluate::evaluate(
        &shards,
        policy,
        window,
        env.store_options(),
        &mut |n, total| {
            bar.set_length(total.max(n));
            bar.set_position(n);
        },
        sink.as_mut(),
    )?;
    drop(sink);
    bar.finish_and_clear();
    for empty in &evaluation.aggregate.empty_stores {
        say!("metagate: evaluate: {empty} holds no telemetry yet");
    }
    if let Some(floor) = args.confidence_floor {
        evaluation.floor = floor;
    }
    evaluation.compare_with_stored(&shards, env.store_options(), now_ms)?;
    if let Some(before) = evaluation.policy_changed() {
        let name = |file: &Option<String>| {
            file.as_deref().map_or_else(
                || "the built-in policy".to_string(),
                |f| one_line(f).into_owned(),
            )
        };
        say!(
            "metagate: evaluate: warning: the policy differs from the previous run's ({} {} then, {} {} now): recommendations may have changed because of it, not because of the tools",
            name(&before.file),
            before.hash,
            name(&evaluation.policy.file),
            evaluation.policy.hash
        );
    }
    // Before the run is stored: a patch that cannot be written fails the command as a whole.
    if let Some(patch) = &args.emit_policy_patch {
        let aliases = evaluation.patch_aliases();
        evaluate::write_patch(patch, &aliases, policy)?;
        say!(
            "metagate: evaluate: wrote {} to {}",
            plural(aliases.len(), "proposed alias", "proposed aliases"),
            patch.display()
        );
    }
    let run_id = match store.as_mut() {
        Some(store) => Some(evaluation.save(store, now_ms, policy)?),
        None => None,
    };
    evaluation.export_spans();
    let mut out = crate::output::stdout();
    match args.format {
        ReportFormat::Html => {
            out.write_all(metagate::evaluate_html::page(&evaluation, policy).as_bytes())?;
        }
        ReportFormat::Json => {
            let doc = evaluation.to_json(policy, run_id, shards.first(), args.all);
            writeln!(out, "{doc}")?;
        }
        ReportFormat::Table => report::write_table(
            &mut out,
            &evaluation,
            &shards,
            run_id,
            policy,
            args.all,
            now_ms,
        )?,
    }
    out.flush()?;
    let failed = args
        .fail_on
        .is_some_and(|on| evaluation.digest.fails(on.condition()));
    Ok(if failed {
        Status::Rejected
    } else {
        Status::Success
    })
}

/// `evaluate show ID`.
fn show(id: &str, format: Format, env: &Env) -> Result<Status> {
    let mut store = env.open_existing_store()?;
    let found = store.show_recommendation(id)?;
    let Some((rec, reasks)) = found else {
        say!(
            "metagate: evaluate: no recommendation {:?} in {}; `metagate evaluate --format json --all` lists them",
            one_line(id),
            store.place().display()
        );
        return Ok(Status::Rejected);
    };
    let mut out = crate::output::stdout();
    match format {
        Format::Json => writeln!(out, "{}", report::show_json(&rec, &reasks))?,
        Format::Table => report::write_show(&mut out, &rec, &reasks)?,
    }
    out.flush()?;
    Ok(Status::Success)
}

/// Progress on stderr when it is a terminal; nothing otherwise.
fn progress_target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

fn progress_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} evaluating {pos}/{len} rows [{elapsed}] {wide_bar}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn set_status(id: &str, status: &str, format: Format, env: &Env) -> Result<Status> {
    let mut store = env.open_existing_store()?;
    let path = store.place();
    match store.set_recommendation_status(id, status)? {
        Some((tool, kind, previous)) => {
            if format == Format::Json {
                let doc = json!({"id": id, "tool": tool, "kind": kind, "status": status, "previous": previous});
                writeln!(crate::output::stdout(), "{doc}")?;
            }
            let muted = if status == "rejected" {
                ": muted until its rate worsens past the mute margin"
            } else {
                ""
            };
            say!("metagate: evaluate: {id} ({kind} for {tool}): {previous} → {status}{muted}");
            Ok(Status::Success)
        }
        None => {
            say!(
                "metagate: evaluate: no recommendation {id:?} in {}; `metagate --db {} evaluate --dry-run --format json` lists them (storing no run)",
                path.display(),
                path.display()
            );
            Ok(Status::Rejected)
        }
    }
}
