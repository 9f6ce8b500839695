//! The explainer end to end, through `CompiledSchema` as the host uses it: the messages of
//! the standard tools' schemas, and the bounds (length, count, depth) whatever the input.
//! Message-for-message expectations shared with the Python and JavaScript SDKs are in
//! `corpus.rs`.

use serde_json::{Value, json};
use toolcell_schema::{CompiledSchema, Violation};

/// At most this many violations are reported for one call.
const MAX_VIOLATIONS: usize = 20;
/// Longest message, in bytes.
const MAX_MESSAGE_BYTES: usize = 300;
/// Nested alternatives followed before giving up.
const MAX_NESTING: usize = 32;
/// What a model must never have to decode.
const JARGON: [&str; 10] =
    ["anyOf", "oneOf", "allOf", "$ref", "$defs", "const", "uint32", "int64", "is not valid under any", "schemas"];

fn check(schema: &Value, args: &Value) -> Vec<Violation> {
    let (_, compiled) = CompiledSchema::compile(&schema.to_string()).expect("schema compiles");
    let found = compiled.violations(args);
    assert!(!found.is_empty(), "{args} should break the schema");
    assert!(found.len() <= MAX_VIOLATIONS);
    for violation in &found {
        assert!(violation.message.len() <= MAX_MESSAGE_BYTES, "too long: {violation:?}");
        for word in JARGON {
            assert!(!violation.message.contains(word), "jargon `{word}` in {violation:?}");
        }
    }
    found
}

/// The single violation at `pointer`.
fn message_at(found: &[Violation], pointer: &str) -> String {
    let at: Vec<&Violation> = found.iter().filter(|violation| violation.pointer == pointer).collect();
    assert_eq!(at.len(), 1, "one violation at {pointer:?} in {found:#?}");
    at[0].message.clone()
}

fn assert_contains(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} should contain {part:?}");
    }
}

/// A tool's parameters schema from its insta snapshot (header lines stripped).
fn snapshot(text: &str) -> Value {
    let json = text.splitn(3, "---\n").nth(2).expect("insta header");
    serde_json::from_str(json).expect("snapshot is JSON")
}

fn calculator() -> Value {
    snapshot(include_str!(
        "../../tools/calculator/src/snapshots/toolcell_tool_calculator__tests__parameters_schema.snap"
    ))
}

fn unit_convert() -> Value {
    snapshot(include_str!(
        "../../tools/unit_convert/src/snapshots/toolcell_tool_unit_convert__tests__parameters_schema_snapshot.snap"
    ))
}

fn regex() -> Value {
    snapshot(include_str!(
        "../../tools/regex/src/snapshots/toolcell_tool_regex__tests__parameters_schema_snapshot.snap"
    ))
}

fn files() -> Value {
    snapshot(include_str!(
        "../../tools/files/src/snapshots/toolcell_tool_files__tests__parameters_schema_snapshot.snap"
    ))
}

fn datetime() -> Value {
    snapshot(include_str!("../../tools/datetime/src/snapshots/toolcell_tool_datetime__tests__parameters_schema.snap"))
}

fn http_fetch() -> Value {
    snapshot(include_str!(
        "../../tools/http_fetch/src/snapshots/toolcell_tool_http_fetch__tests__parameters_schema_snapshot.snap"
    ))
}

fn json_query() -> Value {
    snapshot(include_str!(
        "../../tools/json_query/src/snapshots/toolcell_tool_json_query__tests__parameters_schema.snap"
    ))
}

/// The test guest `echo`.
fn echo() -> Value {
    json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "description": "The text."},
            "count": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many times."},
            "volume": {"anyOf": [{"$ref": "#/$defs/Volume"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["text", "count"],
        "additionalProperties": false,
        "$defs": {"Volume": {"type": "string", "enum": ["quiet", "loud"]}}
    })
}

