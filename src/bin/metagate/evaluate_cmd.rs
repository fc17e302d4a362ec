//! `metagate evaluate`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use metagate::domain::events::format_time;
use metagate::domain::evolution::{Recommendation, health};
use metagate::domain::policy::Policy;
use metagate::jobs::evaluate::{self, Shards};
use metagate::store::runs as results;
use metagate::wire::display::{one_line, plural};
use serde_json::json;

use crate::cli::{EvaluateArgs, Format};
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(args: &EvaluateArgs, dbs: &[PathBuf], policy: &Policy, env: &Env) -> Result<Status> {
    let paths: Vec<PathBuf> = if dbs.is_empty() {
        vec![env.db_path()?]
    } else {
        dbs.to_vec()
    };
    let shards = Shards::new(paths)?;
    if let Some(patch) = &args.emit_policy_patch {
        evaluate::check_patch_target(patch, &shards, policy)?;
    }
    if let Some(id) = args.accept.as_deref() {
        return set_status(id, "accepted", args.format, env);
    }
    if let Some(id) = args.reject.as_deref() {
        return set_status(id, "rejected", args.format, env);
    }
    let t = policy.thresholds();
    let now_ms = (env.clock())();
    let window = evaluate::window(&args.since, args.until.as_deref(), now_ms, policy)?;
    let bar = ProgressBar::with_draw_target(None, progress_target()).with_style(progress_style());
    let mut evaluation = evaluate::evaluate(
        &shards,
        policy,
        window,
        env.busy_timeout(),
        &mut |n, total| {
            bar.set_length(total.max(n));
            bar.set_position(n);
        },
    )?;
    bar.finish_and_clear();
    for empty in &evaluation.aggregate.empty_stores {
        say!("metagate: evaluate: {empty} holds no telemetry yet");
    }
    // Before the run is stored: a patch that cannot be written fails the command as a whole.
    if let Some(patch) = &args.emit_policy_patch {
        evaluate::write_patch(patch, &evaluation.aliases)?;
        say!(
            "metagate: evaluate: wrote {} to {}",
            plural(
                evaluation.aliases.len(),
                "proposed alias",
                "proposed aliases"
            ),
            patch.display()
        );
    }
    let run_id = if args.dry_run {
        evaluation.read_statuses(&shards, env.busy_timeout())?;
        None
    } else {
        let mut store = env.open_existing_store()?;
        Some(evaluation.save(&mut store, now_ms, policy)?)
    };
    let (window, agg, recs, aliases) = (
        &evaluation.window,
        &evaluation.aggregate,
        &evaluation.recommendations,
        &evaluation.aliases,
    );
    let paths = shards.paths();
    let mut out = crate::output::stdout();
    match args.format {
        Format::Json => {
            writeln!(
                out,
                "{}",
                evaluation.to_json(policy, run_id, shards.first())
            )?;
        }
        Format::Table => {
            let stored = match run_id {
                Some(id) => format!("run {id} stored in {}", paths[0].display()),
                None => "dry run: nothing stored".to_string(),
            };
            let summary = format!(
                "window {} → {} · {} events from {} store{} · {stored}",
                format_time(window.from_ms),
                format_time(window.until_ms),
                agg.events,
                paths.len(),
                if paths.len() == 1 { "" } else { "s" }
            );
            writeln!(out, "{}", crate::output::fit_line(&summary))?;
            if agg.events == 0 {
                writeln!(out, "no events in the window: nothing to evaluate")?;
            } else {
                let rows = health::rows(&agg.tallies, health::Sort::Name, now_ms, &t);
                writeln!(
                    out,
                    "{}",
                    crate::output::fit(crate::tools_cmd::health_table(&rows, &t))
                )?;
                writeln!(out, "{}", recommendations_table(recs))?;
                if !aliases.is_empty() {
                    let mut table = crate::output::table();
                    table.set_header(vec!["tool", "alias", "declared", "seen", "share"]);
                    for a in aliases {
                        table.add_row(vec![
                            one_line(&a.tool).into_owned(),
                            one_line(&a.from).into_owned(),
                            one_line(&a.to).into_owned(),
                            a.count.to_string(),
                            format!("{:.0}%", a.share * 100.0),
                        ]);
                    }
                    writeln!(
                        out,
                        "proposed aliases (--emit-policy-patch FILE writes them as TOML):\n{}",
                        crate::output::fit(table)
                    )?;
                }
            }
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

fn recommendations_table(recs: &[Recommendation]) -> String {
    if recs.is_empty() {
        return "no recommendations".to_string();
    }
    let mut table = crate::output::table();
    table.set_header(vec![
        "id",
        "kind",
        "tool",
        "confidence",
        "status",
        "summary",
    ]);
    for r in recs {
        let tool = match &r.method {
            Some(m) => format!("{}.{m}", r.tool),
            None => r.tool.clone(),
        };
        table.add_row(vec![
            one_line(&r.id).into_owned(),
            r.kind.to_string(),
            one_line(&tool).into_owned(),
            format!("{:.2}", r.confidence),
            one_line(&r.status).into_owned(),
            one_line(&r.summary).into_owned(),
        ]);
    }
    crate::output::fit(table).to_string()
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
    let path = store.path().to_path_buf();
    match results::set_status(&mut store, id, status)? {
        Some((tool, kind, previous)) => {
            if format == Format::Json {
                let doc = json!({"id": id, "tool": tool, "kind": kind, "status": status, "previous": previous});
                writeln!(crate::output::stdout(), "{doc}")?;
            }
            say!("metagate: evaluate: {id} ({kind} for {tool}): {previous} → {status}");
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
