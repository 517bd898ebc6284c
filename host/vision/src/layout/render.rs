//! Pictures of a layout for people and vision models: a crop of each component
//! and an annotated preview (the scan downscaled, every box drawn in its
//! class's colour, each component labelled with its index and class).
//!
//! Invariants: a crop is the scan's own pixels, downscaled (averaged) only when
//! its longer side is over [`CROP_MAX_SIDE`]; the preview's longer side is at
//! most [`PREVIEW_SIDE`]; labels are drawn last, so no outline crosses one.

use std::path::Path;

use geomap_model::page::{COMPONENT_CLASSES, PixelBox};

use crate::image::{Resampling, Rgb, label};

/// The longer side of the annotated preview, in pixels.
pub const PREVIEW_SIDE: u32 = 1600;
/// The longest side of a component's crop: larger components are downscaled to it (vision models
/// read at most about 2000 pixels a side, and a resource blob is at most 32 MiB).
pub const CROP_MAX_SIDE: u32 = 2048;

/// The preview colour of each component class, and of legend swatches and text.
pub fn class_colour(class: &str) -> [u8; 3] {
    match class {
        "title" => [230, 25, 75],
        "main_map" => [60, 180, 75],
        "legend" => [0, 130, 200],
        "scale" => [245, 130, 48],
        "index_map" => [145, 30, 180],
        "cross_section" => [70, 240, 240],
        "stratigraphic_column" => [240, 50, 230],
        "swatch" => [255, 225, 25],
        "text" => [128, 128, 128],
        _ => [0, 0, 0],
    }
}

/// Every class the preview draws (the components', then `swatch` and `text`), with its colour.
pub fn class_colours() -> Vec<(&'static str, (u8, u8, u8))> {
    COMPONENT_CLASSES.iter().copied().chain(["swatch", "text"]).map(|class| (class, rgb(class_colour(class)))).collect()
}

fn rgb([r, g, b]: [u8; 3]) -> (u8, u8, u8) {
    (r, g, b)
}

/// Writes the crop of `bbox` (downscaled to [`CROP_MAX_SIDE`] when larger) to `path` as PNG and
/// returns its pixels per scan pixel; `None` (nothing written) for a box with no pixels.
pub fn write_crop(path: &Path, image: &Rgb, bbox: &PixelBox) -> Result<Option<f64>, String> {
    let region = bbox.pixels(image.width, image.height);
    let (width, height) = (region.2 - region.0, region.3 - region.1);
    if width == 0 || height == 0 {
        return Ok(None);
    }
    let scale = (f64::from(CROP_MAX_SIDE) / f64::from(width.max(height))).min(1.0);
    let written = if scale < 1.0 {
        let (small_width, small_height) = (((f64::from(width) * scale).round() as u32).max(1), ((f64::from(height) * scale).round() as u32).max(1));
        let small = image.resized_region(region, small_width, small_height, Resampling::Averaged);
        small.write_png(path, (0, 0, small.width, small.height))
    } else {
        image.write_png(path, region)
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    written.map_err(|error| format!("{name}: {error}"))?;
    Ok(Some((scale * 1e4).round() / 1e4))
}

/// Writes the annotated preview to `path`: the scan downscaled, the legend boxes, then the
/// components' boxes, then their labels (`index class`).
pub fn write_preview(path: &Path, image: &Rgb, components: &[(PixelBox, String)], legend_boxes: &[(PixelBox, &str)]) -> Result<(), String> {
    let scale = (f64::from(PREVIEW_SIDE) / f64::from(image.width.max(image.height))).min(1.0);
    let mut preview = image.resized(((f64::from(image.width) * scale).round() as u32).max(1), ((f64::from(image.height) * scale).round() as u32).max(1));
    let scaled = |bbox: &PixelBox| PixelBox { x0: bbox.x0 * scale, y0: bbox.y0 * scale, x1: bbox.x1 * scale, y1: bbox.y1 * scale };
    for (bbox, kind) in legend_boxes {
        preview.outline(&scaled(bbox), class_colour(kind), 2);
    }
    for (bbox, class) in components {
        preview.outline(&scaled(bbox), class_colour(class), 3);
    }
    // Labels last, so no outline crosses one: above the box when there is room, else inside its corner.
    for (index, (bbox, class)) in components.iter().enumerate() {
        let text = format!("{index} {class}");
        let (x0, y0, ..) = scaled(bbox).pixels(preview.width, preview.height);
        let height = label::size(&text).1;
        label::draw(&mut preview, x0, if y0 >= height { y0 - height } else { y0 }, &text, class_colour(class));
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    preview.write_png(path, (0, 0, preview.width, preview.height)).map_err(|error| format!("{name}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_component_is_cropped_at_most_crop_max_side_and_an_empty_one_not_at_all() {
        let folder = tempfile::tempdir().unwrap();
        let image = Rgb { width: 4100, height: 100, pixels: vec![200; 4100 * 100 * 3] };
        let path = folder.path().join("component-0-main_map.png");
        let scale = write_crop(&path, &image, &PixelBox { x0: 0.0, y0: 0.0, x1: 4096.0, y1: 100.0 }).unwrap().unwrap();
        assert_eq!(scale, 0.5);
        let written = ::image::open(&path).unwrap();
        assert_eq!((written.width(), written.height()), (2048, 50));
        assert_eq!(write_crop(&folder.path().join("none.png"), &image, &PixelBox { x0: 10.0, y0: 10.0, x1: 10.0, y1: 50.0 }).unwrap(), None);
        assert!(!folder.path().join("none.png").exists());
    }

    #[test]
    fn the_preview_is_at_most_preview_side_and_draws_each_class_in_its_colour() {
        let folder = tempfile::tempdir().unwrap();
        let image = Rgb { width: 3200, height: 1600, pixels: vec![255; 3200 * 1600 * 3] };
        let path = folder.path().join("preview.png");
        let main_map = PixelBox { x0: 100.0, y0: 200.0, x1: 2000.0, y1: 1400.0 };
        write_preview(&path, &image, &[(main_map, "main_map".to_owned())], &[]).unwrap();
        let preview = ::image::open(&path).unwrap().into_rgb8();
        assert_eq!(preview.dimensions(), (1600, 800));
        let [r, g, b] = class_colour("main_map");
        assert_eq!(preview.get_pixel(500, 400).0, [255, 255, 255], "inside the box stays the scan");
        assert_eq!(preview.get_pixel(51, 400).0, [r, g, b], "the box's left side, scaled by half");
        assert_eq!(class_colours().len(), COMPONENT_CLASSES.len() + 2);
    }
}
