//! A disk cache of compiled components: compiling a tool with cranelift takes hundreds of
//! milliseconds to seconds; loading it from the cache takes about a millisecond.
//!
//! Entries are machine code the host runs, so they are authenticated: each carries a keyed
//! BLAKE3 MAC over the hash of the component it was compiled from (and the engine's
//! settings) and the compiled bytes, keyed with a secret kept beside the folder, not in it
//! (`<folder>.key`, owner-only). An entry that fails the check (patched, truncated, or
//! copied from another component's entry) is never loaded: the component is compiled
//! again and the entry replaced. A folder or key that other users can write is not used.

use std::fs::{self, File};
use std::hash::{Hash, Hasher};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::Engine;
use wasmtime::component::Component;

/// The first bytes of every entry, naming the format. (`toolcel1` entries, MAC'd with
/// HMAC-SHA256, are not read: their components are compiled again.)
const MAGIC: &[u8; 8] = b"toolcel2";
/// The first bytes of a record of what a component said of itself (`<id>.said`).
const SAID_MAGIC: &[u8; 8] = b"toolsay1";
/// The most a record of what a component said of itself may hold: a tool whose definition is
/// bigger is read from its exports at every start, and a bigger file is not read.
const MAX_SAID_BYTES: u64 = 16 << 20;
const TAG_BYTES: usize = 32;
const KEY_BYTES: usize = 32;

/// Compiled components stored in a folder only their owner can write.
#[derive(Clone)]
pub(crate) struct CompileCache {
    dir: PathBuf,
    key: Option<Arc<[u8; KEY_BYTES]>>,
}

