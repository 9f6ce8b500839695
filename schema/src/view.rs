//! A read-only view of a tool's schema, for explaining violations: keywords looked up
//! through `$ref` chains, properties, alternatives, types and limits. It never says anything
//! in words; `messages` does.

use std::collections::BTreeSet;

use jsonschema::JsonType;
use serde_json::Value;

/// `$ref` hops followed from one schema: a cycle of references must end.
const MAX_REF_HOPS: usize = 16;

/// A schema seen through its `$ref` chain: a keyword is looked up on the schema itself
/// first, then on what it refers to, so a property's own `description` wins over its type's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'s> {
    /// The whole schema, which local `$ref`s point into.
    root: &'s Value,
    node: &'s Value,
}

impl<'s> View<'s> {
    /// `node`, a schema inside `root`.
    #[cfg(test)]
    pub(crate) fn new(root: &'s Value, node: &'s Value) -> Self {
        Self { root, node }
    }

    /// The schema at a location from the root (`/properties/a/anyOf/0`). A `$ref` token (in
    /// evaluation-style paths, as jsonschema writes them) follows the reference of the
    /// schema it is in.
    pub(crate) fn at_location(root: &'s Value, location: &str) -> Option<Self> {
        let mut node = root;
        for token in location.split('/').skip(1).map(unescape_token) {
            node = match node.get("$ref").and_then(Value::as_str) {
                Some(reference) if token == "$ref" => resolve_ref(root, reference)?,
                _ => child(node, &token)?,
            };
        }
        Some(Self { root, node })
    }

    pub(crate) fn get(self, keyword: &str) -> Option<&'s Value> {
        let mut node = self.node;
        for _ in 0..MAX_REF_HOPS {
            if let Some(found) = node.get(keyword) {
                return Some(found);
            }
            node = resolve_ref(self.root, node.get("$ref")?.as_str()?)?;
        }
        None
    }

    /// The schema under `keyword` (`items`, `contains`).
    pub(crate) fn child(self, keyword: &str) -> Option<Self> {
        self.get(keyword).map(|node| Self { root: self.root, node })
    }

    /// The schema of property `name`.
    pub(crate) fn property(self, name: &str) -> Option<Self> {
        self.get("properties")?.get(name).map(|node| Self { root: self.root, node })
    }

    /// The alternatives of `anyOf`, else of `oneOf`, if that holds a list.
    pub(crate) fn alternatives(self) -> Option<impl Iterator<Item = Self>> {
        let nodes = self.get("anyOf").or_else(|| self.get("oneOf"))?.as_array()?;
        Some(nodes.iter().map(move |node| Self { root: self.root, node }))
    }

    fn branches(self) -> impl Iterator<Item = Self> {
        let lists = ["allOf", "anyOf", "oneOf"].into_iter().filter_map(move |keyword| self.get(keyword));
        lists.filter_map(Value::as_array).flatten().map(move |node| Self { root: self.root, node })
    }

    /// A numeric keyword (`minimum`), if it holds a number.
    pub(crate) fn number(self, keyword: &str) -> Option<&'s Value> {
        self.get(keyword).filter(|value| value.is_number())
    }

    /// A count keyword (`minLength`), if it holds a non-negative integer.
    pub(crate) fn count(self, keyword: &str) -> Option<u64> {
        self.get(keyword).and_then(Value::as_u64)
    }

    /// A text keyword (`format`, `pattern`, `description`), if it holds a string.
    pub(crate) fn text(self, keyword: &str) -> Option<&'s str> {
        self.get(keyword).and_then(Value::as_str)
    }

    /// Names in `properties`, and in those of `allOf` / `anyOf` / `oneOf` branches, which
    /// `unevaluatedProperties` also accepts.
    pub(crate) fn declared_properties(self) -> Vec<&'s str> {
        let own = self.get("properties").and_then(Value::as_object).into_iter();
        let branches = self.branches().filter_map(|branch| branch.get("properties")?.as_object());
        // Sorted, so the list does not depend on serde_json's `preserve_order` feature.
        let names: BTreeSet<&str> =
            own.chain(branches).flat_map(|properties| properties.keys()).map(String::as_str).collect();
        names.into_iter().collect()
    }

    /// The values of `enum`, or of `oneOf` / `anyOf` whose branches are all `const`.
    pub(crate) fn enum_values(self) -> Option<Vec<&'s Value>> {
        if let Some(values) = self.get("enum").and_then(Value::as_array) {
            return Some(values.iter().collect());
        }
        let branches = self.get("oneOf").or_else(|| self.get("anyOf")).and_then(Value::as_array)?;
        branches.iter().map(|node| Self { root: self.root, node }.get("const")).collect()
    }

    /// The types `type` names, in its order; unknown names left out.
    pub(crate) fn types(self) -> Vec<JsonType> {
        match self.get("type") {
            Some(Value::String(name)) => name.parse().into_iter().collect(),
            Some(Value::Array(names)) => names.iter().filter_map(|name| name.as_str()?.parse().ok()).collect(),
            _ => Vec::new(),
        }
    }
}

/// A local reference (`#`, `#/$defs/X`, `#/definitions/X`) in the root schema; `None` for
/// anchors and other documents.
fn resolve_ref<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    let mut node = root;
    for token in fragment.strip_prefix('/')?.split('/') {
        node = child(node, &unescape_token(&percent_decode(token)))?;
    }
    Some(node)
}

fn child<'s>(node: &'s Value, token: &str) -> Option<&'s Value> {
    match node {
        Value::Object(map) => map.get(token),
        Value::Array(items) => items.get(token.parse::<usize>().ok()?),
        _ => None,
    }
}

/// A JSON Pointer token with `~1` and `~0` restored.
fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// `%XX` escapes in a URI fragment, as `$ref` may write `$defs` names with odd chars.
fn percent_decode(token: &str) -> String {
    let bytes = token.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).filter(|hex| hex.iter().all(u8::is_ascii_hexdigit));
        let escaped = hex.and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match (bytes[i], escaped) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reference_cycles_end() {
        let root = json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        let view = View::new(&root, &root["$defs"]["A"]);
        assert_eq!(view.get("type"), None);
        assert_eq!(view.enum_values(), None);
        assert!(view.declared_properties().is_empty());
    }

    #[test]
    fn references_resolve_locally() {
        let root = json!({"$defs": {"a/b": {"x": 1}, "c d": {"y": 2}}});
        assert_eq!(resolve_ref(&root, "#/$defs/a~1b"), Some(&json!({"x": 1})));
        assert_eq!(resolve_ref(&root, "#/$defs/c%20d"), Some(&json!({"y": 2})));
        assert_eq!(resolve_ref(&root, "#"), Some(&root));
        assert_eq!(resolve_ref(&root, "other.json#/$defs/x"), None);
        assert_eq!(resolve_ref(&root, "#anchor"), None);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn a_keyword_of_the_schema_itself_wins_over_its_reference() {
        let root = json!({
            "properties": {"a": {"$ref": "#/$defs/A", "description": "own"}},
            "$defs": {"A": {"type": "integer", "description": "shared", "minimum": 1}}
        });
        let a = View::at_location(&root, "/properties/a").expect("a property");
        assert_eq!(a.text("description"), Some("own"));
        assert_eq!(a.types(), [JsonType::Integer]);
        assert_eq!(a.number("minimum"), Some(&json!(1)));
        let through = View::at_location(&root, "/properties/a/$ref").expect("through the reference");
        assert_eq!(through.text("description"), Some("shared"));
        assert!(View::at_location(&root, "/properties/b").is_none());
    }
}
