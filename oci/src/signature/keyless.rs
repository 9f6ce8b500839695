//! Keyless Sigstore bundles: signed with a short-lived certificate a Fulcio CA issued to an
//! OIDC identity, logged in a Rekor transparency log. `sigstore-verify` checks them offline
//! against the operator's trusted root (`trusted_root.json`): the certificate's chain to one of
//! its CAs and its SCT, the signature, the log's inclusion proof or promise, and that the
//! certificate was valid when the log (or a timestamp authority it names) says the signature
//! was made. Then the certificate's identity and issuer must be ones the policy trusts.

use std::sync::Arc;

use sigstore_verify::trust_root::TrustedRoot;
use sigstore_verify::types::{Artifact, Bundle, Sha256Hash};
use sigstore_verify::{IdentityMatcher, VerificationPolicy, Verifier};

use crate::digest::Digest;

/// An operator's Sigstore trust root: the CAs, logs and timestamp authorities signatures are
/// checked against, as a `trusted_root.json` (`application/vnd.dev.sigstore.trustedroot+json`)
/// names them.
pub struct TrustRoot {
    /// What the operator calls it (its file).
    pub name: String,
    /// Its JSON's digest: two roots are the same root when their files are.
    digest: Digest,
    verifier: Verifier,
}

impl std::fmt::Debug for TrustRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TrustRoot({}, {})", self.name, self.digest)
    }
}

impl PartialEq for TrustRoot {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest
    }
}

impl Eq for TrustRoot {}

/// The largest trusted root read (the public-good instance's is about 10 KiB).
pub const MAX_TRUST_ROOT_BYTES: u64 = 1 << 20;

impl TrustRoot {
    /// The trust root in the file `path` (at most [`MAX_TRUST_ROOT_BYTES`], a regular file
    /// or a symlink to one), named `name`.
    ///
    /// # Errors
    /// When it cannot be read, or is not a usable trusted root: what is wrong, in words.
    pub fn from_file(name: impl Into<String>, path: &std::path::Path) -> Result<Self, String> {
        let bytes = crate::files::read_operator_file(path, MAX_TRUST_ROOT_BYTES)
            .map_err(|err| format!("{} cannot be read: {err}", path.display()))?;
        Self::from_json(name, &bytes).map_err(|why| format!("{}: {why}", path.display()))
    }

    /// The trust root in `json`, named `name`.
    ///
    /// # Errors
    /// When it is not a trusted root, or holds a key or certificate that cannot be used.
    pub fn from_json(name: impl Into<String>, json: &[u8]) -> Result<Self, String> {
        super::provider::install();
        let text = std::str::from_utf8(json).map_err(|_| "it is not UTF-8 text".to_owned())?;
        let root = TrustedRoot::from_json(text)
            .map_err(|err| format!("it is not a Sigstore trusted root: {}", shown(&err.to_string())))?;
        if root.certificate_authorities.is_empty() {
            return Err("it names no certificate authority, so no keyless signature could verify against it".to_owned());
        }
        let verifier = Verifier::new(&root)
            .map_err(|err| format!("a key or certificate in it is unusable: {}", shown(&err.to_string())))?;
        Ok(Self { name: name.into(), digest: Digest::of(json), verifier })
    }
}

/// A keyless signer: a certificate identity (the SAN: an email address, or a workflow's URI)
/// and the OIDC issuer that vouched for it, under a trust root. Both are matched exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// What the operator calls it (the `[signers.NAME]` it came from).
    pub name: String,
    /// The certificate's subject alternative name.
    pub identity: String,
    /// The certificate's OIDC issuer.
    pub issuer: String,
    /// The CAs and logs it is checked against.
    pub root: Arc<TrustRoot>,
}

/// Who signed a bundle, and when the log says they did.
#[derive(Debug)]
pub struct Signed<'i> {
    /// The trusted identity the certificate names.
    pub identity: &'i Identity,
    /// When the signature was logged (RFC 3339), if the log's entry carries a time.
    pub logged_at: Option<String>,
}

