//! What the gate changed in a call, as data: a correction is `{"kind","path","from","to"}` and
//! an optional `note` (docs/gate.md, "Output").

use std::fmt;

use serde::Serialize;
use serde_json::{Value, json};

/// The kind of a correction. New kinds may be added; existing names never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The text was not strict JSON and was read leniently.
    Repair,
    /// The envelope itself was normalized (Agent Zero `args` → `tool_args`, a text dialect…).
    Envelope,
    /// A reasoning-only field was removed.
    Strip,
    /// An argument renamed to its alias.
    ArgAlias,
    /// An argument renamed by its case.
    ArgCase,
    /// An argument renamed to the nearest known name.
    ArgFuzzy,
    /// A value replaced by its alias.
    ValueAlias,
    /// An enum value matched by its case.
    EnumCase,
    /// A value converted to the argument's type.
    Coerce,
    /// A missing argument given its default.
    Default,
}

impl Kind {
    /// Every kind, in the order docs/corrections.md ("Kinds") lists them.
    pub const ALL: [Kind; 10] = [
        Kind::Repair,
        Kind::Envelope,
        Kind::Strip,
        Kind::ArgAlias,
        Kind::ArgCase,
        Kind::ArgFuzzy,
        Kind::ValueAlias,
        Kind::EnumCase,
        Kind::Coerce,
        Kind::Default,
    ];

    /// The name reports write.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Repair => "repair",
            Kind::Envelope => "envelope",
            Kind::Strip => "strip",
            Kind::ArgAlias => "arg_alias",
            Kind::ArgCase => "arg_case",
            Kind::ArgFuzzy => "arg_fuzzy",
            Kind::ValueAlias => "value_alias",
            Kind::EnumCase => "enum_case",
            Kind::Coerce => "coerce",
            Kind::Default => "default",
        }
    }

    /// Kinds whose `from`/`to` are argument names rather than values.
    pub fn renames(self) -> bool {
        matches!(
            self,
            Kind::ArgAlias | Kind::ArgCase | Kind::ArgFuzzy | Kind::Strip
        )
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change the gate made. `path` is a JSON pointer into the arguments ("" for the document).
/// For renaming kinds `from`/`to` are the argument names; otherwise they are the values.
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    /// What kind of change it is.
    pub kind: Kind,
    /// Where, as a JSON pointer into the arguments.
    pub path: String,
    /// The value before.
    pub from: Value,
    /// The value after.
    pub to: Value,
    /// A sentence saying what was done, for kinds that are not a plain from → to.
    pub note: Option<String>,
}

impl Correction {
    /// A change of one value, from `from` to `to`.
    pub fn new(kind: Kind, path: String, from: Value, to: Value) -> Self {
        Correction {
            kind,
            path,
            from,
            to,
            note: None,
        }
    }

    /// A change described in words rather than as two values.
    pub fn noted(kind: Kind, note: impl Into<String>) -> Self {
        Correction {
            kind,
            path: String::new(),
            from: Value::Null,
            to: Value::Null,
            note: Some(note.into()),
        }
    }

    /// The correction as reports write it.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "kind": self.kind.as_str(),
            "path": self.path,
            "from": self.from,
            "to": self.to,
        });
        if let Some(note) = &self.note {
            v["note"] = Value::String(note.clone());
        }
        v
    }
}

/// The human line written on stderr: `runtime "bash" → "terminal" (value_alias)`.
impl fmt::Display for Correction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(note) = &self.note {
            return write!(f, "{note} ({})", self.kind);
        }
        if self.kind.renames() {
            let from = self.from.as_str().unwrap_or_default();
            match &self.to {
                Value::String(to) => write!(f, "argument {from:?} → {to:?} ({})", self.kind),
                _ => write!(f, "removed {from:?} ({})", self.kind),
            }
        } else {
            let name = pointer_display(&self.path);
            let from = match &self.from {
                Value::Null if self.kind == Kind::Default => "(missing)".to_string(),
                v => v.to_string(),
            };
            write!(f, "{name} {from} → {} ({})", self.to, self.kind)
        }
    }
}

/// `/a/b~1c` → `a.b/c`: how a person reads an argument path.
fn pointer_display(pointer: &str) -> String {
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|seg| seg.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn push_segment(p: &mut String, key: &str) {
    if key.bytes().any(|b| b == b'~' || b == b'/') {
        p.push_str(&key.replace('~', "~0").replace('/', "~1"));
    } else {
        p.push_str(key);
    }
}

/// The pointer of a top-level argument.
pub fn arg_pointer(key: &str) -> String {
    let mut p = String::with_capacity(key.len() + 1);
    p.push('/');
    push_segment(&mut p, key);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_lines() {
        let c = Correction::new(
            Kind::ValueAlias,
            "/runtime".into(),
            json!("bash"),
            json!("terminal"),
        );
        assert_eq!(
            c.to_string(),
            r#"runtime "bash" → "terminal" (value_alias)"#
        );
        let c = Correction::new(
            Kind::ArgAlias,
            "/command".into(),
            json!("command"),
            json!("code"),
        );
        assert_eq!(c.to_string(), r#"argument "command" → "code" (arg_alias)"#);
        let c = Correction::new(Kind::Default, "/session".into(), Value::Null, json!(0));
        assert_eq!(c.to_string(), "session (missing) → 0 (default)");
        let c = Correction::new(
            Kind::Strip,
            "/_tafc_think".into(),
            json!("_tafc_think"),
            Value::Null,
        );
        assert_eq!(c.to_string(), r#"removed "_tafc_think" (strip)"#);
    }

    #[test]
    fn pointers_escape() {
        assert_eq!(arg_pointer("a/b~c"), "/a~1b~0c");
        assert_eq!(pointer_display("/a~1b~0c"), "a/b~c");
    }
}
