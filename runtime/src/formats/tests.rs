use serde_json::{Value, json};

use super::*;
use crate::tool::definition::ToolAnnotations;

fn definition(parameters: Value) -> ToolDefinition {
    ToolDefinition {
        name: "probe".into(),
        title: None,
        description: "A tool for tests.".into(),
        version: "1.0.0".into(),
        parameters,
        output_schema: None,
        annotations: ToolAnnotations::default(),
    }
}

fn parameters(format: Format, schema: Value) -> Value {
    let tool = definition(schema).to_format(format).unwrap();
    match format {
        Format::OpenAiChat | Format::OpenAiChatStrict => tool["function"]["parameters"].clone(),
        Format::Anthropic | Format::AnthropicStrict => tool["input_schema"].clone(),
        Format::GeminiJsonSchema => tool["parametersJsonSchema"].clone(),
        Format::Mcp | Format::McpStrict => tool["inputSchema"].clone(),
        _ => tool["parameters"].clone(),
    }
}

fn unconvertible(format: Format, schema: Value) -> FormatError {
    definition(schema).to_format(format).unwrap_err()
}

/// Arguments with an optional string, an optional map, a free-form value and a choice.
fn everyday_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Some text."},
            "limit": {"type": "integer", "minimum": 0, "format": "uint", "default": 10},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "default": {"a": "b"}},
            "document": {"description": "Any JSON."},
            "mode": {"$ref": "#/$defs/Mode", "description": "How to go."}
        },
        "required": ["text", "mode"],
        "$defs": {"Mode": {"oneOf": [
            {"const": "fast", "type": "string", "description": "Quickly."},
            {"const": "slow", "type": "string", "description": "Carefully."}
        ]}}
    })
}

#[test]
fn openai_strict_requires_every_property_and_closes_every_object() {
    let schema = parameters(Format::OpenAiChatStrict, everyday_schema());
    assert_eq!(schema["required"], json!(["document", "labels", "limit", "mode", "text"]));
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("$schema").is_none());
    let text = &schema["properties"]["text"];
    assert_eq!(text["type"], "string", "required stays non-null");
    assert_eq!(text["description"], "Some text. 1 to 100 characters.", "length bounds in words");
    assert!(text.get("minLength").is_none());
    let limit = &schema["properties"]["limit"];
    assert_eq!(limit["type"], json!(["integer", "null"]), "optional means nullable");
    assert_eq!(limit["minimum"], 0, "OpenAI strict keeps numeric bounds");
    assert!(limit.get("format").is_none(), "schemars' `uint` is not a format OpenAI knows");
    assert_eq!(limit["description"], "Default: 10. null means not given.");
    let labels = &schema["properties"]["labels"];
    assert_eq!(labels["type"], json!(["array", "null"]), "a map is a list of entries");
    assert_eq!(labels["items"]["required"], json!(["key", "value"]));
    assert_eq!(labels["items"]["additionalProperties"], false);
    assert_eq!(schema["properties"]["document"]["type"], json!(["string", "null"]), "any value as JSON text");
    assert_eq!(
        schema["properties"]["mode"],
        json!({"type": "string", "enum": ["fast", "slow"], "description": "How to go. One of: `fast`: Quickly; `slow`: Carefully."}),
        "a `$ref` with a description is written out, a choice of constants is an enum"
    );
    assert!(schema.get("$defs").is_none(), "no definition is referenced any more");
}

#[test]
fn a_reference_without_siblings_stays_a_reference() {
    let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A"}},
        "required": ["a", "b"], "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}});
    let strict = parameters(Format::OpenAiChatStrict, schema);
    assert_eq!(strict["properties"]["a"], json!({"$ref": "#/$defs/A"}));
    assert_eq!(strict["$defs"]["A"]["additionalProperties"], false);
}

#[test]
fn anthropic_strict_leaves_out_a_null_that_only_means_not_given() {
    let schema = json!({"type": "object", "properties": {
        "glob": {"type": ["string", "null"], "default": null},
        "maybe": {"type": ["string", "null"]}
    }});
    let strict = parameters(Format::AnthropicStrict, schema);
    assert_eq!(strict["properties"]["glob"], json!({"type": "string"}));
    assert_eq!(strict["properties"]["maybe"]["type"], json!(["string", "null"]), "a null that means something stays");
}

#[test]
fn gemini_enums_are_strings_and_other_constants_are_words() {
    let schema = json!({"type": "object", "properties": {"level": {"type": "integer", "enum": [1, 2, 3]},
        "either": {"type": ["string", "integer"]}}});
    let gemini = parameters(Format::Gemini, schema);
    assert_eq!(gemini["properties"]["level"], json!({"type": "INTEGER", "description": "One of: 1, 2, 3."}));
    assert_eq!(gemini["properties"]["either"], json!({"anyOf": [{"type": "INTEGER"}, {"type": "STRING"}]}));
}

