//! What the three detectors reading a colour's skeleton share ([`super::tick`], [`super::cross`],
//! [`super::circled`]): a symbol seen on the skeleton, measured on its sample's and on the map's
//! skeleton, and fitted to the prompts its detector measured. On a skeleton a tick symbol is one
//! junction with three (a cross: four) short arms to free ends and nothing else, two of them in
//! one line (the strike), the others across it; a circled cross is a small closed web of branches.
//!
//! Invariants: a branch belongs to one symbol at most; lengths are the skeleton's, in pixels.

use std::collections::HashMap;

use super::{FoundPoint, NumberBoxes, PointDetector, PointMap, PointPrompt, Reads, SPAN_GAP_PX, SampleInk, Shape};
use crate::image::Rgb;
use crate::structure::skeleton::{self, Branch, Spur};

/// Arms whose bases are within [`JUNCTION_WIDTHS`] stroke widths of one another, plus this floor
/// in pixels (where thinning moves a junction on any scan: a pixel or two), leave from one junction.
pub(super) const JUNCTION_PX: f64 = 3.0;
/// See [`JUNCTION_PX`].
pub(super) const JUNCTION_WIDTHS: f64 = 1.5;
/// The strike's two arms point at least this far apart, in degrees.
const STRAIGHT_DEGREES: f64 = 150.0;
/// A tick stands within this many degrees of square to the strike.
const SQUARE_DEGREES: f64 = 30.0;
/// The shorter strike arm is at least this share of the longer (the strike is centred on its tick).
const BALANCE: f64 = 0.5;
/// Without an explanation, an attitude's arms are at most this many of the map's common strokes long.
const LOOK_ARM_WIDTHS: f64 = 12.0;
/// Without an explanation, a tick symbol or a cross is looked for when at least this many
/// symbols of its shape are on the map (its lengths are measured on them).
pub(super) const LOOK_LEAST: usize = 5;
/// The share of the ink its strike line runs along that a tick or cross seen on its sample spans
/// at least ([`OnSkeleton::whole_on_sample`]).
const SAMPLE_SPAN: f64 = 0.75;

/// A symbol of an attitude's shape seen on a skeleton.
#[derive(Debug, Clone)]
pub(super) struct Symbol {
    /// Its shape.
    pub(super) shape: Shape,
    /// The junction (a circled cross: its centre), in the skeleton's pixels.
    pub(super) at: (f64, f64),
    /// Its strike line's length (a circled cross: its diameter).
    pub(super) strike_px: f64,
    /// Its tick's length (a circled cross: its radius).
    pub(super) tick_px: f64,
    /// Its stroke's median width.
    pub(super) width_px: f64,
    /// The dip side's direction square to the strike line (a unit vector, rows downwards): the
    /// strike is long enough to give the angle, the tick only says which side; for a cross, either;
    /// for a circled cross, none.
    pub(super) tick: (f64, f64),
    /// Its arms, as indices into the branches (a circled cross: all its branches).
    pub(super) arms: Vec<usize>,
}

/// A grid cell wide enough that ends meeting at a junction ([`JUNCTION_PX`] plus
/// [`JUNCTION_WIDTHS`] of their stroke apart) are in the same or neighbouring cells.
pub(super) fn junction_cell(branches: &[Branch]) -> f64 {
    branches.iter().map(|branch| JUNCTION_PX + JUNCTION_WIDTHS * branch.piece.width()).fold(8.0, f64::max)
}

