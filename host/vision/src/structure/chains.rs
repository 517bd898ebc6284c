//! Pieces of centreline joined into lines: an end is joined to the end that continues it best
//! (nearest, and straight on), across a junction or a gap no longer than the symbol's dash gap
//! allows, so a dashed line or one broken by printed words becomes one line (dots in an evenly
//! spaced row standing clear are first given the row's direction, so a dotted part joins as
//! dashes do); then each line is split into parts of one pattern (long pieces: solid; runs of
//! short ones: dashed or dotted) and simplified.
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

/// A row has at least this many dots.
const ROW_DOTS: usize = 4;
/// The next dot of a row stands within this share of the row's spacing, and
/// [`ROW_PIXEL_SLACK`] more, of where the spacing and direction so far put it (dots are printed
/// evenly, in a line that bends gently).
const ROW_SLACK: f64 = 0.25;
/// A dot's centre on a scan is known to about a pixel (a one-pixel dot's to the pixel it fell
/// on): the slack, in pixels, a next dot has beyond [`ROW_SLACK`] of the spacing.
const ROW_PIXEL_SLACK: f64 = 1.0;
/// A row's spacing and direction are measured over at most this many of its last dots.
const ROW_BASELINE: usize = 5;
/// No dot outside a row stands nearer one of its dots than this share of its spacing (a
/// stipple's neighbouring rows stand one spacing away) ...
const ROW_CLEAR: f64 = 1.5;
/// ... except beside at most this share of its dots (where two dotted lines part, or one
/// passes a speck).
const ROW_CROWDED: f64 = 0.25;
/// At least this share of the places a row spans holds a dot found (the rest lost): a solid
/// line's darkest pixels stand here and there along it, not in an even row.
const ROW_FILLED: f64 = 0.5;
/// A row whose one-spacing gaps are dark at their middles more often than this share is a
/// stroke's darkest pixels along it, not dots on paper.
const ROW_INKED_GAPS: f64 = 0.5;
/// A row's dots are alike in width: the thinnest at least this share of the widest, but for at
/// most [`ROW_UNLIKE`] of them left out (a row's last dot may merge with the line's next part, a
/// crossing line's ink widen one).
const ROW_ALIKE: f64 = 0.6;
/// See [`ROW_ALIKE`].
const ROW_UNLIKE: f64 = 0.25;
/// A row is tried from a dot towards each of this many dots nearest it.
const ROW_SEEDS: usize = 3;

/// A row's spacing, as its last few dots measure it, stays within this factor of its first two
/// dots' (a row curling back on itself would shrink it).
const ROW_SPACING_DRIFT: f64 = 2.0;

/// A row being grown: its dots in order and, between each two, how many spacings apart they
/// stand (more than one where dots were lost); the same dots as a set, and its first two dots'
/// spacing.
struct Row {
    dots: Vec<usize>,
    steps: Vec<f64>,
    members: std::collections::HashSet<usize>,
    seed_spacing: f64,
}

impl Row {
    /// A row of its first two dots, `spacing` apart.
    fn seeded(first: usize, second: usize, spacing: f64) -> Row {
        Row { dots: vec![first, second], steps: vec![1.0], members: [first, second].into_iter().collect(), seed_spacing: spacing }
    }

    /// Puts `dot` at the row's end, `steps` spacings after the last.
    fn push(&mut self, dot: usize, steps: f64) {
        self.dots.push(dot);
        self.steps.push(steps);
        self.members.insert(dot);
    }
}

