//! The main map found from colour alone: the largest 4-connected region of
//! coloured cells on a coarse grid outside the legends.
//!
//! Invariant: a pure function of the scan's pixels; the grid scales with the
//! scan, so the rule holds at any resolution.

use super::overlaps;
use crate::image::Rgb;
use geomap_model::page::PixelBox;

/// The cells of the coarse grid the main map is looked for in, per longer side.
const GRID: u32 = 256;

/// The largest connected region of coloured cells outside the legends, when it covers at least
/// 2% of the scan: a cell is coloured when most of it is neither paper, grey nor ink.
pub(super) fn main_map(image: &Rgb, legends: &[PixelBox]) -> Option<PixelBox> {
    let cell = (image.width.max(image.height).div_ceil(GRID)).max(1);
    let (columns, rows) = (image.width.div_ceil(cell) as usize, image.height.div_ceil(cell) as usize);
    let mut coloured = vec![false; columns * rows];
    for row in 0..rows {
        for column in 0..columns {
            let bbox = PixelBox {
                x0: (column as u32 * cell) as f64,
                y0: (row as u32 * cell) as f64,
                x1: ((column as u32 + 1) * cell).min(image.width) as f64,
                y1: ((row as u32 + 1) * cell).min(image.height) as f64,
            };
            if legends.iter().any(|legend| overlaps(legend, &bbox)) {
                continue;
            }
            let (total, hits) = image.pixels_in(&bbox).step_by(3).fold((0, 0), |(t, c), (r, g, b)| {
                let chroma = r.max(g).max(b) - r.min(g).min(b);
                (t + 1, c + (chroma >= 24 && r.max(g).max(b) >= 60) as usize)
            });
            coloured[row * columns + column] = hits * 2 >= total && total > 0;
        }
    }
    let mut seen = vec![false; coloured.len()];
    let mut best: Option<(usize, (usize, usize, usize, usize))> = None;
    for start in 0..coloured.len() {
        if !coloured[start] || seen[start] {
            continue;
        }
        let (mut count, mut extent) = (0, (usize::MAX, usize::MAX, 0, 0));
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(at) = stack.pop() {
            let (row, column) = (at / columns, at % columns);
            count += 1;
            extent = (extent.0.min(column), extent.1.min(row), extent.2.max(column), extent.3.max(row));
            let neighbours =
                [(row > 0).then(|| at - columns), (row + 1 < rows).then(|| at + columns), (column > 0).then(|| at - 1), (column + 1 < columns).then(|| at + 1)];
            for next in neighbours.into_iter().flatten() {
                if coloured[next] && !seen[next] {
                    seen[next] = true;
                    stack.push(next);
                }
            }
        }
        if best.is_none_or(|(most, _)| count > most) {
            best = Some((count, extent));
        }
    }
    let (count, (c0, r0, c1, r1)) = best?;
    (count * 50 >= columns * rows).then(|| PixelBox {
        x0: (c0 as u32 * cell) as f64,
        y0: (r0 as u32 * cell) as f64,
        x1: ((c1 as u32 + 1) * cell).min(image.width) as f64,
        y1: ((r1 as u32 + 1) * cell).min(image.height) as f64,
    })
}
