//! Arguments sent as one bare value instead of an object of arguments, as smolagents writes a
//! one-argument call: `{"name": "final_answer", "arguments": "image.png"}`. Only the tool's
//! declaration can say which argument that value is, and it says so only when the tool takes
//! exactly one: then the value is that argument's (a correction of kind `envelope`); otherwise
//! the call is refused, naming what the tool takes.

use serde_json::{Map, Value};

use super::Report;
use crate::error::{Category, ToolError};
use crate::policy::Tool;
use metagate_wire::correction::{Correction, Kind};

/// The argument the bare `value` (sent as `field`) is the value of: the one argument `tool`
/// declares. The correction goes into `report`; the error says why no argument can be named.
pub fn bare_argument(
    tool_name: &str,
    found: Option<&Tool>,
    value: &Value,
    field: &str,
    report: &mut Report,
) -> Result<String, Box<ToolError>> {
    let shown = shown(value);
    let refuse = |why: String, example: String| {
        Box::new(
            ToolError::new(
                Category::InvalidParameters,
                format!("`{field}` is {shown}, not an object of arguments: {why}"),
            )
            .tool(tool_name)
            .suggest(format!(
                "Send the arguments as an object naming each one, e.g. {example}, then call {tool_name} again"
            )),
        )
    };
    let Some(tool) = found else {
        return Err(refuse(
            format!("{tool_name:?} is not in the policy, so which argument it is cannot be told"),
            format!("{{\"argument_name\": {value}}}"),
        ));
    };
    let names: Vec<&String> = tool.args.keys().collect();
    match names.as_slice() {
        [one] => {
            let mut fix = Correction::noted(
                Kind::Envelope,
                format!("read `{field}` {shown} as the value of `{one}`, the tool's one argument"),
            );
            fix.from = value.clone();
            let mut to = Map::new();
            to.insert((*one).clone(), value.clone());
            fix.to = Value::Object(to);
            report.corrections.push(fix);
            Ok((*one).clone())
        }
        [] => Err(refuse(
            format!("{tool_name} declares no arguments"),
            "{}".to_owned(),
        )),
        many => {
            let list: Vec<String> = many.iter().map(|n| format!("`{n}`")).collect();
            Err(refuse(
                format!(
                    "{tool_name} takes {} arguments ({}), so which one it is cannot be told",
                    many.len(),
                    list.join(", ")
                ),
                format!("{{\"{}\": {value}}}", many[0]),
            ))
        }
    }
}

/// The value as a message shows it, cut to a length a message can carry.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…\"", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;
    use serde_json::json;

    fn policy() -> Policy {
        let text = r#"
[tools.final_answer.args.answer]
type = "string"
required = true
[tools.add.args.a]
type = "integer"
[tools.add.args.b]
type = "integer"
[tools.ping]
description = "takes nothing"
"#;
        let source = crate::policy::Source {
            name: "p.toml",
            text,
        };
        Policy::from_source(source, None).expect("the test policy loads")
    }

    #[test]
    fn a_bare_value_is_the_one_argument_or_refused() {
        let policy = policy();
        let mut report = Report::default();
        let got = bare_argument(
            "final_answer",
            policy.tool("final_answer"),
            &json!("image.png"),
            "arguments",
            &mut report,
        );
        assert_eq!(got.unwrap(), "answer");
        assert_eq!(report.corrections.len(), 1);
        assert_eq!(report.corrections[0].to, json!({"answer": "image.png"}));
        for (tool, needle) in [
            ("add", "takes 2 arguments (`a`, `b`)"),
            ("ping", "declares no arguments"),
            ("nope", "not in the policy"),
        ] {
            let mut report = Report::default();
            let e = bare_argument(
                tool,
                policy.tool(tool),
                &json!("x"),
                "arguments",
                &mut report,
            )
            .unwrap_err();
            assert!(e.message.contains(needle), "{tool}: {}", e.message);
            assert!(e.message.contains("`arguments` is \"x\""), "{}", e.message);
            assert!(report.corrections.is_empty());
        }
    }
}
