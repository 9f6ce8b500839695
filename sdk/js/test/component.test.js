// The misbehave guest built into a component and called by a real host. Opt-in, as it needs
// the build tools (`npm ci` in sdk/js) and a toolcell binary: TOOLCELL_BIN=target/debug/toolcell
// node --test sdk/js/test/. Building and compiling the component take about a minute.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

const SDK = fileURLToPath(new URL("..", import.meta.url));
const BIN = process.env.TOOLCELL_BIN && resolve(process.env.TOOLCELL_BIN);
const skip = !BIN
  ? "set TOOLCELL_BIN to a toolcell binary to run"
  : !existsSync(join(SDK, "node_modules", "@bytecodealliance", "componentize-js"))
    ? "run `npm ci` in sdk/js to run"
    : false;

describe("the misbehave component in a host", { skip }, () => {
  const tools = mkdtempSync(join(tmpdir(), "toolcell-js-tools-"));
  const invoke = (args) => {
    const run = spawnSync(BIN, ["--tools-dir", tools, "invoke", "misbehave", JSON.stringify(args)], {
      encoding: "utf8",
    });
    assert.ok(run.status === 0 || run.status === 1, run.stderr);
    return JSON.parse(run.stdout);
  };

  before(() => {
    const build = spawnSync(
      process.execPath,
      [join(SDK, "build.mjs"), join(SDK, "examples", "misbehave"), "-o", join(tools, "misbehave.wasm")],
      { encoding: "utf8" },
    );
    assert.equal(build.status, 0, build.stderr);
    assert.match(build.stdout, /^built .*misbehave\.wasm: tool `misbehave` 0\.1\.0, [\d.]+ MB, in [\d.]+ s\n$/);
    const check = spawnSync(BIN, ["check", join(tools, "misbehave.wasm")], { encoding: "utf8" });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  });
  after(() => rmSync(tools, { recursive: true, force: true }));

  test("ok returns the value, with the call's context", () => {
    const output = invoke({ mode: "ok" });
    assert.equal(output.is_error, false);
    assert.deepEqual(JSON.parse(output.content), { mode: "ok", callId: "cli", hostContext: {} });
  });

  test("reject is the tool's refusal", () => {
    const output = invoke({ mode: "reject" });
    assert.equal(output.error.kind, "rejected_arguments");
    assert.equal(output.error.message, "`mode` is `reject`, which this tool always refuses: use `ok`");
  });

  test("boom fails generically; the secret reaches only the operator's stderr", () => {
    const output = invoke({ mode: "boom" });
    assert.equal(output.error.kind, "tool_failed");
    assert.equal(output.error.message, "it threw an unexpected Error; the details went to the operator's log");
    assert.ok(!output.content.includes("SECRET-js-7f3a"));
    assert.ok(output.diagnostics.stderr.includes("SECRET-js-7f3a"));
  });

  test("spin is stopped by fuel or the clock", () => {
    assert.ok(["fuel_exhausted", "timeout"].includes(invoke({ mode: "spin" }).error.kind));
  });

  test("bomb is stopped at the memory limit", () => {
    assert.equal(invoke({ mode: "bomb" }).error.kind, "memory_limit");
  });

  test("arguments that break the schema never reach the tool", () => {
    const output = invoke({ mode: "nope" });
    assert.equal(output.error.kind, "invalid_arguments");
    assert.equal(
      output.error.violations[0].message,
      "`nope` is not one of the allowed values. Allowed: ok, reject, boom, spin, bomb",
    );
  });
});
