//! Tick symbols: a strike line with a dip tick on one side (inclined beds, foliation), and the
//! dip's number printed beside it. On a colour's skeleton one junction with three short arms to
//! free ends and nothing else: two in one line (the strike), the third across it (the tick, whose
//! side is the dip's direction).
//!
//! Invariants: reads the skeleton; a junction's arms are one symbol's at most.

use super::numbers::number_box;
use super::on_skeleton::{LOOK_LEAST, OnSkeleton, Symbol, fit_by_lengths, junction_symbols};
use super::{NumberBox, NumberBoxes, PointPrompt, Shape};
use crate::image::Rgb;
use crate::structure::skeleton::Branch;

/// The detector of tick symbols drawn wide enough for a skeleton to show their tick.
#[derive(Debug)]
pub struct TickSymbols;

impl OnSkeleton for TickSymbols {
    const NAME: &'static str = "tick symbols";
    const ITSELF: &'static TickSymbols = &TickSymbols;
    const SHAPE: Shape = Shape::Tick;
    const LEAST_ON_MAP: usize = LOOK_LEAST;

    fn seen(&self, branches: &[Branch], largest_px: f64) -> Vec<Symbol> {
        junction_symbols(branches, largest_px).into_iter().filter(|symbol| symbol.shape == Shape::Tick).collect()
    }

    /// A tick symbol's arms are shorter than its strike line.
    fn largest_px(&self, prompt: &PointPrompt) -> f64 {
        0.8 * prompt.strike_px
    }

    fn fit(&self, prompt: &PointPrompt, seen: &Symbol) -> f64 {
        fit_by_lengths(prompt, seen, 0.6..=1.6, 0.5)
    }