#[test]
fn anthropic_strict_keeps_optional_properties_but_drops_bounds_into_words() {
    let schema = parameters(Format::AnthropicStrict, everyday_schema());
    assert_eq!(schema["required"], json!(["text", "mode"]));
    assert_eq!(schema["additionalProperties"], false);
    let limit = &schema["properties"]["limit"];
    assert_eq!(limit["type"], "integer");
    assert!(limit.get("minimum").is_none());
    assert_eq!(limit["description"], "At least 0.");
    assert_eq!(limit["default"], 10);
    assert_eq!(schema["properties"]["labels"]["type"], "array");
    assert_eq!(schema["properties"]["labels"]["default"], json!([{"key": "a", "value": "b"}]), "a map's default too");
}

#[test]
fn gemini_parameters_inline_references_and_use_openapi_types() {
    let schema = parameters(Format::Gemini, everyday_schema());
    assert_eq!(schema["type"], "OBJECT");
    assert!(schema.get("$defs").is_none() && schema.get("additionalProperties").is_none());
    let mode = &schema["properties"]["mode"];
    assert_eq!(mode["type"], "STRING");
    assert_eq!(mode["enum"], json!(["fast", "slow"]));
    assert_eq!(mode["description"], "How to go. One of: `fast`: Quickly; `slow`: Carefully.");
    assert_eq!(schema["properties"]["text"]["maxLength"], 100, "Gemini keeps length bounds");
    assert_eq!(schema["properties"]["labels"]["type"], "ARRAY");
    let nullable =
        parameters(Format::Gemini, json!({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}));
    assert_eq!(nullable["properties"]["n"], json!({"type": "INTEGER", "nullable": true}));
}

#[test]
fn formats_without_a_subset_pass_the_schema_through() {
    let mut expected = everyday_schema();
    expected.as_object_mut().unwrap().remove("$schema");
    for format in [Format::OpenAiChat, Format::Anthropic, Format::GeminiJsonSchema] {
        assert_eq!(parameters(format, everyday_schema()), expected, "{format}");
    }
}

#[test]
fn mcp_lists_standard_json_schema_that_accepts_what_the_tool_does() {
    let listed = parameters(Format::Mcp, everyday_schema());
    let mut expected = everyday_schema();
    // schemars' `uint` goes; its `minimum: 0` was there already.
    expected["properties"]["limit"].as_object_mut().unwrap().remove("format");
    // The choice of constants is written out, its constants' descriptions in words.
    expected["properties"]["mode"] = json!({"type": "string", "enum": ["fast", "slow"],
        "description": "How to go. One of: `fast`: Quickly; `slow`: Carefully."});
    expected.as_object_mut().unwrap().remove("$defs");
    assert_eq!(listed, expected);
    // A schema with nothing to change is listed as it is, `$schema` included.
    let plain = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"when": {"type": "string", "format": "date-time"}, "n": {"type": "integer", "minimum": 1}}});
    assert_eq!(parameters(Format::Mcp, plain.clone()), plain);
}

#[test]
fn mcp_drops_formats_json_schema_does_not_define_and_keeps_their_ranges() {
    let schema = json!({"type": "object", "properties": {
        "byte": {"type": "integer", "format": "uint8"},
        "port": {"type": ["integer", "null"], "format": "uint16", "minimum": 1},
        "offset": {"type": "integer", "format": "int32", "maximum": 10},
        "big": {"type": "integer", "format": "int64"},
        "ratio": {"type": "number", "format": "double"},
        "phone": {"type": "string", "format": "phone"},
        "email": {"type": "string", "format": "email"},
        "list": {"type": "array", "items": {"type": "integer", "format": "uint64"}, "prefixItems": [{"format": "float"}]},
        "map": {"type": "object", "additionalProperties": {"type": "number", "format": "float"}},
        "either": {"anyOf": [{"type": "integer", "format": "uint"}, {"type": "null"}]},
        // Data, not schemas: left as they are.
        "example": {"type": "object", "default": {"format": "uint8"}, "const": {"format": "uint8"}}
    }});
    let listed = parameters(Format::Mcp, schema);
    let properties = &listed["properties"];
    assert_eq!(properties["byte"], json!({"type": "integer", "minimum": 0, "maximum": 255}));
    assert_eq!(properties["port"], json!({"type": ["integer", "null"], "minimum": 1, "maximum": 65535}));
    assert_eq!(properties["offset"], json!({"type": "integer", "minimum": i32::MIN, "maximum": 10}));
    assert_eq!(properties["big"], json!({"type": "integer"}));
    assert_eq!(properties["ratio"], json!({"type": "number"}));
    assert_eq!(properties["phone"], json!({"type": "string"}));
    assert_eq!(properties["email"], json!({"type": "string", "format": "email"}));
    assert_eq!(
        properties["list"],
        json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "prefixItems": [{}]})
    );
    assert_eq!(properties["map"]["additionalProperties"], json!({"type": "number"}));
    assert_eq!(properties["either"]["anyOf"][0], json!({"type": "integer", "minimum": 0}));
    assert_eq!(properties["example"]["default"], json!({"format": "uint8"}));
    assert_eq!(properties["example"]["const"], json!({"format": "uint8"}));
}

