//! Pulling a tool: its manifest (by the digest pinned, or its tag resolved), its component,
//! and its signatures, each into the store and checked before use. What is in the store by
//! digest is not asked for again, so a pinned tool loads with the registry gone; its
//! signature is checked again on every pull, from the store.

use bytes::Bytes;

use crate::client::{RegistryClient, RegistryError};
use crate::digest::Digest;
use crate::manifest::{Descriptor, Manifest};
use crate::reference::OciReference;
use crate::signature::{SignatureArtifact, Trust, Verified, bundle, cosign};
use crate::store::{BlobStore, StoreError};

/// The longest a pull may take in all (each exchange has its own deadline too): a registry that
/// answers every request just before its deadline cannot hold a load for hours.
pub const PULL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);
/// The most Sigstore bundle referrers fetched for one manifest.
const MAX_BUNDLE_REFERRERS: usize = 16;
/// The most reasons a refusal quotes.
const MAX_REASONS: usize = 4;
/// The most layers a signature manifest may have, and the largest one read.
const MAX_SIGNATURE_LAYERS: usize = 16;
const MAX_SIGNATURE_LAYER_BYTES: u64 = 1 << 20;

/// A tool pulled and checked.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The reference, with the manifest's digest.
    pub reference: OciReference,
    /// Its manifest's digest (as in `reference`).
    pub digest: Digest,
    /// Its manifest.
    pub manifest: Manifest,
    /// The component's bytes (they hash to the manifest's layer digest).
    pub component: Bytes,
    /// Who signed it, or that it was taken unsigned as the policy allows.
    pub verified: Verified,
    /// Whether nothing had to be fetched.
    pub from_store: bool,
}

/// Why a tool could not be pulled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PullError {
    /// The registry could not give it.
    #[error("cannot pull {reference}: {source}")]
    Registry {
        /// The reference.
        reference: String,
        /// Why.
        source: RegistryError,
    },
    /// The store could not keep or give it.
    #[error("cannot pull {reference}: {source}")]
    Store {
        /// The reference.
        reference: String,
        /// Why.
        source: StoreError,
    },
    /// It is not a component.
    #[error("{reference} ({digest}) is not a tool: {why}")]
    NotAComponent {
        /// The reference.
        reference: String,
        /// The manifest's digest.
        digest: Digest,
        /// Why.
        why: String,
    },
    /// It took longer than [`PULL_DEADLINE`] in all.
    #[error(
        "cannot pull {reference}: the registry took longer than {} s in all; try again, or pin the tool and keep it in the store so that a load needs no registry",
        PULL_DEADLINE.as_secs()
    )]
    Deadline {
        /// The reference.
        reference: String,
    },
    /// It is not signed as the policy requires.
    #[error("{reference} ({digest}) is refused: {why}")]
    Signature {
        /// The reference.
        reference: String,
        /// The manifest's digest.
        digest: Digest,
        /// What was expected and what was found.
        why: String,
    },
}

/// Pulls tools through a client into a store.
#[derive(Debug)]
pub struct Puller {
    client: RegistryClient,
    store: BlobStore,
}

impl Puller {
    /// A puller keeping what it pulls in `store`.
    pub fn new(client: RegistryClient, store: BlobStore) -> Self {
        Self { client, store }
    }

    /// The client it pulls with.
    pub fn client(&self) -> &RegistryClient {
        &self.client
    }

    /// The store it keeps blobs in.
    pub fn store(&self) -> &BlobStore {
        &self.store
    }

    /// Pulls `reference` (its own digest, else `pinned`, else its tag), and checks it against
    /// `trust` before returning a byte of it.
    ///
    /// # Errors
    /// When it cannot be fetched, is not a component, or is not signed as `trust` requires.
    pub async fn pull(
        &self,
        reference: &OciReference,
        pinned: Option<Digest>,
        trust: &Trust,
    ) -> Result<Pulled, PullError> {
        tokio::time::timeout(PULL_DEADLINE, self.pull_within(reference, pinned, trust))
            .await
            .unwrap_or_else(|_| Err(PullError::Deadline { reference: reference.to_string() }))
    }

