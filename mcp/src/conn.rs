//! Accepting connections: a cap in total and per client, and hyper's HTTP/1 connection
//! builder with a timer, a header-read timeout and a bounded read buffer, before anything
//! reads a token.
//!
//! Without these, hyper waits for a request's headers forever and buffers up to ~400 KiB of
//! them per connection: 1,124 connections that each sent half a request line held every
//! file descriptor of a server with the usual 1,024 limit, and clients with the token timed
//! out.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::routing::future::RouteFuture;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::peers::{Counts, Full, Peer};

/// The smallest read buffer hyper accepts (it panics below it).
const MIN_BUFFER_BYTES: usize = 8 * 1024;

/// Refused connections answered at once; past them a refused connection is closed
/// without an answer. Each holds a file descriptor for at most [`REFUSAL_TIME`].
pub(crate) const MAX_REFUSALS: usize = 64;

/// How long answering a refused connection may take.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// How long a refused connection's request may take to arrive before it is answered anyway.
const REFUSAL_READ_TIME: Duration = Duration::from_millis(500);

/// How long to wait after an accept error that is not the client's (too many open files).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The front door's limits, already checked against the open-files limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) max_connections_per_client: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) max_header_bytes: usize,
}

/// The count of open connections, capped by `limits`, for [`serve`] and for whoever reports it.
pub(crate) fn counts(limits: &Limits) -> Arc<Counts> {
    Counts::new(limits.max_connections, limits.max_connections_per_client)
}

