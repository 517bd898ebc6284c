//! Lines of section: a thin straight line drawn between a cross section's two letters (A and A′)
//! on the main map. Such a line is often thinner and lighter than any symbol's ink (a hairline
//! that blur and JPEG leave far from black), so it is found on the pixels themselves: at each step
//! along the segment from one letter to the other, the pixels across it much darker than the
//! ground around it; the straight line most of them vote for, fitted; and the run of steps that
//! hold to it.
//!
//! When its letters are too small for the text detector, the line is found first: the main map
//! shrunk as it is classified ([`ShrunkMap`], each block kept as its darkest grey so a hairline
//! survives), its ridge pixels (darker than the pixels either side) voted into a Hough transform,
//! and along each strong straight line the longest run that is mostly inked ([`Straight`]); the
//! caller then reads the letters at its ends.
//!
//! Invariants: pure arithmetic on windows of the scan the caller reads; points in the scan's
//! pixels; a line between letters is returned only when it holds along most of the way between
//! them, and ends where their boxes begin; a straight line, only when it is mostly inked along
//! its whole length.

use geomap_model::page::segment_distance;

use crate::image::{Rgb, grey};

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
    /// at least [`COVER`] of the steps between `inner` (the steps where the letters' boxes end),
    /// a run going on into a letter's box ending where the box begins.
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
        // The line ends where its letters' boxes begin, should it run on into them.
        let (low, high) = (first.max(inner.0), last.min(inner.1));
        if inner.1 <= inner.0 || high < low || ((high - low) as f64) < COVER * (inner.1 - inner.0) as f64 {
            return None;
        }
        let (along, normal) = self.axes();
        let at = |k: usize| {
            let across = offset + slope * k as f64;
            (self.from.0 + along.0 * k as f64 + 0.5 + normal.0 * across, self.from.1 + along.1 * k as f64 + 0.5 + normal.1 * across)
        };
        Some([at(low), at(high)])
    }
}

/// The shrunk map's longer side is at most this many pixels.
pub const SHRUNK_PX: u32 = 3000;
/// A ridge pixel is at most this grey (0–255)…
const RIDGE_GREY: i16 = 140;
/// …and at least this much darker than both pixels [`RIDGE_SPAN`] away on one of four directions.
const RIDGE_DROP: i16 = 25;
/// How far either side a ridge pixel's neighbours are looked at, in shrunk pixels.
const RIDGE_SPAN: isize = 2;
/// Angles of the Hough transform over half a turn (a quarter degree each).
const HOUGH_ANGLES: usize = 720;
/// The Hough transform's sums carry this many bits below a pixel.
const HOUGH_FRACTION_BITS: u32 = 12;
/// At most this many of the transform's strongest lines are followed…
const HOUGH_PEAKS: usize = 200;
/// …each at least this many angle steps or [`PEAK_APART_PX`] from a stronger one.
const PEAK_APART_STEPS: usize = 8;
/// See [`PEAK_APART_STEPS`].
const PEAK_APART_PX: usize = 6;
/// A run along a line goes on across gaps of at most this many shrunk pixels (a crossing, a label).
const RUN_GAP_PX: usize = 12;
/// A run's ends are trimmed back to where at least [`TRIM_SHARE`] of the next this many steps are inked.
const TRIM_PX: i64 = 24;
/// See [`TRIM_PX`].
const TRIM_SHARE: f64 = 0.5;
/// A run is a drawn line when at least this share of its steps have a ridge pixel on or beside them.
pub const RUN_INKED: f64 = 0.85;
/// A run is long enough when it spans at least this share of the map's longer side.
pub const RUN_SHARE: f64 = 0.15;
/// A line whose ends both lie within this many shrunk pixels of a longer line is that line.
const SAME_LINE_PX: f64 = 4.0;
/// At most this many straight lines are returned, the longest first.
pub const STRAIGHT_MAX: usize = 16;

