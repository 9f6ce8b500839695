//! Tools from a real OCI registry (Debian's `docker-registry` on 127.0.0.1): push, pull by tag
//! and by digest, signatures required and checked, and attacks on the way: a registry that
//! swaps bytes, a store changed on disk, a signature for another manifest or by another key,
//! and a registry that goes away.

use std::collections::BTreeMap;

use toolcell_oci::signature::{PublicKey, SigningKey, Trust, Verified};
use toolcell_oci::{
    BlobStore, Component, OciReference, PullError, Puller, RegistryClient, RegistryError, RegistrySettings, push,
};
use toolcell_tests::registry::LocalRegistry;

fn component(bytes: &[u8]) -> Component {
    Component {
        bytes: bytes::Bytes::copy_from_slice(bytes),
        annotations: BTreeMap::from([("org.opencontainers.image.title".to_owned(), "echo".to_owned())]),
        interfaces: None,
        created: "2026-11-27T00:00:00Z".to_owned(),
    }
}

fn puller(registry: &LocalRegistry, store: &str) -> Puller {
    let store = BlobStore::open(registry.dir().join(store)).expect("store");
    Puller::new(RegistryClient::new(RegistrySettings::default()), store)
}

fn reference(registry: &LocalRegistry, path: &str) -> OciReference {
    format!("oci://{}/{path}", registry.host()).parse().expect("reference")
}

fn keys(key: &SigningKey, name: &str) -> Trust {
    let public = PublicKey::from_pem(name, &key.public_key().to_pem()).expect("pem");
    Trust::keys(vec![public])
}

#[tokio::test]
async fn a_component_pushed_by_tag_is_pulled_by_tag_and_by_digest_byte_for_byte() {
    let registry = LocalRegistry::start("roundtrip");
    let echo = std::fs::read(toolcell_tests::ECHO).expect("echo guest");
    let client = RegistryClient::default();
    let tagged = reference(&registry, "tools/echo:1.0");
    let published = push(&client, &tagged, component(&echo), None).await.expect("push");
    let digest = published.reference.digest.expect("pinned");

    let puller = puller(&registry, "store");
    let by_tag = puller.pull(&tagged, None, &Trust::Unsigned).await.expect("pull by tag");
    assert_eq!(by_tag.component.as_ref(), echo.as_slice());
    assert_eq!(by_tag.reference.digest, Some(digest));
    assert_eq!(by_tag.verified, Verified::Unsigned);
    assert!(!by_tag.from_store);
    assert_eq!(by_tag.manifest.annotations["org.opencontainers.image.title"], "echo");

    let by_digest = reference(&registry, &format!("tools/echo@{digest}"));
    let again = puller.pull(&by_digest, None, &Trust::Unsigned).await.expect("pull by digest");
    assert_eq!(again.component.as_ref(), echo.as_slice());
    assert!(again.from_store, "the second pull is from the store");

    // The layout other tools read: the wasm config and layer media types.
    let manifest = client.manifest(&by_digest).await.expect("manifest");
    let text = String::from_utf8(manifest.bytes.to_vec()).expect("utf8");
    assert!(text.contains("application/vnd.wasm.config.v0+json") && text.contains("\"application/wasm\""), "{text}");
}

#[tokio::test]
async fn a_signed_component_loads_only_for_its_key_and_an_unsigned_one_is_refused_by_default() {
    let registry = LocalRegistry::start("signed");
    let echo = std::fs::read(toolcell_tests::ECHO).expect("echo guest");
    let client = RegistryClient::default();
    let (key, _) = SigningKey::generate();
    let signed = reference(&registry, "tools/echo:signed");
    let published = push(&client, &signed, component(&echo), Some(&key)).await.expect("push signed");
    assert_eq!(published.signatures.len(), 2, "a classic signature and a bundle referrer");

    let pulled = puller(&registry, "store-a").pull(&signed, None, &keys(&key, "release")).await.expect("signed pull");
    assert!(matches!(&pulled.verified, Verified::Key { signer, .. } if signer == "release"), "{:?}", pulled.verified);

    let (stranger, _) = SigningKey::generate();
    let err = puller(&registry, "store-b").pull(&signed, None, &keys(&stranger, "other")).await.expect_err("wrong key");
    let text = err.to_string();
    let digest = published.reference.digest.expect("pinned").to_string();
    assert!(matches!(err, PullError::Signature { .. }), "{text}");
    assert!(text.contains(&signed.to_string()) && text.contains(&digest), "names the reference and digest: {text}");
    assert!(text.contains("must be signed by `other`") && text.contains("not trusted"), "{text}");

    let unsigned = reference(&registry, "tools/echo:unsigned");
    push(&client, &unsigned, component(b"\0asm\x0d\0\x01\0"), None).await.expect("push unsigned");
    let err = puller(&registry, "store-c").pull(&unsigned, None, &keys(&key, "release")).await.expect_err("unsigned");
    let text = err.to_string();
    assert!(text.contains("has no signature") && text.contains("allow it unsigned"), "{text}");
}

