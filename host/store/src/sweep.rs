//! Work in progress and its leftovers: a revision or layout folder is written
//! under a temporary name and renamed into place when whole ([`Staged`]); at
//! start, the temporary folders of writers that are gone are removed
//! ([`sweep`]).
//!
//! Invariants:
//! - A revision or layout folder at its final name is whole: its files were
//!   written and synced under `.partial-<id>-<pid>-<hex>@<machine>` beside it
//!   and the folder renamed into place (one rename, never over another
//!   folder); only then is it recorded. Files are never rewritten after that,
//!   so a folder on storage several replicas mount needs no lock.
//! - Nothing another live process may still be writing is touched, and no
//!   folder at its final name is ever removed: it is whole, and the registry
//!   that knows it may be another replica's, or one being restored. A
//!   temporary folder names its writer's process ID and machine (host name and
//!   PID namespace): one of this machine is removed once that process is gone;
//!   one of another machine once it is [`ABANDONED`] old.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use geomap_model::data_root::{ARTIFACTS_DIR, ASSETS_DIR, PIXELS_DIR, machine_name, partial_name};

/// A temporary folder of another machine's process is removed once unchanged this long.
pub const ABANDONED: Duration = Duration::from_secs(24 * 3600);

/// A revision or layout folder being written: files go into [`Staged::path`], a temporary folder
/// beside `target`, and [`Staged::publish`] renames it into place once they are all written.
/// Dropped unpublished, the temporary folder is removed.
#[derive(Debug)]
pub struct Staged {
    temp: PathBuf,
    target: PathBuf,
    published: bool,
}

impl Staged {
    /// A new temporary folder for `target` (created with its parents).
    pub fn create(target: &Path) -> io::Result<Staged> {
        let parent = target.parent().ok_or_else(|| io::Error::other("a folder without a parent"))?;
        let name = target.file_name().ok_or_else(|| io::Error::other("a folder without a name"))?.to_string_lossy();
        std::fs::create_dir_all(parent)?;
        let temp = parent.join(partial_name(&name));
        std::fs::create_dir(&temp)?;
        Ok(Staged { temp, target: target.to_owned(), published: false })
    }

    /// Where the files are written until the folder is published.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Syncs every file written, then renames the folder into place (`RENAME_NOREPLACE`: never
    /// over another folder, even an empty one) and syncs its parent, so the folder is whole on disk
    /// before the caller records it. Fails when `target` already exists.
    pub fn publish(mut self) -> io::Result<PathBuf> {
        for entry in std::fs::read_dir(&self.temp)? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                std::fs::File::open(entry.path())?.sync_all()?;
            }
        }
        std::fs::File::open(&self.temp)?.sync_all()?;
        let (cwd, flags) = (rustix::fs::CWD, rustix::fs::RenameFlags::NOREPLACE);
        match rustix::fs::renameat_with(cwd, &self.temp, cwd, &self.target, flags) {
            Ok(()) => {}
            // Storage without renameat2's flags (some network filesystems): check, then rename.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) if !self.target.exists() => std::fs::rename(&self.temp, &self.target)?,
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::EXIST) => {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{} already exists", self.target.display())));
            }
            Err(error) => return Err(error.into()),
        }
        self.published = true;
        if let Some(parent) = self.target.parent() {
            std::fs::File::open(parent)?.sync_all()?;
        }
        Ok(self.target.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_dir_all(&self.temp); // best effort: the sweep removes what is left
        }
    }
}

/// Whether process `pid` may still be writing: alive, and not this process (which has only just
/// started, so a folder naming its ID was left by an earlier process that had the same ID).
fn writer_alive(pid: u32) -> bool {
    pid != std::process::id() && Path::new("/proc").join(pid.to_string()).exists()
}

/// Who writes a temporary folder, from its name: the process ID, and the machine (none in the
/// names of earlier versions, which wrote only on their own machine).
fn partial_owner(name: &str) -> Option<(u32, Option<&str>)> {
    let rest = name.strip_prefix(".partial-")?;
    let (rest, host) = match rest.split_once('@') {
        Some((rest, host)) => (rest, Some(host)),
        None => (rest, None),
    };
    let mut parts = rest.rsplitn(3, '-');
    let (_hex, pid, _name) = (parts.next()?, parts.next()?, parts.next()?);
    Some((pid.parse().ok()?, host))
}

/// Whether the temporary folder `path` (named `name`) is abandoned: its writer, on this machine,
/// is gone; or, on another machine (or unnamed), it has not changed for [`ABANDONED`].
fn abandoned(name: &str, path: &Path) -> bool {
    match partial_owner(name) {
        Some((pid, None)) => !writer_alive(pid),
        Some((pid, Some(machine))) if machine == machine_name() => !writer_alive(pid),
        _ => unchanged_for(path, ABANDONED),
    }
}

/// Whether `path` has not been modified for `age`.
fn unchanged_for(path: &Path, age: Duration) -> bool {
    std::fs::metadata(path).and_then(|metadata| metadata.modified()).is_ok_and(|modified| modified.elapsed().is_ok_and(|elapsed| elapsed >= age))
}

