//! A binary mask to its centrelines: thinned to one pixel (Zhang and Suen's two sub-iterations,
//! then the staircase pixels removed), traced into pieces between ends and junctions, each
//! skeleton pixel with the stroke's width there, and the short branches from a junction to an end
//! (a thrust's teeth, a letter's serif) kept apart as spurs.
//!
//! Invariants: pure arithmetic on the caller's buffers; the mask's outermost rows and columns
//! never hold skeleton; every skeleton pixel belongs to exactly one piece or one spur.

/// A piece of centreline: skeleton pixel centres from one end or junction to the next, and the
/// stroke's width at each.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// Pixel centres (x + 0.5, y + 0.5) in the mask's pixels, in order.
    pub points: Vec<(f64, f64)>,
    /// The stroke's width at each point, in pixels.
    pub widths: Vec<f64>,
    /// Whether it stands for one dot of a dotted row (a pixel long across the dot, along the
    /// row), rather than for traced skeleton.
    pub dot: bool,
}

impl Piece {
    /// Its length along its points, in pixels.
    pub fn length(&self) -> f64 {
        self.points.windows(2).map(|w| (w[1].0 - w[0].0).hypot(w[1].1 - w[0].1)).sum()
    }

    /// The median of its widths.
    pub fn width(&self) -> f64 {
        let mut widths = self.widths.clone();
        widths.sort_by(f64::total_cmp);
        widths.get(widths.len() / 2).copied().unwrap_or(0.0)
    }
}

/// A short branch from a junction to an end: where it leaves the line and where it ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spur {
    /// The junction it leaves from.
    pub base: (f64, f64),
    /// Its free end.
    pub tip: (f64, f64),
}

/// The eight neighbours' offsets, clockwise from north (Zhang and Suen's P2 … P9).
pub(super) const AROUND: [(isize, isize); 8] = [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)];

/// A traced branch of the skeleton and whether each end is free (no other skeleton beyond it).
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    /// Its centreline.
    pub piece: Piece,
    /// Whether its first and its last point are free ends.
    pub free: (bool, bool),
}

impl Branch {
    /// Where it leaves its junction and where it ends, when exactly one of its ends is free.
    pub fn arm(&self) -> Option<Spur> {
        let (first, last) = (self.piece.points[0], self.piece.points[self.piece.points.len() - 1]);
        match self.free {
            (true, false) => Some(Spur { base: last, tip: first }),
            (false, true) => Some(Spur { base: first, tip: last }),
            _ => None,
        }
    }
}

/// A mask's centrelines: `mask` (`width × height`, nonzero is ink) is left untouched; spurs are
/// branches no longer than `spur_px` from a junction to a free end.
pub fn centrelines(mask: &[u8], width: usize, height: usize, spur_px: f64) -> (Vec<Piece>, Vec<Spur>) {
    split(branches(mask, width, height), spur_px)
}

/// Every branch of a mask's skeleton (`mask` is `width × height`, nonzero is ink, and is left untouched).
pub fn branches(mask: &[u8], width: usize, height: usize) -> Vec<Branch> {
    let mut skeleton: Vec<u8> = mask.iter().map(|&m| u8::from(m != 0)).collect();
    for x in 0..width {
        skeleton[x] = 0;
        skeleton[(height - 1) * width + x] = 0;
    }
    for y in 0..height {
        skeleton[y * width] = 0;
        skeleton[y * width + width - 1] = 0;
    }
    thin(&mut skeleton, width);
    let width_at = |(x, y): (usize, usize)| stroke_width(mask, width, height, x, y);
    trace(&mut skeleton, width)
        .into_iter()
        .map(|path| Branch {
            piece: Piece {
                widths: path.pixels.iter().map(|&p| width_at(p)).collect(),
                points: path.pixels.iter().map(|&(x, y)| (x as f64 + 0.5, y as f64 + 0.5)).collect(),
                dot: false,
            },
            free: (path.free_start, path.free_end),
        })
        .collect()
}