#[test]
fn mcp_writes_out_references_to_choices_of_constants_and_keeps_the_others() {
    let schema = json!({"type": "object", "properties": {
        "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}], "default": null},
        "size": {"$ref": "#/$defs/Size"},
        "flags": {"$ref": "#/$defs/Flags"}
    }, "$defs": {
        "Unit": {"description": "A unit.", "oneOf": [
            {"const": "m", "type": "string", "description": "Meters, centimeters, ..."},
            {"const": "s", "type": "string", "description": "Seconds."}
        ]},
        "Size": {"anyOf": [{"const": 1}, {"const": 2}]},
        "Flags": {"type": "object", "properties": {"unit": {"$ref": "#/$defs/Unit"}, "count": {"type": "integer", "format": "uint32"}}}
    }});
    let listed = parameters(Format::Mcp, schema);
    let unit = json!({"type": "string", "enum": ["m", "s"],
        "description": "A unit. One of: `m`: Meters, centimeters, ...; `s`: Seconds."});
    assert_eq!(listed["properties"]["unit"]["anyOf"][0], unit, "an ellipsis keeps its dots");
    assert_eq!(listed["properties"]["size"], json!({"type": "integer", "enum": [1, 2]}));
    assert_eq!(listed["properties"]["flags"], json!({"$ref": "#/$defs/Flags"}));
    assert_eq!(
        listed["$defs"],
        json!({"Flags": {"type": "object", "properties": {"unit": unit, "count": {"type": "integer", "minimum": 0, "maximum": u32::MAX}}}}),
        "definitions written out everywhere are gone"
    );
}

#[test]
fn mcp_output_schemas_are_standard_too() {
    let mut tool = definition(json!({"type": "object"}));
    tool.output_schema =
        Some(json!({"type": "object", "properties": {"n": {"type": "integer", "format": "uint64", "minimum": 0},
        "kind": {"$ref": "#/$defs/Kind"}}, "$defs": {"Kind": {"oneOf": [{"const": "a"}, {"const": "b"}]}}}));
    for format in [Format::Mcp, Format::McpStrict] {
        let listed = tool.to_format(format).unwrap();
        assert_eq!(
            listed["outputSchema"],
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0},
                "kind": {"type": "string", "enum": ["a", "b"]}}}),
            "{format}"
        );
    }
}

#[test]
fn mcp_strict_is_openai_strict_with_every_reference_written_out() {
    let mut schema = everyday_schema();
    schema["properties"]["maybe_mode"] =
        json!({"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}], "default": null});
    let listed = parameters(Format::McpStrict, schema.clone());
    let openai = parameters(Format::OpenAiChatStrict, schema.clone());
    assert!(!listed.to_string().contains("$ref"), "{listed}");
    assert_eq!(openai["properties"]["maybe_mode"]["anyOf"][0], json!({"$ref": "#/$defs/Mode"}));
    assert_eq!(listed["properties"]["maybe_mode"]["anyOf"][0], openai["$defs"]["Mode"]);
    for name in ["text", "limit", "labels", "document", "mode"] {
        assert_eq!(listed["properties"][name], openai["properties"][name], "{name}");
    }
    assert_eq!(listed["required"], openai["required"]);
    let tool = definition(schema).to_format(Format::McpStrict).unwrap();
    assert!(tool.get("function").is_none() && tool["name"] == "probe", "an MCP tool: {tool}");

    // A definition that contains itself stays a `$ref`, once.
    let tree = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}});
    let listed = parameters(Format::McpStrict, tree);
    let node = &listed["$defs"]["Node"];
    assert_eq!(node["properties"]["children"]["items"], json!({"$ref": "#/$defs/Node"}));
    assert_eq!(listed["properties"]["root"]["properties"]["children"]["items"], json!({"$ref": "#/$defs/Node"}));
}

#[test]
fn calls_against_mcp_strict_are_repaired_like_openai_strict_ones() {
    let sent = json!({"text": "hi", "mode": "fast", "limit": null, "labels": [{"key": "a", "value": "x"}],
        "document": "[1]"});
    assert!(Format::McpStrict.is_strict());
    assert_eq!(
        repair(Format::McpStrict, &everyday_schema(), sent.clone()),
        repair(Format::OpenAiChatStrict, &everyday_schema(), sent)
    );
    assert!(!Format::Mcp.is_strict());
}

#[test]
fn recursion_is_refused_where_a_format_has_none_and_kept_where_it_has() {
    let tree = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}});
    let error = unconvertible(Format::AnthropicStrict, tree.clone());
    assert_eq!(error.pointer, "/$defs/Node/properties/children/items");
    assert!(error.rule.contains("recursive"), "{error}");
    let error = unconvertible(Format::Gemini, tree.clone());
    assert!(error.rule.contains("contains itself"), "{error}");
    assert_eq!(
        error.to_string(),
        format!(
            "tool `probe` cannot be exported as gemini: at {} of its parameters schema, {}. Export it in another \
             format, or change the tool's schema",
            error.pointer, error.rule
        )
    );
    let strict = parameters(Format::OpenAiChatStrict, tree);
    assert_eq!(strict["$defs"]["Node"]["properties"]["children"]["items"]["$ref"], "#/$defs/Node");
}

