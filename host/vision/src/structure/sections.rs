//! Lines of section: a thin straight line drawn between a cross section's two letters (A and A′)
//! on the main map. Such a line is often thinner and lighter than any symbol's ink (a hairline
//! that blur and JPEG leave far from black), so it is found on the pixels themselves: at each step
//! along the segment from one letter to the other, the pixels across it much darker than the
//! ground around it; the straight line most of them vote for, fitted; and the run of steps that
//! hold to it.
//!
//! Invariants: pure arithmetic on windows of the scan the caller reads; points in the scan's
//! pixels; a line is returned only when it holds along most of the way between its letters.

use crate::image::Rgb;

/// A step's darkest pixel is a line's when it is this much darker (luma, 0–255) than the median
/// of the pixels across the step.
pub const DIP: f64 = 50.0;
/// A step holds to the fitted line when its darkest pixel is at most this far from it (pixels).
pub const HOLD_PX: f64 = 2.0;
/// A line runs on across at least this many steps that do not hold to it (a crossing, a label).
pub const GAP_STEPS: usize = 6;
/// The line holds along at least this share of the way between its letters' boxes.
pub const COVER: f64 = 0.7;

/// A segment's steps across which a line is looked for: one pixel apart from `from` to `to`
/// (scan pixels), each searched `reach` pixels either side.
#[derive(Debug, Clone, Copy)]
pub struct Crossing {
    /// Where the steps start.
    pub from: (f64, f64),
    /// Where they end.
    pub to: (f64, f64),
    /// How far either side of the segment each step is searched, in pixels.
    pub reach: f64,
    /// How many steps that do not hold to the line it runs on across (at least [`GAP_STEPS`]):
    /// a crossing line darkens the whole step, and is wider on a larger scan.
    pub gap_steps: usize,
}

impl Crossing {
    /// How many steps the segment has.
    pub fn steps(&self) -> usize {
        (self.to.0 - self.from.0).hypot(self.to.1 - self.from.1).floor() as usize + 1
    }

    /// The segment's unit direction and its normal (the direction turned a quarter clockwise, rows down).
    fn axes(&self) -> ((f64, f64), (f64, f64)) {
        let length = (self.to.0 - self.from.0).hypot(self.to.1 - self.from.1).max(1e-9);
        let along = ((self.to.0 - self.from.0) / length, (self.to.1 - self.from.1) / length);
        (along, (-along.1, along.0))
    }

    /// The scan's box (x0, y0, x1, y1) steps `first..last` reach into.
    pub fn window(&self, first: usize, last: usize) -> (f64, f64, f64, f64) {
        let (along, _) = self.axes();
        let at = |k: usize| (self.from.0 + along.0 * k as f64, self.from.1 + along.1 * k as f64);
        let (a, b) = (at(first), at(last));
        let r = self.reach + 1.0;
        (a.0.min(b.0) - r, a.1.min(b.1) - r, a.0.max(b.0) + r + 1.0, a.1.max(b.1) + r + 1.0)
    }

    /// For each of steps `first..last`, the offsets across the segment (pixels, along its normal)
    /// of the pixels [`DIP`] darker than the median across it (where another line crosses, its
    /// ink too: the hairline runs on through it). `window` holds the scan's pixels from `origin`.
    pub fn dips(&self, window: &Rgb, origin: (f64, f64), first: usize, last: usize) -> Vec<Vec<f64>> {
        let (along, normal) = self.axes();
        let reach = self.reach.ceil() as i64;
        let luma = |x: f64, y: f64| {
            let (col, row) = ((x - origin.0).floor(), (y - origin.1).floor());
            if col < 0.0 || row < 0.0 || col >= f64::from(window.width) || row >= f64::from(window.height) {
                return f64::NAN;
            }
            let at = 3 * (row as usize * window.width as usize + col as usize);
            let p = &window.pixels[at..at + 3];
            0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2])
        };
        (first..last)
            .map(|k| {
                let centre = (self.from.0 + along.0 * k as f64 + 0.5, self.from.1 + along.1 * k as f64 + 0.5);
                let across: Vec<f64> = (-reach..=reach).map(|o| luma(centre.0 + normal.0 * o as f64, centre.1 + normal.1 * o as f64)).collect();
                let mut sorted: Vec<f64> = across.iter().copied().filter(|l| !l.is_nan()).collect();
                sorted.sort_by(f64::total_cmp);
                let Some(&median) = sorted.get(sorted.len() / 2) else { return Vec::new() };
                (0..across.len()).filter(|&i| median - across[i] >= DIP).map(|i| i as f64 - reach as f64).collect()
            })
            .collect()
    }

    /// The line the steps' dips (`dips`, per step) draw: the straight line through most of them
    /// (voted for by its offsets at the first and the last step, then fitted by least squares to
    /// the dips within [`HOLD_PX`] of it), and the longest run of steps with a dip holding to it,
    /// across gaps of at most `gap_steps`; its two ends in the scan's pixels when the run covers
    /// at least [`COVER`] of the steps between `inner` (the steps where the letters' boxes end).
    pub fn line(&self, dips: &[Vec<f64>], inner: (usize, usize)) -> Option<[(f64, f64); 2]> {
        let last = dips.len().checked_sub(1).filter(|&last| last > 0)? as f64;
        let reach = self.reach.ceil() as i64;
        let bins = (2 * reach + 1) as usize;
        // Each dip votes, for each offset at the first step, for the offset at the last step its line reaches.
        let mut votes = vec![0_u32; bins * bins];
        for (k, offsets) in dips.iter().enumerate().filter(|(k, _)| *k > 0) {
            for &d in offsets {
                for start in -reach..=reach {
                    let end = (start as f64 + (d - start as f64) * last / k as f64).round() as i64;
                    if (-reach..=reach).contains(&end) {
                        votes[(start + reach) as usize * bins + (end + reach) as usize] += 1;
                    }
                }
            }
        }
        let (best, _) = votes.iter().enumerate().max_by_key(|(_, v)| **v)?;
        let (start, end) = ((best / bins) as f64 - reach as f64, (best % bins) as f64 - reach as f64);
        let nearest = |k: usize, slope: f64, offset: f64| {
            let expected = offset + slope * k as f64;
            dips[k].iter().copied().map(|d| (d, (d - expected).abs())).filter(|(_, off)| *off <= HOLD_PX).min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let close: Vec<(f64, f64)> = (0..dips.len()).filter_map(|k| Some((k as f64, nearest(k, (end - start) / last, start)?.0))).collect();
        let (slope, offset) = fit(&close)?;
        let mut best: Option<(usize, usize)> = None;
        let mut run: Option<(usize, usize)> = None;
        for k in (0..dips.len()).filter(|&k| nearest(k, slope, offset).is_some()) {
            run = match run {
                Some((start, end)) if k - end <= self.gap_steps.max(GAP_STEPS) + 1 => Some((start, k)),
                _ => Some((k, k)),
            };
            if best.is_none_or(|(s, e)| run.is_some_and(|(rs, re)| re - rs > e - s)) {
                best = run;
            }
        }
        let (first, last) = best?;
        let (low, high) = (first.max(inner.0), last.min(inner.1));
        if inner.1 <= inner.0 || high < low || ((high - low) as f64) < COVER * (inner.1 - inner.0) as f64 {
            return None;
        }
        let (along, normal) = self.axes();
        let at = |k: usize| {
            let across = offset + slope * k as f64;
            (self.from.0 + along.0 * k as f64 + 0.5 + normal.0 * across, self.from.1 + along.1 * k as f64 + 0.5 + normal.1 * across)
        };
        Some([at(first), at(last)])
    }
}

