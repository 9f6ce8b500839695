//! Request paths as egress rules see them, and the path patterns rules are written with.
//!
//! A request's path is normalized once, before any rule sees it, and the normalized path is
//! what goes out: the check and the server read the same path.
//! - Escapes of unreserved characters are decoded (`%7E` is `~`, `%2e` is `.`); other escapes
//!   are kept, in upper case (`%2f` is `%2F`). A malformed escape is refused.
//! - Empty segments are dropped (`//` is `/`); a trailing slash is kept but matches like the
//!   path without it.
//! - `.` segments are dropped. `..` is refused, also where a server might find one: split at
//!   an encoded `/` or `\`, or at `;` (path parameters), double-encoded (`%252e`), spelled with
//!   look-alikes (overlong UTF-8, full-width), cut by a NUL, or with trailing dots and spaces.
//! - A segment holding an encoded `/` or `\` (`a%2Fb`) may be two segments to the server: no
//!   `*` or literal segment of a pattern matches it, only `**`.
//! - Matching is case-sensitive, like the paths themselves. The query is not part of the path,
//!   and a fragment never leaves the host.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A path pattern of an egress rule: `/repos/*/issues`, `/v1/**`, `/files/*.json`. `*`
/// matches within one segment (`*` alone: any one non-empty segment), `**` (a whole
/// segment) any number of segments, none included.
#[derive(Clone, PartialEq, Eq)]
pub struct PathPattern {
    text: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of segments.
    Any,
    /// One segment, matched as a glob (`*` within it).
    One(String),
}

/// A request path, normalized as it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestPath {
    segments: Vec<String>,
    trailing_slash: bool,
}

/// Why a request path is refused whatever the rules say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathRefused(pub(crate) String);

impl RequestPath {
    /// Normalizes the path of a request (without its query).
    pub(crate) fn normalize(raw: &str) -> Result<Self, PathRefused> {
        if raw.is_empty() {
            return Ok(Self { segments: Vec::new(), trailing_slash: false });
        }
        if !raw.starts_with('/') {
            return Err(PathRefused(format!("the path `{raw}` does not start with `/`")));
        }
        let mut segments = Vec::new();
        for segment in raw.split('/').filter(|segment| !segment.is_empty()) {
            let segment = decode_unreserved(segment)?;
            check_dot_segments(&segment)?;
            if segment != "." {
                segments.push(segment);
            }
        }
        let trailing_slash = raw.len() > 1 && raw.ends_with('/') && !segments.is_empty();
        Ok(Self { segments, trailing_slash })
    }

    /// The path as it is sent: `/` and the segments, and the trailing slash if there was one.
    pub(crate) fn as_sent(&self) -> String {
        let mut path = String::from("/");
        path.push_str(&self.segments.join("/"));
        if self.trailing_slash {
            path.push('/');
        }
        path
    }
}

impl fmt::Display for RequestPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_sent())
    }
}

/// Whether `byte` is an unreserved character (RFC 3986): its escape means the same as itself.
fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// One segment with the escapes of unreserved characters decoded and the others in upper case.
fn decode_unreserved(segment: &str) -> Result<String, PathRefused> {
    let bytes = segment.as_bytes();
    let mut decoded = String::with_capacity(segment.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            let c = segment[i..].chars().next().unwrap_or_default();
            decoded.push(c);
            i += c.len_utf8();
            continue;
        }
        let hex = segment.get(i + 1..i + 3).filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()));
        let Some(byte) = hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) else {
            return Err(PathRefused(format!(
                "the path segment `{segment}` has a `%` that does not start an escape such as `%20`"
            )));
        };
        if unreserved(byte) {
            decoded.push(char::from(byte));
        } else {
            decoded.push_str(&format!("%{byte:02X}"));
        }
        i += 3;
    }
    Ok(decoded)
}

/// The encoded separators a server may decode into one: `/` and `\`.
const ENCODED_SEPARATORS: [&str; 2] = ["%2F", "%5C"];

/// Where servers end a segment's name, or split one: `;` starts Tomcat's, Jetty's and
/// Spring's path parameters (`..;/` is a step up there), a NUL ends a C string, `\` and an
/// encoded `/` or `\` separate.
const SEGMENT_ENDS: [&str; 6] = ["%2F", "%5C", "\\", ";", "%3B", "%00"];

/// Escapes that decode twice into a dot, a separator, a NUL or `;`: `%252E` is `%2E`.
const DOUBLE_ENCODED: [&str; 5] = ["%252E", "%252F", "%255C", "%2500", "%253B"];

