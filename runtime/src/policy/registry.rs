//! Tools from OCI registries, as a policy names them: `source = "oci://…"` in a tool's table,
//! who it must be signed by (`[signers.NAME]`: a key, or a keyless identity under a trusted
//! root; `signed_by`), or, explicitly,
//! `unsigned = true`; and `[registries."HOST:PORT"]` for registries spoken to over plain HTTP.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use std::sync::Arc;

use toolcell_oci::signature::{self, Identity, PublicKey, TrustRoot};
use toolcell_oci::{LOCK_FILE, OciReference};

/// The largest public key file read.
const MAX_KEY_BYTES: u64 = 64 << 10;

/// The registry tools, signers and registry settings of a policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryPolicy {
    /// Tools to pull, by the name the policy gives them.
    pub tools: BTreeMap<String, RegistryTool>,
    /// Who tools may be signed by, by name (`[signers.NAME]`).
    pub signers: BTreeMap<String, Signer>,
    /// Registries (`host:port`) spoken to over plain HTTP besides loopback ones.
    pub plain_http: BTreeSet<String>,
}

/// One tool from a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryTool {
    /// Where it is.
    pub reference: OciReference,
    /// The signers it must be signed by, one of them (`None`: any signer the policy names).
    pub signed_by: Option<Vec<String>>,
    /// Taken unsigned, as the operator said explicitly.
    pub unsigned: bool,
    /// The lockfile its tag is pinned in: `toolcell.lock` beside the policy file.
    pub lockfile: PathBuf,
}

/// Someone tools may be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Signer {
    /// A key, or a keyless identity.
    pub signer: signature::Signer,
    /// The file it was read from: the key, or the trusted root.
    pub file: PathBuf,
}

impl RegistryPolicy {
    /// Whether it names no registry tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// `tool` from `reference`, signed as `trust` says: its signers are kept under names of
    /// their own (`TOOL/NAME`), which no policy file can write.
    pub(crate) fn take(&mut self, tool: String, reference: OciReference, trust: signature::Trust, lockfile: PathBuf) {
        let signed_by = match trust {
            signature::Trust::Unsigned => None,
            signature::Trust::Signers(signers) => Some(
                signers
                    .into_iter()
                    .map(|signer| {
                        let name = format!("{tool}/{}", signer.name());
                        self.signers.insert(name.clone(), Signer { signer, file: PathBuf::new() });
                        name
                    })
                    .collect(),
            ),
            // A kind of trust this version does not know: no signer, so refused.
            _ => Some(Vec::new()),
        };
        let unsigned = signed_by.is_none();
        self.tools.insert(tool, RegistryTool { reference, signed_by, unsigned, lockfile });
    }

    pub(crate) fn merge(&mut self, other: RegistryPolicy) {
        self.tools.extend(other.tools);
        self.signers.extend(other.signers);
        self.plain_http.extend(other.plain_http);
    }

