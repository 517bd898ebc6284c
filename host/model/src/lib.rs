//! The plain data every part of Stratigraphic Amenity shares: error codes and
//! the `geomap-error/v1` envelope, the settings, the trace scope of a call, the
//! georeference's request and revision, the layout's vocabulary, the symbol
//! catalog, a sheet's scale, the data root's layout, and small helpers (hex,
//! file hashes and times).
//!
//! Invariant: nothing here does I/O beyond reading a file it is handed or the
//! settings' own sources; no GDAL, ONNX Runtime, wasmtime or MCP.

pub mod data_root;
pub mod errors;
pub mod georeference;
pub mod page;
pub mod progress;
pub mod scale;
pub mod settings;
pub mod symbols;
#[doc(hidden)]
pub mod testing;
pub mod trace;

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use sha2::{Digest, Sha256};

/// `bytes` as lowercase hex (hashes, trace IDs, map IDs).
pub fn lowercase_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Where a JSON value failed to deserialize, as a JSON pointer (`/points/1`),
/// ending at the missing field when one is missing; empty for the value itself.
pub fn json_pointer(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    use serde_path_to_error::Segment;
    let mut pointer: String = error
        .path()
        .iter()
        .filter_map(|segment| match segment {
            Segment::Map { key } => Some(format!("/{}", key.replace('~', "~0").replace('/', "~1"))),
            Segment::Seq { index } => Some(format!("/{index}")),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect();
    let message = error.inner().to_string();
    if let Some(name) = message.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()) {
        pointer.push_str(&format!("/{name}"));
    }
    pointer
}

/// `bytes` random bytes from the operating system's generator, as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("the operating system's random source is unavailable");
    lowercase_hex(&buffer)
}

/// The SHA-256 of everything in `file`, from its start, as lowercase hex.
pub fn content_sha256(file: &mut File) -> io::Result<String> {
    file.seek(SeekFrom::Start(0))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(lowercase_hex(&hasher.finalize()))
}

/// A file's modification time in nanoseconds since the epoch (as the registry stores it).
pub fn modified_ns(metadata: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    metadata.mtime().saturating_mul(1_000_000_000).saturating_add(metadata.mtime_nsec())
}

/// The colour of `#rrggbb` (either case).
pub fn parse_hex(colour: &str) -> Option<(u8, u8, u8)> {
    let digits = colour.strip_prefix('#').filter(|d| d.len() == 6 && d.is_ascii())?;
    let channel = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).ok();
    Some((channel(0)?, channel(2)?, channel(4)?))
}
