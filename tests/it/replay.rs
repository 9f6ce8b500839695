//! Record and replay: a call run again from its record gives the same result with the same
//! fuel, with nothing live answering it (no clock, no random source, no other tool), and a
//! record of another component, or a run that asks for what the record lacks, is refused.

use serde_json::{Value, json};
use toolcell_runtime::record::{NestedAnswer, Record, ReplayError};
use toolcell_runtime::{Runtime, ToolCall, policy::Grants};

use crate::common::standard_tools;

/// Reads the clocks and the random sources, and calls `calculator` twice.
const PROGRAM: &str = "import time, os\n\
    started = time.time()\n\
    a = tools.calculator(expression='6 * 7')['value']\n\
    b = tools.calculator(expression=f'{a} + 1')['value']\n\
    [started, time.monotonic_ns() > 0, os.urandom(8).hex(), a, b]";

async fn python_calling_calculator() -> Runtime {
    standard_tools().grant("python", Grants::new().call_tool("calculator")).build().await.expect("runtime builds")
}

fn calculator_calls(runtime: &Runtime) -> u64 {
    runtime.metrics().tools.get("calculator").map_or(0, |tool| tool.calls)
}

async fn recorded(runtime: &Runtime, code: &str) -> Record {
    let call = ToolCall::new("rec-1", "python", json!({"code": code}));
    let (output, record) = runtime.call_recorded(call).await;
    assert!(!output.is_error, "{}", output.content);
    record.expect("recorded")
}

#[tokio::test]
async fn a_replay_gives_the_same_result_with_the_same_fuel_and_runs_no_other_tool() {
    let runtime = python_calling_calculator().await;
    let record = recorded(&runtime, PROGRAM).await;
    assert_eq!(record.observed.calls.len(), 2);
    assert_eq!(record.observed.calls[1].answer, NestedAnswer::Result("{\"value\":43.0}".into()));
    assert!(!record.observed.wall_clock_ns.is_empty() && !record.observed.random_hex.is_empty(), "{record:?}");
    let calls_before = calculator_calls(&runtime);

    // Through JSON, as `invoke --record` writes it and `replay` reads it.
    let record = Record::from_json(&record.to_json()).unwrap();
    let replayed = runtime.replay(&record).await.expect("replays");
    assert!(replayed.same_result && replayed.same_fuel, "{:?}\n{:?}", replayed.output, record.output);
    assert_eq!(replayed.output.content, record.output.content);
    assert_eq!(calculator_calls(&runtime), calls_before, "the nested calls were answered from the record");

    // Nor are other tools needed: a runtime with `python` alone replays it.
    let alone = standard_tools().only_tool("python").build().await.unwrap();
    assert!(alone.definition("calculator").is_none());
    let replayed = alone.replay(&record).await.expect("replays without calculator");
    assert!(replayed.same_result && replayed.same_fuel, "{:?}", replayed.output);

    // A live run differs: another clock reading, other random bytes.
    let live = runtime.call(ToolCall::new("live", "python", json!({"code": PROGRAM}))).await;
    assert_ne!(live.content, record.output.content);
}

#[tokio::test]
async fn a_run_that_asks_for_what_the_record_lacks_has_diverged() {
    let runtime = python_calling_calculator().await;
    let record = recorded(&runtime, PROGRAM).await;

    let mut other_call = record.clone();
    other_call.observed.calls[0].arguments = "{\"expression\":\"1 + 1\"}".into();
    let diverged = runtime.replay(&other_call).await.unwrap_err();
    let ReplayError::Diverged(how) = &diverged else { panic!("{diverged:?}") };
    assert!(how.starts_with("nested call 1 asked for `calculator` with {\"expression\": \"6 * 7\"}"), "{how}");

    let mut fewer_calls = record.clone();
    fewer_calls.observed.calls.pop();
    let diverged = runtime.replay(&fewer_calls).await.unwrap_err().to_string();
    assert!(
        diverged.contains("nested call 2 asked for `calculator`; the recorded run made only 1 calls"),
        "{diverged}"
    );

    let mut more_calls = record.clone();
    more_calls.observed.calls.push(more_calls.observed.calls[0].clone());
    let diverged = runtime.replay(&more_calls).await.unwrap_err().to_string();
    assert!(diverged.contains("the run made 2 nested calls; the recorded run made 3"), "{diverged}");

    let mut no_clock = record.clone();
    no_clock.observed.wall_clock_ns.clear();
    let diverged = runtime.replay(&no_clock).await.unwrap_err().to_string();
    assert!(
        diverged.contains("read the wall clock more often than the recorded run, which read it 0 times"),
        "{diverged}"
    );

    let mut short_random = record.clone();
    short_random.observed.random_hex.truncate(4);
    let diverged = runtime.replay(&short_random).await.unwrap_err().to_string();
    assert!(diverged.contains("more random bytes than the 2 recorded"), "{diverged}");
}

