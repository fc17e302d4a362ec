//! Arguments: unknown names, missing requirements, and the aliases learned from a model's
//! retries (`learn_alias`), written as a policy fragment.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Map, Value};

use super::round2;
use crate::policy::file::Extends;
use crate::policy::thresholds::Thresholds;
use crate::policy::{Policy, Tool, fold_name, toml_key, toml_string};

/// The argument names of `args` the tool does not declare and the gate would not correct.
pub fn unknown_args<'a>(
    tool: &Tool,
    policy: &Policy,
    args: &'a Map<String, Value>,
) -> Vec<&'a str> {
    args.keys()
        .map(String::as_str)
        .filter(|k| {
            !tool.args.contains_key(*k)
                && !tool.aliases.contains_key(*k)
                && !tool.folded.contains_key(&fold_name(k))
                && !policy.gate.strip.iter().any(|p| p.matches(k))
        })
        .collect()
}

/// The required arguments a call went without (blank strings and null count as missing;
/// `unless` conditions are honoured).
pub fn missing_required(tool: &Tool, args: &Map<String, Value>) -> Vec<String> {
    tool.args
        .iter()
        .filter(|(name, arg)| {
            arg.required
                && match args.get(name.as_str()) {
                    None | Some(Value::Null) => true,
                    Some(Value::String(s)) => s.trim().is_empty(),
                    _ => false,
                }
                && !arg.unless.iter().any(|(other, wanted)| {
                    args.get(other).is_some_and(|v| {
                        wanted.iter().any(|w| match (v, w) {
                            (Value::String(a), Value::String(b)) => {
                                a.trim().eq_ignore_ascii_case(b.trim())
                            }
                            _ => v == w,
                        })
                    })
                })
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// The pairs a flagged call and the same session's next call to the tool show: an unknown
/// name in the first whose value the second passes under a declared name it did not use.
/// Trivial values (booleans, null, empty or redacted strings) prove nothing and are skipped.
pub fn alias_pairs(
    unknown: &[&str],
    flagged: &Map<String, Value>,
    next_verdict: &str,
    next: &Map<String, Value>,
    tool: &Tool,
) -> Vec<(String, String)> {
    if next_verdict == "rejected" {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    for from in unknown {
        let Some(v) = flagged.get(*from) else {
            continue;
        };
        let meaningful = match v {
            Value::String(s) => !s.trim().is_empty() && !s.contains("[REDACTED]"),
            Value::Number(_) | Value::Array(_) | Value::Object(_) => true,
            _ => false,
        };
        if !meaningful {
            continue;
        }
        for (to, value) in next {
            if tool.args.contains_key(to) && !flagged.contains_key(to) && value == v {
                pairs.push((from.to_string(), to.clone()));
            }
        }
    }
    pairs
}

/// An alias the pairs propose.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedAlias {
    /// The tool the alias is for.
    pub tool: String,
    /// The argument name models send.
    pub from: String,
    /// The argument name the tool takes.
    pub to: String,
    /// How many calls were corrected this way.
    pub count: u64,
    /// The share of `from`'s pairs that went to `to`.
    pub share: f64,
    /// A few sessions the pair was seen in.
    pub(crate) sessions: Vec<String>,
}

/// (tool, unknown name, declared name) → a few sessions the pair was seen in.
pub type PairSessions = BTreeMap<(String, String, String), BTreeSet<String>>;

/// Gives each proposed alias the sessions its pair was seen in.
pub fn attach_sessions(aliases: &mut [ProposedAlias], sessions: &PairSessions) {
    for a in aliases {
        let key = (a.tool.clone(), a.from.clone(), a.to.clone());
        a.sessions = sessions
            .get(&key)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
    }
}

/// Pairs seen often enough, whose unknown name goes to one declared name clearly enough.
pub fn propose_aliases(
    pairs: &BTreeMap<(String, String, String), u64>,
    t: &Thresholds,
) -> Vec<ProposedAlias> {
    let mut by_from: BTreeMap<(&str, &str), Vec<(&str, u64)>> = BTreeMap::new();
    for ((tool, from, to), n) in pairs {
        by_from
            .entry((tool.as_str(), from.as_str()))
            .or_default()
            .push((to.as_str(), *n));
    }
    let mut out = Vec::new();
    for ((tool, from), targets) in by_from {
        // A blank name is no argument a model means: nothing to alias.
        if from.trim().is_empty() {
            continue;
        }
        let total: u64 = targets.iter().map(|(_, n)| n).sum();
        let (to, n) = targets
            .iter()
            .copied()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
            .expect("at least one target");
        let share = n as f64 / total as f64;
        if n >= t.learn_alias_min_pairs && share >= t.learn_alias_min_share {
            out.push(ProposedAlias {
                tool: tool.to_string(),
                from: from.to_string(),
                to: to.to_string(),
                count: n,
                share: round2(share),
                sessions: Vec::new(),
            });
        }
    }
    out
}

/// What a policy patch needs to know of the policy it was learned under, so that it works
/// used alone: the tool files it imports (their paths absolute) and whether it extends the
/// built-in policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatchBase {
    /// The policy file, `None` for the built-in policy.
    policy_file: Option<String>,
    extends_none: bool,
    /// `[[import]]` entries: absolute path, format, fill_defaults.
    imports: Vec<(String, Option<String>, Option<bool>)>,
}

impl PatchBase {
    /// What `policy_patch` needs to know of the policy it patches.
    pub fn of(policy: &Policy) -> PatchBase {
        let folder = policy.origin.as_deref().and_then(Path::parent);
        let imports = policy
            .file
            .imports
            .iter()
            .map(|i| {
                let p = Path::new(&i.path);
                let full = match folder {
                    Some(dir) if p.is_relative() => dir.join(p),
                    _ => p.to_path_buf(),
                };
                (
                    full.display().to_string(),
                    i.format.map(|f| f.as_str().to_string()),
                    i.fill_defaults,
                )
            })
            .collect();
        PatchBase {
            policy_file: policy.origin.as_ref().map(|p| p.display().to_string()),
            extends_none: policy.file.extends == Some(Extends::None),
            imports,
        }
    }
}

/// The proposed aliases as a policy fragment. It carries the imports of the policy they were
/// learned under, so that used alone (`--policy PATCH`) the imported tools are still there;
/// merged into that policy, only its `[tools.*.aliases]` tables are copied (the header says
/// so).
pub fn policy_patch(aliases: &[ProposedAlias], base: &PatchBase) -> String {
    let mut by_tool: BTreeMap<&str, Vec<&ProposedAlias>> = BTreeMap::new();
    for a in aliases {
        by_tool.entry(&a.tool).or_default().push(a);
    }
    let policy = base.policy_file.as_deref().map_or_else(
        || "the built-in policy".to_string(),
        |p| metagate_wire::display::one_line(p).into_owned(),
    );
    let mut out = format!(
        "# Argument aliases learned by `metagate evaluate` (learn_alias) under {policy}.\n\
         # Review each one. Used alone (`metagate --policy THIS_FILE ...`), this file is {}{}\n\
         # plus these aliases. To merge into your policy instead, copy only the [tools.*.aliases]\n\
         # tables below into it (its own [[import]] entries are already there).\n",
        if base.extends_none {
            "an empty policy (extends = \"none\")"
        } else {
            "the built-in policy"
        },
        if base.imports.is_empty() {
            ""
        } else {
            " with the tool files that policy imports"
        },
    );
    if base.extends_none {
        out.push_str("\nextends = \"none\"\n");
    }
    for (path, format, fill_defaults) in &base.imports {
        out.push_str(&format!("\n[[import]]\npath = {}\n", toml_string(path)));
        if let Some(format) = format {
            out.push_str(&format!("format = {}\n", toml_string(format)));
        }
        if let Some(fill) = fill_defaults {
            out.push_str(&format!("fill_defaults = {fill}\n"));
        }
    }
    for (tool, list) in by_tool {
        out.push_str(&format!("\n[tools.{}.aliases]\n", toml_key(tool)));
        for a in list {
            out.push_str(&format!(
                "{} = {}  # seen {} times ({}% of its pairs)\n",
                toml_key(&a.from),
                toml_string(&a.to),
                a.count,
                (a.share * 100.0).round()
            ));
        }
    }
    out
}
