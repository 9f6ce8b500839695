//! The issuer's signing keys: its JWKS, found through its metadata (RFC 8414, else OpenID
//! discovery) unless the operator names it, fetched over https (or loopback http), bounded,
//! and cached. A token naming a key the cache lacks fetches the set again (the issuer rotated
//! its keys), at most as often as a small bucket allows, so a flood of made-up key ids cannot
//! turn the server into a flood of requests to the issuer.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Uri, header};
use ring::signature::{self, UnparsedPublicKey};
use serde_json::Value;

use super::jwt::{Algorithm, TokenError};

/// The largest metadata document or key set read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// How long fetching a document may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The most keys kept from a set.
const MAX_KEYS: usize = 64;
/// How long a fetched key set is used before it is fetched again (a retired key stops working
/// at most this long after the issuer drops it).
const KEYS_TTL: Duration = Duration::from_secs(300);
/// After a failed fetch, how long the cached keys serve before the next try.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(30);
/// After a failed fetch with no keys at all, how long requests are refused before the next try
/// (without it, every request, forged ones included, would make the server ask the issuer).
const RETRY_WITHOUT_KEYS: Duration = Duration::from_secs(5);
/// Fetches an unknown key id may trigger at once, and how fast that allowance comes back.
const REFETCH_BURST: f64 = 2.0;
const REFETCH_EVERY: Duration = Duration::from_secs(10);

/// One public key of the issuer's.
#[derive(Debug, Clone)]
pub(crate) struct Jwk {
    kid: Option<String>,
    /// The JWK's `alg`, when it names one: the key is used with that algorithm only.
    alg: Option<String>,
    material: Material,
}

#[derive(Debug, Clone)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The uncompressed point `04 || x || y`.
    P256(Vec<u8>),
    P384(Vec<u8>),
    Ed25519(Vec<u8>),
}

impl Jwk {
    /// The key from its JWK, or `None` for a key of no kind used here (an encryption key, a
    /// symmetric one, a curve not supported): such keys are skipped, not an error.
    fn parse(jwk: &Value) -> Option<Self> {
        if jwk.get("use").and_then(Value::as_str).is_some_and(|usage| usage != "sig") {
            return None;
        }
        let bytes = |field: &str| URL_SAFE_NO_PAD.decode(jwk.get(field)?.as_str()?).ok();
        let material = match (jwk.get("kty")?.as_str()?, jwk.get("crv").and_then(Value::as_str)) {
            ("RSA", _) => Material::Rsa { n: bytes("n")?, e: bytes("e")? },
            ("EC", Some(curve @ ("P-256" | "P-384"))) => {
                let (x, y) = (bytes("x")?, bytes("y")?);
                let size = if curve == "P-256" { 32 } else { 48 };
                if x.len() != size || y.len() != size {
                    return None;
                }
                let point = [&[4_u8][..], &x[..], &y[..]].concat();
                if size == 32 { Material::P256(point) } else { Material::P384(point) }
            }
            ("OKP", Some("Ed25519")) => Material::Ed25519(bytes("x")?),
            _ => return None,
        };
        Some(Self {
            kid: jwk.get("kid").and_then(Value::as_str).map(str::to_owned),
            alg: jwk.get("alg").and_then(Value::as_str).map(str::to_owned),
            material,
        })
    }

    /// Checks `signature` over `signed` with this key, by `algorithm` — which must fit the key
    /// (and the JWK's own `alg`, when it names one).
    pub(crate) fn verify(&self, algorithm: Algorithm, signed: &[u8], signature: &[u8]) -> Result<(), TokenError> {
        if self.alg.as_deref().is_some_and(|alg| alg != algorithm.name()) {
            return Err(TokenError::KeyMismatch(algorithm.name()));
        }
        let verified = match (&self.material, algorithm) {
            (Material::Rsa { n, e }, Algorithm::Rs256) => signature::RsaPublicKeyComponents { n, e }.verify(
                &signature::RSA_PKCS1_2048_8192_SHA256,
                signed,
                signature,
            ),
            (Material::Rsa { n, e }, Algorithm::Ps256) => signature::RsaPublicKeyComponents { n, e }.verify(
                &signature::RSA_PSS_2048_8192_SHA256,
                signed,
                signature,
            ),
            (Material::P256(point), Algorithm::Es256) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point).verify(signed, signature)
            }
            (Material::P384(point), Algorithm::Es384) => {
                UnparsedPublicKey::new(&signature::ECDSA_P384_SHA384_FIXED, point).verify(signed, signature)
            }
            (Material::Ed25519(x), Algorithm::EdDsa) => {
                UnparsedPublicKey::new(&signature::ED25519, x).verify(signed, signature)
            }
            _ => return Err(TokenError::KeyMismatch(algorithm.name())),
        };
        verified.map_err(|_| TokenError::Signature)
    }
}

/// A key set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keys(Vec<Jwk>);

