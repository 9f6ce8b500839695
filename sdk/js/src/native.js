// Calling a tool natively, under `node --test`, as the host would call its component: the
// arguments are checked against the tool's own schema first and refused in the host's words,
// and a result that breaks a declared output schema fails as the host would report it.

import { isTool } from "./define.js";
import { Failed, InvalidArguments, toToolError, unexpectedMessage } from "./errors.js";
import { runTool } from "./call.js";
import { argumentsReport, outputReport, violations } from "./schema/report.js";

/**
 * Calls `tool` with `argumentsJson` (JSON text) and resolves to its result as JSON text, or
 * rejects with `InvalidArguments` or `Failed`, as the host would report the call. Any other
 * error the tool throws becomes a `Failed` with the generic message a model would read; the
 * original is its `cause`.
 */
export async function invokeJson(tool, argumentsJson, { callId = "", hostContext = {} } = {}) {
  if (!isTool(tool)) throw new TypeError("invokeJson(): the first argument must be a tool made by tool({...})");
  if (typeof argumentsJson !== "string") {
    throw new TypeError(
      'invokeJson(): the arguments must be JSON text, e.g. \'{"text": "hi"}\' (JSON.stringify an object)',
    );
  }
  let args;
  try {
    args = JSON.parse(argumentsJson);
  } catch (error) {
    throw new InvalidArguments(
      `The arguments are not valid JSON: ${error.message}. Send the arguments as a single JSON object, e.g. {"name": "value"}.`,
    );
  }
  const refused = violations(tool.parameters, args);
  if (refused.length > 0) throw new InvalidArguments(argumentsReport(refused));

  let output;
  try {
    output = await runTool(tool, args, { callId, hostContext });
  } catch (thrown) {
    if (toToolError(thrown)) throw thrown;
    throw new Failed(unexpectedMessage(thrown), { cause: thrown });
  }
  if (tool.outputSchema !== undefined) {
    const broken = violations(tool.outputSchema, JSON.parse(output));
    if (broken.length > 0) {
      throw new Failed(
        `the tool returned an invalid result: ${outputReport(broken)}; a host would report it as \`invalid_output\``,
      );
    }
  }
  return output;
}
