//! Outbound HTTP for tools granted hosts (`wasi:http/outgoing-handler`). Every request is
//! checked before anything leaves the host:
//!
//! 1. the request: scheme, host, port, method and normalized path against the tool's egress
//!    rules (no user info); the first rule that allows it adds its headers and fills the
//!    tool's placeholders for its secrets ([`inject`]);
//! 2. the number of requests in flight, for the call and for the whole host;
//! 3. the addresses the host resolves the name to: a name may reach public addresses only.
//!
//! The connection then goes to the address that was checked, never through a second lookup.
//! The guest never resolves names or opens sockets itself. Response bodies are capped, and
//! every response to a tool the host sends secrets for has them redacted before the guest
//! reads it (a server may echo one on a later request, not only on the one that carried it).

mod address;
mod body;
mod connect;
mod inject;
mod recorded;
mod redacting;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use self::body::CappedBody;
use self::connect::Destination;
use crate::policy::{Egress, RequestPath, Scheme, host_grant};
use crate::redact::Redactor;
use crate::sandbox::journal::{HttpAnswer, HttpExchange, HttpReplay, Journal};

/// Requests one call may have in flight (sent, with a response not yet read or dropped).
pub(crate) const MAX_REQUESTS_PER_CALL: usize = 16;
/// Requests all calls of one runtime may have in flight together.
pub(crate) const MAX_REQUESTS_PER_RUNTIME: usize = 256;
/// How much of a refused request's URL a denial quotes.
const MAX_REQUEST_BYTES: usize = 200;

/// A request the host refused, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeniedRequest {
    /// `GET https://example.com/path`, cut to [`MAX_REQUEST_BYTES`].
    pub(crate) request: String,
    /// Which rule refused it, in words for the model.
    pub(crate) reason: String,
    /// The `allow_hosts` entry that would allow it, when one would.
    pub(crate) grant: Option<String>,
    /// The narrowest rule that would allow it (`{ host = …, methods = […], paths = […] }`).
    pub(crate) rule: Option<String>,
}

impl DeniedRequest {
    fn new(request: String, reason: String) -> Self {
        Self { request, reason, grant: None, rule: None }
    }
}

/// How many of one call's refused requests are kept, logged and written to a denials file;
/// past it they are only counted. A tool that loops on refused requests would otherwise make
/// the host hold (and log) one entry per request until the call's deadline.
pub(crate) const MAX_KEPT_DENIALS: usize = 64;

/// What the HTTP requests of one call ran into, shared with the request futures.
#[derive(Debug, Default)]
pub(crate) struct HttpEvents {
    denied: Mutex<Denials>,
    response_capped: AtomicBool,
}

#[derive(Debug, Default)]
struct Denials {
    kept: Vec<DeniedRequest>,
    count: u64,
}

impl HttpEvents {
    /// Keeps a refusal (up to [`MAX_KEPT_DENIALS`]); returns whether it was kept.
    fn deny(&self, denied: DeniedRequest) -> bool {
        let mut denials = self.denied.lock().unwrap_or_else(PoisonError::into_inner);
        denials.count += 1;
        let kept = denials.kept.len() < MAX_KEPT_DENIALS;
        if kept {
            denials.kept.push(denied);
        }
        kept
    }

    /// The first refused request, if any.
    pub(crate) fn first_denied(&self) -> Option<DeniedRequest> {
        self.denied.lock().unwrap_or_else(PoisonError::into_inner).kept.first().cloned()
    }

    /// The refused requests kept, and how many there were in all.
    pub(crate) fn denied(&self) -> (Vec<DeniedRequest>, u64) {
        let denials = self.denied.lock().unwrap_or_else(PoisonError::into_inner);
        (denials.kept.clone(), denials.count)
    }

    /// Whether a response body went past its cap.
    pub(crate) fn response_capped(&self) -> bool {
        self.response_capped.load(Ordering::Relaxed)
    }
}