#[tokio::test]
async fn only_the_bundle_or_only_the_classic_signature_is_enough_and_a_signature_for_another_manifest_is_not() {
    let registry = LocalRegistry::start("one-of-two");
    let client = RegistryClient::default();
    let (key, _) = SigningKey::generate();
    let first = reference(&registry, "tools/x:1");
    let published = push(&client, &first, component(b"\0asm\x0d\0\x01\0first"), Some(&key)).await.expect("push");
    let subject = published.reference.digest.expect("pinned");

    // Delete the classic signature: the bundle referrer alone still vouches.
    let classic = published.signatures[0];
    delete_manifest(&registry, "tools/x", &classic.to_string()).await;
    let pulled = puller(&registry, "bundle-only").pull(&first, None, &keys(&key, "k")).await.expect("bundle only");
    assert!(matches!(pulled.verified, Verified::Key { signature, .. } if signature == published.signatures[1]));

    // A second component whose `.sig` tag is the first one's signature (copied over): refused.
    let second = reference(&registry, "tools/x:2");
    let other = push(&client, &second, component(b"\0asm\x0d\0\x01\0second"), None).await.expect("push");
    let other_digest = other.reference.digest.expect("pinned");
    let sig_of_first = push_copy_of_signature(&registry, &key, &subject, &other_digest).await;
    assert_ne!(sig_of_first, subject);
    let err = puller(&registry, "replayed").pull(&second, None, &keys(&key, "k")).await.expect_err("replayed");
    assert!(err.to_string().contains("of another manifest"), "{err}");
}

#[tokio::test]
async fn bytes_swapped_in_the_registry_or_in_the_store_are_never_loaded_and_a_pinned_tool_outlives_the_registry() {
    let mut registry = LocalRegistry::start("tamper");
    let client = RegistryClient::default();
    let component_bytes = b"\0asm\x0d\0\x01\0the real component".to_vec();
    let tagged = reference(&registry, "tools/y:1");
    let published = push(&client, &tagged, component(&component_bytes), None).await.expect("push");
    let digest = published.reference.digest.expect("pinned");
    let pulled = puller(&registry, "store").pull(&tagged, None, &Trust::Unsigned).await.expect("pull");
    let layer = pulled.manifest.layers[0].digest;

    // The registry's copy of the component is swapped (same length): a fresh store refuses it.
    let file = registry.blob_file(&layer.hex());
    let mut swapped = std::fs::read(&file).expect("registry blob");
    let last = swapped.len() - 1;
    swapped[last] ^= 1;
    std::fs::write(&file, &swapped).expect("swap");
    let err = puller(&registry, "fresh").pull(&tagged, None, &Trust::Unsigned).await.expect_err("swapped");
    assert!(matches!(&err, PullError::Registry { source: RegistryError::Mismatch { .. }, .. }), "{err}");
    assert!(!registry.dir().join("fresh/sha256").join(layer.hex()).exists(), "nothing unverified was stored");

    // The store's copy is changed on disk: it is dropped, and fetched again (here: swapped too).
    let stored = registry.dir().join("store/sha256").join(layer.hex());
    std::fs::write(&stored, b"changed").expect("tamper store");
    let err = puller(&registry, "store").pull(&tagged, Some(digest), &Trust::Unsigned).await.expect_err("store");
    assert!(matches!(&err, PullError::Registry { source: RegistryError::Mismatch { .. }, .. }), "{err}");
    std::fs::write(&file, &component_bytes).expect("restore the registry's copy");
    puller(&registry, "store").pull(&tagged, Some(digest), &Trust::Unsigned).await.expect("fetched again");

    // The registry goes away: pinned by digest, the store answers; by tag alone, it cannot.
    registry.stop();
    let cached = puller(&registry, "store").pull(&tagged, Some(digest), &Trust::Unsigned).await.expect("offline");
    assert!(cached.from_store);
    assert_eq!(cached.component.as_ref(), component_bytes.as_slice());
    let err = puller(&registry, "store").pull(&tagged, None, &Trust::Unsigned).await.expect_err("tag offline");
    assert!(matches!(&err, PullError::Registry { source: RegistryError::Unreachable { .. }, .. }), "{err}");
}

