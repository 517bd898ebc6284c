//! The documents the tools store in the registry's `layouts` table, read back
//! typed: a layout (`geomap-layout/v1`, written by `geomap_process_image`) and
//! a reading (`geomap-text/v1`, written by `geomap_read_text`).
//!
//! Invariants: the one place that parses a stored document; each reader takes
//! only the fields its callers use (the documents may grow); a document that
//! is absent or does not parse is `artifact_not_found` (`unknown_artifact`), a
//! map with no layout yet is `no_layout`.

use serde::Deserialize;

use super::layout_words::{AgeSpan, AgeTermInfo, LithologyInfo};
use crate::mcp::ServerState;
use crate::mcp::adapter::{MapGone, ToolError};
use geomap_model::layout::PixelBox;

/// A stored layout, as `geomap_unit_at` and `geomap_read_text` read it.
#[derive(Debug, Deserialize)]
pub struct StoredLayout {
    /// The scan's width in pixels.
    pub width: u32,
    /// The scan's height in pixels.
    pub height: u32,
    /// The components found, best first.
    #[serde(default)]
    pub components: Vec<StoredComponent>,
    /// The legend entries, top to bottom per legend.
    #[serde(default)]
    pub legend_entries: Vec<StoredEntry>,
}

/// A component of a stored layout.
#[derive(Debug, Deserialize)]
pub struct StoredComponent {
    /// Its box in the scan's pixels.
    pub bbox: PixelBox,
}

/// A legend entry of a stored layout: its swatch colour and its unit's words.
#[derive(Debug, Deserialize)]
pub struct StoredEntry {
    /// The swatch's colour, `#rrggbb`, when one was read.
    pub colour_hex: Option<String>,
    /// The unit's code.
    pub code: Option<String>,
    /// The unit's description.
    pub description: Option<String>,
    /// The ages its description names, resolved.
    #[serde(default)]
    pub age_terms: Vec<AgeTermInfo>,
    /// The span of those ages, in Ma.
    pub age_ma: Option<AgeSpan>,
    /// The rock names its description names, resolved.
    #[serde(default)]
    pub lithology_terms: Vec<LithologyInfo>,
}

/// What every stored document lists: the files stored with it (all a resource URI may reach).
#[derive(Debug, Deserialize)]
struct StoredFiles {
    #[serde(default)]
    files: Vec<String>,
}

fn unknown(map_id: &str) -> ToolError {
    ToolError::MapNotFound { map_id: map_id.to_owned(), reason: MapGone::UnknownArtifact, registered_as: None }
}

fn parse<T: for<'a> Deserialize<'a>>(map_id: &str, document: &str) -> Result<T, ToolError> {
    serde_json::from_str(document).map_err(|_| unknown(map_id))
}

/// Layout `layout_id` of map `map_id`.
pub fn layout(state: &ServerState, map_id: &str, layout_id: &str) -> Result<StoredLayout, ToolError> {
    parse(map_id, &state.registry.layout(map_id, layout_id)?.ok_or_else(|| unknown(map_id))?)
}

/// The newest layout of map `map_id`, with its ID (`no_layout` before `geomap_process_image`).
pub fn newest_layout(state: &ServerState, map_id: &str) -> Result<(String, StoredLayout), ToolError> {
    let no_layout = || ToolError::MapNotFound { map_id: map_id.to_owned(), reason: MapGone::NoLayout, registered_as: None };
    let (layout_id, document) = state.registry.newest_layout(map_id)?.ok_or_else(no_layout)?;
    Ok((layout_id, parse(map_id, &document)?))
}

/// The files stored with layout or reading `id` of map `map_id`.
pub fn files(state: &ServerState, map_id: &str, id: &str) -> Result<Vec<String>, ToolError> {
    Ok(parse::<StoredFiles>(map_id, &state.registry.layout(map_id, id)?.ok_or_else(|| unknown(map_id))?)?.files)
}
