//! Coordinate labels as the reader returns them, parsed into values: degrees, minutes and seconds
//! with the OCR look-alikes of their marks, minutes-only side labels, decimal degrees, and UTM
//! eastings and northings (superscript thousands and `mE`/`mN` included).
//!
//! Invariants: parsing is pure text work; every text that is not a coordinate gets a reason; a
//! label whose digits admit two readings (a degree mark read as `0`) keeps both, and the fit
//! chooses the one consistent with the other labels.

/// Look-alikes of the degree mark.
const DEGREE_MARKS: &[char] = &['°', 'º', '˚', 'o', 'O', '*', '•', '·', '˙', '⁰'];
/// Look-alikes of the minute mark.
const MINUTE_MARKS: &[char] = &['\'', '’', '‘', '′', '`', '´', 'ʹ', 'ʼ'];
/// Look-alikes of the second mark.
const SECOND_MARKS: &[char] = &['"', '″', '”', '“', '˝', 'ʺ'];
/// Superscript digits, as UTM labels print their leading figures.
const SUPERSCRIPTS: [(char, char); 10] =
    [('⁰', '0'), ('¹', '1'), ('²', '2'), ('³', '3'), ('⁴', '4'), ('⁵', '5'), ('⁶', '6'), ('⁷', '7'), ('⁸', '8'), ('⁹', '9')];

/// A hemisphere letter printed with a label, or the sign of a decimal value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Hemisphere {
    /// `N`.
    North,
    /// `S`.
    South,
    /// `E`.
    East,
    /// `W`.
    West,
    /// A minus sign: south or west, whichever axis the label turns out to be on.
    Negative,
}

/// Which metric axis a UTM label names (`mE`, `mN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetricAxis {
    /// An easting.
    Easting,
    /// A northing.
    Northing,
}

/// What a label says.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A whole angle in degrees as printed (no sign); several when the digits admit more than one reading.
    Degrees(Vec<f64>),
    /// Minutes (and seconds, as a fraction of a minute) past a whole degree the label leaves out.
    Minutes(f64),
    /// Either whole angles or minutes past a whole degree: the marks were misread (`35'30`).
    DegreesOrMinutes(Vec<f64>, f64),
    /// A UTM coordinate in metres, and the axis when the label names it.
    Metres(f64, Option<MetricAxis>),
}

/// A parsed label.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The value.
    pub value: Value,
    /// The hemisphere letter or sign printed with it.
    pub hemisphere: Option<Hemisphere>,
}

/// One piece of an angle: a number and the mark after it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mark {
    Degree,
    Minute,
    Second,
    None,
}

/// Parses a label's text, or says why it is not a coordinate.
pub fn parse(text: &str) -> Result<Parsed, String> {
    let mut compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    compact = compact.replace("''", "\"").replace("’’", "\"").replace(",", "").trim_matches(|c| c == '.' || c == '(' || c == ')').to_owned();
    if compact.is_empty() {
        return Err("empty".to_owned());
    }
    if let Some(parsed) = metres(&compact) {
        return Ok(parsed);
    }
    let (body, hemisphere) = strip_hemisphere(&compact);
    match angle(body) {
        Ok(value) => Ok(Parsed { value, hemisphere }),
        // A label the reader ran together with a neighbouring word (`R14W113°45'`): its longest
        // run of digits and marks, when that run has four digits or a mark.
        Err(reason) => {
            let is_part = |c: char| {
                c.is_ascii_digit()
                    || c == '.'
                    || DEGREE_MARKS.contains(&c) && c.is_ascii_punctuation()
                    || MINUTE_MARKS.contains(&c)
                    || SECOND_MARKS.contains(&c)
                    || c == '°'
            };
            let runs = body.split(|c: char| !is_part(c)).filter(|run| run.chars().filter(char::is_ascii_digit).count() >= 4);
            runs.max_by_key(|run| run.len())
                .filter(|run| run.len() < body.len())
                .and_then(|run| angle(run).ok())
                .map(|value| Parsed { value, hemisphere: None })
                .ok_or(reason)
        }
    }
}

