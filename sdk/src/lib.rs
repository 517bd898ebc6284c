//! Write knowledge and lookup providers for Stratigraphic Amenity.
//!
//! A provider is a WebAssembly component. With this crate you never touch its
//! WIT world: implement [`Provider`] (every request kind has a default that
//! says "not served"), call [`export_provider!`] once, and build with
//! `cargo build --target wasm32-wasip2 --release`. [`harness::Harness`] runs
//! the same provider natively against fixture assets in your unit tests.
//!
//! ```ignore
//! use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider};
//!
//! struct Echo;
//!
//! impl Provider for Echo {
//!     fn descriptor() -> Descriptor {
//!         Descriptor::new("echo", "0.1.0", "Repeats the term.").serves_lookup()
//!     }
//!     fn open() -> Result<Self, ProviderError> {
//!         Ok(Echo)
//!     }
//!     fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
//!         Ok(vec![Entry::new(&request.term, &request.term, "the term itself")])
//!     }
//! }
//!
//! export_provider!(Echo);
//! ```

pub mod harness;
#[cfg(feature = "skos")]
pub mod skos;
pub mod text;

use std::fs::File;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The WIT world's version this SDK builds against (the host checks it at load).
pub const WORLD_VERSION: &str = "0.1.0";

/// The bindings of the WIT world; only [`export_provider!`] uses them.
#[doc(hidden)]
pub mod __bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "geomap:provider/plugin",
        pub_export_macro: true,
        default_bindings_module: "geomap_provider_sdk::__bindings",
    });
}

/// The kinds of request a provider can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// A term in, entries out.
    Lookup,
    /// An area (and topics) in, knowledge out.
    Knowledge,
}

/// How a provider describes itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Descriptor {
    /// Stable name, lowercase with hyphens.
    pub name: String,
    /// The provider's version (semver).
    pub version: String,
    /// One sentence for agents.
    pub description: String,
    /// What it serves.
    pub capabilities: Vec<Capability>,
    /// The asset ids it reads (mounted read-only at `/assets/<id>/`).
    pub assets: Vec<String>,
    /// Whether knowledge queries need an area.
    pub needs_area: bool,
    /// JSON Schema of its options (an object schema).
    pub options_schema: serde_json::Value,
}

impl Descriptor {
    /// A provider that serves nothing yet, reads no asset and takes no options.
    pub fn new(name: &str, version: &str, description: &str) -> Descriptor {
        Descriptor {
            name: name.to_owned(),
            version: version.to_owned(),
            description: description.to_owned(),
            capabilities: Vec::new(),
            assets: Vec::new(),
            needs_area: false,
            options_schema: serde_json::json!({ "type": "object", "additionalProperties": false }),
        }
    }

    /// It looks terms up.
    pub fn serves_lookup(mut self) -> Descriptor {
        self.capabilities.push(Capability::Lookup);
        self
    }

    /// It answers knowledge queries; `needs_area` when they need an area.
    pub fn serves_knowledge(mut self, needs_area: bool) -> Descriptor {
        self.capabilities.push(Capability::Knowledge);
        self.needs_area = needs_area;
        self
    }

    /// It reads the knowledge asset `id`.
    pub fn reads_asset(mut self, id: &str) -> Descriptor {
        self.assets.push(id.to_owned());
        self
    }

    /// Its options' JSON Schema (an object schema).
    pub fn with_options_schema(mut self, schema: serde_json::Value) -> Descriptor {
        self.options_schema = schema;
        self
    }

    /// Whether it serves `capability` (the host asks before it routes a request).
    pub fn serves(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }
}

/// Look a term up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupRequest {
    /// What to look up, as the user wrote it.
    pub term: String,
    /// The provider's options (a JSON object).
    pub options: serde_json::Value,
    /// At most this many entries.
    pub limit: u32,
    /// A preferred language for labels, when the caller has one.
    pub language: Option<String>,
}

