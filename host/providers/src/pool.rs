//! Warm instances: each provider's pool of idle instances, and the slots every instance holds.
//!
//! Invariants:
//! - A [`Pool`] belongs to one loaded provider: an instance never serves another provider (nor
//!   another load of the same file).
//! - An idle instance serves a call only if it was built with the same memory limit and the same
//!   mounts: for each asset its id, its folder, and the folder's device, inode, mtime and ctime
//!   ([`Mount`], one `stat` a call). The files directly in each folder (name, device, inode,
//!   size, mtime, ctime) are compared too when the instance's last comparison is
//!   `ProviderPool::revalidate` old, so a file rewritten in place is seen by calls from then on.
//!   Idle instances built on other mounts are dropped at the provider's next call.
//! - Idle instances are bounded: at most `idle_per_provider` per provider (the one idle the
//!   longest goes first); those unused for `idle_expiry` are dropped at their provider's next call.
//! - A slot is a semaphore permit an instance holds until its store is dropped, running or idle
//!   ([`Warm`] drops its store before its slot). A call that finds no slot free evicts the
//!   longest-idle instance of any provider; while any call waits, a finished instance gives its
//!   slot back instead of going idle ([`Pool::keep`], ordered with the waiter's count), so a call
//!   never waits for a slot an idle instance holds, only for running calls.
//! - This module never decides that an instance is fit to keep: the run hands it back only after a
//!   call that returned normally within every limit (`runtime.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::Store;

use geomap_model::settings::ProviderPool;

use crate::lock;
use crate::sandbox::{Sandbox, Watch};
use crate::wit::Plugin;

/// A store and the provider instance in it.
pub(crate) struct Instance {
    /// The store, with the instance's sandbox.
    pub(crate) store: Store<Sandbox>,
    /// The instance.
    pub(crate) plugin: Plugin,
}

/// What an instance was built with, to tell which later calls it may serve.
pub(crate) struct Fit {
    /// The mounts it was built with: it serves only calls whose mounts are these, unchanged.
    mounts: Vec<Mount>,
    /// Their files, as last compared, and when.
    files: Files,
    files_checked: Instant,
    /// The memory limit its limiter enforces.
    memory_bytes: usize,
}

/// An instance between calls, with what it was built with.
pub(crate) struct Warm {
    instance: Instance,
    fit: Fit,
    watch: Watch,
    idle_since: Instant,
    /// Declared last, so dropped after the store: a slot is free only once its instance is gone.
    slot: OwnedSemaphorePermit,
}

impl Warm {
    /// An instance whose call just returned normally, to keep.
    pub(crate) fn new(instance: Instance, fit: Fit, watch: Watch, slot: OwnedSemaphorePermit) -> Warm {
        Warm { instance, fit, watch, idle_since: Instant::now(), slot }
    }

    /// Its parts, for a call: the slot first (so whoever holds it declares it before the store).
    pub(crate) fn into_parts(self) -> (OwnedSemaphorePermit, Instance, Fit, Watch) {
        (self.slot, self.instance, self.fit, self.watch)
    }
}

/// Where a call's instance comes from.
pub(crate) enum Checkout {
    /// An idle instance fit for the call.
    Warm(Warm),
    /// A fresh instance is to be made; it may be kept after the call when this is `Some`.
    Fresh(Option<Fit>),
}

/// The instance slots of one runtime, and the pools of the providers linked in it.
pub(crate) struct Slots {
    /// One permit per instance slot, held by every instance, running or idle: a call waits for one
    /// rather than fail when all are in use.
    permits: Arc<Semaphore>,
    /// The pools of the providers linked here, for a call that needs a slot an idle instance holds.
    pools: Mutex<Vec<Weak<Pool>>>,
    /// Calls waiting for a slot: while there are any, a finished instance gives its slot back
    /// instead of going idle.
    waiting: AtomicUsize,
    sizes: ProviderPool,
}

impl Slots {
    /// `sizes.instance_slots` slots, and no pool yet.
    pub(crate) fn new(sizes: ProviderPool) -> Slots {
        Slots { permits: Arc::new(Semaphore::new(sizes.instance_slots as usize)), pools: Mutex::new(Vec::new()), waiting: AtomicUsize::new(0), sizes }
    }

