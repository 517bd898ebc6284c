//! The pixel store: a registered scan decoded once into tiles of raw RGB under
//! `$GEOMAP_ARTIFACT_ROOT/cache/pixels/<sha256>/`, keyed by the scan's content hash
//! and reused across calls and restarts; tools read windows from it instead of
//! decoding the whole scan on every call.
//!
//! Invariants:
//! - A scan's tiles appear whole or not at all: they are written into a
//!   `.partial-<sha256>-<pid>-<hex>` folder (the start-up sweep removes one
//!   whose writer is gone), the index last, then renamed into place.
//! - A tile is trusted only when its length and CRC-32 match the index; a
//!   missing, truncated or damaged tile makes the scan's tiles be built again.
//! - A window read holds only the tiles it crosses, one at a time, and the
//!   window itself: memory in proportion to the window, not the scan.
//! - The store stays within `GEOMAP_PIXEL_CACHE`: after a build, the scans used
//!   longest ago are removed (each read touches its index), never the one just
//!   built.
//! - A scan that does not decode is [`VisionError::Decode`]; a folder that cannot
//!   be read or written is [`VisionError::Storage`].

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::{Rgb, decode};
use crate::error::VisionError;
use geomap_model::data_root::PIXELS_DIR;

/// A tile's side in pixels (the last column and row of tiles may be narrower).
pub const TILE: u32 = 512;
/// The index inside a scan's folder, written last.
const INDEX_FILE: &str = "index.json";
/// The index format this server writes.
const INDEX_SCHEMA: &str = "geomap-pixels/v1";

/// The store's folder could not be read or written: [`VisionError::Storage`].
fn storage(error: std::io::Error) -> VisionError {
    VisionError::Storage(format!("the pixel store failed: {error}"))
}

/// A scan's tiles as built: its size and each tile's CRC-32, row by row.
#[derive(Debug, Serialize, Deserialize)]
struct Index {
    schema: String,
    width: u32,
    height: u32,
    tile: u32,
    crc32: Vec<u32>,
}

impl Index {
    fn columns(&self) -> u32 {
        self.width.div_ceil(self.tile)
    }

    /// The pixels `(x0, y0, x1, y1)` of tile `(column, row)`.
    fn bounds(&self, column: u32, row: u32) -> (u32, u32, u32, u32) {
        let (x0, y0) = (column * self.tile, row * self.tile);
        (x0, y0, (x0 + self.tile).min(self.width), (y0 + self.tile).min(self.height))
    }
}

/// Decoded scans on disk, within a byte budget.
#[derive(Debug)]
pub struct PixelStore {
    root: PathBuf,
    budget: u64,
}

impl PixelStore {
    /// The store under `artifact_root` (`GEOMAP_ARTIFACT_ROOT`, which replicas may share: a
    /// scan's tiles are written under a temporary name and renamed into place), kept within
    /// `budget` bytes (`GEOMAP_PIXEL_CACHE`).
    pub fn new(artifact_root: &Path, budget: u64) -> PixelStore {
        PixelStore { root: artifact_root.join(PIXELS_DIR), budget }
    }

    /// The pixels of `region` (whole pixels, `(x0, y0, x1, y1)`, clamped to the scan) of the scan
    /// whose content hash is `sha256`, read from its tiles; the first read of a scan decodes
    /// `source` (at most `max_pixels`) and builds them.
    pub fn window(&self, sha256: &str, source: &File, max_pixels: u64, region: (u32, u32, u32, u32)) -> Result<Rgb, VisionError> {
        let folder = self.root.join(sha256);
        if let Some(window) = read_window(&folder, region).map_err(storage)? {
            return Ok(window);
        }
        let _ = std::fs::remove_dir_all(&folder); // damaged or absent: never trusted, built again
        self.build(sha256, source, max_pixels)?;
        read_window(&folder, region).map_err(storage)?.ok_or_else(|| storage(std::io::Error::other("the tiles just built do not read back")))
    }

    /// Decodes `source` and writes its tiles, then evicts what the budget no longer holds.
    fn build(&self, sha256: &str, source: &File, max_pixels: u64) -> Result<(), VisionError> {
        let image = decode(source, max_pixels)?;
        std::fs::create_dir_all(&self.root).map_err(storage)?;
        let partial = self.root.join(geomap_model::data_root::partial_name(sha256));
        let written = write_tiles(&partial, &image);
        drop(image);
        if let Err(error) = written.and_then(|()| std::fs::rename(&partial, self.root.join(sha256))) {
            let _ = std::fs::remove_dir_all(&partial);
            if !self.root.join(sha256).join(INDEX_FILE).is_file() {
                return Err(storage(error)); // not another call's build of the same scan winning the race
            }
        }
        self.evict(sha256);
        Ok(())
    }

