//! Provider costs side by side in one run (a benchmark, not a test; `./dev bench` runs it):
//!
//! 1. A lookup through the WebAssembly component against the same provider
//!    crate called natively through the SDK harness, on the real assets
//!    (both open their asset on every call, as the host's fresh instance does).
//!    Prints the medians and their ratio (goal: at most 1.3).
//! 2. The per-call floor: instantiating a component from its pre-linked
//!    `InstancePre` plus a call that does nothing.
//! 3. An area query on the real earthquake catalogue (p50).
//!
//! Usage: bench_providers <folder with the real asset files> [rounds]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use geomap_provider_sdk::harness::Harness;
use geomap_provider_sdk::{KnowledgeRequest as NativeKnowledgeRequest, LookupRequest as NativeLookupRequest};
use geomap_providers::{KnowledgeRequest, Limits, LookupRequest, Runtime};
use serde_json::json;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn component(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/wasm32-wasip2/release").join(format!("{name}.wasm"))
}

/// Times `rounds` alternating calls of `wasm` and `native`; returns their medians.
async fn side_by_side<W, N>(rounds: usize, mut wasm: impl FnMut() -> W, mut native: impl FnMut() -> N) -> (Duration, Duration)
where
    W: Future<Output = ()>,
    N: FnOnce(),
{
    let (mut in_wasm, mut natively) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let started = Instant::now();
        wasm().await;
        in_wasm.push(started.elapsed());
        let call = native();
        let started = Instant::now();
        call();
        natively.push(started.elapsed());
    }
    (median(in_wasm), median(natively))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shared = PathBuf::from(args.get(1).expect("usage: bench_providers <folder with the real asset files> [rounds]"));
    let rounds: usize = args.get(2).map_or(41, |n| n.parse().expect("rounds is a number"));
    let runtime = Runtime::new(None).expect("the engine starts");
    let limits = Limits::default();
    println!("provider benchmark: {rounds} rounds each, medians; assets from {}", shared.display());

    for (crate_name, asset, term) in [
        ("ics_timescale", "ics-chart", "Lower Cretaceous"),
        ("cgi_lithology", "cgi-simple-lithology", "sandstone"),
        ("k2_rocks", "k2-rock-knowledge", "granite"),
    ] {
        let provider = runtime.load(&component(crate_name)).await.expect("the component loads");
        let assets = [(asset.to_owned(), shared.clone())];
        let request = LookupRequest { term: term.to_owned(), options: json!({}), limit: 5, language: None };
        let native_request = NativeLookupRequest { term: term.to_owned(), options: json!({}), limit: 5, language: None };
        let harness = Harness::new().with_asset(asset, &shared);
        let (wasm, native) = side_by_side(
            rounds,
            || async {
                provider.lookup(&runtime, &assets, limits, &request).await.expect("the lookup answers");
            },
            || {
                let (harness, native_request) = (&harness, &native_request);
                move || match crate_name {
                    "ics_timescale" => drop(harness.lookup_with::<ics_timescale::IcsTimescale>(native_request).expect("answers")),
                    "cgi_lithology" => drop(harness.lookup_with::<cgi_lithology::CgiLithology>(native_request).expect("answers")),
                    _ => drop(harness.lookup_with::<k2_rocks::K2Rocks>(native_request).expect("answers")),
                }
            },
        )
        .await;
        println!(
            "lookup {term:?} in {crate_name}: wasm {:.2} ms, native {:.2} ms, ratio {:.2} (goal <= 1.3)",
            wasm.as_secs_f64() * 1e3,
            native.as_secs_f64() * 1e3,
            wasm.as_secs_f64() / native.as_secs_f64()
        );
    }

    let hostile = runtime.load(&component("hostile_provider")).await.expect("the test component loads");
    let nothing = LookupRequest { term: "healthy".to_owned(), options: json!({}), limit: 1, language: None };
    let mut floor = Vec::new();
    for _ in 0..rounds * 10 {
        let started = Instant::now();
        hostile.lookup(&runtime, &[], limits, &nothing).await.expect("answers");
        floor.push(started.elapsed());
    }
    println!("per call: instantiate from InstancePre + a call that does nothing: {:.1} µs (median of {})", median(floor).as_secs_f64() * 1e6, rounds * 10);

    let seismicity = runtime.load(&component("usgs_seismicity")).await.expect("the component loads");
    let assets = [("usgs-earthquakes-m45".to_owned(), shared.clone())];
    let japan = KnowledgeRequest { area: Some([128.0, 30.0, 146.0, 46.0]), topics: Vec::new(), options: json!({}), limit: 10 };
    let native_japan = NativeKnowledgeRequest {
        area: Some(geomap_provider_sdk::Area { west: 128.0, south: 30.0, east: 146.0, north: 46.0 }),
        topics: Vec::new(),
        options: json!({}),
        limit: 10,
    };
    let harness = Harness::new().with_asset("usgs-earthquakes-m45", &shared);
    let (wasm, native) = side_by_side(
        rounds,
        || async {
            seismicity.query(&runtime, &assets, limits, &japan).await.expect("the query answers");
        },
        || {
            let (harness, native_japan) = (&harness, &native_japan);
            move || drop(harness.query::<usgs_seismicity::UsgsSeismicity>(native_japan).expect("answers"))
        },
    )
    .await;
    println!(
        "area query on the real earthquake catalogue (Japan box): p50 wasm {:.2} ms, native {:.2} ms, ratio {:.2}",
        wasm.as_secs_f64() * 1e3,
        native.as_secs_f64() * 1e3,
        wasm.as_secs_f64() / native.as_secs_f64()
    );
}
