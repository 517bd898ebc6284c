//! The picture of an extraction: the scan's main map and its classification side by side,
//! each at most [`PREVIEW_SIDE`] pixels on its longer side, sampled (nearest pixel) as the
//! scan is read strip by strip, so the whole map is never held in colour.

use crate::image::Rgb;

/// The longer side of each half of the preview, in pixels.
pub const PREVIEW_SIDE: u32 = 1024;
/// Paper between the two halves.
const GAP: u32 = 16;

/// A preview being drawn.
pub struct Preview {
    /// The picture: the scan at left, the classes at right.
    pub image: Rgb,
    half_width: u32,
    half_height: u32,
    width: u32,
    height: u32,
}

impl Preview {
    /// An empty preview of a `width × height` map.
    pub fn new(width: u32, height: u32) -> Preview {
        let scale = (f64::from(PREVIEW_SIDE) / f64::from(width.max(height))).min(1.0);
        let half_width = ((f64::from(width) * scale).round() as u32).max(1);
        let half_height = ((f64::from(height) * scale).round() as u32).max(1);
        let image_width = 2 * half_width + GAP;
        let image = Rgb { width: image_width, height: half_height, pixels: vec![255; (image_width * half_height * 3) as usize] };
        Preview { image, half_width, half_height, width, height }
    }

    /// The map's column and row shown at preview pixel `(px, py)` of a half.
    fn source(&self, px: u32, py: u32) -> (u32, u32) {
        let column = u64::from(px) * u64::from(self.width) / u64::from(self.half_width);
        let row = u64::from(py) * u64::from(self.height) / u64::from(self.half_height);
        (column as u32, row as u32)
    }

    /// Samples the left half from `strip`, the map's rows `first_row..first_row + strip.height`.
    pub fn sample_scan(&mut self, strip: &Rgb, first_row: u32) {
        for py in 0..self.half_height {
            let (_, row) = self.source(0, py);
            if !(first_row..first_row + strip.height).contains(&row) {
                continue;
            }
            for px in 0..self.half_width {
                let (column, _) = self.source(px, py);
                let from = (((row - first_row) * strip.width + column.min(strip.width - 1)) * 3) as usize;
                let to = ((py * self.image.width + px) * 3) as usize;
                self.image.pixels[to..to + 3].copy_from_slice(&strip.pixels[from..from + 3]);
            }
        }
    }

    /// Paints the right half from `classes` (`width × height`): class `k` in `palette[k - 1]`,
    /// no unit in light grey.
    pub fn paint_classes(&mut self, classes: &[u8], palette: &[(u8, u8, u8)]) {
        for py in 0..self.half_height {
            for px in 0..self.half_width {
                let (column, row) = self.source(px, py);
                let class = classes[(row.min(self.height - 1) * self.width + column.min(self.width - 1)) as usize];
                let (r, g, b) = palette.get(usize::from(class).wrapping_sub(1)).copied().unwrap_or((225, 225, 225));
                let to = ((py * self.image.width + self.half_width + GAP + px) * 3) as usize;
                self.image.pixels[to..to + 3].copy_from_slice(&[r, g, b]);
            }
        }
    }
}
