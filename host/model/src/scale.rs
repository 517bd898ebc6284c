//! One scale per sheet: how many paper millimetres a pixel of the scan spans, estimated from what
//! the sheet prints (its scale ratio through its georeference, its type, its explanation's
//! symbols) and reconciled into one figure the extraction reports.
//!
//! Invariants: pure arithmetic; an estimate is positive and finite or not made; the reconciled
//! scale is one of its sources' figures, never a blend of a sure source with an unsure one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The height of a sheet's body type as OCR boxes a line of it, in paper millimetres: a map's
/// labels and explanation are set in 6–8 point type (2.1–2.8 mm from ascender to descender).
pub const TYPE_MM: f64 = 2.5;

/// Millimetres in an inch, for a scale as dots per inch.
const MM_PER_INCH: f64 = 25.4;

/// What a scale estimate was measured on, from the surest to the least sure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScaleSource {
    /// The printed scale ratio (1:24,000) with the ground a pixel spans through the map's
    /// georeference: exact up to the georeference's error.
    PrintedRatio,
    /// The explanation's symbols measured on their samples against the sizes the catalog gives
    /// them (publishers draw a symbol 1.5–4 mm: within a factor of two).
    SymbolSamples,
    /// The height of the sheet's type (within a factor of about 1.5).
    TypeHeight,
}

/// One estimate of a sheet's scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaleEstimate {
    /// What it was measured on.
    pub source: ScaleSource,
    /// Paper millimetres per pixel.
    pub mm_per_px: f64,
    /// What was measured ("1:24000 with 2.03 m of ground a pixel", "type 28.0 px tall").
    pub measured: String,
}

impl ScaleEstimate {
    /// From the printed scale `ratio` (the `N` of `1:N`) and the ground a pixel spans, in metres.
    pub fn from_ratio(ratio: u64, ground_m_per_px: f64) -> Option<ScaleEstimate> {
        let mm_per_px = ground_m_per_px * 1000.0 / ratio as f64;
        ScaleEstimate::made(ScaleSource::PrintedRatio, mm_per_px, format!("1:{ratio} with {ground_m_per_px:.2} m of ground a pixel"))
    }

    /// From the height of the sheet's type as OCR boxes its lines, in pixels ([`TYPE_MM`]).
    pub fn from_type(type_px: f64) -> Option<ScaleEstimate> {
        ScaleEstimate::made(ScaleSource::TypeHeight, TYPE_MM / type_px, format!("type {type_px:.1} px tall"))
    }

    /// From an explanation's `symbol` measured `measured_px` on its sample, the catalog drawing
    /// it `size_mm`.
    pub fn from_symbol(symbol: &str, size_mm: f64, measured_px: f64) -> Option<ScaleEstimate> {
        let measured = format!("{symbol}: {measured_px:.1} px for {size_mm} mm");
        ScaleEstimate::made(ScaleSource::SymbolSamples, size_mm / measured_px, measured)
    }

    /// An estimate of `mm_per_px` when it is a positive, finite figure.
    fn made(source: ScaleSource, mm_per_px: f64, measured: String) -> Option<ScaleEstimate> {
        (mm_per_px.is_finite() && mm_per_px > 0.0).then_some(ScaleEstimate { source, mm_per_px, measured })
    }
}

/// A sheet's scale, reconciled from its estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SheetScale {
    /// Paper millimetres per pixel.
    pub mm_per_px: f64,
    /// The same as the scan's dots per inch.
    pub dpi: f64,
    /// The source it was taken from: the surest that gave an estimate.
    pub source: ScaleSource,
    /// How far the sources disagree: the largest source's figure over the smallest (1 when they
    /// agree, or when there is one).
    pub spread: f64,
    /// Every estimate made.
    pub estimates: Vec<ScaleEstimate>,
}

