//! One axis at a time (longitude along the top and bottom edges, latitude along the sides, or
//! easting and northing), the labels' values as a straight line of their position across the
//! neatline: every pair of labels proposes a line, the line most labels agree with wins, and a
//! label it does not fit is rejected with how far off it is.
//!
//! Invariants: the search is exhaustive over pairs (deterministic, and cheap: an edge carries tens
//! of labels, not thousands); a minutes-only label takes its degrees from the line, never on its
//! own; every label leaves as used (with the value chosen) or rejected (with a reason).

/// One label placed on the neatline, ready to be fitted.
#[derive(Debug, Clone)]
pub struct Placed {
    /// Where its tick is across the neatline, 0 at the left (or top) edge and 1 at the right (or bottom).
    pub position: f64,
    /// The whole values it may have (unsigned, in degrees or metres).
    pub candidates: Vec<f64>,
    /// Whether it may have printed its whole value (not minutes only).
    pub full: bool,
    /// Minutes past a whole degree, for a minutes-only label (or one that may be).
    pub minutes: Option<f64>,
}

/// The line that won, and each label's verdict.
#[derive(Debug, Clone)]
pub struct AxisFit {
    /// The value at position 0.
    pub offset: f64,
    /// Value per unit of position (the whole neatline's span).
    pub slope: f64,
    /// Per label, in order: the value used, or why it was rejected.
    pub verdicts: Vec<Result<f64, String>>,
}

impl AxisFit {
    /// The value at `position`.
    pub fn at(&self, position: f64) -> f64 {
        self.offset + self.slope * position
    }
}

/// Why an axis cannot be fitted.
#[derive(Debug, Clone, PartialEq)]
pub enum AxisProblem {
    /// Fewer than two labels at distinct positions agree.
    TooFew,
}

/// The values a label may have: its own, or for minutes only, every whole degree near the full labels' values.
fn readings(label: &Placed, degrees: &[f64]) -> Vec<f64> {
    let mut values = label.candidates.clone();
    if let Some(minutes) = label.minutes {
        values.extend(degrees.iter().flat_map(|d| [d - 1.0, *d, d + 1.0]).map(|d| d + minutes / 60.0).filter(|v| *v >= 0.0));
    }
    values.sort_by(f64::total_cmp);
    values.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    values
}

/// Fits one axis. `tolerance` is how far (in units of position) a label may sit from the line and
/// still agree with it; `span` bounds the value's change across the neatline (a line steeper or
/// flatter than any map sheet is a coincidence of misreadings).
pub fn fit_axis(labels: &[Placed], tolerance: f64, span: std::ops::RangeInclusive<f64>) -> Result<AxisFit, AxisProblem> {
    let degrees: Vec<f64> = labels.iter().filter(|l| l.full).flat_map(|l| l.candidates.iter().map(|v| v.floor())).collect();
    let options: Vec<Vec<f64>> = labels.iter().map(|label| readings(label, &degrees)).collect();
    // (agreeing labels, agreeing full labels, −spread of residuals): the best line proposed by a pair.
    let mut best: Option<((usize, usize, f64), f64, f64)> = None;
    for i in 0..labels.len() {
        for j in i + 1..labels.len() {
            if (labels[i].position - labels[j].position).abs() < tolerance * 2.0 || !(labels[i].full || labels[j].full) {
                continue;
            }
            for &a in &options[i] {
                for &b in &options[j] {
                    let slope = (b - a) / (labels[j].position - labels[i].position);
                    if !span.contains(&slope.abs()) {
                        continue;
                    }
                    let offset = a - slope * labels[i].position;
                    let score = agreement(labels, &options, offset, slope, tolerance);
                    if best.as_ref().is_none_or(|(s, ..)| better(score, *s)) {
                        best = Some((score, offset, slope));
                    }
                }
            }
        }
    }
    let Some((_, offset, slope)) = best else { return Err(AxisProblem::TooFew) };
    // Least squares over the labels that agree, then the verdicts against that line.
    let mut chosen: Vec<(f64, f64)> = Vec::new();
    for (label, values) in labels.iter().zip(&options) {
        if let Some(value) = nearest(values, offset + slope * label.position).filter(|value| ((value - offset) / slope - label.position).abs() <= tolerance) {
            chosen.push((label.position, value));
        }
    }
    let (offset, slope) = least_squares(&chosen).unwrap_or((offset, slope));
    let verdicts: Vec<Result<f64, String>> = labels
        .iter()
        .zip(&options)
        .map(|(label, values)| {
            let predicted = offset + slope * label.position;
            match nearest(values, predicted) {
                Some(value) if ((value - offset) / slope - label.position).abs() <= tolerance => Ok(value),
                Some(value) => Err(format!(
                    "inconsistent with the other labels on this axis: its value {value:.5} lies {:.1}% of the neatline away from where they put it",
                    ((value - offset) / slope - label.position).abs() * 100.0
                )),
                None => Err("a minutes-only label with no full label on this axis to take its degrees from".to_owned()),
            }
        })
        .collect();
    let used: Vec<f64> = labels.iter().zip(&verdicts).filter(|(_, v)| v.is_ok()).map(|(l, _)| l.position).collect();
    let distinct = used.iter().any(|p| (p - used[0]).abs() >= tolerance * 2.0);
    if used.len() < 2 || !distinct {
        return Err(AxisProblem::TooFew);
    }
    Ok(AxisFit { offset, slope, verdicts })
}

