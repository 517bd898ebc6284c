//! Linework filled and thin strokes of another colour removed: a mode filter over a
//! 7 × 7 window where ink does not vote, then passes that grow the classes into the ink
//! still left.
//!
//! Invariants: in place, holding only the window's rows of the input besides the raster;
//! a pixel keeps its class while that class holds at least half the votes around it
//! (contacts stay where they are); ink nothing classified reaches ends as no unit.

use super::{INK, NO_UNIT};

/// The window reaches this many pixels either side (7 × 7): a stroke up to 3 pixels wide
/// crossing a unit holds under half of it.
pub const RADIUS: usize = 3;
/// After the mode filter, at most this many passes fill ink from the window around it
/// (ink up to about `RADIUS × (FILL_PASSES + 1)` pixels from a classified pixel is filled).
const FILL_PASSES: usize = 8;

/// Votes of one window: a count per class.
struct Votes {
    counts: [u32; 256],
    voters: u32,
}

impl Votes {
    fn add(&mut self, class: u8, by: i32) {
        if class != INK {
            self.counts[class as usize] = self.counts[class as usize].wrapping_add_signed(by);
            self.voters = self.voters.wrapping_add_signed(by);
        }
    }

    /// The class with the most votes among `0..=last` (the lower class on a tie), with its count.
    fn mode(&self, last: u8) -> (u8, u32) {
        (0..=last).map(|class| (class, self.counts[class as usize])).fold((0, 0), |best, next| if next.1 > best.1 { next } else { best })
    }
}

/// Filters `classes` (`width × height`, classes `0..=units` and [`INK`]) in place, lowering the
/// confidence of every pixel it changes to half the share its new class has around it. `cancelled`
/// is asked between rows; `true` stops early (the raster is then partly filtered).
pub fn fill_strokes(classes: &mut [u8], confidence: &mut [u8], width: usize, height: usize, units: u8, cancelled: &dyn Fn() -> bool) -> bool {
    let window = 2 * RADIUS + 1;
    let mut ring = vec![0_u8; window * width]; // the input rows y - RADIUS ..= y + RADIUS
    let row_of = |ring: &[u8], y: usize, x: usize| ring[(y % window) * width + x];
    for y in 0..RADIUS.min(height) {
        ring[(y % window) * width..][..width].copy_from_slice(&classes[y * width..][..width]);
    }
    for y in 0..height {
        if cancelled() {
            return false;
        }
        if let Some(next) = (y + RADIUS < height).then_some(y + RADIUS) {
            ring[(next % window) * width..][..width].copy_from_slice(&classes[next * width..][..width]);
        }
        let (top, bottom) = (y.saturating_sub(RADIUS), (y + RADIUS).min(height - 1));
        let mut votes = Votes { counts: [0; 256], voters: 0 };
        let column = |votes: &mut Votes, x: usize, by: i32| (top..=bottom).for_each(|wy| votes.add(row_of(&ring, wy, x), by));
        (0..RADIUS.min(width)).for_each(|x| column(&mut votes, x, 1));
        for x in 0..width {
            if x + RADIUS < width {
                column(&mut votes, x + RADIUS, 1);
            }
            if x > RADIUS {
                column(&mut votes, x - RADIUS - 1, -1);
            }
            let own = row_of(&ring, y, x);
            if (own != INK && votes.counts[own as usize] * 2 >= votes.voters) || votes.voters == 0 {
                continue;
            }
            let (class, count) = votes.mode(units);
            classes[y * width + x] = class;
            confidence[y * width + x] = (127 * count / votes.voters) as u8;
        }
    }
    for _ in 0..FILL_PASSES {
        if cancelled() {
            return false;
        }
        if !fill_pass(classes, confidence, width, height, units) {
            break;
        }
    }
    classes.iter_mut().filter(|class| **class == INK).for_each(|class| *class = NO_UNIT);
    true
}

/// One pass giving every ink pixel with classified pixels in its window their mode; `false` when none changed.
fn fill_pass(classes: &mut [u8], confidence: &mut [u8], width: usize, height: usize, units: u8) -> bool {
    let mut changed = false;
    for y in 0..height {
        let row = y * width;
        let Some(mut x) = classes[row..row + width].iter().position(|&c| c == INK) else { continue };
        while x < width {
            if classes[row + x] == INK {
                let mut votes = Votes { counts: [0; 256], voters: 0 };
                for wy in y.saturating_sub(RADIUS)..=(y + RADIUS).min(height - 1) {
                    for wx in x.saturating_sub(RADIUS)..=(x + RADIUS).min(width - 1) {
                        votes.add(classes[wy * width + wx], 1);
                    }
                }
                let (class, count) = votes.mode(units);
                if let Some(share) = (127 * count).checked_div(votes.voters) {
                    classes[row + x] = class;
                    confidence[row + x] = share as u8;
                    changed = true;
                }
            }
            x += 1;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raster(rows: &[&str]) -> (Vec<u8>, usize, usize) {
        let cell = |c: char| match c {
            '#' => INK,
            '.' => NO_UNIT,
            digit => digit.to_digit(10).unwrap() as u8,
        };
        (rows.iter().flat_map(|row| row.chars().map(cell)).collect(), rows[0].len(), rows.len())
    }

    #[test]
    fn a_thin_stroke_of_another_unit_and_black_contacts_are_filled_and_contacts_stay() {
        // Unit 1 left, unit 2 right with a black contact between; a 2-pixel line of unit 3
        // (a contour matched to a brown unit) crosses unit 1; a black code sits in unit 2.
        let mut rows = Vec::new();
        for y in 0..24 {
            let mut row = String::new();
            for x in 0..30 {
                row.push(match (x, y) {
                    (14..=15, _) => '#',
                    (_, 10..=11) if x < 14 => '3',
                    (20..=24, 4..=8) => '#',
                    (x, _) if x < 14 => '1',
                    _ => '2',
                });
            }
            rows.push(row);
        }
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let (mut classes, width, height) = raster(&rows);
        let mut confidence = vec![200; classes.len()];
        assert!(fill_strokes(&mut classes, &mut confidence, width, height, 3, &|| false));
        assert!(!classes.contains(&3), "the thin line of unit 3 is gone");
        assert!(!classes.contains(&INK), "the ink is filled");
        for y in 0..height {
            assert_eq!(classes[y * width + 12], 1, "row {y} left of the contact");
            assert_eq!(classes[y * width + 17], 2, "row {y} right of the contact");
        }
        assert_eq!(classes[6 * width + 22], 2, "the code is filled from its unit");
        assert!(confidence[6 * width + 22] < 128, "a filled pixel is less sure");
        assert_eq!(confidence[0], 200, "an unchanged pixel keeps its confidence");
    }

    #[test]
    fn ink_far_from_any_unit_is_no_unit_and_cancellation_stops() {
        let (mut classes, width, height) = raster(&["################################"; 40]);
        let mut confidence = vec![0; classes.len()];
        assert!(fill_strokes(&mut classes, &mut confidence, width, height, 1, &|| false));
        assert!(classes.iter().all(|&c| c == NO_UNIT));
        assert!(!fill_strokes(&mut classes, &mut confidence, width, height, 1, &|| true));
    }
}
