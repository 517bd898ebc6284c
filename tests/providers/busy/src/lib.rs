//! A provider built by the tests to compute: `busy:<ms>` answers after that long of work that never
//! yields to the host, so a lookup over it and another busy provider shows whether the host runs the
//! providers of one call at once.

use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider};

/// The busy provider.
pub struct Busy;

impl Provider for Busy {
    fn descriptor() -> Descriptor {
        Descriptor::new("busy-provider", "0.1.0", "Answers `busy:<ms>` after that long of work (tests only).").serves_lookup()
    }

    fn open() -> Result<Busy, ProviderError> {
        Ok(Busy)
    }

    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        let millis = request.term.strip_prefix("busy:").and_then(|millis| millis.parse().ok());
        let millis = millis.ok_or_else(|| ProviderError::NotFound(vec!["busy:<milliseconds>".to_owned()]))?;
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_millis(millis) {
            std::hint::spin_loop(); // computes, never yields to the host
        }
        Ok(vec![Entry::new("done", "done", &format!("busy {millis} ms"))])
    }
}

export_provider!(Busy);
