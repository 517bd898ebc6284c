//! `usgs-seismicity`: the earthquakes of magnitude 4.5 and above since 1970 in
//! an area (asset `usgs-earthquakes-m45`, the USGS ComCat export): how many,
//! the largest, magnitude and depth statistics, and counts per decade.

use std::collections::BTreeMap;

use geomap_provider_sdk::{Area, Descriptor, Item, Knowledge, KnowledgeRequest, Provider, ProviderError, export_provider, parse_options, read_asset};
use serde::Deserialize;
use serde_json::json;

/// The asset this provider reads.
pub const ASSET: &str = "usgs-earthquakes-m45";
/// Its one file.
pub const FILE: &str = "earthquake_1970_4.5mag.csv";

/// The columns of the export this provider uses.
#[derive(Debug, Clone, Deserialize)]
struct Event {
    time: String,
    latitude: f64,
    longitude: f64,
    depth: Option<f64>,
    mag: Option<f64>,
    #[serde(rename = "magType")]
    mag_type: String,
    id: String,
    place: String,
}

/// Options: a higher magnitude floor, a first year.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    min_magnitude: Option<f64>,
    since_year: Option<i32>,
}

/// The earthquake catalogue, loaded.
pub struct UsgsSeismicity {
    events: Vec<Event>,
}

impl UsgsSeismicity {
    /// The box the catalogue's events span (the shipped file is a regional extract, not the world).
    fn coverage(&self) -> Option<Area> {
        let first = self.events.first()?;
        let start = Area { west: first.longitude, south: first.latitude, east: first.longitude, north: first.latitude };
        Some(self.events.iter().fold(start, |c, e| Area {
            west: c.west.min(e.longitude),
            south: c.south.min(e.latitude),
            east: c.east.max(e.longitude),
            north: c.north.max(e.latitude),
        }))
    }

    /// Reads the catalogue from the asset mounted as `id`.
    fn from_asset(id: &str) -> Result<UsgsSeismicity, ProviderError> {
        let bytes = read_asset(id, FILE)?;
        let events = csv::Reader::from_reader(bytes.as_slice())
            .deserialize()
            .collect::<Result<Vec<Event>, _>>()
            .map_err(|error| ProviderError::Failed(format!("{FILE} is not the expected ComCat export: {error}")))?;
        Ok(UsgsSeismicity { events })
    }
}

/// Whether the point is in the area; an area whose west is east of its east crosses the antimeridian.
fn inside(area: &Area, longitude: f64, latitude: f64) -> bool {
    let within_longitude = if area.west <= area.east { (area.west..=area.east).contains(&longitude) } else { longitude >= area.west || longitude <= area.east };
    within_longitude && (area.south..=area.north).contains(&latitude)
}

fn year(time: &str) -> Option<i32> {
    time.get(..4)?.parse().ok()
}

