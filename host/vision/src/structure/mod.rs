//! The map's structure: its line and point symbols, each prompted by a symbol of the explanation
//! (its colour and sizes measured on its sample) or, without one, by its look
//! ([`LinePrompt::by_look`], [`points::PointPrompt::by_look`], measured on the map's own strokes).
//! Pixels of a prompt's colour (nearer to it than to any unit swatch or the paper) are marked
//! while the units are classified ([`StructureFinder`]); then colour by colour the point
//! detectors take their symbols ([`points`]), the rest of the colour's mask is thinned to
//! centrelines ([`skeleton`]) and its lines traced and typed ([`lines`]).
//!
//! Invariants: pure arithmetic on buffers this module owns (one byte a pixel of the main map for
//! the colour marks, one more while a colour is thinned); features leave in the scan's pixels; a
//! pixel's ink is one symbol's: a point symbol's is taken before any line is traced.

pub mod chains;
pub mod dips;
pub mod lines;
pub mod points;
pub mod section_letters;
pub mod sections;
pub mod skeleton;

use crate::colour::{delta_e, delta_e94, lab};
use crate::image::Rgb;
use lines::{FoundLine, LinePrompt};
use points::{DETECTORS, FoundPoint, PointMap, PointPrompt, hairline};
use skeleton::Branch;

/// The whole pixels of box `(x0, y0, x1, y1)` within a `width × height` scan, `None` when none are.
pub(crate) fn clamped((x0, y0, x1, y1): (f64, f64, f64, f64), (width, height): (u32, u32)) -> Option<(u32, u32, u32, u32)> {
    let clamp = |v: f64, most: u32| v.clamp(0.0, f64::from(most)) as u32;
    let region = (clamp(x0.floor(), width), clamp(y0.floor(), height), clamp(x1.ceil(), width), clamp(y1.ceil(), height));
    (region.2 > region.0 && region.3 > region.1).then_some(region)
}

/// A pixel within this ΔE of a line symbol's colour (and nearer to it than to any swatch or the
/// paper) may belong to one of its lines.
const LINE_DELTA_E: f64 = 30.0;
/// A pixel within this CIE94 ΔE of a colour (and nearer to it so than to any swatch or the paper)
/// belongs to its strokes when it touches one within [`LINE_DELTA_E`]: a stroke's blurred edge, or
/// a thin stroke JPEG smeared with its neighbour's hue.
const EDGE_DELTA_E: f64 = 30.0;
/// Edge pixels are kept at most this many steps from a stroke pixel (a smeared tick, not a
/// dark neighbour the flood could follow): a length of the scan's own, in pixels, as a JPEG
/// smears a stroke's hue over its blocks of 8 whatever the resolution.
const EDGE_REACH_PX: u32 = 12;
/// The bit a colour mark carries for a stroke's edge pixel.
const EDGE: u8 = 0x80;
/// The bit a mark carries for a dark pixel (CIELAB L* below [`DARK_LIGHTNESS`]), whatever its
/// colour: the gaps of a dotted row are paper, a broken stroke's are not. Colour indices + 1
/// stay below it.
const DARK: u8 = 0x40;
/// See [`DARK`]: a dot's blurred rim on paper reads lighter, a hairline contact between its
/// darkest pixels darker.
const DARK_LIGHTNESS: f64 = 50.0;
/// Symbols whose colours are closer than this are one colour: their lines are told apart by
/// width and decorations.
const SAME_COLOUR_DELTA_E: f64 = 12.0;
/// Samples darker than this (CIELAB L*) and greyer than [`BLACK_CHROMA`] are all black ink: a thin
/// stroke's sample reads lighter than a thick one's.
const BLACK_LIGHTNESS: f64 = 40.0;
/// See [`BLACK_LIGHTNESS`].
const BLACK_CHROMA: f64 = 12.0;
/// Bits kept per channel in the colour table.
const TABLE_BITS: u32 = 6;
/// The ink lines and attitudes are looked for in when the explanation has none of their symbols:
/// dark ink (every near-black sample is one colour).
const LOOK_INK: (u8, u8, u8) = (20, 20, 20);
/// Branches shorter than this (pixels) do not count towards the map's common stroke width.
const COMMON_MIN_PX: f64 = 20.0;
/// A feature found by its look alone keeps this share of its fit as its confidence.
const LOOK_CONFIDENCE: f64 = 0.7;

