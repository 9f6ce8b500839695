//! One component: read (by identity where a file vouches for its bytes), then, once its code is
//! prepared ([`super::compile`]) and its metadata read ([`super::metadata`]), or its record read
//! from the compile cache, a tool whose code is linked once ([`super::code`]).

use std::fmt;
use std::fs::{File, Metadata};
use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::cache;
use super::code::ToolCode;
use crate::bindings::ToolCorePre;
use crate::policy::RequestedCapabilities;
use crate::sandbox::Sandbox;
use crate::sandbox::link::Linkers;
use crate::tool::definition::ToolDefinition;
use toolcell_schema::CompiledSchema;

/// A component that was not loaded, and why. Loading goes on with the other components.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadDiagnostic {
    /// The file (or label) the component came from.
    pub source: String,
    /// What is wrong and what to do about it.
    pub reason: String,
}

impl fmt::Display for LoadDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.reason)
    }
}

/// A component file's identity: what changes whenever its contents change, read without
/// reading them (device, inode, size, modification and change times). A reload trusts it only
/// for a file that had not changed for [`SETTLED`] when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct FileIdentity {
    device: u64,
    inode: u64,
    len: u64,
    modified_ns: i128,
    changed_ns: i128,
}

/// How long before it is read a file must have stopped changing for its identity to vouch
/// for its bytes: a second write within one tick of the file system's clock can leave every
/// field of the identity as it was (git's "racily clean" files).
const SETTLED: Duration = Duration::from_secs(2);

impl FileIdentity {
    #[cfg(unix)]
    fn of(metadata: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        Some(Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            len: metadata.len(),
            modified_ns: ns(metadata.mtime(), metadata.mtime_nsec()),
            changed_ns: ns(metadata.ctime(), metadata.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_metadata: &Metadata) -> Option<Self> {
        None
    }

    /// Whether the file had stopped changing [`SETTLED`] before `time`.
    fn settled_before(&self, time: SystemTime) -> bool {
        let Ok(since_epoch) = time.duration_since(SystemTime::UNIX_EPOCH) else { return false };
        let limit = i128::try_from(since_epoch.saturating_sub(SETTLED).as_nanos()).unwrap_or(i128::MAX);
        self.modified_ns < limit && self.changed_ns < limit
    }
}

/// A component as one version of a runtime reads it.
pub(crate) enum Read {
    /// Its bytes and their digest, and the file's identity when it can vouch for these bytes
    /// at the next reload.
    Bytes { bytes: bytes::Bytes, digest: [u8; 32], identity: Option<FileIdentity> },
    /// The file still has the identity of the one the previous version loaded: not read again.
    Same { digest: [u8; 32], identity: FileIdentity },
    /// It could not be read.
    Failed(String),
}

impl Read {
    /// Bytes given rather than read from a file.
    pub(crate) fn given(bytes: bytes::Bytes) -> Self {
        let digest = cache::digest(&bytes);
        Self::Bytes { bytes, digest, identity: None }
    }

    /// How many bytes were read (none when the file was not read again, or could not be).
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Bytes { bytes, .. } => bytes.len(),
            Self::Same { .. } | Self::Failed(_) => 0,
        }
    }

    /// The digest of the bytes, when they could be read.
    pub(crate) fn digest(&self) -> Option<[u8; 32]> {
        match self {
            Self::Bytes { digest, .. } | Self::Same { digest, .. } => Some(*digest),
            Self::Failed(_) => None,
        }
    }
}

