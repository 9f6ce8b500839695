// build.mjs's answers that need no build tools: usage, and tools not installed.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const SDK = fileURLToPath(new URL("..", import.meta.url));

function build(sdk, ...args) {
  return spawnSync(process.execPath, [join(sdk, "build.mjs"), ...args], { encoding: "utf8" });
}

test("usage errors exit 2", () => {
  for (const args of [
    [],
    ["examples/slugify"],
    [join(SDK, "no-such-folder"), "-o", "x.wasm"],
    ["a", "b", "-o", "x.wasm"],
  ]) {
    const run = build(SDK, ...args);
    assert.equal(run.status, 2, `${args}: ${run.stderr}`);
    assert.match(run.stderr, /^toolcell-tool build: /);
    assert.equal(run.stderr.trim().split("\n").length, 1, "one paragraph");
  }
});

test("without node_modules, says to run npm ci and exits 2", () => {
  const sdk = mkdtempSync(join(tmpdir(), "toolcell-js-sdk-"));
  try {
    for (const part of ["build.mjs", "builder", "package.json"])
      cpSync(join(SDK, part), join(sdk, part), { recursive: true });
    const run = build(sdk, join(SDK, "examples", "slugify"), "-o", join(sdk, "out.wasm"));
    assert.equal(run.status, 2);
    assert.equal(
      run.stderr,
      `toolcell-tool build: the JS SDK's build tools are not installed: run \`npm ci\` in ${sdk}\n`,
    );
  } finally {
    rmSync(sdk, { recursive: true, force: true });
  }
});