/// The lines and attitude symbols found on the main map, and the prompts as they were looked for
/// (one looked for by its look alone measured on the map).
#[derive(Debug, Clone, Default)]
pub struct Structure {
    /// Lines, each given to a line prompt.
    pub lines: Vec<FoundLine>,
    /// Attitude symbols, each given to a point prompt.
    pub points: Vec<FoundPoint>,
    /// The line prompts, in the finder's order, as looked for.
    pub line_prompts: Vec<LinePrompt>,
    /// The point prompts, in the finder's order, as looked for.
    pub point_prompts: Vec<PointPrompt>,
}

/// The line and point prompts drawn in one colour.
#[derive(Debug, Clone, Default)]
struct ColourGroup {
    lines: Vec<usize>,
    points: Vec<usize>,
}

/// Marks pixels of the prompts' colours while the main map is read, then finds their lines and
/// attitude symbols.
pub struct StructureFinder {
    prompts: Vec<LinePrompt>,
    points: Vec<PointPrompt>,
    /// Per colour, the prompts drawn in it.
    colours: Vec<ColourGroup>,
    /// Quantised colour → colour index + 1 (with [`EDGE`] for a stroke's edge), or 0; with
    /// [`DARK`] for a dark colour.
    table: Vec<u8>,
    width: u32,
    height: u32,
    origin: (u32, u32),
    marks: Vec<u8>,
    /// Quantised colour → its lightness as [`hairline::Lightness`] holds it; empty unless a point
    /// symbol is printed as a hairline.
    light_table: Vec<u8>,
    /// The main map's lightness ([`hairline::Lightness`]), marked with the colours; empty unless a
    /// point symbol is printed as a hairline.
    lightness: Vec<u8>,
}

impl StructureFinder {
    /// A finder for line `prompts` and attitude `points` over the `width × height` main map whose
    /// top-left pixel is `origin` in the scan; `swatches` (the units' colours) and `paper` compete
    /// with the prompts' colours, and so do the `unmeasured` colours of point symbols not looked
    /// for, each that is a colour of its own (none for one the same as a prompt's): its pixels
    /// are marked as its own, off every prompt's mask.
    pub fn new(
        prompts: Vec<LinePrompt>,
        points: Vec<PointPrompt>,
        unmeasured: &[(u8, u8, u8)],
        swatches: &[(u8, u8, u8)],
        paper: (u8, u8, u8),
        (width, height): (u32, u32),
        origin: (u32, u32),
    ) -> StructureFinder {
        let mut colours: Vec<(Vec<[f64; 3]>, ColourGroup)> = Vec::new();
        let black = |l: [f64; 3]| l[0] < BLACK_LIGHTNESS && l[1].hypot(l[2]) < BLACK_CHROMA;
        #[derive(PartialEq)]
        enum Drawn {
            Line,
            Point,
            Unmeasured,
        }
        let drawn = prompts.iter().map(|p| (p.colour, Drawn::Line)).chain(points.iter().map(|p| (p.colour, Drawn::Point)));
        for (index, (colour, kind)) in drawn.chain(unmeasured.iter().map(|&colour| (colour, Drawn::Unmeasured))).enumerate() {
            let here = lab(colour);
            let same = |other: &[f64; 3]| delta_e(*other, here) < SAME_COLOUR_DELTA_E || (black(*other) && black(here));
            let nearest = || (0..colours.len()).min_by(|&a, &b| delta_e(colours[a].0[0], here).total_cmp(&delta_e(colours[b].0[0], here)));
            let existing = colours.iter().position(|(labs, _)| same(&labs[0]));
            let full = colours.len() + 1 >= usize::from(DARK);
            // An unmeasured symbol's colour counts only as a colour of its own.
            if kind == Drawn::Unmeasured && (existing.is_some() || full) {
                continue;
            }
            let slot = match existing {
                Some(slot) => slot,
                // A mark holds at most [`DARK`] - 1 colours: a sheet with more shares the nearest.
                None if full => nearest().expect("colours are there"),
                None => {
                    colours.push((Vec::new(), ColourGroup::default()));
                    colours.len() - 1
                }
            };
            let (labs, group) = &mut colours[slot];
            labs.push(here);
            match kind {
                Drawn::Line => group.lines.push(index),
                Drawn::Point => group.points.push(index - prompts.len()),
                Drawn::Unmeasured => {}
            }
        }
        // A colour is looked for as its darkest sample shows it (a thin stroke's sample reads lighter).
        let line_labs: Vec<[f64; 3]> =
            colours.iter().map(|(labs, _)| *labs.iter().min_by(|a, b| a[0].total_cmp(&b[0])).expect("a group has a colour")).collect();
        let colours = colours.into_iter().map(|(_, group)| group).collect();
        let others: Vec<[f64; 3]> = swatches.iter().chain([&paper]).map(|&c| lab(c)).collect();
        let shift = 8 - TABLE_BITS;
        let centre = |v: usize| ((v << shift) | (1 << (shift - 1))) as u8;
        let key_rgb =
            |key: usize| (centre(key >> (2 * TABLE_BITS)), centre((key >> TABLE_BITS) & ((1 << TABLE_BITS) - 1)), centre(key & ((1 << TABLE_BITS) - 1)));
        let table = if line_labs.is_empty() {
            Vec::new()
        } else {
            (0..1_usize << (3 * TABLE_BITS))
                .map(|key| {
                    let here = lab(key_rgb(key));
                    let dark = if here[0] < DARK_LIGHTNESS { DARK } else { 0 };
                    let (best, distance) =
                        line_labs.iter().enumerate().map(|(i, l)| (i, delta_e(here, *l))).min_by(|a, b| a.1.total_cmp(&b.1)).expect("a colour");
                    let rival = others.iter().map(|o| delta_e(here, *o)).fold(f64::INFINITY, f64::min);
                    if distance <= LINE_DELTA_E && distance < rival {
                        return (best as u8 + 1) | dark;
                    }
                    let (best, distance) =
                        line_labs.iter().enumerate().map(|(i, l)| (i, delta_e94(here, *l))).min_by(|a, b| a.1.total_cmp(&b.1)).expect("a colour");
                    let rival = others.iter().map(|o| delta_e94(here, *o)).fold(f64::INFINITY, f64::min);
                    if distance <= EDGE_DELTA_E && distance < rival { (best as u8 + 1) | EDGE | dark } else { dark }
                })
                .collect()
        };
        let marks = if line_labs.is_empty() { Vec::new() } else { vec![0; width as usize * height as usize] };
        let hairlines = points.iter().any(|p| p.detector.is_some_and(|detector| detector.reads() == points::Reads::Lightness)) && !line_labs.is_empty();
        let light_table: Vec<u8> =
            if hairlines { (0..1_usize << (3 * TABLE_BITS)).map(|key| hairline::lightness_byte(key_rgb(key))).collect() } else { Vec::new() };
        let lightness = if hairlines { vec![0; width as usize * height as usize] } else { Vec::new() };
        StructureFinder { prompts, points, colours, table, width, height, origin, marks, light_table, lightness }
    }

