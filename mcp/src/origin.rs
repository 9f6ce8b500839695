//! The `Host` and `Origin` checks rmcp makes on `/mcp`, for the routes beside it that are not
//! public (`/metrics`), with the same rules:
//!
//! - on a loopback address, the `Host` must be a loopback name: a page whose name an attacker
//!   re-pointed at 127.0.0.1 (DNS rebinding) reaches the port, but sends its own name;
//! - an `Origin`, when a browser sends one, must be a loopback origin or one the operator
//!   allowed (`--allow-origin`): a page elsewhere gets `403`.
//!
//! Off loopback the token protects the server instead of the `Host` (clients reach it by names
//! it cannot know), as on `/mcp`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header, uri::Authority};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The host names of this machine a loopback server answers to (rmcp's default).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// What a request must show.
#[derive(Debug)]
pub(crate) struct Rules {
    /// Whether the `Host` must be a loopback name (the server listens on loopback).
    loopback_host: bool,
    origins: Vec<Allowed>,
}

impl Rules {
    /// Rules for a server on a loopback address or not, allowing `origins` (in rmcp's
    /// spelling: `http://localhost:*`, `https://app.example.com`, `null`).
    pub(crate) fn new<'a>(loopback: bool, origins: impl IntoIterator<Item = &'a str>) -> Arc<Self> {
        let origins = origins
            .into_iter()
            .filter_map(|origin| {
                let allowed = Allowed::parse(origin);
                if allowed.is_none() {
                    tracing::warn!(origin, "an allowed origin that is not an origin matches nothing");
                }
                allowed
            })
            .collect();
        Arc::new(Self { loopback_host: loopback, origins })
    }

    /// Why `request` is refused, if it is.
    fn refusal(&self, uri: &Uri, headers: &HeaderMap) -> Option<&'static str> {
        if self.loopback_host && !is_loopback_host(uri, headers) {
            return Some(
                "this server listens on loopback and answers only requests addressed to localhost, 127.0.0.1 or [::1] \
                 (a page that re-points its own name at this machine sends its own): use one of those in the URL",
            );
        }
        let origin = headers.get(header::ORIGIN)?;
        let allowed = origin
            .to_str()
            .ok()
            .and_then(Seen::parse)
            .is_some_and(|seen| self.origins.iter().any(|allowed| allowed.matches(&seen)));
        (!allowed).then_some(
            "requests from a web page at this Origin are refused: only loopback origins and those the operator \
             allowed with --allow-origin are served",
        )
    }
}

/// Refuses a request the [`Rules`] do not allow with `403` and the reason.
pub(crate) async fn check(State(rules): State<Arc<Rules>>, request: Request, next: Next) -> Response {
    match rules.refusal(request.uri(), request.headers()) {
        None => next.run(request).await,
        Some(reason) => (StatusCode::FORBIDDEN, axum::Json(json!({ "error": reason }))).into_response(),
    }
}

/// Whether the request names this machine: its `Host` (or, without one, its URI's authority).
fn is_loopback_host(uri: &Uri, headers: &HeaderMap) -> bool {
    let authority = match headers.get(header::HOST) {
        Some(host) => host.to_str().ok().and_then(|host| Authority::try_from(host).ok()),
        None => uri.authority().cloned(),
    };
    authority.is_some_and(|authority| LOOPBACK_HOSTS.contains(&normalized_host(authority.host()).as_str()))
}

