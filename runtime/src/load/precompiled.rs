//! Compiled code a program ships for its own components: the first start on a new machine
//! then deserializes them (a tenth of a second for the `python` tool) instead of compiling
//! them (10-20 s).
//!
//! An artifact ([`crate::Runtime::precompile`]) is the component's digest and the code
//! wasmtime compiled from it. It is used only for a component with that exact digest, and
//! only by an engine that accepts it (wasmtime checks its version, settings and the CPU's
//! features); otherwise the component is compiled as usual. The code is trusted as the
//! program that embeds it is ([`Precompiled::new`] is `unsafe`): it is never read from a
//! file at run time, where it could be swapped.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::Component;

/// The first bytes of every artifact, naming the format.
const MAGIC: &[u8; 8] = b"toolpre1";
const DIGEST_BYTES: usize = 32;

/// Compiled components a program ships, by the digest of the component each came from. See
/// [`crate::RuntimeBuilder::precompiled`].
#[derive(Clone, Default)]
pub struct Precompiled {
    by_digest: Arc<HashMap<[u8; DIGEST_BYTES], bytes::Bytes>>,
}

impl fmt::Debug for Precompiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Precompiled").field("components", &self.by_digest.len()).finish()
    }
}

/// An artifact that [`crate::Runtime::precompile`] did not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnArtifact {
    /// Its position among the artifacts given.
    pub index: usize,
}

impl fmt::Display for NotAnArtifact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "precompiled artifact {} does not start with toolcell's header (`toolpre1` and a component digest): \
             write it with `Runtime::precompile` (or `toolcell precompile`)",
            self.index
        )
    }
}

impl std::error::Error for NotAnArtifact {}

impl Precompiled {
    /// The artifacts [`crate::Runtime::precompile`] wrote, typically embedded in the program
    /// with `include_bytes!` (a `&'static [u8]` is not copied).
    ///
    /// # Errors
    /// When one lacks the header `precompile` writes.
    ///
    /// # Safety
    /// The artifacts run as machine code in this process. Each must be exactly what
    /// [`crate::Runtime::precompile`] returned, and as trusted as the program itself: shipped
    /// inside it, never read from a place anyone else can write. wasmtime refuses code from
    /// another version or configuration, but cannot tell tampered code from good.
    #[expect(unsafe_code, reason = "the caller vouches for code this process will run")]
    pub unsafe fn new(artifacts: impl IntoIterator<Item = impl Into<bytes::Bytes>>) -> Result<Self, NotAnArtifact> {
        let mut by_digest = HashMap::new();
        for (index, artifact) in artifacts.into_iter().enumerate() {
            let artifact: bytes::Bytes = artifact.into();
            let digest = header(&artifact).ok_or(NotAnArtifact { index })?;
            by_digest.insert(digest, artifact.slice(MAGIC.len() + DIGEST_BYTES..));
        }
        Ok(Self { by_digest: Arc::new(by_digest) })
    }

    /// How many components it has code for.
    pub fn len(&self) -> usize {
        self.by_digest.len()
    }

    /// Whether it has code for none.
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }

    /// Whether it has code for the component whose digest is `digest`.
    pub(crate) fn has(&self, digest: &[u8; DIGEST_BYTES]) -> bool {
        self.by_digest.contains_key(digest)
    }

    /// The component whose digest is `digest`, from its shipped code, when there is code for
    /// it that `engine` accepts.
    pub(crate) fn component(&self, engine: &Engine, digest: &[u8; DIGEST_BYTES]) -> Option<Component> {
        let code = self.by_digest.get(digest)?;
        match deserialize(engine, code) {
            Ok(component) => Some(component),
            Err(err) => {
                tracing::warn!(%err, "shipped precompiled code does not fit this engine (another CPU or settings); compiling");
                None
            }
        }
    }
}

/// An artifact: the header, then wasmtime's serialized component.
pub(crate) fn artifact(digest: &[u8; DIGEST_BYTES], serialized: &[u8]) -> Vec<u8> {
    let mut artifact = Vec::with_capacity(MAGIC.len() + DIGEST_BYTES + serialized.len());
    artifact.extend_from_slice(MAGIC);
    artifact.extend_from_slice(digest);
    artifact.extend_from_slice(serialized);
    artifact
}

/// The digest of the component an artifact was compiled from.
fn header(artifact: &[u8]) -> Option<[u8; DIGEST_BYTES]> {
    let rest = artifact.strip_prefix(MAGIC.as_slice())?;
    rest.get(..DIGEST_BYTES)?.try_into().ok()
}

#[expect(unsafe_code, reason = "wasmtime deserializes only trusted bytes; Precompiled::new's caller vouches for these")]
fn deserialize(engine: &Engine, serialized: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: `Precompiled::new`'s contract: these bytes are what `Runtime::precompile`
    // serialized, shipped inside the program. wasmtime checks its own version, the engine's
    // settings and the CPU's features before using them.
    unsafe { Component::deserialize(engine, serialized) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_artifact_names_its_component_and_nothing_else_passes() {
        let digest = [7u8; DIGEST_BYTES];
        let written = artifact(&digest, b"code");
        assert_eq!(header(&written), Some(digest));
        assert_eq!(header(&written[..MAGIC.len() + DIGEST_BYTES - 1]), None, "truncated header");
        assert_eq!(header(b"\0asm\x0d\0\x01\0"), None, "a component, not an artifact");
        // SAFETY: nothing is deserialized here: the header check refuses the artifact.
        #[expect(unsafe_code, reason = "only the header is read")]
        let refused = unsafe { Precompiled::new([written.clone(), b"toolcel2".to_vec()]) };
        assert_eq!(refused.err(), Some(NotAnArtifact { index: 1 }));
    }
}
