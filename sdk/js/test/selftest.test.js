// The test harness's parts that run in Node too: which files are tests, and the stand-ins for
// node:test and node:assert that the harness component uses (they must agree with Node's).

import nodeAssert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { testFiles } from "../builder/bundle.js";
import assert from "../src/selftest/node-assert.js";
import { describe, it, registeredTests, runTest, isSkip } from "../src/selftest/node-test.js";

test("the test files are those node --test runs by default", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolcell-js-tests-"));
  try {
    for (const file of ["a.test.js", "b-test.mjs", "c_test.cjs", "test-d.js", "test.js", "tool.js", "latest.js"])
      writeFileSync(join(dir, file), "");
    mkdirSync(join(dir, "test", "deep"), { recursive: true });
    writeFileSync(join(dir, "test", "deep", "helpers.js"), "");
    mkdirSync(join(dir, "node_modules", "x"), { recursive: true });
    writeFileSync(join(dir, "node_modules", "x", "x.test.js"), "");
    nodeAssert.deepEqual(testFiles(dir), ["a.test.js", "b-test.mjs", "c_test.cjs", "test-d.js", "test.js", "test/deep/helpers.js"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the assert stand-in passes and fails where node:assert/strict does", async () => {
  const cases = [
    ["equal", [1, 1]],
    ["equal", [1, "1"]],
    ["deepEqual", [{ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }]],
    ["deepEqual", [{ a: 1 }, { a: 1, b: undefined }]],
    ["deepEqual", [new Map([[1, 2]]), new Map([[1, 3]])]],
    ["notEqual", [1, 2]],
    ["match", ["abc", /b/]],
    ["match", ["abc", /d/]],
    ["ok", [0]],
    ["throws", [() => { throw new TypeError("bad"); }, TypeError]],
    ["throws", [() => { throw new TypeError("bad"); }, RangeError]],
    ["throws", [() => { throw new Error("bad thing"); }, /bad/]],
    ["throws", [() => { throw new Error("bad thing"); }, { message: "bad thing" }]],
    ["throws", [() => { throw new Error("bad thing"); }, (error) => error.message === "other"]],
    ["throws", [() => {}]],
  ];
  for (const [name, args] of cases) {
    const outcome = (fn) => {
      try {
        fn();
        return "pass";
      } catch (error) {
        return error.code === "ERR_ASSERTION" || error instanceof TypeError ? "fail" : `threw ${error}`;
      }
    };
    nodeAssert.equal(outcome(() => assert[name](...args)), outcome(() => nodeAssert[name](...args)), `${name}(${args})`);
  }
  await assert.rejects(Promise.reject(new Error("no")), { message: "no" });
  await nodeAssert.rejects(assert.rejects(Promise.resolve(1)), { code: "ERR_ASSERTION" });
});

test("the node:test stand-in registers tests with their blocks' names and runs them with hooks", async () => {
  const calls = [];
  const before = registeredTests().length;
  describe("outer", () => {
    describe.skip?.("skipped block", () => it("never", () => {}));
    it("runs", async (t) => {
      calls.push("test");
      await t.test("sub", () => calls.push("sub"));
    });
    it("skips itself", (t) => t.skip("not here"));
  });
  const added = registeredTests().slice(before);
  nodeAssert.deepEqual(added.map((entry) => [entry.name, Boolean(entry.skip)]), [
    ["outer > skipped block > never", true],
    ["outer > runs", false],
    ["outer > skips itself", false],
  ]);
  await runTest(added[1]);
  nodeAssert.deepEqual(calls, ["test", "sub"]);
  await nodeAssert.rejects(runTest(added[2]), (error) => isSkip(error));
});
