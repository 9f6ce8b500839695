//! Sending one allowed request to the exact address that was checked: a TCP connection to
//! that address (never a second name lookup, so DNS rebinding cannot move it), TLS with the
//! web PKI roots for `https`, HTTP/1.1.

use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

/// Where a request goes: the checked addresses, tried in order, and the name TLS verifies.
pub(crate) struct Destination {
    pub(crate) addresses: Vec<SocketAddr>,
    pub(crate) tls_name: Option<String>,
}

/// How long connecting and waiting may take when the tool sets no option: the call's own
/// deadline stops it sooner.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// The response, and the future that drives the connection until the body is read.
pub(crate) type Sent = (http::Response<WasiBody>, Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>);

/// Sends `request` to `destination`.
pub(crate) async fn send(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    destination: Destination,
) -> Result<Sent, Error> {
    let option = |pick: fn(&RequestOptions) -> Option<Duration>| options.as_ref().and_then(pick);
    let connect_timeout = option(|o| o.connect_timeout).unwrap_or(DEFAULT_TIMEOUT);
    let first_byte_timeout = option(|o| o.first_byte_timeout).unwrap_or(DEFAULT_TIMEOUT);
    let between_bytes_timeout =
        option(|o| o.between_bytes_timeout).unwrap_or(DEFAULT_TIMEOUT).max(Duration::from_nanos(1));

    let stream =
        tokio::time::timeout(connect_timeout, open(&destination)).await.map_err(|_| Error::ConnectionTimeout)??;
    let (mut sender, connection) =
        tokio::time::timeout(connect_timeout, hyper::client::conn::http1::handshake(TokioIo::new(stream)))
            .await
            .map_err(|_| Error::ConnectionTimeout)??;

    // The request line carries only the path: scheme and authority go in the Host header.
    let path = request.uri().path_and_query().map_or("/", |path| path.as_str());
    *request.uri_mut() = http::Uri::try_from(path).map_err(|_| Error::HttpRequestUriInvalid)?;

    let mut connection = Box::pin(connection);
    let mut response = pin!(tokio::time::timeout(first_byte_timeout, sender.send_request(request)));
    // Drive the connection while waiting for the response head.
    let mut connection_done = false;
    let response = std::future::poll_fn(|cx| {
        if let Poll::Ready(result) = response.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        if !connection_done && let Poll::Ready(result) = connection.as_mut().poll(cx) {
            connection_done = true;
            if let Err(err) = result {
                return Poll::Ready(Ok(Err(err)));
            }
            return response.as_mut().poll(cx);
        }
        Poll::Pending
    })
    .await
    .map_err(|_| Error::ConnectionReadTimeout)??;

    let response = response.map(|incoming| {
        let mut idle = tokio::time::interval(between_bytes_timeout);
        idle.reset();
        IncomingBody { incoming, idle }.boxed_unsync()
    });
    let drive: Pin<Box<dyn Future<Output = Result<(), Error>> + Send>> = Box::pin(async move {
        if connection_done {
            return Ok(());
        }
        connection.await.map_err(|err| if err.is_timeout() { Error::HttpResponseTimeout } else { err.into() })
    });
    Ok((response, drive))
}

async fn open(destination: &Destination) -> Result<Box<dyn Stream>, Error> {
    let tcp = connect_any(&destination.addresses).await.map_err(Error::Connect)?;
    let Some(name) = &destination.tls_name else { return Ok(Box::new(tcp)) };
    let name = rustls::pki_types::ServerName::try_from(name.clone()).map_err(|_| Error::HttpRequestUriInvalid)?;
    let tls = tls_connector().connect(name, tcp).await.map_err(Error::Tls)?;
    Ok(Box::new(tls))
}

/// A connection to the first of `addresses` that accepts one.
async fn connect_any(addresses: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::AddrNotAvailable, "no address to connect to");
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(err) => last = err,
        }
    }
    Err(last)
}

/// One TLS client configuration for the process: the web PKI roots, no client certificate.
fn tls_connector() -> tokio_rustls::TlsConnector {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
        Arc::new(rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth())
    });
    tokio_rustls::TlsConnector::from(config.clone())
}

/// A response body that fails when no bytes arrive for `between_bytes_timeout`.
struct IncomingBody {
    incoming: hyper::body::Incoming,
    idle: tokio::time::Interval,
}

impl Body for IncomingBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        match Pin::new(&mut self.incoming).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                self.idle.reset();
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(err))) => {
                Poll::Ready(Some(Err(if err.is_timeout() { Error::HttpResponseTimeout } else { err.into() })))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                ready!(self.idle.poll_tick(cx));
                Poll::Ready(Some(Err(Error::ConnectionReadTimeout)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.incoming.size_hint()
    }
}
