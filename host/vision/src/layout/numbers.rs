//! Numbers as a sheet prints them and the reader returns them: years, a scale's ratio, and
//! digits the reader took for letters (`2oo5`, `5O`).
//!
//! Invariant: pure text work.

/// A word of digits as printed, with the letters the reader takes digits for read back
/// (`2oo5` is 2005, `5O` 50): only a word of digits and those letters, at least half of it real digits.
pub fn number_word(word: &str) -> Option<String> {
    let digit = |c: char| match c {
        'o' | 'O' => Some('0'),
        'l' | 'I' => Some('1'),
        c if c.is_ascii_digit() || c == '.' => Some(c),
        _ => None,
    };
    let real = word.chars().filter(char::is_ascii_digit).count();
    let read: Option<String> = word.chars().map(digit).collect();
    read.filter(|_| real >= 1 && 2 * real >= word.chars().count())
}

/// Marks a symbol's own strokes are read as beside its number (its tick, its strike line).
const STROKE_MARKS: &[char] = &['T', '\'', '°', '|', '+', '-', '_', '/', '\\', '.', ','];

/// The number a short line of words is beside a point symbol (a dip): one to three digits with at
/// most one mark a symbol's stroke is read as on either side (`T35`, `35'`), never a letter (`K2` is a
/// unit's code).
pub fn printed_number(text: &str) -> Option<u32> {
    let text = text.trim();
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let end = text.rfind(|c: char| c.is_ascii_digit())? + 1;
    let digits = &text[start..end];
    let stray = |side: &str| side.chars().count() <= 1 && side.chars().all(|c| STROKE_MARKS.contains(&c));
    (digits.chars().all(|c| c.is_ascii_digit()) && digits.len() <= 3 && stray(&text[..start]) && stray(&text[end..])).then(|| digits.parse().ok()).flatten()
}

/// The years (1850–2049) a line prints as whole numbers (digits the reader took for letters read back).
pub fn years(line: &str) -> Vec<u32> {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| word.len() == 4)
        .filter_map(number_word)
        .filter_map(|digits| digits.parse().ok())
        .filter(|y| (1850..2050).contains(y))
        .collect()
}

/// The scale a line prints (`SCALE 1:100 000`, `1:24,000`), as the `N` of `1:N`.
pub fn scale_ratio(line: &str) -> Option<u64> {
    let compact: String = line.chars().filter(|c| !c.is_whitespace() && *c != ',' && *c != '.').collect();
    let at = compact.find("1:")?;
    let digits: String = compact[at + 2..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| (1_000..=10_000_000).contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_beside_a_symbol_may_carry_one_stray_mark_a_side() {
        assert_eq!([printed_number("35"), printed_number("T35"), printed_number("35'"), printed_number("120")], [Some(35), Some(35), Some(35), Some(120)]);
        assert_eq!([printed_number("Tb"), printed_number("3 5"), printed_number("1234"), printed_number("Qal 12"), printed_number("K2")], [None; 5]);
    }

    #[test]
    fn digits_read_as_letters_are_read_back() {
        assert_eq!(years("Manuscript approved for publication,2oo5"), [2005]);
        assert_eq!(years("Pooh 1986 and IO10"), [1986]);
        assert_eq!(number_word("5O").as_deref(), Some("50"));
    }

    #[test]
    fn the_scale_ratio_is_read() {
        assert_eq!(scale_ratio("SCALE 1:100 000"), Some(100_000));
        assert_eq!(scale_ratio("1:24,000"), Some(24_000));
        assert_eq!(scale_ratio("Figure 1: index"), None);
    }
}