fn statistics(values: &[f64]) -> serde_json::Value {
    if values.is_empty() {
        return json!(null);
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    json!({ "min": min, "max": max, "mean": (mean * 100.0).round() / 100.0 })
}

impl Provider for UsgsSeismicity {
    fn descriptor() -> Descriptor {
        Descriptor::new(
            "usgs-seismicity",
            env!("CARGO_PKG_VERSION"),
            "Earthquakes of magnitude 4.5 and above since 1970 in the map's area (USGS ComCat): count, largest events, magnitude and depth statistics, counts per decade.",
        )
        .serves_knowledge(true)
        .reads_asset(ASSET)
        .with_options_schema(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "min_magnitude": { "type": "number", "minimum": 4.5, "description": "Only events of at least this magnitude (the catalogue starts at 4.5)." },
                "since_year": { "type": "integer", "minimum": 1970, "description": "Only events from this year on." }
            }
        }))
    }

    fn open() -> Result<UsgsSeismicity, ProviderError> {
        UsgsSeismicity::from_asset(ASSET)
    }

    fn query(&self, request: &KnowledgeRequest) -> Result<Knowledge, ProviderError> {
        let options: Options = parse_options(&request.options)?;
        let Some(area) = request.area else {
            return Err(ProviderError::UnsupportedRequest("usgs-seismicity needs an area (a georeferenced map, or an explicit box)".to_owned()));
        };
        let floor = options.min_magnitude.unwrap_or(4.5);
        let mut found: Vec<&Event> = self
            .events
            .iter()
            .filter(|event| inside(&area, event.longitude, event.latitude))
            .filter(|event| event.mag.is_some_and(|mag| mag >= floor))
            .filter(|event| options.since_year.is_none_or(|since| year(&event.time).is_some_and(|y| y >= since)))
            .collect();
        let magnitudes: Vec<f64> = found.iter().filter_map(|event| event.mag).collect();
        let depths: Vec<f64> = found.iter().filter_map(|event| event.depth).collect();
        let mut decades: BTreeMap<String, u64> = BTreeMap::new();
        for event in &found {
            if let Some(year) = year(&event.time) {
                *decades.entry(format!("{}s", year / 10 * 10)).or_default() += 1;
            }
        }
        found.sort_by(|a, b| b.mag.unwrap_or(0.0).total_cmp(&a.mag.unwrap_or(0.0)).then(a.time.cmp(&b.time)));
        let count = found.len();
        let coverage = self.coverage();
        let covered =
            coverage.is_some_and(|c| area.west >= c.west && area.east <= c.east && area.west <= area.east && area.south >= c.south && area.north <= c.north);
        let mut items = vec![Item {
            title: format!("{count} earthquakes of magnitude {floor} or more"),
            data: json!({
                "count": count, "magnitude": statistics(&magnitudes), "depth_km": statistics(&depths), "per_decade": decades,
                "catalogue_coverage": coverage.map(|c| json!({ "west": c.west, "south": c.south, "east": c.east, "north": c.north })),
                "area_fully_covered": covered,
            }),
        }];
        items.extend(found.iter().take(request.limit.saturating_sub(1) as usize).map(|event| Item {
            title: format!("M{} {}", event.mag.unwrap_or(0.0), event.place),
            data: json!({
                "id": event.id, "time": event.time, "latitude": event.latitude, "longitude": event.longitude,
                "depth_km": event.depth, "magnitude": event.mag, "magnitude_type": event.mag_type, "place": event.place,
            }),
        }));
        let mut summary = match found.first() {
            None => format!("No earthquake of magnitude {floor} or more is recorded in this area since 1970 (USGS ComCat)."),
            Some(largest) => format!(
                "{count} earthquakes of magnitude {floor} or more are recorded in this area since 1970 (USGS ComCat); the largest was M{} on {} ({}).",
                largest.mag.unwrap_or(0.0),
                largest.time.get(..10).unwrap_or(&largest.time),
                largest.place
            ),
        };
        if let (false, Some(c)) = (covered, coverage) {
            summary.push_str(&format!(
                " Caution: this catalogue is a regional extract covering only longitudes {:.1} to {:.1} and latitudes {:.1} to {:.1}; events outside that box are not in it.",
                c.west, c.east, c.south, c.north
            ));
        }
        Ok(Knowledge { items, summary })
    }
}

