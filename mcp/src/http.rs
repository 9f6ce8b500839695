//! Streamable HTTP: `/mcp` (the SDKs' convention), `/metrics` (Prometheus) and `/healthz`, on
//! loopback by default. Off loopback a bearer token (a static one, or OAuth access tokens:
//! `oauth`) is required, for `/metrics` as for `/mcp`.
//! Foreign `Origin`s and, on loopback, foreign `Host`s are refused (DNS rebinding), bodies are
//! size-limited, and shutdown lets calls in flight finish.
//!
//! What a client can hold before it is authenticated or while it idles is bounded too:
//! connections (in total and per client, each with a header-read timeout and a bounded
//! buffer: `conn`), sessions (in total and per client, with a short idle life, one event
//! stream each: `sessions`) and the request bytes buffered at once (`body`).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::ServeError;
use crate::catalog::Catalog;
use crate::code_mode::CodeModeServing;
use crate::context::ContextHeader;
use crate::convert::Schemas;
use crate::handler::ToolServer;
use crate::hangup::HangUps;
use crate::oauth::{Caller, OAuth, Refusal, Verifier};
use crate::peers::Counts;
use crate::prometheus::{Scrape, ServerGauges};
use crate::sessions::Sessions;
use crate::tasks::{TaskLimits, Tasks};
use crate::{body, conn, origin, prometheus, sessions};
use toolcell_runtime::formats::Deferral;

/// The MCP endpoint's service.
pub(crate) type Mcp = StreamableHttpService<ToolServer, Sessions>;

/// Where and how to serve over HTTP.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to listen on. Default: `127.0.0.1:8000`.
    pub listen: SocketAddr,
    /// The bearer token clients must send, to `/mcp` and to `/metrics`. Off loopback, this or
    /// [`HttpOptions::oauth`] is required.
    pub token: Option<String>,
    /// OAuth access tokens in place of the static token: the server is a resource server of
    /// this issuer's, each token's scopes granting the tools its bearer sees and calls.
    pub oauth: Option<OAuth>,
    /// Browser origins allowed besides the loopback ones (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// Request headers copied into each call's host context.
    pub context_headers: Vec<ContextHeader>,
    /// The schemas `tools/list` shows. Default: [`Schemas::Standard`].
    pub schemas: Schemas,
    /// Whether to serve code mode's `search` and `execute`. Default: [`CodeModeServing::Off`].
    pub code_mode: CodeModeServing,
    /// The tools `tools/list` marks `toolcell/deferLoading`. Default: none.
    pub deferred: Deferral,
    /// Keep no session state on the server, for any protocol revision: any replica can
    /// serve any request. Revision 2026-07-28 is always served this way. Clients of older
    /// revisions then get no `notifications/tools/list_changed`.
    pub stateless: bool,
    /// How calls become tasks for clients that accept them (MCP's Tasks extension); `None`
    /// offers no tasks. Tasks live in this process: with several replicas, `tasks/*` must
    /// reach the one that created the task. Default: [`TaskLimits::default`].
    pub tasks: Option<TaskLimits>,
    /// The largest request body accepted. Default: 4 MiB.
    pub max_body_bytes: usize,
    /// How long shutdown waits for calls in flight before it stops them. Default: 10 s.
    pub shutdown_grace: Duration,
    /// On shutdown, how long to keep serving while `/healthz` answers `503` (draining), so that
    /// a load balancer stops sending requests before the server stops accepting them (else a
    /// request it sends meanwhile can be lost). Set it above the balancer's health-check
    /// interval. Default: none.
    pub drain_delay: Duration,
    /// Connections open at once; past it a new connection gets 503 and is closed. At most half
    /// the open-files limit (the soft `RLIMIT_NOFILE`; see [`raise_open_files_limit`]), so
    /// that the tools' files and the rest of the server keep the other half. Default: 1024.
    ///
    /// [`raise_open_files_limit`]: crate::raise_open_files_limit
    pub max_connections: usize,
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold open; past it a new one
    /// gets 429 and is closed. Behind a reverse proxy every client is the proxy: raise it to
    /// `max_connections`. Default: 256.
    pub max_connections_per_client: usize,
    /// How long a client may take to send a request's headers, and how long a kept-alive
    /// connection may sit idle between requests; then it is closed. Default: 10 s.
    pub header_read_timeout: Duration,
    /// The largest request head (request line and headers) accepted: the connection's read
    /// buffer. A larger head gets 431. Default: 32 KiB (at least 8 KiB).
    pub max_header_bytes: usize,
    /// Sessions open at once; past it `initialize` gets 503. Default: 1024.
    pub max_sessions: usize,
    /// Sessions one client may hold open; past it `initialize` gets 429. Default: 256.
    pub max_sessions_per_client: usize,
    /// How long a session lives without a request before it ends (its client then gets 404
    /// and starts a new one). Default: 2 minutes.
    pub session_idle_timeout: Duration,
    /// Request-body bytes being received at once, over all requests; past it a request gets
    /// 503 and `Retry-After` instead of being buffered. The first 16 KiB of each body are not
    /// counted. `None`: four times `max_body_bytes`. Never less than one largest body.
    pub max_buffered_body_bytes: Option<usize>,
    /// How long a request's body may take to arrive once its headers have; then it gets 408.
    /// Default: 30 s.
    pub body_read_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8000)),
            token: None,
            oauth: None,
            allowed_origins: Vec::new(),
            context_headers: Vec::new(),
            schemas: Schemas::Standard,
            code_mode: CodeModeServing::Off,
            deferred: Deferral::None,
            stateless: false,
            tasks: Some(TaskLimits::default()),
            max_body_bytes: 4 << 20,
            shutdown_grace: Duration::from_secs(10),
            drain_delay: Duration::ZERO,
            max_connections: 1024,
            max_connections_per_client: 256,
            header_read_timeout: Duration::from_secs(10),
            max_header_bytes: 32 << 10,
            max_sessions: 1024,
            max_sessions_per_client: 256,
            session_idle_timeout: Duration::from_secs(120),
            max_buffered_body_bytes: None,
            body_read_timeout: Duration::from_secs(30),
        }
    }
}