/// Reads a component file. `known` is the identity and digest of the file the previous
/// version loaded from this path: a file that still has that identity is not read again.
/// Blocking.
pub(crate) fn read_component(path: &Path, known: Option<(FileIdentity, [u8; 32])>) -> Read {
    if let Some((identity, digest)) = known
        && std::fs::metadata(path).ok().as_ref().and_then(FileIdentity::of) == Some(identity)
    {
        return Read::Same { digest, identity };
    }
    let started = SystemTime::now();
    let read = || -> std::io::Result<(Vec<u8>, Option<FileIdentity>)> {
        let mut file = File::open(path)?;
        let before = file.metadata()?;
        let mut bytes = Vec::with_capacity(usize::try_from(before.len()).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        let after = FileIdentity::of(&file.metadata()?);
        // An identity vouches for the bytes only if nothing wrote the file while it was read,
        // nor so shortly before that a later write could leave the identity unchanged.
        let identity =
            FileIdentity::of(&before).filter(|identity| after == Some(*identity) && identity.settled_before(started));
        Ok((bytes, identity))
    };
    match read() {
        Ok((bytes, identity)) => {
            let digest = cache::digest(&bytes);
            Read::Bytes { bytes: bytes.into(), digest, identity }
        }
        Err(err) => Read::Failed(format!("cannot be read: {err}")),
    }
}

/// Why a component did not load.
pub(crate) struct NotLoaded {
    /// What is wrong and what to do about it.
    pub(crate) reason: String,
    /// The host, not the component, failed (no instance was free to read its metadata in):
    /// the next reload tries the same bytes again.
    pub(crate) by_host: bool,
}

impl From<String> for NotLoaded {
    fn from(reason: String) -> Self {
        Self { reason, by_host: false }
    }
}

impl From<&str> for NotLoaded {
    fn from(reason: &str) -> Self {
        reason.to_owned().into()
    }
}

/// A tool ready to be called. Cheap to clone: a reload reuses it when its file is unchanged.
#[derive(Clone)]
pub(crate) struct LoadedTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) requested: RequestedCapabilities,
    pub(crate) source: String,
    /// Digest of the component's bytes: a reload recompiles only what changed.
    pub(crate) digest: [u8; 32],
    /// The identity of the file those bytes were read from, when it vouches for them: a
    /// reload does not read a file that still has it.
    pub(crate) identity: Option<FileIdentity>,
    /// Its code, linked once (at load, or when first needed: [`super::code`]).
    pub(crate) code: Arc<ToolCode>,
    /// Its calls are linked with `wasi:http` (the operator granted it HTTP hosts).
    pub(crate) http: bool,
    pub(crate) parameters: Arc<CompiledSchema>,
    pub(crate) output: Option<Arc<CompiledSchema>>,
    /// What the tool itself says of `open_world`; without a word, grants decide.
    pub(super) declared_open_world: Option<bool>,
    /// It makes HTTP requests (imports `wasi:http`'s outgoing handler).
    pub(crate) uses_http: bool,
}

/// Whether a tool reaches the open world: what it declares, else whether it requests or is
/// granted any HTTP host.
pub(crate) fn open_world(declared: Option<bool>, requested: &RequestedCapabilities, granted_hosts: bool) -> bool {
    declared.unwrap_or(granted_hosts || !requested.http_hosts.is_empty())
}

impl LoadedTool {
    /// The same tool linked as when it was loaded (without `wasi:http`), for a new set of grants.
    pub(crate) fn without_grants(&self) -> Self {
        Self { http: false, ..self.clone() }
    }

    /// The same tool, its bytes last read from a file of this identity.
    pub(crate) fn read_from(self, identity: Option<FileIdentity>) -> Self {
        Self { identity, ..self }
    }

    /// Settles [`ToolAnnotations::open_world`] for the operator's grants: what the tool
    /// declares, else whether it requests or is granted any HTTP host.
    pub(crate) fn settle_open_world(&mut self, granted_hosts: bool) {
        self.definition.annotations.open_world =
            Some(open_world(self.declared_open_world, &self.requested, granted_hosts));
    }

    /// Links the tool's calls with `wasi:http`, for a tool the operator granted HTTP hosts:
    /// at once when its code is linked, else with its code.
    pub(crate) fn link_http(&mut self, linkers: &Linkers) -> Result<(), String> {
        self.http = true;
        match self.code.linked_now(linkers, true) {
            Some(Err(reason)) => Err(reason),
            Some(Ok(_)) | None => Ok(()),
        }
    }

    /// The code a call runs, linked as the tool's grants have it; see [`ToolCode::pre`].
    pub(crate) async fn pre(&self, linkers: &Linkers) -> Result<ToolCorePre<Sandbox>, String> {
        self.code.pre(linkers, self.http).await
    }
}
