//! SKOS vocabularies in Turtle (feature `skos`): concepts with their labels
//! in every language, definitions, broader and narrower concepts, and any
//! other property, read once from an asset file.

use std::collections::HashMap;

use oxrdf::{NamedOrBlankNode, Term};
use oxttl::TurtleParser;

use crate::ProviderError;

const SKOS: &str = "http://www.w3.org/2004/02/skos/core#";
const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// An object of a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Another resource (its IRI).
    Iri(String),
    /// An anonymous node (its local id; see [`Vocabulary::node`]).
    Blank(String),
    /// Text or a number, with its language tag if any.
    Literal { text: String, language: Option<String> },
}

impl Value {
    /// The IRI, if this is one.
    pub fn iri(&self) -> Option<&str> {
        match self {
            Value::Iri(iri) => Some(iri),
            _ => None,
        }
    }

    /// The literal's text, if this is one.
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Literal { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// Statements about one subject: (predicate IRI, object).
pub type Properties = Vec<(String, Value)>;

/// A vocabulary: every subject's properties, and the SKOS concepts among them.
#[derive(Debug, Default)]
pub struct Vocabulary {
    subjects: HashMap<String, Properties>,
    concepts: Vec<String>,
}

/// A label or definition in one language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a> {
    /// The text.
    pub text: &'a str,
    /// Its language tag (empty when untagged).
    pub language: &'a str,
}

impl Vocabulary {
    /// Parses Turtle; a syntax error is [`ProviderError::Failed`] naming `source`.
    /// Language tags are taken as written: the real ICS chart tags Spanish
    /// (Argentina) labels `@es-a`, which strict BCP 47 parsing refuses.
    pub fn parse(turtle: &[u8], source: &str) -> Result<Vocabulary, ProviderError> {
        let mut vocabulary = Vocabulary::default();
        for triple in TurtleParser::new().lenient().for_slice(turtle) {
            let triple = triple.map_err(|error| ProviderError::Failed(format!("{source} is not valid Turtle: {error}")))?;
            let subject = match triple.subject {
                NamedOrBlankNode::NamedNode(node) => node.into_string(),
                NamedOrBlankNode::BlankNode(node) => format!("_:{}", node.as_str()),
            };
            let object = match triple.object {
                Term::NamedNode(node) => Value::Iri(node.into_string()),
                Term::BlankNode(node) => Value::Blank(format!("_:{}", node.as_str())),
                Term::Literal(literal) => Value::Literal { text: literal.value().to_owned(), language: literal.language().map(str::to_owned) },
            };
            let predicate = triple.predicate.into_string();
            if predicate == RDF_TYPE && object.iri() == Some(&format!("{SKOS}Concept")) {
                vocabulary.concepts.push(subject.clone());
            }
            vocabulary.subjects.entry(subject).or_default().push((predicate, object));
        }
        Ok(vocabulary)
    }

    /// Reads and parses a Turtle file of a mounted asset.
    pub fn read_asset(id: &str, file: &str) -> Result<Vocabulary, ProviderError> {
        Vocabulary::parse(&crate::read_asset(id, file)?, file)
    }

    /// The IRIs of every `skos:Concept`, in file order.
    pub fn concepts(&self) -> &[String] {
        &self.concepts
    }

    /// Every statement about `subject` (an IRI, or a blank node's id from [`Value::Blank`]).
    pub fn node(&self, subject: &str) -> &[(String, Value)] {
        self.subjects.get(subject).map_or(&[], Vec::as_slice)
    }

    /// The objects of `predicate` (a full IRI) about `subject`.
    pub fn values<'a>(&'a self, subject: &str, predicate: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.node(subject).iter().filter(move |(p, _)| p == predicate).map(|(_, value)| value)
    }

    /// The texts of SKOS property `name` (`prefLabel`, `altLabel`, `definition`) about `concept`.
    pub fn texts<'a>(&'a self, concept: &str, name: &str) -> Vec<Text<'a>> {
        self.node(concept)
            .iter()
            .filter(|(p, _)| p.strip_prefix(SKOS) == Some(name))
            .filter_map(|(_, value)| match value {
                Value::Literal { text, language } => Some(Text { text, language: language.as_deref().unwrap_or("") }),
                _ => None,
            })
            .collect()
    }

    /// The IRIs of SKOS property `name` (`broader`, `narrower`) of `concept`.
    pub fn links<'a>(&'a self, concept: &str, name: &str) -> Vec<&'a str> {
        self.node(concept).iter().filter(|(p, _)| p.strip_prefix(SKOS) == Some(name)).filter_map(|(_, value)| value.iri()).collect()
    }

    /// The text in `language` (its primary subtag matches: `pt` matches `pt-br`),
    /// else English, else untagged, else any.
    pub fn best<'a>(texts: &[Text<'a>], language: Option<&str>) -> Option<&'a str> {
        let primary = |tag: &str| tag.split('-').next().unwrap_or_default().to_ascii_lowercase();
        let wanted = language.map(primary);
        let pick = |want: &str| texts.iter().find(|t| t.language.eq_ignore_ascii_case(want)).or_else(|| texts.iter().find(|t| primary(t.language) == want));
        wanted.as_deref().and_then(pick).or_else(|| pick("en")).or_else(|| pick("")).or(texts.first()).map(|t| t.text)
    }
}

/// The last segment of an IRI (after `#` or `/`).
pub fn local_name(iri: &str) -> &str {
    iri.rsplit(['#', '/']).next().unwrap_or(iri)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TURTLE: &str = r#"
        PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        PREFIX ex: <http://example.org/>
        ex:a a skos:Concept ; skos:prefLabel "sandstone"@en , "砂岩"@zh , "grès"@fr ; skos:broader ex:b ;
            ex:age [ ex:value 1.5 ] .
        ex:b a skos:Concept ; skos:prefLabel "sedimentary rock"@en ; skos:narrower ex:a .
    "#;

    #[test]
    fn concepts_labels_links_and_blank_nodes_are_read() {
        let vocabulary = Vocabulary::parse(TURTLE.as_bytes(), "test.ttl").unwrap();
        assert_eq!(vocabulary.concepts(), ["http://example.org/a", "http://example.org/b"]);
        let labels = vocabulary.texts("http://example.org/a", "prefLabel");
        assert_eq!(Vocabulary::best(&labels, Some("zh")), Some("砂岩"));
        assert_eq!(Vocabulary::best(&labels, Some("de")), Some("sandstone"));
        assert_eq!(vocabulary.links("http://example.org/a", "broader"), ["http://example.org/b"]);
        let Some(Value::Blank(age)) = vocabulary.values("http://example.org/a", "http://example.org/age").next() else { panic!() };
        assert_eq!(vocabulary.values(age, "http://example.org/value").next().and_then(Value::text), Some("1.5"));
        assert_eq!(local_name("http://example.org/a"), "a");
    }

    #[test]
    fn bad_turtle_is_a_failure_naming_the_file() {
        let Err(ProviderError::Failed(message)) = Vocabulary::parse(b"ex:a ex:b", "broken.ttl") else { panic!() };
        assert!(message.contains("broken.ttl"), "{message}");
    }
}
