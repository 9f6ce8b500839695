// One ES module for the engine: the SDK's component glue, the project's tool and everything
// they import, bundled by esbuild. `toolcell-tool` always resolves to this SDK, so a project
// builds without an npm install of its own.

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { BuildError, paragraph } from "./errors.js";

const PROJECT_MODULE = "toolcell:project";

/** Makes up `toolcell:project`: the project's main module and its version. */
function projectPlugin(project) {
  return {
    name: "toolcell-project",
    setup(build) {
      build.onResolve({ filter: /^toolcell:project$/ }, () => ({ path: PROJECT_MODULE, namespace: "toolcell" }));
      build.onLoad({ filter: /.*/, namespace: "toolcell" }, () => ({
        contents: [
          `export { default } from ${JSON.stringify(project.main)};`,
          `export const version = ${JSON.stringify(project.version)};`,
          `export const main = ${JSON.stringify(project.mainName)};`,
        ].join("\n"),
        resolveDir: project.dir,
        loader: "js",
      }));
    },
  };
}

/** esbuild's options for one ES module the engine runs, from `entry` into `outfile`. */
function engineBundle(sdkDir, project, entry, outfile) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    // Neither Node nor a browser: the engine has web APIs (fetch, TextEncoder) but no `node:*`.
    platform: "neutral",
    mainFields: ["module", "main"],
    alias: { "toolcell-tool": join(sdkDir, "index.js") },
    absWorkingDir: project.dir,
    logLevel: "silent",
    legalComments: "none",
  };
}

/** Bundles into `outfile`; gives back the modules it read, relative to the project's folder. */
export async function bundle(esbuild, sdkDir, project, outfile) {
  try {
    const { metafile } = await esbuild.build({
      ...engineBundle(sdkDir, project, join(sdkDir, "src", "component.js"), outfile),
      plugins: [projectPlugin(project)],
      metafile: true,
    });
    return Object.keys(metafile.inputs);
  } catch (error) {
    throw new BuildError(`bundling ${project.mainName} failed: ${bundleErrors(error)}`);
  }
}

/** esbuild's first errors, where they are, in one paragraph. */
function bundleErrors(error) {
  const messages = (error.errors ?? []).slice(0, 3).map(({ text, location }) => {
    const where = location ? `${location.file}:${location.line}:${location.column + 1}: ` : "";
    const hint = /^Could not resolve "node:|^Could not resolve "(fs|path|os|child_process)"/.test(text)
      ? " (a tool runs in a WebAssembly sandbox, where Node's modules do not exist)"
      : "";
    return `${where}${text}${hint}`;
  });
  return paragraph(messages.join("; ") || error.message);
}

/** The files `node --test` would run in the project (its default patterns), relative to it,
 * sorted: `*.test.js`, `*-test.js`, `*_test.js`, `test-*.js`, `test.js` (also `.mjs`, `.cjs`),
 * and every such file under a `test/` folder; never in node_modules. */
export function testFiles(projectDir) {
  const found = [];
  const walk = (relative, inTestFolder) => {
    for (const entry of readdirSync(join(projectDir, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(path, inTestFolder || entry.name === "test");
      } else if (/\.[cm]?js$/.test(entry.name) && (inTestFolder || TEST_FILE.test(entry.name))) {
        found.push(path);
      }
    }
  };
  walk("", false);
  return found.sort();
}

const TEST_FILE = /^test\.[cm]?js$|^test-.+\.[cm]?js$|.[.\-_]test\.[cm]?js$/;

/** Node's modules a test file may import, and the harness's stand-ins for them. */
const NODE_STAND_INS = {
  "node:test": "node-test.js",
  test: "node-test.js",
  "node:assert": "node-assert.js",
  "node:assert/strict": "node-assert.js",
  assert: "node-assert.js",
  "assert/strict": "node-assert.js",
};

/** Makes up `toolcell:tests` (each test file imported in turn, the registry told which one is
 * running) and points `node:test` and `node:assert` at the harness's stand-ins. */
function testsPlugin(sdkDir, project, files) {
  const standIns = join(sdkDir, "src", "selftest");
  return {
    name: "toolcell-tests",
    setup(build) {
      build.onResolve({ filter: /^(node:)?(test|assert|assert\/strict)$/ }, ({ path }) => ({
        path: join(standIns, NODE_STAND_INS[path]),
      }));
      build.onResolve({ filter: /^toolcell:(tests|test-file:\d+)$/ }, ({ path }) => ({ path, namespace: "toolcell-tests" }));
      build.onLoad({ filter: /.*/, namespace: "toolcell-tests" }, ({ path }) => {
        const registry = JSON.stringify(join(standIns, "node-test.js"));
        const index = path.match(/^toolcell:test-file:(\d+)$/)?.[1];
        const contents =
          index === undefined
            ? [
                ...files.flatMap((file, i) => [`import "toolcell:test-file:${i}";`, `import ${JSON.stringify(`./${file}`)};`]),
                `export const files = ${JSON.stringify(files)};`,
              ].join("\n")
            : `import { setCurrentFile } from ${registry};\nsetCurrentFile(${JSON.stringify(files[Number(index)])});`;
        return { contents, resolveDir: project.dir, loader: "js" };
      });
    },
  };
}

/** The test harness's bundle: the tool, `files` (from `testFiles`) and the harness's entry. */
export async function bundleTests(esbuild, sdkDir, project, files, outfile) {
  try {
    await esbuild.build({
      ...engineBundle(sdkDir, project, join(sdkDir, "src", "selftest", "harness.js"), outfile),
      plugins: [projectPlugin(project), testsPlugin(sdkDir, project, files)],
    });
  } catch (error) {
    throw new BuildError(`bundling the tests of ${project.mainName} failed: ${bundleErrors(error)}`);
  }
}