    /// Marks the pixels of `strip` (the main map's rows from `first_row`, its full width) that
    /// have a prompt's colour.
    pub fn mark(&mut self, strip: &Rgb, first_row: u32) {
        if self.table.is_empty() {
            return;
        }
        let shift = 8 - TABLE_BITS;
        let start = first_row as usize * self.width as usize;
        for (k, pixel) in strip.pixels.chunks_exact(3).enumerate() {
            let key = ((pixel[0] as usize >> shift) << (2 * TABLE_BITS)) | ((pixel[1] as usize >> shift) << TABLE_BITS) | (pixel[2] as usize >> shift);
            if let Some(mark) = self.marks.get_mut(start + k) {
                *mark = self.table[key];
            }
            if let Some(light) = self.lightness.get_mut(start + k) {
                *light = self.light_table[key];
            }
        }
    }

    /// The lines and point symbols of every prompt, colour by colour; `cancelled` is asked
    /// between steps and every 64 lines. A colour's point symbols are found first, by each of
    /// [`DETECTORS`] in turn (its marks taken from its mask, its hairline attitudes from the map's
    /// lightness, its other attitude symbols from its skeleton), so their ink is never a piece of
    /// a line; its lines are traced on the rest of its skeleton. Prompts looked for by their look
    /// alone are measured on their colour's skeleton first.
    pub fn found(mut self, cancelled: &dyn Fn() -> bool) -> Option<Structure> {
        let (width, height) = (self.width as usize, self.height as usize);
        let mut found = Structure::default();
        let mut mask = vec![0_u8; self.marks.len()];
        let origin = (f64::from(self.origin.0), f64::from(self.origin.1));
        let colours = std::mem::take(&mut self.colours);
        for (colour, group) in colours.iter().enumerate() {
            if cancelled() {
                return None;
            }
            if group.lines.is_empty() && group.points.is_empty() {
                continue; // an unmeasured symbol's colour: its ink is kept off the others' masks
            }
            self.stroke_mask(colour as u8 + 1, &mut mask);
            let dark = |at: (f64, f64)| index_at(at, width, height).is_some_and(|i| self.marks[i] & DARK != 0);
            let lightness = (!self.lightness.is_empty()).then(|| hairline::Lightness { pixels: &self.lightness, width, height });
            let mut map = PointMap::new(&mut mask, (width, height), origin, &dark, lightness);
            if !group.points.is_empty() {
                for detector in DETECTORS {
                    found.points.extend(detector.find(&mut map, &mut self.points, &group.points));
                }
            }
            if group.lines.is_empty() {
                continue;
            }
            let skeleton = map.into_skeleton();
            if cancelled() {
                return None;
            }
            let on = lines::LineMap { mask: &mask, size: (width, height), origin, inked: &dark };
            found.lines.extend(lines::find(&mut self.prompts, &group.lines, skeleton, &on, cancelled)?);
        }
        (found.line_prompts, found.point_prompts) = (self.prompts, self.points);
        Some(found)
    }

