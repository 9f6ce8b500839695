//! JWT access tokens (RFC 9068) as a resource server checks them: a compact JWS whose header
//! names an algorithm from a short list (never `none`, never HMAC: the server holds no shared
//! secret) and a key of the issuer's JWKS, whose signature verifies with that key, and whose
//! claims name this issuer, this resource as audience, and a time the token is good for.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::Value;

use super::jwks::{Jwk, Keys};

/// The longest token accepted, in bytes: a JWT is a few hundred bytes to a few KiB.
pub(crate) const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The signature algorithms accepted. Asymmetric only: an HMAC token (`HS256`) would need the
/// secret the issuer signs with, and an attacker who learns a public key must not be able to
/// pass it off as one (the classic RS256→HS256 confusion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algorithm {
    Rs256,
    Ps256,
    Es256,
    Es384,
    EdDsa,
}

impl Algorithm {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "RS256" => Self::Rs256,
            "PS256" => Self::Ps256,
            "ES256" => Self::Es256,
            "ES384" => Self::Es384,
            "EdDSA" => Self::EdDsa,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Ps256 => "PS256",
            Self::Es256 => "ES256",
            Self::Es384 => "ES384",
            Self::EdDsa => "EdDSA",
        }
    }
}

/// Why a token is refused: said to the client (in `WWW-Authenticate`'s `error_description`)
/// and logged, never with the token itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TokenError {
    #[error("the token is not a JWT (three base64url parts separated by dots)")]
    Malformed,
    #[error("the token is longer than {MAX_TOKEN_BYTES} bytes")]
    TooLong,
    #[error("the token's algorithm `{0}` is not accepted (accepted: RS256, PS256, ES256, ES384, EdDSA)")]
    Algorithm(String),
    #[error("the token's type `{0}` is not an access token (at+jwt)")]
    Type(String),
    #[error("the token names no key (`kid`) and the issuer has more than one")]
    NoKeyId,
    #[error("the token's key `{0}` is not among the issuer's keys")]
    UnknownKey(String),
    #[error("the token's key does not fit its algorithm {0}")]
    KeyMismatch(&'static str),
    #[error("the token's signature does not verify")]
    Signature,
    #[error("the token was issued by `{found}`, not by `{expected}`")]
    Issuer { found: String, expected: String },
    #[error("the token is not for this server: its audience does not include `{0}`")]
    Audience(String),
    #[error("the token has expired")]
    Expired,
    #[error("the token has no expiry (`exp`)")]
    NoExpiry,
    #[error("the token is not valid yet (`nbf`)")]
    NotYetValid,
}

/// What a verified token says about its bearer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claims {
    /// `sub`: whom the token is about (a user, or the client itself).
    pub(crate) subject: Option<String>,
    /// `client_id` (RFC 9068), else `azp`: the client that holds it.
    pub(crate) client_id: Option<String>,
    /// `scope` (space-separated) or `scp` (a list).
    pub(crate) scopes: Vec<String>,
    /// `exp`, seconds since the epoch.
    pub(crate) expires: u64,
}

/// What a token must say besides a good signature.
#[derive(Debug, Clone)]
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) audience: &'a str,
    pub(crate) leeway: Duration,
    pub(crate) now: SystemTime,
}

#[derive(Debug, Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    typ: Option<String>,
}

/// A JSON object's fields, or `Malformed`: a header or claims set is an object (RFC 7519), never
/// an array read field by field.
fn object<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<(T, serde_json::Map<String, Value>), TokenError> {
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(bytes) else { return Err(TokenError::Malformed) };
    let typed = serde_json::from_value(Value::Object(fields.clone())).map_err(|_| TokenError::Malformed)?;
    Ok((typed, fields))
}

/// Text from a token, fit to quote in an error, a header or a log line: control characters and
/// anything past ASCII become `?`, and it is cut to 64 characters.
fn shown(text: &str) -> String {
    text.chars().take(64).map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).collect()
}

