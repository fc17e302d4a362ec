//! Every sentence the lenient reader can produce: the failures it reports, the repairs it
//! counts while reading, and the warnings about what it ignored.

use std::borrow::Cow;

/// The gate refuses text nested deeper than this whatever it holds (lint reports it as the gate does).
pub(crate) const MSG_DEPTH: &str = "nesting deeper than 128 levels";
pub(super) const MSG_CUT_STRING: &str = "output was cut off inside a string; not completed";
pub(super) const MSG_CUT_KEY: &str = "output was cut off inside a key; not completed";
pub(super) const MSG_CUT_AFTER_KEY: &str =
    "output was cut off after a key, before its value; not completed";
pub(super) const MSG_CUT_NUMBER: &str =
    "output was cut off inside a number (more digits may have followed); not completed";
pub(super) const MSG_CUT_LITERAL: &str = "output was cut off inside a literal; not completed";
pub(super) const MSG_EXPECTED_VALUE: &str = "expected a value";
pub(super) const MSG_EXPECTED_KEY: &str = "expected a key";
pub(super) const MSG_NO_OBJECT: &str = "no JSON object found";
pub(super) const MSG_EMPTY: &str = "input is empty";
pub(super) const MSG_TOP_ARRAY: &str = "top-level JSON value is an array, not an object";
pub(super) const MSG_CUT_VALUE: &str =
    "output was cut off inside an unquoted value (more may have followed); not completed";
pub(super) const MSG_WORDS: &str =
    "expected a value: unquoted text of more than one word is not read (quote it)";
pub(super) const MSG_VALUE_AFTER: &str = "another value follows the object: one call is one object";
pub(super) const MSG_BRACE_BEFORE: &str = "a `{` in the text before the call opens another \
     reading of it (a reader taking the first `{` would run something else); send the call alone";
pub(super) const MSG_OBJECT_AFTER: &str =
    "another object beside the call cannot be read: it may be a second call";

/// `n` and the noun in the number it needs: "1 comment", "2 comments".
fn plural(n: u32, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// " (N times)" for a repair made more than once; nothing for once.
fn times_suffix(n: u32) -> String {
    if n == 1 {
        String::new()
    } else {
        format!(" ({n} times)")
    }
}

/// The warning that `n` more blocks followed the one read and were ignored.
pub(super) fn more_followed_warning(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 more {one} followed the first one and was ignored")
    } else {
        format!("{n} more {many} followed the first one and were ignored")
    }
}

/// Repairs the reader counts while it reads one candidate object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RepairKind {
    Comment,
    SingleQuoted,
    Backtick,
    UnquotedKey,
    TrailingComma,
    PythonTrue,
    PythonFalse,
    PythonNone,
    JavaScriptUndefined,
    ControlChar,
    InvalidEscape,
    LoneSurrogate,
    UnicodeSpace,
    TypographicQuotes,
    UnquotedValue,
    NumberDigit,
    LeadingComma,
    MissingComma,
    MissingColon,
    WrongCloser,
    MissingCloser,
    EarlyCloser,
}

pub(super) const REPAIR_KIND_COUNT: usize = 22;

impl RepairKind {
    /// The repair sentence for `n` repairs of this kind.
    pub(super) fn message(self, n: u32) -> String {
        match self {
            RepairKind::Comment => format!("removed {}", plural(n, "comment", "comments")),
            RepairKind::SingleQuoted => format!(
                "converted {} to double quotes",
                plural(n, "single-quoted string", "single-quoted strings")
            ),
            RepairKind::Backtick => format!(
                "converted {} to double quotes",
                plural(n, "backtick string", "backtick strings")
            ),
            RepairKind::UnquotedKey => {
                format!("quoted {}", plural(n, "unquoted key", "unquoted keys"))
            }
            RepairKind::TrailingComma => {
                format!("removed {}", plural(n, "trailing comma", "trailing commas"))
            }
            RepairKind::PythonTrue => {
                format!("replaced Python literal True with true{}", times_suffix(n))
            }
            RepairKind::PythonFalse => format!(
                "replaced Python literal False with false{}",
                times_suffix(n)
            ),
            RepairKind::PythonNone => {
                format!("replaced Python literal None with null{}", times_suffix(n))
            }
            RepairKind::JavaScriptUndefined => {
                format!(
                    "replaced JavaScript literal undefined with null{}",
                    times_suffix(n)
                )
            }
            RepairKind::ControlChar => format!(
                "escaped {} inside strings",
                plural(n, "raw control character", "raw control characters")
            ),
            RepairKind::InvalidEscape => format!(
                "dropped the backslash of {}",
                plural(n, "invalid escape sequence", "invalid escape sequences")
            ),
            RepairKind::LoneSurrogate => format!(
                "replaced {} with U+FFFD",
                plural(n, "lone surrogate escape", "lone surrogate escapes")
            ),
            RepairKind::UnicodeSpace => format!(
                "read {} between tokens as whitespace",
                plural(n, "non-ASCII space", "non-ASCII spaces")
            ),
            RepairKind::TypographicQuotes => format!(
                "converted {} to double quotes",
                plural(n, "typographic-quoted string", "typographic-quoted strings")
            ),
            RepairKind::UnquotedValue => format!(
                "quoted {}",
                plural(n, "unquoted one-word value", "unquoted one-word values")
            ),
            RepairKind::NumberDigit => format!(
                "read {} with the 0 it lacked (`.5`, `1.`)",
                plural(n, "number", "numbers")
            ),
            RepairKind::LeadingComma => {
                format!("removed {}", plural(n, "leading comma", "leading commas"))
            }
            RepairKind::MissingComma => format!(
                "inserted {} between lines",
                plural(n, "missing comma", "missing commas")
            ),
            RepairKind::MissingColon => format!(
                "inserted {} between a key and its string value",
                plural(n, "missing colon", "missing colons")
            ),
            RepairKind::WrongCloser => format!(
                "read {} as the `}}` or `]` it closes",
                plural(n, "wrong closer", "wrong closers")
            ),
            RepairKind::MissingCloser => format!(
                "inserted {} before an outer one",
                plural(n, "missing closer", "missing closers")
            ),
            RepairKind::EarlyCloser => format!(
                "read the members after {} into the object",
                plural(n, "an early `}`", "early `}`s").replacen("1 an", "an", 1)
            ),
        }
    }
}

/// A failure at a byte offset of the (decoded) input.
#[derive(Debug)]
pub(super) struct ReadFailure {
    pub(super) message: Cow<'static, str>,
    pub(super) offset: usize,
    /// Nested deeper than the reader goes: nothing can be said of what the text holds.
    pub(super) too_deep: bool,
}

impl ReadFailure {
    pub(super) fn new(message: impl Into<Cow<'static, str>>, offset: usize) -> Self {
        ReadFailure {
            message: message.into(),
            offset,
            too_deep: false,
        }
    }

    /// Nesting deeper than the reader goes, at `offset`.
    pub(super) fn too_deep(offset: usize) -> Self {
        ReadFailure {
            message: Cow::Borrowed(MSG_DEPTH),
            offset,
            too_deep: true,
        }
    }
}

/// At most 24 characters of `s`, for messages.
pub(super) fn preview(s: &str) -> String {
    let mut out: String = s.chars().take(24).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}
