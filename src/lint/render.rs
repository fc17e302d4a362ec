//! One pure renderer per output format. Each writes into a byte buffer the binary flushes;
//! `json` and `sarif` stream their results and close the document in [`Renderer::finish`].

use std::io::Write;

use serde::Serialize;
use serde_json::{Value, json};

use super::codes::{CODES, Severity};
use super::source_root::{SRCROOT, SourceRoot};
use super::{Diagnostic, Event, Failure, Summary};
use metagate_wire::display::{one_line, plural};

/// The output formats of `lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Compiler-style lines and a summary, for people.
    Human,
    /// One JSON document: diagnostics, failures and the summary.
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
    /// GitHub Actions workflow commands, which become annotations on the changed files.
    Github,
}

/// Renders events in one format.
pub struct Renderer {
    format: Format,
    color: bool,
    first: bool,
    /// Failures of the document formats, written at the end.
    failures: Vec<Value>,
    /// The last file's SARIF location: its name, URI and whether that is relative to the root.
    uri: Option<(String, String, bool)>,
    /// Where SARIF and GitHub paths are taken from; none: as lint names the files.
    root: Option<SourceRoot>,
}

impl Renderer {
    /// `color` only matters for `human` (ANSI colours, for a terminal).
    pub fn new(format: Format, color: bool) -> Renderer {
        Renderer {
            format,
            color,
            first: true,
            failures: Vec::new(),
            uri: None,
            root: None,
        }
    }

    /// SARIF URIs and GitHub annotations name files relative to `root` (SARIF through
    /// `originalUriBaseIds`), wherever lint ran and however the files were named.
    pub fn with_root(mut self, root: SourceRoot) -> Renderer {
        self.root = Some(root);
        self
    }

    /// A file's SARIF `artifactLocation`: relative to the root when it is inside it, else an
    /// absolute `file://` URI (or, without a root, the name as given).
    fn location(&self, file: &str) -> (String, bool) {
        let Some(root) = &self.root else {
            return (uri(file), false);
        };
        if let Some(relative) = root.relative(file) {
            return (uri(&relative), true);
        }
        match root.absolute(file) {
            Some(full) => (uri(&full.to_string_lossy()), false),
            None => (uri(file), false),
        }
    }

    /// A file's name for a GitHub annotation: relative to the root when inside it.
    fn github_file(&self, file: &str) -> String {
        self.root
            .as_ref()
            .and_then(|r| r.relative(file))
            .unwrap_or_else(|| file.to_string())
    }

