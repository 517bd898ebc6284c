//! The places a sheet's words name that say where on Earth it is: the U.S. states, each with a
//! box around it (WGS84 degrees, rounded outwards to a tenth of a degree from the states'
//! extents; Alaska's Aleutians west of 180° are left out), found where a sheet prints a state as
//! a place ("Mohave County, Arizona", "ARIZONA", "Arizona and Nevada"), not as part of another
//! name ("Colorado River", "Sierra Nevada", "Washington County").
//!
//! Invariants: pure text work; a state is named only where the line prints it after a comma, an
//! "and" or the start of the line, and before the end of the line, a comma, a full stop or an
//! "and".

use geomap_model::georeference::Wgs84Bounds;

/// A state and the box around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Place {
    /// Its name as printed.
    pub name: &'static str,
    /// West, south, east, north in degrees.
    pub box_degrees: [f64; 4],
}

impl Place {
    /// Whether `bounds` (WGS84) meets this place's box widened by `margin` degrees.
    pub fn meets(&self, bounds: &Wgs84Bounds, margin: f64) -> bool {
        let [west, south, east, north] = self.box_degrees;
        bounds.west <= east + margin && bounds.east >= west - margin && bounds.south <= north + margin && bounds.north >= south - margin
    }
}

const fn state(name: &'static str, west: f64, south: f64, east: f64, north: f64) -> Place {
    Place { name, box_degrees: [west, south, east, north] }
}

/// The fifty states.
pub const US_STATES: [Place; 50] = [
    state("Alabama", -88.5, 30.1, -84.8, 35.1),
    state("Alaska", -180.0, 51.2, -129.9, 71.4),
    state("Arizona", -114.9, 31.3, -109.0, 37.1),
    state("Arkansas", -94.7, 33.0, -89.6, 36.5),
    state("California", -124.5, 32.5, -114.1, 42.1),
    state("Colorado", -109.1, 36.9, -102.0, 41.1),
    state("Connecticut", -73.8, 40.9, -71.7, 42.1),
    state("Delaware", -75.8, 38.4, -75.0, 39.9),
    state("Florida", -87.7, 24.5, -80.0, 31.1),
    state("Georgia", -85.7, 30.3, -80.8, 35.1),
    state("Hawaii", -178.4, 18.9, -154.8, 28.5),
    state("Idaho", -117.3, 41.9, -111.0, 49.1),
    state("Illinois", -91.6, 36.9, -87.4, 42.6),
    state("Indiana", -88.1, 37.7, -84.7, 41.8),
    state("Iowa", -96.7, 40.3, -90.1, 43.6),
    state("Kansas", -102.1, 36.9, -94.5, 40.1),
    state("Kentucky", -89.6, 36.4, -81.9, 39.2),
    state("Louisiana", -94.1, 28.9, -88.8, 33.1),
    state("Maine", -71.1, 43.0, -66.9, 47.5),
    state("Maryland", -79.5, 37.9, -75.0, 39.8),
    state("Massachusetts", -73.6, 41.2, -69.9, 42.9),
    state("Michigan", -90.5, 41.6, -82.4, 48.4),
    state("Minnesota", -97.3, 43.4, -89.4, 49.4),
    state("Mississippi", -91.7, 30.1, -88.0, 35.1),
    state("Missouri", -95.8, 35.9, -89.1, 40.7),
    state("Montana", -116.1, 44.3, -104.0, 49.1),
    state("Nebraska", -104.1, 39.9, -95.3, 43.1),
    state("Nevada", -120.1, 35.0, -114.0, 42.1),
    state("New Hampshire", -72.6, 42.6, -70.6, 45.4),
    state("New Jersey", -75.6, 38.9, -73.8, 41.4),
    state("New Mexico", -109.1, 31.3, -103.0, 37.1),
    state("New York", -79.8, 40.4, -71.8, 45.1),
    state("North Carolina", -84.4, 33.8, -75.4, 36.6),
    state("North Dakota", -104.1, 45.9, -96.5, 49.1),
    state("Ohio", -84.9, 38.4, -80.5, 42.0),
    state("Oklahoma", -103.1, 33.6, -94.4, 37.1),
    state("Oregon", -124.6, 41.9, -116.4, 46.3),
    state("Pennsylvania", -80.6, 39.7, -74.6, 42.3),
    state("Rhode Island", -71.9, 41.1, -71.1, 42.1),
    state("South Carolina", -83.4, 32.0, -78.5, 35.3),
    state("South Dakota", -104.1, 42.4, -96.4, 46.0),
    state("Tennessee", -90.4, 34.9, -81.6, 36.7),
    state("Texas", -106.7, 25.8, -93.5, 36.6),
    state("Utah", -114.1, 36.9, -109.0, 42.1),
    state("Vermont", -73.5, 42.7, -71.4, 45.1),
    state("Virginia", -83.7, 36.5, -75.2, 39.5),
    state("Washington", -124.9, 45.5, -116.9, 49.1),
    state("West Virginia", -82.7, 37.2, -77.7, 40.7),
    state("Wisconsin", -92.9, 42.4, -86.2, 47.4),
    state("Wyoming", -111.1, 40.9, -104.0, 45.1),
];

