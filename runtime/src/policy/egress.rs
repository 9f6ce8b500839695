//! Egress rules (`[[tools.<tool>.http]]`): which requests a tool may send, by host, port,
//! method and path, and which secrets the host adds to them. `allow_hosts` entries are rules
//! too: any method, any path, no secret.
//!
//! Rules are data here, matched by pure functions; [`Egress`] is a tool's rules resolved once
//! (secret values read, header values rendered), which the HTTP gate consults per request.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use http::{HeaderName, HeaderValue, Method};
use serde::Serialize;

use super::hosts::{HostPattern, Scheme};
use super::paths::{PathPattern, RequestPath};
use crate::redact::Redactor;

/// Whether `name` can name a secret: letters, digits and `_`, not starting with a digit.
pub(crate) fn is_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// `{secret:NAME}` placeholders in `text`: where each is, and the name.
pub(crate) fn placeholders(text: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    const OPEN: &str = "{secret:";
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(at) = text[from..].find(OPEN).map(|at| from + at) {
            let name_start = at + OPEN.len();
            let name_len = text[name_start..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            from = name_start;
            if let Some(len) = name_len.filter(|len| *len > 0)
                && text[name_start + len..].starts_with('}')
                && !text[name_start..].starts_with(|c: char| c.is_ascii_digit())
            {
                from = name_start + len + 1;
                return Some((at..from, &text[name_start..name_start + len]));
            }
        }
        None
    })
}

/// A header value a rule adds, with `{secret:NAME}` placeholders the host fills in.
#[derive(Clone, PartialEq, Eq)]
pub struct HeaderTemplate(String);

impl HeaderTemplate {
    /// A template such as `Bearer {secret:GITHUB_TOKEN}`.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The template as written (placeholders, never values).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The secrets it names.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        placeholders(&self.0).map(|(_, name)| name)
    }

    /// The value with every placeholder filled in; `None` when one names an unknown secret.
    fn render(&self, secrets: &BTreeMap<String, String>) -> Option<String> {
        let mut rendered = String::with_capacity(self.0.len());
        let mut last = 0;
        for (range, name) in placeholders(&self.0) {
            rendered.push_str(&self.0[last..range.start]);
            rendered.push_str(secrets.get(name)?);
            last = range.end;
        }
        rendered.push_str(&self.0[last..]);
        Some(rendered)
    }
}

impl fmt::Debug for HeaderTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl Serialize for HeaderTemplate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// One egress rule of a tool: the requests it allows, and the headers the host adds to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HttpRule {
    /// The host, with an optional scheme and port (`api.github.com`, `https://*.example.com`,
    /// `127.0.0.1:8080`). A rule that sends secrets and names no scheme allows `https` only.
    pub host: HostPattern,
    /// Methods allowed, upper case; empty: any.
    pub methods: Vec<String>,
    /// Path patterns allowed; empty: any path.
    pub paths: Vec<PathPattern>,
    /// Ports allowed; empty: the host's port, or the scheme's default (80, 443).
    pub ports: Vec<u16>,
    /// Headers the host sets on the rule's requests, over any the tool set.
    pub headers: Vec<(String, HeaderTemplate)>,
    /// Secrets the tool may name as `{secret:NAME}` in a header or query parameter value of
    /// the rule's requests, for the host to fill in (a secret only in `headers` is never
    /// filled in for the tool).
    pub placeholders: Vec<String>,
}

impl HttpRule {
    /// Any request to `host` (what an `allow_hosts` entry is).
    pub fn new(host: HostPattern) -> Self {
        Self {
            host,
            methods: Vec::new(),
            paths: Vec::new(),
            ports: Vec::new(),
            headers: Vec::new(),
            placeholders: Vec::new(),
        }
    }

    /// Allows only these methods.
    #[must_use]
    pub fn methods<S: AsRef<str>>(mut self, methods: impl IntoIterator<Item = S>) -> Self {
        self.methods = methods.into_iter().map(|method| method.as_ref().to_ascii_uppercase()).collect();
        self
    }