#[test]
fn what_no_format_can_express_is_an_error_naming_the_place_and_rule() {
    let error = unconvertible(
        Format::OpenAiChatStrict,
        json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"minLength": 2}]}}}),
    );
    assert_eq!((error.pointer.as_str(), error.tool.as_str()), ("/properties/a", "probe"));
    let error = unconvertible(Format::OpenAiChatStrict, json!({"type": "string"}));
    assert!(error.rule.contains("object at the root"), "{error}");
    let error = unconvertible(
        Format::Gemini,
        json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}, "additionalProperties": {"type": "string"}}}}),
    );
    assert!(error.rule.contains("fixed properties"), "{error}");
}

#[test]
fn openai_strict_size_limits_are_checked() {
    let mut nested = json!({"type": "string"});
    for _ in 0..11 {
        nested = json!({"type": "object", "properties": {"inner": nested}, "required": ["inner"]});
    }
    let error = unconvertible(Format::OpenAiChatStrict, nested);
    assert!(error.rule.contains("at most 10 levels of nesting; this schema has 11"), "{error}");
    let values: Vec<String> = (0..1001).map(|n| format!("v{n}")).collect();
    let error =
        unconvertible(Format::OpenAiChatStrict, json!({"type": "object", "properties": {"e": {"enum": values}}}));
    assert!(error.rule.contains("1000 enum values"), "{error}");
}

#[test]
fn names_follow_each_providers_rule() {
    let mut tool = definition(json!({"type": "object"}));
    tool.name = "has space".into();
    for format in [Format::OpenAiChat, Format::AnthropicStrict, Format::Gemini] {
        let error = tool.to_format(format).unwrap_err();
        assert!(error.rule.contains("`has space` is not one"), "{error}");
    }
    assert!(tool.to_format(Format::Mcp).is_ok());
}

#[test]
fn gemini_tools_are_one_tool_of_function_declarations() {
    let tools = Format::Gemini.tools([&definition(json!({"type": "object"}))]).unwrap();
    assert_eq!(tools[0]["functionDeclarations"][0]["name"], "probe");
    let tools = Format::OpenAiResponses.tools([&definition(json!({"type": "object"}))]).unwrap();
    assert_eq!(tools[0]["strict"], false);
}

#[test]
fn format_names_round_trip() {
    for format in Format::ALL {
        assert_eq!(format.name().parse::<Format>(), Ok(format));
    }
    assert!("openai-stric".parse::<Format>().unwrap_err().contains("openai-strict"));
}

#[test]
fn repair_undoes_what_a_strict_format_made_the_model_send() {
    let schema = everyday_schema();
    let sent = json!({
        "text": "hi", "mode": "fast", "limit": null,
        "labels": [{"key": "a", "value": "x"}, {"key": "b", "value": "y"}],
        "document": "{\"k\": [1, 2]}"
    });
    let repaired = repair(Format::OpenAiChatStrict, &schema, sent.clone());
    assert_eq!(
        repaired,
        json!({"text": "hi", "mode": "fast", "labels": {"a": "x", "b": "y"}, "document": {"k": [1, 2]}})
    );
    assert_eq!(repair(Format::OpenAiChat, &schema, sent.clone()), sent, "non-strict formats are left alone");
}

#[test]
fn repair_never_changes_what_the_tool_accepts_as_it_is() {
    let schema = json!({"type": "object", "properties": {
        "maybe": {"type": ["string", "null"]},
        "map": {"type": "object", "additionalProperties": {"type": "integer"}},
        "any": {}
    }});
    let accepted = json!({"maybe": null, "map": {"a": 1}, "any": [1, 2]});
    assert_eq!(repair(Format::OpenAiChatStrict, &schema, accepted.clone()), accepted);
    let not_json = json!({"any": "plain words"});
    assert_eq!(repair(Format::OpenAiChatStrict, &schema, not_json.clone()), not_json);
    let duplicate_keys = json!({"map": [{"key": "a", "value": 1}, {"key": "a", "value": 2}]});
    assert_eq!(
        repair(Format::OpenAiChatStrict, &schema, duplicate_keys.clone()),
        duplicate_keys,
        "left for the runtime to refuse"
    );
}

fn calls(format: Format, message: Value) -> Vec<(String, String, Arguments)> {
    let probe = definition(everyday_schema());
    tool_calls(format, &message, |name| (name == "probe").then_some(&probe))
        .unwrap()
        .into_iter()
        .map(|call| (call.id, call.name, call.arguments))
        .collect()
}

use crate::tool::error::CallError;
use crate::tool::io::{Arguments, Diagnostics, ToolOutput, Usage};

