//! A client of the OCI distribution API: manifests and blobs, pulled and pushed, with the
//! bearer-token challenge registries use (anonymous, or with the operator's credentials) and
//! the redirects they send blob downloads through. Every byte that comes back is checked
//! against the digest it was asked for before anyone else sees it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use base64::Engine as _;
use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, Uri};

use crate::digest::Digest;
use crate::manifest::{Descriptor, INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE};
use crate::reference::OciReference;
use crate::transport::{self, TransportError};

/// The largest manifest read (the distribution spec asks registries to take 4 MiB).
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;
/// The largest blob read: a component, a config or a signature.
pub const MAX_BLOB_BYTES: usize = 256 << 20;
/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;
/// The largest token response or error body read.
const MAX_SMALL_BODY: usize = 64 << 10;

/// A user name and password (or token) for one registry.
#[derive(Clone)]
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password or access token.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("username", &self.username).field("password", &"…").finish()
    }
}

/// How to reach registries: which speak plain HTTP, and the credentials for each.
#[derive(Debug, Clone, Default)]
pub struct RegistrySettings {
    /// Registries (`host:port`) spoken to over plain HTTP besides loopback ones.
    pub plain_http: BTreeSet<String>,
    /// Credentials by registry (`host` or `host:port`).
    pub credentials: BTreeMap<String, Credentials>,
}

/// Why a registry exchange failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Nothing answered, or not in time.
    #[error("cannot reach the registry {registry} ({url}): {reason}; check the address and that it is up{hint}")]
    Unreachable {
        /// The registry.
        registry: String,
        /// What was asked for.
        url: String,
        /// Why.
        reason: String,
        /// What to check.
        hint: &'static str,
    },
    /// The registry has no such tag, digest or repository.
    #[error("{what} is not in the registry ({status}{detail}); check the repository and the tag or digest")]
    NotFound {
        /// What was asked for.
        what: String,
        /// The status.
        status: StatusCode,
        /// The registry's own words.
        detail: String,
    },
    /// The registry wants credentials it was not given, or refused them.
    #[error(
        "the registry {registry} refused access to {what} ({status}{detail}); give credentials for it (see `toolcell pull --help`)"
    )]
    Unauthorized {
        /// The registry.
        registry: String,
        /// What was asked for.
        what: String,
        /// The status.
        status: StatusCode,
        /// The registry's own words.
        detail: String,
    },
    /// Any other answer the client cannot go on from.
    #[error("the registry answered {method} {url} with {status}{detail}")]
    Refused {
        /// The method.
        method: Method,
        /// The URL.
        url: String,
        /// The status.
        status: StatusCode,
        /// The registry's own words.
        detail: String,
    },
    /// The answer is not what the API promises.
    #[error("the registry's answer to {what} cannot be used: {why}")]
    Invalid {
        /// What was asked for.
        what: String,
        /// Why.
        why: String,
    },
    /// The bytes are not the ones asked for.
    #[error("{what} was asked for as {expected} but the registry sent bytes that hash to {found}: refused")]
    Mismatch {
        /// What was asked for.
        what: String,
        /// The digest asked for.
        expected: Digest,
        /// The digest of what came.
        found: Digest,
    },
}

/// A manifest as pulled: its bytes, their digest (checked) and its media type.
#[derive(Debug, Clone)]
pub struct PulledManifest {
    /// The digest of `bytes`.
    pub digest: Digest,
    /// The manifest, as the registry sent it (the digest is of these bytes).
    pub bytes: Bytes,
    /// The media type the registry gave.
    pub media_type: String,
}

/// A client of the distribution API. Cheap to share; bearer tokens are kept per registry and
/// scope for the client's life.
#[derive(Debug, Default)]
pub struct RegistryClient {
    settings: RegistrySettings,
    tokens: Mutex<HashMap<(String, String), String>>,
}

/// One request, before auth and redirects.
struct Ask<'a> {
    method: Method,
    registry: &'a str,
    /// The path and query under the registry, e.g. `/v2/team/tool/manifests/1.0`.
    path: String,
    headers: HeaderMap,
    body: Bytes,
    limit: usize,
    /// What it is for, in errors.
    what: String,
}

impl<'a> Ask<'a> {
    /// A `GET` of `path` on `registry`, its body read up to `limit` bytes.
    fn get(registry: &'a str, path: String, limit: usize, what: String) -> Self {
        Self { method: Method::GET, registry, path, headers: HeaderMap::new(), body: Bytes::new(), limit, what }
    }

