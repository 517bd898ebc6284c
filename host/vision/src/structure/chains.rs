//! Pieces of centreline joined into lines: an end is joined to the end that continues it best
//! (nearest, and straight on), across a junction or a gap no longer than the symbol's dash gap
//! allows, so a dashed line or one broken by printed words becomes one line; then each line is
//! split into parts of one pattern (long pieces: solid; runs of short ones: dashed or dotted) and
//! simplified.
//!
//! Invariants: pure arithmetic; a piece belongs to at most one line; a line never joins itself.

use super::skeleton::Piece;
use crate::layout::symbols::Pattern;

/// A joined line: its points in order and where each of its pieces begins and ends along them.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// The pieces, in order, each as its own points (reversed where it was walked backwards).
    pub pieces: Vec<Piece>,
}

/// How a chain's ends may be joined.
#[derive(Debug, Clone, Copy)]
pub struct Joining {
    /// The longest gap bridged, in pixels.
    pub max_gap: f64,
    /// The largest turn between the two ends' directions, in degrees.
    pub max_turn: f64,
    /// A gap shorter than this (a junction's width) may run any way.
    pub junction: f64,
}

/// One end of a piece: where it is and the direction it leaves in (outwards).
#[derive(Debug, Clone, Copy)]
struct End {
    piece: usize,
    last: bool,
    at: (f64, f64),
    outward: (f64, f64),
}

/// The direction a piece leaves by at one end: over up to twelve pixels or three stroke widths,
/// skipping the last quarter of them or a stroke's width (at most half of them), whichever is more (a junction bends a
/// skeleton's end towards its other branches, the further the wider the stroke).
fn end_of(piece: &Piece, index: usize, last: bool) -> End {
    let n = piece.points.len();
    let width = piece.width();
    let reach = (n - 1).min(12.max((3.0 * width).ceil() as usize));
    let skip = (reach / 4).max((width.round() as usize).min(reach / 2));
    let (at, near, back) = if last {
        (piece.points[n - 1], piece.points[n - 1 - skip], piece.points[n - 1 - reach])
    } else {
        (piece.points[0], piece.points[skip], piece.points[reach])
    };
    let (dx, dy) = (near.0 - back.0, near.1 - back.1);
    let length = dx.hypot(dy).max(1e-9);
    End { piece: index, last, at, outward: (dx / length, dy / length) }
}

/// The turn, in degrees, from leaving one end to entering the other: 0 when straight on.
fn turn(a: (f64, f64), b: (f64, f64)) -> f64 {
    let cos = (a.0 * -b.0 + a.1 * -b.1).clamp(-1.0, 1.0);
    cos.acos().to_degrees()
}

/// Joins `pieces` into chains: every pair of ends within the rules, cheapest first (gap plus a
/// pixel per 3° of turn), each end used once and no chain closed on itself.
pub fn join(pieces: Vec<Piece>, joining: Joining) -> Vec<Chain> {
    let ends: Vec<End> = pieces.iter().enumerate().filter(|(_, p)| p.points.len() >= 2).flat_map(|(i, p)| [end_of(p, i, false), end_of(p, i, true)]).collect();
    // A grid of cells as wide as the longest gap, so each end is compared with its neighbours only.
    let cell = joining.max_gap.max(1.0);
    let key = |at: (f64, f64)| ((at.0 / cell).floor() as i64, (at.1 / cell).floor() as i64);
    let mut grid: std::collections::HashMap<(i64, i64), Vec<usize>> = std::collections::HashMap::new();
    for (index, end) in ends.iter().enumerate() {
        grid.entry(key(end.at)).or_default().push(index);
    }
    let mut candidates = Vec::new();
    for (a, end) in ends.iter().enumerate() {
        let (cx, cy) = key(end.at);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for &b in grid.get(&(cx + dx, cy + dy)).into_iter().flatten() {
                    let other = &ends[b];
                    if b <= a || other.piece == end.piece {
                        continue;
                    }
                    let gap = (other.at.0 - end.at.0).hypot(other.at.1 - end.at.1);
                    if gap > joining.max_gap {
                        continue;
                    }
                    let bend = turn(end.outward, other.outward);
                    // Across a gap, the gap itself must run the way both ends point.
                    let across = if gap > joining.junction {
                        let along = ((other.at.0 - end.at.0) / gap, (other.at.1 - end.at.1) / gap);
                        turn(end.outward, (-along.0, -along.1)).max(turn(other.outward, along))
                    } else {
                        0.0
                    };
                    if bend <= joining.max_turn && across <= joining.max_turn {
                        candidates.push((gap + bend.max(across) / 3.0, a, b));
                    }
                }
            }
        }
    }
    candidates.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut partner: Vec<Option<usize>> = vec![None; ends.len()];
    let mut group: Vec<usize> = (0..pieces.len()).collect();
    fn root(group: &mut [usize], mut i: usize) -> usize {
        while group[i] != i {
            group[i] = group[group[i]];
            i = group[i];
        }
        i
    }
    for (_, a, b) in candidates {
        if partner[a].is_some() || partner[b].is_some() {
            continue;
        }
        let (ra, rb) = (root(&mut group, ends[a].piece), root(&mut group, ends[b].piece));
        if ra == rb {
            continue;
        }
        group[ra] = rb;
        partner[a] = Some(b);
        partner[b] = Some(a);
    }
    // Walk each chain from a piece end with no partner (or any end, for what is left).
    let mut end_at: std::collections::HashMap<(usize, bool), usize> = std::collections::HashMap::with_capacity(ends.len());
    for (index, end) in ends.iter().enumerate() {
        end_at.insert((end.piece, end.last), index);
    }
    let end_index = |piece: usize, last: bool| end_at.get(&(piece, last)).copied();
    let mut used = vec![false; pieces.len()];
    let mut chains = Vec::new();
    let order: Vec<usize> = (0..ends.len()).filter(|&e| partner[e].is_none()).chain(0..ends.len()).collect();
    for start in order {
        let piece = ends[start].piece;
        if used[piece] {
            continue;
        }
        let mut chain = Vec::new();
        let (mut piece, mut entered_at_last) = (piece, ends[start].last);
        loop {
            used[piece] = true;
            let mut walked = pieces[piece].clone();
            if entered_at_last {
                walked.points.reverse();
                walked.widths.reverse();
            }
            chain.push(walked);
            let Some(exit) = end_index(piece, !entered_at_last) else { break };
            let Some(next) = partner[exit] else { break };
            if used[ends[next].piece] {
                break;
            }
            (piece, entered_at_last) = (ends[next].piece, ends[next].last);
        }
        chains.push(Chain { pieces: chain });
    }
    chains
}