    /// The number printed in the symbol's own ink beside it.
    fn printed_numbers<'a>(&self, window: &'a Rgb, at: (f64, f64), prompt: &'a PointPrompt) -> NumberBoxes<'a> {
        Box::new(number_box(window, at, prompt).map(|region| NumberBox { region, own_ink: true }).into_iter())
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::{TestMap, attitude, drawn, found_by, found_on_mask, prompt, scan_of};
    use super::*;

    #[test]
    fn an_attitude_is_found_with_its_dip_direction_and_a_letter_t_or_a_crossing_line_is_not() {
        let mut segments = Vec::new();
        for (k, towards) in [0.0, 35.0, 90.0, 160.0, 200.0, 300.0].into_iter().enumerate() {
            segments.extend(attitude(30.0 + 50.0 * k as f64, 30.0, towards, 28.0, 9.0));
        }
        // A letter T (its stem longer than its bar) and a line crossing a strike line.
        segments.extend([(20.0, 80.0, 34.0, 80.0), (27.0, 80.0, 27.0, 97.0)]);
        segments.extend(attitude(100.0, 90.0, 90.0, 28.0, 9.0));
        segments.push((60.0, 90.0, 140.0, 90.0));
        let (w, h) = (340, 120);
        let mut mask = drawn(w, h, &segments, 3.0);
        let map = TestMap { mask: &mut mask, size: (w, h), dark: &|_| false, lightness: &[], origin: (1000.0, 2000.0) };
        let (found, used) = found_by(&[&TickSymbols], map, &mut [prompt(Shape::Tick, &TickSymbols)]);
        assert_eq!(found.len(), 6, "{found:?}");
        assert_eq!(used, 18);
        for (k, towards) in [0.0, 35.0, 90.0, 160.0, 200.0, 300.0].into_iter().enumerate() {
            let point = found.iter().find(|p| (p.at.0 - 1030.0 - 50.0 * k as f64).abs() < 3.0).unwrap_or_else(|| panic!("{k}: {found:?}"));
            assert!((point.at.1 - 2030.0).abs() < 3.0, "{point:?}");
            let off = (point.dip_direction.unwrap() - towards + 540.0).rem_euclid(360.0) - 180.0;
            assert!(off.abs() <= 6.0, "{towards}: {point:?}");
            assert!(point.confidence > 0.5, "{point:?}");
        }
    }

    #[test]
    fn without_an_explanation_attitudes_are_measured_on_the_map_when_enough_of_them_agree() {
        let mut segments = Vec::new();
        for (k, towards) in [10.0, 80.0, 150.0, 220.0, 290.0, 340.0].into_iter().enumerate() {
            segments.extend(attitude(30.0 + 50.0 * k as f64, 30.0, towards, 28.0, 9.0));
        }
        // A line the map's common stroke is measured on.
        segments.insert(0, (10.0, 55.0, 330.0, 55.0));
        let mut prompts = [PointPrompt::by_look().remove(0)];
        let (found, _) = found_on_mask(&[&TickSymbols], &mut drawn(340, 60, &segments, 3.0), (340, 60), &mut prompts);
        let looked = &prompts[0];
        assert!(looked.measured_by(&TickSymbols), "{looked:?}");
        assert!((looked.strike_px - 28.0).abs() <= 4.0 && (looked.tick_px - 9.0).abs() <= 3.0, "{looked:?}");
        assert_eq!(found.len(), 6, "{found:?}");
        assert!(found.iter().all(|p| p.confidence <= crate::structure::LOOK_CONFIDENCE), "{found:?}");

        let mut few = [PointPrompt::by_look().remove(0)];
        let (found, _) = found_on_mask(&[&TickSymbols], &mut drawn(340, 60, &segments[..9], 3.0), (340, 60), &mut few);
        assert!(few[0].detector.is_none() && few[0].strike_px == 0.0, "four symbols are too few to say what an attitude looks like: {:?}", few[0]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_thick_attitude_on_a_large_scan_is_found_as_a_thin_one() {
        let mut segments = Vec::new();
        for (k, towards) in [20.0, 135.0, 250.0].into_iter().enumerate() {
            segments.extend(attitude(70.0 + 130.0 * k as f64, 70.0, towards, 100.0, 32.0));
        }
        let thick = PointPrompt { width_px: 10.0, strike_px: 90.0, tick_px: 26.0, ..prompt(Shape::Tick, &TickSymbols) };
        let (mut found, _) = found_on_mask(&[&TickSymbols], &mut drawn(420, 140, &segments, 10.0), (420, 140), &mut [thick]);
        assert_eq!(found.len(), 3, "{found:?}");
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0));
        for (point, towards) in found.iter().zip([20.0, 135.0, 250.0]) {
            assert!((point.dip_direction.unwrap() - towards).abs() <= 3.0, "{towards}: {point:?}");
        }
    }

    #[test]
    fn a_tick_measured_on_a_piece_of_its_samples_broken_strike_line_is_none() {
        let sample = |segments: &[(f64, f64, f64, f64)]| scan_of(&drawn(60, 30, segments, 2.0), (60, 30), [20, 20, 20]);
        let unmeasured = || PointPrompt { detector: None, strike_px: 0.0, ..prompt(Shape::Tick, &TickSymbols) };
        let tick = (20.0, 15.0, 20.0, 9.0);
        let whole = unmeasured().calibrated(&sample(&[(10.0, 15.0, 36.0, 15.0), tick])).expect("a whole strike line");
        assert!((whole.strike_px - 26.0).abs() <= 3.0 && whole.measured_by(&TickSymbols), "{whole:?}");
        // Its strike line broken by a pixel's gap: the piece with the tick is a symbol of its own,
        // but no measure of it.
        let piece = [(14.0, 15.0, 26.0, 15.0), tick];
        assert!(unmeasured().calibrated(&sample(&piece)).is_some(), "a piece on its own");
        assert!(unmeasured().calibrated(&sample(&[piece[0], piece[1], (29.5, 15.0, 50.0, 15.0)])).is_none());
        // Ink in line with it past a wider gap (its dip, a word) is not its strike line.
        let beside = unmeasured().calibrated(&sample(&[(10.0, 15.0, 36.0, 15.0), (41.0, 15.0, 55.0, 15.0), tick])).expect("a whole strike line");
        assert!((beside.strike_px - whole.strike_px).abs() < 0.5, "{beside:?}");
    }

    #[test]
    fn tick_symbols_are_measured_on_their_sample_and_found_on_the_map_at_three_scales() {
        let towards = [15.0, 100.0, 190.0, 280.0];
        for scale in [1.0, 2.0, 3.0] {
            // A symbol 2.2 mm long with a 0.7 mm tick and a 0.2 mm stroke, at about 250, 500 and 750 dpi.
            let (strike, tick, stroke) = (22.0 * scale, 7.0 * scale, 2.0 * scale);
            let side = (40.0 * scale) as usize;
            let sample = scan_of(&drawn(side, side, &attitude(side as f64 / 2.0, side as f64 / 2.0, 0.0, strike, tick), stroke), (side, side), [30, 30, 30]);
            let unmeasured = PointPrompt { detector: None, strike_px: 0.0, tick_px: 0.0, width_px: 1.0, ..prompt(Shape::Tick, &TickSymbols) };
            let measured = unmeasured.calibrated(&sample).unwrap_or_else(|| panic!("measured at {scale}×"));
            assert!(measured.measured_by(&TickSymbols) && (measured.strike_px / strike - 1.0).abs() <= 0.15, "{scale}×: {measured:?}");
            let gap = 60.0 * scale;
            let segments: Vec<_> = towards.iter().enumerate().flat_map(|(k, &t)| attitude(gap * (k as f64 + 0.5), gap / 2.0, t, strike, tick)).collect();
            let size = ((gap * 4.0) as usize, gap as usize);
            let (found, _) = found_on_mask(&[&TickSymbols], &mut drawn(size.0, size.1, &segments, stroke), size, &mut [measured]);
            assert_eq!(found.len(), towards.len(), "{scale}×: {found:?}");
            for point in &found {
                let k = (point.at.0 / gap).floor() as usize;
                let turn = (point.dip_direction.expect("a dip direction") - towards[k] + 540.0).rem_euclid(360.0) - 180.0;
                assert!(turn.abs() <= 6.0, "{scale}×: {point:?}");
            }
        }
    }
}
