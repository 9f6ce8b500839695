import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArguments, invokeJson } from "toolcell-tool";

import tool from "./{{module}}.js";

test("counts words unless told otherwise", async () => {
  assert.equal(await invokeJson(tool, '{"text": "one two  three"}'), "3");
  assert.equal(await invokeJson(tool, '{"text": "one\\ntwo", "unit": "lines"}'), "2");
});

test("checks the arguments against the schema as the host does", async () => {
  // Natively as in the host, the arguments are checked against the schema before `run`, and
  // refused in the words a model would read.
  await assert.rejects(invokeJson(tool, '{"text": ""}'), (error) => {
    assert.ok(error instanceof InvalidArguments);
    assert.match(error.message, /- \/text: must not be empty/);
    return true;
  });
  await assert.rejects(
    invokeJson(tool, '{"text": "a", "unit": "pages"}'),
    /\/unit: `pages` is not one of the allowed values/,
  );
});

test("refuses a text of only whitespace", async () => {
  await assert.rejects(invokeJson(tool, '{"text": "   "}'), {
    name: "InvalidArguments",
    message: "`text` is only whitespace: give the text to measure",
  });
});
