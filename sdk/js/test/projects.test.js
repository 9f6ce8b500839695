// The template `toolcell new NAME --lang js` fills in, and the example projects: each passes its
// own tests, run as a project runs them (`node --test` in its folder, `toolcell-tool` linked
// as `npm install` links a `file:` dependency), without the SDK's build tools.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, test } from "node:test";

const SDK = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const scratch = mkdtempSync(join(tmpdir(), "toolcell-js-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Fills the template as the Rust side does: `{{key}}` in file names and contents. */
function fromTemplate(name) {
  const words = name.split(/[_-]/).filter(Boolean).join(" ");
  const title = words.charAt(0).toUpperCase() + words.slice(1);
  const values = { "{{name}}": name, "{{title}}": title, "{{module}}": name.replaceAll("-", "_"), "{{sdk_path}}": SDK };
  const fill = (text) => Object.entries(values).reduce((text, [key, value]) => text.replaceAll(key, value), text);
  const dir = join(scratch, name);
  mkdirSync(dir);
  for (const file of readdirSync(join(SDK, "template"))) {
    writeFileSync(join(dir, fill(file)), fill(readFileSync(join(SDK, "template", file), "utf8")));
  }
  return dir;
}

function linkSdk(dir) {
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(SDK, join(dir, "node_modules", "toolcell-tool"));
}

function runTests(dir) {
  // Without the parent runner's variable, the child reports as a run of its own.
  const { NODE_TEST_CONTEXT, ...env } = process.env;
  const run = spawnSync(process.execPath, ["--test"], { cwd: dir, encoding: "utf8", env });
  assert.equal(run.status, 0, `${dir}: node --test failed:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

test("the template makes a project whose tests pass", async () => {
  const dir = fromTemplate("word-count");
  assert.deepEqual(readdirSync(dir).sort(), [".gitignore", "package.json", "word_count.js", "word_count.test.js"]);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  assert.equal(manifest.name, "word-count");
  assert.equal(manifest.version, "0.1.0");
  assert.equal(manifest.type, "module");
  assert.equal(manifest.main, "word_count.js");
  assert.equal(manifest.scripts.test, "node --test");
  assert.deepEqual(manifest.devDependencies, { "toolcell-tool": `file:${SDK}` });
  linkSdk(dir);
  assert.match(runTests(dir), /# pass 3\n# fail 0/);

  // The first `invoke` that `toolcell new` suggests.
  const { default: tool } = await import(pathToFileURL(join(dir, "word_count.js")).href);
  const { invokeJson } = await import(pathToFileURL(join(SDK, "index.js")).href);
  assert.equal(tool.name, "word-count");
  assert.equal(await invokeJson(tool, '{"text": "one two three"}'), "3");
});

for (const example of ["slugify", "misbehave"]) {
  test(`examples/${example} passes its tests`, () => {
    const dir = join(scratch, example);
    cpSync(join(SDK, "examples", example), dir, { recursive: true, filter: (path) => !path.includes("node_modules") });
    linkSdk(dir);
    assert.match(runTests(dir), /# fail 0/);
  });
}
