//! Reading a legend: each colour swatch paired with the text box on its row
//! (the swatch's colour is [`crate::colour`]'s).
//!
//! Invariant: pure arithmetic on boxes.

use super::postprocess::Detection;
use geomap_model::page::PixelBox;

/// Pairs each swatch (top to bottom, then left to right) with the nearest
/// unused text box on its row: one whose vertical centre lies within the
/// swatch's height and which starts right of the swatch's centre; nearest by
/// the gap from the swatch's right edge to the text's left edge. A swatch with
/// no text on its row keeps `None`.
pub fn pair(swatches: &[Detection], texts: &[Detection]) -> Vec<(Detection, Option<Detection>)> {
    let mut order: Vec<&Detection> = swatches.iter().collect();
    order.sort_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0).then(a.bbox.x0.total_cmp(&b.bbox.x0)));
    let mut used = vec![false; texts.len()];
    order
        .into_iter()
        .map(|swatch| {
            let s = swatch.bbox;
            let on_row = |t: &PixelBox| {
                let middle = (t.y0 + t.y1) / 2.0;
                middle >= s.y0 && middle <= s.y1 && t.x0 >= (s.x0 + s.x1) / 2.0
            };
            let nearest = (0..texts.len())
                .filter(|&i| !used[i] && on_row(&texts[i].bbox))
                .min_by(|&a, &b| (texts[a].bbox.x0 - s.x1).abs().total_cmp(&(texts[b].bbox.x0 - s.x1).abs()));
            if let Some(i) = nearest {
                used[i] = true;
            }
            (*swatch, nearest.map(|i| texts[i]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(class: usize, x0: f64, y0: f64, x1: f64, y1: f64) -> Detection {
        Detection { class, bbox: PixelBox { x0, y0, x1, y1 }, score: 0.9 }
    }

    #[test]
    fn swatches_pair_with_the_nearest_text_on_their_row() {
        let swatches = [d(0, 10.0, 40.0, 30.0, 50.0), d(0, 10.0, 10.0, 30.0, 20.0), d(0, 10.0, 70.0, 30.0, 80.0)];
        let texts = [d(1, 40.0, 38.0, 200.0, 52.0), d(1, 35.0, 9.0, 150.0, 21.0), d(1, 300.0, 12.0, 400.0, 18.0)];
        let pairs = pair(&swatches, &texts);
        assert_eq!(pairs[0].0, swatches[1], "top to bottom");
        assert_eq!(pairs[0].1, Some(texts[1]), "the nearer of two texts on the row");
        assert_eq!(pairs[1].1, Some(texts[0]));
        assert_eq!(pairs[2].1, None, "no text on the third row");
    }
}