/// One thing a lookup found: `Entry::new(id, label, summary)`, then
/// `.with_data(json!({ ... }))` for anything else, for example
/// `Entry::new("fault-glossary:thrustfault", "thrust fault", "A reverse fault of low dip.")`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// A stable identifier (a URI where the source has one).
    pub id: String,
    /// Its name.
    pub label: String,
    /// One line for agents.
    pub summary: String,
    /// Everything else (a JSON object).
    pub data: serde_json::Value,
}

impl Entry {
    /// An entry with no data beyond its `id` (stable: a URI where the source
    /// has one), `label` (its name) and `summary` (one line for agents).
    pub fn new(id: &str, label: &str, summary: &str) -> Entry {
        Entry { id: id.to_owned(), label: label.to_owned(), summary: summary.to_owned(), data: serde_json::json!({}) }
    }

    /// The entry with `data` (a JSON object).
    pub fn with_data(mut self, data: serde_json::Value) -> Entry {
        self.data = data;
        self
    }
}

/// A box on WGS84, in degrees (west may exceed east across the antimeridian).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Area {
    /// Western longitude, -180 to 180.
    pub west: f64,
    /// Southern latitude, -90 to 90.
    pub south: f64,
    /// Eastern longitude, -180 to 180.
    pub east: f64,
    /// Northern latitude, -90 to 90, above south.
    pub north: f64,
}

impl Area {
    /// Whether the point lies inside (edges included); a box whose west exceeds its east crosses
    /// the antimeridian, and holds the longitudes from west to 180 and from -180 to east.
    pub fn contains(&self, longitude: f64, latitude: f64) -> bool {
        let within_longitude = match self.west <= self.east {
            true => (self.west..=self.east).contains(&longitude),
            false => longitude >= self.west || longitude <= self.east,
        };
        within_longitude && (self.south..=self.north).contains(&latitude)
    }
}

/// Ask what is known about an area.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeRequest {
    /// The area, when there is one.
    pub area: Option<Area>,
    /// Topics to keep to (empty: all).
    pub topics: Vec<String>,
    /// The provider's options (a JSON object).
    pub options: serde_json::Value,
    /// At most this many items.
    pub limit: u32,
}

/// One piece of knowledge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Its title.
    pub title: String,
    /// Its content (a JSON object).
    pub data: serde_json::Value,
}

/// What a knowledge query found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knowledge {
    /// The items, most relevant first.
    pub items: Vec<Item>,
    /// One paragraph for agents.
    pub summary: String,
}

/// Expected failures: the host turns each into the error an agent can act on
/// (README.md, "Errors", has the whole table). A panic is not one of them:
/// the agent sees it as a crash (`runtime_failure`, `trap`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderError {
    /// This provider does not serve this kind of request (the trait's
    /// defaults): `unknown_provider`, reason `cannot_serve`.
    UnsupportedRequest(String),
    /// The options do not fit: a JSON pointer to the field (`/` for all of
    /// them), and what is wrong: `unknown_provider`, reason `invalid_options`.
    InvalidOptions { field: String, message: String },
    /// A file of the knowledge asset with this id is not there:
    /// `missing_knowledge_asset`, with hints to install it.
    MissingAsset(String),
    /// Nothing matched; close matches, best first. For a lookup this is an
    /// answer, not an error: no entries, and these as `close_matches`.
    NotFound(Vec<String>),
    /// Anything else, in a sentence (for the operator's log):
    /// `unknown_provider`, reason `runtime_failure`, failure `failed`.
    Failed(String),
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderError::UnsupportedRequest(what) => write!(f, "unsupported request: {what}"),
            ProviderError::InvalidOptions { field, message } => write!(f, "invalid option {field}: {message}"),
            ProviderError::MissingAsset(id) => write!(f, "knowledge asset {id} is not installed"),
            ProviderError::NotFound(close) => write!(f, "nothing matched (close: {})", close.join(", ")),
            ProviderError::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ProviderError {}

