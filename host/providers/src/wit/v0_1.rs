//! `geomap:provider@0.1.x`: the bindings generated from `wit/provider.wit`, and every conversion
//! between its types and the SDK's plain ones.
//!
//! Invariants:
//! - Conversions are field for field; the world's JSON text (options, an options schema, an
//!   entry's or an item's data) is JSON values on the plain side.
//! - A guest's data that is not JSON stays text (a string value), never an error; a descriptor
//!   whose options schema is not JSON is refused (the component does not load).
//! - An answer's size is the bytes of text of a successful answer: an entry's id, label, summary
//!   and data, a knowledge's summary and its items' titles and data. A typed failure measures 0.

use wasmtime::AsContextMut;

use geomap_provider_sdk as plain;

use super::Reply;

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "geomap:provider/plugin",
    exports: { default: async },
});

use exports::geomap::provider::provider as wit;

/// The world version (major, minor) these bindings are for.
pub(super) const VERSION: (u64, u64) = (0, 1);

/// `describe`, as the plain descriptor (`Err`: why the host cannot use it).
pub(super) async fn describe<S: AsContextMut<Data: Send>>(plugin: &Plugin, store: S) -> wasmtime::Result<Result<plain::Descriptor, String>> {
    Ok(plugin.geomap_provider_provider().call_describe(store).await?.try_into())
}

/// `lookup` of the plain `request`, measured.
pub(super) async fn lookup<S: AsContextMut<Data: Send>>(
    plugin: &Plugin,
    store: S,
    request: &plain::LookupRequest,
) -> wasmtime::Result<Reply<Vec<plain::Entry>>> {
    let answer = plugin.geomap_provider_provider().call_lookup(store, &request.into()).await?;
    let bytes =
        answer.as_ref().map_or(0, |entries| entries.iter().map(|entry| entry.id.len() + entry.label.len() + entry.summary.len() + entry.data.len()).sum());
    Ok(Reply::new(bytes, move || answer.map(|entries| entries.into_iter().map(plain::Entry::from).collect()).map_err(plain::ProviderError::from)))
}

/// `query` of the plain `request`, measured.
pub(super) async fn query<S: AsContextMut<Data: Send>>(
    plugin: &Plugin,
    store: S,
    request: &plain::KnowledgeRequest,
) -> wasmtime::Result<Reply<plain::Knowledge>> {
    let answer = plugin.geomap_provider_provider().call_query(store, &request.into()).await?;
    let bytes =
        answer.as_ref().map_or(0, |knowledge| knowledge.summary.len() + knowledge.items.iter().map(|item| item.title.len() + item.data.len()).sum::<usize>());
    Ok(Reply::new(bytes, move || answer.map(plain::Knowledge::from).map_err(plain::ProviderError::from)))
}

/// A guest's JSON text as a value (text that is not JSON stays text).
fn json_or_text(text: String) -> serde_json::Value {
    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
}

impl From<&plain::LookupRequest> for wit::LookupRequest {
    fn from(request: &plain::LookupRequest) -> wit::LookupRequest {
        wit::LookupRequest { term: request.term.clone(), options: request.options.to_string(), limit: request.limit, language: request.language.clone() }
    }
}

impl From<plain::Area> for wit::Area {
    fn from(area: plain::Area) -> wit::Area {
        wit::Area { west: area.west, south: area.south, east: area.east, north: area.north }
    }
}

impl From<&plain::KnowledgeRequest> for wit::KnowledgeRequest {
    fn from(request: &plain::KnowledgeRequest) -> wit::KnowledgeRequest {
        wit::KnowledgeRequest {
            area: request.area.map(wit::Area::from),
            topics: request.topics.clone(),
            options: request.options.to_string(),
            limit: request.limit,
        }
    }
}

impl From<wit::Capability> for plain::Capability {
    fn from(capability: wit::Capability) -> plain::Capability {
        match capability {
            wit::Capability::Lookup => plain::Capability::Lookup,
            wit::Capability::Knowledge => plain::Capability::Knowledge,
        }
    }
}

impl TryFrom<wit::Descriptor> for plain::Descriptor {
    type Error = String;