/// Accepts connections until `stopping` is cancelled, counting them in `connections` (from
/// [`counts`]), then lets each connection finish its request in flight and returns once all
/// are closed.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    connections: Arc<Counts>,
    stopping: CancellationToken,
) {
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        // Also how long a kept-alive connection may sit idle: hyper starts the timer as soon
        // as it waits for the next request.
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(MIN_BUFFER_BYTES))
        .keep_alive(true);
    loop {
        let accepted = tokio::select! {
            biased;
            () = stopping.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, address) = match accepted {
            Ok(accepted) => accepted,
            Err(err) if is_the_clients(&err) => continue,
            Err(err) => {
                tracing::warn!("cannot accept a connection: {err}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let peer = Peer::of(address.ip());
        let place = match connections.take(peer) {
            Ok(place) => place,
            Err(full) => {
                refuse(stream, peer, full, &refusals);
                continue;
            }
        };
        // Answers are small writes (an event, then the end of the stream): without
        // TCP_NODELAY, Nagle's algorithm holds each back for the client's delayed ACK.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY on a connection: {err}");
        }
        let connection =
            http.serve_connection(TokioIo::new(stream), WithPeer { router: router.clone(), address, peer });
        let stopping = stopping.clone();
        tokio::spawn(async move {
            let _place = place;
            let mut connection = std::pin::pin!(connection);
            let mut shutting_down = false;
            let served = loop {
                tokio::select! {
                    served = connection.as_mut() => break served,
                    () = stopping.cancelled(), if !shutting_down => {
                        // Finish the request in flight, then close.
                        shutting_down = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            };
            if let Err(err) = served {
                tracing::debug!(%address, "connection ended: {err}");
            }
        });
    }
    drop(listener);
    connections.emptied().await;
}

/// Accept errors about one connection (the client gave up before it was accepted), not the
/// listener.
fn is_the_clients(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// Answers a connection past the caps with 429 (its client holds its share) or 503 (the
/// server is full), then closes it; closes it at once when [`MAX_REFUSALS`] are being
/// answered already.
fn refuse(stream: TcpStream, peer: Peer, full: Full, refusals: &Arc<Semaphore>) {
    tracing::debug!(%peer, ?full, "refusing a connection");
    let Ok(refusal) = refusals.clone().try_acquire_owned() else { return };
    tokio::spawn(async move {
        let _refusal = refusal;
        let _ = tokio::time::timeout(REFUSAL_TIME, answer(stream, full)).await;
    });
}

async fn answer(mut stream: TcpStream, full: Full) -> io::Result<()> {
    // Read the request first (the head is enough), so that closing with it unread does not
    // reset the connection under the answer.
    let mut buffer = [0u8; 4096];
    let _ = tokio::time::timeout(REFUSAL_READ_TIME, async {
        let mut tail = Vec::new();
        loop {
            let n = stream.read(&mut buffer).await?;
            tail.extend_from_slice(&buffer[..n]);
            if n == 0 || tail.windows(4).any(|window| window == b"\r\n\r\n") || tail.len() > 16 * 1024 {
                return io::Result::Ok(());
            }
        }
    })
    .await;
    let (status, message) = match full {
        Full::Peer(limit) => (
            "429 Too Many Requests",
            format!(
                "your address already has {limit} open connections to this server, the most one client may hold: \
                 reuse them (HTTP keep-alive) or close some, then retry; or ask the operator to raise \
                 --max-connections-per-client"
            ),
        ),
        Full::Total(limit) => (
            "503 Service Unavailable",
            format!(
                "this server has {limit} open connections, its limit: retry in a few seconds, or ask the operator to \
                 raise --max-connections"
            ),
        ),
    };
    let body = serde_json::json!({ "error": message }).to_string();
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await?;
    // Drain until the client closes, so the answer is not lost to a reset.
    while stream.read(&mut buffer).await? > 0 {}
    Ok(())
}

/// The router, with the client's address on each request (as [`ConnectInfo`] and [`Peer`]).
#[derive(Clone)]
struct WithPeer {
    router: Router,
    address: SocketAddr,
    peer: Peer,
}

impl hyper::service::Service<hyper::Request<Incoming>> for WithPeer {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = RouteFuture<Infallible>;

    fn call(&self, mut request: hyper::Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(ConnectInfo(self.address));
        request.extensions_mut().insert(self.peer);
        tower_service::Service::call(&mut self.router.clone(), request)
    }
}

/// Raises the soft limit on open files (`RLIMIT_NOFILE`) to the hard limit, and returns the
/// soft limit then in force (`None` where it is unlimited).
#[cfg(unix)]
pub fn raise_open_files_limit() -> Option<u64> {
    unix::raise_open_files_limit()
}

/// Raises the soft limit on open files to the hard limit: nothing to do here.
#[cfg(not(unix))]
pub fn raise_open_files_limit() -> Option<u64> {
    None
}

/// The connection cap within the open-files limit: at most half of it, so that tools' files,
/// the compile cache, telemetry and refusals keep the other half.
pub(crate) fn within_open_files(max_connections: usize) -> usize {
    #[cfg(unix)]
    let limit = unix::open_files_limit();
    #[cfg(not(unix))]
    let limit: Option<u64> = None;
    let Some(limit) = limit.and_then(|limit| usize::try_from(limit).ok()) else { return max_connections };
    let cap = (limit / 2).max(1);
    if max_connections <= cap {
        return max_connections;
    }
    tracing::warn!(
        "the open-files limit is {limit}: serving at most {cap} connections at once instead of {max_connections} \
         (raise the hard limit, e.g. `ulimit -Hn`, or lower --max-connections)"
    );
    cap
}

#[cfg(unix)]
mod unix {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

    pub(super) fn raise_open_files_limit() -> Option<u64> {
        let limit = getrlimit(Resource::Nofile);
        if limit.current != limit.maximum {
            let raised = Rlimit { current: limit.maximum, maximum: limit.maximum };
            if let Err(err) = setrlimit(Resource::Nofile, raised) {
                tracing::debug!("cannot raise the open-files limit to {:?}: {err}", limit.maximum);
            }
        }
        open_files_limit()
    }

    pub(super) fn open_files_limit() -> Option<u64> {
        getrlimit(Resource::Nofile).current
    }
}
