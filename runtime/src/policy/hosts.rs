//! Allow-list entries for outbound HTTP, and how a request's scheme, host and port match them.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::Serialize;

/// One allow-list entry for outbound HTTP: `example.com`, `*.example.com` (any subdomain,
/// not the domain itself), `example.com:8443`, `127.0.0.1:8080`, `[::1]:3000`, optionally
/// restricted to a scheme (`https://example.com`).
///
/// Without a port, only the scheme's default port (80 or 443) matches. IP literals and
/// `localhost` match only an entry that names them exactly: no wildcard reaches them.
#[derive(Clone, PartialEq, Eq)]
pub struct HostPattern {
    text: String,
    scheme: Option<Scheme>,
    host: HostMatch,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    Name(String),
    Subdomains(String),
    Ip(IpAddr),
}

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub(crate) fn default_port(self) -> u16 {
        match self {
            Self::Http => 80,
            Self::Https => 443,
        }
    }
}

impl HostPattern {
    /// Whether a request to `scheme://host:port` matches this entry. `host` is lower-case,
    /// without brackets or a trailing dot.
    #[cfg(test)]
    fn matches(&self, scheme: Scheme, host: &str, port: u16) -> bool {
        self.port.unwrap_or(scheme.default_port()) == port && self.matches_name(scheme, host)
    }

    /// Whether a request to `scheme://host` matches this entry, whatever the port. `host` is
    /// lower-case, without brackets or a trailing dot.
    pub(crate) fn matches_name(&self, scheme: Scheme, host: &str) -> bool {
        if self.scheme.is_some_and(|wanted| wanted != scheme) {
            return false;
        }
        match &self.host {
            HostMatch::Name(name) => name == host,
            HostMatch::Subdomains(domain) => {
                host.parse::<IpAddr>().is_err()
                    && !is_localhost(host)
                    && host.strip_suffix(domain.as_str()).is_some_and(|rest| rest.ends_with('.') && rest.len() > 1)
            }
            HostMatch::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|requested| requested == *ip),
        }
    }

    /// Whether this entry names `ip` itself (not through a name) for `scheme`, whatever the
    /// port: what a request needs to reach a loopback, private or link-local address.
    pub(crate) fn names_ip(&self, scheme: Scheme, ip: IpAddr) -> bool {
        matches!(self.host, HostMatch::Ip(named) if canonical_address(named) == ip)
            && self.scheme.is_none_or(|wanted| wanted == scheme)
    }

    /// The port the entry names, if it names one.
    pub(crate) fn port(&self) -> Option<u16> {
        self.port
    }

    /// The scheme the entry is restricted to, if it names one.
    pub(crate) fn scheme(&self) -> Option<Scheme> {
        self.scheme
    }

    /// The entry as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn is_localhost(host: &str) -> bool {
    host == "localhost" || host.ends_with(".localhost")
}

impl fmt::Debug for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for HostPattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl FromStr for HostPattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let original = text;
        let (scheme, rest) = if let Some(rest) = text.strip_prefix("https://") {
            (Some(Scheme::Https), rest)
        } else if let Some(rest) = text.strip_prefix("http://") {
            (Some(Scheme::Http), rest)
        } else if text.contains("://") {
            return Err(format!("`{original}` has a scheme other than http:// or https://; only HTTP(S) is supported"));
        } else {
            (None, text)
        };
        if rest.contains(['/', '?', '#', '@']) {
            return Err(format!(
                "`{original}` is not a host: write only the host and optional port, e.g. `example.com` or `example.com:8443`"
            ));
        }
        let (host, port) = split_port(rest).map_err(|reason| format!("`{original}`: {reason}"))?;
        let host = host.to_ascii_lowercase();
        let host = host.strip_suffix('.').unwrap_or(&host).to_owned();
        let host_match = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let ip = inner
                .parse::<std::net::Ipv6Addr>()
                .map_err(|_| format!("`{original}`: `{host}` is not an IPv6 address"))?;
            HostMatch::Ip(IpAddr::V6(ip))
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            HostMatch::Ip(ip)
        } else if let Some(domain) = host.strip_prefix("*.") {
            check_domain(domain).map_err(|reason| format!("`{original}`: {reason}"))?;
            if is_localhost(domain) || domain == "localhost" {
                return Err(format!("`{original}`: wildcards cannot grant localhost; list `localhost` itself"));
            }
            if !domain.contains(|c: char| c.is_ascii_alphabetic()) {
                return Err(format!("`{original}`: a wildcard must be followed by a domain name, not an address"));
            }
            HostMatch::Subdomains(domain.to_owned())
        } else {
            check_domain(&host).map_err(|reason| format!("`{original}`: {reason}"))?;
            HostMatch::Name(host)
        };
        Ok(Self { text: original.to_owned(), scheme, host: host_match, port })
    }
}

fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let split_at = if text.starts_with('[') { text.find("]:").map(|i| i + 1) } else { text.rfind(':') };
    match split_at {
        Some(colon) if text[..colon].contains(':') && !text.starts_with('[') => {
            Err("an IPv6 address must be written in brackets, e.g. `[::1]:8080`".into())
        }
        Some(colon) => {
            let port = &text[colon + 1..];
            match port.parse::<u16>() {
                Ok(port) if port > 0 => Ok((&text[..colon], Some(port))),
                _ => Err(format!("`{port}` is not a port number (1-65535)")),
            }
        }
        None => Ok((text, None)),
    }
}

fn check_domain(domain: &str) -> Result<(), String> {
    if domain.is_empty() {
        return Err("the host is empty".into());
    }
    if domain.contains('*') {
        return Err("`*` may only appear as a whole first label, as in `*.example.com`".into());
    }
    for label in domain.split('.') {
        let valid = !label.is_empty()
            && label.len() <= 63
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !valid {
            return Err(format!(
                "`{domain}` is not a valid host name (letters, digits and `-` in dot-separated labels)"
            ));
        }
    }
    Ok(())
}

/// Hosts named in a policy assertion: `*` (every host), `*.internal` (every subdomain),
/// `api.github.com` or an address. A port, if written, is ignored: assertions are about
/// hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostGlob {
    text: String,
    host: Option<HostMatch>,
}

impl HostGlob {
    /// Whether some host `pattern` allows is one this glob names.
    pub(crate) fn overlaps(&self, pattern: &HostPattern) -> bool {
        let Some(glob) = &self.host else { return true };
        match (glob, &pattern.host) {
            (HostMatch::Name(name), HostMatch::Name(other)) => name == other,
            (HostMatch::Name(name), HostMatch::Subdomains(domain)) => is_below(name, domain),
            (HostMatch::Subdomains(domain), HostMatch::Name(name)) => is_below(name, domain),
            (HostMatch::Subdomains(a), HostMatch::Subdomains(b)) => a == b || is_below(a, b) || is_below(b, a),
            (HostMatch::Ip(ip), HostMatch::Ip(other)) => canonical_address(*ip) == canonical_address(*other),
            // `localhost` reaches the loopback addresses (the one name that may).
            (HostMatch::Ip(ip), HostMatch::Name(name)) | (HostMatch::Name(name), HostMatch::Ip(ip)) => {
                is_localhost(name) && canonical_address(*ip).is_loopback()
            }
            // A public address may be any name's: a name rule's reach there is not known
            // before it is resolved, so only what names the address itself counts.
            (HostMatch::Ip(_), HostMatch::Subdomains(_)) | (HostMatch::Subdomains(_), HostMatch::Ip(_)) => false,
        }
    }

