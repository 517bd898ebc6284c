//! The data root's layout: the folders every part writes under it, and the
//! names of work in progress that the start-up sweep recognises.
//!
//! Invariant: a temporary folder's name carries its writer's process ID, so
//! the sweep (`geomap_store::sweep`) removes it only once that process is gone.

/// Installed assets, one folder per asset id.
pub const ASSETS_DIR: &str = "assets";
/// The pixel store, one folder per scan's SHA-256.
pub const PIXELS_DIR: &str = "cache/pixels";

/// The name of a temporary folder for `name` (an asset id, a scan's hash), owned by this process:
/// `.partial-<name>-<pid>-<hex>`.
pub fn partial_name(name: &str) -> String {
    format!(".partial-{name}-{}-{}", std::process::id(), crate::random_hex(6))
}
