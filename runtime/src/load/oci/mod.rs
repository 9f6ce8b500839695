//! Tools from OCI registries (issue 32, being built): references (`oci://registry/repo:tag`,
//! `…@sha256:…`), digests, and the content-addressed store downloaded blobs are kept in. A blob
//! enters the store only once its bytes hash to the digest it was asked for by, and leaves it
//! only if they still do: nothing unverified reaches the compiler.

mod digest;
mod reference;
mod store;

pub use self::digest::{Digest, DigestError};
pub use self::reference::OciReference;
pub use self::store::{BlobStore, StoreError};