impl SheetScale {
    /// The scale `estimates` give: the median of the surest source's figures (a printed ratio
    /// through the georeference, else the explanation's symbols, else the type), with each
    /// source's median compared for the spread; `None` without an estimate.
    pub fn reconciled(estimates: Vec<ScaleEstimate>) -> Option<SheetScale> {
        let median_of = |source: ScaleSource| {
            let mut figures: Vec<f64> = estimates.iter().filter(|e| e.source == source).map(|e| e.mm_per_px).collect();
            figures.sort_by(f64::total_cmp);
            figures.get(figures.len() / 2).copied()
        };
        let sources = [ScaleSource::PrintedRatio, ScaleSource::SymbolSamples, ScaleSource::TypeHeight];
        let medians: Vec<(ScaleSource, f64)> = sources.into_iter().filter_map(|source| Some((source, median_of(source)?))).collect();
        let &(source, mm_per_px) = medians.first()?;
        let (least, most) = medians.iter().fold((f64::INFINITY, 0.0_f64), |(least, most), &(_, figure)| (least.min(figure), most.max(figure)));
        let round = |value: f64, places: i32| (value * 10_f64.powi(places)).round() / 10_f64.powi(places);
        Some(SheetScale {
            mm_per_px: round(mm_per_px, 5),
            dpi: round(MM_PER_INCH / mm_per_px, 1),
            source,
            spread: round(most / least, 2),
            estimates: estimates.into_iter().map(|e| ScaleEstimate { mm_per_px: round(e.mm_per_px, 5), ..e }).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_ratio_through_the_georeference_wins_and_the_others_say_how_far_they_differ() {
        // A 1:24,000 sheet scanned at 300 dpi: a pixel spans 0.0847 mm of paper, 2.03 m of ground.
        let ratio = ScaleEstimate::from_ratio(24_000, 2.032).expect("a ratio");
        let typed = ScaleEstimate::from_type(30.0).expect("a type height");
        let symbols = [ScaleEstimate::from_symbol("strike and dip of beds", 4.0, 44.0), ScaleEstimate::from_symbol("sinkhole", 2.0, 25.0)];
        let scale = SheetScale::reconciled([vec![typed.clone(), ratio], symbols.into_iter().flatten().collect()].concat()).expect("a scale");
        assert_eq!(scale.source, ScaleSource::PrintedRatio);
        assert!((scale.mm_per_px - 0.08467).abs() < 1e-4 && (scale.dpi - 300.0).abs() < 0.5, "{scale:?}");
        assert!(scale.spread > 1.0 && scale.spread < 1.2, "{scale:?}");
        assert_eq!(scale.estimates.len(), 4);

        // Without a georeference, the symbols; without symbols, the type.
        let from_symbols = SheetScale::reconciled(vec![typed.clone(), ScaleEstimate::from_symbol("sinkhole", 2.0, 25.0).unwrap()]).unwrap();
        assert_eq!((from_symbols.source, from_symbols.mm_per_px), (ScaleSource::SymbolSamples, 0.08));
        let from_type = SheetScale::reconciled(vec![typed]).unwrap();
        assert_eq!((from_type.source, from_type.spread), (ScaleSource::TypeHeight, 1.0));
        assert!((from_type.mm_per_px - TYPE_MM / 30.0).abs() < 1e-4);
    }

    #[test]
    fn nothing_measured_is_no_scale_and_a_zero_is_no_estimate() {
        assert_eq!(SheetScale::reconciled(Vec::new()), None);
        assert_eq!(ScaleEstimate::from_type(0.0), None);
        assert_eq!(ScaleEstimate::from_symbol("sinkhole", 2.0, 0.0), None);
        assert_eq!(ScaleEstimate::from_ratio(24_000, f64::NAN), None);
    }

    #[test]
    fn the_same_sheet_at_twice_the_resolution_has_half_the_millimetres_a_pixel() {
        let at = |factor: f64| {
            SheetScale::reconciled(vec![
                ScaleEstimate::from_type(20.0 * factor).unwrap(),
                ScaleEstimate::from_symbol("strike and dip of beds", 4.0, 28.0 * factor).unwrap(),
            ])
            .unwrap()
        };
        let (once, twice) = (at(1.0), at(2.0));
        assert!((once.mm_per_px / twice.mm_per_px - 2.0).abs() < 1e-3, "{once:?} {twice:?}");
        assert_eq!(once.spread, twice.spread);
    }
}