async fn delete_manifest(registry: &LocalRegistry, repository: &str, digest: &str) {
    let status = std::process::Command::new("curl")
        .args(["-sf", "-X", "DELETE", &format!("http://{}/v2/{repository}/manifests/{digest}", registry.host())])
        .status()
        .expect("curl");
    assert!(status.success(), "delete {digest}");
}

/// Pushes, as `other`'s cosign signature tag, a genuine signature of `subject` (a replay).
async fn push_copy_of_signature(
    registry: &LocalRegistry,
    key: &SigningKey,
    subject: &toolcell_oci::Digest,
    other: &toolcell_oci::Digest,
) -> toolcell_oci::Digest {
    use toolcell_oci::signature::cosign;
    let client = RegistryClient::default();
    let (manifest, blobs) = cosign::sign(key, &format!("{}/tools/x", registry.host()), subject);
    for (descriptor, bytes) in blobs {
        client.push_blob(&registry.host(), "tools/x", &descriptor.media_type, bytes.into()).await.expect("blob");
    }
    let bytes = bytes::Bytes::from(serde_json::to_vec(&manifest).expect("json"));
    client
        .push_manifest(
            &registry.host(),
            "tools/x",
            &cosign::signature_tag(other),
            toolcell_oci::manifest::MANIFEST_MEDIA_TYPE,
            bytes,
        )
        .await
        .expect("manifest")
}

/// A tools folder whose policy takes `echo` from `reference`, with `extra` policy text.
fn tools_folder(registry: &LocalRegistry, name: &str, policy: &str) -> std::path::PathBuf {
    let dir = registry.dir().join(name);
    std::fs::create_dir_all(&dir).expect("tools folder");
    std::fs::write(dir.join("toolcell.toml"), policy).expect("policy");
    dir
}

async fn runtime_over(dir: &std::path::Path, store: &std::path::Path, locked: bool) -> toolcell_runtime::Runtime {
    let mut builder = toolcell_runtime::Runtime::builder().tools_dir(dir).registry_store(store);
    if locked {
        builder = builder.locked();
    }
    builder.build().await.expect("runtime")
}

#[tokio::test]
async fn the_policy_takes_a_signed_tool_from_a_registry_pins_its_tag_and_loads_it_offline_afterwards() {
    let mut registry = LocalRegistry::start("policy");
    let echo = std::fs::read(toolcell_tests::ECHO).expect("echo guest");
    let (key, _) = SigningKey::generate();
    let tagged = reference(&registry, "tools/echo:1.0");
    let published = push(&RegistryClient::default(), &tagged, component(&echo), Some(&key)).await.expect("push");
    let digest = published.reference.digest.expect("pinned");

    let keys = registry.dir().join("keys");
    std::fs::create_dir_all(&keys).expect("keys");
    std::fs::write(keys.join("release.pub"), key.public_key().to_pem()).expect("public key");
    let policy = format!(
        "[signers.release]\nkey = \"{}\"\n\n[tools.echo]\nsource = \"{tagged}\"\nsigned_by = [\"release\"]\n",
        keys.join("release.pub").display()
    );
    let dir = tools_folder(&registry, "signed", &policy);
    let store = registry.dir().join("runtime-store");

    // Locked with no pin: not resolved.
    let runtime = runtime_over(&dir, &store, true).await;
    assert!(runtime.definition("echo").is_none());
    let diagnostic = &runtime.diagnostics()[0];
    assert!(diagnostic.reason.contains("not pinned") && diagnostic.reason.contains("toolcell pull"), "{diagnostic}");

    let runtime = runtime_over(&dir, &store, false).await;
    assert!(runtime.diagnostics().is_empty(), "{:?}", runtime.diagnostics());
    let output =
        runtime.call(toolcell_runtime::ToolCall::new("1", "echo", serde_json::json!({"text": "hi", "count": 1}))).await;
    assert!(!output.is_error, "{output:?}");
    let lock = std::fs::read_to_string(dir.join("toolcell.lock")).expect("lockfile written");
    assert!(lock.contains(&digest.to_string()), "{lock}");

    // The registry goes away: the pin and the store (signature included) are enough.
    registry.stop();
    let runtime = runtime_over(&dir, &store, true).await;
    assert!(runtime.definition("echo").is_some(), "{:?}", runtime.diagnostics());
}

