//! Finding the one object in the text a model emitted: inside code fences first, then at each
//! `{` in turn, past prose, doubled braces and objects that follow.

use super::bytes::{
    bracketed_span_end, find_byte, find_bytes, find_fence_at_line_start, has_non_whitespace,
    is_fence_tag_byte, is_json_whitespace, skip_spaces, skip_whitespace,
};
use super::json_reader::{JsonReader, Wrapper};
use super::messages::{
    MSG_BRACE_BEFORE, MSG_NO_OBJECT, MSG_OBJECT_AFTER, MSG_TOP_ARRAY, MSG_VALUE_AFTER, ReadFailure,
    RepairKind, more_followed_warning,
};
use serde_json::{Map, Value};

/// An object read successfully from a candidate `{`.
struct CandidateObject {
    map: Map<String, Value>,
    /// Offset of its `{`.
    start: usize,
    /// Offset just past where reading it stopped.
    end: usize,
    /// What it came wrapped in: a doubled (or tripled) root `{{ … }}`, a fence in braces.
    wrapper: Wrapper,
    /// Each kind of repair made while reading it, with its count, in the order first made.
    repairs_counted: Vec<(RepairKind, u32)>,
    /// What was appended to complete output that was cut off, innermost first.
    closers: String,
}

/// What trying each `{` of a region came to.
enum BraceScan {
    Found(CandidateObject),
    /// No object; the most promising failure and how far it read.
    NotFound(Option<(ReadFailure, usize)>),
    /// A verdict that ends the search (a top-level array, nesting too deep).
    Refused(ReadFailure),
}

/// An object found by [`ObjectSearch::find_json_object`], with what was repaired and ignored.
pub(super) struct FoundObject {
    pub(super) map: Map<String, Value>,
    pub(super) repairs: Vec<String>,
    pub(super) warnings: Vec<String>,
    /// Offset of the object's `{`.
    pub(super) start: usize,
    /// Offset just past where reading it stopped (its `}`, or the cut): what the text kept
    /// beside the call starts from (the accounting test holds the reader to it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) end: usize,
    /// How many more objects stand beside it: following it directly, or in the text around it.
    pub(super) more: usize,
}

/// Keeps in `best` whichever failure read further before it failed.
fn keep_furthest_failure(
    best: &mut Option<(ReadFailure, usize)>,
    other: Option<(ReadFailure, usize)>,
) {
    if let Some((f, c)) = other
        && best.as_ref().is_none_or(|(_, bc)| c > *bc)
    {
        *best = Some((f, c));
    }
}

/// The search for the one call in the whole (decoded) input.
pub(super) struct ObjectSearch<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    reader: JsonReader<'a>,
    /// Bytes read by failed attempts so far.
    failed_work: usize,
    /// Past this, failed attempts no longer retry from the next `{` inside
    /// what they read, which keeps the whole search linear.
    failed_work_budget: usize,
}

