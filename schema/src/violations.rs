//! Plain-language explanations of how a call's arguments break the tool's parameters schema,
//! written for the model that has to fix the call.
//!
//! jsonschema's messages are written for schema authors. Anything wrong inside an optional
//! parameter (schemars writes `anyOf: [{$ref: X}, {type: null}]`) or an enum of documented
//! constants (`oneOf: [{const: …}, …]`) comes out as "… is not valid under any of the schemas
//! listed in the 'anyOf' keyword", which leaves a model guessing. [`explain`] instead descends
//! into the alternative the value was most likely meant to fit, lists allowed values with a
//! "did you mean", names unknown and missing properties next to their closest or described
//! counterparts, and says every limit in words rather than schema keywords.

use std::cmp::{Ordering, Reverse};
use std::collections::BTreeSet;
use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

use crate::Violation;
use crate::suggest;
use crate::truncate::truncated;

/// At most this many violations are reported for one call: enough to fix it, short enough
/// for a model's context.
const MAX_VIOLATIONS: usize = 20;
/// Longest message, in bytes, `…` included.
const MAX_MESSAGE_BYTES: usize = 300;
/// Errors read from the validator; the rest of a pathological value adds nothing fixable.
const MAX_ERRORS_READ: usize = 100;
/// Violations gathered before sorting and cutting to [`MAX_VIOLATIONS`]: bounds memory
/// when alternatives nest many errors.
const MAX_COLLECTED: usize = 200;
/// Nested alternatives (`anyOf` in a branch of an `anyOf` …) followed before giving up.
const MAX_NESTING: usize = 32;
/// `$ref` hops followed from one schema: a cycle of references must end.
const MAX_REF_HOPS: usize = 16;
/// How deep a missing property's schema is described (`anyOf` of `anyOf` …).
const MAX_DESCRIBE_DEPTH: usize = 4;
/// A value, name or pattern quoted in a message is cut to this many bytes.
const MAX_QUOTED_BYTES: usize = 60;
/// An allowed value shown in a list is cut to this many bytes.
const MAX_LISTED_BYTES: usize = 40;
/// Enums this long are listed in full; longer ones show the values nearest the given one.
const MAX_LISTED_VALUES: usize = 12;
/// How many of a long enum's values are shown.
const NEAREST_SHOWN: usize = 5;
/// Allowed values collected from alternatives, to bound the work on a huge enum.
const MAX_VALUES_KEPT: usize = 1000;
/// Declared property names listed after an unknown one.
const MAX_LISTED_NAMES: usize = 24;
/// A property description quoted with a missing property is cut to this many bytes.
const MAX_DESCRIPTION_BYTES: usize = 150;
/// Arrays longer than this are not searched for the duplicate a `uniqueItems` error is about.
const MAX_DUPLICATE_SEARCH: usize = 64;

/// Explains the `errors` that `Validator::iter_errors` gave for a call's arguments, at most
/// [`MAX_VIOLATIONS`] of them, sorted by pointer then message, without duplicates.
///
/// `schema` must be the parameters schema the validator was compiled from: it is read to
/// list declared properties, describe missing ones and resolve local `$ref`s. Errors whose
/// schema location it does not hold still get a plain message. Never panics.
pub(crate) fn explain<'a>(schema: &Value, errors: impl IntoIterator<Item = ValidationError<'a>>) -> Vec<Violation> {
    let errors: Vec<ValidationError<'a>> = errors.into_iter().take(MAX_ERRORS_READ).collect();
    let mut explainer = Explainer { root: schema, found: Vec::new() };
    explainer.describe_all(&errors, 0);
    // An invalid call must never look valid, whatever the errors held.
    if let (true, Some(first)) = (explainer.found.is_empty(), errors.first()) {
        explainer.push(first.instance_path().as_str(), "does not fit the tool's parameters".to_owned());
    }
    finish(explainer.found)
}

/// Shortens, sorts (numeric array indexes in order), dedupes and caps the violations.
fn finish(mut found: Vec<Violation>) -> Vec<Violation> {
    for violation in &mut found {
        violation.message = truncated(&violation.message, MAX_MESSAGE_BYTES);
    }
    found.sort_by(|a, b| compare_pointers(&a.pointer, &b.pointer).then_with(|| a.message.cmp(&b.message)));
    found.dedup();
    found.truncate(MAX_VIOLATIONS);
    found
}

/// Walks the errors, collecting violations, with the root schema at hand.
#[derive(Debug)]
struct Explainer<'s> {
    root: &'s Value,
    found: Vec<Violation>,
}

impl<'s> Explainer<'s> {
    fn push(&mut self, pointer: &str, message: String) {
        if !self.is_full() {
            self.found.push(Violation { pointer: pointer.to_owned(), message });
        }
    }

    fn is_full(&self) -> bool {
        self.found.len() >= MAX_COLLECTED
    }

