//! Sessions, bounded: at most so many at once in total and per client, each ended after a
//! while without a request, and at most one event stream (`GET /mcp`) each.
//!
//! rmcp's [`LocalSessionManager`] keeps every session it is asked for, for five minutes of
//! idleness: 3,000 sessions opened in under 3 s cost about 63 KiB each. [`Sessions`] wraps it
//! and counts a session from its creation to its end (close, idle timeout, or its worker
//! ending). The session manager does not see the HTTP request, so [`admit`] lends it the
//! client's address for the request, and turns what the manager refused into a response
//! that says what happened and what to do.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage, SessionId, SessionManager};
use serde_json::json;

use crate::oauth::Caller;
use crate::peers::{Counts, Full, Peer, Place};

tokio::task_local! {
    /// The request being served: its client, and what the session manager refused it.
    static ADMISSION: Arc<Admission>;
}

#[derive(Debug)]
struct Admission {
    peer: Peer,
    /// With OAuth, the request's caller ([`Caller::key`]); 0 without.
    caller: u64,
    refused: Mutex<Option<Refusal>>,
}

/// What a request was refused, and why.
#[derive(Debug, Clone, Copy, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("this server has {0} open sessions, its limit")]
    Total(usize),
    #[error("this client already has {limit} open sessions, its limit")]
    Peer { limit: usize, idle: Duration },
    #[error("this session already has an open event stream")]
    StreamOpen,
}

impl Refusal {
    fn response(self) -> Response {
        let (status, message) = match self {
            Self::Total(limit) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "this server has {limit} open sessions, its limit: close sessions you no longer use (DELETE /mcp \
                     with their Mcp-Session-Id header) and retry, or ask the operator to raise --max-sessions"
                ),
            ),
            Self::Peer { limit, idle } => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "your address already has {limit} open sessions, the most one client may hold: reuse one, or close \
                     those you no longer use (DELETE /mcp with their Mcp-Session-Id header) and retry; a session also \
                     ends after {}s without a request. Or ask the operator to raise --max-sessions-per-client",
                    idle.as_secs()
                ),
            ),
            Self::StreamOpen => (
                StatusCode::CONFLICT,
                "this session already has an open event stream (GET /mcp): keep using it, or close it before opening \
                 another"
                    .to_owned(),
            ),
        };
        let mut response = (status, axum::Json(json!({ "error": message }))).into_response();
        if status != StatusCode::CONFLICT {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }
}

/// Lends the session manager the client's address for this request, and answers what it
/// refused.
pub(crate) async fn admit(request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<Peer>().copied().unwrap_or(Peer::UNKNOWN);
    let caller = Caller::key(request.extensions().get::<Caller>());
    let admission = Arc::new(Admission { peer, caller, refused: Mutex::new(None) });
    let response = ADMISSION.scope(admission.clone(), next.run(request)).await;
    let refused = lock(&admission.refused).take();
    match refused {
        Some(refusal) => refusal.response(),
        None => response,
    }
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    #[error("{0}")]
    Refused(Refusal),
}

/// rmcp's [`LocalSessionManager`], with caps on sessions and their event streams.
#[derive(Debug)]
pub(crate) struct Sessions {
    local: LocalSessionManager,
    counts: Arc<Counts>,
    idle: Duration,
    /// Each session's place in the counts, and the caller that opened it (bound to it: another
    /// caller's requests with its id find no session).
    places: Mutex<HashMap<SessionId, (Place, u64)>>,
    streams: Arc<Mutex<HashSet<SessionId>>>,
}

impl Sessions {
    pub(crate) fn new(max_sessions: usize, max_sessions_per_client: usize, idle: Duration) -> Self {
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(idle);
        Self {
            local,
            counts: Counts::new(max_sessions, max_sessions_per_client),
            idle,
            places: Mutex::default(),
            streams: Arc::default(),
        }
    }

    /// Whether the request being served may use session `id`: it opened it (the same OAuth
    /// caller, or none on both sides). rmcp's own calls, outside a request, may.
    fn opened_by_requester(&self, id: &SessionId) -> bool {
        let Ok(caller) = ADMISSION.try_with(|admission| admission.caller) else { return true };
        lock(&self.places).get(id).is_none_or(|(_, opener)| *opener == caller)
    }

    /// The count of open sessions.
    pub(crate) fn counts(&self) -> Arc<Counts> {
        self.counts.clone()
    }

    /// Records the refusal for [`admit`] to answer, and returns it as an error for rmcp.
    fn refuse(&self, refusal: Refusal) -> SessionsError {
        let _ = ADMISSION.try_with(|admission| *lock(&admission.refused) = Some(refusal));
        SessionsError::Refused(refusal)
    }

    /// Marks the session's event stream open, unless it is already.
    fn open_stream(&self, id: &SessionId) -> Result<OpenStream, SessionsError> {
        if !lock(&self.streams).insert(id.clone()) {
            return Err(self.refuse(Refusal::StreamOpen));
        }
        Ok(OpenStream { streams: self.streams.clone(), id: id.clone() })
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let peer = ADMISSION.try_with(|admission| admission.peer).unwrap_or(Peer::UNKNOWN);
        let place = self.counts.take(peer).map_err(|full| {
            tracing::debug!(%peer, ?full, "refusing a session");
            self.refuse(match full {
                Full::Total(limit) => Refusal::Total(limit),
                Full::Peer(limit) => Refusal::Peer { limit, idle: self.idle },
            })
        })?;
        let (id, transport) = self.local.create_session().await?;
        let caller = ADMISSION.try_with(|admission| admission.caller).unwrap_or(0);
        lock(&self.places).insert(id.clone(), (place, caller));
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.opened_by_requester(id) && self.local.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if !self.opened_by_requester(id) {
            return Err(LocalSessionManagerError::SessionNotFound(id.clone()).into());
        }
        let place = lock(&self.places).remove(id);
        drop(place);
        Ok(self.local.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.local.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let open = self.open_stream(id)?;
        let stream = self.local.create_standalone_stream(id).await?;
        Ok(Tracked { stream: Box::pin(stream), _open: Some(open) })
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // An event id without a request part (`<index>`, not `<index>/<request>`) resumes the
        // session's standalone stream: a second one, if the first is still open.
        let open = if last_event_id.contains('/') { None } else { Some(self.open_stream(id)?) };
        let stream = self.local.resume(id, last_event_id).await?;
        Ok(Tracked { stream: Box::pin(stream), _open: open })
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

/// A session's open event stream; dropping it (the client went away, or the session
/// ended) lets the session open another.
#[derive(Debug)]
struct OpenStream {
    streams: Arc<Mutex<HashSet<SessionId>>>,
    id: SessionId,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        lock(&self.streams).remove(&self.id);
    }
}

/// An event stream that holds its [`OpenStream`] for as long as it lives.
struct Tracked<S> {
    stream: Pin<Box<S>>,
    _open: Option<OpenStream>,
}

impl<S: Stream> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.stream.as_mut().poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.stream.size_hint()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