/// The shortest bearer token accepted.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Origins a page served from this machine has; everything else is refused.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Serves the catalog over streamable HTTP until `shutdown` completes, then lets calls in
/// flight finish (for at most [`HttpOptions::shutdown_grace`]) and returns.
///
/// # Errors
/// When the address is not loopback and no token is set, or it cannot be bound.
pub async fn serve_http(
    catalog: Arc<Catalog>,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let listener = bind(&options).await?;
    let address = listener.local_addr().map_err(|source| ServeError::Bind { address: options.listen, source })?;
    tracing::info!(%address, "serving MCP over HTTP at http://{address}/mcp");
    serve_on(listener, catalog, options, shutdown).await
}

/// Serves on a listener already bound (tests bind port 0 and read the address).
///
/// # Errors
/// When the listener is not on loopback and no token is set.
pub async fn serve_on(
    listener: TcpListener,
    catalog: Arc<Catalog>,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let address = listener.local_addr().map_err(|source| ServeError::Bind { address: options.listen, source })?;
    check_token(&options, address)?;
    let gate = match options.oauth.clone() {
        Some(oauth) => Gate::OAuth(Verifier::new(oauth).map_err(ServeError::OAuth)?),
        None => options.token.as_deref().map_or(Gate::Open, |token| Gate::Token(Arc::from(token))),
    };
    let limits = conn::Limits {
        max_connections: conn::within_open_files(options.max_connections.max(1)),
        max_connections_per_client: options.max_connections_per_client.max(1),
        header_read_timeout: options.header_read_timeout,
        max_header_bytes: options.max_header_bytes,
    };
    let connections = conn::counts(&limits);
    let sessions_ended = CancellationToken::new();
    let draining = Arc::new(AtomicBool::new(false));
    let router =
        router(catalog.clone(), &options, gate, address, connections.clone(), sessions_ended.clone(), draining.clone());

    let stopping = CancellationToken::new();
    let stop = stopping.clone();
    let drain_delay = options.drain_delay;
    tokio::spawn(async move {
        shutdown.await;
        if !drain_delay.is_zero() {
            // Still serving, but unhealthy: balancers take the server out before it stops.
            tracing::info!(?drain_delay, "shutting down: draining (/healthz answers 503) before closing");
            draining.store(true, Ordering::Relaxed);
            tokio::time::sleep(drain_delay).await;
        }
        stop.cancel();
    });
    let drained = {
        let stopping = stopping.clone();
        let grace = options.shutdown_grace;
        tokio::spawn(async move {
            stopping.cancelled().await;
            tracing::info!("shutting down: no new connections; letting calls in flight finish");
            drain(&catalog, grace).await;
            // Ends sessions and their event streams, so the last connections close.
            sessions_ended.cancel();
        })
    };
    let serving = conn::serve(listener, router, limits, connections, stopping.clone());
    // Connections that outlive the calls (a client that keeps a stream open) get a little
    // longer, then the server returns regardless.
    let bounded = async {
        stopping.cancelled().await;
        tokio::time::sleep(options.shutdown_grace + Duration::from_secs(1)).await;
    };
    tokio::select! {
        () = serving => {}
        () = bounded => tracing::warn!("shutdown: connections still open after the grace period; closing them"),
    }
    drained.abort();
    Ok(())
}

