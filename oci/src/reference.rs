//! `oci://registry/repository:tag` and `oci://registry/repository@sha256:…`, as the
//! distribution spec names repositories and tags.

use std::fmt;
use std::str::FromStr;

use crate::digest::Digest;

/// Where a tool's component is in a registry: by tag (resolved once, then pinned), by digest,
/// or both (the digest wins; the tag is kept for people).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OciReference {
    /// `host` or `host:port`.
    pub registry: String,
    /// `team/tools/calculator`: lower-case path components.
    pub repository: String,
    /// `1.0.0`, `latest`.
    pub tag: Option<String>,
    /// The manifest's digest.
    pub digest: Option<Digest>,
}

const FORM: &str = "write oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:DIGEST, e.g. \
                    oci://ghcr.io/acme/tools/calculator:1.0.0";

impl FromStr for OciReference {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let refused = |why: &str| format!("`{text}` is not a tool reference: {why}; {FORM}");
        let rest = text.strip_prefix("oci://").ok_or_else(|| refused("it does not start with oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest.parse::<Digest>().map_err(|err| refused(&err.to_string()))?)),
            None => (rest, None),
        };
        let (registry, path) = rest.split_once('/').ok_or_else(|| refused("it names no repository"))?;
        if !is_registry(registry) {
            return Err(refused("the registry is not a host name with an optional port"));
        }
        // A tag follows the last `:` after the last `/`.
        let last = path.rfind('/').map_or(0, |slash| slash + 1);
        let (repository, tag) = match path[last..].rfind(':') {
            Some(colon) => (&path[..last + colon], Some(&path[last + colon + 1..])),
            None => (path, None),
        };
        if !is_repository(repository) {
            return Err(refused(
                "the repository is not lower-case path components (a-z, 0-9, and `.`, `_`, `-` inside)",
            ));
        }
        if let Some(tag) = tag
            && !is_tag(tag)
        {
            return Err(refused(
                "the tag is not 1-128 of letters, digits, `_`, `.` and `-`, starting with no `.` or `-`",
            ));
        }
        if tag.is_none() && digest.is_none() {
            return Err(refused("it has neither a tag nor a digest"));
        }
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest,
        })
    }
}

fn is_registry(registry: &str) -> bool {
    let (host, port) = registry.rsplit_once(':').map_or((registry, None), |(host, port)| (host, Some(port)));
    let host_ok = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
        });
    host_ok && port.is_none_or(|port| port.parse::<u16>().is_ok_and(|port| port > 0))
}

fn is_repository(repository: &str) -> bool {
    !repository.is_empty()
        && repository.len() <= 255
        && repository.split('/').all(|component| {
            let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
            let bytes = component.as_bytes();
            !bytes.is_empty()
                && alnum(bytes[0])
                && alnum(bytes[bytes.len() - 1])
                && bytes.iter().all(|&b| alnum(b) || matches!(b, b'.' | b'_' | b'-'))
                && !component.contains("..")
        })
}

fn is_tag(tag: &str) -> bool {
    (1..=128).contains(&tag.len())
        && tag.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        && !tag.starts_with(['.', '-'])
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn references_name_a_registry_a_repository_and_a_tag_or_a_digest() {
        let tagged: OciReference = "oci://127.0.0.1:5000/acme/tools/calculator:1.0.0".parse().expect("tagged");
        assert_eq!((tagged.registry.as_str(), tagged.repository.as_str()), ("127.0.0.1:5000", "acme/tools/calculator"));
        assert_eq!((tagged.tag.as_deref(), tagged.digest), (Some("1.0.0"), None));
        let pinned: OciReference = format!("oci://ghcr.io/acme/calc:latest@{DIGEST}").parse().expect("pinned");
        assert_eq!(pinned.digest.map(|digest| digest.to_string()).as_deref(), Some(DIGEST));
        assert_eq!(pinned.to_string(), format!("oci://ghcr.io/acme/calc:latest@{DIGEST}"));
        let by_digest: OciReference = format!("oci://localhost:5000/calc@{DIGEST}").parse().expect("digest");
        assert_eq!(by_digest.tag, None);
    }

    #[test]
    fn bad_references_say_what_is_wrong() {
        for (text, says) in [
            ("ghcr.io/acme/calc:1", "oci://"),
            ("oci://ghcr.io", "no repository"),
            ("oci://ghcr.io/acme/calc", "neither a tag nor a digest"),
            ("oci://ghcr.io/Acme/calc:1", "lower-case"),
            ("oci://ghcr.io/acme/../calc:1", "lower-case"),
            ("oci://ghcr.io/acme/calc:-x", "the tag"),
            ("oci://gh cr.io/acme/calc:1", "registry"),
            ("oci://ghcr.io:0/acme/calc:1", "registry"),
            ("oci://ghcr.io/acme/calc@sha256:abc", "not a digest"),
        ] {
            let err = text.parse::<OciReference>().expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
