//! Which fit to write when a sheet's labels give control points: the false
//! ticks to drop, the CRS to fit in, and the transform.
//!
//! Invariants: only points the caller marks droppable are ever dropped (ticks,
//! never a corner or an agent's point), one at a time, and never below
//! [`KEPT_AT_LEAST`]; another CRS than the first (the labels' own) wins only
//! when its affine residual is under 80% of the first's; a second-order
//! polynomial is chosen only with twice the points it needs and under half the
//! affine's residual. Every choice is said in words (`ChosenFit::why`).

use crate::{ControlPoint, GeorefError, Placement, Request, TransformKind, describe, leave_one_out_px};

/// A tick lies at least this far (pixels) from where the other points put it before it is dropped.
pub const FALSE_TICK_PX: f64 = 3.0;
/// Points kept at the least, whatever their residuals.
pub const KEPT_AT_LEAST: usize = 5;

/// The fit [`choose`] chose.
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenFit {
    /// The CRS to write the revision in.
    pub crs: String,
    /// The points in that CRS, without the false ticks.
    pub kept: Vec<ControlPoint>,
    /// Indices into the points given of the false ticks, with how far off they lie (pixels).
    pub dropped: Vec<(usize, f64)>,
    /// The transform to fit.
    pub transform: TransformKind,
    /// Why, in a sentence.
    pub why: String,
}

/// The points of one CRS without their false ticks, and the affine residual they leave (pixels).
struct Trial {
    crs: String,
    kept: Vec<ControlPoint>,
    dropped: Vec<(usize, f64)>,
    affine: f64,
}

/// The root-mean-square residual in pixels of `points` in `crs` under `transform`, on a `width`×`height` scan.
fn rmse_px(width: u64, height: u64, crs: &str, points: &[ControlPoint], transform: TransformKind) -> Result<f64, GeorefError> {
    let request = Request { crs: crs.to_owned(), placement: Placement::ControlPoints { points: points.to_vec(), transform, region: None } };
    Ok(describe(width, height, &request, "rev_trial")?.rmse.map_or(0.0, |rmse| rmse.pixels))
}

/// The points of `points` that `droppable` allows to drop and that an affine fit of the others
/// puts far from where they are, worst first, with how far (pixels): one at a time while the worst
/// lies past both [`FALSE_TICK_PX`] and twice the median of every point's such distance.
pub fn false_ticks(points: &[ControlPoint], droppable: &[bool]) -> Vec<(usize, f64)> {
    let mut kept: Vec<usize> = (0..points.len()).collect();
    let mut dropped = Vec::new();
    while kept.len() > KEPT_AT_LEAST {
        let errors = leave_one_out_px(&kept.iter().map(|i| points[*i]).collect::<Vec<_>>());
        let mut known: Vec<f64> = errors.iter().flatten().copied().collect();
        known.sort_by(f64::total_cmp);
        let Some(&median) = known.get(known.len() / 2) else { break };
        let worst = (0..kept.len()).filter(|k| droppable[kept[*k]]).filter_map(|k| errors[k].map(|error| (k, error))).max_by(|a, b| a.1.total_cmp(&b.1));
        match worst {
            Some((k, error)) if error > FALSE_TICK_PX.max(2.0 * median) => dropped.push((kept.remove(k), error)),
            _ => break,
        }
    }
    dropped
}