/// A state a line of the sheet names, and the line.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    /// The state.
    pub place: Place,
    /// The line that names it, as read.
    pub line: String,
}

/// Every state `lines` name as a place, each once, in the order first named.
pub fn named_states(lines: &[String]) -> Vec<Named> {
    let mut found: Vec<Named> = Vec::new();
    for line in lines {
        for place in states_in(line) {
            if !found.iter().any(|named| named.place.name == place.name) {
                found.push(Named { place, line: line.clone() });
            }
        }
    }
    found
}

/// The states one line names as places.
fn states_in(line: &str) -> Vec<Place> {
    // Words in upper case, with commas, full stops and semicolons kept as words of their own.
    let spaced: String = line.chars().map(|c| if matches!(c, ',' | '.' | ';') { format!(" {c} ") } else { c.to_uppercase().to_string() }).collect();
    let words: Vec<&str> = spaced.split(|c: char| !(c.is_alphanumeric() || matches!(c, ',' | '.' | ';'))).filter(|w| !w.is_empty()).collect();
    let mut taken = vec![false; words.len()];
    // Longest names first, so "West Virginia" is not also read as "Virginia".
    let mut states: Vec<&Place> = US_STATES.iter().collect();
    states.sort_by_key(|place| std::cmp::Reverse(place.name.len()));
    let mut found = Vec::new();
    for place in states {
        let name: Vec<String> = place.name.split(' ').map(str::to_uppercase).collect();
        let n = name.len();
        for start in 0..words.len().saturating_sub(n - 1) {
            if taken[start..start + n].iter().any(|t| *t) || words[start..start + n].iter().zip(&name).any(|(w, part)| *w != part) {
                continue;
            }
            let before = start.checked_sub(1).map(|i| words[i]);
            let after = words.get(start + n).copied();
            let opens = matches!(before, None | Some("," | "AND" | ";"));
            let closes = matches!(after, None | Some("," | "." | ";" | "AND"));
            if opens && closes {
                taken[start..start + n].iter_mut().for_each(|t| *t = true);
                found.push((start, *place));
            }
        }
    }
    found.sort_by_key(|(start, _)| *start);
    found.into_iter().map(|(_, place)| place).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(line: &str) -> Vec<&'static str> {
        states_in(line).iter().map(|place| place.name).collect()
    }

    #[test]
    fn a_state_is_named_as_a_place_not_inside_another_name() {
        assert_eq!(names("Mohave County, Arizona"), ["Arizona"]);
        assert_eq!(names("MOHAVE COUNTY, ARIZONA"), ["Arizona"]);
        assert_eq!(names("ARIZONA"), ["Arizona"]);
        assert_eq!(names("Clark County, Nevada, and Mohave County, Arizona"), ["Nevada", "Arizona"]);
        assert_eq!(names("GEOLOGIC MAP OF THE KINGMAN AREA, ARIZONA AND NEVADA"), ["Arizona", "Nevada"]);
        assert_eq!(names("Tazewell County, West Virginia"), ["West Virginia"]);
        assert!(names("Colorado River").is_empty());
        assert!(names("east flank of the Sierra Nevada").is_empty());
        assert!(names("Washington County").is_empty());
        assert!(names("Colorado Plateau, near the Grand Canyon").is_empty());
    }

    #[test]
    fn states_are_named_once_in_the_order_first_read() {
        let lines: Vec<String> = ["Mohave County, Arizona", "ARIZONA", "Utah"].iter().map(|s| (*s).to_owned()).collect();
        let named = named_states(&lines);
        assert_eq!(named.iter().map(|n| (n.place.name, n.line.as_str())).collect::<Vec<_>>(), [("Arizona", "Mohave County, Arizona"), ("Utah", "Utah")]);
    }

    #[test]
    fn a_box_meets_the_state_it_lies_in() {
        let arizona = US_STATES.iter().find(|p| p.name == "Arizona").unwrap();
        let peach_springs = Wgs84Bounds { west: -114.0, south: 35.5, east: -113.0, north: 36.0 };
        let mirrored = Wgs84Bounds { west: -114.0, south: -36.0, east: -113.0, north: -35.5 };
        assert!(arizona.meets(&peach_springs, 0.0));
        assert!(!arizona.meets(&mirrored, 0.5));
    }
}
