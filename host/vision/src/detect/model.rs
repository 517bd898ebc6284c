//! A YOLOv10 detector on ONNX Runtime: its contract (`images` `[1, 3, S, S]`
//! in, `[1, 300, 6]` out) checked at load, run from a session pool.

use std::path::Path;

use ort::value::Tensor;

use super::postprocess::MAX_DETECTIONS;
use crate::models::onnx::{OnnxError, SessionPool, cores, declared_shape};

/// A YOLOv10 detector: its input side and its sessions.
#[derive(Debug)]
pub struct Model {
    /// The input's side in pixels (the `S` of `[1, 3, S, S]`; 640 when the model leaves it open).
    pub size: u32,
    input: String,
    sessions: SessionPool,
}

impl Model {
    /// Loads the model at `path` and checks it takes `images` `[1, 3, S, S]` and gives `[1, 300, 6]`.
    pub fn load(environment: &'static ort::environment::Environment, path: &Path) -> Result<Model, OnnxError> {
        let sessions = SessionPool::load(environment, path, cores())?;
        let (size, input) = sessions.with(|first| {
            let input = declared_shape(first.inputs().first());
            let output = declared_shape(first.outputs().first());
            let open = |dim: i64| dim <= 0;
            let size = match input.as_deref() {
                Some([1, 3, h, w]) if h == w && *h > 0 => *h as u32,
                Some([1, 3, h, w]) if open(*h) && open(*w) => 640,
                other => return Err(OnnxError::Model(format!("its input is {other:?}, not YOLOv10's [1, 3, S, S]"))),
            };
            match output.as_deref() {
                Some([1, rows, 6]) if *rows == MAX_DETECTIONS as i64 || open(*rows) => {}
                other => return Err(OnnxError::Model(format!("its output is {other:?}, not YOLOv10's [1, 300, 6] (x1, y1, x2, y2, score, class)"))),
            }
            Ok((size, first.inputs()[0].name().to_owned()))
        })?;
        Ok(Model { size, input, sessions })
    }

    /// Runs one letterboxed image (`[1, 3, size, size]`, RGB scaled to 0–1) and returns its rows.
    pub fn run(&self, pixels: Vec<f32>) -> Result<Vec<[f32; 6]>, OnnxError> {
        let side = self.size as usize;
        let tensor = Tensor::from_array(([1_usize, 3, side, side], pixels)).map_err(|error| OnnxError::Run(error.to_string()))?;
        self.sessions.with(|session| {
            let outputs = session.run(ort::inputs![self.input.as_str() => tensor]).map_err(|error| OnnxError::Run(error.to_string()))?;
            let (_, values) = outputs[0].try_extract_tensor::<f32>().map_err(|error| OnnxError::Run(error.to_string()))?;
            Ok(values.chunks_exact(6).map(|row| [row[0], row[1], row[2], row[3], row[4], row[5]]).collect())
        })
    }
}