    fn accepting(mut self, media_types: &str) -> Self {
        self.headers.insert(ACCEPT, HeaderValue::from_str(media_types).expect("media types are header text"));
        self
    }
}

impl RegistryClient {
    /// A client with `settings`.
    pub fn new(settings: RegistrySettings) -> Self {
        Self { settings, tokens: Mutex::default() }
    }

    /// The manifest `reference` names: by its digest if it has one (checked), else by its tag.
    /// An index is followed to its `wasm` entry (or its only one).
    ///
    /// # Errors
    /// When the registry cannot be reached, has no such manifest, or sends other bytes.
    pub async fn manifest(&self, reference: &OciReference) -> Result<PulledManifest, RegistryError> {
        let by = reference.digest.map_or_else(|| reference.tag.clone().unwrap_or_default(), |d| d.to_string());
        let pulled = self.manifest_at(reference, &by).await?;
        if let Some(expected) = reference.digest
            && pulled.digest != expected
        {
            return Err(RegistryError::Mismatch { what: reference.to_string(), expected, found: pulled.digest });
        }
        if pulled.media_type != INDEX_MEDIA_TYPE {
            return Ok(pulled);
        }
        let index: crate::manifest::Index = parse(&pulled.bytes, &reference.to_string())?;
        let entry = pick_wasm_entry(&index.manifests).ok_or_else(|| RegistryError::Invalid {
            what: reference.to_string(),
            why: "it is an index with no `wasm` manifest in it".to_owned(),
        })?;
        let inner = self.manifest_at(reference, &entry.digest.to_string()).await?;
        if inner.digest != entry.digest {
            return Err(RegistryError::Mismatch {
                what: format!("{reference}'s wasm entry"),
                expected: entry.digest,
                found: inner.digest,
            });
        }
        Ok(inner)
    }

    /// The manifest tagged or digested `by` in `reference`'s repository, or `None` when the
    /// registry has none there (a signature that was never pushed).
    ///
    /// # Errors
    /// When the registry cannot be reached or answers otherwise.
    pub async fn manifest_if_any(
        &self,
        reference: &OciReference,
        by: &str,
    ) -> Result<Option<PulledManifest>, RegistryError> {
        match self.manifest_at(reference, by).await {
            Ok(pulled) => Ok(Some(pulled)),
            Err(RegistryError::NotFound { .. }) => Ok(None),
            Err(err) => Err(err),
        }
    }

    async fn manifest_at(&self, reference: &OciReference, by: &str) -> Result<PulledManifest, RegistryError> {
        let what = format!("oci://{}/{}:{by}", reference.registry, reference.repository);
        let path = format!("/v2/{}/manifests/{by}", reference.repository);
        let ask = Ask::get(&reference.registry, path, MAX_MANIFEST_BYTES, what.clone())
            .accepting(&format!("{MANIFEST_MEDIA_TYPE}, {INDEX_MEDIA_TYPE}"));
        let response = self.send(ask).await?;
        let digest = Digest::of(response.body());
        if let Some(claimed) = response.headers().get("docker-content-digest").and_then(|v| v.to_str().ok())
            && claimed.parse::<Digest>().is_ok_and(|claimed| claimed != digest)
        {
            return Err(RegistryError::Invalid {
                what,
                why: format!("it says the manifest is {claimed}, but its bytes hash to {digest}"),
            });
        }
        // What the bytes say, never the Content-Type header: the digest covers only the bytes, so
        // a document must mean one thing whichever header comes with it.
        let media_type = media_type_inside(response.body()).map_err(|why| RegistryError::Invalid { what, why })?;
        Ok(PulledManifest { digest, bytes: response.into_body(), media_type })
    }