/// Binds [`HttpOptions::listen`], refusing an address off loopback without a token.
///
/// # Errors
/// Without a token (or OAuth) off loopback, with a weak token, with OAuth settings that
/// cannot work, or when the address cannot be bound.
pub async fn bind(options: &HttpOptions) -> Result<TcpListener, ServeError> {
    check_token(options, options.listen)?;
    if let Some(oauth) = &options.oauth {
        // Unusable settings stop the server before it listens.
        Verifier::new(oauth.clone()).map_err(ServeError::OAuth)?;
    }
    TcpListener::bind(options.listen).await.map_err(|source| ServeError::Bind { address: options.listen, source })
}

fn check_token(options: &HttpOptions, address: SocketAddr) -> Result<(), ServeError> {
    if options.oauth.is_some() {
        return match options.token {
            Some(_) => Err(ServeError::TokenAndOAuth),
            None => Ok(()),
        };
    }
    match &options.token {
        None if !address.ip().is_loopback() => Err(ServeError::TokenRequired { address }),
        Some(token) if token.chars().count() < MIN_TOKEN_CHARS => {
            Err(ServeError::WeakToken { chars: token.chars().count() })
        }
        _ => Ok(()),
    }
}

fn router(
    catalog: Arc<Catalog>,
    options: &HttpOptions,
    gate: Gate,
    address: SocketAddr,
    connections: Arc<Counts>,
    sessions_ended: CancellationToken,
    draining: Arc<AtomicBool>,
) -> Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(sessions_ended)
        .with_allowed_origins(
            LOOPBACK_ORIGINS.iter().map(|origin| (*origin).to_owned()).chain(options.allowed_origins.iter().cloned()),
        )
        .enforce_origin_validation();
    if !address.ip().is_loopback() {
        // Clients reach a public server by names the server cannot know; the token (which a
        // rebinding page cannot send) protects it instead of the Host check.
        config = config.disable_allowed_hosts();
    }
    let headers: Arc<[ContextHeader]> = options.context_headers.clone().into();
    let (schemas, code_mode, deferred) = (options.schemas, options.code_mode, options.deferred.clone());
    let tasks = options.tasks.map(|limits| Arc::new(Tasks::new(limits)));
    let health = catalog.clone();
    let sessions = Sessions::new(
        options.max_sessions.max(1),
        options.max_sessions_per_client.max(1),
        options.session_idle_timeout,
    );
    let gauges = Gauges { catalog: catalog.clone(), connections, sessions: sessions.counts() };
    let metrics = metrics_route(gauges, options, address);
    let verifier = match &gate {
        Gate::OAuth(verifier) => Some(verifier.clone()),
        _ => None,
    };
    let server_verifier = verifier.clone();
    let mcp: Mcp = StreamableHttpService::new(
        move || {
            Ok(ToolServer::new(catalog.clone(), headers.clone())
                .with_schemas(schemas)
                .with_code_mode(code_mode)
                .with_deferral(deferred.clone())
                .with_tasks(tasks.clone())
                .with_oauth(server_verifier.clone()))
        },
        Arc::new(sessions),
        config,
    );
    let hang_ups = HangUps { mcp: mcp.clone(), max_body_bytes: options.max_body_bytes };
    let budget = body::Budget::new(
        options.max_buffered_body_bytes.unwrap_or(options.max_body_bytes.saturating_mul(4)),
        options.max_body_bytes,
        options.body_read_timeout,
    );
    // The last layer added runs first: the token, then the body, then the rest. The token
    // covers `/metrics` too, before anything else (an unknown method included). A call of a
    // tool the token's scopes do not grant is refused once its body is in, before rmcp.
    let router = Router::new()
        .route_service("/mcp", mcp)
        .route_layer(middleware::from_fn_with_state(hang_ups, crate::hangup::cancel_on_hang_up))
        .route_layer(middleware::from_fn(sessions::admit))
        .route_layer(middleware::from_fn(session_closed_is_no_content))
        .route_layer(middleware::from_fn_with_state(verifier.clone(), crate::oauth::http::require_scope))
        .route_layer(middleware::from_fn_with_state(budget, body::receive))
        .route("/metrics", metrics)
        .route_layer(middleware::from_fn_with_state(Arc::new(gate), require_token))
        .route("/healthz", get(move || healthz(health.clone(), draining.clone())));
    match verifier {
        // The metadata is public: it is how a client learns where to get a token.
        Some(verifier) => crate::oauth::http::serve_metadata(router, &verifier),
        None => router,
    }
}

