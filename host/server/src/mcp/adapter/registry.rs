//! Registry failures: `registry_corrupt` (the operator moves the file aside) or `internal_error`.

use std::time::SystemTime;

use serde_json::json;

use geomap_model::errors::{Cause, ErrorCode};
use geomap_store::registry::{CorruptProblem, RegistryError, recovery_command};

use geomap_model::errors::failure::{Parts, parts};

pub(super) fn describe_registry(error: &RegistryError) -> Parts {
    match error {
        RegistryError::Corrupt { path, problem } => {
            let cause = match problem {
                CorruptProblem::InvalidJson(_) => Cause::InvalidJson,
                CorruptProblem::UnknownSchema(_) => Cause::UnknownSchemaVersion,
                CorruptProblem::NotADatabase(_) | CorruptProblem::Truncated { .. } | CorruptProblem::Malformed(_) => Cause::Database,
            };
            let fix = format!(
                "Operator: stop every server on this data root, move the damaged registry aside (`{}`) and start again; then restore a backup with `stratigraphic-amenity registry import FILE`, or register the maps again.",
                recovery_command(path, SystemTime::now())
            );
            Parts {
                cause: Some(cause),
                ..parts(
                    ErrorCode::RegistryCorrupt,
                    format!("The server's registry cannot be read, so nothing can be registered or looked up. {fix}"),
                    json!({ "reason": problem.reason() }),
                    vec![fix, "Tell the operator the trace_id; the server never repairs the file by itself.".to_owned()],
                )
            }
        }
        RegistryError::Io { action, .. } | RegistryError::Database { action, .. } => Parts {
            cause: Some(if matches!(error, RegistryError::Io { .. }) { Cause::Io } else { Cause::Database }),
            ..parts(
                ErrorCode::InternalError,
                format!("The server could not {action} its registry. Report the trace_id to the operator."),
                json!({ "action": action }),
                vec!["Operator: check free space and write permission on GEOMAP_DATA_ROOT; the log line under the trace_id names the failure.".to_owned()],
            )
        },
        RegistryError::NotEmpty { maps, .. } => parts(
            ErrorCode::InternalError,
            format!("The registry already holds {maps} maps; a registry document is imported only into an empty data root."),
            json!({ "maps": maps }),
            vec!["Operator: import into a new GEOMAP_DATA_ROOT.".to_owned()],
        ),
    }
}
