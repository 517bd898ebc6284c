//! Registry failures: `registry_corrupt` (the operator moves the file aside) or `internal_error`.

use serde_json::json;

use crate::errors::{Cause, ErrorCode};
use crate::registry::{CorruptProblem, RegistryError};

use super::{Parts, parts};

pub(super) fn describe_registry(error: &RegistryError) -> Parts {
    match error {
        RegistryError::Corrupt { path, problem } => {
            let (reason, extra) = match problem {
                CorruptProblem::InvalidJson(_) => ("invalid_json", Cause::InvalidJson),
                CorruptProblem::UnknownSchema(_) => ("unknown_schema_version", Cause::UnknownSchemaVersion),
            };
            let fix = format!(
                "Operator: stop the server, move the registry aside (`mv {0} {0}.corrupt`) and start it again; maps registered before must then be registered again.",
                path.display()
            );
            Parts {
                cause: Some(extra),
                ..parts(
                    ErrorCode::RegistryCorrupt,
                    format!("The server's registry file cannot be read, so nothing can be registered or looked up. {fix}"),
                    json!({ "reason": reason }),
                    vec![fix, "Tell the operator the trace_id; the server never repairs the file by itself.".to_owned()],
                )
            }
        }
        RegistryError::Io { action, .. } => Parts {
            cause: Some(Cause::Io),
            ..parts(
                ErrorCode::InternalError,
                format!("The server could not {action} its registry. Report the trace_id to the operator."),
                json!({ "action": action }),
                vec!["Operator: check free space and write permission on GEOMAP_DATA_ROOT; the log line under the trace_id names the failure.".to_owned()],
            )
        },
    }
}