    /// What comes before the first event.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        match self.format {
            Format::Human | Format::Github => {}
            Format::Json => out.extend_from_slice(b"{\"diagnostics\":["),
            Format::Sarif => {
                let head = json!({
                    "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
                    "version": "2.1.0",
                });
                let head = head.to_string();
                out.extend_from_slice(&head.as_bytes()[..head.len() - 1]);
                out.extend_from_slice(b",\"runs\":[{\"tool\":");
                serde_json::to_writer(&mut *out, &sarif_tool()).expect("writing to a Vec");
                if let Some(root) = &self.root {
                    // A directory's URI ends in `/`, or the relative ones would resolve
                    // against its parent.
                    let mut base = uri(&root.root().to_string_lossy());
                    if !base.ends_with('/') {
                        base.push('/');
                    }
                    let ids = json!({ SRCROOT: { "uri": base } });
                    out.extend_from_slice(b",\"originalUriBaseIds\":");
                    serde_json::to_writer(&mut *out, &ids).expect("writing to a Vec");
                }
                out.extend_from_slice(b",\"columnKind\":\"unicodeCodePoints\",\"results\":[");
            }
        }
    }

    /// Writes one event in the renderer's format.
    pub fn event(&mut self, event: &Event<'_>, out: &mut Vec<u8>) {
        match event {
            Event::Call => {}
            Event::Diagnostic(d) => self.diagnostic(d, out),
            Event::Failure(f) => self.failure(f, out),
        }
    }

    fn separator(&mut self, out: &mut Vec<u8>) {
        if !self.first {
            out.push(b',');
        }
        self.first = false;
    }

    fn diagnostic(&mut self, d: &Diagnostic<'_>, out: &mut Vec<u8>) {
        match self.format {
            Format::Human => human(d, self.color, out),
            Format::Github => github(d, &self.github_file(d.file), out),
            Format::Json => {
                self.separator(out);
                serde_json::to_writer(&mut *out, &JsonDiagnostic::of(d)).expect("writing to a Vec");
            }
            Format::Sarif => {
                self.separator(out);
                // Diagnostics come file by file: the file's URI is worked out once.
                if self.uri.as_ref().is_none_or(|(file, _, _)| file != d.file) {
                    let (uri, based) = self.location(d.file);
                    self.uri = Some((d.file.to_string(), uri, based));
                }
                let (uri, based) = self.uri.as_ref().map_or(("", false), |(_, u, b)| (u, *b));
                let artifact = SarifArtifact {
                    uri,
                    uri_base_id: based.then_some(SRCROOT),
                };
                serde_json::to_writer(&mut *out, &sarif_result(d, artifact))
                    .expect("writing to a Vec");
            }
        }
    }

    fn failure(&mut self, f: &Failure<'_>, out: &mut Vec<u8>) {
        match self.format {
            // People read failures on stderr, where the binary writes them.
            Format::Human => {}
            Format::Github => {
                let mut props = format!("file={}", escape_property(&self.github_file(f.file)));
                if f.line > 0 {
                    props.push_str(&format!(",line={},col={}", f.line, f.column));
                }
                let _ = writeln!(
                    out,
                    "::error {props},title={}::{}",
                    escape_property("metagate lint could not read this"),
                    escape_data(&f.message)
                );
            }
            Format::Json => self.failures.push(json!({
                "file": f.file,
                "line": f.line,
                "column": f.column,
                "message": f.message,
            })),
            Format::Sarif => {
                let mut n = json!({
                    "level": "error",
                    "message": { "text": f.message },
                    "descriptor": { "id": "lint-failure" },
                });
                let (uri, based) = self.location(f.file);
                let mut artifact = json!({ "uri": uri });
                if based {
                    artifact["uriBaseId"] = json!(SRCROOT);
                }
                let mut location = json!({ "artifactLocation": artifact });
                if f.line > 0 {
                    location["region"] = json!({ "startLine": f.line, "startColumn": f.column });
                }
                n["locations"] = json!([{ "physicalLocation": location }]);
                self.failures.push(n);
            }
        }
    }

    /// What comes after the last event: the summary, the end of the document.
    pub fn finish(&mut self, summary: &Summary, out: &mut Vec<u8>) {
        match self.format {
            Format::Human => human_summary(summary, self.color, out),
            Format::Github => {}
            Format::Json => {
                out.extend_from_slice(b"],\"failures\":");
                serde_json::to_writer(&mut *out, &self.failures).expect("writing to a Vec");
                out.extend_from_slice(b",\"summary\":");
                serde_json::to_writer(&mut *out, &summary_json(summary)).expect("writing to a Vec");
                out.extend_from_slice(b"}\n");
            }
            Format::Sarif => {
                out.extend_from_slice(b"],\"invocations\":");
                let invocation = json!([{
                    "executionSuccessful": summary.failures == 0,
                    "toolExecutionNotifications": self.failures,
                }]);
                serde_json::to_writer(&mut *out, &invocation).expect("writing to a Vec");
                out.extend_from_slice(b"}]}\n");
            }
        }
    }
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    name: &'static str,
    severity: &'static str,
    message: &'a str,
    file: &'a str,
    line: usize,
    column: usize,
    tool: Option<&'a str>,
    category: Option<&'static str>,
    suggestion: Option<&'a str>,
    fix: Option<Value>,
}

impl<'a> JsonDiagnostic<'a> {
    fn of(d: &'a Diagnostic<'_>) -> JsonDiagnostic<'a> {
        JsonDiagnostic {
            code: d.code.code,
            name: d.code.name,
            severity: d.severity().as_str(),
            message: &d.message,
            file: d.file,
            line: d.line,
            column: d.column,
            tool: d.tool.as_deref(),
            category: d.category.map(|c| c.as_str()),
            suggestion: d.suggestion.as_deref(),
            fix: d.fix.as_ref().map(|c| {
                let mut v = c.to_json();
                v["text"] = Value::String(c.to_string());
                v
            }),
        }
    }
}