/// A thin straight line drawn on the main map, its ends in the scan's pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Straight {
    /// One end.
    pub from: (f64, f64),
    /// The other end.
    pub to: (f64, f64),
    /// How many of the scan's pixels one pixel of the shrunk map spans across (a letter's size
    /// commonly scales with it; a sheet just over [`SHRUNK_PX`] is shrunk by a whole 2).
    pub scale: f64,
}

/// The main map shrunk to at most [`SHRUNK_PX`] on its longer side, each block of `factor ×
/// factor` pixels kept as its darkest grey, filled strip by strip as the map is classified.
#[derive(Debug)]
pub struct ShrunkMap {
    factor: usize,
    width: usize,
    height: usize,
    grey: Vec<u8>,
    origin: (u32, u32),
}

impl ShrunkMap {
    /// A blank shrunk map for a main map of `width × height` whose top left is `origin` on the scan.
    pub fn new((width, height): (u32, u32), origin: (u32, u32)) -> ShrunkMap {
        let factor = width.max(height).div_ceil(SHRUNK_PX).max(1) as usize;
        let (shrunk_width, shrunk_height) = ((width as usize).div_ceil(factor), (height as usize).div_ceil(factor));
        ShrunkMap { factor, width: shrunk_width, height: shrunk_height, grey: vec![u8::MAX; shrunk_width * shrunk_height], origin }
    }

    /// Takes in `strip`: whole rows of the main map from its row `first_row`.
    pub fn mark(&mut self, strip: &Rgb, first_row: u32) {
        if strip.width == 0 {
            return;
        }
        for (k, row) in strip.pixels.chunks_exact(3 * strip.width as usize).enumerate() {
            let y = (first_row as usize + k) / self.factor;
            let Some(shrunk) = self.grey.get_mut(y * self.width..(y + 1) * self.width) else { return };
            for (block, pixels) in shrunk.iter_mut().zip(row.chunks(3 * self.factor)) {
                for p in pixels.chunks_exact(3) {
                    *block = (*block).min(grey(p));
                }
            }
        }
    }

    /// Whether the shrunk pixel at `(x, y)` is darker than its neighbours either side on one of
    /// four directions (a thin line's middle; a thick line's middle is not).
    fn is_ridge(&self, x: usize, y: usize) -> bool {
        let grey = |x: isize, y: isize| i16::from(self.grey[y as usize * self.width + x as usize]);
        let (x, y) = (x as isize, y as isize);
        let here = grey(x, y);
        let inside = RIDGE_SPAN..;
        if here > RIDGE_GREY || !inside.contains(&x) || !inside.contains(&y) || x + RIDGE_SPAN >= self.width as isize || y + RIDGE_SPAN >= self.height as isize
        {
            return false;
        }
        [(RIDGE_SPAN, 0), (0, RIDGE_SPAN), (RIDGE_SPAN, RIDGE_SPAN), (RIDGE_SPAN, -RIDGE_SPAN)]
            .iter()
            .any(|&(dx, dy)| grey(x - dx, y - dy) - here >= RIDGE_DROP && grey(x + dx, y + dy) - here >= RIDGE_DROP)
    }

