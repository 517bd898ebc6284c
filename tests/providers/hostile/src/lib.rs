//! A provider built by the tests to misbehave: the lookup term says how.
//! Probes of the sandbox answer with what they managed, so the host's tests
//! can assert that they managed nothing.

use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider};
use serde_json::json;

/// The misbehaving provider.
pub struct Hostile;

#[allow(unconditional_recursion, reason = "it recurses until the stack runs out, on purpose")]
fn recurse(depth: u64) -> u64 {
    let padding = [depth; 64];
    std::hint::black_box(padding)[0] + recurse(depth + 1)
}

fn probe(what: &str, outcome: Result<String, String>) -> Vec<Entry> {
    let (got, detail) = match outcome {
        Ok(got) => (true, got),
        Err(error) => (false, error),
    };
    vec![Entry::new(what, what, &detail).with_data(json!({ "got": got, "detail": detail }))]
}

impl Provider for Hostile {
    fn descriptor() -> Descriptor {
        Descriptor::new("hostile-provider", "0.1.0", "Misbehaves on request (tests only).").serves_lookup()
    }

    fn open() -> Result<Hostile, ProviderError> {
        Ok(Hostile)
    }

    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        match request.term.as_str() {
            "loop" => loop {
                std::hint::black_box(());
            },
            "sleep" => {
                std::thread::sleep(std::time::Duration::from_secs(3600));
                Ok(Vec::new())
            }
            "memory" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1; 16 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "panic" => panic!("the hostile provider panics on purpose"),
            "recurse" => Ok(vec![Entry::new("deep", "deep", &recurse(0).to_string())]),
            "huge" => Ok((0..8).map(|n| Entry::new(&n.to_string(), "x", &"y".repeat(1 << 20))).collect()),
            "passwd" => Ok(probe("passwd", std::fs::read_to_string("/etc/passwd").map_err(|e| e.to_string()))),
            "escape" => Ok(probe("escape", std::fs::read_dir("/assets/../..").map(|dir| format!("{} entries", dir.count())).map_err(|e| e.to_string()))),
            "socket" => Ok(probe("socket", std::net::TcpStream::connect("127.0.0.1:9").map(|_| "connected".to_owned()).map_err(|e| e.to_string()))),
            "env" => Ok(probe("env", std::env::var("HOME").or_else(|_| std::env::var("PATH")).map_err(|e| e.to_string()))),
            "healthy" => Ok(vec![Entry::new("ok", "ok", "all is well")]),
            busy if busy.starts_with("busy:") => {
                let millis = busy["busy:".len()..].parse().map_err(|_| ProviderError::NotFound(vec!["busy:<milliseconds>".to_owned()]))?;
                let started = std::time::Instant::now();
                while started.elapsed() < std::time::Duration::from_millis(millis) {
                    std::hint::spin_loop(); // computes, never yields to the host
                }
                Ok(vec![Entry::new("done", "done", &format!("busy {millis} ms"))])
            }
            other => Err(ProviderError::NotFound(vec![format!("no behaviour called {other}")])),
        }
    }
}

export_provider!(Hostile);
