//! The operator's capability policy: what each tool may reach beyond pure computation.
//!
//! Deny by default. A tool gets outbound HTTP, directories, environment variables or other
//! limits only when a [`Policy`] (usually `toolcell.toml` in the tools folder) or the
//! embedding application grants them by name. A tool's own requests
//! ([`RequestedCapabilities`]) grant nothing.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::limits::LimitOverrides;
use crate::redact::Redactor;

/// The name of the policy file a tools folder may hold.
pub const POLICY_FILE: &str = "toolcell.toml";

/// What an operator grants one tool. The default grants nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Grants {
    /// Hosts the tool may send HTTP requests to.
    pub allow_hosts: Vec<HostPattern>,
    /// Host directories preopened for the tool.
    pub dirs: Vec<DirGrant>,
    /// Environment variables the tool sees. Their values are secrets: they are redacted
    /// from everything the host reports.
    pub env: Vec<EnvGrant>,
    /// Limits replacing the runtime's defaults for this tool.
    pub limits: LimitOverrides,
}

impl Grants {
    /// Grants nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also allows HTTP requests to hosts matching `pattern`.
    #[must_use]
    pub fn allow_host(mut self, pattern: HostPattern) -> Self {
        self.allow_hosts.push(pattern);
        self
    }

    /// Also preopens a directory.
    #[must_use]
    pub fn dir(mut self, dir: DirGrant) -> Self {
        self.dirs.push(dir);
        self
    }

    /// Also sets an environment variable.
    #[must_use]
    pub fn env(mut self, env: EnvGrant) -> Self {
        self.env.push(env);
        self
    }

    /// Replaces the tool's limits.
    #[must_use]
    pub fn limits(mut self, limits: LimitOverrides) -> Self {
        self.limits = limits;
        self
    }

    /// Adds everything `other` grants; its limits win where both set one.
    pub fn merge(&mut self, other: Grants) {
        self.allow_hosts.extend(other.allow_hosts);
        self.dirs.extend(other.dirs);
        self.env.extend(other.env);
        self.limits = self.limits.merged(&other.limits);
    }

    /// Whether nothing beyond limits is granted.
    pub fn is_empty(&self) -> bool {
        self.allow_hosts.is_empty() && self.dirs.is_empty() && self.env.is_empty()
    }
}

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
    fn default_port(self) -> u16 {
        match self {
            Self::Http => 80,
            Self::Https => 443,
        }
    }
}

impl HostPattern {
    /// Whether a request to `scheme://host:port` matches this entry. `host` is lower-case,
    /// without brackets or a trailing dot.
    pub(crate) fn matches(&self, scheme: Scheme, host: &str, port: u16) -> bool {
        if self.scheme.is_some_and(|wanted| wanted != scheme) {
            return false;
        }
        if self.port.unwrap_or(scheme.default_port()) != port {
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

/// A host directory preopened for a tool at a guest path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DirGrant {
    /// The directory on the host.
    pub host: PathBuf,
    /// Where the tool sees it, an absolute path such as `/workspace`.
    pub guest: String,
    /// Whether the tool may create, change and delete files in it. Default: read-only.
    pub writable: bool,
}

impl DirGrant {
    /// A read-only grant of `host` at `guest`.
    pub fn read_only(host: impl Into<PathBuf>, guest: impl Into<String>) -> Self {
        Self { host: host.into(), guest: guest.into(), writable: false }
    }

    /// A read-write grant of `host` at `guest`.
    pub fn read_write(host: impl Into<PathBuf>, guest: impl Into<String>) -> Self {
        Self { host: host.into(), guest: guest.into(), writable: true }
    }
}

/// Parses the CLI form `HOST_DIR:GUEST_DIR[:ro|rw]` (read-only unless `:rw`).
impl FromStr for DirGrant {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (rest, writable) = match text.rsplit_once(':') {
            Some((rest, "rw")) => (rest, true),
            Some((rest, "ro")) => (rest, false),
            _ => (text, false),
        };
        let Some((host, guest)) = rest.rsplit_once(':') else {
            return Err(format!("`{text}` is not HOST_DIR:GUEST_DIR[:ro|rw], e.g. `./project:/workspace:ro`"));
        };
        if host.is_empty() || guest.is_empty() {
            return Err(format!("`{text}` is not HOST_DIR:GUEST_DIR[:ro|rw], e.g. `./project:/workspace:ro`"));
        }
        Ok(Self { host: host.into(), guest: guest.into(), writable })
    }
}

/// An environment variable a tool sees.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EnvGrant {
    /// The name the tool reads.
    pub name: String,
    /// Where the value comes from.
    pub value: EnvValue,
}