    /// The thin straight lines at least [`RUN_SHARE`] of the map's longer side long and at least
    /// [`RUN_INKED`] inked, the longest first (at most [`STRAIGHT_MAX`]); `None` once `cancelled`.
    pub fn straight_lines(&self, cancelled: &dyn Fn() -> bool) -> Option<Vec<Straight>> {
        let (width, height) = (self.width, self.height);
        let ridge: Vec<bool> = (0..width * height).map(|i| self.is_ridge(i % width, i / width)).collect();
        let points: Vec<(i64, i64)> = (0..ridge.len()).filter(|&i| ridge[i]).map(|i| ((i % width) as i64, (i / width) as i64)).collect();
        let reach = (width as f64).hypot(height as f64).ceil() as usize;
        let rhos = 2 * reach + 1;
        let angle = |step: usize| step as f64 * std::f64::consts::PI / HOUGH_ANGLES as f64;
        // Votes in fixed point (a 2^-12 pixel): whole numbers add faster than floats round.
        let mut votes = vec![0_u32; HOUGH_ANGLES * rhos];
        let one = f64::from(1 << HOUGH_FRACTION_BITS);
        let offset = ((reach as i64) << HOUGH_FRACTION_BITS) + (1 << (HOUGH_FRACTION_BITS - 1));
        for (step, row) in votes.chunks_exact_mut(rhos).enumerate() {
            if step % 64 == 0 && cancelled() {
                return None;
            }
            let (cos, sin) = ((angle(step).cos() * one).round() as i64, (angle(step).sin() * one).round() as i64);
            for &(x, y) in &points {
                row[((x * cos + y * sin + offset) >> HOUGH_FRACTION_BITS) as usize] += 1;
            }
        }
        let shortest = RUN_SHARE * width.max(height) as f64;
        let least_votes = ((shortest * RUN_INKED / 2.0) as u32).max(2);
        let peaks = strongest_peaks(&votes, rhos, least_votes);
        let on = |x: isize, y: isize| x >= 0 && y >= 0 && (x as usize) < width && (y as usize) < height && ridge[y as usize * width + x as usize];
        let mut lines = Vec::new();
        for (step, rho) in peaks {
            let (cos, sin) = (angle(step).cos(), angle(step).sin());
            let rho = rho as f64 - reach as f64;
            let at = |t: f64| (rho * cos - t * sin, rho * sin + t * cos);
            // The steps along the line on a ridge, cut into runs at gaps of more than RUN_GAP_PX,
            // each trimmed to the line's own ink; the longest run long and inked enough kept.
            let hits: Vec<i64> = (-(reach as i64)..=reach as i64)
                .filter(|&t| {
                    let (x, y) = at(t as f64);
                    let (x, y) = (x.round() as isize, y.round() as isize);
                    on(x, y) || on(x - 1, y) || on(x + 1, y) || on(x, y - 1) || on(x, y + 1)
                })
                .collect();
            let best = hits
                .chunk_by(|a, b| b - a <= RUN_GAP_PX as i64 + 1)
                .filter_map(|run| trimmed(run).map(|run| (run[0], run[run.len() - 1], run.len())))
                .filter(|&(first, last, inked)| (last - first) as f64 >= shortest && inked as f64 >= RUN_INKED * (last - first + 1) as f64)
                .max_by_key(|&(first, last, _)| last - first);
            let Some((first, last, _)) = best else { continue };
            let length = (last - first) as f64;
            let scan = |(x, y): (f64, f64)| {
                let factor = self.factor as f64;
                ((x + 0.5) * factor + f64::from(self.origin.0), (y + 0.5) * factor + f64::from(self.origin.1))
            };
            lines.push((length, Straight { from: scan(at(first as f64)), to: scan(at(last as f64)), scale: self.factor as f64 }));
        }
        lines.sort_by(|a, b| b.0.total_cmp(&a.0));
        // A line whose ends both lie on a longer one is that line again, from a nearby peak.
        let mut kept: Vec<Straight> = Vec::new();
        for (_, line) in lines {
            let slack = SAME_LINE_PX * line.scale;
            if kept.len() < STRAIGHT_MAX
                && !kept.iter().any(|k| segment_distance(line.from, k.from, k.to) <= slack && segment_distance(line.to, k.from, k.to) <= slack)
            {
                kept.push(line);
            }
        }
        Some(kept)
    }
}

