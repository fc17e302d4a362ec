//! The stable diagnostic codes of `lint`: one per rejection category the gate can reach
//! without runtime state (`MG0xx`, errors) and one per correction kind (`MG1xx`, warnings).
//! Codes are never renumbered or reused; new ones are appended.

use metagate_core::error::Category;
use metagate_wire::correction::Kind;

/// How bad a finding is: an error is a call the gate would reject, a warning one it would
/// correct (or pass with a warning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth a look; does not fail the run.
    Warning,
    /// Fails the run.
    Error,
}

impl Severity {
    /// The word the reports write.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One diagnostic code and its documentation.
#[derive(Debug, PartialEq, Eq)]
pub struct Code {
    /// `MG003`.
    pub code: &'static str,
    /// A short kebab-case name (`invalid-parameters`), the SARIF rule name.
    pub name: &'static str,
    /// How serious a finding of this code is.
    pub severity: Severity,
    /// One line: what the finding means.
    pub summary: &'static str,
    /// A paragraph for `--explain`: why it matters and what to change.
    pub explanation: &'static str,
}

/// Every code, in order.
pub static CODES: &[Code] = &[
    Code {
        code: "MG001",
        name: "malformed-call",
        severity: Severity::Error,
        summary: "the output cannot be read as a tool call",
        explanation: "The gate would reject this with malformed_call: the text holds no JSON object \
            it can recover without guessing (cut inside a string or number, several readings), or \
            the object names no tool. The model must reformat its output as one tool call.",
    },
    Code {
        code: "MG002",
        name: "tool-not-found",
        severity: Severity::Error,
        summary: "the call names a tool the policy does not know",
        explanation: "The gate would reject this with tool_not_found: the policy rejects unknown \
            tools ([gate] unknown_tools = \"reject\"). Either the model invented a tool, or a tool \
            it uses is missing from the policy or from the --tools imports.",
    },
    Code {
        code: "MG003",
        name: "invalid-parameters",
        severity: Severity::Error,
        summary: "a required argument is missing or empty, or a value is not allowed",
        explanation: "The gate would reject this with invalid_parameters: a required argument is \
            missing or empty (and no default or condition excuses it), a value is not one of the \
            allowed values and no alias or case fix maps it, an argument name is ambiguous, or \
            the arguments do not satisfy the imported JSON Schema.",
    },
    Code {
        code: "MG004",
        name: "type-mismatch",
        severity: Severity::Error,
        summary: "an argument has a type the schema refuses and cannot be read exactly",
        explanation: "The gate would reject this with type_mismatch: the value has the wrong JSON \
            type and no exact coercion exists (\"5.5\" is not an integer, \"yes please\" is not \
            a boolean).",
    },
    Code {
        code: "MG005",
        name: "policy-blocked",
        severity: Severity::Error,
        summary: "the operator's policy forbids this call",
        explanation: "The gate would reject this with policy_blocked: a path outside the root or \
            on the deny list, a denied shell construct or command, a URL to a host that is not \
            allowed, or a tool the caller or intent may not use. Change the prompt or the tool \
            so the model stops asking for it, or change the policy if it is too strict.",
    },
    Code {
        code: "MG006",
        name: "confirmation-required",
        severity: Severity::Error,
        summary: "the call needs a capability that only a grant can allow",
        explanation: "The gate would reject this with confirmation_required. Grants are a runtime \
            matter that lint does not consult; a finding here means the policy itself requires \
            confirmation for this call.",
    },
    Code {
        code: "MG007",
        name: "check-failed",
        severity: Severity::Error,
        summary: "a policy check could not run and the policy fails closed",
        explanation: "The gate would reject this because one of its checks could not run (for \
            example an invalid [paths] glob) and [gate] on_internal_error = \"reject\". Fix the \
            policy; the call itself may be fine.",
    },
    Code {
        code: "MG101",
        name: "repair",
        severity: Severity::Warning,
        summary: "the output was not strict JSON and had to be repaired",
        explanation: "The gate would read this leniently (code fences, prose around the JSON, \
            single quotes, trailing commas, Python literals, a second object after the first) \
            and correct it. Models that need repairs often degrade further: tighten the prompt's \
            output format.",
    },
    Code {
        code: "MG102",
        name: "envelope",
        severity: Severity::Warning,
        summary: "the envelope had to be normalized",
        explanation: "The gate would normalize the envelope: Agent Zero `tool`/`args` spellings, \
            `tool_args` sent as a JSON string, a text dialect (<function_calls>, <invoke>, \
            <tool_call>) read and rewritten as an Agent Zero call, or a tool name in another \
            spelling (case, spaces, separators) read as the one tool it means.",
    },
    Code {
        code: "MG103",
        name: "strip",
        severity: Severity::Warning,
        summary: "a reasoning-only field was sent as an argument",
        explanation: "The gate would remove an argument that only carries the model's reasoning \
            (`_tafc_think*`, or a name the policy lists) before the tool sees it.",
    },
    Code {
        code: "MG104",
        name: "arg-alias",
        severity: Severity::Warning,
        summary: "an argument was sent under an alias of its name",
        explanation: "The gate would rename an argument the policy lists as an alias (`command` → \
            `code`). The tool description may be steering the model to the wrong word.",
    },
    Code {
        code: "MG105",
        name: "arg-case",
        severity: Severity::Warning,
        summary: "an argument name was sent in another case style",
        explanation: "The gate would rename an argument sent in another case style (`userId` → \
            `user_id`).",
    },
    Code {
        code: "MG106",
        name: "arg-fuzzy",
        severity: Severity::Warning,
        summary: "an argument name was misspelt",
        explanation: "The gate would rename an argument whose name is within a small edit \
            distance of exactly one known argument.",
    },
    Code {
        code: "MG107",
        name: "value-alias",
        severity: Severity::Warning,
        summary: "a value was sent under an alias",
        explanation: "The gate would replace a value the policy lists as an alias (`runtime: \
            \"bash\"` → `\"terminal\"`).",
    },
    Code {
        code: "MG108",
        name: "enum-case",
        severity: Severity::Warning,
        summary: "an allowed value was sent in the wrong case",
        explanation: "The gate would replace a value that matches an allowed value except for its \
            case.",
    },
    Code {
        code: "MG109",
        name: "coerce",
        severity: Severity::Warning,
        summary: "a value was sent as a string of the right type",
        explanation: "The gate would read a string as the type the schema wants, exactly (`\"5\"` \
            → 5, `\"false\"` → false). A tool without the gate may read `\"false\"` as true.",
    },
    Code {
        code: "MG110",
        name: "default",
        severity: Severity::Warning,
        summary: "an argument was left out and the policy's default fills it",
        explanation: "The gate would add the default the policy declares for an argument the \
            call left out. Often harmless; `--ignore MG110` drops these findings.",
    },
    Code {
        code: "MG111",
        name: "gate-warning",
        severity: Severity::Warning,
        summary: "the gate would pass the call with a warning",
        explanation: "The gate would pass the call but warn: an unknown tool passed through \
            unchanged, an argument the tool does not declare kept, an alias ignored because the \
            canonical name was also there, or text after the call ignored.",
    },
    Code {
        code: "MG112",
        name: "not-json",
        severity: Severity::Warning,
        summary: "a line of the trace is not JSON and holds no tool call",
        explanation: "A line of a JSON Lines trace is not JSON, and the gate reads no tool call in \
            it: a note, a log line, a heading. Traces often carry such lines, so this is a warning \
            (`--ignore MG112` drops them). Were it a model's output, the gate would reject it as \
            malformed_call. A file with more than 20 such lines is taken for no trace at all: the \
            rest of it is skipped, and lint fails.",
    },
];

/// The code for a rejection category.
pub(crate) fn for_category(category: Category) -> &'static Code {
    let at = match category {
        Category::MalformedCall => 0,
        Category::ToolNotFound => 1,
        Category::InvalidParameters => 2,
        Category::TypeMismatch => 3,
        Category::PolicyBlocked => 4,
        Category::ConfirmationRequired => 5,
        // The rest are runtime outcomes; the gate only reaches them when a check cannot run.
        Category::RateLimited
        | Category::PermanentFailure
        | Category::Cancelled
        | Category::ServerError
        | Category::NetworkError
        | Category::Timeout => 6,
    };
    &CODES[at]
}

