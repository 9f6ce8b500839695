//! cosign's classic signatures: a manifest tagged `sha256-<hex>.sig` beside the signed one,
//! each layer a "simple signing" payload naming the signed manifest's digest, its signature
//! in the layer's `dev.cosignproject.cosign/signature` annotation (what `cosign sign --key`
//! writes and `cosign verify --key` reads, and the sigstore crate too).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::keys::{PublicKey, SigningKey};
use crate::digest::Digest;
use crate::manifest::{Descriptor, MANIFEST_MEDIA_TYPE, Manifest};

/// A simple signing payload.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a layer's signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// What a simple signing payload says it is.
const PAYLOAD_TYPE: &str = "cosign container image signature";

/// The tag cosign keeps `digest`'s signatures under.
pub fn signature_tag(digest: &Digest) -> String {
    format!("sha256-{}.sig", digest.hex())
}

/// A classic signature of `digest` (a manifest in `repository`, as `registry/repository`):
/// the manifest to push as [`signature_tag`], and its blobs (config, payload).
pub fn sign(key: &SigningKey, repository: &str, digest: &Digest) -> (Manifest, Vec<(Descriptor, Vec<u8>)>) {
    let payload = serde_json::to_vec(&json!({
        "critical": {
            "identity": { "docker-reference": repository },
            "image": { "docker-manifest-digest": digest.to_string() },
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    }))
    .expect("JSON");
    let mut layer = Descriptor::of(SIMPLE_SIGNING_MEDIA_TYPE, &payload);
    layer.annotations.insert(SIGNATURE_ANNOTATION.to_owned(), STANDARD.encode(key.sign(&payload)));
    // The image config cosign itself writes: the payload as the one layer.
    let config = serde_json::to_vec(&json!({
        "architecture": "",
        "os": "",
        "config": {},
        "rootfs": { "type": "layers", "diff_ids": [layer.digest.to_string()] },
    }))
    .expect("JSON");
    let config_descriptor = Descriptor::of("application/vnd.oci.image.config.v1+json", &config);
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        artifact_type: None,
        config: config_descriptor.clone(),
        layers: vec![layer.clone()],
        subject: None,
        annotations: BTreeMap::new(),
    };
    (manifest, vec![(config_descriptor, config), (layer, payload)])
}

/// Which of `keys` signed `subject` in the layers of a classic signature manifest; else why
/// none did.
pub fn verify<'k>(
    keys: &[&'k PublicKey],
    subject: &Digest,
    layers: &[(Descriptor, bytes::Bytes)],
) -> Result<&'k PublicKey, String> {
    let signed = layers.iter().filter(|(layer, _)| layer.media_type == SIMPLE_SIGNING_MEDIA_TYPE);
    super::first_verified(
        signed.map(|(layer, payload)| verify_one(keys, subject, layer, payload)),
        "its signature manifest holds no cosign signature",
    )
}

/// Which of `keys` signed one simple signing `payload` (its signature in `layer`'s annotation)
/// naming `subject`.
fn verify_one<'k>(
    keys: &[&'k PublicKey],
    subject: &Digest,
    layer: &Descriptor,
    payload: &[u8],
) -> Result<&'k PublicKey, String> {
    let signature = layer
        .annotations
        .get(SIGNATURE_ANNOTATION)
        .and_then(|s| STANDARD.decode(s).ok())
        .ok_or_else(|| "a layer with no signature annotation".to_owned())?;
    let key = keys
        .iter()
        .find(|key| key.verifies(payload, &signature))
        .copied()
        .ok_or_else(|| "a signature by a key not trusted for it".to_owned())?;
    match signed_digest(payload) {
        Ok(signed) if signed == *subject => Ok(key),
        Ok(signed) => Err(format!("a signature by `{}` of another manifest ({signed})", key.name)),
        Err(why) => Err(format!("a signature by `{}` whose payload {why}", key.name)),
    }
}

/// The manifest digest a simple signing payload vouches for.
fn signed_digest(payload: &[u8]) -> Result<Digest, String> {
    let payload: serde_json::Value = serde_json::from_slice(payload).map_err(|_| "is not JSON".to_owned())?;
    let critical = &payload["critical"];
    if critical["type"] != PAYLOAD_TYPE {
        return Err(format!("is not a `{PAYLOAD_TYPE}`"));
    }
    critical["image"]["docker-manifest-digest"]
        .as_str()
        .and_then(|digest| digest.parse().ok())
        .ok_or_else(|| "names no manifest digest".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blobs(signed: Vec<(Descriptor, Vec<u8>)>) -> Vec<(Descriptor, bytes::Bytes)> {
        signed.into_iter().map(|(d, b)| (d, bytes::Bytes::from(b))).collect()
    }

    #[test]
    fn a_classic_signature_verifies_only_for_its_digest_and_its_key() {
        let (key, _) = SigningKey::generate();
        let public_key = key.public_key();
        let public = vec![&public_key];
        let digest = Digest::of(b"manifest");
        let (manifest, signed) = sign(&key, "127.0.0.1:5000/tools/echo", &digest);
        assert_eq!(manifest.layers.len(), 1);
        let layers = blobs(signed);
        assert_eq!(verify(&public, &digest, &layers).expect("signed"), &public_key);

        let other = Digest::of(b"another manifest");
        let err = verify(&public, &other, &layers).expect_err("another digest");
        assert!(err.contains("of another manifest"), "{err}");

        let (stranger, _) = SigningKey::generate();
        let err = verify(&[&stranger.public_key()], &digest, &layers).expect_err("another key");
        assert!(err.contains("not trusted"), "{err}");

        // A payload changed after signing (say, to point at another digest) fails its signature.
        let mut changed = layers.clone();
        let text = String::from_utf8(changed[1].1.to_vec()).expect("utf8").replace(&digest.hex(), &other.hex());
        changed[1].1 = bytes::Bytes::from(text);
        assert!(verify(&public, &other, &changed).is_err());
    }
}
