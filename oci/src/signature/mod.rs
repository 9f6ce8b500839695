//! Signatures, checked in process before a component is used: cosign's classic signatures
//! ([`cosign`]) and Sigstore bundles attached as OCI referrers ([`bundle`]), made with ECDSA
//! P-256 keys ([`keys`]) or, keyless, with a certificate for an OIDC identity ([`keyless`]).
//! Who a tool must be signed by is the operator's [`Trust`].

pub mod bundle;
pub mod cosign;
pub mod keyless;
pub mod keys;
mod provider;

use bytes::Bytes;

use crate::digest::Digest;
use crate::manifest::{Descriptor, Manifest};
use crate::reference::OciReference;

pub use self::keyless::{Identity, TrustRoot};
pub use self::keys::{PublicKey, SigningKey};

/// Someone a tool may be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Signer {
    /// The holder of a key.
    Key(PublicKey),
    /// An identity with a certificate from a trust root's CA (keyless).
    Identity(Identity),
}

impl Signer {
    /// What the operator calls it.
    pub fn name(&self) -> &str {
        match self {
            Self::Key(key) => &key.name,
            Self::Identity(identity) => &identity.name,
        }
    }

    /// Its name, and for an identity who that is.
    fn described(&self) -> String {
        match self {
            Self::Key(key) => format!("`{}`", key.name),
            Self::Identity(identity) => {
                format!("`{}` ({} from the issuer {})", identity.name, identity.identity, identity.issuer)
            }
        }
    }
}

/// What a tool must be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Trust {
    /// Nothing: the operator allowed it unsigned, explicitly.
    Unsigned,
    /// Any one of these.
    Signers(Vec<Signer>),
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
    /// The identity named so, in a keyless bundle.
    Identity {
        /// The signer's name.
        signer: String,
        /// The certificate's identity.
        identity: String,
        /// Its OIDC issuer.
        issuer: String,
        /// When the transparency log says it was signed (RFC 3339), if it says.
        logged_at: Option<String>,
        /// The signature's manifest.
        signature: Digest,
    },
}

impl Verified {
    /// Who, in words: `` `release` `` or `` `ci` (ci@acme.dev from https://…) ``.
    pub fn signer(&self) -> String {
        match self {
            Self::Unsigned => "no one (allowed unsigned)".to_owned(),
            Self::Key { signer, .. } => format!("`{signer}`"),
            Self::Identity { signer, identity, issuer, .. } => {
                format!("`{signer}` ({identity} from the issuer {issuer})")
            }
        }
    }

    /// The signature's manifest, if signed.
    pub fn signature(&self) -> Option<Digest> {
        match self {
            Self::Unsigned => None,
            Self::Key { signature, .. } | Self::Identity { signature, .. } => Some(*signature),
        }
    }
}

/// The keys among `signers`.
fn keys(signers: &[Signer]) -> Vec<&PublicKey> {
    signers
        .iter()
        .filter_map(|signer| match signer {
            Signer::Key(key) => Some(key),
            Signer::Identity(_) => None,
        })
        .collect()
}

/// The keyless identities among `signers`.
fn identities(signers: &[Signer]) -> Vec<Identity> {
    signers
        .iter()
        .filter_map(|signer| match signer {
            Signer::Identity(identity) => Some(identity.clone()),
            Signer::Key(_) => None,
        })
        .collect()
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

/// The first signer a candidate signature verified with, or every reason none did (`none`
/// when there was no candidate).
fn first_verified<T>(candidates: impl Iterator<Item = Result<T, String>>, none: &str) -> Result<T, String> {
    let mut seen = Vec::new();
    for candidate in candidates {
        match candidate {
            Ok(signed) => return Ok(signed),
            Err(why) => seen.push(why),
        }
    }
    Err(if seen.is_empty() { none.to_owned() } else { seen.join("; ") })
}

impl Trust {
    /// Any one of `keys`.
    pub fn keys(keys: Vec<PublicKey>) -> Self {
        Self::Signers(keys.into_iter().map(Signer::Key).collect())
    }

    /// Whether nothing is required.
    pub fn is_unsigned(&self) -> bool {
        matches!(self, Self::Unsigned)
    }

    /// What is required, in words.
    pub fn expectation(&self) -> String {
        match self {
            Self::Unsigned => "it may be unsigned".to_owned(),
            Self::Signers(signers) if signers.is_empty() => {
                "it must be signed, and the policy names no signer".to_owned()
            }
            Self::Signers(signers) => {
                let names: Vec<String> = signers.iter().map(Signer::described).collect();
                format!("it must be signed by {}", names.join(" or "))
            }
        }
    }

    /// Checks `artifact` as a signature of `reference` (pinned by digest).
    ///
    /// # Errors
    /// Why it is not a signature this trust accepts.
    pub fn verify(&self, reference: &OciReference, artifact: &SignatureArtifact) -> Result<Verified, String> {
        let Self::Signers(signers) = self else { return Ok(Verified::Unsigned) };
        let subject = reference.digest.ok_or("the reference is not pinned by digest")?;
        if artifact.manifest.artifact_type.as_deref() == Some(bundle::BUNDLE_MEDIA_TYPE) {
            if artifact.manifest.subject.as_ref().is_some_and(|s| s.digest != subject) {
                return Err("its referrer is about another manifest".to_owned());
            }
            bundle::verify(signers, &subject, &artifact.layers, artifact.digest)
        } else {
            let key = cosign::verify(&keys(signers), &subject, &artifact.layers)?;
            Ok(Verified::Key { signer: key.name.clone(), signature: artifact.digest })
        }
    }
}