export_provider!(UsgsSeismicity);

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_provider_sdk::harness::Harness;

    const HEADER: &str = "time,latitude,longitude,depth,mag,magType,nst,gap,dmin,rms,net,id,updated,place,type,horizontalError,depthError,magError,magNst,status,locationSource,magSource";

    fn fixtures() -> Harness {
        static FOLDER: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
        let folder = FOLDER.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let rows = [
                "1975-03-01T00:00:00.000Z,35.5,139.5,30,6.1,mw,,,,,us,a1,,\"near Tokyo, Japan\",earthquake,,,,,reviewed,us,us",
                "2004-12-26T00:58:53.450Z,3.295,95.982,30,9.1,mw,,,,,us,a2,,\"off Sumatra\",earthquake,,,,,reviewed,us,us",
                "2011-03-11T05:46:24.120Z,38.297,142.373,29,9.1,mww,,,,,us,a3,,\"near Tohoku, Japan\",earthquake,,,,,reviewed,us,us",
                "2016-01-01T00:00:00.000Z,36.0,140.0,50,4.7,mb,,,,,us,a4,,\"Ibaraki, Japan\",earthquake,,,,,reviewed,us,us",
                "2020-06-01T00:00:00.000Z,-17.0,179.5,600,5.0,mb,,,,,us,a5,,\"Fiji\",earthquake,,,,,reviewed,us,us",
            ];
            std::fs::write(dir.path().join(FILE), format!("{HEADER}\n{}\n", rows.join("\n"))).unwrap();
            dir
        });
        Harness::new().with_asset(ASSET, folder.path())
    }

    fn query(area: Option<Area>, options: serde_json::Value) -> Result<Knowledge, ProviderError> {
        fixtures().query::<UsgsSeismicity>(&KnowledgeRequest { area, topics: Vec::new(), options, limit: 10 })
    }

    const JAPAN: Area = Area { west: 128.0, south: 30.0, east: 146.0, north: 46.0 };

    #[test]
    fn an_area_gets_its_count_largest_events_and_statistics() {
        let answer = query(Some(JAPAN), json!({})).unwrap();
        let stats = &answer.items[0].data;
        assert_eq!(stats["count"], 3);
        assert_eq!(stats["magnitude"], json!({ "min": 4.7, "max": 9.1, "mean": 6.63 }));
        assert_eq!(stats["per_decade"], json!({ "1970s": 1, "2010s": 2 }));
        assert_eq!(answer.items[1].data["id"], "a3", "the largest first");
        assert!(answer.summary.starts_with("3 earthquakes") && answer.summary.contains("2011-03-11"), "{}", answer.summary);
    }

    #[test]
    fn options_narrow_the_events_and_bad_ones_name_their_field() {
        assert_eq!(query(Some(JAPAN), json!({ "min_magnitude": 6.0 })).unwrap().items[0].data["count"], 2);
        assert_eq!(query(Some(JAPAN), json!({ "since_year": 2000 })).unwrap().items[0].data["count"], 2);
        let Err(ProviderError::InvalidOptions { field, .. }) = query(Some(JAPAN), json!({ "min_magnitude": "big" })) else { panic!() };
        assert_eq!(field, "/min_magnitude");
    }

    #[test]
    fn an_area_beyond_the_catalogue_says_the_catalogue_does_not_reach_it() {
        let answer = query(Some(Area { west: -10.0, south: 35.0, east: 5.0, north: 45.0 }), json!({})).unwrap();
        assert_eq!(answer.items[0].data["area_fully_covered"], false);
        assert!(answer.summary.contains("regional extract covering only longitudes 96.0 to 179.5 and latitudes -17.0 to 38.3"), "{}", answer.summary);
        let inside = query(Some(Area { west: 130.0, south: 30.0, east: 145.0, north: 38.0 }), json!({})).unwrap();
        assert!(!inside.summary.contains("Caution"), "{}", inside.summary);
    }

    #[test]
    fn an_area_across_the_antimeridian_and_no_area_at_all() {
        let fiji = Area { west: 170.0, south: -25.0, east: -170.0, north: -10.0 };
        assert_eq!(query(Some(fiji), json!({})).unwrap().items[0].data["count"], 1);
        assert!(matches!(query(None, json!({})), Err(ProviderError::UnsupportedRequest(_))));
    }

    #[test]
    fn the_real_catalogue_counts_what_an_independent_reading_counts() {
        // The real catalogue is the workplace's (shared/ beside the clone); a clone with nothing beside it skips.
        let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/assets").join(FILE);
        if !real.is_file() {
            eprintln!("SKIPPED the_real_catalogue_counts_what_an_independent_reading_counts: {} is absent", real.display());
            return;
        }
        // An independent count: split lines by hand (place names hold quoted commas, after the columns used).
        let text = std::fs::read_to_string(&real).unwrap();
        let expected = text
            .lines()
            .skip(1)
            .filter(|line| {
                let fields: Vec<&str> = line.splitn(6, ',').collect();
                let (lat, lon, mag): (f64, f64, f64) = (fields[1].parse().unwrap(), fields[2].parse().unwrap(), fields[4].parse().unwrap_or(0.0));
                (128.0..=146.0).contains(&lon) && (30.0..=46.0).contains(&lat) && mag >= 4.5
            })
            .count();
        let folder = real.parent().unwrap().to_owned();
        let answer = Harness::new()
            .with_asset("usgs-real", &folder)
            .query::<Real>(&KnowledgeRequest { area: Some(JAPAN), topics: Vec::new(), options: json!({}), limit: 5 })
            .unwrap();
        assert!(expected > 1000, "{expected}");
        assert_eq!(answer.items[0].data["count"], expected);

        /// The same provider reading the real file under another asset id (the harness maps ids for the whole process,
        /// and the fixtures hold the provider's own id).
        struct Real(UsgsSeismicity);
        impl Provider for Real {
            fn descriptor() -> Descriptor {
                UsgsSeismicity::descriptor()
            }
            fn open() -> Result<Real, ProviderError> {
                UsgsSeismicity::from_asset("usgs-real").map(Real)
            }
            fn query(&self, request: &KnowledgeRequest) -> Result<Knowledge, ProviderError> {
                self.0.query(request)
            }
        }
    }
}
