//! Entering the boundary: what the command's process does to itself between `fork` and
//! `exec`, in this order: its bounds (rlimits); its mount namespace (covers and pins), when the
//! plan has mounts; the Landlock ruleset, which also sets `no_new_privs`, so no setuid or
//! file-capability program gains anything; every capability dropped from its bounding, ambient
//! and inheritable sets, so a command run by root keeps none across `exec`; the seccomp
//! filters; and every descriptor above 2 marked close-on-exec, so none the caller left open
//! (a store, a policy) reaches the command. Before all of it the process joins its pids cgroup,
//! when `run` has one (the process bound for root, whom `RLIMIT_NPROC` does not bind).
//!
//! A mount namespace's end costs the kernel an RCU grace period (milliseconds on a busy
//! machine), paid by the last process to leave it: were that the command, `run` would wait for
//! it before answering. So the child hands a descriptor of its namespace to `run` over a
//! socket, and the namespace ends when `run` lets that go, off the answer's way
//! ([`Handoff`]).
//!
//! This is the one module of the library that writes `unsafe`: `pre_exec` is unsafe by
//! definition, since the closure runs in a child forked from a process that may have had other
//! threads. Everything it needs is built before the fork (paths as C strings, the ruleset, the
//! filters), and it makes only system calls, which are async-signal-safe; an error is returned
//! as the `errno` it carries, which the standard library reports from the parent.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use landlock::RulesetCreated;
use seccompiler::BpfProgram;

use super::boundary::Mount;

/// A mount, as the child makes it.
struct MountCall {
    source: CString,
    target: CString,
    /// A cover: remounted read-only after the bind. Otherwise a writable folder or a pin,
    /// made writable again once the rest is read-only.
    read_only: bool,
}

/// A user namespace's maps, for a process that is not root (a mount namespace needs one).
struct UserMaps {
    uid_map: CString,
    gid_map: CString,
    content_uid: Vec<u8>,
    content_gid: Vec<u8>,
    setgroups: CString,
}

/// Everything the child applies, built before the fork.
pub struct Confinement {
    rlimits: Vec<(libc::__rlimit_resource_t, libc::rlim_t)>,
    mounts: Vec<MountCall>,
    user_maps: Option<UserMaps>,
    ruleset: Option<RulesetCreated>,
    filters: Vec<BpfProgram>,
    /// The working folder, entered again once the mounts are made: the one entered before
    /// lies on the mount beneath them.
    cwd: CString,
    /// Apply the kernel's boundary at all (off only for the tests' switch, in debug builds).
    confined: bool,
    /// The socket the child sends its mount namespace on (with mounts only).
    handoff: Option<RawFd>,
    /// The pids cgroup's `cgroup.procs`, open for writing: the child joins it first.
    join: Option<RawFd>,
}

/// The socket pair a command's process hands its mount namespace over, so that `run`, not the
/// command, holds the namespace last. [`Handoff::release`] lets it go on a thread of its own.
pub struct Handoff {
    /// The end the namespace's descriptor waits at, unread: closing it lets the namespace go.
    _ours: OwnedFd,
    theirs: OwnedFd,
}

impl Handoff {
    /// A pair of Unix datagram sockets, closed on `exec`.
    pub fn new() -> io::Result<Handoff> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: socketpair writes two descriptors into the array it is given.
        check(unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        })?;
        // SAFETY: both descriptors were just made, and nothing else owns them.
        Ok(unsafe {
            Handoff {
                _ours: OwnedFd::from_raw_fd(fds[0]),
                theirs: OwnedFd::from_raw_fd(fds[1]),
            }
        })
    }

    /// Closes both ends, and with them the namespace the command's process sent (its last
    /// holder, once the command and all it started have ended), on a thread of its own: the
    /// kernel's wait for the namespace's end then delays no answer. Where no thread can be
    /// started, here.
    pub fn release(self) {
        let _ = std::thread::Builder::new()
            .name("mount namespace end".into())
            .spawn(move || drop(self));
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("{} holds a NUL byte", path.display())))
}

/// What ties the command's process to `run`, outside the boundary.
pub struct Outside<'a> {
    /// The socket it hands its mount namespace over.
    pub handoff: Option<&'a Handoff>,
    /// The pids cgroup's `cgroup.procs`, which it joins (none: it starts inside).
    pub cgroup_procs: Option<RawFd>,
}

/// The bounds as rlimits.
pub struct Limits {
    /// Address space per process, in bytes.
    pub memory_bytes: u64,
    /// Processes of the user at once.
    pub processes: u64,
    /// CPU seconds per process (none: unbounded).
    pub cpu_secs: Option<u64>,
}