/// The symbols of an attitude's shape among `branches`: junctions with three or four arms no
/// longer than `longest_arm_px` and no other branch.
pub(super) fn junction_symbols(branches: &[Branch], longest_arm_px: f64) -> Vec<Symbol> {
    // Every branch end that is not free, by cell, to tell a junction of arms alone from one on a line.
    let cell = junction_cell(branches);
    let key = |p: (f64, f64)| ((p.0 / cell).floor() as i64, (p.1 / cell).floor() as i64);
    let mut joined_ends: HashMap<(i64, i64), Vec<(f64, f64)>> = HashMap::new();
    let mut inner: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    let mut arms: Vec<(usize, Spur)> = Vec::new();
    for (index, branch) in branches.iter().enumerate() {
        let points = &branch.piece.points;
        // A thick stroke's junction thins to two nodes a stroke's width apart: the piece between
        // them is inside the junction, not a branch leaving it.
        if branch.free == (false, false) && branch.piece.length() <= JUNCTION_WIDTHS * branch.piece.width() {
            inner.entry(key(points[0])).or_default().push(index);
            continue;
        }
        for (end, free) in [(points[0], branch.free.0), (points[points.len() - 1], branch.free.1)] {
            if !free {
                joined_ends.entry(key(end)).or_default().push(end);
            }
        }
        if let Some(arm) = branch.arm().filter(|_| branch.piece.length() <= longest_arm_px) {
            arms.push((index, arm));
        }
    }
    let mut by_cell: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, (_, arm)) in arms.iter().enumerate() {
        by_cell.entry(key(arm.base)).or_default().push(k);
    }
    let mut taken = vec![false; arms.len()];
    let mut found = Vec::new();
    for k in 0..arms.len() {
        if taken[k] {
            continue;
        }
        let (index, arm) = arms[k];
        let reach = JUNCTION_PX + JUNCTION_WIDTHS * branches[index].piece.width();
        let near = |p: (f64, f64)| {
            let (cx, cy) = key(p);
            (-1..=1).flat_map(move |dx| (-1..=1).map(move |dy| (cx + dx, cy + dy)))
        };
        let group: Vec<usize> = near(arm.base)
            .flat_map(|c| by_cell.get(&c).into_iter().flatten().copied())
            .filter(|&j| !taken[j] && crate::structure::chains::distance(arms[j].1.base, arm.base) <= reach)
            .collect();
        let ends = near(arm.base)
            .flat_map(|c| joined_ends.get(&c).into_iter().flatten().copied())
            .filter(|&e| crate::structure::chains::distance(e, arm.base) <= reach)
            .count();
        group.iter().for_each(|&j| taken[j] = true);
        // Every joined end at the junction is one of its arms' bases: nothing else meets there.
        if ends != group.len() {
            continue;
        }
        let spurs: Vec<(usize, Spur)> = group.iter().map(|&j| arms[j]).collect();
        if let Some(mut symbol) = shaped(branches, &spurs) {
            // The junction's inner piece goes with it, so no line takes it for a mark.
            let inside = near(arm.base).flat_map(|c| inner.get(&c).into_iter().flatten().copied());
            symbol.arms.extend(inside.filter(|&j| crate::structure::chains::distance(branches[j].piece.points[0], arm.base) <= reach));
            found.push(symbol);
        }
    }
    found
}

