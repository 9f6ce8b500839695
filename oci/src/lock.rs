//! `toolcell.lock`: the digest each tag resolved to, recorded once so every later load (and
//! every replica given the same file) runs the same bytes. A tag is looked up in the registry
//! only when the lockfile has no digest for it, or when the operator asks to update.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::files::{self, Links};
use crate::reference::OciReference;

/// The lockfile's name beside a tools folder's policy file.
pub const LOCK_FILE: &str = "toolcell.lock";
/// The largest lockfile read.
const MAX_LOCK_BYTES: u64 = 1 << 20;

/// Why a lockfile cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// It could not be read or written.
    #[error("the lockfile {}: {source}", path.display())]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a lockfile toolcell wrote.
    #[error("the lockfile {} cannot be used: {why}; delete it and run `toolcell pull` to write it again", path.display())]
    Invalid {
        /// Where.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// The digests tags resolved to, by reference (`oci://registry/repo:tag`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lockfile {
    path: PathBuf,
    pinned: BTreeMap<String, Digest>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    #[serde(default, rename = "tool")]
    tools: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    reference: String,
    digest: String,
}

const HEADER: &str = "# The digests toolcell resolved these tags to: later loads use the digests, not the tags.\n\
                      # Written by `toolcell pull`; keep it beside toolcell.toml and commit it.\n";

impl Lockfile {
    /// The lockfile at `path`; empty when there is none.
    ///
    /// # Errors
    /// When it cannot be read, is larger than 1 MiB, or is not a lockfile.
    pub fn read(path: impl Into<PathBuf>) -> Result<Self, LockError> {
        let path = path.into();
        let io = |source| LockError::Io { path: path.clone(), source };
        let invalid = |why: String| LockError::Invalid { path: path.clone(), why };
        let bytes = match files::read_regular(&path, MAX_LOCK_BYTES, Links::Follow) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Self { path, pinned: BTreeMap::new() }),
            Err(err) => return Err(io(err)),
        };
        let text = String::from_utf8(bytes).map_err(|_| invalid("it is not UTF-8 text".to_owned()))?;
        // Where, and what is wrong, but not the line itself: a lockfile is written by toolcell,
        // and a file linked in its place should not be quoted into a log.
        let file: File = toml::from_str(&text).map_err(|err| {
            let line = err.span().map_or(0, |span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            invalid(format!("it is not a lockfile (line {line}: {})", err.message().trim_end()))
        })?;
        if file.version != 1 {
            return Err(invalid(format!("its version is {}; this toolcell reads version 1", file.version)));
        }
        let mut pinned = BTreeMap::new();
        for entry in file.tools {
            let reference: OciReference = entry.reference.parse().map_err(invalid)?;
            let digest: Digest =
                entry.digest.parse().map_err(|err: crate::digest::DigestError| invalid(err.to_string()))?;
            if reference.digest.is_some() || reference.tag.is_none() {
                return Err(invalid(format!("`{}` is not a reference by tag", entry.reference)));
            }
            if pinned.insert(reference.to_string(), digest).is_some() {
                return Err(invalid(format!("`{}` is pinned twice", entry.reference)));
            }
        }
        Ok(Self { path, pinned })
    }

    /// Where it is read from and written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The digest `reference` (by tag) is pinned to.
    pub fn pinned(&self, reference: &OciReference) -> Option<Digest> {
        self.pinned.get(&by_tag(reference)?).copied()
    }

    /// Pins `reference` (by tag) to `digest`; whether that changed anything.
    pub fn pin(&mut self, reference: &OciReference, digest: Digest) -> bool {
        let Some(key) = by_tag(reference) else { return false };
        self.pinned.insert(key, digest) != Some(digest)
    }

    /// Every pin, by reference.
    pub fn pins(&self) -> impl Iterator<Item = (&str, &Digest)> {
        self.pinned.iter().map(|(reference, digest)| (reference.as_str(), digest))
    }

    /// Writes the lockfile whole (a temporary file, synced, renamed over the old one).
    ///
    /// # Errors
    /// When it cannot be written.
    pub fn write(&self) -> Result<(), LockError> {
        let io = |source| LockError::Io { path: self.path.clone(), source };
        let file = File {
            version: 1,
            tools: self
                .pinned
                .iter()
                .map(|(reference, digest)| Entry { reference: reference.clone(), digest: digest.to_string() })
                .collect(),
        };
        let text = format!("{HEADER}{}", toml::to_string(&file).expect("a lockfile is TOML"));
        files::write_whole(&self.path, text.as_bytes()).map_err(io)
    }
}

/// `reference` without a digest, as the lockfile keys it; `None` without a tag.
fn by_tag(reference: &OciReference) -> Option<String> {
    let tag = reference.tag.as_ref()?;
    Some(format!("oci://{}/{}:{tag}", reference.registry, reference.repository))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolcell-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    #[test]
    fn a_pin_is_written_and_read_back_and_a_digest_in_the_reference_is_not_a_key() {
        let dir = dir("roundtrip");
        let path = dir.join(LOCK_FILE);
        let mut lock = Lockfile::read(&path).expect("missing is empty");
        let reference: OciReference = "oci://127.0.0.1:5000/tools/echo:1.0".parse().expect("reference");
        let digest = Digest::of(b"manifest");
        assert!(lock.pin(&reference, digest));
        assert!(!lock.pin(&reference, digest), "the same pin again changes nothing");
        lock.write().expect("write");
        let back = Lockfile::read(&path).expect("read");
        assert_eq!(back.pinned(&reference), Some(digest));
        let with_digest: OciReference =
            format!("oci://127.0.0.1:5000/tools/echo:1.0@{digest}").parse().expect("reference");
        assert_eq!(back.pinned(&with_digest), Some(digest), "the tag is the key");
        let text = std::fs::read_to_string(&path).expect("text");
        assert!(text.starts_with("# The digests"), "{text}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_lockfile_that_is_not_one_is_refused_with_what_to_do() {
        let dir = dir("invalid");
        let path = dir.join(LOCK_FILE);
        for (text, why) in [
            ("version = 2\n", "version is 2"),
            ("version = 1\n[[tool]]\nreference = \"oci://r/x:1\"\ndigest = \"md5:1\"\n", "not a digest"),
            ("version = 1\n[[tool]]\nreference = \"oci://r/x:1\"\ndigest = \"md5:1\"\nextra = 1\n", "unknown field"),
            ("version = 1\n[[tool]]\nreference = \"https://r/x:1\"\ndigest = \"md5:1\"\n", "not a tool reference"),
        ] {
            std::fs::write(&path, text).expect("write");
            let err = Lockfile::read(&path).expect_err(text).to_string();
            assert!(err.contains(why) && err.contains("toolcell pull"), "{text}: {err}");
        }
        std::fs::write(&path, vec![b'#'; (MAX_LOCK_BYTES + 1) as usize]).expect("write");
        assert!(Lockfile::read(&path).expect_err("huge").to_string().contains("more than"));
        // Not quoted: what a file linked in its place says.
        std::fs::write(
            &path,
            "version = 1
SECRET_TOKEN=hunter2
",
        )
        .expect("write");
        let err = Lockfile::read(&path).expect_err("not TOML").to_string();
        assert!(err.contains("line 2") && !err.contains("hunter2"), "{err}");
        #[cfg(target_os = "linux")]
        {
            std::fs::remove_file(&path).expect("remove");
            std::os::unix::fs::symlink("/proc/self/environ", &path).expect("symlink");
            let err = Lockfile::read(&path).expect_err("the environment").to_string();
            assert!(err.contains("a file of the kernel's") && !err.contains("PATH="), "{err}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
