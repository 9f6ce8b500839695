//! What an allowed request goes out with: its normalized path, the headers of the rule that
//! allowed it (over any the tool set), and the rule's secrets in place of the tool's
//! `{secret:NAME}` placeholders, in header values and in the query.
//!
//! A placeholder naming a secret the rule does not send goes out as the tool wrote it: the
//! text is no secret, and a request elsewhere never carries one.

use http::header::HeaderValue;
use wasmtime_wasi_http::WasiBody;

use crate::policy::{RequestPath, ResolvedRule, percent_decoded, percent_encode, placeholders};

/// Applies `rule` to `request`, whose normalized path is `path`; or says why it cannot be
/// sent.
pub(super) fn apply(
    rule: &ResolvedRule,
    request: &mut http::Request<WasiBody>,
    path: &RequestPath,
) -> Result<(), String> {
    if !rule.secrets.is_empty() {
        fill_headers(rule, request.headers_mut())?;
    }
    for (name, value) in &rule.headers {
        request.headers_mut().insert(name.clone(), value.clone());
    }
    let query = request.uri().query().map(|query| fill_query(rule, query));
    let mut path_and_query = path.as_sent();
    if let Some(query) = query {
        path_and_query.push('?');
        path_and_query.push_str(&query);
    }
    let mut parts = request.uri().clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().map_err(|_| "the request's path could not be sent".to_owned())?);
    *request.uri_mut() = http::Uri::from_parts(parts).map_err(|_| "the request's URL could not be sent".to_owned())?;
    Ok(())
}

/// Headers, and a query parameter, by which web frameworks let a request say it is another
/// method than the one it was sent with.
const METHOD_OVERRIDES: [&str; 3] = ["x-http-method-override", "x-http-method", "x-method-override"];

/// Refuses a request that asks the server, in a header or `_method=`, to take it as a method
/// the rule does not allow: `GET` with `X-HTTP-Method-Override: DELETE` would delete.
pub(super) fn refuse_method_override(rule: &ResolvedRule, request: &http::Request<WasiBody>) -> Result<(), String> {
    if rule.rule.methods.is_empty() {
        return Ok(());
    }
    let allowed = |method: &str| rule.rule.methods.iter().any(|allowed| allowed.eq_ignore_ascii_case(method.trim()));
    let headers = METHOD_OVERRIDES.iter().flat_map(|name| request.headers().get_all(*name));
    let mut asked: Vec<String> = headers.map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned()).collect();
    // `_method`, however the key is spelled: `%5Fmethod`, `_method[]`, after `;`.
    let query = request.uri().query().unwrap_or_default();
    for pair in query.split(['&', ';']) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = String::from_utf8_lossy(&percent_decoded(key)).into_owned();
        if key.trim_end_matches("[]").eq_ignore_ascii_case("_method") {
            asked.push(value.to_owned());
        }
    }
    match asked.iter().find(|method| !allowed(method)) {
        Some(method) => Err(format!(
            "the request asks to be taken as `{}` (a method-override header or `_method`), which this tool may not \
             send there",
            method.chars().take(16).collect::<String>()
        )),
        None => Ok(()),
    }
}

/// Headers by which some servers and proxies take a request for another path than its URL's
/// (IIS, older Symfony).
const PATH_OVERRIDES: [&str; 2] = ["x-original-url", "x-rewrite-url"];

/// Refuses a request of a rule that names paths when it asks, in a header, to be taken for
/// another path than the one checked.
pub(super) fn refuse_path_override(rule: &ResolvedRule, request: &http::Request<WasiBody>) -> Result<(), String> {
    if rule.rule.paths.is_empty() {
        return Ok(());
    }
    match PATH_OVERRIDES.iter().find(|name| request.headers().contains_key(**name)) {
        Some(name) => Err(format!(
            "the request asks to be taken for another path (`{name}`), which this tool may not do where its paths \
             are limited"
        )),
        None => Ok(()),
    }
}

/// Headers that ask for part of a response: with them a tool could read an echo of a secret
/// a few bytes at a time, each part too short to be recognized. A request that may bring a
/// secret back goes out without them, and gets the whole response.
pub(super) const RANGE_HEADERS: [http::HeaderName; 2] = [http::header::RANGE, http::header::IF_RANGE];

/// Fills the rule's secrets into the header values the tool wrote.
fn fill_headers(rule: &ResolvedRule, headers: &mut http::HeaderMap) -> Result<(), String> {
    for (name, value) in headers.iter_mut() {
        let Ok(text) = value.to_str() else { continue };
        let Some(replaced) = fill(text, |name| rule.secrets.get(name).cloned()) else { continue };
        let mut replaced = HeaderValue::from_str(&replaced).map_err(|_| {
            format!("the header `{name}` cannot carry its secret (a character a header value cannot hold)")
        })?;
        replaced.set_sensitive(true);
        *value = replaced;
    }
    Ok(())
}

/// `text` with the placeholders `secret` knows filled in, or `None` when there were none.
fn fill(text: &str, secret: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut filled = String::new();
    let mut last = 0;
    for (range, name) in placeholders(text) {
        let Some(value) = secret(name) else { continue };
        filled.push_str(&text[last..range.start]);
        filled.push_str(&value);
        last = range.end;
    }
    if last == 0 {
        return None;
    }
    filled.push_str(&text[last..]);
    Some(filled)
}

/// The query with the rule's secrets, percent-encoded, in place of the tool's placeholders,
/// written as is or percent-encoded (`%7Bsecret%3ANAME%7D`).
fn fill_query(rule: &ResolvedRule, query: &str) -> String {
    if rule.secrets.is_empty() || !query.contains("secret") {
        return query.to_owned();
    }
    let decoded = decode_placeholder_escapes(query);
    fill(&decoded, |name| rule.secrets.get(name).map(|value| percent_encode(value))).unwrap_or_else(|| query.to_owned())
}

