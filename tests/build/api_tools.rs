//! One mock tool per operation of `guests/api/api.json` (an online shop's back office), written
//! as a component in the text format and assembled with `wat`: milliseconds for all of them,
//! where a cargo build per tool would take minutes. Each tool describes its operation, asks
//! for nothing, and answers every call with `{"operation": ..., "status": ...}`. Each carries
//! its `toolcell-metadata` section, so a cold `toolcell serve` lists them before compiling.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use toolcell_guest_build::with_metadata_section;

/// Where the strings start in the guest's memory.
const DATA_START: usize = 16;

/// One operation as a tool: what `metadata`, `annotations` and `invoke` return.
struct Operation {
    name: String,
    description: String,
    parameters: Value,
    /// The HTTP method: GET is read-only, DELETE destructive.
    method: String,
}

/// Writes `<out>/<operationId>.wasm` for every operation of `api` (an `api.json`); returns how
/// many it wrote.
pub fn write_api_tools(api: &Path, out: &Path) -> usize {
    let text = std::fs::read_to_string(api).unwrap_or_else(|err| panic!("read {}: {err}", api.display()));
    let api: Value = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{} is not JSON: {err}", api.display()));
    let operations = api["operations"].as_array().expect("api.json has an `operations` array");
    // Afresh: a tool whose operation left api.json must not stay behind.
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).expect("create the api-tools folder");
    for operation in operations {
        let operation = Operation::from_json(operation);
        let component = wat::parse_str(operation.component_text())
            .unwrap_or_else(|err| panic!("the component of `{}` does not assemble: {err}", operation.name));
        let payload = serde_json::to_vec(&operation.announcement()).expect("a JSON value serializes");
        let path = out.join(format!("{}.wasm", operation.name));
        std::fs::write(&path, with_metadata_section(&component, &payload)).expect("write an api tool");
    }
    operations.len()
}

impl Operation {
    fn from_json(operation: &Value) -> Self {
        let field = |key: &str| {
            operation[key].as_str().unwrap_or_else(|| panic!("an operation lacks `{key}`: {operation}")).to_owned()
        };
        Self {
            name: field("operationId"),
            description: field("summary"),
            parameters: operation["parameters"].clone(),
            method: field("method"),
        }
    }

    /// The canned result of every call: the mock API accepted the request.
    fn result(&self) -> String {
        let status = if self.method == "GET" { "ok" } else { "accepted" };
        json!({"operation": self.name, "status": status}).to_string()
    }

    /// `(read-only, destructive, idempotent)`, as an HTTP API's methods promise them.
    fn hints(&self) -> (Option<bool>, Option<bool>, Option<bool>) {
        match self.method.as_str() {
            "GET" => (Some(true), None, None),
            "DELETE" => (Some(false), Some(true), Some(true)),
            _ => (Some(false), None, None),
        }
    }

    /// The `toolcell-metadata` payload: what the exports say (`runtime/src/load/announce.rs`).
    fn announcement(&self) -> Value {
        let (read_only, destructive, idempotent) = self.hints();
        let annotations: serde_json::Map<String, Value> =
            [("read_only", read_only), ("destructive", destructive), ("idempotent", idempotent)]
                .into_iter()
                .filter_map(|(key, hint)| hint.map(|hint| (key.to_owned(), Value::Bool(hint))))
                .collect();
        json!({
            "format": 1,
            "name": self.name,
            "description": self.description,
            "version": "1.0.0",
            "parameters_schema": self.parameters,
            "annotations": annotations,
            "capabilities": {"http_hosts": [], "directories": [], "env": []},
            "imports_http": false,
        })
    }

    /// The component: its strings and the records its exports return laid out in one page of
    /// memory (the canonical ABI's layout), then a bump allocator for the call's arguments.
    fn component_text(&self) -> String {
        let mut memory = Layout::default();
        let name = memory.string(&self.name);
        let description = memory.string(&self.description);
        let version = memory.string("1.0.0");
        let parameters = memory.string(&self.parameters.to_string());
        let result = memory.string(&self.result());
        // tool-metadata: four (pointer, length) strings, then option<string> = none.
        let metadata = memory.record(&[
            name.0,
            name.1,
            description.0,
            description.1,
            version.0,
            version.1,
            parameters.0,
            parameters.1,
            0,
            0,
            0,
        ]);
        // capability-request: three empty lists.
        let capabilities = memory.record(&[0; 6]);
        let annotations = memory.annotations(self.hints());
        // result<string, tool-error>: discriminant 0 (ok), then the string.
        let invoke = memory.record(&[0, result.0, result.1]);
        let heap = memory.next.next_multiple_of(8);
        let pages = heap.div_ceil(65536).max(1);
        format!(
            include_str!("api_tool.wat"),
            pages = pages,
            heap = heap,
            data = memory.data,
            metadata = metadata,
            capabilities = capabilities,
            annotations = annotations,
            invoke = invoke,
        )
    }
}

/// The guest's memory as data segments.
struct Layout {
    next: usize,
    data: String,
}

impl Default for Layout {
    fn default() -> Self {
        Self { next: DATA_START, data: String::new() }
    }
}

impl Layout {
    /// Places `bytes` at the next 8-aligned offset; returns that offset.
    fn place(&mut self, bytes: &[u8]) -> usize {
        let at = self.next.next_multiple_of(8);
        let _ = write!(self.data, "    (data (i32.const {at}) \"");
        for byte in bytes {
            let _ = write!(self.data, "\\{byte:02x}");
        }
        self.data.push_str("\")\n");
        self.next = at + bytes.len();
        at
    }

    /// A string's (pointer, length).
    fn string(&mut self, text: &str) -> (u32, u32) {
        let at = self.place(text.as_bytes());
        (u32::try_from(at).expect("a small offset"), u32::try_from(text.len()).expect("a short string"))
    }

    /// A record of 32-bit fields; returns its offset.
    fn record(&mut self, fields: &[u32]) -> usize {
        let bytes: Vec<u8> = fields.iter().flat_map(|field| field.to_le_bytes()).collect();
        self.place(&bytes)
    }

    /// tool-annotations: title (option<string>, 12 bytes) = none, then read-only,
    /// destructive, idempotent and open-world, each an option<bool> (discriminant, value).
    fn annotations(
        &mut self,
        (read_only, destructive, idempotent): (Option<bool>, Option<bool>, Option<bool>),
    ) -> usize {
        let mut bytes = vec![0u8; 20];
        for (at, hint) in [(12, read_only), (14, destructive), (16, idempotent)] {
            if let Some(hint) = hint {
                bytes[at] = 1;
                bytes[at + 1] = u8::from(hint);
            }
        }
        self.place(&bytes)
    }
}