/// The least-squares line `d = offset + slope · k` through `points` (k, d); `None` for fewer than two.
fn fit(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mk, md) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let spread: f64 = points.iter().map(|p| (p.0 - mk).powi(2)).sum();
    if spread <= 0.0 {
        return None;
    }
    let slope = points.iter().map(|p| (p.0 - mk) * (p.1 - md)).sum::<f64>() / spread;
    Some((slope, md - slope * mk))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A light ground with a hairline of `ink` from `a` to `b` (one pixel wide), a darker line
    /// crossing it and a blot near one end.
    fn sheet(width: u32, height: u32, a: (f64, f64), b: (f64, f64), ink: u8) -> Rgb {
        let mut pixels = vec![0_u8; (width * height * 3) as usize];
        for y in 0..height {
            for x in 0..width {
                let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                let t = (((f64::from(x) + 0.5 - a.0) * dx + (f64::from(y) + 0.5 - a.1) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
                let off = (f64::from(x) + 0.5 - a.0 - t * dx).hypot(f64::from(y) + 0.5 - a.1 - t * dy);
                let value = if off <= 0.6 {
                    ink
                } else if (x == 150 || x == 151) && y < 90 {
                    20
                } else {
                    200
                };
                let at = 3 * (y * width + x) as usize;
                pixels[at..at + 3].copy_from_slice(&[value, value.saturating_add(10), value / 2]);
            }
        }
        Rgb { width, height, pixels }
    }

    #[test]
    fn a_hairline_between_two_letters_is_found_end_to_end_across_a_crossing_line() {
        let (a, b) = ((40.0, 60.0), (260.0, 40.0));
        let image = sheet(300, 100, a, b, 110);
        // The letters stand beyond the line's ends, a little off its axis.
        let crossing = Crossing { from: (20.0, 65.0), to: (280.0, 38.0), reach: 12.0, gap_steps: GAP_STEPS };
        let dips = crossing.dips(&image, (0.0, 0.0), 0, crossing.steps());
        let [from, to] = crossing.line(&dips, (12, crossing.steps() - 12)).expect("the hairline");
        assert!((from.0 - a.0).hypot(from.1 - a.1) <= 3.0 && (to.0 - b.0).hypot(to.1 - b.1) <= 3.0, "{from:?} {to:?}");

        // The same steps read in two windows give the same dips.
        let half = crossing.steps() / 2;
        let (x0, y0, x1, y1) = crossing.window(half, crossing.steps());
        let mut pixels = Vec::new();
        let (x0, y0, x1, y1) = (x0.max(0.0) as u32, y0.max(0.0) as u32, (x1 as u32).min(300), (y1 as u32).min(100));
        for y in y0..y1 {
            pixels.extend_from_slice(&image.pixels[3 * (y * 300 + x0) as usize..3 * (y * 300 + x1) as usize]);
        }
        let part = Rgb { width: x1 - x0, height: y1 - y0, pixels };
        assert_eq!(crossing.dips(&part, (f64::from(x0), f64::from(y0)), half, crossing.steps()), dips[half..]);
    }

    #[test]
    fn no_line_between_the_letters_is_none() {
        let image = sheet(300, 100, (40.0, 60.0), (100.0, 55.0), 110);
        let crossing = Crossing { from: (20.0, 65.0), to: (280.0, 38.0), reach: 12.0, gap_steps: GAP_STEPS };
        let dips = crossing.dips(&image, (0.0, 0.0), 0, crossing.steps());
        assert_eq!(crossing.line(&dips, (12, crossing.steps() - 12)), None, "a stub of a line is not a line of section");
        let blank = sheet(300, 100, (40.0, 60.0), (40.0, 60.0), 200);
        assert_eq!(crossing.line(&crossing.dips(&blank, (0.0, 0.0), 0, crossing.steps()), (12, 250)), None);
    }
}