/// Dots printed in a row (a concealed line's dotted part): among `dots` (pieces with both ends
/// free, each short for its width as `lines` takes a dot), runs of at least four evenly spaced no further
/// apart than `max_gap`, alike in width and standing clear of other dots. Dots may be lost
/// between two found ones: one (under a crossing line), or as many as leave a gap no longer than
/// `max_gap` (a scan loses a hairline's dots to its paper), but not at the next gap again, and
/// at least half of a row's places hold a dot found. Each
/// dot of a row comes back as a [`Piece::dot`] a pixel long across its centre along the row, so
/// rows join lines as dashes do, lost dots put back where the row has them; with the indices of
/// the dots used. `inked` tells whether a point is dark as ink is: a row's gaps are mostly paper.
pub fn dot_rows(dots: &[Piece], max_gap: f64, inked: &dyn Fn((f64, f64)) -> bool) -> (Vec<Piece>, Vec<usize>) {
    let centre = |piece: &Piece| {
        let n = piece.points.len() as f64;
        piece.points.iter().fold((0.0, 0.0), |sum, p| (sum.0 + p.0 / n, sum.1 + p.1 / n))
    };
    let centres: Vec<(f64, f64)> = dots.iter().map(centre).collect();
    let cell = max_gap.max(1.0);
    let key = |at: (f64, f64)| ((at.0 / cell).floor() as i64, (at.1 / cell).floor() as i64);
    let mut grid: std::collections::HashMap<(i64, i64), Vec<usize>> = std::collections::HashMap::new();
    for (index, &at) in centres.iter().enumerate() {
        grid.entry(key(at)).or_default().push(index);
    }
    let near = |at: (f64, f64)| {
        let (cx, cy) = key(at);
        (-1..=1).flat_map(move |dx| (-1..=1).map(move |dy| (cx + dx, cy + dy))).flat_map(|c| grid.get(&c).into_iter().flatten().copied())
    };
    let mut used = vec![false; dots.len()];
    // The dot after the row's last, one spacing on along the direction of its last few dots
    // (or more, when `may_skip`: dots lost, as `dot_rows` says), if one is there, and how many
    // spacings on it stands.
    let next = |row: &Row, may_skip: bool, used: &[bool]| {
        let n = row.dots.len();
        let back = (n - 1).min(ROW_BASELINE - 1);
        let (from, at) = (centres[row.dots[n - 1 - back]], centres[row.dots[n - 1]]);
        let length = distance(from, at).max(1e-9);
        let measured = length / row.steps[n - 1 - back..].iter().sum::<f64>();
        let spacing = measured.clamp(row.seed_spacing / ROW_SPACING_DRIFT, row.seed_spacing * ROW_SPACING_DRIFT);
        let along = ((at.0 - from.0) / length, (at.1 - from.1) / length);
        let most = if may_skip { (max_gap / spacing).floor().max(2.0) } else { 1.0 };
        (1..=most as usize).map(|steps| steps as f64).find_map(|steps| {
            let expected = (at.0 + steps * spacing * along.0, at.1 + steps * spacing * along.1);
            let slack = ROW_SLACK * spacing + ROW_PIXEL_SLACK;
            near(expected)
                .filter(|&k| !used[k] && !row.members.contains(&k) && distance(centres[k], expected) <= slack)
                .min_by(|&a, &b| distance(centres[a], expected).total_cmp(&distance(centres[b], expected)))
                .map(|k| (k, steps))
        })
    };
    // A row grown both ways from its first two dots: each step one spacing, or more once in a while.
    let grown = |mut row: Row, used: &[bool]| {
        for _ in 0..2 {
            let mut skipped = false;
            while let Some((k, steps)) = next(&row, !skipped, used) {
                row.push(k, steps);
                skipped = steps > 1.0;
            }
            row.dots.reverse();
            row.steps.reverse();
        }
        row
    };
    // A row's spacing: its length dot to dot over the spacings it spans.
    let spacing = |row: &Row| {
        let length: f64 = row.dots.windows(2).map(|w| distance(centres[w[0]], centres[w[1]])).sum();
        length / row.steps.iter().sum::<f64>()
    };
    // A row stands clear: at most [`ROW_CROWDED`] of its dots have another dot nearer than
    // [`ROW_CLEAR`] of its spacing (specks of a broken stroke lie in clusters, a stipple's rows
    // side by side), at least [`ROW_FILLED`] of its places hold a dot found, its gaps are
    // mostly paper ([`ROW_INKED_GAPS`]) and its dots are alike in width ([`ROW_ALIKE`]).
    let apart = |row: &Row| {
        let clear = ROW_CLEAR * spacing(row);
        let crowded =
            row.dots.iter().filter(|&&dot| near(centres[dot]).any(|k| !row.members.contains(&k) && distance(centres[k], centres[dot]) <= clear)).count();
        let mut widths: Vec<f64> = row.dots.iter().map(|&dot| dots[dot].width()).collect();
        widths.sort_by(f64::total_cmp);
        // Alike once some of the thinnest (`thinner`) and the rest of the unlike share of the
        // widest are left out.
        let unlike = (ROW_UNLIKE * widths.len() as f64).floor() as usize;
        let alike = (0..=unlike).any(|thinner| ROW_ALIKE * widths[widths.len() - 1 - (unlike - thinner)] <= widths[thinner]);
        let places = 1.0 + row.steps.iter().sum::<f64>();
        let filled = row.dots.len() as f64 >= ROW_FILLED * places;
        let gaps: Vec<((f64, f64), (f64, f64))> =
            row.dots.windows(2).zip(&row.steps).filter(|(_, steps)| **steps == 1.0).map(|(pair, _)| (centres[pair[0]], centres[pair[1]])).collect();
        // A gap is inked when the pixels half a pixel either side of its middle both are (the
        // middle of dots a whole number of pixels apart falls between two pixels, one of them a
        // dot's blurred rim).
        let gap_inked = |(a, b): ((f64, f64), (f64, f64))| {
            let length = distance(a, b).max(1e-9);
            let half = ((b.0 - a.0) / length / 2.0, (b.1 - a.1) / length / 2.0);
            let middle = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
            inked((middle.0 - half.0, middle.1 - half.1)) && inked((middle.0 + half.0, middle.1 + half.1))
        };
        let papered = gaps.iter().filter(|&&gap| gap_inked(gap)).count() as f64 <= ROW_INKED_GAPS * gaps.len() as f64;
        crowded as f64 <= ROW_CROWDED * row.dots.len() as f64 && filled && papered && alike
    };
    let mut pieces = Vec::new();
    // Dots of a row grown in full and turned down: from any of them the same row grows again.
    let mut tried = vec![false; dots.len()];
    for start in 0..dots.len() {
        if used[start] || tried[start] {
            continue;
        }
        // Each of the [`ROW_SEEDS`] dots nearest it as the row's second; the longest row standing clear wins.
        let mut seconds: Vec<usize> =
            near(centres[start]).filter(|&k| k != start && !used[k] && (2.0..=max_gap).contains(&distance(centres[start], centres[k]))).collect();
        seconds.sort_by(|&a, &b| distance(centres[start], centres[a]).total_cmp(&distance(centres[start], centres[b])));
        seconds.truncate(ROW_SEEDS);
        let mut best: Option<Row> = None;
        let mut turned_down: Vec<usize> = Vec::new();
        for second in seconds {
            let row = grown(Row::seeded(start, second, distance(centres[start], centres[second])), &used);
            if best.as_ref().is_none_or(|best| row.dots.len() > best.dots.len()) && apart(&row) {
                best = Some(row);
            } else if row.dots.len() > turned_down.len() {
                turned_down = row.dots;
            }
        }
        let Some(best) = best.filter(|row| row.dots.len() >= ROW_DOTS) else {
            turned_down.into_iter().for_each(|dot| tried[dot] = true);
            continue;
        };
        let dot_piece = |(x, y): (f64, f64), (ux, uy): (f64, f64), width: f64| Piece {
            points: vec![(x - ux / 2.0, y - uy / 2.0), (x + ux / 2.0, y + uy / 2.0)],
            widths: vec![width, width],
            dot: true,
        };
        let row = &best.dots;
        for (k, &dot) in row.iter().enumerate() {
            used[dot] = true;
            // Along the row from two dots before to two after: a one-pixel dot's neighbours
            // alone can turn it by 45°.
            let (before, after) = (centres[row[k.saturating_sub(2)]], centres[row[(k + 2).min(row.len() - 1)]]);
            let length = distance(before, after).max(1e-9);
            let along = ((after.0 - before.0) / length, (after.1 - before.1) / length);
            let width = dots[dot].width();
            pieces.push(dot_piece(centres[dot], along, width));
            // Dots lost before the next one: put back evenly between.
            if let (Some(&following), Some(&steps)) = (row.get(k + 1), best.steps.get(k)) {
                let (from, to) = (centres[dot], centres[following]);
                for lost in 1..steps as usize {
                    let t = lost as f64 / steps;
                    pieces.push(dot_piece((from.0 + t * (to.0 - from.0), from.1 + t * (to.1 - from.1)), along, width));
                }
            }
        }
    }
    let taken = (0..dots.len()).filter(|&k| used[k]).collect();
    (pieces, taken)
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

    /// Whether each gap is paper: wider than one and a half strokes (so a junction is not a gap),
    /// or beside a row's dot however narrow.
    pub fn paper_gaps(&self) -> Vec<bool> {
        let paper = 1.5 * self.width() + 1.0;
        self.gaps().into_iter().enumerate().map(|(i, gap)| gap > paper || self.pieces[i].dot || self.pieces[i + 1].dot).collect()
    }

    /// Its parts of one pattern: consecutive pieces no longer than `dash_px` (a dash of the
    /// symbol, with room) and separated by gaps of paper ([`Chain::paper_gaps`]) are broken,
    /// dotted where they are no longer than `dot_px` (at least four in a run: fewer are a dash
    /// the scan broke), else dashed; the rest solid. Each part's points, simplified within
    /// `tolerance` pixels.
    pub fn parts(&self, dash_px: f64, dot_px: f64, tolerance: f64) -> Vec<(Pattern, Vec<(f64, f64)>)> {
        let paper = self.paper_gaps();
        let short = |i: usize| self.pieces[i].length() <= dash_px;
        let broken = |i: usize| {
            let before = i > 0 && paper[i - 1];
            let after = i + 1 < self.pieces.len() && paper[i];
            short(i) && (before || after)
        };
        let mut patterns: Vec<Pattern> = (0..self.pieces.len())
            .map(|i| match broken(i) {
                false => Pattern::Solid,
                true if self.pieces[i].length() <= dot_px => Pattern::Dotted,
                true => Pattern::Dashed,
            })
            .collect();
        let mut run_start = 0;
        for i in 0..=patterns.len() {
            if i == patterns.len() || patterns[i] != Pattern::Dotted {
                if i - run_start < ROW_DOTS {
                    patterns[run_start..i].iter_mut().for_each(|p| *p = Pattern::Dashed);
                }
                run_start = i + 1;
            }
        }
        let mut parts: Vec<(Pattern, Vec<(f64, f64)>)> = Vec::new();
        for (piece, pattern) in self.pieces.iter().zip(patterns) {
            match parts.last_mut() {
                Some((last, points)) if *last == pattern => points.extend(piece.points.iter().copied()),
                _ => {
                    // A part starts where the previous one ended, so the line stays unbroken.
                    let mut points: Vec<(f64, f64)> = parts.last().and_then(|(_, p)| p.last().copied()).into_iter().collect();
                    points.extend(piece.points.iter().copied());
                    parts.push((pattern, points));
                }
            }
        }
        parts.into_iter().map(|(pattern, points)| (pattern, simplify(&points, tolerance))).collect()
    }
}