/// What a request must carry.
#[derive(Debug)]
enum Gate {
    /// Nothing (loopback, no token set).
    Open,
    /// The static bearer token.
    Token(Arc<str>),
    /// An OAuth access token the verifier accepts.
    OAuth(Arc<Verifier>),
}

/// What `/metrics` reads: the tools, and the server's connections and sessions.
#[derive(Debug, Clone)]
struct Gauges {
    catalog: Arc<Catalog>,
    connections: Arc<Counts>,
    sessions: Arc<Counts>,
}

/// `GET /metrics` (and `HEAD`; any other method gets `405` with `Allow`), behind the `Host`
/// and `Origin` checks `/mcp` has (rmcp makes those inside `/mcp`).
fn metrics_route(gauges: Gauges, options: &HttpOptions, address: SocketAddr) -> MethodRouter {
    let origins = LOOPBACK_ORIGINS.iter().copied().chain(options.allowed_origins.iter().map(String::as_str));
    let rules = origin::Rules::new(address.ip().is_loopback(), origins);
    get(move || metrics(gauges.clone()))
        .layer(middleware::map_response(method_not_allowed_says_which))
        .layer(middleware::from_fn_with_state(rules, origin::check))
}

/// Gives axum's bare `405` (which has the `Allow` header) a body that says what to send.
async fn method_not_allowed_says_which(response: Response) -> Response {
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    let (parts, _) = response.into_parts();
    let message = "/metrics answers GET (and HEAD) only: scrape it with GET";
    let mut answer = (parts.status, axum::Json(json!({ "error": message }))).into_response();
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        answer.headers_mut().insert(header::ALLOW, allow.clone());
    }
    answer
}

/// `GET /metrics`: the Prometheus text format. While the tools load it answers `200` with
/// `toolcell_tools_ready 0`, the server's gauges and the series of the tools loaded so far,
/// so that a cold start does not page anyone; `/healthz` is what keeps traffic away meanwhile.
async fn metrics(gauges: Gauges) -> Response {
    // While the tools compile, calls run on those loaded so far: their counts are shown too.
    let ready = gauges.catalog.current().is_some();
    let tools = gauges
        .catalog
        .serving()
        .map(|runtime| prometheus::Tools { loaded: runtime.definitions().len(), metrics: runtime.metrics() });
    let server = ServerGauges {
        connections: gauges.connections.taken(),
        max_connections: gauges.connections.limit(),
        sessions: gauges.sessions.taken(),
        max_sessions: gauges.sessions.limit(),
    };
    let body = prometheus::render(&Scrape { ready, tools, server });
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static(prometheus::CONTENT_TYPE)),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    (headers, body).into_response()
}

