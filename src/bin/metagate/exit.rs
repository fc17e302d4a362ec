//! The one place outcomes become exit statuses.

use std::io;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: the call passed or was corrected; the command did its job.
    Success,
    /// 1: the call was rejected (or, for checks, something was found).
    Rejected,
    /// 2: metagate itself could not run.
    Failure,
    /// Another program's status, passed on (`mcp` ends with its server's).
    Passed(u8),
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> ExitCode {
        ExitCode::from(match s {
            Status::Success => 0,
            Status::Rejected => 1,
            Status::Failure => 2,
            Status::Passed(code) => code,
        })
    }
}

/// A closed stdout (`metagate gate | head -1`) ends the program quietly, with status 0.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
