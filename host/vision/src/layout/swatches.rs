//! A swatch found from its code: the area of one colour around the code (or the
//! coloured box left of a code on paper), grown while its edges keep that
//! colour; or, when nothing coloured is near, the paper a frame drawn around
//! the code closes off (a white swatch).
//!
//! Invariant: pure functions of the scan's pixels; distances scale with the
//! code's type height.

use super::{centre_x, centre_y, height, union};
use crate::colour::{delta_e, ground_colour, lab, median_colour};
use crate::image::Rgb;
use geomap_model::page::PixelBox;

/// A colour this close (CIE76 ΔE) to a sampled colour belongs to the same swatch.
const SAME_COLOUR: f64 = 12.0;

/// Paper: nearly white and grey.
pub(super) fn is_paper(colour: (u8, u8, u8)) -> bool {
    let [l, a, b] = lab(colour);
    l > 92.0 && a.hypot(b) < 8.0
}

/// Whether pixel `(x, y)` of `image` is anything but paper (ink or colour).
pub(super) fn inked(image: &Rgb, x: u32, y: u32) -> bool {
    let at = ((y * image.width + x) * 3) as usize;
    !is_paper((image.pixels[at], image.pixels[at + 1], image.pixels[at + 2]))
}

/// The swatch of a code: the area of one colour around it (or, when the code sits on paper,
/// the coloured box left of it), grown from the code out while its edges keep that colour; or,
/// when nothing coloured is near, the paper a frame drawn around the code closes off.
pub(super) fn swatch(image: &Rgb, code: &PixelBox) -> (PixelBox, Option<(u8, u8, u8)>) {
    let h = height(code);
    let around = PixelBox { x0: code.x0 - 0.3 * h, y0: code.y0 - 0.3 * h, x1: code.x1 + 0.3 * h, y1: code.y1 + 0.3 * h };
    let mut seed = *code;
    let mut colour = ground_colour(image, &around).unwrap_or((255, 255, 255));
    if is_paper(colour) {
        let left = PixelBox { x0: code.x0 - 4.0 * h, y0: code.y0, x1: code.x0 - 0.3 * h, y1: code.y1 };
        let coloured: Vec<(u8, u8, u8)> = image.pixels_in(&left).filter(|p| !is_paper(*p) && lab(*p)[0] > 25.0).collect();
        let enough = coloured.len() * 3 >= image.pixels_in(&left).count();
        if let Some(found) = median_colour(coloured).filter(|_| enough) {
            colour = found;
            let target = lab(colour);
            let rows = (code.y0 + 0.25 * h, code.y1 - 0.25 * h);
            let (from, to) = (left.x0.max(0.0).floor() as u32, left.x1.max(0.0).floor() as u32);
            let nearest = (from..to).rev().map(|x| PixelBox { x0: x as f64, y0: rows.0, x1: x as f64 + 1.0, y1: rows.1 }).find(|column| {
                let (total, same) = image.pixels_in(column).fold((0, 0), |(t, s), p| (t + 1, s + (delta_e(lab(p), target) <= SAME_COLOUR) as usize));
                same * 2 >= total && total > 0
            });
            match nearest {
                Some(column) => seed = column,
                None => return (*code, None),
            }
        } else {
            return outlined(image, code, colour).map_or((*code, None), |inside| (inside, ground_colour(image, &inside)));
        }
    }
    (grow(image, seed, colour, h), Some(colour))
}

