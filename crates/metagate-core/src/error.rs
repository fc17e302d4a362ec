//! The error taxonomy shared by gate decisions and recorded outcomes (docs/gate.md, "Error taxonomy": the categories, what each means, which are retryable).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use metagate_wire::scan;

/// Why a call did not go through (or why a tool run failed, when recorded by `record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The tool named is not in the policy.
    ToolNotFound,
    /// An argument is missing, unknown or has a value the tool does not take.
    InvalidParameters,
    /// An argument has the wrong JSON type.
    TypeMismatch,
    /// The operator's policy refuses the call.
    PolicyBlocked,
    /// The call needs a person's yes (a grant) first.
    ConfirmationRequired,
    /// A rate limit is reached.
    RateLimited,
    /// The tool failed and will fail again.
    PermanentFailure,
    /// The call was cancelled before it ended.
    Cancelled,
    /// The tool's server failed.
    ServerError,
    /// The tool could not be reached.
    NetworkError,
    /// The tool did not answer in time.
    Timeout,
    /// The input could not be read as a call at all.
    MalformedCall,
}

impl Category {
    /// Every category, in the order docs/gate.md's error taxonomy lists them.
    pub const ALL: [Category; 12] = [
        Category::ToolNotFound,
        Category::InvalidParameters,
        Category::TypeMismatch,
        Category::PolicyBlocked,
        Category::ConfirmationRequired,
        Category::RateLimited,
        Category::PermanentFailure,
        Category::Cancelled,
        Category::ServerError,
        Category::NetworkError,
        Category::Timeout,
        Category::MalformedCall,
    ];

    /// The name written in rejections and telemetry (`invalid_parameters`).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::ToolNotFound => "tool_not_found",
            Category::InvalidParameters => "invalid_parameters",
            Category::TypeMismatch => "type_mismatch",
            Category::PolicyBlocked => "policy_blocked",
            Category::ConfirmationRequired => "confirmation_required",
            Category::RateLimited => "rate_limited",
            Category::PermanentFailure => "permanent_failure",
            Category::Cancelled => "cancelled",
            Category::ServerError => "server_error",
            Category::NetworkError => "network_error",
            Category::Timeout => "timeout",
            Category::MalformedCall => "malformed_call",
        }
    }

    /// Whether the same call, reformatted or simply tried later, can succeed.
    fn retryable(self) -> bool {
        matches!(
            self,
            Category::InvalidParameters
                | Category::TypeMismatch
                | Category::MalformedCall
                | Category::RateLimited
                | Category::ServerError
                | Category::NetworkError
                | Category::Timeout
        )
    }

    /// The model's own mistakes, as opposed to the operator's policy or the world.
    #[cfg(test)]
    fn is_model_mistake(self) -> bool {
        matches!(
            self,
            Category::InvalidParameters | Category::TypeMismatch | Category::MalformedCall
        )
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A category name that is not in the taxonomy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCategory(String);

impl fmt::Display for UnknownCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown error category {:?}", self.0)
    }
}

impl std::error::Error for UnknownCategory {}

impl FromStr for Category {
    type Err = UnknownCategory;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCategory(s.to_string()))
    }
}

/// A rejection the agent can feed back to its model.
/// The `details` object of a rejection: a few keys in the order they were added. A list, as
/// an error carries two to five of them and a hashed map cost a sixth of writing a refusal.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Details(Vec<(Cow<'static, str>, Value)>);

impl Details {
    pub(crate) fn new() -> Self {
        Details::default()
    }

    /// Sets `key`, in place when it is already there (as a JSON object would hold it).
    pub(crate) fn insert(&mut self, key: impl Into<Cow<'static, str>>, value: Value) {
        let key = key.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key, value)),
        }
    }

    #[cfg(test)]
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (&**k, v))
    }
}

