// One call of a tool, the same natively and in the component: run it (sync or async) and
// turn its result into the JSON text the host receives.

import { Failed } from "./errors.js";

/** Runs `tool` on parsed, already valid arguments; returns the result as JSON text. Throws
 * whatever the tool threw. */
export async function runTool(tool, args, context) {
  const value = await tool.run(args, context);
  // A tool that returns nothing answers `null`, as a Rust tool returning `()` does.
  const text = JSON.stringify(value === undefined ? null : value);
  if (text === undefined) {
    throw new Failed(`the tool returned a ${typeof value}, which is not JSON; this is a bug in the tool`);
  }
  return text;
}
