//! Colour science: PEACE's 25 named colours and the nearest of them, `#rrggbb`,
//! CIELAB under D65 and the CIE76 distance between two colours, and the colour
//! of a swatch (the median of its non-black pixels) or of a ground under print
//! (the median of the brighter half of an area).
//!
//! Invariant: pure functions of pixels; a colour is `(r, g, b)` in sRGB bytes.

use crate::image::Rgb;
use geomap_model::page::PixelBox;

/// PEACE's named colours (`utils/vision.py`, `rgb_to_color_name`).
pub const NAMED_COLOURS: [((u8, u8, u8), &str); 25] = [
    ((255, 0, 0), "Red"),
    ((0, 255, 0), "Green"),
    ((0, 0, 255), "Blue"),
    ((255, 255, 0), "Yellow"),
    ((0, 255, 255), "Cyan"),
    ((255, 0, 255), "Magenta"),
    ((255, 255, 255), "White"),
    ((0, 0, 0), "Black"),
    ((128, 128, 128), "Gray"),
    ((128, 0, 0), "Maroon"),
    ((128, 128, 0), "Olive"),
    ((0, 128, 0), "Dark Green"),
    ((128, 0, 128), "Purple"),
    ((0, 128, 128), "Teal"),
    ((0, 0, 128), "Navy"),
    ((255, 192, 203), "Pink"),
    ((255, 165, 0), "Orange"),
    ((0, 255, 127), "Spring Green"),
    ((255, 105, 180), "Hot Pink"),
    ((255, 69, 0), "Red-Orange"),
    ((102, 205, 170), "Medium Aquamarine"),
    ((173, 216, 230), "Light Blue"),
    ((240, 230, 140), "Khaki"),
    ((255, 20, 147), "Deep Pink"),
    ((255, 99, 71), "Tomato"),
];

/// A pixel darker than this in every channel counts as black (a swatch's outline, hatching).
const BLACK: u8 = 48;

/// The named colour nearest `rgb` (squared RGB distance; the first of equals).
pub fn colour_name(rgb: (u8, u8, u8)) -> &'static str {
    let distance = |c: (u8, u8, u8)| {
        let d = |a: u8, b: u8| (a as i32 - b as i32).pow(2);
        d(rgb.0, c.0) + d(rgb.1, c.1) + d(rgb.2, c.2)
    };
    NAMED_COLOURS.iter().min_by_key(|(c, _)| distance(*c)).map(|(_, name)| *name).expect("the table is not empty")
}

/// `#rrggbb`.
pub fn hex(rgb: (u8, u8, u8)) -> String {
    format!("#{:02x}{:02x}{:02x}", rgb.0, rgb.1, rgb.2)
}

