//! The documents the use cases store, each in its folder under the map's
//! artifacts and in its registry table, and read back typed: a layout
//! (`geomap-layout/v1`, with the words it read beside it as `geomap-words/v1`),
//! a reading (`geomap-text/v1`) and a unit extraction (`geomap-units/v1`). The
//! words of the newest layout and of the readings are what the server has read
//! of a sheet: the label georeference looks there for the datum and the places
//! the sheet names.
//!
//! Invariants: [`App::store`] writes the folder (staged under a temporary name
//! until the registry records it) before the row, and removes it when either
//! fails; this is the one place that parses a stored document; each reader
//! takes only the fields its callers use (the documents may grow); a document
//! that is absent or does not parse is `artifact_not_found`
//! (`unknown_artifact`), a map with no layout yet is `no_layout`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_model::page::PixelBox;
use geomap_store::registry::{Document, StoredDocument};
use geomap_store::sweep::Staged;
use geomap_vision::VisionError;
use geomap_vision::colour::hex;
use geomap_vision::layout::symbols::SymbolEntry;
use geomap_vision::ocr::reader::TextLine;

use crate::terms::{AgeSpan, AgeTermInfo, LithologyInfo};
use crate::uris::layout_dir;
use crate::{App, AppError, MapGone};

/// A stored layout, as the use cases read it.
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
    /// The explanation's line and point symbols, each with its sample measured.
    #[serde(default)]
    pub symbol_entries: Vec<SymbolEntry>,
    /// When it was made (RFC 3339, UTC).
    #[serde(default)]
    pub created_at: String,
    /// What the sheet says about itself, when read.
    #[serde(default)]
    pub metadata: Option<StoredMetadata>,
    /// The models it was found with.
    #[serde(default)]
    pub models: Vec<StoredModel>,
}

/// What a stored layout read of the sheet's own metadata (the fields a TA1 `map_metadata` row holds).
#[derive(Debug, Default, Deserialize)]
pub struct StoredMetadata {
    /// The title.
    pub title: Option<StoredField<String>>,
    /// The authors, in the order printed.
    pub authors: Option<StoredField<Vec<String>>>,
    /// The year of publication.
    pub year: Option<StoredField<u32>>,
    /// The publisher.
    pub publisher: Option<StoredField<String>>,
    /// The series and number.
    pub series: Option<StoredField<String>>,
    /// The scale's `N` of `1:N`.
    pub scale: Option<StoredField<u64>>,
}

/// One metadata field as stored: its value and how directly the sheet says it.
#[derive(Debug, Deserialize)]
pub struct StoredField<T> {
    /// The value.
    pub value: T,
    /// 0–1.
    pub confidence: f64,
}

/// A model a layout was found with: its asset and the file's SHA-256.
#[derive(Debug, Deserialize)]
pub struct StoredModel {
    /// The asset's ID.
    pub asset: String,
    /// Its file's SHA-256.
    pub sha256: String,
}

impl StoredLayout {
    /// The legend entries whose swatch colour was read, in legend order; none is `no_layout`
    /// (nothing to compare the map's colours with).
    pub fn swatches(&self, map_id: &str) -> Result<Vec<Swatch<'_>>, AppError> {
        let swatches: Vec<Swatch<'_>> = self
            .legend_entries
            .iter()
            .enumerate()
            .filter_map(|(index, entry)| {
                let colour = entry.colour_hex.as_deref().and_then(geomap_model::parse_hex)?;
                Some(Swatch {
                    unit: LegendUnit { legend_entry: index, code: entry.code.clone(), description: entry.description.clone(), colour_hex: hex(colour) },
                    entry,
                    colour,
                })
            })
            .collect();
        if swatches.is_empty() {
            return Err(AppError::gone(map_id, MapGone::NoLayout));
        }
        Ok(swatches)
    }

    /// The box of its main map, when it has one.
    pub fn main_map(&self) -> Option<PixelBox> {
        self.components.iter().find(|component| component.class == "main_map").map(|component| component.bbox)
    }

    /// The cross sections whose letters were read: their boxes and letters.
    pub fn cross_sections(&self) -> Vec<(PixelBox, [String; 2])> {
        self.components.iter().filter(|c| c.class == "cross_section").filter_map(|c| Some((c.bbox, c.letters.clone()?))).collect()
    }
}

