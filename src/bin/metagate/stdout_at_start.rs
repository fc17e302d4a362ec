//! Whether standard output was open when metagate started.
//!
//! `metagate gate >&-` starts with no descriptor 1. Before `main` runs, the standard library
//! opens /dev/null in its place (so that no file the program opens becomes descriptor 1 and
//! receives its answers), and from then on the answer would go there: lost, with status 0.
//! So the descriptor is looked at before the standard library starts, from a constructor the
//! loader runs (ELF `.init_array`, Mach-O `__mod_init_func`).
//!
//! The one place metagate writes `unsafe`: a constructor in a link section is unsafe by
//! definition, and no safe wrapper can ask about descriptor 1 without first borrowing it as
//! open. Both uses are reviewed below.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "illumos",
    target_os = "solaris"
))]
#[used]
#[unsafe(link_section = ".init_array")]
static LOOK: extern "C" fn() = look;

#[cfg(target_vendor = "apple")]
#[used]
#[unsafe(link_section = "__DATA,__mod_init_func")]
static LOOK: extern "C" fn() = look;

#[cfg(unix)]
extern "C" fn look() {
    // SAFETY: F_GETFD reads the flags of a descriptor number, touching no memory; it fails
    // (EBADF) when the descriptor is not open.
    let closed = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1;
    CLOSED.store(closed, Ordering::Relaxed);
}

/// Whether descriptor 1 was closed when the process started (false where this cannot be
/// told).
pub fn was_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}
