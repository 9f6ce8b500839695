//! Sigstore bundles as cosign 3 attaches them to an image: an OCI 1.1 referrer whose one
//! layer is a bundle (`application/vnd.dev.sigstore.bundle.v0.3+json`) holding a DSSE
//! envelope around an in-toto statement whose subject is the signed manifest's digest. Here:
//! bundles signed with a key (`verificationMaterial.publicKey`), checked offline.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::keyless;
use super::keys::{PublicKey, SigningKey};
use super::{Signer, Verified};
use crate::digest::Digest;
use crate::manifest::{Descriptor, MANIFEST_MEDIA_TYPE, Manifest};

/// A Sigstore bundle, version 0.3.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The empty config of an artifact manifest.
pub const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const IN_TOTO_STATEMENT: &str = "https://in-toto.io/Statement/v1";
/// The statement types a signature may be: v1, and v0.1, which older signers write.
const IN_TOTO_STATEMENTS: [&str; 2] = [IN_TOTO_STATEMENT, "https://in-toto.io/Statement/v0.1"];
/// The predicate cosign 3 signs images with.
const COSIGN_SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";

/// DSSE's pre-authentication encoding: what the signature is over.
fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut message = format!("DSSEv1 {} {payload_type} {} ", payload_type.len(), payload.len()).into_bytes();
    message.extend_from_slice(payload);
    message
}

/// A bundle signing `subject` (a manifest) with `key`, and the referrer manifest carrying it,
/// with its blobs (the empty config, the bundle).
pub fn sign(key: &SigningKey, subject: &Descriptor, created: &str) -> (Manifest, Vec<(Descriptor, Vec<u8>)>) {
    let statement = serde_json::to_vec(&json!({
        "_type": IN_TOTO_STATEMENT,
        "subject": [{ "digest": { "sha256": subject.digest.hex() } }],
        "predicateType": COSIGN_SIGN_PREDICATE,
        "predicate": {},
    }))
    .expect("JSON");
    let signature = key.sign(&pae(IN_TOTO_PAYLOAD_TYPE, &statement));
    let bundle = serde_json::to_vec(&json!({
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {
            "publicKey": { "hint": key.public_key().hint() },
            "tlogEntries": [],
            "timestampVerificationData": { "rfc3161Timestamps": [] },
        },
        "dsseEnvelope": {
            "payload": STANDARD.encode(&statement),
            "payloadType": IN_TOTO_PAYLOAD_TYPE,
            "signatures": [{ "sig": STANDARD.encode(signature), "keyid": "" }],
        },
    }))
    .expect("JSON");
    let mut config = Descriptor::of(EMPTY_MEDIA_TYPE, b"{}");
    config.artifact_type = Some(BUNDLE_MEDIA_TYPE.to_owned());
    let layer = Descriptor::of(BUNDLE_MEDIA_TYPE, &bundle);
    let mut subject = subject.clone();
    subject.annotations.clear();
    let annotations = BTreeMap::from([
        ("dev.sigstore.bundle.content".to_owned(), "dsse-envelope".to_owned()),
        ("dev.sigstore.bundle.predicateType".to_owned(), COSIGN_SIGN_PREDICATE.to_owned()),
        ("org.opencontainers.image.created".to_owned(), created.to_owned()),
    ]);
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        artifact_type: Some(BUNDLE_MEDIA_TYPE.to_owned()),
        config: config.clone(),
        layers: vec![layer.clone()],
        subject: Some(subject),
        annotations,
    };
    (manifest, vec![(config, b"{}".to_vec()), (layer, bundle)])
}

/// Which of `signers` signed `subject` in a bundle among `layers` (the referrer `signature`);
/// else why none did.
pub fn verify(
    signers: &[Signer],
    subject: &Digest,
    layers: &[(Descriptor, bytes::Bytes)],
    signature: Digest,
) -> Result<Verified, String> {
    let bundles = layers.iter().filter(|(layer, _)| layer.media_type == BUNDLE_MEDIA_TYPE);
    super::first_verified(
        bundles.map(|(_, bundle)| verify_one(signers, subject, bundle, signature)),
        "its referrer holds no Sigstore bundle",
    )
}

fn verify_one(signers: &[Signer], subject: &Digest, bytes: &[u8], signature: Digest) -> Result<Verified, String> {
    let bundle: Value = serde_json::from_slice(bytes).map_err(|_| "a bundle that is not JSON".to_owned())?;
    let envelope = &bundle["dsseEnvelope"];
    if envelope.is_null() {
        return Err("a bundle with no DSSE envelope (a message signature is for files, not images)".to_owned());
    }
    let payload_type = envelope["payloadType"].as_str().unwrap_or_default();
    let payload = envelope["payload"]
        .as_str()
        .and_then(|p| STANDARD.decode(p).ok())
        .ok_or_else(|| "a bundle with no payload".to_owned())?;
    let material = &bundle["verificationMaterial"];
    if !material["publicKey"].is_null() {
        let key = signed_with_key(&super::keys(signers), envelope, &pae(payload_type, &payload))?;
        about(&key.name, subject, payload_type, &payload)?;
        return Ok(Verified::Key { signer: key.name.clone(), signature });
    }
    if material["certificate"].is_null() && material["x509CertificateChain"].is_null() {
        return Err("a bundle with neither a key nor a certificate".to_owned());
    }
    let identities = super::identities(signers);
    let signed = keyless::verify(&identities, subject, bytes)?;
    about(&signed.identity.name, subject, payload_type, &payload)?;
    Ok(Verified::Identity {
        signer: signed.identity.name.clone(),
        identity: signed.identity.identity.clone(),
        issuer: signed.identity.issuer.clone(),
        logged_at: signed.logged_at,
        signature,
    })
}

