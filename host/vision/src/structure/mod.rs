//! The map's structure as lines: each line symbol of the explanation (its colour, width, pattern
//! and decorations, measured on its sample) is the prompt its lines on the main map are found
//! with. Pixels of a symbol's colour (nearer to it than to any unit swatch or the paper) are
//! marked while the units are classified; each colour's mask is thinned to centrelines
//! ([`skeleton`]), the pieces joined across junctions and dash gaps ([`chains`]), and each line
//! given to the symbol of its colour whose width and decorations it shares; lines given to a
//! contact are dropped (contacts are the polygons' edges). Without an explanation, dark lines and
//! attitudes are looked for by their look ([`LinePrompt::by_look`], [`points::PointPrompt::by_look`]),
//! measured on the map's own strokes.
//!
//! Invariants: pure arithmetic on buffers this module owns (one byte a pixel of the main map for
//! the colour marks, one more while a colour is thinned); lines leave in the scan's pixels;
//! a line belongs to one symbol, and its parts keep the pattern seen along them.

pub mod chains;
pub mod dips;
pub mod points;
pub mod section_letters;
pub mod sections;
pub mod skeleton;

use crate::colour::{delta_e, delta_e94, lab};
use crate::image::Rgb;
use crate::layout::symbols::{Pattern, SymbolEntry};
use chains::{Chain, Joining};
use geomap_model::page::PixelBox;
use geomap_model::symbols::{Family, LineMarks, Symbol, catalog};
use points::{DETECTORS, FoundPoint, PointMap, PointPrompt, hairline};
use skeleton::{Branch, Piece, Spur};

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
/// dark neighbour the flood could follow).
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
/// The largest turn, in degrees, between two pieces joined into one line.
const MAX_TURN: f64 = 35.0;
/// Marks beside a line within this many stroke widths of it are its decorations.
const DECORATION_REACH: f64 = 3.0;
/// A mark within 30° of a line's direction past its end is the line running on (an overshoot
/// across a contact), not a mark beside it: the cosine of that angle.
const PAST_END_COS: f64 = 0.866;
/// The ink lines and attitudes are looked for in when the explanation has none of their symbols:
/// dark ink (every near-black sample is one colour).
const LOOK_INK: (u8, u8, u8) = (20, 20, 20);
/// Without an explanation, a dark line whose stroke is this many times the map's common dark
/// stroke (its contacts') is a fault.
const HEAVY: f64 = 1.8;
/// A dot of a dotted line is at least this share of the colour's widest line stroke wide (a
/// speck of a thin line's broken ink is not one).
const DOT_WIDTH: f64 = 0.5;
/// Branches shorter than this (pixels) do not count towards the map's common stroke width.
const COMMON_MIN_PX: f64 = 20.0;
/// A feature found by its look alone keeps this share of its fit as its confidence.
const LOOK_CONFIDENCE: f64 = 0.7;
/// A thin stroke's width is known to about a pixel (a skeleton measures one stroke 1 px wide here,
/// 2 px there, and its sample either way): a line's width is compared with its symbol's with this
/// many pixels added to each.
const WIDTH_SLACK_PX: f64 = 1.0;
/// While lines are typed, whether to stop is asked every this many lines.
const CANCEL_EVERY: usize = 64;

/// The TA1 line type (`enum_line_type`) a symbol's name gives its lines; `None` for a contact,
/// which is a polygon edge and never a line feature.
pub fn ta1_line_type(symbol: &str) -> Option<&'static str> {
    Some(match symbol {
        "contact" => return None,
        "fault" | "detachment fault" => "fault",
        "thrust fault" => "thrust fault",
        "normal fault" => "normal fault",
        "reverse fault" => "reverse fault",
        "strike-slip fault" => "strike-slip fault",
        "anticline" => "anticline",
        "syncline" => "syncline",
        "monocline" | "fold axis" => "fold",
        "dike" => "dike",
        "lineament" => "lineament",
        "landslide scarp" => "scarp",
        _ => "other",
    })
}

/// Whether arrows point away from their line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Away(pub bool);

/// What is drawn beside a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marks {
    /// Nothing.
    None,
    /// Three or more marks along one side (a thrust's teeth, a normal fault's hachures).
    Teeth,
    /// Marks on both sides at one place (a fold's arrows): pointing away from the line (an
    /// anticline), towards it (a syncline), or either.
    Arrows(Option<Away>),
    /// One filled mark on one side (a normal fault's ball and bar).
    Ball,
}