/// Whether agreement `a` beats `b`: a full label counts twice (a row of minutes-only numbers, or
/// a scale bar's, agrees with itself as readily as with the sheet), then the closer fit wins.
fn better(a: (usize, usize, f64), b: (usize, usize, f64)) -> bool {
    (a.0 + a.1).cmp(&(b.0 + b.1)).then(a.2.total_cmp(&b.2)).is_gt()
}

/// How many labels (and full labels) agree with a line, and minus the sum of their distances from it.
fn agreement(labels: &[Placed], options: &[Vec<f64>], offset: f64, slope: f64, tolerance: f64) -> (usize, usize, f64) {
    let (mut count, mut full, mut spread) = (0, 0, 0.0);
    for (label, values) in labels.iter().zip(options) {
        if let Some(value) = nearest(values, offset + slope * label.position) {
            let distance = ((value - offset) / slope - label.position).abs();
            if distance <= tolerance {
                count += 1;
                full += usize::from(label.full);
                spread += distance;
            }
        }
    }
    (count, full, -spread)
}

fn nearest(values: &[f64], target: f64) -> Option<f64> {
    values.iter().copied().min_by(|a, b| (a - target).abs().total_cmp(&(b - target).abs()))
}

/// The least-squares line `y = offset + slope × x` through `points` (x, y): `(offset, slope)`,
/// when there are two or more at different x (the neatline's sides and the axes share it).
pub(super) fn least_squares(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= f64::EPSILON {
        return None;
    }
    let slope = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    Some((my - slope * mx, slope))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(position: f64, value: f64) -> Placed {
        Placed { position, candidates: vec![value], full: true, minutes: None }
    }

    fn minutes(position: f64, minutes: f64) -> Placed {
        Placed { position, candidates: Vec::new(), full: false, minutes: Some(minutes) }
    }

    #[test]
    fn minutes_only_labels_take_their_degrees_from_the_corners() {
        // 114°00' at the left, 113°00' at the right, ticks every 15 minutes (west: values fall rightwards).
        let labels = [full(0.0, 114.0), minutes(0.25, 45.0), minutes(0.5, 30.0), minutes(0.75, 15.0), full(1.0, 113.0)];
        let fit = fit_axis(&labels, 0.01, 0.05..=5.0).unwrap();
        let used: Vec<f64> = fit.verdicts.iter().map(|v| *v.as_ref().unwrap()).collect();
        assert_eq!(used, vec![114.0, 113.75, 113.5, 113.25, 113.0]);
        assert!((fit.slope + 1.0).abs() < 1e-9 && (fit.offset - 114.0).abs() < 1e-9);
    }

    #[test]
    fn a_misread_label_is_rejected_and_said_so() {
        let labels = [full(0.0, 36.0), full(0.25, 35.875), full(0.5, 35.57), full(0.75, 35.625), full(1.0, 35.5)];
        let fit = fit_axis(&labels, 0.01, 0.05..=5.0).unwrap();
        assert!(fit.verdicts[2].as_ref().unwrap_err().contains("inconsistent"), "{:?}", fit.verdicts);
        assert_eq!(fit.verdicts.iter().filter(|v| v.is_ok()).count(), 4);
    }

    #[test]
    fn two_readings_of_one_label_resolve_by_the_others() {
        let labels = [Placed { position: 0.0, candidates: vec![100.0, 10.0], full: true, minutes: None }, full(0.5, 10.25), full(1.0, 10.5)];
        let fit = fit_axis(&labels, 0.01, 0.05..=5.0).unwrap();
        assert_eq!(fit.verdicts[0], Ok(10.0));
    }

    #[test]
    fn one_label_or_minutes_alone_are_too_few() {
        assert_eq!(fit_axis(&[full(0.0, 36.0)], 0.01, 0.05..=5.0).unwrap_err(), AxisProblem::TooFew);
        assert_eq!(fit_axis(&[minutes(0.0, 30.0), minutes(1.0, 45.0)], 0.01, 0.05..=5.0).unwrap_err(), AxisProblem::TooFew);
    }
}