/// A provider. Implement what it serves; the defaults answer "not served".
pub trait Provider: Sized {
    /// Who it is, what it serves, what it reads.
    fn descriptor() -> Descriptor;

    /// Opens what every request needs (its assets, an index).
    ///
    /// It runs once per instance, not once per call: the host keeps an
    /// instance whose call returned normally (with a typed error or without)
    /// and hands it later calls of the same provider, and the value this
    /// returns serves them all. So do the expensive work here (read and parse
    /// the assets, build indexes), and keep in `Self` only what follows from the
    /// assets: a request must never change what a later request is answered.
    ///
    /// An `Err` is not kept: the next call on the instance opens again (so an
    /// asset installed since is seen). The host starts a fresh instance (and
    /// so calls this again) after a trap, a timeout, a memory-limit hit or an
    /// answer over the output limit, when a mounted asset changed (reinstalled,
    /// or a file of the operator's own copy edited), and whenever it likes:
    /// never count on an instance living, or on it being fresh. Memory kept
    /// between calls counts against the memory limit of every later call.
    fn open() -> Result<Self, ProviderError>;

    /// Looks a term up.
    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        let _ = request;
        Err(ProviderError::UnsupportedRequest(format!("{} does not look terms up", Self::descriptor().name)))
    }

    /// Answers a knowledge query.
    fn query(&self, request: &KnowledgeRequest) -> Result<Knowledge, ProviderError> {
        let _ = request;
        Err(ProviderError::UnsupportedRequest(format!("{} does not answer knowledge queries", Self::descriptor().name)))
    }
}

/// Reads a request's options into `T` (use `#[serde(deny_unknown_fields)]`):
/// `let options: Options = parse_options(&request.options)?;`. A mismatch is
/// [`ProviderError::InvalidOptions`] naming the field by JSON pointer. The
/// host has already checked the options against the descriptor's options
/// schema ([`harness::check_options`] is that check).
pub fn parse_options<T: DeserializeOwned>(options: &serde_json::Value) -> Result<T, ProviderError> {
    serde_path_to_error::deserialize(options).map_err(|error| {
        let path = error.path().to_string();
        let field = if path == "." { "/".to_owned() } else { format!("/{}", path.replace('.', "/")) };
        ProviderError::InvalidOptions { field, message: error.inner().to_string() }
    })
}

/// Where a file of a mounted asset is: `/assets/<id>/<file>` inside the
/// sandbox; under the harness, the fixture folder given for `id`.
pub fn asset_path(id: &str, file: &str) -> PathBuf {
    harness::asset_root(id).unwrap_or_else(|| PathBuf::from("/assets").join(id)).join(file)
}

/// Opens a file of a mounted asset (one the descriptor declares with
/// [`Descriptor::reads_asset`]): `let file = open_asset("fault-glossary-data", "glossary.json")?;`.
/// Absent is [`ProviderError::MissingAsset`], any other error
/// [`ProviderError::Failed`]. To read a whole file, [`read_asset`] and
/// [`read_json_asset`] are cheaper inside the sandbox.
pub fn open_asset(id: &str, file: &str) -> Result<File, ProviderError> {
    File::open(asset_path(id, file)).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ProviderError::MissingAsset(id.to_owned()),
        _ => ProviderError::Failed(format!("cannot read {file} of asset {id}: {error}")),
    })
}

/// Reads a whole file of a mounted asset in one read: inside the sandbox each
/// read is a host call, so this is much cheaper than many small buffered reads.
pub fn read_asset(id: &str, file: &str) -> Result<Vec<u8>, ProviderError> {
    std::fs::read(asset_path(id, file)).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ProviderError::MissingAsset(id.to_owned()),
        _ => ProviderError::Failed(format!("cannot read {file} of asset {id}: {error}")),
    })
}

/// Reads a JSON file of a mounted asset.
pub fn read_json_asset<T: DeserializeOwned>(id: &str, file: &str) -> Result<T, ProviderError> {
    serde_json::from_slice(&read_asset(id, file)?).map_err(|error| ProviderError::Failed(format!("{file} of asset {id} is not the expected JSON: {error}")))
}

