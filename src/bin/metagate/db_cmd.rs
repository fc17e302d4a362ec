//! `metagate db info` and `metagate db prune`.

use std::io::Write;

use anyhow::Result;
use metagate_core::events::format_time;
use metagate_core::evolution::parse_moment;
use serde_json::{Map, Value, json};

use metagate_store::copy::{Mode, copy};
use metagate_store::location::Location;

use crate::cli::{DbCommand, Format};
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(command: DbCommand, env: &Env) -> Result<Status> {
    match command {
        DbCommand::Copy {
            from,
            to,
            merge,
            format,
        } => {
            let mut source = env.open_existing_at(&Location::of(&from))?;
            let mut target = env.open_at(&Location::of(&to))?;
            let mode = if merge { Mode::Merge } else { Mode::Replica };
            let copied = copy(&mut source, &mut target, mode)?;
            let mut out = crate::output::stdout();
            match format {
                Format::Json => {
                    let tables: Map<String, Value> = copied
                        .tables
                        .iter()
                        .map(|(name, read, added)| {
                            (name.clone(), json!({"read": read, "added": added}))
                        })
                        .collect();
                    let mode = match copied.mode {
                        Mode::Replica => "replica",
                        Mode::Merge => "merge",
                    };
                    let doc = json!({
                        "mode": mode,
                        "tables": tables,
                        "not_merged": copied.not_merged,
                    });
                    writeln!(out, "{doc}")?;
                }
                Format::Table => {
                    let mut table = crate::output::table();
                    table.set_header(vec!["table", "rows in source", "added"]);
                    for (name, read, added) in &copied.tables {
                        table.add_row(vec![name.clone(), read.to_string(), added.to_string()]);
                    }
                    writeln!(out, "{}", crate::output::fit(table))?;
                }
            }
            out.flush()?;
            let left: Vec<&str> = copied
                .tables
                .iter()
                .filter(|(name, held, _)| *held > 0 && copied.not_merged.contains(name))
                .map(|(name, _, _)| name.as_str())
                .collect();
            if !left.is_empty() {
                say!(
                    "metagate: note: not merged: {} (what evaluate made of the source's own \
                     rows); run `metagate evaluate` on {} to count the merged history",
                    left.join(", "),
                    Location::of(&to)
                );
            }
            Ok(Status::Success)
        }
        DbCommand::Info { format } => {
            let mut store = env.open_existing_store()?;
            let info = store.info()?;
            let mut out = crate::output::stdout();
            match format {
                Format::Json => {
                    let tables: Map<String, Value> = info
                        .tables
                        .iter()
                        .map(|(name, n)| (name.clone(), json!(n)))
                        .collect();
                    let doc = json!({
                        "path": info.path.display().to_string(),
                        "schema_version": info.schema_version,
                        "size_bytes": info.size_bytes,
                        "tables": tables,
                        "first": info.first_ms.map(format_time),
                        "last": info.last_ms.map(format_time),
                    });
                    writeln!(out, "{doc}")?;
                }
                Format::Table => {
                    let mut table = crate::output::table();
                    table.add_row(vec!["path".to_string(), info.path.display().to_string()]);
                    table.add_row(vec![
                        "schema version".to_string(),
                        info.schema_version.to_string(),
                    ]);
                    table.add_row(vec![
                        "size".to_string(),
                        format!("{} bytes", info.size_bytes),
                    ]);
                    for (name, n) in &info.tables {
                        table.add_row(vec![name.clone(), n.to_string()]);
                    }
                    let span = |ms: Option<i64>| ms.map_or_else(|| "-".to_string(), format_time);
                    table.add_row(vec!["first event".to_string(), span(info.first_ms)]);
                    table.add_row(vec!["last event".to_string(), span(info.last_ms)]);
                    writeln!(out, "{}", crate::output::fit(table))?;
                }
            }
            out.flush()?;
            Ok(Status::Success)
        }
        DbCommand::Prune {
            before,
            dry_run,
            format,
        } => {
            let now_ms = (env.clock())();
            let before_ms =
                parse_moment(&before, now_ms).map_err(|e| anyhow::anyhow!("--before: {e}"))?;
            let mut store = env.open_existing_store()?;
            let done = metagate_store::prune::prune(&mut store, before_ms, dry_run)?;
            if let Some(run) = done.kept_for_run {
                say!(
                    "metagate: db prune: events from {} on are kept: evaluate run {run} covers them (tools health and the next run's digest build on it)",
                    format_time(done.cutoff_ms)
                );
            }
            let verb = if dry_run { "would delete" } else { "deleted" };
            let mut out = crate::output::stdout();
            match format {
                Format::Json => {
                    let rows: Map<String, Value> = done
                        .rows
                        .iter()
                        .map(|(t, n)| (t.clone(), json!(n)))
                        .collect();
                    let doc = json!({
                        "dry_run": dry_run,
                        "requested_before": format_time(done.requested_ms),
                        "before": format_time(done.cutoff_ms),
                        "kept_for_run": done.kept_for_run,
                        "rows": rows,
                        "eval_runs": done.runs,
                        "eval_recommendations": done.recommendations,
                    });
                    writeln!(out, "{doc}")?;
                }
                Format::Table => {
                    let mut table = crate::output::table();
                    table.set_header(vec!["table", verb]);
                    for (name, n) in &done.rows {
                        table.add_row(vec![name.clone(), n.to_string()]);
                    }
                    table.add_row(vec!["eval_runs".to_string(), done.runs.to_string()]);
                    table.add_row(vec![
                        "eval_recommendations".to_string(),
                        done.recommendations.to_string(),
                    ]);
                    writeln!(
                        out,
                        "before {}\n{}",
                        format_time(done.cutoff_ms),
                        crate::output::fit(table)
                    )?;
                }
            }
            out.flush()?;
            Ok(Status::Success)
        }
    }
}
