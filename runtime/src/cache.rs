//! A disk cache of compiled components: compiling a tool with cranelift takes hundreds of
//! milliseconds to seconds; loading it from the cache takes about a millisecond.
//!
//! Entries are keyed by the SHA-256 of the component's bytes and of the engine's compilation
//! settings, so a changed tool or a different wasmtime never loads a stale entry.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Compiled components stored in a folder the user owns.
#[derive(Debug, Clone)]
pub(crate) struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The cached compilation of `bytes`, or a fresh one (then stored for next time).
    /// Cache failures are logged and never fail the load.
    pub(crate) fn compile(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
        let path = self.entry_path(engine, bytes);
        if let Ok(serialized) = std::fs::read(&path) {
            match deserialize(engine, &serialized) {
                Ok(component) => return Ok(component),
                Err(err) => tracing::debug!(path = %path.display(), %err, "ignoring an unusable cache entry"),
            }
        }
        let component = Component::from_binary(engine, bytes)?;
        if let Err(err) = component.serialize().map_err(|err| err.to_string()).and_then(|serialized| {
            std::fs::create_dir_all(&self.dir).map_err(|err| err.to_string())?;
            write_atomically(&path, &serialized).map_err(|err| err.to_string())
        }) {
            tracing::debug!(dir = %self.dir.display(), %err, "could not store a compiled component");
        }
        Ok(component)
    }

    fn entry_path(&self, engine: &Engine, bytes: &[u8]) -> PathBuf {
        let mut hasher = DigestHasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut hasher);
        hasher.0.update(bytes);
        let digest = hasher.0.finalize();
        let name: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        self.dir.join(format!("{name}.cwasm"))
    }
}

/// Loads a component that this cache serialized.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, serialized: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: wasmtime requires the bytes to come from `Component::serialize` of a compatible
    // engine. They come from this cache's folder, written only by `CompileCache::compile`
    // under a name that hashes the engine's settings; wasmtime also checks the header and
    // refuses artifacts from other versions or configurations. The folder must be writable
    // only by the user running toolcell (see `RuntimeBuilder::compile_cache`).
    unsafe { Component::deserialize(engine, serialized) }
}

/// Writes through a temporary file and a rename, so a concurrent reader never sees half a file.
fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temporary, contents)?;
    std::fs::rename(&temporary, path)
}

/// Feeds `Hash` implementations into a SHA-256 digest.
struct DigestHasher(Sha256);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        0 // unused: the digest is read directly
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}
