// A small JSON Schema (2020-12) validator for native tests. It finds the raw errors, as the
// host's validator does; explain.js turns them into the host's words.
//
// It covers the keywords tool schemas use: type, enum, const, properties, required,
// additionalProperties, patternProperties, propertyNames, min/maxProperties, items,
// prefixItems, contains, min/maxItems, uniqueItems, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf, minLength, maxLength, pattern, allOf, anyOf, oneOf, not and
// local $ref. Others (format, if/then/else, dependentRequired, unevaluated*) are not checked
// natively; the host checks them all.

import { resolveRef } from "./refs.js";
import { charCount, isObject } from "./text.js";

/** Errors kept per list: the rest of a pathological value adds nothing fixable. */
const MAX_ERRORS = 100;
/** Nesting followed into a value (and `$ref` hops): a cycle of references must end. */
const MAX_DEPTH = 512;

/** Whether `value` is of the JSON Schema type `type`. */
export function isType(value, type) {
  switch (type) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number";
    case "integer":
      return Number.isInteger(value);
    case "string":
      return typeof value === "string";
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return false;
  }
}

/** JSON equality: numbers by value, objects regardless of key order. */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]))
    );
  }
  return false;
}

/** A JSON Pointer token. */
export function childPointer(at, name) {
  return `${at}/${String(name).replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

function testPattern(pattern, text) {
  try {
    return new RegExp(pattern, "u").test(text);
  } catch {
    return true; // A pattern JavaScript cannot compile is the host's to judge.
  }
}

/**
 * Every raw error of `value` against `root`: `{kind, at, value, node, ...}` where `node` is the
 * schema object holding the failed keyword. Alternatives (`anyOf`, `oneOf`) carry the errors of
 * each branch in `branches`.
 */
export function validate(root, value) {
  const errors = [];
  check(root, root, value, "", errors, 0);
  return errors;
}

function check(root, node, value, at, errors, depth) {
  const push = (kind, extra = {}) => {
    if (errors.length < MAX_ERRORS) errors.push({ kind, at, value, node, ...extra });
  };
  if (node === false) return push("false");
  if (!isObject(node) || depth > MAX_DEPTH) return;
  const deeper = (schema, child, pointer, into = errors) => check(root, schema, child, pointer, into, depth + 1);
  const branchErrors = (schema) => {
    const found = [];
    deeper(schema, value, at, found);
    return found;
  };

  if (typeof node.$ref === "string") {
    const target = resolveRef(root, node.$ref);
    if (target !== undefined) deeper(target, value, at);
  }
  if (node.type !== undefined) {
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (!types.some((type) => isType(value, type))) push("type", { types });
  }
  if (Array.isArray(node.enum) && !node.enum.some((option) => jsonEqual(option, value))) {
    push("enum", { options: node.enum });
  }
  if (Object.hasOwn(node, "const") && !jsonEqual(node.const, value)) push("const", { expected: node.const });

  if (typeof value === "number") {
    const limit = (keyword, broken) => {
      if (typeof node[keyword] === "number" && broken(node[keyword])) push(keyword, { limit: node[keyword] });
    };
    limit("minimum", (min) => value < min);
    limit("maximum", (max) => value > max);
    limit("exclusiveMinimum", (min) => value <= min);
    limit("exclusiveMaximum", (max) => value >= max);
    limit("multipleOf", (step) => step > 0 && !Number.isInteger(value / step));
  }
  if (typeof value === "string") {
    const length = charCount(value);
    if (typeof node.minLength === "number" && length < node.minLength) push("minLength", { limit: node.minLength });
    if (typeof node.maxLength === "number" && length > node.maxLength) push("maxLength", { limit: node.maxLength });
    if (typeof node.pattern === "string" && !testPattern(node.pattern, value))
      push("pattern", { pattern: node.pattern });
  }
  if (Array.isArray(value)) {
    const prefix = Array.isArray(node.prefixItems) ? node.prefixItems : [];
    value.forEach((item, index) => {
      const schema = index < prefix.length ? prefix[index] : node.items;
      if (schema !== undefined) deeper(schema, item, childPointer(at, index));
    });
    if (typeof node.minItems === "number" && value.length < node.minItems) push("minItems", { limit: node.minItems });
    if (typeof node.maxItems === "number" && value.length > node.maxItems) push("maxItems", { limit: node.maxItems });
    const unique = value.every((item, i) => value.findIndex((other) => jsonEqual(item, other)) === i);
    if (node.uniqueItems === true && !unique) push("uniqueItems");
    if (
      node.contains !== undefined &&
      !value.some((item) => branchErrorsOf(root, node.contains, item, depth).length === 0)
    ) {
      push("contains");
    }
  }
  if (isObject(value)) {
    const properties = isObject(node.properties) ? node.properties : {};
    const patterns = isObject(node.patternProperties) ? Object.keys(node.patternProperties) : [];
    const unexpected = [];
    for (const [name, child] of Object.entries(value)) {
      const pointer = childPointer(at, name);
      let declared = Object.hasOwn(properties, name);
      if (declared) deeper(properties[name], child, pointer);
      for (const pattern of patterns) {
        if (testPattern(pattern, name)) {
          declared = true;
          deeper(node.patternProperties[pattern], child, pointer);
        }
      }
      if (!declared && node.additionalProperties === false) unexpected.push(name);
      else if (!declared && isObject(node.additionalProperties)) deeper(node.additionalProperties, child, pointer);
    }
    // Without `properties` or `patternProperties`, the host's validator reports `false` at the
    // object, about its first value, rather than naming the properties.
    const noneDeclared = node.properties === undefined && node.patternProperties === undefined;
    if (unexpected.length > 0 && noneDeclared) push("false", { value: value[unexpected[0]] });
    else if (unexpected.length > 0) push("additionalProperties", { unexpected });
    for (const property of Array.isArray(node.required) ? node.required : []) {
      if (!Object.hasOwn(value, property)) push("required", { property });
    }
    const count = Object.keys(value).length;
    if (typeof node.minProperties === "number" && count < node.minProperties)
      push("minProperties", { limit: node.minProperties });
    if (typeof node.maxProperties === "number" && count > node.maxProperties)
      push("maxProperties", { limit: node.maxProperties });
    // `propertyNames: false` is the host's `false` at the object; otherwise every error of
    // every name is reported.
    if (node.propertyNames === false && count > 0) push("false");
    else if (node.propertyNames !== undefined) {
      for (const name of Object.keys(value)) {
        for (const inner of branchErrorsOf(root, node.propertyNames, name, depth)) push("propertyNames", { inner });
      }
    }
  }

  if (Array.isArray(node.allOf)) node.allOf.forEach((schema) => deeper(schema, value, at));
  if (Array.isArray(node.anyOf)) {
    const branches = node.anyOf.map(branchErrors);
    if (!branches.some((branch) => branch.length === 0)) push("anyOf", { branches });
  }
  if (Array.isArray(node.oneOf)) {
    const branches = node.oneOf.map(branchErrors);
    const valid = branches.filter((branch) => branch.length === 0).length;
    if (valid === 0) push("oneOf", { branches });
    else if (valid > 1) push("oneOfMultiple");
  }
  if (node.not !== undefined && branchErrors(node.not).length === 0) push("not");
}

/** The errors of a value checked on its own (an item for `contains`, a property name). */
function branchErrorsOf(root, schema, value, depth) {
  const found = [];
  check(root, schema, value, "", found, depth + 1);
  return found;
}
