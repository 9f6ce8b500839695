//! `serve --transport http` as an OAuth 2.1 resource server, as MCP's authorization spec asks:
//! Protected Resource Metadata (RFC 9728) naming the authorization server, `401` with
//! `WWW-Authenticate: Bearer resource_metadata=…` for a request without a good token, JWT
//! access tokens checked against the issuer's keys (`jwt`, `jwks`), and the token's scopes
//! mapped to the tools its bearer may see and call: a tool set per caller. `403
//! insufficient_scope` names the scope a tool needs, so a client can ask for it.

pub(crate) mod http;
mod jwks;
mod jwt;

use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use self::jwks::{KeyCache, KeySource, KeysUnavailable, checked_url};
pub(crate) use self::jwt::TokenError;

/// How `serve` checks OAuth access tokens.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OAuth {
    /// The authorization server: tokens' `iss` must be exactly this, and its metadata (RFC 8414
    /// or OpenID discovery) names its keys unless [`OAuth::jwks_uri`] does.
    pub issuer: String,
    /// This server's MCP endpoint as clients reach it (`https://tools.example.com/mcp`): the
    /// resource tokens are asked for (RFC 8707), which their audience must include.
    pub resource: String,
    /// The issuer's JWKS, when its metadata cannot be fetched.
    pub jwks_uri: Option<String>,
    /// Which tools each scope lets its bearer see and call.
    pub scopes: Vec<ScopeTools>,
    /// How far token times may be off the server's clock. Default: 60 s.
    pub leeway: Duration,
}

impl OAuth {
    /// Tokens from `issuer` for `resource`, each scope of `scopes` granting its tools.
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>, scopes: Vec<ScopeTools>) -> Self {
        Self {
            issuer: issuer.into(),
            resource: resource.into(),
            jwks_uri: None,
            scopes,
            leeway: Duration::from_secs(60),
        }
    }

    /// Reads the keys from this JWKS instead of finding it in the issuer's metadata.
    #[must_use]
    pub fn with_jwks_uri(mut self, jwks_uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(jwks_uri.into());
        self
    }
}

/// One scope and the tools it grants: `tools.math=calculator,unit_convert`, or `*` for every
/// tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeTools {
    /// The scope, as the token's `scope` claim names it.
    pub scope: String,
    /// The tools (`*`: all of them, code mode's `search` and `execute` included).
    pub tools: Vec<String>,
}

/// Why a scope mapping is not usable.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a scope mapping: write SCOPE=TOOL,TOOL (or SCOPE=* for every tool), e.g. tools.math=calculator")]
pub struct ScopeToolsError(String);

impl FromStr for ScopeTools {
    type Err = ScopeToolsError;

    fn from_str(mapping: &str) -> Result<Self, Self::Err> {
        let invalid = || ScopeToolsError(mapping.to_owned());
        let (scope, tools) = mapping.split_once('=').ok_or_else(invalid)?;
        let scope = scope.trim();
        // RFC 6749 §3.3: printable ASCII but space, `"` and `\`.
        let scope_ok = !scope.is_empty() && scope.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
        let tools: Vec<String> =
            tools.split(',').map(str::trim).filter(|tool| !tool.is_empty()).map(str::to_owned).collect();
        if !scope_ok || tools.is_empty() {
            return Err(invalid());
        }
        Ok(Self { scope: scope.to_owned(), tools })
    }
}

/// Why the OAuth settings cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// A URL that is not https (nor http to loopback).
    #[error("{what}: {reason}")]
    Url {
        /// Which setting.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// No scope grants anything.
    #[error("no scope grants a tool: map at least one, e.g. --oauth-scope tools=*")]
    NoScopes,
}

/// Who sent a request, as its verified token says: kept in the request's extensions for the
/// handler, and given to each call's host context and span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    pub(crate) subject: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) scopes: Vec<String>,
}

impl Caller {
    /// A number that tells callers apart (their subject and client, hashed with this process's
    /// key): what a task, a session or a paused program is bound to. 0 for no caller.
    pub(crate) fn key(caller: Option<&Self>) -> u64 {
        static KEY: std::sync::OnceLock<std::hash::RandomState> = std::sync::OnceLock::new();
        caller.map_or(0, |caller| {
            let hashed = std::hash::BuildHasher::hash_one(
                KEY.get_or_init(std::hash::RandomState::new),
                (&caller.subject, &caller.client_id),
            );
            hashed.max(1)
        })
    }
}

/// The tools a caller may see and call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Permit {
    All,
    Only(BTreeSet<String>),
}

