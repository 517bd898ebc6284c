//! The CRS a sheet's labels are in, from its own words: the datum it names ("North American
//! Datum of 1927", "NAD 83", "WGS 84"), else the base map's year, else a stated guess; the UTM
//! zone from the words or from the longitudes.
//!
//! The base-year rule: a U.S. base map from before 1990 is taken to be on NAD27, from 1990 on
//! NAD83. NAD83 was completed in 1986, but USGS topographic bases moved to it only as they were
//! revised, and many printed after 1983 still carry NAD27; 1990 is the year Uncharted's TA1
//! georeferencer (jataware/uncharted-ta1-pipeline, `tasks/geo_referencing`) switches its
//! assumption from NAD27 to NAD83, and this server follows it.
//!
//! Invariants: every decision names the words it rests on, and says when it is a guess and why.

use crate::layout::numbers::years;

/// The first base-map year taken to be on NAD83 (see the module's rule).
pub const NAD83_FROM_YEAR: u32 = 1990;

/// A horizontal datum a sheet may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Datum {
    /// North American Datum of 1927.
    Nad27,
    /// North American Datum of 1983.
    Nad83,
    /// World Geodetic System 1984.
    Wgs84,
}

impl Datum {
    /// How sheets abbreviate it: `NAD27`, `NAD83`, `WGS84`.
    pub fn short_name(self) -> &'static str {
        match self {
            Datum::Nad27 => "NAD27",
            Datum::Nad83 => "NAD83",
            Datum::Wgs84 => "WGS84",
        }
    }

    fn geographic_epsg(self) -> u32 {
        match self {
            Datum::Nad27 => 4267,
            Datum::Nad83 => 4269,
            Datum::Wgs84 => 4326,
        }
    }

    /// The UTM CRS on this datum (`EPSG:<code>`) whose zone holds `longitude`, where the datum defines one.
    pub fn utm_crs_at(self, longitude: f64, latitude: f64) -> Option<String> {
        self.utm_epsg(zone_of(longitude), latitude < 0.0).map(|code| format!("EPSG:{code}"))
    }

    /// The EPSG code of UTM zone `zone` on this datum, or `None` where the datum defines no such zone.
    fn utm_epsg(self, zone: u32, south: bool) -> Option<u32> {
        match (self, south) {
            (Datum::Nad27, false) if (1..=22).contains(&zone) => Some(26700 + zone),
            (Datum::Nad83, false) if (1..=23).contains(&zone) => Some(26900 + zone),
            (Datum::Wgs84, false) if (1..=60).contains(&zone) => Some(32600 + zone),
            (Datum::Wgs84, true) if (1..=60).contains(&zone) => Some(32700 + zone),
            _ => None,
        }
    }
}

/// The CRS chosen for a sheet's labels, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct CrsDecision {
    /// The CRS the control points are in, as `EPSG:<code>`.
    pub crs: String,
    /// The datum.
    pub datum: Datum,
    /// The UTM zone, for labels in metres.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utm_zone: Option<u32>,
    /// Whether it is a guess (no datum named on the sheet).
    pub guess: bool,
    /// Why, in plain words.
    pub because: String,
    /// The sheet's words it rests on.
    pub words: Vec<String>,
}

/// Upper case, letters and digits only: `North American Datum of 1927` → `NORTHAMERICANDATUMOF1927`.
fn squeeze(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_uppercase()).collect()
}

/// The datum a line names, if any.
pub(crate) fn named_datum(line: &str) -> Option<Datum> {
    let squeezed = squeeze(line);
    let any = |needles: &[&str]| needles.iter().any(|n| squeezed.contains(n));
    if any(&["DATUMOF1927", "NAD27", "NAD1927", "DATUM1927"]) {
        Some(Datum::Nad27)
    } else if any(&["DATUMOF1983", "NAD83", "NAD1983", "DATUM1983"]) {
        Some(Datum::Nad83)
    } else if any(&["WGS84", "WGS1984", "GEODETICSYSTEM1984", "GEODETICSYSTEMOF1984"]) {
        Some(Datum::Wgs84)
    } else {
        None
    }
}

/// The UTM zone a line names (`zone 12`, `UTM zone 12N`, `grid zone 12`).
pub(super) fn named_zone(line: &str) -> Option<u32> {
    let upper = line.to_ascii_uppercase();
    let at = upper.find("ZONE")?;
    let digits: String = upper[at + 4..].trim_start_matches(|c: char| !c.is_ascii_digit()).chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|zone| (1..=60).contains(zone))
}

/// The UTM zone of a longitude.
pub fn zone_of(longitude: f64) -> u32 {
    (((longitude + 180.0) / 6.0).floor() as i64).clamp(0, 59) as u32 + 1
}