/// The inside of a frame drawn around a code on `paper`: a swatch whose colour is the paper's
/// (as the USGS draws diabase). It is the largest region of paper, 4-connected, that a line at
/// least 12 L* darker than the paper closes off within four type heights across and two down from
/// the code, when it holds the code's centre and spans the code (a letter's counter does not).
fn outlined(image: &Rgb, code: &PixelBox, paper: (u8, u8, u8)) -> Option<PixelBox> {
    let h = height(code);
    let window = PixelBox { x0: code.x0 - 4.0 * h, y0: code.y0 - 2.0 * h, x1: code.x1 + 4.0 * h, y1: code.y1 + 2.0 * h };
    let (x0, y0, x1, _) = window.pixels(image.width, image.height);
    let width = (x1 - x0) as usize;
    let ink_below = lab(paper)[0] - 12.0;
    let mut open: Vec<bool> = image.pixels_in(&window).map(|p| lab(p)[0] > ink_below).collect();
    let (cx0, cy0, cx1, cy1) = code.pixels(image.width, image.height);
    let centre = (centre_x(code), centre_y(code));
    let mut best: Option<(usize, PixelBox)> = None;
    for start in (cy0..cy1).flat_map(|y| (cx0..cx1).map(move |x| (y - y0) as usize * width + (x - x0) as usize)) {
        if !open[start] {
            continue;
        }
        open[start] = false;
        let (mut stack, mut size, mut enclosed) = (vec![start], 0, true);
        let mut region = PixelBox { x0: f64::INFINITY, y0: f64::INFINITY, x1: 0.0, y1: 0.0 };
        while let Some(at) = stack.pop() {
            let (x, y) = (at % width, at / width);
            size += 1;
            region = union(&region, &PixelBox { x0: x as f64, y0: y as f64, x1: x as f64 + 1.0, y1: y as f64 + 1.0 });
            enclosed &= x > 0 && y > 0 && x + 1 < width && at + width < open.len();
            let neighbours = [(x > 0).then(|| at - 1), (x + 1 < width).then(|| at + 1), at.checked_sub(width), Some(at + width).filter(|&n| n < open.len())];
            for next in neighbours.into_iter().flatten() {
                if open[next] {
                    open[next] = false;
                    stack.push(next);
                }
            }
        }
        let region = PixelBox { x0: region.x0 + x0 as f64, y0: region.y0 + y0 as f64, x1: region.x1 + x0 as f64, y1: region.y1 + y0 as f64 };
        let holds = region.x0 <= centre.0 && centre.0 <= region.x1 && region.y0 <= centre.1 && centre.1 <= region.y1;
        let spans = region.x1 - region.x0 >= code.x1 - code.x0 && height(&region) >= 0.6 * h;
        if enclosed && holds && spans && best.is_none_or(|(most, _)| size > most) {
            best = Some((size, region));
        }
    }
    best.map(|(_, region)| region)
}

/// `seed` grown a pixel at a time on each side while at least half of the new edge is `colour`
/// (its code's ink aside), up to four type heights each way.
pub(super) fn grow(image: &Rgb, seed: PixelBox, colour: (u8, u8, u8), h: f64) -> PixelBox {
    let target = lab(colour);
    let matches = |edge: PixelBox| {
        let (total, same) = image.pixels_in(&edge).fold((0, 0), |(t, s), p| (t + 1, s + (delta_e(lab(p), target) <= SAME_COLOUR) as usize));
        total > 0 && same * 2 >= total
    };
    let limit = 4.0 * h;
    let mut bbox = seed;
    let (width, height) = (image.width as f64, image.height as f64);
    let mut growing = [true; 4];
    while growing.iter().any(|g| *g) {
        if growing[0] && bbox.x0 >= 1.0 && seed.x0 - bbox.x0 < limit && matches(PixelBox { x0: bbox.x0 - 1.0, x1: bbox.x0, ..bbox }) {
            bbox.x0 -= 1.0;
        } else {
            growing[0] = false;
        }
        if growing[1] && bbox.x1 + 1.0 <= width && bbox.x1 - seed.x1 < limit && matches(PixelBox { x0: bbox.x1, x1: bbox.x1 + 1.0, ..bbox }) {
            bbox.x1 += 1.0;
        } else {
            growing[1] = false;
        }
        if growing[2] && bbox.y0 >= 1.0 && seed.y0 - bbox.y0 < limit && matches(PixelBox { y0: bbox.y0 - 1.0, y1: bbox.y0, ..bbox }) {
            bbox.y0 -= 1.0;
        } else {
            growing[2] = false;
        }
        if growing[3] && bbox.y1 + 1.0 <= height && bbox.y1 - seed.y1 < limit && matches(PixelBox { y0: bbox.y1, y1: bbox.y1 + 1.0, ..bbox }) {
            bbox.y1 += 1.0;
        } else {
            growing[3] = false;
        }
    }
    PixelBox { x0: bbox.x0.floor(), y0: bbox.y0.floor(), x1: bbox.x1.ceil(), y1: bbox.y1.ceil() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::fixtures::{b, image};

    #[test]
    fn a_swatch_left_of_a_code_on_paper_is_found() {
        let picture = image(400, 100, &[(b(20.0, 20.0, 70.0, 50.0), (200, 60, 60))]);
        let (swatch, colour) = swatch(&picture, &b(90.0, 25.0, 120.0, 45.0));
        assert_eq!(colour, Some((200, 60, 60)));
        assert_eq!(swatch, b(20.0, 20.0, 70.0, 50.0));
    }
}