/// `branches` as pieces of line and spurs: branches no longer than `spur_px` from a junction to a
/// free end. A branch between two junctions shorter than its stroke is wide is neither: it lies
/// inside the ink where strokes meet (a seam between a tooth and its line leaves such loops), and
/// the pieces around it are joined across it.
pub fn split(branches: Vec<Branch>, spur_px: f64) -> (Vec<Piece>, Vec<Spur>) {
    let mut pieces = Vec::new();
    let mut spurs = Vec::new();
    for branch in branches {
        match branch.arm() {
            Some(spur) if branch.piece.length() <= spur_px => spurs.push(spur),
            None if branch.free == (false, false) && branch.piece.length() < branch.piece.width() => {}
            _ => pieces.push(branch.piece),
        }
    }
    (pieces, spurs)
}

/// Zhang and Suen's thinning in place (1 is ink), visiting only pixels still inked.
fn thin(skeleton: &mut [u8], width: usize) {
    let mut alive: Vec<usize> = (0..skeleton.len()).filter(|&i| skeleton[i] == 1).collect();
    loop {
        let mut changed = false;
        for step in 0..2 {
            let removed: Vec<usize> = alive.iter().copied().filter(|&i| skeleton[i] == 1 && removable(skeleton, width, i, step)).collect();
            for &i in &removed {
                skeleton[i] = 0;
            }
            changed |= !removed.is_empty();
        }
        alive.retain(|&i| skeleton[i] == 1);
        if !changed {
            break;
        }
    }
    // Staircases: a pixel with two 4-neighbours at a right angle, whose removal keeps its
    // neighbours connected (Yokoi's 8-connectivity number is 1), is one pixel too many.
    for &i in &alive {
        let p = neighbours(skeleton, width, i);
        // A vertical and a horizontal 4-neighbour.
        let corner = (p[0] || p[4]) && (p[2] || p[6]);
        if corner && connectivity(&p) == 1 {
            skeleton[i] = 0;
        }
    }
}

/// Yokoi's 8-connectivity number of a pixel with neighbours `p` (clockwise from north): how many
/// separate groups of ink its removal would leave around it.
fn connectivity(p: &[bool; 8]) -> usize {
    let paper = |k: usize| !p[k % 8];
    [0, 2, 4, 6].iter().filter(|&&k| paper(k) && !(paper(k + 1) && paper(k + 2))).count()
}

/// The eight neighbours of pixel `i`, clockwise from north.
fn neighbours(skeleton: &[u8], width: usize, i: usize) -> [bool; 8] {
    AROUND.map(|(dx, dy)| skeleton[(i as isize + dy * width as isize + dx) as usize] != 0)
}

/// How many times the ring of neighbours goes from paper to ink.
fn transitions(p: &[bool; 8]) -> usize {
    (0..8).filter(|&k| !p[k] && p[(k + 1) % 8]).count()
}

/// Zhang and Suen's test for one sub-iteration.
fn removable(skeleton: &[u8], width: usize, i: usize, step: usize) -> bool {
    let p = neighbours(skeleton, width, i);
    let inked = p.iter().filter(|&&n| n).count();
    if !(2..=6).contains(&inked) || transitions(&p) != 1 {
        return false;
    }
    let (n, e, s, w) = (p[0], p[2], p[4], p[6]);
    // The first sub-iteration peels south-east edges and north-west corners, the second the opposite.
    if step == 0 { !(e && s && (n || w)) } else { !(n && w && (e || s)) }
}

/// A traced path of skeleton pixels and whether each end is free (no other skeleton beyond it).
struct Path {
    pixels: Vec<(usize, usize)>,
    free_start: bool,
    free_end: bool,
}

