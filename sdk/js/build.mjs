#!/usr/bin/env node
// Builds a JS tool project into a toolcell component:
//
//   node build.mjs PROJECT_DIR -o OUT.wasm [--tests]
//
// 1. bundles the SDK's component glue with the project's main module (esbuild);
//    It warns about what works in Node but not in the engine (`Intl`, `\p{…}`: builder/engine.js);
// 2. loads the bundle in Node once, to check the tool's definition and read what it requests;
// 3. componentizes it against wit/tool.wit, world `tool` (componentize-js, Wizer).
//
// With --tests it builds the project's test harness instead (what `toolcell test` runs): the tool
// as its own build makes it, plus the project's test files, run one by one inside the component
// (src/selftest/).
//
// Prints one line on success. On failure prints one paragraph on stderr and exits 1 (the
// project is at fault) or 2 (usage, or the build tools are not installed: `npm ci` here).

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BuildError, paragraph } from "./builder/errors.js";
import { readProject } from "./builder/project.js";
import { bundle, bundleTests, testFiles } from "./builder/bundle.js";
import { componentizeBundle } from "./builder/componentize.js";
import { engineWarnings, projectSources } from "./builder/engine.js";

const SDK_DIR = dirname(fileURLToPath(import.meta.url));
const USAGE = "usage: node build.mjs PROJECT_DIR -o OUT.wasm [--tests]";

function parseArguments(argv) {
  let project;
  let out;
  let tests = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "-o" || arg === "--out") out = argv[++i];
    else if (arg.startsWith("--out=")) out = arg.slice("--out=".length);
    else if (arg === "--tests") tests = true;
    else if (arg === "-h" || arg === "--help") {
      console.log(USAGE);
      process.exit(0);
    } else if (arg.startsWith("-") || project !== undefined)
      throw new BuildError(`unexpected argument ${JSON.stringify(arg)}; ${USAGE}`, 2);
    else project = arg;
  }
  if (project === undefined || !out) throw new BuildError(USAGE, 2);
  if (!existsSync(project) || !statSync(project).isDirectory()) {
    throw new BuildError(`${resolve(project)} is not a folder: give the folder of a JS tool project; ${USAGE}`, 2);
  }
  return { project, out: resolve(out), tests };
}

/** esbuild and componentize-js, from this SDK's own node_modules (pinned by package-lock.json). */
async function buildTools() {
  const installed = ["esbuild", "@bytecodealliance/componentize-js"].every((name) =>
    existsSync(join(SDK_DIR, "node_modules", name, "package.json")),
  );
  if (!installed) {
    throw new BuildError(`the JS SDK's build tools are not installed: run \`npm ci\` in ${SDK_DIR}`, 2);
  }
  const esbuild = await import("esbuild");
  const { componentize } = await import("@bytecodealliance/componentize-js");
  return { esbuild, componentize };
}

/** Loads the bundle in Node: the tool's definition is checked (tool() throws) and described
 * as the component will describe it, before the slower componentize step. */
async function describe(bundlePath, project) {
  try {
    const glue = await import(pathToFileURL(bundlePath).href);
    return { metadata: glue.metadata(), capabilities: glue.capabilities() };
  } catch (error) {
    throw new BuildError(`${project.mainName} failed to load: ${paragraph(error?.message ?? error)}`);
  }
}

async function main() {
  const started = performance.now();
  const { project: projectDir, out, tests } = parseArguments(process.argv.slice(2));
  const { esbuild, componentize } = await buildTools();
  const project = readProject(projectDir);
  const work = mkdtempSync(join(tmpdir(), "toolcell-js-"));
  try {
    const bundlePath = join(work, "tool.bundle.js");
    if (tests) {
      const files = testFiles(project.dir);
      if (files.length === 0) {
        throw new BuildError(`${project.dir} has no tests: write them in *.test.js files beside the tool's module`);
      }
      await bundleTests(esbuild, SDK_DIR, project, files, bundlePath);
    } else {
      const inputs = await bundle(esbuild, SDK_DIR, project, bundlePath);
      // Warnings, not errors: the construct may sit on a path no call takes.
      const sources = await projectSources(esbuild, inputs, project.dir, (path) => readFileSync(path, "utf8"));
      for (const warning of engineWarnings(sources)) console.error(`toolcell-tool build: warning: ${warning}`);
    }
    const { metadata, capabilities } = await describe(bundlePath, project);
    const component = await componentizeBundle(componentize, bundlePath, join(SDK_DIR, "wit"), capabilities.httpHosts);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, component);
    const size = (component.length / 1e6).toFixed(1);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`built ${out}: tool \`${metadata.name}\` ${metadata.version}, ${size} MB, in ${seconds} s`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main()
  // Explicitly: a timer the tool's top-level code started in Node must not keep the build alive.
  .then(() => process.exit(0))
  .catch((error) => {
    const status = error instanceof BuildError ? error.status : 1;
    const message =
      error instanceof BuildError ? error.message : `unexpected failure: ${paragraph(error?.stack ?? error)}`;
    console.error(`toolcell-tool build: ${message}`);
    process.exit(status);
  });
