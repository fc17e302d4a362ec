//! The one path of a call through the gate, stage by stage: read it (strictly, or leniently
//! from broken JSON and text dialects), settle its name, correct its arguments, check it
//! against the policy, and say how it goes out.

use serde_json::Value;

use super::decision::{malformed, malformed_in, too_deep, too_large};
use super::{Decision, Gate, MAX_DOCUMENT, Verdict};
use metagate_core::correct::{self, Report};
use metagate_core::enforce::{CallToCheck, Facts, Inquiry};
use metagate_core::error::ToolError;
use metagate_core::policy::tool_names::{last_component, path_like, path_like_refusal};
use metagate_core::policy::{Policy, Tool};
use metagate_wire::call::{Call, NotACall, Shape, split_method};
use metagate_wire::correction::{Correction, Kind};
use metagate_wire::dialects::{self, Found, Reading};
use metagate_wire::repair::{self, Dialect};

use super::decision::InKind;

impl Gate<'_> {
    /// Decides one call: read it, correct it, check it against the policy.
    /// `facts` answers what the checks ask of the world as of `now_ms`.
    pub fn decide_call<'a>(
        &self,
        input: &'a [u8],
        facts: &mut dyn Facts,
        now_ms: i64,
    ) -> Decision<'a> {
        decide_explained(self, input, facts, now_ms, None)
    }

    /// Decides every call of one record as `gate` reads it: one call, or each call of a text
    /// that holds several in a dialect (`lint` reads traces so). A message, response or array
    /// is one decision here, refused as [`Gate::decide_call`] refuses it.
    pub fn decide_each<'a>(
        &self,
        input: &'a [u8],
        facts: &mut dyn Facts,
        now_ms: i64,
    ) -> Vec<Decision<'a>> {
        let mut redirect = Redirect::default();
        let d = decide_explained(self, input, facts, now_ms, Some(&mut redirect));
        let reading = match redirect.calls {
            Some(reading) => reading,
            // A text opening with `[` (`[TOOL_CALLS]…`) is first taken for an array.
            None if d.call.is_none() && redirect.not_a_call.is_some() => {
                let text = std::str::from_utf8(input).unwrap_or_default();
                match dialects::read(text) {
                    Some(Ok(reading)) => reading,
                    Some(Err(r)) => {
                        let error = malformed(r.describe(text));
                        return vec![Decision::rejected(input, error, Report::default())];
                    }
                    None => return vec![d],
                }
            }
            None => return vec![d],
        };
        if reading.calls.len() == 1 {
            let found = reading.calls.into_iter().next().expect("one call");
            return vec![decide_found(
                self,
                input,
                reading.dialect,
                found,
                facts,
                now_ms,
            )];
        }
        reading
            .calls
            .into_iter()
            .map(|found| {
                let span = found.span.clone();
                let found = Found {
                    span: 0..span.len(),
                    ..found
                };
                decide_found(self, &input[span], reading.dialect, found, facts, now_ms)
            })
            .collect()
    }
}

/// A document that holds its calls some other way than as one call, for the caller to read
/// it so: strict JSON that names no envelope (why it is no call), or a text that holds
/// several calls in one dialect (what was read).
#[derive(Default)]
pub(super) struct Redirect {
    pub(super) not_a_call: Option<NotACall>,
    pub(super) calls: Option<Reading>,
}

/// [`Gate::decide_call`], with the `--explain` lines attached; when `redirect` asks for it,
/// a document that holds its calls another way is handed back for the caller to read it so.
pub(super) fn decide_explained<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    facts: &mut dyn Facts,
    now_ms: i64,
    redirect: Option<&mut Redirect>,
) -> Decision<'a> {
    let mut explain = gate.options.explain.then(Vec::new);
    let mut d = decide(gate, input, facts, now_ms, &mut explain, redirect);
    finish_explain(&mut d, explain);
    d
}

fn finish_explain(d: &mut Decision<'_>, explain: Option<Vec<String>>) {
    if let Some(mut lines) = explain {
        lines.push(format!("verdict: {}", d.verdict.as_str()));
        d.explain = lines;
    }
}

