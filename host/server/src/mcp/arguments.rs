//! Tool arguments: deserialization that names the offending field.
//!
//! Invariant: a call whose arguments do not fit never reaches a tool; it gets
//! an [`ArgumentError`] with a JSON pointer and what was expected.

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;

/// What is wrong with an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentProblem {
    /// A required field is absent.
    Missing,
    /// A field the tool does not take.
    UnknownField,
    /// A value of the wrong JSON type or out of range.
    WrongValue,
    /// An argument that cannot go with another one.
    Conflict,
}

impl ArgumentProblem {
    /// The wire name in `details.problem`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgumentProblem::Missing => "missing",
            ArgumentProblem::UnknownField => "unknown_field",
            ArgumentProblem::WrongValue => "wrong_value",
            ArgumentProblem::Conflict => "conflict",
        }
    }
}

/// One argument that does not fit the input schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} at {field}: expected {expected}", problem.as_str())]
pub struct ArgumentError {
    /// JSON pointer into the arguments, e.g. `/path`.
    pub field: String,
    /// What is wrong.
    pub problem: ArgumentProblem,
    /// What would be accepted, in words.
    pub expected: String,
}

impl ArgumentError {
    /// A short phrase for messages.
    pub fn problem_text(&self) -> &'static str {
        match self.problem {
            ArgumentProblem::Missing => "a required argument is missing",
            ArgumentProblem::UnknownField => "an argument this tool does not take",
            ArgumentProblem::WrongValue => "a value of the wrong type",
            ArgumentProblem::Conflict => "arguments that cannot go together",
        }
    }
}

/// Deserializes a tool's arguments (absent arguments count as `{}`).
pub fn parse<T: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<T, ArgumentError> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|error| {
        let mut field = geomap_model::json_pointer(&error);
        let message = error.inner().to_string();
        let quoted = |prefix: &str| message.strip_prefix(prefix).and_then(|rest| rest.split('`').next()).map(str::to_owned);
        let expected_text = message.split_once("expected ").map(|(_, e)| e.trim_end_matches('.').to_owned());
        let (problem, expected) = if quoted("missing field `").is_some() {
            (ArgumentProblem::Missing, "a value (this argument is required)".to_owned())
        } else if let Some(name) = quoted("unknown field `") {
            // The path already ends at the unknown field itself.
            if !field.ends_with(&format!("/{name}")) {
                field.push_str(&format!("/{name}"));
            }
            let allowed = expected_text.unwrap_or_else(|| "no fields".to_owned());
            (ArgumentProblem::UnknownField, format!("no such argument; allowed: {}", allowed.replace("one of ", "")))
        } else {
            (ArgumentProblem::WrongValue, expected_text.unwrap_or(message.clone()))
        };
        if field.is_empty() {
            field.push('/');
        }
        ArgumentError { field, problem, expected }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: String,
        points: Option<Vec<u32>>,
    }

    fn error_for(value: serde_json::Value) -> ArgumentError {
        let serde_json::Value::Object(map) = value else { unreachable!() };
        parse::<Args>(Some(map)).unwrap_err()
    }

    #[test]
    fn a_missing_field_is_named_by_pointer() {
        let error = error_for(json!({}));
        assert_eq!((error.field.as_str(), error.problem), ("/path", ArgumentProblem::Missing));
    }

    #[test]
    fn a_wrong_type_names_the_field_and_the_expected_type() {
        let error = error_for(json!({"path": 5}));
        assert_eq!((error.field.as_str(), error.problem, error.expected.as_str()), ("/path", ArgumentProblem::WrongValue, "a string"));
        let nested = error_for(json!({"path": "a", "points": [1, "x"]}));
        assert_eq!(nested.field, "/points/1");
    }

    #[test]
    fn an_unknown_field_is_named_with_the_allowed_ones() {
        let error = error_for(json!({"path": "a", "pth": "b"}));
        assert_eq!((error.field.as_str(), error.problem), ("/pth", ArgumentProblem::UnknownField));
        assert!(error.expected.contains("`path`"), "{}", error.expected);
    }

    #[test]
    fn absent_arguments_count_as_an_empty_object() {
        #[derive(Deserialize)]
        struct Nothing {}
        assert!(parse::<Nothing>(None).is_ok());
    }
}