/// The attitude that arms leaving one junction draw, if they draw one.
fn shaped(branches: &[Branch], arms: &[(usize, Spur)]) -> Option<Symbol> {
    let length = |spur: &Spur| crate::structure::chains::distance(spur.base, spur.tip);
    let direction = |spur: &Spur| {
        let l = length(spur).max(1e-9);
        ((spur.tip.0 - spur.base.0) / l, (spur.tip.1 - spur.base.1) / l)
    };
    let cos = |a: (f64, f64), b: (f64, f64)| a.0 * b.0 + a.1 * b.1;
    // The strike: the pair of arms pointing most nearly apart.
    let mut pairs = Vec::new();
    for i in 0..arms.len() {
        for j in i + 1..arms.len() {
            pairs.push((i, j, cos(direction(&arms[i].1), direction(&arms[j].1))));
        }
    }
    let straight = STRAIGHT_DEGREES.to_radians().cos();
    let square = (90.0 - SQUARE_DEGREES).to_radians().cos();
    let (shape, strike, ticks) = match arms.len() {
        3 => {
            let &(i, j, c) = pairs.iter().min_by(|a, b| a.2.total_cmp(&b.2))?;
            (c <= straight).then_some((Shape::Tick, (i, j), vec![3 - i - j]))?
        }
        4 => {
            // Two straight pairs: the longer is the strike.
            let straight_pairs: Vec<(usize, usize)> = pairs.iter().filter(|p| p.2 <= straight).map(|p| (p.0, p.1)).collect();
            let [a, b] = straight_pairs[..] else { return None };
            let span = |(i, j): (usize, usize)| length(&arms[i].1) + length(&arms[j].1);
            let (strike, ticks) = if span(a) >= span(b) { (a, b) } else { (b, a) };
            (Shape::Cross, strike, vec![ticks.0, ticks.1])
        }
        _ => return None,
    };
    let (a, b) = (length(&arms[strike.0].1), length(&arms[strike.1].1));
    if a.min(b) < BALANCE * a.max(b) {
        return None;
    }
    let axis = direction(&arms[strike.0].1);
    if ticks.iter().any(|&t| cos(direction(&arms[t].1), axis).abs() > square) {
        return None;
    }
    let tick_px = ticks.iter().map(|&t| length(&arms[t].1)).sum::<f64>() / ticks.len() as f64;
    if tick_px > 0.8 * (a + b) {
        return None; // a letter T: its stem is longer than its bar
    }
    let mut widths: Vec<f64> = arms.iter().flat_map(|(index, _)| branches[*index].piece.widths.iter().copied()).collect();
    widths.sort_by(f64::total_cmp);
    let bases = arms.iter().map(|(_, arm)| arm.base);
    let at = bases.fold((0.0, 0.0), |sum, p| (sum.0 + p.0 / arms.len() as f64, sum.1 + p.1 / arms.len() as f64));
    Some(Symbol {
        shape,
        at,
        strike_px: a + b,
        tick_px,
        width_px: widths[widths.len() / 2],
        tick: square_to_strike(arms[strike.0].1.tip, arms[strike.1].1.tip, direction(&arms[ticks[0]].1)),
        arms: arms.iter().map(|(index, _)| *index).collect(),
    })
}

/// The unit vector square to the strike line from `a` to `b` on the side `tick` points to.
fn square_to_strike(a: (f64, f64), b: (f64, f64), tick: (f64, f64)) -> (f64, f64) {
    let length = crate::structure::chains::distance(a, b).max(1e-9);
    let (nx, ny) = (-(b.1 - a.1) / length, (b.0 - a.0) / length);
    if nx * tick.0 + ny * tick.1 >= 0.0 { (nx, ny) } else { (-nx, -ny) }
}

/// How far the sample's ink (`mask`, `width × height`) runs along `symbol`'s strike line from its
/// junction each way, across gaps of at most [`SPAN_GAP_PX`] (the few pixels a mask breaks a
/// one-pixel stroke by), end to end in pixels: its last inked pixels counted whole. Its points,
/// as the skeleton's, are pixel centres.
fn ink_span(mask: &[u8], (width, height): (usize, usize), symbol: &Symbol) -> f64 {
    let (across_x, across_y) = symbol.tick;
    let inked = |along: f64| {
        (-1..=1).any(|k| {
            let at = (symbol.at.0 - along * across_y + f64::from(k) * across_x, symbol.at.1 + along * across_x + f64::from(k) * across_y);
            crate::structure::index_at(at, width, height).is_some_and(|index| mask[index] != 0)
        })
    };
    let farthest = (width + height) as f64;
    let reach = |sign: f64| {
        let (mut step, mut last) = (0.0, 0.0);
        while step - last <= SPAN_GAP_PX && step < farthest {
            step += 0.5;
            if inked(sign * step) {
                last = step;
            }
        }
        last
    };
    reach(1.0) + reach(-1.0) + 1.0
}

