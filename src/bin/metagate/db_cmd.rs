//! `metagate db info`.

use std::io::Write;

use anyhow::Result;
use metagate::domain::events::format_time;
use serde_json::{Map, Value, json};

use crate::cli::{DbCommand, Format};
use crate::exit::Status;
use crate::runtime::Env;

pub fn run(command: DbCommand, env: &Env) -> Result<Status> {
    match command {
        DbCommand::Info { format } => {
            let store = env.open_existing_store()?;
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
    }
}