#[tokio::test]
async fn a_record_of_another_component_or_format_is_refused() {
    let runtime = python_calling_calculator().await;
    let record = recorded(&runtime, "1 + 1").await;

    let mut changed = record.clone();
    changed.digest = "00".repeat(32);
    let error = runtime.replay(&changed).await.unwrap_err();
    assert!(matches!(error, ReplayError::ToolChanged { .. }), "{error:?}");
    assert!(error.to_string().contains("has changed since the record was made"), "{error}");

    let mut renamed = record.clone();
    renamed.tool = "ruby".into();
    assert!(matches!(runtime.replay(&renamed).await.unwrap_err(), ReplayError::ToolNotLoaded { .. }));

    let mut text: Value = serde_json::from_str(&record.to_json()).unwrap();
    text["format"] = json!("toolcell-record/0");
    let error = Record::from_json(&text.to_string()).unwrap_err().to_string();
    assert!(error.contains("its format is `toolcell-record/0`; this toolcell reads `toolcell-record/1`"), "{error}");
    assert!(Record::from_json("{").is_err());
}

#[tokio::test]
async fn a_replay_never_raises_the_tools_limits() {
    let runtime = python_calling_calculator().await;
    let mut record = recorded(&runtime, "sum(range(1000))").await;
    record.limits.fuel = u64::MAX;
    let replayed = runtime.replay(&record).await.unwrap();
    assert!(replayed.limits_lowered && replayed.same_result && replayed.same_fuel, "{:?}", replayed.output);
}

/// A secret the program passes to another tool is never written into the record, and the
/// replay (which compares the arguments redacted) still matches.
#[tokio::test]
async fn a_record_never_holds_a_secret_the_program_passes_on() {
    use toolcell_runtime::policy::EnvGrant;
    let grants = Grants::new().call_tool("calculator").env(EnvGrant::secret("API_TOKEN", "python-secret-93ab"));
    let runtime = standard_tools().grant("python", grants).build().await.unwrap();
    let code = "import os\ntry:\n    tools.calculator(expression=os.environ['API_TOKEN'])\nexcept ToolCallError as err:\n    \
                kind = err.kind\nkind";
    let record = recorded(&runtime, code).await;
    let text = record.to_json();
    assert!(!text.contains("python-secret-93ab"), "{text}");
    assert!(record.observed.calls[0].arguments.contains("[REDACTED]"), "{:?}", record.observed.calls);
    let replayed = runtime.replay(&record).await.expect("replays");
    assert!(replayed.same_result && replayed.same_fuel, "{:?}", replayed.output);
}

/// A local HTTP/1.1 server answering every request with its number (`reply 1`, `reply 2`...),
/// and `secret` when the path asks for it, on a thread of its own; the requests it answered.
fn counting_server(secret: &'static str) -> (u16, std::sync::Arc<std::sync::atomic::AtomicU32>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let served = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = served.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && !line.ends_with("\r\n\r\n") {}
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let body = if line.contains("/secret") { format!("reply {n} {secret}") } else { format!("reply {n}") };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(format!("{head}{body}").as_bytes());
        }
    });
    (port, served)
}