/// A trailing or leading hemisphere letter (or a leading minus), and the rest.
fn strip_hemisphere(text: &str) -> (&str, Option<Hemisphere>) {
    let letter = |c: char| match c {
        'N' => Some(Hemisphere::North),
        'S' => Some(Hemisphere::South),
        'E' => Some(Hemisphere::East),
        'W' => Some(Hemisphere::West),
        _ => None,
    };
    if let Some(rest) = text.strip_prefix(['-', '−', '–', '—', '‐']) {
        return (rest, Some(Hemisphere::Negative));
    }
    if let Some(hemisphere) = text.chars().last().and_then(letter) {
        return (&text[..text.len() - 1], Some(hemisphere));
    }
    if let Some(hemisphere) = text.chars().next().and_then(letter) {
        return (&text[1..], Some(hemisphere));
    }
    (text, None)
}

/// A UTM value: digits (superscripts read as digits) ending in `mE`/`mN` (or `m.E.`, `E`, `N`),
/// or six or seven plain digits ending in `000`, as grid ticks print them.
fn metres(text: &str) -> Option<Parsed> {
    let plain: String = text.chars().map(|c| SUPERSCRIPTS.iter().find(|(s, _)| *s == c).map_or(c, |(_, d)| *d)).filter(|c| *c != '.').collect();
    let digits_end = plain.find(|c: char| !c.is_ascii_digit()).unwrap_or(plain.len());
    let (digits, suffix) = plain.split_at(digits_end);
    let axis = match suffix {
        "mE" | "ME" | "me" | "E" => Some(MetricAxis::Easting),
        "mN" | "MN" | "mn" | "N" => Some(MetricAxis::Northing),
        "m" | "" => None,
        _ => return None,
    };
    let long_enough = if axis.is_some() { (5..=7).contains(&digits.len()) } else { (6..=7).contains(&digits.len()) && digits.ends_with("000") };
    if !long_enough {
        return None;
    }
    Some(Parsed { value: Value::Metres(digits.parse().ok()?, axis), hemisphere: None })
}

