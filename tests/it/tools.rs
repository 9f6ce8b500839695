//! The standard tools, end to end through the runtime (`python` has its own file).

use serde_json::json;

use crate::common::{call, kind, runtime, value};

#[tokio::test]
async fn all_eight_standard_tools_load_with_valid_definitions() {
    for name in ["calculator", "json_query", "regex", "datetime", "unit_convert", "http_fetch", "files", "python"] {
        let definition = runtime().definition(name).unwrap_or_else(|| panic!("{name} is loaded"));
        assert_eq!(definition.version, "1.0.0");
        assert_eq!(definition.parameters["type"], "object");
        assert!(definition.parameters["required"].is_array(), "{name} always lists required properties");
    }
}

#[tokio::test]
async fn the_standard_tools_declare_a_title_and_truthful_hints() {
    // (name, title, read-only, idempotent, open world); none claims to be destructive.
    let expected = [
        ("calculator", "Calculator", true, true, false),
        ("json_query", "JSON Query", true, true, false),
        ("regex", "Regular Expressions", true, true, false),
        ("datetime", "Date and Time", true, true, false),
        ("unit_convert", "Unit Converter", true, true, false),
        ("http_fetch", "Fetch URL", true, true, true),
        ("files", "Files", true, true, false),
        ("python", "Python", true, true, false),
    ];
    for (name, title, read_only, idempotent, open_world) in expected {
        let definition = runtime().definition(name).unwrap_or_else(|| panic!("{name} is loaded"));
        assert_eq!(definition.title.as_deref(), Some(title), "{name}");
        let annotations = &definition.annotations;
        assert_eq!(annotations.read_only, Some(read_only), "{name}");
        assert_eq!(annotations.destructive, None, "{name}: meaningless for a read-only tool, so unsaid");
        assert_eq!(annotations.idempotent, Some(idempotent), "{name}");
        assert_eq!(annotations.open_world, Some(open_world), "{name}");
    }
    // http_fetch requests no hosts (it fetches what the operator allows): its open world is
    // declared, not derived.
    assert!(runtime().requested("http_fetch").unwrap().http_hosts.is_empty());
}

#[tokio::test]
async fn calculator_evaluates_and_names_the_position_of_errors() {
    assert_eq!(value(&call("calculator", json!({"expression": "2 * (3 + 4)"})).await)["value"], json!(14.0));
    let output = call("calculator", json!({"expression": "1 / (2 - 2)"})).await;
    assert_eq!(kind(&output), "rejected_arguments");
    assert!(output.content.contains("column"), "{}", output.content);
}

#[tokio::test]
async fn json_query_returns_values_with_normalized_paths() {
    let document = json!({"store": {"book": [{"title": "A", "price": 8}, {"title": "B", "price": 12}]}});
    let result =
        value(&call("json_query", json!({"document": document, "query": "$.store.book[?@.price < 10].title"})).await);
    assert_eq!(result["count"], 1);
    assert_eq!(result["matches"][0], json!({"path": "$['store']['book'][0]['title']", "value": "A"}));
    let output = call("json_query", json!({"document": {}, "query": "store.book"})).await;
    assert_eq!(kind(&output), "rejected_arguments");
}

#[tokio::test]
async fn regex_finds_with_groups_and_rejects_bad_patterns() {
    let result = value(&call("regex", json!({"pattern": "(?<n>\\d+)", "text": "a1b22", "operation": "find"})).await);
    assert_eq!(result["count"], 2);
    assert_eq!(result["matches"][1]["text"], "22");
    let output = call("regex", json!({"pattern": "(unclosed", "text": "x", "operation": "find"})).await;
    assert_eq!(kind(&output), "rejected_arguments");
    assert!(output.content.contains("unclosed group"), "{}", output.content);
}

#[tokio::test]
async fn datetime_uses_the_compiled_in_time_zone_database() {
    // 2024-03-31 is the day Paris moves to summer time: 01:30 UTC is 03:30 CEST.
    let arguments = json!({"operation": "convert", "instant": "2024-03-31T01:30:00Z", "to_time_zone": "Europe/Paris"});
    let result = value(&call("datetime", arguments).await);
    assert!(result["iso"].as_str().unwrap().starts_with("2024-03-31T03:30:00+02:00"), "{result}");
    let output = call("datetime", json!({"operation": "now", "time_zone": "Mars/Olympus_Mons"})).await;
    assert_eq!(kind(&output), "rejected_arguments");
}

#[tokio::test]
async fn datetime_reads_the_default_time_zone_from_the_host_context() {
    let mut context = serde_json::Map::new();
    context.insert("time_zone".into(), json!("Asia/Tokyo"));
    let call =
        toolcell_runtime::ToolCall::new("1", "datetime", json!({"operation": "parse", "instant": "2024-01-01 09:00"}))
            .with_context(context);
    let result = value(&runtime().call(call).await);
    assert!(result["iso"].as_str().unwrap().starts_with("2024-01-01T09:00:00+09:00"), "{result}");
}

#[tokio::test]
async fn unit_convert_converts_within_a_category_only() {
    let result = value(&call("unit_convert", json!({"value": 1.0, "from": "mile", "to": "kilometer"})).await);
    assert!((result["value"].as_f64().unwrap() - 1.609344).abs() < 1e-12, "{result}");
    let output = call("unit_convert", json!({"value": 1.0, "from": "mile", "to": "kilogram"})).await;
    assert_eq!(kind(&output), "rejected_arguments");
    let output = call("unit_convert", json!({"value": 1.0, "from": "mile", "to": "parsec"})).await;
    assert_eq!(kind(&output), "invalid_arguments", "unit names are an enum in the schema");
}