/// `rgb` (sRGB) in CIELAB under D65: `[L, a, b]`, L from 0 (black) to 100 (white).
pub fn lab(rgb: (u8, u8, u8)) -> [f64; 3] {
    let linear = |c: u8| {
        let c = c as f64 / 255.0;
        if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    };
    let (r, g, b) = (linear(rgb.0), linear(rgb.1), linear(rgb.2));
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| if t > 216.0 / 24389.0 { t.cbrt() } else { (24389.0 / 27.0 * t + 16.0) / 116.0 };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// The perceptual distance between two CIELAB colours (CIE76 ΔE: about 2.3 is the smallest
/// difference people notice; over 10, two colours read as different).
pub fn delta_e(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The per-channel median of `pixels`, or `None` when there are none.
pub fn median_colour(pixels: impl IntoIterator<Item = (u8, u8, u8)>) -> Option<(u8, u8, u8)> {
    let mut channels: [Vec<u8>; 3] = Default::default();
    for (r, g, b) in pixels {
        channels[0].push(r);
        channels[1].push(g);
        channels[2].push(b);
    }
    let median = |values: &mut Vec<u8>| {
        let middle = values.len() / 2;
        *values.select_nth_unstable(middle).1
    };
    let [r, g, b] = &mut channels;
    (!r.is_empty()).then(|| (median(r), median(g), median(b)))
}

/// The per-channel median of the non-black pixels of `bbox` in an RGB image
/// (`rgb`: `width`×`height`×3, row-major); black when every pixel is.
pub fn swatch_colour(rgb: &[u8], width: u32, height: u32, bbox: &PixelBox) -> (u8, u8, u8) {
    let (x0, y0, x1, y1) = bbox.pixels(width, height);
    let non_black = (y0..y1)
        .flat_map(|y| rgb[((y * width + x0) * 3) as usize..((y * width + x1) * 3) as usize].chunks_exact(3))
        .filter(|pixel| pixel.iter().any(|&c| c >= BLACK))
        .map(|pixel| (pixel[0], pixel[1], pixel[2]));
    median_colour(non_black).unwrap_or((0, 0, 0))
}

/// CIE94's colour difference (graphic arts weights) of `sample` from `reference`, weighted by the
/// sample's own chroma: a dark stroke smeared with a neighbour's hue (as JPEG's halved chroma
/// leaves a thin black line on red) stays near black, where the plain ΔE puts it far.
pub fn delta_e94(sample: [f64; 3], reference: [f64; 3]) -> f64 {
    let chroma = |l: [f64; 3]| l[1].hypot(l[2]);
    let (c1, c2) = (chroma(sample), chroma(reference));
    let (dl, dc) = (sample[0] - reference[0], c1 - c2);
    let dh2 = ((sample[1] - reference[1]).powi(2) + (sample[2] - reference[2]).powi(2) - dc * dc).max(0.0);
    let (sc, sh) = (1.0 + 0.045 * c1, 1.0 + 0.015 * c1);
    (dl * dl + (dc / sc).powi(2) + dh2 / (sh * sh)).sqrt()
}

/// The median colour of the brighter half of `bbox`'s pixels: a swatch's ground, not its printed code.
pub fn ground_colour(image: &Rgb, bbox: &PixelBox) -> Option<(u8, u8, u8)> {
    let mut found: Vec<(u32, (u8, u8, u8))> = image.pixels_in(bbox).map(|p| (p.0 as u32 * 299 + p.1 as u32 * 587 + p.2 as u32 * 114, p)).collect();
    found.sort_unstable_by_key(|(luminance, _)| *luminance);
    median_colour(found[found.len() / 2..].iter().map(|(_, pixel)| *pixel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swatch_colour_is_the_median_of_its_non_black_pixels() {
        // 4×2 image: a black outline pixel, three reds of slightly different shade, and greys.
        let rgb: Vec<u8> = [[0, 0, 0], [250, 10, 10], [240, 0, 0], [245, 5, 5], [128, 128, 128], [0, 0, 0], [0, 0, 0], [0, 0, 0]].concat();
        let colour = swatch_colour(&rgb, 4, 2, &PixelBox { x0: 0.0, y0: 0.0, x1: 4.0, y1: 1.0 });
        assert_eq!(colour, (245, 5, 5));
        assert_eq!((hex(colour), colour_name(colour)), ("#f50505".to_owned(), "Red"));
        assert_eq!(colour_name((250, 100, 80)), "Tomato");
        assert_eq!(swatch_colour(&rgb, 4, 2, &PixelBox { x0: 1.0, y0: 1.0, x1: 4.0, y1: 2.0 }), (0, 0, 0), "all black");
    }

    #[test]
    fn lab_matches_published_values_and_distance_is_perceptual() {
        let close = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 0.05);
        assert!(close(lab((255, 255, 255)), [100.0, 0.0, 0.0]), "{:?}", lab((255, 255, 255)));
        assert!(close(lab((255, 0, 0)), [53.24, 80.09, 67.20]), "{:?}", lab((255, 0, 0)));
        assert!(close(lab((0, 0, 255)), [32.30, 79.19, -107.86]), "{:?}", lab((0, 0, 255)));
        assert_eq!(delta_e(lab((10, 20, 30)), lab((10, 20, 30))), 0.0);
        assert!((delta_e(lab((255, 255, 255)), lab((0, 0, 0))) - 100.0).abs() < 1e-3);
        // The same RGB step of 30 is plain in green and barely visible as red added to a full blue.
        assert!(delta_e(lab((0, 200, 0)), lab((0, 230, 0))) > 10.0);
        assert!(delta_e(lab((0, 0, 200)), lab((30, 0, 200))) < 2.3);
    }
}
