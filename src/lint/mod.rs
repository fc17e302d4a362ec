//! The `lint` job (docs/lint.md): the gate's own decision on every call of a recorded
//! trace, as diagnostics with stable codes.
//!
//! Each call goes through [`Gate::decide_call`] with the gate the caller built (the same
//! policy, tool imports and correction rules as `gate`); lint only reads traces and turns
//! decisions into [`Diagnostic`]s. It never writes telemetry, and the gate it is given should
//! have `Scope { runtime: false }`: limits, prerequisites and grants depend on what happened
//! at run time, which a trace does not hold.

pub mod codes;
mod input;
pub mod render;
pub mod source_root;

use crate::gate::{Decision, Gate};
use metagate_core::enforce::NoFacts;
use metagate_core::error::Category;
use metagate_wire::call;
use metagate_wire::correction::Correction;

pub use codes::{CODES, Code, Severity};
pub use input::{Item, Origin, Site};
pub use render::{Format, Renderer};
pub use source_root::SourceRoot;

/// One finding: what the gate would do to one call, and where the call is.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic<'f> {
    code: &'static Code,
    file: &'f str,
    /// 1-based line and column (in characters) where the call starts.
    line: usize,
    column: usize,
    message: String,
    /// The tool the call names, when it could be read.
    tool: Option<String>,
    /// Errors: the rejection's category and the suggestion the gate gives the model.
    category: Option<Category>,
    suggestion: Option<String>,
    /// Warnings from corrections: the correction the gate would apply.
    fix: Option<Correction>,
}

impl Diagnostic<'_> {
    fn severity(&self) -> Severity {
        self.code.severity
    }
}

/// Something lint itself could not do: a file it could not read, a part of a trace it could
/// not make sense of. `line` 0 means the file as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure<'f> {
    /// The file that could not be read.
    pub file: &'f str,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
    /// What went wrong.
    pub message: String,
}

/// What lint reports, in file order.
#[derive(Debug)]
pub enum Event<'f> {
    /// A finding about a call.
    Diagnostic(Box<Diagnostic<'f>>),
    /// A part of the input that could not be read.
    Failure(Failure<'f>),
    /// One call was checked (whether or not it had findings).
    Call,
}

/// After this many failures in one file, the rest of the file is skipped.
const MAX_FAILURES: usize = 20;

/// How to lint.
pub struct Linter<'r> {
    gate: Gate<'r>,
    now_ms: i64,
    ignore: Vec<&'static Code>,
}