    /// Describes sibling errors. A type error is left out where the same value also missed
    /// an enum or const: the list of allowed values says more.
    fn describe_all(&mut self, errors: &[ValidationError<'_>], depth: usize) {
        let valued: BTreeSet<&str> =
            errors.iter().filter(|error| is_value_error(error)).map(|error| error.instance_path().as_str()).collect();
        for error in errors {
            if self.is_full() {
                return;
            }
            let redundant = is_type_error(error) && valued.contains(error.instance_path().as_str());
            if !redundant {
                self.describe(error, depth);
            }
        }
    }

    fn describe(&mut self, error: &ValidationError<'_>, depth: usize) {
        let at = error.instance_path().as_str();
        match error.kind() {
            ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
                self.describe_alternatives(error, context, depth);
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => self.describe_unknown(error, unexpected),
            ValidationErrorKind::PropertyNames { error: inner } => self.describe_property_name(at, inner, depth),
            ValidationErrorKind::Required { property } => self.push(at, self.missing_message(error, property)),
            ValidationErrorKind::Type { kind } => self.push(at, self.type_message(error, kind)),
            ValidationErrorKind::Contains => self.push(at, self.contains_message(error)),
            kind => self.push(at, plain_message(kind, error.instance())),
        }
    }

    /// A value that fits none of `anyOf` / `oneOf`: explains the branch it was most likely
    /// meant for, or, when it only missed on type or value everywhere, what would fit.
    fn describe_alternatives(
        &mut self,
        error: &ValidationError<'_>,
        branches: &[Vec<ValidationError<'static>>],
        depth: usize,
    ) {
        let at = error.instance_path().as_str();
        if depth >= MAX_NESTING {
            let message = format!("does not have any of the allowed forms; got {}", described(error.instance()));
            return self.push(at, message);
        }
        let (mismatched, fitting): (Vec<&[ValidationError<'static>]>, Vec<_>) =
            branches.iter().map(Vec::as_slice).partition(|branch| is_type_mismatch(branch, at));
        match fitting.as_slice() {
            [] => self.push(at, expected_message(&types_of(&mismatched), None, error.instance())),
            [only] => self.describe_branch(at, only, depth + 1),
            many if many.iter().all(|branch| is_value_mismatch(branch, at)) => {
                let allowed = allowed_values(many.iter().flat_map(|branch| branch.iter()));
                self.push(at, not_allowed_message(error.instance(), &allowed, &types_of(&mismatched)));
            }
            many => match common_tag(many) {
                Some((tag, allowed)) => {
                    self.push(tag.instance_path().as_str(), not_allowed_message(tag.instance(), &allowed, &[]));
                }
                None => self.describe_branch(at, best_branch(many), depth + 1),
            },
        }
    }

    fn describe_branch(&mut self, at: &str, branch: &[ValidationError<'_>], depth: usize) {
        if branch.is_empty() {
            return self.push(at, "does not have any of the allowed forms".to_owned());
        }
        self.describe_all(branch, depth);
    }

    /// Properties the schema does not declare: one violation each, at the property, with
    /// the declared name it most likely meant.
    fn describe_unknown(&mut self, error: &ValidationError<'_>, unexpected: &[String]) {
        let at = error.instance_path().as_str();
        let declared = self.keyword_parent(error).map(View::declared_properties).unwrap_or_default();
        for name in unexpected.iter().take(MAX_VIOLATIONS) {
            self.push(&child_pointer(at, name), unknown_message(name, &declared, at.is_empty()));
        }
    }

    /// A property name that breaks `propertyNames`: the name is described as a value, then
    /// reported at the object.
    fn describe_property_name(&mut self, at: &str, inner: &ValidationError<'static>, depth: usize) {
        let name = subject(inner.instance());
        let start = self.found.len();
        if depth < MAX_NESTING {
            self.describe(inner, depth + 1);
        }
        if self.found.len() == start {
            self.push(at, format!("the field name {name} is not allowed"));
            return;
        }
        for violation in self.found.iter_mut().skip(start) {
            at.clone_into(&mut violation.pointer);
            violation.message = format!("the field name {name} is not allowed: {}", violation.message);
        }
    }

    fn missing_message(&self, error: &ValidationError<'_>, property: &Value) -> String {
        let name = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
        let schema = self.keyword_parent(error).and_then(|object| object.property(&name));
        match schema.and_then(View::summary) {
            Some(summary) => format!("{} is missing: it is required ({summary})", code(&name)),
            None => format!("{} is missing: it is required", code(&name)),
        }
    }

    fn type_message(&self, error: &ValidationError<'_>, kind: &TypeKind) -> String {
        let types: Vec<JsonType> = match kind {
            TypeKind::Single(single) => vec![*single],
            TypeKind::Multiple(set) => set.iter().collect(),
        };
        expected_message(&types, self.keyword_parent(error), error.instance())
    }

    fn contains_message(&self, error: &ValidationError<'_>) -> String {
        let wanted = self.keyword_parent(error).and_then(|parent| parent.child("contains")).and_then(|c| c.words(0));
        match wanted {
            Some(wanted) => format!("must contain enough items that are {wanted}"),
            None => "must contain enough items of the required kind".to_owned(),
        }
    }

    /// The schema object holding the keyword an error is about.
    fn keyword_parent(&self, error: &ValidationError<'_>) -> Option<View<'s>> {
        let path = error.schema_path().as_str();
        let parent = path.rsplit_once('/').map_or("", |(parent, _)| parent);
        self.walk(parent)
    }

    /// Follows a schema location from the root. A `$ref` token (in evaluation-style paths)
    /// follows the reference of the schema it is in.
    fn walk(&self, path: &str) -> Option<View<'s>> {
        let mut node = self.root;
        for token in path.split('/').skip(1).map(unescape_token) {
            node = match node.get("$ref").and_then(Value::as_str) {
                Some(reference) if token == "$ref" => resolve_ref(self.root, reference)?,
                _ => child(node, &token)?,
            };
        }
        Some(View { root: self.root, node })
    }
}

/// A schema seen through its `$ref` chain: a keyword is looked up on the schema itself
/// first, then on what it refers to, so a property's own `description` wins over its type's.
#[derive(Debug, Clone, Copy)]
struct View<'s> {
    root: &'s Value,
    node: &'s Value,
}

impl<'s> View<'s> {
    fn get(self, keyword: &str) -> Option<&'s Value> {
        let mut node = self.node;
        for _ in 0..MAX_REF_HOPS {
            if let Some(found) = node.get(keyword) {
                return Some(found);
            }
            node = resolve_ref(self.root, node.get("$ref")?.as_str()?)?;
        }
        None
    }

    fn child(self, keyword: &str) -> Option<Self> {
        self.get(keyword).map(|node| Self { root: self.root, node })
    }

    fn property(self, name: &str) -> Option<Self> {
        self.get("properties")?.get(name).map(|node| Self { root: self.root, node })
    }

    fn branches(self) -> impl Iterator<Item = Self> {
        let lists = ["allOf", "anyOf", "oneOf"].into_iter().filter_map(move |keyword| self.get(keyword));
        lists.filter_map(Value::as_array).flatten().map(move |node| Self { root: self.root, node })
    }

    fn number(self, keyword: &str) -> Option<&'s Value> {
        self.get(keyword).filter(|value| value.is_number())
    }

    fn count(self, keyword: &str) -> Option<u64> {
        self.get(keyword).and_then(Value::as_u64)
    }

    fn text(self, keyword: &str) -> Option<&'s str> {
        self.get(keyword).and_then(Value::as_str)
    }

    /// Names in `properties`, and in those of `allOf` / `anyOf` / `oneOf` branches, which
    /// `unevaluatedProperties` also accepts.
    fn declared_properties(self) -> Vec<&'s str> {
        let own = self.get("properties").and_then(Value::as_object).into_iter();
        let branches = self.branches().filter_map(|branch| branch.get("properties")?.as_object());
        // Sorted, so the list does not depend on serde_json's `preserve_order` feature.
        let names: BTreeSet<&str> =
            own.chain(branches).flat_map(|properties| properties.keys()).map(String::as_str).collect();
        names.into_iter().collect()
    }