/// Decides one call a dialect reader found: `found.span` is where it stands in `input` (the
/// whole text, or the call's own bytes when the text holds several), whose other bytes the
/// answer writes back as they came.
pub(super) fn decide_found<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    dialect: &'static dialects::Dialect,
    found: Found,
    facts: &mut dyn Facts,
    now_ms: i64,
) -> Decision<'a> {
    let mut explain = gate.options.explain.then(Vec::new);
    let mut report = Report::default();
    let emitted = gate
        .options
        .emit
        .and_then(|_| std::str::from_utf8(input).ok());
    let read = read_found(dialect, found, emitted, &mut report);
    let mut d = decide_read(gate, input, read, report, facts, now_ms, &mut explain);
    finish_explain(&mut d, explain);
    d
}

/// A call as read from its document, before anything was decided about it.
struct Read<'a> {
    call: Call<'a>,
    /// The text dialect it came in, when it came in one.
    dialect: Option<Dialect>,
    /// `<parameter>` values a dialect wrote as text but that read as other JSON.
    texts: Vec<(String, String)>,
    /// Read strictly: the only kind of call that can go out byte for byte as it came.
    strict: bool,
    /// Read in a text dialect whose answer keeps the dialect.
    in_kind: Option<Box<InKind>>,
}

/// Why a document could not be read as a call.
struct Unread {
    // Boxed: a rejection is the rare path, and the common one should not carry its size.
    error: Box<ToolError>,
    too_deep: bool,
}

impl From<ToolError> for Unread {
    fn from(error: ToolError) -> Unread {
        Unread {
            error: Box::new(error),
            too_deep: false,
        }
    }
}

// Inlined into its one caller so that the decision is built where it is returned, not
// copied there.
#[inline(always)]
fn decide<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    facts: &mut dyn Facts,
    now_ms: i64,
    explain: &mut Option<Vec<String>>,
    redirect: Option<&mut Redirect>,
) -> Decision<'a> {
    let mut report = Report::default();
    let read = read(input, &mut report, redirect, gate.options.emit.is_some());
    decide_read(gate, input, read, report, facts, now_ms, explain)
}

/// Stages 2 to 4 of a call read (or not) in stage 1.
#[inline(always)]
fn decide_read<'a>(
    gate: &Gate<'_>,
    input: &'a [u8],
    read: Result<Read<'a>, Unread>,
    mut report: Report,
    facts: &mut dyn Facts,
    now_ms: i64,
    explain: &mut Option<Vec<String>>,
) -> Decision<'a> {
    let policy = gate.policy;
    let read = match read {
        Ok(read) => read,
        Err(unread) => {
            let mut d = Decision::rejected(input, *unread.error, report);
            d.too_deep = unread.too_deep;
            return d;
        }
    };
    let Read {
        mut call,
        dialect,
        texts,
        strict,
        in_kind,
    } = read;
    let shape = call.shape;
    let found = match settle_name(policy, &mut call, &mut report) {
        Ok(found) => found,
        Err(error) => {
            let mut d = Decision::rejected(input, *error, report);
            d.shape = Some(shape);
            d.dialect = dialect;
            d.call = Some(call);
            return d;
        }
    };
    if let Some(value) = call.bare_argument() {
        // `"arguments": "image.png"`: the tool's one argument, or a refusal naming its own.
        let placed = correct::bare_argument::bare_argument(
            call.tool(),
            found,
            value,
            call.arguments_field(),
            &mut report,
        );
        match placed {
            Ok(name) => call.place_bare_argument(&name),
            Err(error) => {
                let mut d = Decision::rejected(input, *error, report);
                d.shape = Some(shape);
                d.dialect = dialect;
                d.call = Some(call);
                return d;
            }
        }
    }
    let (tool, method) = split_method(&call.name);
    if let Some(lines) = explain.as_mut() {
        let how = match (&in_kind, dialect) {
            (Some(k), _) => format!(" from the {} text dialect", k.dialect.label),
            (None, Some(d)) => format!(" from the {} text dialect", dialect_label(d)),
            (None, None) => String::new(),
        };
        lines.push(format!("envelope: {}{how}, tool {tool}", shape.as_str()));
    }
    let mut outcome = correct_args(
        policy,
        (tool, found, method),
        &mut call.args,
        texts,
        &mut report,
        explain,
    );
    let mut grant_check = None;
    if outcome.is_ok()
        && let Some(checker) = gate.checker
    {
        let mut inquiry = Inquiry {
            facts,
            fs: gate.fs,
            now_ms,
            scope: gate.scope,
            explain,
            grant_check: None,
        };
        let to_check = CallToCheck {
            tool,
            args: &call.args,
            context: gate.context,
        };
        outcome = checker.check(policy, &to_check, &mut inquiry);
        grant_check = inquiry.grant_check;
    }
    if let Err(error) = outcome {
        let mut d = Decision::rejected(input, *error, report);
        d.shape = Some(shape);
        d.dialect = dialect;
        d.call = Some(call);
        d.grant_check = grant_check;
        d.in_kind = in_kind;
        return d;
    }
    let target = gate
        .options
        .emit
        .or(dialect.map(|_| Shape::AgentZero))
        .unwrap_or(shape);
    let verdict = if report.corrections.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Corrected
    };
    // Only a call read strictly can go out as it came: anything read leniently is rewritten.
    let unchanged = strict
        && verdict == Verdict::Pass
        && target == shape
        // A raw CR inside is a line break to universal-newline readers: rewritten compactly.
        && memchr::memchr2(b'\n', b'\r', input.trim_ascii()).is_none();
    Decision {
        verdict,
        shape: Some(shape),
        dialect,
        call: Some(call),
        target: Some(target),
        corrections: report.corrections,
        warnings: report.warnings,
        error: None,
        unchanged,
        explain: Vec::new(),
        grant_check,
        unread_id: None,
        too_deep: false,
        in_kind,
        input,
    }
}