impl<'r> Linter<'r> {
    /// `gate` decides the calls; `now_ms` is the time the checks see; `ignore` lists codes whose
    /// findings are dropped.
    pub fn new(gate: Gate<'r>, now_ms: i64, ignore: Vec<&'static Code>) -> Linter<'r> {
        Linter {
            gate,
            now_ms,
            ignore,
        }
    }

    /// Lints one file's text. `emit` receives every event in order (an error it returns stops
    /// the file and is returned); `progress` receives how many bytes of `text` are done, now
    /// and then and once at the end.
    pub fn lint_text<'f, E>(
        &self,
        file: &'f str,
        text: &str,
        emit: &mut dyn FnMut(Event<'f>) -> Result<(), E>,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(), E> {
        const STEP: usize = 1 << 20;
        let mut locator = input::Locator::new(text);
        let mut reported = 0;
        let mut result = Ok(());
        // A file that is not a trace at all must not bury the report under one failure (or
        // one line that is not JSON) per line.
        let failures = std::cell::Cell::new(0);
        let not_json = std::cell::Cell::new(0);
        let mut emit = |event: Event<'f>| -> Result<(), E> {
            if let Event::Failure(f) = &event {
                failures.set(failures.get() + 1);
                if failures.get() > MAX_FAILURES {
                    return emit(Event::Failure(Failure {
                        message: format!(
                            "{MAX_FAILURES} parts of this file could not be read (is it a trace?); \
                             the rest of it was skipped"
                        ),
                        ..f.clone()
                    }));
                }
            }
            emit(event)
        };
        input::read(text, &mut |item| {
            if result.is_err() || failures.get() > MAX_FAILURES || not_json.get() > MAX_FAILURES {
                return;
            }
            let offset = match &item {
                Item::Call(site) => site.offset,
                Item::Problem(p) => p.offset,
            };
            let (line, column) = locator.locate(offset);
            result = match item {
                Item::Call(site) => {
                    self.lint_call(file, (line, column), &site, &not_json, &mut emit)
                }
                Item::Problem(p) => emit(Event::Failure(Failure {
                    file,
                    line,
                    column,
                    message: p.message,
                })),
            };
            if offset - reported >= STEP {
                reported = offset;
                progress(offset);
            }
        });
        progress(text.len());
        result
    }

    /// Lints the call at `site`, at (line, column) of `file`. `not_json` counts the file's
    /// records that are not JSON.
    fn lint_call<'f, E>(
        &self,
        file: &'f str,
        (line, column): (usize, usize),
        site: &Site<'_>,
        not_json: &std::cell::Cell<usize>,
        emit: &mut dyn FnMut(Event<'f>) -> Result<(), E>,
    ) -> Result<(), E> {
        // A text in a dialect may hold several calls: each is linted as a call of its own.
        for d in self
            .gate
            .decide_each(site.text.as_bytes(), &mut NoFacts, self.now_ms)
        {
            self.lint_decision(file, (line, column), site, not_json, &d, emit)?;
        }
        Ok(())
    }

    /// Lints what the gate decided about one call at (line, column) of `file`.
    fn lint_decision<'f, E>(
        &self,
        file: &'f str,
        (line, column): (usize, usize),
        site: &Site<'_>,
        not_json: &std::cell::Cell<usize>,
        d: &Decision<'_>,
        emit: &mut dyn FnMut(Event<'f>) -> Result<(), E>,
    ) -> Result<(), E> {
        let tool = d.tool().map(str::to_string);
        let diagnostic = |code: &'static Code, message: String| Diagnostic {
            code,
            file,
            line,
            column,
            message,
            tool: tool.clone(),
            category: None,
            suggestion: None,
            fix: None,
        };
        if let Some(error) = &d.error {
            // Nothing the gate could read as a call: the trace is at fault, unless this place
            // holds a call by definition.
            if d.call.is_none() && error.category == Category::MalformedCall {
                let failure = match site.origin {
                    Origin::Slot => None,
                    Origin::Record if call::shape_of_text(&site.text).is_some() => None,
                    // Too deep to read at all, whatever it is: refused as the gate refuses it.
                    Origin::Record if d.too_deep => None,
                    Origin::Record
                        if serde_json::from_str::<serde::de::IgnoredAny>(&site.text).is_ok() =>
                    {
                        Some(input::UNKNOWN_SHAPE.to_string())
                    }
                    // A note or a log line among the records: a finding, not a failure.
                    Origin::Record => {
                        not_json.set(not_json.get() + 1);
                        if not_json.get() > MAX_FAILURES {
                            return emit(Event::Failure(Failure {
                                file,
                                line,
                                column,
                                message: format!(
                                    "{MAX_FAILURES} lines of this file are not JSON (is it a \
                                     trace?); the rest of it was skipped"
                                ),
                            }));
                        }
                        let code = codes::not_json();
                        if self.ignored(code) {
                            return Ok(());
                        }
                        return emit(Event::Diagnostic(Box::new(diagnostic(
                            code,
                            "not JSON, and the gate reads no tool call in it".to_string(),
                        ))));
                    }
                };
                if let Some(message) = failure {
                    return emit(Event::Failure(Failure {
                        file,
                        line,
                        column,
                        message,
                    }));
                }
            }
            emit(Event::Call)?;
            let code = codes::for_category(error.category);
            if self.ignored(code) {
                return Ok(());
            }
            let mut diag = diagnostic(code, error.message.clone());
            diag.category = Some(error.category);
            diag.suggestion = (!error.suggestion.is_empty()).then(|| error.suggestion.clone());
            return emit(Event::Diagnostic(Box::new(diag)));
        }
        emit(Event::Call)?;
        for c in &d.corrections {
            let code = codes::for_kind(c.kind);
            if self.ignored(code) {
                continue;
            }
            let mut diag = diagnostic(code, format!("{}: {c}", code.summary));
            diag.fix = Some(c.clone());
            emit(Event::Diagnostic(Box::new(diag)))?;
        }
        let code = codes::gate_warning();
        if !self.ignored(code) {
            for w in &d.warnings {
                emit(Event::Diagnostic(Box::new(diagnostic(code, w.clone()))))?;
            }
        }
        Ok(())
    }

    fn ignored(&self, code: &Code) -> bool {
        self.ignore.iter().any(|c| c.code == code.code)
    }
}

