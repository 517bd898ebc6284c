//! Circled crosses (horizontal beds): on a colour's skeleton a small closed web of branches, its
//! spokes meeting at the circle's centre.
//!
//! Invariants: reads the skeleton; a web is one symbol's at most.

use std::collections::HashMap;

use super::on_skeleton::{JUNCTION_PX, JUNCTION_WIDTHS, OnSkeleton, Symbol, fit_by_lengths, junction_cell};
use super::{PointPrompt, Shape};
use crate::structure::chains::{distance, root};
use crate::structure::skeleton::Branch;

/// A circled cross's web has at least this many branches joined at both ends (its four spokes
/// and four arcs, give or take what thinning merges).
const CIRCLED_BRANCHES: usize = 6;
/// A circled cross's web is at least this share as wide as it is tall, and as tall as wide.
const ROUND: f64 = 0.7;
/// Without an explanation, circled crosses are looked for when at least this many are on the map
/// (fewer than other shapes need: little else on a map is drawn so).
const LOOK_LEAST_CIRCLED: usize = 3;

/// The circled crosses among `branches`, none wider than `widest_px`: webs of branches joined
/// end to end and to nothing else (any free branch a spur under a third of the web's width), at
/// least [`CIRCLED_BRANCHES`] of them joined at both ends, nearly round, with the ends of at least
/// four meeting at the web's centre (the cross's bars).
fn circled_crosses(branches: &[Branch], widest_px: f64) -> Vec<Symbol> {
    let cell = junction_cell(branches);
    let key = |p: (f64, f64)| ((p.0 / cell).floor() as i64, (p.1 / cell).floor() as i64);
    let reach = |index: usize| JUNCTION_PX + JUNCTION_WIDTHS * branches[index].piece.width();
    let ends_of = |branch: &Branch| {
        let points = &branch.piece.points;
        [(points[0], branch.free.0), (points[points.len() - 1], branch.free.1)].into_iter().filter(|(_, free)| !free).map(|(end, _)| end)
    };
    // Every joined end (its branch, its point), and by cell the ends there.
    let ends: Vec<(usize, (f64, f64))> = branches.iter().enumerate().flat_map(|(index, branch)| ends_of(branch).map(move |end| (index, end))).collect();
    let mut joined_ends: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, (_, end)) in ends.iter().enumerate() {
        joined_ends.entry(key(*end)).or_default().push(k);
    }
    // Branches whose joined ends meet are one web (union–find).
    let mut parent: Vec<usize> = (0..branches.len()).collect();
    for (index, branch) in branches.iter().enumerate() {
        for end in ends_of(branch) {
            let (cx, cy) = key(end);
            for &k in (-1..=1).flat_map(|dx| (-1..=1).map(move |dy| (cx + dx, cy + dy))).flat_map(|c| joined_ends.get(&c).into_iter().flatten()) {
                let other = ends[k];
                if distance(other.1, end) <= reach(index).max(reach(other.0)) {
                    let (a, b) = (root(&mut parent, index), root(&mut parent, other.0));
                    parent[a] = b;
                }
            }
        }
    }
    let mut webs: HashMap<usize, Vec<usize>> = HashMap::new();
    for index in 0..branches.len() {
        webs.entry(root(&mut parent, index)).or_default().push(index);
    }
    let mut found: Vec<Symbol> = webs.into_values().filter_map(|web| circled_cross(branches, web, widest_px)).collect();
    found.sort_by(|a, b| a.at.1.total_cmp(&b.at.1).then(a.at.0.total_cmp(&b.at.0)));
    found
}

/// The circled cross a web of branches (`web`, indices into `branches`) draws, if it draws one
/// no wider than `widest_px` ([`circled_crosses`]).
fn circled_cross(branches: &[Branch], web: Vec<usize>, widest_px: f64) -> Option<Symbol> {
    let (closed, spurs): (Vec<usize>, Vec<usize>) = web.iter().partition(|&&index| branches[index].free == (false, false));
    if closed.len() < CIRCLED_BRANCHES {
        return None;
    }
    let points = || closed.iter().flat_map(|&index| branches[index].piece.points.iter().copied());
    let (x0, y0, x1, y1) =
        points().fold((f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY), |b, p| (b.0.min(p.0), b.1.min(p.1), b.2.max(p.0), b.3.max(p.1)));
    let (wide, tall) = (x1 - x0, y1 - y0);
    let across = wide.max(tall);
    if across > widest_px || wide.min(tall) < ROUND * across || spurs.iter().any(|&index| branches[index].piece.length() > across / 3.0) {
        return None;
    }
    let centre = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
    let near_centre = JUNCTION_PX + JUNCTION_WIDTHS * branches[closed[0]].piece.width() + 0.15 * across;
    let ends = closed.iter().flat_map(|&index| {
        let points = &branches[index].piece.points;
        [points[0], points[points.len() - 1]]
    });
    if ends.filter(|&end| distance(end, centre) <= near_centre).count() < 4 {
        return None;
    }
    let mut widths: Vec<f64> = closed.iter().flat_map(|&index| branches[index].piece.widths.iter().copied()).collect();
    widths.sort_by(f64::total_cmp);
    let diameter = (wide + tall) / 2.0;
    Some(Symbol {
        shape: Shape::CircledCross,
        at: centre,
        strike_px: diameter,
        tick_px: diameter / 2.0,
        width_px: widths[widths.len() / 2],
        tick: (0.0, 0.0),
        arms: web,
    })
}

