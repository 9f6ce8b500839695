// Plain-language explanations of how arguments break a schema, for the model that has to fix
// the call: the host's explainer (schema/src/explain.rs, messages/) ported for the keywords
// validate.js checks, so that native tests see the host's exact messages. It descends into
// the alternative a value was most likely meant for, lists allowed values with a "did you
// mean", names unknown and missing properties, and says every limit in words.
// test/corpus.test.js holds it to the host's words, on the corpus shared with the host
// (schema/corpus/). Over 500 lines: one port of the host's explainer, kept whole to compare.

import { closest, nearest } from "./suggest.js";
import { formatWords, integerRange } from "./formats.js";
import { lookup } from "./refs.js";
import { childPointer, jsonEqual } from "./validate.js";
import {
  charCount,
  code,
  countOf,
  described,
  firstSentence,
  joinOr,
  listed,
  shown,
  subject,
  truncated,
} from "./text.js";

const MAX_VIOLATIONS = 20;
const MAX_MESSAGE_BYTES = 300;
const MAX_COLLECTED = 200;
const MAX_NESTING = 32;
const MAX_DESCRIBE_DEPTH = 4;
const MAX_LISTED_VALUES = 12;
const NEAREST_SHOWN = 5;
const MAX_VALUES_KEPT = 1000;
const MAX_LISTED_NAMES = 24;
const MAX_DUPLICATE_SEARCH = 64;
/** The host's order of JSON types (jsonschema's `JsonType`), for stable messages. */
const TYPE_ORDER = ["null", "boolean", "integer", "number", "string", "array", "object"];

/** A schema seen through its `$ref` chain. */
class View {
  constructor(root, node) {
    this.root = root;
    this.node = node;
  }
  get(keyword) {
    return lookup(this.root, this.node, keyword);
  }
  child(keyword) {
    const node = this.get(keyword);
    return node === undefined ? null : new View(this.root, node);
  }
  property(name) {
    const properties = this.get("properties");
    return properties && Object.hasOwn(properties, name) ? new View(this.root, properties[name]) : null;
  }
  number(keyword) {
    const value = this.get(keyword);
    return typeof value === "number" ? String(value) : null;
  }
  count(keyword) {
    const value = this.get(keyword);
    return Number.isInteger(value) && value >= 0 ? value : null;
  }
  text(keyword) {
    const value = this.get(keyword);
    return typeof value === "string" ? value : null;
  }
  branches() {
    return ["allOf", "anyOf", "oneOf"]
      .map((keyword) => this.get(keyword))
      .filter(Array.isArray)
      .flat()
      .map((node) => new View(this.root, node));
  }
  /** Names in `properties` and in those of its `allOf` / `anyOf` / `oneOf` branches, sorted. */
  declaredProperties() {
    const names = new Set();
    for (const view of [this, ...this.branches()]) {
      const properties = view.get("properties");
      if (properties && typeof properties === "object") Object.keys(properties).forEach((name) => names.add(name));
    }
    return [...names].sort(byCodePoints);
  }
  /** "a string: The text to search." from a property's type and description. */
  summary() {
    const words = this.words(0);
    const description = this.text("description");
    // A blank description says nothing: no "(a string: )".
    const sentence = description === null ? null : firstSentence(description) || null;
    if (words !== null && sentence !== null) return `${words}: ${sentence}`;
    return words ?? sentence;
  }
  /** What the schema accepts, in words: "an integer from 1 to 10", "one of: a, b". */
  words(depth) {
    if (depth > MAX_DESCRIBE_DEPTH) return null;
    if (this.get("const") !== undefined) return `exactly ${listed(this.get("const"))}`;
    const values = this.enumValues();
    if (values) return oneOfWords(values);
    const branches = this.get("anyOf") ?? this.get("oneOf");
    if (Array.isArray(branches)) {
      const words = [];
      for (const node of branches) {
        const word = new View(this.root, node).words(depth + 1);
        if (word !== null && !words.includes(word)) words.push(word);
      }
      return words.length > 0 ? joinOr(words) : null;
    }
    const words = nullLast(this.types()).map((type) => typeWords(type, this));
    return words.length > 0 ? joinOr(words) : null;
  }
  /** The values of `enum`, or of `oneOf` / `anyOf` whose branches are all `const`. */
  enumValues() {
    const values = this.get("enum");
    if (Array.isArray(values)) return values;
    const branches = this.get("oneOf") ?? this.get("anyOf");
    if (!Array.isArray(branches)) return null;
    const constants = branches.map((node) => new View(this.root, node).get("const"));
    return constants.every((value) => value !== undefined) ? constants : null;
  }
  types() {
    const type = this.get("type");
    const names = Array.isArray(type) ? type : type === undefined ? [] : [type];
    return names.filter((name) => TYPE_ORDER.includes(name));
  }
}