/// Every path of the skeleton between nodes (ends, and junctions: touching junction pixels are
/// one node), then the closed loops; marks what it walked so nothing is traced twice.
fn trace(skeleton: &mut [u8], width: usize) -> Vec<Path> {
    const WALKED: u8 = 2;
    const NODE: u8 = 3;
    let at = |i: usize| (i % width, i / width);
    let step = |i: usize, k: usize| (i as isize + AROUND[k].1 * width as isize + AROUND[k].0) as usize;
    let degree = |skeleton: &[u8], i: usize| neighbours(skeleton, width, i).iter().filter(|&&n| n).count();
    let nodes: Vec<usize> = (0..skeleton.len()).filter(|&i| skeleton[i] != 0 && degree(skeleton, i) != 2).collect();
    let free: std::collections::HashSet<usize> = nodes.iter().copied().filter(|&i| degree(skeleton, i) <= 1).collect();
    // Junction pixels that touch are one node: each pixel's cluster is its smallest member.
    let mut cluster: std::collections::HashMap<usize, usize> = nodes.iter().map(|&i| (i, i)).collect();
    fn root(cluster: &mut std::collections::HashMap<usize, usize>, mut i: usize) -> usize {
        while cluster[&i] != i {
            let up = cluster[&cluster[&i]];
            cluster.insert(i, up);
            i = up;
        }
        i
    }
    for &node in &nodes {
        for k in 0..8 {
            let other = step(node, k);
            if cluster.contains_key(&other) && !free.contains(&node) && !free.contains(&other) {
                let (a, b) = (root(&mut cluster, node), root(&mut cluster, other));
                cluster.insert(a.max(b), a.min(b));
            }
        }
    }
    for &node in &nodes {
        skeleton[node] = NODE;
    }
    let mut paths = Vec::new();
    let mut joined: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    for &node in &nodes {
        let home = root(&mut cluster, node);
        let free_start = free.contains(&node);
        if degree(skeleton, node) == 0 {
            paths.push(Path { pixels: vec![at(node)], free_start: true, free_end: true });
            continue;
        }
        for k in 0..8 {
            let next = step(node, k);
            match skeleton[next] {
                NODE => {
                    // Two nodes side by side: one short path between them, once.
                    let there = root(&mut cluster, next);
                    if there != home && joined.insert((home.min(there), home.max(there))) {
                        paths.push(Path { pixels: vec![at(node), at(next)], free_start, free_end: free.contains(&next) });
                    }
                    continue;
                }
                1 => {}
                _ => continue,
            }
            let mut pixels = vec![at(node), at(next)];
            skeleton[next] = WALKED;
            let (mut previous, mut here) = (node, next);
            let mut free_end = true;
            loop {
                let mut onward = None;
                for k in 0..8 {
                    let candidate = step(here, k);
                    if candidate == previous {
                        continue;
                    }
                    if skeleton[candidate] == NODE && (pixels.len() > 2 || root(&mut cluster, candidate) != home) {
                        onward = Some(candidate);
                        break;
                    }
                    if skeleton[candidate] == 1 && onward.is_none() {
                        onward = Some(candidate);
                    }
                }
                let Some(next) = onward else { break };
                pixels.push(at(next));
                if skeleton[next] == NODE {
                    free_end = free.contains(&next);
                    break;
                }
                skeleton[next] = WALKED;
                (previous, here) = (here, next);
            }
            paths.push(Path { pixels, free_start, free_end });
        }
    }
    // What is left is closed loops without a node.
    for start in 0..skeleton.len() {
        if skeleton[start] != 1 {
            continue;
        }
        skeleton[start] = WALKED;
        let mut pixels = vec![at(start)];
        let mut here = start;
        while let Some(next) = (0..8).map(|k| step(here, k)).find(|&c| skeleton[c] == 1) {
            skeleton[next] = WALKED;
            pixels.push(at(next));
            here = next;
        }
        pixels.push(at(start));
        paths.push(Path { pixels, free_start: false, free_end: false });
    }
    paths
}

