//! Files that are not maps this server takes: `unsupported_media`, `oversize_image`;
//! both offer a `geomap-map-bundle/v1` made elsewhere as the way on.

use serde_json::json;

use geomap_model::errors::{Cause, ErrorCode};
use geomap_model::settings::Settings;
use geomap_store::media::bundle::BUNDLE_SCHEMA;
use geomap_store::media::{Limit, MediaError, MediaType};

use geomap_model::errors::failure::{Parts, parts};

fn supported_list() -> String {
    MediaType::SUPPORTED.iter().map(|t| t.mime()).collect::<Vec<_>>().join(", ")
}

/// The hint that offers a map bundle in place of a scan this server cannot decode.
fn bundle_hint(settings: &Settings) -> String {
    format!(
        "If the map's layout was made elsewhere (another tool, a person), write it as a {BUNDLE_SCHEMA} JSON file (image size, components, legend entries, optional georeference; the format is in geomap_capabilities media.map_bundle_schema), save it in {} and register that: geomap_process_image then returns that layout and knowledge tools can use its georeference.",
        settings.map_roots[0].display()
    )
}

pub(super) fn describe_media(error: &MediaError, settings: &Settings) -> Parts {
    let first_root = settings.map_roots[0].display();
    let supported: Vec<&str> = MediaType::SUPPORTED.iter().map(|t| t.mime()).collect();
    match error {
        MediaError::Unsupported { detected } => {
            let convert = format!(
                "Or convert it to GeoTIFF first, e.g. `gdal_translate -of GTiff -co COMPRESS=DEFLATE input output.tif`, save the result in {first_root} and register that."
            );
            parts(
                ErrorCode::UnsupportedMedia,
                format!("The file is {detected}; this server registers only {}. Register a PNG, JPEG or TIFF scan instead.", supported_list()),
                json!({ "detected": detected, "supported": supported }),
                vec![format!("Register another file of a supported type ({}).", supported_list()), convert, bundle_hint(settings)],
            )
        }
        MediaError::InvalidBundle(problem) => {
            let at = if problem.field.is_empty() { "the file".to_owned() } else { problem.field.clone() };
            parts(
                ErrorCode::UnsupportedMedia,
                format!("The file is JSON but not a valid {BUNDLE_SCHEMA} map bundle: at {at}, {}. Fix it and register it again.", problem.problem),
                json!({ "detected": MediaType::MapBundle.mime(), "reason": "invalid_bundle", "field": problem.field, "problem": problem.problem, "supported": supported }),
                vec![
                    format!("Fix {at} in the bundle ({}) and call geomap_register_map again.", problem.problem),
                    "geomap_capabilities shows the bundle's format under media.map_bundle_schema.".to_owned(),
                ],
            )
        }
        MediaError::NoPixels { action } => parts(
            ErrorCode::UnsupportedMedia,
            format!("This map is a {BUNDLE_SCHEMA} map bundle: it has no pixels to {action}."),
            json!({ "detected": MediaType::MapBundle.mime(), "reason": "no_pixels", "action": action }),
            vec![
                format!(
                    "To georeference a bundle, put geomap_georeference's arguments (without map_id) in its `georeference` field and register it again; that becomes its revision."
                ),
                "Or register the scan itself, if this server takes its type and size.".to_owned(),
            ],
        ),
        MediaError::UnreadableHeader { media_type } => parts(
            ErrorCode::UnsupportedMedia,
            format!("The file starts like {} but its header is damaged or truncated. Register an intact copy of the scan.", media_type.mime()),
            json!({ "detected": media_type.mime(), "reason": "unreadable_header", "supported": supported }),
            vec!["Register an intact copy of the scan (re-export or re-download it).".to_owned()],
        ),
        MediaError::Oversize { limit, bytes, width, height, limits } => {
            describe_oversize(*limit, *bytes, *width, *height, limits.max_bytes, limits.max_pixels, settings)
        }
        MediaError::Io(_) => Parts {
            cause: Some(Cause::Io),
            ..parts(
                ErrorCode::InternalError,
                "Reading the map file failed. Report the trace_id to the operator.".to_owned(),
                json!({}),
                vec!["Report the trace_id to the operator; the log line under it names the failure.".to_owned()],
            )
        },
    }
}

fn describe_oversize(limit: Limit, bytes: u64, width: Option<u64>, height: Option<u64>, max_bytes: u64, max_pixels: u64, settings: &Settings) -> Parts {
    let first_root = settings.map_roots[0].display();
    let (variable, actual, maximum, unit) = match (limit, width.zip(height)) {
        (Limit::Pixels, Some((w, h))) => ("GEOMAP_MAX_IMAGE_PIXELS", w * h, max_pixels, "pixels"),
        _ => ("GEOMAP_MAX_IMAGE_BYTES", bytes, max_bytes, "bytes"),
    };
    // Scaling both sides by p/100 scales pixels (and roughly bytes) by (p/100)^2.
    let percent = ((maximum as f64 / actual as f64).sqrt() * 100.0).floor().clamp(1.0, 99.0) as u64;
    let mut derived = format!(
        "Register a smaller derived file instead: e.g. `gdal_translate -outsize {percent}% {percent}% -co COMPRESS=DEFLATE scan.tif scan_small.tif`, saved in {first_root}"
    );
    if let Some((w, h)) = width.zip(height) {
        let (sw, sh) = (w * percent / 100, h * percent / 100);
        derived.push_str(&format!(" (about {sw}×{sh} = {} pixels)", sw * sh));
    }
    derived.push('.');
    let operator = format!("Or ask the operator to raise {variable} (now {maximum}) to at least {actual} and restart the server.");
    let size = match width.zip(height) {
        Some((w, h)) => format!("{w}×{h} = {} pixels", w * h),
        None => format!("{bytes} bytes"),
    };
    let mut details = json!({ "limit": variable, "limit_value": maximum, "actual": actual, "unit": unit, "bytes": bytes });
    if let Some((w, h)) = width.zip(height) {
        details["width"] = json!(w);
        details["height"] = json!(h);
    }
    let hints = vec![derived.clone(), operator, bundle_hint(settings)];
    parts(ErrorCode::OversizeImage, format!("The image is {size}, over this server's limit {variable}={maximum}. {derived}"), details, hints)
}