/// Spellings of `.`, `/` and `\` that some decoders turn into them: overlong UTF-8, and the
/// forms Unicode normalization (NFKC) folds (full-width, small, one- and two-dot leaders).
/// (Checked after unreserved escapes are decoded: `%C0%2E` is seen as `%C0.`.)
const LOOKALIKES: [&str; 17] = [
    "%C0%AE",
    "%E0%80%AE",
    "%C0.",
    "%C0%AF",
    "%E0%80%AF",
    "%C1%9C",
    "%EF%BC%8E",
    "%EF%BC%8F",
    "%EF%BC%BC",
    "%EF%B9%92",
    "%E2%80%A4",
    "%E2%80%A5",
    "．",
    "／",
    "＼",
    "﹒",
    "․",
];

/// Refuses `..`, and a `..` a server could make of a segment: by decoding once more, by
/// reading a look-alike as a dot or a slash, by ending the name at `;` or a NUL, by splitting
/// at an encoded separator, or by dropping trailing dots and spaces (Windows: `...`, `.. `).
fn check_dot_segments(segment: &str) -> Result<(), PathRefused> {
    let refused = || {
        PathRefused(format!(
            "the path segment `{segment}` is or may become `..` (a step up): paths with `..` are refused, send the \
             path it leads to"
        ))
    };
    let upper = segment.to_ascii_uppercase();
    if DOUBLE_ENCODED.iter().any(|escape| upper.contains(escape)) {
        return Err(PathRefused(format!(
            "the path segment `{segment}` holds a double-encoded `.`, `/` or `\\`, which a server that decodes twice \
             reads as a step up or a separator: send the path itself"
        )));
    }
    if upper.contains("%00") || LOOKALIKES.iter().any(|lookalike| upper.contains(lookalike)) {
        return Err(PathRefused(format!(
            "the path segment `{segment}` holds a NUL or a look-alike of `.`, `/` or `\\` (overlong or full-width), \
             which servers may read as the character itself: send the path with plain characters"
        )));
    }
    let mut pieces = vec![upper.as_str()];
    for end in SEGMENT_ENDS {
        pieces = pieces.into_iter().flat_map(|piece| piece.split(end)).collect();
    }
    // `..` followed only by what a server may drop or stop at (spaces, controls, bytes that
    // are no character, punctuation): `.. `, `...`, `..%FF`, `..%09`, `..%3F`.
    let steps_up = |piece: &&str| {
        let bytes = percent_decoded(piece);
        bytes.starts_with(b"..") && !bytes.iter().any(u8::is_ascii_alphanumeric)
    };
    if pieces.iter().any(steps_up) {
        return Err(refused());
    }
    Ok(())
}

/// Every escape of `text` decoded, as bytes: how the most eager server reads it.
pub(crate) fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = text.get(i + 1..i + 3).filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()));
        match hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()).filter(|_| bytes[i] == b'%') {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    decoded
}

/// Whether a segment may stand for more than one segment on the server.
fn holds_separator(segment: &str) -> bool {
    segment.contains('\\') || ENCODED_SEPARATORS.iter().any(|separator| segment.contains(separator))
}

/// A request path as toolcell sends it: normalized as this module says, or why it is
/// refused whatever the rules allow. What an egress rule's patterns are matched against.
///
/// # Errors
/// A malformed escape, a path not starting with `/`, or a step up (`..`) in any spelling.
pub fn normalize_path(raw: &str) -> Result<String, String> {
    RequestPath::normalize(raw).map(|path| path.as_sent()).map_err(|PathRefused(reason)| reason)
}

impl PathPattern {
    /// Whether the request path `raw` matches, once normalized; a path toolcell refuses
    /// matches nothing.
    pub fn matches_path(&self, raw: &str) -> bool {
        RequestPath::normalize(raw).is_ok_and(|path| self.matches(&path))
    }

