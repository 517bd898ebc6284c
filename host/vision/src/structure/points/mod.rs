//! Point symbols: bedding attitudes (a strike line with a dip tick on one side for inclined beds
//! and foliation, ticks on both for vertical beds, a cross in a circle for horizontal beds), the
//! filled marks other point symbols are printed as (a collapse structure's dot, a sinkhole's
//! triangle) and a dot strung on a hairline (the strike of a vertical joint).
//!
//! Each family of point symbols has a detector of its own, in a file of its own here, that
//! measures a symbol on its explanation's sample ([`PointDetector::measure`]) and finds it on the
//! map ([`PointDetector::find`]); [`DETECTORS`] is the one list of them, in the order they look on
//! the map. A prompt is measured by the first detector of its shape whose reading of the sample
//! shows the whole symbol, those reading a skeleton first (a tick symbol printed a pixel wide shows
//! none, and is a hairline's).
//!
//! Invariants: pure arithmetic on pixels the caller read; a detector clearing its symbols' ink from
//! their colour's mask runs before any that reads the colour's skeleton ([`Reads`], checked by
//! [`PointMap`]); a prompt is looked for by the detector that measured it alone; a branch belongs
//! to one symbol at most; directions leave in degrees clockwise from the sheet's up (rows grow
//! downwards).

pub mod circled;
pub mod cross;
pub mod filled;
pub mod hairline;
mod marks;
mod numbers;
mod on_skeleton;
mod pieces;
#[cfg(test)]
mod samples;
pub mod strung;
pub mod tick;

use super::skeleton::{self, Branch};
use crate::colour::{delta_e, lab};
use crate::image::Rgb;
use crate::layout::symbols::SymbolEntry;
use geomap_model::page::PixelBox;
use geomap_model::symbols::{Family, catalog};

pub use geomap_model::symbols::Shape;

/// The point symbol detectors, in the order they look on a colour's map: those taking pieces of
/// ink first (each clears what it takes, so no later one, and no line, takes it up), then those
/// reading the skeleton of what is left.
pub const DETECTORS: &[&dyn PointDetector] =
    &[&strung::StrungDots, &filled::FilledMarks, &hairline::HairlineTicks, &tick::TickSymbols, &cross::Crosses, &circled::CircledCrosses];

/// What a detector reads on a colour's map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reads {
    /// Pieces of the colour's ink, cleared from its mask when taken.
    Ink,
    /// The map's lightness (grey and black ink, whatever the colour), the pieces taken cleared
    /// from the colour's mask.
    Lightness,
    /// The colour's skeleton, traced once the ink detectors have cleared their symbols.
    Skeleton,
}

/// One family of point symbols: how a symbol of it is measured on its sample and found on the map.
pub trait PointDetector: Sync + std::fmt::Debug {
    /// Its name ("tick symbols", "hairline ticks"…), one of its own: a prompt knows the detector
    /// that measured it by it ([`PointPrompt::measured_by`]).
    fn name(&self) -> &'static str;

    /// Whether it looks for symbols the catalog draws as `shape`.
    fn draws(&self, shape: Shape) -> bool;

    /// What it reads on the map.
    fn reads(&self) -> Reads;

    /// `prompt` with its symbol's colour and sizes measured on its sample's `ink`; `None` when the
    /// sample shows no whole symbol this detector finds.
    fn measure(&self, prompt: &PointPrompt, ink: &SampleInk) -> Option<PointPrompt>;

    /// The symbols on `map` of the prompts of `group` (indices into `prompts`, all drawn in the
    /// map's colour) that it measured (a detector reading the skeleton measures there first the
    /// prompts of its shape looked for by their look alone).
    fn find(&self, map: &mut PointMap, prompts: &mut [PointPrompt], group: &[usize]) -> Vec<FoundPoint>;

    /// Where the number printed beside a symbol found at `at` (in `window`, the scan around it,
    /// in the window's pixels; `dip_direction` as found) may stand, nearest first; none for a
    /// symbol printed without a number.
    fn number_boxes<'a>(&self, _window: &'a Rgb, _at: (f64, f64), _prompt: &'a PointPrompt, _dip_direction: Option<f64>) -> NumberBoxes<'a> {
        Box::new(std::iter::empty())
    }
}

/// The boxes a symbol's number may stand in, nearest first, each looked for only when the one
/// before read nothing.
pub type NumberBoxes<'a> = Box<dyn Iterator<Item = NumberBox> + 'a>;