/// Which of `identities` signed `bundle` (JSON) over `subject`; else why none did.
pub(super) fn verify<'i>(identities: &'i [Identity], subject: &Digest, bundle: &[u8]) -> Result<Signed<'i>, String> {
    if identities.is_empty() {
        return Err("a keyless bundle (a certificate), and no identity is trusted for it".to_owned());
    }
    super::provider::install();
    let text = std::str::from_utf8(bundle).map_err(|_| "a bundle that is not UTF-8".to_owned())?;
    let bundle =
        Bundle::from_json(text).map_err(|err| format!("a bundle that cannot be read: {}", shown(&err.to_string())))?;
    let artifact = Sha256Hash::from_hex(&subject.hex()).map_err(|err| format!("the subject: {err}"))?;
    let mut reasons = Vec::new();
    let mut roots: Vec<&Arc<TrustRoot>> = Vec::new();
    for identity in identities {
        if !roots.contains(&&identity.root) {
            roots.push(&identity.root);
        }
    }
    for root in roots {
        // Every identity under this root at once: the signature, chain and log are checked with
        // no identity required, then the certificate's identity is looked up among them.
        let result =
            match root.verifier.verify(Artifact::from_digest(artifact), &bundle, &VerificationPolicy::any_identity()) {
                Ok(result) if result.certificate_verified() => result,
                Ok(_) => {
                    reasons.push(format!("a keyless bundle whose certificate was not checked against `{}`", root.name));
                    continue;
                }
                Err(err) => {
                    reasons.push(format!(
                        "a keyless bundle that does not verify against the trust root `{}`: {err}",
                        root.name
                    ));
                    continue;
                }
            };
        let (Some(san), Some(issuer)) = (result.identity(), result.issuer()) else {
            reasons.push("a keyless bundle whose certificate names no identity or no issuer".to_owned());
            continue;
        };
        // (An empty identity or issuer names no one: it matches nothing, not an empty claim.)
        let trusted = identities.iter().find(|candidate| {
            !candidate.identity.is_empty()
                && !candidate.issuer.is_empty()
                && candidate.root == *root
                && IdentityMatcher::Exact(candidate.identity.clone()).matches(san)
                && candidate.issuer == issuer
        });
        match trusted {
            Some(identity) => {
                let logged_at = result.integrated_time().map(|time| time.to_string());
                return Ok(Signed { identity, logged_at });
            }
            None => reasons.push(format!(
                "a keyless bundle by `{}` (issuer `{}`), an identity not trusted for it",
                shown(san.as_str()),
                shown(issuer)
            )),
        }
    }
    Err(reasons.join("; "))
}

