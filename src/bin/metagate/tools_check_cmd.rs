//! `metagate tools check`: a pre-flight report of tool definitions.

use std::io::Write;

use anyhow::Result;
use metagate_core::policy::import::{RiskLevel, ToolCheck, check_tools};
use metagate_wire::display::{one_line, plural};
use serde_json::{Value, json};

use crate::cli::{Format, ToolsCheckArgs};
use crate::exit::Status;

pub fn run(args: &ToolsCheckArgs) -> Result<Status> {
    let mut reports = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let name = path.display().to_string();
        let text = crate::config::read_capped(path)
            .map_err(|e| anyhow::anyhow!("cannot read tools file {name}: {e}"))?;
        let checks = check_tools(&name, &text, None)?;
        reports.push((name, checks));
    }
    // A note (a constraint decoding leaves to the model, such as `"format": "email"`) is
    // information: only problems and risks fail the check.
    let found = reports
        .iter()
        .flat_map(|(_, checks)| checks)
        .any(|c| !c.problems.is_empty() || has(c, RiskLevel::Risk));
    let mut out = crate::output::stdout();
    match args.format {
        Format::Json => {
            let files: Vec<Value> = reports
                .iter()
                .map(|(file, checks)| {
                    json!({
                        "file": file,
                        "tools": checks.iter().map(check_json).collect::<Vec<_>>(),
                    })
                })
                .collect();
            writeln!(out, "{}", json!({ "files": files }))?;
        }
        Format::Table => {
            for (file, checks) in &reports {
                let troubled = checks.iter().filter(|c| !c.problems.is_empty()).count();
                let risky = checks.iter().filter(|c| has(c, RiskLevel::Risk)).count();
                let noted = checks.iter().filter(|c| has(c, RiskLevel::Note)).count();
                writeln!(
                    out,
                    "{file}: {}, {} with problems, {} with decoding risks, {} with notes",
                    plural(checks.len(), "tool", "tools"),
                    troubled,
                    risky,
                    noted
                )?;
                for c in checks {
                    if c.problems.is_empty() && c.risks.is_empty() {
                        writeln!(out, "  {}: ok", one_line(&c.name))?;
                        continue;
                    }
                    writeln!(out, "  {}", one_line(&c.name))?;
                    for p in &c.problems {
                        writeln!(out, "    problem: {}", one_line(p))?;
                    }
                    for r in &c.risks {
                        let label = match r.level {
                            RiskLevel::Risk => "decoding risk",
                            RiskLevel::Note => "note",
                        };
                        writeln!(
                            out,
                            "    {label}: {} ({}): {}",
                            one_line(&r.pointer),
                            r.construct,
                            r.why
                        )?;
                    }
                }
            }
        }
    }
    out.flush()?;
    Ok(if found {
        Status::Rejected
    } else {
        Status::Success
    })
}

/// Whether `c` has a decoding risk of `level`.
fn has(c: &ToolCheck, level: RiskLevel) -> bool {
    c.risks.iter().any(|r| r.level == level)
}

fn check_json(c: &ToolCheck) -> Value {
    json!({
        "name": c.name,
        "problems": c.problems,
        "risks": c.risks.iter().map(|r| json!({
            "pointer": r.pointer,
            "level": r.level.as_str(),
            "construct": r.construct,
            "why": r.why,
        })).collect::<Vec<_>>(),
    })
}