/// Name resolution for outbound requests: names pinned by the embedding first
/// ([`RuntimeBuilder::resolve`](crate::RuntimeBuilder::resolve)), then the system resolver.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolver {
    pinned: Arc<BTreeMap<String, Vec<IpAddr>>>,
}

impl Resolver {
    pub(crate) fn pin(&mut self, host: String, addresses: Vec<IpAddr>) {
        Arc::make_mut(&mut self.pinned).insert(host.to_ascii_lowercase(), addresses);
    }

    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, Error> {
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(vec![ip]);
        }
        if let Some(addresses) = self.pinned.get(host) {
            return Ok(addresses.clone());
        }
        let found = tokio::net::lookup_host((host, port))
            .await
            .map_err(|err| Error::DnsError { rcode: Some(err.to_string()), info_code: None })?;
        Ok(found.map(|address| address.ip()).collect())
    }
}

/// The runtime-wide share of in-flight requests.
#[derive(Debug, Clone)]
pub(crate) struct RequestSlots(Arc<Semaphore>);

impl Default for RequestSlots {
    fn default() -> Self {
        Self(Arc::new(Semaphore::new(MAX_REQUESTS_PER_RUNTIME)))
    }
}

/// The wasi-http hooks of one call.
pub(crate) struct HttpGate {
    egress: Egress,
    max_response_bytes: u64,
    resolver: Resolver,
    per_call: Arc<Semaphore>,
    per_runtime: RequestSlots,
    redactor: Redactor,
    pub(crate) events: Arc<HttpEvents>,
    /// Recording or replaying the call's requests, if it is.
    journal: Option<Journal>,
}

/// A request that passed the rules.
struct Target {
    scheme: Scheme,
    host: String,
    port: u16,
    /// Replaces the secrets the host sends for the tool in what the response brings back,
    /// when it sends some.
    sent_secrets: Option<Redactor>,
}

impl HttpGate {
    pub(crate) fn new(
        egress: Egress,
        max_response_bytes: u64,
        resolver: Resolver,
        per_runtime: RequestSlots,
        redactor: Redactor,
    ) -> Self {
        Self {
            egress,
            max_response_bytes,
            resolver,
            per_call: Arc::new(Semaphore::new(MAX_REQUESTS_PER_CALL)),
            per_runtime,
            redactor,
            events: Arc::default(),
            journal: None,
        }
    }

    /// Redacts with `redactor` from now on: a call's secrets, bound to an instance made
    /// before the call ([`crate::sandbox::ready`]).
    pub(crate) fn set_redactor(&mut self, redactor: Redactor) {
        self.redactor = redactor;
    }

    /// Records the call's requests into `journal`, or answers them from it.
    pub(crate) fn with_journal(mut self, journal: Option<Journal>) -> Self {
        self.journal = journal;
        self
    }

    /// Answers a request from the record (a replay): the response, or the refusal or failure
    /// the recorded one got, refusals reported as a live refusal is.
    fn replayed(
        &self,
        answer: HttpAnswer,
        request: &http::Request<WasiBody>,
    ) -> Result<http::Response<WasiBody>, Error> {
        if let HttpAnswer::Refused { request: described, reason, grant, rule, .. } = &answer {
            let denied = DeniedRequest {
                request: described.clone(),
                reason: reason.clone(),
                grant: grant.clone(),
                rule: rule.clone(),
            };
            self.refuse(denied, request.uri());
        }
        recorded::replayed_response(answer, &self.events)
    }

    /// Refuses a request, keeping the refusal when recording.
    fn refuse_recorded(&self, denied: DeniedRequest, uri: &http::Uri, line: Option<&String>, in_flight: bool) {
        if let (Some(journal), Some(line)) = (&self.journal, line) {
            let answer = HttpAnswer::Refused {
                request: denied.request.clone(),
                reason: denied.reason.clone(),
                grant: denied.grant.clone(),
                rule: denied.rule.clone(),
                in_flight,
            };
            journal.record_http(HttpExchange { request: line.clone(), answer });
        }
        self.refuse(denied, uri);
    }

