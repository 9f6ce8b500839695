//! One HTTP/1.1 exchange with a registry (or its token service, or wherever it redirects a
//! blob): TCP, TLS with the web PKI roots for `https`, a body read whole up to a limit, and
//! no wait longer than [`IDLE`] for the next bytes. (`serve`'s OAuth fetches its issuer's
//! metadata and keys with it too.)

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Method, Request, Response, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// How long connecting, the response head, or the gap between two pieces of a body may take.
pub const IDLE: Duration = Duration::from_secs(30);
/// How long one whole exchange may take, however its bytes trickle in.
pub const DEADLINE: Duration = Duration::from_secs(300);

/// Why an exchange failed before a whole response arrived.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection (TCP or TLS) could not be made.
    #[error("{0}")]
    Connect(String),
    /// Nothing arrived for [`IDLE`].
    #[error("no answer within {}s", IDLE.as_secs())]
    Timeout,
    /// The whole exchange took longer than [`DEADLINE`].
    #[error("the exchange took longer than {}s in all", DEADLINE.as_secs())]
    Deadline,
    /// The body was longer than the limit asked for.
    #[error("the response is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The URL or the HTTP exchange itself was wrong.
    #[error("{0}")]
    Http(String),
}

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Sends `method uri` with `headers` and `body`, and reads the response's body whole, refusing
/// one longer than `limit` bytes.
///
/// # Errors
/// When no whole response arrived: see [`TransportError`].
pub async fn exchange(
    method: Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
    limit: usize,
) -> Result<Response<Bytes>, TransportError> {
    tokio::time::timeout(DEADLINE, exchange_unbounded(method, uri, headers, body, limit))
        .await
        .map_err(|_| TransportError::Deadline)?
}

async fn exchange_unbounded(
    method: Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
    limit: usize,
) -> Result<Response<Bytes>, TransportError> {
    let authority = uri.authority().ok_or_else(|| TransportError::Http(format!("`{uri}` names no host")))?;
    let tls = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return Err(TransportError::Http(format!("`{uri}` is neither http nor https"))),
    };
    let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });

    let stream = timed(open(&host, port, tls)).await??;
    let (mut sender, connection) = timed(hyper::client::conn::http1::handshake(TokioIo::new(stream)))
        .await?
        .map_err(|err| TransportError::Http(err.to_string()))?;
    let driver = tokio::spawn(connection);

    let mut request = Request::builder()
        .method(method)
        .uri(uri.path_and_query().map_or("/", |path| path.as_str()))
        .header(http::header::HOST, authority.as_str())
        .header(http::header::USER_AGENT, concat!("toolcell/", env!("CARGO_PKG_VERSION")))
        .body(Full::new(body))
        .map_err(|err| TransportError::Http(err.to_string()))?;
    request.headers_mut().extend(headers.clone());

    let result = async {
        let response =
            timed(sender.send_request(request)).await?.map_err(|err| TransportError::Http(err.to_string()))?;
        let (head, mut incoming) = response.into_parts();
        let mut body = BytesMut::new();
        while let Some(frame) = timed(incoming.frame()).await? {
            let frame = frame.map_err(|err| TransportError::Http(err.to_string()))?;
            if let Ok(data) = frame.into_data() {
                if body.len() + data.len() > limit {
                    return Err(TransportError::TooLarge { limit });
                }
                body.extend_from_slice(&data);
            }
        }
        Ok(Response::from_parts(head, body.freeze()))
    }
    .await;
    driver.abort();
    result
}

async fn timed<T>(work: impl Future<Output = T>) -> Result<T, TransportError> {
    tokio::time::timeout(IDLE, work).await.map_err(|_| TransportError::Timeout)
}

async fn open(host: &str, port: u16, tls: bool) -> Result<Box<dyn Stream>, TransportError> {
    let tcp = TcpStream::connect((host, port)).await.map_err(|err| TransportError::Connect(err.to_string()))?;
    if !tls {
        return Ok(Box::new(tcp));
    }
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|_| TransportError::Connect(format!("`{host}` is not a name TLS can check")))?;
    let stream =
        tls_connector().connect(name, tcp).await.map_err(|err| TransportError::Connect(format!("TLS: {err}")))?;
    Ok(Box::new(stream))
}

/// One TLS client configuration for the process: the web PKI roots, no client certificate.
fn tls_connector() -> tokio_rustls::TlsConnector {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions");
        Arc::new(config.with_root_certificates(roots).with_no_client_auth())
    });
    tokio_rustls::TlsConnector::from(config.clone())
}
