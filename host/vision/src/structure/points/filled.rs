//! Filled marks: a piece of ink on its own, as large, as square and as full of its box as its
//! sample's, with no line through it (a collapse structure's dot, a sinkhole's triangle, a sample
//! locality).
//!
//! Invariants: reads the colour's ink before any skeleton is traced; clears the marks it takes.

use super::marks::{Mark, find_marks, measured_mark};
use super::{FoundPoint, PointDetector, PointMap, PointPrompt, Reads, SampleInk, Shape};

/// The detector of filled marks.
#[derive(Debug)]
pub struct FilledMarks;

impl PointDetector for FilledMarks {
    fn name(&self) -> &'static str {
        "filled marks"
    }

    fn draws(&self, shape: Shape) -> bool {
        shape == Shape::Filled
    }

    fn reads(&self) -> Reads {
        Reads::Ink
    }

    /// Measured on the largest piece of its sample's ink.
    fn measure(&self, prompt: &PointPrompt, ink: &SampleInk) -> Option<PointPrompt> {
        measured_mark(prompt, ink, &ink.mask()).map(|(measured, _)| measured)
    }

    fn find(&self, map: &mut PointMap, prompts: &mut [PointPrompt], group: &[usize]) -> Vec<FoundPoint> {
        find_marks(self, map, prompts, group)
    }
}

impl Mark for FilledMarks {
    /// A filled mark has no line through it, and no dip direction.
    fn dip_if_mine(&self, line: Option<f64>) -> Option<Option<f64>> {
        line.is_none().then_some(None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::{TestMap, drawn, found_by, marked, prompt, scan_of};
    use super::*;

    /// A filled mark's prompt: its size, fill and taper as measured on its sample.
    fn mark(symbol: &str, strike_px: f64, fill: f64, taper: f64) -> PointPrompt {
        PointPrompt {
            symbol: symbol.to_owned(),
            ta1_type: "collapse structure",
            strike_px,
            tick_px: strike_px,
            fill,
            taper,
            ..prompt(Shape::Filled, &FilledMarks)
        }
    }

    #[test]
    fn a_filled_mark_on_its_own_is_found_and_one_strung_on_a_line_or_of_another_size_or_shape_is_not() {
        let (dot, triangle) = (mark("collapse structure", 6.0, 0.78, 1.0), mark("sinkhole", 8.0, 0.5, 0.35));
        let discs = [(20.0, 20.0), (60.0, 20.0), (100.0, 22.0), (140.0, 20.0), (180.0, 20.0)];
        let mut mask = marked(260, 60, &discs, 3.0, &[(60.0, 46.0)], 8.0);
        // A disc twice as large as the triangle, and a ring (a letter O): neither is a mark.
        for (k, m) in marked(260, 60, &[(220.0, 20.0)], 8.0, &[], 0.0).into_iter().enumerate() {
            mask[k] |= m;
        }
        for (k, m) in marked(260, 60, &[(220.0, 48.0)], 5.0, &[], 0.0).into_iter().enumerate() {
            let inside = marked(260, 60, &[(220.0, 48.0)], 3.5, &[], 0.0)[k];
            mask[k] |= m & (1 - inside);
        }
        // (A triangle's place is its box's middle.) The dot at x 180 is also joined to a line of its own ink, and the one at x 140 has a dark
        // line (of another colour) running through it, as a joint's dot has.
        for x in 180..200 {
            mask[20 * 260 + x] = 1;
        }
        let dark = |(x, y): (f64, f64)| (y - 20.0).abs() < 1.0 && (125.0..=155.0).contains(&x);
        let map = TestMap { mask: &mut mask, size: (260, 60), dark: &dark, lightness: &[], origin: (1000.0, 0.0) };
        let (mut found, _) = found_by(&[&FilledMarks], map, &mut [dot.clone(), triangle.clone()]);
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0).then(a.at.1.total_cmp(&b.at.1)));
        let at: Vec<(usize, (f64, f64))> = found.iter().map(|p| (p.prompt, p.at)).collect();
        assert_eq!(at, [(0, (1020.0, 20.0)), (0, (1060.0, 20.0)), (1, (1060.0, 46.5)), (0, (1100.0, 22.0))], "{found:?}");
        assert!(found.iter().all(|p| p.dip_direction.is_none() && p.confidence > 0.4), "{found:?}");
        assert_eq!(mask[20 * 260 + 20], 0, "a mark's ink is taken from the mask");
        assert_eq!(mask[20 * 260 + 140], 1, "the strung dot's is not");

        // A dot a pixel from a digit-sized bar, and a dotted line of dots the mark's size, are no
        // marks; a dot on a dark unit (dark all round) is one.
        let row: Vec<(f64, f64)> = (0..5).map(|k| (60.0 + 15.0 * k as f64, 40.0)).collect();
        let mut mask = marked(200, 60, &[&[(20.0, 20.0), (160.0, 20.0)][..], &row].concat(), 3.0, &[], 0.0);
        for y in 15..26 {
            mask[y * 200 + 25] = 1;
        }
        let dark_unit = |(x, _): (f64, f64)| x >= 140.0;
        let map = TestMap { mask: &mut mask, size: (200, 60), dark: &dark_unit, lightness: &[], origin: (0.0, 0.0) };
        let (found, _) = found_by(&[&FilledMarks], map, &mut [dot, triangle]);
        let at: Vec<(f64, f64)> = found.iter().map(|p| p.at).collect();
        assert_eq!(at, [(160.0, 20.0)], "{found:?}");
    }

