//! Request headers the model may send, and response headers as the model sees them.

use std::collections::BTreeMap;

use toolcell_guest::ToolError;

use crate::excerpt;

/// The most request headers the model may give. Real requests need a handful; the cap keeps
/// the request well inside the host's limit on header size (going over it traps the guest).
pub(crate) const MAX_REQUEST_HEADERS: usize = 32;
/// The longest request header value, in bytes.
pub(crate) const MAX_REQUEST_HEADER_VALUE_BYTES: usize = 8 * 1024;
/// The most distinct response header names returned; the rest are counted, not listed.
pub(crate) const MAX_RESPONSE_HEADERS: usize = 64;
/// The longest response header value returned, in bytes (repeated headers joined first);
/// longer values are cut at a character boundary and end with `…`.
pub(crate) const MAX_RESPONSE_HEADER_VALUE_BYTES: usize = 2048;

/// The `User-Agent` sent unless the model gives one. Some servers refuse requests without.
pub(crate) const USER_AGENT: &str = concat!("toolcell-http-fetch/", env!("CARGO_PKG_VERSION"));

/// Headers whose value identifies the caller: they are not sent on after a redirect to
/// another origin, as browsers and curl do.
pub(crate) const CREDENTIAL_HEADERS: [&str; 2] = ["authorization", "cookie"];

/// Why the model may not set a header (lower-case name), if it may not.
fn forbidden_reason(name: &str) -> Option<&'static str> {
    Some(match name {
        "host" => "it is derived from `url`: put the host and port in the URL instead",
        "content-length" | "transfer-encoding" | "expect" => "a GET request has no body",
        "connection" | "keep-alive" | "proxy-connection" | "te" | "trailer" | "upgrade" | "http2-settings" => {
            "it is a hop-by-hop header, managed by the host's HTTP client"
        }
        "proxy-authorization" | "proxy-authenticate" => "proxies are the host's business",
        "accept-encoding" => "the tool cannot decompress bodies, so it always asks for `identity` (uncompressed)",
        _ => return None,
    })
}

/// Checks the model's request headers and adds the tool's defaults: the list to send, names
/// in lower case.
pub(crate) fn request_headers(given: &BTreeMap<String, String>) -> Result<Vec<(String, String)>, ToolError> {
    if given.len() > MAX_REQUEST_HEADERS {
        return Err(ToolError::invalid_arguments(format!(
            "`headers` has {} entries; at most {MAX_REQUEST_HEADERS} are allowed: send only the headers the \
             server needs",
            given.len()
        )));
    }
    let mut headers: Vec<(String, String)> = Vec::with_capacity(given.len() + 3);
    for (name, value) in given {
        let lower = name.to_ascii_lowercase();
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(ToolError::invalid_arguments(format!(
                "`headers` has an invalid header name `{}`: a name is made of letters, digits and \
                 ``!#$%&'*+-.^_`|~``, without spaces or a colon, e.g. `Accept`",
                excerpt(name)
            )));
        }
        if let Some(reason) = forbidden_reason(&lower) {
            return Err(ToolError::invalid_arguments(format!(
                "request header `{name}` cannot be set: {reason}; remove it from `headers`"
            )));
        }
        if let Some((first, _)) = headers.iter().find(|(existing, _)| *existing == lower) {
            let first = given.keys().find(|key| key.eq_ignore_ascii_case(first)).map_or(first.as_str(), |key| key);
            return Err(ToolError::invalid_arguments(format!(
                "`headers` sets `{first}` and `{name}`, which are the same header (names are case-insensitive): \
                 give it once, joining several values with `, `"
            )));
        }
        let value = value.trim_matches([' ', '\t']);
        if value.len() > MAX_REQUEST_HEADER_VALUE_BYTES {
            return Err(ToolError::invalid_arguments(format!(
                "the value of request header `{name}` is {} bytes; at most {MAX_REQUEST_HEADER_VALUE_BYTES} are \
                 allowed",
                value.len()
            )));
        }
        if value.chars().any(|c| c.is_ascii_control() && c != '\t') {
            return Err(ToolError::invalid_arguments(format!(
                "the value of request header `{name}` contains a line break or another control character, which \
                 header values cannot hold: remove it"
            )));
        }
        headers.push((lower, value.to_owned()));
    }
    let has = |headers: &[(String, String)], name: &str| headers.iter().any(|(existing, _)| existing == name);
    if !has(&headers, "user-agent") {
        headers.push(("user-agent".to_owned(), USER_AGENT.to_owned()));
    }
    if !has(&headers, "accept") {
        headers.push(("accept".to_owned(), "*/*".to_owned()));
    }
    headers.push(("accept-encoding".to_owned(), "identity".to_owned()));
    Ok(headers)
}