impl Permit {
    pub(crate) fn allows(&self, tool: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(tools) => tools.contains(tool),
        }
    }

    /// `call`, and every call it makes in turn, kept to these tools.
    pub(crate) fn limit(&self, call: toolcell_runtime::ToolCall) -> toolcell_runtime::ToolCall {
        match self {
            Self::All => call,
            Self::Only(tools) => call.limited_to(tools.iter().cloned()),
        }
    }
}

/// The resource server: the settings, and the issuer's keys.
#[derive(Debug)]
pub(crate) struct Verifier {
    oauth: OAuth,
    keys: KeyCache,
}

/// Why a request's token is not accepted.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("this server requires an OAuth access token: send `Authorization: Bearer <token>`")]
    Missing,
    #[error("{0}")]
    Invalid(TokenError),
    #[error("{0}")]
    KeysUnavailable(KeysUnavailable),
}

impl Verifier {
    pub(crate) fn new(oauth: OAuth) -> Result<Arc<Self>, OAuthError> {
        let url =
            |what: &'static str, url: &str| checked_url(url).map_err(|err| OAuthError::Url { what, reason: err.0 });
        url("--oauth-issuer", &oauth.issuer)?;
        let resource = url("--oauth-resource", &oauth.resource)?;
        // RFC 8707: no fragment; and a path the metadata's route can carry as it is.
        let plain = |c: char| c.is_ascii_alphanumeric() || "-._~/".contains(c);
        if resource.query().is_some() || oauth.resource.contains('#') || !resource.path().chars().all(plain) {
            return Err(OAuthError::Url {
                what: "--oauth-resource",
                reason: format!(
                    "`{}` has a query, a fragment, or a path of other characters than letters, digits and -._~/",
                    oauth.resource
                ),
            });
        }
        let source = match &oauth.jwks_uri {
            Some(jwks) => KeySource::Jwks(url("--oauth-jwks-uri", jwks)?),
            None => KeySource::Issuer(oauth.issuer.clone()),
        };
        if oauth.scopes.is_empty() {
            return Err(OAuthError::NoScopes);
        }
        Ok(Arc::new(Self { keys: KeyCache::new(source), oauth }))
    }

    /// The caller a bearer token names, once its signature and claims check out.
    pub(crate) async fn verify(&self, token: &str) -> Result<Caller, Refusal> {
        let unverified = jwt::decode(token).map_err(Refusal::Invalid)?;
        let mut keys = self.keys.current().await.map_err(Refusal::KeysUnavailable)?;
        if matches!(unverified.key(&keys), Err(TokenError::UnknownKey(_) | TokenError::NoKeyId)) {
            // The issuer may have rotated its keys since they were fetched.
            keys = self.keys.after_unknown_key(&keys).await.map_err(Refusal::KeysUnavailable)?;
        }
        let key = unverified.key(&keys).map_err(Refusal::Invalid)?;
        let expected = jwt::Expected {
            issuer: &self.oauth.issuer,
            audience: &self.oauth.resource,
            leeway: self.oauth.leeway,
            now: SystemTime::now(),
        };
        let claims = unverified.verify(key, &expected).map_err(Refusal::Invalid)?;
        Ok(Caller { subject: claims.subject, client_id: claims.client_id, scopes: claims.scopes })
    }

    /// The tools `caller`'s scopes grant.
    pub(crate) fn permit(&self, caller: &Caller) -> Permit {
        let mut tools = BTreeSet::new();
        for granted in self.oauth.scopes.iter().filter(|granted| caller.scopes.contains(&granted.scope)) {
            if granted.tools.iter().any(|tool| tool == "*") {
                return Permit::All;
            }
            tools.extend(granted.tools.iter().cloned());
        }
        Permit::Only(tools)
    }

    /// The scopes that grant `tool` (empty when none does: a tool no scope names is no one's).
    pub(crate) fn scopes_granting(&self, tool: &str) -> Vec<&str> {
        self.oauth
            .scopes
            .iter()
            .filter(|granted| granted.tools.iter().any(|name| name == tool || name == "*"))
            .map(|granted| granted.scope.as_str())
            .collect()
    }