    /// The manifests that name `digest` as their subject: the referrers API's answer, or,
    /// from a registry without it, the index tagged `sha256-<hex>` (the fallback the OCI
    /// distribution spec defines, which `cosign` and `oras` write).
    ///
    /// # Errors
    /// When the registry cannot be reached or answers otherwise.
    pub async fn referrers(&self, reference: &OciReference, digest: &Digest) -> Result<Vec<Descriptor>, RegistryError> {
        let what = format!("the referrers of oci://{}/{}@{digest}", reference.registry, reference.repository);
        let path = format!("/v2/{}/referrers/{digest}", reference.repository);
        let ask = Ask::get(&reference.registry, path, MAX_MANIFEST_BYTES, what.clone()).accepting(INDEX_MEDIA_TYPE);
        let answer = self.send(ask).await;
        let index = match answer {
            Ok(response) => response.into_body(),
            Err(RegistryError::NotFound { .. }) => {
                match self.manifest_if_any(reference, &referrers_tag(digest)).await? {
                    Some(pulled) => pulled.bytes,
                    None => return Ok(Vec::new()),
                }
            }
            Err(err) => return Err(err),
        };
        let index: crate::manifest::Index = parse(&index, &what)?;
        Ok(index.manifests)
    }

    /// The blob `descriptor` names in `repository`, checked against its digest and size.
    ///
    /// # Errors
    /// When it cannot be fetched, is larger than [`MAX_BLOB_BYTES`], or is not those bytes.
    pub async fn blob(
        &self,
        registry: &str,
        repository: &str,
        descriptor: &Descriptor,
    ) -> Result<Bytes, RegistryError> {
        let what = format!("the blob {} of oci://{registry}/{repository}", descriptor.digest);
        if descriptor.size > MAX_BLOB_BYTES as u64 {
            return Err(RegistryError::Invalid {
                what,
                why: format!("it is {} bytes; toolcell takes blobs of at most {MAX_BLOB_BYTES}", descriptor.size),
            });
        }
        let path = format!("/v2/{repository}/blobs/{}", descriptor.digest);
        let limit = usize::try_from(descriptor.size).unwrap_or(MAX_BLOB_BYTES);
        let response = self.send(Ask::get(registry, path, limit, what.clone())).await?;
        let found = Digest::of(response.body());
        if found != descriptor.digest {
            return Err(RegistryError::Mismatch { what, expected: descriptor.digest, found });
        }
        Ok(response.into_body())
    }

    /// Uploads `bytes` as a blob of `repository` (skipped when the registry has it already).
    ///
    /// # Errors
    /// When the registry refuses it.
    pub async fn push_blob(
        &self,
        registry: &str,
        repository: &str,
        media_type: &str,
        bytes: Bytes,
    ) -> Result<Descriptor, RegistryError> {
        let descriptor = Descriptor::of(media_type, &bytes);
        let what = format!("the blob {} of oci://{registry}/{repository}", descriptor.digest);
        let exists = self
            .send(Ask {
                method: Method::HEAD,
                registry,
                path: format!("/v2/{repository}/blobs/{}", descriptor.digest),
                headers: HeaderMap::new(),
                body: Bytes::new(),
                limit: 0,
                what: what.clone(),
            })
            .await;
        match exists {
            Ok(_) => return Ok(descriptor),
            Err(RegistryError::NotFound { .. }) => {}
            Err(err) => return Err(err),
        }
        let started = self
            .send(Ask {
                method: Method::POST,
                registry,
                path: format!("/v2/{repository}/blobs/uploads/"),
                headers: HeaderMap::new(),
                body: Bytes::new(),
                limit: MAX_SMALL_BODY,
                what: what.clone(),
            })
            .await?;
        let location = started
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| RegistryError::Invalid { what: what.clone(), why: "no Location for the upload".into() })?;
        let upload =
            self.absolute(registry, location).map_err(|why| RegistryError::Invalid { what: what.clone(), why })?;
        let separator = if upload.query().is_some() { '&' } else { '?' };
        let path = format!(
            "{}{separator}digest={}",
            upload.path_and_query().map_or("/", |p| p.as_str()),
            descriptor.digest.to_string().replace(':', "%3A")
        );
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
        headers.insert(CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        self.send(Ask { method: Method::PUT, registry, path, headers, body: bytes, limit: MAX_SMALL_BODY, what })
            .await?;
        Ok(descriptor)
    }

