//! Media sniffing by magic bytes, header-only dimensions and size limits.
//!
//! Invariants: the type comes from the first bytes, never the file name; the
//! byte limit is checked from metadata before anything is read, the pixel
//! limit from the header before any pixel is decoded, so a hostile header
//! costs a few kilobytes of reading at most. A JSON map bundle carries no
//! pixels: it is read whole (under both the byte limit and [`MAX_BUNDLE_BYTES`])
//! and checked by [`bundle`].

pub mod bundle;

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The map formats this server registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum MediaType {
    /// Portable Network Graphics.
    #[serde(rename = "image/png")]
    Png,
    /// JPEG (JFIF/EXIF).
    #[serde(rename = "image/jpeg")]
    Jpeg,
    /// TIFF, GeoTIFF and BigTIFF.
    #[serde(rename = "image/tiff")]
    Tiff,
    /// A `geomap-map-bundle/v1` JSON file: a layout made elsewhere, no pixels.
    #[serde(rename = "application/vnd.geomap.map-bundle+json")]
    MapBundle,
}

impl MediaType {
    /// Every supported type.
    pub const SUPPORTED: [MediaType; 4] = [MediaType::Png, MediaType::Jpeg, MediaType::Tiff, MediaType::MapBundle];

    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Tiff => "image/tiff",
            MediaType::MapBundle => "application/vnd.geomap.map-bundle+json",
        }
    }

    /// The type with this MIME name.
    pub fn from_mime(mime: &str) -> Option<MediaType> {
        MediaType::SUPPORTED.into_iter().find(|media_type| media_type.mime() == mime)
    }

    /// True for a type with pixels to decode (every type but map bundles).
    pub fn has_pixels(self) -> bool {
        self != MediaType::MapBundle
    }
}

/// The largest map bundle read, whatever the byte limit.
pub const MAX_BUNDLE_BYTES: u64 = 64 << 20;

/// The limits a map must fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    /// Largest file, in bytes.
    pub max_bytes: u64,
    /// Largest image, in pixels.
    pub max_pixels: u64,
}

/// Which limit a file broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `GEOMAP_MAX_IMAGE_BYTES`.
    Bytes,
    /// `GEOMAP_MAX_IMAGE_PIXELS`.
    Pixels,
}

/// What the header says about a supported image.
#[derive(Debug, Clone)]
pub struct ImageHeader {
    /// Sniffed type.
    pub media_type: MediaType,
    /// Width in pixels.
    pub width: u64,
    /// Height in pixels.
    pub height: u64,
    /// The bundle itself, for a map bundle.
    pub bundle: Option<bundle::MapBundle>,
}