/// A host as compared: without IPv6 brackets, lowercase.
fn normalized_host(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

/// An `Origin` a request sent.
#[derive(Debug, PartialEq)]
enum Seen {
    /// `null`: a sandboxed frame, a `file:` page.
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Seen {
    fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        if value.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let uri = Uri::try_from(value).ok()?;
        let authority = uri.authority()?;
        Some(Self::Tuple {
            scheme: uri.scheme_str()?.to_ascii_lowercase(),
            host: normalized_host(authority.host()),
            port: authority.port_u16(),
        })
    }
}

/// An origin the server allows.
#[derive(Debug, PartialEq)]
enum Allowed {
    Null,
    Tuple { scheme: String, host: String, port: AllowedPort },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum AllowedPort {
    /// `:*`, or (as rmcp still reads it) no port at all.
    Any,
    Exact(u16),
}

impl Allowed {
    fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        let (value, any_port) = match value.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (value, false),
        };
        match Seen::parse(value)? {
            Seen::Null if !any_port => Some(Self::Null),
            Seen::Null => None,
            Seen::Tuple { port: Some(_), .. } if any_port => None,
            Seen::Tuple { scheme, host, port } => {
                let port = port.map_or(AllowedPort::Any, AllowedPort::Exact);
                Some(Self::Tuple { scheme, host, port })
            }
        }
    }

    fn matches(&self, seen: &Seen) -> bool {
        match (self, seen) {
            (Self::Null, Seen::Null) => true,
            (
                Self::Tuple { scheme, host, port },
                Seen::Tuple { scheme: seen_scheme, host: seen_host, port: seen_port },
            ) => {
                scheme == seen_scheme
                    && host == seen_host
                    && match port {
                        AllowedPort::Any => true,
                        // An origin leaves out its scheme's default port.
                        AllowedPort::Exact(port) => seen_port.or_else(|| default_port(seen_scheme)) == Some(*port),
                    }
            }
            _ => false,
        }
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        pairs.iter().map(|(name, value)| (name.clone(), HeaderValue::from_str(value).unwrap())).collect()
    }

    fn refused(rules: &Rules, pairs: &[(header::HeaderName, &str)]) -> bool {
        rules.refusal(&Uri::from_static("/metrics"), &headers(pairs)).is_some()
    }

    const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

    #[test]
    fn on_loopback_only_loopback_host_names_are_served() {
        let rules = Rules::new(true, LOOPBACK_ORIGINS);
        for host in ["127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000"] {
            assert!(!refused(&rules, &[(header::HOST, host)]), "{host}");
        }
        for host in ["evil.example:8000", "127.0.0.1.nip.io:8000", "localhost.evil.example", "0.0.0.0:8000", "a b"] {
            assert!(refused(&rules, &[(header::HOST, host)]), "{host}");
        }
        assert!(refused(&rules, &[]), "no Host and no authority");
        assert!(rules.refusal(&Uri::from_static("http://localhost:8000/metrics"), &HeaderMap::new()).is_none());
        // Off loopback the token stands in for the Host check.
        assert!(!refused(&Rules::new(false, LOOPBACK_ORIGINS), &[(header::HOST, "metrics.example.com")]));
    }

    #[test]
    fn an_origin_must_be_loopback_or_allowed() {
        let rules = Rules::new(true, LOOPBACK_ORIGINS.into_iter().chain(["https://grafana.example.com:8443"]));
        let host = (header::HOST, "127.0.0.1:8000");
        for origin in
            ["http://localhost:6274", "http://127.0.0.1", "http://[::1]:3000", "https://grafana.example.com:8443"]
        {
            assert!(!refused(&rules, &[host.clone(), (header::ORIGIN, origin)]), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "https://localhost:6274",
            "https://grafana.example.com",
            "https://grafana.example.com:9443",
            "null",
            "not an origin",
        ] {
            assert!(refused(&rules, &[host.clone(), (header::ORIGIN, origin)]), "{origin}");
        }
    }

    #[test]
    fn allowed_origins_are_read_as_rmcp_reads_them() {
        let tuple = |scheme: &str, host: &str, port| Allowed::Tuple { scheme: scheme.into(), host: host.into(), port };
        assert_eq!(Allowed::parse("http://[::1]:*"), Some(tuple("http", "::1", AllowedPort::Any)));
        assert_eq!(Allowed::parse("https://app.example"), Some(tuple("https", "app.example", AllowedPort::Any)));
        assert_eq!(
            Allowed::parse("https://app.example:443"),
            Some(tuple("https", "app.example", AllowedPort::Exact(443)))
        );
        assert_eq!(Allowed::parse("null"), Some(Allowed::Null));
        assert_eq!(Allowed::parse("null:*"), None);
        assert_eq!(Allowed::parse("https://app.example:443:*"), None);
        let exact = tuple("https", "app.example", AllowedPort::Exact(443));
        assert!(exact.matches(&Seen::parse("https://APP.example").unwrap()), "the default port, left out");
    }
}
