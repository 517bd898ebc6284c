//! Trace IDs, the per-call scope every part of a call shares, and panic capture
//! (the server writes the `event=tool_call` log line from them).
//!
//! Invariants: one random ID per tool call; everything the call runs (async
//! tasks through the task-local, blocking work through [`spawn_blocking`])
//! sees the same ID; a panic inside a call is caught, its backtrace kept for
//! the edge to log just above the call's line, and never printed elsewhere.

use std::backtrace::Backtrace;
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::FutureExt;

/// A 32-character lowercase hex ID shared by everything one tool call does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceId(String);

impl TraceId {
    /// A fresh random ID from the operating system's generator.
    pub fn random() -> Self {
        TraceId(crate::random_hex(16))
    }

    /// The ID as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What one call shares with the code it runs.
struct CallScope {
    trace_id: TraceId,
    panic_report: Mutex<Option<String>>,
}

tokio::task_local! {
    static CURRENT_CALL: Arc<CallScope>;
}

thread_local! {
    /// The scope of the call a blocking-pool thread is working for.
    static BLOCKING_CALL: RefCell<Option<Arc<CallScope>>> = const { RefCell::new(None) };
}

fn current_scope() -> Option<Arc<CallScope>> {
    CURRENT_CALL.try_with(Arc::clone).ok().or_else(|| BLOCKING_CALL.with(|slot| slot.borrow().clone()))
}

/// The trace ID of the call this code runs for, if any.
pub fn current_trace_id() -> Option<TraceId> {
    current_scope().map(|scope| scope.trace_id.clone())
}

/// A panic caught inside a call: the panic message and full backtrace.
#[derive(Debug)]
pub struct PanicReport(pub String);

/// Runs `work` as the body of one call with `trace_id`, catching any panic.
pub async fn run_call<F: Future>(trace_id: TraceId, work: F) -> Result<F::Output, PanicReport> {
    let scope = Arc::new(CallScope { trace_id, panic_report: Mutex::new(None) });
    let outcome = CURRENT_CALL.scope(Arc::clone(&scope), AssertUnwindSafe(work).catch_unwind()).await;
    outcome.map_err(|_| {
        let report = scope.panic_report.lock().map(|mut slot| slot.take()).ok().flatten();
        PanicReport(report.unwrap_or_else(|| "panic without a captured report".to_owned()))
    })
}

/// Runs blocking `work` on Tokio's blocking pool inside the current call's scope.
/// A panic there resumes in the caller, so [`run_call`] catches it.
pub async fn spawn_blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let scope = current_scope();
    let joined = tokio::task::spawn_blocking(move || {
        BLOCKING_CALL.with(|slot| *slot.borrow_mut() = scope);
        let result = std::panic::catch_unwind(AssertUnwindSafe(work));
        BLOCKING_CALL.with(|slot| *slot.borrow_mut() = None);
        result
    })
    .await;
    match joined {
        Ok(Ok(value)) => value,
        Ok(Err(payload)) => std::panic::resume_unwind(payload),
        Err(join_error) => std::panic::resume_unwind(join_error.into_panic()),
    }
}

/// `work` made to run in the current call's scope on whichever thread runs it: give it to the
/// threads a call starts itself (`std::thread::scope`), so a panic there is reported, with its
/// backtrace, under the call's trace ID. Join such a thread with [`rejoin`].
pub fn within_call<T>(work: impl FnOnce() -> T + Send) -> impl FnOnce() -> T + Send {
    let scope = current_scope();
    move || {
        /// Puts back the thread's previous scope, on return and on unwind alike.
        struct Restore(Option<Arc<CallScope>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                BLOCKING_CALL.with(|slot| *slot.borrow_mut() = self.0.take());
            }
        }
        let _restore = Restore(BLOCKING_CALL.with(|slot| slot.replace(scope)));
        work()
    }
}

/// The result of a thread a call started, or its panic carried on in the caller (so the call
/// ends as `internal_error` with the thread's own backtrace, which [`within_call`] kept).
pub fn rejoin<T>(joined: std::thread::Result<T>) -> T {
    joined.unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}

/// Wraps the panic hook: inside a call the message and backtrace are kept for
/// the edge to log; outside one the previous hook reports it as usual.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let Some(scope) = current_scope() else {
            return previous(info);
        };
        let report = format!("{info}\nstack backtrace:\n{}", Backtrace::force_capture());
        if let Ok(mut slot) = scope.panic_report.lock() {
            slot.get_or_insert(report);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_ids_are_32_lowercase_hex_and_distinct() {
        let a = TraceId::random();
        let b = TraceId::random();
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn nested_blocking_work_sees_the_call_trace_id() {
        let id = TraceId::random();
        let seen = run_call(id.clone(), async { spawn_blocking(current_trace_id).await }).await.unwrap();
        assert_eq!(seen, Some(id));
        assert_eq!(current_trace_id(), None);
    }

    #[tokio::test]
    async fn a_panic_in_a_thread_the_call_started_is_reported_with_that_threads_backtrace() {
        install_panic_hook();
        let outcome = run_call(TraceId::random(), async {
            spawn_blocking(|| {
                std::thread::scope(|scope| {
                    let helper = scope.spawn(within_call(|| -> u32 { panic!("boom in a helper thread") }));
                    rejoin(helper.join())
                })
            })
            .await
        })
        .await;
        let PanicReport(report) = outcome.unwrap_err();
        assert!(report.contains("boom in a helper thread") && report.contains("stack backtrace:"), "{report}");
        let id = TraceId::random();
        let seen =
            run_call(id.clone(), async { spawn_blocking(|| std::thread::scope(|scope| rejoin(scope.spawn(within_call(current_trace_id)).join()))).await })
                .await
                .unwrap();
        assert_eq!(seen, Some(id), "the helper thread sees the call's trace ID");
    }

    #[tokio::test]
    async fn a_panic_in_blocking_work_is_caught_with_its_backtrace() {
        install_panic_hook();
        let outcome = run_call(TraceId::random(), async {
            spawn_blocking(|| panic!("boom in the pool")).await;
        })
        .await;
        let PanicReport(report) = outcome.unwrap_err();
        assert!(report.contains("boom in the pool"), "{report}");
        assert!(report.contains("stack backtrace:"), "{report}");
    }
}
