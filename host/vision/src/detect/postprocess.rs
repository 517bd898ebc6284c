//! From a YOLOv10 head's rows to boxes on the scan: the letterbox geometry
//! (and its inverse), the score floor, PEACE's per-class rules and
//! class-agnostic non-maximum suppression.
//!
//! Invariant: every function here is pure arithmetic on boxes, so each rule is
//! unit-tested against hand-computed answers.

/// The grey YOLO pads a letterboxed image with.
pub const PAD_GREY: u8 = 114;
/// Boxes overlapping more than this (IoU) with a higher-scoring box are dropped.
pub const NMS_IOU: f64 = 0.8;
/// At most this many rows are read from a head.
pub const MAX_DETECTIONS: usize = 300;
/// The default score floor.
pub const DEFAULT_MIN_SCORE: f32 = 0.25;

use geomap_model::page::PixelBox;

/// One detection: a class index, its box on the original image, its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// Index into the detector's class list.
    pub class: usize,
    /// On the original image, in pixels.
    pub bbox: PixelBox,
    /// The model's confidence, 0–1.
    pub score: f32,
}

/// How an image of `width`×`height` sits in the `size`×`size` model input
/// (ultralytics' `LetterBox` with `center=True` and `scale_boxes`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Letterbox {
    /// Original width.
    pub width: u32,
    /// Original height.
    pub height: u32,
    /// The model's input side.
    pub size: u32,
    /// Scale from original to input pixels.
    pub gain: f64,
    /// The resized image's width and height inside the input.
    pub inner: (u32, u32),
    /// Padding on the left and at the top.
    pub pad: (u32, u32),
}

impl Letterbox {
    /// The geometry for an image of `width`×`height` in a `size` square.
    pub fn new(width: u32, height: u32, size: u32) -> Letterbox {
        let gain = (size as f64 / height as f64).min(size as f64 / width as f64);
        let inner = (((width as f64 * gain).round() as u32).clamp(1, size), ((height as f64 * gain).round() as u32).clamp(1, size));
        let pad_of = |inner: u32| ((size - inner) as f64 / 2.0 - 0.1).round().max(0.0) as u32;
        Letterbox { width, height, size, gain, inner, pad: (pad_of(inner.0), pad_of(inner.1)) }
    }

    /// A box in input pixels mapped back to the original image, clipped to it.
    pub fn to_original(&self, x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        let (px, py) = (self.pad.0 as f64, self.pad.1 as f64);
        let (w, h) = (self.width as f64, self.height as f64);
        PixelBox {
            x0: ((x0 - px) / self.gain).clamp(0.0, w),
            y0: ((y0 - py) / self.gain).clamp(0.0, h),
            x1: ((x1 - px) / self.gain).clamp(0.0, w),
            y1: ((y1 - py) / self.gain).clamp(0.0, h),
        }
    }
}

/// Reads a head's rows (`x1, y1, x2, y2, score, class` in the letterboxed
/// frame): keeps at most [`MAX_DETECTIONS`] rows scoring at least `min_score`
/// with a known class, maps them to the original image, applies the one-box
/// rule to the classes in `one_box`, then class-agnostic NMS at [`NMS_IOU`].
pub fn postprocess(rows: &[[f32; 6]], classes: usize, min_score: f32, geometry: &Letterbox, one_box: &[usize]) -> Vec<Detection> {
    let mut found: Vec<Detection> = rows
        .iter()
        .take(MAX_DETECTIONS)
        .filter(|row| row.iter().all(|v| v.is_finite()) && row[4] >= min_score && row[5] >= 0.0 && (row[5].round() as usize) < classes)
        .map(|row| {
            let bbox = geometry.to_original(row[0] as f64, row[1] as f64, row[2] as f64, row[3] as f64);
            Detection { class: row[5].round() as usize, bbox, score: row[4] }
        })
        .filter(|detection| detection.bbox.area() > 0.0)
        .collect();
    found.sort_by(|a, b| b.score.total_cmp(&a.score));
    let found = one_box_per_class(found, one_box);
    non_maximum_suppression(found, NMS_IOU)
}

/// PEACE's rule for classes that appear once on a map (title, main map,
/// legend, scale): keep the box of the class that overlaps boxes of other
/// classes least (its largest IoU with any of them is smallest; the higher
/// score breaks a tie), or the largest box when no other class was found.
///
/// PEACE skips this rule whenever any box is a title (class 0: its check is
/// "every class is non-zero"), so a map with a title keeps every duplicate;
/// and it measures overlap by the *smallest* IoU with other boxes, which is 0
/// for almost any box. Here the rule always applies and overlap is the largest IoU.
pub fn one_box_per_class(detections: Vec<Detection>, one_box: &[usize]) -> Vec<Detection> {
    let mut keep = vec![true; detections.len()];
    for &class in one_box {
        let members: Vec<usize> = (0..detections.len()).filter(|&i| detections[i].class == class).collect();
        if members.len() < 2 {
            continue;
        }
        let others: Vec<&Detection> = detections.iter().filter(|d| d.class != class).collect();
        let best = if others.is_empty() {
            members.iter().copied().max_by(|&a, &b| detections[a].bbox.area().total_cmp(&detections[b].bbox.area()).then(b.cmp(&a)))
        } else {
            let overlap = |i: usize| others.iter().map(|other| detections[i].bbox.iou(&other.bbox)).fold(0.0_f64, f64::max);
            // `members` is in score order, so the first of equal overlaps scores highest.
            members.iter().copied().min_by(|&a, &b| overlap(a).total_cmp(&overlap(b)).then(a.cmp(&b)))
        };
        for i in members {
            keep[i] = Some(i) == best;
        }
    }
    detections.into_iter().zip(keep).filter_map(|(detection, kept)| kept.then_some(detection)).collect()
}

