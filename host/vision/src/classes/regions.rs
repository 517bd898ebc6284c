//! The 4-connected regions of a class raster, found in one pass over its rows
//! (runs joined with a union-find), each with its class, the first pixel it
//! reaches in raster order, its area and its mean confidence.
//!
//! Invariant: a region is keyed by its first pixel (topmost row, leftmost in it),
//! whose top-left corner is the lowest-then-leftmost vertex of the region's outline as
//! GDAL's polygonize draws it: that is how a polygon finds its region.

use super::NO_UNIT;

/// One 4-connected region of one class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    /// Its class (`1..=units`).
    pub class: u8,
    /// The column of its first pixel in raster order.
    pub first_x: u32,
    /// The row of its first pixel.
    pub first_y: u32,
    /// Its area in pixels.
    pub pixels: u64,
    /// Its pixels' mean confidence, 0–1.
    pub confidence: f64,
}

/// A run of one class in a row: `[start, end)` and its provisional label.
#[derive(Clone, Copy)]
struct Run {
    start: usize,
    end: usize,
    class: u8,
    label: u32,
}

/// Provisional labels and what each root has gathered.
#[derive(Default)]
struct Labels {
    parent: Vec<u32>,
    gathered: Vec<Region>,
    confidence_sum: Vec<u64>,
}

impl Labels {
    fn root(&mut self, mut label: u32) -> u32 {
        while self.parent[label as usize] != label {
            let grand = self.parent[self.parent[label as usize] as usize];
            self.parent[label as usize] = grand;
            label = grand;
        }
        label
    }

    fn union(&mut self, a: u32, b: u32) -> u32 {
        let (a, b) = (self.root(a), self.root(b));
        if a == b {
            return a;
        }
        let (keep, gone) = if (self.gathered[a as usize].first_y, self.gathered[a as usize].first_x)
            <= (self.gathered[b as usize].first_y, self.gathered[b as usize].first_x)
        {
            (a, b)
        } else {
            (b, a)
        };
        self.parent[gone as usize] = keep;
        self.gathered[keep as usize].pixels += self.gathered[gone as usize].pixels;
        self.confidence_sum[keep as usize] += self.confidence_sum[gone as usize];
        keep
    }
}

/// The regions of `classes` (`width × height`; [`NO_UNIT`] pixels belong to none), in the order
/// of their first pixels.
pub fn regions(classes: &[u8], confidence: &[u8], width: usize, height: usize) -> Vec<Region> {
    let mut labels = Labels::default();
    let mut above: Vec<Run> = Vec::new();
    let mut here: Vec<Run> = Vec::new();
    for y in 0..height {
        let row = &classes[y * width..][..width];
        let sure = &confidence[y * width..][..width];
        here.clear();
        let mut start = 0;
        let mut overlap = 0; // the first run above that may touch the current one
        while start < width {
            let class = row[start];
            let end = row[start..].iter().position(|&c| c != class).map_or(width, |n| start + n);
            if class != NO_UNIT {
                while overlap < above.len() && above[overlap].end <= start {
                    overlap += 1;
                }
                let mut label = None;
                for run in above[overlap..].iter().take_while(|run| run.start < end).filter(|run| run.class == class) {
                    label = Some(match label {
                        None => labels.root(run.label),
                        Some(label) => labels.union(label, run.label),
                    });
                }
                let label = label.unwrap_or_else(|| {
                    let fresh = labels.parent.len() as u32;
                    labels.parent.push(fresh);
                    labels.gathered.push(Region { class, first_x: start as u32, first_y: y as u32, pixels: 0, confidence: 0.0 });
                    labels.confidence_sum.push(0);
                    fresh
                });
                labels.gathered[label as usize].pixels += (end - start) as u64;
                labels.confidence_sum[label as usize] += sure[start..end].iter().map(|&c| u64::from(c)).sum::<u64>();
                here.push(Run { start, end, class, label });
            }
            start = end;
        }
        std::mem::swap(&mut above, &mut here);
    }
    let mut found: Vec<Region> = (0..labels.parent.len() as u32)
        .filter(|&label| labels.parent[label as usize] == label)
        .map(|label| {
            let region = labels.gathered[label as usize];
            Region { confidence: labels.confidence_sum[label as usize] as f64 / 255.0 / region.pixels as f64, ..region }
        })
        .collect();
    found.sort_by_key(|region| (region.first_y, region.first_x));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_join_across_rows_and_keep_their_first_pixel() {
        // A U of class 1 (joined only at the bottom), a 2 inside it, no-unit pixels apart.
        #[rustfmt::skip]
        let classes = [
            0, 1, 0, 0, 1,
            0, 1, 2, 2, 1,
            0, 1, 1, 1, 1,
            2, 0, 0, 0, 0,
        ];
        let confidence = [255; 20];
        let found = regions(&classes, &confidence, 5, 4);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0], Region { class: 1, first_x: 1, first_y: 0, pixels: 8, confidence: 1.0 });
        assert_eq!((found[1].class, found[1].first_x, found[1].first_y, found[1].pixels), (2, 2, 1, 2));
        assert_eq!((found[2].class, found[2].first_x, found[2].first_y, found[2].pixels), (2, 0, 3, 1), "diagonal is not 4-connected");
    }
}
