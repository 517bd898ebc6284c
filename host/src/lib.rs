//! Stratigraphic Amenity: an MCP server that lets AI agents work through
//! scanned geologic maps. See ARCHITECTURE.md for the code map.

pub mod assets;
pub mod detect;
pub mod errors;
pub mod georef;
pub mod mcp;
pub mod media;
pub mod providers;
pub mod registry;
pub mod roots;
pub mod settings;
pub mod trace;

/// `bytes` as lowercase hex (hashes, trace IDs, map IDs).
pub fn lowercase_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
