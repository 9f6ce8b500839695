//! The operator's capability policy: what each tool may reach beyond pure computation.
//!
//! Deny by default. A tool gets outbound HTTP, directories, environment variables or other
//! limits only when a [`Policy`] (usually `toolcell.toml` in the tools folder) or the
//! embedding application grants them by name. A tool's own requests
//! ([`RequestedCapabilities`]) grant nothing.
//!
//! Secrets granted to tools never reach a log: [`RedactingWriter`] replaces them with
//! [`REDACTED`] in every line written through it.

// `hosts` and `paths` match a request's origin and path, `egress` holds HTTP rules and the
// secrets they send, `file` reads policy files, and `access` resolves a tool's grants into
// what its calls get.

mod access;
mod assertion;
mod code_mode;
mod egress;
mod file;
mod hosts;
mod paths;
mod registry;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub(crate) use self::access::{Access, GrantedDir, OpenDir, Protected, ProtectedKind, exposes, overlapping_grants};
pub use self::access::{MIN_SECRET_CHARS, RESERVED_HOST_VARIABLES};
pub use self::assertion::Assertion;
pub(crate) use self::assertion::Claim;
pub use self::code_mode::{CodeModePolicy, DEFAULT_PROGRAM_TOOL};
pub(crate) use self::egress::{Egress, ResolvedRule, host_grant, percent_encode, placeholders};
pub use self::egress::{HeaderTemplate, HttpRule, SuggestedRule};
pub use self::hosts::{HostGlob, HostPattern};
pub(crate) use self::hosts::{Scheme, canonical_address};
pub use self::paths::{PathPattern, normalize_path};
pub(crate) use self::paths::{RequestPath, percent_decoded};
pub use self::registry::{RegistryPolicy, RegistryTool, Signer};
pub use crate::redact::{REDACTED, RedactingWriter};
use crate::tool::limits::LimitOverrides;

/// Whether a policy read must find its `from_host` variables set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostVariables {
    /// Yes: the policy is read to run tools under.
    Required,
    /// No: it is read to ask questions of.
    NotRead,
}

/// The name of the policy file a tools folder may hold.
pub const POLICY_FILE: &str = "toolcell.toml";

/// What an operator grants one tool. The default grants nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Grants {
    /// Hosts the tool may send HTTP requests to, any method, any path.
    pub allow_hosts: Vec<HostPattern>,
    /// HTTP rules (`[[tools.<tool>.http]]`), by host, port, method and path, with headers the
    /// host adds; checked in order, before `allow_hosts`.
    pub http: Vec<HttpRule>,
    /// Secrets the host sends for the tool on the requests of rules that name them; never
    /// in the tool's environment.
    pub secrets: Vec<SecretGrant>,
    /// Host directories preopened for the tool.
    pub dirs: Vec<DirGrant>,
    /// Environment variables the tool sees. Secret values are redacted from everything the
    /// host reports.
    pub env: Vec<EnvGrant>,
    /// Tools this tool may call by name through the `calls` import (code mode). Each runs
    /// under its own limits and grants, never this tool's.
    pub call_tools: Vec<String>,
    /// Limits replacing the runtime's defaults for this tool.
    pub limits: LimitOverrides,
    /// Whether a person must approve each call code mode's programs make to this tool
    /// (`approve = true`), or none (`false`). Unset: the calls of a tool whose annotations say
    /// it is destructive or open-world wait for approval.
    pub approve: Option<bool>,
    /// How an MCP client that accepts tasks (the Tasks extension) gets this tool's calls:
    /// answered inline, or as a task it polls. Unset: [`TaskMode::Optional`].
    pub task: Option<TaskMode>,
}

/// When `toolcell serve` answers a tool's call with a task (MCP's Tasks extension) instead of
/// its result. Only clients that say they accept tasks ever get one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskMode {
    /// Never: every call is answered with its result (`task = "never"`).
    Never,
    /// When the call outlasts the server's threshold (`serve --task-after`); a quick call is
    /// answered with its result (`task = "optional"`, the default).
    Optional,
    /// From the start, for clients that accept tasks; others wait for the result
    /// (`task = "always"`).
    Always,
    /// From the start; a client that does not accept tasks is refused (`task = "required"`).
    Required,
}