/// What a run found, for the summary and the exit status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files read.
    pub files: usize,
    calls: usize,
    errors: usize,
    warnings: usize,
    /// Parts that could not be read.
    pub failures: usize,
}

impl Summary {
    /// Counts one event.
    pub fn count(&mut self, event: &Event<'_>) {
        match event {
            Event::Call => self.calls += 1,
            Event::Failure(_) => self.failures += 1,
            Event::Diagnostic(d) => match d.severity() {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
            },
        }
    }

    /// Whether there are findings at or above `deny`.
    pub fn denied(&self, deny: Severity) -> bool {
        match deny {
            Severity::Error => self.errors > 0,
            Severity::Warning => self.errors + self.warnings > 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Options;
    use metagate_core::policy::Policy;

    fn lint(text: &str, ignore: Vec<&'static Code>) -> (Vec<String>, Summary) {
        let policy = Policy::builtin();
        let linter = Linter::new(
            Gate::corrections_only(&policy, Options::default()),
            0,
            ignore,
        );
        let mut seen = Vec::new();
        let mut summary = Summary::default();
        linter
            .lint_text::<()>(
                "t.jsonl",
                text,
                &mut |e| {
                    summary.count(&e);
                    match e {
                        Event::Diagnostic(d) => {
                            seen.push(format!("{}:{}:{}", d.line, d.column, d.code.code))
                        }
                        Event::Failure(f) => seen.push(format!("{}:{}:failure", f.line, f.column)),
                        Event::Call => {}
                    }
                    Ok(())
                },
                &mut |_| {},
            )
            .unwrap();
        (seen, summary)
    }

    #[test]
    fn decisions_become_coded_findings() {
        let text = r#"{"tool_name":"response","tool_args":{"text":"hi"}}
{"tool_name":"code_execution_tool","tool_args":{"runtime":"python"}}
{"tool_name":"response","tool_args":{"message":"hi"}}
{"hello":"world"}
not json
{"ai":true,"content":"I will just answer."}
"#;
        let (seen, summary) = lint(text, vec![]);
        assert_eq!(
            seen,
            [
                "2:1:MG003",
                "3:1:MG104",
                "4:1:failure",
                "5:1:MG112",
                "6:22:MG001"
            ]
        );
        assert_eq!(
            summary,
            Summary {
                files: 0,
                calls: 4,
                errors: 2,
                warnings: 2,
                failures: 1
            }
        );
        assert!(summary.denied(Severity::Error));
        let (seen, _) = lint(text, vec![codes::find("MG104").unwrap()]);
        assert!(!seen.iter().any(|s| s.ends_with("MG104")));
    }

    #[test]
    fn a_file_that_is_no_trace_is_cut_short() {
        // Lines that are not JSON are findings, up to a point; then the file is given up on.
        let (seen, summary) = lint(&"words\n".repeat(50), vec![]);
        assert_eq!(seen.len(), MAX_FAILURES + 1);
        assert_eq!(summary.warnings, MAX_FAILURES);
        assert_eq!(summary.failures, 1);
        assert_eq!(summary.calls, 0);
        // Failures of the trace itself too.
        let (seen, summary) = lint(&"{\"hello\":1}\n".repeat(50), vec![]);
        assert_eq!(seen.len(), MAX_FAILURES + 1);
        assert_eq!(summary.failures, MAX_FAILURES + 1);
    }

    #[test]
    fn a_clean_trace_denies_nothing() {
        let (seen, summary) = lint(
            r#"[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"response","arguments":"{\"text\":\"hi\"}"}}]}]"#,
            vec![],
        );
        assert!(seen.is_empty(), "{seen:?}");
        assert_eq!(summary.calls, 1);
        assert!(!summary.denied(Severity::Warning));
    }
}
