//! What the unit tests of every host crate share: settings for envelope tests,
//! the provider components `./dev` builds and the workplace's real upstream files, each found, or the test skipped with its
//! name and the reason (so `cargo test --workspace` passes on a clone with
//! nothing beside it).
//!
//! Under `./dev test` (`GEOMAP_REQUIRE_COMPONENTS=1`) the components are built
//! first, so a missing one fails the test instead of skipping it.

use std::path::{Path, PathBuf};

use crate::settings::Settings;

/// Where `cargo build --release --target wasm32-wasip2` puts the workspace's components.
fn component_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/wasm32-wasip2/release")
}

/// The folder holding the built components `files` (file stems such as `k2_rocks`), or `None`
/// after printing why `test` is skipped and the exact command that builds them.
pub fn components(test: &str, files: &[&str]) -> Option<PathBuf> {
    let folder = component_folder();
    let missing: Vec<&str> = files.iter().copied().filter(|file| !folder.join(format!("{file}.wasm")).is_file()).collect();
    if missing.is_empty() {
        return Some(folder);
    }
    let packages: Vec<String> = missing.iter().map(|file| format!("-p {}", file.replace('_', "-"))).collect();
    let reason =
        format!("{} not built in {}; build with: cargo build --release --target wasm32-wasip2 {}", missing.join(", "), folder.display(), packages.join(" "));
    assert!(std::env::var_os("GEOMAP_REQUIRE_COMPONENTS").is_none(), "{test}: {reason}");
    eprintln!("SKIPPED {test}: {reason}");
    None
}

/// The workplace's `shared/assets` folder when it holds `files`, or `None` after printing why
/// `test` is skipped (a clone with nothing beside it has no such folder).
pub fn shared_assets(test: &str, files: &[&str]) -> Option<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/assets");
    match files.iter().find(|file| !folder.join(file).is_file()) {
        None => Some(folder),
        Some(file) => {
            eprintln!("SKIPPED {test}: {} is absent (real upstream data beside the clone)", folder.join(file).display());
            None
        }
    }
}

/// Settings with two map roots (`/data/maps`, `/mnt/scans`) and the data root `/srv/geomap`, for
/// tests of envelopes and hints.
pub fn settings_with_two_roots() -> Settings {
    let mut settings = Settings::load(|name| (name == "GEOMAP_DATA_ROOT").then(|| "/srv/geomap".into())).unwrap();
    settings.map_roots = vec![PathBuf::from("/data/maps"), PathBuf::from("/mnt/scans")];
    settings
}