    /// Where the metadata is: the well-known path inserted before the resource's path
    /// (RFC 9728 §3.1).
    pub(crate) fn metadata_url(&self) -> String {
        let (origin, path) = split_origin(&self.oauth.resource);
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The path the metadata is served at, on this server.
    pub(crate) fn metadata_path(&self) -> String {
        let (_, path) = split_origin(&self.oauth.resource);
        format!("/.well-known/oauth-protected-resource{path}")
    }

    /// The Protected Resource Metadata document.
    pub(crate) fn metadata(&self) -> Value {
        let scopes: BTreeSet<&str> = self.oauth.scopes.iter().map(|granted| granted.scope.as_str()).collect();
        json!({
            "resource": self.oauth.resource,
            "authorization_servers": [self.oauth.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "toolcell",
        })
    }

    /// `WWW-Authenticate` for a refused request: where the metadata is, the scopes to ask for,
    /// and, when a token was sent, what was wrong with it.
    pub(crate) fn challenge(&self, refusal: &Refusal) -> String {
        let scopes: BTreeSet<&str> = self.oauth.scopes.iter().map(|granted| granted.scope.as_str()).collect();
        let mut challenge = format!(
            r#"Bearer resource_metadata="{}", scope="{}""#,
            self.metadata_url(),
            scopes.into_iter().collect::<Vec<_>>().join(" ")
        );
        if let Refusal::Invalid(err) = refusal {
            challenge
                .push_str(&format!(r#", error="invalid_token", error_description="{}""#, quoted(&err.to_string())));
        }
        challenge
    }

    /// `WWW-Authenticate` for a call of `tool` the token's scopes do not grant (MCP's scope
    /// challenge): the scopes that would.
    pub(crate) fn insufficient_scope(&self, tool: &str) -> String {
        format!(
            r#"Bearer error="insufficient_scope", scope="{}", resource_metadata="{}", error_description="{}""#,
            self.scopes_granting(tool).join(" "),
            self.metadata_url(),
            quoted(&format!("the token's scopes do not grant the tool `{tool}`"))
        )
    }
}

/// `https://host:port` and the path (without a trailing `/`) of a URL.
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    let path_at = url[after_scheme..].find('/').map_or(url.len(), |at| after_scheme + at);
    (&url[..path_at], url[path_at..].trim_end_matches('/'))
}

/// Text fit for a quoted-string in a header: printable ASCII, without quotes or backslashes.
fn quoted(text: &str) -> String {
    text.chars().map(|c| if c == '"' || c == '\\' || !(c.is_ascii_graphic() || c == ' ') { '\'' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier() -> Arc<Verifier> {
        let scopes = vec!["tools.math=calculator,unit_convert".parse().unwrap(), "tools.all=*".parse().unwrap()];
        Verifier::new(OAuth::new("https://id.example.com", "https://tools.example.com/mcp", scopes)).unwrap()
    }

    fn caller(scopes: &[&str]) -> Caller {
        Caller { subject: None, client_id: None, scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect() }
    }

    #[test]
    fn scopes_grant_their_tools_and_nothing_else() {
        let verifier = verifier();
        let math = verifier.permit(&caller(&["openid", "tools.math"]));
        assert!(math.allows("calculator") && math.allows("unit_convert") && !math.allows("files"));
        assert_eq!(verifier.permit(&caller(&["tools.all"])), Permit::All);
        assert_eq!(verifier.permit(&caller(&[])), Permit::Only(BTreeSet::new()));
        assert_eq!(verifier.scopes_granting("files"), ["tools.all"]);
        assert_eq!(verifier.scopes_granting("calculator"), ["tools.math", "tools.all"]);
    }

    #[test]
    fn metadata_lives_where_rfc_9728_puts_it() {
        let verifier = verifier();
        assert_eq!(verifier.metadata_url(), "https://tools.example.com/.well-known/oauth-protected-resource/mcp");
        assert_eq!(verifier.metadata_path(), "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(verifier.metadata()["resource"], "https://tools.example.com/mcp");
        let challenge = verifier.challenge(&Refusal::Invalid(TokenError::Expired));
        assert!(
            challenge.starts_with(r#"Bearer resource_metadata="https://tools.example.com/.well-known/"#),
            "{challenge}"
        );
        assert!(
            challenge.contains(r#"error="invalid_token", error_description="the token has expired""#),
            "{challenge}"
        );
    }

    #[test]
    fn settings_off_https_or_without_scopes_are_refused() {
        let plain = OAuth::new("http://id.example.com", "https://tools.example.com/mcp", vec!["a=*".parse().unwrap()]);
        assert!(matches!(Verifier::new(plain), Err(OAuthError::Url { what: "--oauth-issuer", .. })));
        let none = OAuth::new("https://id.example.com", "https://tools.example.com/mcp", Vec::new());
        assert!(matches!(Verifier::new(none), Err(OAuthError::NoScopes)));
        for bad in ["tools", "=calculator", "tools=", "to ols=a", "tools\"=a"] {
            assert!(bad.parse::<ScopeTools>().is_err(), "{bad}");
        }
    }
}