    /// Allows only paths matching these patterns.
    #[must_use]
    pub fn paths(mut self, paths: impl IntoIterator<Item = PathPattern>) -> Self {
        self.paths = paths.into_iter().collect();
        self
    }

    /// Allows only these ports.
    #[must_use]
    pub fn ports(mut self, ports: impl IntoIterator<Item = u16>) -> Self {
        self.ports = ports.into_iter().collect();
        self
    }

    /// Also sets a header on the rule's requests: `value` may hold `{secret:NAME}`.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: HeaderTemplate) -> Self {
        self.headers.push((name.into(), value));
        self
    }

    /// Also lets the tool name the secret `name` as a placeholder in the rule's requests.
    #[must_use]
    pub fn placeholder(mut self, name: impl Into<String>) -> Self {
        self.placeholders.push(name.into());
        self
    }

    /// The secrets the rule sends: named in its headers or its placeholders.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.headers.iter().flat_map(|(_, value)| value.secrets()).chain(self.placeholders.iter().map(String::as_str))
    }

    fn scheme_allowed(&self, scheme: Scheme) -> bool {
        match self.host.scheme() {
            Some(wanted) => wanted == scheme,
            None => scheme == Scheme::Https || self.secrets().next().is_none(),
        }
    }

    fn port_allowed(&self, scheme: Scheme, port: u16) -> bool {
        if self.ports.is_empty() {
            self.host.port().unwrap_or(scheme.default_port()) == port
        } else {
            self.ports.contains(&port)
        }
    }

    /// Whether the rule allows requests to `scheme://host:port` (some method, some path).
    pub(crate) fn allows_origin(&self, scheme: Scheme, host: &str, port: u16) -> bool {
        self.scheme_allowed(scheme) && self.port_allowed(scheme, port) && self.host.matches_name(scheme, host)
    }

    /// Whether the rule names the address `ip` itself, for `scheme` and `port`.
    pub(crate) fn names_address(&self, scheme: Scheme, ip: IpAddr, port: u16) -> bool {
        self.scheme_allowed(scheme) && self.port_allowed(scheme, port) && self.host.names_ip(scheme, ip)
    }

    fn allows_method(&self, method: &Method) -> bool {
        self.methods.is_empty() || self.methods.iter().any(|allowed| allowed == method.as_str())
    }

    fn path_pattern_for(&self, path: &RequestPath) -> Option<Option<&PathPattern>> {
        if self.paths.is_empty() {
            return Some(None);
        }
        self.paths.iter().find(|pattern| pattern.matches(path)).map(Some)
    }

    /// The rule in words for a model: `GET, POST api.github.com under /repos/*/issues`, or
    /// the host alone when any request to it is allowed.
    pub(crate) fn in_words(&self) -> String {
        let mut words = String::new();
        if !self.methods.is_empty() {
            words.push_str(&self.methods.join(", "));
            words.push(' ');
        }
        words.push_str(self.host.as_str());
        if !self.ports.is_empty() {
            let ports: Vec<String> = self.ports.iter().map(u16::to_string).collect();
            words.push_str(&format!(" (port {})", ports.join(", ")));
        }
        if !self.paths.is_empty() {
            let paths: Vec<&str> = self.paths.iter().map(PathPattern::as_str).collect();
            words.push_str(&format!(" under {}", paths.join(" or ")));
        }
        words
    }

    /// Problems with the rule that the policy file's parser cannot see in one key alone.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.ports.is_empty() && self.host.port().is_some() {
            problems.push(format!(
                "host `{}` names a port and `ports` lists more: write the ports in one place",
                self.host
            ));
        }
        for method in &self.methods {
            if Method::from_bytes(method.as_bytes()).is_err() {
                problems.push(format!("`{method}` is not an HTTP method, such as \"GET\""));
            }
        }
        for name in &self.placeholders {
            if !is_secret_name(name) {
                problems.push(format!(
                    "placeholders: `{name}` is not a secret's name (letters, digits and `_`, not starting with a digit)"
                ));
            }
        }
        for (name, value) in &self.headers {
            if value.as_str().matches("{secret:").count() != value.secrets().count() {
                problems.push(format!(
                    "header `{name}`: `{}` holds a `{{secret:` that is not a placeholder; write `{{secret:NAME}}` with a \
                     secret's name (letters, digits and `_`, not starting with a digit)",
                    value.as_str()
                ));
            }
        }
        for (name, _) in &self.headers {
            match HeaderName::from_bytes(name.as_bytes()) {
                Ok(header) if FORBIDDEN_HEADERS.contains(&header.as_str()) => problems.push(format!(
                    "header `{name}` is set by the host from the request itself and cannot be set by a rule"
                )),
                Ok(_) => {}
                Err(_) => problems.push(format!("`{name}` is not an HTTP header name")),
            }
        }
        problems
    }
}

