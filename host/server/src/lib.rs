//! Stratigraphic Amenity's server: the edges over the application
//! (`geomap_app`): MCP over stdio and streamable HTTP (rmcp), and `batch`; the
//! adapter that turns every failure into an envelope, and the log. See
//! ARCHITECTURE.md for the code map.

pub mod adapter;
pub mod batch;
pub mod http;
pub mod log;
pub mod mcp;
