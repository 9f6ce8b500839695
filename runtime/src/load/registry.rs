//! The policy's registry tools (`[tools.NAME] source = "oci://…"`), pulled into the store and
//! checked against their signers before a byte reaches the compiler: each becomes one more
//! component to load, labelled with its pinned reference, which must define the tool the
//! policy names. A tool that cannot be pulled or is refused becomes a load diagnostic, as a
//! broken file does; the others load.

use std::path::PathBuf;

use toolcell_oci::signature::Trust;
use toolcell_oci::{BlobStore, Lockfile, Puller, RegistryClient, RegistrySettings};

use super::component::Read;
use crate::policy::{Policy, RegistryTool};

/// How registry tools are pulled.
#[derive(Debug, Clone, Default)]
pub(crate) struct RegistryLoading {
    /// The store pulled blobs are kept in (`None`: a folder of this process's own).
    pub(crate) store: Option<PathBuf>,
    /// Refuse to resolve a tag the lockfile does not pin.
    pub(crate) locked: bool,
}

/// One registry tool, pulled or not.
pub(super) struct PulledTool {
    /// The tool's name in the policy.
    pub(super) name: String,
    /// Its pinned reference (its tag's when it could not be pinned): the component's source.
    pub(super) source: String,
    pub(super) read: Read,
}

/// Pulls every registry tool of `policy` (of `only`, when given).
pub(super) async fn pull_all(policy: &Policy, loading: &RegistryLoading, only: Option<&[String]>) -> Vec<PulledTool> {
    let registry = policy.registry();
    if registry.is_empty() {
        return Vec::new();
    }
    let settings = RegistrySettings { plain_http: registry.plain_http.clone(), ..RegistrySettings::default() };
    let store = match open_store(loading) {
        Ok(store) => store,
        Err(why) => {
            return registry
                .tools
                .iter()
                .map(|(name, tool)| PulledTool {
                    name: name.clone(),
                    source: tool.reference.to_string(),
                    read: Read::Failed(format!("`{name}`: {why}")),
                })
                .collect();
        }
    };
    let puller = Puller::new(RegistryClient::new(settings), store);
    let mut pulled = Vec::new();
    for (name, tool) in &registry.tools {
        if only.is_some_and(|only| !only.contains(name)) {
            continue;
        }
        let trust = match registry.signers_for(name, tool) {
            Ok(None) => Trust::Unsigned,
            Ok(Some(signers)) => Trust::Signers(signers),
            Err(why) => {
                pulled.push(PulledTool {
                    name: name.clone(),
                    source: tool.reference.to_string(),
                    read: Read::Failed(format!("`{name}`: {why}")),
                });
                continue;
            }
        };
        pulled.push(pull_one(&puller, name, tool, &trust, loading.locked).await);
    }
    pulled
}

fn open_store(loading: &RegistryLoading) -> Result<BlobStore, String> {
    let dir = loading.store.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "toolcell-oci-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        ))
    });
    BlobStore::open(&dir).map_err(|err| format!("registry tools cannot be kept: {err}"))
}

async fn pull_one(puller: &Puller, name: &str, tool: &RegistryTool, trust: &Trust, locked: bool) -> PulledTool {
    // (The tool's name leads, so that a command about the tool shows why it is not there.)
    let failed = |why: String| PulledTool {
        name: name.to_owned(),
        source: tool.reference.to_string(),
        read: Read::Failed(format!("`{name}`: {why}")),
    };
    let mut lock = match Lockfile::read(&tool.lockfile) {
        Ok(lock) => lock,
        Err(err) => return failed(err.to_string()),
    };
    let pinned = lock.pinned(&tool.reference);
    if locked && tool.reference.digest.is_none() && pinned.is_none() {
        return failed(format!(
            "{} is not pinned in {} and tags are not resolved when locked; run `toolcell pull {} --key …` and keep the lockfile",
            tool.reference,
            tool.lockfile.display(),
            tool.reference
        ));
    }
    let pulled = match puller.pull(&tool.reference, pinned, trust).await {
        Ok(pulled) => pulled,
        Err(err) => return failed(err.to_string()),
    };
    // A reference that names its digest resolves nothing: there is nothing to pin.
    if let Some(digest) = pulled.reference.digest
        && tool.reference.tag.is_some()
        && tool.reference.digest.is_none()
        && pinned.is_none()
        && lock.pin(&tool.reference, digest)
        && let Err(err) = lock.write()
    {
        // The tool loads by its digest all the same; only the next load resolves the tag again.
        tracing::warn!(tool = name, "{} could not be pinned: {err}", tool.reference);
    }
    PulledTool { name: name.to_owned(), source: pulled.reference.to_string(), read: Read::given(pulled.component) }
}
