//! The hemisphere of each axis, decided by all the sheet's evidence together, so that no single
//! misread can move a map: the direction the axis's unsigned values run (as many votes as the
//! labels that agree on it), each hemisphere letter or minus sign printed with a label (one vote
//! each), a U.S. state the sheet names (two votes: north and west), and the UTM zone it prints
//! (two votes for the side of Greenwich whose zone it is).
//!
//! Invariants: the evidence is counted, never taken from one label alone; a tie goes to the
//! direction the values run (on a sheet in degrees, the one thing no misread letter changes);
//! every vote is named in the decision's evidence.

use super::Axis;
use super::datum::zone_of;
use super::labels::Hemisphere;
use super::places::Named;

/// Votes for one evidence of a place on the sheet (a state named, the UTM zone printed).
const PLACE_VOTES: usize = 2;

/// What the sheet says about one axis's sign.
pub struct Evidence<'a> {
    /// Longitude or latitude (easting and northing carry no sign; northing's hemisphere is asked as latitude).
    pub axis: Axis,
    /// How the axis's unsigned values change across the neatline (left to right, or top to bottom), when fitted.
    pub slope: Option<f64>,
    /// The labels that agree with the fit.
    pub agreeing: usize,
    /// The hemisphere letters and minus signs printed with those labels.
    pub marks: &'a [Hemisphere],
    /// The U.S. states the sheet names.
    pub states: &'a [Named],
    /// The UTM zone the sheet prints, and the axis's unsigned value at the map's centre.
    pub zone: Option<(u32, f64)>,
}

/// The sign decided for an axis, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// South or west.
    pub negative: bool,
    /// Each piece of evidence and its votes, in plain words.
    pub evidence: Vec<String>,
}

/// The hemispheres a sheet's labels were given, and the evidence counted.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Hemispheres {
    /// `north` or `south` of the equator.
    pub latitude: Hemisphere,
    /// `east` or `west` of Greenwich, when the sheet has longitude labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longitude: Option<Hemisphere>,
    /// Each piece of evidence and its votes, in plain words.
    pub evidence: Vec<String>,
}

impl Hemispheres {
    /// `-1.0` west of Greenwich, else `1.0`.
    pub fn longitude_sign(&self) -> f64 {
        if self.longitude == Some(Hemisphere::West) { -1.0 } else { 1.0 }
    }

    /// `-1.0` south of the equator, else `1.0`.
    pub fn latitude_sign(&self) -> f64 {
        if self.latitude == Hemisphere::South { -1.0 } else { 1.0 }
    }
}

/// The hemisphere words of an axis: (positive, negative).
pub fn side(axis: Axis) -> (&'static str, &'static str) {
    match axis {
        Axis::Longitude | Axis::Easting => ("east", "west"),
        Axis::Latitude | Axis::Northing => ("north", "south"),
    }
}

/// Whether a mark printed with a label says negative (`Some(true)`), positive, or nothing about `axis`.
pub fn says_negative(axis: Axis, mark: Hemisphere) -> Option<bool> {
    match (axis, mark) {
        (_, Hemisphere::Negative) => Some(true),
        (Axis::Longitude | Axis::Easting, Hemisphere::West) | (Axis::Latitude | Axis::Northing, Hemisphere::South) => Some(true),
        (Axis::Longitude | Axis::Easting, Hemisphere::East) | (Axis::Latitude | Axis::Northing, Hemisphere::North) => Some(false),
        _ => None,
    }
}

/// How a mark is printed, in words.
pub fn mark_words(mark: Hemisphere) -> &'static str {
    match mark {
        Hemisphere::North => "N",
        Hemisphere::South => "S",
        Hemisphere::East => "E",
        Hemisphere::West => "W",
        Hemisphere::Negative => "a minus sign",
    }
}