    async fn pull_within(
        &self,
        reference: &OciReference,
        pinned: Option<Digest>,
        trust: &Trust,
    ) -> Result<Pulled, PullError> {
        let registry_error = |source| PullError::Registry { reference: reference.to_string(), source };
        let store_error = |source| PullError::Store { reference: reference.to_string(), source };

        let wanted = reference.digest.or(pinned);
        let mut from_store = true;
        let stored = match wanted.map(|digest| (digest, self.store.get(&digest))) {
            Some((digest, Ok(Some(bytes)))) => Some((digest, Bytes::from(bytes))),
            // Not in the store (or removed as tampered): fetched below.
            None | Some((_, Ok(None) | Err(StoreError::Tampered { .. }))) => None,
            Some((_, Err(err))) => return Err(store_error(err)),
        };
        let (digest, manifest_bytes) = match stored {
            Some(found) => found,
            // By the digest wanted, or by resolving the tag.
            None => {
                from_store = false;
                let mut asked = reference.clone();
                asked.digest = wanted;
                let pulled = self.client.manifest(&asked).await.map_err(registry_error)?;
                self.store.put(&pulled.digest, &pulled.bytes).map_err(store_error)?;
                (pulled.digest, pulled.bytes)
            }
        };
        let not_a_component = |why: String| PullError::NotAComponent { reference: reference.to_string(), digest, why };
        let manifest: Manifest =
            serde_json::from_slice(&manifest_bytes).map_err(|err| not_a_component(format!("its manifest: {err}")))?;
        let layer = manifest.component_layer().map_err(not_a_component)?.clone();

        let mut pinned_reference = reference.clone();
        pinned_reference.digest = Some(digest);
        let verified = self.check_signatures(&pinned_reference, digest, &mut from_store, trust).await?;

        let component = self.blob(reference, &layer, &mut from_store).await?;
        Ok(Pulled { reference: pinned_reference, digest, manifest, component, verified, from_store })
    }

    /// A blob from the store, else from the registry into the store.
    async fn blob(
        &self,
        reference: &OciReference,
        layer: &Descriptor,
        from_store: &mut bool,
    ) -> Result<Bytes, PullError> {
        let store_error = |source| PullError::Store { reference: reference.to_string(), source };
        match self.store.get(&layer.digest) {
            Ok(Some(bytes)) => return Ok(Bytes::from(bytes)),
            Ok(None) | Err(StoreError::Tampered { .. }) => {}
            Err(err) => return Err(store_error(err)),
        }
        *from_store = false;
        let bytes = self
            .client
            .blob(&reference.registry, &reference.repository, layer)
            .await
            .map_err(|source| PullError::Registry { reference: reference.to_string(), source })?;
        self.store.put(&layer.digest, &bytes).map_err(store_error)?;
        Ok(bytes)
    }

    /// Checks `reference`'s signatures against `trust`: those in the store first, then the
    /// registry's (cosign's `sha256-<hex>.sig` tag, then Sigstore bundles among its
    /// referrers), a good one kept for next time.
    async fn check_signatures(
        &self,
        reference: &OciReference,
        digest: Digest,
        from_store: &mut bool,
        trust: &Trust,
    ) -> Result<Verified, PullError> {
        if trust.is_unsigned() {
            return Ok(Verified::Unsigned);
        }
        let refused = |why: String| PullError::Signature { reference: reference.to_string(), digest, why };
        let mut seen = Vec::new();
        for signature in self.store.signatures_of(&digest) {
            if let Some(artifact) = self.stored_signature(&signature) {
                match trust.verify(reference, &artifact) {
                    Ok(verified) => return Ok(verified),
                    Err(why) => seen.push(why),
                }
            }
        }
        *from_store = false;
        let unreachable = |err: RegistryError| {
            refused(format!("{}; its signatures could not be fetched: {err}", trust.expectation()))
        };
        let tag = cosign::signature_tag(&digest);
        let mut candidates = 0;
        if let Some(classic) = self.client.manifest_if_any(reference, &tag).await.map_err(unreachable)? {
            candidates += 1;
            match self.try_signature(reference, digest, trust, classic.digest, &classic.bytes).await? {
                Ok(verified) => return Ok(verified),
                Err(why) => seen.push(why),
            }
        }
        // Each referrer is fetched and checked before the next, and only so many: a registry
        // listing thousands costs at most MAX_BUNDLE_REFERRERS fetches.
        let referrers = self.client.referrers(reference, &digest).await.map_err(unreachable)?;
        let bundles: Vec<_> =
            referrers.iter().filter(|r| r.artifact_type.as_deref() == Some(bundle::BUNDLE_MEDIA_TYPE)).collect();
        let unexamined = bundles.len().saturating_sub(MAX_BUNDLE_REFERRERS);
        for referrer in bundles.into_iter().take(MAX_BUNDLE_REFERRERS) {
            candidates += 1;
            let by_digest = referrer.digest.to_string();
            let Some(pulled) = self.client.manifest_if_any(reference, &by_digest).await.map_err(unreachable)? else {
                continue;
            };
            match self.try_signature(reference, digest, trust, pulled.digest, &pulled.bytes).await? {
                Ok(verified) => return Ok(verified),
                Err(why) => seen.push(why),
            }
        }
        if candidates == 0 {
            return Err(refused(format!(
                "{}, and it has no signature (no `{tag}` tag, no Sigstore bundle among its referrers){}; sign it (`toolcell push --sign KEY`, `cosign sign --key`), or allow it unsigned in the policy",
                trust.expectation(),
                if seen.is_empty() {
                    String::new()
                } else {
                    format!(" (signatures kept from before: {})", summary(&seen))
                }
            )));
        }
        let unexamined = match unexamined {
            0 => String::new(),
            n => format!(
                " ({n} more Sigstore referrers were not examined: at most {MAX_BUNDLE_REFERRERS} are, so that a registry listing thousands cannot make a pull hold them; a signature kept in the store from an earlier pull is checked first)"
            ),
        };
        Err(refused(format!("{}, but its signatures are not: {}{unexamined}", trust.expectation(), summary(&seen))))
    }

