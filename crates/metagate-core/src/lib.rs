//! Layer 1: the decisions. The policy model, the correction pipeline, the operator's checks
//! (grants among them), the events `record` appends, and the evolution pass. Pure: the clock,
//! the counts and the file system come in as values and traits.

pub mod correct;
pub mod enforce;
pub mod error;
pub mod events;
pub mod evolution;
pub mod grants;
pub mod policy;
