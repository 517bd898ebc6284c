//! Run a provider natively in unit tests, against fixture assets, without the host.
//!
//! ```ignore
//! let harness = Harness::new().with_asset("k2-rock-knowledge", "tests/fixtures/k2");
//! let entries = harness.lookup::<K2Rocks>("sandstone")?;
//! ```
//!
//! The harness maps asset ids to folders for the whole test process (the
//! sandbox mounts them at `/assets/<id>/`), so give every test the same
//! folders for the same id.
//!
//! Before it opens the provider, the harness checks the request's options
//! against the descriptor's options schema with [`check_options`], which is
//! the very check the host runs before every call (the host's own check calls
//! [`check_compiled_options`]): a bad option fails here with the same JSON
//! pointer and message an agent would get.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, RwLock};

use crate::{Entry, Knowledge, KnowledgeRequest, LookupRequest, Provider, ProviderError};

/// What is wrong with a request's options: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionProblem {
    /// A JSON pointer into the options (`/` for the options as a whole).
    pub field: String,
    /// The schema validator's message.
    pub message: String,
}

/// Compiles a provider's options schema as the host does when it loads the
/// component; the error is the reason the host gives for refusing it.
#[cfg(not(target_arch = "wasm32"))]
pub fn compile_options_schema(schema: &serde_json::Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|error| format!("its options schema is not a valid JSON Schema: {error}"))
}

/// The first way `options` does not fit a compiled options schema, exactly
/// as the host reports it: this is the host's check (its
/// `Loaded::check_options` calls it). A missing or unexpected property is
/// named itself (`/colour`), not the object that holds it.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_compiled_options(schema: &jsonschema::Validator, options: &serde_json::Value) -> Result<(), OptionProblem> {
    use jsonschema::error::ValidationErrorKind;
    let Some(error) = schema.iter_errors(options).next() else { return Ok(()) };
    let pointer = error.instance_path().to_string();
    let mut message = error.to_string();
    let field = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } if unexpected.len() == 1 => format!("{pointer}/{}", unexpected[0]),
        ValidationErrorKind::Required { property } => format!("{pointer}/{}", property.as_str().unwrap_or_default()),
        // `additionalProperties: false` with no `properties` (the SDK's default schema) fails as
        // a false schema at the object, naming neither the property nor the keyword: the
        // validator stopped at the object's first property, so name that one, in the words
        // it uses when the schema has `properties`.
        ValidationErrorKind::FalseSchema if error.schema_path().as_str().ends_with("/additionalProperties") => {
            match options.pointer(&pointer).and_then(serde_json::Value::as_object).and_then(|object| object.keys().next()) {
                Some(key) => {
                    message = format!("Additional properties are not allowed ('{key}' was unexpected)");
                    format!("{pointer}/{key}")
                }
                None => pointer,
            }
        }
        _ => pointer,
    };
    Err(OptionProblem { field: if field.is_empty() { "/".to_owned() } else { field }, message })
}

/// Checks `options` against an options schema as the host does before a
/// call: a misfit is [`ProviderError::InvalidOptions`] with the host's JSON
/// pointer and message, and a schema that is not a valid JSON Schema (the
/// host would refuse to load the component) is [`ProviderError::Failed`].
///
/// ```
/// use geomap_provider_sdk::ProviderError;
/// use geomap_provider_sdk::harness::check_options;
///
/// let schema = serde_json::json!({ "type": "object", "properties": { "exact": { "type": "boolean" } }, "additionalProperties": false });
/// assert!(check_options(&schema, &serde_json::json!({ "exact": true })).is_ok());
/// let Err(ProviderError::InvalidOptions { field, .. }) = check_options(&schema, &serde_json::json!({ "colour": 1 })) else { panic!() };
/// assert_eq!(field, "/colour");
/// ```
#[cfg(not(target_arch = "wasm32"))]
pub fn check_options(schema: &serde_json::Value, options: &serde_json::Value) -> Result<(), ProviderError> {
    let schema = compile_options_schema(schema).map_err(ProviderError::Failed)?;
    check_compiled_options(&schema, options).map_err(|OptionProblem { field, message }| ProviderError::InvalidOptions { field, message })
}

fn roots() -> &'static RwLock<HashMap<String, PathBuf>> {
    static ROOTS: OnceLock<RwLock<HashMap<String, PathBuf>>> = OnceLock::new();
    ROOTS.get_or_init(Default::default)
}

/// The fixture folder the harness gave for asset `id`, if any (never inside the sandbox).
pub(crate) fn asset_root(id: &str) -> Option<PathBuf> {
    if cfg!(target_arch = "wasm32") {
        return None;
    }
    roots().read().unwrap_or_else(|poisoned| poisoned.into_inner()).get(id).cloned()
}

/// Calls a provider the way the host would, natively.
#[derive(Debug, Default, Clone)]
pub struct Harness {
    limit: Option<u32>,
}

impl Harness {
    /// A harness with no assets mounted.
    pub fn new() -> Harness {
        Harness::default()
    }

    /// Mounts `folder` as asset `id` (for this test process).
    pub fn with_asset(self, id: &str, folder: impl AsRef<Path>) -> Harness {
        roots().write().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(id.to_owned(), folder.as_ref().to_owned());
        self
    }

