//! Layer 0: what argument values may hold. Pure functions of their input (and, for paths, an
//! injected file system): paths, shell commands, secrets to redact, and the shared screening
//! of short texts; and the running binary's file identity, which the shell check asks about.

pub mod host;
pub(crate) mod needles;
pub mod own_binary;
pub mod path;
pub mod program_files;
pub mod redact;
pub mod shell;