/// An optional nested struct, as schemars writes `Option<Options>`, nested again.
fn nested() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "options": {"anyOf": [{"$ref": "#/$defs/Options"}, {"type": "null"}]}
        },
        "required": ["query"],
        "additionalProperties": false,
        "$defs": {
            "Options": {
                "type": "object",
                "properties": {
                    "top_words": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 50},
                    "order": {"type": "string", "enum": ["ascending", "descending"]},
                    "language": {"type": "string", "description": "ISO 639-1 code, e.g. `en`. Others are refused."},
                    "inner": {"anyOf": [{"$ref": "#/$defs/Options"}, {"type": "null"}]}
                },
                "required": ["language"],
                "additionalProperties": false
            }
        }
    })
}

#[test]
fn an_optional_enum_lists_its_values() {
    let found = check(&echo(), &json!({"text": "hi", "count": 1, "volume": "LOUD"}));
    assert_eq!(
        message_at(&found, "/volume"),
        "`LOUD` is not one of the allowed values; did you mean `loud`? Allowed: quiet, loud"
    );
}

#[test]
fn a_wrong_type_in_an_optional_enum_lists_the_values() {
    let found = check(&echo(), &json!({"text": "hi", "count": 1, "volume": 3}));
    assert_eq!(message_at(&found, "/volume"), "the number 3 is not one of the allowed values. Allowed: quiet, loud");
}

#[test]
fn a_small_const_enum_is_listed_in_full() {
    let found = check(&regex(), &json!({"pattern": "a", "text": "a", "operation": "fnd"}));
    assert_eq!(
        message_at(&found, "/operation"),
        "`fnd` is not one of the allowed values; did you mean `find`? Allowed: find, replace, split"
    );
}

#[test]
fn a_long_const_enum_shows_the_nearest_values_or_the_first_ones() {
    let found = check(&unit_convert(), &json!({"value": 1, "from": "metre", "to": "lightyear"}));
    let from = message_at(&found, "/from");
    assert_contains(&from, &["`metre` is not one of the 61 allowed values; did you mean `meter`?", "Closest: meter"]);
    let to = message_at(&found, "/to");
    // Nothing close: the first values in the tool's own order, which groups them.
    assert_contains(&to, &["`lightyear` is not one of the 61 allowed values. The first of them: meter, kilometer"]);
}

#[test]
fn a_unit_symbol_points_to_the_unit_it_stands_for() {
    // Models write `km` and `mi`; the values are names. The symbol is in each value's
    // description (`kilometer (km)`), so the message can name the value it stands for.
    let found = check(&unit_convert(), &json!({"value": 1, "from": "km", "to": "MI"}));
    assert_contains(
        &message_at(&found, "/from"),
        &["`km` is not one of the 61 allowed values; it is the symbol of `kilometer`: give `kilometer` instead"],
    );
    assert_contains(
        &message_at(&found, "/to"),
        &["`MI` is not one of the 61 allowed values; it is the symbol of `mile`"],
    );
    // A misspelt name is still a misspelt name, and plurals find their unit.
    for (given, meant) in [("kilometers", "kilometer"), ("miles", "mile"), ("KILOMETER", "kilometer")] {
        let found = check(&unit_convert(), &json!({"value": 1, "from": given, "to": "mile"}));
        assert_contains(&message_at(&found, "/from"), &[&format!("did you mean `{meant}`?")]);
    }
    // `MB` is megabyte, exactly; `Mbit` megabit; `mb` only one of them ignoring case.
    let found = check(&unit_convert(), &json!({"value": 1, "from": "Mbit", "to": "mb"}));
    assert_contains(&message_at(&found, "/from"), &["the symbol of `megabit`"]);
    assert_contains(&message_at(&found, "/to"), &["the symbol of `megabyte`"]);
}

#[test]
fn an_optional_const_enum_is_explained_through_null() {
    let found = check(&datetime(), &json!({"operation": "difference", "largest_unit": "year"}));
    assert_contains(&message_at(&found, "/largest_unit"), &["did you mean `years`?", "Allowed: years, months"]);
}

#[test]
fn an_unknown_parameter_gets_the_closest_name() {
    let found = check(&calculator(), &json!({"expr": "1+1"}));
    assert_eq!(
        message_at(&found, "/expr"),
        "`expr` is not a parameter; did you mean `expression`? Parameters: expression, variables"
    );
    assert_contains(&message_at(&found, ""), &["`expression` is missing: it is required (a non-empty string"]);
}

