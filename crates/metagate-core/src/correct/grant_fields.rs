//! Grant-like arguments: a call cannot create, carry or extend a grant, so arguments that look
//! like one are stripped before any other rule reads the call.

use serde_json::Value;

use super::Report;
use crate::grants::{looks_like_grant_id, needs_grant};
use crate::policy::Policy;
use metagate_wire::args::Args;
use metagate_wire::correction::{Correction, Kind, arg_pointer};

/// Argument names that look like a grant or a permission token, compared after folding case
/// and separators (`grantId`, `grant-id` and `GRANT_ID` are one name).
const GRANT_LIKE: &[&str] = &[
    "grant",
    "grants",
    "grantid",
    "grantids",
    "granttoken",
    "permit",
    "permits",
    "permitid",
    "permittoken",
    "permission",
    "permissions",
    "permissionid",
    "permissiontoken",
    "capabilitytoken",
    "confirmation",
    "confirmed",
    "approval",
    "approved",
    "approvaltoken",
    "authorization",
    "authorized",
    "consent",
    "metagategrant",
    "metagatepermit",
];

/// Pieces of a folded name that make it read as a person's yes or a check waived
/// (`user_confirmed`, `isApproved`, `consent_given`, `dangerously_skip_permissions`,
/// `skip_confirmation`): a tool that takes such an argument declares it, and for any other
/// the model could only be forging what the operator says.
const APPROVAL_LIKE: &[&str] = &[
    "confirm",
    "approv",
    "consent",
    "authoriz",
    "authoris",
    "dangerously",
    "skipperm",
    "skipcheck",
    "skipverif",
    "skipsafety",
    "skipprompt",
    "bypass",
    "yolo",
];

fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether an argument looks like an attempt to carry a grant: its name is grant-like, or its
/// value is (or, in an array, holds) a grant id.
fn grant_like(name: &str, value: &Value) -> bool {
    let folded = fold(name);
    GRANT_LIKE.contains(&folded.as_str())
        || APPROVAL_LIKE.iter().any(|piece| folded.contains(piece))
        || match value {
            Value::String(s) => looks_like_grant_id(s),
            Value::Array(items) => items
                .iter()
                .any(|v| v.as_str().is_some_and(looks_like_grant_id)),
            _ => false,
        }
}

/// Strips grant-like top-level arguments from a call whose tool needs a grant, unless the
/// tool declares the argument: a call cannot create, carry or extend a grant, and the gate
/// never reads one from it. Each one is a `strip` correction and a warning.
pub(crate) fn strip_grant_fields(
    policy: &Policy,
    tool: &str,
    args: &mut Args<'_>,
    report: &mut Report,
) {
    if needs_grant(policy, tool).is_none() {
        return;
    }
    let declared = |k: &str| policy.tool(tool).is_some_and(|t| t.args.contains_key(k));
    let doomed: Vec<String> = args
        .iter()
        .filter(|(k, v)| !declared(k) && grant_like(k, &v.to_value()))
        .map(|(k, _)| k.to_string())
        .collect();
    for k in doomed {
        args.remove(&k);
        report.corrections.push(Correction::new(
            Kind::Strip,
            arg_pointer(&k),
            Value::String(k.clone()),
            Value::Null,
        ));
        report.warnings.push(format!(
            "removed argument {k:?}: a call cannot carry a grant; grants come from `metagate permit`"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::GrantId;
    use serde_json::json;

    #[test]
    fn grant_like_fields() {
        let id = GrantId::from_bytes([1; 16]).to_string();
        for (name, value, want) in [
            ("grant", json!("yes"), true),
            ("grantId", json!(1), true),
            ("grant-token", json!("x"), true),
            ("PERMIT", json!(true), true),
            ("permission", json!({"all": true}), true),
            ("approved", json!(true), true),
            ("note", json!(id), true),
            ("ids", json!(["a", id]), true),
            ("command", json!(format!("echo {id}")), false),
            ("path", json!("a/b"), false),
            ("granted_files", json!("x"), false),
            ("user_confirmed", json!(true), true),
            ("confirm", json!(true), true),
            ("is_approved", json!(true), true),
            ("isApproved", json!(true), true),
            ("consent_given", json!(true), true),
            ("dangerously_skip_permissions", json!(true), true),
            ("skip_confirmation", json!(true), true),
            ("preApproved", json!("yes"), true),
            ("bypass_sandbox", json!(true), true),
            ("content", json!("x"), false),
            ("config", json!("x"), false),
            ("author", json!("x"), false),
            ("skip", json!(1), false),
        ] {
            assert_eq!(grant_like(name, &value), want, "{name}");
        }
    }
}
