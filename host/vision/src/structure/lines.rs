//! Lines: a colour's skeleton (what its point symbols left) joined across gaps and dot rows into
//! chains, each given to the line symbol of its colour whose stroke width and marks (teeth, a ball
//! and bar, a fold's arrows) it shares. A line symbol is measured on its explanation's sample as
//! its lines are on the map ([`LinePrompt::calibrated`]), or without an explanation looked for by
//! its look ([`LinePrompt::by_look`]).
//!
//! Invariants: a contact is never a line feature; a line's parts keep their patterns; a branch is
//! one line's at most; lengths are the skeleton's, in pixels.

use super::chains::{self, Chain, Joining};
use super::skeleton::{self, Branch, Piece, Spur};
use super::{DARK_LIGHTNESS, LINE_DELTA_E, LOOK_CONFIDENCE, LOOK_INK, SAMPLE_MARGIN, common_width, index_at, stroke_pixels};
use crate::colour::{delta_e, lab};
use crate::image::Rgb;
use crate::layout::symbols::{Pattern, SymbolEntry};
use geomap_model::page::PixelBox;
use geomap_model::symbols::{Family, LineMarks, Symbol, catalog};

/// While lines are typed, whether to stop is asked every this many lines.
const CANCEL_EVERY: usize = 64;

/// One colour's map as its lines are traced on it.
pub(super) struct LineMap<'a> {
    /// The colour's stroke pixels.
    pub(super) mask: &'a [u8],
    /// The map's width and height.
    pub(super) size: (usize, usize),
    /// The map's top-left pixel in the scan.
    pub(super) origin: (f64, f64),
    /// Whether the map's ink is dark at a point (any colour): a dotted row's gaps are paper, a
    /// broken stroke's are not.
    pub(super) inked: &'a dyn Fn((f64, f64)) -> bool,
}

/// The lines of the prompts of `group` (indices into `prompts`, all drawn in `map`'s colour) on
/// its `skeleton` (its branches, and per branch whether a point symbol took it): those looked for
/// by their look alone measured on the whole skeleton first, then the branches no symbol took
/// traced into chains, each given to the prompt it fits; `None` when `cancelled` (asked every
/// [`CANCEL_EVERY`] lines).
pub(super) fn find(
    prompts: &mut [LinePrompt],
    group: &[usize],
    (branches, used): (Vec<Branch>, Vec<bool>),
    map: &LineMap,
    cancelled: &dyn Fn() -> bool,
) -> Option<Vec<FoundLine>> {
    measured_by_look(prompts, group, &branches);
    let branches: Vec<Branch> = branches.into_iter().zip(used).filter(|(_, used)| !used).map(|(branch, _)| branch).collect();
    let widest = group.iter().map(|&p| prompts[p].width_px).fold(1.0, f64::max);
    let gap = group
        .iter()
        .map(|&p| {
            let prompt = &prompts[p];
            prompt.period_px.map_or(GAP_STROKES * prompt.width_px + GAP_FLOOR_PX, |period| GAP_PERIODS * period + GAP_SLACK_STROKES * prompt.width_px)
        })
        .fold(0.0, f64::max);
    let (chains, marks) = traced(branches, widest, gap, map.inked);
    let mut found = Vec::new();
    for (index, chain) in chains.iter().enumerate() {
        if index % CANCEL_EVERY == 0 && cancelled() {
            return None;
        }
        found.extend(given(prompts, chain, group, &marks, map));
    }
    Some(found)
}

