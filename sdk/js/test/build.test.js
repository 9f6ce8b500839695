// build.mjs's answers that need no build tools: usage, and tools not installed.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

// What works in Node but not in the component (no ICU): the build warns, file by file.
// (Measured in a component: builder/engine.js.)

test("the engine's missing ICU is warned about, and comments are not code", async () => {
  const { engineWarnings } = await import("../builder/engine.js");
  const warnings = engineWarnings([
    { file: "regex.js", code: 'const word = /\\p{L}+/u;\nnew RegExp("\\\\P{Lu}", "u");' },
    { file: "intl.js", code: 'export const f = (n) => new Intl.NumberFormat("de-DE").format(n);' },
    { file: "locale.js", code: 'n.toLocaleString("en-US"); d.toLocaleDateString(); d.toLocaleTimeString("en")' },
    { file: "normalize.js", code: 's.normalize("NFD"); t.normalize()' },
    { file: "fine.js", code: 'a.localeCompare(b); path.normalize(p); const intl = 1; /\\d+/.test(x); "p{"' },
  ]);
  assert.deepEqual(
    warnings.map((warning) => warning.split(", which")[0]),
    [
      "regex.js uses `\\p{…}` in a regular expression",
      "intl.js uses `Intl`",
      "locale.js uses `toLocaleString`",
      "normalize.js uses `String.prototype.normalize`",
    ],
  );
  assert.match(warnings[0], /works in Node but not in the component: it throws SyntaxError: invalid property name/);
  assert.match(warnings[1], /it throws ReferenceError: Intl is not defined/);
  assert.match(warnings[2], /it ignores the locale: \(1234567\.891\)\.toLocaleString\("en-US"\) gives "1234567\.891"/);
});

const buildToolsInstalled = existsSync(join(SDK, "node_modules", "@bytecodealliance", "componentize-js"));

test(
  "a tool using Intl and \\p{…} builds, with a warning for each, and none for a comment",
  { skip: buildToolsInstalled ? false : "run `npm ci` in sdk/js to run" },
  () => {
    const project = mkdtempSync(join(tmpdir(), "toolcell-js-intl-"));
    try {
      writeFileSync(
        join(project, "package.json"),
        JSON.stringify({ name: "price", version: "0.1.0", type: "module", main: "price.js" }),
      );
      writeFileSync(join(project, "format.js"), 'export const money = (n) => new Intl.NumberFormat("en-US").format(n);\n');
      writeFileSync(
        join(project, "price.js"),
        [
          "// Intl and \\p{L} in a comment are not used.",
          'import { tool } from "toolcell-tool";',
          'import { money } from "./format.js";',
          "export default tool({",
          '  name: "price", description: "Format a price.",',
          '  parameters: { properties: { n: { type: "number", description: "The price." } }, required: ["n"] },',
          // (A regex literal would fail the build itself: the module would not parse.)
          '  run: ({ n }) => ({ text: money(n), letters: new RegExp("\\\\p{L}", "u").test("é") }),',
          "});",
        ].join("\n"),
      );
      const run = build(SDK, project, "-o", join(project, "price.wasm"));
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /^built .*price\.wasm: tool `price` 0\.1\.0/);
      assert.deepEqual(
        run.stderr.trim().split("\n").map((line) => line.split(", which")[0]),
        [
          "toolcell-tool build: warning: format.js uses `Intl`",
          "toolcell-tool build: warning: price.js uses `\\p{…}` in a regular expression",
        ],
      );
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  },
);