#[test]
fn an_unknown_parameter_far_from_all_lists_them() {
    let found = check(&echo(), &json!({"text": "hi", "count": 1, "colour": "red"}));
    assert_eq!(message_at(&found, "/colour"), "`colour` is not a parameter. Parameters: count, tags, text, volume");
}

#[test]
fn a_missing_parameter_is_described() {
    let found = check(&files(), &json!({}));
    let messages: Vec<&str> = found.iter().map(|violation| violation.message.as_str()).collect();
    assert_eq!(found.iter().filter(|violation| violation.pointer.is_empty()).count(), 2);
    assert_contains(
        messages[0],
        &["`operation` is missing: it is required (one of: list, read, search: `list` a directory"],
    );
    assert_contains(messages[1], &["`path` is missing: it is required (a string: The absolute path"]);
}

#[test]
fn a_type_mismatch_says_what_is_expected() {
    let found = check(&echo(), &json!({"text": "hi", "count": "5"}));
    assert_eq!(message_at(&found, "/count"), "expected an integer from 1 to 10, got the string \"5\"");
    let found = check(&files(), &json!({"operation": "read", "path": "/a", "offset": "big"}));
    assert_eq!(message_at(&found, "/offset"), "expected a non-negative integer or null, got the string \"big\"");
}

#[test]
fn integer_formats_become_ranges() {
    let schema = json!({"type": "integer", "format": "uint32", "minimum": 0});
    assert_eq!(check(&schema, &json!(1.5))[0].message, "expected an integer from 0 to 4294967295, got the number 1.5");
    let schema = json!({"type": "integer", "format": "int64"});
    assert_eq!(check(&schema, &json!("1"))[0].message, "expected an integer, got the string \"1\"");
}

#[test]
fn limits_are_plain_sentences() {
    let cases = [
        (json!({"minimum": 1}), json!(0), "must be at least 1; got 0"),
        (json!({"maximum": 10}), json!(11), "must be at most 10; got 11"),
        (json!({"exclusiveMinimum": 0}), json!(0), "must be greater than 0; got 0"),
        (json!({"exclusiveMaximum": 1.5}), json!(2), "must be less than 1.5; got 2"),
        (json!({"minLength": 1}), json!(""), "must not be empty"),
        (json!({"minLength": 3}), json!("ab"), "must be at least 3 characters long; got 2 characters"),
        (json!({"maxLength": 10}), json!("abcdefghijklmn"), "must be at most 10 characters long; got 14 characters"),
        (json!({"minItems": 2}), json!([1]), "must have at least 2 items; got 1"),
        (json!({"maxItems": 1}), json!([1, 2]), "must have at most 1 item; got 2"),
        (json!({"maxProperties": 1}), json!({"a": 1, "b": 2}), "must have at most 1 entry; got 2"),
        (json!({"pattern": "^[a-z]+$"}), json!("ABC"), "must match the pattern `^[a-z]+$`; got \"ABC\""),
        (json!({"multipleOf": 5}), json!(7), "must be a multiple of 5; got 7"),
        (json!({"uniqueItems": true}), json!([1, 2, 1]), "items must be unique, but items 0 and 2 are equal"),
        (json!({"const": "auto"}), json!("autp"), "must be exactly auto; got \"autp\""),
        (json!({"enum": [1, 2]}), json!(3), "the number 3 is not one of the allowed values. Allowed: 1, 2"),
        (json!({"type": ["string", "null"]}), json!(1), "expected a string or null, got the number 1"),
        (json!({"type": "boolean"}), json!("true"), "expected a boolean (true or false), got the string \"true\""),
        (
            json!({"type": "array", "items": {"type": "string"}}),
            json!({}),
            "expected an array of strings, got an empty object",
        ),
        (json!({"contains": {"type": "string"}}), json!([1]), "must contain enough items that are a string"),
        (json!({"not": {"type": "string"}}), json!("x"), "this value is not allowed here; got the string \"x\""),
        (json!(false), json!(1), "this value is not allowed here; got the number 1"),
    ];
    for (schema, value, expected) in cases {
        assert_eq!(check(&schema, &value)[0].message, expected, "{schema} with {value}");
    }
}