    /// "a string: The text to search." for a property, from its type and description.
    fn summary(self) -> Option<String> {
        let words = self.words(0);
        let description = self.text("description").map(first_sentence);
        match (words, description) {
            (Some(words), Some(description)) => Some(format!("{words}: {description}")),
            (words, description) => words.or(description),
        }
    }

    /// What the schema accepts, in words: "an integer from 1 to 10", "one of: a, b".
    fn words(self, depth: usize) -> Option<String> {
        if depth > MAX_DESCRIBE_DEPTH {
            return None;
        }
        if let Some(constant) = self.get("const") {
            return Some(format!("exactly {}", listed(constant)));
        }
        if let Some(values) = self.enum_values() {
            return Some(one_of_words(&values));
        }
        if let Some(branches) = self.get("anyOf").or_else(|| self.get("oneOf")).and_then(Value::as_array) {
            let described = branches.iter().filter_map(|node| Self { root: self.root, node }.words(depth + 1));
            let mut words: Vec<String> = Vec::new();
            for word in described {
                if !words.contains(&word) {
                    words.push(word);
                }
            }
            return (!words.is_empty()).then(|| join_or(&words));
        }
        let words: Vec<String> = null_last(&self.types()).map(|ty| type_words(ty, Some(self))).collect();
        (!words.is_empty()).then(|| join_or(&words))
    }