    /// Who `tool` must be signed by, or why no one can be named: `Ok(None)` when it is taken
    /// unsigned.
    pub fn signers_for(&self, name: &str, tool: &RegistryTool) -> Result<Option<Vec<signature::Signer>>, String> {
        if tool.unsigned {
            return Ok(None);
        }
        let names: Vec<&String> = match &tool.signed_by {
            Some(names) => names.iter().collect(),
            None => self.signers.keys().collect(),
        };
        if names.is_empty() {
            return Err(format!(
                "[tools.{name}] takes {} from a registry, which must be signed, and the policy names no signer: add `[signers.NAME] key = \"FILE.pub\"` (and `signed_by = [\"NAME\"]`), or take it unsigned with `unsigned = true`",
                tool.reference
            ));
        }
        names
            .into_iter()
            .map(|signer| {
                self.signers.get(signer).map(|s| s.signer.clone()).ok_or_else(|| {
                    format!("[tools.{name}] signed_by names `{signer}`, which no [signers.{signer}] table defines")
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// Reads a `[tools.NAME]` table's registry keys (`source`, `signed_by`, `unsigned`), taking
/// them out of `table` so the grants are read from what is left.
pub(super) fn take_tool(
    table: &mut toml::Table,
    base: &Path,
    at: &str,
    problems: &mut Vec<String>,
) -> Option<RegistryTool> {
    let source = table.remove("source");
    let signed_by = table.remove("signed_by");
    let unsigned = table.remove("unsigned");
    let Some(source) = source else {
        if signed_by.is_some() || unsigned.is_some() {
            problems.push(format!("{at}: `signed_by` and `unsigned` are for a tool with a `source = \"oci://…\"`"));
        }
        return None;
    };
    let reference = match source.as_str().map(str::parse::<OciReference>) {
        Some(Ok(reference)) => reference,
        Some(Err(why)) => {
            problems.push(format!("{at} source: {why}"));
            return None;
        }
        None => {
            problems.push(format!("{at} source must be a string such as \"oci://ghcr.io/acme/tools/echo:1.0\""));
            return None;
        }
    };
    let signed_by = match signed_by {
        None => None,
        Some(toml::Value::Array(names)) => {
            let names: Option<Vec<String>> = names.iter().map(|n| n.as_str().map(str::to_owned)).collect();
            if names.is_none() {
                problems.push(format!("{at} signed_by must be a list of signer names"));
            }
            names
        }
        Some(_) => {
            problems.push(format!("{at} signed_by must be a list of signer names, such as [\"release\"]"));
            None
        }
    };
    let unsigned = match unsigned {
        None => false,
        Some(toml::Value::Boolean(unsigned)) => unsigned,
        Some(_) => {
            problems.push(format!("{at} unsigned must be true or false"));
            false
        }
    };
    if unsigned && signed_by.is_some() {
        problems.push(format!("{at}: `unsigned = true` and `signed_by` contradict each other; keep one"));
    }
    Some(RegistryTool { reference, signed_by, unsigned, lockfile: base.join(LOCK_FILE) })
}

/// Reads `[signers.NAME]` tables: `key = "FILE.pub"`, or `trusted_root = "FILE.json"` with
/// `identity` and `issuer` (keyless); files relative to the policy file's folder.
pub(super) fn parse_signers(value: &toml::Value, base: &Path, problems: &mut Vec<String>) -> BTreeMap<String, Signer> {
    let mut signers = BTreeMap::new();
    let Some(table) = value.as_table() else {
        problems.push(
            "`signers` must be a table of `[signers.NAME]` tables, each with a `key` or a `trusted_root`".to_owned(),
        );
        return signers;
    };
    // One trusted root read once, however many identities name it.
    let mut roots: BTreeMap<PathBuf, Arc<TrustRoot>> = BTreeMap::new();
    for (name, value) in table {
        let at = format!("[signers.{name}]");
        let Some(entry) = value.as_table() else {
            problems.push(format!(
                "{at} must be a table with `key = \"FILE.pub\"`, or `trusted_root`, `identity` and `issuer`"
            ));
            continue;
        };
        let read = if entry.contains_key("key") {
            key_signer(name, entry, base, &at)
        } else {
            identity_signer(name, entry, base, &at, &mut roots)
        };
        match read {
            Ok(signer) => {
                signers.insert(name.clone(), signer);
            }
            Err(problem) => problems.push(problem),
        }
    }
    signers
}

/// `[signers.NAME] key = "FILE.pub"`.
fn key_signer(name: &str, entry: &toml::Table, base: &Path, at: &str) -> Result<Signer, String> {
    if let Some(other) = entry.keys().find(|key| *key != "key") {
        return Err(format!(
            "{at}: unknown key `{other}`; a key signer has only `key = \"FILE.pub\"` (an ECDSA P-256 public key, PEM)"
        ));
    }
    let Some(path) = entry.get("key").and_then(toml::Value::as_str) else {
        return Err(format!("{at} key must be the path of a public key file (PEM), such as \"keys/release.pub\""));
    };
    let file = base.join(path);
    let bytes = toolcell_oci::read_operator_file(&file, MAX_KEY_BYTES)
        .map_err(|err| format!("{at} key: {} cannot be read: {err}", file.display()))?;
    let key = PublicKey::from_pem(name, &String::from_utf8_lossy(&bytes))
        .map_err(|why| format!("{at} key: {}: {why}", file.display()))?;
    Ok(Signer { signer: signature::Signer::Key(key), file })
}

/// `[signers.NAME] trusted_root = "FILE.json", identity = "…", issuer = "…"`.
fn identity_signer(
    name: &str,
    entry: &toml::Table,
    base: &Path,
    at: &str,
    roots: &mut BTreeMap<PathBuf, Arc<TrustRoot>>,
) -> Result<Signer, String> {
    const KEYS: [&str; 3] = ["trusted_root", "identity", "issuer"];
    if let Some(other) = entry.keys().find(|key| !KEYS.contains(&key.as_str())) {
        return Err(format!(
            "{at}: unknown key `{other}`; a signer has `key = \"FILE.pub\"`, or (keyless) `trusted_root = \"trusted_root.json\"`, `identity` and `issuer`"
        ));
    }
    let text = |key: &str, example: &str| {
        entry
            .get(key)
            .and_then(toml::Value::as_str)
            .filter(|value| !value.is_empty())
            .ok_or_else(|| format!("{at} needs `{key}` ({example}), or `key = \"FILE.pub\"` for a key signer"))
    };
    let path =
        text("trusted_root", "the Sigstore trusted_root.json its certificates and log entries are checked against")?;
    let identity = text("identity", "the certificate's identity, exactly: an email address or a workflow's URI")?;
    let issuer = text(
        "issuer",
        "the OIDC issuer that vouched for it, exactly, e.g. \"https://token.actions.githubusercontent.com\"",
    )?;
    let file = base.join(path);
    let root = match roots.get(&file) {
        Some(root) => Arc::clone(root),
        None => {
            let root = TrustRoot::from_file(path, &file).map_err(|why| format!("{at} trusted_root: {why}"))?;
            let root = Arc::new(root);
            roots.insert(file.clone(), Arc::clone(&root));
            root
        }
    };
    let identity = Identity { name: name.to_owned(), identity: identity.to_owned(), issuer: issuer.to_owned(), root };
    Ok(Signer { signer: signature::Signer::Identity(identity), file })
}

/// Reads `[registries."HOST:PORT"]` tables: `plain_http = true`.
pub(super) fn parse_registries(value: &toml::Value, problems: &mut Vec<String>) -> BTreeSet<String> {
    let mut plain_http = BTreeSet::new();
    let Some(table) = value.as_table() else {
        problems.push("`registries` must be a table of `[registries.\"HOST:PORT\"]` tables".to_owned());
        return plain_http;
    };
    for (registry, value) in table {
        let at = format!("[registries.\"{registry}\"]");
        match value.as_table().map(|t| (t.get("plain_http"), t.len())) {
            Some((Some(toml::Value::Boolean(plain)), 1)) => {
                if *plain {
                    plain_http.insert(registry.clone());
                }
            }
            _ => problems.push(format!("{at} takes one key, `plain_http = true` (speak HTTP, not https, to it)")),
        }
    }
    plain_http
}

#[cfg(test)]
mod tests {
    use crate::policy::Policy;

    fn dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("toolcell-policy-registry-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    #[test]
    fn registry_keys_are_read_with_every_problem_named_by_table_and_key() {
        let dir = dir("problems");
        std::fs::write(dir.join("bad.pub"), "not a key").expect("key");
        let text = r#"
            [signers.release]
            key = "bad.pub"
            [signers.other]
            file = "x.pub"
            [registries."127.0.0.1:5000"]
            plain_http = "yes"
            [tools.echo]
            source = "https://ghcr.io/x:1"
            [tools.both]
            source = "oci://ghcr.io/acme/both:1"
            unsigned = true
            signed_by = ["release"]
            [tools.stray]
            signed_by = ["release"]
        "#;
        let problems = Policy::parse(text, &dir).expect_err("problems");
        let all = problems.join("\n");
        for expected in [
            "[signers.release] key:",
            "BEGIN PUBLIC KEY",
            "[signers.other]: unknown key `file`",
            "[registries.\"127.0.0.1:5000\"] takes one key, `plain_http = true`",
            "[tools.echo] source: `https://ghcr.io/x:1` is not a tool reference",
            "[tools.both]: `unsigned = true` and `signed_by` contradict",
            "[tools.stray]: `signed_by` and `unsigned` are for a tool with a `source",
        ] {
            assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_registry_tool_is_signed_by_its_signers_or_all_of_them_and_unsigned_only_when_said() {
        let dir = dir("keys");
        let (key, _) = toolcell_oci::signature::SigningKey::generate();
        std::fs::write(dir.join("a.pub"), key.public_key().to_pem()).expect("key");
        std::fs::write(dir.join("b.pub"), key.public_key().to_pem()).expect("key");
        let text = r#"
            [signers.a]
            key = "a.pub"
            [signers.b]
            key = "b.pub"
            [tools.any]
            source = "oci://r.example/any:1"
            [tools.only_b]
            source = "oci://r.example/b:1"
            signed_by = ["b"]
            [tools.ghost]
            source = "oci://r.example/g:1"
            signed_by = ["c"]
            [tools.open]
            source = "oci://r.example/o@sha256:0000000000000000000000000000000000000000000000000000000000000000"
            unsigned = true
            [tools.open.limits]
            timeout_ms = 100
        "#;
        let policy = Policy::parse(text, &dir).expect("policy");
        let registry = policy.registry();
        let names = |tool: &str| {
            registry
                .signers_for(tool, &registry.tools[tool])
                .map(|signers| signers.map(|s| s.iter().map(|s| s.name().to_owned()).collect::<Vec<_>>()))
        };
        assert_eq!(names("any"), Ok(Some(vec!["a".to_owned(), "b".to_owned()])));
        assert_eq!(names("only_b"), Ok(Some(vec!["b".to_owned()])));
        assert!(names("ghost").expect_err("no such signer").contains("no [signers.c] table"));
        assert_eq!(names("open"), Ok(None));
        assert_eq!(registry.tools["any"].lockfile, dir.join("toolcell.lock"));
        assert!(
            policy.grants("open").is_some_and(|g| g.limits.timeout == Some(std::time::Duration::from_millis(100))),
            "the grants are read beside"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