/// `GET /healthz`: 200 with the number of tools, for load balancers and probes; 503 while
/// the tools are still compiling (the server answers handshakes, but calls would wait), and
/// while the server drains before it stops ([`HttpOptions::drain_delay`]).
async fn healthz(catalog: Arc<Catalog>, draining: Arc<AtomicBool>) -> Response {
    if draining.load(Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({ "status": "draining" }))).into_response();
    }
    let Some(runtime) = catalog.current() else {
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({ "status": "loading" }))).into_response();
    };
    let body = json!({ "status": "ok", "tools": runtime.definitions().len(), "calls": runtime.calls_in_flight() });
    axum::Json(body).into_response()
}

/// Refuses a request without the bearer token (or a good OAuth access token), when one is
/// required; an OAuth caller's identity goes on in the request's extensions.
async fn require_token(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    if matches!(*gate, Gate::Open) {
        return next.run(request).await;
    }
    let mut authorizations = request.headers().get_all(header::AUTHORIZATION).iter();
    let (first, second) = (authorizations.next(), authorizations.next());
    if second.is_some() {
        // Which one counts would be up to each proxy on the way: none does.
        let message = "the request has more than one Authorization header: send one";
        let mut response = (StatusCode::BAD_REQUEST, axum::Json(json!({ "error": message }))).into_response();
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    // The scheme is case-insensitive (RFC 9110 §11.1).
    let presented = first
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().to_owned());
    let token = match &*gate {
        Gate::Open => return next.run(request).await,
        Gate::Token(token) => token.clone(),
        Gate::OAuth(verifier) => {
            let verified = match &presented {
                Some(presented) => verifier.verify(presented.trim()).await,
                None => Err(Refusal::Missing),
            };
            return match verified {
                Ok(caller) => {
                    request.extensions_mut().insert::<Caller>(caller);
                    next.run(request).await
                }
                Err(refusal) => crate::oauth::http::unauthorized(verifier, &refusal),
            };
        }
    };
    match presented.as_deref() {
        Some(presented) if constant_time_eq(presented.as_bytes(), token.as_bytes()) => next.run(request).await,
        presented => {
            let message = if presented.is_some() {
                "the bearer token is wrong: send the server's token as `Authorization: Bearer <token>`"
            } else {
                "this server requires a bearer token: send `Authorization: Bearer <token>` (the operator set it \
                 with --token or TOOLCELL_TOKEN)"
            };
            let mut response = (StatusCode::UNAUTHORIZED, axum::Json(json!({ "error": message }))).into_response();
            let headers = response.headers_mut();
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="toolcell""#));
            // The body of a request without the token is never read, so the connection cannot
            // carry another request: say so, or a client reusing it races the close.
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

/// Answers a closed session (`DELETE /mcp`) with `204 No Content` rather than rmcp's `202`:
/// clients (the Python SDK among them) take 200 or 204 as success and warn about anything else.
async fn session_closed_is_no_content(request: Request, next: Next) -> Response {
    let closing = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if closing && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Compares without an early exit, so timing does not reveal how much of a guess is right.
/// (The length can differ quickly; it is not the secret.)
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    std::hint::black_box(a.iter().zip(b).fold(0u8, |difference, (x, y)| difference | (x ^ y))) == 0
}

/// Waits until no call is running or queued, or `grace` has passed.
async fn drain(catalog: &Catalog, grace: Duration) {
    let until = Instant::now() + grace;
    loop {
        let Some(calls) = catalog.serving().map(|runtime| runtime.calls_in_flight()) else { return };
        if calls.running + calls.waiting == 0 {
            return;
        }
        if Instant::now() >= until {
            tracing::warn!(
                running = calls.running,
                waiting = calls.waiting,
                "shutdown: stopping calls still in flight"
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_equal_only_when_identical() {
        assert!(constant_time_eq(b"secret-token", b"secret-token"));
        assert!(!constant_time_eq(b"secret-token", b"secret-tokeN"));
        assert!(!constant_time_eq(b"secret", b"secret-token"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
