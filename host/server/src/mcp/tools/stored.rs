//! The documents the tools store, each in its folder under the map's artifacts
//! and in its registry table, and read back typed: a layout (`geomap-layout/v1`,
//! written by `geomap_process_image`) and a reading (`geomap-text/v1`, written
//! by `geomap_read_text`; its words feed the label georeference's datum).
//!
//! Invariants: [`store`] writes the folder (marked as being written until the
//! registry records it) before the row, and removes it when either fails; the
//! one place that parses a stored document; each reader takes
//! only the fields its callers use (the documents may grow); a document that
//! is absent or does not parse is `artifact_not_found` (`unknown_artifact`), a
//! map with no layout yet is `no_layout`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::layout_words::{AgeSpan, AgeTermInfo, LithologyInfo};
use crate::mcp::ServerState;
use crate::mcp::adapter::{MapGone, ToolError};
use crate::mcp::uris::layout_dir;
use geomap_model::layout::PixelBox;
use geomap_store::registry::{Document, StoredDocument};
use geomap_store::sweep::Staged;
use geomap_vision::VisionError;
use geomap_vision::colour::hex;

/// A stored layout, as `geomap_unit_at` and `geomap_read_text` read it.
#[derive(Debug, Deserialize)]
pub struct StoredLayout {
    /// The title read, when one was.
    #[serde(default)]
    pub title: Option<String>,
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

impl StoredLayout {
    /// The legend entries whose swatch colour was read, in legend order; none is `no_layout`
    /// (nothing to compare the map's colours with).
    pub fn swatches(&self, map_id: &str) -> Result<Vec<Swatch<'_>>, ToolError> {
        let swatches: Vec<Swatch<'_>> = self
            .legend_entries
            .iter()
            .enumerate()
            .filter_map(|(index, entry)| {
                let colour = entry.colour_hex.as_deref().and_then(geomap_store::media::bundle::parse_hex)?;
                Some(Swatch {
                    unit: LegendUnit { legend_entry: index, code: entry.code.clone(), description: entry.description.clone(), colour_hex: hex(colour) },
                    entry,
                    colour,
                })
            })
            .collect();
        if swatches.is_empty() {
            return Err(ToolError::MapNotFound { map_id: map_id.to_owned(), reason: MapGone::NoLayout, registered_as: None });
        }
        Ok(swatches)
    }
}

/// A legend entry with a swatch colour.
pub struct Swatch<'a> {
    /// How the tools name it.
    pub unit: LegendUnit,
    /// The entry, with its unit's words.
    pub entry: &'a StoredEntry,
    /// Its swatch's colour.
    pub colour: (u8, u8, u8),
}

/// A legend unit as the tools' results name it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LegendUnit {
    /// Index into the layout's `legend_entries`.
    pub legend_entry: usize,
    /// The unit's code, when read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Its description, when read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its swatch's colour.
    pub colour_hex: String,
}

impl LegendUnit {
    /// Its code, else its description, else its place in the legend.
    pub fn name(&self) -> String {
        self.code.clone().or(self.description.clone()).unwrap_or_else(|| format!("legend entry {}", self.legend_entry))
    }
}