/// Removes the leftovers of interrupted work: abandoned temporary folders under `data_root`'s
/// assets and `artifact_root`'s pixel store and revision and layout folders. Returns what was
/// removed.
pub fn sweep(data_root: &Path, artifact_root: &Path) -> Vec<PathBuf> {
    let children = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let name_of = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut holders = vec![data_root.join(ASSETS_DIR), artifact_root.join(PIXELS_DIR)];
    for map_dir in children(&artifact_root.join(ARTIFACTS_DIR)) {
        holders.extend([map_dir.join("layouts"), map_dir]);
    }
    let mut removed = Vec::new();
    for temp in holders.iter().flat_map(|dir| children(dir)) {
        let name = name_of(&temp);
        if name.starts_with(".partial-") && abandoned(&name, &temp) && std::fs::remove_dir_all(&temp).is_ok() {
            removed.push(temp);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn a_temporary_folder_names_its_owner_and_machine() {
        let name = partial_name("ics-chart");
        assert_eq!(partial_owner(&name), Some((std::process::id(), Some(machine_name()))));
        assert_eq!(partial_owner(".partial-rev_ab12-123-abcdef@node-7.cluster"), Some((123, Some("node-7.cluster"))));
        assert_eq!(partial_owner(".partial-ics-chart-123-abcdef"), Some((123, None)), "an earlier version's name");
        assert_eq!(partial_owner(".partial-ics-chart-abcdef"), None, "an older name without a process ID");
    }

    #[test]
    fn a_staged_folder_appears_whole_or_not_at_all() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("artifacts/map_1/rev_a");
        let staged = Staged::create(&target).unwrap();
        std::fs::write(staged.path().join("warped.tif"), b"whole").unwrap();
        assert!(!target.exists(), "nothing at the final name while it is written");
        assert_eq!(staged.publish().unwrap(), target);
        assert_eq!(std::fs::read(target.join("warped.tif")).unwrap(), b"whole");
        let again = Staged::create(&target).unwrap();
        let temp = again.path().to_owned();
        assert_eq!(again.publish().unwrap_err().kind(), io::ErrorKind::AlreadyExists, "never over another folder");
        assert!(!temp.exists(), "the refused folder is removed");
        std::fs::create_dir(root.path().join("artifacts/map_1/rev_empty")).unwrap();
        let over_empty = Staged::create(&root.path().join("artifacts/map_1/rev_empty")).unwrap();
        std::fs::write(over_empty.path().join("warped.tif"), b"whole").unwrap();
        assert_eq!(over_empty.publish().unwrap_err().kind(), io::ErrorKind::AlreadyExists, "not even over an empty one");
        let dropped = Staged::create(&root.path().join("artifacts/map_1/rev_b")).unwrap();
        let temp = dropped.path().to_owned();
        drop(dropped);
        assert!(!temp.exists() && !root.path().join("artifacts/map_1/rev_b").exists());
    }

    /// Sets `path`'s modification time `age` back.
    fn age(path: &Path, age: Duration) {
        std::fs::File::open(path).unwrap().set_modified(SystemTime::now() - age).unwrap();
    }

    #[test]
    fn only_the_leftovers_of_writers_that_are_gone_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let (data, shared) = (root.path().join("data"), root.path().join("shared"));
        let assets = data.join(ASSETS_DIR);
        let this_process = std::process::id(); // a folder naming it was left by an earlier process with its ID
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let alive = child.id();
        let host = machine_name();
        let folder = |parent: &Path, name: &str, old: Option<Duration>| {
            let dir = parent.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("warped.tif"), b"x").unwrap();
            if let Some(old) = old {
                age(&dir, old);
            }
            dir
        };
        let map = shared.join("artifacts/map_1");
        let layouts = map.join("layouts");
        let hour = Duration::from_secs(3600);
        let kept = [
            folder(&assets, &format!(".partial-ics-chart-{alive}-aaaaaa@{host}"), None),
            folder(&assets, "ics-chart", None),
            folder(&map, &format!(".partial-rev_live-{alive}-aaaaaa@{host}"), None),
            folder(&map, ".partial-rev_far-4194304-aaaaaa@another-machine", Some(2 * hour)), // not yet abandoned
            folder(&map, "rev_recorded", Some(48 * hour)),
            folder(&map, "rev_unknown_here", Some(48 * hour)), // whole: another registry's, or one being restored
            folder(&layouts, "lay_unknown_here", Some(48 * hour)),
        ];
        let gone = [
            folder(&assets, ".partial-ics-chart-4194304-bbbbbb", None),
            folder(&shared.join(PIXELS_DIR), &format!(".partial-abc123-4194304-cccccc@{host}"), None),
            folder(&map, &format!(".partial-rev_killed-4194304-dddddd@{host}"), None),
            folder(&layouts, &format!(".partial-lay_killed-{this_process}-eeeeee@{host}"), None),
            folder(&map, ".partial-rev_far-4194304-ffffff@another-machine", Some(25 * hour)),
        ];
        let mut removed = sweep(&data, &shared);
        child.kill().unwrap();
        child.wait().unwrap();
        removed.sort();
        let mut expected = gone.to_vec();
        expected.sort();
        assert_eq!(removed, expected);
        assert!(kept.iter().all(|dir| dir.join("warped.tif").exists()));
    }
}
