//! Tool names that read as paths. An agent that finds its tools on disk (Agent Zero loads
//! `python/tools/` + name + `.py`) runs the file such a name reaches, so `./code_execution_tool`
//! or `../tools/code_execution_tool` is that tool to it, while the policy knows no tool of that
//! name and would pass it as unknown. Such a name is read as the tool it ends in, or refused
//! whatever `[gate] unknown_tools` says: it is never an unknown tool passed unchecked.

use super::Policy;
use crate::error::{Category, ToolError};
use metagate_wire::call::split_method;

/// Why `name` reads as a path, if it does: a separator, `..`, a leading `.`, or a control
/// character anywhere in it (the edges are trimmed before this is asked).
pub fn path_like(name: &str) -> Option<&'static str> {
    if name.chars().any(char::is_control) {
        Some("holds a control character")
    } else if name.contains('/') {
        Some("holds '/'")
    } else if name.contains('\\') {
        Some("holds '\\'")
    } else if name.contains("..") {
        Some("holds '..'")
    } else if name.starts_with('.') {
        Some("starts with '.'")
    } else {
        None
    }
}

/// The tool a path-like name reaches: its last component, leading dots set aside
/// (`../tools/code_execution_tool:x` is `code_execution_tool:x`). None when a control
/// character is in it (no reading of it is sure) or nothing plain is left.
pub fn last_component(name: &str) -> Option<&str> {
    if name.chars().any(char::is_control) {
        return None;
    }
    let (tool, _) = split_method(name);
    let start = tool.rfind(['/', '\\']).map_or(0, |at| at + 1);
    let rest = name[start..].trim_start_matches('.');
    let (tool, _) = split_method(rest);
    (!tool.is_empty() && path_like(tool).is_none()).then_some(rest)
}

/// The refusal of a path-like name that reaches no tool the policy declares.
pub fn path_like_refusal(policy: &Policy, name: &str, why: &str) -> ToolError {
    let mut known: Vec<&str> = policy.tools.keys().map(String::as_str).collect();
    known.sort_unstable();
    ToolError::new(
        Category::PolicyBlocked,
        format!(
            "the tool name {name:?} {why}: a tool name is a name, not a path, and one that reads as a path is refused whatever [gate] unknown_tools says"
        ),
    )
    .tool(name)
    .suggest(format!(
        "Call a tool by its plain name, one of: {}",
        known.join(", ")
    ))
    .detail("rule", "gate.tool_name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_read_as_paths() {
        for (name, why, last) in [
            ("./code_execution_tool", true, Some("code_execution_tool")),
            ("/code_execution_tool", true, Some("code_execution_tool")),
            (
                "../tools/code_execution_tool",
                true,
                Some("code_execution_tool"),
            ),
            (
                "./code_execution_tool:x",
                true,
                Some("code_execution_tool:x"),
            ),
            (
                "tools\\code_execution_tool",
                true,
                Some("code_execution_tool"),
            ),
            (".hidden", true, Some("hidden")),
            ("a..b", true, None),
            ("code\u{7}tool", true, None),
            ("x/..", true, None),
            ("x/", true, None),
            ("code_execution_tool", false, None),
            ("skills_tool:load", false, None),
            ("call_subordinate", false, None),
        ] {
            assert_eq!(path_like(name).is_some(), why, "{name}");
            if why {
                assert_eq!(last_component(name), last, "{name}");
            }
        }
    }
}