/// The value of a granted environment variable. Never printed: `Debug` and serialization
/// show only where a value comes from.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvValue {
    /// A value written in the policy.
    Fixed(#[serde(serialize_with = "serialize_redacted")] String),
    /// The value of this variable in the host's environment when the runtime is built.
    FromHost(String),
}

fn serialize_redacted<S: serde::Serializer>(_: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(REDACTED)
}

/// What a secret is replaced with wherever the host reports text.
pub const REDACTED: &str = "[REDACTED]";

impl fmt::Debug for EnvValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(_) => f.write_str(REDACTED),
            Self::FromHost(from) => write!(f, "${from}"),
        }
    }
}

impl fmt::Debug for EnvGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            EnvValue::Fixed(_) => write!(f, "{}={REDACTED}", self.name),
            EnvValue::FromHost(from) => write!(f, "{}=${from}", self.name),
        }
    }
}

impl EnvGrant {
    /// A fixed value.
    pub fn fixed(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: name.into(), value: EnvValue::Fixed(value.into()) }
    }

    /// The host's value of `from`, under the name `name`.
    pub fn from_host(name: impl Into<String>, from: impl Into<String>) -> Self {
        Self { name: name.into(), value: EnvValue::FromHost(from.into()) }
    }
}

/// Parses the CLI form: `KEY=VALUE` (a fixed value) or `KEY` (passed through from the host).
impl FromStr for EnvGrant {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let grant = match text.split_once('=') {
            Some((name, value)) => Self::fixed(name, value),
            None => Self::from_host(text, text),
        };
        check_env_name(&grant.name)?;
        Ok(grant)
    }
}

fn check_env_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        Err(format!("`{name}` is not an environment variable name (non-empty, without `=`)"))
    } else {
        Ok(())
    }
}

/// Grants per tool name, usually read from a tools folder's `toolcell.toml`:
///
/// ```toml
/// [tools.http_fetch]
/// allow_hosts = ["example.com", "*.wikipedia.org", "localhost:8080"]
///
/// [tools.files]
/// dirs = [{ host = "./project", guest = "/workspace", mode = "ro" }]
///
/// [tools.weather.env]
/// API_KEY = { from_host = "WEATHER_API_KEY" }
/// UNITS = "metric"
///
/// [tools.weather.limits]
/// timeout_ms = 10000
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    tools: BTreeMap<String, Grants>,
}

/// Why a policy could not be used. Every problem is listed, each naming the file, the
/// table and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} is not a valid policy:\n{}", file.display(), problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct PolicyError {
    /// The policy file.
    pub file: PathBuf,
    /// What is wrong, one entry per problem.
    pub problems: Vec<String>,
}

impl Policy {
    /// Grants nothing to anyone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a policy file. Relative directory paths in it are relative to the file's folder.
    ///
    /// # Errors
    /// When the file cannot be read, is not TOML, or has unknown keys, bad host patterns,
    /// bad values or malformed directory grants.
    pub fn from_file(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| PolicyError { file: path.to_owned(), problems: vec![format!("cannot be read: {err}")] })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse(&text, base).map_err(|problems| PolicyError { file: path.to_owned(), problems })
    }

    /// Parses policy text; relative directory paths are joined to `base`.
    ///
    /// # Errors
    /// Every problem found, each naming the table and key.
    pub fn parse(text: &str, base: &Path) -> Result<Self, Vec<String>> {
        let document: toml::Table = toml::from_str(text).map_err(|err| vec![err.to_string().trim_end().to_owned()])?;
        let mut problems = Vec::new();
        let mut tools = BTreeMap::new();
        for (key, value) in document {
            if key != "tools" {
                problems.push(format!("unknown top-level key `{key}`; grants go in `[tools.<tool name>]` tables"));
                continue;
            }
            let Some(table) = value.as_table() else {
                problems.push("`tools` must be a table of `[tools.<tool name>]` tables".into());
                continue;
            };
            for (tool, value) in table {
                let at = format!("[tools.{tool}]");
                match value.as_table() {
                    Some(table) => {
                        tools.insert(tool.clone(), parse_grants(table, base, &at, &mut problems));
                    }
                    None => problems.push(format!("{at} must be a table")),
                }
            }
        }
        if problems.is_empty() { Ok(Self { tools }) } else { Err(problems) }
    }

    /// The grants of one tool, if the policy names it.
    pub fn grants(&self, tool: &str) -> Option<&Grants> {
        self.tools.get(tool)
    }

    /// Adds grants for a tool, on top of what the policy already grants it.
    pub fn grant(&mut self, tool: impl Into<String>, grants: Grants) {
        self.tools.entry(tool.into()).or_default().merge(grants);
    }

    /// Every tool the policy names.
    pub fn tools(&self) -> impl Iterator<Item = (&str, &Grants)> {
        self.tools.iter().map(|(name, grants)| (name.as_str(), grants))
    }

    /// Adds every grant of `other`.
    pub fn merge(&mut self, other: Policy) {
        for (tool, grants) in other.tools {
            self.grant(tool, grants);
        }
    }
}

