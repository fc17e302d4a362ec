//! The bounded queue between a side's readers and the one thread that writes to it. Readers
//! of the other side wait when it is full, so a side that stops reading slows down only what
//! is sent to it, and memory stays bounded; metagate's own small requests never wait.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Condvar, Mutex, MutexGuard};

/// How much a queue holds before a relayed message waits for room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub(crate) messages: usize,
    pub(crate) bytes: usize,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            messages: 1024,
            bytes: 16 << 20,
        }
    }
}

/// The queue was closed: its writer is gone (the side stopped reading for good).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed;

pub(crate) struct Queue {
    state: Mutex<State>,
    /// Signalled when a message arrives or the queue closes.
    filled: Condvar,
    /// Signalled when the writer takes messages or the queue closes.
    drained: Condvar,
    bounds: Bounds,
}

#[derive(Default)]
struct State {
    items: VecDeque<Vec<u8>>,
    bytes: usize,
    closed: bool,
    /// The most bytes held at once, for tests of the bound.
    most_bytes: usize,
}

impl Queue {
    pub(crate) fn new(bounds: Bounds) -> Queue {
        Queue {
            state: Mutex::default(),
            filled: Condvar::new(),
            drained: Condvar::new(),
            bounds,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A thread that panicked holding the lock left whole messages behind: go on with them.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a message (a whole line, its newline included), waiting while the queue is full.
    /// A message larger than the bound goes in alone, once the queue is empty.
    pub(crate) fn push(&self, message: Vec<u8>) -> Result<(), Closed> {
        let mut state = self.lock();
        while !state.closed
            && !state.items.is_empty()
            && (state.items.len() >= self.bounds.messages
                || state.bytes + message.len() > self.bounds.bytes)
        {
            state = self.drained.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        self.add(state, message)
    }

    /// Adds a message without waiting: for metagate's own requests, a handful at a time.
    pub(crate) fn push_now(&self, message: Vec<u8>) -> Result<(), Closed> {
        let state = self.lock();
        self.add(state, message)
    }

    fn add(&self, mut state: MutexGuard<'_, State>, message: Vec<u8>) -> Result<(), Closed> {
        if state.closed {
            return Err(Closed);
        }
        state.bytes += message.len();
        state.most_bytes = state.most_bytes.max(state.bytes);
        state.items.push_back(message);
        drop(state);
        self.filled.notify_one();
        Ok(())
    }

    /// Waits for messages and moves every one waiting into `into`; `false` once the queue is
    /// closed and empty.
    fn take(&self, into: &mut Vec<Vec<u8>>) -> bool {
        let mut state = self.lock();
        while state.items.is_empty() && !state.closed {
            state = self.filled.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.items.is_empty() {
            return false;
        }
        into.extend(state.items.drain(..));
        state.bytes = 0;
        drop(state);
        self.drained.notify_all();
        true
    }

    /// No more messages: the writer ends once it has written those queued, and every push
    /// (waiting or not) fails from now on.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.filled.notify_all();
        self.drained.notify_all();
    }

    /// Drops whatever is queued and closes: the side it was for is gone.
    fn abandon(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.items.clear();
        state.bytes = 0;
        drop(state);
        self.filled.notify_all();
        self.drained.notify_all();
    }

    /// The most bytes the queue held at once.
    #[cfg(test)]
    pub(crate) fn most_bytes(&self) -> usize {
        self.lock().most_bytes
    }

    /// Writes every message to `out` as it arrives, flushing whenever the queue runs empty,
    /// until the queue is closed and drained. A write that fails (the side is gone) abandons
    /// the queue, so nothing waits on it for ever, and is returned.
    pub(crate) fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut batch = Vec::new();
        while self.take(&mut batch) {
            let written = batch
                .iter()
                .try_for_each(|m| out.write_all(m))
                .and_then(|()| out.flush());
            batch.clear();
            if let Err(e) = written {
                self.abandon();
                return Err(e);
            }
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_full_queue_holds_relayed_messages_back_but_not_its_own() {
        let q = Arc::new(Queue::new(Bounds {
            messages: 2,
            bytes: 1 << 20,
        }));
        q.push(b"a\n".to_vec()).unwrap();
        q.push(b"b\n".to_vec()).unwrap();
        q.push_now(b"own\n".to_vec()).unwrap();
        let pusher = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || q.push(b"c\n".to_vec()))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!pusher.is_finished(), "waits for room");
        let mut out = Vec::new();
        let writer = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                let mut out = Vec::new();
                q.write_to(&mut out).map(|()| out)
            })
        };
        pusher.join().unwrap().unwrap();
        q.close();
        out.extend(writer.join().unwrap().unwrap());
        assert_eq!(out, b"a\nb\nown\nc\n");
        assert_eq!(q.push(b"late\n".to_vec()), Err(Closed));
    }

    #[test]
    fn a_side_that_is_gone_releases_those_waiting() {
        struct Gone;
        impl Write for Gone {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let q = Arc::new(Queue::new(Bounds {
            messages: 1,
            bytes: 1 << 20,
        }));
        q.push(b"a\n".to_vec()).unwrap();
        let pusher = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || q.push(b"b\n".to_vec()))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!pusher.is_finished(), "waits for room");
        q.abandon();
        assert_eq!(pusher.join().unwrap(), Err(Closed), "released");
        // A writer whose side is gone abandons its queue.
        let q = Queue::new(Bounds::default());
        q.push(b"a\n".to_vec()).unwrap();
        assert!(q.write_to(&mut Gone).is_err());
        assert_eq!(q.push(b"b\n".to_vec()), Err(Closed));
    }
}
