//! Each label tied to the point of the neatline it names: the short stroke that leaves the frame
//! nearest the label along its side (a tick, inside or outside the frame), or the corner when the
//! label stands at one, or failing both the foot of the label's centre on the side.
//!
//! Invariants: a tick touches the frame line and is narrow (a stroke, not a word); the search stays
//! within the label's own reach along the side; pixels come from one small band read per label.

use super::Window;
use super::neatline::{Neatline, Side, luma};
use crate::error::VisionError;
use geomap_model::page::PixelBox;

/// Darker than this (luma) is a tick's ink.
const INK: u8 = 128;

/// The four sides of the neatline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Edge {
    /// Top side.
    Top,
    /// Bottom side.
    Bottom,
    /// Left side.
    Left,
    /// Right side.
    Right,
}

impl Edge {
    /// Whether the side runs left to right.
    pub fn horizontal(self) -> bool {
        matches!(self, Edge::Top | Edge::Bottom)
    }

    /// The side's line.
    pub fn side(self, neatline: &Neatline) -> Side {
        match self {
            Edge::Top => neatline.top,
            Edge::Bottom => neatline.bottom,
            Edge::Left => neatline.left,
            Edge::Right => neatline.right,
        }
    }

    /// The side's two corners (start and end along it), as `[col, row]`.
    pub fn ends(self, neatline: &Neatline) -> ([f64; 2], [f64; 2]) {
        let [tl, tr, br, bl] = neatline.corners;
        match self {
            Edge::Top => (tl, tr),
            Edge::Bottom => (bl, br),
            Edge::Left => (tl, bl),
            Edge::Right => (tr, br),
        }
    }

    /// +1 when outside the frame is towards larger across values (bottom, right), else −1.
    fn outwards(self) -> f64 {
        if matches!(self, Edge::Bottom | Edge::Right) { 1.0 } else { -1.0 }
    }
}

/// What a label was tied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Anchor {
    /// A tick mark on the side.
    Tick,
    /// A corner of the neatline.
    Corner,
    /// No tick found: the foot of the label's centre on the side.
    LabelCentre,
}

/// Where a label meets the neatline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tie {
    /// The point, `[col, row]`.
    pub pixel: [f64; 2],
    /// What it is.
    pub anchor: Anchor,
    /// Where along the side, 0 at its start corner and 1 at its end.
    pub position: f64,
}

/// `(along, across)` of a label box's centre for a side, and the box's extent along it.
fn centre(edge: Edge, label: &PixelBox) -> (f64, f64, f64, f64) {
    let (cx, cy) = ((label.x0 + label.x1) / 2.0, (label.y0 + label.y1) / 2.0);
    let (w, h) = (label.x1 - label.x0, label.y1 - label.y0);
    if edge.horizontal() { (cx, cy, w, h) } else { (cy, cx, h, w) }
}

/// How far outside the side (positive) or inside (negative) the label's centre sits, and how far
/// along it from the nearest corner, in units of the label's own extent along the side; `None`
/// when the label is beyond the side's ends.
pub fn placement(edge: Edge, neatline: &Neatline, label: &PixelBox) -> Option<(f64, f64)> {
    let (along, across, extent, thickness) = centre(edge, label);
    let side = edge.side(neatline);
    let (start, end) = edge.ends(neatline);
    let index = usize::from(!edge.horizontal());
    let (from, to) = (start[index], end[index]);
    let margin = if edge.horizontal() { extent / 2.0 } else { thickness };
    if along < from - margin || along > to + margin {
        return None;
    }
    let outside = (across - side.at(along)) * edge.outwards();
    let from_corner = (along - from).abs().min((along - to).abs()) / extent.max(1.0);
    Some((outside, from_corner))
}

