//! Resolving a tool's grants once, when the runtime is built: directories checked, made
//! canonical and opened, environment values read from the host, secrets handed to the
//! redactor; and the checks across tools (grants that overlap a writable one, grants that
//! expose the compile cache).

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{DirGrant, EnvValue, Grants, HostPattern, check_env_name};
use crate::redact::Redactor;

/// Secrets shorter than this are refused: replacing every occurrence of a 3-character
/// value would rewrite ordinary text and numbers in results.
pub const MIN_SECRET_CHARS: usize = 8;

/// Checks a directory grant and makes its host path canonical.
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

/// A granted directory, opened once. Every call's preopen is made from this handle, not by
/// looking the path up again: whoever can write to a parent folder cannot later swap the
/// directory for a symlink and move the grant elsewhere.
#[derive(Debug, Clone)]
pub(crate) struct OpenDir {
    /// The canonical host path, for messages.
    pub(crate) host: PathBuf,
    pub(crate) guest: String,
    pub(crate) writable: bool,
    handle: Arc<File>,
}

impl OpenDir {
    fn open(grant: &DirGrant) -> Result<Self, String> {
        let handle = open_directory(&grant.host)
            .map_err(|err| format!("host directory {} cannot be opened: {err}", grant.host.display()))?;
        Ok(Self {
            host: grant.host.clone(),
            guest: grant.guest.clone(),
            writable: grant.writable,
            handle: Arc::new(handle),
        })
    }

    /// A path that opens exactly the directory that was granted, whatever has since been
    /// renamed or replaced on the way to it.
    pub(crate) fn reopen_path(&self) -> PathBuf {
        handle_path(&self.handle).unwrap_or_else(|| self.host.clone())
    }
}

/// Opens a directory without following a symlink in its last component.
#[cfg(unix)]
fn open_directory(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(path)
}

#[cfg(not(unix))]
fn open_directory(path: &Path) -> std::io::Result<File> {
    File::open(path)
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
    pub(crate) allow_hosts: Arc<[HostPattern]>,
    pub(crate) dirs: Vec<OpenDir>,
    /// Names and values (secret or not).
    pub(crate) env: Vec<(String, String)>,
    /// Replaces the secret values wherever the host reports text.
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
    /// Checks `grants`, opens their directories and reads passed-through variables with
    /// `host_env`.
    pub(crate) fn resolve(grants: &Grants, host_env: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let dirs = grants.dirs.iter().map(|dir| OpenDir::open(&check_dir(dir.clone())?)).collect::<Result<_, _>>()?;
        let mut env = Vec::with_capacity(grants.env.len());
        let mut secrets = Vec::new();
        for grant in &grants.env {
            check_env_name(&grant.name)?;
            let value = match &grant.value {
                EnvValue::Fixed(value) | EnvValue::Secret(value) => value.clone(),
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
            if grant.value.is_secret() {
                check_secret_length(&grant.name, &grant.value, &value)?;
                secrets.push(value.clone());
            }
            env.push((grant.name.clone(), value));
        }
        Ok(Self { allow_hosts: grants.allow_hosts.clone().into(), dirs, env, redactor: Redactor::granted(secrets) })
    }
}

fn check_secret_length(name: &str, source: &EnvValue, value: &str) -> Result<(), String> {
    let chars = value.chars().count();
    if chars >= MIN_SECRET_CHARS {
        return Ok(());
    }
    let plain = match source {
        EnvValue::FromHost(_) => "copy it into the policy as a plain value (`NAME = \"value\"`)",
        EnvValue::Fixed(_) | EnvValue::Secret(_) => "grant it as a plain value (`NAME = \"value\"`)",
    };
    Err(format!(
        "environment variable `{name}` holds a secret of {chars} characters; secrets shorter than {MIN_SECRET_CHARS} \
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

/// Whether a granted directory contains `cache` (the compile cache, whose entries the host
/// loads as machine code), and the reason to refuse it.
pub(crate) fn exposes_cache(dir: &OpenDir, cache: &Path) -> Option<String> {
    cache.starts_with(&dir.host).then(|| {
        format!(
            "the directory {} granted at {} contains the compile cache {}, whose entries the host runs as machine \
             code; grant a directory that does not contain it, or move the cache (`--cache-dir`)",
            dir.host.display(),
            dir.guest,
            cache.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path, writable: bool) -> OpenDir {
        let grant = if writable { DirGrant::read_write(path, "/g") } else { DirGrant::read_only(path, "/g") };
        OpenDir::open(&check_dir(grant).expect("dir")).expect("open")
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
        let err = Access::resolve(&grants, |_| None).expect_err("too short");
        assert!(err.contains("`PIN`") && err.contains("4 characters"), "{err}");
        let grants = Grants::new().env(super::super::EnvGrant::fixed("UNITS", "4"));
        let access = Access::resolve(&grants, |_| None).expect("a plain value");
        assert!(access.redactor.is_empty());
        let grants = Grants::new().env(super::super::EnvGrant::from_host("TOKEN", "HOST_TOKEN"));
        let access = Access::resolve(&grants, |_| Some("a-long-token".into())).expect("a secret");
        assert!(!access.redactor.is_empty());
    }
}
