//! Whether any of a few short strings occurs in a short text, ignoring ASCII case: one
//! table step a byte.
//!
//! The checks ask this of every command and path (does it name one of metagate's files,
//! could a deny glob match it), and the answer is nearly always no, so the search is a
//! dense automaton built once: aho-corasick's, with its byte classes reduced to the bytes
//! the needles hold, its match states merged into one that never leaves, and a column that
//! stays put, so a shell command's quotes and backslashes can be skipped without copying it.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::{Anchored, dfa::DFA};
use rustc_hash::FxHashMap;

/// Tables larger than this are not built: the search falls back to saying "maybe".
const MAX_CELLS: usize = 1 << 16;

#[derive(Debug, Clone)]
pub(crate) struct Needles {
    /// The class of each byte as written.
    raw: [u8; 256],
    /// The same, with `\`, `'` and `"` in the class that stays put.
    unquoted: [u8; 256],
    /// The next state for each state and class, states numbered by their first cell (so a
    /// step is one addition); the start is 0.
    next: Vec<u32>,
    /// The state every match leads to, and never leaves.
    found: u32,
}

impl Needles {
    /// A screen for `needles` (matched ignoring ASCII case); None when it cannot be built
    /// within [`MAX_CELLS`].
    pub(crate) fn new<N: AsRef<[u8]>>(needles: &[N]) -> Option<Needles> {
        let dfa = DFA::builder()
            .ascii_case_insensitive(true)
            .prefilter(false)
            .build(needles.iter().map(AsRef::as_ref))
            .ok()?;
        // A byte no needle holds (in either case) takes every state where the start's
        // transition on it does, back to the start: one class holds all such bytes.
        let mut raw = [0u8; 256];
        let mut representatives = vec![None];
        for &b in needles.iter().flat_map(|n| n.as_ref()) {
            let lower = b.to_ascii_lowercase();
            if raw[usize::from(lower)] == 0 {
                let class = u8::try_from(representatives.len()).ok()?;
                representatives.push(Some(lower));
                raw[usize::from(lower)] = class;
                raw[usize::from(lower.to_ascii_uppercase())] = class;
            }
        }
        let other = (0..=255u8).find(|&b| raw[usize::from(b)] == 0);
        representatives[0] = other;
        let stay = representatives.len();
        let stride = stay + 1;
        let mut unquoted = raw;
        for b in [b'\\', b'\'', b'"'] {
            unquoted[usize::from(b)] = u8::try_from(stay).ok()?;
        }

        // Number the states breadth first, every match state as the one found state.
        let start = dfa.start_state(Anchored::No).ok()?;
        let mut order: Vec<StateID> = vec![start];
        let mut index: FxHashMap<StateID, usize> = FxHashMap::default();
        index.insert(start, 0);
        // The found state's number is known once all others are: its cells go last.
        let mut pending: Vec<(usize, StateID)> = Vec::new();
        let mut next: Vec<u32> = Vec::new();
        let mut at = 0;
        while let Some(&state) = order.get(at) {
            for representative in &representatives {
                let Some(b) = *representative else {
                    next.push(0);
                    continue;
                };
                let to = dfa.next_state(Anchored::No, state, b);
                if dfa.is_match(to) {
                    pending.push((next.len(), to));
                    next.push(0);
                    continue;
                }
                let known = index.len();
                let number = *index.entry(to).or_insert_with(|| {
                    order.push(to);
                    known
                });
                next.push(u32::try_from(number * stride).ok()?);
            }
            next.push(u32::try_from(at * stride).ok()?);
            at += 1;
            if next.len() > MAX_CELLS {
                return None;
            }
        }
        let found = u32::try_from(order.len() * stride).ok()?;
        for (cell, _) in pending {
            next[cell] = found;
        }
        next.extend(std::iter::repeat_n(found, stride));
        Some(Needles {
            raw,
            unquoted,
            next,
            found,
        })
    }

    /// Whether some needle occurs in `hay`, ignoring ASCII case; with `unquote`, in `hay`
    /// with its quotes and backslashes removed.
    pub(crate) fn occurs(&self, hay: &[u8], unquote: bool) -> bool {
        let classes = if unquote { &self.unquoted } else { &self.raw };
        self.run(0, hay, classes) == self.found
    }

    /// Whether some needle occurs in `first` and `second` joined, as written.
    pub(crate) fn occurs_joined(&self, first: &[u8], second: &[u8]) -> bool {
        let state = self.run(0, first, &self.raw);
        self.run(state, second, &self.raw) == self.found
    }

    /// The state after `hay` from `state`.
    fn run(&self, mut state: u32, hay: &[u8], classes: &[u8; 256]) -> u32 {
        for &b in hay {
            let cell = state as usize + usize::from(classes[usize::from(b)]);
            state = self.next.get(cell).copied().unwrap_or(self.found);
        }
        state
    }
}
