//! The data root's layout: the folders every part writes under it (and under
//! the artifact root, which replicas may share), and the names of work in
//! progress that the start-up sweep recognises.
//!
//! Invariant: a temporary folder's name carries its writer's process ID and
//! machine, so the sweep (`geomap_store::sweep`) removes it only once that
//! process is gone (or, for another machine's, once it is long abandoned).

/// Installed assets, one folder per asset id.
pub const ASSETS_DIR: &str = "assets";
/// The pixel store, one folder per scan's SHA-256.
pub const PIXELS_DIR: &str = "cache/pixels";

/// The artifact root's folder of revision and layout folders, one folder per map.
pub const ARTIFACTS_DIR: &str = "artifacts";

/// The name of a temporary folder for `name` (an asset id, a scan's hash, a revision or layout
/// ID), owned by this process on this machine: `.partial-<name>-<pid>-<hex>@<machine>`.
pub fn partial_name(name: &str) -> String {
    format!(".partial-{name}-{}-{}@{}", std::process::id(), crate::random_hex(6), machine_name())
}

/// This machine, as far as process IDs go: the kernel's host name and the PID namespace
/// (`<host>.<namespace inode>`; containers sharing a host name each have their own process 1).
/// On storage several machines mount, a process ID means something only beside it.
pub fn machine_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|name| name.trim().to_owned()).unwrap_or_default();
        let namespace: String =
            std::fs::read_link("/proc/self/ns/pid").map(|link| link.to_string_lossy().chars().filter(char::is_ascii_digit).collect()).unwrap_or_default();
        format!("{host}.{namespace}")
    })
}