    /// Fetches a signature manifest's layers and checks them against `trust`; only a signature
    /// that verifies is kept in the store. `Ok(Err(why))`: it is no signature `trust` accepts.
    async fn try_signature(
        &self,
        reference: &OciReference,
        subject: Digest,
        trust: &Trust,
        signature: Digest,
        bytes: &Bytes,
    ) -> Result<Result<Verified, String>, PullError> {
        let store_error = |source| PullError::Store { reference: reference.to_string(), source };
        let artifact = match self.fetch_signature(reference, signature, bytes).await? {
            Ok(artifact) => artifact,
            Err(why) => return Ok(Err(why)),
        };
        let verified = match trust.verify(reference, &artifact) {
            Ok(verified) => verified,
            Err(why) => return Ok(Err(why)),
        };
        for (layer, data) in &artifact.layers {
            self.store.put(&layer.digest, data).map_err(store_error)?;
        }
        self.store.put(&signature, bytes).map_err(store_error)?;
        self.store.record_signature(&subject, &signature).map_err(store_error)?;
        Ok(Ok(verified))
    }

    /// A signature manifest and its layers from the store, if all are there whole.
    fn stored_signature(&self, digest: &Digest) -> Option<SignatureArtifact> {
        let manifest: Manifest = serde_json::from_slice(&self.store.get(digest).ok()??).ok()?;
        let mut layers = Vec::new();
        for layer in manifest.layers.iter().take(MAX_SIGNATURE_LAYERS) {
            layers.push((layer.clone(), Bytes::from(self.store.get(&layer.digest).ok()??)));
        }
        Some(SignatureArtifact { digest: *digest, manifest, layers })
    }

    /// A signature manifest's layers from the registry (checked against their digests, not yet
    /// stored). `Ok(Err(why))`: it is no signature manifest toolcell reads.
    async fn fetch_signature(
        &self,
        reference: &OciReference,
        digest: Digest,
        bytes: &Bytes,
    ) -> Result<Result<SignatureArtifact, String>, PullError> {
        let Ok(manifest) = serde_json::from_slice::<Manifest>(bytes) else {
            return Ok(Err(format!("its signature manifest {digest} is not a manifest")));
        };
        if manifest.layers.len() > MAX_SIGNATURE_LAYERS {
            return Ok(Err(format!("its signature manifest {digest} has more than {MAX_SIGNATURE_LAYERS} layers")));
        }
        if let Some(layer) = manifest.layers.iter().find(|layer| layer.size > MAX_SIGNATURE_LAYER_BYTES) {
            return Ok(Err(format!("a layer of its signature manifest {digest} is {} bytes", layer.size)));
        }
        let mut layers = Vec::new();
        for layer in &manifest.layers {
            let data = self
                .client
                .blob(&reference.registry, &reference.repository, layer)
                .await
                .map_err(|source| PullError::Registry { reference: reference.to_string(), source })?;
            layers.push((layer.clone(), data));
        }
        Ok(Ok(SignatureArtifact { digest, manifest, layers }))
    }
}

/// The first few of `reasons`, and how many more there were.
fn summary(reasons: &[String]) -> String {
    // The same signature from the store and from the registry is one reason, not two.
    let mut distinct: Vec<&String> = Vec::new();
    for reason in reasons {
        if !distinct.contains(&reason) {
            distinct.push(reason);
        }
    }
    let reasons = distinct;
    let mut text =
        reasons.iter().take(MAX_REASONS).map(|reason| crate::text::shown(reason, 400)).collect::<Vec<_>>().join("; ");
    if reasons.len() > MAX_REASONS {
        text.push_str(&format!("; and {} more", reasons.len() - MAX_REASONS));
    }
    text
}
