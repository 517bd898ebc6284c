//! CTC greedy decoding of the recogniser's output with its own alphabet.

/// The recogniser's symbols by class index: the CTC blank at 0, the model's
/// characters, then a space (PaddleOCR's convention for `use_space_char`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alphabet {
    symbols: Vec<String>,
}

impl Alphabet {
    /// The alphabet from the model's `character` metadata: one symbol per line. Full-width
    /// forms (the Chinese model's `（`, `，`, the ideographic space) read as their ASCII
    /// counterparts, as Unicode's compatibility normalisation (NFKC) has them.
    pub fn from_metadata(character: &str) -> Alphabet {
        let characters = character.split('\n').map(|line| line.trim_end_matches('\r')).filter(|line| !line.is_empty());
        let symbols = std::iter::once(String::new())
            .chain(characters.map(|symbol| symbol.chars().map(half_width).collect()))
            .chain(std::iter::once(" ".to_owned()))
            .collect();
        Alphabet { symbols }
    }

    /// The alphabet from a dictionary file already aligned to the model's classes (PP-OCRv5's
    /// `ppocr_keys_v5.txt`): one symbol per line, the blank's placeholder first and the space
    /// last; full-width forms read as ASCII, as in [`Alphabet::from_metadata`].
    pub fn from_keys(keys: &str) -> Alphabet {
        let mut lines: Vec<&str> = keys.split('\n').map(|line| line.trim_end_matches('\r')).collect();
        if lines.last() == Some(&"") {
            lines.pop();
        }
        let symbols =
            lines.iter().enumerate().map(|(class, symbol)| if class == 0 { String::new() } else { symbol.chars().map(half_width).collect() }).collect();
        Alphabet { symbols }
    }

    /// Classes the recogniser must output per time step (blank and space included).
    pub fn classes(&self) -> usize {
        self.symbols.len()
    }

    /// Decodes one line: `probabilities` is `steps × classes`, row-major. Per step the most
    /// likely class; repeats of the previous step and blanks are dropped. The score is the mean
    /// probability of the symbols kept (0 for an empty line). Word gaps the recogniser left
    /// blank are spaces again: see `WORD_GAP` (0.05), and with `ink` also [`INK_GAP`].
    pub fn decode(&self, probabilities: &[f32], classes: usize, ink: Option<&InkColumns>) -> (String, f32) {
        let mut symbols: Vec<Symbol> = Vec::new();
        let mut previous = None;
        for (at, step) in probabilities.chunks_exact(classes).enumerate() {
            let (best, probability) = step.iter().copied().enumerate().fold((0, f32::MIN), |best, (class, p)| if p > best.1 { (class, p) } else { best });
            match symbols.last_mut() {
                Some(last) if previous == Some(best) && best != 0 => last.last = at,
                _ if best != 0 => symbols.push(Symbol { class: best, first: at, last: at, probability }),
                _ => {}
            }
            previous = Some(best);
        }
        let score = if symbols.is_empty() { 0.0 } else { symbols.iter().map(|s| s.probability).sum::<f32>() / symbols.len() as f32 };
        let text = self.spaces(probabilities, classes, &symbols, ink);
        (text, score)
    }

