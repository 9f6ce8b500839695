// A JS tool project: a folder whose package.json names the version and the main module
// (whose default export is the tool).

import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BuildError } from "./errors.js";

/** `MAJOR.MINOR.PATCH`, optionally with `-pre` and `+build`: what the host accepts. */
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

export function readProject(dir) {
  const root = resolve(dir);
  const manifest = join(root, "package.json");
  if (!existsSync(manifest)) {
    throw new BuildError(
      `${root} has no package.json: a JS tool project needs one with "version" and "main" (create one with \`toolcell new NAME --lang js\`)`,
    );
  }
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(manifest, "utf8"));
  } catch (error) {
    throw new BuildError(`${manifest} is not valid JSON: ${error.message}`);
  }
  if (typeof pkg.version !== "string" || !SEMVER.test(pkg.version)) {
    throw new BuildError(
      `${manifest}: "version" must be a semantic version like "1.2.0" (it becomes the tool's version); got ${JSON.stringify(pkg.version)}`,
    );
  }
  const mainName = pkg.main ?? "index.js";
  const main = resolve(root, String(mainName));
  if (!existsSync(main)) {
    throw new BuildError(
      `${manifest}: "main" names ${JSON.stringify(mainName)}, which does not exist; it must be the module whose default export is the tool`,
    );
  }
  return { dir: root, manifest, name: pkg.name, version: pkg.version, main, mainName: String(mainName) };
}
