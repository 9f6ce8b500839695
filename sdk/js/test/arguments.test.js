// invokeJson() refuses arguments the host would refuse, in the host's words. The expected
// texts are the host's own (schema/corpus/violations.json, checked by corpus.test.js).

import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArguments, invokeJson, tool } from "../index.js";
import { violations } from "../src/schema/report.js";

/** The single message at `pointer`. */
function messageAt(found, pointer) {
  const at = found.filter((violation) => violation.pointer === pointer);
  assert.equal(at.length, 1, `one violation at ${pointer} in ${JSON.stringify(found)}`);
  return at[0].message;
}

/** The test guest `echo` of the host's tests. */
const ECHO = {
  type: "object",
  properties: {
    text: { type: "string", minLength: 1, description: "The text." },
    count: { type: "integer", minimum: 1, maximum: 10, description: "How many times." },
    volume: { anyOf: [{ $ref: "#/$defs/Volume" }, { type: "null" }] },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["text", "count"],
  additionalProperties: false,
  $defs: { Volume: { type: "string", enum: ["quiet", "loud"] } },
};

/** An optional nested struct, as schemars writes `Option<Options>`, nested again. */
const NESTED = {
  type: "object",
  properties: { query: { type: "string" }, options: { anyOf: [{ $ref: "#/$defs/Options" }, { type: "null" }] } },
  required: ["query"],
  additionalProperties: false,
  $defs: {
    Options: {
      type: "object",
      properties: {
        top_words: { type: "integer", minimum: 1, maximum: 50 },
        order: { type: "string", enum: ["ascending", "descending"] },
        language: { type: "string", description: "ISO 639-1 code, e.g. `en`. Others are refused." },
        inner: { anyOf: [{ $ref: "#/$defs/Options" }, { type: "null" }] },
      },
      required: ["language"],
      additionalProperties: false,
    },
  },
};

test("limits are plain sentences", () => {
  const cases = [
    [{ minimum: 1 }, 0, "must be at least 1; got 0"],
    [{ maximum: 10 }, 11, "must be at most 10; got 11"],
    [{ exclusiveMinimum: 0 }, 0, "must be greater than 0; got 0"],
    [{ exclusiveMaximum: 1.5 }, 2, "must be less than 1.5; got 2"],
    [{ minLength: 1 }, "", "must not be empty"],
    [{ minLength: 3 }, "ab", "must be at least 3 characters long; got 2 characters"],
    [{ maxLength: 10 }, "abcdefghijklmn", "must be at most 10 characters long; got 14 characters"],
    [{ minItems: 2 }, [1], "must have at least 2 items; got 1"],
    [{ maxItems: 1 }, [1, 2], "must have at most 1 item; got 2"],
    [{ maxProperties: 1 }, { a: 1, b: 2 }, "must have at most 1 entry; got 2"],
    [{ pattern: "^[a-z]+$" }, "ABC", 'must match the pattern `^[a-z]+$`; got "ABC"'],
    [{ multipleOf: 5 }, 7, "must be a multiple of 5; got 7"],
    [{ uniqueItems: true }, [1, 2, 1], "items must be unique, but items 0 and 2 are equal"],
    [{ const: "auto" }, "autp", 'must be exactly auto; got "autp"'],
    [{ enum: [1, 2] }, 3, "the number 3 is not one of the allowed values. Allowed: 1, 2"],
    [{ type: ["string", "null"] }, 1, "expected a string or null, got the number 1"],
    [{ type: "boolean" }, "true", 'expected a boolean (true or false), got the string "true"'],
    [{ type: "array", items: { type: "string" } }, {}, "expected an array of strings, got an empty object"],
    [{ contains: { type: "string" } }, [1], "must contain enough items that are a string"],
    [{ not: { type: "string" } }, "x", 'this value is not allowed here; got the string "x"'],
    [false, 1, "this value is not allowed here; got the number 1"],
  ];
  for (const [schema, value, expected] of cases) {
    assert.equal(
      violations(schema, value)[0]?.message,
      expected,
      `${JSON.stringify(schema)} with ${JSON.stringify(value)}`,
    );
  }
});

test("an optional enum lists its values with a guess", () => {
  const found = violations(ECHO, { text: "hi", count: 1, volume: "LOUD" });
  assert.equal(
    messageAt(found, "/volume"),
    "`LOUD` is not one of the allowed values; did you mean `loud`? Allowed: quiet, loud",
  );
  const wrongType = violations(ECHO, { text: "hi", count: 1, volume: 3 });
  assert.equal(messageAt(wrongType, "/volume"), "the number 3 is not one of the allowed values. Allowed: quiet, loud");
});

test("an unknown parameter gets the closest name, or the list", () => {
  const schema = {
    type: "object",
    properties: { expression: { type: "string", minLength: 1 }, variables: { type: "object" } },
    required: ["expression"],
    additionalProperties: false,
  };
  const found = violations(schema, { expr: "1+1" });
  assert.equal(
    messageAt(found, "/expr"),
    "`expr` is not a parameter; did you mean `expression`? Parameters: expression, variables",
  );
  assert.equal(messageAt(found, ""), "`expression` is missing: it is required (a non-empty string)");
  const far = violations(ECHO, { text: "hi", count: 1, colour: "red" });
  assert.equal(messageAt(far, "/colour"), "`colour` is not a parameter. Parameters: count, tags, text, volume");
});

test("a missing parameter is described", () => {
  const found = violations(ECHO, { text: "hi" });
  assert.equal(messageAt(found, ""), "`count` is missing: it is required (an integer from 1 to 10: How many times.)");
});

test("a type mismatch says what is expected", () => {
  assert.equal(
    messageAt(violations(ECHO, { text: "hi", count: "5" }), "/count"),
    'expected an integer from 1 to 10, got the string "5"',
  );
  assert.equal(
    messageAt(violations(ECHO, { text: "hi", count: 1.5 }), "/count"),
    "expected an integer from 1 to 10, got the number 1.5",
  );
});

test("every problem is reported at its pointer, sorted", () => {
  const found = violations(ECHO, { text: "", count: 11, colour: "red", volume: "LOUD" });
  assert.deepEqual(
    found.map((violation) => violation.pointer),
    ["/colour", "/count", "/text", "/volume"],
  );
  assert.equal(messageAt(found, "/count"), "must be at most 10; got 11");
  assert.equal(messageAt(found, "/text"), "must not be empty");
});

test("an optional nested object is explained inside", () => {
  const args = {
    query: "q",
    options: { top_words: 0, order: "asc", languag: "en", inner: { language: "en", top_words: "3" } },
  };
  const found = violations(NESTED, args);
  assert.equal(messageAt(found, "/options/top_words"), "must be at least 1; got 0");
  assert.equal(
    messageAt(found, "/options/order"),
    "`asc` is not one of the allowed values; did you mean `ascending`? Allowed: ascending, descending",
  );
  assert.equal(
    messageAt(found, "/options/languag"),
    "`languag` is not a field of this object; did you mean `language`? Fields: inner, language, order, top_words",
  );
  assert.equal(
    messageAt(found, "/options"),
    "`language` is missing: it is required (a string: ISO 639-1 code, e.g. `en`.)",
  );
  assert.equal(messageAt(found, "/options/inner/top_words"), 'expected an integer from 1 to 50, got the string "3"');
  assert.equal(
    messageAt(violations(NESTED, { query: "q", options: "fast" }), "/options"),
    'expected an object or null, got the string "fast"',
  );
});

test("a tagged variant is explained by its tag", () => {
  const variant = (kind, field) => ({
    type: "object",
    properties: { kind: { const: kind, type: "string" }, [field]: { type: "integer" } },
    required: ["kind", field],
  });
  const schema = { oneOf: [variant("circle", "radius"), variant("square", "side"), variant("line", "length")] };
  assert.deepEqual(violations(schema, { kind: "square", side: "2" }), [
    { pointer: "/side", message: 'expected an integer, got the string "2"' },
  ]);
  assert.deepEqual(violations(schema, { kind: "squar", side: 2 }), [
    {
      pointer: "/kind",
      message: "`squar` is not one of the allowed values; did you mean `square`? Allowed: circle, square, line",
    },
  ]);
  const mixed = { anyOf: [{ const: "auto" }, { const: "off" }, { type: "integer" }] };
  assert.equal(
    violations(mixed, "aut")[0].message,
    "`aut` is not one of the allowed values; did you mean `auto`? Allowed: auto, off (or an integer)",
  );
});

test("long enums show the nearest values or the first ones", () => {
  const values = Array.from({ length: 30 }, (_, i) => `value_${i}`);
  assert.equal(
    violations({ enum: values }, "value_299")[0].message,
    "`value_299` is not one of the 30 allowed values; did you mean `value_29`? Closest: value_29, value_19, value_2, value_20, value_21, …",
  );
  assert.match(
    violations({ enum: values }, "zzzzzzzzzzzz")[0].message,
    /\. The first of them: value_0, value_1, .*, value_11, … \(the parameter's schema lists them all\)$/,
  );
});

test("long values are cut and at most twenty violations are sorted by index", () => {
  const long = "x".repeat(10_000);
  const found = violations(ECHO, { text: "hi", count: long, volume: long, [long]: 1 });
  assert.ok(found.every((violation) => [...violation.message].length < 200));
  assert.ok(messageAt(found, "/count").endsWith('…"'));
  const many = violations(
    { type: "array", items: { type: "string" } },
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.deepEqual(
    many.map((violation) => violation.pointer),
    Array.from({ length: 20 }, (_, i) => `/${i}`),
  );
});

test("references are followed and cycles end", () => {
  const schema = {
    $ref: "#/$defs/Node",
    $defs: {
      Node: {
        type: "object",
        properties: { value: { type: "integer" }, next: { anyOf: [{ $ref: "#/$defs/Node" }, { type: "null" }] } },
        additionalProperties: false,
      },
    },
  };
  let value = { value: "bottom" };
  for (let i = 0; i < 100; i += 1) value = { value: 1, next: value };
  const found = violations(schema, value);
  assert.equal(found.length, 1);
  assert.equal(found[0].message, "does not have any of the allowed forms; got an object");
  assert.deepEqual(violations({ $ref: "#" }, 1), []);
});

test("property names are explained at the object", () => {
  assert.equal(
    violations({ propertyNames: { maxLength: 3 } }, { long_name: 1 })[0].message,
    "the field name `long_name` is not allowed: must be at most 3 characters long; got 9 characters",
  );
});

const counter = tool({
  name: "counter",
  description: "Counts.",
  parameters: { properties: { count: { type: "integer", minimum: 1 } }, required: ["count"] },
  run: ({ count }) => ({ count }),
});

test("invokeJson refuses with the host's report", async () => {
  await assert.rejects(invokeJson(counter, '{"count": 0, "extra": true}'), (error) => {
    assert.ok(error instanceof InvalidArguments);
    assert.equal(
      error.message,
      "The arguments do not match the tool's parameters schema (2 problems):\n" +
        "- /count: must be at least 1; got 0\n" +
        "- /extra: `extra` is not a parameter. Parameters: count\n" +
        "Fix these and call the tool again.",
    );
    return true;
  });
  await assert.rejects(invokeJson(counter, "{}"), {
    message: /\(1 problem\):\n- \(top level\): `count` is missing: it is required \(an integer \(at least 1\)\)\n/,
  });
  await assert.rejects(invokeJson(counter, "[1]"), {
    message: /- \(top level\): expected an object, got an array of 1 item/,
  });
  await assert.rejects(invokeJson(counter, "{nope"), {
    name: "InvalidArguments",
    message:
      /^The arguments are not valid JSON: .*\. Send the arguments as a single JSON object, e\.g\. \{"name": "value"\}\.$/,
  });
  assert.equal(await invokeJson(counter, '{"count": 2}'), '{"count":2}');
});

test("invokeJson wants JSON text and a tool", async () => {
  await assert.rejects(invokeJson(counter, { count: 1 }), TypeError);
  await assert.rejects(invokeJson({ run() {} }, "{}"), TypeError);
});