#[tokio::test]
async fn a_registry_tool_without_a_signer_or_under_another_name_is_a_diagnostic_and_the_rest_load() {
    let registry = LocalRegistry::start("policy-refused");
    let echo = std::fs::read(toolcell_tests::ECHO).expect("echo guest");
    let tagged = reference(&registry, "tools/echo:1.0");
    push(&RegistryClient::default(), &tagged, component(&echo), None).await.expect("push");
    let store = registry.dir().join("store");

    let dir = tools_folder(&registry, "no-signer", &format!("[tools.echo]\nsource = \"{tagged}\"\n"));
    std::fs::copy(toolcell_tests::GREET, dir.join("greet.wasm")).expect("a tool from the folder");
    let runtime = runtime_over(&dir, &store, false).await;
    assert!(runtime.definition("greet").is_some(), "the folder's tools load");
    assert!(runtime.definition("echo").is_none());
    let reason = &runtime.diagnostics()[0].reason;
    assert!(reason.contains("must be signed") && reason.contains("unsigned = true"), "{reason}");

    let dir = tools_folder(&registry, "renamed", &format!("[tools.shout]\nsource = \"{tagged}\"\nunsigned = true\n"));
    let runtime = runtime_over(&dir, &store, false).await;
    assert!(runtime.definition("echo").is_none() && runtime.definition("shout").is_none());
    let reason = &runtime.diagnostics()[0].reason;
    assert!(reason.contains("defines the tool `echo`") && reason.contains("[tools.shout]"), "{reason}");

    let dir = tools_folder(&registry, "unsigned", &format!("[tools.echo]\nsource = \"{tagged}\"\nunsigned = true\n"));
    let runtime = runtime_over(&dir, &store, false).await;
    assert!(runtime.definition("echo").is_some(), "explicitly unsigned: {:?}", runtime.diagnostics());
}

#[tokio::test]
async fn a_registry_listing_many_bogus_bundles_costs_sixteen_fetches_and_leaves_nothing_in_the_store() {
    use toolcell_oci::manifest::{Descriptor, MANIFEST_MEDIA_TYPE};
    use toolcell_oci::signature::bundle;
    let registry = LocalRegistry::start("referrers");
    let client = RegistryClient::default();
    let tagged = reference(&registry, "tools/z:1");
    let published = push(&client, &tagged, component(b"\0asm\x0d\0\x01\0z"), None).await.expect("push");
    let subject = published.manifest.clone();

    // 40 genuine bundles about this manifest, all by a key the operator does not trust.
    let (stranger, _) = SigningKey::generate();
    let mut entries = Vec::new();
    for i in 0..40 {
        let (manifest, blobs) = bundle::sign(&stranger, &subject, &format!("2026-11-27T00:00:{i:02}Z"));
        for (descriptor, bytes) in blobs {
            client.push_blob(&registry.host(), "tools/z", &descriptor.media_type, bytes.into()).await.expect("blob");
        }
        let bytes = bytes::Bytes::from(serde_json::to_vec(&manifest).expect("json"));
        let mut entry = Descriptor::of(MANIFEST_MEDIA_TYPE, &bytes);
        entry.artifact_type = manifest.artifact_type.clone();
        let digest = client
            .push_manifest(&registry.host(), "tools/z", &entry.digest.to_string(), MANIFEST_MEDIA_TYPE, bytes)
            .await
            .expect("referrer");
        assert_eq!(digest, entry.digest);
        entries.push(serde_json::to_value(&entry).expect("entry"));
    }
    let index = serde_json::json!({ "schemaVersion": 2, "mediaType": toolcell_oci::manifest::INDEX_MEDIA_TYPE, "manifests": entries });
    client
        .push_manifest(
            &registry.host(),
            "tools/z",
            &toolcell_oci::referrers_tag(&subject.digest),
            toolcell_oci::manifest::INDEX_MEDIA_TYPE,
            bytes::Bytes::from(serde_json::to_vec(&index).expect("json")),
        )
        .await
        .expect("referrers tag");

    let (trusted, _) = SigningKey::generate();
    let puller = puller(&registry, "store");
    let err = puller.pull(&tagged, None, &keys(&trusted, "release")).await.expect_err("no trusted signature");
    let text = err.to_string();
    // Sixteen tried of the forty listed (their one reason said once), and the rest said to be
    // unexamined.
    assert!(
        text.contains("a bundle signed by a key not trusted for it (24 more Sigstore referrers were not examined"),
        "{text}"
    );
    assert_eq!(text.matches("not trusted for it").count(), 1, "the same reason once: {text}");
    let stored: Vec<_> = std::fs::read_dir(puller.store().dir().join("sha256")).expect("list").collect();
    assert_eq!(stored.len(), 1, "only the tool's manifest; no refused signature, no component: {stored:?}");
}