impl Confinement {
    /// The confinement for a plan. `cover` is the empty read-only file mounted over hidden
    /// files; `confined` false applies the bounds only.
    pub fn new(
        limits: &Limits,
        mounts: &[Mount],
        cover: &Path,
        ruleset: Option<RulesetCreated>,
        filters: Vec<BpfProgram>,
        confined: bool,
        outside: Outside<'_>,
    ) -> io::Result<Confinement> {
        let mut rlimits = vec![
            (libc::RLIMIT_AS, limits.memory_bytes as libc::rlim_t),
            (libc::RLIMIT_NPROC, limits.processes as libc::rlim_t),
            (libc::RLIMIT_CORE, 0),
        ];
        if let Some(secs) = limits.cpu_secs {
            rlimits.push((libc::RLIMIT_CPU, secs as libc::rlim_t));
        }
        let mut calls = Vec::with_capacity(mounts.len());
        for m in mounts {
            let (source, target, read_only) = match m {
                Mount::Cover(p) => (c_path(cover)?, c_path(p)?, true),
                Mount::Pin(p) | Mount::Writable(p) => (c_path(p)?, c_path(p)?, false),
            };
            calls.push(MountCall {
                source,
                target,
                read_only,
            });
        }
        let user_maps = if !mounts.is_empty() && nix::unistd::geteuid().as_raw() != 0 {
            let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
            Some(UserMaps {
                uid_map: CString::from(c"/proc/self/uid_map"),
                gid_map: CString::from(c"/proc/self/gid_map"),
                content_uid: format!("{uid} {uid} 1\n").into_bytes(),
                content_gid: format!("{gid} {gid} 1\n").into_bytes(),
                setgroups: CString::from(c"/proc/self/setgroups"),
            })
        } else {
            None
        };
        let cwd = c_path(&std::env::current_dir()?)?;
        Ok(Confinement {
            cwd,
            rlimits,
            mounts: calls,
            user_maps,
            ruleset,
            filters,
            confined,
            handoff: outside
                .handoff
                .filter(|_| !mounts.is_empty())
                .map(|h| h.theirs.as_raw_fd()),
            join: outside.cgroup_procs,
        })
    }

    /// Makes `command` enter the boundary when it starts.
    pub fn install(self, command: &mut Command) {
        let mut this = Some(self);
        // SAFETY: the closure runs in the forked child before `exec`. It only makes system
        // calls on memory built before the fork (C strings, the filters, the ruleset's
        // descriptor): nothing is allocated, no lock is taken. It runs once: `this` is taken.
        unsafe {
            command.pre_exec(move || match this.take() {
                Some(c) => c.enter(),
                None => Ok(()),
            });
        }
    }

