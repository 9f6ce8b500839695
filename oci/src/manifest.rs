//! The artifact layout WebAssembly components use in OCI registries, as `wkg`
//! (wasm-pkg-tools), the `oci-wasm` crate and Wassette write it: an image manifest whose
//! config has the media type `application/vnd.wasm.config.v0+json` and whose one layer is the
//! component, `application/wasm`. toolcell reads any config media type (so a component
//! pushed by `oras` with its defaults loads too) but needs exactly one `application/wasm`
//! layer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::digest::Digest;

/// An OCI image manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// An OCI image index (a manifest of manifests, one per platform).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// The config of a WebAssembly artifact.
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// A WebAssembly component or module.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";

/// The annotation keys toolcell writes on a pushed tool (and reads for `describe`).
pub mod annotations {
    /// The tool's name.
    pub const TITLE: &str = "org.opencontainers.image.title";
    /// The tool's description.
    pub const DESCRIPTION: &str = "org.opencontainers.image.description";
    /// The tool's version.
    pub const VERSION: &str = "org.opencontainers.image.version";
    /// When it was pushed (RFC 3339).
    pub const CREATED: &str = "org.opencontainers.image.created";
    /// The tool's whole metadata (name, description, version, schema, capabilities), as JSON.
    pub const TOOL_METADATA: &str = "dev.toolcell.tool.metadata";
}

/// A blob a manifest points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// What the blob is.
    pub media_type: String,
    /// Its digest.
    #[serde(with = "digest_text")]
    pub digest: Digest,
    /// Its length in bytes.
    pub size: u64,
    /// Free-form notes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// What it is for (an index's entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// The artifact type (an index's or a referrers list's entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
}

/// The platform of an index entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// `wasm` for components.
    pub architecture: String,
    /// `wasip2` for components.
    pub os: String,
}

/// An image manifest: a config and layers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_MEDIA_TYPE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// What kind of artifact it is, when the config does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers.
    pub layers: Vec<Descriptor>,
    /// The manifest this one is about (a signature's subject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Descriptor>,
    /// Free-form notes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An image index: one manifest per platform.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    /// The manifests.
    pub manifests: Vec<Descriptor>,
}

/// The config of a component, as `wkg` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// When it was made (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// The digests of the layers.
    #[serde(default)]
    pub layer_digests: Vec<String>,
    /// What the component imports and exports, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentInterfaces>,
}

/// The interfaces a component imports and exports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ComponentInterfaces {
    /// Exports, as `package/interface@version` or names.
    pub exports: Vec<String>,
    /// Imports.
    pub imports: Vec<String>,
    /// The world it targets, if named.
    pub target: Option<String>,
}

impl Manifest {
    /// The one component layer, or why the manifest is not a component.
    ///
    /// # Errors
    /// When it has no `application/wasm` layer, or more than one.
    pub fn component_layer(&self) -> Result<&Descriptor, String> {
        let mut wasm = self.layers.iter().filter(|layer| layer.media_type == WASM_LAYER_MEDIA_TYPE);
        match (wasm.next(), wasm.next()) {
            (Some(layer), None) => Ok(layer),
            (None, _) => {
                let found: Vec<&str> = self.layers.iter().map(|layer| layer.media_type.as_str()).collect();
                Err(format!(
                    "it holds no `{WASM_LAYER_MEDIA_TYPE}` layer (its layers: {}); push the component with `toolcell push`, or with `oras push REF FILE.wasm:{WASM_LAYER_MEDIA_TYPE}`",
                    if found.is_empty() { "none".to_owned() } else { found.join(", ") }
                ))
            }
            (Some(_), Some(_)) => {
                Err(format!("it holds more than one `{WASM_LAYER_MEDIA_TYPE}` layer; a tool is one component"))
            }
        }
    }

    /// The manifest of a component: `config` (a [`WasmConfig`]) and its one layer.
    pub fn for_component(config: Descriptor, layer: Descriptor, annotations: BTreeMap<String, String>) -> Self {
        Self {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
            artifact_type: None,
            config,
            layers: vec![layer],
            subject: None,
            annotations,
        }
    }
}

impl Descriptor {
    /// A descriptor of `bytes` as `media_type`.
    pub fn of(media_type: &str, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.to_owned(),
            digest: Digest::of(bytes),
            size: bytes.len() as u64,
            annotations: BTreeMap::new(),
            platform: None,
            artifact_type: None,
        }
    }
}

/// Digests as `sha256:…` text in JSON.
mod digest_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Digest;

    pub(super) fn serialize<S: Serializer>(digest: &Digest, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(digest)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Digest, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_is_a_component_only_with_exactly_one_wasm_layer() {
        let config = Descriptor::of(WASM_CONFIG_MEDIA_TYPE, b"{}");
        let wasm = Descriptor::of(WASM_LAYER_MEDIA_TYPE, b"\0asm");
        let manifest = Manifest::for_component(config.clone(), wasm.clone(), BTreeMap::new());
        assert_eq!(manifest.component_layer().expect("one layer"), &wasm);

        let text = serde_json::to_string(&manifest).expect("json");
        let back: Manifest = serde_json::from_str(&text).expect("parse");
        assert_eq!(back, manifest);

        let mut two = manifest.clone();
        two.layers.push(wasm);
        assert!(two.component_layer().expect_err("two").contains("more than one"));
        let mut none = manifest;
        none.layers = vec![Descriptor::of("application/vnd.oci.image.layer.v1.tar+gzip", b"tar")];
        let err = none.component_layer().expect_err("none");
        assert!(err.contains("tar+gzip") && err.contains("oras push"), "{err}");
    }

    #[test]
    fn a_digest_that_is_not_sha256_hex_is_refused_when_parsing() {
        let text = r#"{"schemaVersion":2,"config":{"mediaType":"x","digest":"md5:00","size":1},"layers":[]}"#;
        let err = serde_json::from_str::<Manifest>(text).expect_err("md5");
        assert!(err.to_string().contains("not a digest"), "{err}");
    }
}