/// Stage 1: the call in `input`, read strictly when it is strict JSON (without building
/// values for fields the gate does not own), else leniently. What reading changed goes into
/// `report`. Strict JSON that names no envelope is refused, and when `not_a_call` asks, why
/// is handed back for the caller to read the document as a message instead.
#[inline(always)]
fn read<'a>(
    input: &'a [u8],
    report: &mut Report,
    redirect: Option<&mut Redirect>,
    emit: bool,
) -> Result<Read<'a>, Unread> {
    if input.trim_ascii_end().len() > MAX_DOCUMENT {
        // The reader stops one byte past the limit: the true size is not known, only that.
        return Err(too_large("input is more than").into());
    }
    match Call::from_json(input, &mut report.corrections) {
        Ok(Some(call)) => Ok(Read {
            call,
            dialect: None,
            texts: Vec::new(),
            strict: true,
            in_kind: None,
        }),
        // Strict JSON naming no envelope may hold calls some other way (a message, a
        // response, an array): when asked, the caller reads it so, or refuses it as this.
        Err(e) if e.holds_no_envelope && redirect.is_some() => {
            let error = malformed_in(e.message.clone(), e.shape);
            if let Some(slot) = redirect {
                slot.not_a_call = Some(e);
            }
            Err(error.into())
        }
        Err(e) => Err(malformed_in(e.message, e.shape).into()),
        Ok(None) => read_leniently(input, report, redirect, emit),
    }
}

