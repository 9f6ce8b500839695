// The entry point build.mjs bundles into a component. `toolcell:project` is a module the build
// makes up: the project's main module (its default export is the tool), its file name and
// the version from its package.json. Top-level code runs once, at build time (Wizer).

import project, { main, version } from "toolcell:project";
import { worldExports } from "./exports.js";

export const { metadata, capabilities, annotations, invoke } = worldExports(project, { main, version });