#[test]
fn openai_chat_tool_calls_keep_their_json_text_unless_strict_needs_repair() {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "probe", "arguments": "{\"text\": \"x\", \"mode\": \"fast\", \"limit\": null}"}},
        {"id": "call_b", "type": "function", "function": {"name": "other", "arguments": "{not json"}}
    ]});
    let plain = calls(Format::OpenAiChat, message.clone());
    assert_eq!(plain[0].2, Arguments::Json("{\"text\": \"x\", \"mode\": \"fast\", \"limit\": null}".into()));
    let strict = calls(Format::OpenAiChatStrict, json!({"choices": [{"message": message}]}));
    assert_eq!(strict[0], ("call_a".into(), "probe".into(), Arguments::Value(json!({"text": "x", "mode": "fast"}))));
    assert_eq!(strict[1].2, Arguments::Json("{not json".into()), "left for the runtime to call malformed");
}

#[test]
fn responses_anthropic_and_gemini_calls_are_read_in_order() {
    let responses = calls(
        Format::OpenAiResponses,
        json!({"output": [
            {"type": "message", "role": "assistant", "content": []},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "probe", "arguments": "{}"}
        ]}),
    );
    assert_eq!(responses, [("call_1".into(), "probe".into(), Arguments::Json("{}".into()))]);
    let anthropic = calls(
        Format::Anthropic,
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "probe", "input": {"text": "x"}}
        ]}),
    );
    assert_eq!(anthropic, [("toolu_1".into(), "probe".into(), Arguments::Value(json!({"text": "x"})))]);
    let gemini = calls(
        Format::Gemini,
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "probe", "args": {"labels": [{"key": "k", "value": "v"}]}}},
            {"functionCall": {"id": "abc", "name": "other"}}
        ]}}]}),
    );
    assert_eq!(gemini[0], ("call_0".into(), "probe".into(), Arguments::Value(json!({"labels": {"k": "v"}}))));
    assert_eq!(gemini[1], ("abc".into(), "other".into(), Arguments::Value(json!({}))));
}

#[test]
fn a_message_in_the_wrong_shape_says_what_is_missing() {
    let error = tool_calls(Format::OpenAiChat, &json!({"tool_calls": [{"id": "x"}]}), |_| None).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("not a message with tool calls in the openai shape: tool_calls[0] has no `function`. Pass"),
        "{error}"
    );
    assert!(tool_calls(Format::Mcp, &json!({}), |_| None).is_err());
    assert!(tool_calls(Format::Gemini, &json!({"role": "model"}), |_| None).unwrap_err().reason.contains("parts"));
}

#[test]
fn result_messages_answer_each_call_in_the_providers_shape() {
    let ok = ToolOutput::success(
        &crate::tool::io::ToolCall::new("call_1", "probe", json!({})),
        "{\"v\":1}".into(),
        Usage::default(),
        Diagnostics::default(),
    );
    let failed = ToolOutput::failure(
        &crate::tool::io::ToolCall::new("toolu_2", "probe", json!({})),
        CallError::Internal { message: "broke".into() },
        Usage::default(),
        Diagnostics::default(),
    );
    let outputs = [ok, failed];
    assert_eq!(
        result_messages(Format::OpenAiChatStrict, &outputs)[0],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"v\":1}"})
    );
    assert_eq!(result_messages(Format::OpenAiResponses, &outputs)[1]["type"], "function_call_output");
    let anthropic = result_messages(Format::Anthropic, &outputs);
    assert_eq!(anthropic.len(), 1);
    assert_eq!(anthropic[0]["content"][1]["is_error"], true);
    assert_eq!(anthropic[0]["content"][1]["tool_use_id"], "toolu_2");
    let gemini = &result_messages(Format::Gemini, &outputs)[0];
    assert_eq!(
        gemini["parts"][0]["functionResponse"],
        json!({"name": "probe", "response": {"output": {"v": 1}}}),
        "`call_1` is the id given to a call without one"
    );
    assert_eq!(gemini["parts"][1]["functionResponse"]["id"], "toolu_2");
    assert!(gemini["parts"][1]["functionResponse"]["response"]["error"].is_string());
    let mcp = result_messages(Format::Mcp, &outputs);
    assert_eq!(
        mcp[0],
        json!({"content": [{"type": "text", "text": "{\"v\":1}"}], "isError": false, "structuredContent": {"v": 1}})
    );
    assert_eq!(mcp[1]["isError"], true);
}

