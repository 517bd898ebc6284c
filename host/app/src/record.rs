//! What an extraction's TA1 GeoPackage records of the sheet beyond its features: the sheet's own
//! metadata (`map_metadata`), the parts of the page the layout found with their boxes and words
//! (`page_extraction`: each component, each legend swatch the units were classified against), and
//! the runs that made the file (`model_run`: the layout with each model it used and the model
//! file's SHA-256, the georeference, the extraction itself).
//!
//! Invariants: a run's version is this server's for a tool and `sha256:` with the file's hash for a
//! model; the features' confidences are the extraction run's; a page part points at the row it
//! gives a value of (a swatch at its polygon type's `color`, the title at `map_metadata.title`),
//! or at the map for a part that describes the whole sheet.

use geomap_export::ta1::{MetadataRow, PageRow, RunRow, SheetRecord, TableName, georeference_id, metadata_id, polygon_type_id};
use geomap_model::georeference::{PlacementSource, Revision};
use geomap_model::page::PixelBox;

use geomap_vision::models::ModelInfo;

use crate::stored::{StoredLayout, Swatch};

/// This server's version, the version of its tools' runs.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The extraction `units_id` (made at `created_at`, reading dips with `models`) of `map_id` with
/// layout `layout_id`, its units classified against `legend` (class `k` is `legend[k - 1]`), on
/// `revision` when there is one.
pub(crate) fn sheet_record(
    map_id: &str,
    (layout_id, layout): (&str, &StoredLayout),
    legend: &[Swatch<'_>],
    revision: Option<&Revision>,
    (units_id, created_at, models): (&str, &str, &[ModelInfo]),
) -> SheetRecord {
    let laid_out = if layout.created_at.is_empty() { created_at } else { layout.created_at.as_str() };
    let run = |id: &str, name: &str, version: String, timestamp: &str, batch: Option<&str>| RunRow {
        id: id.to_owned(),
        model_name: name.to_owned(),
        version,
        timestamp: timestamp.to_owned(),
        batch_id: batch.map(str::to_owned),
    };
    let mut runs = vec![run(layout_id, "geomap_process_image", VERSION.to_owned(), laid_out, None)];
    for model in &layout.models {
        runs.push(run(&format!("{layout_id}/{}", model.asset), &model.asset, format!("sha256:{}", model.sha256), laid_out, Some(layout_id)));
    }
    if let Some(revision) = revision {
        let tool = match revision.source {
            Some(PlacementSource::MapLabels) => "geomap_georeference (the map's coordinate labels)",
            None => "geomap_georeference",
        };
        runs.push(run(&revision.revision_id, tool, VERSION.to_owned(), &revision.created_at, None));
    }
    runs.push(run(units_id, "geomap_extract_units", VERSION.to_owned(), created_at, None));
    for model in models {
        runs.push(run(&format!("{units_id}/{}", model.asset), &model.asset, format!("sha256:{}", model.sha256), created_at, Some(units_id)));
    }

    let metadata_row = metadata_id(map_id);
    let mut pages = Vec::new();
    for component in &layout.components {
        let (table, column, record) = match component.class.as_str() {
            "title" => (TableName::MapMetadata, "title", metadata_row.clone()),
            "scale" => (TableName::MapMetadata, "scale", metadata_row.clone()),
            "main_map" => (TableName::ProjectionInfo, "bounds", revision.map_or_else(|| map_id.to_owned(), |r| georeference_id(&r.revision_id))),
            "legend" => (TableName::PolygonType, "description", map_id.to_owned()),
            "cross_section" => (TableName::CrossSection, "geometry", map_id.to_owned()),
            class => (TableName::MapMetadata, class, metadata_row.clone()),
        };
        pages.push(PageRow {
            name: component.class.clone(),
            bbox: corners(&component.bbox),
            text: component.text.clone(),
            colour: None,
            confidence: component.score,
            table,
            column: column.to_owned(),
            record_id: record,
            run: layout_id.to_owned(),
        });
    }
    for (index, swatch) in legend.iter().enumerate() {
        let Some(swatch_box) = &swatch.entry.swatch else { continue };
        let words = [swatch.entry.code.as_deref(), swatch.entry.description.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
        pages.push(PageRow {
            name: "swatch".to_owned(),
            bbox: corners(swatch_box),
            text: (!words.is_empty()).then_some(words),
            colour: Some(swatch.unit.colour_hex.clone()),
            confidence: swatch.entry.score,
            table: TableName::PolygonType,
            column: "color".to_owned(),
            record_id: polygon_type_id(index + 1),
            run: layout_id.to_owned(),
        });
    }
    SheetRecord { metadata: metadata(layout), pages, runs, extraction_run: units_id.to_owned() }
}

/// A box as `[left, top, right, bottom]`.
fn corners(bbox: &PixelBox) -> [f64; 4] {
    [bbox.x0, bbox.y0, bbox.x1, bbox.y1]
}

/// The `map_metadata` row of what `layout` read of the sheet, when it read the year (the schema
/// requires one); fields not read are empty.
fn metadata(layout: &StoredLayout) -> Option<MetadataRow> {
    let read = layout.metadata.as_ref()?;
    let year = read.year.as_ref()?;
    let confidences: Vec<f64> = [
        read.title.as_ref().map(|f| f.confidence),
        read.authors.as_ref().map(|f| f.confidence),
        Some(year.confidence),
        read.publisher.as_ref().map(|f| f.confidence),
        read.series.as_ref().map(|f| f.confidence),
        read.scale.as_ref().map(|f| f.confidence),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(MetadataRow {
        authors: read.authors.as_ref().map(|f| f.value.join(", ")).unwrap_or_default(),
        title: read.title.as_ref().map(|f| f.value.clone()).or_else(|| layout.title.clone()).unwrap_or_default(),
        publisher: read.publisher.as_ref().map(|f| f.value.clone()).unwrap_or_default(),
        year: year.value,
        organization: read.series.as_ref().map(|f| f.value.clone()),
        scale: read.scale.as_ref().map(|f| format!("1:{}", f.value)),
        confidence: confidences.iter().sum::<f64>() / confidences.len() as f64,
    })
}
