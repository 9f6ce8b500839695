// toolcell-tool: write a toolcell tool in JavaScript. See README.md.
export { tool } from "./src/define.js";
export { Failed, InvalidArguments } from "./src/errors.js";
export { invokeJson } from "./src/native.js";