    #[test]
    fn a_filled_mark_is_measured_on_its_sample_and_a_speck_or_a_stroke_is_none() {
        let sample = |mask: Vec<u8>, width: usize| scan_of(&mask, (width, 20), [20, 20, 20]);
        let collapse = || PointPrompt { entry: Some(3), detector: None, ..mark("collapse structure", 0.0, 0.0, 0.0) };
        let measured = collapse().calibrated(&sample(marked(20, 20, &[(10.0, 10.0)], 3.0, &[], 0.0), 20)).expect("a dot");
        assert!((measured.strike_px - 6.0).abs() <= 2.0 && measured.fill >= 0.7 && (0.7..=1.4).contains(&measured.taper), "{measured:?}");
        assert!(measured.measured_by(&FilledMarks), "{measured:?}");
        let triangle = collapse().calibrated(&sample(marked(20, 20, &[], 0.0, &[(10.0, 10.0)], 9.0), 20)).expect("a triangle");
        assert!(triangle.taper < 0.6 && triangle.fill < measured.fill && triangle.printed_as_triangle(), "{triangle:?}");
        assert!(collapse().calibrated(&sample(marked(20, 20, &[(10.0, 10.0)], 1.0, &[], 0.0), 20)).is_none(), "a speck");
        assert!(collapse().calibrated(&sample(drawn(40, 20, &[(5.0, 10.0, 35.0, 10.0)], 3.0), 40)).is_none(), "a stroke");
        assert_eq!(super::super::ta1_point_type("breccia pipe"), Some(("breccia pipe", Shape::Filled)));
        assert_eq!(super::super::ta1_point_type("sample locality"), Some(("sample location", Shape::Filled)));
    }

    #[test]
    fn filled_marks_are_measured_on_their_sample_and_found_on_the_map_at_three_scales() {
        for scale in [1.0, 2.0, 3.0] {
            let radius = 3.0 * scale;
            let side = (20.0 * scale) as usize;
            let middle = side as f64 / 2.0;
            let sample = scan_of(&marked(side, side, &[(middle, middle)], radius, &[], 0.0), (side, side), [30, 30, 30]);
            let measured = PointPrompt { detector: None, ..mark("collapse structure", 0.0, 0.0, 0.0) }.calibrated(&sample).expect("a dot");
            assert!(measured.measured_by(&FilledMarks) && (measured.strike_px / (2.0 * radius) - 1.0).abs() <= 0.2, "{scale}×: {measured:?}");
            let gap = 40.0 * scale;
            let centres: Vec<(f64, f64)> = (0..3).map(|k| (gap * (f64::from(k) + 0.5), gap / 2.0)).collect();
            let size = ((gap * 3.0) as usize, gap as usize);
            let mut mask = marked(size.0, size.1, &centres, radius, &[], 0.0);
            let map = TestMap { mask: &mut mask, size, dark: &|_| false, lightness: &[], origin: (0.0, 0.0) };
            let (found, _) = found_by(&[&FilledMarks], map, &mut [measured]);
            assert_eq!(found.len(), 3, "{scale}×: {found:?}");
        }
    }
}