/// A box a symbol's number may stand in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumberBox {
    /// The box, in the window's pixels.
    pub region: PixelBox,
    /// Whether it holds ink of the symbol's own colour (else grey ink a hairline's number may be
    /// printed in, which other grey lines share).
    pub own_ink: bool,
}

/// One colour's main map as the point detectors read it: its mask (cleared of each symbol taken
/// from its ink), the map's dark ink and lightness, and its skeleton once traced.
pub struct PointMap<'a> {
    /// The colour's stroke pixels, `width × height`.
    mask: &'a mut [u8],
    width: usize,
    height: usize,
    /// The map's top-left pixel in the scan.
    origin: (f64, f64),
    /// Whether the map's ink is dark at a point (any colour).
    dark: &'a dyn Fn((f64, f64)) -> bool,
    /// The map's lightness, for the hairlines; `None` when no prompt is a hairline's.
    lightness: Option<hairline::Lightness<'a>>,
    /// The mask's skeleton, once a detector read it, and per branch whether a symbol took it.
    skeleton: Option<(Vec<Branch>, Vec<bool>)>,
}

impl<'a> PointMap<'a> {
    /// The map of `mask` (a colour's stroke pixels, `width × height`, the map's top-left pixel at
    /// `origin` in the scan), with the map's `dark` ink and its `lightness` (when a prompt is a
    /// hairline's).
    pub fn new(
        mask: &'a mut [u8],
        (width, height): (usize, usize),
        origin: (f64, f64),
        dark: &'a dyn Fn((f64, f64)) -> bool,
        lightness: Option<hairline::Lightness<'a>>,
    ) -> PointMap<'a> {
        PointMap { mask, width, height, origin, dark, lightness, skeleton: None }
    }

    /// The mask, for a detector of [`Reads::Ink`] or [`Reads::Lightness`] to clear its symbols
    /// from. Its skeleton is traced once: a detector clearing ink after it was is a fault in
    /// [`DETECTORS`]' order.
    fn mask(&mut self) -> &mut [u8] {
        assert!(self.skeleton.is_none(), "a point detector cleared ink after the skeleton was traced");
        self.mask
    }

    /// The mask's skeleton, traced on first use, and per branch whether a symbol took it.
    fn skeleton(&mut self) -> (&[Branch], &mut [bool]) {
        let (width, height) = (self.width, self.height);
        let mask = &*self.mask;
        let (branches, used) = self.skeleton.get_or_insert_with(|| {
            let branches = skeleton::branches(mask, width, height);
            let used = vec![false; branches.len()];
            (branches, used)
        });
        (branches, used)
    }

    /// The mask's skeleton (traced now if no detector read it) and per branch whether a symbol took it.
    pub fn into_skeleton(mut self) -> (Vec<Branch>, Vec<bool>) {
        self.skeleton();
        self.skeleton.take().expect("traced")
    }
}

/// The TA1 point type (`enum_point_type`, or a finer kind the GeoPackage files under the schema's
/// type: "inclined bedding" under `bedding`, "breccia pipe" under `other`) and the shape of an
/// explanation's point symbol, as the catalog (`geomap_model::symbols`) gives them, for the
/// symbols a detector looks for; `None` for the rest (a mine's crossed picks, a spring).
pub fn ta1_point_type(symbol: &str) -> Option<(&'static str, Shape)> {
    let known = catalog().named(symbol).filter(|known| known.family == Family::Point)?;
    Some((known.ta1.as_deref()?, known.shape?))
}

/// An attitude symbol of the explanation, or one looked for by its shape alone, as its symbols are looked for.
#[derive(Debug, Clone)]
pub struct PointPrompt {
    /// Its index among the layout's symbol entries; `None` for a symbol looked for by its shape
    /// alone ([`PointPrompt::by_look`]).
    pub entry: Option<usize>,
    /// Its name as the entry begins ("strike and dip of beds").
    pub symbol: String,
    /// The entry's words.
    pub words: String,
    /// Its TA1 point type.
    pub ta1_type: &'static str,
    /// How it is drawn.
    pub shape: Shape,
    /// The colour its sample is drawn in.
    pub colour: (u8, u8, u8),
    /// The stroke's width in pixels.
    pub width_px: f64,
    /// The strike line's length along its skeleton, in pixels (a circled cross: its circle's
    /// diameter, the bar across it; a filled mark, a strung dot: its box's wider side).
    pub strike_px: f64,
    /// A tick's length from the strike line, in pixels (a circled cross: its circle's radius; a
    /// filled mark, a strung dot: its box's narrower side).
    pub tick_px: f64,
    /// A filled mark's (a strung dot's) share of its box that its ink fills; 0 for the other
    /// shapes.
    pub fill: f64,
    /// A filled mark's (a strung dot's) ink in its top rows over that in its bottom rows (a third
    /// of its height each): a dot about 1, a triangle on its base about a half; 0 for the other
    /// shapes.
    pub taper: f64,
    /// The detector that measured it (on its sample, or on the map for one looked for by its look
    /// alone), which alone looks for it; `None` until measured.
    pub detector: Option<&'static dyn PointDetector>,
}