/// Degrees, minutes and seconds, however many of them the label prints.
fn angle(text: &str) -> Result<Value, String> {
    let mut pieces: Vec<(String, Mark)> = Vec::new();
    let mut number = String::new();
    for c in text.chars() {
        let mark = if DEGREE_MARKS.contains(&c) && !(c == 'O' && number.is_empty()) {
            Mark::Degree
        } else if MINUTE_MARKS.contains(&c) {
            Mark::Minute
        } else if SECOND_MARKS.contains(&c) {
            Mark::Second
        } else if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        } else {
            return Err(format!("not a coordinate: `{c}` is neither a digit nor a degree, minute or second mark"));
        };
        if number.is_empty() {
            return Err("not a coordinate: a mark with no number before it".to_owned());
        }
        pieces.push((std::mem::take(&mut number), mark));
    }
    if !number.is_empty() {
        pieces.push((number, Mark::None));
    }
    let value = |piece: &str| piece.parse::<f64>().map_err(|_| format!("not a coordinate: `{piece}` is not a number"));
    match pieces.as_slice() {
        [(only, Mark::None)] if only.contains('.') => {
            let degrees = value(only)?;
            check_degrees(degrees)?;
            Ok(Value::Degrees(vec![degrees]))
        }
        // Whole minutes whose mark the reader dropped (`45` beside a tick); the fit keeps them only
        // where they agree. One digit alone is not taken: scale bars print rows of them.
        [(only, Mark::None)] if only.len() == 2 => Ok(Value::Minutes(minutes_of(&pieces)?)),
        // Every mark dropped: `3545` is 35°45', `11300` 113°00', `353730` 35°37'30".
        [(digits, Mark::None)] if (4..=7).contains(&digits.len()) && !digits.contains('.') => {
            let number = |range: std::ops::Range<usize>| digits.get(range).and_then(|d| d.parse::<f64>().ok());
            let n = digits.len();
            let mut values = Vec::new();
            if let (Some(d), Some(m)) = (number(0..n - 2), number(n - 2..n)) {
                values.push((d, m, 0.0));
            }
            if let (true, Some(d), Some(m), Some(sec)) = (n >= 5, number(0..n - 4), number(n - 4..n - 2), number(n - 2..n)) {
                values.push((d, m, sec));
            }
            let values: Vec<f64> =
                values.into_iter().filter(|(d, m, sec)| *d <= 180.0 && *m < 60.0 && *sec < 60.0).map(|(d, m, sec)| d + m / 60.0 + sec / 3600.0).collect();
            if values.is_empty() {
                return Err("not a coordinate: a number with no degree, minute or second mark that reads as no angle".to_owned());
            }
            Ok(Value::Degrees(values))
        }
        [(_, Mark::None)] => Err("not a coordinate: a number with no degree, minute or second mark and no decimals".to_owned()),
        // Three numbers are degrees, minutes and seconds whatever marks the reader saw (`35°52°30`).
        [(d, _), (m, _), (sec, Mark::Second | Mark::None | Mark::Degree | Mark::Minute)] => {
            let degrees = value(d)?;
            check_degrees(degrees)?;
            Ok(Value::Degrees(vec![degrees + in_range(value(m)?, "minutes")? / 60.0 + in_range(value(sec)?, "seconds")? / 3600.0]))
        }
        [(degrees, Mark::Degree), rest @ ..] => {
            let degrees = value(degrees)?;
            check_degrees(degrees)?;
            Ok(Value::Degrees(vec![degrees + minutes_of(rest)? / 60.0]))
        }
        // `113'15` or `35'30`: at small sizes the reader turns a degree mark into a minute mark
        // and drops the last one; `52'30` may also be minutes and seconds whose mark was dropped.
        [(degrees, Mark::Minute), (minutes, Mark::None)] if minutes.len() == 2 && !degrees.contains('.') => {
            let (whole, part) = (value(degrees)?, value(minutes)?);
            check_degrees(whole)?;
            let as_degrees = whole + in_range(part, "minutes")? / 60.0;
            let as_minutes = (whole < 60.0).then(|| whole + part / 60.0);
            Ok(match as_minutes {
                Some(minutes) => Value::DegreesOrMinutes(vec![as_degrees], minutes),
                None => Value::Degrees(vec![as_degrees]),
            })
        }
        [(first, Mark::Minute), rest @ ..] if value(first)? >= 60.0 => {
            // The degree mark was lost or read as a digit: 11400' is 114°00', 114000' too.
            let minutes = minutes_of(rest)?;
            let digits: Vec<char> = first.chars().collect();
            let mut readings = Vec::new();
            if digits.len() >= 3 && !first.contains('.') {
                let (whole, tail) = digits.split_at(digits.len() - 2);
                let tail: String = tail.iter().collect();
                let tail = value(&tail)?;
                if tail < 60.0 {
                    let mark_lost: String = whole.iter().collect();
                    readings.push((value(&mark_lost)?, tail));
                    if whole.len() >= 2 && whole[whole.len() - 1] == '0' {
                        let read_as_zero: String = whole[..whole.len() - 1].iter().collect();
                        readings.push((value(&read_as_zero)?, tail));
                    }
                }
            }
            let values: Vec<f64> = readings.into_iter().filter(|(d, _)| check_degrees(*d).is_ok()).map(|(d, m)| d + (m + minutes / 60.0) / 60.0).collect();
            if values.is_empty() {
                return Err(format!("not a coordinate: {first} minutes is more than 59 and no reading of it as degrees fits"));
            }
            Ok(Value::Degrees(values))
        }
        [(_, Mark::Minute), ..] => {
            let minutes = minutes_of(&pieces[..])?;
            Ok(Value::Minutes(minutes))
        }
        [(_, Mark::Second)] => Err("not a coordinate: seconds alone".to_owned()),
        _ => Err("not a coordinate: the marks are out of order".to_owned()),
    }
}

/// Minutes (seconds as a fraction) from pieces that start with minutes, or nothing.
fn minutes_of(pieces: &[(String, Mark)]) -> Result<f64, String> {
    let number = |piece: &str| piece.parse::<f64>().map_err(|_| format!("not a coordinate: `{piece}` is not a number"));
    match pieces {
        [] => Ok(0.0),
        [(minutes, Mark::Minute | Mark::None)] => in_range(number(minutes)?, "minutes"),
        [(minutes, Mark::Minute), (seconds, Mark::Second | Mark::None)] => {
            Ok(in_range(number(minutes)?, "minutes")? + in_range(number(seconds)?, "seconds")? / 60.0)
        }
        _ => Err("not a coordinate: the marks are out of order".to_owned()),
    }
}