/// A `tchar` of RFC 9110: what a header name is made of.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// Response headers as returned to the model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ResponseHeaders {
    /// Lower-case name to value, repeated headers joined with `, `.
    pub(crate) map: BTreeMap<String, String>,
    /// How many distinct names were left out past [`MAX_RESPONSE_HEADERS`].
    pub(crate) omitted: usize,
    /// How many values were cut to [`MAX_RESPONSE_HEADER_VALUE_BYTES`].
    pub(crate) shortened: usize,
}

/// Collects response headers for the model: names lower-cased, repeated headers joined with
/// `, ` in the order received, values decoded as UTF-8 (invalid bytes replaced), the number of
/// names and the size of values capped. The first names received are the ones kept.
pub(crate) fn collect(raw: &[(String, Vec<u8>)]) -> ResponseHeaders {
    let mut headers = ResponseHeaders::default();
    let mut omitted_names: Vec<String> = Vec::new();
    for (name, value) in raw {
        let name = name.to_ascii_lowercase();
        let value = String::from_utf8_lossy(value);
        let value = value.trim_matches([' ', '\t']);
        let room = headers.map.len() < MAX_RESPONSE_HEADERS;
        match headers.map.get_mut(&name) {
            // Past the cap the value is cut anyway: stop growing it.
            Some(joined) if joined.len() <= MAX_RESPONSE_HEADER_VALUE_BYTES => {
                joined.push_str(", ");
                joined.push_str(value);
            }
            Some(_) => {}
            None if room => {
                headers.map.insert(name, value.to_owned());
            }
            None if !omitted_names.contains(&name) => omitted_names.push(name),
            None => {}
        }
    }
    headers.omitted = omitted_names.len();
    for value in headers.map.values_mut() {
        if value.len() > MAX_RESPONSE_HEADER_VALUE_BYTES {
            let mut end = MAX_RESPONSE_HEADER_VALUE_BYTES;
            while !value.is_char_boundary(end) {
                end -= 1;
            }
            value.truncate(end);
            value.push('…');
            headers.shortened += 1;
        }
    }
    headers
}

/// The first value of header `name` (lower case), decoded leniently.
pub(crate) fn first(raw: &[(String, Vec<u8>)], name: &str) -> Option<String> {
    raw.iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| String::from_utf8_lossy(value).trim_matches([' ', '\t']).to_owned())
}

/// Every value of header `name` (lower case), split at commas, trimmed, empty items dropped.
pub(crate) fn list(raw: &[(String, Vec<u8>)], name: &str) -> Vec<String> {
    raw.iter()
        .filter(|(key, _)| key.eq_ignore_ascii_case(name))
        .flat_map(|(_, value)| {
            String::from_utf8_lossy(value)
                .split(',')
                .map(|item| item.trim_matches([' ', '\t']).to_owned())
                .filter(|item| !item.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The `Content-Length`, when the server sent one that is a number (several copies must agree).
pub(crate) fn content_length(raw: &[(String, Vec<u8>)]) -> Option<u64> {
    let lengths: Vec<Option<u64>> = list(raw, "content-length").iter().map(|item| item.parse().ok()).collect();
    match lengths.split_first() {
        Some((&Some(first), rest)) if rest.iter().all(|length| *length == Some(first)) => Some(first),
        _ => None,
    }
}
