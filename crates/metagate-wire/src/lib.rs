//! Layer 0: reading and writing tool calls. Envelopes, arguments read lazily, the strict
//! scanner, lenient repair, bounded input lines, and what a correction changed.

pub mod args;
pub mod call;
pub mod correction;
pub mod dialects;
pub mod display;
pub mod document;
pub mod lines;
pub mod repair;
pub mod scan;
