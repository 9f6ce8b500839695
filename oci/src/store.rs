//! A content-addressed store of blobs: `DIR/sha256/<hex>`. A blob is written whole (to a
//! temporary file in the store, synced, then renamed into place) and only once its bytes hash
//! to the digest it was asked for; a read hashes it again, so a blob changed or cut short on
//! disk since is never returned. A store is the operator's: it is created readable by its
//! owner only. Beside the blobs, `DIR/signatures/<hex>` lists the signatures (their manifests'
//! digests) seen for a manifest: only a list of names, each checked when used.

use std::path::{Path, PathBuf};

use crate::digest::Digest;
use crate::files::{self, Links};

/// The most signatures kept per manifest.
const MAX_SIGNATURES: usize = 16;
/// The largest stored blob read (the largest blob fetched, and some).
const MAX_STORED_BYTES: u64 = crate::client::MAX_BLOB_BYTES as u64;
/// The largest signature index read.
const MAX_INDEX_BYTES: u64 = 64 << 10;

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
    /// The store's folder exists and is not this user's alone.
    #[error("the store {} cannot be used: {why}; use a folder of your own (--registry-store DIR)", path.display())]
    NotPrivate {
        /// The folder.
        path: PathBuf,
        /// Why.
        why: String,
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
        // A folder someone else made (or may write) is not taken: they could plant files in it.
        if dir.exists()
            && let Some(why) = files::not_private(&dir)
        {
            return Err(StoreError::NotPrivate { path: dir, why });
        }
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
        files::write_whole(&path, bytes).map_err(|source| StoreError::Io { path: path.clone(), source })?;
        Ok(path)
    }

    /// The blob `digest`, if the store has it whole.
    ///
    /// # Errors
    /// [`StoreError::Tampered`] when its bytes no longer hash to it (the file is removed), or
    /// an I/O error.
    pub fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(digest);
        let bytes = match files::read_regular(&path, MAX_STORED_BYTES, Links::Refuse) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            // A symlink, a FIFO, a device or a huge file planted under a blob's name: not a
            // blob. It goes, and the blob is fetched again.
            Err(_) => {
                let _ = std::fs::remove_file(&path);
                return Ok(None);
            }
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
        let bytes = files::read_regular(&self.signature_index(subject), MAX_INDEX_BYTES, Links::Refuse);
        let text = String::from_utf8(bytes.ok().flatten().unwrap_or_default()).unwrap_or_default();
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
        let text: String = known.iter().map(|digest| format!("{digest}\n")).collect();
        files::write_whole(&path, text.as_bytes()).map_err(|source| StoreError::Io { path, source })
    }

    fn signature_index(&self, subject: &Digest) -> PathBuf {
        self.dir.join("signatures").join(subject.hex())
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
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

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_neither_leads_a_write_elsewhere_nor_is_read_and_a_shared_folder_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let store = store("planted");
        let victim = store.dir().join("victim");
        std::fs::write(&victim, b"the operator's file").expect("victim");
        let component = b"\0asm planted";
        let digest = Digest::of(component);
        // A symlink where the blob goes: the write replaces it; the victim is untouched.
        std::os::unix::fs::symlink(&victim, store.dir().join("sha256").join(digest.hex())).expect("link");
        store.put(&digest, component).expect("put");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"the operator's file");
        // A symlink (to a file or a device) read as a blob: not read, removed, fetched again.
        let path = store.dir().join("sha256").join(digest.hex());
        std::fs::remove_file(&path).expect("remove");
        std::os::unix::fs::symlink("/dev/zero", &path).expect("link");
        assert_eq!(store.get(&digest).expect("no blob"), None);
        assert!(std::fs::symlink_metadata(&path).is_err(), "the planted link is gone");

        std::fs::set_permissions(store.dir(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = BlobStore::open(store.dir()).expect_err("shared");
        assert!(err.to_string().contains("mode is 777"), "{err}");
        let _ = std::fs::remove_dir_all(store.dir());
    }
}