impl Keys {
    /// The usable keys of a JWKS document (`{"keys": [...]}`).
    pub(crate) fn from_jwks(document: &Value) -> Result<Self, String> {
        let keys = document.get("keys").and_then(Value::as_array).ok_or("the document has no `keys` list")?;
        Ok(Self(keys.iter().filter_map(Jwk::parse).take(MAX_KEYS).collect()))
    }

    pub(crate) fn by_id(&self, kid: &str) -> Option<&Jwk> {
        self.0.iter().find(|key| key.kid.as_deref() == Some(kid))
    }

    /// The key, when the set has exactly one.
    pub(crate) fn only(&self) -> Option<&Jwk> {
        match self.0.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Where the keys come from.
#[derive(Debug, Clone)]
pub(crate) enum KeySource {
    /// The JWKS at this URL.
    Jwks(Uri),
    /// The `jwks_uri` of this issuer's metadata.
    Issuer(String),
}

/// The cached keys, and when to fetch them again.
#[derive(Debug)]
pub(crate) struct KeyCache {
    source: KeySource,
    state: Mutex<State>,
    /// One fetch at a time: requests that need new keys wait for it rather than each fetching.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Debug)]
struct State {
    keys: Arc<Keys>,
    /// When the keys should be fetched again, whatever the tokens say.
    stale_at: Option<Instant>,
    /// The allowance for fetches that unknown key ids trigger.
    refetches: f64,
    refilled: Instant,
    jwks_uri: Option<Uri>,
    /// With no keys, the last failure and until when no fetch is tried again.
    failed: Option<(KeysUnavailable, Instant)>,
}

/// Why the keys could not be had.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the issuer's keys could not be fetched: {0}")]
pub(crate) struct KeysUnavailable(pub(crate) String);

impl KeyCache {
    pub(crate) fn new(source: KeySource) -> Self {
        let jwks_uri = match &source {
            KeySource::Jwks(uri) => Some(uri.clone()),
            KeySource::Issuer(_) => None,
        };
        Self {
            source,
            state: Mutex::new(State {
                keys: Arc::default(),
                stale_at: None,
                refetches: REFETCH_BURST,
                refilled: Instant::now(),
                jwks_uri,
                failed: None,
            }),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The keys to check a token with: the cached ones while fresh, else fetched again.
    pub(crate) async fn current(&self) -> Result<Arc<Keys>, KeysUnavailable> {
        let (keys, stale) = {
            let state = self.lock();
            (state.keys.clone(), state.stale_at.is_none_or(|at| Instant::now() >= at))
        };
        if !stale {
            return Ok(keys);
        }
        self.refresh(None).await
    }

    /// The keys fetched again because a token named a key the cache lacks, if the allowance
    /// permits; else the cached keys.
    pub(crate) async fn after_unknown_key(&self, seen: &Arc<Keys>) -> Result<Arc<Keys>, KeysUnavailable> {
        {
            let mut state = self.lock();
            let now = Instant::now();
            let earned = now.duration_since(state.refilled).as_secs_f64() / REFETCH_EVERY.as_secs_f64();
            state.refetches = (state.refetches + earned).min(REFETCH_BURST);
            state.refilled = now;
            if state.refetches < 1.0 {
                return Ok(state.keys.clone());
            }
            state.refetches -= 1.0;
        }
        self.refresh(Some(seen)).await
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Fetches the keys, unless another request did while this one waited (`seen` is what
    /// the caller saw; anything newer is taken as is).
    async fn refresh(&self, seen: Option<&Arc<Keys>>) -> Result<Arc<Keys>, KeysUnavailable> {
        let _one = self.fetching.lock().await;
        {
            let state = self.lock();
            let fresh = state.stale_at.is_some_and(|at| Instant::now() < at);
            let newer = seen.is_some_and(|seen| !Arc::ptr_eq(seen, &state.keys));
            if (seen.is_none() && fresh) || newer {
                return Ok(state.keys.clone());
            }
            if let Some((err, until)) = &state.failed
                && Instant::now() < *until
            {
                return Err(err.clone());
            }
        }
        let jwks_uri = self.lock().jwks_uri.clone();
        let fetched = async {
            let uri = match (jwks_uri, &self.source) {
                (Some(uri), _) => uri,
                (None, KeySource::Jwks(uri)) => uri.clone(),
                (None, KeySource::Issuer(issuer)) => {
                    let uri = discover(issuer).await?;
                    self.lock().jwks_uri = Some(uri.clone());
                    uri
                }
            };
            let document = fetch_json(&uri).await?;
            Keys::from_jwks(&document).map_err(|err| KeysUnavailable(format!("{uri}: {err}")))
        }
        .await;
        let mut state = self.lock();
        match fetched {
            Ok(keys) => {
                tracing::debug!(keys = keys.len(), "fetched the issuer's keys");
                state.failed = None;
                state.keys = Arc::new(keys);
                state.stale_at = Some(Instant::now() + KEYS_TTL);
                Ok(state.keys.clone())
            }
            Err(err) if !state.keys.is_empty() => {
                // The issuer is unreachable: the keys it published a moment ago still stand.
                tracing::warn!(%err, "using the issuer's keys fetched before");
                state.stale_at = Some(Instant::now() + RETRY_AFTER_FAILURE);
                Ok(state.keys.clone())
            }
            Err(err) => {
                tracing::warn!(%err, "no keys to check tokens with; trying again in {} s", RETRY_WITHOUT_KEYS.as_secs());
                state.failed = Some((err.clone(), Instant::now() + RETRY_WITHOUT_KEYS));
                Err(err)
            }
        }
    }
}

/// The issuer's `jwks_uri`, from its authorization server metadata (RFC 8414), else its
/// OpenID Provider configuration; the document must name the same issuer (a mix-up defence,
/// RFC 8414 §3.3).
async fn discover(issuer: &str) -> Result<Uri, KeysUnavailable> {
    let mut reasons = Vec::new();
    for document in metadata_urls(issuer)? {
        match fetch_json(&document).await {
            Ok(metadata) => {
                if metadata.get("issuer").and_then(Value::as_str) != Some(issuer) {
                    return Err(KeysUnavailable(format!("{document} names another issuer than `{issuer}`")));
                }
                let jwks = metadata
                    .get("jwks_uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| KeysUnavailable(format!("{document} has no jwks_uri")))?;
                return checked_url(jwks);
            }
            Err(err) => reasons.push(err.0),
        }
    }
    Err(KeysUnavailable(reasons.join("; ")))
}

/// RFC 8414's URL (the well-known path inserted before the issuer's path), then OpenID
/// discovery's (appended).
fn metadata_urls(issuer: &str) -> Result<[Uri; 2], KeysUnavailable> {
    let uri = checked_url(issuer)?;
    let origin = format!("{}://{}", uri.scheme_str().unwrap_or("https"), uri.authority().map_or("", |a| a.as_str()));
    let path = uri.path().trim_end_matches('/');
    let oauth = checked_url(&format!("{origin}/.well-known/oauth-authorization-server{path}"))?;
    let openid = checked_url(&format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/')))?;
    Ok([oauth, openid])
}

/// `url` parsed, if it is https, or http to a loopback address (a test issuer).
pub(crate) fn checked_url(url: &str) -> Result<Uri, KeysUnavailable> {
    let uri: Uri = url.parse().map_err(|_| KeysUnavailable(format!("`{url}` is not a URL")))?;
    let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if loopback => Ok(uri),
        _ => Err(KeysUnavailable(format!("`{url}` is not https (plain http is accepted for loopback only)"))),
    }
}

async fn fetch_json(uri: &Uri) -> Result<Value, KeysUnavailable> {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    let exchange = toolcell_oci::transport::exchange(Method::GET, uri, &headers, Bytes::new(), MAX_DOCUMENT_BYTES);
    // Requests wait for this: a slow issuer must not hold them for long.
    let response = tokio::time::timeout(FETCH_TIMEOUT, exchange)
        .await
        .map_err(|_| KeysUnavailable(format!("{uri}: no whole answer within {} s", FETCH_TIMEOUT.as_secs())))?
        .map_err(|err| KeysUnavailable(format!("{uri}: {err}")))?;
    if !response.status().is_success() {
        return Err(KeysUnavailable(format!("{uri} answered {}", response.status())));
    }
    serde_json::from_slice(response.body()).map_err(|err| KeysUnavailable(format!("{uri}: not JSON: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_of_other_uses_and_kinds_are_skipped() {
        let keys = Keys::from_jwks(&json!({"keys": [
            {"kty": "RSA", "use": "enc", "kid": "e", "n": "AQAB", "e": "AQAB"},
            {"kty": "oct", "kid": "s", "k": "c2VjcmV0"},
            {"kty": "EC", "crv": "P-256", "kid": "short", "x": "AQ", "y": "AQ"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
        ]}))
        .unwrap();
        assert_eq!(keys.len(), 1);
        assert!(keys.by_id("ed").is_some() && keys.by_id("s").is_none());
        assert!(Keys::from_jwks(&json!({"nokeys": []})).is_err());
    }

    #[test]
    fn metadata_is_found_where_rfc_8414_and_openid_put_it() {
        let [oauth, openid] = metadata_urls("https://id.example.com/realms/acme").unwrap();
        assert_eq!(oauth.to_string(), "https://id.example.com/.well-known/oauth-authorization-server/realms/acme");
        assert_eq!(openid.to_string(), "https://id.example.com/realms/acme/.well-known/openid-configuration");
        assert!(checked_url("http://id.example.com").is_err(), "plain http off loopback");
        assert!(checked_url("http://127.0.0.1:9000").is_ok());
    }
}
