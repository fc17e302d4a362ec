//! Secrets in XML elements: `<password>…</password>`, `<db:apiKey><![CDATA[…]]></db:apiKey>`
//! (Maven and NuGet settings, SOAP bodies, Spring and Tomcat configuration).

use super::REDACTED_B;
use super::bytes::{has_at, is_key_byte, scan_while};
use super::key_names::{KeyKind, classify_key};
use super::key_values::{Hit, is_number_or_path, is_placeholder};

/// How far back from a `>` the `<` of its tag is looked for.
const MAX_TAG_LEN: usize = 256;

/// The text of an element whose name names a secret, `gt` being the `>` that ends its start
/// tag. Only an element closed by its own end tag right after its text counts, so prose such
/// as "replace <token> with yours" is left alone.
pub(super) fn element_at(b: &[u8], gt: usize) -> Option<Hit> {
    if gt == 0 || b[gt - 1] == b'/' {
        return None;
    }
    let floor = gt.saturating_sub(MAX_TAG_LEN);
    let lt = (floor..gt).rev().find(|&k| matches!(b[k], b'<' | b'>'))?;
    if b[lt] != b'<' {
        return None;
    }
    let name_end = scan_while(b, lt + 1, |c| is_key_byte(c) || c == b':');
    let name = &b[lt + 1..name_end];
    if name.is_empty() || !(name_end == gt || b[name_end].is_ascii_whitespace()) {
        return None;
    }
    let local = name.rsplit(|&c| c == b':').next().unwrap_or(name);
    let kind = classify_key(local);
    if kind == KeyKind::Plain {
        return None;
    }
    let text_start = scan_while(b, gt + 1, |c| c.is_ascii_whitespace());
    let (start, end, after) = if has_at(b, text_start, b"<![CDATA[") {
        let start = text_start + 9;
        let end = start + b[start..].windows(3).position(|w| w == b"]]>")?;
        (start, end, end + 3)
    } else {
        let end = gt + 1 + memchr::memchr(b'<', &b[gt + 1..])?;
        (text_start, end, end)
    };
    let close = scan_while(b, after, |c| c.is_ascii_whitespace());
    if !(has_at(b, close, b"</") && has_at(b, close + 2, name)) {
        return None;
    }
    let end = start + b[start..end].trim_ascii_end().len();
    let text = &b[start..end];
    if text.is_empty() {
        return None;
    }
    if text.starts_with(REDACTED_B)
        || is_placeholder(text)
        || (kind == KeyKind::Ambiguous && is_number_or_path(text))
    {
        return Some(Hit::Skip(end));
    }
    Some(Hit::Redact(start, end))
}