function byCodePoints(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The violations `{pointer, message}` for the raw errors validate.js found against `root`, at
 * most 20, sorted by pointer then message, without duplicates.
 */
export function explain(root, errors) {
  const explainer = new Explainer(root);
  explainer.describeAll(errors, 0);
  // An invalid call must never look valid, whatever the errors held.
  if (explainer.found.length === 0 && errors.length > 0) {
    explainer.push(errors[0].at, "does not fit the tool's parameters");
  }
  return finish(explainer.found);
}

function finish(found) {
  const sorted = found
    .map(({ pointer, message }) => ({ pointer, message: truncated(message, MAX_MESSAGE_BYTES) }))
    .sort((a, b) => comparePointers(a.pointer, b.pointer) || byCodePoints(a.message, b.message));
  const unique = sorted.filter(
    (v, i) => i === 0 || v.pointer !== sorted[i - 1].pointer || v.message !== sorted[i - 1].message,
  );
  return unique.slice(0, MAX_VIOLATIONS);
}

/** Orders pointers token by token, array indexes as numbers (`/2` before `/10`). */
export function comparePointers(a, b) {
  const key = (token) => (/^\d+$/.test(token) ? [0, Number(token), token] : [1, 0, token]);
  const x = a.split("/").map(key);
  const y = b.split("/").map(key);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    const order = x[i][0] - y[i][0] || x[i][1] - y[i][1] || byCodePoints(x[i][2], y[i][2]);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

const isTypeError = (error) => error.kind === "type";
const isValueError = (error) => error.kind === "const" || error.kind === "enum";
const isTagError = (error) => error.kind === "const" || (error.kind === "enum" && error.options.length === 1);

/** A branch the value missed only on `type`, right where the alternatives are. */
function isTypeMismatch(branch, at) {
  return branch.length > 0 && branch.every((error) => isTypeError(error) && error.at === at);
}

/** A branch the value missed only for not being one of its values. */
function isValueMismatch(branch, at) {
  return (
    branch.some(isValueError) && branch.every((error) => error.at === at && (isValueError(error) || isTypeError(error)))
  );
}

class Explainer {
  constructor(root) {
    this.root = root;
    this.found = [];
  }

  push(pointer, message) {
    if (!this.isFull()) this.found.push({ pointer, message });
  }

  isFull() {
    return this.found.length >= MAX_COLLECTED;
  }

  view(error) {
    return new View(this.root, error.node);
  }

  /** A type error is left out where the same value also missed an enum or const. */
  describeAll(errors, depth) {
    const valued = new Set(errors.filter(isValueError).map((error) => error.at));
    for (const error of errors) {
      if (this.isFull()) return;
      if (!(isTypeError(error) && valued.has(error.at))) this.describe(error, depth);
    }
  }

  describe(error, depth) {
    const { at } = error;
    switch (error.kind) {
      case "anyOf":
      case "oneOf":
        return this.describeAlternatives(error, depth);
      case "additionalProperties": {
        const declared = this.view(error).declaredProperties();
        for (const name of error.unexpected.slice(0, MAX_VIOLATIONS)) {
          this.push(childPointer(at, name), unknownMessage(name, declared, at === ""));
        }
        return;
      }
      case "propertyNames":
        return this.describePropertyName(at, error.inner, depth);
      case "required":
        return this.push(at, this.missingMessage(error));
      case "type":
        return this.push(at, expectedMessage(error.types, this.view(error), error.value));
      case "contains": {
        const wanted = this.view(error).child("contains")?.words(0);
        return this.push(
          at,
          wanted ? `must contain enough items that are ${wanted}` : "must contain enough items of the required kind",
        );
      }
      default:
        return this.push(at, plainMessage(error));
    }
  }

  /** A value that fits none of the alternatives: explains the branch it was most likely
   * meant for, or, when it only missed on type or value everywhere, what would fit. */
  describeAlternatives(error, depth) {
    const { at, value, branches } = error;
    if (depth >= MAX_NESTING) return this.push(at, `does not have any of the allowed forms; got ${described(value)}`);
    const mismatched = branches.filter((branch) => isTypeMismatch(branch, at));
    const fitting = branches.filter((branch) => !isTypeMismatch(branch, at));
    if (fitting.length === 0) return this.push(at, expectedMessage(typesOf(mismatched), null, value));
    if (fitting.length === 1) return this.describeBranch(at, fitting[0], depth + 1);
    if (fitting.every((branch) => isValueMismatch(branch, at))) {
      return this.push(at, notAllowedMessage(value, allowedValues(fitting.flat()), typesOf(mismatched)));
    }
    const tag = commonTag(fitting);
    if (tag) return this.push(tag.error.at, notAllowedMessage(tag.error.value, tag.allowed, []));
    return this.describeBranch(at, bestBranch(fitting), depth + 1);
  }

  describeBranch(at, branch, depth) {
    if (branch.length === 0) return this.push(at, "does not have any of the allowed forms");
    this.describeAll(branch, depth);
  }

  /** A property name that breaks `propertyNames`, reported at the object. */
  describePropertyName(at, inner, depth) {
    const name = subject(inner.value);
    const start = this.found.length;
    if (depth < MAX_NESTING) this.describe(inner, depth + 1);
    if (this.found.length === start) return this.push(at, `the field name ${name} is not allowed`);
    for (const violation of this.found.slice(start)) {
      violation.pointer = at;
      violation.message = `the field name ${name} is not allowed: ${violation.message}`;
    }
  }

  missingMessage(error) {
    const name = typeof error.property === "string" ? error.property : JSON.stringify(error.property);
    const summary = this.view(error).property(name)?.summary();
    return summary
      ? `${code(name)} is missing: it is required (${summary})`
      : `${code(name)} is missing: it is required`;
  }
}

/** The branch the value was most likely meant for: fewest missed tags, then the deepest
 * error (it got furthest), then fewest errors, then the first. */
function bestBranch(branches) {
  const score = (branch) => {
    const deepest = Math.max(0, ...branch.map((error) => error.at.split("/").length - 1));
    return [branch.filter(isTagError).length, -deepest, branch.length];
  };
  const compare = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  let [best, bestScore] = [branches[0], score(branches[0])];
  for (const branch of branches.slice(1)) {
    const branchScore = score(branch);
    if (compare(branchScore, bestScore) < 0) [best, bestScore] = [branch, branchScore];
  }
  return best;
}

/** Tagged variants the value matched none of: when every branch missed exactly one tag, at
 * the same place, that tag is what to fix. */
function commonTag(branches) {
  const tags = [];
  for (const branch of branches) {
    const missed = branch.filter(isTagError);
    if (missed.length !== 1) return null;
    tags.push(missed[0]);
  }
  if (tags.some((tag) => tag.at !== tags[0].at)) return null;
  return { error: tags[0], allowed: allowedValues(tags) };
}

/** Every type the branches wanted, in the host's order. */
function typesOf(branches) {
  const types = new Set(
    branches
      .flat()
      .filter(isTypeError)
      .flatMap((error) => error.types),
  );
  return TYPE_ORDER.filter((type) => types.has(type));
}

/** The `const` and `enum` values of the errors, each once, in order. */
function allowedValues(errors) {
  const values = [];
  for (const error of errors) {
    const found = error.kind === "const" ? [error.expected] : error.kind === "enum" ? error.options : [];
    for (const value of found) {
      if (values.length < MAX_VALUES_KEPT && !values.some((known) => jsonEqual(known, value))) values.push(value);
    }
  }
  return values;
}

/** "expected an integer from 1 to 10, got the string \"5\"". */
function expectedMessage(types, view, given) {
  if (types.length === 0) return `has the wrong type; got ${described(given)}`;
  const ordered = TYPE_ORDER.filter((type) => types.includes(type));
  return `expected ${joinOr(nullLast(ordered).map((type) => typeWords(type, view)))}, got ${described(given)}`;
}

/** "`lightyear` is not one of the allowed values; did you mean `light_year`? Allowed: …". */
function notAllowedMessage(given, allowed, also) {
  if (allowed.length === 0) return `no value is allowed here; got ${described(given)}`;
  const strings = allowed.filter((value) => typeof value === "string");
  const guess = typeof given === "string" ? closest(given, strings, 1)[0] : undefined;
  let message = subject(given);
  message +=
    allowed.length <= MAX_LISTED_VALUES
      ? " is not one of the allowed values"
      : ` is not one of the ${allowed.length} allowed values`;
  message += guess !== undefined ? `; did you mean ${code(guess)}?` : ".";
  message += ` ${allowedList(given, allowed, strings, guess !== undefined)}`;
  if (also.length > 0) message += ` (or ${joinOr(nullLast(also).map((type) => typeWords(type, null)))})`;
  return message;
}

function allowedList(given, allowed, strings, close) {
  if (allowed.length <= MAX_LISTED_VALUES) return `Allowed: ${allowed.map(listed).join(", ")}`;
  if (typeof given === "string" && close && strings.length > 0) {
    return `Closest: ${nearest(given, strings, NEAREST_SHOWN).map(listed).join(", ")}, …`;
  }
  const first = allowed.slice(0, MAX_LISTED_VALUES).map(listed).join(", ");
  return `The first of them: ${first}, … (the parameter's schema lists them all)`;
}

/** "`expr` is not a parameter; did you mean `expression`? Parameters: expression, variables". */
function unknownMessage(name, declared, topLevel) {
  const [what, label] = topLevel ? ["a parameter", "Parameters"] : ["a field of this object", "Fields"];
  let message = `${code(name)} is not ${what}`;
  const guess = closest(name, declared, 1)[0];
  message += guess !== undefined ? `; did you mean ${code(guess)}?` : ".";
  if (declared.length > 0) {
    const more = declared.length > MAX_LISTED_NAMES ? ", …" : "";
    message += ` ${label}: ${declared.slice(0, MAX_LISTED_NAMES).join(", ")}${more}`;
  }
  return message;
}

/** Messages that need nothing but the error itself. */
function plainMessage(error) {
  const { value, limit } = error;
  switch (error.kind) {
    case "minimum":
      return `must be at least ${limit}; got ${shown(value)}`;
    case "maximum":
      return `must be at most ${limit}; got ${shown(value)}`;
    case "exclusiveMinimum":
      return `must be greater than ${limit}; got ${shown(value)}`;
    case "exclusiveMaximum":
      return `must be less than ${limit}; got ${shown(value)}`;
    case "multipleOf":
      return `must be a multiple of ${limit}; got ${shown(value)}`;
    case "minLength":
      return lengthMessage("at least", limit, value);
    case "maxLength":
      return lengthMessage("at most", limit, value);
    case "minItems":
      return sizeMessage("at least", limit, "item", value);
    case "maxItems":
      return sizeMessage("at most", limit, "item", value);
    case "minProperties":
      return sizeMessage("at least", limit, "entry", value);
    case "maxProperties":
      return sizeMessage("at most", limit, "entry", value);
    case "pattern":
      return `must match the pattern ${code(error.pattern)}; got ${shown(value)}`;
    case "uniqueItems":
      return uniqueMessage(value);
    case "enum":
      return notAllowedMessage(value, error.options, []);
    case "const":
      return `must be exactly ${listed(error.expected)}; got ${shown(value)}`;
    case "oneOfMultiple":
      return "fits more than one of the allowed forms, so its meaning is ambiguous; it must fit exactly one";
    default: // `not`, a `false` schema
      return `this value is not allowed here; got ${described(value)}`;
  }
}

function lengthMessage(bound, limit, given) {
  const got = charCount(given);
  if (got === 0 && limit === 1 && bound === "at least") return "must not be empty";
  return `must be ${bound} ${countOf(limit, "character")} long; got ${countOf(got, "character")}`;
}

function sizeMessage(bound, limit, unit, given) {
  const got = Array.isArray(given) ? given.length : Object.keys(given).length;
  return `must have ${bound} ${countOf(limit, unit)}; got ${got}`;
}

/** Names the first pair of equal items when the array is small enough to search. */
function uniqueMessage(items) {
  const searched = items.slice(0, MAX_DUPLICATE_SEARCH);
  for (let i = 0; i < searched.length; i += 1) {
    const j = searched.findIndex((other, index) => index > i && jsonEqual(other, searched[i]));
    if (j >= 0) return `items must be unique, but items ${i} and ${j} are equal`;
  }
  return "items must be unique; remove the duplicates";
}

/** Types in their order, except null last: "a string or null" reads as an option. */
function nullLast(types) {
  return [...types.filter((type) => type !== "null"), ...types.filter((type) => type === "null")];
}

/** One type in words, with the limits the schema puts on it. */
function typeWords(type, view) {
  switch (type) {
    case "integer":
      return numberWords("an integer", view, true);
    case "number":
      return numberWords("a number", view, false);
    case "string":
      return stringWords(view);
    case "array":
      return arrayWords(view);
    case "object":
      return "an object";
    case "boolean":
      return "a boolean (true or false)";
    default:
      return "null";
  }
}

/** "an integer from 1 to 10", "a non-negative integer", "a number (greater than 0)". An
 * integer `format` (schemars' `uint32` …) supplies the bounds the schema leaves out. */
function numberWords(noun, view, integer) {
  const bound = (keyword) => (view ? view.number(keyword) : null);
  const [impliedLow, impliedHigh] = integer && view ? integerRange(view.text("format")) : [null, null];
  const low = bound("minimum") ?? impliedLow;
  const high = bound("maximum") ?? impliedHigh;
  const [lowExclusive, highExclusive] = ["exclusiveMinimum", "exclusiveMaximum"].map(bound);
  if (low !== null && high !== null && lowExclusive === null && highExclusive === null)
    return `${noun} from ${low} to ${high}`;
  if (integer && low === "0" && high === null && lowExclusive === null && highExclusive === null)
    return "a non-negative integer";
  const parts = [
    low !== null && `at least ${low}`,
    lowExclusive !== null && `greater than ${lowExclusive}`,
    high !== null && `at most ${high}`,
    highExclusive !== null && `less than ${highExclusive}`,
  ].filter(Boolean);
  return parts.length === 0 ? noun : `${noun} (${parts.join(" and ")})`;
}

/** "a non-empty string of at most 4096 characters", "a string: a date like 2024-03-10". */
function stringWords(view) {
  if (!view) return "a string";
  const format = formatWords(view.text("format"));
  if (format !== null) return `a string: ${format}`;
  const min = view.count("minLength") || null;
  const max = view.count("maxLength");
  let words;
  if (min === 1 && max !== null) words = `a non-empty string of at most ${countOf(max, "character")}`;
  else if (min === 1) words = "a non-empty string";
  else if (min !== null && max !== null) words = `a string of ${min} to ${max} characters`;
  else if (min !== null) words = `a string of at least ${countOf(min, "character")}`;
  else if (max !== null) words = `a string of at most ${countOf(max, "character")}`;
  else words = "a string";
  const pattern = view.text("pattern");
  return pattern === null ? words : `${words} matching ${code(pattern)}`;
}

const PLURALS = {
  integer: "integers",
  number: "numbers",
  string: "strings",
  array: "arrays",
  object: "objects",
  boolean: "booleans",
  null: "nulls",
};

/** "an array of strings" when the items have one type. */
function arrayWords(view) {
  const items = view?.child("items")?.types() ?? [];
  return items.length === 1 ? `an array of ${PLURALS[items[0]]}` : "an array";
}

/** "one of: a, b, c", or a few of a long list. */
function oneOfWords(values) {
  const shownValues = values.slice(0, MAX_LISTED_VALUES).map(listed);
  if (values.length <= MAX_LISTED_VALUES) return `one of: ${shownValues.join(", ")}`;
  return `one of ${values.length} values such as ${shownValues.slice(0, NEAREST_SHOWN).join(", ")}`;
}