fn in_range(value: f64, what: &str) -> Result<f64, String> {
    if (0.0..60.0).contains(&value) { Ok(value) } else { Err(format!("not a coordinate: {value} {what} is out of range (0 to 59)")) }
}

fn check_degrees(degrees: f64) -> Result<(), String> {
    if (0.0..=180.0).contains(&degrees) { Ok(()) } else { Err(format!("not a coordinate: {degrees} degrees is out of range")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degrees(text: &str) -> Vec<f64> {
        match parse(text) {
            Ok(Parsed { value: Value::Degrees(values), .. }) => values,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn full_labels_read_with_their_marks_and_look_alikes() {
        assert!(close(degrees("114°00'")[0], 114.0));
        assert!(close(degrees("35°52'30\"")[0], 35.875));
        assert!(close(degrees("35º37’30”")[0], 35.625));
        assert!(close(degrees("113o15'")[0], 113.25));
        assert!(close(degrees("36*00′")[0], 36.0));
        assert!(close(degrees("35° 45'")[0], 35.75));
        assert!(close(degrees("113.75")[0], 113.75));
        assert!(close(degrees("36°")[0], 36.0));
        assert!(close(degrees("35°52'30''")[0], 35.875));
    }

    #[test]
    fn a_lost_or_misread_degree_mark_keeps_every_reading() {
        assert_eq!(degrees("11400'"), vec![114.0]);
        assert_eq!(degrees("114000'"), vec![114.0]); // 1140 degrees is out of range
        assert_eq!(degrees("36000'"), vec![36.0]);
        assert_eq!(degrees("10000'"), vec![100.0, 10.0]);
    }

    #[test]
    fn minutes_only_labels_and_hemispheres() {
        assert_eq!(parse("52'30\"").unwrap().value, Value::Minutes(52.5));
        assert_eq!(parse("45'").unwrap().value, Value::Minutes(45.0));
        assert_eq!(parse("45").unwrap().value, Value::Minutes(45.0)); // the mark dropped by the reader
        assert_eq!(parse("113'15").unwrap().value, Value::Degrees(vec![113.25])); // the degree mark read as a minute mark
        assert_eq!(parse("35'30").unwrap().value, Value::DegreesOrMinutes(vec![35.5], 35.5));
        // What the reader made of the USGS sample's small labels.
        assert!(close(degrees("35°52°30")[0], 35.875));
        assert!(close(degrees("35°37’30*")[0], 35.625));
        assert_eq!(degrees("3545"), vec![35.75]);
        assert_eq!(degrees("11330"), vec![113.5, 1.0 + 13.0 / 60.0 + 30.0 / 3600.0]);
        assert_eq!(degrees("R14W11345")[0], 113.75);
        assert_eq!(parse("114°00'W").unwrap().hemisphere, Some(Hemisphere::West));
        assert_eq!(parse("N36°").unwrap().hemisphere, Some(Hemisphere::North));
        assert_eq!(parse("-113.5").unwrap().hemisphere, Some(Hemisphere::Negative));
    }

    #[test]
    fn utm_labels_with_superscripts_and_suffixes() {
        assert_eq!(parse("385000mE").unwrap().value, Value::Metres(385000.0, Some(MetricAxis::Easting)));
        assert_eq!(parse("³85⁰⁰⁰mE").unwrap().value, Value::Metres(385000.0, Some(MetricAxis::Easting)));
        assert_eq!(parse("3 970 000 mN").unwrap().value, Value::Metres(3970000.0, Some(MetricAxis::Northing)));
        assert_eq!(parse("386000").unwrap().value, Value::Metres(386000.0, None));
    }

    #[test]
    fn words_and_bad_values_say_why() {
        assert!(parse("QUADRANGLE").unwrap_err().contains("not a coordinate"));
        assert!(parse("1986").unwrap_err().contains("reads as no angle"));
        assert!(parse("5").unwrap_err().contains("no decimals"), "a scale bar's digit");
        assert!(parse("75'").unwrap_err().contains("no reading"));
        assert!(parse("35°75'").unwrap_err().contains("out of range"));
        assert!(parse("200°").unwrap_err().contains("out of range"));
    }
}