#[test]
fn a_policy_names_keyless_signers_by_trusted_root_identity_and_issuer_and_says_what_is_missing() {
    use toolcell_oci::signature::Signer;
    use toolcell_runtime::Policy;
    let dir = std::env::temp_dir().join(format!("toolcell-it-keyless-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("folder");
    std::fs::write(dir.join("trusted_root.json"), include_bytes!("../../oci/tests/fixtures/keyless/trusted_root.json"))
        .expect("root");
    std::fs::write(dir.join("not_a_root.json"), b"{\"mediaType\": 7}").expect("not a root");
    let digest = format!("sha256:{}", "0".repeat(64));
    let text = format!(
        "[signers.ci]\ntrusted_root = \"trusted_root.json\"\nidentity = \"signer@toolcell.test\"\nissuer = \"https://issuer.toolcell.test\"\n\
         [signers.release]\ntrusted_root = \"trusted_root.json\"\nidentity = \"release@toolcell.test\"\nissuer = \"https://issuer.toolcell.test\"\n\
         [tools.echo]\nsource = \"oci://127.0.0.1:5000/tools/echo@{digest}\"\nsigned_by = [\"ci\", \"release\"]\n"
    );
    let policy = Policy::parse(&text, &dir).expect("a keyless policy");
    let registry = policy.registry();
    let signers = registry.signers_for("echo", &registry.tools["echo"]).expect("signers").expect("signed");
    let identities: Vec<_> = signers
        .iter()
        .map(|signer| match signer {
            Signer::Identity(identity) => identity,
            other => panic!("a key: {other:?}"),
        })
        .collect();
    assert_eq!(identities[0].identity, "signer@toolcell.test");
    assert_eq!(identities[0].issuer, "https://issuer.toolcell.test");
    assert!(std::sync::Arc::ptr_eq(&identities[0].root, &identities[1].root), "one root read once");

    let problems = Policy::parse(
        "[signers.a]\ntrusted_root = \"trusted_root.json\"\nissuer = \"https://issuer.toolcell.test\"\n\
         [signers.b]\ntrusted_root = \"trusted_root.json\"\nidentity = \"x\"\nissuer = \"y\"\nsubject = \"z\"\n\
         [signers.c]\ntrusted_root = \"missing.json\"\nidentity = \"x\"\nissuer = \"y\"\n\
         [signers.d]\ntrusted_root = \"not_a_root.json\"\nidentity = \"x\"\nissuer = \"y\"\n\
         [signers.e]\nkey = \"k.pub\"\nidentity = \"x\"\n",
        &dir,
    )
    .expect_err("five bad signers");
    let said = problems.join("\n");
    for expected in [
        "[signers.a] needs `identity`",
        "[signers.b]: unknown key `subject`",
        "[signers.c] trusted_root:",
        "[signers.d] trusted_root:",
        "not a Sigstore trusted root",
        "[signers.e]: unknown key `identity`",
    ] {
        assert!(said.contains(expected), "{expected:?} in {said}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn an_embedder_takes_a_tool_from_a_registry_in_code_signed_by_its_key_or_not_at_all() {
    let registry = LocalRegistry::start("in-code");
    let echo = std::fs::read(toolcell_tests::ECHO).expect("echo guest");
    let (key, _) = SigningKey::generate();
    let published =
        push(&RegistryClient::default(), &reference(&registry, "tools/echo:1.0"), component(&echo), Some(&key))
            .await
            .expect("push");
    let by_digest = published.reference.clone();
    let build = |trust: Trust, store: &str| {
        toolcell_runtime::Runtime::builder()
            .registry_store(registry.dir().join(store))
            .registry_tool("echo", by_digest.clone(), trust)
            .build()
    };

    let runtime = build(keys(&key, "release"), "store-a").await.expect("runtime");
    assert!(runtime.diagnostics().is_empty(), "{:?}", runtime.diagnostics());
    let output = runtime
        .call(toolcell_runtime::ToolCall::new("1", "echo", serde_json::json!({"text": "in code", "count": 1})))
        .await;
    assert!(!output.is_error && output.content.contains("in code"), "{output:?}");

    let (stranger, _) = SigningKey::generate();
    let runtime = build(keys(&stranger, "stranger"), "store-b").await.expect("runtime");
    assert!(runtime.definition("echo").is_none());
    let reason = &runtime.diagnostics()[0].reason;
    assert!(reason.contains(&by_digest.to_string()) && reason.contains("must be signed by `stranger`"), "{reason}");

    let runtime = build(Trust::Unsigned, "store-c").await.expect("runtime");
    assert!(runtime.definition("echo").is_some(), "explicitly unsigned: {:?}", runtime.diagnostics());
}
