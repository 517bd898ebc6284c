//! A swatch's printed code, set apart from the swatch's ground so the recogniser
//! can read it. A legend's codes are small type (seven pixels high on the USGS
//! sample) on a coloured, sometimes stippled ground: read from the whole inside
//! of the swatch, "Qd" on dotted sand gives nothing; boxed tightly around its ink
//! (as the recogniser's training lines were), or drawn as its distance from the
//! ground, it reads.
//!
//! Invariants: pure arithmetic on the scan's pixels, no model; every rendition is
//! cut from inside the image; a swatch with no ink distinct from its ground gives
//! only the plain inside.

use crate::colour::{delta_e, lab};
use crate::image::Rgb;
use geomap_model::page::PixelBox;

/// The part of a swatch's height left out at each edge of its inside when its code is looked
/// for (the swatch's outline and the paper beyond it are not the code).
const SWATCH_INSET: f64 = 0.15;
/// Ink must differ from the ground by at least this ΔE somewhere, or the swatch holds no code.
const MIN_INK_CONTRAST: f64 = 10.0;
/// A pixel is the code's ink where its smoothed difference from the ground reaches this share of
/// the largest (isolated stipple dots fade under the smoothing, strokes do not).
const INK_SHARE: f64 = 0.5;
/// The margin kept around the ink, as a share of the ink's height (at least [`MIN_MARGIN`] pixels).
const MARGIN: f64 = 0.4;
/// The smallest margin around the ink, in pixels.
const MIN_MARGIN: u32 = 2;
/// The ink map's contrast curve: the difference from the ground, as a share of the ink's largest,
/// raised to this power (faint halo pixels fade, stroke cores stay black).
const INK_GAMMA: f64 = 1.5;

/// The inside of a swatch less `SWATCH_INSET` (15%) of its height at every edge: where its code is read.
pub fn inset(inside: &PixelBox) -> PixelBox {
    let inset = SWATCH_INSET * (inside.y1 - inside.y0);
    PixelBox { x0: inside.x0 + inset, y0: inside.y0 + inset, x1: inside.x1 - inset, y1: inside.y1 - inset }
}

/// The images of one swatch's code the recogniser is given besides its [`inset`], when the swatch
/// holds ink: the scan cut tightly around that ink, and the same cut drawn black on white by each
/// pixel's difference from the ground. None when nothing in the inset differs from its ground.
pub fn ink_renditions(image: &Rgb, inside: &PixelBox) -> Vec<Rgb> {
    let (x0, y0, x1, y1) = inset(inside).pixels(image.width, image.height);
    if x1 <= x0 || y1 <= y0 {
        return Vec::new();
    }
    let Some(ink) = Ink::find(image, (x0, y0, x1, y1)) else { return Vec::new() };
    let margin = ((MARGIN * (ink.y1 - ink.y0) as f64).round() as u32).max(MIN_MARGIN);
    let cut = (ink.x0.saturating_sub(margin), ink.y0.saturating_sub(margin), (ink.x1 + margin).min(image.width), (ink.y1 + margin).min(image.height));
    vec![image.crop(cut), ink.map(image, cut)]
}

/// Where a swatch's code lies and how it differs from the swatch's ground.
struct Ink {
    /// The ground's colour in CIELAB: the per-channel median of the searched pixels.
    ground: [f64; 3],
    /// The largest difference from the ground inside the ink's box.
    strongest: f64,
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
}

impl Ink {
    /// The ink in `region` of the image (whole pixels, non-empty): the box of the pixels whose
    /// difference from the ground, smoothed by two 3 × 3 box means, reaches [`INK_SHARE`] of the
    /// largest; none when nothing differs by [`MIN_INK_CONTRAST`].
    fn find(image: &Rgb, (x0, y0, x1, y1): (u32, u32, u32, u32)) -> Option<Ink> {
        let (width, height) = ((x1 - x0) as usize, (y1 - y0) as usize);
        let colours: Vec<[f64; 3]> = (y0..y1).flat_map(|y| (x0..x1).map(move |x| pixel_lab(image, x, y))).collect();
        let ground = [0, 1, 2].map(|channel| {
            let mut values: Vec<f64> = colours.iter().map(|c| c[channel]).collect();
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        });
        let difference: Vec<f64> = colours.iter().map(|c| delta_e(*c, ground)).collect();
        if difference.iter().all(|&d| d < MIN_INK_CONTRAST) {
            return None;
        }
        let smooth = box_mean(&box_mean(&difference, width, height), width, height);
        let threshold = INK_SHARE * smooth.iter().copied().fold(0.0, f64::max);
        let (mut bx0, mut by0, mut bx1, mut by1) = (usize::MAX, usize::MAX, 0, 0);
        for (at, _) in smooth.iter().enumerate().filter(|(_, s)| **s >= threshold) {
            let (x, y) = (at % width, at / width);
            (bx0, by0, bx1, by1) = (bx0.min(x), by0.min(y), bx1.max(x + 1), by1.max(y + 1));
        }
        let strongest = (by0..by1).flat_map(|y| (bx0..bx1).map(move |x| y * width + x)).map(|at| difference[at]).fold(0.0, f64::max);
        let at = |offset: u32, value: usize| offset + value as u32;
        Some(Ink { ground, strongest, x0: at(x0, bx0), y0: at(y0, by0), x1: at(x0, bx1), y1: at(y0, by1) })
    }

