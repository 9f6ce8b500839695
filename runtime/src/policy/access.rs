//! Resolving a tool's grants once, when the runtime is built: directories checked, made
//! canonical and opened, environment values read from the host, secrets handed to the
//! redactor; and the checks across tools (grants that overlap a writable one, grants that
//! expose the compile cache).
//!
//! (Over 500 lines only with its tests: about 410 of code.)

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::egress::{self, Egress};
use super::{DirGrant, EnvValue, Grants, check_env_name};
use crate::redact::Redactor;

/// Secrets shorter than this are refused: replacing every occurrence of a 3-character
/// value would rewrite ordinary text and numbers in results.
pub const MIN_SECRET_CHARS: usize = 8;

/// Checks a directory grant and opens it: a relative host path is taken from `base` (made
/// canonical: links the operator set up above it are followed), and from there the path is
/// walked one component at a time without following a symlink, so that a link planted in it
/// cannot move the grant. Returns the grant with its resolved host path, and the directory.
pub(crate) fn check_dir(mut dir: DirGrant, base: &Path) -> Result<(DirGrant, File), String> {
    if !dir.guest.starts_with('/') || dir.guest.split('/').any(|part| part == ".." || part == ".") {
        return Err(format!(
            "guest path `{}` must be absolute and without `.` or `..`, e.g. \"/workspace\"",
            dir.guest
        ));
    }
    let (host, handle) = open_without_symlinks(&dir.host, base)?;
    dir.host = host;
    Ok((dir, handle))
}

/// Opens the directory at `path` (relative to `base`) through no symlink below `base`.
#[cfg(unix)]
fn open_without_symlinks(path: &Path, base: &Path) -> Result<(PathBuf, File), String> {
    use std::path::Component;

    use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, openat, statat};

    let unusable = |err: &dyn fmt::Display| format!("host directory {} cannot be used: {err}", path.display());
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let (mut resolved, mut dir) = if path.is_absolute() {
        (PathBuf::from("/"), openat(CWD, "/", flags, Mode::empty()).map_err(|err| unusable(&err))?)
    } else {
        let base = if base.as_os_str().is_empty() { Path::new(".") } else { base };
        let base = std::fs::canonicalize(base).map_err(|err| unusable(&err))?;
        let dir = openat(CWD, &base, flags, Mode::empty()).map_err(|err| unusable(&err))?;
        (base, dir)
    };
    for component in path.components() {
        let name = match component {
            Component::Normal(name) => name,
            Component::ParentDir => {
                dir = openat(&dir, "..", flags, Mode::empty()).map_err(|err| unusable(&err))?;
                resolved.pop();
                continue;
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
        };
        let parent = dir;
        resolved.push(name);
        dir = openat(&parent, name, flags | OFlags::NOFOLLOW, Mode::empty()).map_err(|err| {
            let kind =
                statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW).map(|stat| FileType::from_raw_mode(stat.st_mode));
            match kind {
                Ok(FileType::Symlink) => crosses_symlink(path, &resolved),
                Ok(kind) if kind != FileType::Directory => format!("host path {} is not a directory", path.display()),
                _ => unusable(&err),
            }
        })?;
    }
    Ok((resolved, File::from(dir)))
}

#[cfg(not(unix))]
fn open_without_symlinks(path: &Path, base: &Path) -> Result<(PathBuf, File), String> {
    let unusable = |err: std::io::Error| format!("host directory {} cannot be used: {err}", path.display());
    let host = std::fs::canonicalize(base.join(path)).map_err(unusable)?;
    if !host.is_dir() {
        return Err(format!("host path {} is not a directory", path.display()));
    }
    let handle = File::open(&host).map_err(unusable)?;
    Ok((host, handle))
}

/// Why a grant whose path goes through the symlink at `link` is refused.
fn crosses_symlink(path: &Path, link: &Path) -> String {
    let target = std::fs::read_link(link).map(|target| format!(" (to {})", target.display())).unwrap_or_default();
    format!(
        "host directory {} goes through the symlink {}{target}. A grant never follows a symlink: whoever can \
         change the link could move the grant elsewhere. Grant the directory by its real path",
        path.display(),
        link.display()
    )
}