/// A detector of symbols drawn as strokes meeting on a colour's skeleton; it is a
/// [`PointDetector`] by what it says here.
pub(super) trait OnSkeleton: Sync + std::fmt::Debug + 'static {
    /// Its name ([`PointDetector::name`]).
    const NAME: &'static str;
    /// The one detector of its kind, as the prompts it measures record it.
    const ITSELF: &'static Self;
    /// The shape it draws.
    const SHAPE: Shape;
    /// The fewest symbols of its shape on a map that it measures a prompt looked for by its look
    /// alone on.
    const LEAST_ON_MAP: usize;

    /// The symbols of its shape among `branches`, none larger than `largest_px` (a tick symbol's
    /// longest arm, a circled cross's width).
    fn seen(&self, branches: &[Branch], largest_px: f64) -> Vec<Symbol>;

    /// The largest a symbol of `prompt` is looked for at, in pixels, as [`OnSkeleton::seen`] takes it.
    fn largest_px(&self, prompt: &PointPrompt) -> f64;

    /// Whether `symbol`, the largest seen on a sample (its `mask`, `width × height`), is the whole
    /// symbol its sample prints: a tick or cross spanning, with the stroke's width its skeleton
    /// stops short of, at least [`SAMPLE_SPAN`] of the ink its strike line runs along (a shorter
    /// one is a piece of a strike line the sample's mask broke, and the map's symbols would break
    /// alike).
    fn whole_on_sample(&self, symbol: &Symbol, mask: &[u8], size: (usize, usize)) -> bool {
        symbol.strike_px + symbol.width_px >= SAMPLE_SPAN * ink_span(mask, size, symbol)
    }

    /// How well a symbol seen on the map fits `prompt` (one this detector measured), 0–1 (0: not
    /// its symbol).
    fn fit(&self, prompt: &PointPrompt, seen: &Symbol) -> f64;

    /// Where the number printed beside a found symbol may stand ([`PointDetector::number_boxes`]);
    /// none for a symbol printed without one.
    fn printed_numbers<'a>(&self, _window: &'a Rgb, _at: (f64, f64), _prompt: &'a PointPrompt) -> NumberBoxes<'a> {
        Box::new(std::iter::empty())
    }
}

impl<D: OnSkeleton> PointDetector for D {
    fn name(&self) -> &'static str {
        D::NAME
    }

    fn draws(&self, shape: Shape) -> bool {
        shape == D::SHAPE
    }

    fn reads(&self) -> Reads {
        Reads::Skeleton
    }

    fn measure(&self, prompt: &PointPrompt, ink: &SampleInk) -> Option<PointPrompt> {
        measure_on_sample(self, prompt, ink)
    }

    fn find(&self, map: &mut PointMap, prompts: &mut [PointPrompt], group: &[usize]) -> Vec<FoundPoint> {
        find_on_skeleton(D::ITSELF, map, prompts, group)
    }

    fn number_boxes<'a>(&self, window: &'a Rgb, at: (f64, f64), prompt: &'a PointPrompt, _dip_direction: Option<f64>) -> NumberBoxes<'a> {
        self.printed_numbers(window, at, prompt)
    }
}

/// `prompt` measured by `detector` on its sample's `ink`: the largest symbol of its shape on the
/// skeleton of the ink's colour, when whole; `None` when the sample shows none.
fn measure_on_sample<D: OnSkeleton>(detector: &D, prompt: &PointPrompt, ink: &SampleInk) -> Option<PointPrompt> {
    let mask = ink.mask();
    let (width, height) = ink.size;
    let branches = skeleton::branches(&mask, width, height);
    let largest = detector.seen(&branches, width.max(height) as f64).into_iter().max_by(|a, b| a.strike_px.total_cmp(&b.strike_px))?;
    detector.whole_on_sample(&largest, &mask, ink.size).then(|| PointPrompt {
        colour: ink.core,
        width_px: largest.width_px.max(1.0),
        strike_px: largest.strike_px,
        tick_px: largest.tick_px,
        ..prompt.clone()
    })
}