/// Counts the evidence for one axis's sign.
pub fn decide(evidence: &Evidence<'_>) -> Decision {
    let (positive_word, negative_word) = side(evidence.axis);
    let side = |negative: bool| if negative { negative_word } else { positive_word };
    let (mut positive, mut negative) = (0usize, 0usize);
    let mut words = Vec::new();
    let mut vote = |is_negative: bool, votes: usize, what: String| {
        if is_negative {
            negative += votes;
        } else {
            positive += votes;
        }
        words.push(format!("{what}: {votes} vote{} {}", if votes == 1 { "" } else { "s" }, side(is_negative)));
    };
    let direction = evidence.slope.map(|slope| match evidence.axis {
        Axis::Longitude | Axis::Easting => slope < 0.0,
        Axis::Latitude | Axis::Northing => slope > 0.0,
    });
    if let Some(is_negative) = direction {
        let (name, runs) = match evidence.axis {
            Axis::Longitude | Axis::Easting => ("longitude", if is_negative { "grow to the left" } else { "grow to the right" }),
            Axis::Latitude | Axis::Northing => ("latitude", if is_negative { "grow down the sheet" } else { "grow up the sheet" }),
        };
        vote(is_negative, evidence.agreeing, format!("the {} {name} labels that agree {runs}", evidence.agreeing));
    }
    for mark in [Hemisphere::North, Hemisphere::South, Hemisphere::East, Hemisphere::West, Hemisphere::Negative] {
        let Some(is_negative) = says_negative(evidence.axis, mark) else { continue };
        let count = evidence.marks.iter().filter(|m| **m == mark).count();
        if count > 0 {
            vote(
                is_negative,
                count,
                format!("{count} label{} print{} {}", if count == 1 { "" } else { "s" }, if count == 1 { "s" } else { "" }, mark_words(mark)),
            );
        }
    }
    for named in evidence.states {
        vote(matches!(evidence.axis, Axis::Longitude | Axis::Easting), PLACE_VOTES, format!("the sheet names {} (\"{}\")", named.place.name, named.line));
    }
    if let (Some((zone, unsigned)), Axis::Longitude) = (evidence.zone, evidence.axis) {
        let (west, east) = (zone_of(-unsigned), zone_of(unsigned));
        if west != east && (zone == west || zone == east) {
            vote(zone == west, PLACE_VOTES, format!("the sheet prints UTM zone {zone}"));
        }
    }
    let negative = match negative.cmp(&positive) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => direction.unwrap_or(false),
    };
    Decision { negative, evidence: words }
}

#[cfg(test)]
mod tests {
    use super::super::places::{Named, US_STATES};
    use super::*;

    fn latitude<'a>(slope: f64, agreeing: usize, marks: &'a [Hemisphere], states: &'a [Named]) -> Evidence<'a> {
        Evidence { axis: Axis::Latitude, slope: Some(slope), agreeing, marks, states, zone: None }
    }

    #[test]
    fn one_minus_sign_does_not_move_latitudes_that_grow_up_the_sheet() {
        let decision = decide(&latitude(-0.25, 9, &[Hemisphere::Negative], &[]));
        assert!(!decision.negative, "{:?}", decision.evidence);
        assert_eq!(decision.evidence, ["the 9 latitude labels that agree grow up the sheet: 9 votes north", "1 label prints a minus sign: 1 vote south"]);
    }

    #[test]
    fn letters_and_values_agree_on_a_southern_sheet() {
        let decision = decide(&latitude(0.5, 4, &[Hemisphere::South; 4], &[]));
        assert!(decision.negative, "{:?}", decision.evidence);
    }

    #[test]
    fn a_named_state_and_the_printed_zone_vote_for_the_west() {
        let arizona = Named { place: *US_STATES.iter().find(|p| p.name == "Arizona").unwrap(), line: "Mohave County, Arizona".into() };
        let states = [arizona];
        let evidence = Evidence { axis: Axis::Longitude, slope: None, agreeing: 0, marks: &[Hemisphere::East], states: &states, zone: Some((12, 113.5)) };
        let decision = decide(&evidence);
        assert!(decision.negative, "{:?}", decision.evidence);
        assert_eq!(decision.evidence.len(), 3);
        assert!(decision.evidence[2].starts_with("the sheet prints UTM zone 12: 2 votes west"), "{:?}", decision.evidence);
    }

    #[test]
    fn without_evidence_a_utm_sheet_is_north() {
        let decision = decide(&Evidence { axis: Axis::Northing, slope: None, agreeing: 0, marks: &[], states: &[], zone: None });
        assert!(!decision.negative && decision.evidence.is_empty());
    }

    #[test]
    fn marks_of_the_other_axis_say_nothing() {
        assert_eq!(says_negative(Axis::Latitude, Hemisphere::West), None);
        assert_eq!(says_negative(Axis::Longitude, Hemisphere::Negative), Some(true));
    }
}