/// A granted directory, opened once. Every call's preopen is made from this handle, not by
/// looking the path up again: whoever can write to a parent folder cannot later swap the
/// directory for a symlink and move the grant elsewhere.
#[derive(Debug, Clone)]
pub(crate) struct OpenDir {
    /// The resolved host path, for messages and for comparing grants.
    pub(crate) host: PathBuf,
    pub(crate) guest: String,
    pub(crate) writable: bool,
    handle: Arc<File>,
}

impl OpenDir {
    fn new(grant: &DirGrant, handle: File) -> Self {
        Self {
            host: grant.host.clone(),
            guest: grant.guest.clone(),
            writable: grant.writable,
            handle: Arc::new(handle),
        }
    }

    /// Checks and opens `grant` (a relative host path is relative to the working directory).
    pub(crate) fn open(grant: &DirGrant) -> Result<Self, String> {
        let (grant, handle) = check_dir(grant.clone(), Path::new("."))?;
        Ok(Self::new(&grant, handle))
    }

    /// A path that opens exactly the directory that was granted, whatever has since been
    /// renamed or replaced on the way to it.
    pub(crate) fn reopen_path(&self) -> PathBuf {
        handle_path(&self.handle).unwrap_or_else(|| self.host.clone())
    }

    /// Whether `other` is the very directory this one is (the same file, not just the same
    /// path).
    pub(crate) fn same_directory(&self, other: &OpenDir) -> bool {
        same_file(&self.handle, &other.handle)
    }
}

#[cfg(unix)]
fn same_file(a: &File, b: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (a.metadata(), b.metadata()) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, _: &File) -> bool {
    false
}

/// The `/proc/self/fd/N` (or `/dev/fd/N`) path of an open file: opening it reaches the open
/// file itself, not whatever its old path names now.
#[cfg(unix)]
fn handle_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    let base = if cfg!(target_os = "linux") { "/proc/self/fd" } else { "/dev/fd" };
    Some(PathBuf::from(format!("{base}/{}", file.as_raw_fd())))
}

#[cfg(not(unix))]
fn handle_path(_: &File) -> Option<PathBuf> {
    None
}

/// A tool's grants, checked and resolved once when the runtime is built, ready for every
/// call.
#[derive(Clone, Default)]
pub(crate) struct Access {
    /// The HTTP requests the tool may send, and the headers the host adds to them.
    pub(crate) egress: Egress,
    pub(crate) dirs: Vec<OpenDir>,
    /// Names and values (secret or not).
    pub(crate) env: Vec<(String, String)>,
    /// Replaces the secret values wherever the host reports text.
    pub(crate) redactor: Redactor,
}

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Access")
            .field("egress", &self.egress)
            .field("dirs", &self.dirs)
            .field("env", &self.env.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .finish()
    }
}

impl Access {
    /// Checks `grants`, opens their directories and reads passed-through variables with
    /// `host_env`.
    /// `host_secrets` are the host's own credentials: a variable whose value holds one is
    /// refused.
    pub(crate) fn resolve(
        grants: &Grants,
        host_env: impl Fn(&str) -> Option<String>,
        host_secrets: &[String],
    ) -> Result<Self, String> {
        if let Some(problem) = secret_problems(grants).into_iter().next() {
            return Err(problem);
        }
        let dirs = grants.dirs.iter().map(OpenDir::open).collect::<Result<_, _>>()?;
        let mut env = Vec::with_capacity(grants.env.len());
        let mut secrets = Vec::new();
        for grant in &grants.env {
            check_env_name(&grant.name)?;
            let what = format!("environment variable `{}`", grant.name);
            let value = resolve_value(&what, &grant.value, &host_env, host_secrets)?;
            if grant.value.is_secret() {
                secrets.push(value.clone());
            }
            env.push((grant.name.clone(), value));
        }
        let mut sent = BTreeMap::new();
        for grant in &grants.secrets {
            let what = format!("secret `{}`", grant.name);
            let value = resolve_value(&what, &grant.value, &host_env, host_secrets)?;
            // Every spelling a request or an echo of it may hold: a refusal or an error may
            // quote the request as it went out.
            secrets.extend(egress::echo_spellings(&value));
            sent.insert(grant.name.clone(), value);
        }
        let egress = Egress::resolve(&grants.http, &grants.allow_hosts, &sent)?;
        Ok(Self { egress, dirs, env, redactor: Redactor::granted(secrets) })
    }