/// Headers the connection itself decides, which no rule may set.
const FORBIDDEN_HEADERS: [&str; 11] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "http2-settings",
    "content-length",
    "te",
];

/// The narrowest rule that would have allowed a refused request, for the operator: written
/// as the inline table an `http` array of the policy takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SuggestedRule {
    /// `api.github.com`, with the port when it is not the scheme's default.
    pub host: String,
    /// The refused request's method.
    pub methods: Vec<String>,
    /// A path pattern of a rule that allows the path for other methods, or the path itself.
    pub paths: Vec<String>,
}

impl fmt::Display for SuggestedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |items: &[String]| items.iter().map(|item| format!("{item:?}")).collect::<Vec<_>>().join(", ");
        write!(f, "{{ host = {:?}, methods = [{}], paths = [{}] }}", self.host, list(&self.methods), list(&self.paths))
    }
}

/// A tool's egress rules, resolved once when its grants are: its `http` rules in order, then
/// its `allow_hosts` entries.
#[derive(Clone, Default)]
pub(crate) struct Egress {
    rules: Arc<[ResolvedRule]>,
    /// Replaces every secret the rules send (as sent and percent-encoded), in what responses
    /// bring back; `None` when they send none.
    secrets: Option<Redactor>,
}

/// A rule with its headers rendered and the secrets it may fill placeholders with.
pub(crate) struct ResolvedRule {
    pub(crate) rule: HttpRule,
    /// Headers the host sets, values filled in.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// The secrets the rule lists in `placeholders`, by name, for the tool's placeholders.
    pub(crate) secrets: BTreeMap<String, String>,
}

impl fmt::Debug for ResolvedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ResolvedRule({})", self.rule.in_words())
    }
}

impl fmt::Debug for Egress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.rules.iter().map(|resolved| resolved.rule.in_words())).finish()
    }
}

/// Why a request was refused: in words for the model, and what would allow it for the
/// operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) reason: String,
    /// The `allow_hosts` entry that would allow it, when no rule names its host.
    pub(crate) host_grant: Option<String>,
    /// The narrowest rule that would allow it.
    pub(crate) rule: Option<SuggestedRule>,
}

