//! A map's layout read from its words and colours, for servers without PEACE's
//! detectors: the legend from its heading and its column of unit codes beside
//! descriptions (`legend`), each swatch's extent and colour from the area
//! around its code (`swatches`), the main map as the largest region of
//! coloured polygons (`main_map`), and the title as the largest type in the
//! margins (`title`), the scale, cross sections, correlation chart and index map
//! from their captions ([`parts`]), the explanation's line and point symbols
//! ([`symbols`]); [`terms`] reads a description's ages and rock names,
//! [`metadata`] what the sheet says about itself, and [`render`] draws a
//! layout's crops and annotated preview.
//!
//! Invariant: pure functions of the recognised lines and the scan's pixels;
//! every threshold is relative to the type's height, so the rules hold at any
//! scan resolution.

mod legend;
mod main_map;
pub mod metadata;
pub mod numbers;
pub mod parts;
pub mod render;
mod swatches;
pub mod symbols;
pub mod terms;
mod title;

use crate::image::Rgb;
use crate::ocr::reader::TextLine;
use geomap_model::page::PixelBox;

pub use legend::{legend_heading, unit_code};

/// The layout the words give.
#[derive(Debug, Clone, PartialEq)]
pub struct WordsLayout {
    /// The title, when one line of large type stands out in the margins.
    pub title: Option<TitleText>,
    /// Every legend column found.
    pub legends: Vec<TextLegend>,
    /// The largest region of coloured polygons outside the legends.
    pub main_map: Option<PixelBox>,
    /// The scale, cross sections, correlation chart and index map, found from their captions.
    pub parts: Vec<parts::SheetPart>,
    /// The explanation's line and point symbols, each with its sample measured.
    pub symbols: Vec<symbols::SymbolEntry>,
}

/// The title's words and box.
#[derive(Debug, Clone, PartialEq)]
pub struct TitleText {
    /// Its lines, joined.
    pub text: String,
    /// Their box.
    pub bbox: PixelBox,
}

/// One legend column.
#[derive(Debug, Clone, PartialEq)]
pub struct TextLegend {
    /// Its heading, codes, descriptions and swatches together.
    pub bbox: PixelBox,
    /// The heading above it, as read, when there is one.
    pub heading: Option<String>,
    /// Its units, top to bottom.
    pub entries: Vec<UnitEntry>,
}

/// One unit of a legend.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitEntry {
    /// The unit's code, as read ("Qal", "Pk"); none when its swatch holds a code the recogniser
    /// cannot read (the entry is still a unit, with its description and colour).
    pub code: Option<String>,
    /// The code's box.
    pub code_box: PixelBox,
    /// The description's lines, joined.
    pub description: String,
    /// The description's box.
    pub description_box: PixelBox,
    /// The swatch: the area of the code's colour around it (the code's own box when it sits on paper).
    pub swatch: PixelBox,
    /// The swatch's colour; none when the code sits on paper with no coloured box beside it.
    pub colour: Option<(u8, u8, u8)>,
    /// The heading the unit is listed under ("Supai Group (Lower Permian, …)"), when its
    /// description is indented beneath one.
    pub group: Option<String>,
}

/// Reads the layout from `lines` (the whole scan's) and the scan's pixels. `read_codes` reads
/// the codes of swatches the text detector found no words in: it gets each swatch's inside (in the
/// scan's pixels) and returns the lines it read there, each with the box it was given.
pub fn read_layout<E>(lines: &[TextLine], image: &Rgb, mut read_codes: impl FnMut(&[PixelBox]) -> Result<Vec<TextLine>, E>) -> Result<WordsLayout, E> {
    let legends = legend::legends(lines, image, &mut read_codes)?;
    let legend_boxes: Vec<PixelBox> = legends.iter().map(|legend| legend.bbox).collect();
    let main_map = main_map::main_map(image, &legend_boxes);
    let title = title::title(lines, main_map.as_ref(), &legend_boxes);
    let mut taken: Vec<PixelBox> = legend_boxes.clone();
    taken.extend(main_map.iter().chain(title.as_ref().map(|t| &t.bbox)).copied());
    let parts = parts::parts(lines, image, &taken);
    // An explanation's entries lie outside the main map and the parts (an index map's place names).
    let beside: Vec<PixelBox> = main_map.iter().copied().chain(parts.iter().map(|part| part.bbox)).collect();
    let symbols = symbols::symbol_entries(lines, image, &beside);
    Ok(WordsLayout { title, legends, main_map, parts, symbols })
}

