//! Crosses (vertical beds): a strike line with a tick square to it on both sides. On a colour's
//! skeleton one junction with four short arms to free ends and nothing else, in two straight
//! pairs: the longer is the strike. It has no dip direction.
//!
//! Invariants: reads the skeleton after the tick symbols; a junction's arms are one symbol's at
//! most.

use super::on_skeleton::{LOOK_LEAST, OnSkeleton, Symbol, fit_by_lengths, junction_symbols};
use super::{PointPrompt, Shape};
use crate::structure::skeleton::Branch;

/// The detector of crosses.
#[derive(Debug)]
pub struct Crosses;

impl OnSkeleton for Crosses {
    const NAME: &'static str = "crosses";
    const ITSELF: &'static Crosses = &Crosses;
    const SHAPE: Shape = Shape::Cross;
    const LEAST_ON_MAP: usize = LOOK_LEAST;

    fn seen(&self, branches: &[Branch], largest_px: f64) -> Vec<Symbol> {
        junction_symbols(branches, largest_px).into_iter().filter(|symbol| symbol.shape == Shape::Cross).collect()
    }

    /// A cross's arms are shorter than its strike line.
    fn largest_px(&self, prompt: &PointPrompt) -> f64 {
        0.8 * prompt.strike_px
    }

    fn fit(&self, prompt: &PointPrompt, seen: &Symbol) -> f64 {
        fit_by_lengths(prompt, seen, 0.6..=1.6, 0.5)
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::{attitude, drawn, found_on_mask, prompt, scan_of};
    use super::super::tick::TickSymbols;
    use super::*;

    /// A cross at `(x, y)`: a strike line `strike` long square to `towards`, its ticks `tick` long both ways.
    fn cross(x: f64, y: f64, towards: f64, strike: f64, tick: f64) -> [(f64, f64, f64, f64); 3] {
        let [strike, tick] = attitude(x, y, towards, strike, tick);
        let (dx, dy) = (tick.2 - tick.0, tick.3 - tick.1);
        [strike, tick, (x, y, x - dx, y - dy)]
    }

    #[test]
    fn vertical_beds_are_a_cross_without_a_dip_direction() {
        let mut prompts = [prompt(Shape::Tick, &TickSymbols), PointPrompt { strike_px: 28.0, ..prompt(Shape::Cross, &Crosses) }];
        let (found, _) = found_on_mask(&[&TickSymbols, &Crosses], &mut drawn(80, 80, &cross(40.0, 40.0, 60.0, 30.0, 9.0), 3.0), (80, 80), &mut prompts);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].prompt, found[0].dip_direction), (1, None));
    }

    #[test]
    fn crosses_are_measured_on_their_sample_and_found_on_the_map_at_three_scales() {
        for scale in [1.0, 2.0, 3.0] {
            let (strike, tick, stroke) = (24.0 * scale, 7.0 * scale, 2.0 * scale);
            let side = (40.0 * scale) as usize;
            let middle = side as f64 / 2.0;
            let sample = scan_of(&drawn(side, side, &cross(middle, middle, 0.0, strike, tick), stroke), (side, side), [30, 30, 30]);
            let unmeasured = PointPrompt { detector: None, strike_px: 0.0, tick_px: 0.0, width_px: 1.0, ..prompt(Shape::Cross, &Crosses) };
            let measured = unmeasured.calibrated(&sample).unwrap_or_else(|| panic!("measured at {scale}×"));
            assert!(measured.measured_by(&Crosses) && (measured.strike_px / strike - 1.0).abs() <= 0.15, "{scale}×: {measured:?}");
            let gap = 60.0 * scale;
            let segments: Vec<_> =
                [20.0, 75.0, 130.0].iter().enumerate().flat_map(|(k, &t)| cross(gap * (k as f64 + 0.5), gap / 2.0, t, strike, tick)).collect();
            let size = ((gap * 3.0) as usize, gap as usize);
            let (found, _) = found_on_mask(&[&Crosses], &mut drawn(size.0, size.1, &segments, stroke), size, &mut [measured]);
            assert_eq!(found.len(), 3, "{scale}×: {found:?}");
            assert!(found.iter().all(|point| point.dip_direction.is_none()), "{scale}×: {found:?}");
        }
    }
}