    /// Into `mask`, the pixels of colour `label`'s strokes: those marked with it, and its edge
    /// pixels joined to one of them ([`grown`]).
    fn stroke_mask(&self, label: u8, mask: &mut [u8]) {
        for (m, &mark) in mask.iter_mut().zip(&self.marks) {
            let mark = mark & !DARK;
            *m = if mark == label { 2 } else { u8::from(mark == label | EDGE) };
        }
        grown(mask, self.width as usize);
    }
}

/// The index of the pixel holding `(x, y)` in a `width × height` buffer, if it lies inside.
fn index_at((x, y): (f64, f64), width: usize, height: usize) -> Option<usize> {
    (x >= 0.0 && y >= 0.0 && (x as usize) < width && (y as usize) < height).then(|| y as usize * width + x as usize)
}

/// A skeleton's common stroke width: the median of its branches' widths, each counted by its
/// length (branches shorter than [`COMMON_MIN_PX`] left out); at least a pixel.
fn common_width(branches: &[Branch]) -> f64 {
    let mut widths: Vec<(f64, f64)> = branches.iter().map(|b| (b.piece.width(), b.piece.length())).filter(|(_, length)| *length >= COMMON_MIN_PX).collect();
    widths.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = widths.iter().map(|(_, length)| length).sum::<f64>() / 2.0;
    let mut run = 0.0;
    for (width, length) in widths {
        run += length;
        if run >= half {
            return width.max(1.0);
        }
    }
    1.0
}

/// Pixels around a sample it is measured in, on each side.
const SAMPLE_MARGIN: f64 = 4.0;

/// The pixels of a sample (`labs`, `width` a row) drawn in the colour `ink` on `paper`: those
/// within [`LINE_DELTA_E`] of it and nearer to it than to the paper, and those within
/// [`EDGE_DELTA_E`] (CIE94) joined to one (as the map's strokes are marked).
fn stroke_pixels(labs: &[[f64; 3]], ink: [f64; 3], paper: [f64; 3], width: usize) -> Vec<u8> {
    let mut classes: Vec<u8> = labs
        .iter()
        .map(|l| {
            if delta_e(*l, ink) <= LINE_DELTA_E && delta_e(*l, ink) < delta_e(*l, paper) {
                2
            } else {
                u8::from(delta_e94(*l, ink) <= EDGE_DELTA_E && delta_e94(*l, ink) < delta_e94(*l, paper))
            }
        })
        .collect();
    grown(&mut classes, width);
    classes
}