/// The detector of circled crosses.
#[derive(Debug)]
pub struct CircledCrosses;

impl OnSkeleton for CircledCrosses {
    const NAME: &'static str = "circled crosses";
    const ITSELF: &'static CircledCrosses = &CircledCrosses;
    const SHAPE: Shape = Shape::CircledCross;
    const LEAST_ON_MAP: usize = LOOK_LEAST_CIRCLED;

    fn seen(&self, branches: &[Branch], largest_px: f64) -> Vec<Symbol> {
        circled_crosses(branches, largest_px)
    }

    /// A circle is as wide as its bar, give or take.
    fn largest_px(&self, prompt: &PointPrompt) -> f64 {
        1.4 * prompt.strike_px
    }

    /// A circle is whole on its sample whenever it is seen: it is a closed web.
    fn whole_on_sample(&self, _symbol: &Symbol, _mask: &[u8], _size: (usize, usize)) -> bool {
        true
    }

    /// A circle's radius is its diameter's half: only a tick's length says more, so its diameter
    /// and width alone count.
    fn fit(&self, prompt: &PointPrompt, seen: &Symbol) -> f64 {
        fit_by_lengths(prompt, seen, 0.7..=1.4, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::{circle, drawn, found_on_mask, prompt, scan_of};
    use super::super::tick::TickSymbols;
    use super::*;
    use crate::structure::skeleton;

    #[test]
    fn horizontal_beds_are_a_circled_cross_and_a_ring_a_letter_or_a_cross_on_a_line_is_not() {
        let mut segments = Vec::new();
        for x in [30.0, 90.0, 150.0] {
            segments.extend(circle(x, 30.0, 10.0, true));
        }
        segments.extend(circle(210.0, 30.0, 10.0, false)); // a ring (an O)
        segments.extend(circle(270.0, 30.0, 20.0, true)); // twice as large
        segments.extend(circle(330.0, 30.0, 10.0, true)); // on a line
        segments.push((300.0, 40.0, 380.0, 40.0));
        let mask = drawn(400, 70, &segments, 3.0);
        let circled = PointPrompt { ta1_type: "horizontal bedding", strike_px: 20.0, tick_px: 10.0, ..prompt(Shape::CircledCross, &CircledCrosses) };
        let mut prompts = [prompt(Shape::Tick, &TickSymbols), circled];
        let (found, used) = found_on_mask(&[&TickSymbols, &CircledCrosses], &mut mask.clone(), (400, 70), &mut prompts);
        let mut at: Vec<(f64, f64)> = found.iter().map(|p| p.at).collect();
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(at.len(), 3, "{found:?}");
        for (point, x) in at.iter().zip([30.0, 90.0, 150.0]) {
            assert!((point.0 - x).abs() < 2.0 && (point.1 - 30.0).abs() < 2.0, "{found:?}");
        }
        assert!(found.iter().all(|p| p.prompt == 1 && p.dip_direction.is_none() && p.confidence > 0.5), "{found:?}");
        assert!(used >= 18, "each circled cross's branches go with it: {used}");

        // Without an explanation, three alike are enough to measure them on the map.
        let mut looked = [PointPrompt::by_look().remove(1)];
        let (found, _) = found_on_mask(&[&CircledCrosses], &mut mask.clone(), (400, 70), &mut looked);
        assert!((looked[0].strike_px - 20.0).abs() <= 2.0, "{:?}", looked[0]);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found.iter().all(|p| p.confidence <= crate::structure::LOOK_CONFIDENCE), "{found:?}");

        // Seen on its own sample, as the explanation draws it.
        let sample = drawn(40, 40, &circle(20.0, 20.0, 10.0, true), 3.0);
        let seen = CircledCrosses.seen(&skeleton::branches(&sample, 40, 40), 40.0);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!((seen[0].strike_px - 20.0).abs() <= 2.0, "{seen:?}");
        assert_eq!(super::super::ta1_point_type("horizontal bedding"), Some(("horizontal bedding", Shape::CircledCross)));
    }

    #[test]
    fn circled_crosses_are_measured_on_their_sample_and_found_on_the_map_at_three_scales() {
        for scale in [1.0, 2.0, 3.0] {
            let (radius, stroke) = (10.0 * scale, 2.0 * scale);
            let side = (40.0 * scale) as usize;
            let middle = side as f64 / 2.0;
            let sample = scan_of(&drawn(side, side, &circle(middle, middle, radius, true), stroke), (side, side), [30, 30, 30]);
            let unmeasured = PointPrompt { detector: None, strike_px: 0.0, tick_px: 0.0, width_px: 1.0, ..prompt(Shape::CircledCross, &CircledCrosses) };
            let measured = unmeasured.calibrated(&sample).unwrap_or_else(|| panic!("measured at {scale}×"));
            assert!(measured.measured_by(&CircledCrosses) && (measured.strike_px / (2.0 * radius) - 1.0).abs() <= 0.15, "{scale}×: {measured:?}");
            let gap = 50.0 * scale;
            let segments: Vec<_> = (0..3).flat_map(|k| circle(gap * (f64::from(k) + 0.5), gap / 2.0, radius, true)).collect();
            let size = ((gap * 3.0) as usize, gap as usize);
            let (found, _) = found_on_mask(&[&CircledCrosses], &mut drawn(size.0, size.1, &segments, stroke), size, &mut [measured]);
            assert_eq!(found.len(), 3, "{scale}×: {found:?}");
        }
    }
}