impl std::fmt::Debug for CompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCache").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl CompileCache {
    /// A cache in `dir`, not yet checked; see [`Self::usable`].
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir, key: None }
    }

    /// The cache ready to use: its folder created (owner-only) and safe, its key read or
    /// created. When it cannot be used safely, says why in the log and returns `None`: the
    /// tools are then compiled afresh, never loaded from an untrusted folder.
    pub(crate) fn usable(self) -> Option<Self> {
        match self.open() {
            Ok(cache) => Some(cache),
            Err(reason) => {
                tracing::warn!(dir = %self.dir.display(), %reason, "not using the compile cache");
                None
            }
        }
    }

    fn open(&self) -> Result<Self, String> {
        create_private_dir(&self.dir).map_err(|err| format!("cannot create it: {err}"))?;
        let dir = fs::canonicalize(&self.dir).map_err(|err| format!("cannot resolve it: {err}"))?;
        check_private(&dir, "the compile-cache folder")?;
        let key = load_or_create_key(&key_path(&dir))?;
        Ok(Self { dir, key: Some(Arc::new(key)) })
    }

    /// A key for `purpose`, derived from the cache's key: every process sharing the cache
    /// (or its key file) derives the same one. `None` before [`Self::usable`].
    pub(crate) fn derived_key(&self, purpose: &str) -> Option<[u8; 32]> {
        self.key.as_ref().map(|key| blake3::derive_key(purpose, key.as_slice()))
    }

    /// The cache folder (canonical once usable).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cached compilation of the component whose [`digest`] is `digest`, if this cache
    /// has an authentic entry for it that wasmtime loads.
    pub(crate) fn cached(&self, engine: &Engine, digest: &[u8; 32]) -> Option<Component> {
        let key = self.key.as_ref()?;
        let id = entry_id(engine, digest);
        let path = self.dir.join(format!("{}.cwasm", hex(&id)));
        let entry = fs::read(&path).ok()?;
        match authenticated(MAGIC, key, &id, &entry) {
            Some(serialized) => match deserialize(engine, serialized) {
                Ok(component) => return Some(component),
                Err(err) => tracing::debug!(path = %path.display(), %err, "ignoring an unusable cache entry"),
            },
            None => tracing::warn!(
                path = %path.display(),
                "a compile-cache entry failed authentication (changed or swapped); compiling afresh"
            ),
        }
        None
    }

    /// Whether this cache has an entry for the component whose [`digest`] is `digest`, not
    /// yet checked ([`Self::cached`] checks it).
    pub(crate) fn has_entry(&self, engine: &Engine, digest: &[u8; 32]) -> bool {
        self.key.is_some() && self.dir.join(format!("{}.cwasm", hex(&entry_id(engine, digest)))).is_file()
    }

    /// What the component whose [`digest`] is `digest` said of itself when this version of
    /// toolcell loaded it under this engine's settings and these `settings` (what else decides
    /// whether it loads), as an [`super::Announcement`]'s payload, if this cache has an
    /// authentic record of it.
    pub(crate) fn said(&self, engine: &Engine, digest: &[u8; 32], settings: &[u8]) -> Option<Vec<u8>> {
        let key = self.key.as_ref()?;
        let id = said_id(engine, digest, settings);
        let path = self.dir.join(format!("{}.said", hex(&id)));
        let mut record = Vec::new();
        let limit = MAX_SAID_BYTES + (MAGIC.len() + TAG_BYTES) as u64;
        File::open(&path).ok()?.take(limit + 1).read_to_end(&mut record).ok()?;
        if record.len() as u64 > limit {
            tracing::warn!(path = %path.display(), "a compile-cache record is too big to be one; not reading it");
            return None;
        }
        let Some(payload) = authenticated(SAID_MAGIC, key, &id, &record) else {
            tracing::warn!(path = %path.display(), "a compile-cache record failed authentication (changed or swapped)");
            return None;
        };
        let start = record.len() - payload.len();
        Some(record.split_off(start))
    }

    /// Keeps what the component whose [`digest`] is `digest` said of itself, read from its
    /// exports once it loaded, for [`Self::said`]. Failing to store is logged and never fails
    /// the load.
    pub(crate) fn keep_said(&self, engine: &Engine, digest: &[u8; 32], settings: &[u8], payload: &[u8]) {
        let Some(key) = &self.key else { return };
        if payload.len() as u64 > MAX_SAID_BYTES {
            return;
        }
        let id = said_id(engine, digest, settings);
        let path = self.dir.join(format!("{}.said", hex(&id)));
        if let Err(err) = write_atomically(&path, &seal(SAID_MAGIC, key, &id, payload)) {
            tracing::debug!(dir = %self.dir.display(), %err, "could not store what a component said of itself");
        }
    }

    /// `bytes` (whose [`digest`] is `digest`) compiled, announced by calling `compiling`, and
    /// stored for next time. For a component [`Self::cached`] did not find. Failing to store
    /// is logged and never fails the load.
    pub(crate) fn compile_and_store(
        &self,
        engine: &Engine,
        bytes: &[u8],
        digest: &[u8; 32],
        compiling: &dyn Fn(),
    ) -> wasmtime::Result<Component> {
        compiling();
        let component = Component::from_binary(engine, bytes)?;
        let Some(key) = &self.key else { return Ok(component) };
        let id = entry_id(engine, digest);
        let path = self.dir.join(format!("{}.cwasm", hex(&id)));
        let stored = component.serialize().map_err(|err| err.to_string()).and_then(|serialized| {
            write_atomically(&path, &seal(MAGIC, key, &id, &serialized)).map_err(|err| err.to_string())
        });
        if let Err(err) = stored {
            tracing::debug!(dir = %self.dir.display(), %err, "could not store a compiled component");
        }
        Ok(component)
    }
}

/// Where a cache folder's key lives: beside the folder, so nothing written into the folder
/// can reach it.
fn key_path(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().map(|name| name.to_os_string()).unwrap_or_default();
    name.push(".key");
    dir.with_file_name(name)
}

/// The cache key files a grant must not expose, for a cache folder.
pub(crate) fn protected_paths(dir: &Path) -> [PathBuf; 2] {
    [dir.to_owned(), key_path(dir)]
}

/// A component's digest: BLAKE3 of its bytes. It names the component in the cache and tells
/// a reload which files changed. (BLAKE3 rather than SHA-256: hashing the components and
/// the compiled entries was 38% of a warm start.)
pub(crate) fn digest(bytes: &[u8]) -> [u8; 32] {
    blake3::hash(bytes).into()
}

/// Names an entry: the engine's compilation settings and the component's digest.
fn entry_id(engine: &Engine, digest: &[u8; 32]) -> [u8; 32] {
    let mut hasher = Blake3Hasher(blake3::Hasher::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.update(digest);
    hasher.0.finalize().into()
}

/// Names a record of what a component said of itself: its entry's id, this version of
/// toolcell (whose checks of what a tool says change between versions) and the `settings` it
/// loaded under.
fn said_id(engine: &Engine, digest: &[u8; 32], settings: &[u8]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&entry_id(engine, digest));
    hasher.update(b"said by the component, read by toolcell ");
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    hasher.update(b" under ");
    hasher.update(settings);
    hasher.finalize().into()
}