    /// Whether `path` matches.
    pub(crate) fn matches(&self, path: &RequestPath) -> bool {
        match_from(&self.segments, &path.segments)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// A pattern matching exactly `path` (a `*` in it, which a pattern cannot say literally,
    /// matches other text too).
    pub(crate) fn exactly(path: &RequestPath) -> Self {
        let segments = path.segments.iter().map(|segment| Segment::One(segment.clone())).collect();
        Self { text: format!("/{}", path.segments.join("/")), segments }
    }
}

impl PathPattern {
    /// Whether a grant of `dir` reaches a path the pattern names, or something inside one (a
    /// directory's contents are in it): some path of the tree under `dir` (`dir` included) is
    /// a path the pattern matches, or is below one. For directories on the host.
    pub(crate) fn overlaps_tree(&self, dir: &std::path::Path) -> bool {
        let segments: Vec<String> = dir
            .components()
            .filter_map(|component| match component {
                std::path::Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        reaches_from(&self.segments, &segments)
    }
}

/// Whether `pattern` matches `path` followed by some (possibly empty) tail, or a start of
/// `path`.
fn reaches_from(pattern: &[Segment], path: &[String]) -> bool {
    match (pattern.split_first(), path.split_first()) {
        (_, None) | (None, Some(_)) => true,
        (Some((Segment::Any, rest)), Some(_)) => (0..=path.len()).any(|skip| reaches_from(rest, &path[skip..])),
        (Some((Segment::One(glob), rest)), Some((segment, tail))) => {
            glob_matches(glob, segment) && reaches_from(rest, tail)
        }
    }
}

fn match_from(pattern: &[Segment], path: &[String]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((Segment::Any, rest)) => (0..=path.len()).any(|skip| match_from(rest, &path[skip..])),
        Some((Segment::One(glob), rest)) => path.split_first().is_some_and(|(segment, tail)| {
            !holds_separator(segment) && glob_matches(glob, segment) && match_from(rest, tail)
        }),
    }
}

/// Whether `text` matches `glob`, where `*` stands for any run of characters (at least one
/// when the glob is `*` alone).
fn glob_matches(glob: &str, text: &str) -> bool {
    if glob == "*" {
        return !text.is_empty();
    }
    let Some((first, rest)) = glob.split_once('*') else { return glob == text };
    let Some(mut remaining) = text.strip_prefix(first) else { return false };
    let mut parts: Vec<&str> = rest.split('*').collect();
    let last = parts.pop().unwrap_or_default();
    for part in parts {
        match remaining.find(part) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

impl FromStr for PathPattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if !text.starts_with('/') {
            return Err(format!("`{text}` is not a path pattern: it must start with `/`, e.g. \"/repos/*/issues\""));
        }
        if text.contains(['?', '#']) {
            return Err(format!("`{text}` is not a path pattern: a pattern matches the path only, without `?` or `#`"));
        }
        if text.contains("//") {
            return Err(format!("`{text}` has an empty segment (`//`); paths are matched with single slashes"));
        }
        let mut segments = Vec::new();
        for segment in text.split('/').filter(|segment| !segment.is_empty()) {
            if segment == "**" {
                segments.push(Segment::Any);
                continue;
            }
            if segment.contains("**") {
                return Err(format!("`{text}`: `**` must be a whole segment, as in \"/v1/**\""));
            }
            let decoded = decode_unreserved(segment).map_err(|PathRefused(reason)| format!("`{text}`: {reason}"))?;
            if decoded == "." || decoded == ".." {
                return Err(format!("`{text}` has a `.` or `..` segment; write the path it stands for"));
            }
            if holds_separator(&decoded) {
                return Err(format!(
                    "`{text}` has an encoded `/` or `\\` in a segment, which no request segment matches; use `**`"
                ));
            }
            segments.push(Segment::One(decoded));
        }
        Ok(Self { text: text.to_owned(), segments })
    }
}

impl fmt::Debug for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for PathPattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(raw: &str) -> RequestPath {
        RequestPath::normalize(raw).unwrap_or_else(|PathRefused(reason)| panic!("{raw}: {reason}"))
    }

    fn pattern(text: &str) -> PathPattern {
        text.parse().unwrap_or_else(|err| panic!("{text}: {err}"))
    }

    #[test]
    fn paths_are_sent_normalized() {
        for (raw, sent) in [
            ("", "/"),
            ("/", "/"),
            ("/a//b///c", "/a/b/c"),
            ("/a/./b/.", "/a/b"),
            ("/%7euser/%41%62c", "/~user/Abc"),
            ("/a%2fb/c%3f", "/a%2Fb/c%3F"),
            ("/repos/x/issues/", "/repos/x/issues/"),
            ("//", "/"),
        ] {
            assert_eq!(path(raw).as_sent(), sent, "{raw}");
        }
    }

