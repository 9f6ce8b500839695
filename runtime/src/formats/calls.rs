//! A model's tool calls in a provider's message shape, and the result messages that answer
//! them in the same shape.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{Format, repair};
use crate::tool::io::{Arguments, ToolCall, ToolOutput};

/// A message that does not hold tool calls in the shape its format says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not a message with tool calls in the {format} shape: {reason}. Pass the assistant message (or the whole \
     response) as the provider returned it, with the format its tools were given in"
)]
#[non_exhaustive]
pub struct MessageError {
    /// The format the message was read as.
    pub format: Format,
    /// What is wrong with it, and where.
    pub reason: String,
}

/// Which provider's message shapes a format uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

fn shape(format: Format) -> Option<Shape> {
    match format {
        Format::OpenAiChat | Format::OpenAiChatStrict => Some(Shape::Chat),
        Format::OpenAiResponses | Format::OpenAiResponsesStrict => Some(Shape::Responses),
        Format::Anthropic | Format::AnthropicStrict => Some(Shape::Anthropic),
        Format::Gemini | Format::GeminiJsonSchema => Some(Shape::Gemini),
        Format::Mcp | Format::McpStrict => None,
    }
}

/// The tool calls in a model's `message`, in order, with their arguments repaired for
/// `format` (see [`repair`]), ready for [`Runtime::call_all`](crate::Runtime::call_all):
/// - OpenAI Chat Completions: an assistant message with `tool_calls` (or a whole completion,
///   whose first choice is read); the arguments are JSON text, parsed by the runtime.
/// - OpenAI Responses: a response (its `output`), or a list of output items; the
///   `function_call` items are the calls.
/// - Anthropic: an assistant message (or the Messages API response); its `tool_use` blocks.
/// - Gemini: a `Content` (or a whole response, whose first candidate is read); its
///   `functionCall` parts. A part without an `id` gets `call_N`, N its position.
///
/// `definitions` finds a tool's schema to repair the arguments by; pass
/// `|name| runtime.definition(name)`.
///
/// # Errors
/// When `message` is not in the format's shape (an unknown tool or bad arguments are not
/// errors here: the runtime answers them in the result, for the model).
pub fn tool_calls<'a>(
    format: Format,
    message: &Value,
    definitions: impl Fn(&str) -> Option<&'a crate::tool::definition::ToolDefinition>,
) -> Result<Vec<ToolCall>, MessageError> {
    let fail = |reason: String| MessageError { format, reason };
    let shape =
        shape(format).ok_or_else(|| fail("MCP calls come as `tools/call` requests: use `toolcell serve`".into()))?;
    let raw = match shape {
        Shape::Chat => chat_calls(message),
        Shape::Responses => responses_calls(message),
        Shape::Anthropic => anthropic_calls(message),
        Shape::Gemini => gemini_calls(message),
    }
    .map_err(fail)?;
    Ok(raw
        .into_iter()
        .map(|RawCall { id, name, arguments }| {
            let arguments = match (arguments, definitions(&name)) {
                (Arguments::Value(value), Some(definition)) => {
                    Arguments::Value(repair(format, &definition.parameters, value))
                }
                (Arguments::Json(text), Some(definition)) if format.is_strict() => {
                    match serde_json::from_str::<Value>(&text) {
                        Ok(value) => Arguments::Value(repair(format, &definition.parameters, value)),
                        Err(_) => Arguments::Json(text),
                    }
                }
                (arguments, _) => arguments,
            };
            ToolCall::new(id, name, arguments)
        })
        .collect())
}

/// The message(s) that answer the calls in `message` with their `outputs`, as
/// [`result_messages`] gives them, with what a provider asks each answer to echo from its
/// call: a Responses `function_call` made by a program (`"caller": {"type": "program",
/// "caller_id"}`, under programmatic tool calling) gets its `caller` back on its
/// `function_call_output`, as OpenAI's Agents SDK does. `message` is the one
/// [`tool_calls`] read the calls from.
pub fn replies(format: Format, message: &Value, outputs: &[ToolOutput]) -> Vec<Value> {
    let mut replies = result_messages(format, outputs);
    if shape(format) == Some(Shape::Responses) {
        let callers = responses_callers(message);
        for reply in &mut replies {
            let caller = reply.get("call_id").and_then(Value::as_str).and_then(|id| callers.get(id));
            if let (Some(caller), Some(reply)) = (caller, reply.as_object_mut()) {
                reply.insert("caller".into(), (*caller).clone());
            }
        }
    }
    replies
}

/// The message(s) that answer `calls` with `outputs` (in the same order), in `format`'s
/// shape: one `tool` message per call (OpenAI Chat), one `function_call_output` item per call
/// (Responses), one `user` message of `tool_result` blocks (Anthropic), or one `user`
/// content of `functionResponse` parts (Gemini), or one `tools/call` result per call (MCP:
/// the text, `structuredContent` for an object, `isError`). [`replies`] adds what an answer
/// echoes from its call.
pub fn result_messages(format: Format, outputs: &[ToolOutput]) -> Vec<Value> {
    let Some(shape) = shape(format) else {
        return outputs.iter().map(mcp_result).collect();
    };
    match shape {
        Shape::Chat => outputs
            .iter()
            .map(|output| json!({"role": "tool", "tool_call_id": output.call_id, "content": output.content}))
            .collect(),
        Shape::Responses => outputs
            .iter()
            .map(|output| json!({"type": "function_call_output", "call_id": output.call_id, "output": output.content}))
            .collect(),
        Shape::Anthropic => {
            let blocks: Vec<Value> = outputs
                .iter()
                .map(|output| {
                    json!({"type": "tool_result", "tool_use_id": output.call_id, "content": output.content,
                           "is_error": output.is_error})
                })
                .collect();
            vec![json!({"role": "user", "content": blocks})]
        }
        Shape::Gemini => {
            let parts: Vec<Value> = outputs.iter().map(gemini_response).collect();
            vec![json!({"role": "user", "parts": parts})]
        }
    }
}