impl Serialize for Details {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A rejection: what the model is told, and what telemetry records.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// What kind of failure it is.
    pub category: Category,
    /// The tool the call named, when it named one.
    pub tool: Option<String>,
    /// What is wrong, for the model.
    pub message: String,
    /// What to do instead, for the model.
    pub suggestion: String,
    pub(crate) missing: Vec<String>,
    pub(crate) details: Details,
    /// What only the operator is told (on stderr), never the model: the `metagate permit grant`
    /// command that would allow the call, which an agent with a shell tool could run itself.
    pub operator: Option<String>,
}

impl ToolError {
    /// A rejection of `category`, with no tool, suggestion or details yet.
    pub fn new(category: Category, message: impl Into<String>) -> Self {
        ToolError {
            category,
            tool: None,
            message: message.into(),
            suggestion: String::new(),
            missing: Vec::new(),
            details: Details::new(),
            operator: None,
        }
    }

    /// Says `text` to the operator only (see [`ToolError::operator`]).
    pub(crate) fn for_operator(mut self, text: impl Into<String>) -> Self {
        self.operator = Some(text.into());
        self
    }

    /// Names the tool the call was for.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Says what the model should do instead.
    pub fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = suggestion.into();
        self
    }

    pub(crate) fn detail(mut self, key: &'static str, value: impl Into<Value>) -> Self {
        self.details.insert(key, value.into());
        self
    }

    pub(crate) fn retryable(&self) -> bool {
        self.category.retryable()
    }

    /// The `error` object of a rejection: `category`, `tool`, `message`, `suggestion`,
    /// `retryable`, `missing`, `details` (docs/gate.md, "Output").
    pub fn to_json(&self) -> Value {
        json!({
            "category": self.category.as_str(),
            "tool": self.tool,
            "message": self.message,
            "suggestion": self.suggestion,
            "retryable": self.retryable(),
            "missing": self.missing,
            "details": self.details,
        })
    }

    /// The text an agent adds to its model's history.
    pub fn feedback(&self) -> String {
        self.feedback_parts().concat()
    }

    /// [`ToolError::feedback`] in pieces, for writing it without building it.
    fn feedback_parts(&self) -> [&str; 8] {
        [
            "[tool_error]\ncategory: ",
            self.category.as_str(),
            "\nerror: ",
            &self.message,
            "\nsuggestion: ",
            &self.suggestion,
            "\nretryable: ",
            if self.retryable() { "true" } else { "false" },
        ]
    }

    /// The whole rejection document written on stdout.
    #[cfg(test)]
    fn rejection(&self) -> Value {
        json!({ "error": self.to_json(), "feedback": self.feedback() })
    }

    /// Writes the rejection document as compact JSON, without building it as a value.
    pub fn write_rejection(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"error\":{\"category\":\"");
        out.extend_from_slice(self.category.as_str().as_bytes());
        out.extend_from_slice(b"\",\"tool\":");
        match &self.tool {
            Some(t) => scan::write_string(t, out),
            None => out.extend_from_slice(b"null"),
        }
        // The feedback repeats the message and the suggestion: escaped once, copied there.
        out.extend_from_slice(b",\"message\":");
        let message = out.len() + 1..;
        scan::write_string(&self.message, out);
        let message = message.start..out.len() - 1;
        out.extend_from_slice(b",\"suggestion\":");
        let suggestion = out.len() + 1..;
        scan::write_string(&self.suggestion, out);
        let suggestion = suggestion.start..out.len() - 1;
        out.extend_from_slice(if self.retryable() {
            b",\"retryable\":true,\"missing\":["
        } else {
            b",\"retryable\":false,\"missing\":["
        });
        for (i, m) in self.missing.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            scan::write_string(m, out);
        }
        out.extend_from_slice(b"],\"details\":");
        scan::write_map(self.details.iter(), out);
        out.extend_from_slice(b"},\"feedback\":\"[tool_error]\\ncategory: ");
        out.extend_from_slice(self.category.as_str().as_bytes());
        out.extend_from_slice(b"\\nerror: ");
        out.extend_from_within(message);
        out.extend_from_slice(b"\\nsuggestion: ");
        out.extend_from_within(suggestion);
        out.extend_from_slice(if self.retryable() {
            b"\\nretryable: true\"}"
        } else {
            b"\\nretryable: false\"}"
        });
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.category, self.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_keep_their_order_and_replace_in_place() {
        let mut d = Details::new();
        d.insert("rule", json!("a"));
        d.insert("argument", json!("path"));
        d.insert("rule", json!("b"));
        assert_eq!(d.get("rule"), Some(&json!("b")));
        assert_eq!(d.get("none"), None);
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"rule":"b","argument":"path"}"#
        );
        let e = ToolError::new(Category::PolicyBlocked, "no")
            .detail("rule", "x")
            .detail("count", 3);
        let mut out = Vec::new();
        e.write_rejection(&mut out);
        let written: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(written, e.rejection());
        assert_eq!(
            serde_json::to_string(&written["error"]["details"]).unwrap(),
            r#"{"rule":"x","count":3}"#
        );
    }

    #[test]
    fn retryable_follows_the_taxonomy() {
        let retryable: Vec<_> = Category::ALL
            .into_iter()
            .filter(|c| c.retryable())
            .map(Category::as_str)
            .collect();
        assert_eq!(
            retryable,
            [
                "invalid_parameters",
                "type_mismatch",
                "rate_limited",
                "server_error",
                "network_error",
                "timeout",
                "malformed_call"
            ]
        );
        let mistakes: Vec<_> = Category::ALL
            .into_iter()
            .filter(|c| c.is_model_mistake())
            .map(Category::as_str)
            .collect();
        assert_eq!(
            mistakes,
            ["invalid_parameters", "type_mismatch", "malformed_call"]
        );
    }

    #[test]
    fn names_round_trip() {
        for c in Category::ALL {
            assert_eq!(c.as_str().parse::<Category>().unwrap(), c);
            assert_eq!(serde_json::to_value(c).unwrap(), json!(c.as_str()));
        }
        assert!("nope".parse::<Category>().is_err());
    }

    #[test]
    fn feedback_has_the_contract_lines() {
        let e = ToolError::new(Category::InvalidParameters, "missing code")
            .tool("code_execution_tool")
            .suggest("add code");
        let text = e.feedback();
        assert!(text.starts_with("[tool_error]\n"));
        assert!(text.contains("\ncategory: invalid_parameters\n"));
        assert!(text.contains("\nerror: missing code\n"));
        assert!(text.contains("\nsuggestion: add code\n"));
        assert!(text.ends_with("\nretryable: true"));
        let j = e.rejection();
        assert_eq!(j["error"]["retryable"], json!(true));
        assert_eq!(j["error"]["tool"], json!("code_execution_tool"));
        let mut written = Vec::new();
        e.write_rejection(&mut written);
        assert_eq!(serde_json::from_slice::<Value>(&written).unwrap(), j);
    }

    proptest::proptest! {
        /// The feedback copies the message and suggestion as escaped for their own fields.
        #[test]
        fn written_rejections_are_the_rejection_documents(
            tool in proptest::option::of(".*"),
            message in "(\\PC|[\"\\\\\n\t\u{0}-\u{1f}])*",
            suggestion in "(\\PC|[\"\\\\\n\t\u{0}-\u{1f}])*",
            retryable: bool,
        ) {
            let category = if retryable { Category::RateLimited } else { Category::PolicyBlocked };
            let mut e = ToolError::new(category, message).suggest(suggestion).detail("rule", "r");
            if let Some(tool) = tool {
                e = e.tool(tool);
            }
            let mut written = Vec::new();
            e.write_rejection(&mut written);
            let written: Value = serde_json::from_slice(&written).unwrap();
            proptest::prop_assert_eq!(written, e.rejection());
        }
    }
}