    /// Uploads `bytes` as the manifest `by` (a tag, or its digest) of `repository`.
    ///
    /// # Errors
    /// When the registry refuses it, or says it stored other bytes.
    pub async fn push_manifest(
        &self,
        registry: &str,
        repository: &str,
        by: &str,
        media_type: &str,
        bytes: Bytes,
    ) -> Result<Digest, RegistryError> {
        let digest = Digest::of(&bytes);
        let mut headers = HeaderMap::new();
        let content_type = HeaderValue::from_str(media_type)
            .map_err(|_| RegistryError::Invalid { what: media_type.to_owned(), why: "not header text".into() })?;
        headers.insert(CONTENT_TYPE, content_type);
        let what = format!("oci://{registry}/{repository}:{by}");
        let response = self
            .send(Ask {
                method: Method::PUT,
                registry,
                path: format!("/v2/{repository}/manifests/{by}"),
                headers,
                body: bytes,
                limit: MAX_SMALL_BODY,
                what: what.clone(),
            })
            .await?;
        if let Some(stored) = response.headers().get("docker-content-digest").and_then(|v| v.to_str().ok())
            && stored.parse::<Digest>().is_ok_and(|stored| stored != digest)
        {
            return Err(RegistryError::Invalid {
                what,
                why: format!("it stored the manifest as {stored}, not as its digest {digest}"),
            });
        }
        Ok(digest)
    }

    /// Sends `ask`, answering one bearer or basic challenge and following redirects; a
    /// response outside 2xx is an error.
    async fn send(&self, ask: Ask<'_>) -> Result<Response<Bytes>, RegistryError> {
        let scheme = self.scheme(ask.registry);
        let mut uri = format!("{scheme}://{}{}", ask.registry, ask.path)
            .parse::<Uri>()
            .map_err(|err| RegistryError::Invalid { what: ask.what.clone(), why: err.to_string() })?;
        let mut authorization = self.cached_authorization(ask.registry, &ask.path);
        let mut challenged = false;
        let mut redirects = 0;
        loop {
            let mut headers = ask.headers.clone();
            // Credentials go only to the registry, never to where it redirects a download.
            let at_registry = uri.authority().is_some_and(|a| a.as_str() == ask.registry);
            if at_registry && let Some(value) = &authorization {
                headers.insert(AUTHORIZATION, value.clone());
            }
            let response = transport::exchange(
                ask.method.clone(),
                &uri,
                &headers,
                ask.body.clone(),
                ask.limit.max(MAX_SMALL_BODY),
            )
            .await
            .map_err(|err| self.unreachable(ask.registry, &uri, err))?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && at_registry && !challenged {
                challenged = true;
                authorization = Some(self.answer_challenge(ask.registry, &response, &ask.what).await?);
                continue;
            }
            if status.is_redirection() && matches!(ask.method, Method::GET | Method::HEAD) {
                redirects += 1;
                let location = response.headers().get(LOCATION).and_then(|v| v.to_str().ok());
                let Some(location) = location.filter(|_| redirects <= MAX_REDIRECTS) else {
                    return Err(RegistryError::Invalid {
                        what: ask.what,
                        why: format!("more than {MAX_REDIRECTS} redirects, or one with no Location"),
                    });
                };
                uri = self
                    .absolute(ask.registry, location)
                    .map_err(|why| RegistryError::Invalid { what: ask.what.clone(), why })?;
                continue;
            }
            if status.is_success() {
                return Ok(response);
            }
            return Err(refusal(&ask, &uri, &response));
        }
    }

