// The host's explanations, from the corpus shared with it and the Python SDK
// (schema/corpus/, see its README): every case through the explainer invokeJson() uses.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { STANDARD_FORMATS } from "../src/schema/formats.js";
import { violations } from "../src/schema/report.js";

const CORPUS = new URL("../../../schema/corpus/", import.meta.url);

/** The JSON in corpus file `name`; throws when it is missing. */
function load(name) {
  return JSON.parse(readFileSync(new URL(name, CORPUS), "utf8"));
}

test("every shared case is explained as the host does", () => {
  const corpus = load("violations.json");
  assert.ok(corpus.cases.length > 0, "the shared corpus has no cases");
  const failures = [];
  for (const { name, schema, instance, violations: expected } of corpus.cases) {
    let found;
    try {
      found = violations(typeof schema === "string" ? corpus.schemas[schema] : schema, instance);
    } catch (error) {
      failures.push(`${JSON.stringify(name)}: threw ${error}`);
      continue;
    }
    // As the corpus writes them: `{pointer, message}`, nothing else.
    const got = found.map(({ pointer, message }) => ({ pointer, message }));
    if (!isDeepStrictEqual(got, expected)) {
      const [want, have] = [expected, got].map((list) => JSON.stringify(list));
      failures.push(`${JSON.stringify(name)}:\n  expected ${want}\n  got      ${have}`);
    }
  }
  assert.equal(
    failures.length,
    0,
    `${failures.length} of ${corpus.cases.length} cases differ from the host:\n${failures.join("\n")}`,
  );
});

test("the format words are the host's", () => {
  const table = load("formats.json").map(({ format, words }) => [format, words]);
  assert.ok(table.length > 0, "formats.json is empty");
  assert.deepEqual(STANDARD_FORMATS, table);
});
