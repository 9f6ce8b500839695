//! The cryptography `sigstore-verify` runs on: ring, the one crypto library toolcell already
//! carries (its TLS and its key signatures), installed as that crate's provider instead of its
//! default aws-lc.

use std::sync::Once;

use ring::signature::{self as algorithms, UnparsedPublicKey, VerificationAlgorithm};
use sigstore_verify::crypto::{CryptoProvider, Error, HashContext, Result, SigningScheme};
use sigstore_verify::types::HashAlgorithm;

#[derive(Debug)]
struct Ring;

static RING: Ring = Ring;

/// Makes ring `sigstore-verify`'s provider, once per process. An application that installed
/// another provider first keeps it: a provider is process-wide, and any correct one will do.
pub(super) fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = sigstore_verify::crypto::install_default_provider(&RING);
    });
}

struct Hashing(ring::digest::Context);

impl HashContext for Hashing {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    fn finalize(self: Box<Self>) -> Vec<u8> {
        self.0.finish().as_ref().to_vec()
    }
}

fn algorithm(scheme: SigningScheme) -> Result<&'static dyn VerificationAlgorithm> {
    Ok(match scheme {
        SigningScheme::EcdsaP256Sha256 => &algorithms::ECDSA_P256_SHA256_ASN1,
        SigningScheme::EcdsaP256Sha384 => &algorithms::ECDSA_P256_SHA384_ASN1,
        SigningScheme::EcdsaP384Sha256 => &algorithms::ECDSA_P384_SHA256_ASN1,
        SigningScheme::EcdsaP384Sha384 => &algorithms::ECDSA_P384_SHA384_ASN1,
        SigningScheme::Ed25519 => &algorithms::ED25519,
        SigningScheme::RsaPkcs1Sha256 => &algorithms::RSA_PKCS1_2048_8192_SHA256,
        SigningScheme::RsaPkcs1Sha384 => &algorithms::RSA_PKCS1_2048_8192_SHA384,
        SigningScheme::RsaPkcs1Sha512 => &algorithms::RSA_PKCS1_2048_8192_SHA512,
        SigningScheme::RsaPssSha256 => &algorithms::RSA_PSS_2048_8192_SHA256,
        SigningScheme::RsaPssSha384 => &algorithms::RSA_PSS_2048_8192_SHA384,
        SigningScheme::RsaPssSha512 => &algorithms::RSA_PSS_2048_8192_SHA512,
        other => return Err(Error::UnsupportedAlgorithm(format!("{other:?}"))),
    })
}

impl CryptoProvider for Ring {
    fn hash(&self, algorithm: HashAlgorithm) -> Result<Box<dyn HashContext>> {
        let algorithm = match algorithm {
            HashAlgorithm::Sha2256 => &ring::digest::SHA256,
            HashAlgorithm::Sha2384 => &ring::digest::SHA384,
            HashAlgorithm::Sha2512 => &ring::digest::SHA512,
            other => return Err(Error::UnsupportedAlgorithm(format!("{other:?}"))),
        };
        Ok(Box::new(Hashing(ring::digest::Context::new(algorithm))))
    }

    fn verify_raw(&self, scheme: SigningScheme, public_key: &[u8], data: &[u8], signature: &[u8]) -> Result<()> {
        UnparsedPublicKey::new(algorithm(scheme)?, public_key)
            .verify(data, signature)
            .map_err(|_| Error::Verification(format!("the {} signature does not verify", scheme.name())))
    }

    /// Only a message signature (a file's, not an image's) is checked over a digest, and ring
    /// cannot verify ECDSA over a digest it did not compute: such a bundle is refused.
    fn verify_prehashed(&self, scheme: SigningScheme, _: &[u8], _: &[u8], _: &[u8]) -> Result<()> {
        Err(Error::UnsupportedAlgorithm(format!(
            "{} over a precomputed digest (a message signature, which signs files, not images)",
            scheme.name()
        )))
    }
}