    /// Checks a request against the tool's rules: scheme, no user info, then host, port,
    /// method and normalized path. An allowed request goes out with its path normalized and
    /// the headers and secrets of the rule that allowed it.
    /// `described` is the request as the tool sent it, which every refusal quotes: never with
    /// a secret the host filled in.
    fn admit(&self, request: &mut http::Request<WasiBody>, described: &str) -> Result<Target, DeniedRequest> {
        let denied = |reason: String| DeniedRequest::new(described.to_owned(), reason);
        let uri = request.uri();
        let scheme = match uri.scheme_str() {
            Some("http") => Scheme::Http,
            Some("https") => Scheme::Https,
            _ => return Err(denied("only http and https requests can be allowed".into())),
        };
        // `host:port@other`: the check and the connection must read the same host.
        if uri.authority().is_some_and(|authority| authority.as_str().contains('@')) {
            return Err(denied(
                "URLs with a user name or password before the host (`user@host`) are refused; send credentials \
                 in a header instead"
                    .into(),
            ));
        }
        let host = uri.host().unwrap_or_default().to_ascii_lowercase();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let host = host.strip_suffix('.').unwrap_or(host).to_owned();
        let port = uri.port_u16().unwrap_or(scheme.default_port());
        let path = RequestPath::normalize(uri.path()).map_err(|refused| {
            let mut reason = refused.0;
            self.redactor.text(&mut reason);
            denied(reason)
        })?;
        let rule = self.egress.decide(request.method(), scheme, &host, port, &path).map_err(|refusal| {
            // A host name or a path can carry a secret.
            let mut refused = DeniedRequest {
                grant: refusal.host_grant,
                rule: refusal.rule.map(|rule| rule.to_string()),
                ..denied(refusal.reason)
            };
            for text in refused.grant.iter_mut().chain(refused.rule.iter_mut()).chain([&mut refused.reason]) {
                self.redactor.text(text);
            }
            refused
        })?;
        inject::refuse_method_override(rule, request).map_err(&denied)?;
        inject::refuse_path_override(rule, request).map_err(&denied)?;
        inject::apply(rule, request, &path).map_err(denied)?;
        let sent_secrets = self.egress.secrets().cloned();
        if sent_secrets.is_some() {
            // A compressed echo would pass redaction unseen: ask for none (a response that
            // is compressed anyway is refused, see `redacting`); and for the whole response,
            // not parts too short to recognize.
            let headers = request.headers_mut();
            headers.insert(http::header::ACCEPT_ENCODING, http::HeaderValue::from_static("identity"));
            for name in inject::RANGE_HEADERS {
                headers.remove(name);
            }
        }
        Ok(Target { scheme, host, port, sent_secrets })
    }

    /// Takes an in-flight slot for the call and for the runtime, or says which is full.
    fn take_slot(&self) -> Result<InFlight, String> {
        let call = self.per_call.clone().try_acquire_owned().map_err(|_| {
            format!(
                "the call already has {MAX_REQUESTS_PER_CALL} requests in flight, the most one call may have; read \
                 or drop earlier responses before sending more"
            )
        })?;
        let runtime = self.per_runtime.0.clone().try_acquire_owned().map_err(|_| {
            format!(
                "the host already has {MAX_REQUESTS_PER_RUNTIME} requests in flight across all calls, the most it \
                 allows; try again shortly"
            )
        })?;
        Ok(InFlight { _call: call, _runtime: runtime })
    }

    /// Records and logs a refusal.
    fn refuse(&self, denied: DeniedRequest, uri: &http::Uri) {
        let logged = self.events.deny(denied.clone());
        if logged {
            log_refusal(&self.redactor, uri, &denied);
        }
    }
}

