//! Asking the user before anything is downloaded: `elicitation/create` in a
//! 2025-11-25 session, an input-required result for a 2026-07-28 request, and
//! nothing for a client without elicitation (the tool's description told the
//! agent to ask). The application asks through [`AskUser`]; this is the MCP
//! edge's way of asking.
//!
//! Invariant: a question asked during the call waits at most
//! `GEOMAP_CONSENT_TIMEOUT`; no answer by then is [`Answer::Unanswered`], and
//! the client is told the request was cancelled.

use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use geomap_app::preparation::{Answer, AskUser, Asked};

/// The key of the consent question in an input-required result and its retry.
pub const CONSENT_KEY: &str = "consent";
/// The yes/no field of the consent form.
const CONFIRM_FIELD: &str = "confirm";

/// How this call can reach the user.
pub enum ConsentChannel {
    /// The client declared no elicitation.
    Unavailable,
    /// A 2025-11-25 session: ask during the call.
    Elicit(Peer<RoleServer>),
    /// A 2026-07-28 request: the retry carries the answer (`None` on the first round).
    InputRequired(Option<Value>),
}

impl ConsentChannel {
    /// The channel of the request `context`, whose retry may carry `input_responses`.
    pub fn of(context: &RequestContext<RoleServer>, input_responses: Option<&rmcp::model::InputResponses>) -> ConsentChannel {
        if context.client_capabilities().and_then(|capabilities| capabilities.elicitation).is_none() {
            return ConsentChannel::Unavailable;
        }
        // Requests of 2026-07-28 and later carry their version; server-initiated requests are not allowed there.
        let stateless = context.protocol_version().is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        match stateless {
            true => ConsentChannel::InputRequired(input_responses.and_then(|responses| responses.get(CONSENT_KEY).cloned())),
            false => ConsentChannel::Elicit(context.peer.clone()),
        }
    }
}

impl AskUser for ConsentChannel {
    async fn ask(self, question: &str, timeout: Duration) -> Asked {
        match self {
            ConsentChannel::Unavailable => Asked::Answer(Answer::NotAsked),
            ConsentChannel::Elicit(peer) => match peer.create_elicitation_with_timeout(form(question), Some(timeout)).await {
                Ok(result) => Asked::Answer(answer_of(&result)),
                Err(ServiceError::Timeout { .. }) => Asked::Answer(Answer::Unanswered),
                Err(_) => Asked::Answer(Answer::Declined), // the question did not reach the user: install nothing
            },
            ConsentChannel::InputRequired(Some(response)) => {
                Asked::Answer(serde_json::from_value::<ElicitResult>(response).map_or(Answer::Declined, |result| answer_of(&result)))
            }
            ConsentChannel::InputRequired(None) => Asked::Pending,
        }
    }
}

/// The one yes/no form that asks `question`.
fn form(question: &str) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_owned(),
        requested_schema: ElicitationSchema::builder()
            .required_bool(CONFIRM_FIELD)
            .description("Confirm to download and install, or decline to install nothing.")
            .build()
            .expect("a one-boolean schema is valid"),
    }
}

/// The input-required result that asks `question` (2026-07-28): the client asks its user and calls again with the answer.
pub fn input_required(question: &str) -> InputRequiredResult {
    let requests = InputRequests::from([(CONSENT_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(form(question))))]);
    InputRequiredResult::new(Some(requests), Some(CONSENT_KEY.to_owned()))
}

fn answer_of(result: &ElicitResult) -> Answer {
    let confirmed = result.action == ElicitationAction::Accept
        && result.content.as_ref().and_then(|content| content.get(CONFIRM_FIELD)).and_then(Value::as_bool).unwrap_or(false);
    if confirmed { Answer::Confirmed } else { Answer::Declined }
}