/// Conversions between this crate's types and the WIT world's; only [`export_provider!`] uses them.
#[doc(hidden)]
pub mod __glue {
    use std::any::Any;
    use std::cell::RefCell;

    use super::__bindings::exports::geomap::provider::provider as wit;
    use super::{Capability, KnowledgeRequest, LookupRequest, Provider, ProviderError};

    fn options(text: &str) -> Result<serde_json::Value, wit::ProviderError> {
        serde_json::from_str(text).map_err(|error| wit::ProviderError::InvalidOptions(wit::InvalidOption { field: "/".to_owned(), message: error.to_string() }))
    }

    fn error(error: ProviderError) -> wit::ProviderError {
        match error {
            ProviderError::UnsupportedRequest(what) => wit::ProviderError::UnsupportedRequest(what),
            ProviderError::InvalidOptions { field, message } => wit::ProviderError::InvalidOptions(wit::InvalidOption { field, message }),
            ProviderError::MissingAsset(id) => wit::ProviderError::MissingAsset(id),
            ProviderError::NotFound(close) => wit::ProviderError::NotFound(close),
            ProviderError::Failed(message) => wit::ProviderError::Failed(message),
        }
    }

    /// `describe`.
    pub fn describe<P: Provider>() -> wit::Descriptor {
        let descriptor = P::descriptor();
        wit::Descriptor {
            name: descriptor.name,
            version: descriptor.version,
            description: descriptor.description,
            capabilities: descriptor
                .capabilities
                .iter()
                .map(|capability| match capability {
                    Capability::Lookup => wit::Capability::Lookup,
                    Capability::Knowledge => wit::Capability::Knowledge,
                })
                .collect(),
            assets: descriptor.assets,
            needs_area: descriptor.needs_area,
            options_schema: descriptor.options_schema.to_string(),
        }
    }

    thread_local! {
        /// The provider [`Provider::open`] returned in this instance: a component exports one
        /// provider, and a WebAssembly instance runs one thread, so this is the instance's.
        static OPENED: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
    }

    /// Runs `call` on this instance's opened provider, opening it first if it is not yet (or its
    /// last open failed: a failure is returned, never kept).
    fn with_opened<P: Provider + 'static, T>(call: impl FnOnce(&P) -> Result<T, ProviderError>) -> Result<T, ProviderError> {
        OPENED.with(|opened| {
            if opened.borrow().is_none() {
                let provider = P::open()?;
                *opened.borrow_mut() = Some(Box::new(provider));
            }
            let opened = opened.borrow();
            let provider = opened.as_ref().and_then(|provider| provider.downcast_ref::<P>()).expect("the component's one provider was opened");
            call(provider)
        })
    }

    /// `lookup`.
    pub fn lookup<P: Provider + 'static>(request: wit::LookupRequest) -> Result<Vec<wit::Entry>, wit::ProviderError> {
        let request = LookupRequest { term: request.term, options: options(&request.options)?, limit: request.limit, language: request.language };
        let entries = with_opened(|provider: &P| provider.lookup(&request)).map_err(error)?;
        Ok(entries
            .into_iter()
            .take(request.limit as usize)
            .map(|entry| wit::Entry { id: entry.id, label: entry.label, summary: entry.summary, data: entry.data.to_string() })
            .collect())
    }

    /// `query`.
    pub fn query<P: Provider + 'static>(request: wit::KnowledgeRequest) -> Result<wit::Knowledge, wit::ProviderError> {
        let request = KnowledgeRequest {
            area: request.area.map(|area| super::Area { west: area.west, south: area.south, east: area.east, north: area.north }),
            topics: request.topics,
            options: options(&request.options)?,
            limit: request.limit,
        };
        let knowledge = with_opened(|provider: &P| provider.query(&request)).map_err(error)?;
        Ok(wit::Knowledge {
            items: knowledge.items.into_iter().take(request.limit as usize).map(|item| wit::Item { title: item.title, data: item.data.to_string() }).collect(),
            summary: knowledge.summary,
        })
    }
}

