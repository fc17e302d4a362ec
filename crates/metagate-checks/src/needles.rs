//! Whether any of a few short strings occurs in a short text, ignoring ASCII case: one
//! table step a byte.
//!
//! The checks ask this of every command and path (does it name one of metagate's files,
//! could a deny glob match it), and the answer is nearly always no, so the search is a
//! dense Aho-Corasick automaton built once: byte classes reduced to the bytes the needles
//! hold, match states merged into one that never leaves, and a column that stays put, so a
//! shell command's quotes and backslashes can be skipped without copying it.
//!
//! It is built here, each state's row copied from its failure state's and its own edges
//! written over it, rather than read off the aho-corasick crate's automata: asking those for
//! every state and class was most of what a one-call `gate` process did at start.

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
    /// within [`MAX_CELLS`], or when a needle is empty (it would match everywhere).
    pub(crate) fn new<N: AsRef<[u8]>>(needles: &[N]) -> Option<Needles> {
        // Class 0 holds every byte no needle holds (in either case): from any state it leads
        // back to the start.
        let mut raw = [0u8; 256];
        let mut classes = 1usize;
        for &b in needles.iter().flat_map(|n| n.as_ref()) {
            let lower = b.to_ascii_lowercase();
            if raw[usize::from(lower)] == 0 {
                let class = u8::try_from(classes).ok()?;
                raw[usize::from(lower)] = class;
                raw[usize::from(lower.to_ascii_uppercase())] = class;
                classes += 1;
            }
        }
        let stay = classes;
        let stride = stay + 1;
        let mut unquoted = raw;
        for b in [b'\\', b'\'', b'"'] {
            unquoted[usize::from(b)] = u8::try_from(stay).ok()?;
        }

        // The trie of the needles, by class: `edges[state * classes + class]` is the child,
        // 0 for none (the start is no one's child).
        let mut edges: Vec<u32> = vec![0; classes];
        let mut ends: Vec<bool> = vec![false];
        for needle in needles {
            let mut state = 0usize;
            for &b in needle.as_ref() {
                let cell = state * classes + usize::from(raw[usize::from(b)]);
                if edges[cell] == 0 {
                    edges[cell] = u32::try_from(ends.len()).ok()?;
                    ends.push(false);
                    edges.resize(edges.len() + classes, 0);
                    if ends.len() * stride > MAX_CELLS {
                        return None;
                    }
                }
                state = edges[cell] as usize;
            }
            ends[state] = true;
        }
        if ends[0] {
            return None;
        }

        // Breadth first, so a state's failure state (shallower) has its row already: the row
        // is the failure state's, with the state's own edges written over it. A state is a
        // match when a needle ends there or at its failure state.
        let states = ends.len();
        let mut step: Vec<u32> = vec![0; states * classes];
        let mut fail: Vec<u32> = vec![0; states];
        let mut order: Vec<u32> = Vec::with_capacity(states);
        for class in 0..classes {
            let child = edges[class];
            step[class] = child;
            if child != 0 {
                order.push(child);
            }
        }
        let mut at = 0;
        while let Some(&state) = order.get(at) {
            at += 1;
            let state = state as usize;
            let failure = fail[state] as usize;
            ends[state] |= ends[failure];
            let (row, failure_row) = (state * classes, failure * classes);
            step.copy_within(failure_row..failure_row + classes, row);
            for class in 0..classes {
                let child = edges[row + class];
                if child != 0 {
                    fail[child as usize] = step[failure_row + class];
                    step[row + class] = child;
                    order.push(child);
                }
            }
        }

        // States keep their trie numbers (those of matches are never entered); the found
        // state comes last.
        let found = u32::try_from(states * stride).ok()?;
        let mut next: Vec<u32> = Vec::with_capacity((states + 1) * stride);
        // Fits: states * stride is at most MAX_CELLS.
        let number = |state: usize| (state * stride) as u32;
        for (state, row) in step.chunks_exact(classes).enumerate() {
            next.extend(row.iter().map(|&to| {
                if ends[to as usize] {
                    found
                } else {
                    number(to as usize)
                }
            }));
            next.push(number(state));
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

#[cfg(test)]
mod tests {
    use super::Needles;
    use proptest::prelude::*;

    /// What the screen must answer: a needle in `hay`, ignoring ASCII case.
    fn naive(needles: &[Vec<u8>], hay: &[u8]) -> bool {
        let hay = hay.to_ascii_lowercase();
        needles.iter().any(|n| {
            let n = n.to_ascii_lowercase();
            hay.windows(n.len()).any(|w| w == n.as_slice())
        })
    }

    fn without_quotes(hay: &[u8]) -> Vec<u8> {
        hay.iter()
            .copied()
            .filter(|b| !matches!(b, b'\\' | b'\'' | b'"'))
            .collect()
    }

    #[test]
    fn finds_overlapping_needles_in_any_case() {
        let screen = Needles::new(&["abc", "b", "/home/a/.config/metagate"]).unwrap();
        assert!(screen.occurs(b"xxaBx", false));
        assert!(screen.occurs(b"cat /HOME/A/.Config/metagate/x", false));
        assert!(screen.occurs(b"a'b'c", true));
        assert!(!screen.occurs(b"xyz /home/a/.config", false));
        assert!(screen.occurs_joined(b"xa", b"Bc"));
        assert!(Needles::new(&["", "a"]).is_none());
    }

    proptest! {
        #[test]
        fn answers_as_a_plain_search(
            needles in prop::collection::vec(prop::collection::vec(prop::sample::select(b"abAB/'\\x".to_vec()), 1..6), 1..6),
            hay in prop::collection::vec(prop::sample::select(b"abAB/'\\xyz".to_vec()), 0..40),
            split in 0usize..40,
        ) {
            let screen = Needles::new(&needles).unwrap();
            prop_assert_eq!(screen.occurs(&hay, false), naive(&needles, &hay));
            prop_assert_eq!(screen.occurs(&hay, true), naive(&needles, &without_quotes(&hay)));
            let split = split.min(hay.len());
            prop_assert_eq!(
                screen.occurs_joined(&hay[..split], &hay[split..]),
                naive(&needles, &hay)
            );
        }
    }
}
