//! Finding the tool calls in a recorded trace, and where each one is.
//!
//! A file is either one JSON document (a call, a message, a transcript: an array of messages
//! or an object with `messages`) or JSON Lines of such documents. Every call is handed on
//! with its byte offset in the file; every part that cannot be read is a [`Problem`] with its
//! offset. Nothing here decides anything about a call: that is the gate's job.

use serde_json::value::RawValue;

use metagate_wire::document::{self, names_a_container_key};
pub use metagate_wire::document::{Item, Origin, Problem, Site, UNKNOWN_SHAPE};

/// Reads `text` (a whole file) and hands every call and problem to `visit`, in file order.
pub(crate) fn read<'a>(text: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
    // A byte order mark (Windows editors write one) is no part of the JSON; offsets stay the
    // file's, as they are taken against `text`.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let skipped = text.len() - body.len();
    let Some(start) = body.find(|c: char| !c.is_whitespace()) else {
        return;
    };
    if matches!(body.as_bytes()[start], b'[' | b'{') {
        // The first value alone, then whether anything follows it: a value with more after
        // it is JSON Lines (or concatenated calls), read line by line below.
        let mut first = serde_json::Deserializer::from_str(body);
        match <&RawValue as serde::Deserialize>::deserialize(&mut first) {
            Ok(raw) if first.end().is_ok() => {
                document::read(text, raw.get(), visit);
                return;
            }
            Ok(_) => {}
            Err(e) => {
                // An error past the first line of the first value: one document, spread over
                // lines, that is broken. An error on the first line: JSON Lines, read below;
                // so too a first line cut off before the next opens a call of its own.
                let first_line = body[..start].matches('\n').count() + 1;
                if e.line() > first_line && !next_line_opens_an_object(body, start) {
                    let offset = skipped + offset_of_line_column(body, e.line(), e.column());
                    return visit(Item::Problem(Problem {
                        offset,
                        message: format!("not valid JSON: {e}"),
                    }));
                }
            }
        }
    }
    // A text in a dialect spread over lines (Qwen's XML, harmony, a fence) is one record: its
    // lines read one by one would each be no call.
    let whole = body.trim();
    if body.as_bytes()[start] != b'{'
        && whole.contains('\n')
        && matches!(metagate_wire::dialects::read(whole), Some(Ok(_)))
    {
        return site(text, whole, visit);
    }
    let mut at = 0;
    while at < body.len() {
        let end = memchr::memchr(b'\n', &body.as_bytes()[at..]).map_or(body.len(), |i| at + i);
        let line = &body[at..end];
        at = end + 1;
        if !line.trim().is_empty() {
            read_line(text, line, visit);
        }
    }
}

/// Whether the first value starts a line that is an object alone (`{` first) and the next
/// non-blank line starts with `{` too: JSON Lines whose first call was cut off. A document
/// spread over lines indents its members, or opens with `[`.
fn next_line_opens_an_object(text: &str, start: usize) -> bool {
    if text.as_bytes()[start] != b'{' {
        return false;
    }
    let after = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
    text[after..]
        .lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with('{'))
}

/// One line of JSON Lines: a document, or text the gate may still read as a call.
fn read_line<'a>(base: &'a str, line: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
    let trimmed = line.trim();
    let first = trimmed.as_bytes().first();
    // Most lines are calls: an object naming none of the keys of messages and transcripts
    // goes straight to the gate, which reads it once.
    if first == Some(&b'{') && !names_a_container_key(trimmed) {
        return site(base, trimmed, visit);
    }
    if matches!(first, Some(b'[' | b'{'))
        && let Ok(raw) = serde_json::from_str::<&RawValue>(trimmed)
    {
        document::read(base, raw.get(), visit);
        return;
    }
    site(base, trimmed, visit);
}

/// Text standing on its own, handed to the gate as a call.
fn site<'a>(base: &'a str, text: &'a str, visit: &mut dyn FnMut(Item<'a>)) {
    visit(Item::Call(Site {
        offset: text.as_ptr() as usize - base.as_ptr() as usize,
        text: std::borrow::Cow::Borrowed(text),
        origin: Origin::Record,
    }));
}

/// The byte offset of a 1-based line and (byte) column, as serde_json reports them.
fn offset_of_line_column(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let line_len = text[start..].find('\n').unwrap_or(text.len() - start);
    let mut at = start + column.saturating_sub(1).min(line_len);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Turns byte offsets into 1-based lines and columns (in characters), quickly when the
/// offsets come in order, as the reader hands them out.
pub(crate) struct Locator<'a> {
    text: &'a str,
    starts: Vec<usize>,
    last: (usize, usize, usize),
}