impl PointPrompt {
    /// The attitude symbols among the layout's symbol entries (in order), not yet measured.
    pub fn of_entries(entries: &[SymbolEntry]) -> Vec<PointPrompt> {
        entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry.kind == Family::Point)
            .filter_map(|(index, entry)| {
                let kind = ta1_point_type(&entry.symbol)?;
                Some(PointPrompt::unmeasured(Some(index), (entry.symbol.clone(), entry.text.clone()), kind, (0, 0, 0)))
            })
            .collect()
    }

    /// The attitudes looked for when the explanation has none, their lengths measured on the map
    /// by the detector of their shape: a dark strike line with a dip tick (inclined beds) and a
    /// dark cross in a circle (horizontal beds): the catalog's point symbols with a look. A cross
    /// alone is not looked for: a graticule's crosses are drawn so.
    pub fn by_look() -> Vec<PointPrompt> {
        catalog()
            .looks(Family::Point)
            .filter_map(|symbol| {
                let kind = (symbol.ta1.as_deref()?, symbol.shape?);
                Some(PointPrompt::unmeasured(None, (symbol.name.clone(), symbol.look.clone()?), kind, super::LOOK_INK))
            })
            .collect()
    }

    /// A prompt for a symbol (its name and words, its TA1 kind and shape, the explanation's
    /// `entry` of it if any) drawn in `colour`, its sizes unknown until measured on its sample or
    /// on the map.
    pub fn unmeasured(entry: Option<usize>, (symbol, words): (String, String), (ta1_type, shape): (&'static str, Shape), colour: (u8, u8, u8)) -> PointPrompt {
        PointPrompt { entry, symbol, words, ta1_type, shape, colour, width_px: 1.0, strike_px: 0.0, tick_px: 0.0, fill: 0.0, taper: 0.0, detector: None }
    }

    /// The prompt measured on its sample's pixels by the first detector of its shape that finds a
    /// whole symbol there, those reading a skeleton first (a tick symbol printed a pixel wide shows
    /// none, and is a hairline's); `None` when no detector does, or nothing on the sample stands
    /// out from its paper.
    pub fn calibrated(&self, sample: &Rgb) -> Option<PointPrompt> {
        let ink = SampleInk::of(sample)?;
        let mut detectors: Vec<&'static dyn PointDetector> = DETECTORS.iter().copied().filter(|detector| detector.draws(self.shape)).collect();
        detectors.sort_by_key(|detector| detector.reads() != Reads::Skeleton);
        detectors.into_iter().find_map(|detector| Some(PointPrompt { detector: Some(detector), ..detector.measure(self, &ink)? }))
    }

    /// Whether `detector` measured it, and so looks for it.
    pub fn measured_by(&self, detector: &dyn PointDetector) -> bool {
        self.detector.is_some_and(|own| own.name() == detector.name())
    }

    /// Whether it is a filled mark printed as a triangle on its base (a sinkhole), not a dot.
    pub fn printed_as_triangle(&self) -> bool {
        self.shape == Shape::Filled && self.taper < TRIANGLE_TAPER
    }
}

/// Where an attitude entry's sample is measured: its box, four pixels wider on every side (a
/// point sample may stand below its words' row, under a heading such as "Strike and dip of beds").
pub fn sample_box(entry: &SymbolEntry) -> PixelBox {
    let (sample, margin) = (&entry.sample, super::SAMPLE_MARGIN);
    PixelBox { x0: sample.x0 - margin, y0: sample.y0 - margin, x1: sample.x1 + margin, y1: sample.y1 + margin }
}

