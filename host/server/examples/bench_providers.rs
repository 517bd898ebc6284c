//! Provider costs side by side in one run (a benchmark, not a test; `./dev bench` runs it):
//!
//! 1. A lookup through the WebAssembly component against the same provider
//!    crate called natively, on the real assets, in steady state: the component
//!    through its warm instance, the crate opened once (as a warm instance is).
//!    Prints the medians and their ratio (goals: at most 1 ms for ics-timescale's
//!    "Jurassic", ratio at most 1.3), and beside them the first call (a fresh
//!    instance, whose `open()` reads the asset) and the native `open()`.
//! 2. The per-call floor: a warm call that does nothing.
//! 3. An area query on the real earthquake catalogue, measured as the lookups.
//!
//! Usage: bench_providers <folder with the real asset files> [rounds]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use geomap_model::settings::{ProviderLimits, ProviderPool};
use geomap_provider_sdk::harness::Harness;
use geomap_provider_sdk::{KnowledgeRequest as NativeKnowledgeRequest, LookupRequest as NativeLookupRequest, Provider};
use geomap_providers::{Area, KnowledgeRequest, LookupRequest, Runtime};
use serde_json::json;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn component(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/wasm32-wasip2/release").join(format!("{name}.wasm"))
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The first of `rounds + 1` calls of `call`, one after another, and the median of the others.
async fn first_and_median<F: Future<Output = ()>>(rounds: usize, mut call: impl FnMut() -> F) -> (Duration, Duration) {
    let mut samples = Vec::with_capacity(rounds + 1);
    for _ in 0..=rounds {
        let started = Instant::now();
        call().await;
        samples.push(started.elapsed());
    }
    let first = samples.remove(0);
    (first, median(samples))
}

/// `P` opened once natively (its assets mounted by `harness`), then `answer` run `rounds` times on
/// it: how long the open took, and the answers' median.
fn native<P: Provider>(rounds: usize, answer: impl Fn(&P)) -> (Duration, Duration) {
    let started = Instant::now();
    let opened = P::open().expect("the provider opens on the real assets");
    let open = started.elapsed();
    let samples = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            answer(&opened);
            started.elapsed()
        })
        .collect();
    (open, median(samples))
}

/// One line of the comparison.
fn report(what: &str, (first, warm): (Duration, Duration), (open, native): (Duration, Duration)) {
    println!(
        "{what}: wasm {:.3} ms, native {:.3} ms, ratio {:.2} (goal <= 1.3); first wasm call {:.1} ms, native open {:.1} ms",
        millis(warm),
        millis(native),
        warm.as_secs_f64() / native.as_secs_f64(),
        millis(first),
        millis(open)
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shared = PathBuf::from(args.get(1).expect("usage: bench_providers <folder with the real asset files> [rounds]"));
    let rounds: usize = args.get(2).map_or(41, |n| n.parse().expect("rounds is a number"));
    let runtime = Runtime::new(None, ProviderPool::default()).expect("the engine starts");
    let limits = ProviderLimits::default();
    println!("provider benchmark: {rounds} rounds each, medians; assets from {}", shared.display());

    for (crate_name, asset, term) in [
        ("ics_timescale", "ics-chart", "Jurassic"),
        ("ics_timescale", "ics-chart", "Lower Cretaceous"),
        ("cgi_lithology", "cgi-simple-lithology", "sandstone"),
        ("k2_rocks", "k2-rock-knowledge", "granite"),
    ] {
        let provider = runtime.load(&component(crate_name)).await.expect("the component loads");
        let assets = [(asset.to_owned(), shared.clone())];
        let request = LookupRequest { term: term.to_owned(), options: json!({}), limit: 5, language: None };
        let wasm = first_and_median(rounds, || async {
            provider.lookup(&runtime, &assets, limits, &request).await.expect("the lookup answers");
        })
        .await;
        let _mounted = Harness::new().with_asset(asset, &shared);
        let native_request = NativeLookupRequest { term: term.to_owned(), options: json!({}), limit: 5, language: None };
        let natively = match crate_name {
            "ics_timescale" => native(rounds, |p: &ics_timescale::IcsTimescale| drop(p.lookup(&native_request).expect("answers"))),
            "cgi_lithology" => native(rounds, |p: &cgi_lithology::CgiLithology| drop(p.lookup(&native_request).expect("answers"))),
            _ => native(rounds, |p: &k2_rocks::K2Rocks| drop(p.lookup(&native_request).expect("answers"))),
        };
        report(&format!("lookup {term:?} in {crate_name}"), wasm, natively);
    }

    let hostile = runtime.load(&component("hostile_provider")).await.expect("the test component loads");
    let nothing = LookupRequest { term: "healthy".to_owned(), options: json!({}), limit: 1, language: None };
    let (_, floor) = first_and_median(rounds * 10, || async {
        hostile.lookup(&runtime, &[], limits, &nothing).await.expect("answers");
    })
    .await;
    println!("per call: a warm call that does nothing: {:.1} µs (median of {})", floor.as_secs_f64() * 1e6, rounds * 10);

    let seismicity = runtime.load(&component("usgs_seismicity")).await.expect("the component loads");
    let assets = [("usgs-earthquakes-m45".to_owned(), shared.clone())];
    let japan = KnowledgeRequest { area: Some(Area { west: 128.0, south: 30.0, east: 146.0, north: 46.0 }), topics: Vec::new(), options: json!({}), limit: 10 };
    let wasm = first_and_median(rounds, || async {
        seismicity.query(&runtime, &assets, limits, &japan).await.expect("the query answers");
    })
    .await;
    let _mounted = Harness::new().with_asset("usgs-earthquakes-m45", &shared);
    let native_japan = NativeKnowledgeRequest {
        area: Some(geomap_provider_sdk::Area { west: 128.0, south: 30.0, east: 146.0, north: 46.0 }),
        topics: Vec::new(),
        options: json!({}),
        limit: 10,
    };
    let natively = native(rounds, |p: &usgs_seismicity::UsgsSeismicity| drop(p.query(&native_japan).expect("answers")));
    report("area query on the real earthquake catalogue (Japan box)", wasm, natively);
}
