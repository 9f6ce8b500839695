use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// What the host tells a tool about one call. Take it as a parameter of a `#[tool]` function
/// (any position, by value) to read it; it never appears in the tool's schema, so the model
/// neither sees nor supplies it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    call_id: String,
    host: Map<String, Value>,
}

impl Context {
    /// A context for testing a tool natively.
    pub fn new(call_id: impl Into<String>, host: Map<String, Value>) -> Self {
        Self { call_id: call_id.into(), host }
    }

    pub(crate) fn from_host(call_id: String, host_context: &str) -> Self {
        // The host always sends a JSON object; anything else is treated as "no context".
        let host = match serde_json::from_str(host_context) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        Self { call_id, host }
    }

    /// The id of this call, as the model's provider issued it.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Every value the host supplied.
    pub fn host(&self) -> &Map<String, Value> {
        &self.host
    }

    /// The host-supplied value under `key`, deserialized; `None` when absent or of another
    /// shape.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.host.get(key).and_then(|value| T::deserialize(value).ok())
    }
}
