//! Finding the secret spans of a text and replacing them, until nothing more is found.

use super::commands::scan_commands;
use super::database::scan_database;
use super::entropy::scan_runs;
use super::gitleaks::scan_gitleaks;
use super::prose::scan_prose;
use super::structured::scan_structured;
use super::{MIN_SCAN_LEN, REDACTED};

/// Upper bound of scans done by `redact_text` (the first plus re-scans of the output).
const MAX_PASSES: usize = 4;

pub(super) fn redact_text_counted(text: &str) -> Option<(String, usize)> {
    if text.len() < MIN_SCAN_LEN {
        return None;
    }
    let mut spans = Vec::new();
    collect_spans(text.as_bytes(), &mut spans, 0);
    if spans.is_empty() {
        return None;
    }
    let (mut out, mut count) = apply_spans(text, &mut spans);
    // Re-scan the output so that redaction is idempotent even when a
    // replacement changed the context of a neighbouring match. This only runs
    // when something was found, and almost always stops after one extra scan.
    for _ in 1..MAX_PASSES {
        spans.clear();
        collect_spans(out.as_bytes(), &mut spans, 0);
        if spans.is_empty() {
            break;
        }
        let (next, n) = apply_spans(&out, &mut spans);
        out = next;
        count += n;
    }
    Some((out, count))
}

fn apply_spans(text: &str, spans: &mut [(usize, usize)]) -> (String, usize) {
    for span in spans.iter_mut() {
        // Spans always start and end at ASCII bytes or at the ends of the
        // string; stay on char boundaries regardless.
        while !text.is_char_boundary(span.0) {
            span.0 -= 1;
        }
        while !text.is_char_boundary(span.1) {
            span.1 += 1;
        }
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut count = 0;
    let mut i = 0;
    while i < spans.len() {
        let (start, mut end) = spans[i];
        i += 1;
        while i < spans.len() && spans[i].0 <= end {
            end = end.max(spans[i].1);
            i += 1;
        }
        let start = start.max(last);
        if end <= start {
            continue;
        }
        out.push_str(&text[last..start]);
        out.push_str(REDACTED);
        last = end;
        count += 1;
    }
    out.push_str(&text[last..]);
    (out, count)
}

/// Pushes every secret span of `b`. `depth` > 0 when scanning decoded base64.
fn collect_spans(b: &[u8], out: &mut Vec<(usize, usize)>, depth: u8) {
    scan_structured(b, out);
    scan_prose(b, out);
    scan_commands(b, out);
    scan_database(b, out);
    let structured = out.len();
    scan_runs(b, out, structured, depth);
    scan_gitleaks(b, out);
}

pub(super) fn has_secret(text: &[u8], depth: u8) -> bool {
    let mut spans = Vec::new();
    collect_spans(text, &mut spans, depth);
    !spans.is_empty()
}