impl Egress {
    /// Resolves `rules` (in order), then `allow_hosts`, with the tool's secrets.
    pub(crate) fn resolve(
        rules: &[HttpRule],
        allow_hosts: &[HostPattern],
        secrets: &BTreeMap<String, String>,
    ) -> Result<Self, String> {
        let mut resolved = Vec::with_capacity(rules.len() + allow_hosts.len());
        let mut sent = Vec::new();
        for rule in rules {
            if let Some(problem) = rule.problems().into_iter().next() {
                return Err(format!("HTTP rule for {}: {problem}", rule.host));
            }
            let mut headers = Vec::with_capacity(rule.headers.len());
            for (name, template) in &rule.headers {
                let unknown =
                    || format!("HTTP rule for {}: header `{name}` names a secret that is not granted", rule.host);
                let value = template.render(secrets).ok_or_else(unknown)?;
                let mut value = HeaderValue::from_str(&value).map_err(|_| {
                    format!(
                        "HTTP rule for {}: header `{name}` would hold a character an HTTP header cannot carry (a line \
                         break or a control character); check the secrets it names",
                        rule.host
                    )
                })?;
                value.set_sensitive(true);
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("`{name}` is not a header"))?;
                headers.push((name, value));
            }
            let mut named = BTreeMap::new();
            for name in rule.secrets() {
                let value = secrets.get(name).ok_or_else(|| {
                    format!(
                        "HTTP rule for {}: the secret `{name}` is not granted (`[tools.<tool>.secrets]`)",
                        rule.host
                    )
                })?;
                named.insert(name.to_owned(), value.clone());
            }
            sent.extend(named.values().flat_map(|value| echo_spellings(value)));
            // Only the secrets the rule lists as placeholders fill the tool's: one it sends in
            // a header stays in that header.
            named.retain(|name, _| rule.placeholders.contains(name));
            resolved.push(ResolvedRule { rule: rule.clone(), headers, secrets: named });
        }
        for host in allow_hosts {
            let rule = HttpRule::new(host.clone());
            resolved.push(ResolvedRule { rule, headers: Vec::new(), secrets: BTreeMap::new() });
        }
        let secrets = (!sent.is_empty()).then(|| Redactor::new(sent));
        Ok(Self { rules: resolved.into(), secrets })
    }

    /// What replaces the secrets the rules send, in responses; `None` when they send none.
    pub(crate) fn secrets(&self) -> Option<&Redactor> {
        self.secrets.as_ref()
    }

    /// Whether no request at all is allowed.
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Each rule in words, for a model told what it may reach.
    pub(crate) fn in_words(&self) -> Vec<String> {
        self.rules.iter().map(|resolved| resolved.rule.in_words()).collect()
    }

    /// The first rule that allows `method scheme://host:port path`, or why none does.
    pub(crate) fn decide(
        &self,
        method: &Method,
        scheme: Scheme,
        host: &str,
        port: u16,
        path: &RequestPath,
    ) -> Result<&ResolvedRule, Refusal> {
        let same_origin: Vec<&ResolvedRule> =
            self.rules.iter().filter(|resolved| resolved.rule.allows_origin(scheme, host, port)).collect();
        if let Some(allowed) = same_origin
            .iter()
            .find(|resolved| resolved.rule.allows_method(method) && resolved.rule.path_pattern_for(path).is_some())
        {
            return Ok(allowed);
        }
        let host_text = host_grant(host, port, scheme);
        // A pattern some rule allows the path under, for another method: the narrowest
        // grant that keeps the operator's own wording.
        let pattern = same_origin.iter().find_map(|resolved| resolved.rule.path_pattern_for(path).flatten());
        let rule = SuggestedRule {
            host: host_text.clone(),
            methods: vec![method.as_str().to_owned()],
            paths: vec![pattern.map_or_else(|| PathPattern::exactly(path).to_string(), ToString::to_string)],
        };
        if same_origin.is_empty() {
            return Err(Refusal {
                reason: format!("`{host_text}` is not on this tool's allow-list"),
                host_grant: Some(host_text),
                rule: Some(rule),
            });
        }
        Err(Refusal {
            reason: format!(
                "this tool may send only some requests to `{host_text}`, and `{method} {path}` is not one of them"
            ),
            host_grant: None,
            rule: Some(rule),
        })
    }

    /// Whether some rule names the address `ip` itself for `scheme` and `port` (what a request
    /// needs to reach a loopback, private or link-local address), or is `localhost`'s.
    pub(crate) fn names_address(&self, scheme: Scheme, ip: IpAddr, port: u16, host: &str) -> bool {
        self.rules.iter().any(|resolved| {
            resolved.rule.names_address(scheme, ip, port)
                || (ip.is_loopback() && host == "localhost" && resolved.rule.allows_origin(scheme, "localhost", port))
        })
    }
}