/// Of the same points in one CRS or more (the first is the labels' own), the CRS and transform to
/// write on a `width`×`height` scan, and why. In each CRS the false ticks are found
/// ([`false_ticks`]); the CRS whose affine fit of the rest leaves the smaller residual wins
/// (another than the first only when it leaves under 80% of the first's); in it, `asked`, or
/// affine unless twice the points a second-order polynomial needs fit one with under half the
/// affine residual (with fewer points a polynomial fits its points' errors too).
pub fn choose(
    (width, height): (u64, u64),
    fits: Vec<(String, Vec<ControlPoint>)>,
    droppable: &[bool],
    asked: Option<TransformKind>,
) -> Result<ChosenFit, GeorefError> {
    let mut trials = Vec::new();
    for (crs, points) in fits {
        let dropped = false_ticks(&points, droppable);
        let kept: Vec<ControlPoint> = points.iter().enumerate().filter(|(i, _)| !dropped.iter().any(|(d, _)| d == i)).map(|(_, p)| *p).collect();
        let affine = rmse_px(width, height, &crs, &kept, TransformKind::Affine)?;
        trials.push(Trial { crs, kept, dropped, affine });
    }
    let chosen =
        (1..trials.len()).filter(|i| trials[*i].affine < 0.8 * trials[0].affine).min_by(|a, b| trials[*a].affine.total_cmp(&trials[*b].affine)).unwrap_or(0);
    let projection = match chosen {
        0 if trials.len() > 1 => format!(" in {} (in {} it leaves {:.2} px)", trials[0].crs, trials[1].crs, trials[1].affine),
        0 => String::new(),
        _ => format!(" in {}: the graticule is straighter there than in {}, where it leaves {:.2} px", trials[chosen].crs, trials[0].crs, trials[0].affine),
    };
    let Trial { crs, kept, dropped, affine } = trials.swap_remove(chosen);
    let dropped_note = match dropped.len() {
        0 => String::new(),
        n => format!("; {n} tick(s) dropped as false"),
    };
    let (transform, why) = match asked {
        Some(transform) => (transform, format!("{}, as asked", transform.name())),
        None => {
            let enough = kept.len() >= 2 * TransformKind::Polynomial2.minimum_points() && affine > 1.0;
            match enough.then(|| rmse_px(width, height, &crs, &kept, TransformKind::Polynomial2)).transpose()? {
                Some(polynomial) if polynomial < 0.5 * affine => (
                    TransformKind::Polynomial2,
                    format!("polynomial2: its RMSE is {polynomial:.2} px against the affine's {affine:.2} px over {} points", kept.len()),
                ),
                Some(polynomial) => {
                    (TransformKind::Affine, format!("affine: RMSE {affine:.2} px (a second-order polynomial gave {polynomial:.2} px, not enough better)"))
                }
                None => (TransformKind::Affine, format!("affine: RMSE {affine:.2} px over {} points", kept.len())),
            }
        }
    };
    Ok(ChosenFit { crs, kept, dropped, transform, why: format!("{why}{projection}{dropped_note}") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Coordinate;

    /// A 15′ × 15′ quadrangle drawn 2000 px square: a point every 3′ along its four sides (16
    /// points), at the pixels a straight graticule gives, with `off` added to point `odd`'s column.
    fn quadrangle(odd: Option<(usize, f64)>) -> Vec<ControlPoint> {
        let mut points = Vec::new();
        for step in 0..5 {
            let t = f64::from(step) / 5.0;
            for (col, row) in [(t, 0.0), (1.0, t), (1.0 - t, 1.0), (0.0, 1.0 - t)] {
                points.push(ControlPoint {
                    col: Coordinate(col * 2000.0),
                    row: Coordinate(row * 2000.0),
                    x: Coordinate(-113.5 + col * 0.25),
                    y: Coordinate(35.75 - row * 0.25),
                });
            }
        }
        if let Some((index, off)) = odd {
            points[index].col.0 += off;
        }
        points
    }

    #[test]
    fn a_tick_far_from_the_others_is_dropped_and_a_corner_never() {
        let points = quadrangle(Some((6, 25.0)));
        let droppable = vec![true; points.len()];
        let dropped = false_ticks(&points, &droppable);
        assert_eq!(dropped.len(), 1, "{dropped:?}");
        assert_eq!(dropped[0].0, 6);
        assert!(dropped[0].1 > 20.0, "{dropped:?}");
        let mut only_others = droppable.clone();
        only_others[6] = false;
        assert!(false_ticks(&points, &only_others).iter().all(|(index, _)| *index != 6), "a point not droppable stays");
        assert!(false_ticks(&quadrangle(None), &droppable).is_empty(), "a clean graticule loses nothing");
    }

    #[test]
    fn the_choice_keeps_affine_on_a_straight_graticule_and_says_why() {
        let points = quadrangle(Some((6, 25.0)));
        let droppable = vec![true; points.len()];
        let chosen = choose((2000, 2000), vec![("EPSG:4267".to_owned(), points.clone())], &droppable, None).unwrap();
        assert_eq!((chosen.crs.as_str(), chosen.transform, chosen.kept.len()), ("EPSG:4267", TransformKind::Affine, points.len() - 1));
        assert!(chosen.why.starts_with("affine: RMSE") && chosen.why.ends_with("1 tick(s) dropped as false"), "{}", chosen.why);
        let asked = choose((2000, 2000), vec![("EPSG:4267".to_owned(), points)], &droppable, Some(TransformKind::Polynomial2)).unwrap();
        assert_eq!(asked.transform, TransformKind::Polynomial2);
        assert!(asked.why.starts_with("polynomial2, as asked"), "{}", asked.why);
    }

    #[test]
    fn another_crs_wins_only_when_it_fits_much_better() {
        let points = quadrangle(None);
        let droppable = vec![false; points.len()];
        // The same points in UTM: a straight graticule in degrees is slightly curved there, so degrees stay.
        let utm = crate::reproject("EPSG:4267", "EPSG:26712", &points.iter().map(|p| (p.x.0, p.y.0)).collect::<Vec<_>>()).unwrap();
        let in_utm: Vec<ControlPoint> = points.iter().zip(utm).map(|(p, (x, y))| ControlPoint { x: Coordinate(x), y: Coordinate(y), ..*p }).collect();
        let fits = vec![("EPSG:4267".to_owned(), points), ("EPSG:26712".to_owned(), in_utm)];
        let chosen = choose((2000, 2000), fits, &droppable, None).unwrap();
        assert_eq!(chosen.crs, "EPSG:4267");
        assert!(chosen.why.contains("(in EPSG:26712 it leaves"), "{}", chosen.why);
    }
}