fn parse_grants(table: &toml::Table, base: &Path, at: &str, problems: &mut Vec<String>) -> Grants {
    let mut grants = Grants::default();
    for (key, value) in table {
        match key.as_str() {
            "allow_hosts" => {
                for (i, entry) in array(value, at, key, problems).iter().enumerate() {
                    match entry.as_str().map(str::parse::<HostPattern>) {
                        Some(Ok(pattern)) => grants.allow_hosts.push(pattern),
                        Some(Err(reason)) => problems.push(format!("{at} allow_hosts[{i}]: {reason}")),
                        None => {
                            problems.push(format!("{at} allow_hosts[{i}] must be a string such as \"example.com\""))
                        }
                    }
                }
            }
            "dirs" => {
                for (i, entry) in array(value, at, key, problems).iter().enumerate() {
                    if let Some(dir) = parse_dir(entry, base, &format!("{at} dirs[{i}]"), problems) {
                        grants.dirs.push(dir);
                    }
                }
            }
            "env" => match value.as_table() {
                Some(env) => {
                    for (name, value) in env {
                        if let Some(grant) = parse_env(name, value, &format!("{at} env.{name}"), problems) {
                            grants.env.push(grant);
                        }
                    }
                }
                None => problems.push(format!(
                    "{at} env must be a table of NAME = \"value\" or NAME = {{ from_host = \"HOST_NAME\" }}"
                )),
            },
            "limits" => match value.as_table() {
                Some(limits) => grants.limits = parse_limits(limits, &format!("{at} limits"), problems),
                None => problems.push(format!("{at} limits must be a table such as {{ timeout_ms = 10000 }}")),
            },
            _ => problems.push(format!("{at} has an unknown key `{key}`; expected allow_hosts, dirs, env or limits")),
        }
    }
    let mut guest_paths = std::collections::BTreeSet::new();
    for dir in &grants.dirs {
        if !guest_paths.insert(dir.guest.as_str()) {
            problems.push(format!("{at} dirs: two directories are granted at guest path `{}`", dir.guest));
        }
    }
    grants
}

fn array<'a>(value: &'a toml::Value, at: &str, key: &str, problems: &mut Vec<String>) -> &'a [toml::Value] {
    match value.as_array() {
        Some(array) => array,
        None => {
            problems.push(format!("{at} {key} must be an array"));
            &[]
        }
    }
}

fn parse_dir(value: &toml::Value, base: &Path, at: &str, problems: &mut Vec<String>) -> Option<DirGrant> {
    let Some(table) = value.as_table() else {
        problems.push(format!(
            "{at} must be a table such as {{ host = \"./project\", guest = \"/workspace\", mode = \"ro\" }}"
        ));
        return None;
    };
    let (mut host, mut guest, mut writable) = (None, None, false);
    for (key, value) in table {
        match (key.as_str(), value.as_str()) {
            ("host", Some(path)) => host = Some(base.join(path)),
            ("guest", Some(path)) => guest = Some(path.to_owned()),
            ("mode", Some("ro")) => writable = false,
            ("mode", Some("rw")) => writable = true,
            ("mode", _) => problems.push(format!("{at} mode must be \"ro\" (read-only) or \"rw\" (read-write)")),
            ("host" | "guest", None) => problems.push(format!("{at} {key} must be a string path")),
            _ => problems.push(format!("{at} has an unknown key `{key}`; expected host, guest and mode")),
        }
    }
    let (Some(host), Some(guest)) = (host, guest) else {
        problems
            .push(format!("{at} needs both `host` (a directory on this machine) and `guest` (e.g. \"/workspace\")"));
        return None;
    };
    match check_dir(DirGrant { host, guest, writable }) {
        Ok(dir) => Some(dir),
        Err(reason) => {
            problems.push(format!("{at}: {reason}"));
            None
        }
    }
}

