// tool(): what it checks when a tool is defined, and how it completes the schema.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tool } from "../index.js";

const minimal = { name: "echo", description: "Echo the text.", parameters: {}, run: () => null };

test("completes the parameters schema as the host wants it", () => {
  const defined = tool({ ...minimal, parameters: { properties: { text: { type: "string" } } } });
  assert.deepEqual(defined.parameters, {
    type: "object",
    properties: { text: { type: "string" } },
    additionalProperties: false,
    required: [],
  });
  assert.ok(Object.isFrozen(defined.parameters.properties.text), "a declared schema cannot change later");
});

test("keeps what the author said", () => {
  const parameters = { type: "object", properties: {}, required: [], additionalProperties: true };
  assert.deepEqual(tool({ ...minimal, parameters }).parameters, parameters);
});

test("fills in the options left out", () => {
  const defined = tool(minimal);
  assert.deepEqual([defined.http, defined.dirs, defined.writableDirs, defined.env], [[], [], [], []]);
  assert.equal(defined.title, undefined);
  assert.equal(defined.readOnly, undefined);
  assert.equal(defined.outputSchema, undefined);
});

const refusals = [
  [{ name: "has space" }, /the name "has space" is invalid: it must be 1-64 characters from a-z, A-Z, 0-9/],
  [{ name: "x".repeat(65) }, /is invalid/],
  [{ name: "" }, /is invalid/],
  [{ name: undefined }, /the name undefined is invalid/],
  [{ description: "  " }, /tool `echo` needs a description/],
  [{ description: "d".repeat(1025) }, /has a description of 1025 characters; model providers accept at most 1024/],
  [{ parameters: undefined }, /`parameters` must be a JSON Schema object/],
  [
    { parameters: { type: "string" } },
    /must describe an object \(`type: "object"`\), because arguments are always a JSON object; got type "string"/,
  ],
  [{ parameters: { properties: [] } }, /`parameters.properties` must be an object/],
  [{ parameters: { required: "text" } }, /`parameters.required` must be an array/],
  [
    { parameters: { properties: {}, required: ["text"] } },
    /lists `text`, which `parameters.properties` does not declare/,
  ],
  [{ run: undefined }, /tool `echo` needs `run`/],
  [{ outputSchema: "string" }, /`outputSchema` must be a JSON Schema object/],
  [{ title: "" }, /`title` must be a non-empty string/],
  [{ title: "t".repeat(129) }, /`title` has 129 characters; at most 128/],
  [{ title: "two\nlines" }, /one line of plain text/],
  [{ readOnly: "yes" }, /`readOnly` must be true or false/],
  [{ readOnly: true, destructive: true }, /contradict each other/],
  [{ http: "api.example.com" }, /`http` must be an array of non-empty strings/],
  [{ env: [""] }, /`env` must be an array of non-empty strings/],
  [{ parameter: {} }, /`parameter` is not an option; did you mean `parameters`\?/],
];

for (const [change, expected] of refusals) {
  test(`refuses ${JSON.stringify(change)}`, () => {
    assert.throws(
      () => tool({ ...minimal, ...change }),
      (error) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /^tool\(\): /);
        assert.match(error.message, expected);
        return true;
      },
    );
  });
}

test("refuses what is not an object", () => {
  assert.throws(() => tool(), /tool\(\): takes one object/);
});

test("accepts a full definition", () => {
  const defined = tool({
    ...minimal,
    name: "Full_tool-2",
    title: " Full ",
    readOnly: false,
    destructive: true,
    idempotent: true,
    openWorld: true,
    http: ["api.example.com"],
    dirs: ["/workspace"],
    writableDirs: ["/out"],
    env: ["API_KEY"],
    outputSchema: { type: "object" },
  });
  assert.equal(defined.title, "Full");
  assert.deepEqual(defined.http, ["api.example.com"]);
  assert.deepEqual(defined.outputSchema, { type: "object" });
  assert.ok(Object.isFrozen(defined));
});