/// The [`HOUGH_PEAKS`] strongest cells of `votes` (rows of `rhos` distances, one per angle step)
/// with at least `least_votes`, as (angle step, distance index), each at least [`PEAK_APART_STEPS`]
/// or [`PEAK_APART_PX`] from a stronger one, also across half a turn (a line near upright votes
/// both just past 0° and just short of 180°, at its distance negated).
fn strongest_peaks(votes: &[u32], rhos: usize, least_votes: u32) -> Vec<(usize, usize)> {
    let mut strong: Vec<(u32, usize, usize)> = votes.iter().enumerate().filter(|(_, v)| **v >= least_votes).map(|(i, v)| (*v, i / rhos, i % rhos)).collect();
    strong.sort_unstable_by_key(|&(votes, _, _)| std::cmp::Reverse(votes));
    let near = |(s, r): (usize, usize), (step, rho): (usize, usize)| {
        let (apart, mirrored) = (s.abs_diff(step), rhos - 1 - rho);
        (apart < PEAK_APART_STEPS && r.abs_diff(rho) < PEAK_APART_PX) || (HOUGH_ANGLES - apart < PEAK_APART_STEPS && r.abs_diff(mirrored) < PEAK_APART_PX)
    };
    let mut peaks: Vec<(usize, usize)> = Vec::new();
    for (_, step, rho) in strong {
        if peaks.len() == HOUGH_PEAKS {
            break;
        }
        if !peaks.iter().any(|&peak| near(peak, (step, rho))) {
            peaks.push((step, rho));
        }
    }
    peaks
}