#[tokio::test]
async fn an_http_call_replays_from_its_record_without_the_network_and_keeps_no_secret() {
    const SECRET: &str = "s3cr3t-token-4815162342";
    let (port, served) = counting_server(SECRET);
    let host: toolcell_runtime::policy::HostPattern = format!("127.0.0.1:{port}").parse().unwrap();
    let secret = toolcell_runtime::policy::EnvGrant::secret("TOKEN", SECRET);
    let runtime = standard_tools()
        .grant("http_fetch", Grants::new().allow_host(host).env(secret))
        .build()
        .await
        .expect("runtime builds");
    let url = format!("http://127.0.0.1:{port}/data?page=1");
    let call = ToolCall::new("rec-http", "http_fetch", json!({"url": url}));
    let (output, record) = runtime.call_recorded(call).await;
    assert!(!output.is_error, "{}", output.content);
    let record = record.expect("recorded");
    assert_eq!(record.observed.http.len(), 1, "{:?}", record.observed);
    assert_eq!(record.observed.http[0].request, format!("GET {url}"));
    let text = record.to_json();
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1);

    // Replayed: the same result with the same fuel, and the server is not asked again (a live
    // call would get `reply 2`).
    let record = Record::from_json(&text).unwrap();
    let replayed = runtime.replay(&record).await.expect("replays");
    assert!(replayed.same_result && replayed.same_fuel, "{:?}", replayed.output);
    assert!(replayed.output.content.contains("reply 1"), "{}", replayed.output.content);
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1, "nothing was sent");

    // A response that echoes the tool's secret is kept redacted: the record never holds it, and
    // its replay (which reads `[REDACTED]`) says it is not the same result.
    let echo = ToolCall::new("rec-secret", "http_fetch", json!({"url": format!("http://127.0.0.1:{port}/secret")}));
    let (_, echoed) = runtime.call_recorded(echo).await;
    let echoed = echoed.expect("recorded");
    assert!(!echoed.to_json().contains(SECRET), "the record holds no secret: {}", echoed.to_json());
    let replayed = runtime.replay(&echoed).await.expect("replays");
    assert!(!replayed.same_result && replayed.output.content.contains("[REDACTED]"), "{:?}", replayed.output);
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 2);

    // On a runtime that grants http_fetch another host only, still from the record; one that
    // grants none says what to do.
    let elsewhere: toolcell_runtime::policy::HostPattern = "replay.invalid".parse().unwrap();
    let other = standard_tools().grant("http_fetch", Grants::new().allow_host(elsewhere)).build().await.unwrap();
    let replayed = other.replay(&record).await.expect("replays elsewhere");
    assert!(replayed.output.content.contains("reply 1"), "{}", replayed.output.content);
    let ungranted = standard_tools().build().await.unwrap();
    let refused = ungranted.replay(&record).await.unwrap_err();
    assert!(matches!(refused, ReplayError::NeedsHttp { .. }), "{refused}");
    assert!(refused.to_string().contains("grant it any host"), "{refused}");

    // A record whose request was changed: the replay diverges, saying where.
    let mut changed: Value = serde_json::from_str(&text).unwrap();
    changed["observed"]["http"][0]["request"] = json!("GET http://127.0.0.1:1/other");
    let changed = Record::from_json(&changed.to_string()).unwrap();
    let diverged = runtime.replay(&changed).await.unwrap_err();
    assert!(diverged.to_string().contains("HTTP request 1 was `GET"), "{diverged}");
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 2, "a diverged replay sends nothing either");
}

#[tokio::test]
async fn a_call_reading_granted_files_replays_with_none_of_them() {
    let dir = std::env::temp_dir().join(format!("toolcell-replay-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("notes/old")).unwrap();
    std::fs::write(dir.join("notes/todo.txt"), "water the plants\nfile the taxes\n").unwrap();
    std::fs::write(dir.join("notes/old/done.txt"), "taxes filed last year\n").unwrap();
    let grant = toolcell_runtime::policy::DirGrant::read_only(&dir, "/workspace");
    let runtime = standard_tools().grant("files", Grants::new().dir(grant)).build().await.expect("runtime builds");
    let search = json!({"operation": "search", "path": "/workspace", "pattern": "taxes"});
    let (output, record) = runtime.call_recorded(ToolCall::new("rec-files", "files", search.clone())).await;
    assert!(!output.is_error && output.content.contains("file the taxes"), "{}", output.content);
    let record = Record::from_json(&record.expect("recorded").to_json()).unwrap();
    let paths: Vec<&str> = record.files[0].entries.iter().map(|entry| entry.path.as_str()).collect();
    assert_eq!(paths, ["", "notes", "notes/old", "notes/old/done.txt", "notes/todo.txt"]);

    // The files change, then go: the replay reads the record's, with the same fuel.
    std::fs::write(dir.join("notes/todo.txt"), "nothing about them now\n").unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let alone = standard_tools().only_tool("files").build().await.unwrap();
    let replayed = alone.replay(&record).await.expect("replays");
    assert!(replayed.same_result && replayed.same_fuel, "{:?}\n{:?}", replayed.output, record.output);

    // A record whose file path leaves its directory is refused before anything runs.
    let mut escaping: Value = serde_json::from_str(&record.to_json()).unwrap();
    escaping["files"][0]["entries"][4]["path"] = json!("../../escaped.txt");
    let escaping = Record::from_json(&escaping.to_string()).unwrap();
    let refused = alone.replay(&escaping).await.unwrap_err();
    assert!(refused.to_string().contains("leaves its directory"), "{refused}");
    assert!(!std::env::temp_dir().join("escaped.txt").exists());
}

#[tokio::test]
async fn a_granted_directory_larger_than_a_record_keeps_is_not_recorded_but_the_call_runs() {
    let dir = std::env::temp_dir().join(format!("toolcell-replay-big-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("big.bin"), vec![0u8; (16 << 20) + 1]).unwrap();
    std::fs::write(dir.join("small.txt"), "small").unwrap();
    let grant = toolcell_runtime::policy::DirGrant::read_only(&dir, "/workspace");
    let runtime = standard_tools().grant("files", Grants::new().dir(grant)).build().await.expect("runtime builds");
    let read = json!({"operation": "read", "path": "/workspace/small.txt"});
    let (output, record) = runtime.call_recorded(ToolCall::new("rec-big", "files", read)).await;
    assert!(!output.is_error, "{}", output.content);
    let refused = record.unwrap_err();
    assert!(refused.to_string().contains("more than 16 MiB of files"), "{refused}");
    std::fs::remove_dir_all(&dir).unwrap();
}
