// How what a tool throws reaches the host: the component's exports (worldExports, the same
// code the component runs) and invokeJson natively.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Failed, InvalidArguments, invokeJson, tool } from "../index.js";
import { worldExports } from "../src/exports.js";

const SECRET = "SECRET-js-7f3a";

const thrower = tool({
  name: "thrower",
  description: "Throws what it is asked to.",
  parameters: { properties: { what: { type: "string" } }, required: ["what"] },
  async run({ what }, context) {
    await null; // async tools are awaited
    switch (what) {
      case "invalid":
        throw new InvalidArguments("`what` is wrong");
      case "failed":
        throw new Failed("the database is down", { retryable: true });
      case "type-error":
        return null.property;
      case "error":
        throw new Error(`token ${SECRET}`);
      case "string":
        throw `a string with ${SECRET}`;
      case "oom":
        throw "out of memory";
      case "nothing":
        return undefined;
      case "function":
        return () => 1;
      default:
        return { what, context };
    }
  },
});

const world = worldExports(thrower, { version: "1.2.3", main: "thrower.js" });
const call = (what) => world.invoke(JSON.stringify({ what }), { callId: "call-1", hostContext: '{"user": "u1"}' });

/** Runs `body` with console.error captured; returns what it wrote. */
async function stderrOf(body) {
  const original = console.error;
  const lines = [];
  console.error = (...args) => lines.push(args.join(" "));
  try {
    await body();
  } finally {
    console.error = original;
  }
  return lines.join("\n");
}

test("the exports describe the tool as the WIT world wants", () => {
  assert.deepEqual(world.metadata(), {
    name: "thrower",
    description: "Throws what it is asked to.",
    version: "1.2.3",
    parametersSchema: JSON.stringify(thrower.parameters),
    outputSchema: undefined,
  });
  assert.deepEqual(world.capabilities(), { httpHosts: [], directories: [], env: [] });
  const full = worldExports(
    tool({ ...thrower, dirs: ["/in"], writableDirs: ["/out"], env: ["KEY"], http: ["a.example"] }),
    { version: "1.0.0" },
  );
  assert.deepEqual(full.capabilities(), {
    httpHosts: ["a.example"],
    directories: [
      { guestPath: "/in", writable: false },
      { guestPath: "/out", writable: true },
    ],
    env: ["KEY"],
  });
  assert.deepEqual(world.annotations(), {
    title: undefined,
    readOnly: undefined,
    destructive: undefined,
    idempotent: undefined,
    openWorld: undefined,
  });
});

test("a result is JSON text, with the call's context", async () => {
  assert.equal(await call("hi"), '{"what":"hi","context":{"callId":"call-1","hostContext":{"user":"u1"}}}');
  assert.equal(await call("nothing"), "null");
});

test("the tool's own errors become the WIT errors", async () => {
  await assert.rejects(call("invalid"), { payload: { tag: "invalid-arguments", val: "`what` is wrong" } });
  await assert.rejects(call("failed"), {
    payload: { tag: "failed", val: { message: "the database is down", retryable: true } },
  });
  await assert.rejects(call("function"), ({ payload }) => {
    assert.equal(payload.tag, "failed");
    assert.equal(payload.val.message, "the tool returned a function, which is not JSON; this is a bug in the tool");
    return true;
  });
});

test("any other thrown value fails generically; its details go to stderr only", async () => {
  for (const [what, label] of [
    ["error", "Error"],
    ["type-error", "TypeError"],
    ["string", "string (not an Error)"],
  ]) {
    let rejection;
    const stderr = await stderrOf(() => call(what).catch((thrown) => (rejection = thrown)));
    assert.deepEqual(rejection, {
      payload: {
        tag: "failed",
        val: { message: `it threw an unexpected ${label}; the details went to the operator's log`, retryable: false },
      },
    });
    assert.ok(!JSON.stringify(rejection).includes(SECRET));
    assert.match(stderr, /^toolcell-tool: `thrower` threw an unexpected error in call "call-1":\n/);
    if (what !== "type-error") assert.ok(stderr.includes(SECRET), stderr);
  }
});

test("out of memory escapes as an Error without a payload, to trap", async () => {
  await assert.rejects(call("oom"), (thrown) => {
    assert.ok(thrown instanceof Error && !Object.hasOwn(thrown, "payload"));
    assert.equal(thrown.message, "`thrower` ran out of memory: stopping the call");
    return true;
  });
});

test("natively, errors are thrown as the host would report them", async () => {
  const native = (what) => invokeJson(thrower, JSON.stringify({ what }));
  await assert.rejects(native("invalid"), InvalidArguments);
  await assert.rejects(native("failed"), (error) => error instanceof Failed && error.retryable === true);
  await assert.rejects(native("error"), (error) => {
    assert.ok(error instanceof Failed);
    assert.equal(error.message, "it threw an unexpected Error; the details went to the operator's log");
    assert.equal(error.retryable, false);
    assert.match(error.cause.message, new RegExp(SECRET), "the original is the cause, for the test's author");
    return true;
  });
  assert.equal(
    await invokeJson(thrower, '{"what": "x"}', { callId: "c", hostContext: { a: 1 } }),
    '{"what":"x","context":{"callId":"c","hostContext":{"a":1}}}',
  );
});

test("natively, a result that breaks the output schema fails", async () => {
  const typed = tool({
    name: "typed",
    description: "Returns what it is given.",
    parameters: { properties: { value: {} } },
    outputSchema: { type: "object", properties: { total: { type: "number" } }, required: ["total"] },
    run: ({ value }) => value,
  });
  assert.equal(await invokeJson(typed, '{"value": {"total": 1}}'), '{"total":1}');
  await assert.rejects(invokeJson(typed, '{"value": {"total": "1"}}'), {
    name: "Failed",
    message:
      "the tool returned an invalid result: it does not match the tool's output schema " +
      '(at `/total`: expected a number, got the string "1"); a host would report it as `invalid_output`',
  });
});

test("errors made by another copy of the SDK are recognised", async () => {
  const foreign = new Error("from elsewhere");
  Object.defineProperty(foreign, Symbol.for("toolcell-tool.error-kind"), { value: "invalid-arguments" });
  const copy = tool({
    ...thrower,
    run: () => {
      throw foreign;
    },
  });
  await assert.rejects(worldExports(copy, { version: "1.0.0" }).invoke("{}", { callId: "", hostContext: "{}" }), {
    payload: { tag: "invalid-arguments", val: "from elsewhere" },
  });
});

test("a default export that is not a tool is named", () => {
  assert.throws(
    () => worldExports({ name: "x" }, { version: "1.0.0", main: "main.js" }),
    /the default export of main.js is not a tool/,
  );
});