/// A prompt looked for by its shape alone measured on the map's skeleton (`branches`, its strokes
/// commonly `common_width` wide): the median lengths and width of the symbols of its shape whose
/// arms (a circled cross: its width) are at most [`LOOK_ARM_WIDTHS`] strokes long. Fewer than
/// [`OnSkeleton::LEAST_ON_MAP`] such symbols leave it unmeasured (its strike 0), and it is not
/// looked for.
fn measure_on_map<D: OnSkeleton>(detector: &D, prompt: &mut PointPrompt, branches: &[Branch], common_width: f64) -> bool {
    let seen = detector.seen(branches, LOOK_ARM_WIDTHS * common_width);
    if seen.len() < D::LEAST_ON_MAP {
        return false;
    }
    let median = |of: fn(&Symbol) -> f64| {
        let mut values: Vec<f64> = seen.iter().map(of).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    (prompt.width_px, prompt.strike_px, prompt.tick_px) = (median(|s| s.width_px).max(1.0), median(|s| s.strike_px), median(|s| s.tick_px));
    true
}

/// The symbols `detector` (the one of [`super::DETECTORS`] it is) finds on `map`'s skeleton for
/// the prompts of `group` (indices into `prompts`, all drawn in the map's colour) it measured,
/// those looked for by their look alone measured on the map first; each is given to the prompt
/// it fits best, and its branches are marked as taken (a branch taken already is no other
/// symbol's).
fn find_on_skeleton<D: OnSkeleton>(detector: &'static D, map: &mut PointMap, prompts: &mut [PointPrompt], group: &[usize]) -> Vec<FoundPoint> {
    let by_look: Vec<usize> =
        group.iter().copied().filter(|&p| prompts[p].entry.is_none() && prompts[p].detector.is_none() && prompts[p].shape == D::SHAPE).collect();
    let mine =
        |prompts: &[PointPrompt]| group.iter().copied().filter(|&p| prompts[p].measured_by(detector) && prompts[p].strike_px > 0.0).collect::<Vec<usize>>();
    if mine(prompts).is_empty() && by_look.is_empty() {
        return Vec::new();
    }
    let origin = map.origin;
    let (branches, used) = map.skeleton();
    if !by_look.is_empty() {
        let common = crate::structure::common_width(branches);
        for p in by_look {
            if measure_on_map(detector, &mut prompts[p], branches, common) {
                prompts[p].detector = Some(detector);
            }
        }
    }
    let mine = mine(prompts);
    let largest = mine.iter().map(|&p| detector.largest_px(&prompts[p])).fold(0.0, f64::max);
    if largest <= 0.0 {
        return Vec::new();
    }
    let mut found = Vec::new();
    for symbol in detector.seen(branches, largest) {
        if symbol.arms.iter().any(|&arm| used[arm]) {
            continue;
        }
        let best = mine.iter().map(|&p| (p, detector.fit(&prompts[p], &symbol))).max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((prompt, fit)) = best.filter(|(_, fit)| *fit >= 0.2) else { continue };
        let confidence = if prompts[prompt].entry.is_none() { crate::structure::LOOK_CONFIDENCE * fit } else { fit };
        let dip_direction = (symbol.shape == Shape::Tick).then(|| super::bearing(symbol.tick));
        found.push(FoundPoint {
            prompt,
            at: (symbol.at.0 + origin.0, symbol.at.1 + origin.1),
            dip_direction,
            confidence: (confidence * 1000.0).round() / 1000.0,
        });
        for &arm in &symbol.arms {
            used[arm] = true;
        }
    }
    found
}

/// How well `seen` fits `prompt` by its lengths and width, 0–1 (0: not its symbol): its strike
/// within `strikes` times the prompt's, its tick (weighed by `tick_weight`; 0 leaves it out) half
/// to twice, its width a third to three times (a small symbol's stroke measures one to four pixels
/// wide as the scan's blur and JPEG take it: its width counts least).
pub(super) fn fit_by_lengths(prompt: &PointPrompt, seen: &Symbol, strikes: std::ops::RangeInclusive<f64>, tick_weight: f64) -> f64 {
    if prompt.strike_px <= 0.0 {
        return 0.0;
    }
    let ratio = |seen: f64, expected: f64| seen / expected.max(1.0);
    let (strike, tick, width) = (ratio(seen.strike_px, prompt.strike_px), ratio(seen.tick_px, prompt.tick_px), ratio(seen.width_px, prompt.width_px));
    if !strikes.contains(&strike) || (tick_weight > 0.0 && !(0.5..=2.0).contains(&tick)) || !(1.0 / 3.0..=3.0).contains(&width) {
        return 0.0;
    }
    (-(strike.ln().abs() + tick_weight * tick.ln().abs() + 0.25 * width.ln().abs())).exp()
}
