// The bundle into a component with componentize-js: SpiderMonkey (StarlingMonkey) with the
// bundle pre-initialized by Wizer, exporting the WIT world `tool`.

import { dirname } from "node:path";
import { BuildError, paragraph } from "./errors.js";

/**
 * `fetch-event` would export `wasi:http/incoming-handler`, which a tool is not; `http` (the
 * `fetch` API, importing `wasi:http`) only for a tool that requests hosts. `stdio` carries
 * console.error to the operator's log; `random` and `clocks` must stay (the engine needs them).
 */
export function disabledFeatures(httpHosts) {
  return httpHosts.length > 0 ? ["fetch-event"] : ["fetch-event", "http"];
}

/** What the engine lacks that Node has, when an error looks like it. */
function engineHint(text) {
  return /\\p\{|\bIntl\b|normalize|toLocale|invalid property name in regular expression/.test(text)
    ? " (the engine has no ICU: no Intl, no String.prototype.normalize, no \\p{...} in regular expressions; see the SDK's README)"
    : "";
}

export async function componentizeBundle(componentize, bundlePath, witPath, httpHosts) {
  // componentize-js maps the source's folder into Wizer's sandbox relative to the current
  // directory, and gets the path wrong unless the source is inside it: build from there.
  const cwd = process.cwd();
  process.chdir(dirname(bundlePath));
  try {
    const { component } = await componentize({
      sourcePath: bundlePath,
      witPath,
      worldName: "tool",
      disableFeatures: disabledFeatures(httpHosts),
    });
    return component;
  } catch (error) {
    const imported = String(error?.message).match(/unknown imported function: '([^']+)' '([^']+)'/);
    if (imported) {
      throw new BuildError(
        `the module's top-level code called \`${imported[1]}#${imported[2]}\` while the component was built, when nothing outside the engine may be called: move what calls it (Math.random() and crypto read wasi:random) into \`run\``,
      );
    }
    const text = String(error?.message ?? error)
      .replace(/^Failed to initialize component \((?:[^()]|\([^()]*\))*\):/, "")
      .replace(
        /Exception while evaluating top-level script/,
        "the module threw while it was initialized at build time:",
      )
      .replace(/\s*Additionally, some promises were rejected[^]*$/, "");
    throw new BuildError(`componentize-js could not make the component: ${paragraph(text)}${engineHint(text)}`);
  } finally {
    process.chdir(cwd);
  }
}