/// The root of `i`'s set in a union–find forest (`group[k]` is `k`'s parent, a root its own),
/// halving the path on the way.
pub fn root(group: &mut [usize], mut i: usize) -> usize {
    while group[i] != i {
        group[i] = group[group[i]];
        i = group[i];
    }
    i
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
        Piece { widths: vec![4.0; points.len()], points, dot: false }
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
        let across = Piece { points: (0..=20).map(|k| (100.0, 11.0 + k as f64)).collect(), widths: vec![4.0; 21], dot: false };
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
    fn a_row_of_dots_continues_a_dashed_line_as_its_dotted_part_and_specks_in_a_cluster_do_not() {
        let dot = |x: f64, y: f64| Piece { points: vec![(x, y)], widths: vec![4.0], dot: false };
        // Dashes from 0 to 110, then dots every 11 px from 121 (the one at 176 lost under a
        // crossing line), and a cluster of specks strewn below.
        let mut pieces: Vec<Piece> = [0.0, 30.0, 60.0, 90.0].iter().map(|&x| piece(x, x + 20.0, 10.0)).collect();
        let mut dots: Vec<Piece> = (0..10).map(|k| 121.0 + 11.0 * k as f64).filter(|&x| x != 176.0).map(|x| dot(x, 10.0)).collect();
        let mut seed = 7_u32;
        for _ in 0..24 {
            let mut next = || {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                f64::from((seed >> 16) % 1000) / 1000.0
            };
            let (x, y) = (14.0 * next(), 60.0 + 14.0 * next());
            dots.push(dot(x, y));
        }
        let (rows, used) = dot_rows(&dots, 15.0, &|_| false);
        assert_eq!(used, (0..9).collect::<Vec<usize>>(), "the row's dots, and no speck");
        assert_eq!(rows.len(), 10, "the lost dot is put back: {rows:?}");
        assert!(rows.iter().any(|p| (p.points[0].0 - 175.5).abs() < 1e-9), "{rows:?}");
        assert!(rows.iter().all(|p| (p.length() - 1.0).abs() < 1e-9 && (p.points[0].1 - 10.0).abs() < 1e-9), "{rows:?}");
        pieces.extend(rows);
        let chains = join(pieces, Joining { max_gap: 15.0, max_turn: 30.0, junction: 2.0 });
        assert_eq!(chains.len(), 1, "{chains:?}");
        let parts: Vec<(Pattern, Vec<(f64, f64)>)> = chains[0].parts(40.0, 10.0, 0.5);
        let patterns: Vec<Pattern> = parts.iter().map(|p| p.0).collect();
        assert!(patterns == [Pattern::Dashed, Pattern::Dotted] || patterns == [Pattern::Dotted, Pattern::Dashed], "{parts:?}");
        // Two dots lost one after the other end a row.
        let twice_lost: Vec<Piece> = [0, 1, 2, 3, 6, 7, 8, 9].iter().map(|&k| dot(11.0 * f64::from(k), 30.0)).collect();
        assert_eq!(dot_rows(&twice_lost, 15.0, &|_| false).0.len(), 8, "two rows of four, nothing put back between them");
        // Three dots are no row; nor are evenly spaced specks with others beside them.
        assert!(dot_rows(&dots[..3], 15.0, &|_| false).1.is_empty());
        let crowded: Vec<Piece> = (0..6).flat_map(|k| [dot(11.0 * k as f64, 100.0), dot(11.0 * k as f64 + 2.0, 102.0)]).collect();
        assert!(dot_rows(&crowded, 15.0, &|_| false).1.is_empty());
    }

    #[test]
    fn a_rows_last_dot_merged_with_the_next_part_keeps_the_row_but_dots_of_two_widths_are_none() {
        let dot = |x: f64, width: f64| Piece { points: vec![(x, 10.0)], widths: vec![width], dot: false };
        // Eight dots 7 px wide, the last 12 px wide where it meets the line's next part (as a 3×
        // scan prints the drawn map's concealed fault).
        let row: Vec<Piece> = (0..8).map(|k| dot(33.0 * f64::from(k), if k == 7 { 12.0 } else { 7.0 })).collect();
        assert_eq!(dot_rows(&row, 56.0, &|_| false).1.len(), 8);
        // Half of them twice as wide as the others: no row of alike dots.
        let mixed: Vec<Piece> = (0..8).map(|k| dot(33.0 * f64::from(k), if k % 2 == 0 { 12.0 } else { 6.0 })).collect();
        assert!(dot_rows(&mixed, 56.0, &|_| false).1.is_empty());
    }

    #[test]
    fn one_pixel_dots_a_pixel_off_their_spacing_are_a_row_beside_another_parting_from_it() {
        // A scan's one-pixel dots every 2.9 px, each on the pixel its centre fell in: one row
        // runs down and to the left at 1 in 2, another straight down from a pixel beside its
        // first dot; and a thin solid line leads into the first row.
        let dot = |(x, y): (f64, f64)| Piece { points: vec![(x.floor() + 0.5, y.floor() + 0.5)], widths: vec![1.0], dot: false };
        let slanted: Vec<(f64, f64)> = (0..10).map(|k| (100.2 - 1.3 * f64::from(k), 50.3 + 2.6 * f64::from(k))).collect();
        let upright: Vec<(f64, f64)> = (0..10).map(|k| (103.4 - 0.1 * f64::from(k), 52.6 + 2.9 * f64::from(k))).collect();
        let dots: Vec<Piece> = slanted.iter().chain(&upright).copied().map(dot).collect();
        let (rows, used) = dot_rows(&dots, 16.0, &|_| false);
        assert_eq!(used.len(), 20, "both rows, every dot: {rows:?}");
        assert_eq!(rows.len(), 20, "nothing put back: {rows:?}");
        assert!(rows.iter().all(|p| p.dot && (p.length() - 1.0).abs() < 1e-9), "{rows:?}");
        let lead = Piece { points: (0..20).map(|k| (110.5 - 0.5 * f64::from(k), 30.5 + f64::from(k))).collect(), widths: vec![1.0; 20], dot: false };
        let slanted_row: Vec<Piece> = rows.iter().filter(|p| p.points[0].0 + p.points[1].0 < 2.0 * 101.0).cloned().collect();
        let chains = join([vec![lead], slanted_row].concat(), Joining { max_gap: 16.0, max_turn: 35.0, junction: 4.0 });
        assert_eq!(chains.len(), 1, "{chains:?}");
        let patterns: Vec<Pattern> = chains[0].parts(10.0, 2.5, 0.5).iter().map(|p| p.0).collect();
        assert_eq!(patterns, [Pattern::Solid, Pattern::Dotted], "the dots are the dotted part however close");
        // The same pixels with dark gaps between them are a hairline stroke's darkest, not dots.
        assert!(dot_rows(&dots, 16.0, &|_| true).1.is_empty());
    }

    #[test]
    fn a_scan_may_lose_several_dots_in_one_gap_but_not_most_of_a_row() {
        // Dots every 3 px along a row, half of them lost as a scan loses a hairline's dots: two
        // found, three lost, three found, two lost, and so on (a gap of 12 px, within 16).
        let dot = |k: u32| Piece { points: vec![(10.5 + 3.0 * f64::from(k), 20.5)], widths: vec![1.0], dot: false };
        let found: Vec<u32> = (0..30).filter(|k| [0, 1, 5, 6, 7].contains(&(k % 10))).collect();
        let dots: Vec<Piece> = found.iter().map(|&k| dot(k)).collect();
        let (rows, used) = dot_rows(&dots, 16.0, &|_| false);
        assert_eq!(used.len(), dots.len(), "one row of every dot: {rows:?}");
        let last = *found.last().expect("dots");
        assert_eq!(rows.len(), last as usize + 1, "every lost dot put back between the first and the last: {rows:?}");
        let mut xs: Vec<f64> = rows.iter().map(|p| (p.points[0].0 + p.points[1].0) / 2.0).collect();
        xs.sort_by(f64::total_cmp);
        assert!(xs.iter().enumerate().all(|(k, x)| (x - (10.5 + 3.0 * k as f64)).abs() < 1e-9), "{xs:?}");
        // Within a 12 px gap: three found and two lost, again and again, are a row; two found
        // and three lost, less than half of it, are not.
        let every = |kept: u32| -> Vec<Piece> { (0..30).filter(|k| k % 5 < kept).map(dot).collect() };
        assert_eq!(dot_rows(&every(3), 12.0, &|_| false).1.len(), 18);
        assert!(dot_rows(&every(2), 12.0, &|_| false).1.is_empty());
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
            Piece { widths: vec![20.0; points.len()], points, dot: false }
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