    /// The image's `cut` drawn as the ink's difference from the ground, black on white: white
    /// beyond one pixel around the ink's box.
    fn map(&self, image: &Rgb, (x0, y0, x1, y1): (u32, u32, u32, u32)) -> Rgb {
        let near = (self.x0.saturating_sub(1), self.y0.saturating_sub(1), self.x1 + 1, self.y1 + 1);
        let mut pixels = Vec::with_capacity(((x1 - x0) * (y1 - y0) * 3) as usize);
        for y in y0..y1 {
            for x in x0..x1 {
                let inked = x >= near.0 && x < near.2 && y >= near.1 && y < near.3;
                let strength = if inked { (delta_e(pixel_lab(image, x, y), self.ground) / self.strongest).clamp(0.0, 1.0).powf(INK_GAMMA) } else { 0.0 };
                let grey = (255.0 * (1.0 - strength)).round() as u8;
                pixels.extend([grey; 3]);
            }
        }
        Rgb { width: x1 - x0, height: y1 - y0, pixels }
    }
}

fn pixel_lab(image: &Rgb, x: u32, y: u32) -> [f64; 3] {
    let at = ((y * image.width + x) * 3) as usize;
    lab((image.pixels[at], image.pixels[at + 1], image.pixels[at + 2]))
}

/// The mean of each value's 3 × 3 neighbourhood in a `width × height` grid (cells beyond the grid count as 0).
fn box_mean(values: &[f64], width: usize, height: usize) -> Vec<f64> {
    let mut mean = vec![0.0; values.len()];
    for y in 0..height {
        for x in 0..width {
            let mut sum = 0.0;
            for ny in y.saturating_sub(1)..(y + 2).min(height) {
                for nx in x.saturating_sub(1)..(x + 2).min(width) {
                    sum += values[ny * width + nx];
                }
            }
            mean[y * width + x] = sum / 9.0;
        }
    }
    mean
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 40 × 20 swatch of `ground` with a dark bar (the code) at columns 16..24, rows 6..14, and,
    /// when `stippled`, single dark dots every fourth pixel elsewhere.
    fn swatch(ground: [u8; 3], stippled: bool) -> Rgb {
        let (width, height) = (40, 20);
        let mut pixels = Vec::new();
        for y in 0..height {
            for x in 0..width {
                let code = (16..24).contains(&x) && (6..14).contains(&y);
                let dot = stippled && x % 4 == 1 && y % 4 == 1;
                pixels.extend(if code || dot { [40, 30, 20] } else { ground });
            }
        }
        Rgb { width, height, pixels }
    }

    const INSIDE: PixelBox = PixelBox { x0: 0.0, y0: 0.0, x1: 40.0, y1: 20.0 };

    #[test]
    fn the_code_is_cut_out_with_a_margin_and_drawn_black_on_white() {
        let image = swatch([250, 230, 150], false);
        assert_eq!(inset(&INSIDE), PixelBox { x0: 3.0, y0: 3.0, x1: 37.0, y1: 17.0 }, "15% of its height at each edge");
        let images = ink_renditions(&image, &INSIDE);
        assert_eq!(images.len(), 2);
        // The ink is the bar, 8 × 8 (a pixel beyond it the smoothed difference is under half the
        // core's), with a margin of 40% of its height, 3 pixels, each way.
        assert_eq!((images[0].width, images[0].height), (8 + 2 * 3, 8 + 2 * 3));
        let ink = &images[1];
        let grey = |x: u32, y: u32| ink.pixels[((y * ink.width + x) * 3) as usize];
        assert_eq!(grey(ink.width / 2, ink.height / 2), 0, "the code's core is black");
        assert_eq!(grey(0, 0), 255, "beyond the ink it is white");
    }

    #[test]
    fn stipple_dots_do_not_widen_the_code() {
        let plain = ink_renditions(&swatch([250, 230, 150], false), &INSIDE);
        let stippled = ink_renditions(&swatch([250, 230, 150], true), &INSIDE);
        assert_eq!((stippled[0].width, stippled[0].height), (plain[0].width, plain[0].height));
    }

    #[test]
    fn a_swatch_without_ink_gives_no_rendition() {
        let image = Rgb { width: 40, height: 20, pixels: [200, 60, 120].repeat(800) };
        assert!(ink_renditions(&image, &INSIDE).is_empty());
    }
}
