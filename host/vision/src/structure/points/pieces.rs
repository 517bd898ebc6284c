//! Pieces of ink: the 8-connected pixels of a mask, as the detectors taking symbols from a
//! colour's ink (or a hairline's from the map's lightness) and the number boxes see them.
//!
//! Invariants: a piece's label is its index + 1 (0 off the ink); boxes are in the mask's pixels,
//! their far sides past the last pixels.

use crate::structure::skeleton;

/// A piece of ink: 8-connected pixels of a mask.
#[derive(Debug, Clone, Copy)]
pub(super) struct InkPiece {
    /// Its box, `(x0, y0, x1, y1)` in the mask's pixels (`x1`, `y1` past its last pixels).
    pub(super) bbox: (f64, f64, f64, f64),
    /// How many pixels it has.
    pub(super) pixels: usize,
}

impl InkPiece {
    /// Its box's width and height.
    pub(super) fn sides(&self) -> (f64, f64) {
        (self.bbox.2 - self.bbox.0, self.bbox.3 - self.bbox.1)
    }

    /// The share of its box it fills.
    pub(super) fn fill(&self) -> f64 {
        let (wide, tall) = self.sides();
        self.pixels as f64 / (wide * tall)
    }

    /// Its box's wider side.
    pub(super) fn size(&self) -> f64 {
        let (wide, tall) = self.sides();
        wide.max(tall)
    }

    /// Its box's middle.
    pub(super) fn centre(&self) -> (f64, f64) {
        ((self.bbox.0 + self.bbox.2) / 2.0, (self.bbox.1 + self.bbox.3) / 2.0)
    }

    /// Its ink in the top third of its box's rows over that in the bottom third
    /// ([`PointPrompt::taper`]), its pixels being those labelled `label` in `labels` (`width` wide).
    pub(super) fn taper(&self, label: u32, labels: &[u32], width: usize) -> f64 {
        let third = ((self.bbox.3 - self.bbox.1) / 3.0).ceil() as usize;
        let (x0, x1, y0, y1) = (self.bbox.0 as usize, self.bbox.2 as usize, self.bbox.1 as usize, self.bbox.3 as usize);
        let ink = |rows: std::ops::Range<usize>| rows.flat_map(|y| (x0..x1).map(move |x| y * width + x)).filter(|&i| labels[i] == label).count();
        ink(y0..y0 + third) as f64 / ink(y1 - third..y1).max(1) as f64
    }
}

/// Clears from `mask` the pixels of the pieces (`label`, per pixel its piece's index + 1, as
/// [`ink_pieces`] gives) that are `taken`.
pub(super) fn clear_taken(mask: &mut [u8], label: &[u32], taken: &[bool]) {
    for (m, &l) in mask.iter_mut().zip(label) {
        if l != 0 && taken[l as usize - 1] {
            *m = 0;
        }
    }
}

/// The pieces of ink of a `width × height` mask (nonzero pixels, 8-connected): per pixel its
/// piece's index + 1 (0 off the ink), and the pieces.
pub(super) fn ink_pieces(mask: &[u8], width: usize, height: usize) -> (Vec<u32>, Vec<InkPiece>) {
    let mut label = vec![0_u32; mask.len()];
    let mut pieces: Vec<InkPiece> = Vec::new();
    let mut queue = Vec::new();
    for start in 0..mask.len() {
        if mask[start] == 0 || label[start] != 0 {
            continue;
        }
        let (sx, sy) = ((start % width) as f64, (start / width) as f64);
        let mut piece = InkPiece { bbox: (sx, sy, sx + 1.0, sy + 1.0), pixels: 0 };
        let id = pieces.len() as u32 + 1;
        label[start] = id;
        queue.push(start);
        while let Some(i) = queue.pop() {
            let (x, y) = ((i % width) as isize, (i / width) as isize);
            let b = &mut piece.bbox;
            (b.0, b.1, b.2, b.3) = (b.0.min(x as f64), b.1.min(y as f64), b.2.max(x as f64 + 1.0), b.3.max(y as f64 + 1.0));
            piece.pixels += 1;
            for (dx, dy) in skeleton::AROUND {
                let (nx, ny) = (x + dx, y + dy);
                if nx >= 0 && ny >= 0 && (nx as usize) < width && (ny as usize) < height {
                    let n = ny as usize * width + nx as usize;
                    if mask[n] != 0 && label[n] == 0 {
                        label[n] = id;
                        queue.push(n);
                    }
                }
            }
        }
        pieces.push(piece);
    }
    (label, pieces)
}