/// The MAC of an entry or record: keyed BLAKE3 over its format (`magic`), its id and its
/// contents.
fn tag(magic: &[u8; 8], key: &[u8; KEY_BYTES], id: &[u8; 32], contents: &[u8]) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(key);
    mac.update(magic);
    mac.update(id);
    mac.update(contents);
    mac.finalize()
}

/// An entry or record: the magic, the tag, the contents.
fn seal(magic: &[u8; 8], key: &[u8; KEY_BYTES], id: &[u8; 32], contents: &[u8]) -> Vec<u8> {
    let tag = tag(magic, key, id, contents);
    let mut entry = Vec::with_capacity(magic.len() + TAG_BYTES + contents.len());
    entry.extend_from_slice(magic);
    entry.extend_from_slice(tag.as_bytes());
    entry.extend_from_slice(contents);
    entry
}

/// The contents of `entry`, if it is this cache's, of the format `magic`, for exactly `id`.
fn authenticated<'a>(magic: &[u8; 8], key: &[u8; KEY_BYTES], id: &[u8; 32], entry: &'a [u8]) -> Option<&'a [u8]> {
    let rest = entry.strip_prefix(magic.as_slice())?;
    if rest.len() < TAG_BYTES {
        return None;
    }
    let (expected, contents) = rest.split_at(TAG_BYTES);
    let expected = blake3::Hash::from_bytes(expected.try_into().ok()?);
    // `blake3::Hash` compares in constant time.
    (tag(magic, key, id, contents) == expected).then_some(contents)
}

/// Loads a component this cache serialized and authenticated.
#[expect(unsafe_code, reason = "wasmtime deserializes only from trusted bytes; these are authenticated")]
fn deserialize(engine: &Engine, serialized: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: wasmtime requires the bytes to come from `Component::serialize` of a compatible
    // engine. They passed the MAC check with a key only this user can read, for this
    // component under this engine's settings, so this cache wrote them; they are checked in
    // memory and deserialized from the same buffer (no second read of the file). wasmtime
    // also refuses artifacts from other versions or configurations.
    unsafe { Component::deserialize(engine, serialized) }
}

fn load_or_create_key(path: &Path) -> Result<[u8; KEY_BYTES], String> {
    if !path.exists() {
        create_key(path).map_err(|err| format!("cannot create its key {}: {err}", path.display()))?;
    }
    check_private(path, "the compile-cache key")?;
    let bytes = fs::read(path).map_err(|err| format!("cannot read its key {}: {err}", path.display()))?;
    bytes
        .try_into()
        .map_err(|_| format!("its key {} is not {KEY_BYTES} bytes; delete it and a new one is made", path.display()))
}

/// Writes a new random key, owner-only, without ever leaving a partial key at `path` (two
/// processes starting at once agree on one key).
fn create_key(path: &Path) -> std::io::Result<()> {
    let mut key = [0u8; KEY_BYTES];
    getrandom::fill(&mut key).map_err(|err| std::io::Error::other(err.to_string()))?;
    let temporary = path.with_extension(format!("key.tmp{}", std::process::id()));
    let mut file = private_file(&temporary)?;
    file.write_all(&key)?;
    file.sync_all()?;
    let linked = fs::hard_link(&temporary, path);
    let _ = fs::remove_file(&temporary);
    match linked {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => Err(err),
        _ => Ok(()),
    }
}