    fn scheme(&self, registry: &str) -> &'static str {
        if is_loopback(registry) || self.settings.plain_http.contains(registry) { "http" } else { "https" }
    }

    /// `location` (absolute, or a path on `registry`) as a URI.
    fn absolute(&self, registry: &str, location: &str) -> Result<Uri, String> {
        let text = if location.starts_with('/') {
            format!("{}://{registry}{location}", self.scheme(registry))
        } else {
            location.to_owned()
        };
        let uri: Uri = text.parse().map_err(|_| format!("`{location}` is not a URL"))?;
        match uri.scheme_str() {
            Some("https") => Ok(uri),
            // Plain HTTP only where the registry itself is spoken to so.
            Some("http") if self.scheme(registry) == "http" => Ok(uri),
            _ => Err(format!("it redirected to `{location}`, which is not https")),
        }
    }

    fn unreachable(&self, registry: &str, uri: &Uri, err: TransportError) -> RegistryError {
        if let TransportError::TooLarge { .. } = err {
            return RegistryError::Invalid { what: uri.to_string(), why: err.to_string() };
        }
        let hint = if self.scheme(registry) == "https" {
            " (toolcell speaks https to registries other than loopback ones; list one that speaks plain http under `plain_http` in the policy's [registries])"
        } else {
            ""
        };
        RegistryError::Unreachable {
            registry: registry.to_owned(),
            url: uri.to_string(),
            reason: err.to_string(),
            hint,
        }
    }

    fn cached_authorization(&self, registry: &str, path: &str) -> Option<HeaderValue> {
        let repository = repository_of(path)?;
        let tokens = self.tokens.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        tokens
            .iter()
            .find(|((r, scope), _)| r == registry && scope.split(' ').any(|s| s.contains(&format!(":{repository}:"))))
            .and_then(|(_, token)| HeaderValue::from_str(&format!("Bearer {token}")).ok())
    }

    /// Answers a `401`'s challenge: basic credentials as they are, or a bearer token from the
    /// realm it names.
    async fn answer_challenge(
        &self,
        registry: &str,
        response: &Response<Bytes>,
        what: &str,
    ) -> Result<HeaderValue, RegistryError> {
        let unauthorized = |detail: String| RegistryError::Unauthorized {
            registry: registry.to_owned(),
            what: what.to_owned(),
            status: response.status(),
            detail,
        };
        let credentials = self.settings.credentials.get(registry).or_else(|| {
            let host = registry.split(':').next().unwrap_or(registry);
            self.settings.credentials.get(host)
        });
        let challenge = response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        let (kind, params) = parse_challenge(challenge);
        let basic = credentials.map(|c| {
            let pair = base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", c.username, c.password));
            HeaderValue::from_str(&format!("Basic {pair}")).expect("base64 is header text")
        });
        if kind.eq_ignore_ascii_case("basic") {
            return basic.ok_or_else(|| unauthorized(": it asks for a user name and password".to_owned()));
        }
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err(unauthorized(format!(": it asks for `{challenge}`, which toolcell does not speak")));
        }
        let realm = params.get("realm").ok_or_else(|| unauthorized(": its challenge names no realm".to_owned()))?;
        let mut query = Vec::new();
        for key in ["service", "scope"] {
            if let Some(value) = params.get(key) {
                query.push(format!("{key}={}", encode_query(value)));
            }
        }
        let separator = if realm.contains('?') { '&' } else { '?' };
        let url = format!("{realm}{separator}{}", query.join("&"));
        let uri: Uri = url.parse().map_err(|_| unauthorized(format!(": its token realm `{realm}` is not a URL")))?;
        let transport_is_safe = uri.scheme_str() == Some("https")
            || uri
                .authority()
                .is_some_and(|a| is_loopback(a.as_str()) || self.settings.plain_http.contains(a.as_str()));
        let mut headers = HeaderMap::new();
        if let Some(basic) = basic {
            // Credentials never cross plain HTTP to a host that is not loopback or listed, and go
            // only to the registry's own host or its domain (Docker Hub's registry-1.docker.io
            // names auth.docker.io): a challenge cannot send them to a host of its choosing.
            if !transport_is_safe {
                return Err(unauthorized(format!(
                    ": its token realm `{realm}` is not https, so no credentials were sent"
                )));
            }
            if !uri.host().is_some_and(|host| realm_belongs_to(host, registry)) {
                return Err(unauthorized(format!(
                    ": its token realm `{realm}` is on another host than the registry, so no credentials were sent"
                )));
            }
            headers.insert(AUTHORIZATION, basic);
        }
        let token = transport::exchange(Method::GET, &uri, &headers, Bytes::new(), MAX_SMALL_BODY)
            .await
            .map_err(|err| self.unreachable(registry, &uri, err))?;
        if !token.status().is_success() {
            return Err(unauthorized(format!(": its token service answered {}", token.status())));
        }
        let body: serde_json::Value = serde_json::from_slice(token.body())
            .map_err(|err| unauthorized(format!(": its token service sent no JSON ({err})")))?;
        let token = body
            .get("token")
            .or_else(|| body.get("access_token"))
            .and_then(|t| t.as_str())
            .ok_or_else(|| unauthorized(": its token service sent no token".to_owned()))?;
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| unauthorized(": its token is not header text".to_owned()))?;
        if let Some(scope) = params.get("scope") {
            let mut tokens = self.tokens.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            tokens.insert((registry.to_owned(), scope.clone()), token.to_owned());
        }
        Ok(value)
    }
}