    #[test]
    fn steps_up_are_refused_in_every_spelling() {
        for raw in [
            "/a/../b",
            "/a/%2e%2e/b",
            "/a/.%2E/b",
            "/a/%2e./b",
            "/a/..%2Fetc/passwd",
            "/a/..%5cwindows",
            "/a/x%2F..%2Fy",
            "/a\\..\\b",
            "/a/%252e%252e/b",
            "/a/%252fb",
        ] {
            let refused = RequestPath::normalize(raw).expect_err(raw);
            assert!(refused.0.contains("..") || refused.0.contains("double-encoded"), "{raw}: {}", refused.0);
        }
        for raw in ["/a/%zz", "/a/%2", "a/b"] {
            assert!(RequestPath::normalize(raw).is_err(), "{raw}");
        }
        // What servers read as a step up: path parameters, NULs, look-alikes, trailing dots.
        for raw in [
            "/api/..;/admin",
            "/api/%2e%2e;/admin",
            "/api/.;/..;/admin",
            "/api/..%3B/admin",
            "/api/%C0%AE%C0%AE/admin",
            "/api/%EF%BC%8E%EF%BC%8E/admin",
            "/api/．．/admin",
            "/api/..%00/admin",
            "/api/...%5C/admin",
            "/api/...",
            "/api/..%20/admin",
            "/api/x%00.json",
            "/api/%E2%80%A4%E2%80%A4/admin",
            "/api/%E2%80%A5/admin",
            "/api/%EF%B9%92%EF%B9%92/admin",
            "/api/..%2500/admin",
            "/api/..%FF/admin",
            "/api/..%09/admin",
            "/api/..%3F/admin",
            "/api/..%23/admin",
            "/api/%C0%2E%C0%2E/admin",
        ] {
            assert!(RequestPath::normalize(raw).is_err(), "{raw}");
        }
        for raw in ["/a/.x", "/a/x..y", "/a/v1.2", "/a/;x", "/a/.well-known", "/a/..x", "/a/%E2%80%A6"] {
            assert!(RequestPath::normalize(raw).is_ok(), "{raw}");
        }
    }

    #[test]
    fn patterns_match_segments_and_globs() {
        let issues = pattern("/repos/*/issues");
        assert!(issues.matches(&path("/repos/octo/issues")));
        assert!(issues.matches(&path("/repos/octo/issues/")), "a trailing slash");
        assert!(issues.matches(&path("/repos//octo//issues")), "double slashes");
        assert!(issues.matches(&path("/repos/%6Fcto/issues")), "an escaped letter");
        assert!(!issues.matches(&path("/repos/octo/hello/issues")), "`*` is one segment");
        assert!(!issues.matches(&path("/repos/octo%2Fhello/issues")), "an encoded slash may be two segments");
        assert!(!issues.matches(&path("/Repos/octo/issues")), "case matters");
        assert!(!issues.matches(&path("/repos/octo/issues/1")));
        assert!(!issues.matches(&path("/repos/issues")), "`*` needs a segment");

        let below = pattern("/v1/**");
        for raw in ["/v1", "/v1/", "/v1/a", "/v1/a/b/c", "/v1/a%2Fb"] {
            assert!(below.matches(&path(raw)), "{raw}");
        }
        assert!(!below.matches(&path("/v2/a")));
        assert!(!below.matches(&path("/v10")));

        let json = pattern("/files/*.json");
        assert!(json.matches(&path("/files/a.json")));
        assert!(!json.matches(&path("/files/a.json.txt")));
        assert!(!json.matches(&path("/files/.jsonx")));
        assert!(pattern("/a/**/z").matches(&path("/a/z")));
        assert!(pattern("/a/**/z").matches(&path("/a/b/c/z")));
        assert!(!pattern("/a/**/z").matches(&path("/a/b/c")));
        assert!(pattern("/").matches(&path("")));
        assert!(pattern("/x*y*z").matches(&path("/xaybz")));
        assert!(!pattern("/x*y*z").matches(&path("/xaz")));
    }

    #[test]
    fn a_pattern_reaches_into_the_trees_of_granted_directories() {
        let home = pattern("/home/**");
        for dir in ["/", "/home", "/home/me/project"] {
            assert!(home.overlaps_tree(std::path::Path::new(dir)), "{dir}");
        }
        assert!(!home.overlaps_tree(std::path::Path::new("/tmp/x")));
        let ssh = pattern("/home/*/.ssh");
        assert!(ssh.overlaps_tree(std::path::Path::new("/home")));
        assert!(ssh.overlaps_tree(std::path::Path::new("/home/me/.ssh/keys")));
        assert!(!ssh.overlaps_tree(std::path::Path::new("/home/me/project")));
    }

    #[test]
    fn bad_patterns_say_what_is_wrong() {
        for (text, says) in [
            ("repos", "must start with `/`"),
            ("/a?b=1", "without `?`"),
            ("/a//b", "empty segment"),
            ("/a/**b", "whole segment"),
            ("/a/../b", "`..`"),
            ("/a/%2e", "`.`"),
            ("/a%2Fb", "encoded"),
            ("/a/%zz", "escape"),
        ] {
            let err = text.parse::<PathPattern>().expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn an_exact_pattern_matches_its_path() {
        let sent = path("/repos/octo/issues/42/");
        let exact = PathPattern::exactly(&sent);
        assert_eq!(exact.as_str(), "/repos/octo/issues/42");
        assert!(exact.matches(&sent));
        assert!(!exact.matches(&path("/repos/octo/issues/43")));
        assert_eq!(PathPattern::exactly(&path("/")).as_str(), "/");
    }
}
