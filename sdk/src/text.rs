//! Matching what people write against the names a vocabulary holds.

use unicode_normalization::UnicodeNormalization;

/// A name folded for matching: no diacritics, lower case, letters and digits
/// only (so "Jurássico", "jurassico" and "JURASSICO" fold alike, and so do
/// "Lower Cretaceous", "lower-cretaceous" and "LowerCretaceous"; CJK labels
/// written with or without spaces fold alike too).
pub fn fold(text: &str) -> String {
    text.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).flat_map(char::to_lowercase).filter(|c| c.is_alphanumeric()).collect()
}

/// Up to `limit` of `names` closest to `term` (by folded Jaro–Winkler), best
/// first, each name once; nothing below a similarity of 0.75.
pub fn close_matches<'a>(term: &str, names: impl Iterator<Item = &'a str>, limit: usize) -> Vec<String> {
    let key = fold(term);
    let mut scored: Vec<(f64, &str)> = names.map(|name| (strsim::jaro_winkler(&key, &fold(name)), name)).filter(|(score, _)| *score >= 0.75).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut out: Vec<String> = Vec::new();
    for (_, name) in scored {
        if out.len() == limit {
            break;
        }
        if !out.iter().any(|seen| seen == name) {
            out.push(name.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_drops_case_diacritics_spaces_and_punctuation() {
        assert_eq!(fold("Jurássico"), "jurassico");
        assert_eq!(fold("Lower-Cretaceous"), fold("LowerCretaceous"));
        assert_eq!(fold("侏罗 系"), "侏罗系");
    }

    #[test]
    fn close_matches_rank_by_similarity() {
        let names = ["Jurassic", "Triassic", "Cretaceous"];
        assert_eq!(close_matches("Jurasic", names.into_iter(), 2)[0], "Jurassic");
        assert!(close_matches("xyz", names.into_iter(), 2).is_empty());
    }
}