    /// The values of `enum`, or of `oneOf` / `anyOf` whose branches are all `const`.
    fn enum_values(self) -> Option<Vec<&'s Value>> {
        if let Some(values) = self.get("enum").and_then(Value::as_array) {
            return Some(values.iter().collect());
        }
        let branches = self.get("oneOf").or_else(|| self.get("anyOf")).and_then(Value::as_array)?;
        branches.iter().map(|node| Self { root: self.root, node }.get("const")).collect()
    }

    fn types(self) -> Vec<JsonType> {
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

/// The pointer to property `name` of the object at `at`.
fn child_pointer(at: &str, name: &str) -> String {
    format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// Orders pointers token by token, array indexes as numbers (`/2` before `/10`).
fn compare_pointers(a: &str, b: &str) -> Ordering {
    let key = |token: &str| (token.parse::<u64>().map_or((1, 0), |index| (0, index)), token.to_owned());
    a.split('/').map(key).cmp(b.split('/').map(key))
}

fn is_type_error(error: &ValidationError<'_>) -> bool {
    matches!(error.kind(), ValidationErrorKind::Type { .. })
}

fn is_value_error(error: &ValidationError<'_>) -> bool {
    matches!(error.kind(), ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. })
}

/// A branch the value missed only on `type`, right where the alternatives are: a bad match.
fn is_type_mismatch(branch: &[ValidationError<'_>], at: &str) -> bool {
    !branch.is_empty() && branch.iter().all(|error| is_type_error(error) && error.instance_path().as_str() == at)
}

/// A branch the value missed only for not being one of its values (`const`, `enum`).
fn is_value_mismatch(branch: &[ValidationError<'_>], at: &str) -> bool {
    let on_the_spot = |error: &ValidationError<'_>| error.instance_path().as_str() == at;
    branch.iter().any(is_value_error)
        && branch.iter().all(|error| on_the_spot(error) && (is_value_error(error) || is_type_error(error)))
}

/// The branch the value was most likely meant for: fewest missed tags (`const`, one-value
/// `enum`: what tells tagged variants apart), then the deepest error (it got furthest),
/// then fewest errors, then the first.
fn best_branch<'b>(branches: &[&'b [ValidationError<'static>]]) -> &'b [ValidationError<'static>] {
    let score = |branch: &&[ValidationError<'static>]| {
        let missed_tags = branch.iter().filter(|error| is_tag_error(error)).count();
        let deepest = branch.iter().map(|error| error.instance_path().as_str().matches('/').count()).max();
        (missed_tags, Reverse(deepest.unwrap_or(0)), branch.len())
    };
    branches.iter().copied().min_by_key(score).unwrap_or_default()
}

/// Tagged variants (`{"kind": {"const": "circle"}, …}`) the value matched none of: when
/// every branch missed exactly one tag, at the same place, that tag is what to fix.
fn common_tag<'b>(
    branches: &[&'b [ValidationError<'static>]],
) -> Option<(&'b ValidationError<'static>, Vec<&'b Value>)> {
    let mut tags = Vec::with_capacity(branches.len());
    for branch in branches {
        match branch.iter().filter(|error| is_tag_error(error)).collect::<Vec<_>>().as_slice() {
            [tag] => tags.push(*tag),
            _ => return None,
        }
    }
    let first = *tags.first()?;
    if tags.iter().any(|tag| tag.instance_path() != first.instance_path()) {
        return None;
    }
    let allowed = allowed_values(tags.iter().copied());
    Some((first, allowed))
}

fn is_tag_error(error: &ValidationError<'_>) -> bool {
    match error.kind() {
        ValidationErrorKind::Constant { .. } => true,
        ValidationErrorKind::Enum { options } => options.as_array().is_some_and(|options| options.len() == 1),
        _ => false,
    }
}

/// Every type the branches wanted, in a stable order.
fn types_of(branches: &[&[ValidationError<'_>]]) -> Vec<JsonType> {
    let mut types = BTreeSet::new();
    for error in branches.iter().flat_map(|branch| branch.iter()) {
        match error.kind() {
            ValidationErrorKind::Type { kind: TypeKind::Single(single) } => {
                types.insert(*single);
            }
            ValidationErrorKind::Type { kind: TypeKind::Multiple(set) } => types.extend(set.iter()),
            _ => {}
        }
    }
    types.into_iter().collect()
}

/// The `const` and `enum` values of the errors, each once, in order.
fn allowed_values<'b>(errors: impl IntoIterator<Item = &'b ValidationError<'static>>) -> Vec<&'b Value> {
    let mut values: Vec<&Value> = Vec::new();
    for error in errors {
        let found: Vec<&Value> = match error.kind() {
            ValidationErrorKind::Constant { expected_value } => vec![expected_value.as_ref()],
            ValidationErrorKind::Enum { options } => options.as_array().map(|o| o.iter().collect()).unwrap_or_default(),
            _ => Vec::new(),
        };
        for value in found {
            if values.len() < MAX_VALUES_KEPT && !values.contains(&value) {
                values.push(value);
            }
        }
    }
    values
}

/// "expected an integer from 1 to 10, got the string \"5\"".
fn expected_message(types: &[JsonType], schema: Option<View<'_>>, given: &Value) -> String {
    if types.is_empty() {
        return format!("has the wrong type; got {}", described(given));
    }
    let words: Vec<String> = null_last(types).map(|ty| type_words(ty, schema)).collect();
    format!("expected {}, got {}", join_or(&words), described(given))
}

/// "`lightyear` is not one of the allowed values; did you mean `light_year`? Allowed: …".
/// `also` are types other alternatives accept (typically null).
fn not_allowed_message(given: &Value, allowed: &[&Value], also: &[JsonType]) -> String {
    let strings: Vec<&str> = allowed.iter().filter_map(|value| value.as_str()).collect();
    if allowed.is_empty() {
        return format!("no value is allowed here; got {}", described(given));
    }
    let guess = given.as_str().and_then(|word| suggest::closest(word, strings.iter().copied(), 1).first().copied());
    let mut message = subject(given);
    if allowed.len() <= MAX_LISTED_VALUES {
        message.push_str(" is not one of the allowed values");
    } else {
        let _ = write!(message, " is not one of the {} allowed values", allowed.len());
    }
    match guess {
        Some(guess) => {
            let _ = write!(message, "; did you mean {}?", code(guess));
        }
        None => message.push('.'),
    }
    message.push(' ');
    message.push_str(&allowed_list(given, allowed, &strings, guess.is_some()));
    if !also.is_empty() {
        let words: Vec<String> = null_last(also).map(|ty| type_words(ty, None)).collect();
        let _ = write!(message, " (or {})", join_or(&words));
    }
    message
}

/// All the allowed values when there are few, else those nearest the given string when one
/// is close, else the first few in the tool's own order (which groups related values).
fn allowed_list(given: &Value, allowed: &[&Value], strings: &[&str], close: bool) -> String {
    if allowed.len() <= MAX_LISTED_VALUES {
        let shown: Vec<String> = allowed.iter().map(|value| listed(value)).collect();
        return format!("Allowed: {}", shown.join(", "));
    }
    match given.as_str() {
        Some(word) if close && !strings.is_empty() => {
            let nearest = suggest::nearest(word, strings.iter().copied(), NEAREST_SHOWN);
            let shown: Vec<String> = nearest.into_iter().map(|name| listed(&Value::from(name))).collect();
            format!("Closest: {}, …", shown.join(", "))
        }
        _ => {
            let shown: Vec<String> = allowed.iter().take(MAX_LISTED_VALUES).map(|value| listed(value)).collect();
            format!("The first of them: {}, … (the parameter's schema lists them all)", shown.join(", "))
        }
    }
}

/// "`expr` is not a parameter; did you mean `expression`? Parameters: expression, variables".
fn unknown_message(name: &str, declared: &[&str], top_level: bool) -> String {
    let (what, label) = if top_level { ("a parameter", "Parameters") } else { ("a field of this object", "Fields") };
    let mut message = format!("{} is not {what}", code(name));
    match suggest::closest(name, declared.iter().copied(), 1).first() {
        Some(guess) => {
            let _ = write!(message, "; did you mean {}?", code(guess));
        }
        None => message.push('.'),
    }
    if !declared.is_empty() {
        let listed: Vec<&str> = declared.iter().copied().take(MAX_LISTED_NAMES).collect();
        let more = if declared.len() > MAX_LISTED_NAMES { ", …" } else { "" };
        let _ = write!(message, " {label}: {}{more}", listed.join(", "));
    }
    message
}

/// Messages that need nothing but the error itself.
fn plain_message(kind: &ValidationErrorKind, given: &Value) -> String {
    match kind {
        ValidationErrorKind::Minimum { limit } => format!("must be at least {limit}; got {}", shown(given)),
        ValidationErrorKind::Maximum { limit } => format!("must be at most {limit}; got {}", shown(given)),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("must be greater than {limit}; got {}", shown(given))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be less than {limit}; got {}", shown(given)),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("must be a multiple of {multiple_of}; got {}", shown(given))
        }
        ValidationErrorKind::MinLength { limit } => length_message("at least", *limit, given),
        ValidationErrorKind::MaxLength { limit } => length_message("at most", *limit, given),
        ValidationErrorKind::MinItems { limit } => size_message("at least", *limit, "item", given),
        ValidationErrorKind::MaxItems { limit } => size_message("at most", *limit, "item", given),
        ValidationErrorKind::AdditionalItems { limit } => size_message("at most", *limit as u64, "item", given),
        ValidationErrorKind::MinProperties { limit } => size_message("at least", *limit, "entry", given),
        ValidationErrorKind::MaxProperties { limit } => size_message("at most", *limit, "entry", given),
        ValidationErrorKind::Pattern { pattern } => {
            format!("must match the pattern {}; got {}", code(pattern), shown(given))
        }
        ValidationErrorKind::UniqueItems => unique_message(given),
        ValidationErrorKind::Enum { options } => {
            let allowed: Vec<&Value> = options.as_array().map(|options| options.iter().collect()).unwrap_or_default();
            not_allowed_message(given, &allowed, &[])
        }
        ValidationErrorKind::Constant { expected_value } => constant_message(expected_value, given),
        ValidationErrorKind::Format { format } => format_message(format, given),
        _ => other_message(kind, given),
    }
}

/// The rare kinds: a sentence each, no schema jargon.
fn other_message(kind: &ValidationErrorKind, given: &Value) -> String {
    match kind {
        ValidationErrorKind::UnevaluatedItems { unexpected } => {
            format!(
                "has {} not allowed here; remove {}",
                count_of(unexpected.len() as u64, "item"),
                them(unexpected.len())
            )
        }
        ValidationErrorKind::FalseSchema | ValidationErrorKind::Not { .. } => {
            format!("this value is not allowed here; got {}", described(given))
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "fits more than one of the allowed forms, so its meaning is ambiguous; it must fit exactly one".to_owned()
        }
        ValidationErrorKind::ContentEncoding { content_encoding } => {
            format!("must be {} encoded text", code(content_encoding))
        }
        ValidationErrorKind::ContentMediaType { content_media_type } => {
            format!("must be text in the {} media type", code(content_media_type))
        }
        ValidationErrorKind::FromUtf8 { .. } => "must decode to valid UTF-8 text".to_owned(),
        ValidationErrorKind::BacktrackLimitExceeded { .. } | ValidationErrorKind::RegexEngineFailure { .. } => {
            "could not be checked against its pattern (the check gave up); try a shorter or simpler value".to_owned()
        }
        ValidationErrorKind::Custom { message, .. } => message.clone(),
        ValidationErrorKind::Referencing(_) => {
            "could not be checked: the tool's parameters schema has a broken reference (a bug in the tool)".to_owned()
        }
        _ => format!("is not allowed here; got {}", described(given)),
    }
}

fn length_message(bound: &str, limit: u64, given: &Value) -> String {
    let got = given.as_str().map(|text| text.chars().count() as u64);
    match got {
        Some(0) if limit == 1 && bound == "at least" => "must not be empty".to_owned(),
        Some(got) => {
            format!("must be {bound} {} long; got {}", count_of(limit, "character"), count_of(got, "character"))
        }
        None => format!("must be {bound} {} long", count_of(limit, "character")),
    }
}

fn size_message(bound: &str, limit: u64, unit: &str, given: &Value) -> String {
    let got = match given {
        Value::Array(items) => Some(items.len() as u64),
        Value::Object(map) => Some(map.len() as u64),
        _ => None,
    };
    match got {
        Some(got) => format!("must have {bound} {}; got {got}", count_of(limit, unit)),
        None => format!("must have {bound} {}", count_of(limit, unit)),
    }
}

/// Names the first pair of equal items when the array is small enough to search.
fn unique_message(given: &Value) -> String {
    let items = given.as_array().map(Vec::as_slice).unwrap_or_default();
    let searched = &items[..items.len().min(MAX_DUPLICATE_SEARCH)];
    let pair = searched.iter().enumerate().find_map(|(i, item)| {
        let later = searched.iter().enumerate().skip(i + 1).find(|(_, other)| *other == item);
        later.map(|(j, _)| (i, j))
    });
    match pair {
        Some((i, j)) => format!("items must be unique, but items {i} and {j} are equal"),
        None => "items must be unique; remove the duplicates".to_owned(),
    }
}

fn constant_message(expected: &Value, given: &Value) -> String {
    format!("must be exactly {}; got {}", listed(expected), shown(given))
}

fn format_message(format: &str, given: &Value) -> String {
    if let Some(words) = format_words(format) {
        return format!("must be {words}; got {}", shown(given));
    }
    match integer_format_range(format) {
        (None, None) if matches!(format, "float" | "double") => format!("must be a number; got {}", shown(given)),
        (None, None) => format!("is not in the expected {} form; got {}", code(format), shown(given)),
        _ => format!("must be {}; got {}", Bounds::of_format(format).words("an integer", true), shown(given)),
    }
}

/// Plain words for the string formats JSON Schema defines.
fn format_words(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "a date-time like 2024-03-10T08:30:00Z",
        "date" => "a date like 2024-03-10",
        "time" => "a time like 08:30:00Z",
        "duration" => "an ISO 8601 duration like P1DT2H",
        "email" | "idn-email" => "an email address",
        "hostname" | "idn-hostname" => "a host name",
        "ipv4" => "an IPv4 address",
        "ipv6" => "an IPv6 address",
        "uri" | "iri" => "an absolute URI",
        "uri-reference" | "iri-reference" => "a URI or relative reference",
        "uri-template" => "a URI template",
        "uuid" => "a UUID",
        "regex" => "a valid regular expression",
        "json-pointer" => "a JSON Pointer like /a/0",
        "relative-json-pointer" => "a relative JSON Pointer like 1/a",
        _ => return None,
    })
}

/// Types in their order, except null last: "a string or null" reads as an option.
fn null_last(types: &[JsonType]) -> impl Iterator<Item = JsonType> {
    let (null, others): (Vec<JsonType>, Vec<JsonType>) = types.iter().partition(|ty| **ty == JsonType::Null);
    others.into_iter().chain(null)
}

/// One type in words, with the limits the schema puts on it.
fn type_words(ty: JsonType, schema: Option<View<'_>>) -> String {
    match ty {
        JsonType::Integer => number_words("an integer", schema, true),
        JsonType::Number => number_words("a number", schema, false),
        JsonType::String => string_words(schema),
        JsonType::Array => array_words(schema),
        JsonType::Object => "an object".to_owned(),
        JsonType::Boolean => "a boolean (true or false)".to_owned(),
        JsonType::Null => "null".to_owned(),
    }
}

/// "an integer from 1 to 10", "a non-negative integer", "a number (greater than 0)". An
/// integer `format` (schemars' `uint32` …) supplies the bounds the schema leaves out.
fn number_words(noun: &str, schema: Option<View<'_>>, integer: bool) -> String {
    let format = schema.and_then(|schema| schema.text("format")).filter(|_| integer);
    let implied = format.map(Bounds::of_format).unwrap_or_default();
    let bound = |keyword: &str| schema.and_then(|schema| schema.number(keyword)).map(Value::to_string);
    let bounds = Bounds {
        low: bound("minimum").or(implied.low),
        high: bound("maximum").or(implied.high),
        low_exclusive: bound("exclusiveMinimum"),
        high_exclusive: bound("exclusiveMaximum"),
    };
    bounds.words(noun, integer)
}

/// The limits on a number, as written in the schema.
#[derive(Debug, Default)]
struct Bounds {
    low: Option<String>,
    high: Option<String>,
    low_exclusive: Option<String>,
    high_exclusive: Option<String>,
}

impl Bounds {
    /// The limits of an integer `format`, such as schemars' `uint8`.
    fn of_format(format: &str) -> Self {
        let (low, high) = integer_format_range(format);
        Self { low: low.map(|low| low.to_string()), high: high.map(|high| high.to_string()), ..Self::default() }
    }

    fn words(self, noun: &str, integer: bool) -> String {
        match (self.low, self.high, self.low_exclusive, self.high_exclusive) {
            (Some(low), Some(high), None, None) => format!("{noun} from {low} to {high}"),
            (Some(low), None, None, None) if integer && low == "0" => "a non-negative integer".to_owned(),
            (low, high, low_exclusive, high_exclusive) => {
                let parts: Vec<String> = [
                    low.map(|low| format!("at least {low}")),
                    low_exclusive.map(|low| format!("greater than {low}")),
                    high.map(|high| format!("at most {high}")),
                    high_exclusive.map(|high| format!("less than {high}")),
                ]
                .into_iter()
                .flatten()
                .collect();
                if parts.is_empty() { noun.to_owned() } else { format!("{noun} ({})", parts.join(" and ")) }
            }
        }
    }
}

/// The range of schemars' integer formats, where it says more than "an integer".
fn integer_format_range(format: &str) -> (Option<i64>, Option<i64>) {
    match format {
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "uint" | "uint64" | "uint128" | "usize" => (Some(0), None),
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        _ => (None, None),
    }
}

/// "a non-empty string of at most 4096 characters", "a date like 2024-03-10".
fn string_words(schema: Option<View<'_>>) -> String {
    let Some(schema) = schema else { return "a string".to_owned() };
    if let Some(words) = schema.text("format").and_then(format_words) {
        return format!("a string: {words}");
    }
    let (min, max) = (schema.count("minLength").filter(|min| *min > 0), schema.count("maxLength"));
    let mut words = match (min, max) {
        (Some(1), Some(max)) => format!("a non-empty string of at most {}", count_of(max, "character")),
        (Some(1), None) => "a non-empty string".to_owned(),
        (Some(min), Some(max)) => format!("a string of {min} to {max} characters"),
        (Some(min), None) => format!("a string of at least {}", count_of(min, "character")),
        (None, Some(max)) => format!("a string of at most {}", count_of(max, "character")),
        (None, None) => "a string".to_owned(),
    };
    if let Some(pattern) = schema.text("pattern") {
        let _ = write!(words, " matching {}", code(pattern));
    }
    words
}

/// "an array of strings" when the items have one type.
fn array_words(schema: Option<View<'_>>) -> String {
    let items = schema.and_then(|schema| schema.child("items")).map(View::types).unwrap_or_default();
    match items.as_slice() {
        [single] => format!("an array of {}", plural(*single)),
        _ => "an array".to_owned(),
    }
}

fn plural(ty: JsonType) -> &'static str {
    match ty {
        JsonType::Integer => "integers",
        JsonType::Number => "numbers",
        JsonType::String => "strings",
        JsonType::Array => "arrays",
        JsonType::Object => "objects",
        JsonType::Boolean => "booleans",
        JsonType::Null => "nulls",
    }
}

