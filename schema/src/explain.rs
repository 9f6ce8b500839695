//! Which violations a model is told about, for the errors jsonschema found: the walk over
//! its errors, the choice of the alternative a value was meant for, the order and the caps.
//! The sentences are `messages`'.
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

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

use crate::Violation;
use crate::messages;
use crate::view::View;
use crate::words::truncated;

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
/// Allowed values collected from alternatives, to bound the work on a huge enum.
const MAX_VALUES_KEPT: usize = 1000;

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
        explainer.push(first.instance_path().as_str(), messages::unexplained_message());
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
            kind => self.push(at, messages::plain_message(kind, error.instance())),
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
            return self.push(at, messages::no_allowed_form_message(Some(error.instance())));
        }
        let (mismatched, fitting): (Vec<&[ValidationError<'static>]>, Vec<_>) =
            branches.iter().map(Vec::as_slice).partition(|branch| is_type_mismatch(branch, at));
        match fitting.as_slice() {
            [] => self.push(at, messages::expected_message(&types_of(&mismatched), None, error.instance())),
            [only] => self.describe_branch(at, only, depth + 1),
            many if many.iter().all(|branch| is_value_mismatch(branch, at)) => {
                let allowed = allowed_values(many.iter().flat_map(|branch| branch.iter()));
                let described = self.described_constants(many.iter().flat_map(|branch| branch.iter()));
                let message =
                    messages::not_allowed_message(error.instance(), &allowed, &types_of(&mismatched), &described);
                self.push(at, message);
            }
            many => match common_tag(many) {
                Some((tag, allowed)) => {
                    let message = messages::not_allowed_message(tag.instance(), &allowed, &[], &[]);
                    self.push(tag.instance_path().as_str(), message);
                }
                None => self.describe_branch(at, best_branch(many), depth + 1),
            },
        }
    }

    fn describe_branch(&mut self, at: &str, branch: &[ValidationError<'_>], depth: usize) {
        if branch.is_empty() {
            return self.push(at, messages::no_allowed_form_message(None));
        }
        self.describe_all(branch, depth);
    }

    /// Properties the schema does not declare: one violation each, at the property, with
    /// the declared name it most likely meant.
    fn describe_unknown(&mut self, error: &ValidationError<'_>, unexpected: &[String]) {
        let at = error.instance_path().as_str();
        let declared = self.keyword_parent(error).map(View::declared_properties).unwrap_or_default();
        for name in unexpected.iter().take(MAX_VIOLATIONS) {
            self.push(&child_pointer(at, name), messages::unknown_message(name, &declared, at.is_empty()));
        }
    }

    /// A property name that breaks `propertyNames`: the name is described as a value, then
    /// reported at the object.
    fn describe_property_name(&mut self, at: &str, inner: &ValidationError<'static>, depth: usize) {
        let start = self.found.len();
        if depth < MAX_NESTING {
            self.describe(inner, depth + 1);
        }
        if self.found.len() == start {
            self.push(at, messages::property_name_message(inner.instance(), None));
            return;
        }
        for violation in self.found.iter_mut().skip(start) {
            at.clone_into(&mut violation.pointer);
            violation.message = messages::property_name_message(inner.instance(), Some(&violation.message));
        }
    }

    fn missing_message(&self, error: &ValidationError<'_>, property: &Value) -> String {
        let name = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
        let schema = self.keyword_parent(error).and_then(|object| object.property(&name));
        messages::missing_message(&name, schema)
    }

    fn type_message(&self, error: &ValidationError<'_>, kind: &TypeKind) -> String {
        let types: Vec<JsonType> = match kind {
            TypeKind::Single(single) => vec![*single],
            TypeKind::Multiple(set) => set.iter().collect(),
        };
        messages::expected_message(&types, self.keyword_parent(error), error.instance())
    }

    fn contains_message(&self, error: &ValidationError<'_>) -> String {
        let wanted = self.keyword_parent(error).and_then(|parent| parent.child("contains"));
        messages::contains_message(wanted.and_then(|wanted| messages::accepted(wanted, 0)))
    }

    /// The string constants the errors missed, each with its schema's description where it
    /// has one (`oneOf: [{const: "kilometer", description: "kilometer (km)"}, …]`).
    fn described_constants<'e>(
        &self,
        errors: impl IntoIterator<Item = &'e ValidationError<'static>>,
    ) -> Vec<(&'e str, &'s str)> {
        let mut described = Vec::new();
        for error in errors.into_iter().take(MAX_VALUES_KEPT) {
            let ValidationErrorKind::Constant { expected_value } = error.kind() else { continue };
            let Some(value) = expected_value.as_str() else { continue };
            let description = self.keyword_parent(error).and_then(|parent| parent.get("description"));
            if let Some(description) = description.and_then(Value::as_str) {
                described.push((value, description));
            }
        }
        described
    }

    /// The schema object holding the keyword an error is about.
    fn keyword_parent(&self, error: &ValidationError<'_>) -> Option<View<'s>> {
        let path = error.schema_path().as_str();
        let parent = path.rsplit_once('/').map_or("", |(parent, _)| parent);
        View::at_location(self.root, parent)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn messages_are_cut_and_violations_capped() {
        let many = (0..30).map(|index| Violation { pointer: format!("/{index}"), message: "x".repeat(400) });
        let found = finish(many.collect());
        assert_eq!(found.len(), MAX_VIOLATIONS);
        assert!(found.iter().all(|violation| violation.message.len() <= MAX_MESSAGE_BYTES));
        assert_eq!(found[19].pointer, "/19");
    }

    #[test]
    fn pointers_sort_indexes_as_numbers() {
        assert_eq!(compare_pointers("/a/2", "/a/10"), Ordering::Less);
        assert_eq!(compare_pointers("", "/a"), Ordering::Less);
        assert_eq!(compare_pointers("/b", "/a/1"), Ordering::Greater);
    }

    #[test]
    fn property_names_are_escaped_in_pointers() {
        assert_eq!(child_pointer("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(child_pointer("", "x"), "/x");
    }
}
