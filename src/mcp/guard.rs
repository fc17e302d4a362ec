//! What the proxy refuses to pass whatever the gate would say, because the gate would never
//! see it: a `tools/call` the server would run under a spelling or in a form the relay does
//! not decide (a notification, `Tools/Call`), an answer from the server to a request the
//! client never made, and a tool listing without end.

use std::collections::HashMap;

use super::framing::{Kind, RequestId};

/// Requests waiting for the server's answer are bounded: past this many, a client's next
/// request is refused rather than forgotten (an answer to a forgotten one would be dropped).
pub(crate) const MAX_WAITING: usize = 100_000;

/// A listing of the server's tools is given up past this many pages,
pub(crate) const MAX_LIST_PAGES: usize = 1000;
/// … this many tools,
pub(crate) const MAX_LIST_TOOLS: usize = 10_000;
/// … or this many bytes of pages in all (16 MiB).
pub(crate) const MAX_LIST_BYTES: usize = 16 << 20;

/// Whether `method` is `tools/call` to a reader that sets case and the spaces around it
/// aside, as some servers do.
fn reads_as_call(method: &str) -> bool {
    method
        .trim_matches(|c: char| c.is_whitespace() || c.is_control())
        .eq_ignore_ascii_case("tools/call")
}

/// Why a client's message must not reach the server, if it must not: a `tools/call`
/// without an id (the server would run it, and no answer would say what the gate decided)
/// or a method that is `tools/call` spelled otherwise (which the relay would not decide).
pub(crate) fn refused(kind: &Kind<'_>) -> Option<String> {
    match kind {
        Kind::Notification { method } if reads_as_call(method) => Some(format!(
            "a {method:?} without an id (a notification) is refused: every tools/call is decided by metagate and answered, and a notification cannot be"
        )),
        Kind::Request { method, .. } if method != "tools/call" && reads_as_call(method) => {
            Some(format!(
                "the method {method:?} is refused: it is tools/call to a server that reads methods loosely, and metagate decides tools/call as spelled"
            ))
        }
        _ => None,
    }
}

/// The ids of the client's requests the server has not answered yet: an answer to any other
/// id is one the client never asked for (a forged result, a second answer) and is dropped.
#[derive(Default)]
pub(crate) struct Waiting {
    ids: HashMap<RequestId, u32>,
}

impl Waiting {
    /// Notes that a request with `id` goes to the server; false (and nothing noted) when
    /// [`MAX_WAITING`] requests already wait.
    pub(crate) fn sent(&mut self, id: &RequestId) -> bool {
        if self.ids.len() >= MAX_WAITING && !self.ids.contains_key(id) {
            return false;
        }
        *self.ids.entry(id.clone()).or_default() += 1;
        true
    }

    /// Takes the answer to `id` off the list: false when no request with it waits.
    pub(crate) fn answered(&mut self, id: &RequestId) -> bool {
        match self.ids.get_mut(id) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            Some(_) => {
                self.ids.remove(id);
                true
            }
            None => false,
        }
    }
}

/// How much of a tool listing has come in.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Listed {
    pub(crate) pages: usize,
    tools: usize,
    bytes: usize,
}

impl Listed {
    /// Counts a page of `bytes` (before it is read), or says why the listing must stop.
    pub(crate) fn page_of(&mut self, bytes: usize) -> Result<(), String> {
        self.pages += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > MAX_LIST_BYTES {
            return Err(format!(
                "the server's tools/list pages come to more than {MAX_LIST_BYTES} bytes; metagate lists no more and decides no call until a listing fits"
            ));
        }
        Ok(())
    }

    /// Counts the tools of a page read, or says why the listing must stop.
    pub(crate) fn tools(&mut self, tools: usize, more: bool) -> Result<(), String> {
        self.tools = self.tools.saturating_add(tools);
        if self.tools > MAX_LIST_TOOLS {
            return Err(format!(
                "the server's tools/list holds more than {MAX_LIST_TOOLS} tools; metagate lists no more and decides no call until a listing fits"
            ));
        }
        if more && self.pages >= MAX_LIST_PAGES {
            return Err(format!(
                "the server's tools/list goes on past {MAX_LIST_PAGES} pages"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn calls_in_another_spelling_or_without_an_id_are_refused() {
        let id = RequestId::Number("1".into());
        let request = |m: &'static str| Kind::Request {
            id: id.clone(),
            method: Cow::Borrowed(m),
        };
        let note = |m: &'static str| Kind::Notification {
            method: Cow::Borrowed(m),
        };
        for (kind, want) in [
            (note("tools/call"), true),
            (note("Tools/Call"), true),
            (note(" tools/call\n"), true),
            (request("Tools/Call"), true),
            (request("TOOLS/CALL"), true),
            (request("tools/call "), true),
            (request("tools/call"), false),
            (request("tools/list"), false),
            (note("notifications/initialized"), false),
            (request("tools/callx"), false),
        ] {
            assert_eq!(refused(&kind).is_some(), want, "{kind:?}");
        }
    }

    #[test]
    fn only_answers_to_requests_sent_are_taken() {
        let mut w = Waiting::default();
        let (a, b) = (RequestId::Number("1".into()), RequestId::Text("1".into()));
        assert!(!w.answered(&a));
        assert!(w.sent(&a) && w.sent(&a));
        assert!(!w.answered(&b), "a string id is not the number");
        assert!(w.answered(&a) && w.answered(&a));
        assert!(!w.answered(&a), "two requests, two answers, no third");
    }

    #[test]
    fn a_listing_is_bounded_in_pages_tools_and_bytes() {
        let mut l = Listed::default();
        for _ in 0..MAX_LIST_PAGES - 1 {
            l.page_of(10).unwrap();
            l.tools(1, true).unwrap();
        }
        l.page_of(10).unwrap();
        assert!(l.tools(1, true).unwrap_err().contains("pages"));
        let mut l = Listed::default();
        l.page_of(10).unwrap();
        assert!(
            l.tools(MAX_LIST_TOOLS + 1, false)
                .unwrap_err()
                .contains("tools")
        );
        let mut l = Listed::default();
        l.page_of(MAX_LIST_BYTES).unwrap();
        assert!(l.page_of(1).unwrap_err().contains("bytes"));
    }
}