/// "one of: a, b, c", or a few of a long list.
fn one_of_words(values: &[&Value]) -> String {
    let shown: Vec<String> = values.iter().take(MAX_LISTED_VALUES).map(|value| listed(value)).collect();
    if values.len() <= MAX_LISTED_VALUES {
        format!("one of: {}", shown.join(", "))
    } else {
        let few: Vec<&str> = shown.iter().take(NEAREST_SHOWN).map(String::as_str).collect();
        format!("one of {} values such as {}", values.len(), few.join(", "))
    }
}

/// The first sentence of a description if it is short, else its start.
fn first_sentence(description: &str) -> String {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat.match_indices(". ").map(|(at, _)| at + 1).find(|&at| {
        let next_is_capital = flat[at..].trim_start().starts_with(|c: char| c.is_uppercase());
        next_is_capital && !flat[..at].ends_with("e.g.") && !flat[..at].ends_with("i.e.")
    });
    match end {
        Some(end) if end <= MAX_DESCRIPTION_BYTES => flat[..end].to_owned(),
        _ => truncated(&flat, MAX_DESCRIPTION_BYTES),
    }
}

/// "a, b or c".
fn join_or(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// "1 character", "3 entries".
fn count_of(count: u64, unit: &str) -> String {
    match (count, unit) {
        (1, _) => format!("1 {unit}"),
        (_, "entry") => format!("{count} entries"),
        _ => format!("{count} {unit}s"),
    }
}

fn them(count: usize) -> &'static str {
    if count == 1 { "it" } else { "them" }
}