impl<'a> ObjectSearch<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        ObjectSearch {
            text,
            bytes: text.as_bytes(),
            reader: JsonReader::new(text),
            failed_work: 0,
            failed_work_budget: 4 * text.len() + 4096,
        }
    }

    /// Finds and reads the object in `from..to`: first inside code fences,
    /// then anywhere.
    pub(super) fn find_json_object(
        &mut self,
        from: usize,
        to: usize,
    ) -> Result<FoundObject, ReadFailure> {
        let b = self.bytes;
        let mut best = None;
        // Fences are looked for only when the region does not itself start
        // with the value (whose strings may hold fenced code).
        let first = skip_whitespace(b, from, to);
        let fenced = find_bytes(b, b"```", from, to).is_some();
        let mut open = if fenced && first < to && b[first] != b'{' && b[first] != b'[' {
            find_fence_at_line_start(b, from, to)
        } else {
            None
        };
        while let Some(o) = open {
            let mut cs = o + 3;
            while cs < to && is_fence_tag_byte(b[cs]) {
                cs += 1;
            }
            let close = find_bytes(b, b"```", cs, to);
            match self.try_each_brace(cs, close.unwrap_or(to), to, true) {
                BraceScan::Found(f) => {
                    return self.finish_candidate(f, Some((o, cs)), from, to);
                }
                BraceScan::Refused(e) => return Err(e),
                BraceScan::NotFound(e) => keep_furthest_failure(&mut best, e),
            }
            if self.failed_work > self.failed_work_budget {
                break;
            }
            open = close.and_then(|c| find_fence_at_line_start(b, c + 3, to));
        }
        match self.try_each_brace(from, to, to, fenced) {
            BraceScan::Found(f) => self.finish_candidate(f, None, from, to),
            BraceScan::Refused(e) => Err(e),
            BraceScan::NotFound(e) => {
                keep_furthest_failure(&mut best, e);
                Err(best.map_or_else(
                    || ReadFailure::new(MSG_NO_OBJECT, skip_whitespace(b, from, to)),
                    |(f, _)| f,
                ))
            }
        }
    }

    /// Tries each `{` in `from..to` in turn (reading up to `limit`).
    fn try_each_brace(&mut self, from: usize, to: usize, limit: usize, fence: bool) -> BraceScan {
        let b = self.bytes;
        self.reader.limit = limit;
        self.reader.stop_at_fence = fence;
        let mut best: Option<(ReadFailure, usize)> = None;
        let mut scan_from = from;
        let first = skip_whitespace(b, from, to);
        if first < to && b[first] == b'[' {
            self.reader.restart_at(first);
            match self.reader.read_value(0) {
                Ok(array) => {
                    let after = self.reader.pos;
                    // An array before prose may be prose (`[1] Here it is: {…}`); one that
                    // holds an object, or that another value follows, is the JSON itself
                    // (`[{…}][{…}]`), and reading an object after it would drop it.
                    let holds_object = array
                        .as_array()
                        .is_some_and(|items| items.iter().any(Value::is_object));
                    let next = skip_whitespace(b, after, to);
                    if holds_object
                        || find_byte(b, b'{', after, to).is_none()
                        || matches!(b.get(next), Some(b'{' | b'[' | b','))
                    {
                        return BraceScan::Refused(ReadFailure::new(MSG_TOP_ARRAY, first));
                    }
                    scan_from = after;
                }
                Err(f) if f.too_deep => return BraceScan::Refused(f),
                Err(f) => {
                    let c = f.offset.max(first + 1) - first;
                    self.failed_work += c;
                    best = Some((f, c));
                }
            }
        }
        // An empty `{}` inside prose is more likely prose than the call: keep
        // it only if no non-empty object follows.
        let mut empty_in_prose: Option<CandidateObject> = None;
        let mut next = find_byte(b, b'{', scan_from, to);
        while let Some(p) = next {
            match self.reader.read_root(p) {
                Ok((map, wrapper)) => {
                    let found = CandidateObject {
                        map,
                        start: p,
                        end: self.reader.pos.max(p + 1),
                        wrapper,
                        repairs_counted: self.reader.repairs_counted(),
                        closers: std::mem::take(&mut self.reader.closers),
                    };
                    if !found.map.is_empty() || !has_non_whitespace(b, from, p) {
                        return BraceScan::Found(found);
                    }
                    next = find_byte(b, b'{', found.end, to);
                    empty_in_prose.get_or_insert(found);
                }
                Err(f) if f.too_deep => return BraceScan::Refused(f),
                Err(f) => {
                    let fp = f.offset.max(p + 1);
                    let c = fp - p;
                    self.failed_work += c;
                    keep_furthest_failure(&mut best, Some((f, c)));
                    // Retry at the next `{` inside what this attempt read only
                    // while it looked like prose (never got to a `:`), and only
                    // within the work budget; otherwise go on past the failure.
                    // An object opening with a quoted key is JSON, not prose in braces.
                    let keyed = b.get(skip_whitespace(b, p + 1, to)) == Some(&b'"');
                    next = if self.reader.root_reached_colon
                        || keyed
                        || self.failed_work > self.failed_work_budget
                    {
                        // Not inside what failed: a `{` there is one of its values (its
                        // arguments), and taking that for the call would run another tool.
                        find_byte(b, b'{', bracketed_span_end(b, p, to).max(fp), to)
                    } else {
                        // A `{` right after another was already tried as the
                        // inner one of a doubled root.
                        let mut q = find_byte(b, b'{', p + 1, to);
                        while let Some(c) = q {
                            let k = b[..c].iter().rposition(|&x| !is_json_whitespace(x));
                            if k.is_none_or(|k| k < from || b[k] != b'{') {
                                break;
                            }
                            q = find_byte(b, b'{', c + 1, to);
                        }
                        q
                    };
                }
            }
        }
        match empty_in_prose {
            Some(found) => BraceScan::Found(found),
            None => BraceScan::NotFound(best),
        }
    }

    /// Turns a found object into the value, repairs and warnings.
    fn finish_candidate(
        &mut self,
        f: CandidateObject,
        fence: Option<(usize, usize)>,
        from: usize,
        to: usize,
    ) -> Result<FoundObject, ReadFailure> {
        let b = self.bytes;
        let mut repairs = Vec::new();
        let before = match fence {
            Some((open, cs)) => {
                repairs.push("removed a markdown code fence".to_owned());
                has_non_whitespace(b, from, open) || has_non_whitespace(b, cs, f.start)
            }
            None => has_non_whitespace(b, from, f.start),
        };
        if before {
            // A `{` in the text before the call opens what another reader (Agent Zero's own
            // takes the first `{`) would read as the call: two readings, refused.
            let prose_end = fence.map_or(f.start, |(open, _)| open);
            if let Some(p) = find_byte(b, b'{', from, prose_end) {
                return Err(ReadFailure::new(MSG_BRACE_BEFORE, p));
            }
            repairs.push("ignored text before the object".to_owned());
        }
        let mut extra = match fence {
            Some((open, cs)) => self.objects_in(from, open)? + self.objects_in(cs, f.start)?,
            None => self.objects_in(from, f.start)?,
        };
        match f.wrapper {
            Wrapper::None => {}
            Wrapper::Doubled => repairs.push("unwrapped a doubled root `{{ … }}`".to_owned()),
            Wrapper::FenceInBraces => {
                repairs.push("removed a markdown code fence inside the braces".to_owned());
            }
        }
        for &(kind, n) in &f.repairs_counted {
            repairs.push(kind.message(n));
        }
        let (more, after) = self.look_past_object(f.end, to, fence.is_some())?;
        extra += more;
        if after {
            repairs.push("ignored text after the object".to_owned());
        }
        if !f.closers.is_empty() {
            repairs.push(format!(
                "completed output that was cut off with `{}`",
                f.closers
            ));
        }
        let mut warnings = Vec::new();
        if extra > 0 {
            warnings.push(more_followed_warning(extra, "object", "objects"));
        }
        Ok(FoundObject {
            map: f.map,
            repairs,
            warnings,
            start: f.start,
            end: f.end,
            more: extra,
        })
    }

    /// Looks past the object: counts the objects that follow it, directly or in the text
    /// after it, and tells whether any other text follows. That text is kept as prose only
    /// when nothing in it is JSON the call could be missing: a value after a comma or an array
    /// there is refused, and so is an object there that cannot be read (it may be a second
    /// call); a readable one is counted, so that the caller never drops it in silence.
    fn look_past_object(
        &mut self,
        mut p: usize,
        to: usize,
        fenced: bool,
    ) -> Result<(usize, bool), ReadFailure> {
        let b = self.bytes;
        let mut fence_open = fenced;
        let mut extra = 0;
        self.reader.limit = to;
        loop {
            p = skip_spaces(self.text, p, to);
            if p >= to {
                return Ok((extra, false));
            }
            if fence_open && b[p..to].starts_with(b"```") {
                fence_open = false;
                p += 3;
                continue;
            }
            let comma = b[p] == b',';
            let q = if comma {
                skip_whitespace(b, p + 1, to)
            } else {
                p
            };
            if q < to && b[q] == b'{' {
                match self.reader.read_root(q) {
                    Ok(_) => {
                        extra += 1;
                        p = self.reader.pos.max(q + 1);
                        continue;
                    }
                    Err(f) if f.too_deep => return Err(f),
                    // After a comma it is a value; else braces of prose (`{it}`) maybe,
                    // which the scan of the text below judges.
                    Err(_) if comma => return Err(ReadFailure::new(MSG_OBJECT_AFTER, q)),
                    Err(_) => break,
                }
            }
            if q < to && (comma || b[q] == b'[') {
                return Err(ReadFailure::new(MSG_VALUE_AFTER, q.min(to)));
            }
            break;
        }
        // A fenced block of JSON in the text after the call is more of it, not prose.
        let mut f = p;
        while let Some(fence) = find_bytes(b, b"```", f, to) {
            let mut c = fence + 3;
            while c < to && is_fence_tag_byte(b[c]) {
                c += 1;
            }
            let c = skip_whitespace(b, c, to);
            if c < to && b[c] == b'[' {
                return Err(ReadFailure::new(MSG_VALUE_AFTER, c));
            }
            f = fence + 3;
        }
        extra += self.objects_in(p, to)?;
        Ok((extra, true))
    }

    /// How many objects stand in the text `from..to` beside the call (non-empty ones: `{}`
    /// in prose is prose). An object there that cannot be read but is one (it has a quoted
    /// key, or got as far as a `:`) is refused: it may be a second call, and dropping it
    /// with the prose would drop that call.
    fn objects_in(&mut self, from: usize, to: usize) -> Result<usize, ReadFailure> {
        let b = self.bytes;
        let (limit, fence) = (self.reader.limit, self.reader.stop_at_fence);
        self.reader.limit = to;
        let mut found = 0;
        let mut i = from;
        let mut result = Ok(());
        while let Some(open) = find_byte(b, b'{', i, to) {
            let keyed = matches!(b.get(skip_whitespace(b, open + 1, to)), Some(b'"' | b'\''));
            match self.reader.read_root(open) {
                Ok((map, _)) => {
                    found += usize::from(!map.is_empty());
                    i = self.reader.pos.max(open + 1);
                }
                Err(f) if f.too_deep => {
                    result = Err(f);
                    break;
                }
                Err(f) => {
                    self.failed_work += f.offset.max(open + 1) - open;
                    if keyed
                        || self.reader.root_reached_colon
                        || self.failed_work > self.failed_work_budget
                    {
                        result = Err(ReadFailure::new(MSG_OBJECT_AFTER, open));
                        break;
                    }
                    i = open + 1;
                }
            }
        }
        self.reader.limit = limit;
        self.reader.stop_at_fence = fence;
        result.map(|()| found)
    }
}