impl Marks {
    /// The marks `symbol` means.
    fn of_symbol(marks: LineMarks) -> Marks {
        match marks {
            LineMarks::Teeth => Marks::Teeth,
            LineMarks::Ball => Marks::Ball,
            LineMarks::ArrowsOut => Marks::Arrows(Some(Away(true))),
            LineMarks::ArrowsIn => Marks::Arrows(Some(Away(false))),
            LineMarks::Arrows => Marks::Arrows(None),
        }
    }

    /// The marks a symbol's name says it has, whatever its sample shows (the catalog's, unless
    /// publishers draw them several ways): a thrust's teeth, an anticline's arrows pointing away
    /// from its line, a syncline's pointing towards it, a monocline's or fold axis's arrows.
    fn named(symbol: &str) -> Option<Marks> {
        catalog().named(symbol).and_then(Symbol::named_marks).map(Marks::of_symbol)
    }

    /// The decorations an explanation entry's name or, failing that, its sample as the layout read it shows.
    fn of_entry(entry: &SymbolEntry) -> Marks {
        let kinds: Vec<&str> = entry.line.iter().flat_map(|style| style.decorations.iter().map(|d| d.kind.as_str())).collect();
        if let Some(named) = Marks::named(&entry.symbol) {
            named
        } else if kinds.contains(&"teeth") {
            Marks::Teeth
        } else if kinds.contains(&"arrows") {
            Marks::Arrows(None)
        } else if kinds.contains(&"ball_and_bar") {
            Marks::Ball
        } else {
            Marks::None
        }
    }

    /// How well marks seen on a line fit a symbol drawn with `self`, 0–1: 1 when they are its own;
    /// a stray mark beside a plain line (a letter, a symbol) counts little against it, and so does
    /// a plain line where its symbol has a ball and bar (drawn once along a fault, not all along),
    /// or marks on both sides of one (its name printed beside it: a little more, so a plain symbol
    /// as wide keeps it); a plain line where its symbol has teeth or arrows counts much, and teeth
    /// where it has a ball and bar (the width alone never makes a thrust).
    fn fit(self, seen: Marks) -> f64 {
        match (self, seen) {
            (Marks::Arrows(None), Marks::Arrows(_)) | (Marks::Arrows(_), Marks::Arrows(None)) => 1.0,
            (expected, seen) if expected == seen => 1.0,
            (Marks::None, Marks::Ball) | (Marks::Ball, Marks::None) => 0.8,
            (Marks::None, _) => 0.5,
            (Marks::Ball, Marks::Arrows(_)) => 0.45,
            // Its teeth or arrows are what tells the symbol from a plain line of its colour.
            _ => 0.15,
        }
    }
}

/// A line symbol of the explanation, or one looked for by its look alone, as its lines are looked for.
#[derive(Debug, Clone)]
pub struct LinePrompt {
    /// Its index among the layout's symbol entries; `None` for a symbol looked for by its look
    /// alone ([`LinePrompt::by_look`]).
    pub entry: Option<usize>,
    /// Its name as the entry begins ("thrust fault").
    pub symbol: String,
    /// The entry's words.
    pub words: String,
    /// Its TA1 line type; `None` for a contact.
    pub ta1_type: Option<&'static str>,
    /// The colour its sample is drawn in.
    pub colour: (u8, u8, u8),
    /// The stroke's width in pixels.
    pub width_px: f64,
    /// The sample's pattern.
    pub pattern: Pattern,
    /// A dash and its gap, in pixels, when broken.
    pub period_px: Option<f64>,
    /// What its sample shows beside the stroke.
    pub marks: Marks,
}