impl Chain {
    /// Its length along its pieces and the gaps between them, in pixels.
    pub fn length(&self) -> f64 {
        let inked: f64 = self.pieces.iter().map(Piece::length).sum();
        inked + self.gaps().iter().sum::<f64>()
    }

    /// The gaps between consecutive pieces, in pixels.
    pub fn gaps(&self) -> Vec<f64> {
        self.pieces.windows(2).map(|w| distance(*w[0].points.last().expect("a piece has points"), w[1].points[0])).collect()
    }

    /// The median stroke width over all its points.
    pub fn width(&self) -> f64 {
        let mut widths: Vec<f64> = self.pieces.iter().flat_map(|p| p.widths.iter().copied()).collect();
        widths.sort_by(f64::total_cmp);
        widths.get(widths.len() / 2).copied().unwrap_or(0.0)
    }

    /// All its points, in order.
    pub fn points(&self) -> Vec<(f64, f64)> {
        self.pieces.iter().flat_map(|p| p.points.iter().copied()).collect()
    }

    /// Its parts of one pattern: consecutive pieces no longer than `dash_px` (a dash of the
    /// symbol, with room) and separated by gaps of paper (wider than one and a half strokes, so a
    /// junction is not a gap) are broken; the rest solid. Each part's points, simplified within
    /// `tolerance` pixels.
    pub fn parts(&self, dash_px: f64, dot_px: f64, tolerance: f64) -> Vec<(Pattern, Vec<(f64, f64)>)> {
        let gaps = self.gaps();
        let paper = 1.5 * self.width() + 1.0;
        let short = |i: usize| self.pieces[i].length() <= dash_px;
        let broken = |i: usize| {
            let before = i > 0 && gaps[i - 1] > paper;
            let after = i + 1 < self.pieces.len() && gaps[i] > paper;
            short(i) && (before || after)
        };
        let mut parts: Vec<(Pattern, Vec<(f64, f64)>)> = Vec::new();
        let mut lengths: Vec<Vec<f64>> = Vec::new();
        for i in 0..self.pieces.len() {
            let pattern = if broken(i) { Pattern::Dashed } else { Pattern::Solid };
            let piece = &self.pieces[i];
            match parts.last_mut() {
                Some((last, points)) if *last == pattern => {
                    points.extend(piece.points.iter().copied());
                    lengths.last_mut().expect("parts and lengths go together").push(piece.length());
                }
                _ => {
                    // A part starts where the previous one ended, so the line stays unbroken.
                    let mut points: Vec<(f64, f64)> = parts.last().and_then(|(_, p)| p.last().copied()).into_iter().collect();
                    points.extend(piece.points.iter().copied());
                    parts.push((pattern, points));
                    lengths.push(vec![piece.length()]);
                }
            }
        }
        parts
            .into_iter()
            .zip(lengths)
            .map(|((pattern, points), dashes)| {
                let mean = dashes.iter().sum::<f64>() / dashes.len().max(1) as f64;
                let pattern = if pattern == Pattern::Dashed && mean <= dot_px { Pattern::Dotted } else { pattern };
                (pattern, simplify(&points, tolerance))
            })
            .collect()
    }
}

/// The distance between two points.
pub fn distance(a: (f64, f64), b: (f64, f64)) -> f64 {
    (b.0 - a.0).hypot(b.1 - a.1)
}

