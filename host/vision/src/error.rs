//! The one error of this crate: why vision work could not be done (`VisionError`).
//!
//! Invariants: every failure of decoding, the pixel store, the models and their
//! inference, and cancellation is one of its variants; its messages never name
//! the caller's tool (the server's adapter turns each variant into an envelope).

use geomap_model::progress::Cancelled;

use crate::models::Missing;

/// Why vision work (decoding, the pixel store, detection, reading text) could not be done.
#[derive(Debug, Clone, thiserror::Error)]
pub enum VisionError {
    /// Requirements of `feature` ("Layout detection", "Reading text") are outstanding;
    /// `detector_error` is the loader's own text.
    #[error("{feature} is not ready: {}", missing.iter().map(Missing::describe).collect::<Vec<_>>().join("; "))]
    NotReady { feature: &'static str, missing: Vec<Missing>, detector_error: Option<String> },
    /// The scan could not be decoded (it is not an image this server reads, or it is damaged).
    #[error("{0}")]
    Decode(String),
    /// A model failed to load or run.
    #[error("{0}")]
    Inference(String),
    /// The server's own files could not be written or read back (a full or read-only disk): a
    /// stored layout or reading, or the pixel store's tiles.
    #[error("{0}")]
    Storage(String),
    /// The caller cancelled between stages.
    #[error("cancelled")]
    Cancelled,
}

impl From<Cancelled> for VisionError {
    fn from(_: Cancelled) -> VisionError {
        VisionError::Cancelled
    }
}