impl FromStr for TaskMode {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        match value {
            "never" => Ok(Self::Never),
            "optional" => Ok(Self::Optional),
            "always" => Ok(Self::Always),
            "required" => Ok(Self::Required),
            _ => Err(format!(
                "`{value}` is not a task mode; use \"never\", \"optional\" (the default), \"always\" or \"required\""
            )),
        }
    }
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

    /// Also allows the requests `rule` covers (checked before `allow_hosts`, after earlier
    /// rules).
    #[must_use]
    pub fn http_rule(mut self, rule: HttpRule) -> Self {
        self.http.push(rule);
        self
    }

    /// Also holds a secret for the tool's HTTP rules to send.
    #[must_use]
    pub fn secret(mut self, secret: SecretGrant) -> Self {
        self.secrets.push(secret);
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

    /// Also lets the tool call the tool named `tool` (code mode).
    #[must_use]
    pub fn call_tool(mut self, tool: impl Into<String>) -> Self {
        self.call_tools.push(tool.into());
        self
    }

    /// Replaces the tool's limits.
    #[must_use]
    pub fn limits(mut self, limits: LimitOverrides) -> Self {
        self.limits = limits;
        self
    }

    /// Has a person approve each call code mode's programs make to the tool (`true`), or
    /// none (`false`).
    #[must_use]
    pub fn approve(mut self, approve: bool) -> Self {
        self.approve = Some(approve);
        self
    }

    /// Sets when `toolcell serve` answers the tool's calls with a task.
    #[must_use]
    pub fn task(mut self, task: TaskMode) -> Self {
        self.task = Some(task);
        self
    }

    /// Adds everything `other` grants; its limits, `approve` and `task` win where both set one.
    pub fn merge(&mut self, other: Grants) {
        self.approve = other.approve.or(self.approve);
        self.task = other.task.or(self.task);
        self.allow_hosts.extend(other.allow_hosts);
        self.http.extend(other.http);
        self.secrets.extend(other.secrets);
        self.dirs.extend(other.dirs);
        self.env.extend(other.env);
        for tool in other.call_tools {
            if !self.call_tools.contains(&tool) {
                self.call_tools.push(tool);
            }
        }
        self.limits = self.limits.merged(&other.limits);
    }

    /// Whether nothing beyond limits is granted.
    pub fn is_empty(&self) -> bool {
        !self.sends_http() && self.dirs.is_empty() && self.env.is_empty() && self.call_tools.is_empty()
    }

    /// Whether the tool may send any HTTP request (an `allow_hosts` entry or an `http` rule).
    pub fn sends_http(&self) -> bool {
        !self.allow_hosts.is_empty() || !self.http.is_empty()
    }
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

/// The value of a granted environment variable, and whether it is a secret.
///
/// Secrets (a value passed through from the host, or marked secret) are replaced with
/// [`REDACTED`] wherever the host reports text, and must be at least
/// [`MIN_SECRET_CHARS`] characters long. Plain values (a units setting, a region) are not
/// redacted. `Debug` and serialization never show a value.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvValue {
    /// A plain configuration value written in the policy.
    Fixed(#[serde(serialize_with = "serialize_redacted")] String),
    /// A secret value written in the policy (`NAME = { secret = "..." }`).
    Secret(#[serde(serialize_with = "serialize_redacted")] String),
    /// The value of this variable in the host's environment when the runtime is built; a
    /// secret.
    FromHost(String),
}

impl EnvValue {
    /// Whether the value is a secret (redacted from everything the host reports).
    pub fn is_secret(&self) -> bool {
        !matches!(self, Self::Fixed(_))
    }
}

fn serialize_redacted<S: serde::Serializer>(_: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(REDACTED)
}

impl fmt::Debug for EnvValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(_) | Self::Secret(_) => f.write_str(REDACTED),
            Self::FromHost(from) => write!(f, "${from}"),
        }
    }
}

impl fmt::Debug for EnvGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}", self.name, self.value)
    }
}

impl EnvGrant {
    /// A plain (not secret) value.
    pub fn fixed(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: name.into(), value: EnvValue::Fixed(value.into()) }
    }

    /// A secret value.
    pub fn secret(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: name.into(), value: EnvValue::Secret(value.into()) }
    }

    /// The host's value of `from`, under the name `name`; a secret.
    pub fn from_host(name: impl Into<String>, from: impl Into<String>) -> Self {
        Self { name: name.into(), value: EnvValue::FromHost(from.into()) }
    }
}

/// Parses the CLI form: `KEY=VALUE` (a plain value) or `KEY` (the host's value, passed through
/// as a secret).
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

/// A secret the host holds for a tool's HTTP rules (`[tools.<tool>.secrets]`): sent only on
/// the requests of rules that name it, never in the tool's environment, memory or results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SecretGrant {
    /// The name rules use in placeholders: `{secret:NAME}`.
    pub name: String,
    /// Where the value comes from: the policy (`{ secret = "…" }`) or the host's environment
    /// (`{ from_host = "…" }`). A plain value is refused: it would not be a secret.
    pub value: EnvValue,
}