#[test]
fn mcp_lists_an_output_schema_only_when_every_result_is_an_object() {
    let mut tool = definition(json!({"type": "object"}));
    let output_schema = |tool: &ToolDefinition| tool.to_format(Format::Mcp).unwrap().get("outputSchema").cloned();
    tool.output_schema = Some(json!({"type": "object"}));
    assert_eq!(output_schema(&tool), Some(json!({"type": "object"})));
    tool.output_schema = Some(json!({"oneOf": [{"type": "object"}, {"type": "object"}]}));
    assert_eq!(
        output_schema(&tool),
        Some(json!({"type": "object", "oneOf": [{"type": "object"}, {"type": "object"}]}))
    );
    for not_objects in [
        json!({"type": "string"}),
        json!({"oneOf": [{"type": "object"}, {"type": "string"}]}),
        json!({"anyOf": []}),
        json!({"$ref": "#/$defs/Result"}),
    ] {
        tool.output_schema = Some(not_objects.clone());
        assert_eq!(output_schema(&tool), None, "{not_objects}");
    }
}

#[test]
fn constants_without_a_type_get_the_type_of_their_values() {
    let schema = json!({"type": "object", "properties": {"unit": {"enum": ["c", "f"]}, "on": {"const": true}},
        "required": ["unit", "on"]});
    let strict = parameters(Format::OpenAiChatStrict, schema);
    assert_eq!(strict["properties"]["unit"], json!({"type": "string", "enum": ["c", "f"]}));
    assert_eq!(strict["properties"]["on"], json!({"type": "boolean", "const": true}));
}

/// Each definition uses the next twice: 2^40 schemas once written out.
#[test]
fn a_schema_that_explodes_when_written_out_is_refused_quickly() {
    let mut defs = serde_json::Map::new();
    for level in 0..40 {
        defs.insert(
            format!("D{level}"),
            json!({"type": "object", "properties": {"a": {"$ref": format!("#/$defs/D{}", level + 1)}, "b": {"$ref": format!("#/$defs/D{}", level + 1)}}}),
        );
    }
    defs.insert("D40".into(), json!({"type": "string"}));
    let schema = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    for format in [Format::Gemini, Format::AnthropicStrict, Format::OpenAiChatStrict] {
        match definition(schema.clone()).to_format(format) {
            Ok(_) => assert_ne!(format, Format::Gemini, "Gemini writes every `$ref` out"),
            Err(error) => assert!(error.rule.contains("too large"), "{format}: {error}"),
        }
    }
}

fn named(name: &str) -> ToolDefinition {
    ToolDefinition { name: name.into(), ..definition(json!({"type": "object", "properties": {}})) }
}

fn tool_names(names: &[&str]) -> std::collections::BTreeSet<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

/// `alpha` deferred, `beta` callable from code, `gamma` neither.
fn marked_options() -> ExportOptions {
    ExportOptions::new().deferring(Deferral::Only(tool_names(&["alpha"]))).callable_from_code(["beta"])
}

fn three_tools() -> [ToolDefinition; 3] {
    [named("alpha"), named("beta"), named("gamma")]
}

#[test]
fn without_options_every_format_exports_as_tools_does() {
    let tools = three_tools();
    for format in Format::ALL {
        assert_eq!(
            format.tools_with(&tools, &ExportOptions::new()).unwrap(),
            format.tools(&tools).unwrap(),
            "{format}"
        );
        assert_eq!(tools[0].to_format_marked(format, ToolMarks::NONE).unwrap(), tools[0].to_format(format).unwrap());
    }
}

#[test]
fn openai_responses_marks_each_tool_and_adds_tool_search_and_programmatic_calling() {
    for format in [Format::OpenAiResponses, Format::OpenAiResponsesStrict] {
        let tools = format.tools_with(&three_tools(), &marked_options()).unwrap();
        let tools = tools.as_array().unwrap();
        let plain = |index: usize| three_tools()[index].to_format(format).unwrap();
        let mut alpha = plain(0);
        alpha["defer_loading"] = json!(true);
        let mut beta = plain(1);
        beta["allowed_callers"] = json!(["direct", "programmatic"]);
        assert_eq!(
            tools,
            &[alpha, beta, plain(2), json!({"type": "tool_search"}), json!({"type": "programmatic_tool_calling"})],
            "{format}"
        );
    }
}

#[test]
fn anthropic_names_its_code_execution_tool_as_the_caller_and_adds_it_with_tool_search() {
    for format in [Format::Anthropic, Format::AnthropicStrict] {
        let tools = format.tools_with(&three_tools(), &marked_options()).unwrap();
        assert_eq!(tools[0]["defer_loading"], true, "{format}");
        assert!(tools[0].get("allowed_callers").is_none());
        assert_eq!(tools[1]["allowed_callers"], json!(["direct", "code_execution_20250825"]));
        assert!(tools[1].get("defer_loading").is_none());
        assert_eq!(tools[2], three_tools()[2].to_format(format).unwrap());
        assert_eq!(tools[3], json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}));
        assert_eq!(tools[4], json!({"type": "code_execution_20250825", "name": "code_execution"}));
        assert_eq!(tools.as_array().unwrap().len(), 5);
    }
}