/// The first of `keys` whose signature over `message` the envelope holds.
fn signed_with_key<'k>(keys: &[&'k PublicKey], envelope: &Value, message: &[u8]) -> Result<&'k PublicKey, String> {
    let signatures = envelope["signatures"].as_array().map(Vec::as_slice).unwrap_or_default();
    keys.iter()
        .find(|key| {
            signatures
                .iter()
                .filter_map(|s| s["sig"].as_str().and_then(|sig| STANDARD.decode(sig).ok()))
                .any(|sig| key.verifies(message, &sig))
        })
        .copied()
        .ok_or_else(|| "a bundle signed by a key not trusted for it".to_owned())
}

/// Whether a signed payload is a signature of `subject`, as cosign makes one: an in-toto
/// statement naming its digest, with cosign's signing predicate (an attestation about the
/// same image, a build provenance say, is not a signature of it).
fn about(signer: &str, subject: &Digest, payload_type: &str, payload: &[u8]) -> Result<(), String> {
    if payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(format!("a bundle by `{signer}` whose payload is `{payload_type}`, not an in-toto statement"));
    }
    let statement: Value =
        serde_json::from_slice(payload).map_err(|_| format!("a bundle by `{signer}` whose statement is not JSON"))?;
    if !IN_TOTO_STATEMENTS.contains(&statement["_type"].as_str().unwrap_or_default()) {
        return Err(format!("a bundle by `{signer}` whose payload is not an in-toto statement (`_type`)"));
    }
    let names_subject = statement["subject"]
        .as_array()
        .is_some_and(|subjects| subjects.iter().any(|s| s["digest"]["sha256"] == subject.hex().as_str()));
    if !names_subject {
        return Err(format!("a bundle by `{signer}` about another manifest"));
    }
    if statement["predicateType"] != COSIGN_SIGN_PREDICATE {
        let predicate = crate::text::shown(statement["predicateType"].as_str().unwrap_or("none"), 200);
        return Err(format!(
            "a bundle by `{signer}` whose predicate is `{predicate}`: an attestation, not a signature (`{COSIGN_SIGN_PREDICATE}`)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_verifies_only_for_its_subject_and_its_key() {
        let (key, _) = SigningKey::generate();
        let keys = vec![Signer::Key(key.public_key())];
        let subject = Descriptor::of(MANIFEST_MEDIA_TYPE, b"the manifest");
        let (manifest, blobs) = sign(&key, &subject, "2026-11-27T00:00:00Z");
        assert_eq!(manifest.subject.as_ref().map(|s| s.digest), Some(subject.digest));
        assert_eq!(
            manifest.config.digest.to_string(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        let layers: Vec<_> = blobs.into_iter().map(|(d, b)| (d, bytes::Bytes::from(b))).collect();
        let signature = manifest.config.digest;
        let verified = verify(&keys, &subject.digest, &layers, signature).expect("signed");
        assert_eq!(verified.signature(), Some(signature));
        let err = verify(&keys, &Digest::of(b"other"), &layers, signature).expect_err("other subject");
        assert!(err.contains("another manifest"), "{err}");
        let (stranger, _) = SigningKey::generate();
        let err = verify(&[Signer::Key(stranger.public_key())], &subject.digest, &layers, signature).expect_err("key");
        assert!(err.contains("not trusted"), "{err}");
    }

    #[test]
    fn a_signed_attestation_about_the_manifest_is_not_a_signature_of_it() {
        let (key, _) = SigningKey::generate();
        let subject = Digest::of(b"the manifest");
        let statement = serde_json::to_vec(&json!({
            "_type": IN_TOTO_STATEMENT,
            "subject": [{ "digest": { "sha256": subject.hex() } }],
            "predicateType": "https://slsa.dev/provenance/v1",
            "predicate": {},
        }))
        .expect("JSON");
        let bundle = serde_json::to_vec(&json!({
            "mediaType": BUNDLE_MEDIA_TYPE,
            "verificationMaterial": { "publicKey": { "hint": key.public_key().hint() } },
            "dsseEnvelope": {
                "payload": STANDARD.encode(&statement),
                "payloadType": IN_TOTO_PAYLOAD_TYPE,
                "signatures": [{ "sig": STANDARD.encode(key.sign(&pae(IN_TOTO_PAYLOAD_TYPE, &statement))) }],
            },
        }))
        .expect("JSON");
        let layers = vec![(Descriptor::of(BUNDLE_MEDIA_TYPE, &bundle), bytes::Bytes::from(bundle))];
        let err = verify(&[Signer::Key(key.public_key())], &subject, &layers, Digest::of(b"referrer"))
            .expect_err("an attestation");
        assert!(err.contains("slsa.dev/provenance/v1`: an attestation, not a signature"), "{err}");
    }
}