    fn try_from(descriptor: wit::Descriptor) -> Result<plain::Descriptor, String> {
        let options_schema = serde_json::from_str(&descriptor.options_schema).map_err(|error| format!("its options schema is not JSON: {error}"))?;
        Ok(plain::Descriptor {
            name: descriptor.name,
            version: descriptor.version,
            description: descriptor.description,
            capabilities: descriptor.capabilities.into_iter().map(plain::Capability::from).collect(),
            assets: descriptor.assets,
            needs_area: descriptor.needs_area,
            options_schema,
        })
    }
}

impl From<wit::Entry> for plain::Entry {
    fn from(entry: wit::Entry) -> plain::Entry {
        plain::Entry { id: entry.id, label: entry.label, summary: entry.summary, data: json_or_text(entry.data) }
    }
}

impl From<wit::Item> for plain::Item {
    fn from(item: wit::Item) -> plain::Item {
        plain::Item { title: item.title, data: json_or_text(item.data) }
    }
}

impl From<wit::Knowledge> for plain::Knowledge {
    fn from(knowledge: wit::Knowledge) -> plain::Knowledge {
        plain::Knowledge { items: knowledge.items.into_iter().map(plain::Item::from).collect(), summary: knowledge.summary }
    }
}

impl From<wit::ProviderError> for plain::ProviderError {
    fn from(error: wit::ProviderError) -> plain::ProviderError {
        match error {
            wit::ProviderError::UnsupportedRequest(what) => plain::ProviderError::UnsupportedRequest(what),
            wit::ProviderError::InvalidOptions(option) => plain::ProviderError::InvalidOptions { field: option.field, message: option.message },
            wit::ProviderError::MissingAsset(id) => plain::ProviderError::MissingAsset(id),
            wit::ProviderError::NotFound(close) => plain::ProviderError::NotFound(close),
            wit::ProviderError::Failed(message) => plain::ProviderError::Failed(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_go_out_as_the_worlds_text_and_answers_come_back_as_values() {
        let area = plain::Area { west: 170.0, south: -25.0, east: -170.0, north: -10.0 };
        let request = plain::KnowledgeRequest { area: Some(area), topics: vec!["faults".to_owned()], options: json!({ "min_magnitude": 6.5 }), limit: 3 };
        let sent = wit::KnowledgeRequest::from(&request);
        assert_eq!(sent.area.map(|a| (a.west, a.south, a.east, a.north)), Some((170.0, -25.0, -170.0, -10.0)));
        assert_eq!((sent.options.as_str(), sent.limit, sent.topics), (r#"{"min_magnitude":6.5}"#, 3, vec!["faults".to_owned()]));

        let entry = plain::Entry::from(wit::Entry { id: "a".into(), label: "b".into(), summary: "c".into(), data: r#"{"x":1}"#.into() });
        assert_eq!(entry.data, json!({ "x": 1 }));
        let item = plain::Item::from(wit::Item { title: "t".into(), data: "not json".into() });
        assert_eq!(item.data, json!("not json"), "text that is not JSON stays text");
        let error = plain::ProviderError::from(wit::ProviderError::InvalidOptions(wit::InvalidOption { field: "/x".into(), message: "no".into() }));
        assert_eq!(error, plain::ProviderError::InvalidOptions { field: "/x".into(), message: "no".into() });
    }

    #[test]
    fn a_descriptor_whose_options_schema_is_not_json_is_refused() {
        let descriptor = |options_schema: &str| wit::Descriptor {
            name: "echo".into(),
            version: "0.1.0".into(),
            description: "Repeats the term.".into(),
            capabilities: vec![wit::Capability::Knowledge],
            assets: vec!["echo-data".into()],
            needs_area: true,
            options_schema: options_schema.into(),
        };
        let described = plain::Descriptor::try_from(descriptor(r#"{"type":"object"}"#)).unwrap();
        assert!(described.serves(plain::Capability::Knowledge) && !described.serves(plain::Capability::Lookup) && described.needs_area);
        assert_eq!(described.options_schema, json!({ "type": "object" }));
        let refused = plain::Descriptor::try_from(descriptor("{ not json")).unwrap_err();
        assert!(refused.starts_with("its options schema is not JSON"), "{refused}");
    }
}
