//! Helpers shared by the test guests in `examples/`.

/// A wasi:http GET, as a hostile tool would send it: returns the status and how many body
/// bytes it read (all of them when `read_all`, else none), or the wasi-http error.
#[cfg(target_arch = "wasm32")]
pub fn http_get(url: &str, read_all: bool) -> Result<(u16, u64), String> {
    let pending = http_start(url)?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(err))) => return Err(format!("{err:?}")),
        _ => return Err("the response future failed".into()),
    };
    let status = response.status();
    let mut read = 0;
    if read_all {
        let body = response.consume().map_err(|()| "no body")?;
        let stream = body.stream().map_err(|()| "no body stream")?;
        loop {
            match stream.blocking_read(64 << 10) {
                Ok(chunk) => read += chunk.len() as u64,
                Err(wasip2::io::streams::StreamError::Closed) => break,
                Err(wasip2::io::streams::StreamError::LastOperationFailed(err)) => {
                    return Err(err.to_debug_string());
                }
            }
        }
    }
    Ok((status, read))
}

/// Sends a wasi:http GET without waiting for the response.
#[cfg(target_arch = "wasm32")]
pub fn http_start(url: &str) -> Result<wasip2::http::types::FutureIncomingResponse, String> {
    use wasip2::http::outgoing_handler::handle;
    use wasip2::http::types::{Fields, OutgoingRequest, Scheme};

    let (scheme, rest) = match url.split_once("://") {
        Some(("https", rest)) => (Scheme::Https, rest),
        Some(("http", rest)) => (Scheme::Http, rest),
        _ => return Err(format!("not an http(s) URL: {url}")),
    };
    let (authority, path) = rest.find('/').map_or((rest, "/"), |slash| rest.split_at(slash));
    let request = OutgoingRequest::new(Fields::new());
    request.set_scheme(Some(&scheme)).map_err(|()| "bad scheme")?;
    request.set_authority(Some(authority)).map_err(|()| format!("bad authority {authority}"))?;
    request.set_path_with_query(Some(path)).map_err(|()| "bad path")?;
    handle(request, None).map_err(|err| format!("{err:?}"))
}

/// What came back for a request: the status, the response headers and the body.
pub type Answer = (u16, Vec<(String, Vec<u8>)>, Vec<u8>);

/// A wasi:http request with any method and headers, as a hostile tool would send it: the
/// whole response, or the wasi-http error (setting the headers included) in its debug form.
#[cfg(target_arch = "wasm32")]
pub fn http_send(method: &str, url: &str, headers: &[(String, String)]) -> Result<Answer, String> {
    use wasip2::http::outgoing_handler::handle;
    use wasip2::http::types::{Fields, Method, OutgoingRequest, Scheme};

    let (scheme, rest) = match url.split_once("://") {
        Some(("https", rest)) => (Scheme::Https, rest),
        Some(("http", rest)) => (Scheme::Http, rest),
        _ => return Err(format!("not an http(s) URL: {url}")),
    };
    let (authority, path) = rest.find('/').map_or((rest, "/"), |slash| rest.split_at(slash));
    let entries: Vec<(String, Vec<u8>)> =
        headers.iter().map(|(name, value)| (name.clone(), value.as_bytes().to_vec())).collect();
    let fields = Fields::from_list(&entries).map_err(|err| format!("headers refused: {err:?}"))?;
    let request = OutgoingRequest::new(fields);
    let method = match method {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "HEAD" => Method::Head,
        other => Method::Other(other.to_owned()),
    };
    request.set_method(&method).map_err(|()| "bad method")?;
    request.set_scheme(Some(&scheme)).map_err(|()| "bad scheme")?;
    request.set_authority(Some(authority)).map_err(|()| format!("bad authority {authority}"))?;
    request.set_path_with_query(Some(path)).map_err(|()| format!("bad path {path}"))?;
    let pending = handle(request, None).map_err(|err| format!("{err:?}"))?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(err))) => return Err(format!("{err:?}")),
        _ => return Err("the response future failed".into()),
    };
    let status = response.status();
    let headers = response.headers().entries();
    let body = response.consume().map_err(|()| "no body")?;
    let stream = body.stream().map_err(|()| "no body stream")?;
    let mut read = Vec::new();
    loop {
        match stream.blocking_read(64 << 10) {
            Ok(chunk) => read.extend_from_slice(&chunk),
            Err(wasip2::io::streams::StreamError::Closed) => break,
            Err(wasip2::io::streams::StreamError::LastOperationFailed(err)) => return Err(err.to_debug_string()),
        }
    }
    Ok((status, headers, read))
}

/// Native builds never run the guests; this keeps the examples compiling for `cargo test`.
#[cfg(not(target_arch = "wasm32"))]
pub fn http_send(_method: &str, url: &str, _headers: &[(String, String)]) -> Result<Answer, String> {
    Err(format!("{url}: no wasi:http outside WebAssembly"))
}

/// Native builds never run the guests; this keeps the examples compiling for `cargo test`.
#[cfg(not(target_arch = "wasm32"))]
pub fn http_get(url: &str, _read_all: bool) -> Result<(u16, u64), String> {
    Err(format!("{url}: no wasi:http outside WebAssembly"))
}