/// A point symbol found on the map: an attitude or a filled mark.
#[derive(Debug, Clone)]
pub struct FoundPoint {
    /// The prompt (index into the finder's point prompts) it was given to.
    pub prompt: usize,
    /// Where its strike line and tick meet (a circled cross, a filled mark: its box's middle), in
    /// the scan's pixels.
    pub at: (f64, f64),
    /// Its tick's direction, degrees clockwise from the sheet's up (a strung dot: square to its
    /// line, 0–180°); `None` for a cross (vertical beds), a circled cross (horizontal beds) or a
    /// filled mark.
    pub dip_direction: Option<f64>,
    /// 0–1: how well its lengths and width (a mark: its size, squareness, fill and taper) agree
    /// with its symbol's.
    pub confidence: f64,
}

/// A sample's ink as it reads on its paper.
pub struct SampleInk {
    /// Its pixels in CIELAB.
    labs: Vec<[f64; 3]>,
    /// Its paper: the median of its lightest pixels, in CIELAB.
    paper: [f64; 3],
    /// Each pixel's colour difference from the paper.
    strength: Vec<f64>,
    /// The largest of them.
    strongest: f64,
    /// The ink's colour: the median of the pixels within a tenth of the strongest.
    core: (u8, u8, u8),
    /// The sample's width and height in pixels.
    size: (usize, usize),
}

impl SampleInk {
    /// `sample`'s ink, or `None` when nothing on it stands out from its paper by a line's colour
    /// difference.
    fn of(sample: &Rgb) -> Option<SampleInk> {
        let pixels: Vec<(u8, u8, u8)> = sample.pixels.chunks_exact(3).map(|p| (p[0], p[1], p[2])).collect();
        let labs: Vec<[f64; 3]> = pixels.iter().map(|&p| lab(p)).collect();
        let lightest = labs.iter().map(|l| l[0]).fold(0.0, f64::max);
        let paper = lab(crate::colour::median_colour(pixels.iter().zip(&labs).filter(|(_, l)| l[0] >= lightest - 8.0).map(|(p, _)| *p))?);
        let strength: Vec<f64> = labs.iter().map(|l| delta_e(*l, paper)).collect();
        let strongest = strength.iter().copied().fold(0.0, f64::max);
        if strongest < super::LINE_DELTA_E {
            return None;
        }
        let core = crate::colour::median_colour(pixels.iter().zip(&strength).filter(|(_, s)| **s >= 0.9 * strongest).map(|(p, _)| *p))?;
        Some(SampleInk { labs, paper, strength, strongest, core, size: (sample.width as usize, sample.height as usize) })
    }

    /// The pixels of its ink's colour (a line's stroke pixels, as the map's are marked).
    fn mask(&self) -> Vec<u8> {
        super::stroke_pixels(&self.labs, lab(self.core), self.paper, self.size.0)
    }
}

/// The colour a point symbol's sample is printed in (as [`PointPrompt::calibrated`] reads it),
/// whether or not its shape shows.
pub fn sample_ink(sample: &Rgb) -> Option<(u8, u8, u8)> {
    SampleInk::of(sample).map(|ink| ink.core)
}

/// A filled mark whose top rows hold less than this share of its bottom rows' ink is a triangle
/// on its base (about a half; a dot about 1).
const TRIANGLE_TAPER: f64 = 0.75;

/// The widest gap in a one-pixel stroke's ink (the few pixels a mask breaks it by) that a strike
/// line measured on its sample runs across, in pixels.
const SPAN_GAP_PX: f64 = 2.0;

/// A direction (rows downwards) in degrees clockwise from the sheet's up, 0–360.
fn bearing((dx, dy): (f64, f64)) -> f64 {
    let degrees = dx.atan2(-dy).to_degrees().rem_euclid(360.0);
    (degrees * 10.0).round() / 10.0 % 360.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detectors_taking_ink_come_before_those_reading_the_skeleton_and_every_point_shape_has_one() {
        let reads: Vec<Reads> = DETECTORS.iter().map(|detector| detector.reads()).collect();
        assert!(reads.windows(2).all(|pair| pair[0] <= pair[1]), "{reads:?}");
        for shape in [Shape::Tick, Shape::Cross, Shape::CircledCross, Shape::Filled, Shape::Strung] {
            assert!(DETECTORS.iter().any(|detector| detector.draws(shape)), "{shape:?}");
        }
        let mut names: Vec<&str> = DETECTORS.iter().map(|detector| detector.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), DETECTORS.len(), "one name each");
    }
}
