//! The geologic terms in a legend description: its ages ("Lower Permian",
//! "Holocene and Pleistocene(?)", "Pliocene to upper Miocene") and its rock
//! names ("sandstone", "quartz monzonite"), for the knowledge providers to resolve.
//!
//! Invariant: pure text functions; an OCR slip of a letter or two in a long
//! period name is read as the name (it is spelled correctly in the output).

/// The time names a description's age is written in (series, epochs, periods, eras, eons).
const AGES: [&str; 35] = [
    "Holocene",
    "Pleistocene",
    "Pliocene",
    "Miocene",
    "Oligocene",
    "Eocene",
    "Paleocene",
    "Quaternary",
    "Tertiary",
    "Neogene",
    "Paleogene",
    "Cretaceous",
    "Jurassic",
    "Triassic",
    "Permian",
    "Pennsylvanian",
    "Mississippian",
    "Carboniferous",
    "Devonian",
    "Silurian",
    "Ordovician",
    "Cambrian",
    "Ediacaran",
    "Cryogenian",
    "Tonian",
    "Neoproterozoic",
    "Mesoproterozoic",
    "Paleoproterozoic",
    "Proterozoic",
    "Archean",
    "Cenozoic",
    "Mesozoic",
    "Paleozoic",
    "Precambrian",
    "Hadean",
];

/// Words that narrow an age: "Lower Permian", "late Miocene".
const MODIFIERS: [&str; 6] = ["lower", "middle", "upper", "early", "late", "mid"];

/// Rock and deposit names looked up in the lithology vocabulary (two-word names first).
const ROCKS: [&str; 58] = [
    "quartz monzonite",
    "rock salt",
    "alluvium",
    "amphibolite",
    "andesite",
    "anorthosite",
    "aplite",
    "arkose",
    "basalt",
    "breccia",
    "chert",
    "clay",
    "claystone",
    "coal",
    "conglomerate",
    "dacite",
    "diabase",
    "diorite",
    "dolomite",
    "dolostone",
    "evaporite",
    "gabbro",
    "gneiss",
    "granite",
    "granodiorite",
    "gravel",
    "greywacke",
    "gypsum",
    "ignimbrite",
    "limestone",
    "loess",
    "marble",
    "marl",
    "migmatite",
    "monzonite",
    "mudstone",
    "obsidian",
    "pegmatite",
    "peridotite",
    "phyllite",
    "pumice",
    "quartzite",
    "rhyolite",
    "sand",
    "sandstone",
    "schist",
    "scoria",
    "serpentinite",
    "shale",
    "silt",
    "siltstone",
    "slate",
    "syenite",
    "tonalite",
    "travertine",
    "tuff",
    "till",
    "trachyte",
];

/// One age named in a description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgeTerm {
    /// The name, spelled correctly, with its modifier as written ("Lower Permian", "upper Miocene").
    pub term: String,
    /// Written with "(?)": the map's authors are not sure.
    pub uncertain: bool,
}

enum Token {
    Word(String),
    Question,
}

/// The words and question marks of `text`.
fn tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in text.chars().chain([' ']) {
        if c.is_alphabetic() {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(Token::Word(std::mem::take(&mut word)));
        }
        if c == '?' {
            tokens.push(Token::Question);
        }
    }
    tokens
}

/// The age name `word` is, allowing one OCR slip in seven letters ("Plistocene" is Pleistocene).
fn age_name(word: &str) -> Option<&'static str> {
    let lower = word.to_lowercase();
    let exact = AGES.iter().find(|age| age.to_lowercase() == lower);
    exact
        .or_else(|| {
            (lower.chars().count() >= 7)
                .then(|| AGES.iter().find(|age| strsim::levenshtein(&age.to_lowercase(), &lower) <= lower.chars().count() / 7))
                .flatten()
        })
        .copied()
}