/// A value as the subject of a sentence: a string in backticks, else described.
fn subject(value: &Value) -> String {
    match value.as_str() {
        Some(text) => code(text),
        None => described(value),
    }
}

/// A value with what it is: `the string "5"`, `the number 5`, `an array of 3 items`.
fn described(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {}", quoted(text)),
        Value::Array(items) if items.is_empty() => "an empty array".to_owned(),
        Value::Array(items) => format!("an array of {}", count_of(items.len() as u64, "item")),
        Value::Object(map) if map.is_empty() => "an empty object".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// A value after "got": numbers and strings as written, containers summarised.
fn shown(value: &Value) -> String {
    match value {
        Value::Number(number) => number.to_string(),
        Value::String(text) => quoted(text),
        _ => described(value),
    }
}

/// An allowed value in a list: plain names bare, anything else as JSON, cut short.
fn listed(value: &Value) -> String {
    match value.as_str() {
        Some(text) if is_plain_name(text) => truncated(text, MAX_LISTED_BYTES),
        Some(text) => Value::from(truncated(text, MAX_LISTED_BYTES)).to_string(),
        None => truncated(&value.to_string(), MAX_LISTED_BYTES),
    }
}

fn is_plain_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || "_-.:/+@#".contains(c))
}

/// A name in backticks, or as a JSON string when backticks would not delimit it.
fn code(text: &str) -> String {
    if text.is_empty() || text.contains('`') || text.chars().any(char::is_control) {
        quoted(text)
    } else {
        format!("`{}`", truncated(text, MAX_QUOTED_BYTES))
    }
}

