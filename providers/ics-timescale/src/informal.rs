//! The informal early, middle and late of an interval whose formal subdivisions
//! are not named so: "Lower Permian" is the Cisuralian, "middle Miocene" the
//! Langhian and Serravallian, "Early Proterozoic" the Paleoproterozoic.
//!
//! Intervals whose series are named Lower/Middle/Upper on the chart (Jurassic,
//! Triassic, Cretaceous, Devonian, Ordovician, the Mississippian and
//! Pennsylvanian) are not here: the chart's own names answer them.
//!
//! Conventions, as USGS maps and Macrostrat use the words:
//! - Cambrian (four series): Early = Terreneuvian + Series 2, Middle =
//!   Miaolingian, Late = Furongian (the traditional three-fold Cambrian on
//!   the four ICS series).
//! - Silurian (four series): Early = Llandovery + Wenlock, Late = Ludlow +
//!   Pridoli; a "Middle Silurian" is left to the whole period, since its
//!   older use (about the Wenlock) overlaps Early.
//! - Permian: its three series in order; Carboniferous: Early =
//!   Mississippian, Late = Pennsylvanian.
//! - Epochs by their stages (Paleocene: Danian, Selandian, Thanetian;
//!   Eocene: Ypresian, Lutetian + Bartonian, Priabonian; Oligocene and
//!   Pliocene: early and late only; Miocene: two stages each; Pleistocene:
//!   Gelasian + Calabrian, Chibanian, and the chart's Upper Pleistocene stage,
//!   which answers "late Pleistocene" by name; Holocene: its three stages).
//! - Proterozoic: Paleo-, Meso-, Neoproterozoic. Archean: the older
//!   three-fold Archean (USGS's boundaries near 3400 and 3000 Ma) on the ICS
//!   eras whose boundaries are nearest: Early = Eoarchean + Paleoarchean,
//!   Middle = Mesoarchean, Late = Neoarchean.

/// The part of an interval a modifier names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// "early", "lower".
    Early,
    /// "middle", "mid".
    Middle,
    /// "late", "upper".
    Late,
}

impl Part {
    /// Its geochronologic word, as the answer names it.
    pub fn word(self) -> &'static str {
        match self {
            Part::Early => "early",
            Part::Middle => "middle",
            Part::Late => "late",
        }
    }
}

/// The modifiers, folded, and the part each names (chronostratigraphic words
/// read as their geochronologic twins).
const MODIFIERS: [(&str, Part); 6] =
    [("early", Part::Early), ("lower", Part::Early), ("middle", Part::Middle), ("mid", Part::Middle), ("late", Part::Late), ("upper", Part::Late)];

/// (part, the interval it divides, the chart intervals it means, oldest
/// first), each interval by its local name on the chart.
pub const PARTS: [(Part, &str, &[&str]); 34] = [
    (Part::Early, "Archean", &["Eoarchean", "Paleoarchean"]),
    (Part::Middle, "Archean", &["Mesoarchean"]),
    (Part::Late, "Archean", &["Neoarchean"]),
    (Part::Early, "Proterozoic", &["Paleoproterozoic"]),
    (Part::Middle, "Proterozoic", &["Mesoproterozoic"]),
    (Part::Late, "Proterozoic", &["Neoproterozoic"]),
    (Part::Early, "Cambrian", &["Terreneuvian", "CambrianSeries2"]),
    (Part::Middle, "Cambrian", &["Miaolingian"]),
    (Part::Late, "Cambrian", &["Furongian"]),
    (Part::Early, "Silurian", &["Llandovery", "Wenlock"]),
    (Part::Late, "Silurian", &["Ludlow", "Pridoli"]),
    (Part::Early, "Carboniferous", &["Mississippian"]),
    (Part::Late, "Carboniferous", &["Pennsylvanian"]),
    (Part::Early, "Permian", &["Cisuralian"]),
    (Part::Middle, "Permian", &["Guadalupian"]),
    (Part::Late, "Permian", &["Lopingian"]),
    (Part::Early, "Paleocene", &["Danian"]),
    (Part::Middle, "Paleocene", &["Selandian"]),
    (Part::Late, "Paleocene", &["Thanetian"]),
    (Part::Early, "Eocene", &["Ypresian"]),
    (Part::Middle, "Eocene", &["Lutetian", "Bartonian"]),
    (Part::Late, "Eocene", &["Priabonian"]),
    (Part::Early, "Oligocene", &["Rupelian"]),
    (Part::Late, "Oligocene", &["Chattian"]),
    (Part::Early, "Miocene", &["Aquitanian", "Burdigalian"]),
    (Part::Middle, "Miocene", &["Langhian", "Serravallian"]),
    (Part::Late, "Miocene", &["Tortonian", "Messinian"]),
    (Part::Early, "Pliocene", &["Zanclean"]),
    (Part::Late, "Pliocene", &["Piacenzian"]),
    (Part::Early, "Pleistocene", &["Gelasian", "Calabrian"]),
    (Part::Middle, "Pleistocene", &["Chibanian"]),
    (Part::Early, "Holocene", &["Greenlandian"]),
    (Part::Middle, "Holocene", &["Northgrippian"]),
    (Part::Late, "Holocene", &["Meghalayan"]),
];

/// Each reading of a folded term as a modifier and the rest
/// ("lowerpermian" → (Early, "permian")).
pub fn readings(folded: &str) -> impl Iterator<Item = (Part, &str)> {
    MODIFIERS.iter().filter_map(move |(word, part)| folded.strip_prefix(word).filter(|rest| !rest.is_empty()).map(|rest| (*part, rest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modifier_is_read_off_the_front_in_either_vocabulary() {
        assert_eq!(readings("lowerpermian").collect::<Vec<_>>(), [(Part::Early, "permian")]);
        assert_eq!(readings("midmiocene").collect::<Vec<_>>(), [(Part::Middle, "miocene")]);
        assert_eq!(
            readings("middlemiocene").collect::<Vec<_>>(),
            [(Part::Middle, "miocene"), (Part::Middle, "dlemiocene")],
            "the index keeps the one that names"
        );
        assert_eq!(readings("upper").count(), 0, "a modifier alone divides nothing");
        assert_eq!(readings("permian").count(), 0);
    }
}
