//! Map paths refused or not found: `path_not_allowed`, or `invalid_arguments` for `/path`.

use serde_json::json;

use geomap_model::errors::{Cause, ErrorCode};
use geomap_model::settings::Settings;
use geomap_store::roots::RootsError;

use geomap_model::errors::failure::{Parts, parts};

fn roots_list(settings: &Settings) -> String {
    settings.map_roots.iter().map(|root| root.display().to_string()).collect::<Vec<_>>().join(", ")
}

pub(super) fn describe_path(requested: &str, error: &RootsError, settings: &Settings) -> Parts {
    let first_root = settings.map_roots[0].display();
    let inside = format!("Register a file inside an allowed map root ({}); relative paths resolve against {first_root}.", roots_list(settings));
    let operator = format!(
        "If the file must stay where it is, ask the operator to add its folder to GEOMAP_MAP_ROOTS (now: {}) and restart the server.",
        roots_list(settings)
    );
    let detail = |reason: &str| json!({ "reason": reason, "requested": requested });
    let (code, reason, what, hints) = match error {
        RootsError::NulByte => (ErrorCode::PathNotAllowed, "nul_byte", "The path contains a NUL byte", vec![inside]),
        RootsError::OutsideRoots => (ErrorCode::PathNotAllowed, "outside_roots", "The path is outside every allowed map root", vec![inside, operator]),
        RootsError::EscapesRoot => (
            ErrorCode::PathNotAllowed,
            "escapes_root",
            "The path leads out of its map root through '..' or a symbolic link",
            vec![inside, "Copy the file itself into the map root instead of linking to it.".to_owned()],
        ),
        RootsError::NonUtf8Name => (
            ErrorCode::PathNotAllowed,
            "non_utf8_name",
            "The file's resolved name is not valid UTF-8 and cannot be recorded",
            vec!["Ask the user to rename the file (and its folders) to UTF-8 names, then register it again.".to_owned()],
        ),
        RootsError::Unreadable(_) => (
            ErrorCode::PathNotAllowed,
            "unreadable",
            "The server may not read this file",
            vec![format!("Ask the operator to make the file readable by the user the server runs as. {inside}")],
        ),
        RootsError::NotFound => {
            (ErrorCode::InvalidArguments, "file_not_found", "No file exists at this path", vec![format!("Check the path for typos. {inside}")])
        }
        RootsError::NotAFile => (
            ErrorCode::InvalidArguments,
            "not_a_file",
            "The path names a folder or another non-regular file",
            vec![format!("Give the path of the scan file itself. {inside}")],
        ),
    };
    let mut details = detail(reason);
    if code == ErrorCode::InvalidArguments {
        details["field"] = json!("/path");
    }
    let message = format!("{what}: {requested:?}. {}", hints[0]);
    let mut result = parts(code, message, details, hints);
    if let RootsError::Unreadable(_) = error {
        result.cause = Some(Cause::Io);
    }
    result
}