#[test]
fn the_echo_guest_gets_every_problem_at_its_pointer() {
    let found = check(&echo(), &json!({"text": "", "count": 11, "colour": "red", "volume": "LOUD"}));
    let pointers: Vec<&str> = found.iter().map(|violation| violation.pointer.as_str()).collect();
    assert_eq!(pointers, ["/colour", "/count", "/text", "/volume"]);
    assert_eq!(message_at(&found, "/count"), "must be at most 10; got 11");
    assert_eq!(message_at(&found, "/text"), "must not be empty");
}

#[test]
fn an_optional_nested_struct_is_explained_inside() {
    let args = json!({
        "query": "q",
        "options": {"top_words": 0, "order": "asc", "languag": "en", "inner": {"language": "en", "top_words": "3"}}
    });
    let found = check(&nested(), &args);
    assert_eq!(message_at(&found, "/options/top_words"), "must be at least 1; got 0");
    assert_eq!(
        message_at(&found, "/options/order"),
        "`asc` is not one of the allowed values; did you mean `ascending`? Allowed: ascending, descending"
    );
    assert_eq!(
        message_at(&found, "/options/languag"),
        "`languag` is not a field of this object; did you mean `language`? Fields: inner, language, order, top_words"
    );
    assert_eq!(
        message_at(&found, "/options"),
        "`language` is missing: it is required (a string: ISO 639-1 code, e.g. `en`.)"
    );
    assert_eq!(
        message_at(&found, "/options/inner/top_words"),
        "expected an integer from 1 to 50, got the string \"3\""
    );
}

#[test]
fn a_value_of_no_allowed_type_names_them() {
    let found = check(&nested(), &json!({"query": "q", "options": "fast"}));
    assert_eq!(message_at(&found, "/options"), "expected an object or null, got the string \"fast\"");
}

#[test]
fn a_tagged_variant_is_explained_by_its_tag() {
    let variant = |kind: &str, field: &str| {
        json!({
            "type": "object",
            "properties": {"kind": {"const": kind, "type": "string"}, field: {"type": "integer"}},
            "required": ["kind", field]
        })
    };
    let schema = json!({"oneOf": [variant("circle", "radius"), variant("square", "side"), variant("line", "length")]});
    let found = check(&schema, &json!({"kind": "square", "side": "2"}));
    assert_eq!(found.len(), 1);
    assert_eq!(message_at(&found, "/side"), "expected an integer, got the string \"2\"");
    let found = check(&schema, &json!({"kind": "squar", "side": 2}));
    assert_eq!(
        message_at(&found, "/kind"),
        "`squar` is not one of the allowed values; did you mean `square`? Allowed: circle, square, line"
    );
    assert_eq!(found.len(), 1);
}

#[test]
fn a_const_among_other_forms_is_offered_with_them() {
    let schema = json!({"anyOf": [{"const": "auto"}, {"const": "off"}, {"type": "integer"}]});
    assert_eq!(
        check(&schema, &json!("aut"))[0].message,
        "`aut` is not one of the allowed values; did you mean `auto`? Allowed: auto, off (or an integer)"
    );
}

#[test]
fn long_values_are_cut() {
    let long = "x".repeat(10_000);
    let found = check(&echo(), &json!({"text": "hi", "count": long, "volume": long, long.clone(): 1}));
    for violation in &found {
        assert!(violation.message.chars().count() < 200, "{violation:?}");
        assert!(violation.pointer.len() <= long.len() + 1);
    }
    assert!(message_at(&found, "/count").ends_with("…\""));
}

#[test]
fn at_most_twenty_sorted_by_index() {
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let found = check(&schema, &json!((0..50).collect::<Vec<_>>()));
    let pointers: Vec<&str> = found.iter().map(|violation| violation.pointer.as_str()).collect();
    let expected: Vec<String> = (0..20).map(|index| format!("/{index}")).collect();
    assert_eq!(pointers, expected);
}