/// Exports `$provider` (a type implementing [`Provider`]) as the component's
/// WIT world. Call it once, at the top level of the provider crate; it does
/// nothing when building for anything but WebAssembly (native tests use
/// [`harness::Harness`]).
#[macro_export]
#[rustfmt::skip] // rustfmt cannot parse wit-bindgen's `export!(.. with_types_in ..)` and misplaces it
macro_rules! export_provider {
    ($provider:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::__bindings::exports::geomap::provider::provider as wit;

            struct Export;

            impl wit::Guest for Export {
                fn describe() -> wit::Descriptor {
                    $crate::__glue::describe::<$provider>()
                }

                fn lookup(request: wit::LookupRequest) -> Result<Vec<wit::Entry>, wit::ProviderError> {
                    $crate::__glue::lookup::<$provider>(request)
                }

                fn query(request: wit::KnowledgeRequest) -> Result<wit::Knowledge, wit::ProviderError> {
                    $crate::__glue::query::<$provider>(request)
                }
            }

            $crate::__bindings::export!(Export with_types_in $crate::__bindings);
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Options {
        #[serde(default)]
        min_magnitude: Option<f64>,
    }

    #[test]
    fn options_parse_and_name_the_field_that_does_not_fit() {
        let parsed: Options = parse_options(&serde_json::json!({ "min_magnitude": 5.5 })).unwrap();
        assert_eq!(parsed.min_magnitude, Some(5.5));
        let Err(ProviderError::InvalidOptions { field, message }) = parse_options::<Options>(&serde_json::json!({ "min_magnitude": "big" })) else {
            panic!("a string is not a magnitude")
        };
        assert_eq!(field, "/min_magnitude");
        assert!(message.contains("invalid type"), "{message}");
        let Err(ProviderError::InvalidOptions { message, .. }) = parse_options::<Options>(&serde_json::json!({ "colour": 1 })) else { panic!() };
        assert!(message.contains("unknown field `colour`"), "{message}");
    }

    #[test]
    fn an_asset_that_is_not_mounted_is_missing_asset() {
        assert_eq!(open_asset("not-mounted", "x.json").unwrap_err(), ProviderError::MissingAsset("not-mounted".to_owned()));
        assert_eq!(asset_path("not-mounted", "x.json"), PathBuf::from("/assets/not-mounted/x.json"));
    }

    #[test]
    fn an_area_holds_its_edges_and_may_cross_the_antimeridian() {
        let japan = Area { west: 128.0, south: 30.0, east: 146.0, north: 46.0 };
        assert!(japan.contains(128.0, 46.0) && japan.contains(139.7, 35.7));
        assert!(!japan.contains(127.9, 35.0) && !japan.contains(139.7, 46.1));
        let fiji = Area { west: 170.0, south: -25.0, east: -170.0, north: -10.0 };
        assert!(fiji.contains(178.0, -18.0) && fiji.contains(-179.0, -18.0) && fiji.contains(180.0, -10.0));
        assert!(!fiji.contains(0.0, -18.0) && !fiji.contains(178.0, -26.0));
        let refused = serde_json::from_value::<Area>(serde_json::json!({ "west": 0, "south": 0, "east": 1, "north": 1, "up": 2 }));
        assert!(refused.unwrap_err().to_string().contains("unknown field `up`"));
    }

    #[test]
    fn a_descriptor_serves_what_it_declares() {
        let descriptor = Descriptor::new("echo", "0.1.0", "Repeats the term.").serves_lookup();
        assert!(descriptor.serves(Capability::Lookup) && !descriptor.serves(Capability::Knowledge));
    }

    #[test]
    fn the_world_version_matches_the_wit_package() {
        let wit = include_str!("../../wit/provider.wit");
        assert!(wit.contains(&format!("package geomap:provider@{WORLD_VERSION};")));
    }
}

/// README.md's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