/// Ties `label` (on `edge`) to its tick, its corner or the foot of its centre.
pub fn tie(edge: Edge, neatline: &Neatline, label: &PixelBox, size: (u32, u32), read: Window<'_>) -> Result<Tie, VisionError> {
    let (along, _, extent, thickness) = centre(edge, label);
    let side = edge.side(neatline);
    let (start, end) = edge.ends(neatline);
    let index = usize::from(!edge.horizontal());
    let (from, to) = (start[index], end[index]);
    let length = (to - from).max(1.0);
    // The text's line height (a label runs along a top or bottom side, and beside a left or right one).
    let text_height = extent.min(thickness);
    let reach_along = 0.75 * extent + 2.0 * text_height;
    let reach_across = (3.0 * text_height).max(24.0);
    let line = neatline.thickness_px.max(1.0);
    let (along_max, across_max) = if edge.horizontal() { (size.0, size.1) } else { (size.1, size.0) };
    let clamp = |v: f64, max: u32| v.clamp(0.0, f64::from(max)) as u32;
    let (a0, a1) = (clamp((along - reach_along).max(from), along_max), clamp((along + reach_along).min(to) + 1.0, along_max));
    let (c_lo, c_hi) = (side.at(f64::from(a0)).min(side.at(f64::from(a1))), side.at(f64::from(a0)).max(side.at(f64::from(a1))));
    let (c0, c1) = (clamp(c_lo - reach_across - line, across_max), clamp(c_hi + reach_across + line + 1.0, across_max));
    let mut strokes: Vec<(f64, f64)> = Vec::new(); // (along centre, width)
    if a1 > a0 && c1 > c0 {
        let window = if edge.horizontal() { (a0, c0, a1, c1) } else { (c0, a0, c1, a1) };
        let image = read(window)?;
        let ink = |a: u32, c: i64| -> bool {
            let (x, y) = if edge.horizontal() { (i64::from(a - a0), c - i64::from(c0)) } else { (c - i64::from(c0), i64::from(a - a0)) };
            x >= 0 && y >= 0 && (x as u32) < image.width && (y as u32) < image.height && luma(&image, x as u32, y as u32) < INK
        };
        let min_run = (0.3 * text_height).max(4.0);
        let mut flagged: Vec<u32> = Vec::new();
        for a in a0..a1 {
            let centre_line = side.at(f64::from(a) + 0.5);
            let tick_here = [-1.0, 1.0].iter().any(|direction| {
                // From just beyond the frame line outwards (or inwards), count the unbroken ink.
                let first = centre_line + direction * (line / 2.0 + 1.5);
                let mut run = 0.0;
                while run < reach_across && ink(a, (first + direction * run).floor() as i64) {
                    run += 1.0;
                }
                run >= min_run
            });
            if tick_here {
                flagged.push(a);
            }
        }
        // Group flagged places into strokes.
        let mut group: Vec<u32> = Vec::new();
        for &a in flagged.iter().chain(std::iter::once(&u32::MAX)) {
            if group.last().is_some_and(|&last| a != u32::MAX && a <= last + 1) {
                group.push(a);
                continue;
            }
            if !group.is_empty() {
                let width = f64::from(group.len() as u32);
                let middle = group.iter().map(|&g| f64::from(g) + 0.5).sum::<f64>() / width;
                strokes.push((middle, width));
            }
            group = vec![a];
        }
        strokes.retain(|(_, width)| *width <= (3.0 * line).max(6.0));
    }
    let nearest = strokes.iter().min_by(|a, b| (a.0 - along).abs().total_cmp(&(b.0 - along).abs())).copied();
    let (mut at, mut anchor) = match nearest {
        Some((a, _)) => (a, Anchor::Tick),
        None => (along.clamp(from, to), Anchor::LabelCentre),
    };
    let snap = (0.6 * extent).max(0.015 * length);
    if (at - from).abs() <= snap || (at - to).abs() <= snap {
        at = if (at - from).abs() <= (at - to).abs() { from } else { to };
        anchor = Anchor::Corner;
    }
    let pixel = match anchor {
        Anchor::Corner if at == from => start,
        Anchor::Corner => end,
        _ if edge.horizontal() => [at, side.at(at)],
        _ => [side.at(at), at],
    };
    Ok(Tie { pixel, anchor, position: ((at - from) / length).clamp(0.0, 1.0) })
}