/// Logs a refused request by its origin only, redacted (a path, a query or even a host
/// name can carry a secret), with the rule that would allow it for the operator.
fn log_refusal(redactor: &Redactor, uri: &http::Uri, denied: &DeniedRequest) {
    let mut origin = format!("{}://{}", uri.scheme_str().unwrap_or("?"), uri.host().unwrap_or_default());
    redactor.text(&mut origin);
    let rule = denied.rule.as_deref().map(|rule| format!("add {rule}"));
    tracing::warn!(%origin, port = uri.port_u16(), reason = %denied.reason, rule, "HTTP request denied");
}

/// `GET https://example.com/path`, redacted and cut to [`MAX_REQUEST_BYTES`] (a cut never
/// leaves the start of a secret).
fn describe(request: &http::Request<WasiBody>, redactor: &Redactor) -> String {
    redactor.cut(&format!("{} {}", request.method(), request.uri()), MAX_REQUEST_BYTES)
}

/// Whether a resolved address may be reached for `target`: public addresses always;
/// special-purpose ones only through a rule naming the address, or `localhost`. The error
/// is the address's class, in words.
fn address_allowed(egress: &Egress, target: &Target, ip: IpAddr) -> Result<(), &'static str> {
    let Some(class) = address::special_purpose(ip) else { return Ok(()) };
    let ip = address::canonical(ip);
    if egress.names_address(target.scheme, ip, target.port, &target.host) { Ok(()) } else { Err(class) }
}

/// A request's slots; dropped when its response is read or dropped.
struct InFlight {
    _call: OwnedSemaphorePermit,
    _runtime: OwnedSemaphorePermit,
}

impl WasiHttpHooks for HttpGate {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _request_done: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<(http::Response<WasiBody>, Box<dyn Future<Output = Result<(), Error>> + Send>), Error>,
            > + Send,
    > {
        // A journaled call's request: answered from the record, or sent and kept.
        let line = self.journal.as_ref().map(|_| recorded::request_line(&request, &self.redactor));
        if let (Some(journal), Some(line)) = (&self.journal, &line) {
            match journal.answer_http(line) {
                HttpReplay::Live => {}
                HttpReplay::Replayed(answer) => {
                    let replayed = self.replayed(answer, &request);
                    let done: Box<dyn Future<Output = Result<(), Error>> + Send> = Box::new(async { Ok(()) });
                    return Box::new(async move { replayed.map(|response| (response, done)) });
                }
                HttpReplay::Diverged(how) => return Box::new(async { Err(Error::InternalError(Some(how))) }),
            }
        }
        let mut request = request;
        let described = describe(&request, &self.redactor);
        let target = match self.admit(&mut request, &described) {
            Ok(target) => target,
            Err(denied) => {
                self.refuse_recorded(denied, request.uri(), line.as_ref(), false);
                return Box::new(async { Err(Error::HttpRequestDenied) });
            }
        };
        let slot = match self.take_slot() {
            Ok(slot) => Arc::new(slot),
            Err(reason) => {
                let denied = DeniedRequest::new(described, reason);
                self.refuse_recorded(denied, request.uri(), line.as_ref(), true);
                return Box::new(async { Err(Error::ConnectionLimitReached) });
            }
        };
        // Resolve now, in the gate's future: the addresses are checked before connecting.
        let resolved = {
            let resolver = self.resolver.clone();
            let (host, port) = (target.host.clone(), target.port);
            async move { resolver.resolve(&host, port).await }
        };
        let sent_secrets = target.sent_secrets.clone();
        let check = AddressCheck {
            egress: self.egress.clone(),
            events: self.events.clone(),
            redactor: self.redactor.clone(),
            target,
            described,
        };
        let (limit, events) = (self.max_response_bytes, self.events.clone());
        let recording = self.journal.clone().zip(line).map(|(journal, line)| (journal, line, self.redactor.clone()));
        Box::new(async move {
            let sent = async {
                let addresses = resolved.await?;
                let destination = check.pick(addresses, request.uri())?;
                connect::send(request, options, destination).await
            };
            let (response, drive) = match (sent.await, &recording) {
                (Ok(sent), _) => sent,
                (Err(err), None) => return Err(err),
                (Err(err), Some((journal, line, _))) => {
                    let err = recorded::guest_view(err);
                    let answer = HttpAnswer::Failed { error: recorded::error_text(&err) };
                    journal.record_http(HttpExchange { request: line.clone(), answer });
                    return Err(err);
                }
            };
            let response = match sent_secrets {
                Some(secrets) => redacting::redact_response(response, secrets),
                None => response,
            };
            let body_slot = slot.clone();
            let response = response.map(|body| CappedBody::new(body, limit, events, body_slot).boxed());
            let (response, drive) = match recording {
                None => (response, drive),
                Some((journal, line, redactor)) => {
                    let (response, answer, drive) = recorded::read_whole(response, drive, &redactor).await;
                    journal.record_http(HttpExchange { request: line, answer });
                    (response, drive)
                }
            };
            let drive: Box<dyn Future<Output = Result<(), Error>> + Send> = Box::new(async move {
                let result = drive.await;
                drop(slot);
                result
            });
            Ok((response, drive))
        })
    }
}

