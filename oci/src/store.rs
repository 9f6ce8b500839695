//! A content-addressed store of blobs: `DIR/sha256/<hex>`. A blob is written whole (to a
//! temporary file in the store, synced, then renamed into place) and only once its bytes hash
//! to the digest it was asked for; a read hashes it again, so a blob changed or cut short on
//! disk since is never returned. A store is the operator's: it is created readable by its
//! owner only. Beside the blobs, `DIR/signatures/<hex>` lists the signatures (their manifests'
//! digests) seen for a manifest: only a list of names, each checked when used.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::digest::Digest;

/// The most signatures kept per manifest.
const MAX_SIGNATURES: usize = 16;

/// Blobs by digest, on disk.
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

/// Why a blob could not be stored or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The bytes are not the blob asked for: a registry (or whatever is between) sent others.
    #[error("the blob asked for as {expected} has the digest {found}: it was not stored")]
    Mismatch {
        /// The digest asked for.
        expected: Digest,
        /// The digest of the bytes that came.
        found: Digest,
    },
    /// A stored blob no longer hashes to its name: it was changed or cut short on disk.
    #[error("the stored blob {digest} ({}) has changed since it was stored (its bytes now hash to {found}); it was removed: fetch it again", path.display())]
    Tampered {
        /// The digest it was stored as.
        digest: Digest,
        /// Where.
        path: PathBuf,
        /// What its bytes hash to now.
        found: Digest,
    },
    /// The store's folder or a file in it could not be used.
    #[error("the blob store {}: {source}", path.display())]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl BlobStore {
    /// The store in `dir`, created (owner-only) if missing.
    ///
    /// # Errors
    /// When the folder cannot be created.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let dir = dir.into();
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        for sub in ["sha256", "signatures"] {
            let path = dir.join(sub);
            builder.create(&path).map_err(|source| StoreError::Io { path, source })?;
        }
        Ok(Self { dir })
    }

    fn path(&self, digest: &Digest) -> PathBuf {
        self.dir.join("sha256").join(digest.hex())
    }

    /// Stores `bytes` as the blob `expected`, if they are it.
    ///
    /// # Errors
    /// [`StoreError::Mismatch`] (nothing is written) or an I/O error.
    pub fn put(&self, expected: &Digest, bytes: &[u8]) -> Result<PathBuf, StoreError> {
        let found = Digest::of(bytes);
        if found != *expected {
            return Err(StoreError::Mismatch { expected: *expected, found });
        }
        let path = self.path(expected);
        let io = |source| StoreError::Io { path: path.clone(), source };
        let partial = path.with_extension(format!("partial-{}-{}", std::process::id(), unique()));
        let written = File::create(&partial).and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        });
        if let Err(err) = written.and_then(|()| std::fs::rename(&partial, &path)) {
            let _ = std::fs::remove_file(&partial);
            return Err(io(err));
        }
        Ok(path)
    }

    /// The blob `digest`, if the store has it whole.
    ///
    /// # Errors
    /// [`StoreError::Tampered`] when its bytes no longer hash to it (the file is removed), or
    /// an I/O error.
    pub fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(digest);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Io { path, source }),
        };
        let found = Digest::of(&bytes);
        if found != *digest {
            let _ = std::fs::remove_file(&path);
            return Err(StoreError::Tampered { digest: *digest, path, found });
        }
        Ok(Some(bytes))
    }

    /// The signatures recorded for the manifest `subject`: the digests of their manifests, in
    /// the store too (so a tool pinned by digest is checked again with no registry).
    pub fn signatures_of(&self, subject: &Digest) -> Vec<Digest> {
        let text = std::fs::read_to_string(self.signature_index(subject)).unwrap_or_default();
        text.lines().take(MAX_SIGNATURES).filter_map(|line| line.parse().ok()).collect()
    }

    /// Records `signature` (a manifest in the store) as a signature of `subject`.
    ///
    /// # Errors
    /// When the index cannot be written.
    pub fn record_signature(&self, subject: &Digest, signature: &Digest) -> Result<(), StoreError> {
        let mut known = self.signatures_of(subject);
        if known.contains(signature) {
            return Ok(());
        }
        known.insert(0, *signature);
        known.truncate(MAX_SIGNATURES);
        let path = self.signature_index(subject);
        let io = |source| StoreError::Io { path: path.clone(), source };
        let text: String = known.iter().map(|digest| format!("{digest}\n")).collect();
        let partial = path.with_extension(format!("partial-{}-{}", std::process::id(), unique()));
        std::fs::write(&partial, text).and_then(|()| std::fs::rename(&partial, &path)).map_err(|err| {
            let _ = std::fs::remove_file(&partial);
            io(err)
        })
    }

    fn signature_index(&self, subject: &Digest) -> PathBuf {
        self.dir.join("signatures").join(subject.hex())
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// A number no other write of this process uses, for temporary file names.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str) -> BlobStore {
        let dir = std::env::temp_dir().join(format!("toolcell-blobs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        BlobStore::open(&dir).expect("open")
    }

    #[test]
    fn a_blob_is_stored_only_as_what_it_hashes_to_and_read_back_whole() {
        let store = store("put");
        let component = b"\0asm component bytes";
        let digest = Digest::of(component);
        let path = store.put(&digest, component).expect("put");
        assert!(path.ends_with(digest.hex()));
        assert_eq!(store.get(&digest).expect("get").as_deref(), Some(&component[..]));

        let other = Digest::of(b"something else");
        let err = store.put(&other, component).expect_err("wrong bytes");
        assert!(matches!(err, StoreError::Mismatch { found, .. } if found == digest), "{err}");
        assert_eq!(store.get(&other).expect("get"), None, "nothing was written under the digest asked for");
        let leftovers: Vec<_> = std::fs::read_dir(store.dir().join("sha256")).expect("list").collect();
        assert_eq!(leftovers.len(), 1, "no partial file left: {leftovers:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.dir().join("sha256")).expect("metadata").permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
        let _ = std::fs::remove_dir_all(store.dir());
    }

    #[test]
    fn a_blob_changed_or_cut_short_on_disk_is_never_read_back() {
        let store = store("tamper");
        let component = b"\0asm the real component";
        let digest = Digest::of(component);
        let path = store.put(&digest, component).expect("put");
        for changed in [&b"\0asm a swapped component"[..], &component[..10]] {
            std::fs::write(&path, changed).expect("tamper");
            let err = store.get(&digest).expect_err("changed on disk");
            assert!(matches!(err, StoreError::Tampered { .. }), "{err}");
            assert!(err.to_string().contains("fetch it again"), "{err}");
            assert!(!path.exists(), "the changed blob is removed");
            store.put(&digest, component).expect("stored again");
        }
        let _ = std::fs::remove_dir_all(store.dir());
    }
}