/// A component of a stored layout.
#[derive(Debug, Deserialize)]
pub struct StoredComponent {
    /// Its class (`main_map`, `legend`, …).
    #[serde(default)]
    pub class: String,
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
    /// The legend heading it is listed under, when it is.
    #[serde(default)]
    pub group: Option<String>,
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

/// The folder of `id` under map `map_id`'s artifacts, staged: written under a temporary name
/// until [`store`] publishes it.
pub fn stage(state: &ServerState, map_id: &str, id: &str) -> Result<Staged, ToolError> {
    Staged::create(&layout_dir(state, map_id, id)).map_err(|error| VisionError::Storage(format!("cannot create the folder of {id}: {error}")).into())
}

/// Writes `stored`'s document as `name` into `staged` (its folder, holding its other files), moves
/// the folder into place and records it in the registry. A failure before the move leaves nothing;
/// a map gone meanwhile takes the folder with it; a registry error leaves it (whole, perhaps recorded).
pub fn store(state: &ServerState, staged: Staged, name: &str, stored: &StoredDocument) -> Result<(), ToolError> {
    let published = std::fs::write(staged.path().join(name), &stored.document).and_then(|()| staged.publish());
    let dir = published.map_err(|error| VisionError::Storage(format!("cannot store {name}: {error}")))?;
    // On an error the folder stays: whole, and perhaps recorded (a commit whose answer was lost).
    let recorded = state.registry.add_document(stored)?;
    if !recorded {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(ToolError::MapNotFound { map_id: stored.map_id.clone(), reason: MapGone::UnknownId, registered_as: None });
    }
    Ok(())
}

/// Layout `layout_id` of map `map_id`.
pub fn layout(state: &ServerState, map_id: &str, layout_id: &str) -> Result<StoredLayout, ToolError> {
    parse(map_id, &state.registry.document(Document::Layout, map_id, layout_id)?.ok_or_else(|| unknown(map_id))?)
}

/// The newest layout of map `map_id`, with its ID (`no_layout` before `geomap_process_image`).
pub fn newest_layout(state: &ServerState, map_id: &str) -> Result<(String, StoredLayout), ToolError> {
    let no_layout = || ToolError::MapNotFound { map_id: map_id.to_owned(), reason: MapGone::NoLayout, registered_as: None };
    let (layout_id, document) = state.registry.newest_document(Document::Layout, map_id)?.ok_or_else(no_layout)?;
    Ok((layout_id, parse(map_id, &document)?))
}

/// A stored unit extraction, as `geomap_unit_at` reads it.
#[derive(Debug, Deserialize)]
pub struct StoredUnits {
    /// The layout it classified against.
    pub layout_id: String,
    /// The unit raster's extent in the scan's pixels.
    pub region: PixelBox,
    /// Its units: which legend entry each raster class is.
    pub units: Vec<StoredUnitClass>,
}

/// One class of a stored unit extraction.
#[derive(Debug, Deserialize)]
pub struct StoredUnitClass {
    /// Its value in the unit raster.
    pub class: u8,
    /// Its index into the layout's `legend_entries`.
    pub legend_entry: usize,
}

/// The newest unit extraction of map `map_id`, with its ID (none before `geomap_extract_units`).
pub fn newest_units(state: &ServerState, map_id: &str) -> Result<Option<(String, StoredUnits)>, ToolError> {
    match state.registry.newest_document(Document::Units, map_id)? {
        Some((units_id, document)) => Ok(Some((units_id, parse(map_id, &document)?))),
        None => Ok(None),
    }
}

/// A stored reading, as `geomap_georeference {from: "labels"}` reads it: the words of its lines.
#[derive(Debug, Deserialize)]
struct StoredReading {
    #[serde(default)]
    lines: Vec<StoredLine>,
}

/// One line of a stored reading.
#[derive(Debug, Deserialize)]
struct StoredLine {
    text: String,
}

/// The lines of the newest reading of map `map_id` (none before `geomap_read_text`).
pub fn newest_reading_lines(state: &ServerState, map_id: &str) -> Result<Vec<String>, ToolError> {
    match state.registry.newest_document(Document::Reading, map_id)? {
        Some((_, document)) => Ok(parse::<StoredReading>(map_id, &document)?.lines.into_iter().map(|line| line.text).collect()),
        None => Ok(Vec::new()),
    }
}

/// The files stored with layout, reading or unit extraction `id` of map `map_id` (one URI route serves them all).
pub fn files(state: &ServerState, map_id: &str, id: &str) -> Result<Vec<String>, ToolError> {
    let mut document = None;
    for kind in [Document::Layout, Document::Reading, Document::Units] {
        document = state.registry.document(kind, map_id, id)?;
        if document.is_some() {
            break;
        }
    }
    let document = document.ok_or_else(|| unknown(map_id))?;
    Ok(parse::<StoredFiles>(map_id, &document)?.files)
}