/// A string as JSON, cut short.
fn quoted(text: &str) -> String {
    Value::from(truncated(text, MAX_QUOTED_BYTES)).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What a model must never have to decode.
    const JARGON: [&str; 10] =
        ["anyOf", "oneOf", "allOf", "$ref", "$defs", "const", "uint32", "int64", "is not valid under any", "schemas"];

    fn check(schema: &Value, args: &Value) -> Vec<Violation> {
        let validator = jsonschema::validator_for(schema).expect("schema compiles");
        let found = explain(schema, validator.iter_errors(args));
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
        snapshot(include_str!(
            "../../tools/datetime/src/snapshots/toolcell_tool_datetime__tests__parameters_schema.snap"
        ))
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
        assert_eq!(
            message_at(&found, "/volume"),
            "the number 3 is not one of the allowed values. Allowed: quiet, loud"
        );
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
        assert_contains(
            &from,
            &["`metre` is not one of the 61 allowed values; did you mean `meter`?", "Closest: meter"],
        );
        let to = message_at(&found, "/to");
        // Nothing close: the first values in the tool's own order, which groups them.
        assert_contains(&to, &["`lightyear` is not one of the 61 allowed values. The first of them: meter, kilometer"]);
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
        assert_eq!(
            check(&schema, &json!(1.5))[0].message,
            "expected an integer from 0 to 4294967295, got the number 1.5"
        );
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
            (
                json!({"maxLength": 10}),
                json!("abcdefghijklmn"),
                "must be at most 10 characters long; got 14 characters",
            ),
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
        let schema =
            json!({"oneOf": [variant("circle", "radius"), variant("square", "side"), variant("line", "length")]});
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
    fn duplicates_are_reported_once() {
        let found = finish(vec![
            Violation { pointer: "/b".into(), message: "y".into() },
            Violation { pointer: "/a".into(), message: "x".into() },
            Violation { pointer: "/b".into(), message: "y".into() },
        ]);
        assert_eq!(found.iter().map(|violation| violation.pointer.as_str()).collect::<Vec<_>>(), ["/a", "/b"]);
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
    fn reference_cycles_end() {
        let root = json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        let view = View { root: &root, node: &root["$defs"]["A"] };
        assert_eq!(view.get("type"), None);
        assert_eq!(view.words(0), None);
        assert!(view.declared_properties().is_empty());
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
        let schema =
            json!({"properties": {"a": {"type": "integer"}}, "required": ["b"], "additionalProperties": false});
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
        let schema = json!({"type": "string", "format": "date"});
        let validator = jsonschema::options().should_validate_formats(true).build(&schema).expect("compiles");
        let found = explain(&schema, validator.iter_errors(&json!("10/03/2024")));
        assert_eq!(found[0].message, "must be a date like 2024-03-10; got \"10/03/2024\"");
        assert_eq!(format_message("uint8", &json!(300)), "must be an integer from 0 to 255; got 300");
        assert_eq!(format_message("uint64", &json!(-1)), "must be a non-negative integer; got -1");
        assert_eq!(format_message("double", &json!("x")), "must be a number; got \"x\"");
        assert_eq!(format_message("color", &json!("x")), "is not in the expected `color` form; got \"x\"");
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

    #[test]
    fn sentences_end_at_a_capital() {
        assert_eq!(first_sentence("Read it. Then go."), "Read it.");
        assert_eq!(first_sentence("Use e.g. This. Then"), "Use e.g. This.");
        assert_eq!(first_sentence("One\n  line"), "One line");
        assert!(first_sentence(&"a".repeat(200)).len() <= MAX_DESCRIPTION_BYTES);
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
    fn pointers_sort_indexes_as_numbers() {
        assert_eq!(compare_pointers("/a/2", "/a/10"), Ordering::Less);
        assert_eq!(compare_pointers("", "/a"), Ordering::Less);
        assert_eq!(compare_pointers("/b", "/a/1"), Ordering::Greater);
    }
}
