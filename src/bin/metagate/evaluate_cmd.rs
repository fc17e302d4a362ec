//! `metagate evaluate`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use comfy_table::{Table, presets::UTF8_BORDERS_ONLY};
use indicatif::{ProgressBar, ProgressStyle};
use metagate::domain::events::format_time;
use metagate::domain::evolution::{
    self as evaluate, Aggregate, Window, alias_json, health, policy_patch, propose_aliases,
    recommend, recommendation_json, tools_json,
};
use metagate::domain::policy::Policy;
use metagate::store::StoreError;
use metagate::store::aggregate as scan;
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
    // One file under two names (a symlink, a hard link) would have its events counted twice.
    let real: Vec<FileId> = paths
        .iter()
        .map(|p| FileId::of(p).unwrap_or_else(|| FileId::Path(p.clone())))
        .collect();
    for (i, r) in real.iter().enumerate() {
        if let Some(j) = real[..i].iter().position(|earlier| earlier == r) {
            bail!(
                "--db {} and --db {} are the same store: give each store once",
                paths[j].display(),
                paths[i].display()
            );
        }
    }
    if let Some(patch) = &args.emit_policy_patch {
        refuse_own_file(patch, &paths, policy)?;
    }
    if let Some(id) = args.accept.as_deref() {
        return set_status(id, "accepted", args.format, env);
    }
    if let Some(id) = args.reject.as_deref() {
        return set_status(id, "rejected", args.format, env);
    }
    let t = policy.thresholds();
    let now_ms = (env.clock())();
    let from_ms = evaluate::parse_moment(&args.since, now_ms)
        .map_err(anyhow::Error::msg)
        .context("--since")?;
    let until_ms = match &args.until {
        Some(u) => evaluate::parse_moment(u, now_ms)
            .map_err(anyhow::Error::msg)
            .context("--until")?,
        // Exclusive: an event recorded at this very millisecond is in.
        None => now_ms + 1,
    };
    if from_ms >= until_ms {
        bail!(
            "the window is empty: --since {} is not before --until {}",
            format_time(from_ms),
            format_time(until_ms)
        );
    }
    let window = Window::new(from_ms, until_ms, now_ms.min(until_ms), &t);

    // Read every shard, read-only.
    let mut conns = Vec::new();
    let mut agg = Aggregate::default();
    for path in &paths {
        match scan::open_read_only(path, env.busy_timeout())? {
            Some(conn) => conns.push((path.clone(), conn)),
            None => agg.empty_stores.push(path.display().to_string()),
        }
    }
    let mut total = 0;
    for (path, conn) in &conns {
        total += scan::row_estimate(conn).map_err(|e| StoreError::from_sqlite(path, e))?;
    }
    let bar = progress_bar(total);
    let mut done = 0;
    let mut high_water = results::HighWater::default();
    for (path, conn) in &conns {
        let (part, hw) = scan::scan(conn, policy, &window, &t, done, total, &mut |n, total| {
            bar.set_length(total.max(n));
            bar.set_position(n);
        })
        .map_err(|e| StoreError::from_sqlite(path, e))
        .with_context(|| format!("cannot read the telemetry in {}", path.display()))?;
        done += scan::row_estimate(conn).map_err(|e| StoreError::from_sqlite(path, e))?;
        if *path == paths[0] {
            high_water = hw;
        }
        agg.merge(part);
    }
    bar.finish_and_clear();
    for empty in &agg.empty_stores {
        say!("metagate: evaluate: {empty} holds no telemetry yet");
    }

    let aliases = propose_aliases(&agg.alias_pairs, &t);
    let mut recs = recommend(&agg.tallies, &aliases, &t);
    // Before the run is stored: a patch that cannot be written fails the command as a whole.
    if let Some(patch) = &args.emit_policy_patch {
        write_replacing(patch, policy_patch(&aliases).as_bytes())
            .with_context(|| format!("cannot write the policy patch {}", patch.display()))?;
        say!(
            "metagate: evaluate: wrote {} to {}",
            plural(aliases.len(), "proposed alias", "proposed aliases"),
            patch.display()
        );
    }
    let shards: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let run_id = if args.dry_run {
        if let Some((path, conn)) = conns.iter().find(|(p, _)| *p == paths[0]) {
            results::statuses(conn, &mut recs).map_err(|e| StoreError::from_sqlite(path, e))?;
        }
        None
    } else {
        let mut store = env.open_existing_store()?;
        let id = results::save(
            &mut store,
            results::Run {
                window: &window,
                ran_at_ms: now_ms,
                shards: &shards,
                aggregate: &agg,
                recommendations: &mut recs,
                aliases: &aliases,
                thresholds: &t,
                high_water,
            },
        )?;
        Some(id)
    };
    drop(conns);

    let mut out = crate::output::stdout();
    match args.format {
        Format::Json => {
            let doc = json!({
                "window": {
                    "from": format_time(window.from_ms),
                    "until": format_time(window.until_ms),
                    "recent_from": format_time(window.recent_from_ms),
                },
                "events": agg.events,
                "tools": tools_json(&agg.tallies, &t),
                "recommendations": recs.iter().map(recommendation_json).collect::<Vec<_>>(),
                "proposed_aliases": aliases.iter().map(alias_json).collect::<Vec<_>>(),
                "user_corrections_unlinked": agg.unlinked_corrections,
                "run": run_id,
                "stored_in": run_id.map(|_| paths[0].display().to_string()),
                "shards": shards,
            });
            writeln!(out, "{doc}")?;
        }
        Format::Table => {
            let stored = match run_id {
                Some(id) => format!("run {id} stored in {}", paths[0].display()),
                None => "dry run: nothing stored".to_string(),
            };
            writeln!(
                out,
                "window {} → {} · {} events from {} store{} · {stored}",
                format_time(window.from_ms),
                format_time(window.until_ms),
                agg.events,
                paths.len(),
                if paths.len() == 1 { "" } else { "s" }
            )?;
            if agg.events == 0 {
                writeln!(out, "no events in the window: nothing to evaluate")?;
            } else {
                let rows = health::rows(&agg.tallies, health::Sort::Name, now_ms, &t);
                writeln!(out, "{}", crate::tools_cmd::health_table(&rows, &t))?;
                writeln!(out, "{}", recommendations_table(&recs))?;
                if !aliases.is_empty() {
                    let mut table = Table::new();
                    table.load_style(UTF8_BORDERS_ONLY);
                    table.set_header(vec!["tool", "alias", "declared", "seen", "share"]);
                    for a in &aliases {
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
                        "proposed aliases (--emit-policy-patch FILE writes them as TOML):\n{table}"
                    )?;
                }
            }
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

fn recommendations_table(recs: &[evaluate::Recommendation]) -> String {
    if recs.is_empty() {
        return "no recommendations".to_string();
    }
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
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
    table.to_string()
}

fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} evaluating {pos}/{len} rows [{elapsed}] {wide_bar}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The patch may not land on a file metagate is using: a store (with its SQLite companions)
/// or the policy file. Checked before the run, so a refused patch leaves nothing half done.
fn refuse_own_file(patch: &Path, stores: &[PathBuf], policy: &Policy) -> Result<()> {
    let Some(target) = FileId::of(patch) else {
        // Not there yet: it cannot be one of the files in use (and a link to one that is
        // not there yet is replaced, not written through: [`write_replacing`]).
        return Ok(());
    };
    for store in stores {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = store.as_os_str().to_owned();
            name.push(suffix);
            if FileId::of(Path::new(&name)).is_some_and(|own| own == target) {
                bail!(
                    "--emit-policy-patch {} is the telemetry store {}: write the patch to a file of its own",
                    patch.display(),
                    name.to_string_lossy()
                );
            }
        }
    }
    if let Some(origin) = &policy.origin
        && FileId::of(origin).is_some_and(|own| own == target)
    {
        bail!(
            "--emit-policy-patch {} is the policy file in use: write the patch beside it, review it, then merge it",
            patch.display()
        );
    }
    Ok(())
}

/// A file whatever name reaches it: its device and inode where there are such (a hard link
/// has a canonical path of its own), else its canonical path.
#[derive(Debug, PartialEq, Eq)]
enum FileId {
    #[cfg_attr(not(unix), allow(dead_code))]
    Inode(u64, u64),
    Path(PathBuf),
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(path)
                .ok()
                .map(|m| FileId::Inode(m.dev(), m.ino()))
        }
        #[cfg(not(unix))]
        {
            std::fs::canonicalize(path).ok().map(FileId::Path)
        }
    }
}

/// Writes `bytes` to a new file beside `path`, then renames it over `path`: a link there is
/// replaced rather than written through, so no name can lead the patch into a file in use,
/// and a reader never sees half a patch.
fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
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
                "metagate: evaluate: no recommendation {id:?} in {}; `metagate evaluate --format json` lists them",
                path.display()
            );
            Ok(Status::Rejected)
        }
    }
}