    /// The text of `symbols`, with a space where the recogniser gave one, and in the blank steps
    /// between two symbols where it thought of one: where the space's probability peaks at
    /// [`WORD_GAP`] or more (a dropped space; between the letters of a word it stays under 0.01),
    /// or, given the line's `ink`, where its widest gap is [`INK_GAP`] of the ink's height or more.
    /// Punctuation that ends a clause followed by a letter (",undivided"), and a letter or digit
    /// followed by an open parenthesis that is not a doubt's "(?)", are spaced too.
    fn spaces(&self, probabilities: &[f32], classes: usize, symbols: &[Symbol], ink: Option<&InkColumns>) -> String {
        let space = self.symbols.len() - 1;
        let text_of = |symbol: &Symbol| self.symbols.get(symbol.class).map_or("", String::as_str);
        // The space class, or a symbol that reads as one (the ideographic space).
        let is_space = |symbol: &Symbol| symbol.class == space || text_of(symbol) == " ";
        let mut text = String::new();
        for (index, symbol) in symbols.iter().enumerate() {
            if is_space(symbol) {
                if !text.is_empty() && !text.ends_with(' ') {
                    text.push(' ');
                }
                continue;
            }
            let here = text_of(symbol);
            if let Some(before) = index.checked_sub(1).map(|i| &symbols[i]).filter(|before| !is_space(before)) {
                let blank = &probabilities[(before.last + 1) * classes..symbol.first * classes];
                let thought = blank.chunks_exact(classes).any(|step| step[space] >= WORD_GAP)
                    || ink.is_some_and(|ink| ink.widest_gap(before.last, symbol.first) >= INK_GAP * ink.height);
                let after = text.chars().last().unwrap_or(' ');
                let clause = matches!(after, ',' | ';' | ':' | ')') && here.starts_with(char::is_alphabetic);
                let doubt = symbols.get(index + 1).is_some_and(|next| text_of(next) == "?");
                let aside = here == "(" && after.is_alphanumeric() && !doubt;
                if thought || clause || aside {
                    text.push(' ');
                }
            }
            text.push_str(here);
        }
        text.trim_end().to_owned()
    }
}

/// The space's probability in a blank step that makes it a word gap: on the USGS scan the gaps
/// between words the recogniser left blank peak at 0.06 (capitals: "LIST OF MAP UNITS") to 0.47,
/// the gaps between the letters of a word at 0.03 at most, nearly all under 0.002.
const WORD_GAP: f32 = 0.05;

/// A gap without ink this wide, as a share of the line's ink height, is a word gap. PP-OCRv5 seldom
/// weighs a space at all (its space's probability stays under 0.01 in "CORRELATION OF MAP UNITS");
/// on 198 lines of the USGS scan whose letters it read as PP-OCRv4 did, the gaps where v4 put
/// one of 219 spaces were 0.1–0.7 of the height (all 0.3 or more, or weighed by v5 at 0.05 or
/// more), the 1,950 gaps between letters under 0.3 but two (capitals set wide).
pub const INK_GAP: f32 = 0.3;

/// Where a line image (as the recogniser sees it) has ink, column by column: what spaces words
/// when the recogniser does not ([`INK_GAP`]).
#[derive(Debug, Clone, PartialEq)]
pub struct InkColumns {
    /// Whether each column holds ink.
    columns: Vec<bool>,
    /// Rows from the first with ink to the last.
    height: f32,
    /// Columns per recogniser step.
    step: f32,
}

impl InkColumns {
    /// The ink of a `width`-column line image of `grey` values (row-major), read by `steps`
    /// recogniser steps over `input_width` columns: pixels darker than halfway between the
    /// image's 5th and 95th percentiles. `None` when those differ by 40 or less, or the image is
    /// empty (no ink to tell).
    pub fn of(grey: &[f32], width: usize, input_width: usize, steps: usize) -> Option<InkColumns> {
        if grey.is_empty() || width == 0 {
            return None;
        }
        let mut sorted = grey.to_vec();
        sorted.sort_by(f32::total_cmp);
        let percentile = |share: f32| sorted[((sorted.len() - 1) as f32 * share) as usize];
        let (light, dark) = (percentile(0.95), percentile(0.05));
        if light - dark <= 40.0 {
            return None;
        }
        let middle = (light + dark) / 2.0;
        let rows: Vec<&[f32]> = grey.chunks_exact(width).collect();
        let columns = (0..width).map(|x| rows.iter().any(|row| row[x] < middle)).collect();
        let inked: Vec<usize> = (0..rows.len()).filter(|&y| rows[y].iter().any(|&value| value < middle)).collect();
        let height = inked.last().map_or(0, |last| last - inked[0] + 1) as f32;
        Some(InkColumns { columns, height, step: input_width as f32 / steps.max(1) as f32 })
    }

    /// The widest run of columns without ink from recogniser step `after` (a symbol's last) to
    /// the end of step `before` (the next symbol's first).
    fn widest_gap(&self, after: usize, before: usize) -> f32 {
        let from = ((after as f32 * self.step) as usize).min(self.columns.len());
        let to = (((before + 1) as f32 * self.step) as usize).min(self.columns.len());
        let (mut run, mut widest) = (0, 0);
        for &inked in &self.columns[from..to.max(from)] {
            run = if inked { 0 } else { run + 1 };
            widest = widest.max(run);
        }
        widest as f32
    }
}

