//! Asset failures as envelope parts: `install_failed` (with `details.reason`),
//! `asset_path_unmanaged`, `invalid_arguments` for an unknown asset,
//! `preparation_disabled`. The server's adapter and this crate's command line
//! both use [`describe`], so an asset failure reads the same from either edge.

use serde_json::json;

use crate::{AssetError, FailureReason};
use geomap_model::errors::ErrorCode;
use geomap_model::settings::Settings;

use geomap_model::errors::failure::{FailedCall, Parts, cancelled, parts};

/// The command an operator runs to install `id` by hand.
fn cli(id: &str, settings: &Settings) -> String {
    format!("stratigraphic-amenity-assets {id} --root {}", settings.data_root.display())
}

pub fn describe(error: &AssetError, call: &FailedCall<'_>) -> Parts {
    let settings = call.settings;
    match error {
        AssetError::Unknown { id, known } => {
            let expected = format!("asset ids from: {}", known.join(", "));
            parts(
                ErrorCode::InvalidArguments,
                format!("No asset is called {id:?}. Call {} again with {expected}.", call.tool),
                json!({ "field": "/assets", "problem": "wrong_value", "expected": expected, "asset": id }),
                vec![
                    format!("Use one of: {} (geomap_capabilities lists them with their sizes).", known.join(", ")),
                    format!(
                        "If a provider of the operator's own reads {id}, the operator declares it in the config file (GEOMAP_CONFIG) under [assets.{id}], then restarts the server."
                    ),
                ],
            )
        }
        AssetError::Unmanaged { id, .. } => {
            let operator = format!(
                "The operator manages it (config file, [assets.{id}] path); to let the server install it instead, the operator removes that entry and restarts."
            );
            parts(
                ErrorCode::AssetPathUnmanaged,
                format!("Asset {id} is the operator's own copy, which the server never installs over. Use it as it is. {operator}"),
                json!({ "asset": id }),
                vec![operator],
            )
        }
        AssetError::PreparationDisabled { variable } => {
            let operator = "The operator can install assets with stratigraphic-amenity-assets --all".to_owned();
            parts(
                ErrorCode::PreparationDisabled,
                format!("Preparation is disabled by this server's settings ({variable}=false). {operator}."),
                json!({ "setting": variable }),
                vec![operator],
            )
        }
        AssetError::Install { id, file, url, reason, detail } => {
            let retry = format!("Operator: `{}` installs it by hand and shows the same failure.", cli(id, settings));
            let (what, remedy) = match reason {
                FailureReason::ChecksumMismatch => (
                    "a downloaded file does not match its pinned size and sha256 (the source changed, or something altered it on the way)".to_owned(),
                    "Operator: check the source or GEOMAP_ASSET_MIRROR serves the approved file.".to_owned(),
                ),
                FailureReason::HttpStatus(status) => (
                    format!("the source answered HTTP {status}"),
                    "Operator: check the source URL, or set GEOMAP_ASSET_MIRROR to a copy that has the file.".to_owned(),
                ),
                FailureReason::Unreachable => (
                    "the source could not be reached".to_owned(),
                    "Operator: check the network and HTTPS_PROXY/NO_PROXY, or set GEOMAP_ASSET_MIRROR to a reachable copy.".to_owned(),
                ),
                FailureReason::Timeout => (
                    format!("no byte arrived for {}", humantime::format_duration(settings.asset_timeout)),
                    format!(
                        "Try again later; on a slow link the operator raises GEOMAP_ASSET_TIMEOUT (now {}).",
                        humantime::format_duration(settings.asset_timeout)
                    ),
                ),
                FailureReason::Truncated => {
                    ("the transfer broke off before the whole file arrived".to_owned(), "Call again: a broken transfer is often passing.".to_owned())
                }
                FailureReason::DiskFull => {
                    ("the disk is full".to_owned(), format!("Operator: free space where GEOMAP_DATA_ROOT is ({}).", settings.data_root.display()))
                }
                FailureReason::ReadOnly => (
                    "the server cannot write into its data root".to_owned(),
                    format!("Operator: make {}/assets writable for the server's user.", settings.data_root.display()),
                ),
                FailureReason::Cancelled => return cancelled(call),
                FailureReason::NoSource => (
                    "it has no public source to download from".to_owned(),
                    format!(
                        "Operator: export it to ONNX (README: Detector weights) and import it with `stratigraphic-amenity-assets {id} --from FILE --root {}`, or pin a source in the config file ([assets.{id}.sources.\"model.onnx\"] url, size, sha256).",
                        settings.data_root.display()
                    ),
                ),
            };
            let mut details = json!({ "asset": id, "reason": reason.as_str() });
            if let Some(file) = file {
                details["file"] = json!(file);
            }
            if let Some(url) = url {
                details["url"] = json!(url);
            }
            if let FailureReason::HttpStatus(status) = reason {
                details["http_status"] = json!(status);
            }
            tracing::debug!(target: "assets", "trace_id={} installing {id} failed: {detail}", call.trace_id);
            parts(
                ErrorCode::InstallFailed,
                format!("Installing {id} failed: {what}. Nothing was half-installed; an earlier good copy, if any, is still in place. {remedy}"),
                details,
                vec![remedy, retry],
            )
        }
    }
}