#[test]
fn mcp_carries_the_marks_under_meta_and_adds_no_tools() {
    let tools = Format::Mcp.tools_with(&three_tools(), &marked_options()).unwrap();
    assert_eq!(tools[0]["_meta"], json!({"toolcell/deferLoading": true}));
    assert_eq!(
        tools[1]["_meta"],
        json!({"toolcell/allowedCallers": ["direct", "programmatic"], "anthropic/alwaysLoad": true})
    );
    assert_eq!(tools[2]["_meta"], json!({"anthropic/alwaysLoad": true}), "kept loaded where Claude Code defers");
    assert_eq!(tools.as_array().unwrap().len(), 3);
    let callers_only = ExportOptions::new().callable_from_code(["beta"]);
    let tools = Format::Mcp.tools_with(&three_tools(), &callers_only).unwrap();
    assert!(tools[0].get("_meta").is_none(), "nothing deferred: no mark, no `_meta`");
    assert_eq!(tools[1]["_meta"], json!({"toolcell/allowedCallers": ["direct", "programmatic"]}));
    let loaded = named("alpha").to_format_marked(Format::Anthropic, ToolMarks::NONE.with_always_loaded(true));
    assert_eq!(loaded.unwrap(), named("alpha").to_format(Format::Anthropic).unwrap(), "loaded anyway");
    let both = ToolMarks::NONE.with_deferred(true).with_code_callable(true);
    let strict = named("alpha").to_format_marked(Format::McpStrict, both).unwrap();
    assert_eq!(
        strict["_meta"],
        json!({DEFER_LOADING_META_KEY: true, ALLOWED_CALLERS_META_KEY: ["direct", "programmatic"]})
    );
}

#[test]
fn every_tool_deferred_and_only_needed_provider_tools_added() {
    let all = ExportOptions::new().deferring(Deferral::All);
    let tools = Format::OpenAiResponses.tools_with(&three_tools(), &all).unwrap();
    let tools = tools.as_array().unwrap();
    assert!(tools[..3].iter().all(|tool| tool["defer_loading"] == true), "{tools:?}");
    assert_eq!(&tools[3..], &[json!({"type": "tool_search"})], "nothing is callable from code");
    let none_marked =
        ExportOptions::new().deferring(Deferral::Only(tool_names(&[]))).callable_from_code(Vec::<String>::new());
    assert_eq!(
        Format::Anthropic.tools_with(&three_tools(), &none_marked).unwrap(),
        Format::Anthropic.tools(&three_tools()).unwrap(),
        "empty selections mark nothing and need no provider tool"
    );
}

#[test]
fn a_namespace_wraps_the_functions_which_keep_their_marks() {
    let options = marked_options().in_namespace(Namespace::new("toolbox", "Sandboxed helpers."));
    let tools = Format::OpenAiResponsesStrict.tools_with(&three_tools(), &options).unwrap();
    let unwrapped = Format::OpenAiResponsesStrict.tools_with(&three_tools(), &marked_options()).unwrap();
    assert_eq!(
        tools,
        json!([
            {"type": "namespace", "name": "toolbox", "description": "Sandboxed helpers.", "tools": unwrapped.as_array().unwrap()[0..3]},
            {"type": "tool_search"},
            {"type": "programmatic_tool_calling"}
        ])
    );
    assert!(tools[0].get("defer_loading").is_none(), "a namespace is never deferred itself");
}

#[test]
fn a_listing_namespace_describes_itself_by_its_tools() {
    let few = Namespace::listing("toolbox", &three_tools());
    assert_eq!(few.description, "Tools: alpha, beta, gamma.");
    let many: Vec<ToolDefinition> = (0..12).map(|index| named(&format!("t{index}"))).collect();
    assert_eq!(
        Namespace::listing("toolbox", &many).description,
        "Tools: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 and 2 more."
    );
}

#[test]
fn formats_without_the_fields_refuse_the_options() {
    let defer = ExportOptions::new().deferring(Deferral::All);
    let callers = ExportOptions::new().callable_from_code(["alpha"]);
    let namespace = ExportOptions::new().in_namespace(Namespace::new("toolbox", "Helpers."));
    let unsupported = |format: Format, options: &ExportOptions| match format.tools_with(&three_tools(), options) {
        Err(ExportError::Unsupported { field, .. }) => field,
        other => panic!("{format}: {other:?}"),
    };
    for format in [Format::OpenAiChat, Format::OpenAiChatStrict, Format::Gemini, Format::GeminiJsonSchema] {
        assert_eq!(unsupported(format, &defer), "defer_loading");
        assert_eq!(unsupported(format, &callers), "allowed_callers");
        assert_eq!(unsupported(format, &namespace), "namespace");
        let marked = named("alpha").to_format_marked(format, ToolMarks::NONE.with_deferred(true));
        assert!(matches!(marked, Err(ExportError::Unsupported { .. })), "{format}");
    }
    for format in [Format::Anthropic, Format::AnthropicStrict, Format::Mcp, Format::McpStrict] {
        assert_eq!(unsupported(format, &namespace), "namespace");
    }
    let error = unsupported_message(Format::OpenAiChat, &defer);
    assert_eq!(
        error,
        "openai tools have no `defer_loading`: only the formats openai-responses, openai-responses-strict, \
         anthropic, anthropic-strict, mcp, mcp-strict carry it. Export in one of those, or leave the option out"
    );
}