/// The address check of one request, moved into its future.
struct AddressCheck {
    egress: Egress,
    events: Arc<HttpEvents>,
    redactor: Redactor,
    target: Target,
    /// The request as the tool sent it.
    described: String,
}

impl AddressCheck {
    /// The resolved addresses the grant may reach, in order; when there is none, the refusal
    /// of the first one.
    fn pick(&self, addresses: Vec<IpAddr>, uri: &http::Uri) -> Result<Destination, Error> {
        let target = &self.target;
        let mut allowed = Vec::new();
        let mut refused = None;
        for ip in addresses.into_iter().map(address::canonical) {
            match address_allowed(&self.egress, target, ip) {
                Ok(()) => allowed.push(SocketAddr::new(ip, target.port)),
                Err(class) => {
                    refused.get_or_insert((ip, class));
                }
            }
        }
        if !allowed.is_empty() {
            let tls_name = (target.scheme == Scheme::Https).then(|| target.host.clone());
            return Ok(Destination { addresses: allowed, tls_name });
        }
        let Some((ip, class)) = refused else {
            return Err(Error::DnsError { rcode: Some("the name has no addresses".into()), info_code: None });
        };
        let mut reason =
            format!("`{}` resolves to {ip}, {class}, which a host name on the allow-list may not reach", target.host);
        self.redactor.text(&mut reason);
        let grant = host_grant(&ip.to_string(), target.port, target.scheme);
        let denied = DeniedRequest { grant: Some(grant), ..DeniedRequest::new(self.described.clone(), reason) };
        if self.events.deny(denied.clone()) {
            log_refusal(&self.redactor, uri, &denied);
        }
        Err(Error::DestinationIpProhibited)
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Empty};

    use super::*;
    use crate::policy::HostPattern;

    fn gate(patterns: &[&str]) -> HttpGate {
        let patterns: Vec<HostPattern> = patterns.iter().map(|p| p.parse().expect("pattern")).collect();
        let egress = Egress::resolve(&[], &patterns, &Default::default()).expect("egress");
        HttpGate::new(egress, 100, Resolver::default(), RequestSlots::default(), Redactor::default())
    }

    fn request(uri: &str) -> http::Request<WasiBody> {
        let body = Empty::<Bytes>::new().map_err(|never| match never {}).boxed_unsync();
        http::Request::get(uri).body(body).expect("request")
    }

    fn admit(gate: &HttpGate, uri: &str) -> Result<http::Uri, DeniedRequest> {
        let mut request = request(uri);
        let described = describe(&request, &gate.redactor);
        gate.admit(&mut request, &described).map(|_| request.uri().clone())
    }

