//! Write a [toolcell](https://github.com/toolcell/toolcell) tool as a plain Rust function.
//!
//! ```
//! use toolcell_guest::{tool, Context, Tool, ToolError};
//!
//! /// Add two numbers.
//! #[tool]
//! fn add(
//!     /// The first addend.
//!     a: f64,
//!     /// The second addend.
//!     b: f64,
//! ) -> Result<f64, ToolError> {
//!     Ok(a + b)
//! }
//!
//! // The generated `AddTool` runs natively too: the logic and the schema are testable.
//! assert_eq!(AddTool::invoke(r#"{"a": 1, "b": 2}"#, Context::default()).unwrap(), "3.0");
//! assert_eq!(AddTool::metadata().parameters_schema["required"], serde_json::json!(["a", "b"]));
//! ```
//!
//! [`tool`] derives the tool's name, description, version and the JSON Schema of its
//! arguments from the signature and doc comments (its options add a title, behaviour hints
//! and capability requests), generates a [`Tool`] implementation named after the function
//! (`add` -> `AddTool`) that can be tested natively, and, when compiled for `wasm32-wasip2`,
//! exports the component's `toolcell:tool/tool` world. A tool crate depends on this crate
//! alone: argument and result types use [`json`] to derive what they need through it.
//!
//! A tool may also call other tools of its host as functions, with [`call_tool`], when the
//! operator's policy lets it (`call_tools`); see [`callable_tools`].

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod calls;
mod context;
mod error;
#[cfg(any(not(target_arch = "wasm32"), feature = "host-checks"))]
mod native;
mod schema;

pub use calls::{CallFailure, CallableTool, call_tool, callable_tools};
pub use context::Context;
pub use error::ToolError;
pub use toolcell_guest_macros::{json, tool};

/// What a tool tells the host about itself: the `tool-metadata` record of the WIT world.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// The name a model calls the tool by.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The tool's semantic version.
    pub version: String,
    /// JSON Schema (2020-12) of the arguments object.
    pub parameters_schema: serde_json::Value,
    /// JSON Schema of the result, when the tool declares one.
    pub output_schema: Option<serde_json::Value>,
}

/// What a tool asks its operator to grant: the `capability-request` record of the WIT
/// world. Asking grants nothing; the host's policy decides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Hosts the tool fetches from over HTTP(S), as allow-list patterns (`api.example.com`,
    /// `*.example.com`, `example.com:8443`).
    pub http_hosts: Vec<String>,
    /// Directories the tool expects at guest paths.
    pub directories: Vec<RequestedDirectory>,
    /// Names of environment variables the tool reads.
    pub env: Vec<String>,
}

/// What a tool declares about itself for people and clients: the `tool-annotations` record
/// of the WIT world, as MCP shows it (`title`, `readOnlyHint`, `destructiveHint`,
/// `idempotentHint`, `openWorldHint`). `None` leaves a hint unsaid; clients then assume MCP's
/// cautious default. Hints grant and deny nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    /// A short name for people, e.g. `Calculator`: non-empty, at most 128 characters, one line.
    pub title: Option<String>,
    /// `true`: the tool does not modify its environment.
    pub read_only: Option<bool>,
    /// `true`: the tool may delete or overwrite things; `false`: it only adds. Meaningful
    /// only when it is not read-only; `true` together with `read_only: Some(true)` is refused
    /// by the host.
    pub destructive: Option<bool>,
    /// `true`: calling again with the same arguments has no further effect on the
    /// environment (the result may still differ). Meaningful only when it is not read-only.
    pub idempotent: Option<bool>,
    /// `true`: the tool interacts with an open world of external entities (the web);
    /// `false`: its domain is closed. Unsaid, the host derives it from the capabilities:
    /// `true` when the tool requests HTTP hosts, else `false`.
    pub open_world: Option<bool>,
}

/// A directory a tool expects to find preopened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestedDirectory {
    /// Where the tool looks for it, e.g. `/workspace`.
    pub guest_path: String,
    /// Whether the tool writes to it.
    pub writable: bool,
}