struct RawCall {
    id: String,
    name: String,
    arguments: Arguments,
}

fn string_at(object: &Value, key: &str, what: &str) -> Result<String, String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| format!("{what} has no string `{key}`"))
}

fn chat_calls(message: &Value) -> Result<Vec<RawCall>, String> {
    let message = message.pointer("/choices/0/message").unwrap_or(message);
    let Some(calls) = message.get("tool_calls") else {
        return Ok(Vec::new());
    };
    let calls = calls.as_array().ok_or("`tool_calls` is not an array")?;
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let at = format!("tool_calls[{index}]");
            let function = call.get("function").ok_or_else(|| format!("{at} has no `function`"))?;
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => Arguments::Json(text.clone()),
                Some(other) => Arguments::Value(other.clone()),
                None => Arguments::Json(String::new()),
            };
            Ok(RawCall {
                id: string_at(call, "id", &at)?,
                name: string_at(function, "name", &format!("{at}.function"))?,
                arguments,
            })
        })
        .collect()
}

/// The `caller` of each Responses `function_call` in `message` that has one, by `call_id`.
fn responses_callers(message: &Value) -> HashMap<&str, &Value> {
    let Ok(items) = responses_items(message) else { return HashMap::new() };
    items
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .filter_map(|item| {
            Some((item.get("call_id")?.as_str()?, item.get("caller").filter(|caller| caller.is_object())?))
        })
        .collect()
}

/// A Responses message's output items: a response's `output`, one item, or a list of them.
fn responses_items(message: &Value) -> Result<&[Value], String> {
    Ok(match message {
        Value::Array(items) => items.as_slice(),
        Value::Object(response) => match response.get("output") {
            Some(Value::Array(items)) => items.as_slice(),
            _ if response.get("type").and_then(Value::as_str) == Some("function_call") => std::slice::from_ref(message),
            _ => return Err("a response has an `output` array of items".into()),
        },
        _ => return Err("expected a response, an output item or a list of output items".into()),
    })
}

/// The `function_call` items. A call to a function in a namespace names it bare (`name`),
/// the namespace beside it; a deferred top-level function may come back with a namespace
/// named like itself. Either way `name` finds the tool.
fn responses_calls(message: &Value) -> Result<Vec<RawCall>, String> {
    let items = responses_items(message)?;
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .map(|(index, item)| {
            let at = format!("output[{index}]");
            Ok(RawCall {
                id: string_at(item, "call_id", &at)?,
                name: string_at(item, "name", &at)?,
                arguments: Arguments::Json(string_at(item, "arguments", &at)?),
            })
        })
        .collect()
}

fn anthropic_calls(message: &Value) -> Result<Vec<RawCall>, String> {
    let blocks = match message.get("content") {
        Some(Value::Array(blocks)) => blocks,
        Some(Value::String(_)) => return Ok(Vec::new()),
        _ => return Err("a message has `content`, a list of blocks".into()),
    };
    blocks
        .iter()
        .enumerate()
        .filter(|(_, block)| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|(index, block)| {
            let at = format!("content[{index}]");
            Ok(RawCall {
                id: string_at(block, "id", &at)?,
                name: string_at(block, "name", &at)?,
                arguments: Arguments::Value(block.get("input").cloned().unwrap_or_else(|| json!({}))),
            })
        })
        .collect()
}

fn gemini_calls(message: &Value) -> Result<Vec<RawCall>, String> {
    let content = message.pointer("/candidates/0/content").unwrap_or(message);
    let parts = content.get("parts").and_then(Value::as_array).ok_or("a content has `parts`, a list")?;
    parts
        .iter()
        .enumerate()
        .filter_map(|(index, part)| part.get("functionCall").map(|call| (index, call)))
        .map(|(index, call)| {
            let at = format!("parts[{index}].functionCall");
            Ok(RawCall {
                id: call
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("{GENERATED_ID}{index}"), str::to_owned),
                name: string_at(call, "name", &at)?,
                arguments: Arguments::Value(call.get("args").cloned().unwrap_or_else(|| json!({}))),
            })
        })
        .collect()
}

/// A `tools/call` result, as `toolcell serve` answers.
fn mcp_result(output: &ToolOutput) -> Value {
    let mut result = json!({"content": [{"type": "text", "text": output.content}], "isError": output.is_error});
    if let Some(value) = output.value().filter(Value::is_object) {
        result["structuredContent"] = value;
    }
    result
}

/// The id given to a Gemini function call without one, before its position; its response
/// then carries no id either.
const GENERATED_ID: &str = "call_";

/// A `functionResponse` part: the result under `output` (as JSON when it is JSON), or the
/// model-facing message under `error`.
fn gemini_response(output: &ToolOutput) -> Value {
    let response = if output.is_error {
        json!({"error": output.content})
    } else {
        json!({"output": serde_json::from_str::<Value>(&output.content).unwrap_or_else(|_| json!(output.content))})
    };
    let mut function_response = Map::new();
    let generated = output.call_id.strip_prefix(GENERATED_ID).is_some_and(|index| index.parse::<u64>().is_ok());
    if !generated {
        function_response.insert("id".into(), json!(output.call_id));
    }
    function_response.insert("name".into(), json!(output.tool));
    function_response.insert("response".into(), response);
    json!({"functionResponse": function_response})
}
