//! Strung dots: a dot with a dark hairline running through it (the strike of a vertical joint),
//! its dip direction square to the line. On its sample the dot is the strongest ink and the
//! hairline prints lighter; on the map the line through it may be any dark ink.
//!
//! Invariants: reads the colour's ink before any skeleton is traced; clears the dots it takes
//! (not their line); a dip direction is given 0–180° from up (a vertical joint dips either way).

use super::marks::{Mark, find_marks, measured_mark, threaded_on_sample};
use super::{FoundPoint, PointDetector, PointMap, PointPrompt, Reads, SampleInk, Shape, bearing};

/// A strung dot's sample: its dot is the ink at least this share as strong as its strongest (its
/// hairline prints lighter).
const STRUNG_DOT: f64 = 0.8;

/// The detector of strung dots.
#[derive(Debug)]
pub struct StrungDots;

impl PointDetector for StrungDots {
    fn name(&self) -> &'static str {
        "strung dots"
    }

    fn draws(&self, shape: Shape) -> bool {
        shape == Shape::Strung
    }

    fn reads(&self) -> Reads {
        Reads::Ink
    }

    /// Measured on the largest piece of its strongest ink (its dot; its hairline prints lighter and
    /// may touch it), when a line as dark as the map's dark ink runs through it.
    fn measure(&self, prompt: &PointPrompt, ink: &SampleInk) -> Option<PointPrompt> {
        let dot: Vec<u8> = ink.strength.iter().map(|&s| u8::from(s >= STRUNG_DOT * ink.strongest)).collect();
        measured_mark(prompt, ink, &dot).filter(|(_, piece)| threaded_on_sample(piece, ink)).map(|(measured, _)| measured)
    }

    fn find(&self, map: &mut PointMap, prompts: &mut [PointPrompt], group: &[usize]) -> Vec<FoundPoint> {
        find_marks(self, map, prompts, group)
    }
}

impl Mark for StrungDots {
    /// A strung dot has a line through it; it dips square to its line, either way: given as the
    /// direction 0–180° from up.
    fn dip_if_mine(&self, line: Option<f64>) -> Option<Option<f64>> {
        line.map(|angle| Some(bearing((-angle.sin(), angle.cos())) % 180.0))
    }
}

#[cfg(test)]
mod tests {
    use super::super::filled::FilledMarks;
    use super::super::samples::{TestMap, found_by, marked, on_line, prompt};
    use super::*;
    use crate::image::Rgb;

    /// A strung dot's prompt, measured 6 px across.
    fn joint_prompt() -> PointPrompt {
        PointPrompt {
            symbol: "strike of vertical".to_owned(),
            ta1_type: "vertical joint",
            strike_px: 6.0,
            tick_px: 6.0,
            fill: 0.78,
            taper: 1.0,
            ..prompt(Shape::Strung, &StrungDots)
        }
    }