/// A legend entry with a swatch colour.
pub struct Swatch<'a> {
    /// How results name it.
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
    /// How sure the finding is, 0–1.
    #[serde(default)]
    pub score: Option<f64>,
    /// The words read in it.
    #[serde(default)]
    pub text: Option<String>,
    /// A cross section's letters (`A`, `A′`), when read.
    #[serde(default)]
    pub letters: Option<[String; 2]>,
}

/// A legend entry of a stored layout: its swatch colour and its unit's words.
#[derive(Debug, Deserialize)]
pub struct StoredEntry {
    /// The swatch's box in the scan's pixels.
    #[serde(default)]
    pub swatch: Option<PixelBox>,
    /// How sure the finding is, 0–1.
    #[serde(default)]
    pub score: Option<f64>,
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

/// What every stored document lists: the files stored with it (all a resource URI may reach).
#[derive(Debug, Deserialize)]
struct StoredFiles {
    #[serde(default)]
    files: Vec<String>,
}

/// The schema tag of the words a layout read, stored beside it.
pub const WORDS_SCHEMA: &str = "geomap-words/v1";
/// The file, in a layout's folder, its words are stored in.
pub const WORDS_FILE: &str = "words.json";
/// How many of a map's newest readings count as what the server has read of its sheet.
const READINGS_KEPT: usize = 50;

/// The words a layout read (the whole scan's with the text method, the title's and the legends'
/// with the detectors), stored beside it as [`WORDS_FILE`].
#[derive(Debug, Serialize, Deserialize)]
pub struct StoredWords {
    /// [`WORDS_SCHEMA`].
    pub schema: String,
    /// The regions read, in the scan's pixels.
    pub regions: Vec<PixelBox>,
    /// The score floor the lines were kept at.
    pub min_score: f64,
    /// The lines, in the scan's pixels.
    pub lines: Vec<TextLine>,
}

/// A stored reading, as what the server has read of a sheet: its lines.
#[derive(Debug, Deserialize)]
struct StoredReading {
    #[serde(default)]
    lines: Vec<TextLine>,
}

fn parse<T: for<'a> Deserialize<'a>>(map_id: &str, document: &str) -> Result<T, AppError> {
    serde_json::from_str(document).map_err(|_| AppError::gone(map_id, MapGone::UnknownArtifact))
}

impl App {
    /// The folder of `id` under map `map_id`'s artifacts, staged: written under a temporary name
    /// until [`App::store`] publishes it.
    pub fn stage(&self, map_id: &str, id: &str) -> Result<Staged, AppError> {
        Staged::create(&layout_dir(&self.settings.artifact_root, map_id, id))
            .map_err(|error| VisionError::Storage(format!("cannot create the folder of {id}: {error}")).into())
    }

    /// Writes `stored`'s document as `name` into `staged` (its folder, holding its other files),
    /// moves the folder into place and records it in the registry. A failure before the move leaves
    /// nothing; a map gone meanwhile takes the folder with it; a registry error leaves it (whole,
    /// perhaps recorded).
    pub fn store(&self, staged: Staged, name: &str, stored: &StoredDocument) -> Result<(), AppError> {
        let published = std::fs::write(staged.path().join(name), &stored.document).and_then(|()| staged.publish());
        let dir = published.map_err(|error| VisionError::Storage(format!("cannot store {name}: {error}")))?;
        // On an error the folder stays: whole, and perhaps recorded (a commit whose answer was lost).
        if !self.registry.add_document(stored)? {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(AppError::unknown_map(&stored.map_id));
        }
        Ok(())
    }

    /// Layout `layout_id` of map `map_id`.
    pub fn layout(&self, map_id: &str, layout_id: &str) -> Result<StoredLayout, AppError> {
        let document = self.registry.document(Document::Layout, map_id, layout_id)?.ok_or_else(|| AppError::gone(map_id, MapGone::UnknownArtifact))?;
        parse(map_id, &document)
    }