/// The ages named in `description`: those in its parentheses when any are there (a description's
/// age is written last, in parentheses; "Paleozoic-clast conglomerate (Miocene)" is Miocene), else
/// anywhere in it. Modifiers before a name apply to it each ("Upper, Middle, and Lower
/// Pennsylvanian" is three terms); a question mark after a name makes it uncertain.
pub fn age_terms(description: &str) -> Vec<AgeTerm> {
    let parenthesised: String = {
        let mut depth = 0;
        description
            .chars()
            .filter(|&c| {
                match c {
                    '(' => depth += 1,
                    ')' => depth = (depth - 1).max(0),
                    _ => {}
                }
                depth > 0 || c == ')'
            })
            .map(|c| if c == '(' || c == ')' { ' ' } else { c })
            .collect()
    };
    let has_age = |text: &str| tokens(text).iter().any(|t| matches!(t, Token::Word(w) if age_name(w).is_some()));
    let text = if has_age(&parenthesised) { parenthesised.as_str() } else { description };
    let mut terms: Vec<AgeTerm> = Vec::new();
    let mut modifiers: Vec<String> = Vec::new();
    let mut last_named = 0..0;
    for token in tokens(text) {
        match token {
            Token::Question => terms[last_named.clone()].iter_mut().for_each(|term| term.uncertain = true),
            Token::Word(word) if MODIFIERS.contains(&word.to_lowercase().as_str()) => modifiers.push(word),
            Token::Word(word) if ["and", "to", "or", "through"].contains(&word.to_lowercase().as_str()) => {}
            Token::Word(word) => match age_name(&word) {
                Some(age) => {
                    let start = terms.len();
                    if modifiers.is_empty() {
                        terms.push(AgeTerm { term: age.to_owned(), uncertain: false });
                    }
                    for modifier in modifiers.drain(..) {
                        terms.push(AgeTerm { term: format!("{modifier} {age}"), uncertain: false });
                    }
                    last_named = start..terms.len();
                }
                None => modifiers.clear(),
            },
        }
    }
    terms.dedup();
    terms
}

/// `code` with the age symbol the recogniser cannot read: USGS maps print the Triassic's symbol as
/// a ligature of T and R and the Pennsylvanian's as one of I and P (the FGDC Digital Cartographic
/// Standard for Geologic Map Symbolization, FGDC-STD-013-2006, writes them TR and IP in plain
/// text); the recogniser reads each as its one larger letter. A code begins with the symbol of its
/// unit's youngest age, the first of `ages` (a description names its ages youngest first), so a
/// Triassic unit's "Tm" is "TRm" and a Pennsylvanian one's "PMs" is "IPMs". Any other code is kept.
pub fn with_age_symbol(code: &str, ages: &[AgeTerm]) -> String {
    let youngest = ages.first().and_then(|age| age.term.split_whitespace().last().and_then(age_name));
    match youngest {
        Some("Triassic") if code.starts_with('T') && !code.starts_with("TR") => format!("TR{}", &code[1..]),
        Some("Pennsylvanian") if code.starts_with('P') => format!("I{code}"),
        _ => code.to_owned(),
    }
}

