//! Registry failures: `registry_corrupt` (the operator moves the file aside, or points the servers at
//! a new database) or `internal_error`.

use std::time::SystemTime;

use serde_json::json;

use geomap_model::errors::{Cause, ErrorCode};
use geomap_store::registry::{CorruptProblem, Location, RegistryError, recovery_step};

use geomap_model::errors::failure::{Parts, parts};

pub(super) fn describe_registry(error: &RegistryError) -> Parts {
    match error {
        RegistryError::Corrupt { location, problem } => {
            let cause = match problem {
                CorruptProblem::InvalidJson(_) => Cause::InvalidJson,
                CorruptProblem::UnknownSchema(_) => Cause::UnknownSchemaVersion,
                CorruptProblem::NotADatabase(_) | CorruptProblem::Truncated { .. } | CorruptProblem::Malformed(_) | CorruptProblem::Foreign(_) => {
                    Cause::Database
                }
            };
            let fix = format!(
                "Operator: {}; then restore a backup with `stratigraphic-amenity registry import FILE`, or register the maps again.",
                recovery_step(location, SystemTime::now())
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
        RegistryError::Io { action, .. } | RegistryError::Database { action, .. } => {
            let check = match error {
                RegistryError::Database { location: Location::Database(_), .. } => {
                    "Operator: check that the registry's PostgreSQL server (GEOMAP_REGISTRY_URL) is up and that this server's role may write to it"
                }
                _ => "Operator: check free space and write permission on GEOMAP_DATA_ROOT",
            };
            Parts {
                cause: Some(if matches!(error, RegistryError::Io { .. }) { Cause::Io } else { Cause::Database }),
                ..parts(
                    ErrorCode::InternalError,
                    format!("The server could not {action} its registry. Report the trace_id to the operator."),
                    json!({ "action": action }),
                    vec![format!("{check}; the log line under the trace_id names the failure.")],
                )
            }
        }
        RegistryError::Settings { .. } => parts(
            ErrorCode::InternalError,
            "The server's registry settings do not say how to reach its database. Report the trace_id to the operator.".to_owned(),
            json!({}),
            vec!["Operator: `stratigraphic-amenity check` names what is wrong with GEOMAP_REGISTRY_URL or the PG* variables.".to_owned()],
        ),
        RegistryError::NotEmpty { maps, .. } => parts(
            ErrorCode::InternalError,
            format!("The registry already holds {maps} maps; a registry document is imported only into an empty data root."),
            json!({ "maps": maps }),
            vec!["Operator: import into a new GEOMAP_DATA_ROOT.".to_owned()],
        ),
    }
}