    #[test]
    fn denials_name_the_rule_and_the_grant_that_would_allow_them() {
        let gate = gate(&["example.com", "127.0.0.1:8080"]);
        assert!(admit(&gate, "https://example.com/a?b").is_ok());
        assert!(admit(&gate, "http://EXAMPLE.com./").is_ok());
        assert!(admit(&gate, "http://127.0.0.1:8080/").is_ok());
        let grant = |uri: &str| admit(&gate, uri).err().and_then(|denied| denied.grant);
        assert_eq!(grant("https://evil.net/x").as_deref(), Some("evil.net"));
        assert_eq!(grant("http://example.com:8080/").as_deref(), Some("example.com:8080"));
        assert_eq!(grant("http://[::1]:9000/").as_deref(), Some("[::1]:9000"));
        let denial = admit(&gate, "https://evil.net/x?q=1").expect_err("denied");
        assert_eq!(denial.request, "GET https://evil.net/x?q=1");
        assert!(denial.reason.contains("not on this tool's allow-list"), "{}", denial.reason);
        assert_eq!(denial.rule.as_deref(), Some(r#"{ host = "evil.net", methods = ["GET"], paths = ["/x"] }"#));
        let userinfo = admit(&gate, "http://127.0.0.1:8080@example.com/").expect_err("denied");
        assert!(userinfo.reason.contains("user name or password") && userinfo.grant.is_none());
        let long = admit(&gate, &format!("https://evil.net/{}", "a".repeat(10_000))).expect_err("denied");
        assert!(long.request.len() <= MAX_REQUEST_BYTES, "{}", long.request.len());
    }

    #[test]
    fn allowed_requests_go_out_with_their_path_normalized_and_steps_up_are_refused() {
        let gate = gate(&["example.com"]);
        let sent = admit(&gate, "https://example.com//a/./%7Eb/?q=%2e%2e").expect("allowed");
        assert_eq!(sent.to_string(), "https://example.com/a/~b/?q=%2e%2e");
        let denial = admit(&gate, "https://example.com/a/%2e%2e/etc").expect_err("refused");
        assert!(denial.reason.contains("`..`") && denial.rule.is_none(), "{denial:?}");
    }

    #[test]
    fn a_call_keeps_a_bounded_number_of_refusals_and_counts_the_rest() {
        let events = HttpEvents::default();
        for i in 0..10_000 {
            events.deny(DeniedRequest::new(format!("GET https://evil.net/{i}"), "not allowed".into()));
        }
        let (kept, count) = events.denied();
        assert_eq!((kept.len(), count), (MAX_KEPT_DENIALS, 10_000));
        assert_eq!(events.first_denied().map(|denied| denied.request).as_deref(), Some("GET https://evil.net/0"));
    }

    #[test]
    fn names_reach_special_addresses_only_through_an_entry_naming_them() {
        let patterns: Vec<HostPattern> =
            ["*.example.com", "10.0.0.5", "localhost:3000"].iter().map(|p| p.parse().expect("pattern")).collect();
        let egress = Egress::resolve(&[], &patterns, &Default::default()).expect("egress");
        let target =
            |host: &str, port: u16| Target { scheme: Scheme::Http, host: host.into(), port, sent_secrets: None };
        let allowed = |host: &str, port: u16, ip: &str| {
            address_allowed(&egress, &target(host, port), ip.parse().expect("ip")).is_ok()
        };
        assert!(allowed("api.example.com", 80, "93.184.215.14"), "public");
        assert!(!allowed("api.example.com", 80, "127.0.0.1"), "loopback");
        assert!(!allowed("api.example.com", 80, "::ffff:169.254.169.254"), "mapped link-local");
        assert!(allowed("api.example.com", 80, "10.0.0.5"), "named by an entry");
        assert!(!allowed("api.example.com", 80, "10.0.0.6"), "a neighbour is not");
        assert!(allowed("localhost", 3000, "::1"), "localhost under a localhost entry");
        assert!(!allowed("localhost", 3001, "127.0.0.1"), "another port");
    }
}
