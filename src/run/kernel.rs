//! What the running kernel can enforce, asked once per process. Landlock, seccomp and the
//! namespaces are Linux's: a build for another system has none of them, and `run` refuses
//! there, saying so.

/// What the running kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: i32,
}

impl Kernel {
    /// Asks the kernel, once per process.
    pub fn probe() -> Kernel {
        static KERNEL: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *KERNEL.get_or_init(|| Kernel {
            landlock_abi: landlock_abi(),
        })
    }

    /// Whether Landlock can enforce a file system boundary.
    pub fn has_landlock(&self) -> bool {
        self.landlock_abi >= 1
    }

    /// Whether Landlock restricts TCP (ABI 4 and later).
    pub fn has_tcp_rules(&self) -> bool {
        self.landlock_abi >= 4
    }

    /// Why this build cannot run commands at all: it is for a system other than Linux.
    #[cfg(not(target_os = "linux"))]
    pub fn unsupported() -> String {
        format!(
            "metagate run needs Linux's Landlock; this build is for {}",
            std::env::consts::OS
        )
    }
}

#[cfg(target_os = "linux")]
fn landlock_abi() -> i32 {
    super::confine::landlock_abi()
}

#[cfg(not(target_os = "linux"))]
fn landlock_abi() -> i32 {
    0
}