/// The rock names in `description`, in the order they first appear (plurals read as singular;
/// a two-word name is not also read as its second word).
pub fn lithology_terms(description: &str) -> Vec<String> {
    let words: Vec<String> = tokens(description)
        .into_iter()
        .filter_map(|t| match t {
            Token::Word(w) => Some(w.to_lowercase()),
            Token::Question => None,
        })
        .collect();
    let singular =
        |w: &str| -> String { if ROCKS.contains(&w) { w.to_owned() } else { w.strip_suffix('s').filter(|s| ROCKS.contains(s)).unwrap_or(w).to_owned() } };
    let mut found: Vec<String> = Vec::new();
    let mut index = 0;
    while index < words.len() {
        let pair = words.get(index + 1).map(|next| format!("{} {}", words[index], singular(next)));
        let name = match pair.filter(|p| ROCKS.contains(&p.as_str())) {
            Some(pair) => {
                index += 1;
                Some(pair)
            }
            None => Some(singular(&words[index])).filter(|w| ROCKS.contains(&w.as_str())),
        };
        if let Some(name) = name.filter(|n| !found.contains(n)) {
            found.push(name);
        }
        index += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_triassic_and_pennsylvanian_symbols_are_restored_from_the_units_youngest_age() {
        let ages = |description: &str| age_terms(description);
        assert_eq!(with_age_symbol("Tm", &ages("Moenkopi Formation (Lower Triassic)")), "TRm");
        assert_eq!(with_age_symbol("TRm", &ages("Moenkopi Formation (Lower Triassic)")), "TRm", "read right: kept");
        let supai = "Wescogame Formation (Upper Pennsylvanian), Manakacha Formation (Middle Pennsylvanian), and Watahomigi Formation (Lower Pennsylvanian and Upper Mississippian)";
        assert_eq!(with_age_symbol("PMs", &ages(supai)), "IPMs");
        assert_eq!(with_age_symbol("Pk", &ages("Kaibab Formation (Lower Permian)")), "Pk", "the Permian's P is a plain letter");
        assert_eq!(with_age_symbol("Tg", &ages("Young gravel deposits (Pliocene to upper Miocene)")), "Tg");
        assert_eq!(with_age_symbol("Mr", &ages("Redwall Limestone (Mississippian)")), "Mr");
        assert_eq!(with_age_symbol("Xg", &[]), "Xg", "no age: kept");
    }

    fn terms(description: &str) -> Vec<(String, bool)> {
        age_terms(description).into_iter().map(|t| (t.term, t.uncertain)).collect()
    }

    fn t(term: &str, uncertain: bool) -> (String, bool) {
        (term.to_owned(), uncertain)
    }

    #[test]
    fn ages_are_read_with_their_modifiers_ranges_and_doubts() {
        assert_eq!(terms("Coconino Sandstone, undivided (Lower Permian)"), [t("Lower Permian", false)]);
        assert_eq!(terms("Young alluvial fan deposits (Holocene and Pleistocene(?))"), [t("Holocene", false), t("Pleistocene", true)]);
        assert_eq!(terms("Shivwits basalt (upper Miocene)"), [t("upper Miocene", false)]);
        assert_eq!(terms("Young gravel and sedimentary deposits (Pliocene to upper Miocene)"), [t("Pliocene", false), t("upper Miocene", false)]);
        assert_eq!(
            terms("Volcanic rocks of the Hualapai Plateau, undivided (middle to lower Miocene)"),
            [t("middle Miocene", false), t("lower Miocene", false)],
            "a range of modifiers: each end narrows the name"
        );
        assert_eq!(
            terms("Supai Group (Lower Permian, Upper, Middle, and Lower Pennsylvanian, and Upper Mississippian)"),
            [
                t("Lower Permian", false),
                t("Upper Pennsylvanian", false),
                t("Middle Pennsylvanian", false),
                t("Lower Pennsylvanian", false),
                t("Upper Mississippian", false)
            ]
        );
        assert_eq!(
            terms("Old gravel deposits (Plistocene,Pliocene,and middle Miocene)"),
            [t("Pleistocene", false), t("Pliocene", false), t("middle Miocene", false)]
        );
        assert_eq!(terms("Paleozoic-clast conglomerate (Miocene)"), [t("Miocene", false)], "the age in parentheses, not the clasts' age");
        assert_eq!(terms("Granite of Late Cretaceous age"), [t("Late Cretaceous", false)], "no parentheses: anywhere");
        assert_eq!(terms("Landslide deposits (historic)"), Vec::<(String, bool)>::new());
        assert_eq!(terms("Upper sandstone member (Jurassic)"), [t("Jurassic", false)], "a modifier before another word is dropped");
    }

    #[test]
    fn rock_names_are_found_singular_and_whole() {
        assert_eq!(lithology_terms("Quartz monzonite pluton (Upper Cretaceous)"), ["quartz monzonite"]);
        assert_eq!(lithology_terms("Esplanade Sandstone and Pakoon Limestone, undivided"), ["sandstone", "limestone"]);
        assert_eq!(lithology_terms("Basalt flows; gravels and sands"), ["basalt", "gravel", "sand"]);
        assert_eq!(lithology_terms("Hermit Formation (Lower Permian)"), Vec::<String>::new());
    }
}
