//! The page's vocabulary every part shares: the component
//! classes the detector knows, and boxes in the scan's pixels.

use serde::{Deserialize, Serialize};

/// The component detector's classes, in its output's order.
pub const COMPONENT_CLASSES: [&str; 8] = ["title", "main_map", "legend", "scale", "index_map", "cross_section", "stratigraphic_column", "others"];

/// A box in pixels: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PixelBox {
    /// Left edge.
    pub x0: f64,
    /// Top edge.
    pub y0: f64,
    /// Right edge.
    pub x1: f64,
    /// Bottom edge.
    pub y1: f64,
}

impl PixelBox {
    /// Its area in square pixels (0 when empty).
    pub fn area(&self) -> f64 {
        (self.x1 - self.x0).max(0.0) * (self.y1 - self.y0).max(0.0)
    }

    /// Intersection over union with `other` (0 when either is empty).
    pub fn iou(&self, other: &PixelBox) -> f64 {
        let width = (self.x1.min(other.x1) - self.x0.max(other.x0)).max(0.0);
        let height = (self.y1.min(other.y1) - self.y0.max(other.y0)).max(0.0);
        let intersection = width * height;
        let union = self.area() + other.area() - intersection;
        if union > 0.0 { intersection / union } else { 0.0 }
    }

    /// Whether the box is finite, not empty, and inside a `width`×`height` image.
    pub fn is_inside(&self, width: f64, height: f64) -> bool {
        [self.x0, self.y0, self.x1, self.y1].iter().all(|v| v.is_finite())
            && 0.0 <= self.x0
            && self.x0 < self.x1
            && self.x1 <= width
            && 0.0 <= self.y0
            && self.y0 < self.y1
            && self.y1 <= height
    }

    /// The box in whole pixels, grown to cover every pixel it touches and clipped to `width`×`height`.
    pub fn pixels(&self, width: u32, height: u32) -> (u32, u32, u32, u32) {
        let clamp = |v: f64, max: u32| (v.max(0.0) as u32).min(max);
        let (x0, y0) = (clamp(self.x0.floor(), width), clamp(self.y0.floor(), height));
        (x0, y0, clamp(self.x1.ceil(), width).max(x0), clamp(self.y1.ceil(), height).max(y0))
    }
}

/// The distance in pixels from `point` to the segment from `a` to `b` (to `a` when they meet).
pub fn segment_distance(point: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let length = dx * dx + dy * dy;
    let t = if length > 0.0 { (((point.0 - a.0) * dx + (point.1 - a.1) * dy) / length).clamp(0.0, 1.0) } else { 0.0 };
    (point.0 - a.0 - t * dx).hypot(point.1 - a.1 - t * dy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_points_distance_is_to_the_nearest_point_of_the_segment_ends_included() {
        assert_eq!(segment_distance((5.0, 3.0), (0.0, 0.0), (10.0, 0.0)), 3.0, "across its middle");
        assert_eq!(segment_distance((13.0, 4.0), (0.0, 0.0), (10.0, 0.0)), 5.0, "past its end: to the end");
        assert_eq!(segment_distance((-3.0, 4.0), (0.0, 0.0), (10.0, 0.0)), 5.0, "before its start: to the start");
        assert_eq!(segment_distance((3.0, 4.0), (0.0, 0.0), (0.0, 0.0)), 5.0, "a segment of no length is its point");
    }
}
