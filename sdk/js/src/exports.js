// The WIT world `tool` (wit/tool.wit) over a tool: the four functions a component exports,
// as ComponentizeJS expects them (records as camelCase objects, `option` as undefined, the
// `err` case of a result as a thrown `{payload}`).

import { isTool } from "./define.js";
import { runTool } from "./call.js";
import { InvalidArguments, isOutOfMemory, toToolError, unexpectedDetails, unexpectedMessage } from "./errors.js";

/** The exports for `tool`, version `version` (from package.json); `main` names its module in errors. */
export function worldExports(tool, { version, main }) {
  if (!isTool(tool)) {
    throw new Error(
      `the default export of ${main} is not a tool: end the module with \`export default tool({ ... })\``,
    );
  }
  // Built when the exports are made, which in a component is at build time (Wizer snapshots
  // them): describing the tool costs nothing per call.
  const metadata = {
    name: tool.name,
    description: tool.description,
    version,
    parametersSchema: JSON.stringify(tool.parameters),
    outputSchema: tool.outputSchema === undefined ? undefined : JSON.stringify(tool.outputSchema),
  };
  const capabilities = {
    httpHosts: tool.http,
    directories: [
      ...tool.dirs.map((guestPath) => ({ guestPath, writable: false })),
      ...tool.writableDirs.map((guestPath) => ({ guestPath, writable: true })),
    ],
    env: tool.env,
  };
  const annotations = {
    title: tool.title,
    readOnly: tool.readOnly,
    destructive: tool.destructive,
    idempotent: tool.idempotent,
    openWorld: tool.openWorld,
  };

  async function invoke(argumentsJson, { callId, hostContext }) {
    try {
      // The host has validated the arguments against the schema: no check here.
      return await runTool(tool, parseArguments(argumentsJson), { callId, hostContext: parseObject(hostContext) });
    } catch (thrown) {
      // An Error without a payload escapes the bindings, which trap the call: see isOutOfMemory.
      // (Should even this Error not fit in memory, the engine's own "out of memory" escapes.)
      if (isOutOfMemory(thrown)) throw new Error(`\`${tool.name}\` ran out of memory: stopping the call`);
      throw { payload: toToolError(thrown) ?? unexpected(tool, thrown, callId) };
    }
  }

  return {
    metadata: () => metadata,
    capabilities: () => capabilities,
    annotations: () => annotations,
    invoke,
  };
}

/** Only a caller other than a toolcell host sends anything but a JSON object. */
function parseArguments(text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidArguments(`the arguments are not valid JSON: ${error.message}`);
  }
}

/** The host context object; `{}` when the host sends anything else. */
function parseObject(text) {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** A generic failure for the model; the details, which may hold secrets, to stderr only. */
function unexpected(tool, thrown, callId) {
  console.error(
    `toolcell-tool: \`${tool.name}\` threw an unexpected error in call ${JSON.stringify(callId)}:\n${unexpectedDetails(thrown)}`,
  );
  return { tag: "failed", val: { message: unexpectedMessage(thrown), retryable: false } };
}
