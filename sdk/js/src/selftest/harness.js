// The entry of a test-harness component: the tool as its own build makes it, plus the
// project's test files (`toolcell:tests`, a module build.mjs makes up that imports each one),
// whose top-level `test(...)` calls register the tests at build time. The host calls `invoke`
// with `{}` to list them, then once per test with `{"run": INDEX}`, each in a fresh instance
// under the tool's limits and grants: a test meets what a call of the tool meets.
//
// Answers, as JSON: `{"tests": [{"name", "file"}], "errors": []}` for the list;
// `{"outcome": "passed"|"failed"|"skipped", "message", "details"}` for a test.

import project, { main, version } from "toolcell:project";
import { files } from "toolcell:tests";
import { worldExports } from "../exports.js";
import { isSkip, registeredTests, runTest } from "./node-test.js";

const toolExports = worldExports(project, { main, version });
const tests = registeredTests();
const listing = JSON.stringify({
  tests: tests.map((entry) => ({ name: entry.name, file: entry.file })),
  errors: [],
});

export const { capabilities, annotations } = toolExports;

const PARAMETERS = {
  type: "object",
  properties: { run: { type: "integer", minimum: 0 } },
  additionalProperties: false,
};

const toolMetadata = toolExports.metadata();
const harnessMetadata = {
  ...toolMetadata,
  description: `The tests of \`${toolMetadata.name}\` (${files.join(", ")}), run inside its component by \`toolcell test\`.`,
  parametersSchema: JSON.stringify(PARAMETERS),
  outputSchema: undefined,
};

export function metadata() {
  return harnessMetadata;
}

export async function invoke(argumentsJson) {
  const { run } = JSON.parse(argumentsJson);
  if (run === undefined) return listing;
  const entry = tests[run];
  if (entry === undefined) {
    throw { payload: { tag: "failed", val: { message: `there are ${tests.length} tests; no test ${run}`, retryable: false } } };
  }
  if (entry.skip) return JSON.stringify({ outcome: "skipped", message: String(entry.skip), details: "" });
  try {
    await runTest(entry);
    return JSON.stringify({ outcome: "passed", message: "", details: "" });
  } catch (error) {
    if (isSkip(error)) return JSON.stringify({ outcome: "skipped", message: error.message, details: "" });
    return JSON.stringify({ outcome: "failed", message: describe(error), details: details(error) });
  }
}

/** `Name: message`, as Node prints a thrown error's first line. */
function describe(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `a non-Error value was thrown: ${safeString(error)}`;
}

/** The error's stack (where the engine keeps one), its cause, and what an assertion compared. */
function details(error) {
  const lines = [];
  if (error instanceof Error) {
    if (error.code === "ERR_ASSERTION" && "expected" in error) {
      lines.push(`actual:   ${safeString(error.actual)}`, `expected: ${safeString(error.expected)}`);
    }
    // The test's own frames: the harness's (from `callTest` on) and the assertion's are noise.
    const frames = String(error.stack ?? "").split("\n");
    const harness = frames.findIndex((frame) => frame.startsWith("callTest@"));
    const own = (harness === -1 ? frames : frames.slice(0, harness)).filter(
      (frame) => frame.trim() && !/^(AssertionError|fail|check)@/.test(frame),
    );
    if (own.length > 0) lines.push(...own);
    if (error.cause !== undefined) lines.push(`cause: ${describe(error.cause)}`);
  }
  return lines.join("\n");
}

function safeString(value) {
  try {
    return typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}