/// Stage 1 for what is not strict JSON: a text dialect, or broken JSON repaired.
fn read_leniently<'a>(
    input: &'a [u8],
    report: &mut Report,
    redirect: Option<&mut Redirect>,
    emit: bool,
) -> Result<Read<'a>, Unread> {
    if let Ok(text) = std::str::from_utf8(input)
        && let Some(reading) = dialects::read(text)
    {
        let mut reading = reading.map_err(|r| Unread::from(malformed(r.describe(text))))?;
        if reading.calls.len() > 1 {
            let n = reading.calls.len();
            let label = reading.dialect.label;
            if let Some(slot) = redirect {
                // The caller decides each call; this rejection is never shown.
                slot.calls = Some(reading);
                return Err(malformed(format!("{n} calls in one text")).into());
            }
            return Err(malformed(format!(
                "{n} calls in one {label} text, and this reader takes one call: send them one \
                 at a time"
            ))
            .into());
        }
        let found = reading.calls.pop().expect("a reading holds a call");
        let kept = emit.then_some(text);
        return read_found(reading.dialect, found, kept, report);
    }
    let parsed = repair::parse(input).map_err(|e| Unread {
        error: Box::new(if e.too_deep {
            too_deep(e.to_string())
        } else {
            malformed(e.to_string())
        }),
        too_deep: e.too_deep,
    })?;
    if parsed.more_calls > 0 {
        // One reading of one call would drop the rest, which the agent then never runs
        // while the model believes it did.
        let n = parsed.more_calls + 1;
        return Err(malformed(format!(
            "{n} calls came back to back, and one document is read as one call: send them one \
             at a time, or together in a JSON array (each one is checked)"
        ))
        .into());
    }
    if parsed.repairs.is_empty() && parsed.dialect.is_none() && !parsed.warnings.is_empty() {
        // Text after the call was dropped: that changed the input too.
        report.corrections.push(Correction::noted(
            Kind::Repair,
            "kept the first JSON object and dropped what followed it",
        ));
    }
    for note in parsed.repairs {
        report
            .corrections
            .push(Correction::noted(Kind::Repair, note));
    }
    report.warnings.extend(parsed.warnings);
    if let Some(d) = parsed.dialect {
        report.corrections.push(Correction::noted(
            Kind::Envelope,
            format!("read the {} text dialect", dialect_label(d)),
        ));
    }
    let call = Call::from_value(parsed.value, &mut report.corrections)
        .map_err(|e| Unread::from(malformed_in(e.message, e.shape)))?;
    Ok(Read {
        call,
        dialect: parsed.dialect,
        texts: parsed.texts,
        strict: false,
        in_kind: None,
    })
}

/// The call a dialect reader found, to be answered in its dialect. `emitted` is the whole
/// text when `--emit` converts the call to JSON, which leaves the dialect and the text around
/// the call behind (a correction of kind `envelope` says so).
fn read_found<'a>(
    dialect: &'static dialects::Dialect,
    mut found: Found,
    emitted: Option<&str>,
    report: &mut Report,
) -> Result<Read<'a>, Unread> {
    for note in std::mem::take(&mut found.repairs) {
        report
            .corrections
            .push(Correction::noted(Kind::Repair, note));
    }
    if let Some(text) = emitted {
        let around = format!("{}{}", &text[..found.span.start], &text[found.span.end..]);
        let alone = if around.trim().is_empty() {
            ""
        } else {
            ", and wrote the call alone, without the text around it"
        };
        report.corrections.push(Correction::noted(
            Kind::Envelope,
            format!("read the {} text dialect{alone}", dialect.label),
        ));
    }
    let mut value = serde_json::Map::new();
    value.insert(
        "name".to_owned(),
        Value::String(std::mem::take(&mut found.name)),
    );
    value.insert(
        "arguments".to_owned(),
        Value::Object(std::mem::take(&mut found.arguments)),
    );
    let call = Call::from_value(Value::Object(value), &mut report.corrections)
        .map_err(|e| Unread::from(malformed_in(e.message, e.shape)))?;
    let texts = std::mem::take(&mut found.texts);
    Ok(Read {
        call,
        dialect: None,
        texts,
        strict: false,
        in_kind: Some(Box::new(InKind {
            dialect,
            found,
            emit: emitted.is_some(),
        })),
    })
}