/// Decides the datum from `words` (the sheet's lines) and, for a sheet that is not clearly
/// elsewhere, the U.S. rule; `centre` is the map's centre on the labels' own longitudes and
/// latitudes when they are known. `metric` asks for a UTM CRS (`south` for southern zones).
pub fn decide(words: &[String], centre: Option<(f64, f64)>, metric: bool, south: bool) -> Result<CrsDecision, String> {
    let named = words.iter().find_map(|line| named_datum(line).map(|datum| (datum, line.clone())));
    let base_year =
        words.iter().filter(|line| line.to_ascii_uppercase().contains("BASE")).find_map(|line| years(line).into_iter().min().map(|year| (year, line.clone())));
    let in_us = centre.is_none_or(|(lon, lat)| (-170.0..=-60.0).contains(&lon) && (15.0..=72.0).contains(&lat));
    let (datum, guess, because, mut cited) = match (named, base_year) {
        (Some((datum, line)), _) => (datum, false, format!("the sheet names its datum: \"{line}\""), vec![line]),
        (None, Some((year, line))) if in_us && year < NAD83_FROM_YEAR => (
            Datum::Nad27,
            true,
            format!(
                "no datum is named; the base map is from {year}, and U.S. base maps before {NAD83_FROM_YEAR} are taken to be on NAD27 (many stayed on it after NAD83's adoption)"
            ),
            vec![line],
        ),
        (None, Some((year, line))) if in_us => (
            Datum::Nad83,
            true,
            format!("no datum is named; the base map is from {year}, and U.S. base maps from {NAD83_FROM_YEAR} on are taken to be on NAD83"),
            vec![line],
        ),
        (None, _) if in_us && centre.is_some() => (
            Datum::Nad27,
            true,
            "no datum or base-map year is found in the words read of the sheet; most scanned U.S. sheets are on NAD27".to_owned(),
            Vec::new(),
        ),
        (None, _) => (Datum::Wgs84, true, "no datum is found in the words read of the sheet; WGS 84 assumed".to_owned(), Vec::new()),
    };
    if !metric {
        return Ok(CrsDecision { crs: format!("EPSG:{}", datum.geographic_epsg()), datum, utm_zone: None, guess, because, words: cited });
    }
    let zone = match words.iter().find_map(|line| named_zone(line).map(|zone| (zone, line.clone()))) {
        Some((zone, line)) => {
            cited.push(line);
            zone
        }
        None => match centre {
            Some((lon, _)) => zone_of(lon),
            None => return Err("the labels are UTM metres, but no UTM zone is printed in the margins read and no longitude label gives one".to_owned()),
        },
    };
    let code = datum.utm_epsg(zone, south).or_else(|| Datum::Wgs84.utm_epsg(zone, south)).ok_or_else(|| format!("UTM zone {zone} is not a zone"))?;
    Ok(CrsDecision { crs: format!("EPSG:{code}"), datum, utm_zone: Some(zone), guess, because, words: cited })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn a_named_datum_wins_and_is_cited() {
        let decision = decide(&lines(&["Base from U.S. Geological Survey, 1986", "North American Datum of 1927"]), Some((-113.5, 35.7)), false, false).unwrap();
        assert_eq!((decision.crs.as_str(), decision.guess), ("EPSG:4267", false));
        assert_eq!(decision.words, vec!["North American Datum of 1927"]);
    }

    #[test]
    fn the_base_year_decides_on_a_us_sheet() {
        let old = decide(&lines(&["Base from U.S. Geological Survey 1:24,000, 1967"]), Some((-113.5, 35.7)), false, false).unwrap();
        assert_eq!((old.datum, old.guess), (Datum::Nad27, true));
        let new = decide(&lines(&["Base from USGS digital data, 1994"]), Some((-113.5, 35.7)), false, false).unwrap();
        assert_eq!(new.datum, Datum::Nad83);
        // The USGS sample's base: after NAD83's adoption, still on NAD27 by the rule.
        let sample = decide(&lines(&["Base from U.S. Geological Survey, 1986"]), Some((-113.5, 35.7)), false, false).unwrap();
        assert_eq!((sample.datum, sample.guess), (Datum::Nad27, true));
        assert!(sample.because.contains("before 1990"), "{}", sample.because);
        let abroad = decide(&lines(&["Base 1960"]), Some((10.0, 50.0)), false, false).unwrap();
        assert_eq!(abroad.crs, "EPSG:4326");
    }

    #[test]
    fn a_graticule_has_the_utm_zone_of_its_longitude_on_its_own_datum() {
        assert_eq!(Datum::Nad83.utm_crs_at(-113.5, 35.75).as_deref(), Some("EPSG:26912"));
        assert_eq!(Datum::Nad27.utm_crs_at(-120.1, 40.0).as_deref(), Some("EPSG:26710"));
        assert_eq!(Datum::Wgs84.utm_crs_at(15.0, -30.0).as_deref(), Some("EPSG:32733"));
        assert_eq!(Datum::Nad83.utm_crs_at(15.0, -30.0), None, "NAD83 has no southern zones");
    }

    #[test]
    fn utm_zones_come_from_the_words_or_the_longitudes() {
        assert_eq!(decide(&lines(&["NAD 83", "UTM grid zone 12"]), None, true, false).unwrap().crs, "EPSG:26912");
        assert_eq!(decide(&lines(&["WGS 84"]), Some((-113.5, 35.7)), true, false).unwrap().crs, "EPSG:32612");
        assert!(decide(&lines(&["WGS 84"]), None, true, false).unwrap_err().contains("no UTM zone"));
    }
}