    /// Caps results at `limit` (the host's default is 10).
    pub fn with_limit(mut self, limit: u32) -> Harness {
        self.limit = Some(limit);
        self
    }

    /// Looks `term` up with no options (`{}`, checked against the options
    /// schema like any others), as `geomap_lookup` would.
    pub fn lookup<P: Provider>(&self, term: &str) -> Result<Vec<Entry>, ProviderError> {
        self.lookup_with::<P>(&LookupRequest { term: term.to_owned(), options: serde_json::json!({}), limit: self.limit.unwrap_or(10), language: None })
    }

    /// Runs one lookup request: its options are checked against the options
    /// schema first ([`check_options`]), then the provider opens and looks up.
    pub fn lookup_with<P: Provider>(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        #[cfg(not(target_arch = "wasm32"))] // the harness is never used inside the sandbox
        check_options(&P::descriptor().options_schema, &request.options)?;
        let mut entries = P::open()?.lookup(request)?;
        entries.truncate(request.limit as usize);
        Ok(entries)
    }

    /// Runs one knowledge request: options checked first, as for [`Harness::lookup_with`].
    pub fn query<P: Provider>(&self, request: &KnowledgeRequest) -> Result<Knowledge, ProviderError> {
        #[cfg(not(target_arch = "wasm32"))] // the harness is never used inside the sandbox
        check_options(&P::descriptor().options_schema, &request.options)?;
        let mut knowledge = P::open()?.query(request)?;
        knowledge.items.truncate(request.limit as usize);
        Ok(knowledge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Descriptor;
    use serde_json::json;

    /// Answers every term with itself; options `exact` (boolean) and `rank` (one of two), nothing else.
    struct Echo;

    impl Provider for Echo {
        fn descriptor() -> Descriptor {
            Descriptor::new("echo", "0.1.0", "Repeats the term.").serves_lookup().with_options_schema(json!({
                "type": "object",
                "properties": { "exact": { "type": "boolean" }, "rank": { "enum": ["Period", "Epoch"] } },
                "additionalProperties": false
            }))
        }
        fn open() -> Result<Echo, ProviderError> {
            Ok(Echo)
        }
        fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
            Ok(vec![Entry::new(&request.term, &request.term, "the term itself"); 3])
        }
    }

    fn request(options: serde_json::Value) -> LookupRequest {
        LookupRequest { term: "tuff".to_owned(), options, limit: 2, language: None }
    }

    #[test]
    fn options_are_checked_against_the_schema_before_the_provider_runs() {
        assert_eq!(Harness::new().lookup_with::<Echo>(&request(json!({ "exact": true }))).unwrap().len(), 2, "capped at the limit");
        assert_eq!(Harness::new().lookup::<Echo>("tuff").unwrap().len(), 3);
        let fields = [(json!({ "exact": "yes" }), "/exact"), (json!({ "colour": 1 }), "/colour"), (json!({ "rank": "Century" }), "/rank"), (json!([]), "/")];
        for (options, expected) in fields {
            let Err(ProviderError::InvalidOptions { field, message }) = Harness::new().lookup_with::<Echo>(&request(options.clone())) else {
                panic!("{options} fits the schema")
            };
            assert_eq!(field, expected, "{options}: {message}");
        }
    }

    #[test]
    fn a_missing_required_option_is_named_itself() {
        let schema = json!({ "type": "object", "required": ["area_name"] });
        let problem = check_compiled_options(&compile_options_schema(&schema).unwrap(), &json!({})).unwrap_err();
        assert_eq!(problem.field, "/area_name", "{}", problem.message);
        let nested = json!({ "type": "object", "properties": { "filter": { "type": "object", "additionalProperties": false } } });
        let problem = check_compiled_options(&compile_options_schema(&nested).unwrap(), &json!({ "filter": { "x": 1 } })).unwrap_err();
        assert_eq!(problem.field, "/filter/x", "{}", problem.message);
    }

    #[test]
    fn an_option_the_default_schema_does_not_know_is_named_in_the_words_of_a_schema_with_properties() {
        let default = Descriptor::new("none", "0.1.0", "Takes no options.").options_schema;
        let with_properties = json!({ "type": "object", "properties": { "exact": {} }, "additionalProperties": false });
        for schema in [default, with_properties] {
            let problem = check_compiled_options(&compile_options_schema(&schema).unwrap(), &json!({ "colour": "red" })).unwrap_err();
            assert_eq!(
                problem,
                OptionProblem { field: "/colour".to_owned(), message: "Additional properties are not allowed ('colour' was unexpected)".to_owned() },
                "{schema}"
            );
        }
        let two =
            check_compiled_options(&compile_options_schema(&json!({ "type": "object", "additionalProperties": false })).unwrap(), &json!({ "a": 1, "b": 2 }));
        assert_eq!(two.unwrap_err().field, "/a", "the first one the validator met");
    }

    #[test]
    fn a_schema_that_is_not_json_schema_is_a_failure_not_an_option_problem() {
        let Err(ProviderError::Failed(message)) = check_options(&json!({ "type": 7 }), &json!({})) else { panic!() };
        assert!(message.starts_with("its options schema is not a valid JSON Schema"), "{message}");
    }
}