/// Refuses a file or folder that is not owned by this user, or that others may write (or,
/// for the key, read).
#[cfg(unix)]
fn check_private(path: &Path, what: &str) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(path).map_err(|err| format!("cannot inspect {what} {}: {err}", path.display()))?;
    let me = effective_uid();
    if meta.uid() != me {
        return Err(format!(
            "{what} {} belongs to another user (uid {}); use a folder of your own",
            path.display(),
            meta.uid()
        ));
    }
    let forbidden = if meta.is_dir() { 0o022 } else { 0o077 };
    if meta.mode() & forbidden != 0 {
        return Err(format!(
            "{what} {} can be {} by other users (mode {:o}); run `chmod go-rwx {}` or use another folder",
            path.display(),
            if meta.is_dir() { "written" } else { "read or written" },
            meta.mode() & 0o777,
            path.display()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &Path, _: &str) -> Result<(), String> {
    Ok(())
}

#[cfg(unix)]
#[expect(unsafe_code, reason = "geteuid is a libc call")]
fn effective_uid() -> u32 {
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<File> {
    fs::OpenOptions::new().write(true).create_new(true).open(path)
}

/// Writes through a temporary file and a rename, so a concurrent reader never sees half a
/// file. The temporary name is unique to this write (process and sequence number), so
/// writers of the same entry, in this process or another, never share one.
fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    let temporary = path.with_extension(format!("tmp{}-{write}", std::process::id()));
    let written = private_file(&temporary).and_then(|mut file| file.write_all(contents));
    let renamed = written.and_then(|()| fs::rename(&temporary, path));
    if renamed.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    renamed
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Feeds `Hash` implementations into a BLAKE3 digest.
struct Blake3Hasher(blake3::Hasher);

impl Hasher for Blake3Hasher {
    fn finish(&self) -> u64 {
        0 // unused: the digest is read directly
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_authenticate_only_for_their_key_and_component() {
        let (key, other_key) = ([7u8; KEY_BYTES], [8u8; KEY_BYTES]);
        let (id, other_id) = ([1u8; 32], [2u8; 32]);
        let entry = seal(MAGIC, &key, &id, b"machine code");
        assert_eq!(authenticated(MAGIC, &key, &id, &entry), Some(b"machine code".as_slice()));
        assert_eq!(authenticated(MAGIC, &other_key, &id, &entry), None, "another key");
        assert_eq!(authenticated(MAGIC, &key, &other_id, &entry), None, "another component's entry");
        let mut patched = entry.clone();
        *patched.last_mut().unwrap() ^= 1;
        assert_eq!(authenticated(MAGIC, &key, &id, &patched), None, "one byte changed");
        assert_eq!(authenticated(MAGIC, &key, &id, &entry[..20]), None, "truncated");
    }

    /// The component from the cache, or compiled and stored: how a load uses the cache.
    fn cached_or_compiled(
        cache: &CompileCache,
        engine: &Engine,
        bytes: &[u8],
        digest: &[u8; 32],
        compiling: &dyn Fn(),
    ) -> wasmtime::Result<Component> {
        match cache.cached(engine, digest) {
            Some(component) => Ok(component),
            None => cache.compile_and_store(engine, bytes, digest, compiling),
        }
    }

    #[test]
    fn an_authentic_entry_wasmtime_cannot_load_is_compiled_again_and_replaced() {
        let dir = std::env::temp_dir().join(format!("toolcell-cache-stale-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let cache = CompileCache::new(dir.clone()).usable().expect("a fresh folder is usable");
        let key = cache.key.clone().expect("a key");
        let engine = Engine::default();
        let bytes = fs::read(toolcell_tools::UNIT_CONVERT).expect("the unit_convert component");
        let digest = digest(&bytes);
        let id = entry_id(&engine, &digest);
        let path = cache.dir().join(format!("{}.cwasm", hex(&id)));
        // Sealed with the right key, but not an artifact this engine can load: what an entry
        // written by another wasmtime version looks like once it passes authentication.
        let stale = b"compiled by another version of wasmtime";
        fs::write(&path, seal(MAGIC, &key, &id, stale)).unwrap();

        let compiled = std::cell::Cell::new(false);
        let component =
            cached_or_compiled(&cache, &engine, &bytes, &digest, &|| compiled.set(true)).expect("compiled afresh");
        assert!(compiled.get(), "compiling was announced");
        let entry = fs::read(&path).unwrap();
        let serialized = authenticated(MAGIC, &key, &id, &entry).expect("the replacement authenticates");
        assert_ne!(serialized, stale.as_slice(), "the stale entry was replaced");
        assert_eq!(serialized, component.serialize().unwrap(), "by the component just compiled");
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_file(key_path(&dir));
    }

    #[test]
    fn an_engine_with_other_settings_never_reads_another_engines_entries() {
        let dir = std::env::temp_dir().join(format!("toolcell-cache-engines-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let cache = CompileCache::new(dir.clone()).usable().expect("a fresh folder is usable");
        let bytes = fs::read(toolcell_tools::UNIT_CONVERT).expect("the unit_convert component");
        let digest = digest(&bytes);
        // Other compilation settings are, to the cache, what another wasmtime version is.
        let engine = Engine::default();
        let other = Engine::new(wasmtime::Config::new().consume_fuel(true)).expect("an engine");
        let compiles = std::cell::Cell::new(0);
        let count = || compiles.set(compiles.get() + 1);

        cached_or_compiled(&cache, &engine, &bytes, &digest, &count).expect("compiled");
        cached_or_compiled(&cache, &other, &bytes, &digest, &count).expect("compiled");
        assert_eq!(compiles.get(), 2, "the other engine compiled instead of reading the first one's entry");
        cached_or_compiled(&cache, &engine, &bytes, &digest, &count).expect("read");
        cached_or_compiled(&cache, &other, &bytes, &digest, &count).expect("read");
        assert_eq!(compiles.get(), 2, "each engine then reads its own entry");
        let entries = fs::read_dir(&dir)
            .unwrap()
            .filter(|entry| entry.as_ref().unwrap().path().extension() == Some("cwasm".as_ref()));
        assert_eq!(entries.count(), 2, "one entry per engine");
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_file(key_path(&dir));
    }

    #[test]
    fn a_record_of_what_a_component_said_is_read_back_only_for_it_and_as_written() {
        let dir = std::env::temp_dir().join(format!("toolcell-cache-said-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let cache = CompileCache::new(dir.clone()).usable().expect("a fresh folder is usable");
        let key = cache.key.clone().expect("a key");
        let engine = Engine::default();
        let (echo, other) = ([1u8; 32], [2u8; 32]);
        assert_eq!(cache.said(&engine, &echo, b""), None, "nothing kept yet");
        cache.keep_said(&engine, &echo, b"", br#"{"name": "echo"}"#);
        assert_eq!(cache.said(&engine, &echo, b"").as_deref(), Some(br#"{"name": "echo"}"#.as_slice()));
        assert_eq!(cache.said(&engine, &other, b""), None, "another component's");
        let fuel = Engine::new(wasmtime::Config::new().consume_fuel(true)).expect("an engine");
        assert_eq!(cache.said(&fuel, &echo, b""), None, "under other engine settings");
        assert_eq!(cache.said(&engine, &echo, b"pooled"), None, "under other load settings");

        let path = |digest: &[u8; 32]| cache.dir().join(format!("{}.said", hex(&said_id(&engine, digest, b""))));
        let record = fs::read(path(&echo)).unwrap();
        // Swapped: the echo record put where the other component's would be.
        fs::write(path(&other), &record).unwrap();
        assert_eq!(cache.said(&engine, &other, b""), None, "a record moved to another component");
        // Patched, truncated, or an entry's format under the record's name.
        let mut patched = record.clone();
        *patched.last_mut().unwrap() ^= 1;
        for forged in
            [patched, record[..record.len() - 1].to_vec(), seal(MAGIC, &key, &said_id(&engine, &echo, b""), b"{}")]
        {
            fs::write(path(&echo), forged).unwrap();
            assert_eq!(cache.said(&engine, &echo, b""), None);
        }
        // Flooded: a record too big to be one is neither written nor read.
        let big = vec![b' '; MAX_SAID_BYTES as usize + 1];
        fs::remove_file(path(&other)).unwrap();
        cache.keep_said(&engine, &other, b"", &big);
        assert!(!path(&other).exists(), "not written");
        fs::write(path(&echo), seal(SAID_MAGIC, &key, &said_id(&engine, &echo, b""), &big)).unwrap();
        assert_eq!(cache.said(&engine, &echo, b""), None, "not read");
        fs::write(path(&echo), seal(SAID_MAGIC, &key, &said_id(&engine, &echo, b""), &big[1..])).unwrap();
        assert_eq!(cache.said(&engine, &echo, b"").map(|said| said.len()), Some(big.len() - 1), "the most");
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_file(key_path(&dir));
    }

    #[cfg(unix)]
    #[test]
    fn folders_others_can_write_are_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("toolcell-cache-perms-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let cache = CompileCache::new(dir.clone()).usable().expect("a fresh folder is usable");
        assert!(cache.key.is_some());
        let key_mode = fs::metadata(key_path(cache.dir())).unwrap().permissions().mode();
        assert_eq!(key_mode & 0o777, 0o600);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let err = CompileCache::new(dir.clone()).open().expect_err("world-writable");
        assert!(err.contains("chmod"), "{err}");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        fs::set_permissions(key_path(&dir), fs::Permissions::from_mode(0o644)).unwrap();
        assert!(CompileCache::new(dir.clone()).open().expect_err("readable key").contains("key"));
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_file(key_path(&dir));
    }
}
