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
/// ID), owned by this process on this machine: `.partial-<name>-<pid>-<hex>@<host>`.
pub fn partial_name(name: &str) -> String {
    format!(".partial-{name}-{}-{}@{}", std::process::id(), crate::random_hex(6), host_name())
}

/// This machine's name (the kernel's host name; empty when it cannot be read): on storage
/// several machines mount, a process ID means something only beside it.
pub fn host_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| std::fs::read_to_string("/proc/sys/kernel/hostname").map(|name| name.trim().to_owned()).unwrap_or_default())
}