/// Why a file is not a map this server accepts.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// The magic bytes are not those of a supported type.
    #[error("the file is {detected}, not PNG, JPEG, TIFF or a map bundle")]
    Unsupported { detected: &'static str },
    /// JSON text that is not a valid `geomap-map-bundle/v1`.
    #[error("the map bundle is not valid: {0}")]
    InvalidBundle(#[from] bundle::BundleError),
    /// The map is a bundle, and `action` needs pixels.
    #[error("a map bundle has no pixels to {action}")]
    NoPixels { action: &'static str },
    /// The magic bytes are right but the header cannot be read.
    #[error("the {} header is damaged or truncated", .media_type.mime())]
    UnreadableHeader { media_type: MediaType },
    /// The file breaks a limit.
    #[error("the image is over the {limit:?} limit")]
    Oversize { limit: Limit, bytes: u64, width: Option<u64>, height: Option<u64>, limits: MediaLimits },
    /// Reading failed.
    #[error("reading the file failed: {0}")]
    Io(#[from] io::Error),
}

/// Sniffs `file`, checks the limits and reads the header's width and height.
pub fn inspect(file: &mut File, limits: MediaLimits) -> Result<ImageHeader, MediaError> {
    let bytes = file.metadata()?.len();
    file.seek(SeekFrom::Start(0))?;
    let mut magic = [0u8; 16];
    let read = read_up_to(file, &mut magic)?;
    let media_type = sniff(&magic[..read]).map_err(|detected| MediaError::Unsupported { detected })?;
    let oversize = |limit, width, height| MediaError::Oversize { limit, bytes, width, height, limits };
    if bytes > limits.max_bytes {
        return Err(oversize(Limit::Bytes, None, None));
    }
    if media_type == MediaType::MapBundle {
        return inspect_bundle(file);
    }
    file.seek(SeekFrom::Start(0))?;
    let size = imagesize::reader_size(BufReader::with_capacity(16 * 1024, &mut *file)).map_err(|error| match error {
        imagesize::ImageError::IoError(e) if e.kind() != io::ErrorKind::UnexpectedEof => MediaError::Io(e),
        _ => MediaError::UnreadableHeader { media_type },
    })?;
    let (width, height) = (size.width as u64, size.height as u64);
    if width == 0 || height == 0 {
        return Err(MediaError::UnreadableHeader { media_type });
    }
    if width.saturating_mul(height) > limits.max_pixels {
        return Err(oversize(Limit::Pixels, Some(width), Some(height)));
    }
    Ok(ImageHeader { media_type, width, height, bundle: None })
}

fn inspect_bundle(file: &mut File) -> Result<ImageHeader, MediaError> {
    let read = read_bundle(file)?;
    let (width, height) = (read.image.width as u64, read.image.height as u64);
    Ok(ImageHeader { media_type: MediaType::MapBundle, width, height, bundle: Some(read) })
}

/// Reads and checks the map bundle in `file` from its start (at most [`MAX_BUNDLE_BYTES`]).
pub fn read_bundle(file: &mut File) -> Result<bundle::MapBundle, MediaError> {
    let bytes = file.metadata()?.len();
    if bytes > MAX_BUNDLE_BYTES {
        let problem = format!("the file is {bytes} bytes; a map bundle is at most {MAX_BUNDLE_BYTES} bytes");
        return Err(bundle::BundleError { field: String::new(), problem }.into());
    }
    file.seek(SeekFrom::Start(0))?;
    let mut text = Vec::with_capacity(bytes as usize);
    file.read_to_end(&mut text)?;
    Ok(bundle::parse(&text)?)
}

fn read_up_to(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// The supported type the magic bytes name, or a short name of what they are.
fn sniff(head: &[u8]) -> Result<MediaType, &'static str> {
    const KNOWN: &[(&[u8], &str)] = &[
        (b"%PDF", "a PDF document"),
        (b"GIF8", "a GIF image"),
        (b"BM", "a BMP image"),
        (b"PK\x03\x04", "a ZIP archive"),
        (b"\x00\x00\x00\x0cjP  ", "a JPEG 2000 image"),
        (b"\xff\x4f\xff\x51", "a JPEG 2000 codestream"),
        (b"\x1f\x8b", "a gzip archive"),
        (b"<?xml", "an XML document"),
        (b"<svg", "an SVG image"),
        (b"[", "JSON text"),
    ];
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(MediaType::Png);
    }
    if head.starts_with(b"\xff\xd8\xff") {
        return Ok(MediaType::Jpeg);
    }
    if [b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"].iter().any(|m| head.starts_with(*m)) {
        return Ok(MediaType::Tiff);
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return Err("a WebP image");
    }
    if head.is_empty() {
        return Err("an empty file");
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    if text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        return Ok(MediaType::MapBundle);
    }
    Err(KNOWN.iter().find(|(magic, _)| head.starts_with(magic)).map_or("of an unknown type", |(_, name)| name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const ROOMY: MediaLimits = MediaLimits { max_bytes: 1 << 20, max_pixels: 1 << 40 };

    /// A PNG signature and IHDR chunk claiming `width`×`height`, with nothing after it.
    pub fn png_header(width: u32, height: u32) -> Vec<u8> {
        let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
        png.extend_from_slice(&width.to_be_bytes());
        png.extend_from_slice(&height.to_be_bytes());
        png.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
        png
    }

    fn file_with(bytes: &[u8]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        file
    }

    #[test]
    fn type_comes_from_magic_bytes() {
        let tiff = [b"II*\0".as_slice(), &[8, 0, 0, 0, 0, 0]].concat();
        assert_eq!(sniff(&png_header(3, 2)), Ok(MediaType::Png));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0rest"), Ok(MediaType::Jpeg));
        assert_eq!(sniff(&tiff), Ok(MediaType::Tiff));
        assert_eq!(sniff(b"%PDF-1.7"), Err("a PDF document"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Err("a WebP image"));
        assert_eq!(sniff(b""), Err("an empty file"));
        assert_eq!(sniff(b"hello"), Err("of an unknown type"));
        assert_eq!(sniff(b"\xef\xbb\xbf\n  {\"schema\""), Ok(MediaType::MapBundle));
        assert_eq!(sniff(b"[1, 2]"), Err("JSON text"));
    }

    #[test]
    fn header_dimensions_are_read_without_pixels() {
        let header = inspect(&mut file_with(&png_header(640, 480)), ROOMY).unwrap();
        assert_eq!((header.media_type, header.width, header.height), (MediaType::Png, 640, 480));
    }

    #[test]
    fn a_huge_claimed_size_is_refused_from_the_header() {
        let limits = MediaLimits { max_bytes: 1 << 20, max_pixels: 150_000_000 };
        let error = inspect(&mut file_with(&png_header(100_000, 100_000)), limits).unwrap_err();
        assert!(matches!(error, MediaError::Oversize { limit: Limit::Pixels, width: Some(100_000), .. }), "{error:?}");
    }

    #[test]
    fn the_byte_limit_comes_before_reading_the_header() {
        let limits = MediaLimits { max_bytes: 10, max_pixels: 1 << 40 };
        let error = inspect(&mut file_with(&png_header(4, 4)), limits).unwrap_err();
        assert!(matches!(error, MediaError::Oversize { limit: Limit::Bytes, width: None, .. }), "{error:?}");
    }

    #[test]
    fn a_truncated_header_is_unreadable_not_an_io_failure() {
        let error = inspect(&mut file_with(&png_header(4, 4)[..14]), ROOMY).unwrap_err();
        assert!(matches!(error, MediaError::UnreadableHeader { media_type: MediaType::Png }), "{error:?}");
    }

    #[test]
    fn sha256_covers_the_whole_file() {
        let digest = geomap_model::content_sha256(&mut file_with(b"abc")).unwrap();
        assert_eq!(digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
