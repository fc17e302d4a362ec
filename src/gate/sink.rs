//! Where decisions go as they are made: the telemetry store ([`super::TelemetrySink`]), or
//! nowhere ([`NoSink`]); and what the policy checks may ask of it.

use super::Decision;
use metagate_core::enforce::{Facts, NoFacts};
use metagate_core::policy::Policy;

/// Why a sink could not make its decisions durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkError(pub(crate) String);

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Receives every decision before its output line is written, and tells the policy checks
/// what it knows (counts, prerequisites).
pub trait Sink {
    /// What the policy checks may ask.
    fn facts(&mut self) -> &mut dyn Facts;
    /// Milliseconds since the epoch, for the policy checks of the next call.
    fn now_ms(&self) -> i64;
    /// Whether [`Sink::record`] wants each line's latency (reading the clock costs a little).
    fn timed(&self) -> bool {
        true
    }
    /// Called once per decided line, in order, with the policy it was decided under.
    fn record(&mut self, policy: &Policy, decision: &Decision<'_>, latency_us: u64);
    /// Makes everything recorded so far durable; called before the lines are written.
    fn commit(&mut self) -> Result<(), SinkError>;
    /// Why the checks' questions failed since the last call (the checks' rejections only say
    /// that they did), for the operator's stderr.
    fn take_failures(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A sink that keeps nothing (`--no-telemetry`); limits and prerequisites cannot be counted.
/// Its clock goes on, so grants still expire in a long session.
pub struct NoSink {
    facts: NoFacts,
    clock: Clock,
}

/// Where a sink reads the time: milliseconds since the epoch.
enum Clock {
    /// One instant for every call (a one-call process, a test).
    Fixed(i64),
    /// Read at each call.
    Running(std::sync::Arc<dyn Fn() -> i64 + Send + Sync>),
}

impl NoSink {
    /// A sink whose every call is at `now_ms`.
    pub fn at(now_ms: i64) -> NoSink {
        NoSink {
            facts: NoFacts,
            clock: Clock::Fixed(now_ms),
        }
    }

    /// A sink that reads the time from `clock` at each call.
    pub fn with_clock(clock: std::sync::Arc<dyn Fn() -> i64 + Send + Sync>) -> NoSink {
        NoSink {
            facts: NoFacts,
            clock: Clock::Running(clock),
        }
    }
}

impl Sink for NoSink {
    fn facts(&mut self) -> &mut dyn Facts {
        &mut self.facts
    }
    fn now_ms(&self) -> i64 {
        match &self.clock {
            Clock::Fixed(now) => *now,
            Clock::Running(clock) => clock(),
        }
    }
    fn timed(&self) -> bool {
        false
    }
    fn record(&mut self, _: &Policy, _: &Decision<'_>, _: u64) {}
    fn commit(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}