    /// The newest layout of map `map_id`, with its ID (`no_layout` before any layout was found).
    pub fn newest_layout(&self, map_id: &str) -> Result<(String, StoredLayout), AppError> {
        let (layout_id, document) = self.registry.newest_document(Document::Layout, map_id)?.ok_or_else(|| AppError::gone(map_id, MapGone::NoLayout))?;
        Ok((layout_id, parse(map_id, &document)?))
    }

    /// `layout_id`'s layout of map `map_id`, or its newest when `None`, with its ID.
    pub fn chosen_layout(&self, map_id: &str, layout_id: Option<&str>) -> Result<(String, StoredLayout), AppError> {
        match layout_id {
            Some(id) => Ok((id.to_owned(), self.layout(map_id, id)?)),
            None => self.newest_layout(map_id),
        }
    }

    /// The newest unit extraction of map `map_id`, with its ID (none before any extraction).
    pub fn newest_units(&self, map_id: &str) -> Result<Option<(String, StoredUnits)>, AppError> {
        match self.registry.newest_document(Document::Units, map_id)? {
            Some((units_id, document)) => Ok(Some((units_id, parse(map_id, &document)?))),
            None => Ok(None),
        }
    }

    /// The lines of map `map_id`'s newest readings, newest first (none before any); with the newest
    /// layout's words ([`App::newest_layout_words`]) they are what the server has read of its sheet.
    pub fn reading_lines(&self, map_id: &str) -> Result<Vec<TextLine>, AppError> {
        let mut lines = Vec::new();
        for (_, document) in self.registry.newest_documents(Document::Reading, map_id, READINGS_KEPT)? {
            lines.extend(parse::<StoredReading>(map_id, &document)?.lines);
        }
        Ok(lines)
    }

    /// The words the newest layout of map `map_id` stored beside it (none before a layout, for a
    /// map bundle's, or for one made before layouts stored their words).
    pub fn newest_layout_words(&self, map_id: &str) -> Result<Option<StoredWords>, AppError> {
        let Some((layout_id, document)) = self.registry.newest_document(Document::Layout, map_id)? else { return Ok(None) };
        self.stored_layout_words(map_id, &layout_id, &document)
    }

    /// What the server has read of map `map_id`'s sheet for an extraction with layout `layout_id`:
    /// the words that layout stored beside it and the lines of the map's readings, and whether any
    /// of them may cover the main map: a reading, or a layout that read one region (the text
    /// method reads the whole scan as one; the detectors read their components, one region each).
    pub fn words_read(&self, map_id: &str, layout_id: &str) -> Result<(Vec<TextLine>, bool), AppError> {
        let document = self.registry.document(Document::Layout, map_id, layout_id)?.ok_or_else(|| AppError::gone(map_id, MapGone::UnknownArtifact))?;
        let mut lines = self.reading_lines(map_id)?;
        let read = !lines.is_empty();
        let (words, whole) = match self.stored_layout_words(map_id, layout_id, &document)? {
            Some(words) => (words.lines, words.regions.len() == 1),
            None => (Vec::new(), false),
        };
        lines.extend(words);
        Ok((lines, read || whole))
    }

    /// The words layout `layout_id` (stored as `document`) stored beside it, if it did.
    fn stored_layout_words(&self, map_id: &str, layout_id: &str, document: &str) -> Result<Option<StoredWords>, AppError> {
        if !parse::<StoredFiles>(map_id, document)?.files.iter().any(|file| file == WORDS_FILE) {
            return Ok(None);
        }
        let path = layout_dir(&self.settings.artifact_root, map_id, layout_id).join(WORDS_FILE);
        let text = std::fs::read_to_string(&path).map_err(|_| AppError::gone(map_id, MapGone::UnknownArtifact))?;
        Ok(Some(parse(map_id, &text)?))
    }

    /// The files stored with layout, reading or unit extraction `id` of map `map_id` (one URI route serves them all).
    pub fn stored_files(&self, map_id: &str, id: &str) -> Result<Vec<String>, AppError> {
        let mut document = None;
        for kind in [Document::Layout, Document::Reading, Document::Units] {
            document = self.registry.document(kind, map_id, id)?;
            if document.is_some() {
                break;
            }
        }
        let document = document.ok_or_else(|| AppError::gone(map_id, MapGone::UnknownArtifact))?;
        Ok(parse::<StoredFiles>(map_id, &document)?.files)
    }
}