    /// A new provider's pool, whose idle instances a call of any provider may evict.
    pub(crate) fn pool(&self) -> Arc<Pool> {
        let pool = Arc::new(Pool { idle: Mutex::new(Vec::new()), sizes: self.sizes });
        lock(&self.pools).push(Arc::downgrade(&pool));
        pool
    }

    /// A slot for a new instance: a free one, else one an idle instance gives up (the one idle the
    /// longest, of any provider), else the first a running call gives back. An idle instance never
    /// makes a call wait: once this call waits, finished instances give their slots back instead of
    /// going idle ([`Pool::keep`]), and every idle one there was has been evicted.
    pub(crate) async fn take(&self) -> OwnedSemaphorePermit {
        if let Ok(slot) = Arc::clone(&self.permits).try_acquire_owned() {
            return slot;
        }
        /// Counts this call among the waiting ones until it has a slot (or is cancelled).
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        // SeqCst with Pool::keep's load, and before any pool is locked: an instance that went idle
        // without seeing this call waiting is in its pool by the time the loop looks there.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        loop {
            if let Ok(slot) = Arc::clone(&self.permits).try_acquire_owned() {
                return slot;
            }
            if !self.evict_one() {
                break;
            }
        }
        Arc::clone(&self.permits).acquire_owned().await.expect("the slots are never closed")
    }

    /// Drops the instance idle the longest, of any provider; `false` when none is idle.
    fn evict_one(&self) -> bool {
        let pools: Vec<Arc<Pool>> = {
            let mut pools = lock(&self.pools);
            pools.retain(|pool| pool.strong_count() > 0);
            pools.iter().filter_map(Weak::upgrade).collect()
        };
        let oldest = pools.iter().filter_map(|pool| lock(&pool.idle).first().map(|warm| (warm.idle_since, pool))).min_by_key(|(since, _)| *since);
        let Some((_, pool)) = oldest else { return false };
        let evicted = {
            let mut idle = lock(&pool.idle);
            (!idle.is_empty()).then(|| idle.remove(0))
        };
        drop(evicted); // outside the lock: the slot is wiped as the store goes
        true
    }
}

/// One provider's idle instances, the most recently used last.
pub(crate) struct Pool {
    idle: Mutex<Vec<Warm>>,
    sizes: ProviderPool,
}

impl Pool {
    /// Where a call with `assets` mounted and `memory_bytes` of memory gets its instance: an idle
    /// one fit for it, or a fresh one, kept after the call only when `reuse` and its mounts and
    /// files could be read. The mounts and files are read here, before any folder is opened for a
    /// fresh instance: a change in between makes the next call's check fail, never pass.
    pub(crate) fn checkout(&self, assets: &[(String, PathBuf)], memory_bytes: usize, reuse: bool) -> Checkout {
        let Some(mounts) = reuse.then(|| mounts(assets)).flatten() else { return Checkout::Fresh(None) };
        let mut read = None;
        if let Some(mut warm) = self.take(&mounts, memory_bytes) {
            if warm.fit.files_checked.elapsed() < self.sizes.revalidate {
                return Checkout::Warm(warm);
            }
            let now = file_stamps(assets);
            if now.as_ref() == Some(&warm.fit.files) {
                warm.fit.files_checked = Instant::now();
                return Checkout::Warm(warm);
            }
            drop(warm); // a file changed in place: this instance may have read the earlier one
            read = Some(now);
        }
        let files = read.unwrap_or_else(|| file_stamps(assets));
        Checkout::Fresh(files.map(|files| Fit { mounts, files, files_checked: Instant::now(), memory_bytes }))
    }

