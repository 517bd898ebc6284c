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
    /// probability of the symbols kept (0 for an empty line).
    pub fn decode(&self, probabilities: &[f32], classes: usize) -> (String, f32) {
        let mut text = String::new();
        let (mut sum, mut kept) = (0.0_f32, 0_u32);
        let mut previous = None;
        for step in probabilities.chunks_exact(classes) {
            let (best, probability) = step.iter().copied().enumerate().fold((0, f32::MIN), |best, (class, p)| if p > best.1 { (class, p) } else { best });
            if best != 0 && previous != Some(best) {
                text.push_str(self.symbols.get(best).map_or("", String::as_str));
                sum += probability;
                kept += 1;
            }
            previous = Some(best);
        }
        (text, if kept == 0 { 0.0 } else { sum / kept as f32 })
    }
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
