//! What the exporters' tests share: a small extraction of a 40 × 30 scan.

use gdal::vector::Geometry;
use geomap_model::georeference::{Bounds, Coordinate, Placement, Request};
use geomap_model::progress::Progress;

use crate::ta1::{LineRow, LineTypeRow, MapRow, PointRow, PointTypeRow, RunRow, SectionRow, SheetRecord, StructureRows, UnitRow};
use crate::{Extraction, Ground, UnitPolygon};

/// One unit's polygon over the whole scan, a dashed fault, two attitudes (one without a dip
/// read) and a line of section; placed on the ground (a sheet from 10°E 59.5°N to 11°E 60°N)
/// when `georeferenced`.
pub(crate) fn extraction(georeferenced: bool) -> Extraction {
    let map = MapRow { map_id: "map_x".to_owned(), name: "a map".to_owned(), image_url: "geomap://maps/map_x".to_owned(), width: 40, height: 30 };
    let units = vec![UnitRow { code: Some("Qal".to_owned()), colour: (250, 235, 150), ..Default::default() }];
    let outline = Geometry::from_wkt("POLYGON((0 0,40 0,40 30,0 30,0 0))").unwrap().wkb().unwrap();
    let polygons = vec![UnitPolygon { id: 1, class: 1, confidence: 0.5, wkb: outline }];
    let structure = StructureRows {
        line_types: vec![LineTypeRow {
            id: "line_type_2_dashed".to_owned(),
            name: "fault".to_owned(),
            description: "Fault—Dashed where approximately located".to_owned(),
            dash_pattern: "dashed".to_owned(),
            symbol: "fault".to_owned(),
        }],
        lines: vec![LineRow {
            type_id: "line_type_2_dashed".to_owned(),
            name: "fault".to_owned(),
            points: vec![(2.0, 2.0), (38.0, 20.0)],
            polarity: 0,
            confidence: 0.9,
        }],
        point_types: vec![PointTypeRow {
            id: "point_type_6".to_owned(),
            name: "inclined bedding".to_owned(),
            description: "Strike and dip of beds".to_owned(),
            mark_colour: None,
            mark_triangle: false,
        }],
        points: vec![
            PointRow {
                type_id: "point_type_6".to_owned(),
                at: (10.0, 25.0),
                dip_direction: Some(135.0),
                dip: Some(35.0),
                dip_words: Some((12.0, 20.0, 20.0, 28.0)),
                confidence: 0.8,
            },
            PointRow { type_id: "point_type_6".to_owned(), at: (30.0, 5.0), dip_direction: Some(10.0), dip: None, dip_words: None, confidence: 0.6 },
        ],
        sections: vec![SectionRow {
            name: "A–A′".to_owned(), points: vec![(3.0, 28.0), (37.0, 26.0)], confidence: 0.9, section_bbox: (50.0, 0.0, 90.0, 20.0)
        }],
    };
    let run =
        RunRow { id: "run_1".to_owned(), model_name: "test".to_owned(), version: "0".to_owned(), timestamp: "2026-12-04T00:00:00Z".to_owned(), batch_id: None };
    let sheet = SheetRecord { runs: vec![run], extraction_run: "run_1".to_owned(), ..SheetRecord::default() };
    let ground = georeferenced.then(|| {
        let bounds = Bounds { west: Coordinate(10.0), south: Coordinate(59.5), east: Coordinate(11.0), north: Coordinate(60.0) };
        let request = Request { crs: "EPSG:4326".to_owned(), placement: Placement::Bounds { bounds, region: None } };
        let revision = geomap_georef::describe(40, 30, &request, "rev_test").unwrap();
        Ground::place(&revision, &polygons, &structure, &Progress::none()).unwrap()
    });
    Extraction { map, units, polygons, structure, sheet, ground }
}