impl LinePrompt {
    /// The prompts of every line entry with a measured sample (`entries` are the layout's symbol
    /// entries, in order).
    pub fn of_entries(entries: &[SymbolEntry]) -> Vec<LinePrompt> {
        entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry.kind == Family::Line)
            .filter_map(|(index, entry)| {
                let style = entry.line.as_ref()?;
                let colour = geomap_model::parse_hex(&style.colour_hex)?;
                Some(LinePrompt {
                    entry: Some(index),
                    symbol: entry.symbol.clone(),
                    words: entry.text.clone(),
                    ta1_type: ta1_line_type(&entry.symbol),
                    colour,
                    width_px: style.width_px.max(1.0),
                    pattern: style.pattern,
                    period_px: style.period_px,
                    marks: Marks::of_entry(entry),
                })
            })
            .collect()
    }

    /// The line symbols looked for when the explanation has none: dark lines, the map's common
    /// dark stroke as its contacts and a stroke 1.8 times as wide as a fault, its teeth
    /// making it a thrust, a ball a normal fault, and arrows across it a fold (pointing away: an
    /// anticline; towards: a syncline): the catalog's line symbols with a look, in its order.
    /// Their widths are measured on the map as it is traced.
    pub fn by_look() -> Vec<LinePrompt> {
        catalog()
            .looks(Family::Line)
            .map(|symbol| LinePrompt {
                entry: None,
                symbol: symbol.name.clone(),
                words: symbol.look.clone().unwrap_or_default(),
                ta1_type: symbol.ta1.as_deref(),
                colour: LOOK_INK,
                width_px: 1.0,
                pattern: Pattern::Solid,
                period_px: None,
                marks: symbol.marks.map_or(Marks::None, Marks::of_symbol),
            })
            .collect()
    }
}