    /// An idle instance built with `mounts` and `memory_bytes`, the most recently used. The others
    /// built with other mounts are stale (an asset changed) and dropped, as are those that sat unused
    /// for `idle_expiry` (the provider has a running instance now).
    fn take(&self, mounts: &[Mount], memory_bytes: usize) -> Option<Warm> {
        let now = Instant::now();
        let (found, dropped) = {
            let mut idle = lock(&self.idle);
            let found = idle.iter().rposition(|warm| warm.fit.mounts == mounts && warm.fit.memory_bytes == memory_bytes).map(|at| idle.remove(at));
            let (kept, dropped): (Vec<Warm>, Vec<Warm>) = std::mem::take(&mut *idle)
                .into_iter()
                .partition(|warm| warm.fit.mounts == mounts && now.duration_since(warm.idle_since) < self.sizes.idle_expiry);
            *idle = kept;
            (found, dropped)
        };
        drop(dropped); // outside the lock: each slot is wiped as its store goes
        found
    }

    /// Keeps `warm` for a later call, unless a call is waiting for a slot of `slots` (then its
    /// slot goes back at once). Beyond `idle_per_provider` the one idle the longest goes.
    pub(crate) fn keep(&self, slots: &Slots, warm: Warm) {
        let dropped = {
            let mut idle = lock(&self.idle);
            // Under the pool's lock, SeqCst with Slots::take's increment (see there).
            if slots.waiting.load(Ordering::SeqCst) > 0 {
                Some(warm)
            } else {
                idle.push(warm);
                (idle.len() > self.sizes.idle_per_provider).then(|| idle.remove(0))
            }
        };
        drop(dropped);
    }
}

/// One asset folder as a call mounts it, with the folder's identity and times: the installer swaps
/// a new copy in with a rename (another inode), and adding, removing or renaming a file (as most
/// editors save) changes the folder's times. Compared on every call: a warm instance built on an
/// earlier state is never handed a later call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    id: String,
    folder: PathBuf,
    stamp: Stamp,
}

/// What the host can see of the files directly in each mounted folder without reading them: a file
/// of an operator's own copy rewritten in place changes its stamp, not its folder's. Compared when
/// an instance's last comparison is `revalidate` old.
type Files = Vec<Vec<(std::ffi::OsString, Stamp)>>;

/// A file's or folder's identity and times (ctime too: no tool can set it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).ok()?;
        Some(Stamp {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }
}

/// The mounts of `assets` as they are now (one `stat` each); `None` when one cannot be read (the
/// call then gets a fresh instance that is not kept, and its mount most likely fails).
fn mounts(assets: &[(String, PathBuf)]) -> Option<Vec<Mount>> {
    assets.iter().map(|(id, folder)| Some(Mount { id: id.clone(), folder: folder.clone(), stamp: Stamp::of(folder)? })).collect()
}

/// The stamps of the files directly in each of `assets`' folders, by name; `None` when one cannot be read.
fn file_stamps(assets: &[(String, PathBuf)]) -> Option<Files> {
    assets
        .iter()
        .map(|(_, folder)| {
            let mut files = Vec::new();
            for entry in std::fs::read_dir(folder).ok()? {
                let path = entry.ok()?.path();
                files.push((path.file_name()?.to_owned(), Stamp::of(&path)?));
            }
            files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            Some(files)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_changes_with_a_swapped_folder_and_its_files_with_an_edit_in_place() {
        let base = tempfile::tempdir().unwrap();
        let folder = base.path().join("asset");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("a.txt"), "one").unwrap();
        let assets = [("asset".to_owned(), folder.clone())];
        let (mounted, files) = (mounts(&assets).unwrap(), file_stamps(&assets).unwrap());
        assert_eq!(mounts(&assets).unwrap(), mounted, "nothing changed");
        std::fs::write(folder.join("a.txt"), "two!").unwrap();
        assert_ne!(file_stamps(&assets).unwrap(), files, "rewritten in place: its size and times");
        std::fs::rename(&folder, base.path().join("old")).unwrap();
        std::fs::create_dir(&folder).unwrap();
        assert_ne!(mounts(&assets).unwrap(), mounted, "another folder under the same name");
        std::fs::remove_dir(&folder).unwrap();
        assert_eq!((mounts(&assets), file_stamps(&assets)), (None, None), "gone: nothing to keep an instance for");
    }
}