    /// Whether every host `pattern` allows is one this glob names.
    pub(crate) fn covers(&self, pattern: &HostPattern) -> bool {
        let Some(glob) = &self.host else { return true };
        match (glob, &pattern.host) {
            (HostMatch::Subdomains(domain), HostMatch::Subdomains(other)) => other == domain || is_below(other, domain),
            _ => self.overlaps(pattern) && !matches!(pattern.host, HostMatch::Subdomains(_)),
        }
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Whether `name` is a subdomain of `domain`.
fn is_below(name: &str, domain: &str) -> bool {
    name.strip_suffix(domain).is_some_and(|rest| rest.ends_with('.') && rest.len() > 1)
}

impl FromStr for HostGlob {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text == "*" {
            return Ok(Self { text: text.to_owned(), host: None });
        }
        let pattern: HostPattern = text.parse()?;
        Ok(Self { text: text.to_owned(), host: Some(pattern.host) })
    }
}

impl fmt::Display for HostGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The address itself, or the IPv4 address an IPv6 spelling stands for.
pub(crate) fn canonical_address(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> HostPattern {
        text.parse().unwrap_or_else(|err| panic!("{text}: {err}"))
    }

    #[test]
    fn exact_hosts_match_their_default_ports_only() {
        let exact = pattern("Example.com");
        assert!(exact.matches(Scheme::Https, "example.com", 443));
        assert!(exact.matches(Scheme::Http, "example.com", 80));
        assert!(!exact.matches(Scheme::Https, "example.com", 8443));
        assert!(!exact.matches(Scheme::Https, "api.example.com", 443));
        assert!(!exact.matches(Scheme::Https, "example.com.evil.net", 443));
        let with_port = pattern("example.com:8443");
        assert!(with_port.matches(Scheme::Https, "example.com", 8443));
        assert!(!with_port.matches(Scheme::Https, "example.com", 443));
        assert!(!pattern("https://example.com").matches(Scheme::Http, "example.com", 80));
    }

    #[test]
    fn wildcards_match_subdomains_but_never_addresses_or_localhost() {
        let wildcard = pattern("*.example.com");
        assert!(wildcard.matches(Scheme::Https, "api.example.com", 443));
        assert!(wildcard.matches(Scheme::Https, "a.b.example.com", 443));
        assert!(!wildcard.matches(Scheme::Https, "example.com", 443));
        assert!(!wildcard.matches(Scheme::Https, "badexample.com", 443));
        assert!(!pattern("*.localhost.example").matches(Scheme::Http, "localhost", 80));
        assert!(!pattern("*.com").matches(Scheme::Http, "a.localhost", 80));
    }

    #[test]
    fn addresses_and_localhost_need_an_exact_entry() {
        assert!(pattern("127.0.0.1:8080").matches(Scheme::Http, "127.0.0.1", 8080));
        assert!(!pattern("127.0.0.1:8080").matches(Scheme::Http, "127.0.0.2", 8080));
        assert!(pattern("[::1]:3000").matches(Scheme::Http, "::1", 3000));
        assert!(pattern("localhost:3000").matches(Scheme::Http, "localhost", 3000));
        assert!(!pattern("localhost:3000").matches(Scheme::Http, "127.0.0.1", 3000));
    }

    #[test]
    fn globs_overlap_and_cover_patterns() {
        let glob = |text: &str| text.parse::<HostGlob>().expect("glob");
        let internal = glob("*.internal");
        assert!(internal.overlaps(&pattern("db.internal")) && internal.covers(&pattern("db.internal")));
        assert!(internal.overlaps(&pattern("*.corp.internal")) && internal.covers(&pattern("*.corp.internal")));
        assert!(internal.overlaps(&pattern("*.internal")) && internal.covers(&pattern("*.internal")));
        assert!(!internal.overlaps(&pattern("internal")) && !internal.overlaps(&pattern("example.com")));
        assert!(!internal.overlaps(&pattern("10.0.0.1")));
        let api = glob("api.github.com");
        assert!(api.overlaps(&pattern("*.github.com")) && !api.covers(&pattern("*.github.com")));
        assert!(api.covers(&pattern("https://api.github.com:8443")));
        assert!(glob("*").covers(&pattern("*.com")));
        assert!(glob("*.a.internal").overlaps(&pattern("*.internal")));
        assert!(glob("[::ffff:10.0.0.1]").overlaps(&pattern("10.0.0.1")));
        assert!(
            glob("127.0.0.1").overlaps(&pattern("localhost:8080")) && glob("[::1]").overlaps(&pattern("localhost"))
        );
        assert!(glob("localhost").overlaps(&pattern("127.0.0.1:9")));
        assert!(!glob("10.0.0.1").overlaps(&pattern("localhost")));
    }

    #[test]
    fn bad_patterns_say_what_is_wrong() {
        for (text, says) in [
            ("*example.com", "first label"),
            ("ex*ample.com", "first label"),
            ("*.localhost", "localhost"),
            ("*.10.0.0.1", "not an address"),
            ("example.com/path", "not a host"),
            ("ftp://example.com", "scheme"),
            ("example.com:http", "port"),
            ("example.com:0", "port"),
            ("::1", "brackets"),
            ("exa mple.com", "valid host name"),
            ("", "empty"),
        ] {
            let err = text.parse::<HostPattern>().expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