/// Checks a directory grant and makes its host path canonical (so later changes to
/// symlinks on the way do not move it).
pub(crate) fn check_dir(mut dir: DirGrant) -> Result<DirGrant, String> {
    if !dir.guest.starts_with('/') || dir.guest.split('/').any(|part| part == ".." || part == ".") {
        return Err(format!(
            "guest path `{}` must be absolute and without `.` or `..`, e.g. \"/workspace\"",
            dir.guest
        ));
    }
    let host = std::fs::canonicalize(&dir.host)
        .map_err(|err| format!("host directory {} cannot be used: {err}", dir.host.display()))?;
    if !host.is_dir() {
        return Err(format!("host path {} is not a directory", dir.host.display()));
    }
    dir.host = host;
    Ok(dir)
}

fn parse_env(name: &str, value: &toml::Value, at: &str, problems: &mut Vec<String>) -> Option<EnvGrant> {
    if let Err(reason) = check_env_name(name) {
        problems.push(format!("{at}: {reason}"));
        return None;
    }
    let grant = match value {
        toml::Value::String(fixed) => EnvGrant::fixed(name, fixed.clone()),
        toml::Value::Table(table) => match table.get("from_host").and_then(toml::Value::as_str) {
            Some(from) if table.len() == 1 => {
                if std::env::var_os(from).is_none() {
                    problems.push(format!(
                        "{at}: the host environment has no variable `{from}`; set it or remove the grant"
                    ));
                    return None;
                }
                EnvGrant::from_host(name, from)
            }
            _ => {
                problems.push(format!("{at} must be {{ from_host = \"HOST_NAME\" }} and nothing else"));
                return None;
            }
        },
        _ => {
            problems.push(format!("{at} must be a string or {{ from_host = \"HOST_NAME\" }}"));
            return None;
        }
    };
    Some(grant)
}

fn parse_limits(table: &toml::Table, at: &str, problems: &mut Vec<String>) -> LimitOverrides {
    let mut limits = LimitOverrides::default();
    for (key, value) in table {
        let Some(number) = value.as_integer().and_then(|n| u64::try_from(n).ok()).filter(|n| *n > 0) else {
            problems.push(format!("{at} {key} must be a positive integer"));
            continue;
        };
        let slot = match key.as_str() {
            "fuel" => &mut limits.fuel,
            "memory_bytes" => &mut limits.memory_bytes,
            "max_argument_bytes" => &mut limits.max_argument_bytes,
            "max_output_bytes" => &mut limits.max_output_bytes,
            "max_stdio_bytes" => &mut limits.max_stdio_bytes,
            "max_http_response_bytes" => &mut limits.max_http_response_bytes,
            "timeout_ms" => {
                limits.timeout = Some(Duration::from_millis(number));
                continue;
            }
            _ => {
                problems.push(format!(
                    "{at} has an unknown key `{key}`; expected fuel, timeout_ms, memory_bytes, max_argument_bytes, \
                     max_output_bytes, max_stdio_bytes or max_http_response_bytes"
                ));
                continue;
            }
        };
        *slot = Some(number);
    }
    limits
}

/// A tool's grants, checked and resolved once when the runtime is built, ready for every
/// call: directories canonical, environment values read from the host.
#[derive(Clone, Default)]
pub(crate) struct Access {
    pub(crate) allow_hosts: Arc<[HostPattern]>,
    pub(crate) dirs: Vec<DirGrant>,
    /// Names and values; the values are secrets.
    pub(crate) env: Vec<(String, String)>,
    pub(crate) redactor: Redactor,
}

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Access")
            .field("allow_hosts", &self.allow_hosts)
            .field("dirs", &self.dirs)
            .field("env", &self.env.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .finish()
    }
}

impl Access {
    /// Checks `grants` and reads passed-through variables with `host_env`.
    pub(crate) fn resolve(grants: &Grants, host_env: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut dirs = Vec::with_capacity(grants.dirs.len());
        for dir in &grants.dirs {
            dirs.push(check_dir(dir.clone())?);
        }
        let mut env = Vec::with_capacity(grants.env.len());
        for grant in &grants.env {
            check_env_name(&grant.name)?;
            let value = match &grant.value {
                EnvValue::Fixed(value) => value.clone(),
                EnvValue::FromHost(from) => host_env(from).ok_or_else(|| {
                    format!(
                        "environment variable `{}` is granted from the host's `{from}`, which is not set; \
                         set it before starting toolcell or remove the grant",
                        grant.name
                    )
                })?,
            };
            if value.contains('\0') {
                return Err(format!("environment variable `{}` has a value containing a NUL byte", grant.name));
            }
            env.push((grant.name.clone(), value));
        }
        let redactor = Redactor::new(env.iter().map(|(_, value)| value.clone()));
        Ok(Self { allow_hosts: grants.allow_hosts.clone().into(), dirs, env, redactor })
    }
}

