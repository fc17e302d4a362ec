//! Link settings of the `metagate` binary.

fn main() {
    pack_relocations();
}

/// The binary is position-independent, so the loader fixes up some 19,000 pointers at each
/// start. Packed (`DT_RELR`, glibc 2.36 and later) their table shrinks from about 450 KiB
/// to a few KiB, and the loader reads and applies it in a fraction of the time.
/// `METAGATE_NO_RELR=1` builds without it, for a glibc older than 2.36.
fn pack_relocations() {
    println!("cargo::rerun-if-env-changed=METAGATE_NO_RELR");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && std::env::var_os("METAGATE_NO_RELR").is_none()
    {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
