//! Signing keys as cosign and Sigstore use them: ECDSA P-256 with SHA-256, public keys as PEM
//! `PUBLIC KEY` (SubjectPublicKeyInfo), private keys as PEM `PRIVATE KEY` (PKCS#8).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_ASN1, ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _, UnparsedPublicKey,
};

/// The DER a P-256 SubjectPublicKeyInfo starts with, before the 65-byte point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
    0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// A public key signatures are checked with.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// What the operator calls it (the `[signers.NAME]` it came from, or its file).
    pub name: String,
    spki: Vec<u8>,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({}, {})", self.name, self.hint())
    }
}

impl PublicKey {
    /// The key in PEM text (`-----BEGIN PUBLIC KEY-----`), named `name`.
    ///
    /// # Errors
    /// When the text is not one PEM public key, or not an ECDSA P-256 key.
    pub fn from_pem(name: impl Into<String>, text: &str) -> Result<Self, String> {
        let der = pem_block(text, "PUBLIC KEY")?;
        if der.len() != P256_SPKI_PREFIX.len() + 65 || der[..P256_SPKI_PREFIX.len()] != P256_SPKI_PREFIX {
            return Err("it is not an ECDSA P-256 public key (the kind `cosign generate-key-pair` and `toolcell keygen` make); other kinds are not supported".to_owned());
        }
        Ok(Self { name: name.into(), spki: der })
    }

    /// The key as Sigstore hints it: base64 of the SHA-256 of its DER.
    pub fn hint(&self) -> String {
        STANDARD.encode(ring::digest::digest(&ring::digest::SHA256, &self.spki))
    }

    /// The key as PEM text.
    pub fn to_pem(&self) -> String {
        pem("PUBLIC KEY", &self.spki)
    }

    /// Whether `signature` (DER, as cosign writes it) is this key's over `message`.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let point = &self.spki[P256_SPKI_PREFIX.len()..];
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, point).verify(message, signature).is_ok()
    }
}

/// A private key to sign with.
pub struct SigningKey {
    pair: EcdsaKeyPair,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({})", self.public_key().hint())
    }
}

impl SigningKey {
    /// The key in PEM text (`-----BEGIN PRIVATE KEY-----`, unencrypted PKCS#8).
    ///
    /// # Errors
    /// When it is not one, or not an ECDSA P-256 key.
    pub fn from_pem(text: &str) -> Result<Self, String> {
        if text.contains("ENCRYPTED SIGSTORE PRIVATE KEY") || text.contains("ENCRYPTED COSIGN PRIVATE KEY") {
            return Err("it is a cosign-encrypted key, which toolcell does not read; export it unencrypted as PKCS#8 (`openssl pkcs8 -topk8 -nocrypt`) or make one with `toolcell keygen`".to_owned());
        }
        let der = pem_block(text, "PRIVATE KEY")?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &der, &SystemRandom::new())
            .map_err(|_| "it is not an ECDSA P-256 private key in PKCS#8".to_owned())?;
        Ok(Self { pair })
    }

    /// A new key, and its PKCS#8 PEM text to keep.
    ///
    /// # Panics
    /// When the system has no randomness.
    pub fn generate() -> (Self, String) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).expect("randomness");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).expect("just made");
        (Self { pair }, pem("PRIVATE KEY", pkcs8.as_ref()))
    }

    /// Its public key, named by its hint.
    pub fn public_key(&self) -> PublicKey {
        let spki = [&P256_SPKI_PREFIX[..], self.pair.public_key().as_ref()].concat();
        let mut key = PublicKey { name: String::new(), spki };
        key.name = key.hint();
        key
    }

    /// Its signature (DER) over `message`.
    ///
    /// # Panics
    /// When the system has no randomness.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        self.pair.sign(&SystemRandom::new(), message).expect("randomness").as_ref().to_vec()
    }
}

/// The DER inside the one PEM block labelled `label`.
fn pem_block(text: &str, label: &str) -> Result<Vec<u8>, String> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin).ok_or_else(|| format!("it holds no `{begin}` block"))? + begin.len();
    let stop = text[start..].find(&end).ok_or_else(|| format!("its `{begin}` block has no end"))? + start;
    let base64: String = text[start..stop].split_whitespace().collect();
    STANDARD.decode(base64).map_err(|_| format!("its `{begin}` block is not base64"))
}

fn pem(label: &str, der: &[u8]) -> String {
    let text = STANDARD.encode(der);
    let lines: Vec<&str> = text.as_bytes().chunks(64).map(|line| std::str::from_utf8(line).expect("base64")).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_signs_and_only_its_public_key_verifies_and_both_survive_pem() {
        let (key, private_pem) = SigningKey::generate();
        let again = SigningKey::from_pem(&private_pem).expect("pkcs8 back");
        let public = PublicKey::from_pem("release", &again.public_key().to_pem()).expect("spki back");
        let signature = key.sign(b"payload");
        assert!(public.verifies(b"payload", &signature));
        assert!(!public.verifies(b"payloaD", &signature));
        let (other, _) = SigningKey::generate();
        assert!(!other.public_key().verifies(b"payload", &signature));
        assert_eq!(public.hint(), key.public_key().hint());
    }

    #[test]
    fn keys_that_are_not_p256_pem_are_refused_with_what_to_use() {
        let err = PublicKey::from_pem("x", "hello").expect_err("no pem");
        assert!(err.contains("BEGIN PUBLIC KEY"), "{err}");
        // An Ed25519 key: valid PEM, another kind.
        let ed25519 = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n";
        assert!(PublicKey::from_pem("x", ed25519).expect_err("ed25519").contains("P-256"));
        let encrypted =
            "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n";
        assert!(SigningKey::from_pem(encrypted).expect_err("encrypted").contains("toolcell keygen"));
    }
}