    /// Keeps the open directories of `previous` (the tool's grants in the version before a
    /// reload) for every grant that did not change, so a reload never moves an unchanged
    /// grant.
    ///
    /// # Errors
    /// When an unchanged grant's path now leads to another directory than the one it was
    /// granted as: something replaced it.
    pub(crate) fn keep_unchanged(&mut self, previous: &Access) -> Result<(), String> {
        for dir in &mut self.dirs {
            let unchanged =
                |kept: &&OpenDir| (&kept.host, &kept.guest, kept.writable) == (&dir.host, &dir.guest, dir.writable);
            let Some(kept) = previous.dirs.iter().find(unchanged) else {
                continue;
            };
            if !kept.same_directory(dir) {
                return Err(format!(
                    "the directory granted at {} ({}) is no longer the directory it was when it was granted: \
                     something replaced it since. The grant keeps the original; restart to grant what is there now",
                    dir.guest,
                    dir.host.display()
                ));
            }
            *dir = kept.clone();
        }
        Ok(())
    }
}

/// Problems between a tool's secrets and its rules: a rule naming a secret that is not
/// granted, a granted secret no rule sends, a name both a secret and an environment variable.
pub(crate) fn secret_problems(grants: &Grants) -> Vec<String> {
    let mut problems = Vec::new();
    let granted = |name: &str| grants.secrets.iter().any(|secret| secret.name == name);
    for (i, rule) in grants.http.iter().enumerate() {
        for name in rule.secrets().filter(|name| !granted(name)) {
            problems.push(format!(
                "http[{i}] names the secret `{name}`, which is not granted: add it to the tool's `secrets` table, \
                 e.g. {name} = {{ from_host = \"{name}\" }}"
            ));
        }
    }
    for secret in &grants.secrets {
        if !grants.http.iter().any(|rule| rule.secrets().any(|name| name == secret.name)) {
            problems.push(format!(
                "secrets.{} is sent by no `http` rule: name it in a rule's `headers` or `placeholders`, or remove it",
                secret.name
            ));
        }
        if grants.env.iter().any(|env| env.name == secret.name) {
            problems.push(format!(
                "`{}` is both a secret the host sends and an environment variable of the tool; a secret the host \
                 sends is never given to the tool: remove one",
                secret.name
            ));
        }
        if matches!(secret.value, EnvValue::Fixed(_)) {
            problems.push(format!(
                "secrets.{} must be {{ secret = \"value\" }} or {{ from_host = \"NAME\" }}",
                secret.name
            ));
        }
    }
    problems
}

/// Adds [`secret_problems`] to a policy file's problems, under the tool's table.
pub(super) fn check_secrets(grants: &Grants, at: &str, problems: &mut Vec<String>) {
    problems.extend(secret_problems(grants).into_iter().map(|problem| format!("{at} {problem}")));
}

/// The value of a granted variable or secret (`what`, for messages), read from the host if
/// it comes from there, and checked: never a credential of the host, no NUL byte, and long
/// enough to redact if it is a secret.
fn resolve_value(
    what: &str,
    value: &EnvValue,
    host_env: &impl Fn(&str) -> Option<String>,
    host_secrets: &[String],
) -> Result<String, String> {
    let resolved = match value {
        EnvValue::Fixed(value) | EnvValue::Secret(value) => value.clone(),
        EnvValue::FromHost(from) => {
            check_grantable(from).map_err(|reason| format!("{what}: {reason}"))?;
            host_env(from).ok_or_else(|| {
                format!(
                    "{what} is granted from the host's `{from}`, which is not set; set it before starting toolcell or \
                     remove the grant"
                )
            })?
        }
    };
    if host_secrets.iter().any(|secret| !secret.is_empty() && resolved.contains(secret.as_str())) {
        return Err(format!(
            "{what} would hand the tool a credential of the host itself (the server's bearer token or an exporter's \
             headers), which no tool may be granted; grant the tool a credential of its own"
        ));
    }
    if resolved.contains('\0') {
        return Err(format!("{what} has a value containing a NUL byte"));
    }
    if value.is_secret() {
        check_secret_length(what, value, &resolved)?;
    }
    Ok(resolved)
}