/// A line found on the main map.
#[derive(Debug, Clone)]
pub struct FoundLine {
    /// The prompt (index into the finder's prompts) it was given to.
    pub prompt: usize,
    /// Its parts in order, each with the pattern seen along it, in the scan's pixels; each part
    /// begins where the one before ended.
    pub parts: Vec<(Pattern, Vec<(f64, f64)>)>,
    /// 1: its marks are on the right of the line as its points run, -1 on the left (a thrust's
    /// teeth, the upper plate); 0: none, or on both sides.
    pub polarity: i8,
    /// 0–1: how well its width and marks agree with its symbol's.
    pub confidence: f64,
}

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
            let lightness = hairline::Lightness { pixels: &self.lightness, width, height };
            let mut map = PointMap::new(&mut mask, (width, height), origin, &dark, lightness);
            if !group.points.is_empty() {
                for detector in DETECTORS {
                    found.points.extend(detector.find(&mut map, &mut self.points, &group.points));
                }
            }
            if group.lines.is_empty() {
                continue;
            }
            let (branches, used) = map.into_skeleton();
            if cancelled() {
                return None;
            }
            measured_by_look(&mut self.prompts, &group.lines, &branches);
            let branches: Vec<Branch> = branches.into_iter().zip(used).filter(|(_, used)| !used).map(|(branch, _)| branch).collect();
            let widest = group.lines.iter().map(|&p| self.prompts[p].width_px).fold(1.0, f64::max);
            let gap = group
                .lines
                .iter()
                .map(|&p| {
                    let prompt = &self.prompts[p];
                    prompt.period_px.map_or(4.0 * prompt.width_px + 8.0, |period| 0.9 * period + 2.0 * prompt.width_px)
                })
                .fold(0.0, f64::max);
            let inked = |at: (f64, f64)| index_at(at, width, height).is_some_and(|i| self.marks[i] & DARK != 0);
            let (lines, marks) = traced(branches, widest, gap, &inked);
            for (index, chain) in lines.iter().enumerate() {
                if index % CANCEL_EVERY == 0 && cancelled() {
                    return None;
                }
                if let Some(line) = self.given(chain, &group.lines, &marks, &mask) {
                    found.lines.push(line);
                }
            }
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

    /// The line prompt of `lines` (one colour's) that `chain` (in `mask`, that colour's pixels) is drawn as, and the
    /// line it makes; `None` for a chain too short to be a line, too unlike every prompt, or a contact.
    fn given(&self, chain: &Chain, lines: &[usize], marks: &MarkIndex, mask: &[u8]) -> Option<FoundLine> {
        let width = chain.width();
        let length = chain.length();
        let points = chain.points();
        let (w, h) = (self.width as usize, self.height as usize);
        let ink = |x: f64, y: f64| index_at((x, y), w, h).is_some_and(|i| mask[i] != 0);
        let (seen, side) = marks_beside(&points, marks, width, &ink);
        let (prompt, confidence) = lines
            .iter()
            .map(|&p| {
                let prompt = &self.prompts[p];
                let width_fit = (-2.0 * ((width + WIDTH_SLACK_PX) / (prompt.width_px + WIDTH_SLACK_PX)).ln().abs()).exp();
                let marks_fit = prompt.marks.fit(seen);
                (p, width_fit * marks_fit)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        let chosen = &self.prompts[prompt];
        let shortest = (12.0 * chosen.width_px).max(2.5 * chosen.period_px.unwrap_or(0.0)).max(30.0);
        if chosen.ta1_type.is_none() || length < shortest || confidence < 0.2 {
            return None;
        }
        let confidence = if chosen.entry.is_none() { LOOK_CONFIDENCE * confidence } else { confidence };
        let dash = chosen.period_px.map_or(8.0 * chosen.width_px, |period| period) + 2.0 * chosen.width_px;
        let (left, top) = (f64::from(self.origin.0), f64::from(self.origin.1));
        let parts = chain
            .parts(dash, 2.5 * chosen.width_px, 0.5)
            .into_iter()
            .map(|(pattern, points)| (pattern, points.into_iter().map(|(x, y)| (x + left, y + top)).collect()))
            .collect();
        let polarity = if matches!(seen, Marks::Teeth | Marks::Ball) { side } else { 0 };
        Some(FoundLine { prompt, parts, polarity, confidence: (confidence * 1000.0).round() / 1000.0 })
    }
}

/// Measures the line prompts of `group` (indices into `prompts`, drawn in one colour) looked for
/// by their look alone on their colour's skeleton (`branches`): a contact's width is the colour's
/// common stroke, every other line's [`HEAVY`] times it.
fn measured_by_look(prompts: &mut [LinePrompt], group: &[usize], branches: &[Branch]) {
    let by_look: Vec<usize> = group.iter().copied().filter(|&p| prompts[p].entry.is_none()).collect();
    if by_look.is_empty() {
        return;
    }
    let common = common_width(branches);
    for p in by_look {
        let prompt = &mut prompts[p];
        prompt.width_px = if prompt.ta1_type.is_none() { common } else { HEAVY * common };
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

/// The lines of a mask's skeleton `branches` whose strokes are at most `widest` pixels wide,
/// joined across gaps up to `gap` (dots in a row whose gaps are not `inked` among them), and the
/// marks beside them: short branches off a line, and short lines on their own (a pair of arrows
/// across the line, a ball, a letter of a name) as two marks each, from their middle to either
/// end.
fn traced(branches: Vec<Branch>, widest: f64, gap: f64, inked: &dyn Fn((f64, f64)) -> bool) -> (Vec<Chain>, MarkIndex) {
    let spur_px = DECORATION_REACH * widest + 6.0;
    // Dots (branches free at both ends, no longer than wide, at least half the widest stroke
    // wide) in evenly spaced rows are a line's dotted part; the rest are what they were.
    let is_dot = |b: &Branch| b.free == (true, true) && b.piece.length() <= b.piece.width() && b.piece.width() >= DOT_WIDTH * widest;
    let (dots, mut branches): (Vec<Branch>, Vec<Branch>) = branches.into_iter().partition(is_dot);
    let dots: Vec<Piece> = dots.into_iter().map(|dot| dot.piece).collect();
    let (rows, in_rows) = chains::dot_rows(&dots, gap, inked);
    let mut in_rows = in_rows.into_iter().peekable();
    for (index, piece) in dots.into_iter().enumerate() {
        if in_rows.next_if_eq(&index).is_none() {
            branches.push(Branch { piece, free: (true, true) });
        }
    }
    let (mut pieces, spurs) = skeleton::split(branches, spur_px);
    pieces.extend(rows);
    let joined = chains::join(pieces, Joining { max_gap: gap, max_turn: MAX_TURN, junction: 2.0 * widest + 2.0 });
    let (short, lines): (Vec<Chain>, Vec<Chain>) = joined.into_iter().partition(|chain| chain.length() <= 2.0 * spur_px);
    let mut marks: Vec<Mark> = spurs.into_iter().map(|spur| Mark { spur, attached: true }).collect();
    for chain in short {
        let points = chain.points();
        let (first, middle, last) = (points[0], points[(points.len() - 1) / 2], points[points.len() - 1]);
        marks.extend([Spur { base: middle, tip: first }, Spur { base: middle, tip: last }].map(|spur| Mark { spur, attached: false }));
    }
    (lines, MarkIndex::new(marks, DECORATION_REACH * widest + 6.0))
}

/// A mark beside a line: a spur off it, or half of a short line on its own.
struct Mark {
    spur: Spur,
    /// Whether it leaves from a junction (a spur), rather than standing apart as a short line of
    /// its own (an arrow clear of the line, a letter without junctions, a dot).
    attached: bool,
}

/// Marks by grid cell, so a line looks only at those near it.
struct MarkIndex {
    marks: Vec<Mark>,
    cell: f64,
    cells: std::collections::HashMap<(i64, i64), Vec<usize>>,
}

impl MarkIndex {
    /// `marks` in cells of `cell` pixels (at least the reach of a line's marks).
    fn new(marks: Vec<Mark>, cell: f64) -> MarkIndex {
        let mut cells: std::collections::HashMap<(i64, i64), Vec<usize>> = std::collections::HashMap::new();
        for (index, mark) in marks.iter().enumerate() {
            for end in [mark.spur.base, mark.spur.tip] {
                let slot = cells.entry(((end.0 / cell).floor() as i64, (end.1 / cell).floor() as i64)).or_default();
                if slot.last() != Some(&index) {
                    slot.push(index);
                }
            }
        }
        MarkIndex { marks, cell, cells }
    }

    /// The marks with an end in a cell a point of `points` is in or next to, each once.
    fn near(&self, points: &[(f64, f64)]) -> Vec<&Mark> {
        let mut seen = std::collections::HashSet::new();
        let mut near = Vec::new();
        for &(x, y) in points {
            let (cx, cy) = ((x / self.cell).floor() as i64, (y / self.cell).floor() as i64);
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for &index in self.cells.get(&(cx + dx, cy + dy)).into_iter().flatten() {
                        if seen.insert(index) {
                            near.push(&self.marks[index]);
                        }
                    }
                }
            }
        }
        near
    }
}

/// Pixels around a sample it is measured in, on each side.
const SAMPLE_MARGIN: f64 = 4.0;

/// Where a line entry's sample is measured: its box, four pixels wider on every side, and kept to
/// the rows of the entry's first line of words (an explanation's samples stand one under another,
/// and the box read for one may reach into the next).
pub fn sample_window(entry: &SymbolEntry) -> PixelBox {
    let (sample, words) = (&entry.sample, &entry.text_box);
    let (top, bottom) = (sample.y0.max(words.y0), sample.y1.min(words.y1));
    let (y0, y1) = if bottom > top + 1.0 { (top, bottom) } else { (sample.y0, sample.y1) };
    PixelBox { x0: sample.x0 - SAMPLE_MARGIN, y0: y0 - SAMPLE_MARGIN, x1: sample.x1 + SAMPLE_MARGIN, y1: y1 + SAMPLE_MARGIN }
}

impl LinePrompt {
    /// The prompt measured again on its sample's pixels (`sample`, its [`sample_window`]) the way lines
    /// are measured on the map: the stroke's colour (the median of its most strongly inked
    /// pixels, not of its antialiased edges), then, on the mask of that colour, its width, its
    /// pattern and period and its marks (unless its name says which: a thrust's teeth, a fold's
    /// arrows and the way they point).
    pub fn calibrated(mut self, sample: &Rgb) -> LinePrompt {
        let pixels: Vec<(u8, u8, u8)> = sample.pixels.chunks_exact(3).map(|p| (p[0], p[1], p[2])).collect();
        let labs: Vec<[f64; 3]> = pixels.iter().map(|&p| lab(p)).collect();
        let lightest = labs.iter().map(|l| l[0]).fold(0.0, f64::max);
        let Some(paper) = crate::colour::median_colour(pixels.iter().zip(&labs).filter(|(_, l)| l[0] >= lightest - 8.0).map(|(p, _)| *p)) else { return self };
        let paper_lab = lab(paper);
        let strength: Vec<f64> = labs.iter().map(|l| delta_e(*l, paper_lab)).collect();
        let strongest = strength.iter().copied().fold(0.0, f64::max);
        if strongest < LINE_DELTA_E {
            return self;
        }
        // The stroke is the row with the most ink (words beside it have less in any one row); its
        // colour, the median of the most strongly inked pixels of that row and the ones either side.
        let (width, height) = (sample.width as usize, sample.height as usize);
        let inked_in = |row: usize| strength[row * width..(row + 1) * width].iter().filter(|s| **s >= LINE_DELTA_E).count();
        let Some(stroke_row) = (0..height).max_by_key(|&row| inked_in(row)) else { return self };
        let band: Vec<usize> = (stroke_row.saturating_sub(1)..(stroke_row + 2).min(height)).flat_map(|row| row * width..(row + 1) * width).collect();
        let strongest = band.iter().map(|&i| strength[i]).fold(0.0, f64::max);
        let Some(core) = crate::colour::median_colour(band.iter().filter(|&&i| strength[i] >= 0.9 * strongest).map(|&i| pixels[i])) else { return self };
        let core_lab = lab(core);
        let mask = stroke_pixels(&labs, core_lab, paper_lab, width);
        let inked = |at: (f64, f64)| index_at(at, width, height).is_some_and(|i| labs[i][0] < DARK_LIGHTNESS);
        let (lines, marks) = traced(
            skeleton::branches(&mask, width, height),
            self.width_px,
            self.period_px.map_or(2.0 * self.width_px + 8.0, |period| period + 2.0 * self.width_px),
            &inked,
        );
        // A sample too short to trace (shorter than two teeth) still gives its colour.
        self.colour = core;
        let Some(stroke) = lines.into_iter().max_by(|a, b| a.length().total_cmp(&b.length())) else { return self };
        self.width_px = stroke.width().max(1.0);
        let gaps: Vec<f64> = stroke.gaps().into_iter().zip(stroke.paper_gaps()).filter(|&(_, paper)| paper).map(|(gap, _)| gap).collect();
        if gaps.is_empty() {
            (self.pattern, self.period_px) = (Pattern::Solid, None);
        } else {
            let dash = stroke.pieces.iter().map(Piece::length).sum::<f64>() / stroke.pieces.len() as f64;
            let pattern = if dash <= 2.5 * self.width_px { Pattern::Dotted } else { Pattern::Dashed };
            (self.pattern, self.period_px) = (pattern, Some(dash + gaps.iter().sum::<f64>() / gaps.len() as f64));
        }
        let ink = |x: f64, y: f64| index_at((x, y), width, height).is_some_and(|i| mask[i] != 0);
        let (seen, _) = marks_beside(&stroke.points(), &marks, self.width_px, &ink);
        // The name, where it says, wins over marks too small to read on a sample.
        self.marks = Marks::named(&self.symbol).unwrap_or(seen);
        self
    }
}

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

/// A mark standing beside a line.
#[derive(Debug, Clone, Copy)]
struct Beside {
    /// The point of the line it stands at.
    at: usize,
    /// How far along the line that point is.
    along: f64,
    /// 1: on the right as the line's points run; -1: on the left.
    side: i8,
    /// How far from the line its nearer end is.
    near: f64,
    /// How far from the line its further end is.
    far: f64,
    /// Whether it leaves from a junction on the line itself (a tooth drawn on it), not from one
    /// of its own (a letter's stroke) or from none (a dot, an arrow clear of the line).
    on_line: bool,
}

/// What is drawn beside a line through `points` (stroke `width`): the marks whose base is within
/// reach of it, and their side (1: right as the points run, -1: left): for teeth, the side most
/// of those drawn on the line are on; for a ball, the side most marks are on. Where
/// marks stand on both sides at one place (a fold's arrows), `ink` (is this pixel of the line's
/// colour?) tells which way they point: an arrowhead has more ink at its base than at its point.
fn marks_beside(points: &[(f64, f64)], marks: &MarkIndex, width: f64, ink: &dyn Fn(f64, f64) -> bool) -> (Marks, i8) {
    let reach = DECORATION_REACH * width.max(1.0) + 6.0;
    let mut beside: Vec<Beside> = Vec::new();
    let mut along = Vec::with_capacity(points.len());
    let mut run = 0.0;
    for (i, p) in points.iter().enumerate() {
        if i > 0 {
            run += chains::distance(points[i - 1], *p);
        }
        along.push(run);
    }
    let nearest_to = |at: (f64, f64)| points.iter().enumerate().map(|(i, p)| (i, chains::distance(*p, at))).min_by(|a, b| a.1.total_cmp(&b.1));
    let direction = |i: usize| {
        let (a, b) = (points[i.saturating_sub(2)], points[(i + 2).min(points.len() - 1)]);
        let length = chains::distance(a, b).max(1e-9);
        ((b.0 - a.0) / length, (b.1 - a.1) / length)
    };
    for &&Mark { spur: mark, attached } in &marks.near(points) {
        let from_base = nearest_to(mark.base);
        let on_line = attached && from_base.is_some_and(|(_, distance)| distance <= width / 2.0 + 2.0);
        // A detached mark has no junction: its end nearer the line is its base.
        let (base, tip) = match (from_base, nearest_to(mark.tip)) {
            (Some(base), Some(tip)) if tip.1 < base.1 => (tip, base),
            (Some(base), Some(tip)) => (base, tip),
            _ => continue,
        };
        // Within reach, and reaching away from the line.
        if base.1 > reach || tip.1 < base.1 + 1.0 {
            continue;
        }
        let far = if chains::distance(points[base.0], mark.tip) >= chains::distance(points[base.0], mark.base) { mark.tip } else { mark.base };
        // Beside the line, not running on past an end in its direction (its overshoot across a contact).
        if tip.0 == 0 || tip.0 == points.len() - 1 {
            let (dx, dy) = direction(tip.0);
            let outward = if tip.0 == 0 { (-dx, -dy) } else { (dx, dy) };
            let (vx, vy) = (far.0 - points[tip.0].0, far.1 - points[tip.0].1);
            if vx * outward.0 + vy * outward.1 >= PAST_END_COS * vx.hypot(vy) {
                continue;
            }
        }
        let (dx, dy) = direction(base.0);
        // Rows grow downwards, so a positive cross product is on the right.
        let cross = dx * (far.1 - points[base.0].1) - dy * (far.0 - points[base.0].0);
        beside.push(Beside { at: base.0, along: along[base.0], side: if cross > 0.0 { 1 } else { -1 }, near: base.1, far: tip.1, on_line });
    }
    if beside.is_empty() {
        return (Marks::None, 0);
    }
    let right = beside.iter().filter(|m| m.side > 0).count();
    let left = beside.len() - right;
    let side = if right >= left { 1 } else { -1 };
    let pair = beside.iter().filter(|a| a.side > 0).find_map(|a| Some((a, beside.iter().find(|b| b.side < 0 && (a.along - b.along).abs() <= 2.0 * reach)?)));
    // Teeth are drawn on the line (a letter of its name beside it stands apart), most on one side,
    // and stand along it, not in one cluster (a number printed beside it).
    let drawn_on: Vec<&Beside> = beside.iter().filter(|m| m.on_line).collect();
    let drawn_right = drawn_on.iter().filter(|m| m.side > 0).count();
    let teeth_side = if 2 * drawn_right >= drawn_on.len() { 1 } else { -1 };
    let teeth: Vec<f64> = drawn_on.iter().filter(|m| m.side == teeth_side).map(|m| m.along).collect();
    let spread = teeth.iter().copied().fold(f64::NEG_INFINITY, f64::max) - teeth.iter().copied().fold(f64::INFINITY, f64::min);
    if teeth.len() >= 3 && teeth.len() * 4 >= drawn_on.len() * 3 && spread >= 0.4 * run {
        (Marks::Teeth, teeth_side)
    } else if let Some((&Beside { at, near: a_near, far: a_far, .. }, &Beside { near: b_near, far: b_far, .. })) = pair {
        // Ink in the nearer half of the band the pair spans against the further half, on both
        // sides of where the pair stands (the band, and so the count, grows with the arrows).
        let (dx, dy) = direction(at);
        let (x, y) = points[at];
        let (mut near, mut far) = (0_u32, 0_u32);
        let inner = (width / 2.0 + 1.0).max(a_near.min(b_near));
        let outer = a_far.max(b_far).max(inner + 2.0);
        // Rows evenly from the inner edge to the outer one, an even number of them, so both halves
        // sample as many.
        let rows = ((outer - inner).round() as u32 + 2) / 2 * 2;
        let along_px = (0.7 * (outer - inner)).max(10.0).round() as i32;
        for step in -along_px..=along_px {
            for row in 0..rows {
                let r = inner + f64::from(row) * (outer - inner) / f64::from(rows - 1);
                for sign in [1.0, -1.0] {
                    let (px, py) = (x + f64::from(step) * dx - sign * r * dy, y + f64::from(step) * dy + sign * r * dx);
                    if ink(px, py) {
                        if row < rows / 2 { near += 1 } else { far += 1 }
                    }
                }
            }
        }
        let pointing = if f64::from(near) > 1.2 * f64::from(far) {
            Some(Away(true))
        } else if f64::from(far) > 1.2 * f64::from(near) {
            Some(Away(false))
        } else {
            None
        };
        (Marks::Arrows(pointing), 0)
    } else if beside.len() == 1 {
        (Marks::Ball, side)
    } else {
        (Marks::None, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