#[test]
fn deep_recursive_values_are_explained_without_overflow() {
    let schema = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {
            "type": "object",
            "properties": {"value": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
            "additionalProperties": false
        }}
    });
    let mut value = json!({"value": "bottom"});
    for _ in 0..100 {
        value = json!({"value": 1, "next": value});
    }
    let found = check(&schema, &value);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, "does not have any of the allowed forms; got an object");
    assert_eq!(found[0].pointer, "/next".repeat(MAX_NESTING + 1));
}

#[test]
fn deeply_nested_alternatives_stop_at_a_depth() {
    let mut schema = json!({"type": "string", "minLength": 5});
    for _ in 0..40 {
        schema = json!({"anyOf": [schema, {"type": "null"}]});
    }
    let found = check(&schema, &json!("ab"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, "does not have any of the allowed forms; got the string \"ab\"");
}

#[test]
fn huge_enums_and_arrays_are_handled() {
    let values: Vec<String> = (0..10_000).map(|index| format!("value_{index}")).collect();
    let schema = json!({
        "type": "object",
        "properties": {
            "pick": {"enum": values},
            "rows": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Row"}}, {"type": "null"}]}
        },
        "$defs": {"Row": {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}}
    });
    let rows: Vec<Value> = (0..10_000).map(|index| json!({"n": "x", "m": index})).collect();
    let found = check(&schema, &json!({"pick": "value_99999", "rows": rows}));
    assert_eq!(found.len(), MAX_VIOLATIONS);
    assert_eq!(
        message_at(&found, "/pick"),
        "`value_99999` is not one of the 10000 allowed values; did you mean `value_9999`? \
         Closest: value_9999, value_1999, value_2999, value_3999, value_4999, …"
    );
    assert_eq!(message_at(&found, "/rows/0/n"), "expected an integer, got the string \"x\"");
}

#[test]
fn broken_and_odd_schemas_still_get_messages() {
    // A reference into another document: nothing to read, still a message.
    let schema = json!({"properties": {"a": {"type": "integer"}}, "required": ["b"], "additionalProperties": false});
    let found = check(&schema, &json!({"a": "1", "c": 2}));
    assert_eq!(message_at(&found, ""), "`b` is missing: it is required");
    assert_eq!(message_at(&found, "/c"), "`c` is not a parameter. Parameters: a");
    let schema = json!({"propertyNames": {"maxLength": 3}});
    assert_eq!(
        check(&schema, &json!({"long_name": 1}))[0].message,
        "the field name `long_name` is not allowed: must be at most 3 characters long; got 9 characters"
    );
    let schema =
        json!({"$ref": "#/$defs/T", "unevaluatedProperties": false, "$defs": {"T": {"properties": {"name": {}}}}});
    assert_eq!(
        check(&schema, &json!({"nme": 1}))[0].message,
        "`nme` is not a parameter; did you mean `name`? Parameters: name"
    );
    let schema = json!({"prefixItems": [{"type": "integer"}], "items": false});
    assert_eq!(check(&schema, &json!([1, 2]))[0].pointer, "/1");
}

#[test]
fn formats_are_words() {
    // Draft 7 asserts formats; 2020-12 only annotates them.
    let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "format": "date"});
    let found = check(&schema, &json!("10/03/2024"));
    assert_eq!(found[0].message, "must be a date like 2024-03-10; got \"10/03/2024\"");
}

#[test]
fn every_tool_schema_gets_plain_messages() {
    let calls = [
        (calculator(), json!({"expression": "", "variables": {"x": "2"}})),
        (unit_convert(), json!({"value": "1", "from": 3, "to": null})),
        (regex(), json!({"pattern": 1, "text": "t", "operation": "find", "flags": {"case": true}, "limit": 0})),
        (files(), json!({"operation": "list", "path": "/", "length": 0, "max_results": 10_001, "glob": 3})),
        (datetime(), json!({"operation": "now", "largest_unit": 3, "instant": 5})),
        (http_fetch(), json!({"url": "x", "max_bytes": 0, "headers": {"a": 1}, "follow_redirects": "yes"})),
        (json_query(), json!({"query": "", "limit": -1})),
    ];
    for (schema, args) in calls {
        let found = check(&schema, &args);
        assert!(found.iter().all(|violation| !violation.message.is_empty()));
    }
}