/// The `allow_hosts` entry that would allow `host:port`.
pub(crate) fn host_grant(host: &str, port: u16, scheme: Scheme) -> String {
    let host = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
    if port == scheme.default_port() { host } else { format!("{host}:{port}") }
}

/// The spellings in which a server may echo a secret it was sent: as sent; percent-encoded
/// (upper- and lower-case escapes, `+` for a space); HTML-escaped; and JSON-escaped with `\/`
/// for `/` (PHP) or `\u003c`-style escapes for `<`, `>`, `&` and `'` (Go). The redactor adds
/// the plain JSON and Rust escapes of each.
pub(crate) fn echo_spellings(value: &str) -> Vec<String> {
    let encoded = percent_encode(value);
    let html = value.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let json = serde_json::to_string(value).unwrap_or_default();
    let json = json.get(1..json.len().saturating_sub(1)).unwrap_or_default().to_owned();
    let go = json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026").replace('\'', "\\u0027");
    let mut spellings = vec![
        value.to_owned(),
        lower_hex_escapes(&encoded),
        encoded.replace("%20", "+"),
        // Python's `quote` (keeps `/`) and JavaScript's `encodeURI` (keeps what a URL may hold).
        encode_except(value, b"/"),
        encode_except(value, b";,/?:@&=+$!*'()#"),
        html.replace('\'', "&#39;"),
        html.replace('\'', "&#x27;"),
        references(value, |byte| format!("&#{byte};")),
        references(value, |byte| format!("&#x{byte:x};")),
        references(value, |byte| format!("\\u{byte:04x}")),
        json.replace('/', "\\/"),
        go.replace('/', "\\/"),
        encoded,
        html,
        go,
    ];
    spellings.sort();
    spellings.dedup();
    spellings
}

/// `value` percent-encoded except for the unreserved characters and `keep`.
fn encode_except(value: &str, keep: &[u8]) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) || keep.contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// `value` with every ASCII character but the unreserved ones written as `reference(byte)`:
/// HTML's numeric references, JSON's `\u` escapes.
fn references(value: &str, reference: impl Fn(u8) -> String) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
    value.chars().map(|c| if c.is_ascii() && !plain(c) { reference(c as u8) } else { c.to_string() }).collect()
}

/// `%2F` as `%2f`: the same escape, as some servers write it.
fn lower_hex_escapes(encoded: &str) -> String {
    let mut lower = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(at) = rest.find('%') {
        lower.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or(&rest[at..]);
        lower.push_str(&escape.to_ascii_lowercase());
        rest = &rest[at + escape.len()..];
    }
    lower.push_str(rest);
    lower
}

/// `value` percent-encoded for a query string: every byte but the unreserved characters.
pub(crate) fn percent_encode(value: &str) -> String {
    encode_except(value, b"")
}