/// A tool: what [`tool`] generates, and what a hand-written tool implements before
/// calling [`export!`].
pub trait Tool {
    /// Describes the tool.
    fn metadata() -> Metadata;

    /// Runs the tool on a JSON arguments object and returns the JSON result as text.
    ///
    /// # Errors
    /// A [`ToolError`] when the arguments cannot be used or the work fails.
    fn invoke(arguments: &str, context: Context) -> Result<String, ToolError>;

    /// The capabilities the tool requests. Default: none.
    fn capabilities() -> Capabilities {
        Capabilities::default()
    }

    /// The tool's title and behaviour hints. Default: none declared.
    fn annotations() -> Annotations {
        Annotations::default()
    }
}

/// Exports a [`Tool`] as this component's `tool` world. [`tool`] calls it for you; call it
/// yourself only for a hand-written [`Tool`]. Once per crate. Expands to nothing when not
/// compiling for WebAssembly, so the crate still builds and tests natively.
#[macro_export]
macro_rules! export {
    ($tool:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[doc(hidden)]
        #[allow(unsafe_code)]
        mod __toolcell_export {
            use super::*;

            struct Export;

            impl $crate::__private::bindings::Guest for Export {
                fn metadata() -> $crate::__private::bindings::ToolMetadata {
                    $crate::__private::metadata_to_wit(<$tool as $crate::Tool>::metadata())
                }

                fn invoke(
                    arguments: $crate::__private::String,
                    context: $crate::__private::bindings::CallContext,
                ) -> ::core::result::Result<$crate::__private::String, $crate::__private::bindings::ToolError>
                {
                    $crate::__private::invoke::<$tool>(&arguments, context)
                }

                fn capabilities() -> $crate::__private::bindings::CapabilityRequest {
                    $crate::__private::capabilities_to_wit(<$tool as $crate::Tool>::capabilities())
                }

                fn annotations() -> $crate::__private::bindings::ToolAnnotations {
                    $crate::__private::annotations_to_wit(<$tool as $crate::Tool>::annotations())
                }
            }

            $crate::__private::bindings::export_tool_world!(Export with_types_in $crate::__private::bindings);
        }

        /// The exported tool's metadata; keeps the tool type used in native builds too.
        #[cfg(not(target_arch = "wasm32"))]
        #[doc(hidden)]
        pub fn __toolcell_exported_metadata() -> $crate::Metadata {
            <$tool as $crate::Tool>::metadata()
        }
    };
}