impl<'a> Locator<'a> {
    pub(crate) fn new(text: &'a str) -> Locator<'a> {
        // A byte order mark takes no column: line 1 starts after it.
        let first = if text.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        let mut starts = vec![first];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Locator {
            text,
            starts,
            last: (first, 1, 1),
        }
    }

    /// Line and column of `offset`.
    pub(crate) fn locate(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.max(self.starts[0]);
        // Offsets come in order, mostly on the line of the last one or the next.
        let (_, last_line, _) = self.last;
        let on = |line: usize| {
            self.starts.get(line - 1).is_some_and(|&s| s <= offset)
                && self.starts.get(line).is_none_or(|&s| offset < s)
        };
        let line = if on(last_line) {
            last_line
        } else if on(last_line + 1) {
            last_line + 1
        } else {
            self.starts.partition_point(|&s| s <= offset)
        };
        let start = self.starts[line - 1];
        let (last_offset, last_line, last_column) = self.last;
        let column = if last_line == line && last_offset <= offset {
            last_column + self.text[last_offset..offset].chars().count()
        } else {
            1 + self.text[start..offset].chars().count()
        };
        self.last = (offset, line, column);
        (line, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Vec<(usize, usize, String)> {
        let mut found = Vec::new();
        let mut at = Locator::new(text);
        read(text, &mut |item| {
            let (offset, what) = match item {
                Item::Call(s) => (s.offset, format!("{:?}:{}", s.origin, s.text)),
                Item::Problem(p) => (p.offset, format!("problem:{}", p.message)),
            };
            let (line, column) = at.locate(offset);
            found.push((line, column, what));
        });
        found
    }

    #[test]
    fn json_lines_of_envelopes_messages_and_text() {
        let text = "{\"tool_name\":\"a\",\"tool_args\":{}}\n\n\
            {\"ai\":true,\"content\":\"```json\\n{}\\n```\"}\n\
            {\"ai\":false,\"content\":\"user text\"}\n\
            not json at all\r\n\
            \u{e9}t\u{e9} [{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"name\":\"b\"}}]}]\n";
        let found = items(text);
        assert_eq!(
            found[0],
            (1, 1, "Record:{\"tool_name\":\"a\",\"tool_args\":{}}".into())
        );
        assert_eq!(found[1], (3, 22, "Slot:```json\n{}\n```".into()));
        assert_eq!(found[2], (5, 1, "Record:not json at all".into()));
        assert_eq!(found[3].0, 6);
        assert_eq!(found[3].1, 1);
        assert_eq!(found.len(), 4);
    }

    #[test]
    fn transcripts_spread_over_lines() {
        let text = "{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi\"},\n    \
            {\"role\": \"assistant\", \"content\": [\n      {\"type\": \"text\", \"text\": \"x\"},\n      \
            {\"type\": \"tool_use\", \"id\": \"t\", \"name\": \"n\", \"input\": {}}\n    ]}\n  ]\n}\n";
        let found = items(text);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].0, found[0].1), (6, 7));
        assert!(found[0].2.starts_with("Slot:{\"type\": \"tool_use\""));
    }

    #[test]
    fn broken_documents_and_unknown_shapes_are_problems() {
        let found = items("[\n  {\"role\": \"assistant\",\n  \"tool_calls\": [}\n]\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 3);
        assert!(
            found[0].2.starts_with("problem:not valid JSON"),
            "{found:?}"
        );
        let found = items("[1, {\"messages\": 2}]");
        assert_eq!(found.len(), 2);
        assert!(found[0].2.starts_with("problem:unknown shape"));
        assert!(found[1].2.contains("`messages` must be an array"));
    }

    proptest::proptest! {
        #[test]
        fn locator_agrees_with_counting_from_the_start(
            text in "[a\n\u{e9}\u{1F600}]{0,60}",
            picks in proptest::collection::vec(0usize..64, 0..12),
        ) {
            let boundaries: Vec<usize> =
                (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let mut at = Locator::new(&text);
            for p in picks {
                let offset = boundaries[p % boundaries.len()];
                let before = &text[..offset];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
                proptest::prop_assert_eq!(at.locate(offset), (line, column), "offset {}", offset);
            }
        }
    }

    #[test]
    fn locator_counts_characters_in_any_order() {
        let text = "ab\n\u{e9}\u{e9}x\ny";
        let mut at = Locator::new(text);
        assert_eq!(at.locate(7), (2, 3));
        assert_eq!(at.locate(0), (1, 1));
        assert_eq!(at.locate(5), (2, 2));
        assert_eq!(at.locate(7), (2, 3));
        assert_eq!(at.locate(9), (3, 1));
    }
}