/// The code for a correction kind: MG101 onwards, in the order of [`Kind::ALL`].
pub(crate) fn for_kind(kind: Kind) -> &'static Code {
    let at = match kind {
        Kind::Repair => 0,
        Kind::Envelope => 1,
        Kind::Strip => 2,
        Kind::ArgAlias => 3,
        Kind::ArgCase => 4,
        Kind::ArgFuzzy => 5,
        Kind::ValueAlias => 6,
        Kind::EnumCase => 7,
        Kind::Coerce => 8,
        Kind::Default => 9,
    };
    &CODES[FIRST_WARNING + at]
}

/// The code for a warning the gate passes a call with.
pub(crate) fn gate_warning() -> &'static Code {
    &CODES[FIRST_WARNING + Kind::ALL.len()]
}

/// The code for a line of a trace that is not JSON.
pub(crate) fn not_json() -> &'static Code {
    &CODES[FIRST_WARNING + Kind::ALL.len() + 1]
}

/// Where the warnings start in [`CODES`].
const FIRST_WARNING: usize = 7;

/// Looks a code up by its code (`mg003` too) or its name (`invalid-parameters`).
pub fn find(wanted: &str) -> Option<&'static Code> {
    CODES
        .iter()
        .find(|c| c.code.eq_ignore_ascii_case(wanted) || c.name == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_ordered_and_well_formed() {
        let mut seen = HashSet::new();
        for pair in CODES.windows(2) {
            assert!(
                pair[0].code < pair[1].code,
                "{} before {}",
                pair[0].code,
                pair[1].code
            );
        }
        for c in CODES {
            assert!(seen.insert(c.code), "{} twice", c.code);
            assert!(seen.insert(c.name), "{} twice", c.name);
            assert!(c.code.starts_with("MG") && c.code.len() == 5, "{}", c.code);
            let errors = c.code.starts_with("MG0");
            assert_eq!(c.severity == Severity::Error, errors, "{}", c.code);
            assert!(!c.summary.is_empty() && !c.explanation.is_empty());
        }
    }

    #[test]
    fn every_category_and_kind_maps_to_a_code_of_its_severity() {
        for category in Category::ALL {
            assert_eq!(for_category(category).severity, Severity::Error);
        }
        let kinds: HashSet<_> = Kind::ALL.into_iter().map(|k| for_kind(k).code).collect();
        assert_eq!(kinds.len(), Kind::ALL.len(), "one code per correction kind");
        for kind in Kind::ALL {
            assert_eq!(for_kind(kind).severity, Severity::Warning);
            assert_eq!(for_kind(kind).name, kind.as_str().replace('_', "-"));
        }
    }

    #[test]
    fn the_mappings_land_on_the_documented_codes() {
        let categories = [
            (Category::MalformedCall, "MG001"),
            (Category::ToolNotFound, "MG002"),
            (Category::InvalidParameters, "MG003"),
            (Category::TypeMismatch, "MG004"),
            (Category::PolicyBlocked, "MG005"),
            (Category::ConfirmationRequired, "MG006"),
            (Category::ServerError, "MG007"),
            (Category::Timeout, "MG007"),
        ];
        for (category, code) in categories {
            assert_eq!(for_category(category).code, code, "{category}");
        }
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            assert_eq!(for_kind(kind).code, format!("MG{}", 101 + i), "{kind}");
        }
        assert_eq!(gate_warning().code, "MG111");
        assert_eq!(not_json().code, "MG112");
        assert_eq!(CODES[FIRST_WARNING].code, "MG101");
    }

    #[test]
    fn find_by_code_or_name() {
        assert_eq!(find("mg003").unwrap().name, "invalid-parameters");
        assert_eq!(find("value-alias").unwrap().code, "MG107");
        assert!(find("MG999").is_none());
    }
}