impl SecretGrant {
    /// A secret written in the policy.
    pub fn value(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: name.into(), value: EnvValue::Secret(value.into()) }
    }

    /// The host's value of `from`, under the name `name`.
    pub fn from_host(name: impl Into<String>, from: impl Into<String>) -> Self {
        Self { name: name.into(), value: EnvValue::FromHost(from.into()) }
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
    /// The `[code_mode]` table, when code mode is on.
    code_mode: Option<CodeModePolicy>,
    /// The files it was read from: no tool may be granted a directory that holds one.
    files: Vec<PathBuf>,
    /// What `toolcell policy check` proves (the `assertions` key).
    assertions: Vec<Assertion>,
    /// Tools from registries, and the keys they must be signed by.
    registry: RegistryPolicy,
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

    /// Code mode's settings, when code mode is on (a `[code_mode]` table).
    pub fn code_mode(&self) -> Option<&CodeModePolicy> {
        self.code_mode.as_ref()
    }

    /// Turns code mode on, with `settings` over any this policy has.
    pub fn set_code_mode(&mut self, settings: CodeModePolicy) {
        self.code_mode.get_or_insert_with(CodeModePolicy::default).merge(settings);
    }

    /// Adds every grant of `other`; its code mode settings win over these.
    pub fn merge(&mut self, other: Policy) {
        for (tool, grants) in other.tools {
            self.grant(tool, grants);
        }
        if let Some(code_mode) = other.code_mode {
            self.set_code_mode(code_mode);
        }
        for file in other.files {
            if !self.files.contains(&file) {
                self.files.push(file);
            }
        }
        self.assertions.extend(other.assertions);
        self.registry.merge(other.registry);
    }

    /// The tools it takes from registries (`source = "oci://…"`), their signers, and the
    /// registries spoken to over plain HTTP.
    pub fn registry(&self) -> &RegistryPolicy {
        &self.registry
    }

    /// Takes the tool `tool` from a registry, as `source = "oci://…"` in its table does: its
    /// component must define `tool` and be signed as `trust` says (by any one of its signers,
    /// or, explicitly, unsigned). A tag is pinned in `lockfile` the first time.
    pub fn take_from_registry(
        &mut self,
        tool: impl Into<String>,
        reference: toolcell_oci::OciReference,
        trust: toolcell_oci::signature::Trust,
        lockfile: impl Into<PathBuf>,
    ) {
        self.registry.take(tool.into(), reference, trust, lockfile.into());
    }

    /// The assertions the policy makes about itself (`assertions = ['deny write "/home/**"']`),
    /// which [`Self::check`] proves.
    pub fn assertions(&self) -> &[Assertion] {
        &self.assertions
    }

    /// The policy files this policy was read from ([`Self::from_file`]), merged ones
    /// included. A runtime refuses any tool granted a directory that holds one of them: the
    /// tool could rewrite its own grants, or read another tool's secrets.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
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

/// A capability a tool needs and is not granted: without it, its calls can only fail. See
/// [`crate::Runtime::missing_grants`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum MissingGrant {
    /// It expects a directory at `guest_path`, and none is granted there.
    Directory {
        /// Where it looks for it.
        guest_path: String,
    },
    /// It makes HTTP requests and is granted no host: to these hosts, when it names them.
    Hosts {
        /// The hosts it asks for (none named: any host the operator chooses).
        requested: Vec<String>,
    },
    /// It reads this environment variable, and none of that name is granted.
    Env {
        /// The variable.
        name: String,
    },
}

impl fmt::Display for MissingGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Directory { guest_path } => write!(f, "a directory at {guest_path}"),
            Self::Hosts { requested } if requested.is_empty() => write!(f, "a host to send HTTP requests to"),
            Self::Hosts { requested } => write!(f, "HTTP access to {}", requested.join(", ")),
            Self::Env { name } => write!(f, "the environment variable {name}"),
        }
    }
}

/// What a tool that requests `requested` (and makes HTTP requests when `uses_http`) needs and
/// `grants` does not give it.
pub fn missing_grants(requested: &RequestedCapabilities, uses_http: bool, grants: &Grants) -> Vec<MissingGrant> {
    let mut missing = Vec::new();
    for directory in &requested.directories {
        if !grants.dirs.iter().any(|dir| dir.guest == directory.guest_path) {
            missing.push(MissingGrant::Directory { guest_path: directory.guest_path.clone() });
        }
    }
    if (uses_http || !requested.http_hosts.is_empty()) && !grants.sends_http() {
        missing.push(MissingGrant::Hosts { requested: requested.http_hosts.clone() });
    }
    for name in &requested.env {
        if !grants.env.iter().any(|env| &env.name == name) {
            missing.push(MissingGrant::Env { name: name.clone() });
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_misses_each_requested_capability_it_is_not_granted() {
        let requested = RequestedCapabilities {
            http_hosts: vec!["api.example.com".into()],
            directories: vec![RequestedDirectory { guest_path: "/workspace".into(), writable: false }],
            env: vec!["API_KEY".into()],
        };
        let missing = missing_grants(&requested, true, &Grants::new());
        let said: Vec<String> = missing.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            ["a directory at /workspace", "HTTP access to api.example.com", "the environment variable API_KEY"]
        );
        let granted = Grants {
            allow_hosts: vec!["api.example.com".parse().expect("host")],
            dirs: vec!["/tmp:/workspace".parse().expect("dir")],
            env: vec![EnvGrant::fixed("API_KEY", "x")],
            ..Grants::new()
        };
        assert_eq!(missing_grants(&requested, true, &granted), []);
        let fetcher = missing_grants(&RequestedCapabilities::default(), true, &Grants::new());
        assert_eq!(fetcher, [MissingGrant::Hosts { requested: vec![] }], "imports wasi:http, names no host");
        assert_eq!(missing_grants(&RequestedCapabilities::default(), false, &Grants::new()), []);
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
}