fn unsupported_message(format: Format, options: &ExportOptions) -> String {
    format.tools_with(&three_tools(), options).unwrap_err().to_string()
}

#[test]
fn options_naming_tools_not_exported_or_a_bad_namespace_are_refused_with_what_to_do() {
    let misspelt = ExportOptions::new().deferring(Deferral::Only(tool_names(&["alpha", "gama"])));
    assert_eq!(
        unsupported_message(Format::Anthropic, &misspelt),
        "`defer_loading` names tool `gama`, which is not among the tools exported (did you mean `gamma`?): name \
         exported tools only (see `toolcell list`)"
    );
    let unknown = ExportOptions::new().callable_from_code(["zzz"]);
    let error = unsupported_message(Format::OpenAiResponses, &unknown);
    assert!(
        error.starts_with("`allowed_callers` names tool `zzz`, which is not among the tools exported: name"),
        "{error}"
    );
    let namespace =
        |name: &str, description: &str| ExportOptions::new().in_namespace(Namespace::new(name, description));
    let error = unsupported_message(Format::OpenAiResponses, &namespace("beta", "Helpers."));
    assert!(error.starts_with("namespace `beta` is named like one of its tools"), "{error}");
    assert!(error.ends_with("e.g. `beta_tools`"), "{error}");
    let error = unsupported_message(Format::OpenAiResponses, &namespace("tool box", "Helpers."));
    assert!(error.starts_with("namespace `tool box` has a name the provider does not take (OpenAI takes"), "{error}");
    let error = unsupported_message(Format::OpenAiResponses, &namespace("toolbox", "  "));
    assert!(error.contains("empty description, which OpenAI requires"), "{error}");
}

#[test]
fn a_tool_named_like_the_provider_tool_the_options_add_is_refused() {
    let tools = [named("code_execution"), named("alpha")];
    let callers = ExportOptions::new().callable_from_code(["alpha"]);
    let error = Format::Anthropic.tools_with(&tools, &callers).unwrap_err();
    assert_eq!(error, ExportError::NamedLikeProviderTool { name: "code_execution".into() });
    assert!(error.to_string().contains("rename the tool, or leave the option out"), "{error}");
    let deferring = ExportOptions::new().deferring(Deferral::All);
    assert!(Format::Anthropic.tools_with(&tools, &deferring).is_ok(), "tool search has another name");
    assert!(Format::OpenAiResponses.tools_with(&tools, &callers).is_ok(), "OpenAI's tools have no names");
}

fn output(call_id: &str) -> ToolOutput {
    ToolOutput::success(
        &crate::tool::io::ToolCall::new(call_id, "probe", json!({})),
        "1".into(),
        Usage::default(),
        Diagnostics::default(),
    )
}

#[test]
fn a_program_callers_call_is_answered_with_its_caller_and_namespaced_calls_find_their_tool() {
    let caller = json!({"type": "program", "caller_id": "prog_1"});
    let message = json!({"output": [
        {"type": "function_call", "call_id": "call_1", "name": "probe", "namespace": "toolbox", "arguments": "{}",
         "caller": caller},
        {"type": "function_call", "call_id": "call_2", "name": "probe", "namespace": "probe", "arguments": "{}"},
        {"type": "function_call", "call_id": "call_3", "name": "probe", "arguments": "{}",
         "caller": {"type": "direct"}}
    ]});
    let read = calls(Format::OpenAiResponses, message.clone());
    assert_eq!(
        read.iter().map(|(id, name, _)| (id.as_str(), name.as_str())).collect::<Vec<_>>(),
        [("call_1", "probe"), ("call_2", "probe"), ("call_3", "probe")]
    );
    let answers = replies(Format::OpenAiResponses, &message, &[output("call_1"), output("call_2"), output("call_3")]);
    assert_eq!(
        answers[0],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "1", "caller": caller})
    );
    assert!(answers[1].get("caller").is_none(), "{}", answers[1]);
    assert_eq!(answers[2]["caller"], json!({"type": "direct"}), "echoed whatever it is");
    let chat = json!({"tool_calls": [{"id": "call_1", "function": {"name": "probe", "arguments": "{}"}}]});
    assert_eq!(
        replies(Format::OpenAiChat, &chat, &[output("call_1")]),
        result_messages(Format::OpenAiChat, &[output("call_1")])
    );
}

#[test]
fn an_anthropic_call_from_code_execution_is_read_and_answered_as_any() {
    let message = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "probe",
        "input": {"text": "x"}, "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}}]});
    assert_eq!(
        calls(Format::Anthropic, message.clone()),
        [("toolu_1".into(), "probe".into(), Arguments::Value(json!({"text": "x"})))]
    );
    assert_eq!(
        replies(Format::Anthropic, &message, &[output("toolu_1")]),
        result_messages(Format::Anthropic, &[output("toolu_1")])
    );
}
