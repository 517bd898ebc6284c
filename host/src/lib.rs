//! Stratigraphic Amenity: an MCP server that lets AI agents work through
//! scanned geologic maps. See ARCHITECTURE.md for the code map.

pub mod assets;
pub mod detect;
pub mod errors;
pub mod georef;
pub mod http;
pub mod mcp;
pub mod media;
pub mod ocr;
pub mod onnx;
pub mod pixels;
pub mod providers;
pub mod registry;
pub mod roots;
pub mod settings;
pub mod sweep;
#[cfg(test)]
mod testing;
pub mod trace;

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
