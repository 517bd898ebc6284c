//! Leftovers of interrupted work, removed at start: asset folders an install
//! never finished, pixel-store folders a build never finished, and revision or
//! layout folders the registry never recorded.
//!
//! Invariant: nothing another live process may still be writing is touched.
//! Work in progress says whose it is: an install's temporary folder carries its
//! process ID in its name (`.partial-<asset>-<pid>-<hex>`), and a revision or
//! layout folder holds a `.writing-<pid>` marker from its creation until the
//! registry has recorded it. Only folders whose writer is gone are removed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The marker's name for this process.
fn marker() -> String {
    format!(".writing-{}", std::process::id())
}

/// Creates `dir` (and its parents) with this process's marker in it: the folder is being written.
pub fn mark_writing(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(marker()), b"")
}

/// Removes this process's marker from `dir`: the registry has recorded what it holds.
pub fn unmark(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(marker()));
}

/// Whether process `pid` may still be writing: alive, and not this process (which has only just
/// started, so a folder naming its ID was left by an earlier process that had the same ID).
fn writer_alive(pid: u32) -> bool {
    pid != std::process::id() && Path::new("/proc").join(pid.to_string()).exists()
}

/// The process ID in a temporary asset folder's name, if it has one.
fn partial_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(".partial-")?;
    let mut parts = rest.rsplitn(3, '-');
    let (_hex, pid, _asset) = (parts.next()?, parts.next()?, parts.next()?);
    pid.parse().ok()
}

/// The writers named by the markers in `dir`.
fn marked_writers(dir: &Path) -> Vec<(PathBuf, Option<u32>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_prefix(".writing-").map(|pid| (entry.path(), pid.parse().ok()))
        })
        .collect()
}

/// Removes the leftovers under `data_root`; `recorded` holds every revision and layout ID the
/// registry knows. Returns what was removed.
pub fn sweep(data_root: &Path, recorded: &HashSet<String>) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let children = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let name_of = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for temp in children(&data_root.join(geomap_model::data_root::ASSETS_DIR)).into_iter().chain(children(&data_root.join(geomap_model::data_root::PIXELS_DIR)))
    {
        let name = name_of(&temp);
        if name.starts_with(".partial-") && !partial_owner(&name).is_some_and(writer_alive) && std::fs::remove_dir_all(&temp).is_ok() {
            removed.push(temp);
        }
    }
    for map_dir in children(&data_root.join("artifacts")) {
        let folders = children(&map_dir).into_iter().filter(|dir| name_of(dir).starts_with("rev_")).chain(children(&map_dir.join("layouts")));
        for folder in folders {
            let writers = marked_writers(&folder);
            if recorded.contains(&name_of(&folder)) {
                for (marker, pid) in writers {
                    if !pid.is_some_and(writer_alive) {
                        let _ = std::fs::remove_file(marker); // recorded just before its writer stopped
                    }
                }
            } else if !writers.iter().any(|(_, pid)| pid.is_some_and(writer_alive)) && std::fs::remove_dir_all(&folder).is_ok() {
                removed.push(folder);
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_model::data_root::partial_name;

    #[test]
    fn a_temporary_asset_folder_names_its_owner() {
        let name = partial_name("ics-chart");
        assert_eq!(partial_owner(&name), Some(std::process::id()));
        assert_eq!(partial_owner(".partial-ics-chart-123-abcdef"), Some(123));
        assert_eq!(partial_owner(".partial-ics-chart-abcdef"), None, "an older name without a process ID");
    }

    #[test]
    fn only_the_leftovers_of_writers_that_are_gone_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path();
        let assets = data.join(geomap_model::data_root::ASSETS_DIR);
        let this_process = std::process::id(); // a marker naming it was left by an earlier process with its ID
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let alive = child.id();
        for name in [format!(".partial-ics-chart-{alive}-aaaaaa"), ".partial-ics-chart-4194304-bbbbbb".to_owned(), "ics-chart".to_owned()] {
            std::fs::create_dir_all(assets.join(name)).unwrap();
        }
        let map = data.join("artifacts/map_1");
        let folder = |name: &str, writer: Option<u32>| {
            let dir = map.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("warped.tif"), b"x").unwrap();
            if let Some(pid) = writer {
                std::fs::write(dir.join(format!(".writing-{pid}")), b"").unwrap();
            }
            dir
        };
        let recorded_dir = folder("rev_recorded", Some(4194304));
        let kept = [folder("rev_writing", Some(alive)), folder("layouts/lay_writing", Some(alive)), recorded_dir.clone()];
        let gone = [folder("rev_orphan", None), folder("rev_killed", Some(4194304)), folder("layouts/lay_orphan", Some(this_process))];
        let recorded: HashSet<String> = ["rev_recorded".to_owned()].into();
        let mut removed = sweep(data, &recorded);
        child.kill().unwrap();
        child.wait().unwrap();
        removed.sort();
        let mut expected: Vec<PathBuf> = gone.to_vec();
        expected.push(assets.join(".partial-ics-chart-4194304-bbbbbb"));
        expected.sort();
        assert_eq!(removed, expected);
        assert!(kept.iter().all(|dir| dir.join("warped.tif").exists()));
        assert!(assets.join(format!(".partial-ics-chart-{alive}-aaaaaa")).exists() && assets.join("ics-chart").exists());
        assert!(!recorded_dir.join(".writing-4194304").exists(), "a recorded folder loses its stale marker");
    }
}