/// Support for the code [`tool`], [`json`] and [`export!`] generate. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::schema::{output_schema, parameters_schema};
    pub use ::schemars;
    pub use ::serde;
    pub use ::serde_json;
    pub use std::string::String;

    use crate::{Annotations, Capabilities, Context, Metadata, Tool, ToolError};

    /// The bindings of `wit/tool.wit`, generated once for every tool. The world is
    /// `calling-tool`, which adds the `calls` import; a tool that never calls it does not
    /// import it.
    #[expect(missing_docs, reason = "generated by wit-bindgen")]
    pub mod bindings {
        wit_bindgen::generate!({
            path: "wit",
            world: "calling-tool",
            pub_export_macro: true,
            export_macro_name: "export_tool_world",
            default_bindings_module: "toolcell_guest::__private::bindings",
        });
    }

    /// What a tool parameter's type needs. A trait of the SDK's own, so that a type without
    /// `#[json]` gets one error saying what to do rather than serde's and schemars' many. It
    /// has no supertraits, which the compiler would report as well; the generated arguments
    /// struct's fields are `<T as Parameter>::Checked` (which is `T`) instead.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool parameter: it does not implement `Deserialize` and `JsonSchema`",
        label = "the type of this parameter",
        note = "put `#[json]` (`toolcell_guest::json`) on the definition of `{Self}`: it derives what a tool needs to read it from JSON and describe it in the schema"
    )]
    pub trait Parameter {
        /// `Self`.
        type Checked: serde::de::DeserializeOwned + schemars::JsonSchema;
    }

    #[diagnostic::do_not_recommend]
    impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> Parameter for T {
        type Checked = T;
    }

    /// What a tool's result type needs; see [`Parameter`].
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's result: it does not implement `Serialize`",
        label = "the tool's result type",
        note = "put `#[json]` (`toolcell_guest::json`) on the definition of `{Self}`: it derives what a tool needs to return it as JSON"
    )]
    pub trait Output {
        /// The value as JSON text.
        ///
        /// # Errors
        /// When serde cannot serialize it.
        fn to_json(&self) -> serde_json::Result<String>;
    }

    #[diagnostic::do_not_recommend]
    impl<T: serde::Serialize + ?Sized> Output for T {
        fn to_json(&self) -> serde_json::Result<String> {
            serde_json::to_string(self)
        }
    }

    /// What the result type of a tool with `output_schema` needs; see [`Parameter`].
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be the result of a tool with `output_schema`: it does not implement `Serialize` and `JsonSchema`",
        label = "the tool's result type",
        note = "put `#[json]` (`toolcell_guest::json`) on the definition of `{Self}`: it derives what a tool needs to return it as JSON and describe it in the output schema"
    )]
    pub trait DescribedOutput: Output {
        /// The JSON Schema of the result.
        fn output_schema() -> serde_json::Value;
    }

    #[diagnostic::do_not_recommend]
    impl<T: serde::Serialize + schemars::JsonSchema> DescribedOutput for T {
        fn output_schema() -> serde_json::Value {
            output_schema::<T>()
        }
    }

    /// Parses the arguments object into the generated arguments struct of tool `T`.
    ///
    /// In a component, the host has already validated the arguments against the schema, so
    /// a failure here means the tool was called by something other than a toolcell host.
    /// Natively (a tool's tests), and in the component of its tests (`host-checks`), they are
    /// validated here first, as the host would.
    pub fn parse_arguments<T: Tool + 'static, A: serde::de::DeserializeOwned>(arguments: &str) -> Result<A, ToolError> {
        #[cfg(any(not(target_arch = "wasm32"), feature = "host-checks"))]
        crate::native::check_arguments::<T>(arguments)?;
        serde_json::from_str(arguments)
            .map_err(|err| ToolError::invalid_arguments(format!("the arguments do not match the schema: {err}")))
    }

    /// Serializes the result of tool `T`'s function to the JSON text the host receives;
    /// natively, checks it against the output schema as the host would.
    pub fn to_output<T: Tool + 'static, V: Output>(result: Result<V, ToolError>) -> Result<String, ToolError> {
        let value = result?;
        let output = value
            .to_json()
            .map_err(|err| ToolError::failed(format!("the tool's result could not be serialized as JSON: {err}")))?;
        #[cfg(any(not(target_arch = "wasm32"), feature = "host-checks"))]
        crate::native::check_output::<T>(&output)?;
        Ok(output)
    }

    pub fn metadata_to_wit(metadata: Metadata) -> bindings::ToolMetadata {
        bindings::ToolMetadata {
            name: metadata.name,
            description: metadata.description,
            version: metadata.version,
            parameters_schema: metadata.parameters_schema.to_string(),
            output_schema: metadata.output_schema.map(|schema| schema.to_string()),
        }
    }

    pub fn capabilities_to_wit(capabilities: Capabilities) -> bindings::CapabilityRequest {
        bindings::CapabilityRequest {
            http_hosts: capabilities.http_hosts,
            directories: capabilities
                .directories
                .into_iter()
                .map(|dir| bindings::DirectoryRequest { guest_path: dir.guest_path, writable: dir.writable })
                .collect(),
            env: capabilities.env,
        }
    }

    pub fn annotations_to_wit(annotations: Annotations) -> bindings::ToolAnnotations {
        bindings::ToolAnnotations {
            title: annotations.title,
            read_only: annotations.read_only,
            destructive: annotations.destructive,
            idempotent: annotations.idempotent,
            open_world: annotations.open_world,
        }
    }

    pub fn invoke<T: Tool>(arguments: &str, context: bindings::CallContext) -> Result<String, bindings::ToolError> {
        let context = Context::from_host(context.call_id, &context.host_context);
        T::invoke(arguments, context).map_err(ToolError::into_wit)
    }
}