/// Whether a token realm on `host` may receive the credentials for `registry`: the same host,
/// or one in the registry's parent domain when that domain has a dot in it (`auth.docker.io`
/// for `registry-1.docker.io`; never all of `.io` for `ghcr.io`).
fn realm_belongs_to(host: &str, registry: &str) -> bool {
    let registry_host = registry
        .rsplit_once(':')
        .map_or(registry, |(host, port)| if port.bytes().all(|b| b.is_ascii_digit()) { host } else { registry });
    if host.eq_ignore_ascii_case(registry_host) {
        return true;
    }
    if registry_host.parse::<std::net::IpAddr>().is_ok() {
        return false;
    }
    registry_host.split_once('.').is_some_and(|(_, parent)| {
        parent.contains('.') && host.to_ascii_lowercase().ends_with(&format!(".{}", parent.to_ascii_lowercase()))
    })
}

/// The tag a registry without the referrers API keeps `digest`'s referrers index under.
pub fn referrers_tag(digest: &Digest) -> String {
    format!("sha256-{}", digest.hex())
}

/// A registry on this machine: `localhost`, `127.x.x.x`, with any port.
pub fn is_loopback(registry: &str) -> bool {
    let host = registry
        .rsplit_once(':')
        .map_or(registry, |(host, port)| if port.bytes().all(|b| b.is_ascii_digit()) { host } else { registry });
    host == "localhost" || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// The repository a `/v2/REPO/(manifests|blobs)/…` path is about.
fn repository_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/v2/")?;
    ["/manifests/", "/blobs/"].iter().find_map(|part| rest.find(part).map(|at| &rest[..at]))
}

/// `Bearer realm="…",service="…"` as its scheme and parameters.
fn parse_challenge(header: &str) -> (String, BTreeMap<String, String>) {
    let (kind, rest) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
    let mut params = BTreeMap::new();
    let mut rest = rest.trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(',').trim().to_ascii_lowercase();
        let after = after.trim_start();
        let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            (&quoted[..end], quoted.get(end + 1..).unwrap_or_default())
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        params.insert(key, value.to_owned());
        rest = remaining.trim_start().trim_start_matches(',').trim_start();
    }
    (kind.to_owned(), params)
}

fn encode_query(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b':' | b',' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// What a manifest's own bytes say it is: an index (it lists `manifests`) or an image manifest
/// (it has `layers` or a `config`), never both, and its `mediaType`, when it has one, agreeing.
fn media_type_inside(bytes: &[u8]) -> Result<String, String> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Shape {
        media_type: Option<String>,
        manifests: Option<serde_json::Value>,
        layers: Option<serde_json::Value>,
        config: Option<serde_json::Value>,
    }
    let shape: Shape = serde_json::from_slice(bytes).map_err(|err| format!("it is not a manifest: {err}"))?;
    let is_image = shape.layers.is_some() || shape.config.is_some();
    let shaped = match (shape.manifests.is_some(), is_image) {
        (true, true) => return Err("it is both an index and an image manifest: refused as ambiguous".to_owned()),
        (true, false) => INDEX_MEDIA_TYPE,
        (false, _) => MANIFEST_MEDIA_TYPE,
    };
    let docker_name = match shaped {
        INDEX_MEDIA_TYPE => "application/vnd.docker.distribution.manifest.list.v2+json",
        _ => "application/vnd.docker.distribution.manifest.v2+json",
    };
    match shape.media_type.as_deref() {
        None => Ok(shaped.to_owned()),
        // Docker's media types name the same shapes.
        Some(said) if said == shaped || said == docker_name => Ok(shaped.to_owned()),
        Some(said) => Err(format!("it says it is `{said}` but is shaped as `{shaped}`")),
    }
}

/// The index entry for components: `wasm`, or the only entry.
fn pick_wasm_entry(entries: &[Descriptor]) -> Option<&Descriptor> {
    entries
        .iter()
        .find(|entry| entry.platform.as_ref().is_some_and(|p| p.architecture == "wasm"))
        .or(if entries.len() == 1 { entries.first() } else { None })
}

pub(crate) fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, RegistryError> {
    serde_json::from_slice(bytes).map_err(|err| RegistryError::Invalid { what: what.to_owned(), why: err.to_string() })
}

/// The error for a response outside 2xx, with the registry's own error codes.
fn refusal(ask: &Ask<'_>, uri: &Uri, response: &Response<Bytes>) -> RegistryError {
    let status = response.status();
    let detail = registry_words(response.body());
    match status {
        StatusCode::NOT_FOUND => RegistryError::NotFound { what: ask.what.clone(), status, detail },
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            RegistryError::Unauthorized { registry: ask.registry.to_owned(), what: ask.what.clone(), status, detail }
        }
        _ => RegistryError::Refused { method: ask.method.clone(), url: uri.to_string(), status, detail },
    }
}

