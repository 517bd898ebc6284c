//! Detection failures: `missing_extra` (what the detectors lack, with hints
//! that follow this server's preparation setting), `unsupported_media` for a
//! scan that does not decode, `internal_error` for a failed inference.

use serde_json::json;

use geomap_app::preparation::DETECTORS_TOOL;
use geomap_model::errors::{ErrorCode, NextCall};
use geomap_vision::VisionError;
use geomap_vision::models::Missing;

use geomap_model::errors::failure::{FailedCall, Parts, parts};

pub(super) fn describe_detect(error: &VisionError, call: &FailedCall<'_>) -> Parts {
    let settings = call.settings;
    match error {
        VisionError::NotReady { feature, missing, detector_error } => {
            let list: Vec<String> = missing.iter().map(Missing::describe).collect();
            let fetchable: Vec<(&str, u64)> = missing
                .iter()
                .filter_map(|m| match m {
                    Missing::Asset { id, has_source: true, bytes, .. } => Some((id.as_str(), *bytes)),
                    _ => None,
                })
                .collect();
            let unsourced: Vec<&str> = missing
                .iter()
                .filter_map(|m| match m {
                    Missing::Asset { id, has_source: false, .. } | Missing::Model { id, .. } => Some(id.as_str()),
                    _ => None,
                })
                .collect();
            let libraries: Vec<&str> = missing.iter().filter_map(|m| if let Missing::Library(name) = m { Some(name.as_str()) } else { None }).collect();
            let root = settings.data_root.display();
            let mut hints = Vec::new();
            if !fetchable.is_empty() {
                let ids: Vec<String> = fetchable.iter().map(|(id, _)| format!("\"{id}\"")).collect();
                let bytes: u64 = fetchable.iter().map(|(_, bytes)| bytes).sum();
                hints.push(match settings.detector_preparation {
                    true => format!(
                        "Ask the user whether to download {} ({:.1} MB; it writes to the server's disk); after they agree, call {DETECTORS_TOOL} with {{\"assets\": [{}]}} to install it into the server's data root, then call {} again.",
                        fetchable.iter().map(|(id, _)| *id).collect::<Vec<_>>().join(", "),
                        bytes as f64 / 1e6,
                        ids.join(", "),
                        call.tool
                    ),
                    false => format!(
                        "Ask the server operator to run `stratigraphic-amenity-assets --all --root \"{root}\"` in the server's environment, or to re-expose geomap_prepare_detectors (GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION=true)."
                    ),
                });
            }
            if !unsourced.is_empty() {
                hints.push(format!(
                    "The detector weights {} have no public source, so no tool here can fetch them: the operator exports PEACE's checkpoints to ONNX (README: Detector weights) and runs `stratigraphic-amenity-assets <id> --from FILE --root \"{root}\"`, or pins a source in the config file.",
                    unsourced.join(", ")
                ));
            }
            hints.push(
                "Do not run installer commands in your own shell: it is a different environment from the server's, its PATH may lack the command, and anything it installs lands in the wrong data root."
                    .to_owned(),
            );
            if !libraries.is_empty() {
                hints.push(format!(
                    "{} cannot be installed by any tool here: it is a system library; report it to the operator with trace_id {}.",
                    libraries.join(", "),
                    call.trace_id
                ));
            }
            let mut details = json!({
                "missing_requirements": list,
                "missing_assets": missing.iter().filter_map(|m| if let Missing::Asset { id, .. } = m { Some(id) } else { None }).collect::<Vec<_>>(),
                "download_bytes": fetchable.iter().map(|(_, bytes)| bytes).sum::<u64>(),
            });
            if let Some(detector_error) = detector_error {
                details["detector_error"] = json!(detector_error);
            }
            // The first hint's download, exactly, when a tool here can make it.
            let next_call = (!fetchable.is_empty() && settings.detector_preparation).then(|| {
                let assets: Vec<&str> = fetchable.iter().map(|(id, _)| *id).collect();
                NextCall::new(DETECTORS_TOOL, json!({ "assets": assets }), true)
            });
            let message = format!("{feature} is not ready on this server; outstanding: {}. {}", list.join("; "), hints[0]);
            Parts { next_call, ..parts(ErrorCode::MissingExtra, message, details, hints) }
        }
        VisionError::Decode(detail) => {
            let next =
                "Register the scan as PNG, JPEG or an uncompressed/deflate TIFF, or register a geomap-map-bundle/v1 JSON file made elsewhere.".to_owned();
            parts(ErrorCode::UnsupportedMedia, format!("The scan could not be decoded: {detail}. {next}"), json!({ "reason": "undecodable" }), vec![next])
        }
        VisionError::Inference(detail) => {
            tracing::error!(target: "detect", "trace_id={} detection failed: {detail}", call.trace_id);
            let report = format!("Report trace_id {} to the operator: the server logged what failed.", call.trace_id);
            parts(ErrorCode::InternalError, format!("A model failed inside the server. {report}"), json!({ "stage": "inference" }), vec![report])
        }
        VisionError::Storage(detail) => super::maps::describe_storage("storing", detail, call),
        VisionError::Cancelled => geomap_model::errors::failure::cancelled(call),
    }
}
