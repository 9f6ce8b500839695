//! The JSON Schemas a tool advertises, generated from Rust types by schemars.

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::Value;

/// The schema of a tool's arguments object: what `T` accepts when deserialized, in draft
/// 2020-12, with the generated struct's title removed and a `required` array always present
/// (some model providers reject an object schema without one).
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let mut schema = generate::<T>(Contract::Deserialize);
    if let Value::Object(object) = &mut schema {
        object.remove("title");
        object.entry("required").or_insert_with(|| Value::Array(Vec::new()));
    }
    schema
}

/// The schema of a tool's result: what `T` produces when serialized, without the Rust type's
/// title.
pub fn output_schema<T: JsonSchema>() -> Value {
    let mut schema = generate::<T>(Contract::Serialize);
    if let Value::Object(object) = &mut schema {
        object.remove("title");
    }
    schema
}

fn generate<T: JsonSchema>(contract: Contract) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.contract = contract;
    settings.into_generator().into_root_schema_for::<T>().to_value()
}