/// What a tool asks its operator for (the `capabilities` export of the WIT world). Asking
/// grants nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestedCapabilities {
    /// Host patterns the tool fetches from.
    pub http_hosts: Vec<String>,
    /// Directories the tool expects at guest paths.
    pub directories: Vec<RequestedDirectory>,
    /// Environment variable names the tool reads.
    pub env: Vec<String>,
}

impl RequestedCapabilities {
    /// Whether the tool requests nothing.
    pub fn is_empty(&self) -> bool {
        self.http_hosts.is_empty() && self.directories.is_empty() && self.env.is_empty()
    }
}

/// A directory a tool requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestedDirectory {
    /// Where the tool looks for it.
    pub guest_path: String,
    /// Whether it writes there.
    pub writable: bool,
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

    #[test]
    fn cli_forms_parse() {
        let dir: DirGrant = "./p:/workspace:rw".parse().expect("dir");
        assert_eq!((dir.host, dir.guest.as_str(), dir.writable), (PathBuf::from("./p"), "/workspace", true));
        let dir: DirGrant = "/tmp:/data".parse().expect("dir");
        assert!(!dir.writable);
        assert!("/tmp".parse::<DirGrant>().is_err());
        assert_eq!("KEY=a=b".parse::<EnvGrant>(), Ok(EnvGrant::fixed("KEY", "a=b")));
        assert_eq!("HOME".parse::<EnvGrant>(), Ok(EnvGrant::from_host("HOME", "HOME")));
        assert!("=x".parse::<EnvGrant>().is_err());
    }

    #[test]
    fn env_values_never_print() {
        let grant = EnvGrant::fixed("TOKEN", "hunter2");
        assert!(!format!("{grant:?}").contains("hunter2"));
        let json = serde_json::to_string(&grant).expect("serialize");
        assert!(!json.contains("hunter2"), "{json}");
    }

    #[test]
    fn policy_files_parse_and_every_problem_names_its_table_and_key() {
        let dir = std::env::temp_dir();
        let text = r#"
            [tools.fetch]
            allow_hosts = ["example.com", "*.wiki.org:8443"]
            env = { TOKEN = { from_host = "PATH" }, MODE = "fast" }
            limits = { timeout_ms = 2000, max_http_response_bytes = 1000 }

            [tools.files]
            dirs = [{ host = "." , guest = "/workspace" }]
        "#;
        let policy = Policy::parse(text, &dir).expect("valid policy");
        let fetch = policy.grants("fetch").expect("fetch");
        assert_eq!(fetch.allow_hosts.len(), 2);
        assert_eq!(fetch.env.len(), 2);
        assert_eq!(fetch.limits.timeout, Some(Duration::from_millis(2000)));
        assert_eq!(fetch.limits.max_http_response_bytes, Some(1000));
        let files = policy.grants("files").expect("files");
        assert!(files.dirs[0].host.is_absolute() && !files.dirs[0].writable);

        let bad = r#"
            [tools.fetch]
            allow_host = ["example.com"]
            allow_hosts = ["*bad.com", 3]
            [tools.files]
            dirs = [{ host = "/no/such/dir", guest = "/w" }, { host = ".", guest = "relative", mode = "rx" }]
            limits = { fuel = -1, speed = 3 }
            env = { A = 1, B = { from_host = "TOOLCELL_TEST_NO_SUCH_VARIABLE" } }
            [other]
        "#;
        let problems = Policy::parse(bad, &dir).expect_err("invalid policy");
        let expected = [
            "[tools.fetch] has an unknown key `allow_host`",
            "[tools.fetch] allow_hosts[0]: `*bad.com`",
            "[tools.fetch] allow_hosts[1] must be a string",
            "[tools.files] dirs[0]: host directory /no/such/dir cannot be used",
            "[tools.files] dirs[1] mode must be",
            "[tools.files] limits fuel must be a positive integer",
            "[tools.files] limits has an unknown key `speed`",
            "[tools.files] env.A must be a string",
            "[tools.files] env.B: the host environment has no variable `TOOLCELL_TEST_NO_SUCH_VARIABLE`",
            "unknown top-level key `other`",
        ];
        for expected in expected {
            assert!(problems.iter().any(|p| p.contains(expected)), "missing {expected:?} in {problems:#?}");
        }
        assert!(Policy::parse("[tools", &dir).expect_err("syntax")[0].contains("line 1"));
    }
}
