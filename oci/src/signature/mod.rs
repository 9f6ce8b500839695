//! Signatures, checked in process before a component is used: cosign's classic signatures
//! ([`cosign`]) and Sigstore bundles attached as OCI referrers ([`bundle`]), made with ECDSA
//! P-256 keys ([`keys`]). Which keys a tool must be signed by is the operator's [`Trust`].

pub mod bundle;
pub mod cosign;
pub mod keys;

use bytes::Bytes;

use crate::digest::Digest;
use crate::manifest::{Descriptor, Manifest};
use crate::reference::OciReference;

pub use self::keys::{PublicKey, SigningKey};

/// What a tool must be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Trust {
    /// Nothing: the operator allowed it unsigned, explicitly.
    Unsigned,
    /// Any one of these keys.
    Keys(Vec<PublicKey>),
}

/// Who vouched for a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verified {
    /// No one: it was allowed unsigned.
    Unsigned,
    /// The key named so (a `[signers.NAME]`), in a classic cosign signature or a bundle.
    Key {
        /// The signer's name.
        signer: String,
        /// The signature's manifest.
        signature: Digest,
    },
}

/// A signature manifest (a `.sig` tag's or a referrer) and its layers.
#[derive(Debug, Clone)]
pub struct SignatureArtifact {
    /// Its digest.
    pub digest: Digest,
    /// The manifest.
    pub manifest: Manifest,
    /// Its layers' descriptors and bytes (checked against their digests).
    pub layers: Vec<(Descriptor, Bytes)>,
}

/// The first key a candidate signature verified with, or every reason none did (`none` when
/// there was no candidate).
fn first_verified<'k>(
    candidates: impl Iterator<Item = Result<&'k PublicKey, String>>,
    none: &str,
) -> Result<&'k PublicKey, String> {
    let mut seen = Vec::new();
    for candidate in candidates {
        match candidate {
            Ok(key) => return Ok(key),
            Err(why) => seen.push(why),
        }
    }
    Err(if seen.is_empty() { none.to_owned() } else { seen.join("; ") })
}

impl Trust {
    /// Whether nothing is required.
    pub fn is_unsigned(&self) -> bool {
        matches!(self, Self::Unsigned)
    }

    /// What is required, in words.
    pub fn expectation(&self) -> String {
        match self {
            Self::Unsigned => "it may be unsigned".to_owned(),
            Self::Keys(keys) if keys.is_empty() => "it must be signed, and the policy names no signer".to_owned(),
            Self::Keys(keys) => {
                let names: Vec<String> = keys.iter().map(|key| format!("`{}`", key.name)).collect();
                format!("it must be signed by {}", names.join(" or "))
            }
        }
    }

    /// Checks `artifact` as a signature of `reference` (pinned by digest).
    ///
    /// # Errors
    /// Why it is not a signature this trust accepts.
    pub fn verify(&self, reference: &OciReference, artifact: &SignatureArtifact) -> Result<Verified, String> {
        let Self::Keys(keys) = self else { return Ok(Verified::Unsigned) };
        let subject = reference.digest.ok_or("the reference is not pinned by digest")?;
        let is_bundle = artifact.manifest.artifact_type.as_deref() == Some(bundle::BUNDLE_MEDIA_TYPE);
        let key = if is_bundle {
            if artifact.manifest.subject.as_ref().is_some_and(|s| s.digest != subject) {
                return Err("its referrer is about another manifest".to_owned());
            }
            bundle::verify(keys, &subject, &artifact.layers)?
        } else {
            cosign::verify(keys, &subject, &artifact.layers)?
        };
        Ok(Verified::Key { signer: key.name.clone(), signature: artifact.digest })
    }
}
