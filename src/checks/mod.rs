//! Layer 0: what argument values may hold. Pure functions of their input (and, for paths, an
//! injected file system): paths, secrets to redact, and the shared screening of short texts.

pub mod host;
pub(crate) mod needles;
pub mod path;
pub mod redact;
