//! Code mode's approvals over MCP (revision 2026-07-28): a program that pauses at a call
//! waiting for a person is answered with an `input_required` result, whose `requestState` is
//! the runtime's resume token and whose one input request asks the user, by elicitation,
//! whether to run the call. The client retries the call with the answer and the token; any
//! replica with the same resume key resumes the program (nothing stayed in memory).

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use toolcell_runtime::code_mode::Decision;
use toolcell_runtime::{CallError, ToolOutput};

/// The key of the input request that asks for approval.
pub(crate) const APPROVAL_INPUT: &str = "approval";

/// A retried `execute` call carrying a paused program's token.
pub(crate) struct Resuming {
    pub(crate) token: String,
    /// The user's answer, when the retry carries one.
    pub(crate) decision: Option<Decision>,
}

/// The paused program a retried call resumes, if it carries a token.
pub(crate) fn resuming(request: &CallToolRequestParams) -> Option<Resuming> {
    let token = request.request_state.clone()?;
    let answer = request.input_responses.as_ref().and_then(|responses| responses.get(APPROVAL_INPUT));
    Some(Resuming { token, decision: answer.map(decision) })
}

/// An elicitation's answer as a decision: approved only when the user accepted and said yes.
fn decision(answer: &Value) -> Decision {
    let accepted = answer.get("action").and_then(Value::as_str) == Some("accept");
    let approved = answer.pointer("/content/approve").and_then(Value::as_bool) == Some(true);
    if accepted && approved { Decision::Approved } else { Decision::Denied }
}

/// The `input_required` result asking to approve a paused program's call, when the output is
/// such a pause and the client can be asked (2026-07-28, with elicitation).
pub(crate) fn ask_for_approval(
    output: &ToolOutput,
    context: &RequestContext<RoleServer>,
) -> Option<InputRequiredResult> {
    let Some(CallError::ApprovalRequired { tool, arguments, resume_token }) = &output.error else { return None };
    let can_ask = context.protocol_version() == Some(ProtocolVersion::V_2026_07_28)
        && context.client_capabilities().is_some_and(|capabilities| capabilities.elicitation.is_some());
    let message = format!("A program wants to call `{tool}` with {arguments}. Allow this call?");
    (can_ask && !resume_token.is_empty()).then(|| ask(&message, resume_token))
}

/// Asks the user again, when a retry carried the token but no answer.
pub(crate) fn ask_again(token: &str) -> InputRequiredResult {
    ask("A program waits for your approval of the call it paused at. Allow that call?", token)
}

/// Asks the user `message` (whether a paused program may make its call); `token` resumes it.
fn ask(message: &str, token: &str) -> InputRequiredResult {
    let request = json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"approve": {"type": "boolean", "title": "Allow the call"}},
                "required": ["approve"],
            },
        },
    });
    let mut requests = InputRequests::new();
    // Written by hand above: it is always an elicitation request.
    if let Ok(request) = serde_json::from_value::<InputRequest>(request) {
        requests.insert(APPROVAL_INPUT.to_owned(), request);
    }
    InputRequiredResult::new(Some(requests), Some(token.to_owned()))
}
