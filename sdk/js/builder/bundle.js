// One ES module for the engine: the SDK's component glue, the project's tool and everything
// they import, bundled by esbuild. `toolcell-tool` always resolves to this SDK, so a project
// builds without an npm install of its own.

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

/** Bundles into `outfile`; gives back the modules it read, relative to the project's folder. */
export async function bundle(esbuild, sdkDir, project, outfile) {
  try {
    const { metafile } = await esbuild.build({
      entryPoints: [join(sdkDir, "src", "component.js")],
      outfile,
      bundle: true,
      format: "esm",
      // Neither Node nor a browser: the engine has web APIs (fetch, TextEncoder) but no `node:*`.
      platform: "neutral",
      mainFields: ["module", "main"],
      alias: { "toolcell-tool": join(sdkDir, "index.js") },
      plugins: [projectPlugin(project)],
      absWorkingDir: project.dir,
      logLevel: "silent",
      legalComments: "none",
      metafile: true,
    });
    return Object.keys(metafile.inputs);
  } catch (error) {
    const messages = (error.errors ?? []).slice(0, 3).map(({ text, location }) => {
      const where = location ? `${location.file}:${location.line}:${location.column + 1}: ` : "";
      const hint = /^Could not resolve "node:|^Could not resolve "(fs|path|os|child_process)"/.test(text)
        ? " (a tool runs in a WebAssembly sandbox, where Node's modules do not exist)"
        : "";
      return `${where}${text}${hint}`;
    });
    throw new BuildError(`bundling ${project.mainName} failed: ${paragraph(messages.join("; ") || error.message)}`);
  }
}