/// A stroke mask from `classes` (`width` a row; 2: a stroke's pixel, 1: an edge pixel, 0: not
/// its colour), in place: 1 for the stroke pixels and the edge pixels joined to one through
/// edge pixels (8-connected) within [`EDGE_REACH_PX`] steps, 0 for the rest.
fn grown(classes: &mut [u8], width: usize) {
    let mut ring: Vec<usize> = (0..classes.len()).filter(|&i| classes[i] == 2).collect();
    for &i in &ring {
        classes[i] = 3;
    }
    for _ in 0..EDGE_REACH_PX {
        let mut next = Vec::new();
        for i in ring {
            let (x, y) = ((i % width) as isize, (i / width) as isize);
            for (dx, dy) in skeleton::AROUND {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx as usize >= width {
                    continue;
                }
                let n = ny as usize * width + nx as usize;
                if classes.get(n) == Some(&1) {
                    classes[n] = 3;
                    next.push(n);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        ring = next;
    }
    for class in classes.iter_mut() {
        *class = u8::from(*class == 3);
    }
}

#[cfg(test)]
mod tests {
    use super::lines::{Away, HEAVY, Marks, ta1_line_type};
    use super::*;
    use crate::layout::symbols::Pattern;

    fn prompt(symbol: &str, colour: (u8, u8, u8), width_px: f64, pattern: Pattern, period_px: Option<f64>, marks: Marks) -> LinePrompt {
        LinePrompt {
            entry: Some(0),
            symbol: symbol.to_owned(),
            words: symbol.to_owned(),
            ta1_type: ta1_line_type(symbol),
            colour,
            width_px,
            pattern,
            period_px,
            marks,
        }
    }

    /// A box `(x0, y0, x1, y1)` painted one colour.
    type Paint = ((u32, u32, u32, u32), (u8, u8, u8));

    fn strip(width: u32, height: u32, paint: &[Paint]) -> Rgb {
        let mut pixels = vec![250_u8; (width * height * 3) as usize];
        for &((x0, y0, x1, y1), (r, g, b)) in paint {
            for y in y0..y1 {
                for x in x0..x1 {
                    let at = ((y * width + x) * 3) as usize;
                    pixels[at..at + 3].copy_from_slice(&[r, g, b]);
                }
            }
        }
        Rgb { width, height, pixels }
    }

    #[test]
    fn one_pixel_dots_on_paper_are_a_dotted_fault_and_a_dark_stroke_s_darkest_pixels_are_not() {
        let black = (20, 20, 20);
        let purple = (70, 45, 95);
        let prompts = vec![prompt("fault", black, 1.0, Pattern::Dotted, Some(3.0), Marks::None)];
        let (w, h) = (400, 300);
        // Black one-pixel dots every 3 px across the paper, and the same dots along a dark purple
        // hairline (a unit's colour, darker than L* 50) whose darkest pixels they are.
        let mut paint = vec![((20, 200, 380, 201), purple)];
        for k in 0..120 {
            paint.push(((20 + 3 * k, 100, 21 + 3 * k, 101), black));
            paint.push(((20 + 3 * k, 200, 21 + 3 * k, 201), black));
        }
        let image = strip(w, h, &paint);
        let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110), purple], (250, 250, 250), (w, h), (0, 0));
        finder.mark(&image, 0);
        let lines = finder.found(&|| false).unwrap().lines;
        assert_eq!(lines.len(), 1, "{lines:?}");
        let (pattern, points) = &lines[0].parts[0];
        assert_eq!((lines[0].parts.len(), *pattern), (1, Pattern::Dotted), "{lines:?}");
        assert!(points.iter().all(|p| (p.1 - 100.5).abs() <= 1.0), "the row on paper: {points:?}");
        let reach = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max) - points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        assert!(reach > 350.0, "the whole row: {reach}");
    }

    #[test]
    fn dots_printed_as_dashes_across_a_wide_line_are_its_dotted_part() {
        let black = (20, 20, 20);
        let prompts = vec![prompt("fault", black, 8.0, Pattern::Dotted, Some(24.0), Marks::None)];
        let (w, h) = (400, 200);
        // A line 8 px wide dotted every 24 px, each dot printed 4 px along it and, blurred, 10 px
        // across it.
        let paint: Vec<Paint> = (0..14).map(|k| ((30 + 24 * k, 95, 34 + 24 * k, 105), black)).collect();
        let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
        finder.mark(&strip(w, h, &paint), 0);
        let lines = finder.found(&|| false).unwrap().lines;
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!((lines[0].parts.len(), lines[0].parts[0].0), (1, Pattern::Dotted), "{lines:?}");
    }

    #[test]
    fn a_sample_of_one_pixel_dots_is_measured_dotted_with_their_spacing() {
        let black = (20, 20, 20);
        let paint: Vec<Paint> = (0..30).map(|k| ((10 + 3 * k, 6, 11 + 3 * k, 7), black)).collect();
        let measured = prompt("fault", black, 1.0, Pattern::Solid, None, Marks::None).calibrated(&strip(110, 14, &paint));
        assert_eq!(measured.pattern, Pattern::Dotted, "{measured:?}");
        assert!(measured.period_px.is_some_and(|period| (period - 3.0).abs() < 0.5), "{measured:?}");
    }

    #[test]
    fn a_sheet_of_more_colours_than_a_mark_holds_shares_the_nearest() {
        // 64 colours on a 4 × 4 × 4 grid (black and the near-blacks one) and 27 between them.
        let levels = |values: &[u8]| -> Vec<(u8, u8, u8)> {
            values.iter().flat_map(|&r| values.iter().flat_map(move |&g| values.iter().map(move |&b| (r, g, b)))).collect()
        };
        let colours = [levels(&[0, 85, 170, 255]), levels(&[42, 127, 212])].concat();
        let prompts: Vec<LinePrompt> = colours.iter().map(|&c| prompt("fault", c, 1.0, Pattern::Solid, None, Marks::None)).collect();
        let finder = StructureFinder::new(prompts, Vec::new(), &[], &[], (250, 250, 250), (40, 30), (0, 0));
        assert_eq!(finder.colours.len(), usize::from(DARK) - 1);
        let mut grouped: Vec<usize> = finder.colours.iter().flat_map(|group| group.lines.iter().copied()).collect();
        grouped.sort_unstable();
        assert_eq!(grouped, (0..colours.len()).collect::<Vec<_>>(), "every prompt in one group");
    }

    #[test]
    fn an_unmeasured_point_symbols_ink_is_kept_off_a_line_of_another_colour_but_not_off_its_own() {
        let (w, h) = (400, 100);
        // A dark grey line 3 px wide: nearer the black fault's colour than the paper's.
        let image = strip(w, h, &[((20, 50, 380, 53), (75, 75, 75))]);
        let lines = |unmeasured: &[(u8, u8, u8)]| {
            let prompts = vec![prompt("fault", (20, 20, 20), 3.0, Pattern::Solid, None, Marks::None)];
            let mut finder = StructureFinder::new(prompts, Vec::new(), unmeasured, &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
            finder.mark(&image, 0);
            finder.found(&|| false).unwrap().lines.len()
        };
        assert_eq!(lines(&[]), 1, "the fault's");
        assert_eq!(lines(&[(110, 110, 110)]), 0, "nearer a grey symbol's ink than the fault's");
        assert_eq!(lines(&[(40, 40, 40)]), 1, "a black symbol's ink is the fault's colour too");
    }

    #[test]
    fn lines_go_to_the_symbol_of_their_colour_width_and_marks_and_contacts_are_dropped() {
        let black = (20, 20, 20);
        let red = (200, 30, 30);
        let prompts = vec![
            prompt("contact", black, 2.0, Pattern::Solid, None, Marks::None),
            prompt("fault", red, 4.0, Pattern::Dashed, Some(30.0), Marks::None),
            prompt("thrust fault", black, 5.0, Pattern::Solid, None, Marks::Teeth),
        ];
        let (w, h) = (400, 300);
        let mut paint = vec![
            // A black contact 2 px wide, a red dashed fault, a black thrust with teeth below it.
            ((20, 40, 380, 42), black),
            ((20, 150, 380, 154), (230, 120, 110)),
        ];
        for k in 0..12 {
            paint.push(((20 + 30 * k, 100, 40 + 30 * k, 104), red));
        }
        paint.push(((20, 220, 380, 225), black));
        for k in 0..8 {
            paint.push(((40 + 40 * k, 225, 45 + 40 * k, 235), black));
        }
        let image = strip(w, h, &paint);
        let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (1000, 2000));
        finder.mark(&image, 0);
        let mut lines = finder.found(&|| false).unwrap().lines;
        lines.sort_by_key(|line| line.prompt);
        assert_eq!(lines.iter().map(|l| l.prompt).collect::<Vec<_>>(), [1, 2], "{lines:?}");
        let fault = &lines[0];
        assert_eq!(fault.parts.len(), 1, "{fault:?}");
        assert_eq!(fault.parts[0].0, Pattern::Dashed);
        assert!(fault.parts[0].1.iter().all(|p| p.0 >= 1020.0 && p.0 <= 1380.0 && (p.1 - 2102.0).abs() <= 1.5), "in the scan's pixels: {fault:?}");
        let reach = fault.parts[0].1.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max) - fault.parts[0].1.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        assert!(reach > 330.0, "the dashes are one line: {reach}");
        let thrust = &lines[1];
        assert_eq!(thrust.parts[0].0, Pattern::Solid);
        let runs_right = thrust.parts[0].1.first().unwrap().0 < thrust.parts[0].1.last().unwrap().0;
        assert_eq!(thrust.polarity, if runs_right { 1 } else { -1 }, "teeth below: right of a line running east: {thrust:?}");
    }

    #[test]
    fn a_one_pixel_line_is_a_two_pixel_symbols_with_stray_marks_beside_it_but_not_a_four_pixel_ones() {
        let black = (20, 20, 20);
        let (w, h) = (400, 300);
        // A black hairline with a short bar on either side of it at one place (letters printed
        // beside a fault), under a fault symbol whose sample measured 2 px (then 4 px) wide.
        let paint = [((20, 100, 380, 101), black), ((200, 90, 201, 97), black), ((200, 104, 201, 111), black)];
        let image = strip(w, h, &paint);
        let found = |width_px: f64| {
            let prompts = vec![prompt("fault", black, width_px, Pattern::Solid, None, Marks::None)];
            let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
            finder.mark(&image, 0);
            finder.found(&|| false).unwrap().lines
        };
        let lines = found(2.0);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].parts.iter().all(|(_, points)| points.iter().all(|p| (p.1 - 100.5).abs() <= 1.0)), "{lines:?}");
        assert!(found(4.0).is_empty(), "a line a quarter of its symbol's width is not one of its lines");
    }

    #[test]
    fn a_ball_and_bar_faults_line_with_marks_beside_it_on_both_sides_is_still_one_of_its_lines_but_not_with_teeth() {
        let black = (20, 20, 20);
        let (w, h) = (400, 300);
        // A black hairline with a short bar on either side of it at one place (its name printed
        // beside it), under a fault symbol drawn with a ball and bar (once along a fault).
        let paint = [((20, 100, 380, 101), black), ((200, 93, 201, 98), black), ((200, 103, 201, 108), black)];
        let prompts = vec![prompt("fault", black, 1.0, Pattern::Solid, None, Marks::Ball)];
        let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
        finder.mark(&strip(w, h, &paint), 0);
        let lines = finder.found(&|| false).unwrap().lines;
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].confidence >= 0.4, "{lines:?}");
        // Teeth still make a thrust of a line as wide as the ball-and-bar fault, narrower than the thrust.
        let mut paint = vec![((20, 220, 380, 223), black)];
        paint.extend((0..8).map(|k| ((40 + 40 * k, 223, 45 + 40 * k, 233), black)));
        let prompts =
            vec![prompt("fault", black, 3.0, Pattern::Solid, None, Marks::Ball), prompt("thrust fault", black, 5.0, Pattern::Solid, None, Marks::Teeth)];
        let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
        finder.mark(&strip(w, h, &paint), 0);
        let lines = finder.found(&|| false).unwrap().lines;
        assert_eq!(lines.iter().map(|line| line.prompt).collect::<Vec<_>>(), [1], "{lines:?}");
    }

    #[test]
    fn without_an_explanation_a_dark_line_far_wider_than_the_common_stroke_is_a_fault_and_its_teeth_a_thrust() {
        let black = (20, 20, 20);
        let (w, h) = (400, 300);
        // Contacts 2 px wide (most of the dark ink), a plain 4-px line and a 4-px line with teeth.
        let mut paint = vec![((20, 30, 380, 32), black), ((20, 60, 380, 62), black), ((30, 20, 32, 290), black), ((20, 120, 380, 124), black)];
        paint.push(((60, 220, 380, 224), black));
        for k in 0..7 {
            paint.push(((80 + 40 * k, 224, 85 + 40 * k, 234), black));
        }
        let image = strip(w, h, &paint);
        let mut finder = StructureFinder::new(LinePrompt::by_look(), Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
        finder.mark(&image, 0);
        let found = finder.found(&|| false).unwrap();
        let symbols: Vec<&str> = found.lines.iter().map(|line| found.line_prompts[line.prompt].symbol.as_str()).collect();
        assert_eq!(symbols.len(), 2, "contacts are dropped: {symbols:?}");
        assert!(symbols.contains(&"fault") && symbols.contains(&"thrust fault"), "{symbols:?}");
        let contact = &found.line_prompts[0];
        assert!((1.5..=3.0).contains(&contact.width_px), "the common stroke: {contact:?}");
        assert!((found.line_prompts[1].width_px - HEAVY * contact.width_px).abs() < 1e-9);
        assert!(found.lines.iter().all(|line| line.confidence <= LOOK_CONFIDENCE), "{:?}", found.lines);
    }

    #[test]
    fn marks_standing_apart_from_a_line_are_not_its_teeth() {
        let black = (20, 20, 20);
        let prompts =
            vec![prompt("fault", black, 5.0, Pattern::Solid, None, Marks::None), prompt("thrust fault", black, 5.0, Pattern::Solid, None, Marks::Teeth)];
        let (w, h) = (400, 200);
        // Three 5-px lines with short bars below them every 40 px: drawn on the top line (teeth),
        // three pixels clear of the middle one as Ts (letters with junctions of their own) and of
        // the bottom one as plain bars (the letters of a name printed beside it).
        let mut paint = vec![((20, 40, 380, 45), black), ((20, 90, 380, 95), black), ((20, 140, 380, 145), black)];
        for k in 0..8 {
            paint.push(((40 + 40 * k, 45, 45 + 40 * k, 55), black));
            paint.push(((34 + 40 * k, 98, 51 + 40 * k, 101), black));
            paint.push(((40 + 40 * k, 101, 45 + 40 * k, 112), black));
            paint.push(((40 + 40 * k, 148, 45 + 40 * k, 158), black));
        }
        let image = strip(w, h, &paint);
        let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
        finder.mark(&image, 0);
        let found = finder.found(&|| false).unwrap();
        let mut typed: Vec<(f64, &str)> = found.lines.iter().map(|line| (line.parts[0].1[0].1, found.line_prompts[line.prompt].symbol.as_str())).collect();
        typed.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(typed.iter().map(|t| t.1).collect::<Vec<_>>(), ["thrust fault", "fault", "fault"], "{:?}", found.lines);
    }

    #[test]
    fn fold_arrows_tell_an_anticline_from_a_syncline_at_any_size() {
        let black = (20, 20, 20);
        for scale in [1_u32, 4] {
            let prompts = vec![
                prompt("anticline", black, f64::from(5 * scale), Pattern::Solid, None, Marks::Arrows(Some(Away(true)))),
                prompt("syncline", black, f64::from(5 * scale), Pattern::Solid, None, Marks::Arrows(Some(Away(false)))),
            ];
            let (w, h) = (400 * scale, 200 * scale);
            // Two 5-px lines (at scale 1), each with a pair of arrows 12 wide and 14 long at its
            // middle, clear of it: the upper pointing away from its line, the lower towards it.
            let mut paint = Vec::new();
            for (centre, away) in [(50 * scale, true), (150 * scale, false)] {
                let half = 5 * scale / 2;
                paint.push(((20 * scale, centre - half, 380 * scale, centre - half + 5 * scale), black));
                let (near, far) = (half + 3 * scale, half + 17 * scale);
                for out in near..far {
                    // The arrow's half width at `out`: widest at its base, none at its point.
                    let from_base = if away { out - near } else { far - 1 - out };
                    let spread = 6 * scale * (far - near - from_base) / (far - near);
                    let x = 200 * scale;
                    paint.push(((x - spread, centre + out, x + spread + 1, centre + out + 1), black));
                    paint.push(((x - spread, centre - out, x + spread + 1, centre - out + 1), black));
                }
            }
            let image = strip(w, h, &paint);
            let mut finder = StructureFinder::new(prompts, Vec::new(), &[], &[(230, 120, 110)], (250, 250, 250), (w, h), (0, 0));
            finder.mark(&image, 0);
            let found = finder.found(&|| false).unwrap();
            let mut typed: Vec<(f64, &str)> = found.lines.iter().map(|line| (line.parts[0].1[0].1, found.line_prompts[line.prompt].symbol.as_str())).collect();
            typed.sort_by(|a, b| a.0.total_cmp(&b.0));
            let symbols: Vec<&str> = typed.iter().map(|t| t.1).collect();
            assert_eq!(symbols, ["anticline", "syncline"], "at {scale}×: {:?}", found.lines);
        }
    }

    #[test]
    fn symbols_name_their_ta1_types() {
        assert_eq!(ta1_line_type("thrust fault"), Some("thrust fault"));
        assert_eq!(ta1_line_type("monocline"), Some("fold"));
        assert_eq!(ta1_line_type("contact"), None);
    }
}
