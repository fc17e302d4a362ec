//! The system calls the command may not make, as seccomp filters (through `seccompiler`),
//! compiled before the command starts and loaded just before it is executed.
//!
//! Landlock decides files, TCP and signals; what it does not see is refused here: sockets of
//! other families (UDP, raw, packet, netlink sockets reach the network past Landlock's TCP
//! rules; Unix sockets by path reach daemons such as Docker's), io_uring (which opens sockets
//! without the `socket` call), and the calls that change the kernel or the namespaces
//! (modules, kexec, BPF, keyrings, mounts, new user namespaces).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Calls refused outright, whatever their arguments.
const REFUSED: &[i64] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_syslog,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
];

/// Namespace flags `clone` may not be given.
const NEW_NAMESPACES: [i32; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

fn arch() -> Result<TargetArch, String> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| format!("no seccomp filter for {}", std::env::consts::ARCH))
}

fn condition(
    arg: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<BpfProgram, String> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno.unsigned_abs()),
        arch()?,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// The filters for a command: `network` and `unix_sockets` say which socket families it may
/// open. Each refused call fails with `EPERM`, except `clone3`, which fails with `ENOSYS` so
/// that the C library falls back to `clone`, whose flags this filter can read.
pub fn filters(network: bool, unix_sockets: bool) -> Result<Vec<BpfProgram>, String> {
    let backend = |e: seccompiler::BackendError| e.to_string();
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in REFUSED {
        rules.insert(*call, Vec::new());
    }
    let mut clone = Vec::new();
    for flag in NEW_NAMESPACES {
        let flag = u64::from(flag.unsigned_abs());
        clone.push(
            SeccompRule::new(vec![
                condition(0, SeccompCmpOp::MaskedEq(flag), flag).map_err(backend)?,
            ])
            .map_err(backend)?,
        );
    }
    rules.insert(libc::SYS_clone, clone);
    let unix = u64::from(libc::AF_UNIX.unsigned_abs());
    let socket = match (network, unix_sockets) {
        (true, true) => None,
        // Everything but the network families... and Unix: only Unix is refused.
        (true, false) => Some(vec![
            SeccompRule::new(vec![condition(0, SeccompCmpOp::Eq, unix).map_err(backend)?])
                .map_err(backend)?,
        ]),
        (false, true) => Some(vec![
            SeccompRule::new(vec![condition(0, SeccompCmpOp::Ne, unix).map_err(backend)?])
                .map_err(backend)?,
        ]),
        (false, false) => Some(Vec::new()),
    };
    if let Some(socket) = socket {
        rules.insert(libc::SYS_socket, socket);
    }
    let refused = compile(rules, libc::EPERM)?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    let clone3 = compile(clone3, libc::ENOSYS)?;
    Ok(vec![refused, clone3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_combination_compiles() {
        for network in [false, true] {
            for unix in [false, true] {
                let f = filters(network, unix).unwrap();
                assert_eq!(f.len(), 2);
                assert!(f.iter().all(|p| !p.is_empty()));
            }
        }
    }
}
