//! Text boxes from the DB text detector's probability map: threshold,
//! connected regions, score, and grow each box back to the text's full extent
//! ("unclip"), as PP-OCR's post-processing does, with axis-aligned boxes
//! (map lettering is mostly horizontal; a rotated label gets its enclosing box).
//!
//! The settings are PaddleOCR's own (no dilation, unclip 1.5), not RapidOCR's
//! (dilation, 1.6): at full resolution RapidOCR's boxes came out about 40 %
//! taller than the text needs, and on the USGS sample's legend the
//! recogniser read them markedly worse.

/// The post-processing settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DbSettings {
    /// A pixel is text above this probability.
    pub threshold: f32,
    /// A region is kept when its box's mean probability is at least this.
    pub box_threshold: f32,
    /// How far a box grows: its area × this ÷ its perimeter, on every side.
    pub unclip_ratio: f32,
    /// At most this many regions are considered.
    pub max_candidates: usize,
}

impl Default for DbSettings {
    fn default() -> DbSettings {
        DbSettings { threshold: 0.3, box_threshold: 0.5, unclip_ratio: 1.5, max_candidates: 1000 }
    }
}

/// Regions narrower than this (in map pixels) are noise.
const MIN_SIDE: f32 = 3.0;

/// A text box in the probability map's pixels, with its mean probability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextBox {
    /// Left edge.
    pub x0: f32,
    /// Top edge.
    pub y0: f32,
    /// Right edge.
    pub x1: f32,
    /// Bottom edge.
    pub y1: f32,
    /// Mean probability inside the region's box before growing.
    pub score: f32,
}

/// The text boxes of a `width`×`height` probability map (row-major), top to bottom.
pub fn text_boxes(probability: &[f32], width: usize, height: usize, settings: &DbSettings) -> Vec<TextBox> {
    assert_eq!(probability.len(), width * height, "the map is width × height");
    let mask: Vec<bool> = probability.iter().map(|&p| p > settings.threshold).collect();
    let sums = SummedArea::new(probability, width, height);
    let mut boxes: Vec<TextBox> = regions(&mask, width, height)
        .into_iter()
        .take(settings.max_candidates)
        .filter_map(|(min_x, min_y, max_x, max_y)| {
            let (w, h) = ((max_x - min_x) as f32, (max_y - min_y) as f32);
            if w.min(h) < MIN_SIDE {
                return None;
            }
            let score = sums.mean(min_x, min_y, max_x, max_y);
            if score < settings.box_threshold {
                return None;
            }
            let grow = w * h * settings.unclip_ratio / (2.0 * (w + h));
            if w.min(h) + 2.0 * grow < MIN_SIDE + 2.0 {
                return None;
            }
            let clip = |v: f32, max: usize| v.clamp(0.0, max as f32);
            Some(TextBox {
                x0: clip(min_x as f32 - grow, width),
                y0: clip(min_y as f32 - grow, height),
                x1: clip(max_x as f32 + grow, width),
                y1: clip(max_y as f32 + grow, height),
                score,
            })
        })
        .collect();
    boxes.sort_by(|a, b| a.y0.total_cmp(&b.y0).then(a.x0.total_cmp(&b.x0)));
    boxes
}