/// The query with the escapes of `{`, `}` and `:` decoded, so an encoded placeholder reads
/// as one. Only used when a placeholder is filled: the rest of the query means the same
/// with these three written as they are.
fn decode_placeholder_escapes(query: &str) -> String {
    let mut decoded = String::with_capacity(query.len());
    let mut rest = query;
    while let Some(at) = rest.find('%') {
        decoded.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or(&rest[at..]);
        match escape.to_ascii_uppercase().as_str() {
            "%7B" => decoded.push('{'),
            "%7D" => decoded.push('}'),
            "%3A" => decoded.push(':'),
            _ => {
                decoded.push('%');
                rest = &rest[at + 1..];
                continue;
            }
        }
        rest = &rest[at + 3..];
    }
    decoded.push_str(rest);
    decoded
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use bytes::Bytes;
    use http_body_util::{BodyExt, Empty};

    use super::*;
    use crate::policy::{Egress, HeaderTemplate, HttpRule, Scheme};

    const TOKEN: &str = "tok en/1234567890";

    fn egress() -> Egress {
        let rule = HttpRule::new("api.example.com".parse().expect("host"))
            .header("Authorization", HeaderTemplate::new("Bearer {secret:TOKEN}"))
            .placeholder("KEY");
        let secrets =
            BTreeMap::from([("TOKEN".to_owned(), TOKEN.to_owned()), ("KEY".to_owned(), "k&y=12345678".to_owned())]);
        Egress::resolve(&[rule], &["other.example.com".parse().expect("host")], &secrets).expect("resolve")
    }

    fn send(egress: &Egress, uri: &str, headers: &[(&str, &str)]) -> http::Request<WasiBody> {
        let body = Empty::<Bytes>::new().map_err(|never| match never {}).boxed_unsync();
        let mut builder = http::Request::get(uri);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let mut request = builder.body(body).expect("request");
        let uri = request.uri().clone();
        let path = RequestPath::normalize(uri.path()).expect("path");
        let scheme = if uri.scheme_str() == Some("https") { Scheme::Https } else { Scheme::Http };
        let rule = egress.decide(request.method(), scheme, uri.host().expect("host"), 443, &path).expect("allowed");
        apply(rule, &mut request, &path).expect("apply");
        request
    }

    #[test]
    fn the_rules_headers_win_over_the_tools() {
        let egress = egress();
        let request = send(&egress, "https://api.example.com/x", &[("authorization", "Bearer mine")]);
        let values: Vec<_> = request.headers().get_all("authorization").iter().collect();
        assert_eq!(values.len(), 1);
        assert_eq!(values[0].to_str().expect("ascii"), format!("Bearer {TOKEN}"));
        assert!(values[0].is_sensitive());
    }

    #[test]
    fn a_method_override_the_rule_does_not_allow_is_refused() {
        let rule = HttpRule::new("api.example.com".parse().expect("host")).methods(["GET"]);
        let egress = Egress::resolve(&[rule], &[], &BTreeMap::new()).expect("resolve");
        let path = RequestPath::normalize("/x").expect("path");
        let resolved =
            egress.decide(&http::Method::GET, Scheme::Https, "api.example.com", 443, &path).expect("allowed");
        let body = || Empty::<Bytes>::new().map_err(|never| match never {}).boxed_unsync();
        for (uri, header) in [
            ("https://api.example.com/x", Some(("X-HTTP-Method-Override", "DELETE"))),
            ("https://api.example.com/x", Some(("x-method-override", "put"))),
            ("https://api.example.com/x?a=1&_method=DELETE", None),
        ] {
            let mut builder = http::Request::get(uri);
            if let Some((name, value)) = header {
                builder = builder.header(name, value);
            }
            let request = builder.body(body()).expect("request");
            let refused = refuse_method_override(resolved, &request).expect_err(uri);
            assert!(refused.contains("method-override"), "{refused}");
        }
        for query in ["%5Fmethod=DELETE", "_method[]=DELETE", "a=1;_method=DELETE", "%5fMETHOD=delete"] {
            let request =
                http::Request::get(format!("https://api.example.com/x?{query}")).body(body()).expect("request");
            assert!(refuse_method_override(resolved, &request).is_err(), "{query}");
        }
        let request =
            http::Request::get("https://api.example.com/x").header("X-HTTP-Method-Override", "get").body(body());
        assert!(refuse_method_override(resolved, &request.expect("request")).is_ok());
    }

    #[test]
    fn placeholders_are_filled_only_for_the_rules_secrets() {
        let egress = egress();
        let request = send(
            &egress,
            "https://api.example.com/x?key={secret:KEY}&enc=%7bsecret%3AKEY%7D&other={secret:OTHER}&pct=100%25",
            &[("x-key", "{secret:KEY}"), ("x-other", "{secret:NOPE}")],
        );
        assert_eq!(request.headers()["x-key"], "k&y=12345678");
        assert_eq!(request.headers()["x-other"], "{secret:NOPE}");
        assert_eq!(
            request.uri().query(),
            Some("key=k%26y%3D12345678&enc=k%26y%3D12345678&other={secret:OTHER}&pct=100%25")
        );
        // Another host's rule sends no secret: its placeholders go out as written.
        let request = send(&egress, "https://other.example.com/x?key={secret:KEY}", &[("x-key", "{secret:KEY}")]);
        assert_eq!(request.headers()["x-key"], "{secret:KEY}");
        assert_eq!(request.uri().query(), Some("key={secret:KEY}"));
        assert!(request.headers().get("authorization").is_none());
    }
}