/// Douglas and Peucker's simplification: the points kept are within `tolerance` of every point dropped.
pub fn simplify(points: &[(f64, f64)], tolerance: f64) -> Vec<(f64, f64)> {
    if points.len() <= 2 {
        return points.to_vec();
    }
    let mut keep = vec![false; points.len()];
    keep[0] = true;
    keep[points.len() - 1] = true;
    let mut stack = vec![(0, points.len() - 1)];
    while let Some((first, last)) = stack.pop() {
        let (a, b) = (points[first], points[last]);
        let length = distance(a, b);
        let off = |p: (f64, f64)| {
            if length < 1e-9 { distance(a, p) } else { ((b.0 - a.0) * (a.1 - p.1) - (a.0 - p.0) * (b.1 - a.1)).abs() / length }
        };
        let farthest = (first + 1..last).map(|i| (i, off(points[i]))).max_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((i, _)) = farthest.filter(|(_, d)| *d > tolerance) {
            keep[i] = true;
            stack.push((first, i));
            stack.push((i, last));
        }
    }
    points.iter().zip(keep).filter(|(_, k)| *k).map(|(p, _)| *p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(x0: f64, x1: f64, y: f64) -> Piece {
        let points: Vec<(f64, f64)> = (0..=((x1 - x0) as usize)).map(|k| (x0 + k as f64, y)).collect();
        Piece { widths: vec![4.0; points.len()], points }
    }

    #[test]
    fn dashes_join_into_one_dashed_line_and_a_parallel_line_stays_apart() {
        // Dashes of 20 with gaps of 10 (given out of order and one reversed), and a line 30 px below.
        let mut pieces: Vec<Piece> = [60.0, 0.0, 90.0, 30.0].iter().map(|&x| piece(x, x + 20.0, 10.0)).collect();
        pieces[2].points.reverse();
        pieces.push(piece(0.0, 110.0, 40.0));
        let chains = join(pieces, Joining { max_gap: 15.0, max_turn: 30.0, junction: 2.0 });
        assert_eq!(chains.len(), 2, "{chains:?}");
        let dashed = chains.iter().find(|c| c.pieces.len() == 4).expect("the dashes are one line");
        assert!((dashed.length() - 110.0).abs() < 1e-9, "{}", dashed.length());
        let parts = dashed.parts(40.0, 6.0, 0.5);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].0, Pattern::Dashed);
        let xs: Vec<f64> = parts[0].1.iter().map(|p| p.0).collect();
        assert!(xs == [0.0, 110.0] || xs == [110.0, 0.0], "one straight dashed line: {xs:?}");
        let solid = chains.iter().find(|c| c.pieces.len() == 1).unwrap();
        assert_eq!(solid.parts(40.0, 6.0, 0.5)[0].0, Pattern::Solid);
    }

    #[test]
    fn a_corner_sharper_than_allowed_is_not_joined_and_a_line_changes_pattern_along_its_length() {
        let across = Piece { points: (0..=20).map(|k| (100.0, 11.0 + k as f64)).collect(), widths: vec![4.0; 21] };
        let chains = join(vec![piece(0.0, 99.0, 10.0), across], Joining { max_gap: 15.0, max_turn: 30.0, junction: 2.0 });
        assert_eq!(chains.len(), 2);

        let mut pieces = vec![piece(0.0, 200.0, 10.0)];
        pieces.extend([210.0, 240.0, 270.0].iter().map(|&x| piece(x, x + 20.0, 10.0)));
        let chains = join(pieces, Joining { max_gap: 15.0, max_turn: 30.0, junction: 2.0 });
        assert_eq!(chains.len(), 1);
        let patterns: Vec<Pattern> = chains[0].parts(40.0, 6.0, 0.5).iter().map(|p| p.0).collect();
        assert!(patterns == [Pattern::Solid, Pattern::Dashed] || patterns == [Pattern::Dashed, Pattern::Solid], "{patterns:?}");
    }

    #[test]
    fn a_wide_stroke_is_joined_across_a_junction_that_bends_its_ends() {
        // A 20-px stroke's two pieces either side of a tooth's junction: the last and first ten
        // pixels of each bend 45° towards the tooth, as a skeleton does within a stroke's width.
        let bent = |x0: f64, bend_at_end: bool| {
            let mut points: Vec<(f64, f64)> = (0..=100).map(|k| (x0 + k as f64, 50.0)).collect();
            let range = if bend_at_end { 91..=100 } else { 0..=9 };
            for k in range {
                let from_bend = if bend_at_end { k as f64 - 90.0 } else { 10.0 - k as f64 };
                points[k].1 += from_bend;
            }
            Piece { widths: vec![20.0; points.len()], points }
        };
        let chains = join(vec![bent(0.0, true), bent(104.0, false)], Joining { max_gap: 30.0, max_turn: 35.0, junction: 42.0 });
        assert_eq!(chains.len(), 1, "{chains:?}");
    }

    #[test]
    fn simplification_keeps_a_corner_and_drops_what_is_within_tolerance() {
        let points = [(0.0, 0.0), (5.0, 0.3), (10.0, 0.0), (10.0, 10.0)];
        assert_eq!(simplify(&points, 0.5), vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)]);
    }
}