/// The bounding pixels `(min_x, min_y, max_x, max_y)` of each 8-connected region, in scan order.
fn regions(mask: &[bool], width: usize, height: usize) -> Vec<(usize, usize, usize, usize)> {
    let mut seen = vec![false; mask.len()];
    let mut found = Vec::new();
    let mut stack = Vec::new();
    for start in 0..mask.len() {
        if !mask[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let mut bounds = (usize::MAX, usize::MAX, 0, 0);
        while let Some(index) = stack.pop() {
            let (x, y) = (index % width, index / width);
            bounds = (bounds.0.min(x), bounds.1.min(y), bounds.2.max(x), bounds.3.max(y));
            for ny in y.saturating_sub(1)..=(y + 1).min(height - 1) {
                for nx in x.saturating_sub(1)..=(x + 1).min(width - 1) {
                    let neighbour = ny * width + nx;
                    if mask[neighbour] && !seen[neighbour] {
                        seen[neighbour] = true;
                        stack.push(neighbour);
                    }
                }
            }
        }
        found.push(bounds);
    }
    found
}

/// Sums over any rectangle of the map in constant time.
struct SummedArea {
    sums: Vec<f64>,
    stride: usize,
}

impl SummedArea {
    fn new(values: &[f32], width: usize, height: usize) -> SummedArea {
        let stride = width + 1;
        let mut sums = vec![0.0; stride * (height + 1)];
        for y in 0..height {
            let mut row = 0.0;
            for x in 0..width {
                row += values[y * width + x] as f64;
                sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row;
            }
        }
        SummedArea { sums, stride }
    }

    /// The mean over pixels `min_x..=max_x` × `min_y..=max_y`.
    fn mean(&self, min_x: usize, min_y: usize, max_x: usize, max_y: usize) -> f32 {
        let at = |x: usize, y: usize| self.sums[y * self.stride + x];
        let total = at(max_x + 1, max_y + 1) - at(min_x, max_y + 1) - at(max_x + 1, min_y) + at(min_x, min_y);
        (total / ((max_x - min_x + 1) * (max_y - min_y + 1)) as f64) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `width`×`height` map of zeros with each `(x0, y0, x1, y1, p)` rectangle (exclusive ends) set to `p`.
    fn map(width: usize, height: usize, rectangles: &[(usize, usize, usize, usize, f32)]) -> Vec<f32> {
        let mut values = vec![0.0; width * height];
        for &(x0, y0, x1, y1, p) in rectangles {
            for y in y0..y1 {
                values[y * width + x0..y * width + x1].fill(p);
            }
        }
        values
    }

    #[test]
    fn a_word_is_found_and_grown_by_its_unclip_distance() {
        let values = map(100, 40, &[(10, 10, 50, 20, 0.9)]);
        let [found] = text_boxes(&values, 100, 40, &DbSettings::default())[..] else { panic!("one box") };
        // Pixel centres 10..=49 × 10..=19: a 39 × 9 box, every pixel of it at 0.9.
        // Grown by 39 × 9 × 1.5 ÷ (2 × 48) = 5.484375 on every side.
        assert!((found.score - 0.9).abs() < 1e-6, "{found:?}");
        let grow = 39.0 * 9.0 * 1.5 / 96.0;
        let expected = [10.0 - grow, 10.0 - grow, 49.0 + grow, 19.0 + grow];
        for (got, want) in [found.x0, found.y0, found.x1, found.y1].into_iter().zip(expected) {
            assert!((got - want).abs() < 1e-4, "{found:?}");
        }
    }

    #[test]
    fn faint_thin_and_separate_regions_are_told_apart() {
        let values = map(120, 60, &[(5, 5, 40, 15, 0.95), (60, 5, 110, 15, 0.35), (5, 30, 100, 32, 0.9), (70, 40, 100, 50, 0.8)]);
        let found = text_boxes(&values, 120, 60, &DbSettings::default());
        // The faint word scores under 0.5 and the two-pixel rule is too thin; the others are kept, top to bottom.
        let lefts: Vec<f32> = found.iter().map(|b| b.x0.round()).collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(lefts[0] < 5.0 && lefts[1] < 70.0 && found[1].y0 > 30.0, "{found:?}");
    }

    #[test]
    fn a_box_at_the_edge_is_clipped_to_the_map() {
        let values = map(50, 20, &[(0, 0, 30, 8, 0.9)]);
        let [found] = text_boxes(&values, 50, 20, &DbSettings::default())[..] else { panic!("one box") };
        assert_eq!((found.x0, found.y0), (0.0, 0.0));
    }
}
