//! Publishing a component: its config and layer as `wkg` lays them out, its metadata as
//! annotations, the manifest under a tag; and signing a published manifest with a key, both
//! as cosign's classic `.sig` tag (what cosign 2 and the sigstore crate read) and as a
//! Sigstore bundle referrer (what cosign 3 and sigstore-js read).

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::client::{RegistryClient, RegistryError, referrers_tag};
use crate::digest::Digest;
use crate::manifest::{
    ComponentInterfaces, Descriptor, INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, Manifest, WASM_CONFIG_MEDIA_TYPE,
    WASM_LAYER_MEDIA_TYPE, WasmConfig,
};
use crate::reference::OciReference;
use crate::signature::{SigningKey, bundle, cosign};

/// What a push made.
#[derive(Debug, Clone)]
pub struct Published {
    /// The reference, pinned to the manifest's digest.
    pub reference: OciReference,
    /// The manifest.
    pub manifest: Descriptor,
    /// The signature manifests pushed (the classic one, then the bundle).
    pub signatures: Vec<Digest>,
}

/// A component to publish.
#[derive(Debug, Clone)]
pub struct Component {
    /// Its bytes.
    pub bytes: Bytes,
    /// Manifest annotations (see [`crate::manifest::annotations`]).
    pub annotations: BTreeMap<String, String>,
    /// What it imports and exports, for the config.
    pub interfaces: Option<ComponentInterfaces>,
    /// When it was made (RFC 3339).
    pub created: String,
}

/// Pushes `component` to `reference` (by tag), then signs it with `key` if given.
///
/// # Errors
/// When the registry refuses a blob, the manifest or a signature.
pub async fn push(
    client: &RegistryClient,
    reference: &OciReference,
    component: Component,
    key: Option<&SigningKey>,
) -> Result<Published, RegistryError> {
    let tag = reference.tag.clone().ok_or_else(|| RegistryError::Invalid {
        what: reference.to_string(),
        why: "a push needs a tag: write oci://REGISTRY/REPOSITORY:TAG".to_owned(),
    })?;
    let (registry, repository) = (reference.registry.as_str(), reference.repository.as_str());
    let layer = client.push_blob(registry, repository, WASM_LAYER_MEDIA_TYPE, component.bytes).await?;
    let config = WasmConfig {
        created: Some(component.created.clone()),
        architecture: "wasm".to_owned(),
        os: "wasip2".to_owned(),
        layer_digests: vec![layer.digest.to_string()],
        component: component.interfaces,
    };
    let config = Bytes::from(serde_json::to_vec(&config).expect("JSON"));
    let config = client.push_blob(registry, repository, WASM_CONFIG_MEDIA_TYPE, config).await?;
    let manifest = Manifest::for_component(config, layer, component.annotations);
    let bytes = Bytes::from(serde_json::to_vec(&manifest).expect("JSON"));
    let descriptor = Descriptor::of(MANIFEST_MEDIA_TYPE, &bytes);
    let digest = client.push_manifest(registry, repository, &tag, MANIFEST_MEDIA_TYPE, bytes).await?;
    let mut pinned = reference.clone();
    pinned.digest = Some(digest);
    let signatures = match key {
        Some(key) => sign(client, &pinned, &descriptor, key, &component.created).await?,
        None => Vec::new(),
    };
    Ok(Published { reference: pinned, manifest: descriptor, signatures })
}

/// Signs the manifest `subject` of `reference` with `key`: a classic cosign signature and a
/// Sigstore bundle referrer (listed in the referrers tag too, for registries without the
/// referrers API).
///
/// # Errors
/// When the registry refuses them.
pub async fn sign(
    client: &RegistryClient,
    reference: &OciReference,
    subject: &Descriptor,
    key: &SigningKey,
    created: &str,
) -> Result<Vec<Digest>, RegistryError> {
    let (registry, repository) = (reference.registry.as_str(), reference.repository.as_str());
    let docker_reference = format!("{registry}/{repository}");
    let (classic, blobs) = cosign::sign(key, &docker_reference, &subject.digest);
    let classic = push_artifact(client, reference, &cosign::signature_tag(&subject.digest), &classic, blobs).await?;

    let (referrer, blobs) = bundle::sign(key, subject, created);
    let referrer_bytes = serde_json::to_vec(&referrer).expect("JSON");
    let referrer_digest = Digest::of(&referrer_bytes);
    push_artifact(client, reference, &referrer_digest.to_string(), &referrer, blobs).await?;
    let mut entry = Descriptor::of(MANIFEST_MEDIA_TYPE, &referrer_bytes);
    entry.artifact_type = referrer.artifact_type.clone();
    entry.annotations = referrer.annotations.clone();
    add_to_referrers_tag(client, reference, &subject.digest, entry).await?;
    Ok(vec![classic, referrer_digest])
}

async fn push_artifact(
    client: &RegistryClient,
    reference: &OciReference,
    by: &str,
    manifest: &Manifest,
    blobs: Vec<(Descriptor, Vec<u8>)>,
) -> Result<Digest, RegistryError> {
    let (registry, repository) = (reference.registry.as_str(), reference.repository.as_str());
    for (descriptor, bytes) in blobs {
        client.push_blob(registry, repository, &descriptor.media_type, Bytes::from(bytes)).await?;
    }
    let bytes = Bytes::from(serde_json::to_vec(manifest).expect("JSON"));
    client.push_manifest(registry, repository, by, MANIFEST_MEDIA_TYPE, bytes).await
}

/// Adds `entry` to the index tagged `sha256-<hex>` (kept, with what others listed there).
async fn add_to_referrers_tag(
    client: &RegistryClient,
    reference: &OciReference,
    subject: &Digest,
    entry: Descriptor,
) -> Result<(), RegistryError> {
    let tag = referrers_tag(subject);
    let mut manifests = match client.manifest_if_any(reference, &tag).await? {
        Some(existing) => serde_json::from_slice::<serde_json::Value>(&existing.bytes)
            .ok()
            .and_then(|index| index.get("manifests").cloned())
            .and_then(|list| serde_json::from_value::<Vec<serde_json::Value>>(list).ok())
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let entry = serde_json::to_value(&entry).expect("JSON");
    if !manifests.contains(&entry) {
        manifests.push(entry);
    }
    let index = serde_json::json!({ "schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": manifests });
    let bytes = Bytes::from(serde_json::to_vec(&index).expect("JSON"));
    client.push_manifest(&reference.registry, &reference.repository, &tag, INDEX_MEDIA_TYPE, bytes).await?;
    Ok(())
}