/// The line prompt of `lines` (one colour's) that `chain` (in `mask`, that colour's pixels) is drawn as, and the
/// line it makes; `None` for a chain too short to be a line, too unlike every prompt, or a contact.
fn given(prompts: &[LinePrompt], chain: &Chain, lines: &[usize], marks: &MarkIndex, map: &LineMap) -> Option<FoundLine> {
    let width = chain.width();
    let length = chain.length();
    let points = chain.points();
    let ink = |x: f64, y: f64| index_at((x, y), map.size.0, map.size.1).is_some_and(|i| map.mask[i] != 0);
    let (seen, side) = marks_beside(&points, marks, width, &ink);
    let (prompt, confidence) = lines
        .iter()
        .map(|&p| {
            let prompt = &prompts[p];
            let width_fit = (-2.0 * ((width + WIDTH_SLACK_PX) / (prompt.width_px + WIDTH_SLACK_PX)).ln().abs()).exp();
            let marks_fit = prompt.marks.fit(seen);
            (p, width_fit * marks_fit)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let chosen = &prompts[prompt];
    let shortest = (LINE_LEAST_STROKES * chosen.width_px).max(LINE_LEAST_PERIODS * chosen.period_px.unwrap_or(0.0)).max(LINE_LEAST_PX);
    if chosen.ta1_type.is_none() || length < shortest || confidence < 0.2 {
        return None;
    }
    let confidence = if chosen.entry.is_none() { LOOK_CONFIDENCE * confidence } else { confidence };
    let dash = chosen.period_px.map_or(DASH_STROKES * chosen.width_px, |period| period) + GAP_SLACK_STROKES * chosen.width_px;
    let (left, top) = map.origin;
    let parts = chain
        .parts(dash, DOT_STROKES * chosen.width_px, 0.5)
        .into_iter()
        .map(|(pattern, points)| (pattern, points.into_iter().map(|(x, y)| (x + left, y + top)).collect()))
        .collect();
    let polarity = if matches!(seen, Marks::Teeth | Marks::Ball) { side } else { 0 };
    Some(FoundLine { prompt, parts, polarity, confidence: (confidence * 1000.0).round() / 1000.0 })
}

/// The largest turn, in degrees, between two pieces joined into one line.
const MAX_TURN: f64 = 35.0;

/// Marks beside a line within this many stroke widths of it are its decorations.
const DECORATION_REACH: f64 = 3.0;

/// A mark within 30° of a line's direction past its end is the line running on (an overshoot
/// across a contact), not a mark beside it: the cosine of that angle.
const PAST_END_COS: f64 = 0.866;

/// Without an explanation, a dark line whose stroke is this many times the map's common dark
/// stroke (its contacts') is a fault.
pub(super) const HEAVY: f64 = 1.8;

/// A dot of a dotted line is at least this share of the colour's widest line stroke wide (a
/// speck of a thin line's broken ink is not one).
const DOT_WIDTH: f64 = 0.5;
/// A dot is at most this many stroke widths long: a sample's dashes when its pattern is dotted, a
/// line's dotted part, and a skeleton's branch on its own at least [`DOT_LONG_LEAST_PX`] wide (a
/// dot printed as a dash a stroke long and as wide as its line is longer across the line than
/// along it).
const DOT_STROKES: f64 = 2.5;
/// A skeleton's branch on its own is a dot longer than it is wide only when it is at least this
/// many pixels wide (a floor: a hairline's ink broken by the scan leaves pieces a pixel or two
/// wide and a few long, no dots).
const DOT_LONG_LEAST_PX: f64 = 3.0;
/// A line is at least this many of its symbol's stroke widths long…
const LINE_LEAST_STROKES: f64 = 12.0;
/// …and this many of its dash periods…
const LINE_LEAST_PERIODS: f64 = 2.5;
/// …and this many pixels (a floor: a few pixels' stroke is a letter's or a speck's).
const LINE_LEAST_PX: f64 = 30.0;
/// A line runs on across a gap this many stroke widths long when its symbol has no dash period
/// (a crossing line, a label)…
const GAP_STROKES: f64 = 4.0;
/// …this share of its period when it has one, with [`GAP_SLACK_STROKES`] more…
const GAP_PERIODS: f64 = 0.9;
/// See [`GAP_PERIODS`].
const GAP_SLACK_STROKES: f64 = 2.0;
/// …and, without a period, this many pixels more (a floor: a thin line's gap is blurred shut or
/// open by a few pixels whatever its width).
const GAP_FLOOR_PX: f64 = 8.0;
/// A mark beside a line reaches [`DECORATION_REACH`] stroke widths and this many pixels more from
/// it (a floor: a hairline's tick still stands a few pixels off it).
const REACH_FLOOR_PX: f64 = 6.0;
/// A dash of a broken line is taken as this many stroke widths long when its symbol has no period.
const DASH_STROKES: f64 = 8.0;
/// Two pieces meet across a junction this many of the widest stroke widths wide, and
/// [`JUNCTION_FLOOR_PX`] more.
const JUNCTION_STROKES: f64 = 2.0;
/// See [`JUNCTION_STROKES`]: a floor in pixels.
const JUNCTION_FLOOR_PX: f64 = 2.0;

/// A thin stroke's width is known to about a pixel (a skeleton measures one stroke 1 px wide here,
/// 2 px there, and its sample either way): a line's width is compared with its symbol's with this
/// many pixels added to each.
const WIDTH_SLACK_PX: f64 = 1.0;

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

/// The lines of a mask's skeleton `branches` whose strokes are at most `widest` pixels wide,
/// joined across gaps up to `gap` (dots in a row whose gaps are not `inked` among them), and the
/// marks beside them: short branches off a line, and short lines on their own (a pair of arrows
/// across the line, a ball, a letter of a name) as two marks each, from their middle to either
/// end.
fn traced(branches: Vec<Branch>, widest: f64, gap: f64, inked: &dyn Fn((f64, f64)) -> bool) -> (Vec<Chain>, MarkIndex) {
    let spur_px = DECORATION_REACH * widest + REACH_FLOOR_PX;
    // Dots (branches free at both ends, no longer than a dot is, at least half the widest stroke
    // wide) in evenly spaced rows are a line's dotted part; the rest are what they were.
    let is_dot = |b: &Branch| {
        let width = b.piece.width();
        let longest = if width >= DOT_LONG_LEAST_PX { DOT_STROKES * width } else { width };
        b.free == (true, true) && b.piece.length() <= longest && width >= DOT_WIDTH * widest
    };
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
    let joined = chains::join(pieces, Joining { max_gap: gap, max_turn: MAX_TURN, junction: JUNCTION_STROKES * widest + JUNCTION_FLOOR_PX });
    let (short, lines): (Vec<Chain>, Vec<Chain>) = joined.into_iter().partition(|chain| chain.length() <= 2.0 * spur_px);
    let mut marks: Vec<Mark> = spurs.into_iter().map(|spur| Mark { spur, attached: true }).collect();
    for chain in short {
        let points = chain.points();
        let (first, middle, last) = (points[0], points[(points.len() - 1) / 2], points[points.len() - 1]);
        marks.extend([Spur { base: middle, tip: first }, Spur { base: middle, tip: last }].map(|spur| Mark { spur, attached: false }));
    }
    (lines, MarkIndex::new(marks, DECORATION_REACH * widest + REACH_FLOOR_PX))
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
            self.period_px.map_or(GAP_SLACK_STROKES * self.width_px + GAP_FLOOR_PX, |period| period + GAP_SLACK_STROKES * self.width_px),
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
            let pattern = if dash <= DOT_STROKES * self.width_px { Pattern::Dotted } else { Pattern::Dashed };
            (self.pattern, self.period_px) = (pattern, Some(dash + gaps.iter().sum::<f64>() / gaps.len() as f64));
        }
        let ink = |x: f64, y: f64| index_at((x, y), width, height).is_some_and(|i| mask[i] != 0);
        let (seen, _) = marks_beside(&stroke.points(), &marks, self.width_px, &ink);
        // The name, where it says, wins over marks too small to read on a sample.
        self.marks = Marks::named(&self.symbol).unwrap_or(seen);
        self
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
    let reach = DECORATION_REACH * width.max(1.0) + REACH_FLOOR_PX;
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