/// The part of `run` (steps along a line on a ridge, none more than [`RUN_GAP_PX`] apart) that is
/// the line's own ink: its ends trimmed back to where at least [`TRIM_SHARE`] of the next
/// [`TRIM_PX`] steps are on a ridge (ridge pixels strung out by chance beyond its end are not its
/// ink); `None` when nothing is left.
fn trimmed(run: &[i64]) -> Option<&[i64]> {
    let dense = (TRIM_SHARE * TRIM_PX as f64).ceil() as usize;
    let first = (0..run.len()).find(|&k| run[k..].iter().take_while(|&&t| t < run[k] + TRIM_PX).count() >= dense)?;
    let last = (first..run.len()).rev().find(|&k| run[..=k].iter().rev().take_while(|&&t| t > run[k] - TRIM_PX).count() >= dense)?;
    Some(&run[first..=last])
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
                let value = if segment_distance((f64::from(x) + 0.5, f64::from(y) + 0.5), a, b) <= 0.6 {
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
        // Letters' boxes reaching 40 steps in from either end: the line ends where they begin.
        let [from, to] = crossing.line(&dips, (40, crossing.steps() - 40)).expect("the hairline");
        let step = |k: f64| (20.0 + 260.0 * k / (crossing.steps() - 1) as f64, 65.0 - 27.0 * k / (crossing.steps() - 1) as f64);
        assert!((from.0 - step(40.0).0).abs() <= 1.0 && (to.0 - step((crossing.steps() - 40) as f64).0).abs() <= 1.0, "{from:?} {to:?}");

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

    /// A light sheet `width × height` with a thick dark band across its top and a hairline (grey
    /// 90, one pixel wide) from `a` to `b`, given to a shrunk map in two strips.
    fn shrunk(width: u32, height: u32, a: (f64, f64), b: (f64, f64)) -> ShrunkMap {
        let mut pixels = vec![200_u8; (width * height * 3) as usize];
        for y in 20..30 {
            pixels[3 * (y * width) as usize..3 * ((y + 1) * width) as usize].fill(30);
        }
        let steps = (b.0 - a.0).hypot(b.1 - a.1).ceil() as usize * 2;
        for k in 0..=steps {
            let t = k as f64 / steps as f64;
            let (x, y) = ((a.0 + t * (b.0 - a.0)) as u32, (a.1 + t * (b.1 - a.1)) as u32);
            let at = 3 * (y * width + x) as usize;
            pixels[at..at + 3].fill(90);
        }
        let mut map = ShrunkMap::new((width, height), (7, 5));
        let split = 3 * (height / 2 * width) as usize;
        map.mark(&Rgb { width, height: height / 2, pixels: pixels[..split].to_vec() }, 0);
        map.mark(&Rgb { width, height: height - height / 2, pixels: pixels[split..].to_vec() }, height / 2);
        map
    }

    /// Whether a straight line's ends are within `slack` of `a` and `b` (the scan's pixels), either way round.
    fn ends_near(line: &Straight, a: (f64, f64), b: (f64, f64), slack: f64) -> bool {
        let near = |p: (f64, f64), q: (f64, f64)| (p.0 - q.0).hypot(p.1 - q.1) <= slack;
        (near(line.from, a) && near(line.to, b)) || (near(line.from, b) && near(line.to, a))
    }

    #[test]
    fn a_hairline_across_the_map_is_found_straight_and_a_thick_band_is_not() {
        let (a, b) = ((50.0, 300.0), (550.0, 120.0));
        let lines = shrunk(600, 400, a, b).straight_lines(&|| false).expect("not cancelled");
        let on_scan = |(x, y): (f64, f64)| (x + 7.0, y + 5.0);
        assert_eq!(lines.len(), 1, "the hairline alone: {lines:?}");
        assert!(ends_near(&lines[0], on_scan(a), on_scan(b), 3.0), "{lines:?}");
        assert_eq!(lines[0].scale, 1.0);
        assert_eq!(shrunk(600, 400, a, b).straight_lines(&|| true), None, "a cancelled search gives nothing");
    }

    #[test]
    fn a_line_ends_where_its_ink_thins_out() {
        // A line running on through a crossing or into its letter is left whole.
        let through: Vec<i64> = [(0..300).collect::<Vec<i64>>(), (309..320).collect()].concat();
        assert_eq!(trimmed(&through), Some(&through[..]));
        // Ridge pixels strung out one in four at either end are trimmed off.
        let strung: Vec<i64> = (0..40).map(|k| 4 * k).chain(160..400).chain((0..40).map(|k| 404 + 4 * k)).collect();
        assert_eq!(trimmed(&strung).map(|run| (run[0], run[run.len() - 1])), Some((144, 412)), "to where half the steps are inked");
        assert_eq!(trimmed(&[1, 5, 9]), None, "too little ink for a line");
    }

    #[test]
    fn a_map_wider_than_the_shrunk_size_keeps_its_hairline_and_gives_its_ends_on_the_scan() {
        let (a, b) = ((100.0, 300.0), (5900.0, 100.0));
        let lines = shrunk(6100, 400, a, b).straight_lines(&|| false).expect("not cancelled");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].scale, 3.0, "shrunk by 3");
        assert!(ends_near(&lines[0], (a.0 + 7.0, a.1 + 5.0), (b.0 + 7.0, b.1 + 5.0), 6.0), "{lines:?}");
    }

    #[test]
    fn a_peak_just_short_of_half_a_turn_is_the_same_line_as_one_just_past_zero() {
        // Distances -10..=10 (index 10 is 0): a line near upright at distance 4 votes at step 1,
        // index 14, and at step 719, index 6 (distance -4); another line at step 360.
        let rhos = 21;
        let mut votes = vec![0_u32; HOUGH_ANGLES * rhos];
        votes[rhos + 14] = 50;
        votes[719 * rhos + 6] = 49;
        votes[360 * rhos + 14] = 48;
        votes[719 * rhos + 14] = 47;
        // Mirrored, index 1 is 5 from index 14 (the same line) and index 0 is 6 (another).
        votes[719 * rhos + 1] = 46;
        votes[719 * rhos] = 45;
        assert_eq!(
            strongest_peaks(&votes, rhos, 10),
            vec![(1, 14), (360, 14), (719, 14), (719, 0)],
            "step 719 at distance -4 is step 1's line; at +4 it is not"
        );
        assert_eq!(strongest_peaks(&votes, rhos, 49), vec![(1, 14)]);
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