/// One `[[tools.<tool>.http]]` table of a policy file.
pub(super) fn parse_rule(table: &toml::Table, at: &str, problems: &mut Vec<String>) -> Option<HttpRule> {
    let Some(host) = table.get("host") else {
        problems.push(format!("{at} needs a `host`, such as \"api.github.com\""));
        return None;
    };
    let host = match host.as_str().map(str::parse::<HostPattern>) {
        Some(Ok(host)) => host,
        Some(Err(reason)) => {
            problems.push(format!("{at} host: {reason}"));
            return None;
        }
        None => {
            problems.push(format!("{at} host must be a string such as \"api.github.com\""));
            return None;
        }
    };
    let mut rule = HttpRule::new(host);
    let strings = |key: &str, value: &toml::Value, problems: &mut Vec<String>| -> Vec<String> {
        let Some(array) = value.as_array() else {
            problems.push(format!("{at} {key} must be an array of strings"));
            return Vec::new();
        };
        array
            .iter()
            .enumerate()
            .filter_map(|(i, entry)| {
                let text = entry.as_str().map(str::to_owned);
                if text.is_none() {
                    problems.push(format!("{at} {key}[{i}] must be a string"));
                }
                text
            })
            .collect()
    };
    for (key, value) in table {
        match key.as_str() {
            "host" => {}
            "methods" => rule = rule.methods(strings(key, value, problems)),
            "paths" => {
                for (i, text) in strings(key, value, problems).into_iter().enumerate() {
                    match text.parse::<PathPattern>() {
                        Ok(pattern) => rule.paths.push(pattern),
                        Err(reason) => problems.push(format!("{at} paths[{i}]: {reason}")),
                    }
                }
            }
            "ports" => {
                for (i, entry) in value.as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
                    match entry.as_integer().and_then(|port| u16::try_from(port).ok()).filter(|port| *port > 0) {
                        Some(port) => rule.ports.push(port),
                        None => problems.push(format!("{at} ports[{i}] must be a port number (1-65535)")),
                    }
                }
                if !value.is_array() {
                    problems.push(format!("{at} ports must be an array of port numbers, such as [443, 8443]"));
                }
            }
            "headers" => match value.as_table() {
                Some(headers) => {
                    for (name, value) in headers {
                        match value.as_str() {
                            Some(text) => rule.headers.push((name.clone(), HeaderTemplate::new(text))),
                            None => problems.push(format!(
                                "{at} headers.{name} must be a string such as \"Bearer {{secret:TOKEN}}\""
                            )),
                        }
                    }
                }
                None => problems.push(format!(
                    "{at} headers must be a table such as {{ Authorization = \"Bearer {{secret:TOKEN}}\" }}"
                )),
            },
            "placeholders" => rule.placeholders = strings(key, value, problems),
            _ => problems.push(format!(
                "{at} has an unknown key `{key}`; expected host, methods, paths, ports, headers or placeholders"
            )),
        }
    }
    problems.extend(rule.problems().into_iter().map(|problem| format!("{at}: {problem}")));
    Some(rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(host: &str) -> HttpRule {
        HttpRule::new(host.parse().expect("host"))
    }

    fn path(raw: &str) -> RequestPath {
        RequestPath::normalize(raw).expect("path")
    }

    #[test]
    fn placeholders_are_found_by_name() {
        let found: Vec<_> =
            placeholders("Bearer {secret:TOKEN} and {secret:B_2}{secret:} {secret:9x} {secret:A").collect();
        assert_eq!(found, [(7..21, "TOKEN"), (26..38, "B_2")]);
    }

    #[test]
    fn rules_allow_by_method_path_and_port_and_say_why_not() {
        let secrets = BTreeMap::from([("TOKEN".to_owned(), "tok-1234567890".to_owned())]);
        let issues = rule("api.github.com")
            .methods(["get", "POST"])
            .paths(["/repos/*/issues".parse().expect("path")])
            .header("Authorization", HeaderTemplate::new("Bearer {secret:TOKEN}"));
        let egress = Egress::resolve(&[issues], &["example.com".parse().expect("host")], &secrets).expect("resolve");
        let get = Method::GET;
        let allowed = egress.decide(&get, Scheme::Https, "api.github.com", 443, &path("/repos/x/issues")).expect("ok");
        assert_eq!(allowed.headers[0].1.to_str().expect("ascii"), "Bearer tok-1234567890");
        assert!(allowed.headers[0].1.is_sensitive());

        let refused = egress
            .decide(&Method::DELETE, Scheme::Https, "api.github.com", 443, &path("/repos/x/issues"))
            .expect_err("DELETE");
        assert!(refused.reason.contains("`DELETE /repos/x/issues` is not one of them"), "{}", refused.reason);
        assert_eq!(
            refused.rule.expect("a rule").to_string(),
            r#"{ host = "api.github.com", methods = ["DELETE"], paths = ["/repos/*/issues"] }"#
        );
        let refused = egress
            .decide(&get, Scheme::Https, "api.github.com", 443, &path("/repos/x/pulls/1"))
            .expect_err("another path");
        assert_eq!(refused.rule.expect("a rule").paths, ["/repos/x/pulls/1"]);
        assert!(
            egress.decide(&get, Scheme::Http, "api.github.com", 80, &path("/repos/x/issues")).is_err(),
            "https only"
        );
        assert!(egress.decide(&get, Scheme::Https, "api.github.com", 8443, &path("/repos/x/issues")).is_err());
        let elsewhere = egress.decide(&get, Scheme::Https, "evil.net", 443, &path("/")).expect_err("unlisted");
        assert_eq!(elsewhere.host_grant.as_deref(), Some("evil.net"));
        assert!(egress.decide(&Method::DELETE, Scheme::Http, "example.com", 80, &path("/any/thing")).is_ok());
        assert_eq!(egress.in_words(), ["GET, POST api.github.com under /repos/*/issues", "example.com"]);
    }

    #[test]
    fn ports_and_schemes_follow_the_rule() {
        let rule = rule("http://127.0.0.1").ports([8080, 8081]).placeholder("TOKEN");
        let secrets = BTreeMap::from([("TOKEN".to_owned(), "tok-1234567890".to_owned())]);
        let egress = Egress::resolve(&[rule], &[], &secrets).expect("resolve");
        assert!(egress.decide(&Method::GET, Scheme::Http, "127.0.0.1", 8081, &path("/")).is_ok());
        assert!(egress.decide(&Method::GET, Scheme::Http, "127.0.0.1", 80, &path("/")).is_err());
        assert!(egress.names_address(Scheme::Http, "127.0.0.1".parse().expect("ip"), 8080, "127.0.0.1"));
        assert!(!egress.names_address(Scheme::Http, "127.0.0.1".parse().expect("ip"), 9000, "127.0.0.1"));
    }

    #[test]
    fn resolving_refuses_unknown_secrets_bad_headers_and_doubled_ports() {
        let secrets = BTreeMap::from([("BAD".to_owned(), "line\r\nbreak-123".to_owned())]);
        let unknown = rule("a.example").header("X-Key", HeaderTemplate::new("{secret:NOPE}"));
        assert!(Egress::resolve(&[unknown], &[], &secrets).expect_err("unknown").contains("not granted"));
        let broken = rule("a.example").header("X-Key", HeaderTemplate::new("{secret:BAD}"));
        assert!(Egress::resolve(&[broken], &[], &secrets).expect_err("CRLF").contains("line break"));
        let host = rule("a.example").header("Host", HeaderTemplate::new("b.example"));
        assert!(Egress::resolve(&[host], &[], &secrets).expect_err("host").contains("set by the host"));
        let doubled = rule("a.example:8443").ports([9443]);
        assert!(Egress::resolve(&[doubled], &[], &secrets).expect_err("ports").contains("one place"));
        let method = rule("a.example").methods(["GE T"]);
        assert!(Egress::resolve(&[method], &[], &secrets).expect_err("method").contains("not an HTTP method"));
    }

    #[test]
    fn query_values_are_percent_encoded_and_echoes_spelled_every_common_way() {
        assert_eq!(percent_encode("a b/c~d"), "a%20b%2Fc~d");
        assert_eq!(echo_spellings("plain-token"), ["plain-token"]);
        let spellings = echo_spellings("tok/at+ck=5f3a&9c71<x>");
        for echo in [
            "tok/at+ck=5f3a&9c71<x>",
            "tok%2Fat%2Bck%3D5f3a%269c71%3Cx%3E",
            "tok%2fat%2bck%3d5f3a%269c71%3cx%3e",
            "tok/at+ck=5f3a&amp;9c71&lt;x&gt;",
            "tok\\/at+ck=5f3a&9c71<x>",
            "tok/at+ck=5f3a\\u00269c71\\u003cx\\u003e",
        ] {
            assert!(spellings.iter().any(|spelling| spelling == echo), "{echo} in {spellings:?}");
        }
    }
}