fn height(bbox: &PixelBox) -> f64 {
    bbox.y1 - bbox.y0
}

fn centre_x(bbox: &PixelBox) -> f64 {
    (bbox.x0 + bbox.x1) / 2.0
}

fn centre_y(bbox: &PixelBox) -> f64 {
    (bbox.y0 + bbox.y1) / 2.0
}

fn union(a: &PixelBox, b: &PixelBox) -> PixelBox {
    PixelBox { x0: a.x0.min(b.x0), y0: a.y0.min(b.y0), x1: a.x1.max(b.x1), y1: a.y1.max(b.y1) }
}

fn overlaps(a: &PixelBox, b: &PixelBox) -> bool {
    a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

/// Whether a line runs across the page (a vertical one's box height is its length, not its type size).
fn horizontal(bbox: &PixelBox) -> bool {
    bbox.x1 - bbox.x0 > bbox.y1 - bbox.y0
}

/// Lines and pictures the tests of this module's parts are built from.
#[cfg(test)]
mod fixtures {
    use crate::image::Rgb;
    use crate::ocr::reader::TextLine;
    use geomap_model::page::PixelBox;

    pub(super) fn line(text: &str, x0: f64, y0: f64, x1: f64, y1: f64) -> TextLine {
        TextLine { text: text.to_owned(), bbox: PixelBox { x0, y0, x1, y1 }, score: 0.95 }
    }

    /// A white image with `boxes` filled in their colours.
    pub(super) fn image(width: u32, height: u32, boxes: &[(PixelBox, (u8, u8, u8))]) -> Rgb {
        let mut image = Rgb { width, height, pixels: vec![255; (width * height * 3) as usize] };
        paint(&mut image, boxes);
        image
    }

    /// Fills `boxes` of `image` in their colours.
    pub(super) fn paint(image: &mut Rgb, boxes: &[(PixelBox, (u8, u8, u8))]) {
        for (bbox, colour) in boxes {
            let (x0, y0, x1, y1) = bbox.pixels(image.width, image.height);
            let width = image.width;
            for at in (y0..y1).flat_map(|y| (x0..x1).map(move |x| ((y * width + x) * 3) as usize)) {
                image.pixels[at..at + 3].copy_from_slice(&[colour.0, colour.1, colour.2]);
            }
        }
    }

    pub(super) fn b(x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        PixelBox { x0, y0, x1, y1 }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{b, image, line};
    use super::main_map::main_map;
    use super::title::title;

    #[test]
    fn the_main_map_is_the_largest_coloured_region_and_the_title_the_largest_type_outside_it() {
        let picture = image(
            1000,
            800,
            &[(b(50.0, 50.0, 450.0, 450.0), (200, 150, 100)), (b(450.0, 50.0, 650.0, 450.0), (100, 180, 220)), (b(800.0, 600.0, 900.0, 650.0), (250, 0, 0))],
        );
        let map = main_map(&picture, &[]).expect("a main map");
        assert!(map.x0 <= 50.0 && map.x1 >= 650.0 && map.y0 <= 50.0 && map.y1 >= 450.0 && map.x1 <= 660.0, "{map:?}");
        let lines = [
            line("Geologic map of the", 200.0, 500.0, 600.0, 540.0),
            line("Testing Quadrangle", 250.0, 545.0, 550.0, 584.0),
            line("Huge labelling inside", 100.0, 100.0, 400.0, 160.0),
            line("by A. Author and B. Author", 300.0, 600.0, 500.0, 620.0),
            line("FLATMONOCLINE", 900.0, 500.0, 930.0, 700.0),      // a label running up the page
            line("CROSS SECTION A-A'", 600.0, 700.0, 990.0, 760.0), // a part's caption in larger type
        ];
        let title = title(&lines, Some(&map), &[]).expect("a title");
        assert_eq!(title.text, "Geologic map of the Testing Quadrangle");
    }
}
