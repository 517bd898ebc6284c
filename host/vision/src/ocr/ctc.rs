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

    /// Classes the recogniser must output per time step (blank and space included).
    pub fn classes(&self) -> usize {
        self.symbols.len()
    }

    /// Decodes one line: `probabilities` is `steps × classes`, row-major. Per step the most
    /// likely class; repeats of the previous step and blanks are dropped. The score is the mean
    /// probability of the symbols kept (0 for an empty line). Word gaps the recogniser left
    /// blank are spaces again: see `WORD_GAP` (0.05).
    pub fn decode(&self, probabilities: &[f32], classes: usize) -> (String, f32) {
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
        let text = self.spaces(probabilities, classes, &symbols);
        (text, score)
    }

    /// The text of `symbols`, with a space where the recogniser gave one, and in the blank steps
    /// between two symbols where it thought of one: where the space's probability peaks at
    /// [`WORD_GAP`] or more (a dropped space; between the letters of a word it stays under 0.01).
    /// Punctuation that ends a clause followed by a letter (",undivided"), and a letter or digit
    /// followed by an open parenthesis that is not a doubt's "(?)", are spaced too.
    fn spaces(&self, probabilities: &[f32], classes: usize, symbols: &[Symbol]) -> String {
        let space = self.symbols.len() - 1;
        let text_of = |symbol: &Symbol| self.symbols.get(symbol.class).map_or("", String::as_str);
        let mut text = String::new();
        for (index, symbol) in symbols.iter().enumerate() {
            if symbol.class == space {
                if !text.is_empty() && !text.ends_with(' ') {
                    text.push(' ');
                }
                continue;
            }
            let here = text_of(symbol);
            if let Some(before) = index.checked_sub(1).map(|i| &symbols[i]).filter(|before| before.class != space) {
                let blank = &probabilities[(before.last + 1) * classes..symbol.first * classes];
                let thought = blank.chunks_exact(classes).any(|step| step[space] >= WORD_GAP);
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
        let (text, score) = alphabet.decode(&probabilities, classes);
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
        assert_eq!(alphabet.decode(&steps(&alphabet, "L·I·S···T·_··O···F··_··M···A···P"), classes).0, "LIST OF MAP");
        assert_eq!(alphabet.decode(&steps(&alphabet, "M·········A"), classes).0, "MA", "a long gap alone is no space");
        assert_eq!(alphabet.decode(&steps(&alphabet, "_M_A_"), classes).0, "M A", "nor a space before or after the line");
    }

    #[test]
    fn clause_punctuation_and_asides_are_spaced_but_a_doubt_is_not() {
        let alphabet = Alphabet::from_metadata("a\nb\n,\n(\n)\n?\n.");
        let classes = alphabet.classes();
        for (read, text) in [("a,b", "a, b"), ("a(b)", "a (b)"), ("a(?)", "a(?)"), ("a(?)b", "a(?) b"), ("a.b", "a.b"), ("a,", "a,")] {
            assert_eq!(alphabet.decode(&steps(&alphabet, read), classes).0, text, "{read}");
        }
    }

    #[test]
    fn full_width_forms_read_as_ascii() {
        let alphabet = Alphabet::from_metadata("（\n）\nＡ\n\u{3000}\n岩");
        let probabilities: Vec<f32> = [1, 3, 4, 5, 2].iter().flat_map(|&class| step(class, 0.9, 7)).collect();
        assert_eq!(alphabet.decode(&probabilities, 7).0, "(A 岩)");
    }

    #[test]
    fn an_all_blank_line_is_empty_with_no_score() {
        let alphabet = Alphabet::from_metadata("a\nb");
        let probabilities: Vec<f32> = (0..5).flat_map(|_| step(0, 0.9, 4)).collect();
        assert_eq!(alphabet.decode(&probabilities, 4), (String::new(), 0.0));
    }
}
