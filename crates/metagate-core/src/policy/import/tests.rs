use super::*;
use serde_json::{Value, json};

#[test]
fn recognizes_the_three_formats() {
    let openai =
        json!([{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]);
    let responses = json!([{"type":"function","name":"f","parameters":{"type":"object"}}]);
    let mcp = json!({"tools":[{"name":"f","inputSchema":{"type":"object"}}]});
    let rpc = json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"f","inputSchema":{}}]}});
    let anthropic = json!([{"name":"f","input_schema":{"type":"object"}}]);
    for (doc, want) in [
        (openai, ToolsFormat::Openai),
        (responses, ToolsFormat::Openai),
        (mcp, ToolsFormat::Mcp),
        (rpc, ToolsFormat::Mcp),
        (anthropic, ToolsFormat::Anthropic),
    ] {
        assert_eq!(detect(&doc), Some(want), "{doc}");
        let read = parse_tools("t.json", &doc.to_string(), None).unwrap();
        assert_eq!(read.tools[0].name, "f");
        assert!(read.warnings.is_empty());
    }
    assert!(detect(&json!({"x":1})).is_none());
    assert!(detect(&json!([{"x":1}])).is_none());
}

#[test]
fn only_a_file_of_no_tool_definitions_is_an_error() {
    let e = parse_tools("t.json", "{\"x\":1}", None).unwrap_err();
    assert_eq!((e.file.as_str(), e.tool.as_deref()), ("t.json", None));
    let e = parse_tools("t.json", "not json", None).unwrap_err();
    assert!(e.message.starts_with("not JSON"));
    // A broken tool is read around, with a warning naming it.
    let bad = json!([{"name":"broken","input_schema":{"type":"object","properties":{"a":{"type":"strin"}}}}]);
    let read = parse_tools("t.json", &bad.to_string(), None).unwrap();
    assert_eq!(read.tools[0].name, "broken");
    assert_eq!(read.warnings[0].tool.as_deref(), Some("broken"));
    assert!(
        read.warnings[0].message.contains("\"strin\""),
        "{:?}",
        read.warnings
    );
    let read = parse_tools("t.json", "[{\"input_schema\":{}}]", None).unwrap();
    assert!(read.tools.is_empty());
    assert_eq!(read.warnings[0].tool.as_deref(), Some("entry 1"));
}

/// Each contradiction real tool sets hold, read as far as it can be: the schema the gate
/// validates with accepts what the definition meant, and the warning names tool and key.
#[test]
fn sloppy_schemas_are_repaired_with_a_warning_each() {
    let cases: &[(&str, Value, &str)] = &[
        (
            "enum of strings on an integer",
            json!({"type":"object","properties":{"n":{"type":"integer","enum":["1","2","dontcare"]}}}),
            "/properties/n/enum",
        ),
        (
            "enum of strings on a boolean",
            json!({"type":"object","properties":{"b":{"type":"boolean","enum":["True","False"]}}}),
            "/properties/b/enum",
        ),
        (
            "Python type names",
            json!({"type":"dict","properties":{"a":{"type":"float"},"l":{"type":"tuple","items":{"type":"str"}}}}),
            "/type",
        ),
        (
            "required names an undeclared property",
            json!({"type":"object","properties":{"a":{"type":"string"}},"required":["a","ghost"]}),
            "/required",
        ),
        (
            "required: true on a property",
            json!({"type":"object","properties":{"a":{"type":"string","required":true}}}),
            "/properties/a/required",
        ),
        (
            "a default of another type",
            json!({"type":"object","properties":{"a":{"type":"integer","default":"ten"}}}),
            "/properties/a/default",
        ),
        (
            "an unknown type name",
            json!({"type":"object","properties":{"a":{"type":"strin"}}}),
            "/properties/a/type",
        ),
    ];
    for (what, schema, pointer) in cases {
        let doc = json!([{"name":"t","input_schema":schema}]);
        let read = parse_tools("t.json", &doc.to_string(), None).unwrap();
        assert_eq!(read.tools.len(), 1, "{what}");
        assert!(
            read.warnings
                .iter()
                .any(|w| w.message.starts_with(&format!("input_schema{pointer}"))),
            "{what}: {:?}",
            read.warnings
        );
        assert!(
            read.tools[0].validate,
            "{what}: the repaired schema is valid"
        );
        assert!(
            compile(&read.tools[0], "t.json").unwrap().is_some(),
            "{what}"
        );
    }
    // The integer enum: either spelling accepted, the integer goes out; the other value kept.
    let doc = json!([{"name":"t","input_schema":cases[0].1}]);
    let read = parse_tools("t.json", &doc.to_string(), None).unwrap();
    let tool = &read.tools[0];
    assert_eq!(
        tool.schema["properties"]["n"]["enum"],
        json!([1, 2, "dontcare"])
    );
    assert_eq!(
        tool.schema["properties"]["n"]["type"],
        json!(["integer", "string"])
    );
    assert_eq!(tool.spellings["n"]["1"], json!(1));
    let file = tool_file(tool, false);
    assert_eq!(
        file.args["n"].values.as_ref().unwrap()["2"],
        toml::Value::Integer(2)
    );
}

