//! The provider world, version by version: one module per world version this host loads
//! (`v0_1`), holding that version's generated bindings and every conversion between its types and
//! the plain ones (the SDK's), and here the dispatch over them.
//!
//! Invariants:
//! - A component's version is read from its export name (`geomap:provider/provider@<version>`)
//!   before anything is instantiated: a component no module here loads is refused, never run.
//!   Any patch of a supported major.minor is that version.
//! - Nothing outside this module names a generated type: requests go in, and answers come out,
//!   as the SDK's plain types ([`geomap_provider_sdk::Descriptor`], `Entry`, `Knowledge`, ...).
//! - An answer is measured (the bytes of text the guest returned) before it is converted, so one
//!   over the output limit is refused without being parsed ([`Reply`]).
//! - Nothing here knows the host state a store holds (the sandbox): the bindings are generic
//!   over it, and the caller links WASI.
//! - A new world version is a module beside `v0_1` and a variant in each enum here; the plain
//!   types stay one set, and each version converts to and from them.

mod v0_1;

use wasmtime::component::{Component, Linker};
use wasmtime::{AsContextMut, Engine};

use geomap_provider_sdk::{Descriptor, Entry, Knowledge, KnowledgeRequest, LookupRequest, ProviderError};

/// The world versions this host loads: any patch of 0.1.
pub const SUPPORTED_WORLD: (u64, u64) = v0_1::VERSION;
/// The export name prefix of the provider interface.
const INTERFACE: &str = "geomap:provider/provider@";

/// Why a compiled component cannot be linked as a provider.
#[derive(Debug)]
pub(crate) enum Unlinkable {
    /// It exports another version of the world, or none: what it exports instead.
    Incompatible(String),
    /// It exports a supported version but cannot be linked (it imports what the host does not give).
    Invalid(wasmtime::Error),
}

/// A component linked against the bindings of its world version, ready to instantiate.
pub(crate) enum PluginPre<T: 'static> {
    /// `geomap:provider@0.1.x`.
    V0_1(v0_1::PluginPre<T>),
}

impl<T: Send + 'static> PluginPre<T> {
    /// Reads `component`'s world version from its exports and links it with `linker`; a version
    /// this host does not load is refused before anything else is done with it.
    pub(crate) fn new(engine: &Engine, linker: &Linker<T>, component: &Component) -> Result<PluginPre<T>, Unlinkable> {
        let exports: Vec<String> = component.component_type().exports(engine).map(|(name, _)| name.to_owned()).collect();
        let version = exports.iter().find_map(|name| name.strip_prefix(INTERFACE)).map(str::to_owned);
        let major_minor = version.as_deref().and_then(|version| {
            let mut parts = version.split('.').map(|part| part.parse::<u64>().ok());
            Some((parts.next()??, parts.next()??))
        });
        match major_minor {
            Some(v0_1::VERSION) => {
                let pre = linker.instantiate_pre(component).map_err(Unlinkable::Invalid)?;
                Ok(PluginPre::V0_1(v0_1::PluginPre::new(pre).map_err(Unlinkable::Invalid)?))
            }
            _ => Err(Unlinkable::Incompatible(
                version.map_or_else(|| format!("no {INTERFACE}* interface (exports: {})", exports.join(", ")), |v| format!("{INTERFACE}{v}")),
            )),
        }
    }

    /// A new instance in `store`.
    pub(crate) async fn instantiate(&self, store: impl AsContextMut<Data = T>) -> wasmtime::Result<Plugin> {
        match self {
            PluginPre::V0_1(pre) => Ok(Plugin::V0_1(pre.instantiate_async(store).await?)),
        }
    }
}

/// An instance of a provider component, of its world version.
pub(crate) enum Plugin {
    /// `geomap:provider@0.1.x`.
    V0_1(v0_1::Plugin),
}

impl Plugin {
    /// `describe`: the descriptor, or why it is not one the host can use (its options schema is not JSON).
    pub(crate) async fn describe<S: AsContextMut<Data: Send>>(&self, store: S) -> wasmtime::Result<Result<Descriptor, String>> {
        match self {
            Plugin::V0_1(plugin) => v0_1::describe(plugin, store).await,
        }
    }

    /// `lookup`: the guest's answer, measured.
    pub(crate) async fn lookup<S: AsContextMut<Data: Send>>(&self, store: S, request: &LookupRequest) -> wasmtime::Result<Reply<Vec<Entry>>> {
        match self {
            Plugin::V0_1(plugin) => v0_1::lookup(plugin, store, request).await,
        }
    }

    /// `query`: the guest's answer, measured.
    pub(crate) async fn query<S: AsContextMut<Data: Send>>(&self, store: S, request: &KnowledgeRequest) -> wasmtime::Result<Reply<Knowledge>> {
        match self {
            Plugin::V0_1(plugin) => v0_1::query(plugin, store, request).await,
        }
    }
}

/// A guest's answer as it returned it: its size is known at once, and it becomes plain types
/// (its JSON text parsed) only when asked, after the size was checked against the output limit.
pub(crate) struct Reply<T> {
    output_bytes: usize,
    convert: Box<dyn FnOnce() -> Result<T, ProviderError> + Send>,
}

impl<T> Reply<T> {
    /// An answer of `output_bytes` bytes of text (0 for a typed failure), `convert`ed on demand.
    fn new(output_bytes: usize, convert: impl FnOnce() -> Result<T, ProviderError> + Send + 'static) -> Reply<T> {
        Reply { output_bytes, convert: Box::new(convert) }
    }

    /// The bytes of text the guest returned.
    pub(crate) fn output_bytes(&self) -> usize {
        self.output_bytes
    }

    /// The answer as plain types: the value, or the provider's typed failure.
    pub(crate) fn into_answer(self) -> Result<T, ProviderError> {
        (self.convert)()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_for_another_world_version_is_incompatible_and_never_runs() {
        let test = "a_component_for_another_world_version_is_incompatible_and_never_runs";
        let Some(folder) = geomap_model::testing::components(test, &["wrong_world_provider"]) else { return };
        let engine = Engine::new(wasmtime::Config::new().wasm_component_model(true)).unwrap();
        let component = Component::from_file(&engine, folder.join("wrong_world_provider.wasm")).unwrap();
        // A linker with nothing in it: the version is refused before linking is even tried.
        let Err(Unlinkable::Incompatible(found)) = PluginPre::<()>::new(&engine, &Linker::new(&engine), &component) else { panic!("linked a 0.2 component") };
        assert_eq!(found, "geomap:provider/provider@0.2.0");
    }
}