    /// Runs in the child.
    fn enter(self) -> io::Result<()> {
        if let Some(procs) = self.join {
            // SAFETY: write on a descriptor opened before the fork and a static buffer. "0"
            // names the writer.
            let n = unsafe { libc::write(procs, b"0".as_ptr().cast(), 1) };
            if n != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        for (resource, value) in &self.rlimits {
            let limit = libc::rlimit {
                rlim_cur: *value,
                rlim_max: *value,
            };
            // SAFETY: a plain system call on a struct on the stack.
            if unsafe { libc::setrlimit(*resource, &limit) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if !self.confined {
            return Ok(());
        }
        if !self.mounts.is_empty() {
            enter_mount_namespace(self.user_maps.as_ref())?;
            for m in &self.mounts {
                bind(m)?;
            }
            read_only_but(&self.mounts)?;
            // SAFETY: chdir on a C string built before the fork.
            check(unsafe { libc::chdir(self.cwd.as_ptr()) })?;
            if let Some(socket) = self.handoff {
                // Only when the namespace ends depends on it: a failure leaves the end to the
                // command's exit, as without it.
                hand_over_namespace(socket);
            }
        }
        if let Some(ruleset) = self.ruleset {
            // Sets no_new_privs too.
            ruleset
                .restrict_self()
                .map_err(|_| io::Error::from_raw_os_error(libc::EPERM))?;
        } else {
            // SAFETY: prctl with integer arguments.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        drop_capabilities()?;
        for filter in &self.filters {
            seccompiler::apply_filter(filter)
                .map_err(|_| io::Error::from_raw_os_error(libc::EPERM))?;
        }
        // SAFETY: close_range with integer arguments; CLOEXEC keeps std's own error pipe
        // (already close-on-exec) working.
        if unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC as libc::c_uint,
            )
        } != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The kernel's Landlock ABI version, 0 where it has none (not built in, or not enabled).
pub fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset with a null attribute and the version flag only asks;
    // it makes no ruleset and returns no descriptor.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(abi).unwrap_or(0).max(0)
}

/// Sends a descriptor of this process's mount namespace on `socket` (in the child, after its
/// mounts).
fn hand_over_namespace(socket: RawFd) {
    // SAFETY: open, sendmsg and close on a static C string, a message and a control buffer on
    // the stack, laid out with the C library's own CMSG macros; the buffer is a union with
    // `cmsghdr` so that it is aligned as one.
    unsafe {
        let ns = libc::open(
            c"/proc/self/ns/mnt".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if ns < 0 {
            return;
        }
        #[repr(C)]
        union Control {
            _align: libc::cmsghdr,
            bytes: [u8; 64],
        }
        let mut control = Control { bytes: [0; 64] };
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: (&raw mut byte).cast(),
            iov_len: 1,
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = (&raw mut control).cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as _;
        let header = libc::CMSG_FIRSTHDR(&msg);
        if !header.is_null() {
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
            libc::CMSG_DATA(header)
                .cast::<libc::c_int>()
                .write_unaligned(ns);
            libc::sendmsg(socket, &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL);
        }
        libc::close(ns);
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A mount namespace of the child's own (and, for a user other than root, the user namespace
/// it needs, mapping the user to itself), its mounts private so nothing leaks back.
fn enter_mount_namespace(maps: Option<&UserMaps>) -> io::Result<()> {
    let flags = match maps {
        Some(_) => libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
        None => libc::CLONE_NEWNS,
    };
    // SAFETY: unshare with integer flags.
    check(unsafe { libc::unshare(flags) })?;
    if let Some(m) = maps {
        write_file(&m.setgroups, b"deny")?;
        write_file(&m.uid_map, &m.content_uid)?;
        write_file(&m.gid_map, &m.content_gid)?;
    }
    // SAFETY: mount with a static C string and null pointers, as mount(2) allows.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })
}

fn write_file(path: &CString, content: &[u8]) -> io::Result<()> {
    // SAFETY: open, write and close on a C string and a byte slice built before the fork.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, content.as_ptr().cast(), content.len());
        libc::close(fd);
        if n < 0 || n as usize != content.len() {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn bind(m: &MountCall) -> io::Result<()> {
    // SAFETY: mount(2) on C strings built before the fork.
    check(unsafe {
        libc::mount(
            m.source.as_ptr(),
            m.target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    })?;
    if m.read_only {
        // SAFETY: as above.
        check(unsafe {
            libc::mount(
                std::ptr::null(),
                m.target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                std::ptr::null(),
            )
        })?;
    }
    Ok(())
}

/// Makes every mount read-only, then the writable folders and pins writable again (covers
/// stay read-only). Device files stay writable on a read-only mount (/dev/null).
fn read_only_but(mounts: &[MountCall]) -> io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 0x1;
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr on a static C string and a struct of the kernel's layout, its
    // size passed with it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let writable = MountAttr {
        attr_set: 0,
        attr_clr: MOUNT_ATTR_RDONLY,
        propagation: 0,
        userns_fd: 0,
    };
    for m in mounts.iter().filter(|m| !m.read_only) {
        // SAFETY: as above; only this mount (no AT_RECURSIVE), only the read-only flag
        // cleared (nosuid, nodev and the like stay as they were).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                libc::AT_FDCWD,
                m.target.as_ptr(),
                0 as libc::c_uint,
                &writable as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The highest capability number the kernel may know; dropping one it does not know fails
/// with EINVAL, which ends the loop.
const CAP_LAST: libc::c_ulong = 63;

/// Empties the bounding set (which root's `exec` would otherwise refill the other sets from),
/// the ambient set and the inheritable set. A process that may not drop them (no
/// CAP_SETPCAP: not root) has none to lose in the bounding sense: its `exec` gains nothing
/// under no_new_privs.
fn drop_capabilities() -> io::Result<()> {
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
    for cap in 0..=CAP_LAST {
        // SAFETY: prctl with integer arguments.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc != 0 {
            let errno = io::Error::last_os_error().raw_os_error();
            if errno == Some(libc::EINVAL) {
                break;
            }
            if errno == Some(libc::EPERM) {
                // Not allowed to drop: the process holds no CAP_SETPCAP, so is not root.
                break;
            }
            return Err(io::Error::last_os_error());
        }
    }
    // The capability sets, version 3 (two 32-bit halves): effective and permitted kept for
    // what remains of this process, inheritable emptied.
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const V3: u32 = 0x2008_0522;
    let mut header = Header {
        version: V3,
        pid: 0,
    };
    let mut data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capget/capset on structs of the layout the kernel's version 3 takes.
    unsafe {
        if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        for d in &mut data {
            d.inheritable = 0;
        }
        if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
