//! `metagate tools health`.

use std::io::Write;

use anyhow::Result;
use comfy_table::Table;
use metagate::health;
use metagate_core::events::format_time;
use metagate_core::evolution::Tally;
use metagate_core::evolution::health::{known_tools, rows};
use metagate_core::policy::Policy;
use metagate_core::policy::thresholds::Thresholds;
use metagate_wire::display::one_line;

use crate::cli::{HealthArgs, HealthFormat, ToolsCommand};
use crate::exit::Status;
use crate::runtime::Env;

/// `<known_tools>` holds at most this many entries unless `--top` says otherwise (recurgent's
/// number).
const KNOWN_TOOLS_TOP: usize = 12;

pub fn run(command: ToolsCommand, policy: &Policy, env: &Env) -> Result<Status> {
    match command {
        ToolsCommand::Health(args) => health_cmd(&args, policy, env),
        ToolsCommand::Check(args) => crate::tools_check_cmd::run(&args),
    }
}

fn health_cmd(args: &HealthArgs, policy: &Policy, env: &Env) -> Result<Status> {
    let t = policy.thresholds();
    let now_ms = (env.clock())();
    let mut store = env.open_existing_store()?;
    let report = health::read(&mut store, policy, now_ms)?;
    // Wrapped: this note is read at any terminal, and at 80 columns one line would be three.
    let note = match &report.base {
        Some(r) => format!(
            "metagate: tools health: evaluate run {} ({} → {}, made {}) plus live counts of what it did not count, up to now ({})",
            r.id,
            format_time(r.window_from_ms),
            format_time(r.window_to_ms),
            format_time(r.ran_at_ms),
            format_time(now_ms)
        ),
        None if report.any_run => format!(
            "metagate: tools health: every evaluate run in {} has a window ending after now ({}): live counts only (no re-asks, which only evaluate detects)",
            store.place().display(),
            format_time(now_ms)
        ),
        None => format!(
            "metagate: tools health: no evaluate run in {} yet: live counts only (no re-asks, which only evaluate detects; run `metagate evaluate`)",
            store.place().display()
        ),
    };
    say!("{}", crate::output::wrap_for_stderr(&note));
    if let Some(r) = &report.base {
        for (tool, method, why) in &r.unreadable {
            let name = if method.is_empty() {
                tool.clone()
            } else {
                format!("{tool}.{method}")
            };
            say!(
                "metagate: tools health: warning: evaluate run {} stored a tally for {} that cannot be read ({why}): only its live counts are shown; run `metagate evaluate` again to replace it",
                r.id,
                one_line(&name)
            );
        }
    }
    let tallies = &report.tallies;
    let mut out = crate::output::stdout();
    match args.format {
        HealthFormat::KnownTools => {
            let block = known_tools(
                tallies,
                &report.open,
                args.top.unwrap_or(KNOWN_TOOLS_TOP),
                args.budget,
                now_ms,
                &t,
            );
            if block.is_empty() {
                say!(
                    "metagate: tools health: --budget {} is too small for even an empty <known_tools> block",
                    args.budget
                );
            }
            write!(out, "{block}")?;
        }
        HealthFormat::Json => {
            let top = args.top.unwrap_or(usize::MAX);
            writeln!(out, "{}", report.to_json(policy, args.sort, top, now_ms))?;
        }
        HealthFormat::Table => {
            let mut rows = rows(tallies, args.sort, now_ms, &t);
            let recorded = rows.len();
            rows.truncate(args.top.unwrap_or(usize::MAX));
            if recorded == 0 {
                writeln!(out, "no tool calls or outcomes recorded yet")?;
            } else if rows.is_empty() {
                let recorded = metagate_wire::display::plural(recorded, "tool", "tools");
                writeln!(out, "{recorded} recorded; --top 0 shows none of them")?;
            } else {
                writeln!(out, "{}", crate::output::fit(health_table(&rows, &t)))?;
            }
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

/// One row per tool and method, shared with `evaluate`'s report.
pub fn health_table(rows: &[(String, String, Tally)], t: &Thresholds) -> Table {
    let mut table = crate::output::table();
    table.set_header(vec![
        "tool",
        "method",
        "calls",
        "pass/corr/rej",
        "boundary (recent)",
        "low utility (recent)",
        "user corr.",
        "utility",
        "cohesion",
        "top axes",
    ]);
    let pct = |n: u64, of: u64| {
        if of == 0 {
            "-".to_string()
        } else {
            format!("{:.0}%", n as f64 * 100.0 / of as f64)
        }
    };
    for (tool, method, m) in rows {
        let axes: Vec<String> = m
            .axes_ranked()
            .into_iter()
            .take(3)
            .map(|(a, _)| a)
            .collect();
        let mut flags = Vec::new();
        if m.cohesion_warning(t) {
            flags.push("warning");
        }
        if m.degraded(t) {
            flags.push("degraded");
        }
        table.add_row(vec![
            one_line(tool).into_owned(),
            if method.is_empty() {
                "-".to_string()
            } else {
                one_line(method).into_owned()
            },
            m.calls_seen().to_string(),
            format!(
                "{}/{}/{}",
                pct(m.passed, m.calls),
                pct(m.corrected, m.calls),
                pct(m.rejected, m.calls)
            ),
            format!("{} ({})", m.boundary, m.boundary_recent),
            format!("{} ({})", m.low_utility, m.low_utility_recent),
            m.user_corrections().to_string(),
            m.utility()
                .map_or_else(|| "-".to_string(), |u| format!("{u:.2}")),
            if flags.is_empty() {
                "-".to_string()
            } else {
                flags.join(", ")
            },
            if axes.is_empty() {
                "-".to_string()
            } else {
                one_line(&axes.join(", ")).into_owned()
            },
        ]);
    }
    table
}
