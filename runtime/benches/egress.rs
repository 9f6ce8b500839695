//! What egress rules and secrets the host sends cost a call: `http_fetch` of a small and a
//! 1 MB body from a server on 127.0.0.1, granted by `allow_hosts` (no secret: the response
//! passes as it comes) and by a rule that sends a secret (every response redacted as it
//! streams), median and p90 of each.
//!
//! Run with `cargo bench -p toolcell-runtime --bench egress` (release build). `cargo test`
//! runs it as a smoke test (a few samples; the figures then mean nothing).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use toolcell_runtime::policy::{Grants, HeaderTemplate, HttpRule, SecretGrant};
use toolcell_runtime::{LimitOverrides, Runtime, ToolCall};

/// A server that answers every request with `size` bytes of text, read from the path.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                        break;
                    }
                }
                let size: usize =
                    line.split('/').nth(1).and_then(|size| size.split(' ').next()?.parse().ok()).unwrap_or(0);
                let body = "lorem ipsum dolor sit amet, ".repeat(size / 28 + 1);
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {size}\r\nconnection: close\r\n\r\n"
                );
                let mut stream = stream;
                let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body.as_bytes()[..size]));
            });
        }
    });
    port
}

async fn runtime(grants: Grants, cache: &PathBuf) -> Runtime {
    let runtime = Runtime::builder()
        .compile_cache(cache)
        .component_file(toolcell_tools::HTTP_FETCH)
        .grant("http_fetch", grants)
        .build()
        .await
        .expect("runtime");
    assert!(runtime.diagnostics().is_empty(), "{:?}", runtime.diagnostics());
    runtime
}

fn main() {
    let bench = std::env::args().any(|arg| arg == "--bench");
    let samples = if bench { 300 } else { 3 };
    if !bench {
        println!("smoke test (figures are meaningless): run `cargo bench -p toolcell-runtime --bench egress`");
    }
    let port = serve();
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    tokio.block_on(async {
        let cache = PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
        let host = format!("127.0.0.1:{port}");
        let plain = runtime(Grants::new().allow_host(host.parse().expect("host")), &cache).await;
        let rule = HttpRule::new(format!("http://{host}").parse().expect("host"))
            .methods(["GET"])
            .paths(["/**".parse().expect("path")])
            .header("Authorization", HeaderTemplate::new("Bearer {secret:TOKEN}"));
        let secret = Grants::new().secret(SecretGrant::value("TOKEN", "bench-secret-5f3a9c71")).http_rule(rule);
        let with_secret = runtime(secret, &cache).await;
        for size in [1_000, 1_000_000] {
            for (name, runtime) in [("allow_hosts, no secret", &plain), ("a rule that sends a secret", &with_secret)] {
                let (median, p90) = measure(runtime, port, size, samples).await;
                println!("http_fetch of {size} bytes, {name}: median {median:.2} ms, p90 {p90:.2} ms");
            }
        }
    });
}

async fn measure(runtime: &Runtime, port: u16, size: usize, samples: usize) -> (f64, f64) {
    let mut times: Vec<Duration> = Vec::with_capacity(samples);
    for i in 0..samples + samples / 10 {
        let arguments = json!({"url": format!("http://127.0.0.1:{port}/{size}"), "max_bytes": 1_000_000});
        let call = ToolCall::new("bench", "http_fetch", arguments).with_limits(LimitOverrides::new());
        let started = Instant::now();
        let output = runtime.call(call).await;
        let took = started.elapsed();
        assert!(!output.is_error, "{output:#?}");
        if i >= samples / 10 {
            times.push(took);
        }
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1000.0;
    (at(0.5), at(0.9))
}