/// Host variables that hold the host's own credentials: no tool may be granted them.
pub const RESERVED_HOST_VARIABLES: [&str; 5] = [
    "TOOLCELL_TOKEN",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
];

/// Refuses passing a host variable that holds the host's own credentials through to a tool.
pub(crate) fn check_grantable(host_variable: &str) -> Result<(), String> {
    if RESERVED_HOST_VARIABLES.iter().any(|reserved| reserved.eq_ignore_ascii_case(host_variable)) {
        return Err(format!(
            "the host's `{host_variable}` holds a credential of toolcell itself (the server's bearer token or an \
             OTLP exporter's headers), which no tool may be granted; grant the tool a credential of its own"
        ));
    }
    Ok(())
}

fn check_secret_length(what: &str, source: &EnvValue, value: &str) -> Result<(), String> {
    let chars = value.chars().count();
    if chars >= MIN_SECRET_CHARS {
        return Ok(());
    }
    let plain = match source {
        EnvValue::FromHost(_) => "copy it into the policy as a plain value (`NAME = \"value\"`)",
        EnvValue::Fixed(_) | EnvValue::Secret(_) => "grant it as a plain value (`NAME = \"value\"`)",
    };
    Err(format!(
        "{what} holds a secret of {chars} characters; secrets shorter than {MIN_SECRET_CHARS} \
         characters cannot be redacted safely (they would match ordinary text in results). Use a longer secret, or, \
         if it is not secret, {plain}"
    ))
}

/// One directory some tool is granted.
pub(crate) struct GrantedDir<'a> {
    pub(crate) tool: &'a str,
    pub(crate) dir: &'a OpenDir,
}

/// Tools whose directory grants overlap another tool's writable grant (one inside the
/// other): the writer could change what the other reads, or move it. Each entry is a tool
/// and why it is refused; both tools of a pair are named.
pub(crate) fn overlapping_grants(granted: &[GrantedDir<'_>]) -> Vec<(String, String)> {
    let mut refused = Vec::new();
    for writer in granted.iter().filter(|grant| grant.dir.writable) {
        for other in granted.iter().filter(|other| other.tool != writer.tool) {
            let (w, o) = (&writer.dir.host, &other.dir.host);
            if !(o.starts_with(w) || w.starts_with(o)) {
                continue;
            }
            let relation = if o.starts_with(w) { "inside" } else { "around" };
            let mode = if other.dir.writable { "read-write" } else { "read-only" };
            let reason = |tool: &str| {
                format!(
                    "tool `{tool}` was not loaded: its directory grants overlap. `{}` is granted {} ({mode}), which is \
                     {relation} {} that `{}` may write to. A tool that can write there could change or redirect what \
                     the other reads; grant directories that do not contain one another",
                    other.tool,
                    o.display(),
                    w.display(),
                    writer.tool
                )
            };
            refused.push((writer.tool.to_owned(), reason(writer.tool)));
            refused.push((other.tool.to_owned(), reason(other.tool)));
        }
    }
    refused.sort();
    refused.dedup_by(|a, b| a.0 == b.0);
    refused
}

/// Something the host itself reads or runs, which no granted directory may contain (or,
/// for a folder, be inside): a tool could change its own code, its grants or what the host
/// executes, or read other tools' secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Protected {
    pub(crate) path: PathBuf,
    pub(crate) kind: ProtectedKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProtectedKind {
    ToolsFolder,
    Component,
    PolicyFile,
    CompileCache,
    CacheKey,
    DenialsFile,
}

impl Protected {
    pub(crate) fn new(path: &Path, kind: ProtectedKind) -> Self {
        // The real location, through any links: what a grant would expose is the file itself.
        Self { path: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()), kind }
    }

    fn is_folder(&self) -> bool {
        matches!(self.kind, ProtectedKind::ToolsFolder | ProtectedKind::CompileCache)
    }

    fn what(&self) -> String {
        let path = self.path.display();
        match self.kind {
            ProtectedKind::ToolsFolder => {
                format!("the tools folder {path}, whose components and policy file the host loads")
            }
            ProtectedKind::Component => format!("the component {path}, which the host loads as a tool"),
            ProtectedKind::PolicyFile => {
                format!("the policy file {path}, which sets every tool's grants and may hold their secrets")
            }
            ProtectedKind::CompileCache => {
                format!("the compile cache {path}, whose entries the host runs as machine code")
            }
            ProtectedKind::CacheKey => {
                format!("the compile cache's key {path}, which authenticates what the host runs")
            }
            ProtectedKind::DenialsFile => format!(
                "the denials file {path}, from which `toolcell policy suggest` proposes grants (a tool could write \
                 refusals that never happened)"
            ),
        }
    }
}

