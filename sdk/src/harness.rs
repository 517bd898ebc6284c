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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, RwLock};

use crate::{Entry, Knowledge, KnowledgeRequest, LookupRequest, Provider, ProviderError};

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

    /// Looks `term` up with no options, as `geomap_lookup` would.
    pub fn lookup<P: Provider>(&self, term: &str) -> Result<Vec<Entry>, ProviderError> {
        self.lookup_with::<P>(&LookupRequest { term: term.to_owned(), options: serde_json::json!({}), limit: self.limit.unwrap_or(10), language: None })
    }

    /// Runs one lookup request.
    pub fn lookup_with<P: Provider>(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        let mut entries = P::open()?.lookup(request)?;
        entries.truncate(request.limit as usize);
        Ok(entries)
    }

    /// Runs one knowledge request.
    pub fn query<P: Provider>(&self, request: &KnowledgeRequest) -> Result<Knowledge, ProviderError> {
        let mut knowledge = P::open()?.query(request)?;
        knowledge.items.truncate(request.limit as usize);
        Ok(knowledge)
    }
}
