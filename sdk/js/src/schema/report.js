// The host's messages around a list of violations (schema/src/lib.rs): what a model reads
// when its arguments break the parameters schema, and why a result breaks the output schema.

import { explain } from "./explain.js";
import { validate } from "./validate.js";

/** Every way `value` breaks `schema`, explained as the host explains it (at most 20). */
export function violations(schema, value) {
  return explain(schema, validate(schema, value));
}

/** "The arguments do not match the tool's parameters schema (1 problem):\n- /count: …". */
export function argumentsReport(found) {
  const problems = found.length === 1 ? "1 problem" : `${found.length} problems`;
  const lines = found.map(({ pointer, message }) => `\n- ${pointer === "" ? "(top level)" : pointer}: ${message}`);
  return `The arguments do not match the tool's parameters schema (${problems}):${lines.join("")}\nFix these and call the tool again.`;
}

/** "it does not match the tool's output schema (at `/total`: must be a number and 2 more)". */
export function outputReport(found) {
  if (found.length === 0) return "it matches the tool's output schema";
  const [first] = found;
  const at = first.pointer === "" ? "the top level" : `\`${first.pointer}\``;
  const more = found.length === 1 ? ")" : ` and ${found.length - 1} more)`;
  return `it does not match the tool's output schema (at ${at}: ${first.message}${more}`;
}