/// Whether a granted directory exposes `protected` (contains it, or is inside a protected
/// folder), and the reason to refuse it.
pub(crate) fn exposes(dir: &OpenDir, protected: &Protected) -> Option<String> {
    let relation = if protected.path.starts_with(&dir.host) {
        "contains"
    } else if protected.is_folder() && dir.host.starts_with(&protected.path) {
        "is inside"
    } else {
        return None;
    };
    let mode = if dir.writable { "read-write" } else { "read-only" };
    let advice = match protected.kind {
        ProtectedKind::CompileCache | ProtectedKind::CacheKey => ", or move the cache (`--cache-dir`)",
        _ => "",
    };
    Some(format!(
        "the directory {} granted at {} ({mode}) {relation} {}: a tool granted it could read or change what the host \
         loads, runs or keeps secret. Grant a directory that neither contains nor is inside it{advice}",
        dir.host.display(),
        dir.guest,
        protected.what(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path, writable: bool) -> OpenDir {
        let grant = if writable { DirGrant::read_write(path, "/g") } else { DirGrant::read_only(path, "/g") };
        OpenDir::open(&grant).expect("open")
    }

    #[test]
    fn grants_inside_or_around_a_writable_one_are_refused_naming_both() {
        let root = std::env::temp_dir().join(format!("toolcell-overlap-{}", std::process::id()));
        std::fs::create_dir_all(root.join("inner")).expect("mkdir");
        let (outer, inner) = (open(&root, true), open(&root.join("inner"), false));
        let granted = [GrantedDir { tool: "a", dir: &outer }, GrantedDir { tool: "b", dir: &inner }];
        let refused = overlapping_grants(&granted);
        assert_eq!(refused.iter().map(|(tool, _)| tool.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert!(refused[1].1.contains("`b`") && refused[1].1.contains("`a`"), "{}", refused[1].1);

        let (outer, inner) = (open(&root, false), open(&root.join("inner"), true));
        let granted = [GrantedDir { tool: "a", dir: &outer }, GrantedDir { tool: "b", dir: &inner }];
        assert_eq!(overlapping_grants(&granted).len(), 2, "a writable grant inside a read-only one");

        let (outer, inner) = (open(&root, false), open(&root.join("inner"), false));
        let granted = [GrantedDir { tool: "a", dir: &outer }, GrantedDir { tool: "b", dir: &inner }];
        assert!(overlapping_grants(&granted).is_empty(), "read-only grants may nest");
        let (outer, inner) = (open(&root, true), open(&root.join("inner"), false));
        let granted = [GrantedDir { tool: "a", dir: &outer }, GrantedDir { tool: "a", dir: &inner }];
        assert!(overlapping_grants(&granted).is_empty(), "one tool's own grants may nest");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn short_secrets_are_refused_and_plain_values_are_not_secrets() {
        let grants = Grants::new().env(super::super::EnvGrant::secret("PIN", "1234"));
        let err = Access::resolve(&grants, |_| None, &[]).expect_err("too short");
        assert!(err.contains("`PIN`") && err.contains("4 characters"), "{err}");
        let grants = Grants::new().env(super::super::EnvGrant::fixed("UNITS", "4"));
        let access = Access::resolve(&grants, |_| None, &[]).expect("a plain value");
        assert!(access.redactor.is_empty());
        let grants = Grants::new().env(super::super::EnvGrant::from_host("TOKEN", "HOST_TOKEN"));
        let access = Access::resolve(&grants, |_| Some("a-long-token".into()), &[]).expect("a secret");
        assert!(!access.redactor.is_empty());
    }

    /// `root/proj/inner` and `root/secret`, fresh.
    fn tree(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("toolcell-access-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("proj/inner")).expect("mkdir");
        std::fs::create_dir_all(root.join("secret")).expect("mkdir");
        root
    }

    #[test]
    fn a_grant_through_a_symlink_is_refused_naming_the_link() {
        let root = tree("symlink");
        std::fs::rename(root.join("proj/inner"), root.join("proj/inner.old")).expect("rename");
        std::os::unix::fs::symlink("../secret", root.join("proj/inner")).expect("symlink");
        for path in [root.join("proj/inner"), root.join("proj/inner/../inner.old")] {
            let err = check_dir(DirGrant::read_only(&path, "/w"), Path::new(".")).expect_err("through a symlink");
            assert!(err.contains("symlink") && err.contains(&root.join("proj/inner").display().to_string()), "{err}");
        }
        // Relative to a base, `..` included; the base's own path may be a link (the operator's).
        std::os::unix::fs::symlink(root.join("proj"), root.join("proj-link")).expect("symlink");
        let (grant, _) = check_dir(DirGrant::read_only("../secret", "/w"), &root.join("proj-link")).expect("real path");
        assert_eq!(grant.host, root.join("secret"));
        let err = check_dir(DirGrant::read_only("inner", "/w"), &root.join("proj-link")).expect_err("link below");
        assert!(err.contains("symlink"), "{err}");
        let err = check_dir(DirGrant::read_only("missing", "/w"), &root).expect_err("missing");
        assert!(err.contains("cannot be used"), "{err}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_reload_keeps_unchanged_grants_open_and_refuses_one_that_now_leads_elsewhere() {
        let root = tree("keep");
        let grants = Grants::new().dir(DirGrant::read_only(root.join("proj/inner"), "/w"));
        let before = Access::resolve(&grants, |_| None, &[]).expect("resolve");
        let mut same = Access::resolve(&grants, |_| None, &[]).expect("resolve");
        same.keep_unchanged(&before).expect("the same directory");
        assert_eq!(same.dirs[0].reopen_path(), before.dirs[0].reopen_path(), "the first handle is kept");

        std::fs::rename(root.join("proj/inner"), root.join("proj/inner.old")).expect("rename");
        std::fs::create_dir(root.join("proj/inner")).expect("mkdir");
        let mut moved = Access::resolve(&grants, |_| None, &[]).expect("resolve");
        let err = moved.keep_unchanged(&before).expect_err("another directory");
        assert!(err.contains("/w") && err.contains("replaced"), "{err}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn grants_exposing_what_the_host_loads_are_refused_and_others_are_not() {
        let root = tree("protected");
        let tools = Protected::new(&root.join("proj"), ProtectedKind::ToolsFolder);
        let policy = Protected::new(&root.join("proj/toolcell.toml"), ProtectedKind::PolicyFile);
        let around = open(&root, false);
        let inside = open(&root.join("proj/inner"), false);
        let beside = open(&root.join("secret"), true);
        assert!(exposes(&around, &tools).is_some_and(|why| why.contains("contains the tools folder")));
        assert!(exposes(&inside, &tools).is_some_and(|why| why.contains("is inside the tools folder")));
        assert!(exposes(&around, &policy).is_some_and(|why| why.contains("the policy file")));
        assert!(exposes(&inside, &policy).is_none(), "a folder beside a file does not expose it");
        assert!(exposes(&beside, &tools).is_none());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_hosts_own_credentials_are_never_granted() {
        let grants = Grants::new().env(super::super::EnvGrant::from_host("T", "TOOLCELL_TOKEN"));
        let err = Access::resolve(&grants, |_| Some("server-token-123456".into()), &[]).expect_err("reserved");
        assert!(err.contains("TOOLCELL_TOKEN"), "{err}");
        let grants = Grants::new().env(super::super::EnvGrant::from_host("T", "MY_COPY"));
        let secrets = ["server-token-123456".to_owned()];
        let err = Access::resolve(&grants, |_| Some("Bearer server-token-123456".into()), &secrets).expect_err("value");
        assert!(err.contains("`T`") && err.contains("credential of the host"), "{err}");
        assert!(Access::resolve(&grants, |_| Some("another-token-1234".into()), &secrets).is_ok());
    }
}