/// Class-agnostic NMS: from the highest score down, drop any box overlapping a kept one by more than `iou`.
pub fn non_maximum_suppression(mut detections: Vec<Detection>, iou: f64) -> Vec<Detection> {
    detections.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut kept: Vec<Detection> = Vec::new();
    for detection in detections {
        if kept.iter().all(|k| k.bbox.iou(&detection.bbox) <= iou) {
            kept.push(detection);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        PixelBox { x0, y0, x1, y1 }
    }

    fn d(class: usize, bbox: PixelBox, score: f32) -> Detection {
        Detection { class, bbox, score }
    }

    #[test]
    fn a_wide_image_is_padded_top_and_bottom_and_boxes_map_back() {
        // 1000×500 into 640: gain 0.64, 640×320 inside, 160 px of grey above and below.
        let geometry = Letterbox::new(1000, 500, 640);
        assert_eq!((geometry.inner, geometry.pad), ((640, 320), (0, 160)));
        assert_eq!(geometry.to_original(64.0, 160.0, 128.0, 224.0), b(100.0, 0.0, 200.0, 100.0));
        assert_eq!(geometry.to_original(-5.0, 100.0, 700.0, 500.0), b(0.0, 0.0, 1000.0, 500.0), "clipped to the image");
        let tall = Letterbox::new(300, 600, 640);
        assert_eq!((tall.inner, tall.pad), ((320, 640), (160, 0)));
    }

    #[test]
    fn rows_below_the_floor_or_of_unknown_classes_are_dropped() {
        let geometry = Letterbox::new(640, 640, 640);
        let rows = [[0.0, 0.0, 10.0, 10.0, 0.9, 1.0], [20.0, 20.0, 30.0, 30.0, 0.2, 1.0], [40.0, 40.0, 50.0, 50.0, 0.5, 9.0], [0.0, 0.0, 0.0, 0.0, 0.9, 2.0]];
        let found = postprocess(&rows, 8, 0.25, &geometry, &[]);
        assert_eq!(found, [d(1, b(0.0, 0.0, 10.0, 10.0), 0.9)]);
    }

    #[test]
    fn one_box_classes_keep_the_box_that_overlaps_other_classes_least() {
        let main_map = d(1, b(0.0, 0.0, 100.0, 100.0), 0.9);
        let legend_inside = d(2, b(50.0, 50.0, 100.0, 100.0), 0.95); // IoU 0.25 with the main map
        let legend_apart = d(2, b(200.0, 0.0, 260.0, 100.0), 0.6);
        let title = d(0, b(0.0, 110.0, 100.0, 120.0), 0.8);
        let kept = one_box_per_class(vec![legend_inside, main_map, title, legend_apart], &[0, 1, 2, 3]);
        assert_eq!(kept, [main_map, title, legend_apart], "with a title present too, unlike PEACE");
        let alone = one_box_per_class(vec![d(3, b(0.0, 0.0, 10.0, 10.0), 0.9), d(3, b(0.0, 0.0, 30.0, 30.0), 0.5)], &[3]);
        assert_eq!(alone, [d(3, b(0.0, 0.0, 30.0, 30.0), 0.5)], "no other class: the largest");
        let many = one_box_per_class(vec![d(4, b(0.0, 0.0, 10.0, 10.0), 0.9), d(4, b(20.0, 0.0, 30.0, 10.0), 0.5)], &[0, 1, 2, 3]);
        assert_eq!(many.len(), 2, "index maps may be many");
    }

    #[test]
    fn nms_is_class_agnostic_at_iou_0_8() {
        let high = d(5, b(0.0, 0.0, 100.0, 100.0), 0.9);
        let same_place = d(6, b(0.0, 0.0, 100.0, 95.0), 0.7); // IoU 0.95
        let nearby = d(6, b(0.0, 0.0, 100.0, 70.0), 0.6); // IoU 0.7
        assert_eq!(non_maximum_suppression(vec![same_place, nearby, high], NMS_IOU), [high, nearby]);
    }

    #[test]
    fn pixel_boxes_cover_what_they_touch_inside_the_image() {
        assert_eq!(b(10.2, 5.9, 20.1, 7.0).pixels(100, 100), (10, 5, 21, 7));
        assert_eq!(b(-3.0, 90.0, 120.0, 130.0).pixels(100, 100), (0, 90, 100, 100));
    }
}
