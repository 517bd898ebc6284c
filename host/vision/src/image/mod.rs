//! The scan as pixels: [`Rgb`] (a decoded image, row-major), [`decode`] with
//! the `image` crate's limits set first, crops, turns and resizes with
//! `fast_image_resize` ([`Resampling::Interpolated`] for model input, bilinear
//! between four pixels as OpenCV's `INTER_LINEAR`; [`Resampling::Averaged`] for
//! pictures people and vision models look at), PNG output; the tiled pixel
//! store ([`store`]) and the preview's bitmap font ([`label`]).
//!
//! Invariants: a scan larger than the caller's pixel limit is refused before its
//! pixels are allocated; a region is read in place, never copied at full size
//! to be resized; nothing here knows of models, detection or OCR.

pub mod label;
pub mod store;

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::error::VisionError;
use geomap_model::page::PixelBox;

/// How a resize reads its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resampling {
    /// Bilinear convolution over every source pixel (anti-aliased): pictures for people and vision models.
    Averaged,
    /// Bilinear interpolation between the four nearest source pixels, as OpenCV's `INTER_LINEAR`:
    /// what PEACE's predictor (ultralytics' `LetterBox`) gives the models, and far cheaper on a large scan.
    Interpolated,
}

/// A decoded scan: RGB, row-major.
#[derive(PartialEq, Eq)]
pub struct Rgb {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 3` bytes.
    pub pixels: Vec<u8>,
}

/// Decodes an image file (read from an opened handle) to RGB, refusing before
/// allocating when it is larger than `max_pixels` (the decoder's own limits are set first).
pub fn decode(file: &std::fs::File, max_pixels: u64) -> Result<Rgb, VisionError> {
    let mut file = file.try_clone().map_err(|error| VisionError::Decode(format!("cannot read the scan: {error}")))?;
    std::io::Seek::rewind(&mut file).map_err(|error| VisionError::Decode(format!("cannot read the scan: {error}")))?;
    let mut reader = ::image::ImageReader::new(std::io::BufReader::new(file))
        .with_guessed_format()
        .map_err(|error| VisionError::Decode(format!("cannot read the scan: {error}")))?;
    let mut limits = ::image::Limits::default();
    limits.max_alloc = Some(max_pixels.saturating_mul(8)); // RGBA16 at most, per decoded pixel
    let side = max_pixels.min(u32::MAX as u64) as u32;
    limits.max_image_width = Some(side);
    limits.max_image_height = Some(side);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|error| VisionError::Decode(format!("cannot decode the scan: {error}")))?;
    let rgb = decoded.into_rgb8();
    let (width, height) = rgb.dimensions();
    Ok(Rgb { width, height, pixels: rgb.into_raw() })
}

/// A pixel's grey level (ITU-R BT.601 luma, 0–255) from its red, green and blue.
pub fn grey(pixel: &[u8]) -> u8 {
    ((299 * u32::from(pixel[0]) + 587 * u32::from(pixel[1]) + 114 * u32::from(pixel[2])) / 1000) as u8
}

impl Rgb {
    /// The part of the image inside `(x0, y0, x1, y1)` (whole pixels, inside the image).
    pub fn crop(&self, (x0, y0, x1, y1): (u32, u32, u32, u32)) -> Rgb {
        let width = x1 - x0;
        let mut pixels = Vec::with_capacity((width * (y1 - y0) * 3) as usize);
        for y in y0..y1 {
            let start = ((y * self.width + x0) * 3) as usize;
            pixels.extend_from_slice(&self.pixels[start..start + (width * 3) as usize]);
        }
        Rgb { width, height: y1 - y0, pixels }
    }

    /// The image turned a quarter anticlockwise (its top row becomes its left column, read bottom up).
    pub fn turned_anticlockwise(&self) -> Rgb {
        let (width, height) = (self.height, self.width);
        let mut pixels = Vec::with_capacity(self.pixels.len());
        for y in 0..height {
            let source_x = self.width - 1 - y;
            for x in 0..width {
                let at = ((x * self.width + source_x) * 3) as usize;
                pixels.extend_from_slice(&self.pixels[at..at + 3]);
            }
        }
        Rgb { width, height, pixels }
    }

    /// The image upside down (half a turn).
    pub fn turned_over(&self) -> Rgb {
        let mut turned: Vec<[u8; 3]> = self.pixels.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
        turned.reverse();
        Rgb { width: self.width, height: self.height, pixels: turned.concat() }
    }

    /// A `width × height` image whose middle is this one's `centre` and whose rows run along
    /// `(cos, sin)` (a unit direction in this image), sampled bilinearly; white beyond the edges.
    pub fn turned_about(&self, centre: (f64, f64), (cos, sin): (f64, f64), (width, height): (u32, u32)) -> Rgb {
        let mut pixels = Vec::with_capacity((width * height * 3) as usize);
        let value = |x: i64, y: i64, channel: usize| {
            if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
                return 255.0;
            }
            f64::from(self.pixels[3 * (y as usize * self.width as usize + x as usize) + channel])
        };
        for row in 0..height {
            for column in 0..width {
                let (u, v) = (f64::from(column) + 0.5 - f64::from(width) / 2.0, f64::from(row) + 0.5 - f64::from(height) / 2.0);
                let (x, y) = (centre.0 + u * cos - v * sin - 0.5, centre.1 + u * sin + v * cos - 0.5);
                let (left, top) = (x.floor(), y.floor());
                let (fx, fy) = (x - left, y - top);
                let (left, top) = (left as i64, top as i64);
                for channel in 0..3 {
                    let upper = value(left, top, channel) * (1.0 - fx) + value(left + 1, top, channel) * fx;
                    let lower = value(left, top + 1, channel) * (1.0 - fx) + value(left + 1, top + 1, channel) * fx;
                    pixels.push((upper * (1.0 - fy) + lower * fy).round() as u8);
                }
            }
        }
        Rgb { width, height, pixels }
    }

    /// Writes the region `(x0, y0, x1, y1)` (inside the image) as a PNG file, row by row from
    /// the image itself: a crop of a large scan is never copied whole.
    pub fn write_png(&self, path: &std::path::Path, (x0, y0, x1, y1): (u32, u32, u32, u32)) -> std::io::Result<()> {
        let file = std::io::BufWriter::new(std::fs::File::create(path)?);
        let mut encoder = png::Encoder::new(file, x1 - x0, y1 - y0);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
        let mut stream = writer.stream_writer().map_err(std::io::Error::other)?;
        for y in y0..y1 {
            let start = ((y * self.width + x0) * 3) as usize;
            std::io::Write::write_all(&mut stream, &self.pixels[start..start + ((x1 - x0) * 3) as usize])?;
        }
        stream.finish().map_err(std::io::Error::other)
    }

    /// The image resized to `width`×`height` for people to look at (bilinear, averaging every source pixel).
    pub fn resized(&self, width: u32, height: u32) -> Rgb {
        self.resized_region((0, 0, self.width, self.height), width, height, Resampling::Averaged)
    }

    /// The region `(x0, y0, x1, y1)` (whole pixels, inside the image, not empty) resized to
    /// `width`×`height`, read in place: the region is never copied at full size.
    /// Filters at its edges read the pixels around it, as a window into the scan would.
    pub fn resized_region(&self, (x0, y0, x1, y1): (u32, u32, u32, u32), width: u32, height: u32, resampling: Resampling) -> Rgb {
        self.resample((x0 as f64, y0 as f64, (x1 - x0) as f64, (y1 - y0) as f64), width, height, resampling)
    }

    /// The box `bbox` (fractions of a pixel kept, clamped to the image) resized to `width`×`height`
    /// by bilinear interpolation. A text line's box is read as found: rounding it outward to whole
    /// pixels adds up to two rows of margin, and on type 8 pixels high the recogniser then misreads
    /// (the USGS scan's "cation. These units are labeled" became "aionhits a w pibldldtdi").
    pub fn resized_box(&self, bbox: &PixelBox, width: u32, height: u32) -> Rgb {
        let (x0, y0) = (bbox.x0.clamp(0.0, self.width as f64 - 1.0), bbox.y0.clamp(0.0, self.height as f64 - 1.0));
        let (x1, y1) = (bbox.x1.clamp(x0 + 1.0, self.width as f64), bbox.y1.clamp(y0 + 1.0, self.height as f64));
        self.resample((x0, y0, x1 - x0, y1 - y0), width, height, Resampling::Interpolated)
    }

    /// The source window `(left, top, width, height)` resized to `width`×`height`.
    fn resample(&self, (left, top, window_w, window_h): (f64, f64, f64, f64), width: u32, height: u32, resampling: Resampling) -> Rgb {
        let source = ImageRef::new(self.width, self.height, &self.pixels, PixelType::U8x3).expect("the buffer is width × height × 3");
        let mut resized = Image::new(width, height, PixelType::U8x3);
        let algorithm = match resampling {
            Resampling::Averaged => ResizeAlg::Convolution(FilterType::Bilinear),
            Resampling::Interpolated => ResizeAlg::Interpolation(FilterType::Bilinear),
        };
        let options = ResizeOptions::new().resize_alg(algorithm).crop(left, top, window_w, window_h);
        Resizer::new().resize(&source, &mut resized, &options).expect("same pixel type, non-empty images");
        Rgb { width, height, pixels: resized.into_vec() }
    }

    /// The pixels of `bbox` (clipped to the image), row by row.
    pub(crate) fn pixels_in<'a>(&'a self, bbox: &PixelBox) -> impl Iterator<Item = (u8, u8, u8)> + 'a {
        let (x0, y0, x1, y1) = bbox.pixels(self.width, self.height);
        (y0..y1)
            .flat_map(move |y| (x0..x1).map(move |x| (y * self.width + x) as usize * 3))
            .map(move |at| (self.pixels[at], self.pixels[at + 1], self.pixels[at + 2]))
    }

    /// Draws the outline of `bbox` in `colour`, `thickness` pixels wide, inside the image.
    pub fn outline(&mut self, bbox: &PixelBox, colour: [u8; 3], thickness: u32) {
        let (x0, y0, x1, y1) = bbox.pixels(self.width, self.height);
        for y in y0..y1 {
            for x in x0..x1 {
                let edge = x < x0 + thickness || x + thickness >= x1 || y < y0 + thickness || y + thickness >= y1;
                if edge {
                    let at = ((y * self.width + x) * 3) as usize;
                    self.pixels[at..at + 3].copy_from_slice(&colour);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_samples_as_opencv_inter_linear() {
        // Halving 4 pixels: OpenCV samples source x = (x + 0.5) * 2 - 0.5, between pixels 0–1 and 2–3.
        let image = Rgb { width: 4, height: 1, pixels: [0, 100, 200, 250].iter().flat_map(|&v| [v, v, v]).collect() };
        let halved = image.resized_region((0, 0, 4, 1), 2, 1, Resampling::Interpolated);
        assert_eq!(halved.pixels, [50, 50, 50, 225, 225, 225]);
    }

    #[test]
    fn a_box_is_resampled_with_its_fractions() {
        // Grey levels 0, 60, 120, 180 at pixel centres 0.5, 1.5, 2.5, 3.5.
        let image = Rgb { width: 4, height: 1, pixels: [0, 60, 120, 180].iter().flat_map(|&v| [v, v, v]).collect() };
        let grey = |bbox: PixelBox| image.resized_box(&bbox, 2, 1).pixels.chunks_exact(3).map(|p| p[0]).collect::<Vec<u8>>();
        assert_eq!(grey(PixelBox { x0: 1.0, y0: 0.0, x1: 3.0, y1: 1.0 }), [60, 120], "whole pixels: the pixels themselves");
        assert_eq!(grey(PixelBox { x0: 0.5, y0: 0.0, x1: 2.5, y1: 1.0 }), [30, 90], "half a pixel left: halfway between");
    }

    #[test]
    fn a_picture_turned_about_a_point_runs_its_rows_along_the_direction_given() {
        // A 5×5 grey ramp: each pixel's grey is 10 × its column + its row.
        let image = Rgb { width: 5, height: 5, pixels: (0..25_u8).flat_map(|i| [10 * (i % 5) + i / 5; 3]).collect() };
        let grey = |turned: &Rgb| turned.pixels.chunks_exact(3).map(|p| p[0]).collect::<Vec<u8>>();
        // Level: the 3×3 middle as it is.
        assert_eq!(grey(&image.turned_about((2.5, 2.5), (1.0, 0.0), (3, 3))), [11, 21, 31, 12, 22, 32, 13, 23, 33]);
        // Rows running down the image: the first row is the column right of the middle, read
        // downwards (the picture turned a quarter anticlockwise).
        assert_eq!(grey(&image.turned_about((2.5, 2.5), (0.0, 1.0), (3, 3))), [31, 32, 33, 21, 22, 23, 11, 12, 13]);
        // Beyond the edges, white.
        assert_eq!(grey(&image.turned_about((0.5, 0.5), (1.0, 0.0), (3, 3)))[0], 255);
    }

    #[test]
    fn turning_moves_pixels_as_a_page_turns() {
        // 3×2: a b c / d e f (one grey level each).
        let image = Rgb { width: 3, height: 2, pixels: [1, 2, 3, 4, 5, 6].iter().flat_map(|&v| [v, v, v]).collect() };
        let quarter = image.turned_anticlockwise();
        assert_eq!((quarter.width, quarter.height), (2, 3));
        let grey: Vec<u8> = quarter.pixels.chunks_exact(3).map(|p| p[0]).collect();
        assert_eq!(grey, [3, 6, 2, 5, 1, 4], "c f / b e / a d");
        let over = image.turned_over();
        assert_eq!((over.width, over.height), (3, 2));
        assert_eq!(over.pixels.chunks_exact(3).map(|p| p[0]).collect::<Vec<u8>>(), [6, 5, 4, 3, 2, 1]);
    }

    #[test]
    fn a_crop_and_a_region_at_its_own_size_keep_their_pixels() {
        let pixels: Vec<u8> = (0..4 * 3 * 3).map(|v| v as u8).collect();
        let image = Rgb { width: 4, height: 3, pixels };
        let crop = image.crop((1, 1, 3, 3));
        assert_eq!((crop.width, crop.height), (2, 2));
        assert_eq!(crop.pixels, [15, 16, 17, 18, 19, 20, 27, 28, 29, 30, 31, 32]);
        for resampling in [Resampling::Averaged, Resampling::Interpolated] {
            assert_eq!(image.resized_region((1, 1, 3, 3), 2, 2, resampling).pixels, crop.pixels);
        }
    }
}