/// Stage 2: the tool name as the policy knows it, and the tool it names (none for a tool the
/// policy does not know). Spaces, line breaks and controls around a name are no part of it,
/// and agents that trim names (Python's `.strip()`) would run the tool it names: the name is
/// read as that name. A name the policy does not know but that means one tool it does
/// (spaces, case and separators aside) is that tool, or it would pass unchecked (and run, for
/// an agent that trims names or finds its tools on a case-insensitive file system).
#[inline(always)]
fn settle_name<'p>(
    policy: &'p Policy,
    call: &mut Call<'_>,
    report: &mut Report,
) -> Result<Option<&'p Tool>, Box<ToolError>> {
    let edge = |c: char| c.is_whitespace() || c.is_control();
    let plain_ends = |b: &[u8]| {
        b.first().is_some_and(u8::is_ascii_graphic) && b.last().is_some_and(u8::is_ascii_graphic)
    };
    if !plain_ends(call.name.as_bytes())
        && (call.name.starts_with(edge) || call.name.ends_with(edge))
    {
        let trimmed = call.name.trim_matches(edge).to_string();
        let mut fix = Correction::noted(
            Kind::Envelope,
            "removed the spaces and control characters around the tool name",
        );
        fix.from = Value::String(call.name.to_string());
        fix.to = Value::String(trimmed.clone());
        report.corrections.push(fix);
        call.rename(trimmed);
    }
    if let Some(why) = path_like(&call.name) {
        return path_named(policy, call, report, why);
    }
    let (tool, method) = split_method(&call.name);
    if let Some(found) = policy.tool(tool) {
        return Ok(Some(found));
    }
    let Some(known) = policy.tool_named_like(tool) else {
        return Ok(None);
    };
    let renamed = match method {
        Some(m) => format!("{known}:{m}"),
        None => known.to_string(),
    };
    let mut fix = Correction::noted(
        Kind::Envelope,
        format!("read the tool name {tool:?} as {known:?}"),
    );
    fix.from = Value::String(tool.to_string());
    fix.to = Value::String(known.to_string());
    report.corrections.push(fix);
    call.rename(renamed);
    Ok(policy.tool(known))
}

/// [`settle_name`] for a name that reads as a path (`why`): the tool its last component names,
/// read as that tool, or a refusal whatever `[gate] unknown_tools` says.
fn path_named<'p>(
    policy: &'p Policy,
    call: &mut Call<'_>,
    report: &mut Report,
    why: &str,
) -> Result<Option<&'p Tool>, Box<ToolError>> {
    let refused = || Box::new(path_like_refusal(policy, &call.name, why));
    let Some(last) = last_component(&call.name) else {
        return Err(refused());
    };
    let (tool, method) = split_method(last);
    let Some(known) = policy
        .tools
        .get_key_value(tool)
        .map(|(k, _)| k.as_str())
        .or_else(|| policy.tool_named_like(tool))
    else {
        return Err(refused());
    };
    let renamed = match method {
        Some(m) => format!("{known}:{m}"),
        None => known.to_string(),
    };
    let mut fix = Correction::noted(
        Kind::Envelope,
        format!("read the tool name {:?} ({why}) as {known:?}", call.name),
    );
    fix.from = Value::String(call.name.to_string());
    fix.to = Value::String(renamed.clone());
    report.corrections.push(fix);
    call.rename(renamed);
    Ok(policy.tool(known))
}

/// Stage 3: the correction rules over the arguments (`texts` first: the dialect's
/// `<parameter>` values a string argument keeps as text). Each change goes into `report`;
/// the error is why the call cannot go on as corrected.
#[inline(always)]
fn correct_args(
    policy: &Policy,
    (tool, found, method): (&str, Option<&Tool>, Option<&str>),
    args: &mut metagate_wire::args::Args<'_>,
    texts: Vec<(String, String)>,
    report: &mut Report,
    explain: &mut Option<Vec<String>>,
) -> Result<(), Box<ToolError>> {
    if !texts.is_empty() {
        let kept = correct::keep_param_texts(policy, tool, args, texts);
        if let Some(lines) = explain.as_mut() {
            lines.extend(kept.iter().map(|name| {
                format!("envelope: <parameter> {name:?} kept as text (a string argument)")
            }));
        }
    }
    let outcome = correct::run_for(policy, tool, found, method, args, report);
    if let Some(lines) = explain.as_mut() {
        lines.extend(
            report
                .corrections
                .iter()
                .map(|c| format!("correction: {c}")),
        );
        lines.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
        if let Err(e) = &outcome {
            lines.push(format!(
                "corrections: rejected ({}): {}",
                e.category, e.message
            ));
        }
    }
    outcome
}

/// How a text dialect is named in notes.
fn dialect_label(d: Dialect) -> &'static str {
    match d {
        Dialect::FunctionCalls => "<function_calls>",
        Dialect::InvokeToolArgs => "<invoke><tool_args>",
        Dialect::ToolCallTag => "<tool_call>",
    }
}