#[test]
fn schemas_that_break_constrained_decoding_are_named() {
    let schema = json!({"type":"object","properties":{
        "a":{"type":"string","pattern":"^(?!admin).*$"},
        "b":{"not":{"type":"null"}},
        "c":{"type":"array","uniqueItems":true,"maxItems":5000},
        "d":{"oneOf":[{"type":"string"},{"type":"integer"}]},
        "e":{"$ref":"#"}
    }});
    let risks = decoding_risks(&schema);
    let constructs: Vec<&str> = risks.iter().map(|r| r.construct.as_str()).collect();
    for want in ["pattern", "not", "uniqueItems", "maxItems", "oneOf", "$ref"] {
        assert!(constructs.contains(&want), "{want}: {risks:?}");
    }
    assert!(
        decoding_risks(&json!({"type":"object","properties":{"q":{"type":"string"}}})).is_empty()
    );
}

/// What only goes unenforced while decoding is a note; what converters refuse or blow up on
/// is a risk. `tools check` fails on risks alone.
#[test]
fn each_construct_is_a_risk_or_a_note() {
    use super::RiskLevel::{Note, Risk};
    let cases = [
        (json!({"type":"string","format":"email"}), "format", Note),
        (json!({"type":"string","format":"date-time"}), "", Note),
        (
            json!({"type":"array","uniqueItems":true}),
            "uniqueItems",
            Note,
        ),
        (
            json!({"oneOf":[{"type":"string"},{"type":"integer"}]}),
            "oneOf",
            Note,
        ),
        (json!({"type":"integer","multipleOf":5}), "multipleOf", Note),
        (
            json!({"type":"array","contains":{"type":"string"}}),
            "contains",
            Note,
        ),
        (
            json!({"type":"object","dependentRequired":{"a":["b"]}}),
            "dependentRequired",
            Note,
        ),
        (
            json!({"type":"object","propertyNames":{"maxLength":3}}),
            "propertyNames",
            Note,
        ),
        (json!({"not":{"type":"null"}}), "not", Risk),
        (
            json!({"if":{"type":"string"},"then":{"minLength":1}}),
            "if",
            Risk,
        ),
        (
            json!({"type":"string","pattern":"^(?!admin).*$"}),
            "pattern",
            Risk,
        ),
        (json!({"type":"string","maxLength":5000}), "maxLength", Risk),
        (
            json!({"type":"object","patternProperties":{"^x":{}}}),
            "patternProperties",
            Risk,
        ),
        (
            json!({"type":"object","unevaluatedProperties":false}),
            "unevaluatedProperties",
            Risk,
        ),
        (json!({"$ref":"https://example.com/s.json"}), "$ref", Risk),
    ];
    for (schema, construct, level) in cases {
        let risks = decoding_risks(&schema);
        if construct.is_empty() {
            assert!(risks.is_empty(), "{schema}: {risks:?}");
            continue;
        }
        assert_eq!(risks.len(), 1, "{schema}: {risks:?}");
        assert_eq!(risks[0].construct, construct, "{schema}");
        assert_eq!(risks[0].level, level, "{schema}");
    }
}

#[test]
fn properties_become_declared_arguments() {
    let imported = Imported {
        name: "t".into(),
        description: None,
        validate: true,
        spellings: Default::default(),
        schema: json!({"type":"object","required":["q"],"properties":{
            "q":{"type":"string"},
            "n":{"type":["integer","null"],"default":5},
            "mode":{"enum":["fast","slow",null]},
            "opts":{"type":"object","properties":{"x":{"type":"boolean"}}}
        }}),
    };
    let file = tool_file(&imported, false);
    assert_eq!(file.args["q"].required, Some(true));
    assert_eq!(
        file.args["n"].ty,
        Some(TypeSpec::Many(vec![ArgType::Integer, ArgType::Null]))
    );
    assert_eq!(file.args["n"].default, None);
    assert_eq!(file.args["mode"].nullable, Some(true));
    assert_eq!(file.args["mode"].one_of.as_ref().unwrap().len(), 2);
    assert_eq!(
        tool_file(&imported, true).args["n"].default,
        Some(toml::Value::Integer(5))
    );
}