/// One symbol the recogniser emitted: its class and the steps its run spans.
#[derive(Debug, Clone, Copy)]
struct Symbol {
    class: usize,
    first: usize,
    last: usize,
    probability: f32,
}

/// The ASCII counterpart of a full-width form (U+FF01–U+FF5E) or of the ideographic space; any other character as it is.
fn half_width(c: char) -> char {
    match c as u32 {
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step whose most likely class is `class` at `p` (the rest share what is left).
    fn step(class: usize, p: f32, classes: usize) -> Vec<f32> {
        (0..classes).map(|c| if c == class { p } else { (1.0 - p) / (classes - 1) as f32 }).collect()
    }

    #[test]
    fn repeats_collapse_blanks_separate_and_the_space_is_last() {
        let alphabet = Alphabet::from_metadata("P\ne\nr\nm\ni\na\nn\r\n");
        assert_eq!(alphabet.classes(), 9);
        let classes = alphabet.classes();
        // P P blank e r r blank r m space m i a n n
        let steps = [
            (1, 0.9),
            (1, 0.8),
            (0, 0.99),
            (2, 0.7),
            (3, 0.9),
            (3, 0.9),
            (0, 0.9),
            (3, 0.8),
            (4, 0.9),
            (8, 0.6),
            (4, 0.9),
            (5, 0.9),
            (6, 0.9),
            (7, 0.9),
            (7, 0.9),
        ];
        let probabilities: Vec<f32> = steps.iter().flat_map(|&(class, p)| step(class, p, classes)).collect();
        let (text, score) = alphabet.decode(&probabilities, classes, None);
        assert_eq!(text, "Perrm mian");
        let kept = [0.9, 0.7, 0.9, 0.8, 0.9, 0.6, 0.9, 0.9, 0.9, 0.9];
        assert!((score - kept.iter().sum::<f32>() / kept.len() as f32).abs() < 1e-6);
    }

    /// `text` as steps: each symbol for one step at 0.9 then a blank at 0.9, a `·` a further blank
    /// (the space's probability 0.001), a `_` a blank with the space at 0.09 (a dropped word gap).
    fn steps(alphabet: &Alphabet, text: &str) -> Vec<f32> {
        let classes = alphabet.classes();
        let blank = |space: f32| {
            (0..classes).map(move |c| {
                if c == 0 {
                    0.9
                } else if c == classes - 1 {
                    space
                } else {
                    (0.1 - space) / (classes - 2) as f32
                }
            })
        };
        text.chars()
            .flat_map(|c| match c {
                '·' => blank(0.001).collect::<Vec<_>>(),
                '_' => blank(0.09).collect(),
                _ => {
                    let class = alphabet.symbols.iter().position(|s| s == &c.to_string()).expect("in the alphabet");
                    step(class, 0.9, classes).into_iter().chain(blank(0.001)).collect()
                }
            })
            .collect()
    }

    #[test]
    fn a_blank_gap_where_the_recogniser_thought_of_a_space_is_a_word_gap() {
        let alphabet = Alphabet::from_metadata("L\nI\nS\nT\nO\nF\nM\nA\nP");
        let classes = alphabet.classes();
        // Capitals spaced wide: the gaps inside a word are as long as those between words, but only
        // between words did the recogniser weigh a space.
        assert_eq!(alphabet.decode(&steps(&alphabet, "L·I·S···T·_··O···F··_··M···A···P"), classes, None).0, "LIST OF MAP");
        assert_eq!(alphabet.decode(&steps(&alphabet, "M·········A"), classes, None).0, "MA", "a long gap alone is no space");
        assert_eq!(alphabet.decode(&steps(&alphabet, "_M_A_"), classes, None).0, "M A", "nor a space before or after the line");
    }

    #[test]
    fn clause_punctuation_and_asides_are_spaced_but_a_doubt_is_not() {
        let alphabet = Alphabet::from_metadata("a\nb\n,\n(\n)\n?\n.");
        let classes = alphabet.classes();
        for (read, text) in [("a,b", "a, b"), ("a(b)", "a (b)"), ("a(?)", "a(?)"), ("a(?)b", "a(?) b"), ("a.b", "a.b"), ("a,", "a,")] {
            assert_eq!(alphabet.decode(&steps(&alphabet, read), classes, None).0, text, "{read}");
        }
    }

    #[test]
    fn full_width_forms_read_as_ascii() {
        let alphabet = Alphabet::from_metadata("（\n）\nＡ\n\u{3000}\n岩");
        let probabilities: Vec<f32> = [1, 3, 4, 5, 2].iter().flat_map(|&class| step(class, 0.9, 7)).collect();
        assert_eq!(alphabet.decode(&probabilities, 7, None).0, "(A 岩)");
    }

    #[test]
    fn the_ideographic_space_is_a_space_and_never_doubled() {
        let alphabet = Alphabet::from_metadata("a\n\u{3000}\nb");
        let classes = alphabet.classes();
        // a, the ideographic space with the space weighed in the blanks around it, b.
        let mut probabilities: Vec<f32> = step(1, 0.9, classes);
        for class in [0, 2, 0] {
            let mut weighed = step(class, 0.8, classes);
            weighed[classes - 1] = 0.1;
            probabilities.extend(weighed);
        }
        probabilities.extend(step(3, 0.9, classes));
        assert_eq!(alphabet.decode(&probabilities, classes, None).0, "a b");
    }

    #[test]
    fn an_all_blank_line_is_empty_with_no_score() {
        let alphabet = Alphabet::from_metadata("a\nb");
        let probabilities: Vec<f32> = (0..5).flat_map(|_| step(0, 0.9, 4)).collect();
        assert_eq!(alphabet.decode(&probabilities, 4, None), (String::new(), 0.0));
    }

    #[test]
    fn a_keys_file_is_the_alphabet_as_it_stands() {
        let alphabet = Alphabet::from_keys("blank\nA\nＢ\n \n");
        assert_eq!(alphabet.symbols, ["", "A", "B", " "], "the placeholder is the blank, the last line the space");
        assert_eq!(alphabet.classes(), 4);
    }

    #[test]
    fn a_wide_gap_in_the_ink_is_a_word_gap_when_the_recogniser_weighed_no_space() {
        // "ab cd" in a 10-row image, one recogniser step per 4 columns: letters 4 columns wide with
        // 1-column gaps, and a 4-column word gap (0.4 of the ink's 10 rows) after "b".
        let pattern = "####.####....####.####";
        let (width, steps) = (pattern.len(), pattern.len().div_ceil(4));
        let grey: Vec<f32> = (0..10).flat_map(|_| pattern.chars().map(|c| if c == '#' { 20.0 } else { 240.0 })).collect();
        let ink = InkColumns::of(&grey, width, steps * 4, steps).expect("contrast enough");
        let alphabet = Alphabet::from_keys("blank\na\nb\nc\nd\n \n");
        let classes = alphabet.classes();
        // Steps: a(0) b(1) blank(2) c(3) d(4) blank(5): the gap between b and c spans columns 4–15.
        let probabilities: Vec<f32> = [1, 2, 0, 3, 4, 0].iter().flat_map(|&class| step(class, 0.9, classes)).collect();
        assert_eq!(alphabet.decode(&probabilities, classes, Some(&ink)).0, "ab cd");
        assert_eq!(alphabet.decode(&probabilities, classes, None).0, "abcd", "the space's probability alone spaces nothing here");
        let tight: Vec<f32> = (0..10).flat_map(|_| "####.####.####.####".chars().map(|c| if c == '#' { 20.0 } else { 240.0 })).collect();
        let ink = InkColumns::of(&tight, 19, 20, 5).expect("contrast enough");
        assert_eq!(alphabet.decode(&probabilities, classes, Some(&ink)).0, "abcd", "gaps between letters are not words");
        assert_eq!(InkColumns::of(&[128.0; 40], 4, 4, 1), None, "a blank image has no ink to tell by");
    }
}
