//! Labels on the annotated preview: a 5×7 bitmap font (capitals, digits,
//! `_` and space, drawn here for this purpose) so a person or a vision model
//! can read each box's class without a key.

use super::Rgb;

/// Glyph rows, top to bottom, `#` for ink; 5 columns each.
const GLYPHS: [(char, [&str; 7]); 38] = [
    ('A', [" ### ", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"]),
    ('B', ["#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### "]),
    ('C', [" ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### "]),
    ('D', ["#### ", "#   #", "#   #", "#   #", "#   #", "#   #", "#### "]),
    ('E', ["#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#####"]),
    ('F', ["#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#    "]),
    ('G', [" ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####"]),
    ('H', ["#   #", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"]),
    ('I', [" ### ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "]),
    ('J', ["  ###", "   # ", "   # ", "   # ", "   # ", "#  # ", " ##  "]),
    ('K', ["#   #", "#  # ", "# #  ", "##   ", "# #  ", "#  # ", "#   #"]),
    ('L', ["#    ", "#    ", "#    ", "#    ", "#    ", "#    ", "#####"]),
    ('M', ["#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #"]),
    ('N', ["#   #", "##  #", "# # #", "#  ##", "#   #", "#   #", "#   #"]),
    ('O', [" ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "]),
    ('P', ["#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    "]),
    ('Q', [" ### ", "#   #", "#   #", "#   #", "# # #", "#  # ", " ## #"]),
    ('R', ["#### ", "#   #", "#   #", "#### ", "# #  ", "#  # ", "#   #"]),
    ('S', [" ####", "#    ", "#    ", " ### ", "    #", "    #", "#### "]),
    ('T', ["#####", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  "]),
    ('U', ["#   #", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "]),
    ('V', ["#   #", "#   #", "#   #", "#   #", "#   #", " # # ", "  #  "]),
    ('W', ["#   #", "#   #", "#   #", "# # #", "# # #", "# # #", " # # "]),
    ('X', ["#   #", "#   #", " # # ", "  #  ", " # # ", "#   #", "#   #"]),
    ('Y', ["#   #", "#   #", " # # ", "  #  ", "  #  ", "  #  ", "  #  "]),
    ('Z', ["#####", "    #", "   # ", "  #  ", " #   ", "#    ", "#####"]),
    ('0', [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "]),
    ('1', ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "]),
    ('2', [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"]),
    ('3', ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "]),
    ('4', ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "]),
    ('5', ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "]),
    ('6', ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "]),
    ('7', ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "]),
    ('8', [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "]),
    ('9', [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "]),
    ('_', ["     ", "     ", "     ", "     ", "     ", "     ", "#####"]),
    (' ', ["     ", "     ", "     ", "     ", "     ", "     ", "     "]),
];

/// Font pixels per glyph pixel.
const SCALE: u32 = 2;
/// Padding around the text, in image pixels.
const PAD: u32 = 2;

fn glyph(c: char) -> Option<&'static [&'static str; 7]> {
    GLYPHS.iter().find(|(g, _)| *g == c.to_ascii_uppercase()).map(|(_, rows)| rows)
}

/// The label's width and height in image pixels.
pub fn size(text: &str) -> (u32, u32) {
    let glyphs = text.chars().count() as u32;
    (glyphs * 6 * SCALE - SCALE + 2 * PAD, 7 * SCALE + 2 * PAD)
}

/// Draws `text` (capitals; characters the font lacks are left blank) on a box of `background`
/// with its top-left corner at `(x, y)`, in black or white, whichever reads better; clipped to the image.
pub fn draw(image: &mut Rgb, x: u32, y: u32, text: &str, background: [u8; 3]) {
    let (width, height) = size(text);
    let luminance = 299 * background[0] as u32 + 587 * background[1] as u32 + 114 * background[2] as u32;
    let ink = if luminance > 128_000 { [0, 0, 0] } else { [255, 255, 255] };
    let mut put = |px: u32, py: u32, colour: [u8; 3]| {
        if px < image.width && py < image.height {
            let at = ((py * image.width + px) * 3) as usize;
            image.pixels[at..at + 3].copy_from_slice(&colour);
        }
    };
    for dy in 0..height {
        for dx in 0..width {
            put(x + dx, y + dy, background);
        }
    }
    for (index, c) in text.chars().enumerate() {
        let Some(rows) = glyph(c) else { continue };
        let left = x + PAD + index as u32 * 6 * SCALE;
        for (row, line) in rows.iter().enumerate() {
            for (column, cell) in line.bytes().enumerate() {
                if cell == b'#' {
                    for (sx, sy) in (0..SCALE).flat_map(|sx| (0..SCALE).map(move |sy| (sx, sy))) {
                        put(left + column as u32 * SCALE + sx, y + PAD + row as u32 * SCALE + sy, ink);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glyph_is_five_by_seven_and_class_names_are_covered() {
        assert!(GLYPHS.iter().all(|(_, rows)| rows.iter().all(|row| row.len() == 5)));
        for class in geomap_model::page::COMPONENT_CLASSES {
            assert!(class.chars().all(|c| glyph(c).is_some()), "{class}");
        }
    }

    #[test]
    fn a_label_is_ink_on_its_background_and_clipped_to_the_image() {
        let mut image = Rgb { width: 40, height: 20, pixels: vec![200; 40 * 20 * 3] };
        draw(&mut image, 0, 0, "L", [0, 0, 128]);
        fn at(image: &Rgb, x: u32, y: u32) -> [u8; 3] {
            let i = ((y * image.width + x) * 3) as usize;
            [image.pixels[i], image.pixels[i + 1], image.pixels[i + 2]]
        }
        assert_eq!(size("L"), (14, 18));
        assert_eq!(at(&image, 0, 0), [0, 0, 128], "padding is background");
        assert_eq!(at(&image, PAD, PAD), [255, 255, 255], "the L's top-left is white ink on navy");
        assert_eq!(at(&image, PAD + 2 * SCALE, PAD), [0, 0, 128], "the L has no ink right of its stem at the top");
        assert_eq!(at(&image, PAD + 4 * SCALE, PAD + 6 * SCALE), [255, 255, 255], "its foot runs to the last column");
        assert_eq!(at(&image, 20, 0), [200, 200, 200], "nothing drawn past the label");
        draw(&mut image, 35, 15, "WIDE LABEL", [255, 255, 0]); // runs off the image without panicking
        assert_eq!(at(&image, 39, 19), [255, 255, 0]);
    }
}