    /// A sample `side` pixels square: a dot of `radius` at its middle (when `dot`), a hairline
    /// through it striking 135° in grey `line` (when given), lighter within `radius` + 2 of the dot
    /// (when `beside`, as an enlarged scan prints it).
    fn sample(side: usize, radius: f64, dot: bool, line: Option<u8>, beside: bool) -> Rgb {
        let middle = side as f64 / 2.0;
        Rgb {
            width: side as u32,
            height: side as u32,
            pixels: (0..side * side)
                .flat_map(|k| {
                    let at = ((k % side) as f64 + 0.5, (k / side) as f64 + 0.5);
                    let from_middle = (at.0 - middle).hypot(at.1 - middle);
                    if dot && from_middle <= radius {
                        [20, 20, 20]
                    } else if let Some(grey) = line.filter(|_| on_line(at, (middle, middle), 135.0, middle - 4.0)) {
                        if beside && from_middle <= radius + 2.0 { [170; 3] } else { [grey; 3] }
                    } else {
                        [250, 250, 250]
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn a_dot_with_a_dark_line_through_it_is_a_vertical_joint_dipping_square_to_the_line_and_one_without_is_a_filled_mark() {
        let collapse =
            PointPrompt { ta1_type: "collapse structure", fill: 0.78, taper: 1.0, strike_px: 6.0, tick_px: 6.0, ..prompt(Shape::Filled, &FilledMarks) };
        let centres = [(20.0, 20.0), (60.0, 20.0), (100.0, 20.0), (140.0, 20.0), (180.0, 20.0)];
        let mut mask = marked(210, 40, &centres, 3.0, &[], 0.0);
        // Lines striking 30°, 90° and 163° through the first three dots, dark but of another ink;
        // through the fifth, a line striking 20° crossing a shorter one striking 110°.
        let lines = [(0, 30.0, 12.0), (1, 90.0, 12.0), (2, 163.0, 12.0), (4, 20.0, 12.0), (4, 110.0, 7.0)];
        let dark = |at: (f64, f64)| lines.iter().any(|&(k, strike, reach)| on_line(at, centres[k], strike, reach));
        let map = TestMap { mask: &mut mask, size: (210, 40), dark: &dark, lightness: &[], origin: (0.0, 0.0) };
        let (mut found, _) = found_by(&[&StrungDots, &FilledMarks], map, &mut [collapse, joint_prompt()]);
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0));
        let kinds: Vec<(usize, (f64, f64))> = found.iter().map(|p| (p.prompt, p.at)).collect();
        assert_eq!(kinds, [(1, (20.0, 20.0)), (1, (60.0, 20.0)), (1, (100.0, 20.0)), (0, (140.0, 20.0)), (1, (180.0, 20.0))], "{found:?}");
        for (point, expected) in found.iter().zip([Some(120.0), Some(0.0), Some(73.0), None, Some(110.0)]) {
            let Some(expected) = expected else { continue };
            let off = (point.dip_direction.expect("a joint's dip direction") - expected + 90.0).rem_euclid(180.0) - 90.0;
            assert!(off.abs() <= 1.5, "dip direction {expected}: {found:?}");
        }
        assert!(found[3].dip_direction.is_none(), "a filled mark has none");

        // Measured on its sample: the dot is its strongest ink, the lighter hairline through it
        // makes it strung; a dot alone, or a line alone, is no strung dot.
        let strung = || PointPrompt { strike_px: 0.0, detector: None, ..joint_prompt() };
        let measured = strung().calibrated(&sample(30, 3.0, true, Some(110), false)).expect("a strung dot");
        assert!((measured.strike_px - 6.0).abs() <= 2.0 && measured.colour.0 < 60 && measured.measured_by(&StrungDots), "{measured:?}");
        assert!(strung().calibrated(&sample(30, 3.0, true, Some(110), true)).is_some(), "a hairline light beside its dot");
        assert!(strung().calibrated(&sample(30, 3.0, true, None, false)).is_none(), "a dot alone");
        assert!(strung().calibrated(&sample(30, 3.0, false, Some(110), false)).is_none(), "a line alone");
        // A hairline too light to be the map's dark ink would leave its joints as filled marks.
        assert!(strung().calibrated(&sample(30, 3.0, true, Some(170), false)).is_none(), "a light hairline");
        assert_eq!(super::super::ta1_point_type("strike of vertical"), Some(("vertical joint", Shape::Strung)));
    }

    #[test]
    fn strung_dots_are_measured_on_their_sample_and_found_on_the_map_at_three_scales() {
        for scale in [1.0, 2.0, 3.0] {
            let radius = 3.0 * scale;
            let measured = PointPrompt { strike_px: 0.0, detector: None, ..joint_prompt() }
                .calibrated(&sample((30.0 * scale) as usize, radius, true, Some(110), false))
                .unwrap_or_else(|| panic!("measured at {scale}×"));
            assert!(measured.measured_by(&StrungDots) && (measured.strike_px / (2.0 * radius) - 1.0).abs() <= 0.2, "{scale}×: {measured:?}");
            let gap = 40.0 * scale;
            let centres: Vec<(f64, f64)> = (0..3).map(|k| (gap * (f64::from(k) + 0.5), gap / 2.0)).collect();
            let strikes = [30.0, 90.0, 150.0];
            let size = ((gap * 3.0) as usize, gap as usize);
            let mut mask = marked(size.0, size.1, &centres, radius, &[], 0.0);
            let dark = |at: (f64, f64)| (0..3).any(|k| on_line(at, centres[k], strikes[k], 4.0 * radius));
            let map = TestMap { mask: &mut mask, size, dark: &dark, lightness: &[], origin: (0.0, 0.0) };
            let (found, _) = found_by(&[&StrungDots], map, &mut [measured]);
            assert_eq!(found.len(), 3, "{scale}×: {found:?}");
            for point in &found {
                let k = (point.at.0 / gap).floor() as usize;
                let off = (point.dip_direction.expect("a dip direction") - (strikes[k] + 90.0) + 90.0).rem_euclid(180.0) - 90.0;
                assert!(off.abs() <= 2.0, "{scale}×: {point:?}");
            }
        }
    }
}
