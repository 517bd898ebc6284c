//! Stratigraphic Amenity's server: MCP over stdio and streamable HTTP (rmcp),
//! the tools, the adapter that turns every domain error into an envelope, and
//! the log. The domains live in their own crates (`geomap_store`,
//! `geomap_georef`, `geomap_vision`, `geomap_providers`, `geomap_assets`, all
//! on `geomap_model`); see ARCHITECTURE.md for the code map.

pub mod batch;
pub mod http;
pub mod log;
pub mod mcp;
