//! Tools from OCI registries, for toolcell.
//!
//! A tool is referenced as `oci://registry/repository:tag` or `…@sha256:…`
//! ([`OciReference`]). A tag is resolved once and pinned in `toolcell.lock` ([`Lockfile`]);
//! later loads use the digest. Manifests and components are pulled by a small client of the
//! distribution API ([`RegistryClient`]) into a content-addressed store ([`BlobStore`]) that
//! takes a blob only when its bytes hash to the digest it was asked for, and returns it only if
//! they still do: nothing unverified reaches the compiler. Components use the layout `wkg`,
//! `oras` and Wassette use ([`manifest`]).

mod client;
mod digest;
mod files;
mod lock;
pub mod manifest;
mod pull;
mod push;
mod reference;
pub mod signature;
mod store;
mod text;
pub mod transport;

pub use self::client::{
    Credentials, MAX_BLOB_BYTES, MAX_MANIFEST_BYTES, PulledManifest, RegistryClient, RegistryError, RegistrySettings,
    is_loopback, referrers_tag,
};
pub use self::digest::{Digest, DigestError};
pub use self::files::read_operator_file;
pub use self::lock::{LOCK_FILE, LockError, Lockfile};
pub use self::pull::{PullError, Pulled, Puller};
pub use self::push::{Component, Published, push, sign};
pub use self::reference::OciReference;
pub use self::store::{BlobStore, StoreError};
