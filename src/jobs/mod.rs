//! Layer 3: the jobs the binary runs. Each reads its input, asks the domain for decisions and
//! keeps state in the store; none prints or names the terminal.

pub mod evaluate;
pub mod gate;
pub mod health;
pub mod lint;
pub mod mcp;
pub mod own_files;
pub mod permit;
pub mod record;
