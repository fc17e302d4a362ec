//! `[mcp]`: what `metagate mcp` takes from the policy beyond the tools: who an HTTP request
//! is (bearer tokens, by their hash), whether a loopback request without one is let in, which
//! browser origins may call, and whether a server may ask the client to sample.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// `[mcp]` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpFile {
    /// `"sha256:HEX"` of a bearer token → the caller it authenticates (a token is never
    /// written in the policy itself).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) tokens: IndexMap<String, String>,
    /// Whether a request from a loopback address without a token is let in (as `--caller`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unauthenticated_loopback: Option<bool>,
    /// Browser origins (`scheme://host[:port]`) that may call besides loopback ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) origins: Option<Vec<String>>,
    /// Whether a server's `sampling/createMessage` reaches the client (`true`, the default)
    /// or is refused by metagate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sampling: Option<bool>,
}

impl McpFile {
    /// Whether the section says nothing (and is left out of `policy show`).
    pub(crate) fn is_empty(&self) -> bool {
        self == &McpFile::default()
    }

    /// Layers `over` on `self`: scalars of `over` win, lists are replaced, tokens merged.
    pub(crate) fn layer(&mut self, over: McpFile) {
        self.tokens.extend(over.tokens);
        self.unauthenticated_loopback = over
            .unauthenticated_loopback
            .or(self.unauthenticated_loopback);
        self.origins = over.origins.or(self.origins.take());
        self.sampling = over.sampling.or(self.sampling);
    }
}

/// `[mcp]` compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpRules {
    /// A token's SHA-256 (32 bytes) → its caller.
    pub tokens: Vec<([u8; 32], String)>,
    /// Whether loopback requests need no token.
    pub unauthenticated_loopback: bool,
    /// Origins allowed besides loopback ones, lowercased, without a trailing `/`.
    pub origins: Vec<String>,
    /// Whether sampling requests from a server pass.
    pub sampling: bool,
}

impl McpRules {
    /// The rules of `file` and the problems found, each with its key path.
    pub(crate) fn compile(file: &McpFile) -> (McpRules, Vec<(Vec<String>, String)>) {
        let mut problems = Vec::new();
        let mut tokens = Vec::new();
        for (hash, caller) in &file.tokens {
            match token_hash(hash) {
                Some(bytes) => tokens.push((bytes, caller.clone())),
                None => problems.push((
                    vec!["mcp".into(), "tokens".into(), hash.clone()],
                    "a token is given by its hash: \"sha256:\" and 64 hex digits (printf %s TOKEN | sha256sum)".to_string(),
                )),
            }
            if caller.is_empty() || caller.chars().any(char::is_control) {
                problems.push((
                    vec!["mcp".into(), "tokens".into(), hash.clone()],
                    "the caller must be a name without control characters".to_string(),
                ));
            }
        }
        let mut origins = Vec::new();
        for origin in file.origins.iter().flatten() {
            let clean = origin.trim_end_matches('/').to_ascii_lowercase();
            if !(clean.starts_with("http://") || clean.starts_with("https://"))
                || clean
                    .split_once("://")
                    .is_some_and(|(_, rest)| rest.contains('/'))
            {
                problems.push((
                    vec!["mcp".into(), "origins".into()],
                    format!("{origin:?} is not an origin (scheme://host[:port])"),
                ));
            } else {
                origins.push(clean);
            }
        }
        (
            McpRules {
                tokens,
                unauthenticated_loopback: file.unauthenticated_loopback.unwrap_or(false),
                origins,
                sampling: file.sampling.unwrap_or(true),
            },
            problems,
        )
    }
}

fn token_hash(text: &str) -> Option<[u8; 32]> {
    let hex = text.strip_prefix("sha256:")?;
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_hashes_and_origins_are_origins() {
        let file: McpFile = toml::from_str(&format!(
            "tokens = {{ \"sha256:{}\" = \"alice\", \"hunter2\" = \"bob\" }}\norigins = [\"https://app.example/\", \"https://x/y\"]",
            "ab".repeat(32)
        ))
        .unwrap();
        let (rules, problems) = McpRules::compile(&file);
        assert_eq!(rules.tokens, [([0xab; 32], "alice".to_string())]);
        assert_eq!(rules.origins, ["https://app.example"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(!rules.unauthenticated_loopback);
        assert!(rules.sampling);
    }
}