/// The stroke's width through pixel `(x, y)`: the shortest run of ink through it across the four
/// directions (horizontal, vertical and the two diagonals, these scaled by √2).
pub fn stroke_width(mask: &[u8], width: usize, height: usize, x: usize, y: usize) -> f64 {
    let inked = |x: isize, y: isize| x >= 0 && y >= 0 && (x as usize) < width && (y as usize) < height && mask[y as usize * width + x as usize] != 0;
    let run = |dx: isize, dy: isize| {
        let mut count = 1;
        for sign in [1, -1] {
            let (mut cx, mut cy) = (x as isize + sign * dx, y as isize + sign * dy);
            while inked(cx, cy) && count < 64 {
                count += 1;
                cx += sign * dx;
                cy += sign * dy;
            }
        }
        count as f64
    };
    let straight = run(1, 0).min(run(0, 1));
    let diagonal = run(1, 1).min(run(1, -1)) * std::f64::consts::SQRT_2;
    straight.min(diagonal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paint(mask: &mut [u8], width: usize, x0: usize, y0: usize, x1: usize, y1: usize) {
        for y in y0..y1 {
            for x in x0..x1 {
                mask[y * width + x] = 1;
            }
        }
    }

    #[test]
    fn a_bar_thins_to_one_piece_as_wide_as_the_bar() {
        let (w, h) = (60, 20);
        let mut mask = vec![0; w * h];
        paint(&mut mask, w, 5, 8, 55, 13);
        let (pieces, spurs) = centrelines(&mask, w, h, 6.0);
        assert_eq!(pieces.len(), 1, "{pieces:?}");
        assert!(spurs.is_empty(), "{spurs:?}");
        let piece = &pieces[0];
        assert!(piece.length() > 40.0, "{}", piece.length());
        assert_eq!(piece.width(), 5.0);
        assert!(piece.points.iter().all(|p| (p.1 - 10.5).abs() <= 1.0), "{:?}", piece.points);
    }

    #[test]
    fn teeth_on_a_line_are_spurs_and_a_crossing_is_four_pieces() {
        let (w, h) = (120, 60);
        let mut mask = vec![0; w * h];
        paint(&mut mask, w, 5, 20, 115, 23);
        for t in 0..4 {
            paint(&mut mask, w, 20 + 25 * t, 23, 23 + 25 * t, 30);
        }
        let (pieces, spurs) = centrelines(&mask, w, h, 12.0);
        assert_eq!(spurs.len(), 4, "{spurs:?}");
        assert!(spurs.iter().all(|s| s.tip.1 > s.base.1 + 3.0), "the teeth point down: {spurs:?}");
        let along: f64 = pieces.iter().map(Piece::length).sum();
        assert!(along > 95.0, "{along}: {pieces:?}");

        let mut cross = vec![0; w * h];
        paint(&mut cross, w, 5, 29, 115, 32);
        paint(&mut cross, w, 59, 3, 62, 57);
        let (pieces, spurs) = centrelines(&cross, w, h, 5.0);
        assert!(spurs.is_empty(), "{spurs:?}");
        assert_eq!(pieces.len(), 4, "{pieces:?}");
    }

    #[test]
    fn a_branch_inside_a_junction_is_dropped_and_a_dot_is_kept() {
        let stub = |free| Branch { piece: Piece { points: vec![(10.5, 10.5), (11.5, 11.5), (12.5, 12.5)], widths: vec![12.0; 3], dot: false }, free };
        let (pieces, spurs) = split(vec![stub((false, false)), stub((true, true))], 6.0);
        assert!(spurs.is_empty(), "{spurs:?}");
        assert_eq!(pieces.len(), 1, "between two junctions and shorter than its stroke is wide: dropped; on its own, a dot: {pieces:?}");
    }

    #[test]
    fn a_ring_is_one_closed_piece() {
        let (w, h) = (40, 40);
        let mut mask = vec![0; w * h];
        paint(&mut mask, w, 5, 5, 35, 35);
        for y in 8..32 {
            for x in 8..32 {
                mask[y * w + x] = 0;
            }
        }
        let (pieces, spurs) = centrelines(&mask, w, h, 3.0);
        assert!(spurs.is_empty(), "{spurs:?}");
        assert_eq!(pieces.len(), 1, "{pieces:?}");
        let piece = &pieces[0];
        assert_eq!(piece.points.first(), piece.points.last());
        assert!(piece.length() > 90.0, "{}", piece.length());
    }

    #[test]
    fn a_thick_diagonal_thins_to_one_piece_without_staircase_junctions() {
        let (w, h) = (120, 100);
        let mut mask = vec![0; w * h];
        for y in 0..h {
            for x in 0..w {
                // Within 2.5 px of the segment from (10, 10) to (110, 80).
                let (px, py) = (x as f64 + 0.5 - 10.0, y as f64 + 0.5 - 10.0);
                let t = ((px * 100.0 + py * 70.0) / (100.0_f64 * 100.0 + 70.0 * 70.0)).clamp(0.0, 1.0);
                if (px - 100.0 * t).hypot(py - 70.0 * t) <= 2.5 {
                    mask[y * w + x] = 1;
                }
            }
        }
        let (pieces, _) = centrelines(&mask, w, h, 10.0);
        assert_eq!(pieces.len(), 1, "{pieces:?}");
        assert!((118.0..=132.0).contains(&pieces[0].length()), "{}", pieces[0].length());
        assert!((3.5..=5.0).contains(&pieces[0].width()), "{}", pieces[0].width());
    }
}
