//! A provider built by the tests of warm instances: it counts, per instance,
//! how many times `open()` ran and how many lookups it served, so the host's
//! tests can tell a warm instance from a fresh one.
//!
//! Its optional asset `counting-marker` holds `marker.txt`, read when it
//! opens. A marker of `fail-first-open` makes the instance's first open fail
//! (the next call on the same instance opens again).
//!
//! Terms: `count` answers the counts; `hold:<MiB>` first keeps that many more
//! MiB for the instance's life (memory that outlives the call); `say` writes a
//! line on stderr and answers the counts; `panic` traps.

use std::cell::{Cell, RefCell};

use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider};
use serde_json::json;

/// The asset it reads when it is mounted.
const ASSET: &str = "counting-marker";

thread_local! {
    /// Times `open()` ran in this instance (failed ones too).
    static OPENS: Cell<u32> = const { Cell::new(0) };
    /// Lookups this instance answered.
    static CALLS: Cell<u32> = const { Cell::new(0) };
    /// Memory kept for the instance's life.
    static HELD: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// The counting provider, with its marker as it was when it opened.
pub struct Counting {
    marker: Option<String>,
}

impl Provider for Counting {
    fn descriptor() -> Descriptor {
        Descriptor::new("counting-provider", "0.1.0", "Counts its opens and calls (tests only).").serves_lookup().reads_asset(ASSET)
    }

    fn open() -> Result<Counting, ProviderError> {
        let opens = OPENS.get() + 1;
        OPENS.set(opens);
        let marker = match geomap_provider_sdk::read_asset(ASSET, "marker.txt") {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).trim().to_owned()),
            Err(ProviderError::MissingAsset(_)) => None,
            Err(other) => return Err(other),
        };
        if marker.as_deref() == Some("fail-first-open") && opens == 1 {
            return Err(ProviderError::Failed("the first open of this instance fails on purpose".to_owned()));
        }
        Ok(Counting { marker })
    }

    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        match request.term.as_str() {
            "count" => {}
            "say" => eprintln!("the counting provider said on purpose"),
            "panic" => panic!("the counting provider panics on purpose"),
            hold if hold.starts_with("hold:") => {
                let mib: usize = hold["hold:".len()..].parse().map_err(|_| ProviderError::NotFound(vec!["hold:<MiB>".to_owned()]))?;
                HELD.with_borrow_mut(|held| held.push(std::hint::black_box(vec![1; mib << 20])));
            }
            other => return Err(ProviderError::NotFound(vec![format!("no term {other}; try count, hold:<MiB>, say or panic")])),
        }
        let calls = CALLS.get() + 1;
        CALLS.set(calls);
        let held: usize = HELD.with_borrow(|held| held.iter().map(Vec::len).sum());
        let data = json!({ "opens": OPENS.get(), "calls": calls, "marker": self.marker, "held_bytes": held });
        Ok(vec![Entry::new("count", "count", &format!("opened {} times, {calls} calls", OPENS.get())).with_data(data)])
    }
}

export_provider!(Counting);
