//! A long call's progress, for clients that ask for it: when a `tools/call` request carries a
//! progress token, each line the tool writes to stdout while it runs (the `python` tool's
//! `print`s) is sent as `notifications/progress`, its message the line, before the result.

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolcell_runtime::ToolCall;

/// Lines waiting to be sent; a line that finds it full is dropped (it is still in the tool's
/// result when the tool returns its output), so a chatty tool never waits for a slow client.
const QUEUED_LINES: usize = 64;

/// The longest progress token honoured: the token is the client's and is repeated in every
/// notification, so a longer one would multiply what the server writes.
const MAX_TOKEN_BYTES: usize = 256;

/// How long a result waits for its progress to be sent.
const FINISH_SENDING: std::time::Duration = std::time::Duration::from_secs(1);

/// The notifications of one call being sent.
pub(crate) struct Forwarding(JoinHandle<()>);

impl Forwarding {
    /// Waits until every line queued is sent (the result must come after its progress), for
    /// at most a second: a client that reads nothing does not hold the result back.
    pub(crate) async fn finish(self) {
        let mut sending = self.0;
        if tokio::time::timeout(FINISH_SENDING, &mut sending).await.is_err() {
            sending.abort();
        }
    }
}

/// `call`, streaming its stdout to `peer` as progress on `token`, when there is one.
pub(crate) fn stream_stdout(
    call: ToolCall,
    token: Option<ProgressToken>,
    peer: &Peer<RoleServer>,
) -> (ToolCall, Option<Forwarding>) {
    let Some(token) = token.filter(fits) else { return (call, None) };
    let (lines, mut queued) = mpsc::channel::<String>(QUEUED_LINES);
    let call = call.on_stdout_line(move |line| {
        let _ = lines.try_send(line.to_owned());
    });
    let peer = peer.clone();
    let forwarding = tokio::spawn(async move {
        let mut progress = 0.0;
        while let Some(line) = queued.recv().await {
            progress += 1.0;
            let notification = ProgressNotificationParam::new(token.clone(), progress).with_message(line);
            if peer.notify_progress(notification).await.is_err() {
                return;
            }
        }
    });
    (call, Some(Forwarding(forwarding)))
}

/// Whether a progress token is short enough to repeat in every notification.
fn fits(token: &ProgressToken) -> bool {
    serde_json::to_string(token).is_ok_and(|text| text.len() <= MAX_TOKEN_BYTES)
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    #[test]
    fn only_a_short_token_is_honoured() {
        assert!(fits(&ProgressToken(NumberOrString::Number(7))));
        assert!(fits(&ProgressToken(NumberOrString::String("p-1".into()))));
        assert!(!fits(&ProgressToken(NumberOrString::String("x".repeat(MAX_TOKEN_BYTES).into()))));
    }
}