/// The parts of a token, decoded but not yet trusted.
#[derive(Debug)]
pub(crate) struct Unverified<'a> {
    pub(crate) algorithm: Algorithm,
    pub(crate) key_id: Option<String>,
    signed: &'a [u8],
    signature: Vec<u8>,
    payload: Vec<u8>,
}

/// Splits and decodes `token`, checking its header: the algorithm is one accepted and the type,
/// when given, is an access token's.
pub(crate) fn decode(token: &str) -> Result<Unverified<'_>, TokenError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(TokenError::TooLong);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let decoded = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| TokenError::Malformed);
    let (header, fields): (Header, _) = object(&decoded(header)?)?;
    // An extension this server does not know must not be ignored (RFC 7515 §4.1.11).
    if fields.contains_key("crit") {
        return Err(TokenError::Malformed);
    }
    let algorithm = Algorithm::from_name(&header.alg).ok_or_else(|| TokenError::Algorithm(shown(&header.alg)))?;
    // RFC 9068: `at+jwt` (or its long form). Tokens of other kinds (an ID token, a logout
    // token) are refused; many issuers write plain `JWT`, which says nothing either way.
    if let Some(typ) = &header.typ
        && !["at+jwt", "application/at+jwt", "jwt"].contains(&typ.to_ascii_lowercase().as_str())
    {
        return Err(TokenError::Type(shown(typ)));
    }
    let signed_len = token.len() - signature.len() - 1;
    Ok(Unverified {
        algorithm,
        key_id: header.kid,
        signed: &token.as_bytes()[..signed_len],
        signature: decoded(signature)?,
        payload: decoded(payload)?,
    })
}

impl Unverified<'_> {
    /// The key the token names among `keys`: by `kid`, or the only key there is.
    pub(crate) fn key<'k>(&self, keys: &'k Keys) -> Result<&'k Jwk, TokenError> {
        match &self.key_id {
            Some(kid) => keys.by_id(kid).ok_or_else(|| TokenError::UnknownKey(shown(kid))),
            None => keys.only().ok_or(TokenError::NoKeyId),
        }
    }

    /// Verifies the signature with `key`, then the claims against `expected`.
    pub(crate) fn verify(&self, key: &Jwk, expected: &Expected<'_>) -> Result<Claims, TokenError> {
        key.verify(self.algorithm, self.signed, &self.signature)?;
        claims(&self.payload, expected)
    }
}

#[derive(Debug, Deserialize)]
struct RawClaims {
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    aud: Option<Audience>,
    #[serde(default)]
    exp: Option<f64>,
    #[serde(default)]
    nbf: Option<f64>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Scopes>,
}

/// `scp` as a list, or as one space-separated string (Microsoft Entra writes it so).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scopes {
    Listed(Vec<String>),
    Spaced(String),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

