import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArguments, invokeJson } from "toolcell-tool";

import slugify from "./slugify.js";

const slug = async (args) => JSON.parse(await invokeJson(slugify, JSON.stringify(args))).slug;

test("joins lower-case words with the separator asked for", async () => {
  assert.equal(await slug({ text: "one two three" }), "one-two-three");
  assert.equal(await slug({ text: "  Hello, World!  " }), "hello-world");
  assert.equal(await slug({ text: "Hello World", separator: "_" }), "hello_world");
});

test("spells accented Latin letters in ASCII", async () => {
  assert.equal(await slug({ text: "Crème brûlée à Zürich" }), "creme-brulee-a-zurich");
  assert.equal(await slug({ text: "Straße" }), "strasse");
});

test("cuts long slugs between words", async () => {
  assert.equal(await slug({ text: "one two three", max_length: 9 }), "one-two");
  assert.equal(await slug({ text: "abcdefgh", max_length: 3 }), "abc");
});

test("refuses what the schema refuses, in the host's words", async () => {
  await assert.rejects(invokeJson(slugify, '{"text": "a", "separator": "+"}'), (error) => {
    assert.ok(error instanceof InvalidArguments);
    assert.equal(
      error.message,
      "The arguments do not match the tool's parameters schema (1 problem):\n" +
        "- /separator: `+` is not one of the allowed values. Allowed: -, _, .\n" +
        "Fix these and call the tool again.",
    );
    return true;
  });
  await assert.rejects(
    invokeJson(slugify, '{"text": "a", "max_length": 0}'),
    /- \/max_length: must be at least 1; got 0/,
  );
});

test("refuses a text without letters or digits", async () => {
  await assert.rejects(invokeJson(slugify, '{"text": "!?"}'), {
    name: "InvalidArguments",
    message: /no letters or digits/,
  });
});
