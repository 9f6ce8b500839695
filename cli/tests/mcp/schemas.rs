//! The schemas `tools/list` shows: standard ones every client accepts by default, and with
//! `--schemas strict` OpenAI strict ones whose calls are mapped back before validation.

use rmcp::model::Tool;
use serde_json::{Map, Value, json};
use toolcell_schema::formats;

use crate::common::{HttpServer, call, error_kind, stdio_client, text};

const STANDARD_TOOLS: [&str; 8] =
    ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"];

fn schemas(tool: &Tool) -> Vec<(&'static str, Value)> {
    let mut found = vec![("inputSchema", Value::Object((*tool.input_schema).clone()))];
    found.extend(tool.output_schema.as_ref().map(|schema| ("outputSchema", Value::Object((**schema).clone()))));
    found
}

/// Every object of `value` that holds a keyword, with where it is (data such as `default` and
/// `enum` values included: a `format` there would be as suspect).
fn objects<'a>(value: &'a Value, pointer: String, found: &mut Vec<(String, &'a Map<String, Value>)>) {
    match value {
        Value::Object(object) => {
            found.push((pointer.clone(), object));
            for (key, inner) in object {
                objects(inner, format!("{pointer}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                objects(inner, format!("{pointer}/{index}"), found);
            }
        }
        _ => {}
    }
}

/// A definition that is a choice of constants: a `oneOf` or `anyOf` whose every branch is a `const`.
fn is_constant_choice(definition: &Value) -> bool {
    ["oneOf", "anyOf"].iter().any(|keyword| {
        definition
            .get(*keyword)
            .and_then(Value::as_array)
            .is_some_and(|branches| !branches.is_empty() && branches.iter().all(|branch| branch.get("const").is_some()))
    })
}

#[tokio::test]
async fn by_default_every_standard_tool_lists_standard_formats_and_no_references_to_constant_choices() {
    let client = stdio_client(&[]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.iter().map(|tool| tool.name.as_ref()).collect::<Vec<_>>(), STANDARD_TOOLS);
    for tool in &tools {
        for (which, schema) in schemas(tool) {
            let mut found = Vec::new();
            objects(&schema, String::new(), &mut found);
            for (pointer, object) in found {
                if let Some(format) = object.get("format").and_then(Value::as_str) {
                    assert!(formats::is_standard(format), "{} {which}{pointer}: format `{format}`", tool.name);
                }
                if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
                    let name = reference.strip_prefix("#/$defs/").expect("a local reference");
                    let definition = &schema["$defs"][name];
                    assert!(definition.is_object(), "{} {which}{pointer}: `{reference}` has no definition", tool.name);
                    assert!(
                        !is_constant_choice(definition),
                        "{} {which}{pointer}: `{reference}` is a choice of constants, listed as a reference",
                        tool.name
                    );
                }
            }
        }
    }
    // What the tools had: schemars' integer formats, and `operation` a reference to a choice.
    let calculator = &tools[0];
    assert_eq!(
        calculator.output_schema.as_ref().unwrap()["properties"]["value"],
        json!({
        "description": "The value of the expression, a 64-bit float (about 16 significant digits).", "type": "number"})
    );
    let datetime = Value::Object((*tools[1].input_schema).clone());
    let operation = &datetime["properties"]["operation"];
    assert_eq!(operation["enum"], json!(["now", "parse", "format", "add", "difference", "convert"]));
    assert!(operation["description"].as_str().unwrap().contains("`add`: Add `duration` to `instant`"), "{operation}");
    let files = Value::Object((*tools[2].input_schema).clone());
    assert_eq!(files["properties"]["offset"]["minimum"], 0, "uint64's range stays: {}", files["properties"]["offset"]);

    // Calls are validated against the tool's own schema, as before.
    let refused =
        client.call_tool(call("files", json!({"operation": "read", "path": "/x", "offset": -1}))).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("offset"), "{}", text(&refused));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn under_schemas_strict_calls_in_the_strict_shape_succeed_over_stdio() {
    let client = stdio_client(&["--schemas", "strict"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.iter().map(|tool| tool.name.as_ref()).collect::<Vec<_>>(), STANDARD_TOOLS);
    for tool in &tools {
        let listed = Value::Object((*tool.input_schema).clone());
        assert_eq!(listed["additionalProperties"], false, "{}", tool.name);
        let properties: Vec<&String> = listed["properties"].as_object().unwrap().keys().collect();
        assert_eq!(listed["required"], json!(properties), "{}: every property is required", tool.name);
        assert!(!listed.to_string().contains("$ref"), "{}: every `$ref` is written out", tool.name);
    }
    let calculator = Value::Object((*tools[0].input_schema).clone());
    assert_eq!(calculator["properties"]["variables"]["type"], json!(["array", "null"]), "a map is a list of entries");
    let python = Value::Object((*tools[5].input_schema).clone());
    assert_eq!(python["properties"]["inputs"]["type"], json!(["string", "null"]), "any JSON is JSON text");

    let entries = json!({"expression": "x * rate",
        "variables": [{"key": "x", "value": 200}, {"key": "rate", "value": 0.5}]});
    let result = client.call_tool(call("calculator", entries)).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"value": 100.0})), "{}", text(&result));
    let nothing =
        client.call_tool(call("calculator", json!({"expression": "6 * 7", "variables": null}))).await.unwrap();
    assert_eq!(nothing.structured_content, Some(json!({"value": 42.0})), "null is not given: {}", text(&nothing));
    let program = json!({"code": "sum(inputs['a'])", "inputs": "{\"a\": [1, 2, 3]}"});
    let result = client.call_tool(call("python", program)).await.unwrap();
    assert_eq!(result.structured_content.as_ref().map(|output| &output["value"]), Some(&json!(6)), "{}", text(&result));
    // Arguments in the tool's own shape still work, and invalid ones are still refused.
    let map = client.call_tool(call("calculator", json!({"expression": "x", "variables": {"x": 1}}))).await.unwrap();
    assert_eq!(map.structured_content, Some(json!({"value": 1.0})), "{}", text(&map));
    let refused = client.call_tool(call("calculator", json!({"expression": 7, "variables": null}))).await.unwrap();
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn under_schemas_strict_calls_in_the_strict_shape_succeed_over_http() {
    let server = HttpServer::start(&["--schemas", "strict"]).await;
    let client =
        rmcp::ServiceExt::serve((), rmcp::transport::StreamableHttpClientTransport::from_uri(server.url.clone()))
            .await
            .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let fetch = tools.iter().find(|tool| tool.name == "http_fetch").unwrap();
    assert_eq!(fetch.input_schema["properties"]["headers"]["type"], json!(["array", "null"]));
    let sent = json!({"url": "not a url", "headers": [{"key": "Accept", "value": "text/plain"}],
        "max_bytes": null, "follow_redirects": null});
    let result = client.call_tool(call("http_fetch", sent)).await.unwrap();
    // Past validation (the entries are a map again, the nulls are not given) to the tool, which
    // refuses the URL itself.
    assert_eq!(error_kind(&result), "rejected_arguments", "{}", text(&result));
    assert!(text(&result).contains("has no scheme"), "{}", text(&result));
    client.cancel().await.unwrap();
}