fn claims(payload: &[u8], expected: &Expected<'_>) -> Result<Claims, TokenError> {
    let (raw, _): (RawClaims, _) = object(payload)?;
    let issuer = raw.iss.unwrap_or_default();
    if issuer != expected.issuer {
        return Err(TokenError::Issuer { found: shown(&issuer), expected: expected.issuer.to_owned() });
    }
    let audiences = match raw.aud {
        Some(Audience::One(one)) => vec![one],
        Some(Audience::Many(many)) => many,
        None => Vec::new(),
    };
    if !audiences.iter().any(|audience| audience == expected.audience) {
        return Err(TokenError::Audience(expected.audience.to_owned()));
    }
    let now = expected.now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    let leeway = expected.leeway.as_secs_f64();
    let expires = raw.exp.filter(|exp| exp.is_finite()).ok_or(TokenError::NoExpiry)?;
    if expires + leeway <= now {
        return Err(TokenError::Expired);
    }
    if raw.nbf.is_some_and(|nbf| !nbf.is_finite() || nbf - leeway > now) {
        return Err(TokenError::NotYetValid);
    }
    // Scopes are separated by spaces only (RFC 6749 §3.3): a tab is part of a scope.
    let spaced = |scope: &str| scope.split(' ').filter(|scope| !scope.is_empty()).map(str::to_owned).collect();
    let scopes = match (raw.scope, raw.scp) {
        (Some(scope), _) => spaced(&scope),
        (None, Some(Scopes::Listed(scopes))) => scopes,
        (None, Some(Scopes::Spaced(scope))) => spaced(&scope),
        (None, None) => Vec::new(),
    };
    Ok(Claims {
        subject: raw.sub,
        client_id: raw.client_id.or(raw.azp),
        scopes,
        // Finite, checked above; seconds since the epoch fit.
        expires: expires.max(0.0) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
    use serde_json::json;

    /// An ES256 key pair and its JWK, for tokens signed in the tests.
    struct TestKey {
        pair: EcdsaKeyPair,
        kid: String,
    }

    impl TestKey {
        fn new(kid: &str) -> Self {
            let random = SystemRandom::new();
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
            let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random).unwrap();
            Self { pair, kid: kid.to_owned() }
        }

        fn jwk(&self) -> Value {
            let point = self.pair.public_key().as_ref();
            json!({
                "kty": "EC", "crv": "P-256", "kid": self.kid, "alg": "ES256", "use": "sig",
                "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
            })
        }

        fn sign(&self, header: &Value, claims: &Value) -> String {
            let signed = format!(
                "{}.{}",
                URL_SAFE_NO_PAD.encode(header.to_string()),
                URL_SAFE_NO_PAD.encode(claims.to_string())
            );
            let signature = self.pair.sign(&SystemRandom::new(), signed.as_bytes()).unwrap();
            format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
        }

        fn token(&self, claims: &Value) -> String {
            self.sign(&json!({"alg": "ES256", "typ": "at+jwt", "kid": self.kid}), claims)
        }
    }

    const ISSUER: &str = "https://id.example.com";
    const RESOURCE: &str = "https://tools.example.com/mcp";

    fn now() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    fn good_claims() -> Value {
        json!({
            "iss": ISSUER, "aud": RESOURCE, "sub": "alice", "client_id": "agent-1",
            "scope": "tools.math openid", "exp": now() + 300, "iat": now(),
        })
    }

    fn check(key: &TestKey, token: &str) -> Result<Claims, TokenError> {
        let keys = Keys::from_jwks(&json!({ "keys": [key.jwk()] })).unwrap();
        let expected =
            Expected { issuer: ISSUER, audience: RESOURCE, leeway: Duration::from_secs(60), now: SystemTime::now() };
        let unverified = decode(token)?;
        unverified.verify(unverified.key(&keys)?, &expected)
    }

    #[test]
    fn a_good_token_says_who_holds_it_and_what_it_may_do() {
        let key = TestKey::new("k1");
        let claims = check(&key, &key.token(&good_claims())).unwrap();
        assert_eq!(claims.subject.as_deref(), Some("alice"));
        assert_eq!(claims.client_id.as_deref(), Some("agent-1"));
        assert_eq!(claims.scopes, ["tools.math", "openid"]);
    }

    #[test]
    fn scopes_are_separated_by_spaces_only_and_scp_may_be_a_string() {
        let key = TestKey::new("k1");
        let with = |field: &str, value: Value| {
            let mut claims = good_claims();
            claims.as_object_mut().unwrap().remove("scope");
            claims[field] = value;
            check(&key, &key.token(&claims)).unwrap().scopes
        };
        assert_eq!(with("scope", json!("x\ttools.all")), ["x\ttools.all"]);
        assert_eq!(with("scp", json!("tools.math  openid")), ["tools.math", "openid"]);
        assert_eq!(with("scp", json!(["tools.math"])), ["tools.math"]);
    }

    #[test]
    fn wrong_issuer_audience_or_time_is_refused() {
        let key = TestKey::new("k1");
        let with = |field: &str, value: Value| {
            let mut claims = good_claims();
            claims[field] = value;
            check(&key, &key.token(&claims)).unwrap_err()
        };
        assert!(matches!(with("iss", json!("https://evil.example.com")), TokenError::Issuer { .. }));
        assert_eq!(with("aud", json!("https://other.example.com/mcp")), TokenError::Audience(RESOURCE.into()));
        assert_eq!(
            with("aud", json!(["account", "https://tools.example.com/mcp/"])),
            TokenError::Audience(RESOURCE.into())
        );
        assert_eq!(with("exp", json!(now() - 120)), TokenError::Expired);
        assert_eq!(with("exp", Value::Null), TokenError::NoExpiry);
        assert_eq!(with("nbf", json!(now() + 600)), TokenError::NotYetValid);
        let mut many = good_claims();
        many["aud"] = json!(["account", RESOURCE]);
        assert!(check(&key, &key.token(&many)).is_ok(), "one of several audiences is enough");
    }

    #[test]
    fn forged_tokens_are_refused() {
        let key = TestKey::new("k1");
        let claims = good_claims();
        // `alg: none`, with or without a signature part.
        let none = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "at+jwt"}).to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        assert_eq!(check(&key, &none).unwrap_err(), TokenError::Algorithm("none".into()));
        // HS256 signed with the public key as the secret.
        let hs = key.sign(&json!({"alg": "HS256", "kid": "k1"}), &claims);
        assert_eq!(check(&key, &hs).unwrap_err(), TokenError::Algorithm("HS256".into()));
        // Another key, claiming the trusted key's id.
        let other = TestKey::new("k1");
        assert_eq!(check(&key, &other.token(&claims)).unwrap_err(), TokenError::Signature);
        // A key the issuer never published.
        let stranger = TestKey::new("k2");
        assert_eq!(check(&key, &stranger.token(&claims)).unwrap_err(), TokenError::UnknownKey("k2".into()));
        // The claims changed after signing.
        let token = key.token(&claims);
        let mut parts: Vec<&str> = token.split('.').collect();
        let mut richer = claims.clone();
        richer["scope"] = json!("tools.math tools.admin");
        let payload = URL_SAFE_NO_PAD.encode(richer.to_string());
        parts[1] = &payload;
        assert_eq!(check(&key, &parts.join(".")).unwrap_err(), TokenError::Signature);
        // An ID token.
        let id_token = key.sign(&json!({"alg": "ES256", "kid": "k1", "typ": "id_token+jwt"}), &claims);
        assert_eq!(check(&key, &id_token).unwrap_err(), TokenError::Type("id_token+jwt".into()));
        // RS256 named for an EC key.
        let confused = key.sign(&json!({"alg": "RS256", "kid": "k1"}), &claims);
        assert_eq!(check(&key, &confused).unwrap_err(), TokenError::KeyMismatch("RS256"));
        // `crit`, even null: an extension this server cannot honour.
        let critical = key.sign(&json!({"alg": "ES256", "kid": "k1", "crit": null}), &claims);
        assert_eq!(check(&key, &critical).unwrap_err(), TokenError::Malformed);
        // Claims as an array, which serde would read field by field.
        let positional = json!([ISSUER, RESOURCE, now() + 300, null, "alice", "agent-1", null, "tools.all"]);
        assert_eq!(check(&key, &key.token(&positional)).unwrap_err(), TokenError::Malformed);
        // A key id with a line break and an escape, to forge a log line: shown harmlessly.
        let sneaky = TestKey::new("k1");
        let token = sneaky.sign(&json!({"alg": "ES256", "kid": "x\n2026 INFO forged\u{1b}[31m"}), &claims);
        let TokenError::UnknownKey(shown) = check(&key, &token).unwrap_err() else { panic!("unknown key") };
        assert!(shown.chars().all(|c| c.is_ascii_graphic() || c == ' '), "{shown:?}");
        for junk in ["", "a.b", "a.b.c.d", "!!.??.**", &"a".repeat(MAX_TOKEN_BYTES + 1)] {
            assert!(check(&key, junk).is_err(), "{junk:.20}");
        }
    }
}