    /// Removes the scans used longest ago until the store fits its budget, sparing `keep`.
    fn evict(&self, keep: &str) {
        let Ok(entries) = std::fs::read_dir(&self.root) else { return };
        let mut scans: Vec<(SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
            .filter_map(|entry| {
                let used = std::fs::metadata(entry.path().join(INDEX_FILE)).and_then(|m| m.modified()).ok()?;
                Some((used, folder_bytes(&entry.path()), entry.path()))
            })
            .collect();
        let mut total: u64 = scans.iter().map(|(_, bytes, _)| bytes).sum();
        scans.sort_by_key(|(used, ..)| *used);
        for (_, bytes, path) in scans {
            if total <= self.budget {
                break;
            }
            if path.file_name().is_some_and(|name| name != keep) && std::fs::remove_dir_all(&path).is_ok() {
                tracing::info!(event = %"pixel_cache_evict", bytes, "removed a decoded scan to stay within GEOMAP_PIXEL_CACHE");
                total -= bytes;
            }
        }
    }
}

fn folder_bytes(folder: &Path) -> u64 {
    std::fs::read_dir(folder).map(|entries| entries.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum()).unwrap_or(0)
}

fn tile_name(column: u32, row: u32) -> String {
    format!("{row}-{column}.rgb")
}

/// Writes every tile of `image` into `folder` (created), then the index.
fn write_tiles(folder: &Path, image: &Rgb) -> std::io::Result<()> {
    std::fs::create_dir(folder)?;
    let mut index = Index { schema: INDEX_SCHEMA.to_owned(), width: image.width, height: image.height, tile: TILE, crc32: Vec::new() };
    for row in 0..image.height.div_ceil(TILE) {
        for column in 0..index.columns() {
            let tile = image.crop(index.bounds(column, row));
            index.crc32.push(crc32fast::hash(&tile.pixels));
            std::fs::write(folder.join(tile_name(column, row)), &tile.pixels)?;
        }
    }
    std::fs::write(folder.join(INDEX_FILE), serde_json::to_vec(&index).expect("an index serializes"))
}

/// `region` read from the tiles in `folder`, or `None` when they are absent or any tile it needs
/// is missing, short or damaged.
fn read_window(folder: &Path, region: (u32, u32, u32, u32)) -> std::io::Result<Option<Rgb>> {
    let index_path = folder.join(INDEX_FILE);
    let Ok(text) = std::fs::read(&index_path) else { return Ok(None) };
    let Ok(index) = serde_json::from_slice::<Index>(&text) else { return Ok(None) };
    let rows = index.height.div_ceil(index.tile);
    if index.schema != INDEX_SCHEMA || index.tile == 0 || index.crc32.len() != (index.columns() * rows) as usize {
        return Ok(None);
    }
    let (x0, y0) = (region.0.min(index.width), region.1.min(index.height));
    let (x1, y1) = (region.2.clamp(x0, index.width), region.3.clamp(y0, index.height));
    let width = x1 - x0;
    let mut window = Rgb { width, height: y1 - y0, pixels: vec![0; (width * (y1 - y0) * 3) as usize] };
    if width > 0 && y1 > y0 {
        let mut buffer = Vec::new();
        for row in y0 / index.tile..=(y1 - 1) / index.tile {
            for column in x0 / index.tile..=(x1 - 1) / index.tile {
                let (tx0, ty0, tx1, ty1) = index.bounds(column, row);
                let expected = ((tx1 - tx0) * (ty1 - ty0) * 3) as usize;
                buffer.clear();
                let read = File::open(folder.join(tile_name(column, row))).and_then(|file| file.take(expected as u64 + 1).read_to_end(&mut buffer));
                if read.is_err() || buffer.len() != expected || crc32fast::hash(&buffer) != index.crc32[(row * index.columns() + column) as usize] {
                    return Ok(None);
                }
                let tile_width = (tx1 - tx0) as usize;
                for y in ty0.max(y0)..ty1.min(y1) {
                    let (from_x, to_x) = (tx0.max(x0), tx1.min(x1));
                    let source = ((y - ty0) as usize * tile_width + (from_x - tx0) as usize) * 3;
                    let target = (((y - y0) * width + (from_x - x0)) * 3) as usize;
                    let length = ((to_x - from_x) * 3) as usize;
                    window.pixels[target..target + length].copy_from_slice(&buffer[source..source + length]);
                }
            }
        }
    }
    // Used now: evicted last. A data root that cannot be written still serves what it holds.
    let _ = File::options().write(true).open(&index_path).and_then(|index| index.set_modified(SystemTime::now()));
    Ok(Some(window))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scan whose every pixel says where it is, as a PNG.
    fn scan(dir: &Path, width: u32, height: u32) -> (File, Rgb) {
        let pixels: Vec<u8> = (0..height).flat_map(|y| (0..width).flat_map(move |x| [(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8])).collect();
        let image = Rgb { width, height, pixels };
        let path = dir.join("scan.png");
        ::image::save_buffer(&path, &image.pixels, width, height, ::image::ExtendedColorType::Rgb8).unwrap();
        (File::open(&path).unwrap(), image)
    }

    #[test]
    fn windows_read_from_the_tiles_equal_the_decoded_scan_across_tile_borders() {
        let dir = tempfile::tempdir().unwrap();
        let (file, image) = scan(dir.path(), 1300, 700);
        let store = PixelStore::new(dir.path(), 1 << 30);
        for region in [(0, 0, 1300, 700), (500, 500, 530, 530), (1290, 690, 1400, 800), (511, 0, 513, 1), (10, 10, 10, 20)] {
            let window = store.window("a", &file, 1 << 30, region).unwrap();
            let clamped = (region.0.min(1300), region.1.min(700), region.2.min(1300), region.3.min(700));
            assert!(window == image.crop(clamped), "{region:?}");
        }
        assert_eq!(std::fs::read_dir(dir.path().join(PIXELS_DIR).join("a")).unwrap().count(), 3 * 2 + 1, "six tiles and the index");
    }

    #[test]
    fn a_missing_truncated_or_damaged_tile_is_built_again_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let (file, image) = scan(dir.path(), 600, 600);
        let store = PixelStore::new(dir.path(), 1 << 30);
        store.window("a", &file, 1 << 30, (0, 0, 1, 1)).unwrap();
        let tile = dir.path().join(PIXELS_DIR).join("a").join(tile_name(1, 1));
        let damage: [&dyn Fn(); 3] =
            [&|| std::fs::remove_file(&tile).unwrap(), &|| std::fs::write(&tile, &std::fs::read(&tile).unwrap()[..100]).unwrap(), &|| {
                let mut bytes = std::fs::read(&tile).unwrap();
                bytes[7] ^= 0xff;
                std::fs::write(&tile, bytes).unwrap();
            }];
        for harm in damage {
            harm();
            assert!(store.window("a", &file, 1 << 30, (500, 500, 600, 600)).unwrap() == image.crop((500, 500, 600, 600)));
        }
    }

    #[test]
    fn the_scans_used_longest_ago_are_evicted_to_stay_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let (file, _) = scan(dir.path(), 100, 100); // 30,000 bytes of tiles
        let store = PixelStore::new(dir.path(), 70_000);
        for sha in ["a", "b"] {
            store.window(sha, &file, 1 << 30, (0, 0, 1, 1)).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        store.window("a", &file, 1 << 30, (0, 0, 1, 1)).unwrap(); // a is now the most recent
        std::thread::sleep(std::time::Duration::from_millis(20));
        store.window("c", &file, 1 << 30, (0, 0, 1, 1)).unwrap();
        let left: Vec<String> =
            std::fs::read_dir(dir.path().join(PIXELS_DIR)).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(left.contains(&"a".to_owned()) && left.contains(&"c".to_owned()) && !left.contains(&"b".to_owned()), "{left:?}");
    }

    #[test]
    fn a_scan_that_does_not_decode_is_a_decode_error_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.png"), b"\x89PNG\r\n\x1a\nnot really").unwrap();
        let store = PixelStore::new(dir.path(), 1 << 30);
        let outcome = store.window("bad", &File::open(dir.path().join("bad.png")).unwrap(), 1 << 30, (0, 0, 1, 1));
        assert!(matches!(outcome, Err(VisionError::Decode(_))), "{:?}", outcome.err());
        assert_eq!(std::fs::read_dir(dir.path().join(PIXELS_DIR)).map_or(0, |entries| entries.count()), 0);
    }
}
