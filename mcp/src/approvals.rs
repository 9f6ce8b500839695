//! Code mode's approvals over MCP. A program that pauses at a call waiting for a person:
//!
//! - revision 2026-07-28: is answered with an `input_required` result, whose `requestState` is
//!   the runtime's resume token and whose one input request asks the user, by elicitation,
//!   whether to run the call. The client retries the call with the answer and the token; any
//!   replica with the same resume key resumes the program (nothing stayed in memory).
//! - earlier revisions: the server asks the client (`elicitation/create`) during the call, and
//!   resumes the program at once with the answer, as many times as it pauses.
//!
//! - a task's client (the Tasks extension): the task waits in `input_required` with the same
//!   question, and resumes the program with the answer its client sends (`tasks/update`).
//!
//! A client that cannot be asked gets the pause as a failed result naming the call.

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequestParams, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolcell_runtime::code_mode::{CodeMode, Decision};
use toolcell_runtime::{CallError, ToolOutput};

use crate::tasks::TaskInput;

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
/// `seal` binds the token to its caller (see the handler's `seal`).
pub(crate) fn ask_for_approval(
    output: &ToolOutput,
    context: &RequestContext<RoleServer>,
    seal: impl Fn(&str) -> String,
) -> Option<InputRequiredResult> {
    let Some(CallError::ApprovalRequired { tool, arguments, resume_token }) = &output.error else { return None };
    let can_ask = context.protocol_version() == Some(ProtocolVersion::V_2026_07_28) && can_elicit(context);
    (can_ask && !resume_token.is_empty()).then(|| ask(&question(tool, arguments), &seal(resume_token)))
}

/// The most times one `execute` asks its client to approve a call.
const MAX_ASKED: usize = 64;

/// Who is asked to approve the calls a program pauses at, while the call waits.
pub(crate) enum Asker<'a> {
    /// A client of a revision before 2026-07-28 that declared elicitation:
    /// `elicitation/create` during the call.
    Peer(&'a RequestContext<RoleServer>),
    /// The client of a task (that declared elicitation): `input_required` in `tasks/get`,
    /// answered by `tasks/update`.
    Task(&'a TaskInput),
    /// Nobody: the pause is the call's result.
    Nobody,
}

impl<'a> Asker<'a> {
    /// Who asks for the call of `context`, when it is not a task.
    pub(crate) fn for_request(context: &'a RequestContext<RoleServer>) -> Self {
        let can_ask = context.protocol_version().is_some_and(|version| version != ProtocolVersion::V_2026_07_28)
            && can_elicit(context);
        if can_ask { Self::Peer(context) } else { Self::Nobody }
    }

    /// The answer to `question`; `None` when nobody answers (an error, a cancelled task).
    async fn ask(&self, question: &str) -> Result<Option<Value>, ErrorData> {
        match self {
            Self::Peer(context) => {
                let Ok(params) = serde_json::from_value::<ElicitRequestParams>(form(question)) else { return Ok(None) };
                tokio::select! {
                    answer = context.peer.create_elicitation(params) => {
                        Ok(answer.ok().and_then(|answer| serde_json::to_value(answer).ok()))
                    }
                    () = context.ct.cancelled() => Err(ErrorData::internal_error("the call was cancelled", None)),
                }
            }
            Self::Task(input) => Ok(match elicitation(question) {
                Some(request) => input.ask(request).await,
                None => None,
            }),
            Self::Nobody => Ok(None),
        }
    }
}

/// Whether the request's client declared it can be asked for input (elicitation).
pub(crate) fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|capabilities| capabilities.elicitation.is_some())
}

/// Asks `asker` to approve each call the program pauses at, resuming it with each answer;
/// the program's output in the end. When nobody answers, the pause is the output.
///
/// # Errors
/// When a resume fails (the token expired, or the program diverged), or the call is cancelled.
pub(crate) async fn ask_while_paused(
    mut output: ToolOutput,
    code_mode: &CodeMode,
    call_id: &str,
    asker: &Asker<'_>,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ErrorData> {
    for _ in 0..MAX_ASKED {
        let Some(CallError::ApprovalRequired { tool, arguments, resume_token }) = &output.error else { break };
        if resume_token.is_empty() {
            break;
        }
        let Some(answer) = asker.ask(&question(tool, arguments)).await? else { break };
        output = code_mode
            .resume(call_id, resume_token, decision(&answer), Some(cancel))
            .await
            .map_err(|err| ErrorData::invalid_params(err.to_string(), None))?;
    }
    Ok(output)
}

/// What the user is asked about a paused program's call.
fn question(tool: &str, arguments: &str) -> String {
    format!("A program wants to call `{tool}` with {arguments}. Allow this call?")
}

/// An elicitation form asking `message`, with one boolean, `approve`.
fn form(message: &str) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {"approve": {"type": "boolean", "title": "Allow the call"}},
            "required": ["approve"],
        },
    })
}

/// Asks the user again, when a retry carried the token but no answer.
pub(crate) fn ask_again(token: &str) -> InputRequiredResult {
    ask("A program waits for your approval of the call it paused at. Allow that call?", token)
}

/// Asks the user `message` (whether a paused program may make its call); `token` resumes it.
fn ask(message: &str, token: &str) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    if let Some(request) = elicitation(message) {
        requests.insert(APPROVAL_INPUT.to_owned(), request);
    }
    InputRequiredResult::new(Some(requests), Some(token.to_owned()))
}

/// The input request (an elicitation form) asking `message`. Written by hand in [`form`]: it
/// is always one.
fn elicitation(message: &str) -> Option<InputRequest> {
    serde_json::from_value(json!({"method": "elicitation/create", "params": form(message)})).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only an accepted form saying yes approves: a decline, a cancel, a no, or an answer in
    /// another shape denies.
    #[test]
    fn only_an_explicit_yes_approves() {
        let cases = [
            (json!({"action": "accept", "content": {"approve": true}}), Decision::Approved),
            (json!({"action": "accept", "content": {"approve": false}}), Decision::Denied),
            (json!({"action": "accept", "content": {"approve": "yes"}}), Decision::Denied),
            (json!({"action": "accept"}), Decision::Denied),
            (json!({"action": "decline", "content": {"approve": true}}), Decision::Denied),
            (json!({"action": "cancel"}), Decision::Denied),
            (json!("approve"), Decision::Denied),
        ];
        for (answer, expected) in cases {
            assert_eq!(decision(&answer), expected, "{answer}");
        }
        assert!(serde_json::from_value::<ElicitRequestParams>(form("Allow?")).is_ok(), "the form is an elicitation");
    }
}
