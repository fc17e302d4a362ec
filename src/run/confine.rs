//! Entering the boundary: what the command's process does to itself between `fork` and
//! `exec`, in this order: its bounds (rlimits); its mount namespace (covers and pins), when the
//! plan has mounts; the Landlock ruleset, which also sets `no_new_privs`, so no setuid or
//! file-capability program gains anything; every capability dropped from its bounding, ambient
//! and inheritable sets, so a command run by root keeps none across `exec`; the seccomp
//! filters; and every descriptor above 2 marked close-on-exec, so none the caller left open
//! (a store, a policy) reaches the command.
//!
//! This is the one module of the library that writes `unsafe`: `pre_exec` is unsafe by
//! definition, since the closure runs in a child forked from a process that may have had other
//! threads. Everything it needs is built before the fork (paths as C strings, the ruleset, the
//! filters), and it makes only system calls, which are async-signal-safe; an error is returned
//! as the `errno` it carries, which the standard library reports from the parent.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
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
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("{} holds a NUL byte", path.display())))
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