/// A certificate's claim, or a library's words about one, as a diagnostic shows it.
fn shown(claim: &str) -> String {
    crate::text::shown(claim, 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A private Sigstore instance's trusted root (`@sigstore/mock`: its Fulcio, CT log and
    // Rekor), and bundles sigstore-js (`@sigstore/sign`) made with it, keyless, for the identity
    // `signer@toolcell.test` from `https://issuer.toolcell.test`: a cosign signature of the
    // manifest `the manifest`, and an attestation about it. `tests/peers/signatures` makes
    // such bundles afresh on every run; these keep the checks here offline and fast.
    const ROOT: &[u8] = include_bytes!("../../tests/fixtures/keyless/trusted_root.json");
    const OTHER_ROOT: &[u8] = include_bytes!("../../tests/fixtures/keyless/other_trusted_root.json");
    const SIGNATURE: &[u8] = include_bytes!("../../tests/fixtures/keyless/bundle.json");
    const SIGNER: &str = "signer@toolcell.test";
    const ISSUER: &str = "https://issuer.toolcell.test";

    fn identity(name: &str, who: &str, issuer: &str, root: &[u8]) -> Identity {
        let root = Arc::new(TrustRoot::from_json("trusted_root.json", root).expect("a trusted root"));
        Identity { name: name.to_owned(), identity: who.to_owned(), issuer: issuer.to_owned(), root }
    }

    fn subject() -> Digest {
        Digest::of(b"the manifest")
    }

    #[test]
    fn a_keyless_signature_verifies_for_its_identity_issuer_root_and_subject_only() {
        let ci = [identity("ci", SIGNER, ISSUER, ROOT)];
        let signed = verify(&ci, &subject(), SIGNATURE).expect("signed by the trusted identity");
        assert_eq!(signed.identity.name, "ci");
        assert!(signed.logged_at.is_some(), "the log's time");

        let someone_else = [identity("ci", "release@toolcell.test", ISSUER, ROOT)];
        let err = verify(&someone_else, &subject(), SIGNATURE).expect_err("another identity");
        assert!(
            err.contains("by `signer@toolcell.test` (issuer `https://issuer.toolcell.test`), an identity not trusted"),
            "{err}"
        );

        let other_issuer = [identity("ci", SIGNER, "https://accounts.example.com", ROOT)];
        assert!(verify(&other_issuer, &subject(), SIGNATURE).expect_err("another issuer").contains("not trusted"));

        let other_root = [identity("ci", SIGNER, ISSUER, OTHER_ROOT)];
        let err = verify(&other_root, &subject(), SIGNATURE).expect_err("another instance's CA");
        assert!(err.contains("does not verify against the trust root"), "{err}");

        let err = verify(&ci, &Digest::of(b"another manifest"), SIGNATURE).expect_err("another subject");
        assert!(err.contains("does not verify"), "{err}");

        // Any of several identities, under either root.
        let either = [identity("other", SIGNER, ISSUER, OTHER_ROOT), identity("ci", SIGNER, ISSUER, ROOT)];
        assert_eq!(verify(&either, &subject(), SIGNATURE).expect("the second").identity.name, "ci");
    }

    #[test]
    fn what_a_bundle_says_reaches_a_refusal_harmless_and_short() {
        let ci = [identity("ci", SIGNER, ISSUER, ROOT)];
        let mut bundle: serde_json::Value = serde_json::from_slice(SIGNATURE).expect("JSON");
        // Unsigned words the bundle parser echoes: they once moved the cursor and forged a line.
        bundle["mediaType"] = format!("\n\u{1b}[1A\u{202e}pulled, signed by you{}", "x".repeat(100_000)).into();
        let err = verify(&ci, &subject(), &serde_json::to_vec(&bundle).expect("JSON")).expect_err("its media type");
        assert!(!err.contains(['\n', '\u{1b}', '\u{202e}']), "{err:?}");
        assert!(err.len() < 1_000, "{} bytes", err.len());
    }

    #[test]
    fn an_empty_identity_or_issuer_names_no_one() {
        for (who, issuer) in [("", ISSUER), (SIGNER, "")] {
            let err = verify(&[identity("ci", who, issuer, ROOT)], &subject(), SIGNATURE).expect_err("no one");
            assert!(err.contains("not trusted"), "{err}");
        }
    }

    #[test]
    fn a_keyless_bundle_changed_anywhere_is_refused() {
        let ci = [identity("ci", SIGNER, ISSUER, ROOT)];
        let bundle: serde_json::Value = serde_json::from_slice(SIGNATURE).expect("JSON");
        type Change<'f> = &'f dyn Fn(&mut serde_json::Value);
        let changes: [(&str, Change); 4] = [
            ("the signature", &|b| {
                let sig = b["dsseEnvelope"]["signatures"][0]["sig"].as_str().expect("sig").to_owned();
                let flipped = if sig.starts_with('M') { sig.replacen('M', "N", 1) } else { format!("M{}", &sig[1..]) };
                b["dsseEnvelope"]["signatures"][0]["sig"] = flipped.into();
            }),
            ("the log entry's time", &|b| {
                let entry = &mut b["verificationMaterial"]["tlogEntries"][0];
                let time: i64 = entry["integratedTime"].as_str().expect("time").parse().expect("number");
                entry["integratedTime"] = (time - 86_400).to_string().into();
            }),
            ("the log entry, gone", &|b| b["verificationMaterial"]["tlogEntries"] = serde_json::json!([])),
            ("the certificate, another", &|b| {
                let other: serde_json::Value =
                    serde_json::from_slice(include_bytes!("../../tests/fixtures/keyless/attestation.bundle.json"))
                        .expect("JSON");
                b["verificationMaterial"]["certificate"] = other["verificationMaterial"]["certificate"].clone();
            }),
        ];
        for (what, change) in changes {
            let mut changed = bundle.clone();
            change(&mut changed);
            let bytes = serde_json::to_vec(&changed).expect("JSON");
            assert!(verify(&ci, &subject(), &bytes).is_err(), "{what} changed, and it verified");
        }
    }

    #[test]
    fn a_keyless_attestation_is_not_a_signature_and_a_key_cannot_stand_for_an_identity() {
        use crate::manifest::Descriptor;
        use crate::signature::{Signer, Verified, bundle, keys::SigningKey};
        let layers = |bytes: &[u8]| {
            vec![(Descriptor::of(bundle::BUNDLE_MEDIA_TYPE, bytes), bytes::Bytes::copy_from_slice(bytes))]
        };
        let ci = vec![Signer::Identity(identity("ci", SIGNER, ISSUER, ROOT))];
        let referrer = Digest::of(b"referrer");
        let verified = bundle::verify(&ci, &subject(), &layers(SIGNATURE), referrer).expect("signed");
        assert!(
            matches!(&verified, Verified::Identity { signer, identity, .. } if signer == "ci" && identity == SIGNER)
        );
        assert!(verified.signer().contains("signer@toolcell.test from the issuer https://issuer.toolcell.test"));
        let attestation = include_bytes!("../../tests/fixtures/keyless/attestation.bundle.json");
        let err = bundle::verify(&ci, &subject(), &layers(attestation), referrer).expect_err("an attestation");
        assert!(err.contains("an attestation, not a signature"), "{err}");
        let (key, _) = SigningKey::generate();
        let err = bundle::verify(&[Signer::Key(key.public_key())], &subject(), &layers(SIGNATURE), referrer)
            .expect_err("only keys trusted");
        assert!(err.contains("no identity is trusted"), "{err}");
    }

    #[test]
    fn a_trust_root_that_is_not_one_or_names_no_ca_is_refused_saying_so() {
        let err = TrustRoot::from_json("root.json", b"{").expect_err("not JSON");
        assert!(err.contains("not a Sigstore trusted root"), "{err}");
        let empty = br#"{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","tlogs":[],"certificateAuthorities":[],"ctlogs":[],"timestampAuthorities":[]}"#;
        let err = TrustRoot::from_json("root.json", empty).expect_err("no CA");
        assert!(err.contains("no certificate authority"), "{err}");
    }
}