/// `: CODE: message` from a distribution-spec error body, cut short.
fn registry_words(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Errors {
        errors: Vec<ErrorEntry>,
    }
    #[derive(serde::Deserialize)]
    struct ErrorEntry {
        code: Option<String>,
        message: Option<String>,
    }
    let Ok(errors) = serde_json::from_slice::<Errors>(body) else { return String::new() };
    let words: Vec<String> = errors
        .errors
        .iter()
        .take(3)
        .map(|e| {
            let text =
                format!("{} {}", e.code.as_deref().unwrap_or_default(), e.message.as_deref().unwrap_or_default());
            crate::text::shown(text.trim(), 200)
        })
        .collect();
    if words.is_empty() { String::new() } else { format!(": {}", words.join("; ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_as_registries_write_them() {
        let (kind, params) = parse_challenge(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/x:pull,push""#,
        );
        assert_eq!(kind, "Bearer");
        assert_eq!(params["realm"], "https://auth.docker.io/token");
        assert_eq!(params["service"], "registry.docker.io");
        assert_eq!(params["scope"], "repository:library/x:pull,push");
        let (kind, params) = parse_challenge(r#"Basic realm="Registry Realm""#);
        assert_eq!(kind, "Basic");
        assert_eq!(params["realm"], "Registry Realm");
    }

    #[test]
    fn only_registries_on_this_machine_are_loopback() {
        for registry in ["localhost", "localhost:5000", "127.0.0.1:5000", "127.1.2.3"] {
            assert!(is_loopback(registry), "{registry}");
        }
        for registry in ["ghcr.io", "localhost.evil.com:5000", "127.0.0.1.nip.io", "10.0.0.1:5000"] {
            assert!(!is_loopback(registry), "{registry}");
        }
    }

    #[test]
    fn a_redirect_away_from_https_is_refused() {
        let client = RegistryClient::default();
        assert!(client.absolute("ghcr.io", "http://storage.example/blob").is_err());
        assert!(client.absolute("ghcr.io", "https://storage.example/blob").is_ok());
        assert_eq!(client.absolute("ghcr.io", "/v2/x/blobs/uploads/1").expect("path").scheme_str(), Some("https"));
        assert_eq!(
            client.absolute("127.0.0.1:5000", "/v2/x/blobs/uploads/1").expect("path").scheme_str(),
            Some("http")
        );
    }

    #[test]
    fn a_document_is_what_its_bytes_say_never_what_a_header_says_and_never_both() {
        let image = br#"{"schemaVersion":2,"config":{},"layers":[]}"#;
        let index = br#"{"schemaVersion":2,"manifests":[]}"#;
        assert_eq!(media_type_inside(image).expect("image"), MANIFEST_MEDIA_TYPE);
        assert_eq!(media_type_inside(index).expect("index"), INDEX_MEDIA_TYPE);
        let both = br#"{"schemaVersion":2,"config":{},"layers":[],"manifests":[]}"#;
        assert!(media_type_inside(both).expect_err("polyglot").contains("both"));
        let lying = br#"{"mediaType":"application/vnd.oci.image.index.v1+json","layers":[]}"#;
        assert!(media_type_inside(lying).expect_err("lying").contains("shaped as"));
    }

    #[test]
    fn credentials_go_only_to_a_realm_of_the_registrys_own_host_or_domain() {
        assert!(realm_belongs_to("ghcr.io", "ghcr.io"));
        assert!(realm_belongs_to("auth.docker.io", "registry-1.docker.io"));
        assert!(realm_belongs_to("127.0.0.1", "127.0.0.1:5000"));
        assert!(!realm_belongs_to("evil.io", "ghcr.io"), "not all of .io");
        assert!(!realm_belongs_to("127.0.0.2", "127.0.0.1:5000"));
        assert!(!realm_belongs_to("auth.docker.io.evil.com", "registry-1.docker.io"));
    }

    #[test]
    fn a_registry_error_body_becomes_its_own_words() {
        let body = br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{}}]}"#;
        assert_eq!(registry_words(body), ": MANIFEST_UNKNOWN manifest unknown");
        assert_eq!(registry_words(b"<html>"), "");
        assert_eq!(repository_of("/v2/team/tools/x/manifests/1.0"), Some("team/tools/x"));
    }
}