fn summary_json(s: &Summary) -> Value {
    json!({
        "files": s.files,
        "calls": s.calls,
        "errors": s.errors,
        "warnings": s.warnings,
        "failures": s.failures,
    })
}

fn paint(out: &mut Vec<u8>, color: bool, style: &str, text: &str) {
    if color {
        let _ = write!(out, "\x1b[{style}m{text}\x1b[0m");
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

/// `path:line:col: error[MG003]: tool: message`, then `  help: …` or `  fix: …`.
fn human(d: &Diagnostic<'_>, color: bool, out: &mut Vec<u8>) {
    paint(
        out,
        color,
        "1",
        &format!("{}:{}:{}:", one_line(d.file), d.line, d.column),
    );
    out.push(b' ');
    let (label, style) = match d.severity() {
        Severity::Error => ("error", "1;31"),
        Severity::Warning => ("warning", "1;33"),
    };
    paint(out, color, style, &format!("{label}[{}]", d.code.code));
    out.extend_from_slice(b": ");
    if let Some(tool) = &d.tool {
        let _ = write!(out, "{}: ", one_line(tool));
    }
    out.extend_from_slice(one_line(&d.message).as_bytes());
    out.push(b'\n');
    if let Some(suggestion) = &d.suggestion {
        out.extend_from_slice(b"  ");
        paint(out, color, "1;36", "help:");
        let _ = writeln!(out, " {}", one_line(suggestion));
    }
}

fn human_summary(s: &Summary, color: bool, out: &mut Vec<u8>) {
    let scope = format!(
        "{} in {}",
        plural(s.calls, "call", "calls"),
        plural(s.files, "file", "files")
    );
    let mut line = if s.errors + s.warnings == 0 {
        format!("No findings: {scope}")
    } else {
        format!(
            "Found {} and {}: {scope}",
            plural(s.errors, "error", "errors"),
            plural(s.warnings, "warning", "warnings")
        )
    };
    if s.failures > 0 {
        line.push_str(&format!(
            "; {} could not be read",
            plural(s.failures, "part", "parts")
        ));
    }
    let style = if s.errors > 0 || s.failures > 0 {
        "1;31"
    } else if s.warnings > 0 {
        "1;33"
    } else {
        "1;32"
    };
    paint(out, color, style, &line);
    out.push(b'\n');
}

/// `::error file=…,line=…,col=…,title=…::message`
fn github(d: &Diagnostic<'_>, file: &str, out: &mut Vec<u8>) {
    let title = format!("{} {}", d.code.code, d.code.name);
    let _ = writeln!(
        out,
        "::{} file={},line={},col={},title={}::{}",
        level(d.severity()),
        escape_property(file),
        d.line,
        d.column,
        escape_property(&title),
        escape_data(&full_message(d))
    );
}

/// The message with the tool before it and the suggestion on a line of its own.
fn full_message(d: &Diagnostic<'_>) -> String {
    let mut text = match &d.tool {
        Some(tool) => format!("{tool}: {}", d.message),
        None => d.message.clone(),
    };
    if let Some(suggestion) = &d.suggestion {
        text.push_str("\nhelp: ");
        text.push_str(suggestion);
    }
    text
}

/// Escapes a workflow command's message: `%`, `\r` and `\n`.
fn escape_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            // Other control characters would reach the CI log as they are (colours, cursor
            // moves): shown as text instead, as the human format shows them.
            c if metagate_wire::display::unsafe_on_screen(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a workflow command's property value: as [`escape_data`], and `:` and `,`.
fn escape_property(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            c => out.push_str(&escape_data(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// A file name as a SARIF `artifactLocation.uri`: a relative URI reference with `/`
/// separators, everything outside the unreserved set percent-encoded.
fn uri(file: &str) -> String {
    let file = file.replace('\\', "/");
    let mut out = String::with_capacity(file.len());
    if file.starts_with('/') {
        out.push_str("file://");
    }
    for b in file.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn sarif_tool() -> Value {
    let rules: Vec<Value> = CODES
        .iter()
        .map(|c| {
            json!({
                "id": c.code,
                "name": c.name,
                "shortDescription": { "text": c.summary },
                "fullDescription": { "text": c.explanation },
                "defaultConfiguration": { "level": level(c.severity) },
            })
        })
        .collect();
    json!({
        "driver": {
            "name": "metagate",
            // Code scanning shows `version`; `semanticVersion` is for tools that compare them.
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: SarifText,
    locations: [SarifLocation<'a>; 1],
    properties: SarifProperties<'a>,
}

#[derive(Serialize)]
struct SarifText {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifLocation<'a> {
    physical_location: SarifPhysical<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifPhysical<'a> {
    artifact_location: SarifArtifact<'a>,
    region: SarifRegion,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifArtifact<'a> {
    uri: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifRegion {
    start_line: usize,
    start_column: usize,
}

#[derive(Serialize)]
struct SarifProperties<'a> {
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    correction: Option<Value>,
}

fn sarif_result<'a>(d: &'a Diagnostic<'_>, artifact: SarifArtifact<'a>) -> SarifResult<'a> {
    SarifResult {
        rule_id: d.code.code,
        rule_index: CODES
            .iter()
            .position(|c| c.code == d.code.code)
            .unwrap_or_default(),
        level: level(d.severity()),
        message: SarifText {
            text: full_message(d),
        },
        locations: [SarifLocation {
            physical_location: SarifPhysical {
                artifact_location: artifact,
                region: SarifRegion {
                    start_line: d.line,
                    start_column: d.column,
                },
            },
        }],
        properties: SarifProperties {
            tool: d.tool.as_deref(),
            category: d.category.map(|c| c.as_str()),
            correction: d.fix.as_ref().map(|c| c.to_json()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escaping() {
        let cases = [
            ("plain text", "plain text", "plain text"),
            ("100%", "100%25", "100%25"),
            ("a\nb", "a%0Ab", "a%0Ab"),
            ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
            ("k: v, w", "k: v, w", "k%3A v%2C w"),
            ("%0A", "%250A", "%250A"),
            ("C:\\dir,x", "C:\\dir,x", "C%3A\\dir%2Cx"),
            ("::error::", "::error::", "%3A%3Aerror%3A%3A"),
            ("é: ü", "é: ü", "é%3A ü"),
            ("\u{1b}[2J\u{7}", "\\u{1b}[2J\\u{7}", "\\u{1b}[2J\\u{7}"),
        ];
        for (input, data, property) in cases {
            assert_eq!(escape_data(input), data, "data {input:?}");
            assert_eq!(escape_property(input), property, "property {input:?}");
        }
    }

    fn unescape(s: &str) -> String {
        s.replace("%0A", "\n")
            .replace("%0D", "\r")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    }

    proptest::proptest! {
        #[test]
        fn escaping_round_trips_and_leaves_no_separator(s in "[a-z%:,\r\n0-9ACD é]{0,40}") {
            let property = escape_property(&s);
            proptest::prop_assert!(!property.contains([':', ',', '\r', '\n']));
            proptest::prop_assert_eq!(unescape(&property), s.clone());
            let data = escape_data(&s);
            proptest::prop_assert!(!data.contains(['\r', '\n']));
            proptest::prop_assert_eq!(unescape(&data), s);
        }
    }

    #[test]
    fn uris() {
        let cases = [
            ("traces/a.jsonl", "traces/a.jsonl"),
            ("dir with space/b.json", "dir%20with%20space/b.json"),
            ("/abs/c.json", "file:///abs/c.json"),
            ("win\\d.json", "win/d.json"),
            ("<stdin>", "%3Cstdin%3E"),
            ("é.json", "%C3%A9.json"),
        ];
        for (file, want) in cases {
            assert_eq!(uri(file), want, "{file}");
        }
    }
}
