//! What the server keeps and checks on disk: the map registry (SQLite), the
//! allowed map roots (opened through `cap-std` handles), media sniffing and
//! limits, map bundles, and the start-up sweep of interrupted work.
//!
//! Invariant: nothing here decodes pixels, runs a model or speaks MCP.

pub mod media;
pub mod registry;
pub mod roots;
pub mod sweep;
